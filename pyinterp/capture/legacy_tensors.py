"""Tensors that torch makes in C code without a ``__torch_function__``
dispatch, and the graph ops that make the same tensors.

Almost every torch entry point dispatches ``__torch_function__``, so
:class:`.state.RecordingMode` records it.  The legacy ones do not: the
legacy constructors (``torch.Tensor(data)``, ``torch.FloatTensor(data)``
and the other ``torch.tensortype`` classes) and
``torch.autograd.Variable(x)`` make their tensor in C, unseen, and that
tensor later reached an op with no node and no access path (an
``untracked-tensor`` break).  ``Tensor.type(T)`` is seen, but its argument
``T`` (a tensortype class) is no value a graph can hold.

:func:`equivalent` says, for such a call that has just run natively (its
errors are eager's, and its result gives the dtype and device), which
seen torch call makes the same tensor, with the same values, dtype,
device, ``requires_grad``, aliasing and gradient: the interpreter makes
that call instead, and the mode records it.

=====================================  =========================================
eager                                  recorded as
=====================================  =========================================
``torch.Tensor()``                     ``torch.tensor([], dtype=, device=)``
``torch.Tensor(data)`` (nested lists   ``torch.tensor(data, dtype=, device=)``
or tuples of ``int``/``float``/        (the dtype and device of the tensor eager
``bool``), ``torch.LongTensor(data)``  made: the default dtype is guarded)
``torch.Tensor(t)``, ``T(t)``          ``torch.ops.aten.alias(t)`` (eager's
                                       result is an alias of ``t``: same storage,
                                       ``AliasBackward`` gradient)
``Variable(x)``                        ``x.detach()`` (eager: a new tensor on the
                                       same storage, no gradient)
``torch.Tensor(2, 3)``,                ``torch.empty(2, 3, dtype=, device=)``
``torch.Tensor(torch.Size(...))``,     (uninitialized memory, as eager's: see
``torch.LongTensor(n)``                below)
``x.type(torch.FloatTensor)``          ``x.type('torch.FloatTensor')``
=====================================  =========================================

A legacy constructor given sizes makes an *uninitialized* tensor, exactly
what ``torch.empty`` makes: recorded so, the graph does what eager does,
garbage included (a value read before it is written is arbitrary in both;
the usual ``.zero_()``, ``.fill_()``, ``.normal_()``, ``copy_`` right
after overwrite every element, and are recorded after it).  Its check
(:func:`_same_tensor`) compares all but the values.

Anything else such a call makes (a NumPy array; a storage; a list holding
tensors; ``Variable(x, requires_grad=True)``: a new leaf, which no graph op
makes under AOTAutograd) is a break at the call, named by
:func:`unseen_message`.
"""
import torch

Tensor = torch.Tensor
_Variable = torch.autograd.Variable
_SCALARS = (int, float, bool)
_TENSORTYPE = type(torch.FloatTensor)  # (torch.tensortype: no module attribute)


def makes_unseen_tensor(cls):
    """True if calling the class ``cls`` makes a tensor in C without a
    ``__torch_function__`` dispatch (a legacy constructor, ``Variable``)."""
    return cls is Tensor or cls is _Variable or type(cls) is _TENSORTYPE


def equivalent(cls, args, kwargs, made):
    """``(fn, args, kwargs)``: the call the recording mode sees that makes
    the same tensor as ``cls(*args, **kwargs)``, which made ``made``
    natively; or None (the call keeps its break)."""
    if type(made) is not Tensor:
        return None
    if cls is _Variable:
        return _variable(args, kwargs, made)
    if kwargs and set(kwargs) != {"device"}:
        return None
    options = {"dtype": made.dtype, "device": made.device}
    if not args:
        return torch.tensor, ([],), options
    if _sizes(args):
        return torch.empty, tuple(args), options
    if len(args) != 1:
        return None
    data = args[0]
    if type(data) in (list, tuple) and _plain_data(data):
        return torch.tensor, (data,), options
    if isinstance(data, Tensor) and not kwargs and made._base is data \
            and made.dtype == data.dtype and made.device == data.device:
        return torch.ops.aten.alias.default, (data,), {}
    return None


def _variable(args, kwargs, made):
    """``Variable(x)`` and ``Variable(x, False)``: a detached tensor on
    ``x``'s storage (with ``requires_grad=True``, a new leaf: None)."""
    if kwargs and set(kwargs) != {"requires_grad"} or not 1 <= len(args) + len(kwargs) <= 2 \
            or not args or not isinstance(args[0], Tensor):
        return None
    if made.requires_grad:
        return None  # a new leaf: see unseen_message
    return Tensor.detach, (args[0],), {}


