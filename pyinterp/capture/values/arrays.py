"""NumPy arrays made from graph tensors: the NumPy round trip in the graph.

``torch.from_numpy(np.clip(h.detach().numpy(), -0.5, 0.5) * 2)``: the
program leaves torch for NumPy and comes back.  TorchDynamo traces such
NumPy code into torch ops through ``torch._numpy`` (NumPy's API written
with torch ops).  The capture runs the NumPy code for real, as always, and
*mirrors* each NumPy step with ``torch._numpy`` on the tensors that hold
the same values, so the graph computes what NumPy computed:

* ``t.numpy()`` of a tensor the graph has (on the CPU, not requiring
  grad, of a dtype NumPy and ``torch._numpy`` share) returns the real
  array, tracked by identity in :class:`ArrayTable` with ``t`` (the array
  is a view of ``t``'s memory: ``t``'s node stands for both).  With
  symbolic sizes, ``t``'s sizes are specialized first (NumPy code reads
  them as plain ints).
* A NumPy function of :data:`.numpy_calls.PURE` (but ``argsort``, whose
  order of ties is NumPy's own), or a ufunc without
  ``out=``/``where=``, that receives tracked arrays (and otherwise plain
  numbers, strings, None, slices, dtypes, NumPy scalars and arrays of
  plain values the run made, up to 4096 elements, as constants; arrays
  from outside are adopted, below); an operator (``+``, ``>``, ``-a``,
  ``~m``; in place below), an index read (``a[:, 0]``), ``a.T``,
  or a method of :data:`METHODS` of a tracked array: the real call runs
  (all are pure), then its mirror, the same function of ``torch._numpy``
  on the tracked tensors, whose torch ops the recording mode records.
  The mirror must agree with NumPy: an array (or a NumPy scalar) for an
  array (a scalar), the same dtype, the same values (floats within a few
  ulps: torch and NumPy may sum in another order), the same number of
  elements (a differing shape is fixed by a ``reshape``: ``torch._numpy``
  gives ``quantile`` a shape ``(1,)`` where NumPy gives a scalar), and the
  same memory: a view where NumPy made a view, at the same offset and
  strides (where NumPy copied but the mirror made a view, the node is
  cloned).  Then the result is tracked with the mirror's tensor.  Where
  they disagree (or the mirror raises) the mirror's nodes are erased and
  the graph breaks before the call (``numpy-call``); the call runs
  natively.  Metadata reads (``a.shape``, ``a.dtype``, ``a.ndim``,
  ``a.size``) are plain values of sizes the guards fix.
* Back to torch: ``torch.from_numpy(a)``, ``torch.as_tensor(a)`` and
  ``torch.asarray(a)`` (no other argument) share the array's memory: a
  view node of its tensor (``view_as``), whose tensor then stands for the
  array (an in-place torch op on it writes the array too, as in eager);
  ``torch.tensor(a)`` copies: a ``clone`` node.  ``float(s)`` or
  ``s.item()`` of a tracked floating NumPy scalar is a tracked float
  (:mod:`.scalars`): ``float(np.quantile(h.numpy(), 0.9))``.
* An array from outside (an argument, a module attribute, an array a
  resume function receives at a split) that meets one of the calls or
  operators above is *adopted* (:func:`adopt`): a graph input
  ``torch.from_numpy(<its path>)`` (:class:`~pyinterp.refgraph.sources.Converted`,
  made by the mock on every call, sharing the caller's memory), its dtype,
  shape and strides guarded; then it is tracked like the others.
* A tracked array leaves the function (the return value, a replayed write
  or ``print``, a live value at a graph break) as a graph output, which
  the mock turns back into an array with ``.numpy()`` (``[()]`` for a
  scalar); an adopted array is itself, by its path.
* An in-place operator (``a -= a.mean(0)``, ``a *= 2``) is the torch
  in-place op on the array's tensor, in the graph (:func:`_in_place`):
  NumPy's result, computed out of place first, must be castable to the
  array's dtype (NumPy's ``same_kind`` rule; else NumPy raises, natively)
  and equal the mirror's.
* An item store into an array from outside is replayed by the mock after
  its graph, but the graph reads its inputs when it runs: such a write is
  a break where the graph takes arrays from outside, or a tensor sharing
  the array's memory, as inputs; and after one, neither becomes an input
  (:func:`outside_write`, :func:`check_input`).
* Everything else that would consume one breaks the graph before the
  instruction (:func:`check_instruction`, :func:`check_call`): a write
  into it (``a[0] = 0``, ``out=``, ``a.sort()``), a torch op other than those
  above, a truth test, formatting, a native call that is not a mirrored
  NumPy function.  Interpreted Python functions (NumPy's own Python code
  among them) receive tracked arrays as values; the C calls they make are
  vetted the same way.

Nothing here imports NumPy or ``torch._numpy`` before a tracked array
exists (``t.numpy()`` has loaded NumPy by then).

Records (:class:`~..state.Capture`): owns none (its :class:`ArrayTable` is
held as ``recording.arrays``); reads ``recording`` (the recorder, the
sizes, the tracked floats), ``breaks``, ``speculation`` and ``interp``.
"""
import operator
import sys
import warnings

