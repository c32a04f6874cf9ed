"""What native code reads from the containers it is given, and what it
writes to them: one rule for every C operation on a container.

C code that receives a container reads its items where the interpreter
cannot see it: ``a + b`` on two lists, ``a == b``, ``x in lst``,
``sorted(lst)``, ``str(lst)``, ``torch.tensor(lst)`` (whose items become
constants of the graph).  Before such an operation runs, every container
from outside that it can reach is read whole
(:meth:`~pyinterp.refgraph.refgraph.RefGraph.read_all`: its length or keys
guarded, its items registered under item paths and guarded in turn,
scalars by value), as deep as the operation looks:

``REFS``
    it copies references (iteration, unpacking, ``list(x)``, ``zip``,
    concatenation, ``extend``): the container itself.
``ITEMS``
    it looks into each item (``sorted``, ``sum``, ``set``, ``str.join``,
    set operators): the container, and every container nested in its items
    (a dict's keys only).
``VALUE``
    it compares the values whole (``==``, ``in`` on a sequence,
    ``list.index``): everything nested.  An outside object that no guard
    fixes (one guarded by its type only) is a break, unless it compares by
    identity and is the only such object in the operation (``x == None``);
    so is a run-made object whose Python dunders C code would call unseen.
``HASH``
    it hashes a key and compares it with the stored keys of equal hash
    (``in`` on a dict or a set): as ``VALUE``, but the only Python dunders
    C code would call on a run-made key are ``__hash__`` and ``__eq__``
    (``module in memo`` for an ``nn.Sequential``, whose Python ``__len__``
    and ``__repr__`` no lookup calls).
``TEXT``
    it formats the values (``str(lst)``, f-strings): as ``VALUE``, and an
    outside object guarded by its type only is always a break (its repr
    may show its state or address).
``ARGS``
    the arguments of a torch op or of another C call: a container is read
    through and through (a torch op keeps it as a constant) and an outside
    object guarded by its type only inside one is a break; a bare object
    is left to the call's own rule.

A container the run made is not guarded itself, but what it holds is
walked the same way (``sorted([a, b])`` compares two outside lists).

Writes (:func:`mutate`): an in-place operator (``a += b``, ``d |= e``,
``s -= t``) or a mutating method of an outside list, dict or set is logged
as a call the mock replays (``a.__iadd__(b)``), after its operands are read
as the method reads them; a container the run made that is an operand of a
copying method is replayed as it is at the call (a copy), not as it ends.
:data:`METHODS` says, for each method of the builtin containers, how it
reads its owner and its arguments, and whether it writes.

Records (:class:`~.state.Capture`): owns none; reads ``recording`` (the
RefGraph) and ``breaks`` (it breaks through :meth:`.state.Capture.break_graph`).
"""
import collections

import torch

from ..interp.model.dunders import needs_interpreter
from ..interp.model.lookup import MISSING, lookup
from ..refgraph.refgraph import _all_scalars

Tensor = torch.Tensor
REFS, ITEMS, VALUE, HASH, TEXT, ARGS = "refs", "items", "value", "hash", "text", "args"
_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))
_ITEM_VIEW = type({}.items())
_PLAIN = frozenset({int, float, bool, str, bytes, complex, type(None), type(Ellipsis), range,
                    slice, type(NotImplemented)})
# What C code may call on the items it compares, adds, hashes or formats.
_COMPARED = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__",
             "__bool__", "__len__", "__iter__", "__index__", "__int__", "__float__")
_NATIVE_CALLED = {
    VALUE: _COMPARED,
    HASH: ("__hash__", "__eq__"),
    TEXT: _COMPARED + ("__repr__", "__str__", "__format__"),
}


def consume(cap, values, how=REFS, unchecked=()):
    """Native code is about to read ``values`` (``how``: see the module
    docstring), whose own dunders the caller found to be C code, and
    ``unchecked`` (whose may not be): guard what it reads, or break."""
    if cap.breaks.active:
        _Walk(cap, how).run(values, unchecked)


