"""A custom ``torch.autograd.Function`` called in a traced function.

``MyFn.apply(x, ...)`` runs the user's ``forward`` from C code, and the
autograd engine later calls the user's ``backward``.  Run natively, that
Python is invisible to the interpreter (a ``native-callback`` break:
callbacks.py).  Where both are *pure*, the call is one node of the graph
instead (Dynamo makes it one higher-order op, with both traced):

* the node's target calls ``MyFn.apply`` (:class:`_Apply`).  The eager
  backend runs the user's forward for real on every call, and autograd the
  user's backward.
  AOTAutograd (Inductor) traces the node's forward and, when a gradient is
  needed, the user's backward into its joint graph, once: hence the check;
* *pure* is checked before the call by running the forward, then (when an
  argument requires grad) the backward on all-ones gradients, once in the
  capture interpreter as a speculative arm (:mod:`.graphmend.speculate`),
  on a stand-in ``ctx`` (:class:`_StandInCtx`, the one object whose
  attributes the arm may write).  An outside write, ``print``, logging, an impure call, a
  data-dependent Python value (``.item()``, ``if t.sum() > 0``: not merged
  into ``torch.where`` here), an in-place op on a tensor the arm did not
  make (:class:`_MadeHere`), drawing random numbers or a
  native callback stops the arm (:class:`~.graphmend.speculate.Speculating`),
  and so does reading a tensor from outside (a traced backend would bake
  it into the node).  The arm's ops are discarded; its reads of outside
  state stay as guards (with the class lookups of ``forward``,
  ``backward``, ``setup_context`` and ``vjp``), so a traced backend never
  keeps a stale value.  A ``setup_context``-style Function runs
  ``forward(*args)`` then ``setup_context(ctx, args, out)``;
* a forward that writes an argument in place and marks it dirty
  (``x[x < 0] *= slope; ctx.mark_dirty(x); return x``) may write that
  argument in the arm (:class:`_Inputs` keeps its value and node, and puts
  them back after the arm); the node then writes it, as eager's call does
  (later reads of the tensor see the node's result).  Refused: a write of
  an argument not marked dirty, and a dirty graph input (or a view of one)
  that requires grad (AOTAutograd copies a written input back outside its
  graph, and the gradient through the write would be lost);
* anything else (a check that fails,
  ``set_materialize_grads(False)``, ``setup_context`` with default or
  keyword arguments, ``vjp``, ``boxed_grads_call``, an output that is not
  a tensor) keeps the rule of callbacks.py: a ``native-callback`` break,
  after which the call runs natively with its own backward.  The backward
  is never lost.  An exception the user's code raises is the native call's,
  as in eager (no break).
"""
import torch

from .consumers import ARGS, consume
from ..refgraph.fxgraph import storage_of
from .graphmend.speculate import Speculating

_Function = torch.autograd.Function
_APPLY = _Function.apply.__func__
_ONCE_DIFFERENTIABLE = torch.autograd.function.once_differentiable(lambda ctx: None).__code__


def is_apply(func, args):
    """True for ``Function.apply`` reached with a user Function class
    (``MyFn.apply(...)`` arrives as the classmethod's function and the class)."""
    return func is _APPLY and bool(args) and isinstance(args[0], type) \
        and issubclass(args[0], _Function) and args[0] is not _Function


def call(vm, cls, args, kwargs):
    """``cls.apply(*args, **kwargs)``: one node of the graph when its forward
    and backward are pure, else a ``native-callback`` break and the call
    natively (see the module docstring)."""
    cap = vm.capture
    kwargs = kwargs or {}
    consume(cap, tuple(args) + tuple(kwargs.values()), ARGS)  # (constants)
    reason, dirty = _unsupported(vm, cls, args, kwargs)
    if reason is None:
        result = cap.call_in_graph(_Apply(cls), args, kwargs)
        if dirty:  # (the node writes them: a graph input among them is noted)
            with torch._C.DisableTorchFunction():
                cap.recording.recorder.note_mutation(dirty)
        return result
    if type(reason) is Raised:
        # The user's code raised before doing anything impure: the native
        # call raises it too, as eager does (no break, even under fullgraph).
        with cap.breaks.paused():
            result = cls.apply(*args, **kwargs)
        reason = "%s, on the speculative run only" % reason  # (a stand-in ctx lacks it)
        cap.break_graph("native-callback", "custom autograd.Function %s: %s"
                        % (cls.__qualname__, reason))
        return result
    cap.break_graph("native-callback", "custom autograd.Function %s runs natively: its "
                    "forward or backward cannot be captured (%s)" % (cls.__qualname__, reason))
    return cls.apply(*args, **kwargs)  # (explain mode goes on: its forward's ops recorded)


