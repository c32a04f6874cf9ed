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
import weakref

import attrs

from . import guards as G
from .sources import Attr, ByIdentity, Item, Root

_SCALARS = frozenset({int, float, bool, str, bytes, complex, type(None), type(Ellipsis),
                      range, slice, type(NotImplemented)})
_IDENTITY_TYPES = frozenset({
    type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType,
    types.MethodDescriptorType, types.WrapperDescriptorType,
    types.ClassMethodDescriptorType, types.GetSetDescriptorType,
    types.MemberDescriptorType, types.MethodWrapperType, staticmethod, classmethod,
    property, types.CodeType,
})
_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: setattr on the class raises
_class_dict = type.__dict__["__dict__"].__get__  # (no metaclass code runs)
_class_flags = type.__dict__["__flags__"].__get__
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
        self._classes = {}  # class -> its ClassLookups guard
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

    def retype(self, obj, old):
        """``obj``'s class changed from ``old`` (a lazy module materialized
        natively at its first call): its type guard follows, where nothing
        was yet read through ``obj`` (no other guard's path passes through
        it, and no lookup went through ``old``'s class: the reads that
        follow are of the new class).  False, guards untouched, otherwise."""
        source = self.source_of(obj)
        if source is None:
            return False
        key = G.TypeIs(source, tp=old).key()
        guard = self.guards.get(key)
        if guard is None or guard.tp is not old or any(
                _passes_through(g.sources(), source) for k, g in self.guards.items() if k != key) \
                or any(g.cls is old for g in self._classes.values()):
            return False
        guard.tp = type(obj)
        return True

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
        return tp in _SCALARS or tp in _IDENTITY_TYPES or issubclass(tp, type) \
            or _is_enum_member(value) \
            or bool(self._value_types) and issubclass(tp, self._value_types) \
            or tp in (tuple, frozenset, set) and _all_scalars(value)

    def all_guards(self):
        """Every guard, in the order the guard function checks them: what
        the run looked up on classes first (those checks follow no path, and
        a path read through an instance of a changed class could run the
        new Python code), then the rest in the order of the reads."""
        return list(self._classes.values()) + list(self.guards.values())

    # -- what the run looked up on types ----------------------------------------
    def read_lookup(self, mro, name, site=None):
        """The run looked ``name`` up on a type whose MRO (or the part of it
        walked, for ``super()``) is ``mro``: guard, on every class the walk
        reached, that ``name`` is still absent from it, and the object found
        by identity.  Classes whose dict cannot change (``object``, builtin
        and other immutable types) are skipped.  The first lookup of a name
        on a class wins (it saw the state before the run); a class attribute
        the run wrote before looking it up needs no guard."""
        for cls in mro:
            d = _class_dict(cls)
            present = name in d
            if not _class_flags(cls) & _IMMUTABLE_TYPE \
                    and ("attr", id(cls), name) not in self._dirty:
                guard = self._class_guard(cls, site)
                if name not in guard.found and name not in guard.absent:
                    if present:
                        guard.found[name] = d[name]
                    else:
                        guard.absent[name] = None
            if present:
                return

    def _class_guard(self, cls, site=None):
        """``cls``'s ClassLookups guard, made on first use."""
        guard = self._classes.get(cls)
        if guard is None:  # (setdefault: another thread's lookups may report too)
            d = _class_dict(cls)
            guard = self._classes.setdefault(cls, G.ClassLookups(
                Root(d, "%s.__dict__" % G._name(cls)), cls=cls, keys=d.keys(), site=site))
        return guard

    def class_entry(self, tp, name):
        """The source of what the lookup of ``name`` on ``tp`` finds: the
        entry of the class dict it is in (``Linear.__dict__['forward']``)."""
        for cls in tp.__mro__:
            if name in _class_dict(cls):
                return Item(self._class_guard(cls).source, name)
        raise KeyError(name)

    # -- reads --------------------------------------------------------------
    def read(self, source, value, site=None):
        """``value`` was read at ``source``: register it and guard it."""
        tp = type(value)
        if tp in _SCALARS or (self._value_types and issubclass(type(value), self._value_types)):
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
        if tp in _BOUND_C_METHODS and not issubclass(type(getattr(value, "__self__", None)),
                                                     (types.ModuleType, type(None))):
            # A C method bound to an object: made afresh on each access and
            # fixed by its owner's (guarded) type; calls on it are classified.
            self.register(value, source)
            return
        if torch is not None and issubclass(type(value), torch.Tensor) \
                and torch.nn.parameter.is_lazy(value):
            # A lazy module's parameter before its first call: no shape yet.
            # Its class changes when it is initialized, which fails this guard.
            self.add_guard(G.TypeIs(source, tp=tp, site=site))
        elif torch is not None and issubclass(type(value), torch.Tensor):
            with torch._C.DisableTorchFunction():  # (our read, not the program's)
                shape, stride = tuple(value.shape), tuple(value.stride())
            self.add_guard(G.TensorMatch(
                source, tp=tp, dtype=value.dtype, device=value.device,
                shape=shape, stride=stride, requires_grad=value.requires_grad, site=site,
                example=weakref.ref(value)))
            self._tensor_sources.append(source)
        elif tp in _IDENTITY_TYPES or issubclass(tp, type) or _is_enum_member(value):
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
        mutable default gets a path and its mutation is replayed).

        A kind of default the code cannot use is not guarded: binding reads
        ``__defaults__`` only for positional parameters and
        ``__kwdefaults__`` only for keyword-only ones, and the guarded code
        fixes how many there are.  (Reading any of the three attributes
        raises an audit event: with an audit hook installed, as filelock
        does on 3.12+, each read costs a Python call on the hit path.)"""
        code = fn.__code__
        self.add_guard(G.Identity(Attr(source, "__code__"), obj=code, site=site))
        for name, used in (("__defaults__", code.co_argcount),
                           ("__kwdefaults__", code.co_kwonlyargcount)):
            if not used:
                continue
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
        key = as_key(key)
        if base is not None and self.is_clean(obj, key):
            self.read(Item(base, key, builtin_base(obj)), value, site)

    def is_clean(self, obj, key=None):
        """True if the run has not written ``obj`` (or its item ``key``)."""
        if self._grown:
            self._settle(obj)
        return ("all", id(obj)) not in self._dirty \
            and ("item", id(obj), as_key(key)) not in self._dirty

    def read_len(self, obj, site=None):
        base = self._sources.get(id(obj))
        if base is not None and self.is_clean(obj):
            via = builtin_base(obj)
            n = len(obj) if via is None else via.__len__(obj)
            self.add_guard(G.LenIs(base, n=n, via=via, site=site))

    def read_contains(self, obj, member, result, site=None):
        base = self._sources.get(id(obj))
        member = as_key(member)
        if base is not None and self.is_clean(obj, member):
            self.add_guard(G.Contains(base, member=member, expected=bool(result),
                                      via=builtin_base(obj), site=site))

    def read_hasattr(self, obj, name, result, site=None):
        base = self._sources.get(id(obj))
        if base is not None and ("attr", id(obj), name) not in self._dirty:
            self.add_guard(G.HasAttr(base, name=name, expected=result, site=site))

    def read_all(self, obj, site=None):
        """Every element of a list/tuple/dict was (or may be) read: guard the
        length or keys, and register each element under its item path.
        All of it is read with the builtin's own C methods, then and in the
        guard: C code iterating a subclass of list runs none of its Python
        ``__len__``/``__getitem__``, and neither may we."""
        base = self._sources.get(id(obj))
        if base is None or not self.is_clean(obj):
            return
        tp = type(obj)
        via = builtin_base(obj)
        if issubclass(type(obj), dict):
            keys = tuple(dict.keys(obj))
            self.add_guard(G.KeysAre(base, keys=keys, via=via, site=site))
            for k in keys:
                self.read(Item(base, as_key(k), via), dict.__getitem__(obj, k), site)
        elif issubclass(type(obj), (list, tuple)):
            cls = list if issubclass(type(obj), list) else tuple
            n = cls.__len__(obj)
            self.add_guard(G.LenIs(base, n=n, via=via, site=site))
            for i in range(n):
                self.read(Item(base, i, via), cls.__getitem__(obj, i), site)
        elif issubclass(type(obj), (set, frozenset)):
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
        self._dirty.add(("all", id(obj)) if key is None else ("item", id(obj), as_key(key)))

    def write_attr(self, obj, name, value, site=None, delete=False):
        target = self._sources[id(obj)]
        kind = "delattr" if delete else "setattr"
        operands = () if delete else (value,)
        self.write(SideEffect(kind, target, name, operands, site=site), obj, ("attr", id(obj), name))

    def write_item(self, obj, key, value, site=None, delete=False):
        if self._grown:
            self._settle(obj)
        if issubclass(type(obj), (list, dict)) and ("all", id(obj)) not in self._dirty \
                and type(self._sources[id(obj)]) is not Root:  # not a module's namespace
            self.read_all(obj, site)  # its length and other items keep their guards
            self._dirty.add(("all", id(obj)))
        target = self._sources[id(obj)]
        kind = "delitem" if delete else "setitem"
        operands = () if delete else (value,)
        self.write(SideEffect(kind, target, key, operands, site=site), obj,
                   ("item", id(obj), as_key(key)))

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
        via = builtin_base(obj)
        self.add_guard(G.LenIs(base, n=n, via=via, site=site))
        for i in range(n):
            self.read(Item(base, i, via), list.__getitem__(obj, i), site)
        self._dirty.add(("all", id(obj)))

    def defer_call(self, func, args, kwargs, site=None):
        """A call replayed by the mock (``print``, logging, warnings)."""
        self.effects.append(SideEffect("call", None, func, tuple(args), dict(kwargs or {}), site))


_BUILTIN_CONTAINERS = (dict, list, tuple, set, frozenset)


def as_key(key):
    """``key`` as the RefGraph keeps it: a key whose type hashes in Python
    is wrapped (:class:`~.sources.ByIdentity`), so bookkeeping never runs
    that code; keys of C types are kept as they are."""
    if type(key) in _SCALARS or type(key) is ByIdentity:
        return key
    for cls in type(key).__mro__:
        d = _class_dict(cls)
        if "__hash__" in d:
            return ByIdentity(key) if type(d["__hash__"]) not in _C_SLOTS else key
    return key


_C_SLOTS = (types.WrapperDescriptorType, type(None))


def builtin_base(obj):
    """For an instance of a Python subclass of ``dict``, ``list``, ``tuple``,
    ``set`` or ``frozenset``: that builtin, whose C methods read it without
    running the subclass's Python code; also ``dict`` for C subclasses of
    dict (``defaultdict``: ``d[k]`` on a missing key would call
    ``__missing__``, which inserts).  None for the builtins themselves and
    other objects (read with plain syntax)."""
    tp = type(obj)
    if tp in _BUILTIN_CONTAINERS:
        return None
    if _class_flags(tp) & _IMMUTABLE_TYPE:
        return dict if issubclass(tp, dict) else None
    for base in _BUILTIN_CONTAINERS:
        if issubclass(tp, base):
            return base
    return None


def _all_scalars(values):
    return all(type(v) in _SCALARS or (type(v) in (tuple, frozenset) and _all_scalars(v))
               for v in values)


def _is_enum_member(value):
    import enum

    return issubclass(type(value), enum.Enum)


def _passes_through(sources, source):
    """True if one of ``sources`` is ``source`` or a path read through it."""
    for s in sources:
        while s is not None:
            if s == source:
                return True
            s = s.base
    return False
