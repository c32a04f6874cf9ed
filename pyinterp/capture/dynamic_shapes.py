"""Dynamic shapes at the end of a capture: compile the graph with symbolic
sizes, and guard the entry by relations instead of exact shapes.

The run kept sizes symbolic (:mod:`.values.sizes`); here, once it is over:

* :func:`ready` replays what is left of the graph on fake tensors; the
  capture stays dynamic only if the whole graph replayed and some input
  has symbolic dimensions;
* :func:`compiler` compiles the graph inside a tracing context holding the
  capture's fake mode, as Dynamo does: the backend gets the real example
  inputs, and Inductor (through AOTAutograd) finds their symbolic fakes in
  that mode, so one compiled artifact serves every size the guard admits;
* :func:`guards` then asks the shape environment for its guards (the
  backend may have added some) and swaps the exact-shape guards of the
  symbolic inputs for them (:mod:`.values.shape_guards`).

:class:`DynamicSummary` is what ``explain`` and ``cache_entries()`` say
about it: which dimensions are symbolic and why, what was specialized and
why, and the relations guarded.
"""
import attrs

from .values import shape_guards


@attrs.define
class DynamicSummary:
    """Dynamic shapes of one capture, for ``explain``."""

    symbolic: list = attrs.Factory(list)  # (path, dims, {dim: why})
    specialized: list = attrs.Factory(list)  # (what, why, site)
    relations: tuple = ()
    given_up: str = None  # why the entry guards exact shapes instead

    def lines(self):
        out = []
        for path, dims, why in self.symbolic:
            out.append("symbolic: %s dims %s (%s)" % (path, list(dims), "; ".join(
                sorted({w for w in why.values() if w}))))
        for what, why, site in self.specialized:
            where = " at %s:%s" % site if site else ""
            out.append("specialized %s: %s%s" % (what, why, where))
        if self.given_up:
            out.append("exact shapes: %s" % self.given_up)
        out += ["relation: %s" % r for r in self.relations]
        return out


def ready(sizes, gm, recorder):
    """``sizes`` (the capture's SizeTracker) if the entry can be dynamic:
    every op of ``gm`` replayed on symbolic shapes and some input has
    symbolic sizes (or ``mark_dynamic`` asked for some); else None."""
    if sizes is None or gm is None or not sizes.active:
        return None
    for node in gm.graph.nodes:
        if node.op != "output" and node.op != "get_attr":
            sizes.fake_of(node, recorder)
        if not sizes.active:
            return None
    if any(n.op == "get_attr" for n in gm.graph.nodes):
        sizes.give_up("the graph holds a submodule (torch.cond)")
        return None
    if not shape_guards.symbolic_dims(sizes) and not sizes.unbacked and not any(
            choice is not None and choice.required for _, _, _, choice in sizes.inputs):
        return None  # (with mark_dynamic, the guards say whether it was kept)
    return sizes


def compiler(compile_graph, sizes):
    """``compile_graph(backend, gm, example)``, inside a tracing context
    with the capture's fake mode when ``sizes`` has symbolic inputs.  (A
    graph whose only symbols are unbacked sizes of its own ops compiles as
    static one, in a fresh fake mode with a shape environment of its own:
    the backend's trace makes those symbols again.)"""
    if sizes is None:
        return compile_graph

    def compile_symbolic(backend, gm, example):
        from torch._guards import TracingContext, tracing
        from torch._subclasses.fake_tensor import FakeTensorMode
        from torch.fx.experimental.symbolic_shapes import ShapeEnv

        mode = sizes.fake_mode if shape_guards.symbolic_dims(sizes) else \
            FakeTensorMode(shape_env=ShapeEnv())
        with tracing(TracingContext(mode)):
            return compile_graph(backend, gm, example)

    return compile_symbolic


def summary(sizes):
    """The :class:`DynamicSummary` of a capture (None when static)."""
    if sizes is None:
        return None
    return DynamicSummary(symbolic=shape_guards.symbolic_dims(sizes) if sizes.active else [],
                          specialized=list(sizes.specialized), given_up=sizes.given_up)


def guards(sizes, refgraph_guards, fullgraph, info, param_names=()):
    """The entry's guards with symbolic inputs guarded by relations; exact
    shapes (with the reason in ``info``) when that fails.  Under
    ``fullgraph`` a ``mark_dynamic`` dimension that the code forced to a
    constant raises torch's ``ConstraintViolationError``."""
    from torch.fx.experimental.symbolic_shapes import ConstraintViolationError

    try:
        out, relations = shape_guards.entry_guards(sizes, refgraph_guards)
    except ConstraintViolationError as e:
        from .guardfail import name_parameters

        message = name_parameters(shape_guards.user_text(sizes, str(e).strip()), param_names)
        if fullgraph:
            raise ConstraintViolationError(message) from None
        info.given_up = message
        info.symbolic = []
        return refgraph_guards
    except Exception as e:  # noqa: BLE001 - a relation we cannot render: exact shapes
        info.given_up = "its shape guards could not be built (%s: %s)" % (type(e).__name__, e)
        info.symbolic = []
        return refgraph_guards
    info.relations = relations
    return out
