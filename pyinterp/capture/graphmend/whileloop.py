"""A ``while`` loop on tensor data as one ``torch.while_loop`` node.

``while x.norm() > 1: x = x / 2`` runs a number of times that depends on
tensor data, so a plain trace breaks at its test on every iteration.
:mod:`.looptest` finds the loop's parts (the two copies of its test, the
body, the exit) and evaluates its test, short-circuits included
(``while x.norm() > 1 and n < 20:``), as one 0-d bool tensor.  When a jump
of either copy of the test meets a one-element tensor (and
:mod:`.speculate` found no join: a loop has none):

* the rest of that copy, on the real values, is the loop's first carried
  predicate (recorded before the loop);
* the locals that hold a Python int (not a bool) and that the body stores
  to are its *counters*: each is put in its slot as a 0-d int64 tensor
  (``torch.tensor(n)``, recorded), and the body's ``n += 1`` makes a new
  tensor (``n + 1``), as Python makes a new int, instead of writing the
  tensor in place;
* the body runs once, speculatively, as a branch's arm does (no outside
  writes, no random numbers, no appends, forward jumps only), up to the
  bottom copy of the test, which gives the body's new predicate.  The ops
  they record are the loop's body;
* the locals the body changes are the loop's carried values: each must be
  a tensor before and after, of the same shape, dtype and device.  A local
  that was unbound before the loop (a temporary of the body) may only be
  one that no instruction after the loop reads; it is unbound again after
  the loop.  A counter no instruction after the loop reads is left
  holding its final tensor; one that is read holds the final int as a
  Python int the graph computes (:func:`_track`: tensor ops take its node,
  anything else breaks before it runs).  Nothing else in the
  frame may change, and no carried value's ``requires_grad``.  Carried
  values that require grad leave the loop through
  :func:`_no_trip_gradient` (``while_loop``'s backward is wrong when the
  loop runs no iteration); a parameter only the body reads is refused
  (:func:`_body_only_leaf`);
* the frame is put back as before the body ran, and the graph gets one
  ``torch.ops.higher_order.while_loop`` node whose carried inputs are the
  first predicate and the values, whose body graph gives the new values and
  the new predicate, and whose additional inputs are the graph values the
  body reads.  The loop's real result comes from running that node eagerly
  on the real values, and the frame continues after the loop with it.

When the attempt with counters fails, the loop is tried once more without
(nothing but tensors may change).  Anything else (``break`` or
``continue``, a return in the body, a ``for`` loop) leaves the frame as it
was: the caller breaks the graph as before.  A test that is false whatever
the data from the jump on (``while x.norm() > 1 and n < limit:`` with
``n >= limit``) skips the loop without a node.

Records (:class:`~..state.Capture`): owns none; the body runs as a
speculative arm through :class:`.speculate.Speculation`'s methods; reads
``speculation`` and ``recording``.
"""
import operator

import attrs
import torch
import torch.fx

from . import condmerge, joins, looptest, speculate
from ..values import tracked_ints
from ...interp.decode import SUSPENDABLE_FLAGS
from ...opcodes import info
from ...opcodes.signals import NULL

WHILE_LOOP = torch.ops.higher_order.while_loop
_IN_PLACE = {"+=": operator.add, "-=": operator.sub, "*=": operator.mul,
             "//=": operator.floordiv, "%=": operator.mod}  # (torch floors as Python does)


def try_loop(vm, frame, ins, cond):
    """Run the data-dependent ``while`` loop whose test (either copy) has
    the jump ``ins``, which met the tensor ``cond`` (popped), as one
    ``while_loop`` node; return the index after the loop, or None (frame
    untouched).  The loop's Python int counters are carried as tensors when
    they can be (see :func:`_counters`); else the loop is tried as it is.
    Not while the capture holds Python ints the graph computes (a counter
    of an earlier loop read after it included)."""
    cap = vm.capture
    if cond.numel() != 1 or cap.speculation.depth or cap.recording.ints \
            or frame.code.co_flags & SUSPENDABLE_FLAGS or ins.exc_target is not None:
        return None
    instructions = vm.variant(frame.code)
    loop = looptest.loop_of(instructions, ins)
    if loop is None:
        return None
    counters = _counters(instructions, loop, frame.fast)
    after = _attempt(vm, frame, instructions, ins, cond, loop, counters) if counters else None
    if after is None:
        after = _attempt(vm, frame, instructions, ins, cond, loop, ())
    return after


def _counters(instructions, loop, fast):
    """The local slots that hold a Python int (not a bool) before the loop
    and that the body stores to: candidates to carry as 0-d int64 tensors."""
    stored = set()
    for x in instructions[loop.body:loop.bottom]:
        if x.opname.startswith("STORE_FAST"):
            stored.update(x.argval if isinstance(x.argval, tuple) else (x.argval,))
    return sorted(s for s in stored if type(fast[s]) is int)


