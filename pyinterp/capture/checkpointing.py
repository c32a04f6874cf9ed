"""``torch.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False)`` in a
traced function: the body's ops go into the graph.

``checkpoint`` is marked ``torch.compiler.disable``, which is otherwise a
``compiler-disable`` break (``CaptureInterpreter._run_disabled``).
Checkpointing changes memory, not values: eager runs ``fn`` once in the
forward and, in the backward, again to recompute the activations it did
not keep.  Where that second run is bound to give what the first gave,
capturing ``fn``'s ops inline gives eager's values and gradients (the graph
keeps its activations: only the memory differs; Inductor's partitioner
decides what to recompute on its own).  The body is first run as a
speculative arm (:func:`.autograd_functions.speculate`): an outside write,
``print``, an impure call, a data-dependent Python value or a native
callback would run twice in eager (once more in the backward), so it keeps
the break.  Random numbers drawn in the body (dropout) are the same in the
recomputation when ``preserve_rng_state`` is true (the default: eager
restores the RNG state around it); with ``preserve_rng_state=False`` the
recomputation draws new ones (other gradients, and the global RNG moves
in the backward): a break.

Only ``use_reentrant=False`` with the default ``context_fn`` and
``debug=False`` is captured (the reentrant form drops the gradient of the
parameters when no input requires grad; a ``context_fn`` runs the user's
context managers natively).  Anything else keeps the break.
"""
import torch
import torch.utils.checkpoint as _checkpoint_module

from ..interp import calls
from .autograd_functions import speculate

_CHECKPOINT = _checkpoint_module.checkpoint
_NOOP_CONTEXT = _checkpoint_module.noop_context_fn
_OWN_OPTIONS = ("use_reentrant", "context_fn", "determinism_check", "debug", "early_stop",
                "preserve_rng_state")
_RANDOM = "random numbers drawn"


def captured_checkpoint(vm, args, kwargs):
    """The capture handler of ``checkpoint``: the body interpreted (its ops
    in the graph) when its recomputation cannot differ, else the break
    before the native call that a disabled function gets."""
    cap = vm.capture
    kwargs = dict(kwargs or {})
    body_kwargs = {k: v for k, v in kwargs.items() if k not in _OWN_OPTIONS}
    reason = _unsupported_options(kwargs) if args else "no function given"
    if reason is None:
        function, body_args = args[0], tuple(args[1:])
        reason = speculate(cap, lambda: vm.call(function, body_args, body_kwargs or None),
                           writable=None)
        if reason is not None and str(reason) == _RANDOM \
                and kwargs.get("preserve_rng_state", True) is True:
            reason = None  # (eager's recomputation draws the same numbers)
    if reason is not None:
        cap.break_graph("compiler-disable", "checkpoint() is marked torch.compiler.disable "
                        "and its body is not captured (%s)" % reason)
        return _CHECKPOINT(*args, **kwargs)
    return vm.call(function, body_args, body_kwargs or None)


def _unsupported_options(kwargs):
    """Why ``checkpoint``'s own options keep the break, or None."""
    if kwargs.get("use_reentrant") is not False:
        return "only use_reentrant=False is captured"
    if kwargs.get("context_fn", _NOOP_CONTEXT) is not _NOOP_CONTEXT:
        return "a context_fn runs natively"
    if kwargs.get("debug", False) is not False:
        return "debug=True"
    if type(kwargs.get("preserve_rng_state", True)) is not bool:
        return "preserve_rng_state is not a bool"
    return None


calls.intercept(_CHECKPOINT, captured_checkpoint, calls.CAPTURE)
