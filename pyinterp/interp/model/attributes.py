"""Attribute access (``obj.name``) with Python-level hooks interpreted.

CPython's generic attribute lookup is C code, but it calls Python code in
several places: a Python ``__getattribute__``, a ``property`` getter, a
descriptor with a Python ``__get__`` (``functools.cached_property``...),
and the ``__getattr__`` fallback.  For each ``(type, name)`` this module
computes once a *plan*: either ``NATIVE`` (builtin ``getattr`` is exact and
runs no Python code) or a small function that performs the lookup with those
hooks interpreted.  Plans live in the lookup cache and are dropped with it
whenever a class is modified.
"""
import types

from . import lookup as _lookup
from .dunders import bind, call_special, needs_interpreter
from .lookup import MISSING, is_data_descriptor, lookup, python_getter

NATIVE = None
_plans = _lookup._cache
_object_getattribute = object.__getattribute__
_type_getattribute = type.__getattribute__
ModuleType = types.ModuleType


def load_attr(vm, obj, name):
    """``obj.name``."""
    tp = type(obj)
    plan = _plans.get((tp, name, "get"), _plans)
    if plan is _plans:
        plan = _plans[(tp, name, "get")] = _get_plan(tp, name)
    if plan is NATIVE:
        return getattr(obj, name)
    try:
        return plan(vm, obj, name)
    except AttributeError as exc:
        add_attribute_error_context(exc, obj, name)
        raise


def add_attribute_error_context(exc, obj, name):
    """``PyObject_GetAttr``'s ``set_attribute_error_context``: an
    ``AttributeError`` raised by Python code on the way (``__getattr__``, a
    property) gets the ``name`` and ``obj`` it lacks, which the traceback's
    "Did you mean" suggestion reads."""
    if exc.name is None and exc.obj is None:
        exc.name = name
        exc.obj = obj


def _get_plan(tp, name):
    if tp is ModuleType:
        return NATIVE if lookup(ModuleType, name) is not MISSING else _module_attr
    if issubclass(tp, type):
        return _class_attr
    if tp in _lookup.HOST_TYPES:
        return NATIVE
    if tp is super:
        return _super_attr
    getattribute = lookup(tp, "__getattribute__")
    if needs_interpreter(getattribute):
        return _custom_getattribute(getattribute, lookup(tp, "__getattr__"))
    inner = _descriptor_plan(lookup(tp, name), tp)
    if tp is TracebackType and name in _TRACEBACK_ENTRY and inner is NATIVE:
        inner = _traceback_entry
    hook = lookup(tp, "__getattr__")
    if needs_interpreter(hook):
        return _with_hook(inner, hook, getattribute)
    return inner


TracebackType = types.TracebackType
_TRACEBACK_ENTRY = frozenset({"tb_frame", "tb_next", "tb_lineno", "tb_lasti"})


def _traceback_entry(vm, tb, name):
    """``tb.tb_frame`` and the like: the user's frames, not pyinterp's
    (``tracebacks.traceback_attribute``)."""
    return vm.traceback_attribute(tb, name)


def _descriptor_plan(attr, owner_type):
    """Plan for an attribute found as ``attr`` in the type's MRO."""
    if attr is MISSING:
        return NATIVE
    if isinstance(attr, property):
        if type(attr).__get__ is property.__get__:
            if needs_interpreter(attr.fget):
                fget = attr.fget
                return lambda vm, obj, name: vm.call(fget, (obj,))
            return NATIVE
    if python_getter(attr) is None:
        return NATIVE
    if is_data_descriptor(attr):
        return lambda vm, obj, name: bind(vm, attr, obj, type(obj))

    def non_data(vm, obj, name):
        try:
            d = _object_getattribute(obj, "__dict__")
        except AttributeError:
            d = None
        if d is not None and name in d:
            return d[name]
        return bind(vm, attr, obj, type(obj))

    return non_data


def _with_hook(inner, hook, getattribute):
    """Run ``inner``; on AttributeError call the Python ``__getattr__``.
    The plan's ``native_first`` says whether ``inner`` is the native lookup
    (then a name it finds is read without running Python code)."""

    def run(vm, obj, name):
        try:
            if inner is NATIVE:
                return getattribute(obj, name)
            return inner(vm, obj, name)
        except AttributeError:
            pass
        # Outside the except block: CPython clears the error before calling
        # __getattr__, so it is not the exception being handled.
        return call_special(vm, hook, obj, name)

    run.native_first = inner is NATIVE
    return run


def _custom_getattribute(getattribute, hook):
    def run(vm, obj, name):
        if not needs_interpreter(hook):
            return call_special(vm, getattribute, obj, name)
        try:
            return call_special(vm, getattribute, obj, name)
        except AttributeError:
            pass
        return call_special(vm, hook, obj, name)

    return run


def _module_attr(vm, module, name):
    d = module.__dict__
    try:
        return d[name]
    except KeyError:
        pass
    hook = d.get("__getattr__")
    if hook is not None and needs_interpreter(hook):
        return vm.call(hook, (name,))
    return getattr(module, name)


