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
    """A float from an impure call (``random.random()``, ``time.time()``),
    called again by the mock, in program order, as ``make(fn())``: a 0-d
    float64 graph input.  ``serial`` tells calls of the same ``fn`` apart."""

    fn: object
    make: object
    serial: int

    def expr(self):
        name = getattr(self.fn, "__qualname__", "impure")
        return Call(Obj(self.make, "as_double"), (Call(Obj(self.fn, name), ()),))


@attrs.frozen(cache_hash=True)
class Attr(Source):
    """``base.name``."""

    of: Source
    name: str

    @property
    def base(self):
        return self.of

    def expr(self):
        return GetAttr(self.of.expr(), self.name)


@attrs.frozen(cache_hash=True)
class Item(Source):
    """``base[key]`` for a hashable, printable key."""

    of: Source
    key: object

    @property
    def base(self):
        return self.of

    def expr(self):
        return GetItem(self.of.expr(), const(self.key))


@attrs.frozen(cache_hash=True)
class Produced(Source):
    """A tensor an earlier graph produced (``explain`` splits a run with
    breaks into the graphs a run with resume points would have; a later
    graph receives such tensors as inputs)."""

    name: str

    def expr(self):
        return Local(self.name)