import torch

from .. import rules
from ..numpy_calls import PURE, is_pure_function
from .identity import STORES, IdentityTable, stored_where_unseen
from ...interp import calls
from ...interp.model.operators import NATIVE_BINARY, NATIVE_COMPARE
from ...opcodes.info import NB_SYMBOL
from ...refgraph.fxgraph import Unrepresentable
from ...refgraph.sources import Attr, Converted
from ..torchfiles import runs_interpreted

Tensor = torch.Tensor
MISSING = object()

METHODS = frozenset({
    "all", "any", "argmax", "argmin", "astype", "clip", "copy", "cumprod", "cumsum",
    "diagonal", "dot", "flatten", "max", "mean", "min", "prod", "ravel", "repeat",
    "reshape", "round", "squeeze", "std", "sum", "swapaxes", "transpose", "var",
})
"""Methods of a tracked array that are mirrored (pure: none writes the
array or takes ``out=`` here, :func:`_mirror_args` refuses it)."""
# Pure NumPy functions whose result torch may order differently (ties).
_NOT_MIRRORED = frozenset({"argsort"})
_NUMERIC_KINDS = frozenset("biufc")
# The largest array the run made from plain values that a mirror takes as
# a constant (its values are written into the graph).
_CONSTANT_ELEMENTS = 4096
# NumPy functions whose plain Python result is metadata (guarded sizes).
_METADATA_FUNCTIONS = frozenset({"ndim", "shape", "size"})
# Builtins that read only a tracked array's type or sizes.
_NEUTRAL = (len, isinstance, issubclass, type, callable)
_BUILTIN_METHOD = type([].append)
_METHOD_DESCRIPTOR = type(list.append)
_METADATA = frozenset({"shape", "dtype", "ndim", "size", "itemsize", "nbytes"})
# The dtypes NumPy and torch._numpy share (NumPy's names).
_NUMPY_NAMES = {torch.bool: "bool", torch.uint8: "uint8", torch.int8: "int8",
                torch.int16: "int16", torch.int32: "int32", torch.int64: "int64",
                torch.float16: "float16", torch.float32: "float32", torch.float64: "float64",
                torch.complex64: "complex64", torch.complex128: "complex128"}
# Torch calls that read tensor data into Python: a mirror that makes one
# would decide on the values natively, unguarded (refused, _MirrorWatch).
_FACTORIES = frozenset({"as_tensor", "tensor", "asarray", "full", "zeros", "ones", "empty",
                        "arange", "linspace", "logspace", "eye", "scalar_tensor"})
_DATA_READS = frozenset({"item", "tolist", "__bool__", "__int__", "__float__", "__index__",
                         "__complex__", "numpy", "__array__", "__format__", "__repr__",
                         "__str__", "data_ptr"})


class ArrayTable(IdentityTable):
    """The tracked NumPy arrays and scalars of one capture: ``id -> (value,
    recorder, tensor)``, ``tensor`` a tensor of ``recorder``'s graph that
    holds the same values.  Any type may be tracked (NumPy's scalar types
    are many); a bound method of a tracked array (``a.sum``, handed on
    uncalled) is carried too."""

    def __init__(self):
        super().__init__()
        # Arrays from outside are graph inputs (adopt), read when the graph
        # runs; a write into an array from outside is replayed after it:
        # the two cannot mix in one capture (outside_write).
        self.adopted = False
        self.written = []  # the arrays from outside written so (replayed)

    def add(self, value, recorder, tensor):
        self._entries[id(value)] = (value, recorder, tensor)

    def tracks(self, value):
        return id(value) in self._entries

    def _held(self, value):
        if id(value) in self._entries:
            return True
        if type(value) is _BUILTIN_METHOD:
            return id(value.__self__) in self._entries
        return None

    def tensor(self, value, recorder):
        """The tensor holding ``value``'s values, in ``recorder``'s graph."""
        _, owner, tensor = self._entries[id(value)]
        if owner is not recorder:
            raise Unrepresentable("numpy-call", "a NumPy array the graph computes crossed a "
                                  "graph break")
        return tensor

    def rebind(self, value, tensor):
        """``tensor`` (bound to the same node) holds ``value``'s values from
        now on: it shares the array's memory."""
        _, owner, _ = self._entries[id(value)]
        self._entries[id(value)] = (value, owner, tensor)


# -- producing: t.numpy() -----------------------------------------------------
def produce(cap, func, args, kwargs):
    """Run ``t.numpy()`` of a graph tensor and track the array; None if the
    call is not one this module follows (the caller then breaks as before)."""
    if len(args) != 1 or (kwargs and kwargs != {"force": False}) or cap.speculation.depth \
            or cap.interp.opaque:
        return None
    tensor = args[0]
    if type(tensor) is not Tensor:
        return None
    with torch._C.DisableTorchFunction():  # (reads of the capture, not the program's)
        if tensor.requires_grad or tensor.device.type != "cpu" or tensor.is_conj() \
                or tensor.is_neg() or tensor.dtype not in _NUMPY_NAMES:
            return None
    rec = cap.recording.recorder
    try:
        rec.node_for(tensor)
    except Unrepresentable:
        return None
    sizes = cap.recording.sizes
    if sizes is not None and sizes.active:
        sizes.specialize_tensor(rec, tensor, "NumPy code reads its sizes as plain ints",
                                cap.site())
    array = func(*args, **(kwargs or {}))
    cap.recording.arrays.add(array, rec, tensor)
    return array


