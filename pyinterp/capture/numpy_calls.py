"""NumPy functions of plain Python values: pure, so not breaks.

``np.prod(x.shape)``, ``np.tile([1.0, 2.0], 2)``: most of NumPy's
functions are ``_ArrayFunctionDispatcher`` objects whose dispatcher and
implementation are Python code, which the capture would see as a foreign
callback run natively (a ``native-callback`` break, :mod:`.callbacks`).
On plain values they compute a result from their arguments alone, and the
arguments' contents are guarded already (the caller consumes them, as for
any native call), so the result is the same on every call the guards
admit.  The rule (:func:`pure_call`):

* the callee is one of the functions in :data:`PURE` (no callback, no
  write to an argument, no file, no global print options), one of the
  plain Python functions in :data:`PURE_PYTHON` (``np.ones``: the
  interpreter hands them to the native-call rules instead of
  interpreting them, ``CaptureInterpreter.call_function``), or a NumPy
  ufunc called without ``out=``/``where=``;
* every argument is plain: ``int``, ``float``, ``bool``, ``complex``,
  ``str``, None, a ``slice``, ``torch.Size``, a NumPy scalar or dtype (or
  a numeric type standing for one, ``np.int32``, ``float``), an
  ``np.ndarray`` (exactly) of a numeric dtype, and tuples, lists and dicts
  of those (the caller already breaks on objects from outside).  A tensor,
  or any other object (whose ``__array__`` or ``__len__`` may be Python
  code), leaves the call to the usual rules;
* the call runs natively, unwatched; a NumPy warning it raises (a
  ``RuntimeWarning`` of an empty mean) would not be replayed: then the
  graph breaks, and the call runs again natively (pure: the same result)
  so that the warning is eager's.

The result (a NumPy scalar or array) is a value of the run; ``int()`` or
``float()`` of it is a plain number, and ``torch.tensor(array)`` of an
array the run made (not one from outside, whose contents are not guarded)
records ``torch.tensor(array.tolist(), dtype=<its dtype>)``: the same
values and dtype, a constant of the graph, as ``torch.tensor`` copies the
array when it is called (:func:`tensor_arguments`; an empty array with
more than one dimension would lose its shape in a list, so it stays a
break, as does ``torch.as_tensor``/``torch.from_numpy``, which share the
array's memory).  Where a NumPy value meets any other torch op it is an
``unsupported-value`` break as before.  Nothing here imports NumPy: a
callee is NumPy's only if NumPy is loaded already.

Records (:class:`~.state.Capture`): owns none; reads ``breaks`` (through
``break_graph``) and ``recording.refgraph`` (is an array from outside?).
"""
import sys
import types
import warnings

import torch

PURE = frozenset({
    "all", "allclose", "amax", "amin", "any", "append", "argmax", "argmin", "argsort",
    "around", "array_equal", "atleast_1d", "atleast_2d", "atleast_3d", "average",
    "broadcast_to", "clip", "column_stack", "concat", "concatenate", "cross", "cumprod",
    "cumsum", "diag", "diagonal", "diff", "dot", "dstack", "einsum", "expand_dims", "flip",
    "fliplr", "flipud", "full_like", "hstack", "inner", "isclose", "kron", "linspace",
    "logspace", "max", "mean", "median", "meshgrid", "min", "moveaxis", "ndim", "ones_like",
    "outer", "pad", "percentile", "prod", "ptp", "quantile", "ravel", "repeat", "reshape",
    "result_type", "roll", "round", "searchsorted", "shape", "size", "sort", "split",
    "squeeze", "stack", "std", "sum", "swapaxes", "take", "tensordot", "tile", "trace",
    "transpose", "tril", "triu", "var", "vstack", "where", "zeros_like",
})
PURE_PYTHON = frozenset({"ones", "full", "identity", "eye", "tri"})
_PLAIN_SCALARS = (int, float, bool, complex, str, type(None), slice, torch.Size)
_PLAIN_TYPES = (int, float, bool, complex)
_NUMERIC_KINDS = frozenset("biufc")


def pure_call(fn, args, kwargs):
    """True if ``fn(*args, **kwargs)`` is a pure NumPy call (see the module
    docstring)."""
    np = sys.modules.get("numpy")
    if np is None:
        return False
    if type(fn) is np.ufunc:
        if kwargs and ("out" in kwargs or "where" in kwargs):
            return False
    elif not is_pure_function(fn):
        return False
    return all(_plain(np, v, 4) for v in tuple(args) + tuple((kwargs or {}).values()))


def is_pure_function(fn):
    """True if ``fn`` is one of NumPy's functions in :data:`PURE` (a
    dispatcher) or :data:`PURE_PYTHON` (a plain Python function, such as
    ``np.ones``, which the capture would otherwise interpret)."""
    np = sys.modules.get("numpy")
    name = getattr(fn, "__name__", None)
    if np is None or getattr(fn, "__module__", None) != "numpy" \
            or getattr(np, name, None) is not fn:
        return False
    if type(fn) is types.FunctionType:
        return name in PURE_PYTHON
    return type(fn).__name__ == "_ArrayFunctionDispatcher" and name in PURE


def _plain(np, value, depth):
    tp = type(value)
    if tp in _PLAIN_SCALARS or isinstance(value, (np.generic, np.dtype)):
        return tp is not np.object_
    if tp is type:  # a dtype given as a type: np.int32, float
        return value in _PLAIN_TYPES or issubclass(value, np.number) or value is np.bool_
    if tp is np.ndarray:
        return value.dtype.kind in _NUMERIC_KINDS
    if tp in (tuple, list) and depth:
        return all(_plain(np, v, depth - 1) for v in value)
    if tp is dict and depth:
        return all(_plain(np, v, depth - 1) for v in value.values())
    return False


def run(cap, fn, args, kwargs):
    """Run a pure NumPy call natively (:func:`pure_call` said so)."""
    with warnings.catch_warnings(record=True) as raised:
        warnings.simplefilter("always")
        result = fn(*args, **(kwargs or {}))
    if raised:
        cap.break_graph("native-callback", "%s() raised a %s the mock would not replay"
                        % (fn.__name__, raised[0].category.__name__))
        return fn(*args, **(kwargs or {}))
    return result


def tensor_arguments(cap, args, kwargs):
    """The arguments to record for ``torch.tensor(*args, **kwargs)``: an
    array the run made replaced by its values as a list, its dtype made
    explicit (unless given); else ``args`` and ``kwargs`` unchanged."""
    np = sys.modules.get("numpy")
    array = args[0]
    if np is None or type(array) is not np.ndarray or array.dtype.kind not in _NUMERIC_KINDS \
            or (array.size == 0 and array.ndim > 1) \
            or cap.recording.refgraph.is_outside(array):
        return args, kwargs
    explicit = dict(kwargs)
    explicit.setdefault("dtype", _TORCH_DTYPES.get(array.dtype.str[1:]))
    if explicit["dtype"] is None:
        return args, kwargs  # (a dtype torch has no name for: the usual break)
    return (array.tolist(),) + tuple(args[1:]), explicit


_TORCH_DTYPES = {"b1": torch.bool, "u1": torch.uint8, "i1": torch.int8, "i2": torch.int16,
                 "i4": torch.int32, "i8": torch.int64, "f2": torch.float16,
                 "f4": torch.float32, "f8": torch.float64, "c8": torch.complex64,
                 "c16": torch.complex128}
