"""Running a function "natively, with its callees still traced".

A capture that breaks where no resume point can be built (inside a loop, a
``try`` or ``with`` block, at an instruction other than a call) leaves an
entry that runs the function without a graph for those guards.  Run plainly
by CPython, everything it calls would run eagerly too.  Instead the entry
runs its own frame natively, from a copy of its code whose calls pass each
callable through :func:`divert` first (:mod:`pyinterp.codegen.divert`):
each Python callee then runs through its own traced wrapper, which guards,
captures and caches it like any traced function.  So a ``forward`` that
breaks in its loop still runs its layers as compiled graphs, and the
Python around them (a decoding loop) at CPython's speed.  Where the code
cannot be rewritten (a generator's frame is refused earlier), the frame
runs in the plain interpreter instead (exactly CPython's semantics, no
capture), when it is short: the capture counts the instructions it ran.

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
from ...codegen.divert import divert_calls
from ...interp import calls
from ...interp.decode import SUSPENDABLE_FLAGS
from ..modules import hooks_in_the_way
from .callees import NO_SELF
from ..torchfiles import TORCH_DIR
from ...interp.vm import Interpreter

# Above this many (non-inline) instructions in the function's own frame
# during the capture, interpreting the frame would cost more than compiled
# callees save: where its code cannot be rewritten, the entry runs plainly
# natively.
MAX_FRAME_STEPS = 2000

# Functions from these directories run natively: torch's own Python (its
# ops are what a graph would record anyway) and the standard library.
_NOT_WRAPPED_DIRS = (TORCH_DIR, sysconfig.get_paths()["stdlib"] + os.sep)


def runner(fn, callees, steps=0):
    """A callable ``run(args, kwargs)`` for the entry of ``fn``, or None
    when ``fn`` has no frame of its own to run (then it runs natively).
    ``callees`` (a :class:`.callees.Callees`) gives the callees' traced
    wrappers, kept across calls; ``steps``: the instructions the frame ran
    in the capture (an interpreted frame is only worth it when short)."""
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
    native = _native_runner(fn, target, bound, callees)
    if native is not None or steps > MAX_FRAME_STEPS:
        return native

    def run(args, kwargs):
        if _has_hooks(fn):  # (a hook registered since: the full call)
            return fn(*args, **kwargs)
        vm = TracedCalleesInterpreter(callees)
        return api.run(target, bound + tuple(args), kwargs, vm=vm)

    return run


def _native_runner(fn, target, bound, callees):
    """``run(args, kwargs)`` calling a copy of ``target`` whose calls are
    diverted (:func:`divert`), or None when its code cannot be rewritten."""
    code = target.__code__
    try:
        diverted = types.FunctionType(divert_calls(code, divert(callees)), target.__globals__,
                                      target.__name__, target.__defaults__, target.__closure__)
    except Exception:  # noqa: BLE001 - CannotDivert, or code the rewrite cannot assemble
        return None  # (the interpreted frame then)
    diverted.__kwdefaults__ = target.__kwdefaults__
    diverted.__qualname__ = target.__qualname__

    def run(args, kwargs):
        if _has_hooks(fn) or target.__code__ is not code:
            return fn(*args, **kwargs)  # (a hook registered since, new code: the full call)
        diverted.__defaults__ = target.__defaults__
        diverted.__kwdefaults__ = target.__kwdefaults__
        return diverted(*bound, *args, **kwargs)

    return run


def divert(callees, _type=type, _method=types.MethodType, _function=types.FunctionType,
           _no_self=NO_SELF):
    """The function a diverted frame calls on each callable before calling
    it: the callable's traced wrapper (bound to its ``self``) when it gets
    one (:meth:`.callees.Callees.route`), else the callable itself; also
    the callable itself once its wrapper has shown that it compiles
    nothing (``Traced.compiles_nothing``: a helper of Python values called
    in a loop would pay a guard per call for no graph).  (The builtins it
    uses are bound when it is made: the program may replace them.)"""
    route = callees.route
    plain = _PLAIN_TYPES
    direct = set()  # code of functions whose wrappers compile nothing: called directly

    def to_traced(fn):
        tp = _type(fn)
        if tp in plain:
            return fn
        code = fn.__code__ if tp is _function else getattr(fn.__func__, "__code__", None) \
            if tp is _method else None
        if code in direct:
            return fn
        found = route(fn, _traceable)
        if found is None:
            return fn
        wrapper, first = found
        if code is not None and wrapper.compiles_nothing():  # (a Traced: wrapper_maker)
            direct.add(code)
            return fn
        return wrapper if first is _no_self else _method(wrapper, first)

    return to_traced


# Callables that never get a traced wrapper: divert gives them back at once.
_PLAIN_TYPES = frozenset({types.BuiltinFunctionType, types.MethodDescriptorType,
                          types.WrapperDescriptorType, types.MethodWrapperType,
                          types.ClassMethodDescriptorType, type})


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
