"""Guard generation: a list of guards -> one bytecode function.

The generated function has the signature ``guard(args, kwargs)`` and returns
``True`` when every check holds, or the index of the first failing guard
(the cache counts failures per guard to say which one causes recompiles).
It never catches exceptions itself: the caller treats a guard that raises
as a miss.  Its rendering, one line per check with the user's ``file:line``
that caused it, is what ``explain`` shows.

The metadata checks of most tensors come last, all in one call, with
the Python checks as the way to find which one failed
(:mod:`.tensor_checks`).
"""
from ..refgraph.expr import Call, Compare, Local, Obj, const
from .function import GeneratedFunction
from .tensor_checks import TensorBatch


def build_guard(guards, nargs, kwnames):
    """Compile ``guards`` (RefGraph guard objects, in order) to a function.

    ``nargs`` and ``kwnames`` pin the call's shape first: a trace of
    ``f(x)`` (default ``y``) must not serve ``f(x, y=3)``.
    Returns ``(function, listing)``; ``listing()`` renders the Python.
    """
    g = GeneratedFunction("guard", ["args", "kwargs"], "<pyinterp-guard>")
    e = g.e

    def check(expr, index, site=None):
        # The failure's return right after the test: every jump is short (a
        # jump to a shared return at the end of a guard of a thousand checks
        # needs an EXTENDED_ARG that runs on every call, and makes
        # ``bytecode``'s jump sizing slow).
        g.line(lambda: "if not (%s): return %d" % (g.c.render(expr), index), site)
        g.c.emit(expr)
        passed = e.label()
        e.jump_if_true(passed)
        e.return_const(index)
        e.place(passed)

    check(Compare("==", Call(Obj(len, "len"), (Local("args"),)), const(nargs)), -1)
    # In order: a function with **kwargs sees their order.
    check(Compare("==", Call(Obj(tuple, "tuple"), (Local("kwargs"),)),
                  const(tuple(kwnames))), -1)
    batch = TensorBatch(guards)

    def in_place(guard, index, resolve):
        # A batched tensor keeps its type check here; the rest waits for the end.
        return [guard.type_check(resolve)] if index in batch else guard.checks(resolve)

    def at_end(resolve):
        if not batch.indices:
            return []
        return [batch.fast_check(guards, resolve)] + [
            guards[index].metadata_check(resolve) for index in batch.indices]

    g.count_uses(lambda resolve: [in_place(guard, index, resolve)
                                  for index, guard in enumerate(guards)] + [at_end(resolve)])
    for index, guard in enumerate(guards):
        for expr in in_place(guard, index, g.resolve):
            check(expr, index, guard.site)
    if batch.indices:
        # All batched tensors pass in one call, or the Python checks decide.
        slow = e.label()
        fast = batch.fast_check(guards, g.resolve)
        g.line(lambda: "if (%s): return True" % g.c.render(fast))
        g.c.emit(fast)
        e.jump_if_false(slow)
        e.return_const(True)
        e.place(slow)
        for index in batch.indices:
            check(guards[index].metadata_check(g.resolve), index, guards[index].site)
    g.line("return True")
    e.return_const(True)
    return g.build()


def render_guard(guard):
    """One guard as a line of Python, with paths spelled out in full."""
    names = lambda node: node.hint or "<%s>" % type(node.value).__name__  # noqa: E731
    return " and ".join(c.render(names) for c in guard.checks(lambda s: s.expr()))