# -- arrays from outside: graph inputs ----------------------------------------------
def _numpy():
    """The ``numpy`` module once it is loaded (by anyone), else None; kept
    once found, so the capture's hooks need no ``sys.modules`` lookup."""
    global _NUMPY
    if _NUMPY is None:
        _NUMPY = sys.modules.get("numpy")
    return _NUMPY


_NUMPY = None


def ndarray_type():
    """``np.ndarray``, or a class no value has while NumPy is not loaded."""
    np = _NUMPY or _numpy()
    return np.ndarray if np is not None else _NoNumpy


class _NoNumpy:
    pass


def hooked(cap, *values):
    """True if an operation on ``values`` (an operator's operands, an
    indexed array, an attribute's owner) is one this module follows:
    capture is on and one of them is a tracked array or scalar, or an
    array from outside adopted now (:func:`followed`).  The capture's
    hooks ask this first, so that code without arrays pays one test."""
    if not cap.breaks.active:
        return False
    if not cap.recording.arrays:
        nd = ndarray_type()
        if not any(type(v) is nd for v in values):
            return False
    return followed(cap, *values)


def adopt(cap, value):
    """Follow ``value``, a NumPy array from outside the function (an
    argument, a module attribute, an array a resume function receives),
    as a graph input: ``torch.from_numpy(<its path>)``, made by the mock
    on every call (sharing the array's memory, as the run did), its dtype,
    shape and strides guarded.  True if ``value`` is tracked (now or
    before); False leaves it to the usual rules (an outside object: a
    break where C code would read it)."""
    table = cap.recording.arrays
    if table.tracks(value):
        return True
    if type(value) is not ndarray_type() or cap.speculation.depth or cap.interp.opaque \
            or not cap.breaks.active:
        return False
    rg = cap.recording.refgraph
    source = rg.source_of(value)
    dtype = value.dtype
    if table.written:
        return False  # (a replayed write would come after the graph read it)
    if source is None or dtype.name not in _NUMPY_NAMES.values() or not dtype.isnative \
            or not value.flags.writeable or any(stride < 0 for stride in value.strides):
        return False  # (torch.from_numpy would copy, warn or refuse)
    site = cap.site()
    rg.read(Attr(Attr(source, "dtype"), "str"), dtype.str, site)
    rg.read(Attr(source, "shape"), value.shape, site)
    rg.read(Attr(source, "strides"), value.strides, site)
    with torch._C.DisableTorchFunction():
        tensor = torch.from_numpy(value)
    rec = cap.recording.recorder
    node = rec.graph.placeholder("array_%d" % len(rec.inputs))
    node.meta["example_value"] = tensor
    rec.inputs.append((Converted(source, torch.from_numpy, "torch.from_numpy"), tensor, node))
    rec.bind(tensor, node)
    sizes = cap.recording.sizes
    if sizes is not None and sizes.active:
        sizes.specialize_tensor(rec, tensor, "NumPy code reads its sizes as plain ints",
                                cap.site())
    table.add(value, rec, tensor)
    table.adopted = True
    return True


def outside_write(cap, array):
    """An item store into ``array``, a NumPy array from outside, that the
    mock replays after its graph.  The graph reads its inputs when it
    runs, so a write that the program makes before a read of the same
    memory would come after it in the mock: False after a break where the
    graph takes arrays from outside as inputs, or a tensor sharing the
    array's memory; True otherwise (the write is replayed, and such inputs
    are refused from now on: :func:`check_input`, :func:`adopt`)."""
    table = cap.recording.arrays
    rec = cap.recording.recorder
    if table.adopted or any(_overlaps(array, t) for _, t, _ in rec.inputs):
        cap.break_graph("numpy-call", "a write into a NumPy array from outside whose memory "
                        "the graph reads as an input")
        return False
    table.written.append(array)
    return True


def check_input(table, tensor):
    """Raise Unrepresentable if ``tensor`` (about to be a graph input)
    shares memory with an array from outside that a replayed write
    changes (:func:`outside_write`)."""
    if any(_overlaps(array, tensor) for array in table.written):
        raise Unrepresentable("numpy-call", "a tensor sharing memory with a NumPy array from "
                              "outside that the function writes")


def _overlaps(array, tensor):
    """``array``'s bytes and ``tensor``'s storage overlap."""
    np = _numpy()
    byte_bounds = getattr(np, "byte_bounds", None)  # (NumPy 1; 2 moved it)
    if byte_bounds is None:
        from numpy.lib.array_utils import byte_bounds
    with torch._C.DisableTorchFunction():
        if tensor.device.type != "cpu":
            return False
        storage = tensor.untyped_storage()
        start, size = storage.data_ptr(), storage.nbytes()
    low, high = byte_bounds(array)
    return low < start + size and start < high


