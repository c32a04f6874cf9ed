"""Which dimensions a capture keeps symbolic, and the guards that come out.

:func:`policy` decides, per graph input, which dimensions are symbolic,
the way ``torch.compile`` does:

* ``dynamic=False``: none (every size is exact);
* ``dynamic=None`` (automatic): those that earlier captures of the same
  callable saw change (``learned``: a miss on sizes alone,
  :func:`sizes_only_miss`), plus ``mark_dynamic``/``maybe_mark_dynamic``;
* ``dynamic=True``: every dimension of every input tensor that is not a
  parameter or buffer of a module;

and ``torch._dynamo.mark_static`` keeps a dimension exact.  Dimensions
marked with ``mark_dynamic`` are *required* symbolic: code that forces one
to a constant raises torch's ``ConstraintViolationError`` under
``fullgraph=True`` and is noted in ``explain`` otherwise.

After the run and the backend's compile (Inductor may add guards of its
own), :func:`entry_guards` turns the shape environment's guards into
guards of the cache entry: a :class:`~pyinterp.refgraph.guards.TensorKind`
for each input with symbolic dimensions (type, dtype, device, rank), and
one :class:`~pyinterp.refgraph.guards.ShapeRelations` holding the exact
static sizes and strides, 0/1 specialization (``2 <= x.shape[0]``), the
relations the code branched on and those the ops require.
"""
import re

import torch

from ...refgraph import guards as G


class DimChoice:
    """The symbolic dimensions of one input tensor (``dims``) and those
    ``mark_dynamic`` requires to stay symbolic (``required``)."""

    __slots__ = ("rank", "dims", "required", "why", "ranges")

    def __init__(self, rank, dims, required, why, ranges=None):
        self.rank = rank
        self.dims = frozenset(dims)
        self.required = frozenset(required)
        self.why = why  # dim -> why it is symbolic
        self.ranges = ranges or {}  # dim -> (min, max) of mark_dynamic(min=, max=)

    @property
    def dynamic(self):
        return bool(self.dims)

    def dim_dynamic(self):
        from torch.fx.experimental.symbolic_shapes import DimDynamic

        return [DimDynamic.DYNAMIC if d in self.dims else DimDynamic.STATIC
                for d in range(self.rank)]

    def constraints(self):
        from torch.fx.experimental.symbolic_shapes import (RelaxedUnspecConstraint,
                                                           StrictMinMaxConstraint)
        from torch.utils._sympy.value_ranges import ValueRanges

        out = []
        for d in range(self.rank):
            if d in self.ranges:
                low, high = self.ranges[d]
                out.append(StrictMinMaxConstraint(warn_only=False, vr=ValueRanges(
                    low if low is not None else 2, high if high is not None else int_oo())))
            else:
                out.append(RelaxedUnspecConstraint(warn_only=False) if d in self.required
                           else None)
        return out


def int_oo():
    from torch.utils._sympy.numbers import int_oo as infinity

    return infinity


def policy(dynamic, learned):
    """``(source, tensor) -> DimChoice`` for a capture (see the module
    docstring); ``learned``: source text -> dims seen changing."""

    def choose(source, tensor):
        if dynamic is False or type(tensor) not in (torch.Tensor, torch.nn.Parameter):
            return None
        rank = tensor.dim()
        why = {}
        static = set(getattr(tensor, "_dynamo_static_indices", ()) or ())
        marked = set(getattr(tensor, "_dynamo_dynamic_indices", ()) or ())
        for d in marked:
            why[d] = "mark_dynamic"
        for d in getattr(tensor, "_dynamo_weak_dynamic_indices", ()) or ():
            why.setdefault(d, "maybe_mark_dynamic")
        for d in learned.get(source.render(), ()):
            why.setdefault(d, "it changed between calls (automatic dynamic)")
        if dynamic is True and _is_input(source, tensor):
            for d in range(rank):
                why.setdefault(d, "dynamic=True")
        dims = {d for d in why if 0 <= d < rank and d not in static}
        ranges = {r.dim: (r.min, r.max)
                  for r in getattr(tensor, "_dynamo_dynamic_range", ()) or ()
                  if r.dim in dims and (r.min is not None or r.max is not None)}
        return DimChoice(rank, dims, marked & dims, why, ranges)

    return choose


