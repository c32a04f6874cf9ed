"""Python ints from tensor data that the graph computes, kept as
data-dependent (unbacked) sizes, as Dynamo's ``capture_scalar_outputs``:
the ints of ``t.tolist()`` (a 1-d integer tensor: :func:`produce`), the
int of ``t.item()``/``int(t)`` where it only reaches size uses
(:func:`produce_one`, :func:`int_of_tensor`, decided by
:func:`.int_flow.flows_only_to_size_uses`), and a tracked int
(:mod:`.tracked_ints`) that reaches a size use (:func:`promote`).

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
* a comparison or truth test is computed by the graph
  (:mod:`.data_decisions`): their symbols are never guarded, not even
  where torch could prove the relation from an op's preconditions, which
  the eager backend's graph does not check;
* the traced function's return value, or an argument of ``print`` or
  logging, may hold one: a graph output gives it back
  (:meth:`.sizes.SizeTracker.leave`); ``n / 8`` and float arithmetic give
  a float :mod:`.scalars` follows;
* any other use that needs the value (``range(n)``, formatting, a native
  call, a store into outside state) is a ``data-dependent-value`` break
  before it runs (:class:`~.sizes.DataDependentValue`).

The list's length is the tensor's size, which the capture guards as
exact (:func:`.sizes.after_call`).

Records (:class:`~..state.Capture`): owns none; makes ``recording.sizes``
when the capture had no symbolic sizes yet, as an op with a
data-dependent output size does; reads ``speculation`` and ``interp``;
reads and clears ``recording.ints.size_request`` (set by
:mod:`.tracked_ints`).
"""
import operator

import torch

from .sizes import SizeTracker
from ...interp import calls
from ...refgraph.fxgraph import Unrepresentable
from ...refgraph.symbolic import SymbolicInt

_TENSORS = (torch.Tensor, torch.nn.Parameter)
_INTEGERS = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


def produce(cap, func, name, args, kwargs):
    """Run ``t.tolist()`` of a 1-d integer tensor and give its ints as
    :class:`SymbolicInt` objects; None when this call is not one, or the
    sizes cannot be followed (the caller then refuses it as a
    data-dependent value)."""
    if name != "tolist" or kwargs or len(args) != 1:
        return None
    tensor = args[0]
    if type(tensor) not in _TENSORS or tensor.dim() != 1 or tensor.dtype not in _INTEGERS:
        return None

    def nodes(graph, base, values):
        listed = graph.call_method("tolist", (base,))
        return [listed] + [graph.call_function(operator.getitem, (listed, i))
                           for i in range(len(values))]

    return _unbacked(cap, func, tensor, nodes)


def produce_one(cap, func, name, args, kwargs):
    """``t.item()`` of a one-element integer tensor, as one
    :class:`SymbolicInt` (``max_len = lengths.max().item()`` then ``x[:,
    :max_len]``): for an int that a tracked int (:mod:`.tracked_ints`)
    cannot follow because it reaches a slice bound or a size argument.
    None when this call is not one, or the sizes cannot be followed.

    Only the ``.item()`` that an interpreted CALL asked for
    (``recording.ints.size_request``, set by :mod:`.tracked_ints`' look at
    the CALL after :func:`.int_flow.flows_only_to_size_uses`), whose result
    goes back to that frame as it is: not one that native code makes (it
    could add or copy the int as a plain one, which would leave the graph
    holding a constant).  ``int(t)`` calls ``Tensor.__int__`` natively,
    and ``int()`` copies an int subclass to a plain int, so
    :func:`int_of_tensor` runs ``int(t)`` as ``t.item()``."""
    if name != "item" or kwargs or len(args) != 1:
        return None
    tensor = args[0]
    table = cap.recording.ints
    if table.size_request is None or tensor is not table.size_request:
        return None
    table.size_request = None
    result = _unbacked(cap, func, tensor, _item_node)
    return result if result is None else result[0]


def _unbacked(cap, func, tensor, make_nodes):
    """Run ``func(tensor)`` and give its int, or list of ints, as
    :class:`SymbolicInt` objects (:func:`_symbolic`); None where the sizes
    cannot be followed."""
    if not _may_follow(cap):
        return None
    try:
        base = cap.recording.recorder.node_for(tensor)
    except Unrepresentable:
        return None
    return _symbolic(cap, base, lambda: func(tensor), make_nodes)