def _adopt_all(cap, values, depth=2):
    """Adopt the outside arrays among ``values`` (and in their tuples and
    lists)."""
    for value in values:
        tp = type(value)
        if tp is ndarray_type():
            adopt(cap, value)
        elif depth and (tp is tuple or tp is list):
            _adopt_all(cap, value, depth - 1)


def may_take_arrays(fn):
    """True if ``fn`` is a callee :func:`divert` mirrors or converts: a
    NumPy function or ufunc, a method of an array, or torch's
    ``from_numpy``/``as_tensor``/``asarray``/``tensor``."""
    np = _NUMPY or _numpy()
    if np is None:
        return False
    tp = type(fn)
    if tp is np.ufunc or tp is type(np.clip):
        return True
    if tp is _BUILTIN_METHOD:
        return type(fn.__self__) is np.ndarray or _conversion(fn) is not None
    return tp is _METHOD_DESCRIPTOR and fn.__objclass__ is np.ndarray



def followed(cap, *values):
    """True if one of ``values`` is a tracked array or scalar, adopting the
    outside arrays among them first (an operator's operands, an indexed
    array, an attribute's owner)."""
    nd = ndarray_type()
    table = cap.recording.arrays
    adopted = [type(v) is nd and adopt(cap, v) for v in values]  # (all of them)
    return any(adopted) or any(table.tracks(v) for v in values)


# -- calls ------------------------------------------------------------------------
def divert(cap, fn, args, kwargs):
    """The function ``(vm, fn, args, kwargs)`` that makes this call with the
    tracked arrays followed, or None (:func:`check_call` then vets it)."""
    table = cap.recording.arrays
    if may_take_arrays(fn):
        _adopt_all(cap, args)
        if kwargs:
            _adopt_all(cap, kwargs.values())
        owner = getattr(fn, "__self__", None)
        if owner is not None:
            adopt(cap, owner)
    if not (table.carried(args) or kwargs and table.carried(kwargs) or table.carried(fn)):
        return None
    np = _numpy()
    if _conversion(fn) is not None:
        return _to_torch_call
    if fn is float and len(args) == 1 and not kwargs:
        return _float_call
    if fn in _NEUTRAL:  # len(a), isinstance(a, np.ndarray): metadata the guards fix
        return calls.call
    method = _method_of(table, fn, args)
    if method is not None:
        owner, name, _ = method
        if name == "item" and not kwargs:
            return _float_call
        return _method_call if name in METHODS else None
    if type(fn) is np.ufunc or is_pure_function(fn) and fn.__name__ in PURE \
            and fn.__name__ not in _NOT_MIRRORED:
        return _function_call
    return None


def check_call(cap, fn, args, kwargs):
    """True if a call not :func:`divert`\\ ed may receive tracked arrays
    (interpreted Python code, ``list.append`` of the run's own list); any
    other callee breaks the graph first, then False."""
    table = cap.recording.arrays
    if not (table.carried(args) or kwargs and table.carried(kwargs) or table.carried(fn)):
        return True
    if runs_interpreted(fn) or (type(getattr(fn, "__self__", None)) is list
                                and getattr(fn, "__name__", "") == "append"):
        return True
    if type(fn) is _BUILTIN_METHOD and (getattr(fn, "__module__", None) or "").startswith(
            "torch") and not table.carried(fn):
        return True  # torch.tensor(a): the recording mode's tensor_op vets it
    cap.break_graph("numpy-call", "%s() received a NumPy array the graph computes"
                    % getattr(fn, "__qualname__", type(fn).__name__))
    return False


def _function_call(vm, fn, args, kwargs):
    tnp = _tnp()
    mirror = _MIRROR_FIXES.get(fn.__name__) or getattr(tnp, fn.__name__, None)
    return _mirrored(vm.capture, fn.__name__ + "()", fn, mirror, args, kwargs,
                     plain_result=fn.__name__ in _METADATA_FUNCTIONS)


def _where(condition, *values):
    """``torch._numpy.where``, whose two Python scalars (``np.where(m, 1.0,
    0.1)``) give torch's default dtype (float32) where NumPy gives its own
    (float64): such a pair is made NumPy's default dtype first."""
    tnp = _tnp()
    if len(values) == 2 and all(type(v) in (int, float, bool, complex) for v in values):
        values = tuple(tnp.asarray(v) for v in values)
    return tnp.where(condition, *values)


_MIRROR_FIXES = {"where": _where}


def _method_of(table, fn, args):
    """``(owner, name, arguments)`` if ``fn(*args)`` calls a method of a
    tracked array or scalar: bound (``a.sum``), or its descriptor with the
    owner first (3.11's ``LOAD_METHOD``: ``ndarray.sum(a)``); else None."""
    tp = type(fn)
    if tp is _BUILTIN_METHOD and table.tracks(fn.__self__):
        return fn.__self__, fn.__name__, tuple(args)
    if tp is _METHOD_DESCRIPTOR and args and table.tracks(args[0]) \
            and isinstance(args[0], fn.__objclass__):
        return args[0], fn.__name__, tuple(args[1:])
    return None


def _method_call(vm, fn, args, kwargs):
    cap = vm.capture
    owner, name, rest = _method_of(cap.recording.arrays, fn, args)
    return _mirrored(cap, "ndarray.%s()" % name, lambda *a, **kw: getattr(owner, name)(*a, **kw),
                     lambda a, *more, **kw: getattr(a, name)(*more, **kw),
                     rest, kwargs, (owner,))


