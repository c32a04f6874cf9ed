"""Graph backends: turn a recorded FX graph into something callable.

``"eager"`` runs the GraphModule's generated ``forward`` as it is;
``"inductor"`` compiles it with TorchInductor (``compile_fx``: C++ on CPU,
Triton on GPU); any other callable is a ``torch.compile``-style backend
``(GraphModule, example_inputs) -> callable``.  A backend that fails is
reported with a warning and replaced by the eager backend for that graph,
so a call always returns its real result.

One graph compiles at a time in the process (a reentrant lock, as
torch.compile's): Inductor's configuration and caches are process-wide.
Captures in other threads go on meanwhile; only their compiles wait.
"""
import threading
import warnings

from . import collector

_compile_lock = threading.RLock()


def eager(gm, example_inputs):
    """The eager backend: the GraphModule's own Python ``forward``."""
    return gm.forward


def inductor(gm, example_inputs, mode=None):
    """TorchInductor; ``mode="reduce-overhead"`` turns on CUDA graphs."""
    from torch._inductor.compile_fx import compile_fx

    patches = {"triton.cudagraphs": True} if mode == "reduce-overhead" else None
    if mode == "reduce-overhead":
        _mark_static_parameters(example_inputs)
    with _shape_env_for_loops(gm):
        return compile_fx(gm, list(example_inputs), config_patches=patches)


def _shape_env_for_loops(gm):
    """A tracing context whose fake mode has a shape environment, for a
    graph with a ``while_loop`` node (Inductor's lowering of it asks for
    one; Dynamo would have made it)."""
    import contextlib

    import torch

    if not any(n.target is torch.ops.higher_order.while_loop for n in gm.graph.nodes):
        return contextlib.nullcontext()
    from torch._guards import TracingContext, tracing
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    return tracing(TracingContext(FakeTensorMode(shape_env=ShapeEnv())))


def _mark_static_parameters(example_inputs):
    """Tell Inductor's CUDA graphs which inputs keep their address (the
    parameters and buffers), so it does not copy them on every replay."""
    import torch

    for t in example_inputs:
        if isinstance(t, torch.nn.Parameter):
            torch._dynamo.mark_static_address(t, guard=False)


def resolve(backend):
    """The backend callable for ``backend`` (a name or a callable)."""
    if callable(backend):
        return backend
    if backend == "eager":
        return eager
    if backend == "inductor":
        return inductor
    raise ValueError("unknown backend %r: use 'inductor', 'eager' or a callable "
                     "(GraphModule, example_inputs) -> callable" % (backend,))


def compile_graph(backend, gm, example_inputs, mode=None):
    """Compile ``gm``; on failure warn and fall back to the eager backend.

    The backend runs with the cyclic collector as the user had it, even
    inside a capture (see :mod:`pyinterp.codegen.collector`), and holds
    the process's compile lock.
    """
    try:
        with _compile_lock, collector.as_the_user_had_it():
            if backend is inductor:
                return inductor(gm, example_inputs, mode)
            return backend(gm, list(example_inputs))
    except Exception as e:  # noqa: BLE001 - any backend failure falls back
        warnings.warn("pyinterp: backend %s failed to compile a graph (%s: %s); running "
                      "that graph with the eager backend"
                      % (getattr(backend, "__name__", backend), type(e).__name__, e),
                      RuntimeWarning, stacklevel=3)
        return gm.forward
