"""Types whose operators are all C code, for the handlers' fast paths.

When both operands of ``a + b`` (or ``a < b``...) have one of these exact
types, no Python-level special method can be involved, so a handler calls
the native ``operator`` function directly instead of running the full
data-model protocol.
"""
import operator

NATIVE_TYPES = frozenset({
    int, float, complex, bool, str, bytes, bytearray, list, tuple, dict, set,
    frozenset, type(None), range, slice, type(Ellipsis),
})

SCALAR_TYPES = NATIVE_TYPES - {bytearray, list, tuple, dict, set, frozenset}
"""The immutable scalars among :data:`NATIVE_TYPES`: the handlers' fast
paths take these only, so an operator on a container always goes through
``vm.binary_op``/``vm.compare``, where an interpreter subclass sees it (the
capture guards what C code reads from a container)."""

BINARY_FUNCTIONS = (
    operator.add, operator.and_, operator.floordiv, operator.lshift,
    operator.matmul, operator.mul, operator.mod, operator.or_, operator.pow,
    operator.rshift, operator.sub, operator.truediv, operator.xor,
    operator.iadd, operator.iand, operator.ifloordiv, operator.ilshift,
    operator.imatmul, operator.imul, operator.imod, operator.ior,
    operator.ipow, operator.irshift, operator.isub, operator.itruediv,
    operator.ixor,
)
"""The native function of each ``BINARY_OP`` operator, by its NB_* number."""

COMPARE_FUNCTIONS = {
    "<": operator.lt, "<=": operator.le, "==": operator.eq,
    "!=": operator.ne, ">": operator.gt, ">=": operator.ge,
}


NATIVE_ITERATORS = frozenset(type(it) for it in (
    iter([]), iter(()), iter(range(0)), iter(range(1 << 70)), iter({}),
    iter({}.values()), iter({}.items()), iter(""), iter(set()), iter(b""),
    iter(bytearray()), reversed([]), reversed(range(0)), enumerate(()), zip(),
    (lambda: (yield))(),
))
"""Iterator types implemented in C whose ``__next__`` runs no Python code.
Interpreted generators are real generator objects, so they are here too:
their ``__next__`` resumes the interpreter."""
