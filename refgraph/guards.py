"""Guards as data: what must still hold for a cache entry to be reused.

Each guard names the source(s) it looks at and the expectation snapshotted
during the traced run.  :meth:`Guard.checks` gives the test as expressions
(:mod:`.expr`), written against a ``resolve(source) -> Expr`` function so the
code generator can evaluate each path once and reuse it.  Every guard also
remembers the user's ``file:line`` whose read created it, for ``explain``.

Cheap, structural guards (types, identities) come first in a guard
function because a trace records a value's type guard before anything read
through it.
"""
import math
import sys
import types
import weakref

import attrs

from . import relations
from .expr import Build, Call, Compare, GetAttr, GetItem, Not, Obj, const
from .sources import Attr, key_value

_type = Obj(type, "type")
_len = Obj(len, "len")
# An object's address as an int, like id(), but without the audit event that
# id() raises (with an audit hook installed, as filelock does on 3.12+, every
# id() runs a Python call); object.__hash__ is the address rotated: one int
# per live object.
_address = Obj(object.__hash__, "object.__hash__")
_tuple = Obj(tuple, "tuple")
_hasattr = Obj(hasattr, "hasattr")
_repr = Obj(repr, "repr")
_NUMBERS = frozenset({int, float, bool, complex})


def _by_repr(value):
    """Does ``==`` with ``value`` (a scalar or a container of scalars) miss
    what tells equal values apart: item types, a set's order?"""
    tp = type(value)
    if tp in (set, frozenset) and len(value) > 1:
        return True
    return tp in (tuple, set, frozenset) and any(type(v) in _NUMBERS or _by_repr(v)
                                                 for v in value)


@attrs.define
class Guard:
    """Base: ``source`` and the user's ``site`` (``(filename, lineno)`` or None)."""

    source: object
    site: object = attrs.field(default=None, kw_only=True, eq=False)

    def sources(self):
        """Every source the checks evaluate (the guarded one first)."""
        return (self.source,)

    def checks(self, resolve):
        """The tests, all of which must be true, as expressions."""
        raise NotImplementedError

    def key(self):
        """Guards with equal keys are redundant (kept once)."""
        return (type(self).__name__, self.source) + self._key_extra()

    def _key_extra(self):
        return ()

    def weak_refs(self):
        """The weak references this guard holds its objects by (a cache
        entry retires when one dies)."""
        return ()


@attrs.define
class TypeIs(Guard):
    """``type(value) is T`` (exact: a subclass may behave differently)."""

    tp: type = None

    def checks(self, resolve):
        return [Compare("is", Call(_type, (resolve(self.source),)), Obj(self.tp, _name(self.tp)))]


class Weak:
    """A guarded object held by weak reference (:func:`hold`): ``ref`` is
    the ``weakref.ref``, ``hint`` its readable name."""

    __slots__ = ("ref", "hint")

    def __init__(self, obj):
        self.ref = weakref.ref(obj)
        self.hint = _name(obj)

    def __eq__(self, other):
        return type(other) is Weak and other.ref is self.ref

    def __hash__(self):
        return hash(self.ref)

    def __repr__(self):
        return "Weak(%s)" % self.hint


def hold(obj):
    """``obj`` as a guard keeps it: a function the program may drop (made at
    run time, not held by its module under its name) by weak reference, as
    a :class:`Weak`; anything else as it is (classes, modules, code objects,
    builtins, enum members: they live as long as their module or class)."""
    if type(obj) is types.FunctionType and not _held_by_name(obj):
        return Weak(obj)
    return obj


def _held_by_name(fn):
    """True if ``fn`` is what its module holds under its qualified name
    (plain dict reads: no ``__getattr__`` of the program runs)."""
    module = sys.modules.get(fn.__module__) if isinstance(fn.__module__, str) else None
    namespace = getattr(module, "__dict__", None)
    found = None
    for part in fn.__qualname__.split("."):
        if type(namespace) is not dict and not isinstance(namespace, types.MappingProxyType):
            return False
        found = namespace.get(part)
        if isinstance(found, (staticmethod, classmethod)):
            found = found.__func__
        namespace = getattr(found, "__dict__", None) if isinstance(found, type) else None
    return found is fn


