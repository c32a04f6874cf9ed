"""The RefGraph: what a traced run read from outside, and what it wrote.

* **Reads.** Every value reached from outside the function is registered
  with its :mod:`source <.sources>` (objects by ``id``, pinned for the whole
  trace so ids stay unique) and produces the guard its type calls for:
  scalars by exact type and value, tensors by metadata, modules/functions/
  classes by identity, other objects by exact type (what is read *through*
  them is guarded in turn).
* **Writes.** Stores into outside objects are logged, in program order, as
  :class:`SideEffect` records that the mock replays.  A location written by
  the run is *dirty*: later reads of it see the run's own value and need no
  guard.
"""
import types

import attrs

from . import guards as G
from .sources import Attr, Item, Root

_SCALARS = frozenset({int, float, bool, str, bytes, complex, type(None), type(Ellipsis),
                      range, slice, type(NotImplemented)})
_IDENTITY_TYPES = frozenset({
    type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType,
    types.MethodDescriptorType, types.WrapperDescriptorType,
    types.ClassMethodDescriptorType, types.GetSetDescriptorType,
    types.MemberDescriptorType, types.MethodWrapperType, staticmethod, classmethod,
    property, types.CodeType,
})
_BOUND_C_METHODS = frozenset({types.BuiltinMethodType, types.MethodWrapperType})
_GROWING = frozenset({"append", "extend", "__iadd__"})  # list methods that only add at the end


@attrs.define
class SideEffect:
    """One write to outside state, replayed by the mock.

    ``kind`` is ``setattr``, ``delattr``, ``setitem``, ``delitem``, ``call``
    (a method of an outside container, or a deferred function such as
    ``print``); ``target`` is the source written to (None for ``call`` of a
    plain function); ``operands`` are the real values used.
    """

    kind: str
    target: object
    name: object
    operands: tuple
    kwargs: dict = attrs.Factory(dict)
    site: object = None


