"""A ``while`` loop on tensor data as one ``torch.while_loop`` node.

``while x.norm() > 1: x = x / 2`` runs a number of times that depends on
tensor data, so a plain trace breaks at its test on every iteration.
CPython compiles such a loop with its test twice: at the top, a forward
jump past the loop when the test is false, and again at the bottom.  The
bottom test's layout depends on the version, which :func:`loop_of` reads
from the opcode facts (:mod:`pyinterp.opcodes.info`), not from the version:

* 3.11: a backward conditional jump to the body when the test is true
  (``POP_JUMP_BACKWARD_IF_TRUE``);
* 3.12, 3.13: a forward conditional jump past the loop when the test is
  false (the top test's target), then an unconditional backward jump to
  the body (``POP_JUMP_IF_FALSE``, ``JUMP_BACKWARD``).  3.13 converts
  each test's condition to a bool before its jump (``TO_BOOL``, or
  ``COMPARE_OP``'s bool bit); the decoder folds that conversion into the
  jump (``pyinterp.interp.decode``), so the condition reaches both tests'
  jumps as the tensor it is, as on 3.11 and 3.12.

In both, the bottom test's condition is true when the loop goes on.  When
the top test's condition is a one-element tensor (and :mod:`.speculate`
found no join: a loop has none; ``while not c`` is the same layout with
jumps of the other polarity, and runs on ``logical_not(c)``):

* the body runs once, speculatively, as a branch's arm does (no outside
  writes, no random numbers, no appends, forward jumps only), from its
  first instruction to the bottom test's jump.  The ops it records, the
  bottom test's condition included, are the loop's body;
* the locals the body changes are the loop's carried values: each must be
  a tensor before and after, of the same shape, dtype and device.  A local
  that was unbound before the loop (a temporary of the body) may only be
  one that no instruction after the loop reads; it is unbound again after
  the loop.  Nothing else in the frame may change.  No carried value may
  require grad while grad mode is on (``while_loop`` has no autograd);
* the frame is put back as before the body ran, and the graph gets one
  ``torch.ops.higher_order.while_loop`` node whose carried inputs are the
  top test's condition and the values, whose body graph gives the new
  values and the bottom test's condition, and whose additional inputs are
  the graph values the body reads.  The loop's real result comes from
  running that node eagerly on the real values, and the frame continues
  after the loop with it.

Anything else (``break`` or ``continue``, a return in the body, a Python
counter that changes, a ``for`` loop) leaves the frame as it was: the
caller breaks the graph as before.

Records (:class:`~..state.Capture`): owns none; the body runs as a
speculative arm through :class:`.speculate.Speculation`'s methods; reads
``speculation`` and ``recording``.
"""
import operator

import attrs
import torch
import torch.fx

from . import condmerge, joins, speculate
from ...interp.decode import SUSPENDABLE_FLAGS
from ...opcodes import info
from ...opcodes.signals import NULL

# (:func:`loop_of` checks the directions: the top test jumps forward, past
# the loop, the bottom one back to the body, or past the loop before a
# backward jump to the body.)
# A test that jumps past the loop when its condition is true (``while not
# c``: the ``not`` is the jump's polarity) runs the loop on ``not c``.
_BACK_EDGES = info.UNCONDITIONAL_JUMPS & info.BACKWARD_JUMPS
WHILE_LOOP = torch.ops.higher_order.while_loop


@attrs.frozen
class Loop:
    """Where a ``while`` loop's parts are (indices into its instructions)."""

    body: int
    """The body's first instruction (after the top test)."""
    bottom: int
    """The bottom test's conditional jump (the body runs up to it)."""
    exit: int
    """The first instruction after the loop (the top test's target)."""
    negated: bool
    """The tests leave the loop when their condition is true."""


def loop_of(instructions, ins):
    """The :class:`Loop` whose top test is ``ins``, if ``ins`` is the top
    test of a ``while`` loop laid out as above (either layout); else None."""
    if ins.opname not in info.TRUTH_TESTS or ins.target is None \
            or ins.target <= ins.index + 1:
        return None
    body, exit = ins.index + 1, ins.target
    negated = ins.opname in info.JUMPS_IF_TRUE
    last = instructions[exit - 1]
    if last.opname in info.TRUTH_TESTS and (last.opname in info.JUMPS_IF_TRUE) != negated \
            and last.target == body:  # (a tested back edge: it jumps to go on)
        return Loop(body, last.index, exit, negated)
    if last.opname not in _BACK_EDGES or last.target != body or exit - 2 < body:
        return None
    test = instructions[exit - 2]  # (a test past the loop, then a plain back edge)
    if test.opname in info.TRUTH_TESTS and (test.opname in info.JUMPS_IF_TRUE) == negated \
            and test.target == exit:  # (it jumps to leave, as the top test)
        return Loop(body, test.index, exit, negated)
    return None


