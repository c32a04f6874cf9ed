"""Jumps, loops and return."""
from .fastpath import NATIVE_ITERATORS
from .registry import opcode
from .signals import NULL, RETURN


@opcode("JUMP_FORWARD")
def jump_forward(vm, frame, ins):
    """``( -- )`` Jump forward to the target.

    RefGraph: records nothing; `float_move`.
    """
    return ins.target


@opcode("JUMP_BACKWARD")
def jump_backward(vm, frame, ins):
    """``( -- )`` Jump backward to the target (a loop's back edge; CPython
    checks for signals here).

    RefGraph: records nothing (loops are unrolled in the trace, each
    iteration recorded); `float_move`.
    """
    return ins.target


@opcode("JUMP_BACKWARD_NO_INTERRUPT")
def jump_backward_no_interrupt(vm, frame, ins):
    """``( -- )`` Jump backward without a signal check (``yield from``/
    ``await`` loops).

    RefGraph: records nothing; `float_move`.
    """
    return ins.target


def jump_if_true(vm, frame, ins):
    """``(cond -- )`` Pop ``cond``; jump if it is true (``__bool__``/``__len__``
    interpreted).

    3.12+ ``POP_JUMP_IF_TRUE`` (on 3.13 ``cond`` is always an exact bool:
    ``TO_BOOL`` or ``COMPARE_OP``'s bool bit converted it); 3.11 has
    ``POP_JUMP_FORWARD_IF_TRUE`` and ``POP_JUMP_BACKWARD_IF_TRUE``.  The
    decoder made every target an absolute index, so one handler serves them
    all.
    RefGraph: rule `jump_if_tensor` (on 3.11 the forward form only): a tensor
    condition is a data-dependent branch, which GraphMend rewrites (both arms
    run and merged with ``torch.where`` or ``torch.cond``, or a loop run as
    one ``torch.while_loop``) or else breaks the graph; `int_jump`: a tracked
    int or bool condition becomes a recorded 0-d bool tensor first; rule
    `truth` for other values (the truth of an outside container reads its
    length).
    """
    value = frame.stack.pop()
    if value is True or (value is not False and vm.truth(value)):
        return ins.target


def jump_if_false(vm, frame, ins):
    """``(cond -- )`` Pop ``cond``; jump if it is false.

    3.12+ ``POP_JUMP_IF_FALSE``; 3.11's forward and backward forms share
    this handler.
    RefGraph: as the IF_TRUE jumps: rules `jump_if_tensor`, `int_jump` and
    `truth`.
    """
    value = frame.stack.pop()
    if value is False or (value is not True and not vm.truth(value)):
        return ins.target


def jump_if_none(vm, frame, ins):
    """``(value -- )`` Pop ``value``; jump if it is None.

    3.12+ ``POP_JUMP_IF_NONE``; 3.11's forward and backward forms share
    this handler.
    RefGraph: none; the identity test runs natively (a value from outside was
    guarded where it was read).
    """
    if frame.stack.pop() is None:
        return ins.target


def jump_if_not_none(vm, frame, ins):
    """``(value -- )`` Pop ``value``; jump if it is not None.

    3.12+ ``POP_JUMP_IF_NOT_NONE``; 3.11's forward and backward forms share
    this handler.
    RefGraph: none, as the IF_NONE jumps.
    """
    if frame.stack.pop() is not None:
        return ins.target


opcode("POP_JUMP_IF_TRUE", since=(3, 12))(jump_if_true)
opcode("POP_JUMP_IF_FALSE", since=(3, 12))(jump_if_false)
opcode("POP_JUMP_IF_NONE", since=(3, 12))(jump_if_none)
opcode("POP_JUMP_IF_NOT_NONE", since=(3, 12))(jump_if_not_none)


@opcode("GET_ITER")
def get_iter(vm, frame, ins):
    """``(iterable -- iterator)`` ``iter(iterable)``, with a Python
    ``__iter__`` (or legacy ``__getitem__``) interpreted.

    RefGraph: rule `get_iter`: an outside list, tuple or dict is read whole
    (its length or keys, and each item as ``Item(path, key)``); iterating
    another outside object natively breaks the graph; `float_reads_top` (the
    items may be tracked floats).
    """
    frame.stack[-1] = vm.get_iter(frame.stack[-1])


@opcode("FOR_ITER")
def for_iter(vm, frame, ins):
    """``(iterator -- iterator, value)`` Push ``next(iterator)``; when it is
    exhausted, pop the iterator and jump to the loop exit:
    ``(iterator -- )``.  3.12 steps over the ``END_FOR`` at the target ``dis``
    shows, 3.13 over ``END_FOR; POP_TOP``; the decoded target is already
    past them.

    RefGraph: rule `next_value`: advancing an outside iterator breaks the
    graph (the items of an outside container were read by ``GET_ITER``);
    `float_move`.
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


@opcode("END_FOR", since=(3, 12), until=(3, 13))
def end_for_312(vm, frame, ins):
    """``(iterator, value -- )`` 3.12: end of a ``for`` loop; pops two values.
    An exhausted ``FOR_ITER`` jumps past it, so it only runs when reached
    some other way.

    RefGraph: records nothing; `float_move`.
    """
    del frame.stack[-2:]


@opcode("END_FOR", since=(3, 13))
def end_for(vm, frame, ins):
    """``(value -- )`` 3.13: end of a ``for`` loop; pops one value (a
    ``POP_TOP`` of the iterator follows).  An exhausted ``FOR_ITER`` jumps
    past both.

    RefGraph: records nothing; `float_move`.
    """
    frame.stack.pop()


@opcode("RETURN_VALUE")
def return_value(vm, frame, ins):
    """``(value -- )`` Return ``value`` to the caller.

    RefGraph: records nothing; the returned value is what the mock rebuilds
    (graph outputs, objects created in the run, or values reached by a path);
    `float_move` (a tracked float is read back from a graph output).
    """
    frame.retval = frame.stack.pop()
    return RETURN


@opcode("RETURN_CONST", since=(3, 12))
def return_const(vm, frame, ins):
    """``( -- )`` 3.12+: return the constant ``co_consts[arg]`` (3.11:
    ``LOAD_CONST; RETURN_VALUE``).

    RefGraph: as ``RETURN_VALUE`` (`float_move`); a constant needs no
    rebuilding.
    """
    frame.retval = ins.argval
    return RETURN


@opcode("GET_LEN")
def get_len(vm, frame, ins):
    """``(obj -- obj, len)`` Push ``len(obj)`` (sequence and mapping patterns).

    RefGraph: rule `length`: a guard on an outside container's length.
    """
    frame.stack.append(vm.length(frame.stack[-1]))
