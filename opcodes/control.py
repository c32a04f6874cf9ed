"""Jumps, loops and return."""
from .fastpath import NATIVE_ITERATORS
from .registry import opcode
from .signals import NULL, RETURN


@opcode("JUMP_FORWARD")
def jump_forward(vm, frame, ins):
    """``( -- )`` Jump forward to the target.

    RefGraph: none.
    """
    return ins.target


@opcode("JUMP_BACKWARD")
def jump_backward(vm, frame, ins):
    """``( -- )`` Jump backward to the target (a loop's back edge; CPython
    checks for signals here).

    RefGraph: none; loops are unrolled in the trace, each iteration recorded.
    """
    return ins.target


@opcode("JUMP_BACKWARD_NO_INTERRUPT")
def jump_backward_no_interrupt(vm, frame, ins):
    """``( -- )`` Jump backward without a signal check (``yield from``/
    ``await`` loops).

    RefGraph: none.
    """
    return ins.target


@opcode("GET_ITER")
def get_iter(vm, frame, ins):
    """``(iterable -- iterator)`` ``iter(iterable)``, with a Python
    ``__iter__`` (or legacy ``__getitem__``) interpreted.

    RefGraph: iterating an outside sequence/dict guards its length/keys.
    """
    frame.stack[-1] = vm.get_iter(frame.stack[-1])


@opcode("FOR_ITER")
def for_iter(vm, frame, ins):
    """``(iterator -- iterator, value)`` Push ``next(iterator)``; when it is
    exhausted, pop the iterator and jump to the loop exit (3.11; 3.12+ jump
    past ``END_FOR``).

    RefGraph: each item read from an outside container is ``Item(path, i)``.
    """
    stack = frame.stack
    it = stack[-1]
    if type(it) in NATIVE_ITERATORS:
        value = next(it, NULL)
        if value is NULL:
            stack.pop()
            return ins.target
        stack.append(value)
        return None
    try:
        value = vm.next_value(it)
    except StopIteration:
        stack.pop()
        return ins.target
    stack.append(value)


@opcode("RETURN_VALUE")
def return_value(vm, frame, ins):
    """``(value -- )`` Return ``value`` to the caller.

    RefGraph: the returned value is what the mock rebuilds: graph outputs,
    objects created in the run, or values reached by a path.
    """
    frame.retval = frame.stack.pop()
    return RETURN


@opcode("GET_LEN")
def get_len(vm, frame, ins):
    """``(obj -- obj, len)`` Push ``len(obj)`` (sequence and mapping patterns).

    RefGraph: a length read: a guard on an outside container's length.
    """
    frame.stack.append(vm.length(frame.stack[-1]))
