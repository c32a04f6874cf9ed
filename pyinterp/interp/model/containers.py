"""Container protocols: iteration, subscription, membership.

As in :mod:`pyinterp.operators`, each function has a fast path for builtin
types and otherwise calls Python-level ``__iter__``/``__next__``/
``__getitem__``/``__setitem__``/``__delitem__``/``__contains__``/
``__missing__`` through the interpreter.
"""
import operator

from .dunders import bind, call_special, needs_interpreter
from .lookup import MISSING, host_type, lookup
from .operators import compare_bool, length_result, truth

_FAST = frozenset({list, tuple, dict, str, range, set, frozenset, bytes, bytearray})


def get_iter(vm, obj):
    """``iter(obj)``."""
    tp = type(obj)
    if tp in _FAST:
        return iter(obj)
    method = lookup(tp, "__iter__")
    if method is not MISSING:
        if method is None:
            raise TypeError("'%s' object is not iterable" % tp.__name__)
        if not needs_interpreter(method):
            return iter(obj)
        result = call_special(vm, method, obj)
        if lookup(type(result), "__next__") is MISSING:
            raise TypeError("iter() returned non-iterator of type '%s'" % type(result).__name__)
        return result
    getitem = lookup(tp, "__getitem__")
    if needs_interpreter(getitem):
        # CPython's own sequence ``iterator`` object (what the program sees
        # and may store), over a proxy that runs __getitem__ interpreted.
        return iter(_InterpretedSequence(vm, obj))
    return iter(obj)


@host_type
class _InterpretedSequence:
    """For C's legacy-protocol ``iterator``: ``seq[i]`` with the sequence's
    Python ``__getitem__`` interpreted (IndexError or StopIteration ends
    the iteration, as in C)."""

    __slots__ = ("vm", "seq")

    def __init__(self, vm, seq):
        self.vm = vm
        self.seq = seq

    def __getitem__(self, index):
        return getitem(self.vm, self.seq, index)

    def __reduce__(self):
        return reduce_as(self.seq)


def reduce_as(target):
    """``__reduce__`` of a stand-in that C code holds in place of ``target``
    (a sequence, a callback): pickled and copied, it is ``target`` itself,
    so the C object holding it (an iterator, a ``map``) pickles as it does
    natively.  (Unpickled, it rebuilds ``target`` by ``operator.getitem``
    on a one-item tuple: nothing of pyinterp is needed to load it.)"""
    return operator.getitem, ((target,), 0)



def next_value(vm, it):
    """``next(it)``; StopIteration signals exhaustion, as for ``__next__``."""
    tp = type(it)
    method = lookup(tp, "__next__")
    if needs_interpreter(method):
        return call_special(vm, method, it)
    if method is MISSING:
        raise TypeError("'%s' object is not an iterator" % tp.__name__)
    return method(it)


def getitem(vm, container, key):
    """``container[key]``."""
    tp = type(container)
    if tp in _FAST:
        return container[key]
    method = lookup(tp, "__getitem__")
    if needs_interpreter(method):
        return call_special(vm, method, container, key)
    if method is dict.__getitem__:
        missing = lookup(tp, "__missing__")
        if needs_interpreter(missing):
            # Not dict.__getitem__: on a miss it calls __missing__ itself.
            value = dict.get(container, key, MISSING)
            if value is not MISSING:
                return value
            return call_special(vm, missing, container, key)
    if method is MISSING and isinstance(container, type):
        hook = lookup(container, "__class_getitem__")
        if hook is not MISSING and (needs_interpreter(hook)
                                    or type(hook) is _ClassMethodDescriptorType):
            # A C classmethod too: 3.12+'s typing.Generic has a lookaside.
            return vm.call(getattr_descr(vm, hook, container), (key,))
    return container[key]


_ClassMethodDescriptorType = type(dict.__dict__["fromkeys"])


def getattr_descr(vm, descr, cls):
    return bind(vm, descr, None, cls)


def setitem(vm, container, key, value):
    """``container[key] = value``."""
    tp = type(container)
    if tp is list or tp is dict:
        container[key] = value
        return
    method = lookup(tp, "__setitem__")
    if needs_interpreter(method):
        call_special(vm, method, container, key, value)
    else:
        container[key] = value


def delitem(vm, container, key):
    """``del container[key]``."""
    tp = type(container)
    method = lookup(tp, "__delitem__")
    if needs_interpreter(method):
        call_special(vm, method, container, key)
    else:
        del container[key]


