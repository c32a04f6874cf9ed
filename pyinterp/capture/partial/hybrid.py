"""Running a function "natively, with its callees still traced".

A capture that breaks where no resume point can be built (inside a loop, a
``try`` or ``with`` block, at an instruction other than a call) leaves an
entry that runs the function without a graph for those guards.  Run plainly
by CPython, everything it calls would run eagerly too.  Instead, when the
function's own frame is short (the capture counts the instructions it
executed), the entry runs it here: its own frame in the plain interpreter
(exactly CPython's semantics, no capture), and each Python callee through
its own traced wrapper, which guards, captures and caches it like any
traced function.  So a ``forward`` that breaks in its loop still runs its
layers as compiled graphs.

Callees that get a wrapper (made per class or function by
:mod:`.callees`): ``nn.Module`` instances, and functions (and methods)
without closure cells (a closure made per call would miss every
time) that are not generators or coroutines and come from neither torch nor
the standard library.  Other callables run natively; builtins that need the
interpreted frame (``super``, ``locals``...) keep their lookasides.
"""
import os
import sysconfig
import types

import torch

from ... import api
from ...interp import calls
from ...interp.decode import SUSPENDABLE_FLAGS
from ..modules import hooks_in_the_way
from .callees import NO_SELF
from ..torchfiles import TORCH_DIR
from ...interp.vm import Interpreter

# Above this many (non-inline) instructions in the function's own frame
# during the capture, interpreting the frame would cost more than compiled
# callees save: the entry runs plainly natively.
MAX_FRAME_STEPS = 2000

# Functions from these directories run natively: torch's own Python (its
# ops are what a graph would record anyway) and the standard library.
_NOT_WRAPPED_DIRS = (TORCH_DIR, sysconfig.get_paths()["stdlib"] + os.sep)


def runner(fn, callees):
    """A callable ``run(args, kwargs)`` for the entry of ``fn``, or None
    when ``fn`` has no frame to interpret (then it runs natively).
    ``callees`` (a :class:`.callees.Callees`) gives the callees' traced
    wrappers, kept across calls."""
    if isinstance(fn, torch.nn.Module):
        if _has_hooks(fn):
            return None
        forward = type(fn).forward
        if type(forward) is not types.FunctionType or "forward" in fn.__dict__:
            return None
        target, bound = forward, (fn,)
    elif isinstance(fn, types.MethodType) and type(fn.__func__) is types.FunctionType:
        target, bound = fn.__func__, (fn.__self__,)
    elif type(fn) is types.FunctionType:
        target, bound = fn, ()
    else:
        return None
    if target.__code__.co_flags & SUSPENDABLE_FLAGS:
        return None

    def run(args, kwargs):
        if _has_hooks(fn):  # (a hook registered since: the full call)
            return fn(*args, **kwargs)
        vm = TracedCalleesInterpreter(callees)
        return api.run(target, bound + tuple(args), kwargs, vm=vm)

    return run


class TracedCalleesInterpreter(Interpreter):
    """The plain interpreter for one frame; its Python callees run through
    their traced wrappers, every other callee natively (two hooks of the
    call ladder: ``divert_call`` and ``call_function``)."""

    def __init__(self, callees):
        super().__init__()
        self.callees = callees
        self.entered = False

    def divert_call(self, fn, args, kwargs):
        """The call ladder's first step: the call that enters the function's
        own frame goes down the plain ladder; every later one is made by
        :func:`_traced_or_native`."""
        if not self.entered:  # the function's own frame: interpreted
            self.entered = True
            return calls.call
        return _traced_or_native

    def call_function(self, func, args, kwargs=None):
        """``CALL`` of a plain Python function (the interpreter's fast path)."""
        if not self.entered:
            self.entered = True
            return calls.call_function(self, func, args, kwargs)
        return _traced_or_native(self, func, args, kwargs)


def _traced_or_native(vm, fn, args, kwargs):
    """A call made by the interpreted frame: by its lookaside if it has one,
    else natively, through the callee's traced wrapper if it gets one."""
    handler = calls.interception(fn)
    if handler is not None:
        return handler(vm, args, kwargs)
    route = vm.callees.route(fn, _traceable)
    if route is not None:
        fn, first = route
        if first is not NO_SELF:
            args = (first,) + tuple(args)
    return fn(*args, **kwargs) if kwargs else fn(*args)


def wraps(fn):
    """True if a native entry would call ``fn`` through a traced wrapper
    (the capture counts such calls to decide whether to run one)."""
    tp = type(fn)
    if tp is types.MethodType:
        return type(fn.__func__) is types.FunctionType and _traceable(fn.__func__)
    if tp is types.FunctionType:
        return _traceable(fn)
    return isinstance(fn, torch.nn.Module)


def _traceable(func):
    return func.__closure__ is None and not func.__code__.co_flags & SUSPENDABLE_FLAGS \
        and not func.__code__.co_filename.startswith(_NOT_WRAPPED_DIRS)


def _has_hooks(module):
    return isinstance(module, torch.nn.Module) and hooks_in_the_way(module.__dict__)
