"""Graph backends: turn a recorded FX graph into something callable.

``resolve`` turns ``torch.compile``'s ``backend``/``mode``/``options``
into one compiler ``(GraphModule, example_inputs) -> callable``:
``"eager"`` runs the GraphModule's generated ``forward`` as it is;
``"inductor"`` compiles it with TorchInductor (``compile_fx``: C++ on CPU,
Triton on GPU) with the mode's and options' config; other names come from
torch's backend registry; a callable is a ``torch.compile``-style backend.  A backend that fails is
reported with a warning and replaced by the eager backend for that graph,
so a call always returns its real result.

One graph compiles at a time in the process (a reentrant lock, as
torch.compile's): Inductor's configuration and caches are process-wide.
Captures in other threads go on meanwhile; only their compiles wait.
"""
import threading
import warnings

from . import collector, output_layout

_compile_lock = threading.RLock()


def eager(gm, example_inputs):
    """The eager backend: the GraphModule's own Python ``forward``."""
    return gm.forward


class Inductor:
    """TorchInductor with ``torch.compile``'s ``mode`` and ``options``.

    The mode and options are checked, and turned into Inductor config
    patches, by torch's own wrapper (``torch._TorchCompileInductorWrapper``,
    what ``torch.compile(backend="inductor")`` builds), so a bad mode or an
    unknown option raises torch's ``RuntimeError`` when it is made, at
    ``trace()`` time.  Outputs keep eager's contiguous layout
    (:mod:`.output_layout`).  A mode that turns CUDA graphs on
    (``"reduce-overhead"``) also marks the parameters as static inputs."""

    __name__ = "inductor"

    def __init__(self, mode=None, options=None, dynamic=None):
        import torch

        self._wrapper = torch._TorchCompileInductorWrapper(
            mode, dict(options) if options else None, dynamic)

    @property
    def config(self):
        """The Inductor config patches this backend compiles with."""
        return dict(self._wrapper.config)

    def __call__(self, gm, example_inputs):
        if self._wrapper.config.get("triton.cudagraphs"):
            _mark_static_parameters(example_inputs)
        output_layout.keep_eager_layout(gm)
        with _shape_env_for_loops(gm):
            return self._wrapper(gm, list(example_inputs))

    def __repr__(self):
        return "<inductor backend %r>" % (self._wrapper.config,)


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


class _WithKeywords:
    """A registry backend given ``mode``/``options`` as keyword arguments,
    as ``torch.compile`` passes them to a backend other than Inductor."""

    def __init__(self, compiler, kwargs):
        self.compiler = compiler
        self.kwargs = kwargs
        self.__name__ = getattr(compiler, "__name__", type(compiler).__name__)

    def __call__(self, gm, example_inputs):
        return self.compiler(gm, example_inputs, **self.kwargs)


def resolve(backend="inductor", mode=None, options=None, dynamic=None):
    """The compiler ``(GraphModule, example_inputs) -> callable`` that
    ``torch.compile(backend=backend, mode=mode, options=options)`` would
    use, checked now: ``"inductor"`` (mode and options checked by
    Inductor), ``"eager"``, any other name in torch's backend registry
    (``"aot_eager"``, ``"cudagraphs"``, a backend registered with
    ``torch._dynamo.register_backend``) or a callable.  Errors are
    ``torch.compile``'s: an unknown name raises
    ``torch._dynamo.exc.InvalidBackend``; ``mode`` and ``options`` together,
    a bad mode or an unknown Inductor option raise ``RuntimeError``."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if backend is None:
        backend = "inductor"
    if backend == "inductor":
        return Inductor(mode, options, dynamic)
    if backend == "eager" or backend is eager:
        return eager  # (torch's "eager" is the same; it ignores mode and options)
    kwargs = {}
    if mode and mode != "default":
        kwargs["mode"] = mode
    if options:
        kwargs["options"] = dict(options)
    if isinstance(backend, str):
        from torch._dynamo.backends.registry import lookup_backend

        backend = lookup_backend(backend)
    elif not callable(backend):
        raise TypeError("backend must be a name or a callable (GraphModule, example_inputs) "
                        "-> callable, not %s" % type(backend).__name__)
    return _WithKeywords(backend, kwargs) if kwargs else backend


def compile_graph(backend, gm, example_inputs):
    """Compile ``gm``; on failure warn and fall back to the eager backend.

    The backend runs with the cyclic collector as the user had it, even
    inside a capture (see :mod:`pyinterp.codegen.collector`), and holds
    the process's compile lock.
    """
    try:
        with _compile_lock, collector.as_the_user_had_it():
            return backend(gm, list(example_inputs))
    except Exception as e:  # noqa: BLE001 - any backend failure falls back
        warnings.warn("pyinterp: backend %s failed to compile a graph (%s: %s); running "
                      "that graph with the eager backend"
                      % (getattr(backend, "__name__", backend), type(e).__name__, e),
                      RuntimeWarning, stacklevel=3)
        return gm.forward
