"""Call dispatch: interpret Python callees, run C callees natively.

``call(vm, fn, args, kwargs)`` is the single entry point for every call the
interpreted program makes (``CALL``, ``CALL_FUNCTION_EX``, and calls made by
protocols).  It decides:

* Python functions (and bound methods of them) run in a new interpreted
  frame;
* a *lookaside* replaces builtins that need the caller's frame or call back
  into Python (``super``, ``locals``, ``sorted(key=...)``...);
* classes are constructed with ``type.__call__``'s algorithm, so a Python
  ``__new__``/``__init__``/metaclass ``__call__`` is interpreted;
* ``functools.partial`` is unwrapped;
* objects with a Python ``__call__`` have it interpreted;
* everything else is C code and is called natively.
"""
import functools
import re
import types

from .binding import bind_arguments
from .model.dunders import bind, call_special, needs_interpreter
from .frame import Frame, decoded_for, release_locals
from .generators import start_generator
from .model.lookup import HOST_TYPES, MISSING, lookup

FunctionType = types.FunctionType
MethodType = types.MethodType

_BuiltinMethodType = type(re.compile("").sub)
"""``builtin_method``: bound C methods declared METH_METHOD (``Pattern.sub``)."""
_NATIVE_CALLABLES = frozenset({
    types.BuiltinFunctionType, _BuiltinMethodType, types.MethodDescriptorType,
    types.WrapperDescriptorType, types.MethodWrapperType,
    types.ClassMethodDescriptorType,
})
LOOKASIDES = {}
"""id(builtin) -> (builtin, replacement(vm, args, kwargs)); see lookasides.py"""
METHOD_LOOKASIDES = {}
"""(type, method name) -> replacement(vm, self, args, kwargs), for bound C
methods such as ``some_list.sort``."""


def call(vm, fn, args, kwargs=None):
    """Call ``fn(*args, **kwargs)`` on behalf of the interpreted program."""
    tp = type(fn)
    if tp is FunctionType:
        return call_function(vm, fn, args, kwargs)
    if tp is MethodType:
        return call(vm, fn.__func__, (fn.__self__,) + tuple(args), kwargs)
    entry = LOOKASIDES.get(id(fn))
    if entry is not None and entry[0] is fn:
        return entry[1](vm, args, kwargs)
    if tp in _NATIVE_CALLABLES:
        if (tp is types.BuiltinFunctionType or tp is _BuiltinMethodType) and METHOD_LOOKASIDES:
            owner = fn.__self__
            replacement = METHOD_LOOKASIDES.get((type(owner), fn.__name__))
            if replacement is not None:
                return replacement(vm, owner, args, kwargs)
        if kwargs:
            return fn(*args, **kwargs)
        return fn(*args)
    if isinstance(fn, type):
        return construct(vm, fn, args, kwargs)
    if tp is functools.partial:
        merged = {**fn.keywords, **kwargs} if kwargs else fn.keywords
        return call(vm, fn.func, fn.args + tuple(args), merged)
    method = lookup(tp, "__call__")
    if needs_interpreter(method) and tp not in HOST_TYPES:
        return call_special(vm, method, fn, *args) if not kwargs else \
            _call_special_kw(vm, method, fn, args, kwargs)
    if kwargs:
        return fn(*args, **kwargs)
    return fn(*args)


def _call_special_kw(vm, method, obj, args, kwargs):
    if type(method) is FunctionType:
        return call_function(vm, method, (obj,) + tuple(args), kwargs)
    return call(vm, bind(vm, method, obj, type(obj)), args, kwargs)


def call_function(vm, func, args, kwargs=None):
    """Run a Python function in a new interpreted frame."""
    code = func.__code__
    decoded = decoded_for(code)
    if kwargs or len(args) != decoded.plain_argcount:
        args = bind_arguments(func, code, args, kwargs)
    frame = Frame(code, func.__globals__, None, func, func.__builtins__, decoded,
                  [*args, *decoded.after_arguments])
    if decoded.is_generator:
        return start_generator(vm, frame)
    vm.resume(frame)
    release_locals(frame)
    return frame.retval


def construct(vm, cls, args, kwargs):
    """``cls(*args, **kwargs)``: ``type.__call__`` with Python hooks interpreted."""
    meta = type(cls)
    if meta is type:
        # The common case first: object.__new__ and a Python __init__.
        init = lookup(cls, "__init__")
        if type(init) is FunctionType and lookup(cls, "__new__") is object.__new__:
            obj = object.__new__(cls)
            _initialize(vm, init, obj, args, kwargs)
            return obj
    else:
        meta_call = lookup(meta, "__call__")
        if meta_call is not type.__call__ and needs_interpreter(meta_call):
            return _call_special_kw(vm, meta_call, cls, args, kwargs or {})
    if len(args) == 3 and issubclass(cls, type):
        args = (args[0], args[1], namespace_with_module(vm, args[2]))
    if cls is type:
        return type(*args, **(kwargs or {}))
    new = lookup(cls, "__new__")
    init = lookup(cls, "__init__")
    new_is_python = isinstance(new, staticmethod) and needs_interpreter(new.__func__) \
        or type(new) is FunctionType
    if not new_is_python and not needs_interpreter(init):
        return cls(*args, **kwargs) if kwargs else cls(*args)
    if new_is_python:
        new_func = new.__func__ if isinstance(new, staticmethod) else new
        obj = call(vm, new_func, (cls,) + tuple(args), kwargs)
    else:
        obj = new(cls, *args, **kwargs) if kwargs else new(cls, *args)
    if cls not in type(obj).__mro__:
        return obj
    init = lookup(type(obj), "__init__")
    if needs_interpreter(init):
        _initialize(vm, init, obj, args, kwargs)
    elif init is not MISSING:
        if kwargs:
            init(obj, *args, **kwargs)
        else:
            init(obj, *args)
    return obj


def _initialize(vm, init, obj, args, kwargs):
    """Call a Python-level ``__init__``; it must return None."""
    result = _call_special_kw(vm, init, obj, args, kwargs or {})
    if result is not None:
        raise TypeError("__init__() should return None, not '%s'" % type(result).__name__)


def namespace_with_module(vm, namespace):
    """The class namespace ``type.__new__`` should see, with ``__module__`` set.

    ``type.__new__`` names a class's module after ``__name__`` in the globals
    of the running Python frame when the namespace has no ``__module__``
    (``type("X", (), {})``).  Called natively from here, that frame would be
    pyinterp's own, so the interpreted caller's module is filled in, on a
    copy (``type.__new__`` copies the namespace anyway).
    """
    frame = vm.top
    if frame is None or not isinstance(namespace, dict) \
            or dict.__contains__(namespace, "__module__"):
        return namespace
    module = dict.get(frame.globals, "__name__", MISSING)
    if module is MISSING:
        return namespace
    namespace = dict.copy(namespace)
    namespace["__module__"] = module
    return namespace