def try_loop(vm, frame, ins, cond):
    """Run the data-dependent ``while`` loop whose top test ``ins`` met the
    tensor ``cond`` (popped) as one ``while_loop`` node; return the index
    after the loop, or None (frame untouched)."""
    cap = vm.capture
    instructions = vm.variant(frame.code)
    shape = loop_of(instructions, ins)
    if shape is None or cond.numel() != 1 or cap.speculation.depth or cap.recording.ints \
            or frame.code.co_flags & SUSPENDABLE_FLAGS or ins.exc_target is not None:
        return None
    body, bottom = shape.body, shape.bottom
    rec = cap.recording.recorder
    fast0, stack0 = list(frame.fast), list(frame.stack)
    first, ops0 = len(rec.graph.nodes), rec.op_count  # (undone from here on failure)
    pred0 = _predicate(cond, shape.negated)  # (recorded: the loop's first carried input)
    mark = len(rec.graph.nodes)  # (the body's ops start here)
    rng0 = torch.random.get_rng_state()
    result = None
    cap.speculation.enter()
    try:
        cap.speculation.open_arm()
        try:
            speculate.run_arm(vm, frame, instructions, body, joins.Join((bottom,), bottom))
        finally:
            appended = cap.speculation.close_arm()
        with torch._C.DisableTorchFunction():  # our own check: not recorded
            drew = not torch.equal(rng0, torch.random.get_rng_state())
        if not appended and not drew:
            dead = joins.dead_outside(instructions, set(range(body, shape.exit)))
            result = _build(rec, (fast0, stack0), (list(frame.fast), list(frame.stack)), mark,
                            pred0, dead, shape.negated)
    except (Exception, speculate.Speculating):  # noqa: BLE001 - any failure: undo
        result = None
    finally:
        cap.speculation.leave()
    frame.stack[:] = stack0
    if result is None:
        frame.fast[:] = fast0
        torch.random.set_rng_state(rng0)
        speculate.discard_ops(rec, first, ops0)
        return None
    frame.fast[:] = result
    return shape.exit


def _predicate(cond, negated):
    """``cond`` (``not cond`` when ``negated``) as a 0-d bool tensor, true
    while the loop goes on (recorded when it is a new op)."""
    pick = cond if cond.dtype is torch.bool else cond.bool()
    pick = pick.reshape(()) if pick.dim() else pick
    return pick.logical_not() if negated else pick


def _build(rec, before, after, mark, pred0, dead, negated):
    """Replace the body's recorded ops by one ``while_loop`` node; return the
    frame's locals after the loop, or None when the rules do not hold.
    ``before`` and ``after`` are the frame's ``(locals, stack)`` before and
    after the body ran; ``dead(slot)``: no instruction after the loop reads
    that local."""
    change = _frame_change(before, after, dead)
    if change is None:
        return None
    loop = _extract(rec, mark, before[0], after[0], change, negated)
    if loop is None:
        return None
    return _record(rec, pred0, before[0], change, loop)


@attrs.frozen
class _Change:
    """What the body did to the frame."""

    carried: list
    """The local slots it changed: the loop's carried values."""
    temporaries: list
    """The local slots unbound before it and dead after the loop."""
    bottom_cond: torch.Tensor
    """The bottom test's condition, left on the stack."""


@attrs.frozen
class _Subgraphs:
    """The body's ops, taken out of the graph as ``while_loop``'s operands."""

    inside: set
    """The body's recorded nodes (erased from the graph once replaced)."""
    old: list
    """The carried values' nodes before the loop."""
    operands: list
    """The graph values from outside the body that it reads."""
    cond: torch.fx.GraphModule
    body: torch.fx.GraphModule


def _frame_change(before, after, dead):
    """The body's :class:`_Change` to the frame, or None when the stack or a
    local changed in a way the loop cannot carry."""
    (fast0, stack0), (fast1, stack1) = before, after
    if len(stack1) != len(stack0) + 1 or any(a is not b for a, b in zip(stack1, stack0)):
        return None
    bottom_cond = stack1[-1]
    if not isinstance(bottom_cond, torch.Tensor) or bottom_cond.numel() != 1:
        return None
    carried, temporaries = [], []
    for slot, (was, now) in enumerate(zip(fast0, fast1)):
        if was is now:
            continue
        if was is NULL and dead(slot):
            temporaries.append(slot)
        elif not _same_kind(was, now):
            return None
        else:
            carried.append(slot)
    if not carried:
        return None  # (nothing changes: the loop would never end, or is not ours)
    return _Change(carried, temporaries, bottom_cond)