def _class_attr(vm, cls, name):
    """``cls.name`` (``type.__getattribute__``), planned per class."""
    key = (cls, name, "cls")
    plan = _plans.get(key, _plans)
    if plan is _plans:
        plan = _plans[key] = _class_plan(cls, name)
    if plan is NATIVE:
        return getattr(cls, name)
    return plan(vm, cls, name)


def _class_plan(cls, name):
    meta = type(cls)
    getattribute = lookup(meta, "__getattribute__")
    if needs_interpreter(getattribute):
        return _custom_getattribute(getattribute, lookup(meta, "__getattr__"))
    meta_attr = lookup(meta, name)
    inner = NATIVE
    if meta_attr is not MISSING and is_data_descriptor(meta_attr) and (
            python_getter(meta_attr) or _python_property(meta_attr)):
        inner = lambda vm, c, n: bind(vm, meta_attr, c, meta)  # noqa: E731
    else:
        attr = lookup(cls, name)
        if attr is not MISSING:
            if python_getter(attr):
                inner = lambda vm, c, n: bind(vm, attr, None, c)  # noqa: E731
        elif meta_attr is not MISSING and (python_getter(meta_attr) or _python_property(meta_attr)):
            inner = lambda vm, c, n: bind(vm, meta_attr, c, meta)  # noqa: E731
    hook = lookup(meta, "__getattr__")
    if needs_interpreter(hook):
        return _with_hook(inner, hook, getattribute)
    return inner


def _python_property(attr):
    return isinstance(attr, property) and needs_interpreter(attr.fget)


def _super_attr(vm, sup, name):
    """``super().name``: look past ``__thisclass__`` in the instance's MRO."""
    start = sup.__thisclass__
    obj = sup.__self__
    owner = sup.__self_class__
    if obj is not None and name != "__class__":
        mro = owner.__mro__
        try:
            i = mro.index(start) + 1
        except ValueError:
            i = len(mro)
        attr = MISSING
        for base in mro[i:]:
            d = base.__dict__
            if name in d:
                attr = d[name]
                break
        if _lookup.observers:  # (a lookup of its own, past the cache)
            _lookup.report(mro[i:], name, attr)
        if attr is not MISSING:
            if python_getter(attr):
                return bind(vm, attr, None if obj is owner else obj, owner)
            if _python_property(attr) and obj is not owner:
                return vm.call(attr.fget, (obj,))
    return getattr(sup, name)


# -- stores and deletes ----------------------------------------------------
def store_attr(vm, obj, name, value):
    """``obj.name = value``."""
    tp = type(obj)
    plan = _plans.get((tp, name, "set"), _plans)
    if plan is _plans:
        plan = _plans[(tp, name, "set")] = _set_plan(tp, name, "__setattr__", "__set__", "fset")
    if plan is NATIVE:
        setattr(obj, name, value)
    elif plan is _SETS_CLASS:
        setattr(obj, name, value)
        _lookup.invalidate()
    else:
        plan(vm, obj, name, value)


def delete_attr(vm, obj, name):
    """``del obj.name``."""
    tp = type(obj)
    plan = _plans.get((tp, name, "del"), _plans)
    if plan is _plans:
        plan = _plans[(tp, name, "del")] = _set_plan(tp, name, "__delattr__", "__delete__", "fdel")
    if plan is NATIVE:
        delattr(obj, name)
    elif plan is _SETS_CLASS:
        delattr(obj, name)
        _lookup.invalidate()
    else:
        plan(vm, obj, name)


_SETS_CLASS = object()


def _set_plan(tp, name, hook_name, descr_method, prop_field):
    is_class = issubclass(tp, type)
    hook = lookup(tp, hook_name)
    if needs_interpreter(hook):
        def run(vm, obj, name, *value):
            call_special(vm, hook, obj, name, *value)
            if is_class:
                _lookup.invalidate()
        return run
    attr = lookup(tp, name)
    if attr is not MISSING:
        if isinstance(attr, property) and type(attr).__set__ is property.__set__:
            accessor = getattr(attr, prop_field)
            if needs_interpreter(accessor):
                return lambda vm, obj, name, *value: vm.call(accessor, (obj,) + value)
        else:
            method = lookup(type(attr), descr_method)
            if needs_interpreter(method):
                return lambda vm, obj, name, *value: call_special(vm, method, attr, obj, *value)
    return _SETS_CLASS if is_class else NATIVE


def plain_method(vm, obj, name):
    """For ``LOAD_METHOD``: the plain Python function ``type(obj).name`` if
    ``obj.name`` would just bind it (no instance attribute shadows it, no
    Python hook intervenes), else None."""
    tp = type(obj)
    plan = _plans.get((tp, name, "get"), _plans)
    if plan is _plans:
        plan = _plans[(tp, name, "get")] = _get_plan(tp, name)
    if plan is not NATIVE:
        return None
    attr = lookup(tp, name)
    if type(attr) is not FunctionType:
        return None
    d = getattr(obj, "__dict__", None)
    if d is not None and name in d:
        return None
    return attr


FunctionType = types.FunctionType
