"""Calls the capture handles itself, by identity of the callee: its entries
in the one interception registry (``calls.INTERCEPTIONS``, as capture
handlers, which win over the plain lookasides while capture is on).

* ``print``, logging (logger methods and module functions),
  ``warnings.warn`` and ``torch.set_printoptions`` run now and are replayed
  by the mock (:func:`deferred`);
* ``__import__``: the module it returns is reached by identity;
* builtins that consume their arguments' items
  (:data:`.consumers.CONSUMERS`) guard those items before their lookaside
  runs;
* ``torch.compiler.is_compiling()`` is True while capturing;
* ``random.randint``/``randrange``/``getrandbits`` whose int a CALL asked
  for are drawn now and again by the mock (:mod:`.values.random_ints`);
* ``int(t)`` of a one-element integer tensor whose int only reaches sizes
  is ``t.item()``, an unbacked size (:func:`.values.listed_ints.int_of_tensor`).

(``hasattr``/``getattr``/``len`` need no entry: their lookasides go through
the interpreter's own attribute and length rules, so their reads are
guarded, and the absence of an attribute is guarded through
``CaptureInterpreter.missing_attribute``.)

Handlers are called as ``handler(vm, args, kwargs)`` like every
interception; a Python function's capture handler is run by
``CaptureInterpreter.call_function``.

Records (:class:`~.state.Capture`): owns none; reads ``breaks`` (a deferred
call pauses capture through :meth:`.state.BreakState.paused`) and
``recording``.
"""
import logging
import types
import warnings

import torch

from ..codegen.trampoline import trampoline
from ..interp import calls, lookasides  # noqa: F401  (the plain handlers, wrapped below)
from ..refgraph.sources import Root
from .consumers import CONSUMER_CALLABLES, TEXT, consume, consume_call
from . import warn_levels
from .values import listed_ints, random_ints

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
    if fn is warnings.warn and frame is not None:
        # stacklevel=n: replayed from the frame it names (warn_levels)
        moved = warn_levels.relocate(frame, args, kwargs)
        if moved is None:
            cap.break_graph("unsupported-value", "warnings.warn with arguments it rejects")
            return calls.call(vm, fn, args, kwargs)
        fn, args, kwargs, frame = moved
    if isinstance(fn, FunctionType) and args and isinstance(args[0], logging.Logger):
        fn, args = MethodType(fn, args[0]), args[1:]  # logger.info(...): replay on that logger
    if not _printable(args, kwargs):
        cap.break_graph("unsupported-value", "%s() of an object the mock cannot rebuild"
                        % getattr(fn, "__name__", "call"))
        return calls.call(vm, fn, args, kwargs)
    sizes = cap.recording.sizes
    if sizes is not None and sizes.active and cap.breaks.active:
        # ints from tensor data: graph outputs the replay prints; sizes: exact
        why = "%s() received it" % getattr(fn, "__name__", "a replayed call")
        args = tuple(sizes.leave(cap.recording.recorder, a, site, why) for a in args)
        kwargs = {k: sizes.leave(cap.recording.recorder, v, site, why)
                  for k, v in kwargs.items()}
    # The replay prints the same values: what they hold from outside is guarded.
    consume(cap, tuple(args) + tuple(kwargs.values()), TEXT)
    if not cap.breaks.active:
        return calls.call(vm, fn, args, kwargs)
    name = frame.code.co_name if frame is not None else "<traced>"
    globals_ = frame.globals if frame is not None else {}
    bounce = trampoline(site if frame is vm.top else (frame.code.co_filename, frame.lineno),
                        name, globals_)
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
                          torch.dtype, torch.device)) \
                or isinstance(v, type) and issubclass(v, Warning):  # (a warning's category)
            continue
        if type(v) in (list, tuple, dict) and _printable(v if type(v) is not dict else
                                                         list(v.keys()) + list(v.values()), {}):
            continue
        return False
    return True


def _import(vm, args, kwargs):
    """``__import__``: the module it returns is reached by identity (a
    root); reads through it are guarded like any other."""
    module = calls.call(vm, __import__, args, kwargs)
    if vm.capture.breaks.active and isinstance(module, types.ModuleType) \
            and not vm.refgraph.is_outside(module):
        vm.refgraph.register(module, Root(module, module.__name__))
    return module


class _Deferred:
    """The capture handler of a call the mock replays (:func:`deferred`)."""

    __slots__ = ("fn",)
    replays = True  # (read by values/sizes.py: the handler takes sizes and ints from data)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, vm, args, kwargs):
        return deferred(vm, self.fn, tuple(args), kwargs or {})


def captured_call(fn):
    """Capture's own handler for calls of ``fn``, or None (also when capture
    only runs ``fn``'s plain lookaside)."""
    handler = calls.interception(fn, calls.CAPTURE)
    return None if handler is calls.interception(fn) else handler


def is_deferred(fn):
    """True if ``fn`` is a call replayed by the mock."""
    return type(calls.interception(fn, calls.CAPTURE)) is _Deferred


def _reading_arguments(fn, lookaside):
    """The capture handler of a consumer: guard what it reads of its
    arguments (:func:`.consumers.consume_call`), then run its lookaside."""

    def run(vm, args, kwargs):
        consume_call(vm.capture, fn, args, kwargs)
        return lookaside(vm, args, kwargs)

    return run


def _compiling(vm, args, kwargs):
    """``torch.compiler.is_compiling()`` is True while capturing, as under
    ``torch.compile``: libraries then skip data-dependent checks that only
    exist to save time in eager mode (transformers' mask skipping)."""
    return True


def _special(fn, handler):
    calls.intercept(fn, handler, calls.CAPTURE)


def _defer(fn):
    _special(fn, _Deferred(fn))


for _fn in (getattr(torch.compiler, "is_compiling", None),
            getattr(torch.compiler, "is_dynamo_compiling", None),
            getattr(torch._utils, "is_compiling", None)):
    if _fn is not None:
        _special(_fn, _compiling)
_defer(print)
_defer(torch.set_printoptions)  # replayed so that replayed prints match
_defer(warnings.warn)
_special(__import__, _import)
_special(int, listed_ints.int_of_tensor)  # int(lengths.max()) as a slice bound
for _fn, _handler in random_ints.handlers():  # random.randint(0, 9) feeding tensor ops
    _special(_fn, _handler)
for _name in LOGGER_METHODS:
    _defer(getattr(logging.Logger, _name))
    if hasattr(logging, _name):
        _defer(getattr(logging, _name))
for _fn in CONSUMER_CALLABLES:
    _lookaside = calls.interception(_fn)
    if _lookaside is not None:
        _special(_fn, _reading_arguments(_fn, _lookaside))


del _name, _fn, _lookaside, _handler