@attrs.define
class Identity(Guard):
    """``value is obj``: modules, functions, classes, singletons.

    ``obj`` goes through :func:`hold`: a function the program may drop (a
    closure, a lambda made per call, whose cells or defaults can hold
    tensors) is kept by weak reference and checked as ``value is ref()``
    after ``value is not None``; its cache entry retires when it dies."""

    obj: object = attrs.field(default=None, converter=hold)

    def checks(self, resolve):
        if type(self.obj) is Weak:
            return [Compare("is not", resolve(self.source), const(None)),
                    Compare("is", resolve(self.source),
                            Call(Obj(self.obj.ref, self.obj.hint + "_ref")))]
        return [Compare("is", resolve(self.source), Obj(self.obj, _name(self.obj)))]

    def weak_refs(self):
        return (self.obj.ref,) if type(self.obj) is Weak else ()


@attrs.define
class ValueEq(Guard):
    """An exact type check, then ``==`` (``1 == 1.0 == True`` must not pass
    for each other); NaN is checked as ``value != value``.  A tuple that
    holds numbers, or a set or frozenset of more than one item, is compared
    by its ``repr``: exact for the types of its items too (``(1,) ==
    (True,)``), and for a set, the order iteration gives (equal sets may
    iterate differently).  (A tuple of strings and None keeps the cheaper
    ``==``: it is exact.)"""

    value: object = None

    def checks(self, resolve):
        v = resolve(self.source)
        out = [Compare("is", Call(_type, (v,)), Obj(type(self.value), _name(type(self.value))))]
        if self.value is None or type(self.value) is bool:
            out[0] = Compare("is", v, const(self.value))
        elif type(self.value) is float and math.isnan(self.value):
            out.append(Compare("!=", v, v))
        elif _by_repr(self.value):
            out.append(Compare("==", Call(_repr, (v,)), const(repr(self.value))))
        else:
            out.append(Compare("==", v, const(self.value)))
        return out

    def _key_extra(self):
        return (type(self.value), repr(self.value))


@attrs.define
class TensorMatch(Guard):
    """Tensor metadata as seen when the tensor was first read: exact type,
    dtype, device, shape, strides and ``requires_grad``."""

    tp: type = None
    dtype: object = None
    device: object = None
    shape: tuple = ()
    stride: tuple = ()
    requires_grad: bool = False
    # A weak reference to the tensor that was read (not a guarded object:
    # its death retires nothing); the guard code may check it together
    # with the other tensors of the entry (:mod:`pyinterp.codegen.tensor_checks`).
    example: object = attrs.field(default=None, eq=False, repr=False, kw_only=True)

    def checks(self, resolve):
        return [self.type_check(resolve), self.metadata_check(resolve)]

    def type_check(self, resolve):
        """``type(value) is tp``."""
        return Compare("is", Call(_type, (resolve(self.source),)), Obj(self.tp, _name(self.tp)))

    def metadata_check(self, resolve):
        """Everything else, as one tuple comparison (fewer instructions to
        assemble and run)."""
        v = resolve(self.source)
        seen = Build("tuple", (GetAttr(v, "dtype"), GetAttr(v, "device"), GetAttr(v, "shape"),
                               Call(GetAttr(v, "stride")), GetAttr(v, "requires_grad")))
        expected = Build("tuple", (Obj(self.dtype, "torch.%s" % str(self.dtype)[6:]),
                                   Obj(self.device, "device(%r)" % str(self.device)),
                                   const(self.shape), const(self.stride),
                                   const(self.requires_grad)))
        return Compare("==", seen, expected)


