"""Python ints that stand for symbolic sizes in the graph.

When a capture keeps some tensor dimensions symbolic (dynamic shapes), a
size it reads (``x.shape[0]``, ``x.size(1)``, ``len(x)``, ``x.numel()``)
and the Python arithmetic on it are :class:`SymbolicInt` objects: real
ints (the program computes with the call's values, exactly as it would
natively) that also carry the FX node computing them in the graph and the
``torch.SymInt`` of torch's shape environment that describes them.  The
recorder (:mod:`.fxgraph`) puts the node in place of the int wherever one
reaches a recorded op, so ``x.view(b * n, d)`` is recorded with ``b * n``
as a size node, not as the number it was on the traced call.

Being an ``int`` subclass, each one is a distinct object: the capture
follows them by type, and :func:`plain` gives a value's copy with plain
ints, for values that leave the capture (returned, stored in outside
state) once their sizes were specialized.
"""


class SymbolicInt(int):
    """An int of the traced call that the graph computes from sizes.

    ``node``: the FX node of the graph computing it; ``sym``: the
    ``torch.SymInt`` of the capture's shape environment (its symbolic
    expression, with this value as hint)."""

    def __new__(cls, value, sym, node):
        self = int.__new__(cls, value)
        self.sym = sym
        self.node = node
        return self

    def __repr__(self):
        return int.__repr__(self)

    __str__ = __repr__

    def __reduce__(self):  # (a copy or pickle is the plain number)
        return int, (int(self),)


_SEQUENCES = (tuple, list)
RESULT_DEPTH = 16
"""How deep the containers of a value that leaves (a result, a return to
native code) are searched; instructions' operands are searched 3 deep."""


def carries(value, depth=3):
    """True if ``value`` is a :class:`SymbolicInt` or holds one in a
    tuple, list, dict or slice (``depth`` levels deep)."""
    tp = type(value)
    if tp is SymbolicInt:
        return True
    if depth <= 0:
        return False
    if issubclass(tp, _SEQUENCES):
        return any(carries(v, depth - 1) for v in value)
    if issubclass(tp, dict):
        return any(carries(v, depth - 1) for v in value.values())
    if tp is slice:
        return carries(value.start, 0) or carries(value.stop, 0) or carries(value.step, 0)
    return False


def each(value, depth=3):
    """Every :class:`SymbolicInt` that :func:`carries` finds in ``value``."""
    tp = type(value)
    if tp is SymbolicInt:
        yield value
    elif depth <= 0:
        return
    elif issubclass(tp, _SEQUENCES):
        for v in value:
            yield from each(v, depth - 1)
    elif issubclass(tp, dict):
        for v in value.values():
            yield from each(v, depth - 1)
    elif tp is slice:
        for v in (value.start, value.stop, value.step):
            yield from each(v, 0)


def plain(value, depth=3, keep=()):
    """``value`` with its :class:`SymbolicInt` objects replaced by plain
    ints: a new tuple (or ``torch.Size``, named tuple, slice) where it held
    one; lists and dicts are changed in place (their identity is the
    program's).  ``keep``: the ids of SymbolicInts left as they are (ints
    from tensor data that a graph output gives back)."""
    tp = type(value)
    if tp is SymbolicInt:
        return value if id(value) in keep else int(value)
    if depth <= 0 or not carries(value, depth):
        return value
    if tp is list:
        value[:] = [plain(v, depth - 1, keep) for v in value]
        return value
    if tp is dict:
        for k, v in value.items():
            value[k] = plain(v, depth - 1, keep)
        return value
    if tp is slice:
        return slice(*(plain(v, 0, keep) for v in (value.start, value.stop, value.step)))
    if issubclass(tp, tuple):
        items = [plain(v, depth - 1, keep) for v in value]
        if tp is tuple:
            return tuple(items)
        if hasattr(value, "_fields"):
            return tp(*items)
        try:
            return tp(items)  # torch.Size
        except Exception:  # noqa: BLE001 - a tuple subclass we cannot rebuild
            return value
    return value
