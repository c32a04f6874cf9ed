"""Calling special methods the way CPython's type slots do.

CPython finds special methods on the *type* (never the instance), binds
them with ``__get__`` when they are descriptors, and calls them.  Here the
call goes through the interpreter, so a Python-level dunder runs
interpreted.  The helpers in this module are shared by every protocol
(operators, attributes, iteration, ``with``...).
"""
import types

from .lookup import MISSING, HostMethod, lookup

FunctionType = types.FunctionType

# Types whose instances, found as special methods, are C code: calling them
# runs no Python code of their own.
NATIVE_CALLABLE_TYPES = frozenset({
    types.WrapperDescriptorType,       # object.__init__, int.__add__
    types.MethodDescriptorType,        # list.append
    types.BuiltinFunctionType,         # len, and bound C methods
    types.ClassMethodDescriptorType,   # dict.fromkeys
    types.MethodWrapperType,           # (1).__add__
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
    type(None),
    HostMethod,                        # a method of one of pyinterp's own types
})


def needs_interpreter(descr):
    """True if calling/binding ``descr`` may run Python code.

    MISSING and C-level callables are native; plain Python functions and any
    other object (a ``staticmethod`` around a Python function, a
    ``functools.partialmethod``, a callable instance...) go through the
    interpreter.
    """
    return descr is not MISSING and type(descr) not in NATIVE_CALLABLE_TYPES


def call_special(vm, descr, obj, *args):
    """Call special method ``descr`` (found on ``type(obj)``) for ``obj``.

    Mirrors CPython's ``vectorcall_method``/``lookup_maybe_method``: a plain
    function is called with ``obj`` prepended; another descriptor is bound
    with ``__get__`` first; a non-descriptor is called without ``obj``.
    """
    if type(descr) is FunctionType:
        return vm.call_function(descr, (obj,) + args, None)
    get = lookup(type(descr), "__get__")
    if get is MISSING:
        return vm.call(descr, args)
    return vm.call(bind(vm, descr, obj, type(obj)), args)


def bind(vm, descr, obj, owner):
    """``descr.__get__(obj, owner)``, interpreting a Python ``__get__``."""
    tp = type(descr)
    if tp is FunctionType:
        return types.MethodType(descr, obj) if obj is not None else descr
    get = lookup(tp, "__get__")
    if get is MISSING:
        return descr
    if type(get) is FunctionType:
        return vm.call_function(get, (descr, obj, owner), None)
    if get is _PROPERTY_GET and obj is not None and needs_interpreter(descr.fget):
        # property.__get__ is C code that would call a Python getter natively.
        return vm.call(descr.fget, (obj,))
    return get(descr, obj, owner)


_PROPERTY_GET = property.__dict__["__get__"]


def special(obj, name):
    """The special method ``name`` of ``type(obj)``, or MISSING."""
    return lookup(type(obj), name)
