"""Python ints of ``t.tolist()`` (a 1-d integer tensor) that the graph
computes: data-dependent sizes, as Dynamo's ``capture_scalar_outputs``.

``[h[i, :n].mean(0) for i, n in enumerate(lengths.tolist())]`` turns
tensor data into Python ints, but the ints only feed tensor ops (slice
bounds, sizes of ``view``/``arange``/``zeros``/``split``...), so the graph
can compute them itself.  :func:`produce` records one ``tolist`` node of
the tensor and, for each element, a ``getitem`` node and a
:class:`~pyinterp.refgraph.symbolic.SymbolicInt`: the element's real value
(the program computes with it, exactly as natively), that node, and the
*unbacked* symbol torch's fake replay gives it (a size no guard can fix:
it changes with the data).  From there the machinery of symbolic sizes
(:mod:`.sizes`) follows them like any size:

* the recorder puts the element's node wherever one reaches a tensor op,
  so ``h[i, :n]`` is recorded with ``n`` as a node; torch's fake slice
  keeps Python's semantics for every value (a negative ``n``, ``n`` past
  the end: where the sign is not known, the slice's size is a new
  unbacked size), so nothing asks for ``torch._check_is_size``, which
  would turn a negative bound, valid in Python, into an error;
* Python ``+ - * // %`` give new ones; they move through the stack,
  locals, lists, tuples, ``enumerate``, ``zip``;
* any Python decision on one (a comparison, a truth test, ``range(n)``,
  formatting, a native call, a store into outside state, the traced
  function's return value) is a ``data-dependent-value`` break before it
  runs (:class:`~.sizes.DataDependentValue`): their symbols are never
  guarded, not even where torch could prove the relation from an op's
  preconditions, which the eager backend's graph does not check.

The list's length is the tensor's size, which the capture guards as
exact (:func:`.sizes.after_call`).

Records (:class:`~..state.Capture`): owns none; makes ``recording.sizes``
when the capture had no symbolic sizes yet, as an op with a
data-dependent output size does; reads ``speculation`` and ``interp``.
"""
import operator

import torch

from .sizes import SizeTracker
from ...refgraph.fxgraph import Unrepresentable
from ...refgraph.symbolic import SymbolicInt

_TENSORS = (torch.Tensor, torch.nn.Parameter)
_INTEGERS = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


def produce(cap, func, name, args, kwargs):
    """Run ``t.tolist()`` of a 1-d integer tensor and give its ints as
    :class:`SymbolicInt` objects; None when this call is not one, or the
    sizes cannot be followed (the caller then refuses it as a
    data-dependent value)."""
    if name != "tolist" or kwargs or len(args) != 1 or cap.speculation.depth \
            or cap.interp.opaque:
        return None
    tensor = args[0]
    if type(tensor) not in _TENSORS or tensor.dim() != 1 or tensor.dtype not in _INTEGERS:
        return None
    rec = cap.recording.recorder
    try:
        base = rec.node_for(tensor)
    except Unrepresentable:
        return None
    sizes = cap.recording.sizes
    if sizes is None:
        sizes = cap.recording.sizes = SizeTracker(None, cap.interp)
    if not sizes.allow_unbacked():
        return None
    values = func(tensor)
    graph = rec.graph
    listed = graph.call_method("tolist", (base,))
    if rec.where is not None:
        rec.where(listed)
    nodes = [graph.call_function(operator.getitem, (listed, i)) for i in range(len(values))]
    syms = [sizes.fake_of(node, rec) for node in nodes]
    if not sizes.active or any(type(s) is not torch.SymInt for s in syms):
        if cap.recording.recorder is rec:  # (not a graph that explain closed)
            rec.erase({listed, *nodes})
        return None
    rec.op_count += 1
    sizes.note_values(syms)
    return [SymbolicInt(v, s, node) for v, s, node in zip(values, syms, nodes)]
