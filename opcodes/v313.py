"""Opcodes that exist only in Python 3.13 (of the supported versions).

3.13 converts conditions to exact bools before jumping (``TO_BOOL``), passes
keyword names on the stack (``CALL_KW``), builds functions in steps
(``MAKE_FUNCTION`` then ``SET_FUNCTION_ATTRIBUTE``), splits ``FORMAT_VALUE``
into three instructions, and fuses pairs of local loads and stores.
"""
from types import CellType, FunctionType

from . import build, calls, names
from .registry import opcode
from .signals import NULL

_V313 = (3, 13)


@opcode("TO_BOOL", since=_V313)
def to_bool(vm, frame, ins):
    """``(value -- bool)`` 3.13: ``bool(value)`` before a conditional jump or
    ``not`` (``__bool__``/``__len__`` interpreted), which then require an
    exact bool.  Right before a truth-test jump the decoder folds it into
    the jump (``ins.to_bool`` False): the value stays, the jump tests it.

    RefGraph: rule `truth`, as ``UNARY_NOT`` (the truth of a tensor breaks
    the graph here, rule `torch_function`); `int_to_bool`: folded, a
    tracked int stays tracked for the jump, else a break first.
    """
    stack = frame.stack
    value = stack[-1]
    if ins.to_bool and value.__class__ is not bool:
        stack[-1] = vm.truth(value)


@opcode("CALL_KW", since=_V313)
def call_kw(vm, frame, ins):
    """``(callable, self_or_null, arg_1 ... arg_n, names -- result)`` 3.13:
    ``CALL`` whose last ``len(names)`` arguments are passed by keyword
    (3.11/3.12: ``KW_NAMES`` before ``CALL``).

    RefGraph: as ``CALL``: rules `call` and `call_function`, `float_move` (a
    tracked int on the stack breaks first).
    """
    frame.kw_names = frame.stack.pop()
    return calls.call(vm, frame, ins)


@opcode("MAKE_FUNCTION", since=_V313)
def make_function(vm, frame, ins):
    """``(code -- function)`` 3.13: create a bare function from a code object;
    ``SET_FUNCTION_ATTRIBUTE`` adds defaults, annotations and the closure.

    A code object with free variables cannot make a function without a
    closure, so it gets empty cells until ``SET_FUNCTION_ATTRIBUTE``
    supplies the real ones (the compiler always emits that right after).
    RefGraph: none (a function created by the run).
    """
    stack = frame.stack
    code = stack[-1]
    closure = tuple(CellType() for _ in code.co_freevars) if code.co_freevars else None
    stack[-1] = FunctionType(code, frame.globals, None, None, closure)


@opcode("SET_FUNCTION_ATTRIBUTE", since=_V313)
def set_function_attribute(vm, frame, ins):
    """``(value, function -- function)`` 3.13: set one optional part of a new
    function, chosen by ``arg``: 0x01 defaults, 0x02 keyword-only defaults,
    0x04 annotations, 0x08 closure (3.11/3.12 ``MAKE_FUNCTION`` flags).

    RefGraph: rule `make_function` (as 3.11's ``MAKE_FUNCTION``): a closure
    cell shared with an outside function is registered.
    """
    stack = frame.stack
    func = stack.pop()
    stack[-1] = calls.set_function_attribute(func, ins.arg, stack[-1])


@opcode("CONVERT_VALUE", since=_V313)
def convert_value(vm, frame, ins):
    """``(value -- converted)`` 3.13: an f-string field's ``!s``/``!r``/``!a``
    (``arg`` 1/2/3), with Python ``__str__``/``__repr__`` interpreted.

    RefGraph: the conversion's rules, as ``FORMAT_VALUE``; `float_move`.
    """
    stack = frame.stack
    stack[-1] = build.convert(vm, stack[-1], ins.arg)


@opcode("FORMAT_SIMPLE", since=_V313)
def format_simple(vm, frame, ins):
    """``(value -- str)`` 3.13: ``format(value, '')`` for an f-string field
    without a spec (a str stays as it is).

    RefGraph: rule `format`, as ``FORMAT_VALUE``; `float_move`.
    """
    stack = frame.stack
    stack[-1] = build.format_field(vm, stack[-1], "")


@opcode("FORMAT_WITH_SPEC", since=_V313)
def format_with_spec(vm, frame, ins):
    """``(value, spec -- str)`` 3.13: ``format(value, spec)`` for an f-string
    field with a spec.

    RefGraph: rule `format`, as ``FORMAT_VALUE``; `float_move`.
    """
    stack = frame.stack
    spec = stack.pop()
    stack[-1] = build.format_field(vm, stack[-1], spec)


@opcode("LOAD_FAST_LOAD_FAST", since=_V313)
def load_fast_load_fast(vm, frame, ins):
    """``( -- value1, value2)`` 3.13: two ``LOAD_FAST`` in one; the decoder
    unpacked ``arg`` (``first << 4 | second``) into two slots.

    RefGraph: records nothing; `float_move`; `int_slot_pair` (a tracked
    int's entry moves as through two ``LOAD_FAST``).
    """
    first, second = ins.argval
    fast = frame.fast
    value1 = fast[first]
    value2 = fast[second]
    if value1 is NULL or value2 is NULL:
        raise _unbound(ins, 0 if value1 is NULL else 1)
    frame.stack.append(value1)
    frame.stack.append(value2)


@opcode("STORE_FAST_LOAD_FAST", since=_V313)
def store_fast_load_fast(vm, frame, ins):
    """``(value -- loaded)`` 3.13: ``STORE_FAST first`` then ``LOAD_FAST
    second``.

    RefGraph: records nothing; `float_move`; `int_slot_pair` (a tracked
    int's entry moves as through the two halves).
    """
    first, second = ins.argval
    fast = frame.fast
    stack = frame.stack
    fast[first] = stack[-1]
    value = fast[second]
    if value is NULL:
        stack.pop()
        raise _unbound(ins, 1)
    stack[-1] = value


@opcode("STORE_FAST_STORE_FAST", since=_V313)
def store_fast_store_fast(vm, frame, ins):
    """``(value2, value1 -- )`` 3.13: ``STORE_FAST first`` (of the top) then
    ``STORE_FAST second``.

    RefGraph: records nothing (locals are internal to the run); `float_move`;
    `int_slot_pair` (a tracked int's entry moves as through two
    ``STORE_FAST``).
    """
    first, second = ins.argval
    fast = frame.fast
    stack = frame.stack
    fast[first] = stack.pop()
    fast[second] = stack.pop()


def _unbound(ins, which):
    return names._unbound_local(ins.varnames[which])