def _extract(rec, mark, fast0, fast1, change, negated):
    """The body's ops since node ``mark`` as :class:`_Subgraphs`, or None
    when they touch global state, feed ops outside the body, or read a
    value that is not a tensor or needs grad."""
    pred1 = _predicate(change.bottom_cond, negated)  # recorded inside the body
    inside = [n for n in list(rec.graph.nodes)[mark:] if n.op != "placeholder"]
    if any(n.target in condmerge.STATE_TARGETS for n in inside):
        return None
    old = [rec.node_for(fast0[s]) for s in change.carried]
    new = [rec.node_for(pred1)] + [rec.node_for(fast1[s]) for s in change.carried]
    inside_set = set(inside)
    if any(u not in inside_set for n in inside for u in n.users):
        return None
    operands = []
    for n in inside:
        torch.fx.node.map_arg((n.args, n.kwargs), lambda a: _operand(a, inside_set, old, operands))
    for o in new:
        _operand(o, inside_set, old, operands)
    real = [o.meta.get("example_value") for o in operands]
    if any(not isinstance(v, torch.Tensor) or (v.requires_grad and torch.is_grad_enabled())
           for v in real):
        return None
    return _Subgraphs(inside_set, old, operands, _cond(len(old) + 1, len(operands)),
                      _body(inside, new, old, operands, rec.submodules))


def _record(rec, pred0, fast0, change, loop):
    """Run the loop for real, put its ``while_loop`` node in the graph in
    place of the body's ops, and return the frame's locals after it."""
    real_carried = (pred0,) + tuple(fast0[s] for s in change.carried)
    real_operands = tuple(o.meta["example_value"] for o in loop.operands)
    with torch._C.DisableTorchFunction():  # the real loop: not an op of the program
        finals = WHILE_LOOP(loop.cond, loop.body, real_carried, real_operands)
    rec.erase(loop.inside)
    names = ["while_cond_%d" % len(rec.submodules), "while_body_%d" % len(rec.submodules)]
    rec.submodules.update(zip(names, (loop.cond, loop.body)))
    graph = rec.graph
    node = graph.call_function(WHILE_LOOP, (
        graph.get_attr(names[0]), graph.get_attr(names[1]),
        tuple([rec.node_for(pred0)] + loop.old), tuple(loop.operands)))
    rec.op_count += 1
    locals_after = list(fast0)
    for i, slot in enumerate(change.carried):
        value = finals[i + 1]
        if id(value) in rec.node_of:  # (no iteration: an input, which must keep its node)
            with torch._C.DisableTorchFunction():
                value = value.clone()
        item = graph.call_function(operator.getitem, (node, i + 1))
        item.meta["example_value"] = value
        rec.bind(value, item)
        locals_after[slot] = value
    for slot in change.temporaries:
        locals_after[slot] = NULL
    return locals_after


def _same_kind(before, now):
    return isinstance(before, torch.Tensor) and isinstance(now, torch.Tensor) \
        and before.shape == now.shape and before.dtype == now.dtype \
        and before.device == now.device and not (
            torch.is_grad_enabled() and (before.requires_grad or now.requires_grad))


def _operand(node, inside, old, operands):
    if node not in inside and node not in old and node not in operands:
        operands.append(node)
    return node


def _body(nodes, outs, old, operands, submodules):
    """The body graph: ``(pred, *carried, *operands) -> (new pred, *new carried)``."""
    names = ["pred"] + ["carried_%d" % i for i in range(len(old))] \
        + ["operand_%d" % i for i in range(len(operands))]
    return condmerge.subgraph(nodes, outs, [None] + old + operands, submodules, names)


def _cond(n_carried, n_operands):
    """The cond graph: the carried predicate (a copy: no output may alias)."""
    sub = torch.fx.Graph()
    pred = sub.placeholder("pred")
    for i in range(n_carried - 1):
        sub.placeholder("carried_%d" % i)
    for i in range(n_operands):
        sub.placeholder("operand_%d" % i)
    sub.output(sub.call_method("clone", (pred,)))
    return torch.fx.GraphModule(torch.nn.Module(), sub)
