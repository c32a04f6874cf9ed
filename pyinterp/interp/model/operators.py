"""Operators, following Python's data model, with Python dunders interpreted.

Every operator has a fast path: when no operand's type defines the relevant
special method in Python, the native ``operator`` function gives the exact
result and error message.  Otherwise the protocol is run step by step here
(forward method, reflected method with subclass priority, ``NotImplemented``),
calling Python dunders through the interpreter.

When every method returned ``NotImplemented``, the ``TypeError`` is raised
here with CPython's message (so declining Python dunders run exactly once).
Only when a sequence operand's ``sq_concat``/``sq_repeat`` fallback may
still apply is the native operator called as the last step; in that rare
path the declining Python dunders run a second time, natively.
"""
import operator
from collections import deque
from types import FunctionType

from .dunders import bind, call_special, needs_interpreter
from .lookup import MISSING, lookup
from ...errors import PyinterpInternal
from ...opcodes.fastpath import BINARY_FUNCTIONS as NATIVE_BINARY
from ...opcodes.fastpath import NATIVE_TYPES  # noqa: F401  (re-exported)

# (native function, forward dunder, reflected dunder), indexed by BINARY_OP's
# NB_* number; the in-place forms (13..25) carry the in-place dunder and the
# index of their binary form.
_BINARY = [
    (operator.add, "__add__", "__radd__"),
    (operator.and_, "__and__", "__rand__"),
    (operator.floordiv, "__floordiv__", "__rfloordiv__"),
    (operator.lshift, "__lshift__", "__rlshift__"),
    (operator.matmul, "__matmul__", "__rmatmul__"),
    (operator.mul, "__mul__", "__rmul__"),
    (operator.mod, "__mod__", "__rmod__"),
    (operator.or_, "__or__", "__ror__"),
    (operator.pow, "__pow__", "__rpow__"),
    (operator.rshift, "__rshift__", "__rrshift__"),
    (operator.sub, "__sub__", "__rsub__"),
    (operator.truediv, "__truediv__", "__rtruediv__"),
    (operator.xor, "__xor__", "__rxor__"),
]
_INPLACE = [
    (operator.iadd, "__iadd__", 0), (operator.iand, "__iand__", 1),
    (operator.ifloordiv, "__ifloordiv__", 2), (operator.ilshift, "__ilshift__", 3),
    (operator.imatmul, "__imatmul__", 4), (operator.imul, "__imul__", 5),
    (operator.imod, "__imod__", 6), (operator.ior, "__ior__", 7),
    (operator.ipow, "__ipow__", 8), (operator.irshift, "__irshift__", 9),
    (operator.isub, "__isub__", 10), (operator.itruediv, "__itruediv__", 11),
    (operator.ixor, "__ixor__", 12),
]

# Sequence types whose ``__add__``/``__mul__`` are sq_concat/sq_repeat: CPython
# tries them only after both operands' numeric methods declined.
_SEQUENCE_SLOT_OWNERS = frozenset({list, tuple, str, bytes, bytearray, deque})
_SEQUENCE_SLOT_NAMES = frozenset({"__add__", "__mul__", "__rmul__", "__iadd__", "__imul__"})


def binary_op(vm, nb, a, b):
    """``a <op> b`` for BINARY_OP's operator number ``nb`` (0..25)."""
    if type(a) in NATIVE_TYPES and type(b) in NATIVE_TYPES:
        return NATIVE_BINARY[nb](a, b)
    if nb >= 13:
        native, iname, base = _INPLACE[nb - 13]
        method = lookup(type(a), iname)
        if method is not MISSING and not _is_sequence_slot(method, iname):
            if needs_interpreter(method):
                result = call_special(vm, method, a, b)
                if result is not NotImplemented:
                    return result
            elif not _has_python_binary(a, b, base):
                return native(a, b)
            else:
                result = method(a, b)
                if result is not NotImplemented:
                    return result
        elif not _has_python_binary(a, b, base):
            return native(a, b)
        return _binary_protocol(vm, base, a, b, native, iname)
    if not _has_python_binary(a, b, nb):
        return NATIVE_BINARY[nb](a, b)
    return _binary_protocol(vm, nb, a, b, NATIVE_BINARY[nb])


def python_binary(nb, a, b):
    """True if ``a <op> b`` (BINARY_OP's ``nb``) may run a Python dunder
    (interpreted); False if C code does all of it."""
    if nb >= 13:
        _, iname, base = _INPLACE[nb - 13]
        if needs_interpreter(lookup(type(a), iname)):
            return True
        nb = base
    return _has_python_binary(a, b, nb)