@attrs.define
class TensorKind(Guard):
    """A tensor with symbolic dimensions (dynamic shapes): what
    :class:`TensorMatch` checks except its sizes and strides, which
    :class:`ShapeRelations` checks instead (the static ones exactly, the
    symbolic ones by the relations the capture found)."""

    tp: type = None
    dtype: object = None
    device: object = None
    rank: int = 0
    requires_grad: bool = False

    def checks(self, resolve):
        v = resolve(self.source)
        seen = Build("tuple", (GetAttr(v, "dtype"), GetAttr(v, "device"), GetAttr(v, "ndim"),
                               GetAttr(v, "requires_grad")))
        expected = Build("tuple", (Obj(self.dtype, "torch.%s" % str(self.dtype)[6:]),
                                   Obj(self.device, "device(%r)" % str(self.device)),
                                   const(self.rank), const(self.requires_grad)))
        return [Compare("is", Call(_type, (v,)), Obj(self.tp, _name(self.tp))),
                Compare("==", seen, expected)]


@attrs.define
class ShapeRelations(Guard):
    """The sizes and strides of tensors with symbolic dimensions (at
    ``tensors``, in order): every relation of ``code`` holds, each written
    over ``t<k>``, ``s<k>`` and ``r<k>`` (the k-th tensor, its shape, its
    strides: :mod:`.relations`); ``lines`` are the same relations over the
    tensors' paths (``x.shape[0] >= 2``), for people.  ``source`` is the
    first tensor's path."""

    tensors: tuple = ()
    code: tuple = ()
    lines: tuple = ()

    def sources(self):
        return tuple(self.tensors) + tuple(Attr(t, "shape") for t in self.tensors)

    def checks(self, resolve):
        tensors = [resolve(t) for t in self.tensors]
        shapes = [resolve(Attr(t, "shape")) for t in self.tensors]
        return [c for line in self.code for c in relations.checks(line, tensors, shapes)]

    def _key_extra(self):
        return (self.code,)


def _c_method(via, name):
    """``via.name`` (``list.__len__``...) as an expression."""
    return Obj(getattr(via, name), "%s.%s" % (via.__name__, name))


@attrs.define
class LenIs(Guard):
    """``len(value) == n``: a sequence or mapping that was iterated.

    ``via`` (here and in :class:`KeysAre` and :class:`Contains`): for a
    Python subclass of a builtin container, that builtin, whose C method
    reads the value: a Python ``__len__`` the program never called (it
    iterated the list in C) must not run in the guard."""

    n: int = 0
    via: type = None

    def checks(self, resolve):
        length = _len if self.via is None else _c_method(self.via, "__len__")
        return [Compare("==", Call(length, (resolve(self.source),)), const(self.n))]


@attrs.define
class ClassLookups(Guard):
    """What the run looked up on one class: every name whose MRO walk
    reached the class, as found in the class's own ``__dict__`` then
    (``found``: name -> the object, compared by identity) or absent from it
    (``absent``).  A dunder, method, property or other descriptor replaced
    on the class, or a name added to a class earlier in the MRO (an
    override), fails it.  One guard per class, shared by all its instances;
    ``source`` is a :class:`~.sources.Root` holding the class's
    ``__dict__`` (a live mappingproxy), so the checks follow no path.

    Absent names are one check each, or one ``isdisjoint`` on the dict's
    keys view when there are many (it costs as much as ~6 ``not in``)."""

    cls: type = None
    keys: object = None  # a live keys view of the class __dict__
    found: dict = attrs.Factory(dict)
    absent: dict = attrs.Factory(dict)  # name -> None (an ordered set)

    def checks(self, resolve):
        d = resolve(self.source)
        out = [Compare("is", GetItem(d, const(name)), Obj(value, _name(value)))
               for name, value in self.found.items()]
        if len(self.absent) >= _DISJOINT_FROM:
            keys = Obj(self.keys, "%s.keys()" % self.source.hint)
            out.append(Call(GetAttr(keys, "isdisjoint"), (const(tuple(self.absent)),)))
        else:
            out += [Compare("not in", const(name), d) for name in self.absent]
        return out

    def key(self):
        return ("ClassLookups", id(self.cls))