# torch's converters from NumPy, and the node each one is in the graph: a
# view of the array's tensor (it shares the array's memory), or a copy.
_CONVERSIONS = ((torch.from_numpy, "view_as"), (torch.as_tensor, "view_as"),
                (torch.asarray, "view_as"), (torch.tensor, "clone"))


def _conversion(fn):
    """How ``fn`` converts a NumPy value (:data:`_CONVERSIONS`), or None
    for any other callee."""
    for converter, how in _CONVERSIONS:
        if fn is converter:
            return how
    return None


def _to_torch_call(vm, fn, args, kwargs):
    """A converter called by the run with a tracked array or scalar."""
    made = _converted(vm.capture, fn, args, kwargs)
    if made is MISSING:
        return _refuse_call(vm.capture, fn, args, kwargs, "torch.%s() of a NumPy value the "
                            "graph computes, with other arguments" % fn.__name__)
    return made


def tensor_op(cap, func, name, args, kwargs):
    """A torch function of the recording mode (called by native or torch
    code) that received a tracked array or scalar: a converter as in
    :func:`_converted`; any other breaks the graph (then None)."""
    made = _converted(cap, func, args, kwargs)
    if made is not MISSING:
        return made
    cap.break_graph("numpy-call", "%s() of a NumPy array the graph computes" % (name or func))
    return None


def _converted(cap, fn, args, kwargs):
    """``torch.from_numpy(a)``/``as_tensor``/``asarray`` of a tracked
    array: a view node of its tensor; ``torch.tensor(a)`` of a tracked
    array or scalar: a copy.  MISSING for any other call."""
    how = _conversion(fn)
    value = args[0] if len(args) == 1 and not kwargs else None
    if how is None or not cap.recording.arrays.tracks(value) \
            or (how == "view_as" and type(value) is not _numpy().ndarray):
        return MISSING
    return _to_tensor(cap, fn, value, how)


def _to_tensor(cap, fn, array, how):
    if cap.speculation.depth:
        cap.break_graph("numpy-call", "torch.%s() of a NumPy array inside a speculative arm"
                        % fn.__name__)
        return fn(array)
    rec = cap.recording.recorder
    try:
        source = cap.recording.arrays.tensor(array, rec)
    except Unrepresentable as e:
        cap.break_graph(e.kind, e.message)
        return fn(array)
    with torch._C.DisableTorchFunction():
        result = fn(array)
        differs = result.dtype != source.dtype or result.shape != source.shape
        why = "torch.%s() of a NumPy value gave %s %s, its graph tensor %s %s" % (
            fn.__name__, result.dtype, tuple(result.shape), source.dtype, tuple(source.shape))
    if differs:
        cap.break_graph("numpy-call", why)
        return result
    operands = (source, source) if how == "view_as" else (source,)
    rec.record(how, operands, {}, result, method=True)
    if how == "view_as":
        cap.recording.arrays.rebind(array, result)  # (shares the array's memory)
    return result


def _float_call(vm, fn, args, kwargs):
    """``float(s)``/``s.item()`` of a tracked floating NumPy scalar (or
    0-d array): a tracked float."""
    cap = vm.capture
    np = _numpy()
    table = cap.recording.arrays
    method = _method_of(table, fn, args)
    scalar = method[0] if method is not None else args[0]
    floating = isinstance(scalar, np.floating) or type(scalar) is np.ndarray \
        and scalar.ndim == 0 and scalar.dtype.kind == "f"
    if not (floating and table.tracks(scalar)) or (method is not None and method[2]) \
            or cap.speculation.depth:
        return _refuse_call(cap, fn, args, kwargs, "%s() of a NumPy value the graph computes"
                            % getattr(fn, "__name__", "float"))
    result = fn(*args)
    rec = cap.recording.recorder
    tensor = table.tensor(scalar, rec)
    node = rec.node_for(tensor)
    graph = rec.graph
    with torch._C.DisableTorchFunction():
        device = tensor.device
    cap.recording.scalars.add(result, rec, lambda: graph.call_method(
        "to", (graph.call_method("reshape", (node, ())), torch.float64)), device)
    return result


def _refuse_call(cap, fn, args, kwargs, why):
    cap.break_graph("numpy-call", why)
    return fn(*args, **(kwargs or {}))


