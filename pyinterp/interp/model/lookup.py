"""Type-attribute lookup (CPython's ``_PyType_Lookup``) with a cache.

Operators and protocols need to know, for a type, which object its MRO
yields for a special method name, and whether that object is Python code
(to be interpreted) or C code (to be called natively).  Walking the MRO on
every ``a + b`` would be slow, so results are cached per ``(type, name)``.

CPython invalidates its own cache through type version tags, which Python
cannot see.  pyinterp clears its cache instead whenever interpreted code
assigns or deletes an attribute on a class (``STORE_ATTR``, ``setattr``,
``type.__setattr__``...) and at the start of every top-level interpreted
call, so state changed natively between calls is always seen.
"""
from types import FunctionType

MISSING = object()
"""Returned by :func:`lookup` when no class in the MRO defines the name
(distinct from None, because ``__hash__ = None`` is a real definition)."""

_cache = {}

HOST_TYPES = set()
"""pyinterp's own helper classes (frame proxies, the stand-ins C code holds
for the program's callbacks and sequences...): their Python methods are
part of the interpreter, so they always run natively (:class:`HostMethod`)."""


def host_type(cls):
    """Class decorator: register ``cls`` in :data:`HOST_TYPES`."""
    HOST_TYPES.add(cls)
    return cls


def lookup(tp, name):
    """The attribute ``name`` as found in ``tp``'s MRO dicts, or MISSING
    (a host type's Python function as a :class:`HostMethod`)."""
    key = (tp, name)
    found = _cache.get(key, _cache)
    if found is not _cache:
        return found
    found = MISSING
    for base in tp.__mro__:
        d = base.__dict__
        if name in d:
            found = d[name]
            break
    if type(found) is FunctionType and tp in HOST_TYPES:
        found = HostMethod(found)
    _cache[key] = found
    return found


@host_type
class HostMethod:
    """A method of a host type, as :func:`lookup` gives it to the protocols:
    a native callable (``needs_interpreter`` is False for it), so that
    ``iter()``, ``x[i]``, ``==``... on a pyinterp object that reached the
    program call pyinterp's code instead of interpreting it."""

    __slots__ = ("__func__",)

    def __init__(self, func):
        self.__func__ = func

    def __call__(self, *args, **kwargs):
        return self.__func__(*args, **kwargs)

    def __get__(self, obj, owner=None):
        return self.__func__.__get__(obj, owner)


def invalidate():
    """Forget every cached lookup (a class was modified)."""
    _cache.clear()


def python_getter(descr):
    """The Python ``__get__`` of a descriptor's type, or None.

    None means that getting the descriptor runs no Python code of its own
    (a function, a C descriptor, a plain value).
    """
    get = lookup(type(descr), "__get__")
    return get if type(get) is FunctionType else None


def is_data_descriptor(descr):
    tp = type(descr)
    return lookup(tp, "__set__") is not MISSING or lookup(tp, "__delete__") is not MISSING