class _Walk:
    """One consumption: reads each outside container once."""

    __slots__ = ("cap", "rg", "how", "seen", "identities")

    def __init__(self, cap, how):
        self.cap = cap
        self.rg = cap.recording.refgraph
        self.how = how
        self.seen = set()
        self.identities = set()  # outside objects compared by identity

    def run(self, values, unchecked):
        how = self.how
        for value in values:
            if how == REFS:
                self.whole(value)
            elif how == ITEMS:
                self.whole(value)
                for item in _items(value):
                    self.nested(item)
            elif how != ARGS or container_kind(value) is not None:
                self.nested(value, top=True)  # (ARGS: a bare object is left to the call's rule)
            if not self.cap.breaks.active:
                return
        for value in unchecked:
            self.nested(value)
        if len(self.identities) > 1:
            self.cap.break_graph("opaque-native-call", "native code compares objects from "
                                 "outside by identity")

    def whole(self, obj):
        """``obj`` is iterated natively: an outside container is read whole;
        an outside iterator, set of objects or C iterable is a break."""
        rg = self.rg
        if not rg.is_outside(obj) or issubclass(type(obj), Tensor):
            return
        tp = type(obj)
        if issubclass(type(obj), (list, tuple, dict)) and not needs_interpreter(lookup(tp, "__iter__")):
            rg.read_all(obj, self.cap.site())
        elif tp in (set, frozenset) and _all_scalars(obj):
            pass  # guarded by value when read
        elif lookup(tp, "__next__") is not MISSING:
            self.cap.break_graph("opaque-native-call", "consuming a %s from outside"
                                 % tp.__name__)
        elif tp in (set, frozenset) or not needs_interpreter(lookup(tp, "__iter__")) \
                and lookup(tp, "__iter__") is not MISSING:
            self.cap.break_graph("opaque-native-call", "iterating a %s from outside natively"
                                 % tp.__name__)

    def nested(self, value, top=False):
        """``value`` is read through and through: every container in it
        (outside ones read whole), and, but for ``ITEMS``, the leaves C code
        would compare or format must be fixed by guards (and, below the
        ``top``, have no Python dunders C code would call)."""
        tp = type(value)
        if tp in _PLAIN or id(value) in self.seen or issubclass(type(value), Tensor) \
                or self.rg.fixed(value):
            return
        self.seen.add(id(value))
        how = self.how
        if how in _NATIVE_CALLED and not top and _python_dunder(tp, _NATIVE_CALLED[how]):
            self.cap.break_graph("native-callback", "native code would call the Python "
                                 "methods of a %s" % tp.__name__)
            return
        outside = self.rg.is_outside(value)
        kind = container_kind(value)
        if kind is None:
            if outside and how != ITEMS:
                self.leaf(value)
            return
        if outside:
            self.whole(value)
        for item in _children(value, kind, how != ITEMS):
            if not self.cap.breaks.active:
                return
            self.nested(item)

    def leaf(self, value):
        """An outside object guarded by its type only, read by C code: fine
        for an ``==`` or a hash by identity if it is the only one; else a break."""
        tp = type(value)
        if self.how in (VALUE, HASH) and lookup(tp, "__eq__") is object.__eq__ \
                and lookup(tp, "__hash__") in (object.__hash__, None):
            self.identities.add(id(value))
            return
        self.cap.break_graph("opaque-native-call", "native code reads a %s from outside"
                             % tp.__name__)


def container_kind(value):
    """``map``, ``seq``, ``set`` or ``view`` for a builtin container (or a
    subclass of one), else None."""
    if issubclass(type(value), dict):
        return "map"
    if issubclass(type(value), (list, tuple)):
        return "seq"
    if issubclass(type(value), (set, frozenset)):
        return "set"
    if type(value) in _VIEWS:
        return "view"
    return None


def _items(value):
    """What iterating ``value`` gives, without running Python code (a dict's
    keys; nothing for iterators, which iteration would consume)."""
    kind = container_kind(value)
    if kind is None or needs_interpreter(lookup(type(value), "__iter__")):
        return ()
    if kind == "map":
        return tuple(dict.keys(value))
    if type(value) is _ITEM_VIEW:
        return tuple(k for k, _ in value)  # (keys differ: values are never compared)
    return tuple(_natively_iterated(value))


def _children(value, kind, values):
    if kind == "map":
        return tuple(dict.keys(value)) + (tuple(dict.values(value)) if values else ())
    return tuple(_natively_iterated(value))


def _natively_iterated(value):
    for base in (list, tuple, set, frozenset):
        if issubclass(type(value), base):
            return base.__iter__(value)
    return iter(value)  # a dict view


def _python_dunder(tp, names):
    return tp.__module__ != "builtins" and any(
        needs_interpreter(lookup(tp, name)) for name in names)


# -- methods of the builtin containers ---------------------------------------------
class Method(tuple):
    """How a C method of a builtin container reads its owner and its
    arguments (None: not at all, the run keeps references), and whether it
    writes the owner (``copies``: its arguments' items are copied in)."""

    __slots__ = ()

    def __new__(cls, owner=None, args=None, writes=False, copies=False):
        return tuple.__new__(cls, (owner, args, writes, copies))

    owner = property(lambda self: self[0])
    args = property(lambda self: self[1])
    writes = property(lambda self: self[2])
    copies = property(lambda self: self[3])