_DISJOINT_FROM = 6


def no_module_hooks(d):
    """True if the module whose ``__dict__`` is ``d`` has no hooks of its own
    and no ``module.compile()`` override (checked by :class:`NoModuleHooks`)."""
    return not (d["_forward_pre_hooks"] or d["_forward_hooks"] or d["_backward_pre_hooks"]
                or d["_backward_hooks"]) and "_compiled_call_impl" not in d


@attrs.define
class NoModuleHooks(Guard):
    """``no_module_hooks(module.__dict__)``: a module call that went straight
    to ``forward`` is still hook-free (one check instead of five: a model's
    guard has one per submodule call)."""

    def checks(self, resolve):
        return [Call(Obj(no_module_hooks, "no_module_hooks"), (resolve(self.source),))]


@attrs.define
class KeysAre(Guard):
    """``tuple(value) == keys``: the keys (in order) of an iterated dict."""

    keys: tuple = ()
    via: type = None

    def checks(self, resolve):
        value = resolve(self.source)
        if self.via is not None:
            value = Call(_c_method(dict, "keys"), (value,))  # (no Python __len__ hint)
        return [Compare("==", Call(_tuple, (value,)),
                        Build("tuple", tuple(const(k) for k in self.keys)))]

    def _key_extra(self):
        return (self.keys,)


@attrs.define
class Contains(Guard):
    """``(key in value) is expected``."""

    member: object = None
    expected: bool = True
    via: type = None

    def checks(self, resolve):
        member = const(key_value(self.member))
        if self.via is None:
            return [Compare("in" if self.expected else "not in", member, resolve(self.source))]
        test = Call(_c_method(self.via, "__contains__"), (resolve(self.source), member))
        return [test if self.expected else Not(test)]

    def _key_extra(self):
        return (self.member, self.expected)


@attrs.define
class HasAttr(Guard):
    """``hasattr(value, name) is expected``."""

    name: str = ""
    expected: bool = True

    def checks(self, resolve):
        test = Call(_hasattr, (resolve(self.source), const(self.name)))
        return [test if self.expected else Not(test)]

    def _key_extra(self):
        return (self.name, self.expected)


@attrs.define
class SameObject(Guard):
    """``value is other``: two paths reached the same object."""

    other: object = None

    def sources(self):
        return (self.source, self.other)

    def checks(self, resolve):
        return [Compare("is", resolve(self.source), resolve(self.other))]

    def _key_extra(self):
        return (self.other,)


@attrs.define
class Distinct(Guard):
    """The tensors at ``source`` (a tuple of sources) are distinct objects:
    a trace of ``f(a, b)`` must not serve ``f(a, a)``."""

    def sources(self):
        return tuple(self.source)

    def checks(self, resolve):
        if len(self.source) == 2:
            return [Compare("is not", *(resolve(s) for s in self.source))]
        addresses = Build("set", tuple(Call(_address, (resolve(s),)) for s in self.source))
        return [Compare("==", Call(_len, (addresses,)), const(len(self.source)))]


@attrs.define
class StateIs(Guard):
    """Global state (``source`` is a zero-argument function, e.g. grad mode)
    returns what it returned during the trace."""

    value: object = None

    def sources(self):
        return ()

    def checks(self, resolve):
        return [Compare("==", Call(Obj(self.source, _name(self.source))), const(self.value))]

    def key(self):
        return ("StateIs", id(self.source))


def _name(obj):
    """A readable spelling of ``obj`` for rendered guards."""
    qualname = getattr(obj, "__qualname__", None)
    module = getattr(obj, "__module__", None)
    if isinstance(obj, type) or callable(obj):
        if qualname and module and module != "builtins":
            return "%s.%s" % (module, qualname)
        if qualname:
            return qualname
    name = getattr(obj, "__name__", None)
    if isinstance(name, str) and type(obj).__name__ == "module":
        return name
    return "<%s at %#x>" % (type(obj).__name__, id(obj))
