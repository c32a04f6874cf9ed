"""Python decisions on values the graph computes from tensor data: a
merged branch, or an assumption the graph checks; never a guard.

One rule for every kind of Python scalar that stands for a graph value
(:mod:`.scalars`: floats; :mod:`.tracked_ints`: ints and bools in their
frame; :mod:`.sizes`: ints from tensor data and data-dependent sizes,
which cross frames): a comparison or truth test of one is recorded as a
0-d bool tensor (:func:`push_decision`), which the conditional jump after
it sees (a branch on tensor data: merged, or assumed there), or, where no
jump follows, whose truth is assumed at once.  Sizes are the one kind
whose decisions are guards (:meth:`.sizes.SizeTracker.decide`).

Two kinds of :class:`~pyinterp.refgraph.symbolic.SymbolicInt` stand for
ints the data decides, not the shapes: the ints of ``t.item()``,
``int(t)`` and ``t.tolist()`` (*value symbols*, :mod:`.listed_ints`, also
a tracked int that went to another frame) and the sizes of ``nonzero()``,
boolean masks or ``unique()`` (*unbacked* sizes).  A comparison or a truth
test of one cannot be a guard of the entry as a size's is: the next call's
data may decide otherwise with the same shapes.  So here, wherever the
decision is made (in any frame, as the ints cross frames):

* a comparison or truth test that feeds a conditional jump (``if n > 0:``,
  ``if idx.shape[0] == 0:``, ``while k:``) pushes a 0-d bool tensor: the
  node ``scalar_tensor(n) > 0`` computes it in the graph, and the jump
  sees a condition on tensor data, which the GraphMend rewrite
  (``graphmend/speculate.py``) merges into one graph or, where it cannot,
  assumes (:mod:`.assumptions`);
* any other comparison or truth test (``ok = n > 2``, ``not n``) is
  assumed at once: the run's truth is a constant from then on, and the
  graph checks it on every call.

Where neither can be made (no assumptions inside an arm being merged, in
native code, after the graph wrote an input, or after a traced callable's
captures kept meeting other values), the caller breaks as before
(``data-dependent-value``/``data-dependent-shape``).  Any other use that
needs the value (``range(n)``, formatting, a store outside) still breaks.

Records (:class:`~..state.Capture`): graph nodes (through the recorder);
assumptions through :mod:`.assumptions`.
"""
import operator

import torch

from . import assumptions
from ...opcodes import info
from ...refgraph.fxgraph import Unrepresentable
from ...refgraph.symbolic import SymbolicInt


def possible(cap):
    """May a decision on tensor data that feeds no jump be assumed now?"""
    return assumptions.allowed(cap)


def next_is_branch(vm, frame, ins, branches=info.TRUTH_TESTS):
    """True if the instruction after ``ins`` (in the code the frame runs)
    is one of the conditional jumps ``branches``."""
    following = vm.variant(frame.code)
    return ins.index + 1 < len(following) and following[ins.index + 1].opname in branches


def bool_tensor(truth, device):
    """A 0-d bool tensor holding ``truth``: the value of a recorded node,
    made without recording an op."""
    with torch._C.DisableTorchFunction():
        return torch.tensor(truth, device=device)


def push_decision(cap, stack, jumps, op, operands, truth, device, pops=2):
    """Replace the ``pops`` values on top of ``stack`` by the decision
    ``op(*operands)`` (operands: nodes, recorded tensors or constants),
    whose value on this run is ``truth``: a 0-d bool tensor on ``device``
    recorded as that node where a jump sees it (``jumps``), else the
    assumed bool.  False (the stack unchanged) where it cannot be assumed."""
    if not jumps and not possible(cap):
        return False
    cond = bool_tensor(truth, device)
    cap.recording.recorder.record(op, operands, {}, cond)
    if not jumps:
        cond = assumptions.assume_truth(cap, cond)
        if cond is None:
            return False  # (the node stays, unused)
    del stack[len(stack) - pops:]
    stack.append(cond)
    return True


# -- ints from tensor data and data-dependent sizes (SymbolicInts) ----------------------
def compare(vm, frame, ins, op, lhs, rhs):
    """``op(lhs, rhs)`` of ints, one at least a data-dependent
    SymbolicInt, about to be run by ``ins``: replace the two operands on
    top of ``frame``'s stack by the decision.  False where it cannot stay
    in the graph (nothing changed: the caller breaks)."""
    return _decide(vm.capture, frame, next_is_branch(vm, frame, ins), op, lhs, rhs, 2)


def truth(vm, frame, ins):
    """The truth test ``ins`` of the data-dependent SymbolicInt on top of
    ``frame``'s stack: a bool tensor where ``ins`` is the jump (or 3.13's
    ``TO_BOOL`` folded into it), else the assumed bool.  False where it
    cannot stay in the graph."""
    jumps = ins.opname in info.TRUTH_TESTS or (
        ins.opname in info.CONVERTS_TO_BOOL and not ins.to_bool)
    return _decide(vm.capture, frame, jumps, operator.ne, frame.stack[-1], 0, 1)


def _decide(cap, frame, jumps, op, lhs, rhs, pops):
    if cap.interp.opaque:
        return False
    rec = cap.recording.recorder
    try:
        operands = tuple(int_tensor(rec, v) for v in (lhs, rhs))
    except Unrepresentable:
        return False
    return push_decision(cap, frame.stack, jumps, op, operands, op(int(lhs), int(rhs)), "cpu",
                         pops)


def int_tensor(rec, value):
    """A SymbolicInt as a 0-d int64 tensor of the graph
    (``scalar_tensor(n)``); a plain int as it is."""
    if type(value) is not SymbolicInt:
        return int(value)
    with torch._C.DisableTorchFunction():
        held = torch.tensor(int(value), dtype=torch.int64)
    rec.record(torch.scalar_tensor, (value,), {"dtype": torch.int64}, held)
    return held
