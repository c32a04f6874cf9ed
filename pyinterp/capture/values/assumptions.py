"""Bools from tensor data the graph *assumes*, checked on every call.

Two kinds of bool from tensor data were breaks:

* ``is_global = mask.flatten().any().item()`` in Hugging Face's
  Longformer, handed to every layer, which branches on it to code with
  data-dependent shapes: as a tracked int (:mod:`.tracked_ints`) it cannot
  leave its frame, so the ``.item()`` broke (:func:`assume`);
* the condition of an ``if`` or ``while`` on tensor data that the
  GraphMend rewrite (``graphmend/speculate.py``) or ``while_loop``
  (``graphmend/whileloop.py``) cannot merge: an arm that prints, writes
  outside state, returns from a loop, or picks a submodule while gradients
  flow (no single graph can be right there: ``docs/trace.md``, known
  limits) (:func:`assume_truth`).

Here the capture takes the value the run gave as a constant from then on
(the ``if`` is plain Python again) and records the assumption: a node
``t != 0`` of the graph, made where the run tested ``t``, and one extra
graph output per assumption.  The mock compares their truth with the
captured values right after the graph, before it replays any side effect
(:func:`checker`).  Where one differs, the mock raises
:class:`~pyinterp.errors.AssumptionFailed`; the traced callable then puts
back the random number generators and torch's global state, and goes on to
its next cache entry, or captures anew (that capture assumes the other
value): one graph per path, each whole, and a call wastes at most one
graph run before it finds its entry.  Gradients follow the path each call
takes, as in eager.

That rerun is sound only if the graph left no trace: it may write no
graph input.  An in-place write to a graph input after an assumption
breaks the graph before it (``GraphRecorder.write_hazard``); an assumption after
such a write is not made (the ``.item()`` or the jump breaks as before); a
graph that writes an input through a path not checked first (an autograd
``Function`` marking an input dirty) makes the capture's entry run
natively (:func:`check_finished`).  A traced callable whose captures keep
meeting other values stops assuming (``traced.MAX_ASSUMPTION_RECAPTURES``:
then ``recording.assumed`` is None).  No assumption is made inside a
speculative arm (a branch being merged) or native code.

Records (:class:`~..state.Capture`): graph nodes and the recorder's
``assumptions`` list, ``recording.assumed``; reads ``recording``,
``speculation``, ``interp``.
"""
import operator
import random

import torch

from ...errors import AssumptionFailed
from ...refgraph.fxgraph import Unrepresentable
from ...refgraph.sources import Recomputed

_TRACKABLE = (torch.Tensor, torch.nn.Parameter)


def assume(cap, func, args):
    """``t.item()`` of a one-element bool tensor of the graph: run it, and
    make the graph check that ``t`` still gives that value; the value, or
    None where no assumption can be made (the caller then breaks)."""
    tensor = args[0] if len(args) == 1 else None
    if not _may_assume(cap, tensor):
        return None
    with torch._C.DisableTorchFunction():
        if tensor.dtype is not torch.bool or tensor.numel() != 1:
            return None
    try:
        node = cap.recording.recorder.node_for(tensor)
    except Unrepresentable:
        return None
    with torch._C.DisableTorchFunction():
        value = func(*args)
    _record(cap, node, value)
    return value


def allowed(cap):
    """May the capture assume a value from tensor data now?  Not inside an
    arm being merged, in native code, after the graph wrote one of its
    inputs, or once the traced callable stopped assuming."""
    return not cap.speculation.depth and not cap.interp.opaque and cap.breaks.active \
        and not cap.recording.recorder.mutated_input and cap.recording.assumed is not None


def _may_assume(cap, tensor):
    return type(tensor) in _TRACKABLE and allowed(cap)


def _record(cap, node, value):
    """Add the check that ``node`` (one element) still has the truth
    ``value``: a graph output ``node != 0`` (a new tensor made here, so a
    later in-place write to the tensor cannot change what is checked) that
    the mock's :func:`checker` compares with ``value``."""
    rec = cap.recording.recorder
    held = rec.graph.call_function(operator.ne, (node, 0))
    if rec.where is not None:
        rec.where(held)
    rec.op_count += 1
    site = cap.site()
    rec.assumptions.append((held, value, site))
    cap.recording.assumed.append((site, value))


def assume_truth(cap, cond):
    """The truth of ``cond``, a one-element tensor a conditional jump tests
    (a data-dependent ``if`` the GraphMend rewrite could not merge), made
    an assumption the graph checks; None where none can be made (the jump
    then breaks)."""
    rec = cap.recording.recorder
    if not _may_assume(cap, cond):
        return None
    with torch._C.DisableTorchFunction():
        if cond.numel() != 1 or cond.dtype.is_complex:
            return None
        value = bool(cond)
    try:
        node = rec.node_for(cond)
    except Unrepresentable:
        return None
    _record(cap, node, value)
    return value


def output_nodes(rec):
    """The nodes of ``rec``'s assumptions, the graph's last outputs."""
    return tuple(held for held, _, _ in rec.assumptions)


def check_finished(rec):
    """Why the graph's assumptions cannot be checked by rerunning (it wrote
    an input after all), or None."""
    if rec.assumptions and rec.mutated_input:
        return "the graph writes one of its inputs and assumes a value from tensor data"
    return None


def draws_python_random(rec):
    """True if the mock of ``rec``'s graph draws from Python's ``random``
    again before the graph (a recomputed ``random.random()``, ``randint``):
    a failed check must put that state back too."""
    return any(type(source) is Recomputed
               and isinstance(getattr(source.fn, "__self__", None), random.Random)
               for source, _, _ in rec.inputs)


def checker(rec, index):
    """The function the mock calls with the graph's outputs, or None when
    ``rec``'s graph assumes nothing: raises :class:`AssumptionFailed` where
    the truth of an assumption's output (from ``index`` on) differs from
    the value the capture took."""
    expected = tuple((index + i, value) for i, (_, value, _) in enumerate(rec.assumptions))
    if not expected:
        return None

    def check_assumptions(outs):
        for i, value in expected:
            if bool(outs[i]) is not value:
                raise AssumptionFailed("a value the graph assumed from tensor data differs")
    return check_assumptions