def native_inplace(nb, a):
    """The name of the C in-place method that ``a <op>= b`` calls on ``a``
    (which may change ``a``: ``list.__iadd__``), or None."""
    if nb < 13:
        return None
    iname = _INPLACE[nb - 13][1]
    method = lookup(type(a), iname)
    return None if method is MISSING or needs_interpreter(method) else iname


def _has_python_binary(a, b, nb):
    _, fwd, rev = _BINARY[nb]
    return needs_interpreter(lookup(type(a), fwd)) or needs_interpreter(lookup(type(b), rev))


def _is_sequence_slot(method, name):
    return name in _SEQUENCE_SLOT_NAMES and getattr(method, "__objclass__", None) in _SEQUENCE_SLOT_OWNERS


def _binary_protocol(vm, nb, a, b, native, inplace_name=None):
    """Forward/reflected dispatch with subclass priority (the data model)."""
    _, fwd, rev = _BINARY[nb]
    ta, tb = type(a), type(b)
    forward = lookup(ta, fwd)
    reflected = lookup(tb, rev) if tb is not ta else MISSING
    if _is_sequence_slot(forward, fwd):
        forward = MISSING
    if _is_sequence_slot(reflected, rev):
        reflected = MISSING
    if (reflected is not MISSING and ta in tb.__mro__
            and reflected is not lookup(ta, rev)):
        # A subclass that overrides the reflected method goes first.
        result = _call_binary(vm, reflected, b, a)
        if result is not NotImplemented:
            return result
        reflected = MISSING
    if forward is not MISSING:
        result = _call_binary(vm, forward, a, b)
        if result is not NotImplemented:
            return result
    if reflected is not MISSING:
        result = _call_binary(vm, reflected, b, a)
        if result is not NotImplemented:
            return result
    if _has_sequence_fallback(nb, ta, tb, inplace_name):
        return native(a, b)
    symbol = _SYMBOLS[nb] + "=" if inplace_name else _SYMBOLS[nb].replace("**", "** or pow()")
    raise TypeError("unsupported operand type(s) for %s: '%s' and '%s'"
                    % (symbol, type_name(ta), type_name(tb)))


# BINARY_OP's operator symbols, indexed like _BINARY (for error messages).
_SYMBOLS = ("+", "&", "//", "<<", "@", "*", "%", "|", "**", ">>", "-", "/", "^")


def _has_sequence_fallback(nb, ta, tb, inplace_name):
    """May CPython's sequence concat/repeat slots still handle the operation?"""
    _, fwd, rev = _BINARY[nb]
    return (_is_sequence_slot(lookup(ta, fwd), fwd) or _is_sequence_slot(lookup(tb, rev), rev)
            or (inplace_name is not None
                and _is_sequence_slot(lookup(ta, inplace_name), inplace_name)))


def type_name(tp):
    """CPython's ``tp_name`` of a type, as error messages show it: the bare
    name of a heap type, ``module.name`` of a static (C) type outside
    ``builtins`` (``'collections.deque'``)."""
    if tp.__flags__ & _HEAPTYPE or tp.__module__ == "builtins":
        return tp.__name__
    return "%s.%s" % (tp.__module__, tp.__name__)


_HEAPTYPE = 1 << 9


def _call_binary(vm, method, self, other):
    if needs_interpreter(method):
        return call_special(vm, method, self, other)
    return method(self, other)


# -- comparisons ---------------------------------------------------------
_COMPARE = {
    "<": (operator.lt, "__lt__", "__gt__"),
    "<=": (operator.le, "__le__", "__ge__"),
    "==": (operator.eq, "__eq__", "__eq__"),
    "!=": (operator.ne, "__ne__", "__ne__"),
    ">": (operator.gt, "__gt__", "__lt__"),
    ">=": (operator.ge, "__ge__", "__le__"),
}
NATIVE_COMPARE = {op: v[0] for op, v in _COMPARE.items()}