# -- operators, index reads, attributes ------------------------------------------
def binary_op(cap, nb, a, b):
    """``a <op> b`` (BINARY_OP's ``nb``) with a tracked operand: mirrored,
    or MISSING when the capture's usual path must run it (an operand is a
    tensor: that path breaks; in place: break here)."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return MISSING
    if nb >= 13:
        return _in_place(cap, nb, a, b)
    op = NATIVE_BINARY[nb]
    return _mirrored(cap, "an operator", op, op, (a, b), {})


def _in_place(cap, nb, a, b):
    """``a -= b`` (``a`` a tracked array): the torch in-place op on its
    tensor, in the graph.  NumPy's result is computed out of place first
    (pure) and must be castable to ``a``'s dtype (NumPy's ``same_kind``
    rule; else NumPy raises, natively).  Where ``a`` shares its tensor's
    memory (``t.numpy()``, an array from outside) the torch op writes
    both; else NumPy's own in-place op runs too.  Both must then hold
    NumPy's values; else ``a`` is put back and the operator breaks and
    runs natively (MISSING)."""
    np = _numpy()
    table = cap.recording.arrays
    symbol = NB_SYMBOL.get(nb, "?")
    if type(a) is not np.ndarray or not table.tracks(a) or cap.speculation.depth:
        return _refuse_in_place(cap, symbol, "not an array the graph follows")
    rec = cap.recording.recorder
    start = rec.mark()
    try:
        with _MirrorWatch():
            mirror_a, mirror_b = _mirror_args(cap, (a, b))
    except _Refused as e:
        return _refuse_in_place(cap, symbol, str(e))
    with warnings.catch_warnings(record=True) as raised:
        warnings.simplefilter("always")
        expected = np.asarray(NATIVE_BINARY[nb - 13](a, b))
    if raised or expected.shape != a.shape \
            or not np.can_cast(expected.dtype, a.dtype, "same_kind"):
        return _refuse_in_place(cap, symbol, "NumPy would warn, broadcast or refuse the cast")
    expected = expected.astype(a.dtype)
    tensor = table.tensor(a, rec)
    with torch._C.DisableTorchFunction():
        shared = tensor.data_ptr() == a.__array_interface__["data"][0] \
            and tuple(s * a.itemsize for s in tensor.stride()) == a.strides
    saved = a.copy()
    why = None
    try:
        with _MirrorWatch():
            NATIVE_BINARY[nb](mirror_a, mirror_b)  # (torch._numpy's in-place operator)
    except _Refused as e:
        why = str(e)
    except Exception as e:  # noqa: BLE001 - (a mirror that cannot: NumPy decides)
        why = "its torch._numpy mirror raised %s: %s" % (type(e).__name__, e)
    if why is None and not shared:
        NATIVE_BINARY[nb](a, b)  # (NumPy's own in-place operator on its own memory)
    if why is None:
        with torch._C.DisableTorchFunction():
            values = tensor.detach().numpy()
        if not (_close(values, expected) and _close(a, expected)):
            why = "its mirror's values differ from NumPy's"
    if why is not None:
        a[...] = saved  # (whatever the mirror wrote through shared memory)
        if not shared:
            with torch._C.DisableTorchFunction():
                tensor.copy_(torch.from_numpy(saved))
        rec.roll_back(start)
        return _refuse_in_place(cap, symbol, why)
    return a


def _refuse_in_place(cap, symbol, why):
    cap.break_graph("numpy-call", "%r on a NumPy array the graph computes (%s)" % (symbol, why))
    return MISSING


_UNARY = {"UNARY_NEGATIVE": operator.neg, "UNARY_INVERT": operator.invert,
          "UNARY_POSITIVE": operator.pos}


def unary_op(cap, opname, value):
    """``-a``, ``~a``, ``+a`` of a tracked array: mirrored, or MISSING."""
    op = _UNARY.get(opname)
    if op is None:
        return MISSING
    return _mirrored(cap, "an operator", op, op, (value,), {})


def compare(cap, op, a, b):
    """``a <op> b`` with a tracked operand: mirrored, or MISSING."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return MISSING
    fn = NATIVE_COMPARE[op]
    return _mirrored(cap, "a comparison", fn, fn, (a, b), {})


def getitem(cap, container, key):
    """``a[key]`` of a tracked array, ``key`` plain (ints, slices, None,
    Ellipsis, tuples of them) or a tracked bool array: mirrored."""
    return _mirrored(cap, "an index read", operator.getitem, operator.getitem,
                     (container, key), {})


def load_attr(cap, obj, name):
    """``a.name`` of a tracked array or scalar: metadata as plain values,
    ``a.T`` mirrored, a method of :data:`METHODS` (the call is mirrored);
    MISSING after a break for any other attribute."""
    if name == "T":
        return _mirrored(cap, "ndarray.T", _transpose, _transpose, (obj,), {})
    if name not in _METADATA and name not in METHODS and name != "item":
        cap.break_graph("numpy-call", "reading .%s of a NumPy array the graph computes" % name)
    return getattr(obj, name)


def _transpose(array):
    return array.T


