"""``if torch.equal(a, b):``: a data-dependent branch, as ``if (a == b).all():``.

``torch.equal`` turns tensor data into a Python ``bool``.  When that bool
only feeds the conditional jump right after the call (the CALL of the
program's frame is followed by one of the truth-test jumps), the call
gives the jump a 0-d bool tensor instead, recorded as ``(a == b).all()``:
the branch is then data-dependent like any branch on a tensor, and
:mod:`..graphmend.speculate` runs both arms and merges them (or breaks,
as for ``if x.sum() > 0``).  The tensor holds ``torch.equal``'s own answer
(the call runs for real, and raises as eager does).

``torch.equal`` of tensors of different shapes is False whatever their
data: shapes are guarded, so the plain False stands.  Of the same shape,
``torch.equal`` and ``(a == b).all()`` agree (NaN is unequal to itself in
both; dtypes are promoted by both; empty tensors are equal in both).

Records (:class:`~..state.Capture`): owns none; reads ``interp``,
``speculation`` (through :func:`.data_decisions.next_is_branch`) and records on
``recording.recorder``.
"""
import torch

from ...opcodes import info
from ...refgraph.fxgraph import Unrepresentable
from .data_decisions import bool_tensor, next_is_branch
from .scalars import BRANCHES

_EQUALS = frozenset({torch.equal, torch.Tensor.equal})


def produce(cap, func, args, kwargs):
    """The value of ``torch.equal(a, b)`` for the program: a recorded 0-d
    bool tensor where it only feeds a branch, else None (the caller then
    refuses it as a data-dependent value)."""
    if func not in _EQUALS or kwargs or len(args) != 2 or cap.interp.opaque \
            or cap.speculation.depth \
            or not all(isinstance(a, torch.Tensor) for a in args):
        return None
    vm = cap.interp.vm
    frame = vm.top if vm is not None else None
    if frame is None:
        return None
    ins = frame.instructions[frame.lasti]
    if ins.opname not in info.CALLS:
        return None
    following = vm.variant(frame.code)
    if ins.index + 1 < len(following) and following[ins.index + 1].opname == "TO_BOOL" \
            and not following[ins.index + 1].to_bool:
        ins = following[ins.index + 1]  # (3.13: a TO_BOOL folded into the jump after it)
    if not next_is_branch(vm, frame, ins, BRANCHES):
        return None
    a, b = args
    rec = cap.recording.recorder
    try:
        rec.node_for(a), rec.node_for(b)
    except Unrepresentable:
        return None
    truth = func(a, b)
    if a.shape != b.shape:
        return truth
    with torch._C.DisableTorchFunction():  # (the nodes' values, not ops of the program)
        same = torch.eq(a, b)
    cond = bool_tensor(truth, same.device)
    rec.record(torch.eq, (a, b), {}, same)
    rec.record("all", (same,), {}, cond, method=True)
    return cond
