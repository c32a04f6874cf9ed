"""Compile :mod:`pyinterp.refgraph.expr` trees to bytecode.

:class:`ExprCompiler` emits each expression node with the version-aware
:class:`~pyinterp.codegen.emit.Emitter`.  Non-literal constants go into the
generated function's globals under readable names (``torch_float32``,
``Linear``...), and the same names are used when the code is rendered as
Python for ``explain``, so the two always agree.
"""
import dis
import sys

from ..refgraph.expr import (BinOp, Build, Call, Compare, GetAttr, GetItem, Local, Not, Obj,
                             is_literal)

PY313 = sys.version_info >= (3, 13)


class ExprCompiler:
    """Emits expressions into one function; owns its globals namespace."""

    def __init__(self, emitter):
        self.e = emitter
        self.globals = {"__builtins__": __builtins__}
        self._names = {}
        self.max_depth = 1

    # -- names for constants --------------------------------------------------
    def name(self, node):
        """The global name holding ``node.value`` (assigned on first use)."""
        key = id(node.value)
        name = self._names.get(key)
        if name is None:
            base = "".join(c if c.isalnum() else "_" for c in (node.hint or type(node.value).__name__))
            base = base.strip("_")[-40:].strip("_") or "obj"
            if base[0].isdigit():
                base = "_" + base
            name = base
            n = 1
            while name in self.globals:
                n += 1
                name = "%s_%d" % (base, n)
            self._names[key] = name
            self.globals[name] = node.value
        return name

    def render(self, expr):
        """``expr`` as Python source, spelling constants by their global names."""
        return expr.render(self.name)

    # -- emission ---------------------------------------------------------------
    def emit(self, expr):
        """Emit code that pushes the value of ``expr``: ``( -- value)``."""
        self.max_depth = max(self.max_depth, depth(expr))
        self._emit(expr)

    def _emit(self, expr):
        e = self.e
        tp = type(expr)
        if tp is Local:
            e.load_fast(expr.name)
        elif tp is Obj:
            if is_literal(expr.value):
                e.load_const(expr.value)
            else:
                e.load_global(self.name(expr))
        elif tp is GetAttr:
            self.emit(expr.base)
            e.load_attr(expr.name)
        elif tp is GetItem:
            self.emit(expr.base)
            self.emit(expr.key)
            e.emit("BINARY_SUBSCR")
        elif tp is Call:
            self.emit_call(expr.func, expr.args, expr.kwargs)
        elif tp is Compare:
            self.emit(expr.left)
            self.emit(expr.right)
            op = expr.op
            if op in ("is", "is not"):
                e.is_op(negate=op == "is not")
            elif op in ("in", "not in"):
                e.contains_op(negate=op == "not in")
            else:
                e.compare(op)
        elif tp is BinOp:
            self.emit(expr.left)
            self.emit(expr.right)
            e.emit("BINARY_OP", _NB_SYMBOLS.index(expr.op))
        elif tp is Not:
            self.emit(expr.operand)
            if PY313:
                e.emit("TO_BOOL")
            e.emit("UNARY_NOT")
        elif tp is Build:
            self.emit_build(expr)
        else:
            raise TypeError("cannot compile %r" % (expr,))

    def emit_call(self, func, args, kwargs=()):
        """``( -- func(*args, **kwargs))``."""
        e = self.e
        if type(func) is Obj and not is_literal(func.value):
            e.load_global(self.name(func), push_null=True)
        else:
            with e.callable():
                self.emit(func)
        for a in args:
            self.emit(a)
        for _, v in kwargs:
            self.emit(v)
        e.call(len(args) + len(kwargs), kwnames=tuple(k for k, _ in kwargs))

    def emit_build(self, expr):
        e = self.e
        if expr.kind == "dict":
            for k, v in expr.items:
                self.emit(k)
                self.emit(v)
            e.emit("BUILD_MAP", len(expr.items))
            return
        for item in expr.items:
            self.emit(item)
        e.emit({"tuple": "BUILD_TUPLE", "list": "BUILD_LIST", "set": "BUILD_SET"}[expr.kind],
               len(expr.items))


_NB_SYMBOLS = [symbol for _, symbol in dis._nb_ops]  # BINARY_OP's argument by operator


def depth(expr):
    """The most stack slots evaluating ``expr`` uses (an upper bound)."""
    tp = type(expr)
    if tp is Local or tp is Obj:
        return 1
    if tp is GetAttr:
        return max(depth(expr.base), 2)  # a method load may push two
    if tp is GetItem:
        return max(depth(expr.base), 1 + depth(expr.key))
    if tp is Call:
        args = list(expr.args) + [v for _, v in expr.kwargs]
        inner = [2 + i + depth(a) for i, a in enumerate(args)]
        return max([1 + depth(expr.func)] + inner + [3 + len(args)])
    if tp is Compare or tp is BinOp:
        return max(depth(expr.left), 1 + depth(expr.right))
    if tp is Not:
        return depth(expr.operand)
    if tp is Build:
        if expr.kind == "dict":
            return max([1] + [2 * i + max(depth(k), 1 + depth(v))
                              for i, (k, v) in enumerate(expr.items)])
        return max([1] + [i + depth(item) for i, item in enumerate(expr.items)])
    raise TypeError("no depth for %r" % (expr,))
