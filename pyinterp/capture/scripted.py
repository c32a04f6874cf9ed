"""A TorchScript function (``@torch.jit.script``) called in a traced
function.

A ``ScriptFunction`` runs in the TorchScript interpreter, C code with no
Python code object: called natively, its ops are unseen (an
``opaque-native-call`` break).  torch keeps the Python function it was
compiled from (``fn._torchdynamo_inline``, which Dynamo inlines); the
capture interpreter runs that function instead, and its ops are recorded
like the program's own.

The two agree where the arguments fit the function's schema (TorchScript
checks their types; Python would not) and the body runs through.  So,
before interpreting it:

* the arguments are checked against ``fn.schema`` as TorchScript checks
  them; a mismatch calls ``fn`` natively, which raises eager's error;
* the original runs once as a speculative arm
  (:func:`.autograd_functions.speculate`): if it raises (a ``raise`` in the
  body: TorchScript raises ``torch.jit.Error`` where Python raises the
  exception itself), ``fn`` is called natively and raises eager's error;
  if the arm stops for another reason (an in-place write of an argument,
  data-dependent control flow, an impure call), the call keeps its break
  and runs natively.

Only a *scripted* function is interpreted: ``torch.jit.trace`` also makes a
``ScriptFunction`` with ``_torchdynamo_inline``, but its graph is the
trace of one run (control flow fixed), which the Python function need not
follow: a traced function keeps its break.  The attribute read is guarded
(through the interpreter), so a rebound ``_torchdynamo_inline`` recaptures.
"""
import inspect
import types

import torch

from .autograd_functions import Raised, speculate

ScriptFunction = torch.jit.ScriptFunction


def original(fn):
    """The Python function ``fn`` (a ``ScriptFunction``) was scripted from,
    or None (a traced function, or none kept)."""
    source = inspect.getattr_static(fn, "_torchdynamo_inline", None)
    if type(source) is not types.FunctionType:
        return None
    cache = getattr(torch.jit._state, "_jit_caching_layer", None)  # (function -> its name)
    scripted = cache.get(source, None) if cache is not None else None
    return source if scripted == fn.qualified_name else None


def call(vm, fn, args, kwargs):
    """``fn(*args, **kwargs)`` for a ``ScriptFunction`` that has an
    :func:`original`: that Python interpreted (recorded), or the native call
    (see the module docstring)."""
    cap = vm.capture
    source = vm.load_attr(fn, "_torchdynamo_inline")  # (read through the interpreter: guarded)
    if not _fits_schema(fn, args, kwargs):
        return _native_raising(cap, fn, args, kwargs, "arguments its schema refuses")
    reason = speculate(cap, lambda: vm.call(source, tuple(args), kwargs or None), writable=None)
    if reason is None:
        return vm.call(source, tuple(args), kwargs or None)
    if isinstance(reason, Raised):
        return _native_raising(cap, fn, args, kwargs, "%s, on the interpreted Python only"
                               % reason)
    cap.break_graph("opaque-native-call", "the TorchScript function %s runs natively: its "
                    "Python cannot be interpreted in its place (%s)"
                    % (fn.qualified_name, reason))
    return fn(*args, **kwargs) if kwargs else fn(*args)


def _native_raising(cap, fn, args, kwargs, why):
    """The native call, expected to raise eager's error (as TorchScript
    raises it); a break if it returns after all."""
    with cap.breaks.paused():
        result = fn(*args, **kwargs) if kwargs else fn(*args)
    cap.break_graph("opaque-native-call", "the TorchScript function %s ran natively (%s)"
                    % (fn.qualified_name, why))
    return result


def _fits_schema(fn, args, kwargs):
    """The arguments pass TorchScript's own check of ``fn.schema``."""
    try:
        with torch._C.DisableTorchFunction():
            torch._C._check_schema_allow_fake_script_object(fn.schema, *args, **(kwargs or {}))
    except (RuntimeError, TypeError):
        return False
    return True