def takes_sizes(cls, args):
    """True for ``T(2, 3)`` and ``T(torch.Size(...))`` with ``T`` a legacy
    constructor: recorded as ``torch.empty`` of those sizes, which may be
    symbolic (``torch.Tensor(x.size(0), d)``: values/sizes.py lets them
    through)."""
    return (cls is Tensor or type(cls) is _TENSORTYPE) and bool(args) and _sizes(args)


def _sizes(args):
    """The arguments are sizes, the tensor uninitialized (``T((2, 3))`` is
    data: a tuple is not a size).  Ints or a ``torch.Size`` (symbolic sizes
    are int subclasses; a bool is data)."""
    return all(isinstance(a, int) and type(a) is not bool for a in args) \
        or len(args) == 1 and type(args[0]) is torch.Size


def _plain_data(data):
    """Nested lists and tuples of Python ints, floats and bools only."""
    for item in data:
        tp = type(item)
        if tp in (list, tuple):
            if not _plain_data(item):
                return False
        elif tp not in _SCALARS:
            return False
    return True


def unseen_message(cls, args, made):
    """Why ``cls(*args)``, which made ``made``, cannot be recorded (a break
    message)."""
    name = _spell(cls)
    if cls is _Variable and made.requires_grad:
        return ("%s(x, requires_grad=True) makes a new leaf tensor that requires grad, which "
                "a compiled graph cannot make (AOTAutograd's graphs drop requires_grad_)" % name)
    kinds = ", ".join(type(a).__name__ for a in args)
    return ("%s(%s) makes a tensor in C, unseen by the recording mode, in a form pyinterp "
            "does not record (torch.tensor(data) and tensors are)" % (name, kinds))


def type_argument(args, kwargs):
    """``Tensor.type(x, T)``'s arguments with a tensortype class ``T``
    spelled as its name (``'torch.FloatTensor'``), which the graph can hold
    and ``Tensor.type`` takes the same way; None when there is none."""
    if len(args) > 1 and type(args[1]) is _TENSORTYPE:
        return (args[0], _spell(args[1])) + tuple(args[2:]), kwargs
    if kwargs and type(kwargs.get("dtype")) is _TENSORTYPE:
        return args, dict(kwargs, dtype=_spell(kwargs["dtype"]))
    return None


def _spell(cls):
    if cls is _Variable:
        return "torch.autograd.Variable"
    return "%s.%s" % (cls.__module__, cls.__name__)


def recorded(cap, cls, args, kwargs, made):
    """``cls(*args, **kwargs)`` (a class :func:`makes_unseen_tensor`) made
    ``made`` natively: make it again by its :func:`equivalent`, which the
    recording mode records, or break (its tensor cannot reach the graph).
    The tensor made again is checked against ``made`` (type, dtype, device,
    shape, strides, values, ``requires_grad``, leafness, storage shared with
    the arguments): a difference is a break too, and the run goes on with
    ``made``."""
    if not cap.breaks.active or not isinstance(made, Tensor):
        return made
    with torch._C.DisableTorchFunction():  # our own reading of it: not recorded
        call = equivalent(cls, args, kwargs or {}, made)
        why = unseen_message(cls, args, made) if call is None else None
    if call is None:
        cap.break_graph("untracked-tensor", why)
        return made
    fn, call_args, call_kwargs = call
    again = fn(*call_args, **call_kwargs)
    with torch._C.DisableTorchFunction():
        same = _same_tensor(again, made, args, values=fn is not torch.empty)
    if not same:
        cap.break_graph("untracked-tensor", "%s(...) made a tensor that its recorded "
                        "equivalent %s(...) does not make" % (_spell(cls), _name(fn)))
        return made
    return again


def _same_tensor(again, made, args, values=True):
    """``again`` is what eager's ``made`` is, down to the storage it shares
    with a tensor argument (and its values unless ``values`` is false: two
    uninitialized tensors)."""
    if type(again) is not type(made) or again.dtype != made.dtype \
            or again.device != made.device or again.shape != made.shape \
            or again.stride() != made.stride() or again.requires_grad != made.requires_grad \
            or again.is_leaf != made.is_leaf or values and not torch.equal(again, made):
        return False
    for arg in args:
        if isinstance(arg, Tensor):
            storage = arg.untyped_storage().data_ptr()
            if (again.untyped_storage().data_ptr() == storage) \
                    != (made.untyped_storage().data_ptr() == storage):
                return False
    return True


def _name(fn):
    return getattr(fn, "__qualname__", None) or str(fn)