_REFERS = Method()
_WRITES = Method(writes=True)
_READS = Method(owner=REFS)
_COMPARES = Method(owner=VALUE, args=VALUE)
_COPIES_IN = Method(args=REFS, writes=True, copies=True)
_MERGES_IN = Method(args=ITEMS, writes=True, copies=True)
_SET_READS = Method(owner=REFS, args=ITEMS)
METHODS = {
    list: {
        "append": _WRITES, "insert": _WRITES, "pop": _WRITES, "clear": _WRITES,
        "reverse": _WRITES, "__imul__": _WRITES, "__delitem__": _WRITES,
        "extend": _COPIES_IN, "__iadd__": _COPIES_IN, "__setitem__": _COPIES_IN,
        "remove": Method(owner=VALUE, args=VALUE, writes=True),
        "sort": Method(owner=ITEMS, writes=True),
        "index": _COMPARES, "count": _COMPARES, "__contains__": _COMPARES,
        "copy": _READS, "__getitem__": _READS, "__len__": _READS, "__iter__": _READS,
        "__reversed__": _READS,
    },
    tuple: {
        "index": _COMPARES, "count": _COMPARES, "__contains__": _COMPARES,
        "__getitem__": _READS, "__len__": _READS, "__iter__": _READS,
    },
    dict: {
        "pop": _WRITES, "popitem": _WRITES, "setdefault": _WRITES, "clear": _WRITES,
        "__setitem__": _WRITES, "__delitem__": _WRITES, "move_to_end": _WRITES,
        "update": _MERGES_IN, "__ior__": _MERGES_IN,
        "get": _READS, "keys": _READS, "values": _READS, "items": _READS, "copy": _READS,
        "__contains__": _READS, "__getitem__": _READS, "__len__": _READS,
        "__iter__": _READS, "__reversed__": _READS,
    },
    set: {
        "add": _WRITES, "discard": _WRITES, "remove": _WRITES, "pop": _WRITES,
        "clear": _WRITES,
        "update": _MERGES_IN, "difference_update": _MERGES_IN,
        "intersection_update": _MERGES_IN, "symmetric_difference_update": _MERGES_IN,
        "__ior__": _MERGES_IN, "__iand__": _MERGES_IN, "__isub__": _MERGES_IN,
        "__ixor__": _MERGES_IN,
    },
    frozenset: {},
    str: {"join": Method(args=ITEMS)},
}
for _tp in (set, frozenset):
    METHODS[_tp].update({name: _SET_READS for name in (
        "union", "intersection", "difference", "symmetric_difference", "issubset",
        "issuperset", "isdisjoint")})
    METHODS[_tp].update({"copy": _READS, "__contains__": _READS, "__len__": _READS,
                         "__iter__": _READS})
MUTATORS = frozenset(name for table in METHODS.values() for name, m in table.items()
                     if m.writes)
"""Every method name that writes its owner (for speculative arms)."""


def method(owner, name):
    """The :class:`Method` of ``owner``'s C method ``name``, or None."""
    return method_of_type(type(owner), name)


def method_of_type(tp, name):
    """The :class:`Method` of the C method ``name`` of ``tp``'s instances, or None."""
    for base in tp.__mro__:
        table = METHODS.get(base)
        if table is not None and name in table:
            return table[name]
    return None


def read_for(cap, spec, owner, args, kwargs):
    """Read what the method ``spec`` of ``owner`` reads (owner first)."""
    if spec.owner is not None:
        consume(cap, (owner,), spec.owner)
    if spec.args is not None:
        consume(cap, tuple(args) + tuple((kwargs or {}).values()), spec.args)


def mutate(cap, owner, name, args, kwargs=None):
    """The C method ``name`` (a :data:`METHODS` entry that writes, or an
    in-place operator's) is about to change the outside container
    ``owner``: read what it reads, then log it for the mock to replay."""
    spec = method(owner, name) or _WRITES
    read_for(cap, spec, owner, args, kwargs)
    if not cap.breaks.active:
        return
    rg = cap.recording.refgraph
    if spec.copies:
        args = tuple(_copy(rg, a) for a in args)
    rg.write_call(owner, name, args, kwargs, cap.site())


def _copy(rg, value):
    """A container the run made, as it is now (the mock builds it anew)."""
    if type(value) in (list, dict, set) and not rg.is_outside(value):
        return type(value)(value)
    return value


# -- builtins that consume their arguments --------------------------------------------
_CONSUMER_TABLE = (
    (list, REFS), (tuple, REFS), (enumerate, REFS), (zip, REFS), (reversed, REFS),
    (iter, REFS), (map, REFS), (filter, REFS), (collections.deque, REFS),
    (dict, ITEMS), (collections.OrderedDict, ITEMS), (collections.defaultdict, ITEMS),
    (set, ITEMS), (frozenset, ITEMS), (sorted, ITEMS), (sum, ITEMS),
    (min, ITEMS), (max, ITEMS), (any, ITEMS), (all, ITEMS), (str.join, ITEMS))
_MAPPING_BUILDERS = frozenset({dict, collections.OrderedDict, collections.defaultdict})
CONSUMER_CALLABLES = tuple(f for f, _ in _CONSUMER_TABLE)
CONSUMER_READS = {id(f): how for f, how in _CONSUMER_TABLE}
CONSUMERS = frozenset(CONSUMER_READS)
"""Builtins whose only outside reads are the items of container arguments
(``id`` of the callable -> how they read them)."""


def consume_call(cap, fn, args, kwargs):
    """The consumer ``fn`` (in :data:`CONSUMERS`) is about to run."""
    how = CONSUMER_READS[id(fn)]
    mapping = fn in _MAPPING_BUILDERS
    if mapping and args and issubclass(type(args[-1]), dict):
        how = REFS  # dict(mapping) copies references; dict(pairs) looks into each pair
    consume(cap, args, how)
    if kwargs and not mapping:
        consume(cap, tuple(kwargs.values()), REFS)