# -- the mirror ---------------------------------------------------------------------
def _mirrored(cap, what, real, mirror, args, kwargs, leading=(), plain_result=False):
    """Run ``real(*args, **kwargs)`` (pure, ``leading`` its tracked
    owner), then ``mirror(*leading, *args, **kwargs)`` on the tracked
    tensors; track the result if they agree, else break (the mirror's
    nodes erased) and run ``real`` again natively.  ``plain_result``: a
    plain Python result (metadata: ``np.shape(a)``) is fine when the
    mirror gives it too."""
    kwargs = kwargs or {}
    if cap.speculation.depth:  # (an arm of a data-dependent branch: not merged)
        return _break_and_rerun(cap, what, real, args, kwargs, "inside a speculative arm")
    if mirror is None:
        return _break_and_rerun(cap, what, real, args, kwargs, "torch._numpy has no mirror "
                                "of it")
    rec = cap.recording.recorder
    start = rec.mark()
    call_args = tuple(leading) + tuple(args)
    try:  # (before the real call: an argument such as out= makes it impure)
        with _MirrorWatch():  # (constant arguments are made by torch._numpy)
            mirror_args = _mirror_args(cap, call_args)
            mirror_kwargs = _mirror_args(cap, kwargs)
        why = None
    except _Refused as e:
        why = str(e)
    if why is None:
        with warnings.catch_warnings(record=True) as raised:
            warnings.simplefilter("always")
            result = real(*args, **kwargs)
        if raised:
            why = "raised a %s the mock would not replay" % raised[0].category.__name__
    if why is None:
        try:
            with _MirrorWatch():
                mirrored = mirror(*mirror_args, **mirror_kwargs)
        except _Refused as e:
            why = str(e)
        except Exception as e:  # (torch._numpy lacks a case NumPy has)
            why = "its torch._numpy mirror raised %s: %s" % (type(e).__name__, e)
        if not cap.breaks.active:
            return result  # (the mirror broke the graph: the call reruns natively)
    if why is None:
        why = _track(cap, result, mirrored, call_args, plain_result)
    if why is not None:
        rec.roll_back(start)
        return _break_and_rerun(cap, what, real, args, kwargs, why)
    return result


def _break_and_rerun(cap, what, real, args, kwargs, why):
    cap.break_graph("numpy-call", "%s on a NumPy array the graph computes: %s" % (what, why))
    return real(*args, **kwargs)  # (pure: run again natively, its warnings eager's)


class _Refused(Exception):
    pass


