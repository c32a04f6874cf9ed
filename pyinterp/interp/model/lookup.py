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

A lookup that misses the cache is reported to the :data:`observers`
(graph capture guards what the run looked up on its classes); the cache is
cleared when one is added, so every ``(type, name)`` looked up from then on
is reported at least once, and cache hits pay nothing for it.  The cache is
shared by all threads, so every observer hears every thread's misses (a
capture may guard a little more than its own run looked up, never less).
"""
import gc
from types import FunctionType

MISSING = object()
"""Returned by :func:`lookup` when no class in the MRO defines the name
(distinct from None, because ``__hash__ = None`` is a real definition)."""

_cache = {}

observers = ()
"""Functions called as ``observer(mro, name, found)`` on every lookup that
misses the cache (``mro`` the classes walked, in order; ``found`` the
result, or MISSING).  Added and removed with :func:`observe`."""

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
    if observers:
        report(tp.__mro__, name, found)
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


def report(mro, name, found):
    """Tell every observer of a lookup made past the cache."""
    for observer in observers:
        observer(mro, name, found)


def observe(fn, on=True):
    """Add ``fn`` to the :data:`observers` (``on=False``: remove it).  Adding
    clears the cache, so the lookups made from then on are reported."""
    global observers
    if on:
        observers = observers + (fn,)
        _cache.clear()
    else:
        observers = tuple(o for o in observers if o is not fn)


def invalidate():
    """Forget every cached lookup (a class was modified)."""
    _cache.clear()


def _on_collection(phase, info):
    """A full collection (``gc.collect()``) starts: forget every cached
    lookup, so that the cache (which holds the types it has seen and what
    their MROs gave) keeps no class or attribute alive that the program
    dropped, as CPython's type cache, which owns nothing, does not."""
    if phase == "start" and info["generation"] == 2:
        _cache.clear()


gc.callbacks.append(_on_collection)


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