def promote(cap, value, node):
    """A tracked int (:mod:`.tracked_ints`: ``value``, standing for the 0-d
    int64 ``node``) that reaches a use only a size can have (``x.topk(n +
    1)``, a slice bound, an argument of an interpreted function): the same
    int as an unbacked :class:`SymbolicInt`, or None."""
    if type(value) is not int or not _may_follow(cap):
        return None
    made = _symbolic(cap, node, lambda: value, _item_node)
    return made if made is None else made[0]


def _symbolic(cap, base, compute, make_nodes):
    """``compute()``'s int, or list of ints, as :class:`SymbolicInt`
    objects of the nodes ``make_nodes(graph, base, value)`` makes (the
    first is the graph's read of ``base``'s data; the last ``len(ints)``
    are the ints'); None where the sizes cannot be followed."""
    rec = cap.recording.recorder
    sizes = cap.recording.sizes
    if sizes is None:
        sizes = cap.recording.sizes = SizeTracker(None, cap.interp)
    if not sizes.allow_unbacked():
        return None
    value = compute()
    values = value if type(value) is list else [value]
    if any(type(v) is not int for v in values):
        return None
    made = make_nodes(rec.graph, base, value)
    if rec.where is not None:
        rec.where(made[0])
    int_nodes = made[len(made) - len(values):]
    syms = [sizes.fake_of(node, rec) for node in int_nodes]
    if not sizes.active or any(type(s) is not torch.SymInt for s in syms):
        if cap.recording.recorder is rec:  # (not a graph that explain closed)
            rec.erase(set(made))
        return None
    rec.op_count += 1
    sizes.note_values(syms)
    return [SymbolicInt(v, s, node) for v, s, node in zip(values, syms, int_nodes)]


def tensor_slice_bounds(cap, index):
    """``x[:, :lengths.max()]``: an index whose slices have one-element
    integer tensors as bounds (Python calls their ``__index__``), with
    each such bound replaced by its int as an unbacked size (an ``item``
    node), so that the graph's slice has a size a fake tensor can follow;
    None when the index has none, or they cannot be followed."""
    items = index if type(index) is tuple else (index,)
    if not any(type(i) is slice and _has_tensor_bound(i) for i in items) \
            or not _may_follow(cap):
        return None
    rec = cap.recording.recorder
    out = []
    for item in items:
        if type(item) is slice and _has_tensor_bound(item):
            bounds = []
            for bound in (item.start, item.stop, item.step):
                if type(bound) in _TENSORS:
                    try:
                        base = rec.node_for(bound)
                    except Unrepresentable:
                        return None
                    made = _symbolic(cap, base, bound.item, _item_node)
                    if made is None:
                        return None
                    bound = made[0]
                bounds.append(bound)
            item = slice(*bounds)
        out.append(item)
    return tuple(out) if type(index) is tuple else out[0]


def _has_tensor_bound(item):
    return any(type(b) in _TENSORS and b.dtype in _INTEGERS and b.numel() == 1
               for b in (item.start, item.stop, item.step))


def _item_node(graph, base, value):
    """The nodes of one int of tensor data: ``base.item()``."""
    return [graph.call_method("item", (base,))]


def int_of_tensor(vm, args, kwargs):
    """Capture's handler of ``int(x)``: for a one-element integer tensor
    whose int no tracked int follows, ``x.item()`` (the same int), so that
    it can stay an unbacked size (:func:`produce_one`, through the
    recording mode); else ``int``'s own handler (``Tensor.__int__`` then
    breaks where nothing follows it)."""
    cap = vm.capture
    if len(args) == 1 and not kwargs and cap.breaks.active \
            and args[0] is cap.recording.ints.size_request and _may_follow(cap):
        return torch.Tensor.item(args[0])
    plain = calls.interception(int)  # (the interpreter's own handler of int())
    if plain is not None:
        return plain(vm, args, kwargs)
    return int(*args, **kwargs)


def makes_a_size(tensor):
    """May the int of ``tensor`` (its ``.item()`` or ``int()``) become an
    unbacked size: a one-element integer tensor?"""
    return type(tensor) in _TENSORS and tensor.dtype in _INTEGERS and tensor.numel() == 1


def _may_follow(cap):
    """May an int from tensor data be followed as an unbacked size now?"""
    sizes = cap.recording.sizes
    return not cap.speculation.depth and not cap.interp.opaque \
        and (sizes is None or sizes.active)