class _MirrorWatch(torch.overrides.TorchFunctionMode):
    """Inside the recording mode while a mirror runs.  A torch call that
    reads tensor data into Python refuses the mirror (its Python would
    decide on the values natively).  A tensor factory called without a
    dtype gets the dtype it made explicitly: ``torch._numpy`` sets torch's
    default dtype to NumPy's (float64) around its factories, a global
    state the graph would not replay.  Every call then goes on to the
    recording mode."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in _DATA_READS:
            raise _Refused("its mirror reads tensor data (%s)" % name)
        kwargs = kwargs or {}
        if name in _FACTORIES and kwargs.get("dtype") is None:
            with torch._C.DisableTorchFunction():
                made = func(*args, **kwargs)
            if isinstance(made, Tensor):
                kwargs = dict(kwargs, dtype=made.dtype)
        return func(*args, **kwargs)


def _mirror_args(cap, value, depth=4):
    """``value`` with tracked arrays and scalars replaced by
    ``torch._numpy`` arrays of their tensors and NumPy dtypes by their
    names; anything else that is not plain refuses the mirror."""
    np = _numpy()
    table = cap.recording.arrays
    tp = type(value)
    if table.tracks(value) or tp is np.ndarray and adopt(cap, value):  # (from outside)
        return _tnp().ndarray(table.tensor(value, cap.recording.recorder))
    if tp in (int, float, bool, complex, str, type(None), slice, type(Ellipsis)):
        return value
    if tp is tuple or tp is list:
        if depth:
            return tp(_mirror_args(cap, v, depth - 1) for v in value)
    elif tp is dict:
        if depth and "out" not in value and "where" not in value:
            return {k: _mirror_args(cap, v, depth - 1) for k, v in value.items()}
    elif isinstance(value, np.generic) and value.dtype.kind in _NUMERIC_KINDS:
        return _tnp().asarray(value.item(), dtype=value.dtype.name)  # np.float32(2): a constant
    elif tp is np.ndarray and value.dtype.kind in _NUMERIC_KINDS \
            and value.size <= _CONSTANT_ELEMENTS \
            and not cap.recording.refgraph.is_outside(value):
        # An array the run made from plain values (np.linspace(0, 1, 5)),
        # which the guards fix: its values as a constant of the graph.
        return _tnp().asarray(value.tolist(), dtype=value.dtype.name).reshape(value.shape)
    elif isinstance(value, np.dtype):
        return value.name
    elif tp is type and issubclass(value, np.generic):
        return np.dtype(value).name
    elif tp is type and value in (int, float, bool, complex):
        return value
    raise _Refused("a %s argument" % tp.__name__)


def _track(cap, result, mirrored, operands, plain_result):
    """Track ``result`` with the tensor of ``mirrored``; the reason they
    disagree, or None."""
    np = _numpy()
    tnp = _tnp()
    if type(result) is not np.ndarray and not isinstance(result, np.generic):
        with torch._C.DisableTorchFunction():
            plain = mirrored.tolist() if isinstance(mirrored, tnp.ndarray) else mirrored
        if plain_result and type(result) in (int, tuple) and plain == result:
            return None  # metadata (np.ndim(a), np.shape(a)): a plain value
        return "it returned a %s" % type(result).__name__
    if not isinstance(mirrored, tnp.ndarray):
        return "its mirror returned a %s" % type(mirrored).__name__
    tensor = mirrored.tensor
    expected = np.asarray(result)
    with torch._C.DisableTorchFunction():
        if _NUMPY_NAMES.get(tensor.dtype) != expected.dtype.name:
            return "its mirror gave %s, NumPy %s" % (tensor.dtype, expected.dtype.name)
        if tensor.numel() != expected.size:
            return "its mirror gave shape %s, NumPy %s" % (tuple(tensor.shape), expected.shape)
        values = tensor.detach().numpy()
        if not _close(values.reshape(expected.shape), expected):
            return "its mirror's values differ from NumPy's"
        sharing = _sharing(cap, result, tensor, operands)
    if sharing == "differs":
        return "NumPy made a view where its mirror copied"
    rec = cap.recording.recorder
    with torch._C.DisableTorchFunction():
        shape = tuple(tensor.shape)
    if shape != expected.shape:
        with torch._C.DisableTorchFunction():
            reshaped = tensor.reshape(expected.shape)
        rec.record("reshape", (tensor, expected.shape), {}, reshaped, method=True)
        tensor = reshaped
    if sharing == "clone":
        with torch._C.DisableTorchFunction():
            cloned = tensor.clone()
        rec.record("clone", (tensor,), {}, cloned, method=True)
        tensor = cloned
    cap.recording.arrays.add(result, rec, tensor)
    return None


def _close(got, expected):
    np = _numpy()
    if expected.dtype.kind in "fc":
        tolerance = 8 * np.finfo(expected.dtype).eps
        return np.allclose(got, expected, rtol=tolerance, atol=tolerance, equal_nan=True)
    return np.array_equal(got, expected)


def _sharing(cap, result, tensor, operands):
    """How the mirror's memory relates to NumPy's: "same" (both copies, or
    the same view of the same operand), "clone" (NumPy copied, the mirror
    viewed an operand's tensor), or "differs"."""
    np = _numpy()
    table = cap.recording.arrays
    rec = cap.recording.recorder
    outcome = "same"
    for operand in operands:
        if not (type(operand) is np.ndarray and table.tracks(operand)):
            continue
        source = table.tensor(operand, rec)
        numpy_view = type(result) is np.ndarray and np.shares_memory(result, operand)
        torch_view = tensor.untyped_storage().data_ptr() == source.untyped_storage().data_ptr()
        if numpy_view and not (torch_view and _same_view(result, operand, tensor, source)):
            return "differs"
        if torch_view and not numpy_view:
            outcome = "clone"
    return outcome


def _same_view(result, operand, tensor, source):
    """The view ``result`` of ``operand`` starts at the same element and
    steps by the same strides as ``tensor`` of ``source``."""
    size = result.itemsize
    offset = result.__array_interface__["data"][0] - operand.__array_interface__["data"][0]
    torch_offset = tensor.data_ptr() - source.data_ptr()
    return offset == torch_offset and result.shape == tuple(tensor.shape) \
        and result.strides == tuple(s * size for s in tensor.stride())


def _tnp():
    import torch._numpy as tnp

    return tnp


# -- instructions -------------------------------------------------------------------
# Where a tracked array may go: where a tracked float only moves (the
# rules of :mod:`.scalars`, registered in :mod:`..rules`), less the
# instructions that format or negate it, plus those whose data-model hooks
# mirror it (``a.T``, ``a[i]``, ``a > 0``, ``~m``: :func:`load_attr`,
# :func:`getitem`, :func:`compare`, :func:`unary_op`; BINARY_OP is
# :func:`binary_op`) and those that build containers around it.
_HOOKED = {"LOAD_ATTR": 0, "LOAD_METHOD": 0, "BINARY_SUBSCR": 1, "BINARY_SLICE": 0,
           "COMPARE_OP": 0, "UNARY_INVERT": 0, "UNARY_POSITIVE": 0,
           # building containers: the values below only move, the iterable
           # on top is read natively (a tracked one is consumed)
           "LIST_EXTEND": 1, "SET_UPDATE": 1, "DICT_UPDATE": 1, "DICT_MERGE": 1,
           "BUILD_CONST_KEY_MAP": 0}
_MOVES = (rules.keys("float_flow", "float_move") - {
    "FORMAT_VALUE", "CONVERT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "BUILD_STRING"}) \
    | {name for name, n in _HOOKED.items() if not n}
_CONSUMES_TOP = dict(rules.arguments("float_flow", "float_reads_top"))
_CONSUMES_TOP.update((name, n) for name, n in _HOOKED.items() if n)


def check_instruction(cap, frame, ins):
    """Break before an instruction that would consume a tracked array in a
    way this module does not follow (see the module docstring)."""
    name = ins.opname
    if name in _MOVES:
        return
    table = cap.recording.arrays
    stack = frame.stack
    if name in STORES and stored_where_unseen(cap, table, name, stack):
        cap.break_graph("numpy-call", "%s of a NumPy array the graph computes into an object "
                        "whose later native use could not be checked" % name)
        return
    depth = ins.arg if name == "BUILD_SLICE" else _CONSUMES_TOP.get(name)
    if depth is not None:
        consumed = any(table.tracks(v) for v in stack[len(stack) - depth:])
    else:
        consumed = any(table.carried(v) for v in stack)
    if consumed:
        cap.break_graph("numpy-call", "%s on a NumPy array the graph computes" % name)

