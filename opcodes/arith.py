"""Operators: binary, unary, comparison, identity, membership, subscription."""
from .fastpath import BINARY_FUNCTIONS, COMPARE_FUNCTIONS, SCALAR_TYPES
from .registry import opcode


@opcode("BINARY_OP")
def binary_op(vm, frame, ins):
    """``(lhs, rhs -- result)`` Apply binary or in-place operator number ``arg``
    (``NB_ADD`` ... ``NB_INPLACE_XOR``; ``dis._nb_ops`` names them).

    Data model: ``__op__``, then reflected ``__rop__`` (first, if the right
    operand's type is a subclass that overrides it), honouring
    ``NotImplemented``; in-place forms try ``__iop__`` first.  Python
    dunders are interpreted.  Scalars take a fast path; containers go
    through ``vm.binary_op``.
    RefGraph: with a tensor operand, an FX node for the operator (rule
    `torch_function`; an in-place operator on an outside tensor is an input
    mutation kept in the graph); rule `binary_op`: C code that reads
    containers has them guarded (``a + b`` on lists), an in-place operator
    on an outside list, dict or set is a write the mock replays (``a +=
    b``); `float_binary_op` and `int_binary_op`:
    arithmetic on floats and ints the graph computes is recorded on their
    nodes, and its result is tracked in turn (``"%.2f" % s`` makes text
    the mock makes again); `float_move`.
    """
    stack = frame.stack
    rhs = stack.pop()
    lhs = stack[-1]
    if type(lhs) in SCALAR_TYPES and type(rhs) in SCALAR_TYPES:
        stack[-1] = BINARY_FUNCTIONS[ins.argval](lhs, rhs)
    else:
        stack[-1] = vm.binary_op(ins.argval, lhs, rhs)


@opcode("UNARY_NEGATIVE")
def unary_negative(vm, frame, ins):
    """``(value -- -value)`` ``__neg__``.

    RefGraph: an FX node for a tensor operand (rule `torch_function`);
    `float_unary_negative` (``-s`` of a tracked float is tracked too),
    `float_move`; rule `unary_op` mirrors ``-a`` of a NumPy array made
    from graph data.
    """
    frame.stack[-1] = vm.unary_op("UNARY_NEGATIVE", frame.stack[-1])


@opcode("UNARY_POSITIVE", until=(3, 12))
def unary_positive(vm, frame, ins):
    """``(value -- +value)`` 3.11: ``__pos__`` (3.12+:
    ``CALL_INTRINSIC_1 INTRINSIC_UNARY_POSITIVE``).

    RefGraph: a tensor operand gives an FX node (rule `torch_function`);
    rule `unary_op` mirrors ``+a`` of a NumPy array made from graph data.
    """
    frame.stack[-1] = vm.unary_op("UNARY_POSITIVE", frame.stack[-1])


@opcode("UNARY_INVERT")
def unary_invert(vm, frame, ins):
    """``(value -- ~value)`` ``__invert__``.

    RefGraph: a tensor operand gives an FX node (rule `torch_function`);
    rule `unary_op` mirrors ``~m`` of a NumPy array made from graph data.
    """
    frame.stack[-1] = vm.unary_op("UNARY_INVERT", frame.stack[-1])


@opcode("UNARY_NOT")
def unary_not(vm, frame, ins):
    """``(value -- not value)`` Boolean negation via ``__bool__``/``__len__``.

    RefGraph: rule `truth`: the truth of an outside container reads its
    length; the truth of a tensor reads its data, which breaks the graph
    (rule `torch_function`).
    """
    frame.stack[-1] = not vm.truth(frame.stack[-1])


