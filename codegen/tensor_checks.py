"""The tensor checks of a guard in one call.

A model's guard checks every tensor it read (its inputs, each parameter
and buffer): exact type, dtype, device, shape, strides and
``requires_grad`` (:class:`~pyinterp.refgraph.guards.TensorMatch`).  In
Python that is about a microsecond per tensor (five attribute reads, two
tuples, a comparison).  torch has the same check in C++: its
``TensorGuards`` (what TorchDynamo's guards used before its guard manager)
takes the tensors as examples and checks all of them in one call, about
0.15 us per tensor.  It checks a little more than our Python comparison
(the tensor's dispatch keys under the thread's dispatch state: an
inference tensor, a conjugate view), never less.

So the guard code keeps each tensor's ``type(v) is T`` where it stands
and checks the rest of the batched tensors at its end:

    if (tensor_guards.check(s1, s3, s38)): return True
    if not ((s1.dtype, s1.device, s1.shape, s1.stride(), s1.requires_grad) == (...)): return 55
    ...
    return True

The fast check passing implies every Python comparison would pass.  When
it fails, the Python comparisons decide, one by one as before: the index
returned is the first tensor that really differs, and a call whose
tensors differ only in what the fast check adds (another dispatch state)
still passes, exactly as it did without it.  The fast check is only ever
a shortcut.

Batched: a :class:`TensorMatch` of a plain ``torch.Tensor`` or
``nn.Parameter`` reached through an attribute (a parameter, a buffer, a
tensor held by an object), whose tensor is still alive when the guard is
built and still has the metadata the guard expects (it was not resized or
given new ``.data`` during the run).  Others keep their check in place:
among them the tensors passed in (an argument, or an item of one), which
are the ones that change from call to call, so a call with a new input
shape still fails at its first checks (a cheap miss, and the failure
named is the input's, as before); a parameter changed on the module is
named after any other check that fails on the same call.  Where
torch has no ``TensorGuards`` (or it refuses the tensors), every tensor
keeps its Python check.
"""
import torch

from ..refgraph.expr import Call, GetAttr, Obj
from ..refgraph.guards import TensorMatch
from ..refgraph.sources import Arg, Item, Kwarg

try:
    from torch._C._dynamo.guards import TensorGuards
except ImportError:  # pragma: no cover - a torch without it: Python checks only
    TensorGuards = None

_BATCHED_TYPES = (torch.Tensor, torch.nn.Parameter)


def _passed_in(source):
    """Is ``source`` an argument, or an item of one (``batch['ids']``)?"""
    while type(source) is Item:
        source = source.of
    return type(source) in (Arg, Kwarg)


def _example(guard):
    """The live tensor a :class:`TensorMatch` was made from, if it can be
    checked in C++ for exactly what the guard expects; else None."""
    if type(guard) is not TensorMatch or guard.tp not in _BATCHED_TYPES or guard.example is None \
            or _passed_in(guard.source):
        return None
    tensor = guard.example()
    if tensor is None or type(tensor) is not guard.tp:
        return None
    with torch._C.DisableTorchFunction():
        seen = (tensor.dtype, tensor.device, tuple(tensor.shape), tuple(tensor.stride()),
                tensor.requires_grad)
    if seen != (guard.dtype, guard.device, guard.shape, guard.stride, guard.requires_grad):
        return None
    return tensor


class TensorBatch:
    """Which guards of a list are checked together (:attr:`indices`, in
    order), and the checker that does it (``None`` when there are none)."""

    def __init__(self, guards):
        self.indices = ()
        self._members = frozenset()
        self.checker = None
        if TensorGuards is None:
            return
        examples = {i: _example(g) for i, g in enumerate(guards)}
        examples = {i: t for i, t in examples.items() if t is not None}
        if not examples:
            return
        tensors = list(examples.values())
        try:
            # (made under the caller's dispatch state, which the check compares)
            with torch._C.DisableTorchFunction():
                checker = TensorGuards(
                    *tensors, dynamic_dims_sizes=[list(t.shape) for t in tensors],
                    dynamic_dims_strides=[list(t.stride()) for t in tensors],
                    tensor_check_names=["t%d" % i for i in range(len(tensors))])
            if not checker.check(*tensors):
                return
        except Exception:  # noqa: BLE001 - torch refused them: Python checks only
            return
        self.indices = tuple(examples)
        self._members = frozenset(examples)
        self.checker = checker

    def __contains__(self, index):
        return index in self._members

    def fast_check(self, guards, resolve):
        """``tensor_guards.check(v1, v2, ...)`` over the batched tensors."""
        values = tuple(resolve(guards[i].source) for i in self.indices)
        return Call(GetAttr(Obj(self.checker, "tensor_guards"), "check"), values)
