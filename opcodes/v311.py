"""Opcodes that exist only in Python 3.11 (removed or reworked in 3.12)."""

from . import control, exceptions, intrinsics, names
from .registry import opcode

_V312 = (3, 12)


@opcode("PRECALL", until=_V312)
def precall(vm, frame, ins):
    """``( -- )`` 3.11 only: prepare the ``CALL`` that follows (CPython uses it
    to specialise and to unpack bound methods; semantically a no-op).

    ``dis.stack_effect`` charges PRECALL with ``-arg`` and CALL with ``-1``;
    at run time PRECALL pops nothing and CALL pops everything.
    RefGraph: records nothing; `float_move`.
    """


@opcode("LOAD_METHOD", until=_V312)
def load_method(vm, frame, ins):
    """``(obj -- method, obj)`` or ``(obj -- NULL, attr)`` 3.11: look up a method
    for an immediate call.  When ``name`` is a plain function on the type
    and not shadowed, push the function and ``obj`` (so no bound method is
    created); otherwise push NULL and the attribute.  3.12+ spell it
    ``LOAD_ATTR`` with the method bit.

    RefGraph: as ``LOAD_ATTR`` with the method bit: rules `plain_method` and
    `load_attr`, `float_reads_top`.
    """
    frame.lasti = ins.index
    names.load_method(vm, frame.stack, ins.argval)


for _direction in ("FORWARD", "BACKWARD"):
    opcode("POP_JUMP_%s_IF_TRUE" % _direction, until=_V312)(control.jump_if_true)
    opcode("POP_JUMP_%s_IF_FALSE" % _direction, until=_V312)(control.jump_if_false)
    opcode("POP_JUMP_%s_IF_NONE" % _direction, until=_V312)(control.jump_if_none)
    opcode("POP_JUMP_%s_IF_NOT_NONE" % _direction, until=_V312)(control.jump_if_not_none)


@opcode("JUMP_IF_TRUE_OR_POP", until=_V312)
def jump_if_true_or_pop(vm, frame, ins):
    """``(cond -- cond)`` if true and jumping, else ``(cond -- )`` 3.11 ``or``:
    keep the value and jump if it is true, otherwise pop it.

    RefGraph: as the conditional jumps: rules `jump_if_tensor` (a tensor
    condition) and `truth`; `int_jump` breaks on a tracked int or bool (the
    value would stay on the stack for the program).
    """
    stack = frame.stack
    if vm.truth(stack[-1]):
        return ins.target
    stack.pop()


@opcode("JUMP_IF_FALSE_OR_POP", until=_V312)
def jump_if_false_or_pop(vm, frame, ins):
    """``(cond -- cond)`` if false and jumping, else ``(cond -- )`` 3.11 ``and``:
    keep the value and jump if it is false, otherwise pop it.

    RefGraph: as ``JUMP_IF_TRUE_OR_POP``: rules `jump_if_tensor`, `truth` and
    `int_jump`.
    """
    stack = frame.stack
    if not vm.truth(stack[-1]):
        return ins.target
    stack.pop()


@opcode("LOAD_CLASSDEREF", until=_V312)
def load_classderef(vm, frame, ins):
    """``( -- value)`` 3.11: in a class body, load free variable ``name`` from
    the class namespace if it is there, else from its cell.

    RefGraph: the class namespace as in ``LOAD_NAME`` (rule `getitem` for one
    that is not a dict), then the cell natively (unrecorded).
    """
    frame.stack.append(names.load_from_mapping_or_cell(vm, frame, ins, frame.locals))


@opcode("PREP_RERAISE_STAR", until=_V312)
def prep_reraise_star(vm, frame, ins):
    """``(orig, excs -- exc_or_None)`` 3.11 end of ``except*``: combine the
    exceptions raised or re-raised by the handlers (``excs``) into what
    propagates: None, a single exception, or a new group in which re-raised
    parts keep the original group's structure (3.12+:
    ``CALL_INTRINSIC_2 INTRINSIC_PREP_RERAISE_STAR``).

    RefGraph: none.
    """
    stack = frame.stack
    excs = stack.pop()
    stack[-1] = exceptions.prep_reraise(stack[-1], excs)


@opcode("ASYNC_GEN_WRAP", until=_V312)
def async_gen_wrap(vm, frame, ins):
    """``(value -- wrapped)`` 3.11: mark a value yielded by an async generator
    (so the driver tells it apart from values passed through by ``await``;
    3.12+: ``CALL_INTRINSIC_1 INTRINSIC_ASYNC_GEN_WRAP``).

    RefGraph: none.
    """
    frame.stack[-1] = vm.async_gen_wrap(frame.stack[-1])


@opcode("PRINT_EXPR", until=_V312)
def print_expr(vm, frame, ins):
    """``(value -- )`` Interactive mode: pass the value to ``sys.displayhook``
    (3.12+: ``CALL_INTRINSIC_1 INTRINSIC_PRINT``).

    RefGraph: rule `call` calls ``sys.displayhook`` (classified as any native
    call).
    """
    intrinsics.display(vm, frame.stack.pop())


@opcode("IMPORT_STAR", until=_V312)
def import_star(vm, frame, ins):
    """``(module -- )`` ``from module import *``: copy the names listed in
    ``module.__all__`` (or every public name) into the locals mapping
    (3.12+: ``CALL_INTRINSIC_1 INTRINSIC_IMPORT_STAR``).

    RefGraph: rules `load_attr`, `iterate` and `call` (through
    ``vm.import_star``) read the module's names; the namespace is written
    natively.
    """
    vm.import_star(frame.stack.pop(), frame.locals)
