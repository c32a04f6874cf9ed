"""Stack manipulation and no-op instructions."""
from .registry import opcode
from .signals import NULL


@opcode("NOP")
def nop(vm, frame, ins):
    """``( -- )`` Do nothing (a placeholder for a line number or a jump).

    RefGraph: records nothing; `float_move` (tracked floats on the stack stay
    tracked).
    """


@opcode("RESUME")
def resume(vm, frame, ins):
    """``( -- )`` Start or resume a frame; a hook point for tracing/ticks.

    ``arg & 3`` says why: 0 function start, 1 after ``yield``, 2 after
    ``yield from``, 3 after ``await`` (3.13 adds bit 2: "outside any
    ``try``").  The decoder sets ``ins.after_yield_from`` for 2 and 3: a generator
    suspended just before such a ``RESUME`` is delegating to the
    sub-iterator on top of its stack.
    RefGraph: records nothing; `float_move`.
    """


@opcode("POP_TOP")
def pop_top(vm, frame, ins):
    """``(value -- )`` Discard the top of the stack.

    RefGraph: records nothing (a discarded tensor result stays in the graph
    only if something else uses it); `int_pop_top` (a tracked int's entry
    goes with it), `float_move`.
    """
    frame.stack.pop()


@opcode("PUSH_NULL")
def push_null(vm, frame, ins):
    """``( -- NULL)`` Push CPython's NULL marker, which a later ``CALL`` reads
    as "no ``self``" in front of the callable.

    RefGraph: records nothing; `float_move`.
    """
    frame.stack.append(NULL)


@opcode("COPY")
def copy(vm, frame, ins):
    """``(item, [n-1 values] -- item, [n-1 values], item)`` Push a copy of the
    n-th item from the top (``COPY 1`` duplicates the top).

    RefGraph: the copy is the same object, so it keeps its access path;
    `int_copy` (a copy of a tracked int is tracked too), `float_move`.
    """
    frame.stack.append(frame.stack[-ins.arg])


@opcode("SWAP")
def swap(vm, frame, ins):
    """``(a, [n-2 values], b -- b, [n-2 values], a)`` Swap the top with the
    n-th item from the top.

    RefGraph: records nothing; `int_swap` (tracked ints' entries swap too),
    `float_move`.
    """
    stack = frame.stack
    n = ins.arg
    stack[-1], stack[-n] = stack[-n], stack[-1]


@opcode("EXTENDED_ARG")
def extended_arg(vm, frame, ins):
    """``( -- )`` Prefix widening the next instruction's argument.  ``dis``
    already folded it into that argument, but still lists the prefix as an
    instruction (and jumps may land on it), so it is a no-op here.

    RefGraph: records nothing; `float_move`.
    """