class RefGraph:
    """Reads (as guards), writes (as side effects) and object provenance."""

    def __init__(self, torch=None):
        self.torch = torch
        self._sources = {}
        self._objects = {}  # id -> object: pins every registered object
        self._written = set()
        self.guards = {}
        self.effects = []
        self._dirty = set()
        self._grown = {}  # id -> (length, site): outside lists only appended to so far
        self._tensor_sources = []
        self._immutable_tensor_types = ()
        if torch is not None:
            self._value_types = (torch.dtype, torch.device, torch.Size, torch.layout,
                                 torch.memory_format)
        else:
            self._value_types = ()

    # -- provenance ---------------------------------------------------------
    def source_of(self, obj):
        """The source ``obj`` was first reached by, or None (created in the run)."""
        return self._sources.get(id(obj))

    def register(self, obj, source):
        self._sources[id(obj)] = source
        self._objects[id(obj)] = obj

    def add_guard(self, guard):
        key = guard.key()
        if key not in self.guards:
            self.guards[key] = guard

    def fixed(self, value):
        """True if the guard a read of ``value`` adds fixes all that C code
        can read from it: scalars, value types, and sets and tuples of
        scalars by value; classes, functions, modules and enum members by
        identity.  (An object guarded by its type only is not fixed.)"""
        tp = type(value)
        return tp in _SCALARS or tp in _IDENTITY_TYPES or isinstance(value, type) \
            or _is_enum_member(value) \
            or bool(self._value_types) and isinstance(value, self._value_types) \
            or tp in (tuple, frozenset, set) and _all_scalars(value)

    # -- reads --------------------------------------------------------------
    def read(self, source, value, site=None):
        """``value`` was read at ``source``: register it and guard it."""
        tp = type(value)
        if tp in _SCALARS or (self._value_types and isinstance(value, self._value_types)):
            self.add_guard(G.ValueEq(source, value=value, site=site))
            return
        known = self._sources.get(id(value))
        if known is not None:
            if known != source:
                self.add_guard(G.SameObject(source, other=known, site=site))
            return
        if tp in (tuple, frozenset, set) and _all_scalars(value):
            # (a set is compared with a copy: the run may change the original)
            self.add_guard(G.ValueEq(source, value=set(value) if tp is set else value,
                                     site=site))
            if tp is set:  # mutable: writes to it must be seen
                self.register(value, source)
            return
        torch = self.torch
        if tp in _BOUND_C_METHODS and not isinstance(getattr(value, "__self__", None),
                                                     (types.ModuleType, type(None))):
            # A C method bound to an object: made afresh on each access and
            # fixed by its owner's (guarded) type; calls on it are classified.
            self.register(value, source)
            return
        if torch is not None and isinstance(value, torch.Tensor):
            self.add_guard(G.TensorMatch(
                source, tp=tp, dtype=value.dtype, device=value.device,
                shape=tuple(value.shape), stride=tuple(value.stride()),
                requires_grad=value.requires_grad, site=site))
            self._tensor_sources.append(source)
        elif tp in _IDENTITY_TYPES or isinstance(value, type) or _is_enum_member(value):
            # (a class by identity whatever its metaclass: ABCMeta, EnumMeta...)
            self.add_guard(G.Identity(source, obj=value, site=site))
            if tp is types.FunctionType:
                self.register(value, source)
                self.read_function_state(value, source, site)
        elif tp is types.MethodType:
            self.add_guard(G.TypeIs(source, tp=tp, site=site))
            self.add_guard(G.Identity(Attr(source, "__func__"), obj=value.__func__, site=site))
            self.read(Attr(source, "__self__"), value.__self__, site)
        elif not (tp is dict and type(source) is Attr and source.name == "__dict__"):
            # (an instance __dict__ is a dict: nothing to check)
            self.add_guard(G.TypeIs(source, tp=tp, site=site))
        self.register(value, source)

    def read_function_state(self, fn, source, site=None):
        """A function's code and defaults decide what a call does: guard
        them (``__code__`` by identity; defaults element by element, so a
        mutable default gets a path and its mutation is replayed)."""
        self.add_guard(G.Identity(Attr(source, "__code__"), obj=fn.__code__, site=site))
        for name in ("__defaults__", "__kwdefaults__"):
            value = getattr(fn, name)
            self.read(Attr(source, name), value, site)
            if value and self.source_of(value) is not None:
                self.read_all(value, site)

    def read_attr(self, obj, name, value, site=None):
        """``obj.name`` gave ``value``."""
        base = self._sources.get(id(obj))
        if base is not None and ("attr", id(obj), name) not in self._dirty \
                and ("all", id(obj)) not in self._dirty:
            self.read(Attr(base, name), value, site)

    def read_item(self, obj, key, value, site=None):
        """``obj[key]`` gave ``value`` (``key`` a guarded constant)."""
        base = self._sources.get(id(obj))
        if base is not None and self.is_clean(obj, key):
            self.read(Item(base, key), value, site)

    def is_clean(self, obj, key=None):
        """True if the run has not written ``obj`` (or its item ``key``)."""
        if self._grown:
            self._settle(obj)
        return ("all", id(obj)) not in self._dirty and ("item", id(obj), key) not in self._dirty

    def read_len(self, obj, site=None):
        base = self._sources.get(id(obj))
        if base is not None and self.is_clean(obj):
            self.add_guard(G.LenIs(base, n=len(obj), site=site))

    def read_contains(self, obj, member, result, site=None):
        base = self._sources.get(id(obj))
        if base is not None and self.is_clean(obj, member):
            self.add_guard(G.Contains(base, member=member, expected=bool(result), site=site))

    def read_hasattr(self, obj, name, result, site=None):
        base = self._sources.get(id(obj))
        if base is not None and ("attr", id(obj), name) not in self._dirty:
            self.add_guard(G.HasAttr(base, name=name, expected=result, site=site))

    def read_all(self, obj, site=None):
        """Every element of a list/tuple/dict was (or may be) read: guard the
        length or keys, and register each element under its item path."""
        base = self._sources.get(id(obj))
        if base is None or not self.is_clean(obj):
            return
        tp = type(obj)
        if isinstance(obj, dict):
            keys = tuple(dict.keys(obj))
            self.add_guard(G.KeysAre(base, keys=keys, site=site))
            for k in keys:
                self.read(Item(base, k), dict.__getitem__(obj, k), site)
        elif isinstance(obj, (list, tuple)):
            self.add_guard(G.LenIs(base, n=len(obj), site=site))
            getitem = list.__getitem__ if isinstance(obj, list) else tuple.__getitem__
            for i in range(len(obj)):
                self.read(Item(base, i), getitem(obj, i), site)
        elif isinstance(obj, (set, frozenset)):
            return  # sets of scalars are guarded by value; membership by Contains
        else:
            raise TypeError("read_all of %s" % tp.__name__)


    # -- writes -------------------------------------------------------------
    def is_outside(self, obj):
        return id(obj) in self._sources

    def write(self, effect, obj, key):
        """Log ``effect`` on the outside object ``obj`` and mark it dirty."""
        self.effects.append(effect)
        self._dirty.add(key)
        self._written.add(id(obj))

    def alias_guards(self):
        """Objects the run wrote must not alias other outside objects of
        their type on a later call (``f(lst, lst)`` vs ``f([], [])``), and
        tensor inputs must stay distinct objects."""
        by_type = {}
        for oid, source in self._sources.items():
            if type(source) is not Root:  # roots are fixed objects
                by_type.setdefault(type(self._objects[oid]), []).append(source)
        groups = []
        written_types = {type(self._objects[oid]) for oid in self._written
                         if oid in self._objects and type(self._sources[oid]) is not Root}
        for tp in written_types:
            if tp is not type(None) and len(by_type.get(tp, ())) > 1:
                groups.append(tuple(by_type[tp]))
        if len(self._tensor_sources) > 1:
            groups.append(tuple(self._tensor_sources))
        for group in groups:
            self.add_guard(G.Distinct(group))

    def mark_dirty(self, obj, key=None):
        """``obj`` (or its item ``key``) was changed by code the RefGraph did
        not see in detail: later reads of it need no guard (and get no path)."""
        self._dirty.add(("all", id(obj)) if key is None else ("item", id(obj), key))

    def write_attr(self, obj, name, value, site=None, delete=False):
        target = self._sources[id(obj)]
        kind = "delattr" if delete else "setattr"
        operands = () if delete else (value,)
        self.write(SideEffect(kind, target, name, operands, site=site), obj, ("attr", id(obj), name))

    def write_item(self, obj, key, value, site=None, delete=False):
        if self._grown:
            self._settle(obj)
        if isinstance(obj, (list, dict)) and ("all", id(obj)) not in self._dirty \
                and type(self._sources[id(obj)]) is not Root:  # not a module's namespace
            self.read_all(obj, site)  # its length and other items keep their guards
            self._dirty.add(("all", id(obj)))
        target = self._sources[id(obj)]
        kind = "delitem" if delete else "setitem"
        operands = () if delete else (value,)
        self.write(SideEffect(kind, target, key, operands, site=site), obj, ("item", id(obj), key))

    def write_call(self, obj, method, args, kwargs, site=None):
        """A mutating method of an outside container (``lst.append(x)``).

        Appending does not depend on what the list holds, so an outside
        list that is only appended to (an activation log) gets no length
        guard, and stays a cache hit as it grows.  Its old length and items
        are guarded only if the run reads the list afterwards, or calls
        another method of it (:meth:`_settle`, with the length it had
        before the first append).
        """
        target = self._sources[id(obj)]
        if type(obj) is list and method in _GROWING and type(target) is not Root \
                and (id(obj) in self._grown or self.is_clean(obj)):
            self._grown.setdefault(id(obj), (len(obj), site))
            key = ("grown", id(obj))
        else:
            self.read_all(obj, site)  # its old elements keep their item paths
            key = ("all", id(obj))
        self.write(SideEffect("call", target, method, tuple(args), dict(kwargs or {}), site),
                   obj, key)

    def _settle(self, obj):
        """A list the run appended to is read: guard the length and items it
        had before the first append, then treat it as written."""
        pending = self._grown.pop(id(obj), None)
        if pending is None:
            return
        n, site = pending
        base = self._sources[id(obj)]
        self.add_guard(G.LenIs(base, n=n, site=site))
        for i in range(n):
            self.read(Item(base, i), list.__getitem__(obj, i), site)
        self._dirty.add(("all", id(obj)))

    def defer_call(self, func, args, kwargs, site=None):
        """A call replayed by the mock (``print``, logging, warnings)."""
        self.effects.append(SideEffect("call", None, func, tuple(args), dict(kwargs or {}), site))


def _all_scalars(values):
    return all(type(v) in _SCALARS or (type(v) in (tuple, frozenset) and _all_scalars(v))
               for v in values)


def _is_enum_member(value):
    import enum

    return isinstance(value, enum.Enum)
