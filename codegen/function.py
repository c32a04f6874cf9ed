"""Shared scaffolding for generated functions (guards and mocks).

:class:`GeneratedFunction` pairs an :class:`~.emit.Emitter` with an
:class:`~.exprs.ExprCompiler` and keeps a rendered Python listing in step
with the bytecode: every statement is one listing line, and the emitter's
line number follows it, so a traceback through generated code points at the
right line of the listing that ``explain`` prints.

Access paths are evaluated once each and kept in locals (``s0``, ``s1``...):
:meth:`resolve` emits ``s3 = s1.__dict__`` the first time a path is needed.
A path known to be used only once (see :meth:`GeneratedFunction.count_uses`)
is evaluated where it is used instead, with no local.
"""
import itertools
import linecache
import os

from ..refgraph.expr import Call, Expr, GetItem, Local, Obj, const
from ..refgraph.sources import Arg, Attr, Converted, Item, Kwarg, Recomputed, Root
from .emit import Emitter
from .exprs import ExprCompiler


_serial = itertools.count(1)


def register_source(filename, text):
    """Give ``linecache`` the source ``text`` of generated code compiled
    with ``filename``, so that a traceback through it shows its lines.
    The one place where generated code is registered (whoever owns the
    generated function drops the name again with its owner)."""
    lines = [line + "\n" for line in text.split("\n")]
    linecache.cache[filename] = (len(text), None, lines, filename)
    return filename


class GeneratedFunction:
    """Builds one function: bytecode plus its Python rendering.

    ``filename`` gets a serial number (``<pyinterp-mock-12>``), so that the
    listing of each generated function can be registered with
    ``linecache`` under a name of its own (:func:`register_source`, done
    when a traceback needs it: rendering costs as much as emitting)."""

    def __init__(self, name, argnames, filename):
        self.fn_name = name
        self.argnames = list(argnames)
        if filename.endswith(">"):
            filename = "%s-%d>" % (filename[:-1], next(_serial))
        self.e = Emitter(filename=filename, first_lineno=1)
        self.c = ExprCompiler(self.e)
        self.lines = [("def %s(%s):" % (name, ", ".join(argnames)), None)]
        self._text = None
        self.e.lineno = 1
        self._local_of = {}
        self._counter = 0
        self._uses = {}

    # -- listing ------------------------------------------------------------
    def line(self, text, site=None):
        """Start a new listing line (the bytecode emitted next maps to it).

        ``text`` may be a function returning the text: rendering is done
        only when the listing is asked for (``explain``), not while
        capturing, where it would cost as much as emitting the code."""
        self.lines.append((text, site))
        self.e.lineno = len(self.lines)

    def listing(self):
        """The function as Python source, one line per statement."""
        if self._text is None:
            out = []
            for text, site in self.lines:
                text = text() if callable(text) else text
                if site:
                    text = "%s  # %s:%s" % (text, os.path.basename(site[0] or "?"), site[1])
                out.append(text)
            self._text = "\n".join(out[:1] + ["    " + t for t in out[1:]])
        return self._text

    def new_local(self, prefix="t"):
        self._counter += 1
        return "%s%d" % (prefix, self._counter)

    # -- access paths -----------------------------------------------------------
    def count_uses(self, produce):
        """Count how often each access path will be used.

        ``produce(resolve)`` must ask for paths exactly as the real emission
        will.  A path is used once per direct request, and once by each
        distinct path read from it (``s.__dict__`` uses ``s``).  Afterwards
        :meth:`resolve` inlines a path used once: a local stored and loaded
        once is two instructions for nothing (guards of big models have
        hundreds of them, and assembling costs per instruction).
        """
        uses = self._uses
        markers = {}

        def counting(source):
            seen = uses.get(source, 0)
            uses[source] = seen + 1
            parent = getattr(source, "of", None)
            if not seen and parent is not None:
                counting(parent)
            marker = Local("\0%d" % len(markers))
            markers[marker.name] = source
            return marker

        # An expression may use what it asked for more than once (a type
        # check, then a comparison): count the occurrences.
        for name, n in _local_counts(produce(counting)).items():
            if n > 1 and name in markers:
                uses[markers[name]] += n - 1

    def resolve(self, source):
        """An expression for ``source``'s value, evaluating it at most once."""
        if type(source) is Root:
            return Obj(source.value, source.hint)
        local = self._local_of.get(source)
        if local is not None:
            return Local(local)
        inline = self._uses.get(source) == 1
        tp = type(source)
        if tp is Arg:
            expr = GetItem(Local("args"), const(source.index))
        elif tp is Kwarg:
            expr = GetItem(Local("kwargs"), const(source.name))
        elif tp is Attr:
            expr = source.access(self.resolve(source.of))
        elif tp is Item:
            expr = source.access(self.resolve(source.of))
        elif tp is Recomputed:
            expr = source.expr()
        elif tp is Converted:
            expr = Call(Obj(source.fn, source.hint), (self.resolve(source.of),))
        else:
            raise TypeError("unknown source %r" % (source,))
        if inline:
            return expr
        name = self.new_local("s")
        self.assign(name, expr)
        self._local_of[source] = name
        return Local(name)

    def assign(self, name, expr, site=None):
        """``name = expr``."""
        self.line(lambda: "%s = %s" % (name, self.c.render(expr)), site)
        self.c.emit(expr)
        self.e.store_fast(name)

    def build(self):
        """The function object (globals: the constants it names)."""
        # Statements start from an empty stack, so the deepest expression
        # bounds the stack (plus a margin for the 3.13 call layout).
        fn = self.e.build_function(self.fn_name, self.argnames, self.c.globals,
                                   stacksize=self.c.max_depth + 4)
        return fn, self.listing


def _local_counts(tree, counts=None):
    """How often each :class:`Local` name occurs in ``tree`` (expressions,
    nested in lists, tuples and :class:`Build`/:class:`Call` nodes)."""
    if counts is None:
        counts = {}
    tp = type(tree)
    if tp is Local:
        counts[tree.name] = counts.get(tree.name, 0) + 1
    elif tp in (list, tuple):
        for item in tree:
            _local_counts(item, counts)
    elif tp is not Obj and tree is not None and hasattr(tree, "__attrs_attrs__"):
        for field in tree.__attrs_attrs__:
            value = getattr(tree, field.name)
            if isinstance(value, (Expr, list, tuple)):
                _local_counts(value, counts)
    return counts