def marked(args, kwargs):
    """True if an argument tensor (or one in a list, tuple or dict
    argument) has dimensions marked by ``torch._dynamo.mark_dynamic`` or
    ``maybe_mark_dynamic``."""
    values = list(args) + list(kwargs.values())
    for value in values:  # (by type: no __class__ of the program's objects runs)
        tp = type(value)
        items = value.values() if tp is dict else value if tp in (list, tuple) else (value,)
        for item in items:
            if issubclass(type(item), torch.Tensor) and (
                    getattr(item, "_dynamo_dynamic_indices", None)
                    or getattr(item, "_dynamo_weak_dynamic_indices", None)):
                return True
    return False


def _is_input(source, tensor):
    """Not a module's parameter or buffer (those keep static shapes)."""
    return not isinstance(tensor, torch.nn.Parameter) and "_buffers" not in source.render()


# -- misses ------------------------------------------------------------------------------
def sizes_only_miss(entry_guards, args, kwargs):
    """For an entry whose guard failed on this call: ``{source text: dims}``
    when the only checks that fail are tensor sizes (same type, dtype,
    device, rank and ``requires_grad``), else None."""
    from ..guardfail import evaluate

    env = {"args": args, "kwargs": kwargs}
    changed = {}
    for guard in entry_guards:
        try:
            if all(evaluate(check, env) for check in guard.checks(lambda s: s.expr())):
                continue
        except Exception:  # noqa: BLE001 - a path that no longer resolves
            return None
        if type(guard) is G.ShapeRelations:
            continue  # (its dims are symbolic already: a relation failed)
        if type(guard) is not G.TensorMatch:
            return None
        try:
            value = evaluate(guard.source.expr(), env)
        except Exception:  # noqa: BLE001
            return None
        if type(value) is not guard.tp or value.dtype != guard.dtype \
                or value.device != guard.device or value.requires_grad != guard.requires_grad \
                or value.dim() != len(guard.shape):
            return None
        dims = {d for d, (a, b) in enumerate(zip(value.shape, guard.shape)) if a != b}
        if not dims:
            return None  # (strides alone: a layout change, not a size)
        changed.setdefault(guard.source.render(), set()).update(dims)
    return changed or None


# -- guards of the entry ---------------------------------------------------------------
_PATH = re.compile(r"L\['a(\d+)'\]\.(size|stride)\(\)\[(\d+)\]")
_OFFSET = re.compile(r"L\['a(\d+)'\]\.storage_offset\(\)")