def contains(vm, container, item):
    """``item in container``."""
    tp = type(container)
    if tp in _FAST:
        return item in container
    method = lookup(tp, "__contains__")
    if method is not MISSING:
        if needs_interpreter(method):
            return truth(vm, call_special(vm, method, container, item))
        if not _iterates_in_python(tp):
            return operator.contains(container, item)
        return operator.contains(container, item)
    if not _iterates_in_python(tp):
        return operator.contains(container, item)
    it = get_iter(vm, container)
    while True:
        try:
            value = next_value(vm, it)
        except StopIteration:
            return False
        if compare_bool(vm, value, item):
            return True


def _iterates_in_python(tp):
    return needs_interpreter(lookup(tp, "__iter__")) or (
        lookup(tp, "__iter__") is MISSING and needs_interpreter(lookup(tp, "__getitem__")))


def iterate(vm, obj):
    """A host iterable over ``obj`` that C code may consume.

    Builtin containers and iterators whose ``__next__`` is C are returned
    as they are; otherwise a host generator drives the interpreted
    ``__iter__``/``__next__``.
    """
    if type(obj) in _FAST:
        return obj
    it = get_iter(vm, obj)
    if not needs_interpreter(lookup(type(it), "__next__")):
        return it
    return _drive(vm, it)


def iterate_hinted(vm, obj):
    """:func:`iterate` for C code that also asks ``obj`` for a length hint
    after getting its iterator (``list()``, ``tuple()``, ``sorted()``:
    ``PyObject_LengthHint``), so that ``obj``'s Python ``__len__`` or
    ``__length_hint__`` runs as there."""
    if type(obj) in _FAST:
        return obj
    it = get_iter(vm, obj)
    length_hint(vm, obj)
    if not needs_interpreter(lookup(type(it), "__next__")):
        return it
    return _drive(vm, it)


def length_hint(vm, obj):
    """What ``PyObject_LengthHint(obj)`` runs of Python code, with its
    errors (the hint itself only sizes C's allocation): a Python
    ``__len__`` (a ``TypeError`` from it is dropped), else a Python
    ``__length_hint__`` (bound through its descriptor; ``TypeError`` and
    ``NotImplemented`` mean no hint; anything but an int >= 0 is an
    error)."""
    tp = type(obj)
    method = lookup(tp, "__len__")
    if method is not MISSING:
        if not needs_interpreter(method):
            return
        failed = False
        try:
            length_result(call_special(vm, method, obj))
        except TypeError:
            failed = True
        if not failed:
            return
    method = lookup(tp, "__length_hint__")
    if not needs_interpreter(method):
        return
    hint = bind(vm, method, obj, tp)
    try:
        result = vm.call(hint, ())
    except TypeError:
        return
    if result is NotImplemented:
        return
    if not isinstance(result, int):
        raise TypeError("__length_hint__ must be an integer, not %s" % type(result).__name__)
    if result < 0:
        raise ValueError("__length_hint__() should return >= 0")


def _drive(vm, it):
    while True:
        try:
            value = next_value(vm, it)
        except StopIteration:
            return
        yield value
        # Dropped before the next item exists, as when C code iterates
        # (a consumer's __del__ timing depends on it).
        del value


def unpack(vm, seq, before, after):
    """Items for ``UNPACK_SEQUENCE`` (``after == -1``) or ``UNPACK_EX``.

    Returns the list of values in source order (the star target, if any, as
    a list in its place), with CPython's error messages.
    """
    tp = type(seq)
    if lookup(tp, "__iter__") is MISSING and lookup(tp, "__getitem__") is MISSING:
        raise TypeError("cannot unpack non-iterable %s object" % tp.__name__)
    it = get_iter(vm, seq)
    values = []
    for i in range(before):
        try:
            values.append(next_value(vm, it))
        except StopIteration:
            values = None
            count = i
            break
    if values is None:
        if after == -1:
            raise ValueError("not enough values to unpack (expected %d, got %d)" % (before, count))
        raise ValueError("not enough values to unpack (expected at least %d, got %d)"
                         % (before + after, count))
    if after == -1:
        try:
            next_value(vm, it)
        except StopIteration:
            return values
        raise ValueError("too many values to unpack (expected %d)" % before)
    rest = list(iterate(vm, it))
    if len(rest) < after:
        raise ValueError("not enough values to unpack (expected at least %d, got %d)"
                         % (before + after, before + len(rest)))
    if after:
        values.append(rest[:len(rest) - after])
        values.extend(rest[len(rest) - after:])
    else:
        values.append(rest)
    return values
