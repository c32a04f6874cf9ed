"""A tiny expression language: the shared vocabulary of guards and mocks.

Access paths (:mod:`.sources`), guard checks (:mod:`.guards`) and the
mock's value plans are all described as trees of these nodes.  They are
plain data: :mod:`pyinterp.codegen` compiles them to bytecode, and
:meth:`Expr.render` writes them as Python source for ``explain``.

Objects that are not literals (classes, functions, modules, dtypes...) are
kept in :class:`Obj` nodes; the code generator stores them in the generated
function's globals under a readable name, so the rendered Python and the
bytecode agree.
"""
import attrs

_LITERAL_TYPES = (int, float, complex, str, bytes, bool, type(None), type(Ellipsis))


def is_literal(value):
    """True for values that are their own source text (and compile to a
    ``LOAD_CONST``): numbers, strings, None, and tuples of those."""
    if type(value) in _LITERAL_TYPES:
        return True
    if type(value) is tuple:
        return all(is_literal(v) for v in value)
    return False


class Expr:
    """Base class of expression nodes."""

    __slots__ = ()

    def render(self, names):
        """Python source text; ``names(obj)`` spells a non-literal object."""
        raise NotImplementedError


@attrs.frozen
class Local(Expr):
    """A local variable of the generated function (an argument or a temp)."""

    name: str

    def render(self, names):
        return self.name


@attrs.frozen(eq=False)
class Obj(Expr):
    """A constant object.  Compared by identity: two ``Obj`` nodes are the
    same only if they hold the same object."""

    value: object
    hint: str = ""

    def __eq__(self, other):
        return type(other) is Obj and other.value is self.value

    def __hash__(self):
        return id(self.value)

    def render(self, names):
        if is_literal(self.value):
            return repr(self.value)
        return names(self)


@attrs.frozen
class GetAttr(Expr):
    """``base.name``."""

    base: Expr
    name: str

    def render(self, names):
        return "%s.%s" % (self.base.render(names), self.name)


@attrs.frozen
class GetItem(Expr):
    """``base[key]``."""

    base: Expr
    key: Expr

    def render(self, names):
        return "%s[%s]" % (self.base.render(names), self.key.render(names))


@attrs.frozen
class Call(Expr):
    """``func(*args, **dict(kwargs))``; ``kwargs`` is a tuple of (name, expr)."""

    func: Expr
    args: tuple = ()
    kwargs: tuple = ()

    def render(self, names):
        parts = [a.render(names) for a in self.args]
        parts += ["%s=%s" % (k, v.render(names)) for k, v in self.kwargs]
        return "%s(%s)" % (self.func.render(names), ", ".join(parts))


@attrs.frozen
class Compare(Expr):
    """``left <op> right`` with op one of ``== != < <= > >= is is not in not in``."""

    op: str
    left: Expr
    right: Expr

    def render(self, names):
        return "%s %s %s" % (self.left.render(names), self.op, self.right.render(names))


@attrs.frozen
class BinOp(Expr):
    """``left <op> right`` with op one of ``+ - * // %`` (size arithmetic)."""

    op: str
    left: Expr
    right: Expr

    def render(self, names):
        return "(%s %s %s)" % (self.left.render(names), self.op, self.right.render(names))


@attrs.frozen
class Not(Expr):
    """``not operand``."""

    operand: Expr

    def render(self, names):
        return "not %s" % self.operand.render(names)


@attrs.frozen
class Build(Expr):
    """A new ``tuple``, ``list``, ``set`` or ``dict`` (``items`` are
    ``(key, value)`` pairs for a dict)."""

    kind: str
    items: tuple

    def render(self, names):
        if self.kind == "dict":
            body = ", ".join("%s: %s" % (k.render(names), v.render(names))
                             for k, v in self.items)
            return "{%s}" % body
        body = ", ".join(i.render(names) for i in self.items)
        if self.kind == "tuple":
            return "(%s,)" % body if len(self.items) == 1 else "(%s)" % body
        if self.kind == "set":
            return "{%s}" % body if self.items else "set()"
        return "[%s]" % body


def call(func, *args, **kwargs):
    """Shorthand for :class:`Call` with objects wrapped in :class:`Obj`."""
    return Call(_wrap(func), tuple(_wrap(a) for a in args),
                tuple((k, _wrap(v)) for k, v in kwargs.items()))


def _wrap(value):
    return value if isinstance(value, Expr) else Obj(value)


def const(value):
    """``value`` as an expression node."""
    return _wrap(value)
