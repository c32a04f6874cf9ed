"""Calls the capture handles itself, by identity of the callee.

* ``print``, logging (logger methods and module functions),
  ``warnings.warn`` and ``torch.set_printoptions`` run now and are replayed
  by the mock (:func:`_deferred`);
* ``hasattr``/``getattr``/``len``/``__import__`` go through the
  interpreter's own attribute and length rules, so their reads are guarded;
* ``torch.compiler.is_compiling()`` is True while capturing.

:data:`SPECIAL_CALLS` maps ``id(fn)`` to ``(fn, handler)``; a handler is
called as ``handler(vm, fn, args, kwargs)``.

Records (:class:`~.state.Capture`): owns none; reads ``breaks`` (a deferred
call pauses capture through :meth:`.state.BreakState.paused`) and
``recording``.
"""
import logging
import types
import warnings

import torch

from ..codegen.trampoline import trampoline
from ..interp import calls
from ..refgraph.sources import Root

Tensor = torch.Tensor
FunctionType = types.FunctionType
MethodType = types.MethodType
LOGGER_METHODS = ("debug", "info", "warning", "warn", "error", "exception", "critical", "log")


def deferred(vm, fn, args, kwargs):
    """``print``, logging and ``warnings.warn``: run now, replay in the mock.

    The call goes through a trampoline whose code carries the user's file,
    line and function name, so that log records and warnings point at the
    user's line both now and on every replay."""
    cap = vm.capture
    vm._no_writes_while_speculating("%s()" % getattr(fn, "__name__", "a deferred call"))
    site = cap.site()
    frame = vm.top
    if fn is warnings.warn and (kwargs.get("stacklevel", args[2] if len(args) > 2 else 1) != 1):
        cap.break_graph("unsupported-value", "warnings.warn with stacklevel other than 1")
        return calls.call(vm, fn, args, kwargs)
    if isinstance(fn, FunctionType) and args and isinstance(args[0], logging.Logger):
        fn, args = MethodType(fn, args[0]), args[1:]  # logger.info(...): replay on that logger
    if not _printable(args, kwargs):
        cap.break_graph("unsupported-value", "%s() of an object the mock cannot rebuild"
                        % getattr(fn, "__name__", "call"))
        return calls.call(vm, fn, args, kwargs)
    name = frame.code.co_name if frame is not None else "<traced>"
    globals_ = frame.globals if frame is not None else {}
    bounce = trampoline(site, name, globals_)
    # The replay prints the values as they are now: a tensor changed in
    # place later in the call must not print its final value.
    snapshot = [_snapshot(cap, a) for a in args]
    cap.recording.refgraph.defer_call((bounce, fn), snapshot,
                                      {k: _snapshot(cap, v) for k, v in kwargs.items()}, site)
    with cap.breaks.paused():
        return bounce(fn, args, kwargs)


def _snapshot(cap, value):
    if isinstance(value, Tensor):
        return value.clone()  # recorded by the mode: a graph output
    if type(value) in (list, tuple):
        return type(value)(_snapshot(cap, v) for v in value)
    return value


def _printable(args, kwargs):
    for v in list(args) + list(kwargs.values()):
        if isinstance(v, (Tensor, str, int, float, bool, type(None), bytes, torch.Size,
                          torch.dtype, torch.device)):
            continue
        if type(v) in (list, tuple, dict) and _printable(v if type(v) is not dict else
                                                         list(v.keys()) + list(v.values()), {}):
            continue
        return False
    return True


def _hasattr(vm, fn, args, kwargs):
    obj, name = args
    try:
        vm.load_attr(obj, name)
    except AttributeError:
        vm.refgraph.read_hasattr(obj, name, False, vm.capture.site()) \
            if vm.capture.breaks.active else None
        return False
    return True


def _getattr(vm, fn, args, kwargs):
    if len(args) == 3:
        try:
            return vm.load_attr(args[0], args[1])
        except AttributeError:
            if vm.capture.breaks.active:
                vm.refgraph.read_hasattr(args[0], args[1], False, vm.capture.site())
            return args[2]
    return vm.load_attr(args[0], args[1])


def _import(vm, fn, args, kwargs):
    """``__import__``: the module it returns is reached by identity (a
    root); reads through it are guarded like any other."""
    module = calls.call(vm, fn, args, kwargs)
    if vm.capture.breaks.active and isinstance(module, types.ModuleType) \
            and not vm.refgraph.is_outside(module):
        vm.refgraph.register(module, Root(module, module.__name__))
    return module


def _len(vm, fn, args, kwargs):
    if len(args) != 1 or kwargs:
        return calls.call(vm, fn, args, kwargs)
    return vm.length(args[0])


SPECIAL_CALLS = {}


def is_deferred(fn):
    """True if ``fn`` is a call replayed by the mock."""
    special = SPECIAL_CALLS.get(id(fn))
    return special is not None and special[0] is fn and special[1] is deferred


def _special(fn, handler):
    SPECIAL_CALLS[id(fn)] = (fn, handler)


def _compiling(vm, fn, args, kwargs):
    """``torch.compiler.is_compiling()`` is True while capturing, as under
    ``torch.compile``: libraries then skip data-dependent checks that only
    exist to save time in eager mode (transformers' mask skipping)."""
    return True


for _fn in (getattr(torch.compiler, "is_compiling", None),
            getattr(torch.compiler, "is_dynamo_compiling", None),
            getattr(torch._utils, "is_compiling", None)):
    if _fn is not None:
        _special(_fn, _compiling)
_special(print, deferred)
_special(torch.set_printoptions, deferred)  # replayed so that replayed prints match
_special(warnings.warn, deferred)
_special(len, _len)
_special(__import__, _import)
_special(hasattr, lambda vm, fn, a, k: _hasattr(vm, fn, a, k) if len(a) == 2 and not k
         and type(a[1]) is str else calls.call(vm, fn, a, k))
_special(getattr, lambda vm, fn, a, k: _getattr(vm, fn, a, k) if len(a) in (2, 3) and not k
         and type(a[1]) is str else calls.call(vm, fn, a, k))
for _name in LOGGER_METHODS:
    _special(getattr(logging.Logger, _name), deferred)
    if hasattr(logging, _name):
        _special(getattr(logging, _name), deferred)


del _name, _fn
