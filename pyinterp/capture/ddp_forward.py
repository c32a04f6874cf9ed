"""``pyinterp.trace(DDP(model))``: DDP's forward natively, the model's captured.

DDP's forward talks to its C++ reducer and logger (``prepare_for_forward``,
``prepare_for_backward``): state pyinterp does not model, so capture cannot
go through it.  As under ``torch.compile`` (Dynamo skips DDP's forward
frame and compiles the inner module's while
``DistributedDataParallel._get_active_ddp_module()`` is set), the trace of
a DDP module is a :class:`TracedDDP`:

* a call runs DDP's own forward natively, step by step as
  ``DistributedDataParallel.forward`` does (``_pre_forward``, the inner
  module inside ``_inside_ddp_forward``, ``_post_forward``), with the inner
  module called through its own trace, so its forward is a captured graph;
* that trace's graphs are compiled inside DDP's forward, so
  :mod:`.ddp_split` splits them at DDP's gradient-bucket boundaries, each
  part compiled with the user's backend: each bucket's all-reduce can
  start while the rest of backward runs;
* a DDP whose call does more than its forward (a subclass's own
  ``forward``, hooks on the DDP module, a compiled call) or that delays
  every all-reduce (``_delay_all_reduce_all_params``) runs natively as it
  is, the inner module untraced.

The wrapper is a traced module (:mod:`.traced_module`) of the DDP module:
parameters, ``state_dict`` and attributes are the DDP module's;
``cache_entries()`` are the inner trace's.
"""
from typing import Any, Callable, Dict, Tuple

import torch

from .modules import hooks_in_the_way
from .traced_module import TracedModule


def is_ddp(obj: Any) -> bool:
    """True for a ``DistributedDataParallel`` instance (torch.distributed is
    not imported for the question)."""
    import sys

    module = sys.modules.get("torch.nn.parallel.distributed")
    return module is not None and isinstance(obj, module.DistributedDataParallel)


def runs_its_forward(ddp: Any) -> bool:
    """True when a call of ``ddp`` is DDP's forward and nothing else, with
    its inner module called: what :func:`run` reproduces."""
    from torch.nn.parallel import DistributedDataParallel

    return (type(ddp).forward is DistributedDataParallel.forward
            and "forward" not in ddp.__dict__
            and not hooks_in_the_way(ddp.__dict__)
            and not ddp._delay_all_reduce_all_params)


def run(ddp: Any, inner: Callable[..., Any], args: Tuple[Any, ...],
        kwargs: Dict[str, Any]) -> Any:
    """``ddp(*args, **kwargs)`` with ``inner`` called in place of
    ``ddp.module``: ``DistributedDataParallel.forward``'s steps, natively."""
    if not runs_its_forward(ddp):
        return ddp(*args, **kwargs)
    with torch.autograd.profiler.record_function("DistributedDataParallel.forward"):
        args, kwargs = ddp._pre_forward(*args, **kwargs)
        if ddp._use_python_reducer:
            output = inner(*args, **kwargs)
        else:
            with ddp._inside_ddp_forward():
                output = inner(*args, **kwargs)
        return ddp._post_forward(output)


class DDPCaller:
    """``DDPCaller(route)(ddp, *args, **kwargs)``: a DDP module's call as a
    native or split entry makes it (:mod:`.partial.callees`): DDP's forward
    natively, its inner module through the traced wrapper ``route(ddp.module)``
    gives (``(wrapper, self)``, called ``wrapper(self, *args)``)."""

    _pyinterp_constant = True  # (a split entry's mock holds it as it is)

    def __init__(self, route):
        self.route = route

    def __call__(self, ddp, *args, **kwargs):
        wrapper, module = self.route(ddp.module)
        return run(ddp, lambda *a, **k: wrapper(module, *a, **k), args, kwargs)


def explain_inside(ddp: Any, capture_inner: Callable[..., Any], args: Tuple[Any, ...],
                   kwargs: Dict[str, Any]) -> Any:
    """``ddp``'s forward run natively around ``capture_inner(args, kwargs,
    inspect_graph)`` (an explain capture of the inner module's call, a
    :class:`~.traced.TraceResult`), which is returned, its ``result`` DDP's
    output and its graphs' bucket parts in their ``meta``; None if ``ddp``
    ran natively as it is (:func:`runs_its_forward`)."""
    from .ddp_split import note_parts

    traces = []

    def inner(*inner_args, **inner_kwargs):
        trace = capture_inner(inner_args, inner_kwargs, lambda gm: note_parts(gm, ddp))
        traces.append(trace)
        return trace.result

    if not runs_its_forward(ddp):
        return None
    output = run(ddp, inner, args, kwargs)
    trace = traces[-1]
    trace.result = output
    return trace


def traced_ddp(ddp: Any, remake: Callable[[Any], Any], make_inner: Callable[[Any], Any]
               ) -> "TracedDDP":
    """The trace of ``ddp``: ``make_inner(ddp.module)`` is the inner
    module's :class:`~.traced.Traced` (its graphs, compiled inside DDP's
    forward, are split at ``ddp``'s buckets: :mod:`.ddp_split`);
    ``remake(model)`` traces a copy with the same options."""
    return TracedDDP(ddp, make_inner(ddp.module), remake)


class TracedDDP(TracedModule):
    """What :func:`pyinterp.trace` returns for a ``DistributedDataParallel``."""

    def __init__(self, ddp, inner, remake):
        """``inner``: the :class:`~.traced.Traced` of ``ddp.module``."""
        TracedModule.__init__(self, inner, remake, module=ddp)

    def __call__(self, *args, **kwargs):
        return run(self._orig_mod, self._traced, args, kwargs)

    forward = __call__