def _attempt(vm, frame, instructions, ins, cond, loop, counters):
    """One try of :func:`try_loop`, with the slots ``counters`` carried as
    tensors; the index after the loop, or None (frame untouched)."""
    cap = vm.capture
    rec = cap.recording.recorder
    before = (list(frame.fast), list(frame.stack), torch.random.get_rng_state())
    ops = rec.mark()  # (undone from here on failure)
    result = None
    cap.speculation.enter()
    try:
        cap.speculation.open_arm()
        try:
            # The test from this jump on, on the real values: the loop's
            # first carried input (recorded before the loop).
            stop = loop.body if ins.index < loop.body else loop.exit  # (the copy's end)
            pred0 = looptest.jump_value(vm, frame, instructions, loop, ins, cond, stop)
            frame.stack[:] = before[1]
            if pred0 is not False:  # (False: the loop ends whatever the data)
                pred0 = torch.tensor(True, device=cond.device) if pred0 is True else pred0
                promoted = _promote(frame, counters, cond.device)
                fast_in = list(frame.fast)
                mark = len(rec.graph.nodes)  # (the body's ops start here)
                speculate.run_arm(vm, frame, instructions, loop.body,
                                  joins.Join((loop.bottom,), loop.bottom),
                                  _counting_step(promoted))
                pred1 = looptest.test_value(vm, frame, instructions, loop, loop.bottom,
                                            loop.exit)
        finally:
            appended = cap.speculation.close_arm()
        with torch._C.DisableTorchFunction():  # our own check: not recorded
            drew = not torch.equal(before[2], torch.random.get_rng_state())
        if appended or drew:
            result = None
        elif pred0 is False:
            result = False
        elif isinstance(pred1, torch.Tensor):
            dead = joins.dead_outside(instructions, set(range(loop.head, loop.exit)))
            result = _build(rec, (fast_in, before[1]), (list(frame.fast), list(frame.stack)),
                            mark, (pred0, pred1), dead, (before[0], counters))
    except (Exception, speculate.Speculating):  # noqa: BLE001 - any failure: undo
        result = None
    finally:
        cap.speculation.leave()
    if result is None or result is False:
        _undo(frame, before, rec, ops)
        return loop.exit if result is False else None
    frame.stack[:] = before[1]
    frame.fast[:], counted = result
    _track(cap, frame, counted, cond.device)
    return loop.exit


def _track(cap, frame, counted, device):
    """The counters read after the loop hold Python ints the graph computes
    (:mod:`..values.tracked_ints`, which the frame runs through: it has a
    while loop): a tensor op takes the node, and anything else that reads
    one breaks (data-dependent) before it runs."""
    if not counted:
        return
    table = cap.recording.ints
    shadow = table.shadow(frame)
    if shadow is None:
        shadow = table.shadows[id(frame)] = tracked_ints.Shadow(frame)
    rec = cap.recording.recorder
    for slot, (value, node) in counted.items():
        shadow.fast[slot] = tracked_ints.TrackedInt(value, rec, lambda node=node: node, device)


def _undo(frame, before, rec, ops):
    """Put the frame and the RNG back as they were (``before``: locals,
    stack, RNG state), and erase the ops recorded since ``ops`` (the first
    node, the op count)."""
    frame.fast[:], frame.stack[:] = before[0], before[1]
    torch.random.set_rng_state(before[2])
    rec.roll_back(ops)


def _promote(frame, counters, device):
    """Put each counter's int in its slot as a 0-d int64 tensor on
    ``device``, the test's (recorded: the loop's carried input); return the
    set of their ids (see :func:`_counting_step`)."""
    promoted = set()
    for slot in counters:
        value = torch.tensor(frame.fast[slot], dtype=torch.int64, device=device)
        frame.fast[slot] = value
        promoted.add(id(value))
    return promoted


def _counting_step(promoted):
    """The body's instruction runner: ``n += 1`` on a counter tensor makes a
    new tensor (``n + 1``), as it makes a new int in Python, instead of
    writing the tensor in place (a speculative arm may not).  The result of
    arithmetic on a counter is a counter in turn (``n = n + 1`` then
    ``n += 1``)."""
    if not promoted:
        return None

    def step(vm, frame, ins):
        if ins.opname != "BINARY_OP" or not (id(frame.stack[-2]) in promoted
                                             or id(frame.stack[-1]) in promoted):
            return ins.fn(vm, frame, ins)
        op = _IN_PLACE.get(info.NB_SYMBOL.get(ins.arg))
        if op is not None and id(frame.stack[-2]) in promoted:
            rhs = frame.stack.pop()
            frame.stack.append(op(frame.stack.pop(), rhs))
            nxt = None
        else:
            nxt = ins.fn(vm, frame, ins)
        promoted.add(id(frame.stack[-1]))  # (a counter's new value: a counter too)
        return nxt
    return step