def entry_guards(sizes, guards):
    """``guards`` (the RefGraph's) with the symbolic inputs' exact-shape
    guards replaced by :class:`~pyinterp.refgraph.guards.TensorKind` and
    one :class:`~pyinterp.refgraph.guards.ShapeRelations`; and the
    relations' readable lines.  Raises torch's ``ConstraintViolationError``
    when the code forced a ``mark_dynamic`` dimension to a constant."""
    from torch._dynamo.source import LocalSource
    from torch.fx.experimental.symbolic_shapes import StatelessSymbolicContext

    inputs = sizes.inputs
    fakes = [fake for _, _, fake, _ in inputs]
    contexts = [StatelessSymbolicContext(dynamic_sizes=c.dim_dynamic(),
                                         constraint_sizes=c.constraints())
                if c is not None and c.dynamic else None for _, _, _, c in inputs]
    texts = sizes.shape_env.produce_guards(
        fakes, [LocalSource("a%d" % i) for i in range(len(inputs))], input_contexts=contexts)
    symbolic = [i for i, (_, _, fake, _) in enumerate(inputs) if _is_symbolic(fake)]
    if not symbolic:
        return guards, ()
    position = {i: k for k, i in enumerate(symbolic)}
    paths = {i: inputs[i][0].render() for i in symbolic}
    code_lines, readable = [], []
    for i in symbolic:
        source, _, fake, _ = inputs[i]
        # (a size or stride that is, or was specialized to, a constant;
        # the shape environment leaves those to the tensor's own check)
        code_lines += ["%s%d[%d] == %d" % (kind, position[i], d, v)
                       for kind, d, v in _static_parts(fake)]
    for text in texts:
        if any(int(m.group(1)) not in position for m in _PATH.finditer(text)) \
                or any(int(m.group(1)) not in position for m in _OFFSET.finditer(text)):
            raise NotImplementedError("a shape guard on an input without symbolic sizes: "
                                      + text)
        code_lines.append(_OFFSET.sub(lambda m: "t%d.storage_offset()" % position[int(m.group(1))],
                                      _PATH.sub(lambda m: "%s%d[%s]" % (
                                          "s" if m.group(2) == "size" else "r",
                                          position[int(m.group(1))], m.group(3)), text)))
        readable.append(user_text(sizes, text))
    static = ["%s.%s[%s] == %s" % (paths[i], "shape" if kind == "s" else "stride()", d, v)
              for i in symbolic for kind, d, v in _static_parts(inputs[i][2])]
    dynamic_sources = {inputs[i][0].render(): inputs[i] for i in symbolic}
    out = []
    for guard in guards:
        known = dynamic_sources.get(guard.source.render()) if type(guard) is G.TensorMatch \
            else None
        if known is None:
            out.append(guard)
            continue
        out.append(G.TensorKind(guard.source, tp=guard.tp, dtype=guard.dtype,
                                device=guard.device, rank=len(guard.shape),
                                requires_grad=guard.requires_grad, site=guard.site))
    lines = tuple(static + readable)
    relations = G.ShapeRelations(inputs[symbolic[0]][0],
                                 tensors=tuple(inputs[i][0] for i in symbolic),
                                 code=tuple(code_lines), lines=lines)
    relations.checks(lambda source: source.expr())  # (a form it cannot emit: ValueError now)
    out.append(relations)
    return out, lines


def constant(size):
    """A size's int value when it is, or was specialized to, a constant;
    None for a symbolic one."""
    if type(size) is torch.SymInt:
        return size.node.maybe_as_int()
    return size


def user_text(sizes, text):
    """``text`` (of the shape environment: ``L['a0'].size()[1]``) with
    each input spelled by its path (``x.shape[1]``)."""
    paths = [source.render() for source, _, _, _ in sizes.inputs]
    text = _PATH.sub(lambda m: "%s.%s[%s]" % (
        paths[int(m.group(1))], "shape" if m.group(2) == "size" else "stride()", m.group(3)),
        text)
    return _OFFSET.sub(lambda m: "%s.storage_offset()" % paths[int(m.group(1))], text)


def _is_symbolic(fake):
    return any(constant(s) is None for s in tuple(fake.shape) + tuple(fake.stride())
               + (fake.storage_offset(),))


def _static_parts(fake):
    """``(kind, dim, value)``: the sizes (``s``) and strides (``r``) of a
    symbolic input that are constants."""
    out = [("s", d, constant(v)) for d, v in enumerate(fake.shape) if constant(v) is not None]
    return out + [("r", d, constant(v)) for d, v in enumerate(fake.stride())
                  if constant(v) is not None]


def symbolic_dims(sizes):
    """``[(path, dims, why)]``: the inputs with symbolic dimensions."""
    out = []
    for source, _, fake, choice in sizes.inputs:
        dims = [d for d, s in enumerate(fake.shape) if constant(s) is None]
        if dims:
            out.append((source.render(), dims, {d: choice.why.get(d, "") for d in dims}))
    return out