def _unsupported(vm, cls, args, kwargs):
    """``(why, dirty)``: why ``cls.apply`` cannot be one node, or None: its
    forward and backward run speculatively (:func:`speculate`); and the
    arguments its forward marked dirty (written in place)."""
    forward = vm.load_attr(cls, "forward")  # (read through the interpreter: guarded)
    backward = vm.load_attr(cls, "backward")
    setup_context = vm.load_attr(cls, "setup_context")
    separate = setup_context is not _Function.setup_context
    # (boxed_grads_call, read unguarded: it changes how the engine passes
    # the gradients to a backward whose identity is guarded, not what it is)
    if vm.load_attr(cls, "vjp") is not _Function.vjp or getattr(cls, "boxed_grads_call", False):
        return "a vjp or boxed backward is not captured", ()
    if backward is _Function.backward:
        return "it has no backward", ()
    if separate and not _all_positional(forward, args, kwargs):
        return "setup_context with default or keyword arguments is not captured", ()
    if getattr(backward, "__code__", None) is _ONCE_DIFFERENTIABLE:
        backward = backward.__wrapped__  # (its wrapper is torch's: it would run natively)
    grad_on = torch.is_grad_enabled()
    needs = tuple(grad_on and isinstance(a, torch.Tensor) and a.requires_grad for a in args)
    ctx = _StandInCtx(needs)

    def forward_then_backward():
        with torch.no_grad():  # (as apply runs the forward, and the engine the backward)
            if separate:
                out = vm.call(forward, tuple(args), None)
                vm.call(setup_context, (ctx, tuple(args), out), None)
            else:
                out = vm.call(forward, (ctx,) + tuple(args), kwargs or None)
            if any(needs):
                outputs = out if type(out) is tuple else (out,)
                grads = tuple(torch.ones_like(o) if isinstance(o, torch.Tensor) else None
                              for o in outputs)
                vm.call(backward, (ctx,) + grads, None)

    rec = vm.capture.recording.recorder
    lifted = len(rec.inputs)
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    written = set()
    reason = speculate(vm.capture, forward_then_backward, writable=ctx, inputs=tensors,
                       written=written)
    if reason is None:
        reason = reads_outside_tensor(rec, lifted, tuple(args) + tuple(kwargs.values()))
    dirty = {id(t) for t in ctx.dirty}
    if reason is None and not written <= dirty:
        reason = "its forward writes an input in place without ctx.mark_dirty()"
    if reason is None and not dirty <= {id(t) for t in tensors}:
        reason = "ctx.mark_dirty() of a tensor that is not an input"
    dirty = tuple(t for t in tensors if id(t) in dirty)
    if reason is None and any(t.requires_grad and _is_graph_input(rec, t) for t in dirty):
        # (AOTAutograd copies a written graph input back outside its graph:
        # the gradient through the write would be lost)
        reason = "ctx.mark_dirty() of a graph input (or a view of one) that requires grad"
    return reason, dirty


def _is_graph_input(rec, tensor):
    """``tensor`` is (or will be lifted as) an input of the graph, or shares
    the storage of one."""
    if not rec.is_graph_value(tensor):
        return True
    with torch._C.DisableTorchFunction():
        mine = storage_of(tensor)
        return mine is None or any(storage_of(t) == mine for _, t, _ in rec.inputs)


def reads_outside_tensor(rec, lifted, given):
    """Why a speculative run is not pure when it lifted an outside tensor
    other than those ``given`` into the graph (``rec.inputs`` after the
    first ``lifted``: a traced backend would bake it into the node as a
    constant), else None."""
    given = {id(v) for v in given}
    for source, tensor, _ in rec.inputs[lifted:]:
        if id(tensor) not in given:
            return "it reads the tensor %s from outside" % (source,)
    return None


def _all_positional(forward, args, kwargs):
    """True if ``args`` fill each parameter of ``forward`` (a plain
    function), so that ``apply`` passes ``setup_context`` exactly ``args``
    (it binds defaults and keywords into the inputs otherwise)."""
    code = getattr(forward, "__code__", None)
    return code is not None and not kwargs and code.co_argcount == len(args) \
        and not code.co_kwonlyargcount and not code.co_flags & (_VARARGS | _VARKEYWORDS)


_VARARGS, _VARKEYWORDS = 0x04, 0x08  # (inspect.CO_VARARGS, inspect.CO_VARKEYWORDS)


def speculate(cap, run, writable, inputs=(), written=None):
    """Call ``run()`` (which runs the user's code in the capture
    interpreter) as a speculative arm; undo its ops, appends, tracked
    numbers and random draws.  Returns None if it ran through, else why
    not (a :class:`Raised` when the user's code raised).  ``writable``:
    the one object it may write attributes of; ``inputs``: tensors it may
    write in place (a ``mark_dirty`` forward), their values and nodes put
    back after it (:class:`_Inputs`), their ids added to ``written``."""
    rec = cap.recording.recorder
    start = rec.mark()
    ints0 = cap.recording.ints.snapshot()
    rng0 = torch.random.get_rng_state()
    outer_judge = cap.speculation.made_here
    kept = _Inputs(rec, inputs)
    cap.speculation.made_here = _MadeHere(rec, kept)
    cap.speculation.enter()
    cap.speculation.open_arm()
    cap.speculation.writable.add(id(writable))
    cap.speculation.plain += 1
    reason = None
    try:
        run()
        with torch._C.DisableTorchFunction():
            if not torch.equal(rng0, torch.random.get_rng_state()):
                reason = "random numbers drawn"
    except Speculating as e:
        reason = str(e)
    except Exception as e:  # noqa: BLE001 - it raised: the native call will raise it
        reason = Raised("%s: %s" % (type(e).__name__, e))
    finally:
        cap.speculation.made_here = outer_judge
        cap.speculation.plain -= 1
        cap.speculation.writable.discard(id(writable))
        cap.speculation.close_arm()
        cap.speculation.leave()
        cap.recording.ints.restore(ints0)
        torch.random.set_rng_state(rng0)
        rec.roll_back(start)
        kept.put_back()
        if written is not None:
            written.update(kept.saved)
    return reason