def _build(rec, before, after, mark, preds, dead, original):
    """Replace the body's recorded ops by one ``while_loop`` node; return the
    frame's locals after the loop, or None when the rules do not hold.
    ``before`` and ``after`` are the frame's ``(locals, stack)`` before and
    after the body ran; ``preds`` the test's values before and after it;
    ``dead(slot)``: no instruction after the loop reads that local;
    ``original``: the locals before the counters were made tensors, and the
    counters' slots."""
    change = _frame_change(before, after, dead, preds[1])
    if change is None:
        return None
    loop = _extract(rec, mark, before[0], after[0], change)
    if loop is None:
        return None
    live = [s for s in original[1] if s in change.carried and not dead(s)]
    return _record(rec, preds[0], before[0], change, loop, original[0], live)


@attrs.frozen
class _Change:
    """What the body did to the frame."""

    carried: list
    """The local slots it changed: the loop's carried values."""
    temporaries: list
    """The local slots unbound before it and dead after the loop."""
    bottom_cond: torch.Tensor
    """The bottom test's value (a 0-d bool tensor)."""


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


def _frame_change(before, after, dead, bottom_cond):
    """The body's :class:`_Change` to the frame, or None when the stack or a
    local changed in a way the loop cannot carry."""
    (fast0, stack0), (fast1, stack1) = before, after
    if len(stack1) != len(stack0) or any(a is not b for a, b in zip(stack1, stack0)):
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


def _extract(rec, mark, fast0, fast1, change):
    """The body's ops since node ``mark`` as :class:`_Subgraphs`, or None
    when they touch global state, feed ops outside the body, or read a
    value that is not a tensor or needs grad."""
    inside = [n for n in list(rec.graph.nodes)[mark:] if n.op != "placeholder"]
    if any(n.target in condmerge.STATE_TARGETS for n in inside):
        return None
    old = [rec.node_for(fast0[s]) for s in change.carried]
    new = [rec.node_for(change.bottom_cond)] + [rec.node_for(fast1[s]) for s in change.carried]
    inside_set = set(inside)
    if any(u not in inside_set for n in inside for u in n.users):
        return None
    operands = []
    for n in inside:
        torch.fx.node.map_arg((n.args, n.kwargs), lambda a: _operand(a, inside_set, old, operands))
    for o in new:
        _operand(o, inside_set, old, operands)
    real = [o.meta.get("example_value") for o in operands]
    if any(not isinstance(v, torch.Tensor) for v in real):
        return None
    if _body_only_leaf(operands, real, inside_set):
        return None
    return _Subgraphs(inside_set, old, operands, _cond(len(old) + 1, len(operands)),
                      _body(inside, new, old, operands, rec.submodules))


def _record(rec, pred0, fast0, change, loop, unpromoted, live):
    """Run the loop for real, put its ``while_loop`` node in the graph in
    place of the body's ops, and return the frame's locals after it (those
    it does not change as in ``unpromoted``) and the counters read after
    it: ``{slot: (final int, its node)}`` (their locals hold the int)."""
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
    locals_after, nodes = list(unpromoted), {}
    for i, slot in enumerate(change.carried):
        value = finals[i + 1]
        if id(value) in rec.node_of:  # (no iteration: an input, which must keep its node)
            with torch._C.DisableTorchFunction():
                value = value.clone()
        item = graph.call_function(operator.getitem, (node, i + 1))
        item.meta["example_value"] = value
        if value.requires_grad and torch.is_grad_enabled():
            value, item = _no_trip_gradient(rec, pred0, fast0[slot], value, item)
        rec.bind(value, item)
        locals_after[slot] = value
        nodes[slot] = item
    counted = {}
    for slot in live:
        with torch._C.DisableTorchFunction():  # our own reading: the int Python sees
            locals_after[slot] = int(locals_after[slot])
        counted[slot] = (locals_after[slot], nodes[slot])
    for slot in change.temporaries:
        locals_after[slot] = NULL
    return locals_after, counted


def _no_trip_gradient(rec, pred0, initial, value, item):
    """``where(pred0, value, initial)``, for real and in the graph: the
    carried value after the loop as its gradient must flow.  The value is
    the same; torch 2.13's ``while_loop`` backward gives the gradient of one
    iteration when the loop ran none (``pred0`` false): ``where`` sends the
    gradient to ``initial`` then, and zeros into the loop."""
    with torch._C.DisableTorchFunction():  # the real value: recorded below
        picked = torch.where(pred0, value, initial)
    node = rec.graph.call_function(torch.where, (rec.node_for(pred0), item,
                                                 rec.node_for(initial)))
    node.meta["example_value"] = picked
    return picked, node


def _same_kind(before, now):
    return isinstance(before, torch.Tensor) and isinstance(now, torch.Tensor) \
        and before.shape == now.shape and before.dtype == now.dtype \
        and before.device == now.device and before.requires_grad == now.requires_grad


def _body_only_leaf(operands, real, inside):
    """True if a leaf that requires grad (a parameter) is read by the body
    only: on a call whose loop runs no trip, eager leaves its ``.grad``
    None (an optimizer then skips it), where ``while_loop``'s backward
    would give zeros."""
    return torch.is_grad_enabled() and any(
        v.requires_grad and v.is_leaf and all(u in inside for u in o.users)
        for o, v in zip(operands, real))


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