def compare(vm, op, a, b):
    """Rich comparison ``a <op> b`` (``op`` one of ``< <= == != > >=``)."""
    native, name, reflected_name = _COMPARE[op]
    ta, tb = type(a), type(b)
    if ta in NATIVE_TYPES and tb in NATIVE_TYPES:
        return native(a, b)
    forward = lookup(ta, name)
    reflected = lookup(tb, reflected_name)
    if not (needs_interpreter(forward) or needs_interpreter(reflected)
            or _python_ne_fallback(op, forward, ta) or _python_ne_fallback(op, reflected, tb)):
        return native(a, b)
    checked_reverse = False
    if tb is not ta and ta in tb.__mro__:
        checked_reverse = True
        result = _call_compare(vm, reflected, reflected_name, b, a)
        if result is not NotImplemented:
            return result
    result = _call_compare(vm, forward, name, a, b)
    if result is not NotImplemented:
        return result
    if not checked_reverse:
        result = _call_compare(vm, reflected, reflected_name, b, a)
        if result is not NotImplemented:
            return result
    if op == "==":
        return a is b
    if op == "!=":
        return a is not b
    raise TypeError("'%s' not supported between instances of '%s' and '%s'"
                    % (op, type_name(ta), type_name(tb)))


def python_compare(op, a, b):
    """True if ``a <op> b`` may run a Python dunder (interpreted); False if
    C code does all of it (items of containers aside)."""
    _, name, reflected_name = _COMPARE[op]
    forward, reflected = lookup(type(a), name), lookup(type(b), reflected_name)
    return needs_interpreter(forward) or needs_interpreter(reflected) \
        or _python_ne_fallback(op, forward, type(a)) or _python_ne_fallback(op, reflected, type(b))


def _python_ne_fallback(op, method, tp):
    """``object.__ne__`` calls ``__eq__`` itself; is that ``__eq__`` Python?"""
    return op == "!=" and method is object.__ne__ and needs_interpreter(lookup(tp, "__eq__"))


def _call_compare(vm, method, name, self, other):
    if method is object.__ne__ and name == "__ne__":
        # object.__ne__ delegates to __eq__ and inverts a non-NotImplemented
        # result.
        result = _call_compare(vm, lookup(type(self), "__eq__"), "__eq__", self, other)
        if result is NotImplemented:
            return result
        return not truth(vm, result)
    if needs_interpreter(method):
        if type(method) is not FunctionType and lookup(type(method), "__get__") is not MISSING:
            # slot_tp_richcompare: a method whose binding fails (a property
            # whose getter raises) is NotImplemented, the error cleared.
            try:
                method = bind(vm, method, self, type(self))
            except PyinterpInternal:
                raise
            except BaseException:
                return NotImplemented
            return vm.call(method, (other,))
        return call_special(vm, method, self, other)
    return method(self, other)


def compare_bool(vm, a, b):
    """``PyObject_RichCompareBool(a, b, Py_EQ)``: identity implies equality."""
    if a is b:
        return True
    return truth(vm, compare(vm, "==", a, b))


# -- unary operators and truth -------------------------------------------
_UNARY = {
    "UNARY_NEGATIVE": (operator.neg, "__neg__"),
    "UNARY_POSITIVE": (operator.pos, "__pos__"),
    "UNARY_INVERT": (operator.invert, "__invert__"),
}


def unary_op(vm, opname, value):
    native, name = _UNARY[opname]
    if type(value) in NATIVE_TYPES:
        return native(value)
    method = lookup(type(value), name)
    if needs_interpreter(method):
        return call_special(vm, method, value)
    return native(value)


_TRUTH_FAST = frozenset({bool, int, type(None), str, list, tuple, dict, set, float})


def truth(vm, value):
    """``bool(value)`` with Python ``__bool__``/``__len__`` interpreted."""
    if type(value) in _TRUTH_FAST:
        return bool(value)
    tp = type(value)
    method = lookup(tp, "__bool__")
    if method is not MISSING:
        if not needs_interpreter(method):
            return bool(value)
        result = call_special(vm, method, value)
        if type(result) is not bool:
            raise TypeError("__bool__ should return bool, returned %s" % type(result).__name__)
        return result
    method = lookup(tp, "__len__")
    if needs_interpreter(method):
        return length_result(call_special(vm, method, value)) != 0
    return bool(value)


def length_result(result):
    """Validate a ``__len__`` result as ``slot_sq_length`` does."""
    if type(result) is not int:
        result = operator.index(result)
        if result >= 1 << 63:
            raise OverflowError("cannot fit 'int' into an index-sized integer")
    if result < 0:
        raise ValueError("__len__() should return >= 0")
    if result >= 1 << 63:
        raise OverflowError("cannot fit 'int' into an index-sized integer")
    return result


def length(vm, obj):
    """``len(obj)`` with a Python ``__len__`` interpreted."""
    tp = type(obj)
    if tp in NATIVE_TYPES:
        return len(obj)
    method = lookup(tp, "__len__")
    if needs_interpreter(method):
        return length_result(call_special(vm, method, obj))
    return len(obj)