class _MadeHere:
    """Called with a tensor: True if the arm made it, so that it may write
    it in place (``grad_input = g.clone(); grad_input[x < 0] = 0``): an op
    of the arm produced it, and no tensor of the graph from before the arm,
    nor a graph input (one the arm lifted included), shares its storage
    (``x.detach()``, ``x[0]``, a view of an outside tensor are refused).
    Also True for one of ``inputs`` itself (:class:`_Inputs`: kept, to be
    put back)."""

    __slots__ = ("rec", "before", "storages", "inputs")

    def __init__(self, rec, inputs):
        self.rec = rec
        self.inputs = inputs
        self.before = set(rec.graph.nodes)
        with torch._C.DisableTorchFunction():
            self.storages = {storage_of(t) for t in rec.tensor_of.values()}

    def __call__(self, tensor):
        if not isinstance(tensor, torch.Tensor):
            return False
        if self.inputs.keep(tensor):
            return True
        node = self.rec.node_of.get(id(tensor))
        if node is None or node.op == "placeholder" or node in self.before:
            return False
        with torch._C.DisableTorchFunction():
            mine = storage_of(tensor)
            return mine is not None and mine not in self.storages \
                and all(storage_of(t) != mine for _, t, _ in self.rec.inputs)


class _Inputs:
    """The tensors an arm may write in place (the arguments of a Function
    whose forward marks them dirty): before its first write, each one's
    value and node are kept (:meth:`keep`); after the arm, put back
    (:meth:`put_back`), so that the native call that follows writes them
    once, as eager does."""

    __slots__ = ("rec", "tensors", "saved", "mutated_input")

    def __init__(self, rec, tensors):
        self.rec = rec
        self.tensors = {id(t): t for t in tensors}
        self.saved = {}  # id -> (tensor, its value, its node or None)
        self.mutated_input = rec.mutated_input

    def keep(self, tensor):
        """True if ``tensor`` is one of the tensors (now kept)."""
        key = id(tensor)
        if self.tensors.get(key) is not tensor:
            return False
        if key not in self.saved:
            with torch._C.DisableTorchFunction(), torch.no_grad():
                value = tensor.detach().clone()
            self.saved[key] = (tensor, value, self.rec.node_of.get(key))
        return True

    def put_back(self):
        rec = self.rec
        with torch._C.DisableTorchFunction(), torch.no_grad():
            for tensor, value, node in self.saved.values():
                tensor.detach().copy_(value)
                if node is None:  # (lifted by the arm: its placeholder stays)
                    node = next((n for _, t, n in rec.inputs if t is tensor), None)
                if node is not None:
                    rec.bind(tensor, node)
        rec.mutated_input = self.mutated_input


class Raised(str):
    """Why not, when the user's code raised an exception (what
    :func:`speculate` returns then: the native call will raise it)."""


class _Apply:
    """``cls.apply`` as the target of the node.  Not the bound method
    itself: FX's generated code names a function from a torch module by its
    module path, and ``torch.autograd.function.apply`` does not exist (the
    graph's code would raise on every call); an object of this module is a
    global of the generated code instead.  Named ``apply``, as the method."""

    __name__ = "apply"

    def __init__(self, cls):
        self.function = cls
        self.__qualname__ = "%s.apply" % cls.__qualname__

    def __call__(self, *args, **kwargs):
        return self.function.apply(*args, **kwargs)

    def __repr__(self):
        return "<%s>" % self.__qualname__


class _StandInCtx:
    """The ``ctx`` the forward and backward run on speculatively: the
    methods of the real one, doing nothing (the native call gets the real
    ctx) but keeping the saved tensors and the tensors marked dirty, except
    ``set_materialize_grads(False)`` (gradients that may be None): not
    captured."""

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad
        self.saved_tensors = ()
        self.dirty = ()

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    def save_for_forward(self, *tensors):
        pass

    def mark_non_differentiable(self, *tensors):
        pass

    def set_materialize_grads(self, value):
        if not value:  # (the backward would get None where it is run on ones here)
            raise Speculating("ctx.set_materialize_grads(False)")

    def mark_dirty(self, *tensors):
        self.dirty = tensors
