"""Traced wrappers for the callees that partial graphs call natively.

Two kinds of entries call some callees through traced wrappers, so that
those still get graphs: a split entry's broken call (:mod:`.resume`) and a
native entry that runs its frame with its callees traced (:mod:`.hybrid`).
A wrapper traces *code*, never one object:

* a module ``m`` is called as ``wrapper(m, *args)``, the wrapper tracing
  its class's call (``module(*args, **kwargs)``), one per class; a DDP
  module's wrapper (:class:`..ddp_forward.DDPCaller`) runs DDP's forward
  natively and calls the inner module through the inner module's wrapper;
* a bound method ``obj.meth`` as ``wrapper(obj, *args)``, the wrapper of
  its function;
* a plain function through a wrapper of its own.

So a wrapper holds no instance (a module passed as an argument dies when
its call is over), instances of one class with the same structure share
entries, and the callee called is the object the call found at that
point, checked by the wrapper's guard, never the first call's.  (Other
callables, such as objects with ``__call__``, get a wrapper of their own,
which holds them.)
"""
import types

NO_SELF = object()
"""The ``self`` of a route whose wrapper takes the call's arguments as they are."""

_CALLER = "def __call__(module, *args, **kwargs):\n    return module(*args, **kwargs)\n"


class Callees:
    """The wrappers of one traced callable's callees.

    ``wrap(fn)`` makes ``fn``'s traced wrapper with the traced callable's
    options (``fn`` itself if it is one already)."""

    def __init__(self, wrap):
        self.wrap = wrap
        self._wrappers = {}  # id(function or class) -> (it, its wrapper)
        # (code, split point, stack depth, locals) -> the resume function's
        # traced wrapper: one per traced callable, with its backend and
        # options (a second traced callable of the same code has its own)
        self.resumes = {}

    def route(self, fn, traceable=None):
        """How to call ``fn`` through a traced wrapper: ``(wrapper, self)``,
        for ``wrapper(self, *args)`` (``wrapper(*args)`` when ``self`` is
        :data:`NO_SELF`), or None to call ``fn`` as it is.
        ``traceable(function)`` says which Python functions get a wrapper;
        without it every callable does."""
        import torch  # (a traced callable exists before its first capture loads torch)

        tp = type(fn)
        if isinstance(fn, torch.nn.Module):
            from ..ddp_forward import DDPCaller, is_ddp

            if is_ddp(fn):  # (its forward natively, its inner module through a wrapper)
                return self._wrapper(DDPCaller, lambda cls: cls(self.route), wrap=_as_is), fn
            return self._wrapper(tp, _module_caller), fn
        if tp is types.MethodType and type(fn.__func__) is types.FunctionType \
                and (traceable is None or traceable(fn.__func__)):
            return self._wrapper(fn.__func__), fn.__self__
        if tp is types.FunctionType and traceable is not None and not traceable(fn):
            return None
        if tp is not types.FunctionType and (traceable is not None or not callable(fn)):
            return None
        return self._wrapper(fn), NO_SELF

    def _wrapper(self, key, make=None, wrap=None):
        """``key``'s wrapper, made once: ``wrap(make(key))`` (``wrap``: the
        traced wrapper maker; ``make``: the callable from ``key``)."""
        wrap = wrap or self.wrap
        found = self._wrappers.get(id(key))
        if found is None or found[0] is not key:
            # (setdefault: threads routing the same callee at once share one)
            found = self._wrappers.setdefault(id(key), (key, wrap(make(key) if make else key)))
            if found[0] is not key:
                found = self._wrappers[id(key)] = (key, wrap(make(key) if make else key))
        return found[1]


def _as_is(fn):
    return fn


def _module_caller(cls):
    """A function ``__call__(module, *args, **kwargs)`` calling the module,
    made for ``cls`` (its traced wrapper serves the class's instances)."""
    namespace = {}
    exec(compile(_CALLER, "<pyinterp: call of a %s>" % cls.__qualname__, "exec"), namespace)
    fn = namespace["__call__"]
    fn.__qualname__ = "%s.__call__" % cls.__qualname__
    return fn
