"""Assignments to a tensor's attributes: ``t.data = v`` and the others.

A tensor attribute store reaches the capture as the ``__set__`` of one of
``TensorBase``'s C descriptors (``Tensor.data.__set__``), through the
``TorchFunctionMode``.  Nothing of it is an op the graph would see by
itself: left alone, the graph would go on computing with the tensor's old
value.  The rule (:func:`assign`):

* ``t.data = v`` with ``t`` not requiring grad, ``v`` a tensor the graph
  knows: ``t`` stands for ``v.detach()`` from now on (that is the value
  ``t`` has, sharing ``v``'s storage as it does).  If ``t`` comes from
  outside (an argument, a buffer), the mock also replays the store with
  the graph's ``v.detach()`` after the graph ran (a ``setattr`` side
  effect), so the caller's tensor object holds the new value as in eager;
* ``t.data = v`` with ``t`` requiring grad (a parameter's
  ``p.data = p.data.clamp(-c, c)``, WGAN weight clipping): later uses of
  ``t`` must both see ``v``'s values and send their gradient to ``t``
  itself.  ``t`` stands for a node ``rebound(t, v)`` from now on (a
  Function: ``v``'s values, the gradient passed to ``t`` unchanged:
  :class:`Rebound`), and the mock replays the store as above.  Refused
  (a break): a ``v`` of another shape, dtype or device; an earlier op of
  the graph that read ``t`` other than through ``.data``/``detach()``
  (it may have saved ``t`` for backward, and eager's backward then reads
  the new data through the same tensor, the graph's the old); and, after
  the store, an in-place write to the memory ``t`` and ``v`` share
  (``GraphRecorder.write_hazard``: eager's ``t`` sees it, the node is a copy);
* any other store to one of torch's tensor attributes (``requires_grad``,
  ``grad``, ``real``...) is a ``tensor-attribute-write`` break, on the
  run's own tensors too (some of those setters, ``.real``'s, never reach
  the ``TorchFunctionMode``: ``CaptureInterpreter.store_attr`` breaks
  before them by name, :func:`is_tensor_attribute`).

Records (:class:`~.state.Capture`): owns none; writes through ``recording``
(its recorder's bindings, its RefGraph's side effects).
"""
import torch

from ..refgraph.fxgraph import Unrepresentable, storage_of

Tensor = torch.Tensor


def setter_name(func):
    """For a tensor attribute's setter (``Tensor.data.__set__``), the
    attribute's name; else None."""
    owner = getattr(func, "__self__", None)
    if getattr(func, "__name__", None) == "__set__" and owner is not None \
            and getattr(owner, "__objclass__", None) is torch._C.TensorBase:
        return getattr(owner, "__name__", None)
    return None


def is_tensor_attribute(name):
    """True if ``name`` is one of ``TensorBase``'s C attributes (a store to
    it is a setter of torch's, not an entry of the tensor's ``__dict__``)."""
    return type(vars(torch._C.TensorBase).get(name)) is _GETSET


_GETSET = type(vars(torch._C.TensorBase)["data"])


def assign(cap, func, name, args):
    """Run the store ``func(tensor, value)`` of the attribute ``name``
    and record what it does (see the module docstring)."""
    tensor, value = args[0], args[1]
    rec = cap.recording.recorder
    why = _refusal(name, tensor, value, rec)
    if why is None and cap.speculation.depth:
        why = "tensor-attribute-write", "assigning .data of a tensor in a speculative arm"
    rebinds = why is None and tensor.requires_grad
    refgraph = cap.recording.refgraph
    outside = why is None and refgraph.is_outside(tensor)
    try:
        operand = None if why is not None else rec.node_for(value)
        if outside or rebinds:
            before = rec.node_for(tensor)  # (its placeholder, for the uses before the store)
    except Unrepresentable as e:
        why = e.kind, e.message
    if why is not None:
        cap.break_graph(*why)
        return func(*args)
    result = func(*args)
    with torch._C.DisableTorchFunction():  # (the node's value, not an op of the program)
        detached = value.detach()
    node = rec.graph.call_method("detach", (operand,))
    rec.op_count += 1
    if rec.where is not None:
        rec.where(node)
    rec.bind_result(node, detached)
    if rebinds:  # later uses: v's values, the gradient to the tensor itself
        rec.record(rebound, (before, node), {}, tensor)
        with torch._C.DisableTorchFunction():
            rec.rebound_storages.add(storage_of(tensor))
    else:
        rec.bind(tensor, node)
    if outside:
        # The mock stores the graph's value into the caller's tensor (the
        # operand is its own object: ``tensor`` itself names its source).
        refgraph.write_attr(tensor, "data", detached, cap.site())
    return result


def _refusal(name, tensor, value, rec):
    """``(kind, message)`` if the store cannot be captured, else None."""
    if name != "data":
        return "tensor-attribute-write", "assigning .%s of a tensor" % name
    if not isinstance(value, Tensor):
        return "tensor-attribute-write", "assigning .data of a tensor from a %s" \
            % type(value).__name__
    if not tensor.requires_grad:
        return None
    with torch._C.DisableTorchFunction():
        same = (value.shape, value.dtype, value.device) == (tensor.shape, tensor.dtype,
                                                           tensor.device)
    if not same:
        return "tensor-attribute-write", ("assigning .data of another shape, dtype or device "
                                          "to a tensor that requires grad")
    node = rec.node_of.get(id(tensor))
    if node is not None and any(not _reads_data_only(user) for user in node.users):
        return "tensor-attribute-write", ("assigning .data of a tensor that requires grad after "
                                          "an op read it (eager's backward of that op would "
                                          "read the new data)")
    return None


def _reads_data_only(node):
    """True for a node that reads a tensor without autograd: ``t.data``,
    ``t.detach()``."""
    if node.op == "call_function" and node.target is getattr:
        return node.args[1] == "data"
    return node.op == "call_method" and node.target == "detach"


class Rebound(torch.autograd.Function):
    """A tensor that requires grad after ``t.data = v``: ``v``'s values (a
    copy), and the gradient passed to ``t`` unchanged."""

    @staticmethod
    def forward(ctx, tensor, values):
        return values.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def rebound(tensor, values):
    """The node's target: :class:`Rebound` applied (FX names a function of
    this module in the graph's code)."""
    return Rebound.apply(tensor, values)