@opcode("COMPARE_OP")
def compare_op(vm, frame, ins):
    """``(lhs, rhs -- result)`` Rich comparison ``<``, ``<=``, ``==``, ``!=``,
    ``>``, ``>=``.  The operator is ``cmp_op[arg]`` on 3.11, ``arg >> 4``
    on 3.12 and ``arg >> 5`` on 3.13, where bit 4 (``ins.to_bool``) also
    converts the result to a bool (``bool(a < b)`` feeding a jump); the
    decoder gives the operator as ``argval`` on every version.

    Reflected method first when the right operand's type is a subclass;
    ``==``/``!=`` fall back to identity.
    RefGraph: an FX node for tensor operands (rule `torch_function`); rule
    `compare`: a comparison that C code makes of containers reads them
    through and through (their items guarded); other values from outside
    were guarded where they were read; `float_compare_op` and `int_compare_op`: a
    comparison of a number the graph computes that feeds a conditional jump
    pushes a recorded 0-d bool tensor, so the jump is a data-dependent branch
    (any other comparison of one breaks); rule `truth` when the bool bit
    converts the result.
    """
    stack = frame.stack
    rhs = stack.pop()
    lhs = stack[-1]
    if type(lhs) in SCALAR_TYPES and type(rhs) in SCALAR_TYPES:
        result = COMPARE_FUNCTIONS[ins.argval](lhs, rhs)
    else:
        result = vm.compare(ins.argval, lhs, rhs)
    if ins.to_bool and result.__class__ is not bool:
        result = vm.truth(result)
    stack[-1] = result


@opcode("IS_OP")
def is_op(vm, frame, ins):
    """``(lhs, rhs -- bool)`` ``lhs is rhs`` (``is not`` when ``arg`` is 1).

    RefGraph: none; the identity test runs natively (operands from outside
    were guarded where they were read: functions, classes and modules by
    identity).
    """
    stack = frame.stack
    rhs = stack.pop()
    stack[-1] = (stack[-1] is rhs) is not bool(ins.arg)


@opcode("CONTAINS_OP")
def contains_op(vm, frame, ins):
    """``(item, container -- bool)`` ``item in container`` (``not in`` when
    ``arg`` is 1), via ``__contains__``, else iteration.

    RefGraph: rule `contains`: on an outside dict or set, a guard that
    ``item`` is (or is not) in it; on another outside container, a read of
    all of it.
    """
    stack = frame.stack
    container = stack.pop()
    stack[-1] = vm.contains(container, stack[-1]) is not bool(ins.arg)


@opcode("BINARY_SUBSCR")
def binary_subscr(vm, frame, ins):
    """``(container, key -- value)`` ``container[key]``, via ``__getitem__``
    (``__class_getitem__`` for a class, ``__missing__`` for dict subclasses).

    RefGraph: rule `getitem`: on an outside container, a read of
    ``Item(path, key)`` (a slice or an unhashable key reads all of it; a
    missing key is guarded absent); on a tensor, an FX indexing node (rule
    `torch_function`); `float_reads_top` (top 2).
    """
    stack = frame.stack
    key = stack.pop()
    stack[-1] = vm.getitem(stack[-1], key)


@opcode("BINARY_SLICE", since=(3, 12))
def binary_slice(vm, frame, ins):
    """``(container, start, stop -- value)`` 3.12+: ``container[start:stop]``
    (3.11: ``BUILD_SLICE`` then ``BINARY_SUBSCR``).

    RefGraph: as ``BINARY_SUBSCR`` with a slice key: rule `getitem` reads all
    of an outside container.
    """
    stack = frame.stack
    stop = stack.pop()
    start = stack.pop()
    stack[-1] = vm.getitem(stack[-1], slice(start, stop))


@opcode("STORE_SLICE", since=(3, 12))
def store_slice(vm, frame, ins):
    """``(value, container, start, stop -- )`` 3.12+:
    ``container[start:stop] = value``.

    RefGraph: as ``STORE_SUBSCR`` with a slice key: rule `setitem` records a
    ``__setitem__`` call on an outside container, which the mock replays.
    """
    stack = frame.stack
    stop = stack.pop()
    start = stack.pop()
    container = stack.pop()
    vm.setitem(container, slice(start, stop), stack.pop())


@opcode("STORE_SUBSCR")
def store_subscr(vm, frame, ins):
    """``(value, container, key -- )`` ``container[key] = value``.

    RefGraph: rule `setitem`: on an outside container, a write of
    ``Item(path, key)`` the mock replays; on a tensor, an in-place FX node
    (rule `torch_function`); `float_reads_top` (the stored value may be a
    tracked float, the container and key may not).
    """
    stack = frame.stack
    key = stack.pop()
    container = stack.pop()
    vm.setitem(container, key, stack.pop())


@opcode("DELETE_SUBSCR")
def delete_subscr(vm, frame, ins):
    """``(container, key -- )`` ``del container[key]``.

    RefGraph: rule `delitem`: on an outside container, a deletion of
    ``Item(path, key)``.
    """
    stack = frame.stack
    key = stack.pop()
    vm.delitem(stack.pop(), key)
