"""``h.register_hook(fn)`` on a tensor the graph computes: the hook becomes
part of the graph's backward.

Run natively, the hook is stored in C and called by the autograd engine
later: unseen by the interpreter, a ``native-callback`` break.  Where it is
sound, the capture instead records one node after ``h``'s, an identity
whose backward calls the hook (:class:`GradHooks`, a custom
``autograd.Function``), and every later use of ``h`` in the graph reads
that node (Dynamo too makes such a hook part of the backward).  On the
first call the hook is also registered natively on the real ``h`` (the
call's result is the interpreted run's own).  Eager calls the hooks of a
tensor with the gradient of all its uses; the node sees the gradient of
the uses recorded after it, so it is taken only where:

* ``h`` is a tensor an op of this graph produced (not a graph input: a
  hook on a parameter or an input outlives the call) that no op has used
  yet (then all its uses follow the node), and it requires grad;
* the hook is a plain Python function without closure cells or defaults
  (it behaves the same on every call, the first call's function standing
  for later ones), whose run on a stand-in gradient (``ones_like(h)``) as a
  speculative arm (:func:`.autograd_functions.speculate`) writes nothing
  outside, draws no random numbers, reads no tensor from outside and
  returns a tensor or None: what it reads from outside is guarded (a
  traced backend bakes the hook into its backward graph once).

A second hook on the same tensor joins the first node (eager runs a
tensor's hooks in the order they were registered).  The handle
``register_hook`` returns is the native one: its ``remove()`` in the
traced function is a break (:func:`removes_captured_hook`), since the
graph keeps the hook.  Anything else keeps the break.
"""
import types

import torch

from .autograd_functions import reads_outside_tensor, speculate

_REGISTER_HOOK = torch.Tensor.register_hook


class GradHooks(torch.autograd.Function):
    """Identity forward; the backward passes the gradient through the
    hooks in order, each result (when not None) replacing it, as the
    engine does with a tensor's hooks."""

    @staticmethod
    def forward(ctx, tensor, hooks):
        ctx.hooks = hooks
        return tensor.clone()  # (a new tensor: later in-place ops on it stay legal)

    @staticmethod
    def backward(ctx, grad):
        for hook in ctx.hooks:
            result = hook(grad)
            if result is not None:
                grad = result
        return grad, None


def _hooked(hooks):
    """The node's target: ``GradHooks`` applied with ``hooks`` (a list this
    node owns; a later hook on the same tensor joins it)."""

    def apply_grad_hooks(tensor):
        return GradHooks.apply(tensor, hooks)

    apply_grad_hooks.hooks = hooks
    apply_grad_hooks.handles = []  # (the hooks' native handles, as _key gives them)
    return apply_grad_hooks


def is_register_hook(func):
    """True for ``Tensor.register_hook``."""
    return func is _REGISTER_HOOK


def register(cap, args, kwargs):
    """``tensor.register_hook(hook)``: the handle of the native
    registration, with the hook recorded in the graph; None (nothing done)
    when the hook cannot be part of the graph."""
    if kwargs or len(args) != 2 or not isinstance(args[0], torch.Tensor) \
            or cap.speculation.depth or not cap.breaks.active:
        return None
    tensor, hook = args
    rec = cap.recording.recorder
    node = rec.node_of.get(id(tensor))
    if node is None or node.op == "placeholder" or node.users or not tensor.requires_grad \
            or not _plain_function(hook) or _impure(cap, tensor, hook):
        return None
    handle = _REGISTER_HOOK(tensor, hook)
    target = node.target if node.op == "call_function" else None
    if getattr(target, "hooks", None) is None:
        target = _hooked([])
        hooked = rec.graph.call_function(target, (node,), {})
        rec.op_count += 1
        if rec.where is not None:
            rec.where(hooked)
        rec.bind_result(hooked, tensor)  # (later uses of the tensor read the hooked node)
    target.hooks.append(hook)  # (a second hook on the tensor: run after the first)
    target.handles.append(_key(handle))
    return handle


def _key(handle):
    return id(handle.hooks_dict_ref()), handle.id


def _plain_function(hook):
    return type(hook) is types.FunctionType and hook.__closure__ is None \
        and hook.__defaults__ is None and not hook.__kwdefaults__


def _impure(cap, tensor, hook):
    """True if the hook's speculative run on a stand-in gradient stopped,
    read a tensor from outside or returned something else than a tensor
    or None."""
    rec = cap.recording.recorder
    lifted = len(rec.inputs)
    returned = []

    def run_hook():
        with torch.no_grad():  # (as the engine calls it, unless create_graph)
            returned.append(cap.interp.vm.call(hook, (torch.ones_like(tensor),), None))

    reason = speculate(cap, run_hook, writable=None)
    return reason is not None or reads_outside_tensor(rec, lifted, ()) \
        or not (returned[0] is None or isinstance(returned[0], torch.Tensor))


def removes_captured_hook(cap, func, args):
    """True for ``handle.remove()`` (or ``with handle:``'s exit) of a handle
    :func:`register` returned in this run: the graph would keep the hook."""
    if func not in _HANDLE_REMOVERS or not args \
            or type(args[0]) is not torch.utils.hooks.RemovableHandle:
        return False
    key = _key(args[0])
    return any(key in getattr(n.target, "handles", ())
               for n in cap.recording.recorder.graph.nodes if n.op == "call_function")


_HANDLE_REMOVERS = (torch.utils.hooks.RemovableHandle.remove,
                    torch.utils.hooks.RemovableHandle.__exit__)
