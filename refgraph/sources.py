"""Access paths ("sources"): how a value outside the function was reached.

Every value a traced run reads from outside the function gets a source: the
path from one of the guard's roots to the value.  Roots are the call's
arguments (``args[i]``, ``kwargs['name']``) and long-lived objects such as a
module's globals dict (:class:`Root`).  Paths grow with attribute and item
reads::

    Item(Item(Attr(Arg(0), '__dict__'), '_parameters'), 'weight')
    == args[0].__dict__['_parameters']['weight']

Sources are immutable and hashable, so the RefGraph can deduplicate guards
by path; :meth:`Source.expr` gives the path as an expression that guards and
mocks evaluate on later calls.
"""
import attrs

from .expr import Call, GetAttr, GetItem, Local, Obj, const


class Source:
    """Base class: a path to a value."""

    __slots__ = ()

    def expr(self):
        """The path as an :mod:`~pyinterp.refgraph.expr` expression."""
        raise NotImplementedError

    @property
    def base(self):
        """The source this one extends, or None for a root."""
        return None

    def render(self):
        return self.expr().render(lambda o: o.hint or "<%s>" % type(o.value).__name__)

    def __str__(self):
        return self.render()


@attrs.frozen(cache_hash=True)
class Arg(Source):
    """The call's positional argument ``index``."""

    index: int

    def expr(self):
        return GetItem(Local("args"), const(self.index))


@attrs.frozen(cache_hash=True)
class Kwarg(Source):
    """The call's keyword argument ``name``."""

    name: str

    def expr(self):
        return GetItem(Local("kwargs"), const(self.name))


@attrs.frozen(eq=False)
class Root(Source):
    """A long-lived object reached directly: a module's globals dict, the
    builtins dict, a traced function.  Compared by identity."""

    value: object
    hint: str

    def __eq__(self, other):
        return type(other) is Root and other.value is self.value

    def __hash__(self):
        return id(self.value)

    def expr(self):
        return Obj(self.value, self.hint)


@attrs.frozen(cache_hash=True)
class Recomputed(Source):
    """A number from an impure call (``random.random()``, ``time.time()``,
    ``random.randint(0, 9)``), called again by the mock, in program order,
    as ``make(fn(*args))``: a 0-d graph input (float64 for a float, int64
    for an int).  ``serial`` tells calls of the same ``fn`` apart; ``args``
    are plain constants (guarded where they came from)."""

    fn: object
    make: object
    serial: int
    args: tuple = ()

    def expr(self):
        name = getattr(self.fn, "__qualname__", "impure")
        return Call(Obj(self.make, getattr(self.make, "__name__", "make")),
                    (Call(Obj(self.fn, name), tuple(const(a) for a in self.args)),))


@attrs.frozen(cache_hash=True)
class Converted(Source):
    """``fn(of)``: a value the mock makes from an outside one on every call,
    as the run did (``torch.from_numpy(args[1])``: a NumPy array argument as
    a graph input sharing its memory)."""

    of: Source
    fn: object = attrs.field(eq=False)
    hint: str = attrs.field(eq=False)

    @property
    def base(self):
        return self.of

    def expr(self):
        return Call(Obj(self.fn, self.hint), (self.of.expr(),))


_OBJECT_GETATTRIBUTE = Obj(object.__getattribute__, "object.__getattribute__")


@attrs.frozen(cache_hash=True)
class Attr(Source):
    """``base.name``; with ``raw``, ``object.__getattribute__(base, name)``
    (an instance ``__dict__`` read past a Python ``__getattribute__``, which
    the guard must not run)."""

    of: Source
    name: str
    raw: bool = attrs.field(default=False, eq=False)

    @property
    def base(self):
        return self.of

    def expr(self):
        return self.access(self.of.expr())

    def access(self, base):
        """The read, given ``base``'s expression."""
        if self.raw:
            return Call(_OBJECT_GETATTRIBUTE, (base, const(self.name)))
        return GetAttr(base, self.name)


class ByIdentity:
    """A key whose type hashes in Python (an enum member, a user object),
    as the RefGraph keeps it: hashed and compared by identity, so that
    bookkeeping runs none of its Python code (the guard's lookup runs
    ``__hash__`` once per call, as the program's did)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __hash__(self):
        return id(self.value)

    def __eq__(self, other):
        return type(other) is ByIdentity and other.value is self.value

    def __repr__(self):
        return "ByIdentity(%s)" % object.__repr__(self.value)


def key_value(key):
    """The key a :class:`ByIdentity` stands for (other keys as they are)."""
    return key.value if type(key) is ByIdentity else key


class _Absent:
    """What :class:`Item` reads where a dict subclass lacks the key (every
    guard on the value then fails)."""

    def __repr__(self):
        return "ABSENT"


ABSENT = _Absent()
_DICT_GET = Obj(dict.get, "dict.get")
_ABSENT = Obj(ABSENT, "ABSENT")


@attrs.frozen(cache_hash=True)
class Item(Source):
    """``base[key]`` for a hashable, printable key.

    ``via``: for a container of a Python subclass of ``dict``, ``list`` or
    ``tuple``, that builtin: the item is read with its C method
    (``list.__getitem__(base, key)``; ``dict.get(base, key, ABSENT)``, which
    never calls ``__missing__``), so reading it on a later call runs no
    Python ``__getitem__`` the program did not run."""

    of: Source
    key: object
    via: type = attrs.field(default=None, eq=False)

    @property
    def base(self):
        return self.of

    def expr(self):
        return self.access(self.of.expr())

    def access(self, base):
        """The read, given ``base``'s expression."""
        key = const(key_value(self.key))
        if self.via is None:
            return GetItem(base, key)
        if self.via is dict:
            return Call(_DICT_GET, (base, key, _ABSENT))
        return Call(Obj(self.via.__getitem__, "%s.__getitem__" % self.via.__name__),
                    (base, key))


@attrs.frozen(cache_hash=True)
class Produced(Source):
    """A tensor an earlier graph produced (``explain`` splits a run with
    breaks into the graphs a run with resume points would have; a later
    graph receives such tensors as inputs)."""

    name: str

    def expr(self):
        return Local(self.name)

