"""Why a cache entry's guard failed on a call, as a person would say it.

A generated guard returns only the index of its first failing guard (the
hit path stays one bytecode function).  When the ``recompiles`` log (or the
run log, :mod:`.runlog`) is on, a miss that leads to a capture asks here
for the reason: the failed guard's paths are evaluated again against the
call's arguments, and the first check that fails is written as ``path:
expected E, got A`` (``x.shape[0]: expected 2, got 3``) with the user's
``file:line`` whose read made the guard.  Nothing here runs on a hit (and
``import pyinterp`` loads no RefGraph module through this one:
:func:`name_parameters` and :func:`describe_guard` are all that
:mod:`.traced` imports, so the rest imports them when it runs).
:func:`guard_text` and :func:`describe_guard` write a guard as Python for
the logs, ``explain`` and the run log.

The paths are the ones the guard itself just read on this call, so
evaluating them again runs no code the guard did not run.  Any error while
explaining gives the guard's rendered text instead of a reason.
"""
import linecache
import operator
import re

ARGS_SHAPE = -1
RAISED = -2

_COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
            ">": operator.gt, ">=": operator.ge, "is": operator.is_,
            "is not": operator.is_not, "in": lambda a, b: a in b,
            "not in": lambda a, b: a not in b}
_BUILD = {"tuple": tuple, "list": list, "set": set}
_ARITHMETIC = {"+": operator.add, "-": operator.sub, "*": operator.mul,
               "//": operator.floordiv, "%": operator.mod}
_TENSOR_FIELDS = ("dtype", "device", "shape", "stride()", "requires_grad")


def evaluate(expr, env):
    """The value of an :mod:`~pyinterp.refgraph.expr` tree; ``env`` holds the
    locals (``args``, ``kwargs``)."""
    from ..refgraph.expr import BinOp, Build, Call, Compare, GetAttr, GetItem, Local, Not, Obj

    tp = type(expr)
    if tp is Local:
        return env[expr.name]
    if tp is Obj:
        return expr.value
    if tp is GetAttr:
        return getattr(evaluate(expr.base, env), expr.name)
    if tp is GetItem:
        return evaluate(expr.base, env)[evaluate(expr.key, env)]
    if tp is Call:
        return evaluate(expr.func, env)(*[evaluate(a, env) for a in expr.args],
                                        **{k: evaluate(v, env) for k, v in expr.kwargs})
    if tp is Compare:
        return _COMPARE[expr.op](evaluate(expr.left, env), evaluate(expr.right, env))
    if tp is Not:
        return not evaluate(expr.operand, env)
    if tp is BinOp:
        return _ARITHMETIC[expr.op](evaluate(expr.left, env), evaluate(expr.right, env))
    if tp is Build:
        if expr.kind == "dict":
            return {evaluate(k, env): evaluate(v, env) for k, v in expr.items}
        return _BUILD[expr.kind](evaluate(i, env) for i in expr.items)
    raise TypeError("cannot evaluate %r" % (expr,))


def readable(expr, param_names=()):
    """``expr`` as Python naming the traced function's parameters
    (``x.shape`` rather than ``args[0].shape``)."""
    text = expr.render(lambda node: node.hint or "<%s>" % type(node.value).__name__)
    return name_parameters(text, param_names)


def name_parameters(text, param_names):
    """``text`` (a rendered guard or path) with ``args[i]`` and
    ``kwargs['name']`` spelled as the function's parameter names."""
    def name(match):
        i = int(match.group(1))
        return param_names[i] if i < len(param_names) else match.group(0)

    text = re.sub(r"args\[(\d+)\]", name, text)
    return re.sub(r"kwargs\['(\w+)'\]", r"\1", text)


def describe_guard(guard, param_names=()):
    """One guard as readable Python naming the function's parameters, with
    the user's ``file:line`` whose read caused it."""
    from ..codegen.guardgen import render_guard
    from ..refgraph import guards as G

    if type(guard) is G.ShapeRelations:  # (its function's relations, readable)
        text = name_parameters(" and ".join(guard.lines), param_names)
    else:
        text = name_parameters(render_guard(guard), param_names)
    if guard.site:
        text += "  # %s:%s" % guard.site
    return text


def guard_text(guard, param_names=()):
    """``guard``'s checks as Python naming the function's parameters, joined
    by ``and`` (what the ``guards`` log and the run log show)."""
    return " and ".join(readable(c, param_names) for c in guard.checks(_path))


def site_text(site):
    """``file:line: source`` for a guard's or break's ``(filename, lineno)``."""
    if not site or site[0] is None:
        return "<unknown>"
    line = linecache.getline(site[0], site[1] or 0).strip()
    return "%s:%s: %s" % (site[0], site[1], line) if line else "%s:%s" % tuple(site)


def reason(trace, index, args, kwargs):
    """Why ``trace``'s guard returned ``index`` for this call (one line)."""
    from .cache import RETIRED

    env = {"args": args, "kwargs": kwargs}
    if index == ARGS_SHAPE:
        return _call_shape(trace, args, kwargs)
    if index == RETIRED:
        return "an object its guard held by weak reference died"
    if index == RAISED:
        return _raised(trace, env)
    if not isinstance(index, int) or not 0 <= index < len(trace.guards):
        return "guard returned %r" % (index,)
    guard = trace.guards[index]
    try:
        text = _failed(guard, env, trace.param_names)
    except Exception as e:  # noqa: BLE001 - a reason is best effort
        text = "%s (could not re-check: %s: %s)" % (
            guard_text(guard, trace.param_names), type(e).__name__, e)
    return "%s  (guard from %s)" % (text, site_text(guard.site)) if guard.site else text


def _path(source):
    return source.expr()


def _call_shape(trace, args, kwargs):
    nargs, kwnames = getattr(trace, "call_shape", (None, None))
    if nargs is not None and nargs != len(args):
        return "number of positional arguments: expected %d, got %d" % (nargs, len(args))
    if kwnames is not None and kwnames != tuple(kwargs):
        return "keyword arguments: expected %r, got %r" % (kwnames, tuple(kwargs))
    return "the call's arguments (number of positional arguments or keyword names)"


def _raised(trace, env):
    for guard in trace.guards:
        for check in guard.checks(_path):
            try:
                evaluate(check, env)
            except Exception as e:  # noqa: BLE001 - this is what we look for
                where = "  (guard from %s)" % site_text(guard.site) if guard.site else ""
                return "checking %s raised %s: %s%s" % (
                    readable(check, trace.param_names), type(e).__name__, e, where)
    return "a guard raised an exception"


def _failed(guard, env, names):
    """``path: expected E, got A`` for the first check of ``guard`` that fails."""
    from ..refgraph import guards as G
    from ..refgraph.expr import Compare

    if type(guard) is G.TensorMatch:
        return _tensor(guard, env, names)
    for check in guard.checks(_path):
        if evaluate(check, env):
            continue
        if type(check) is Compare and check.op in ("==", "is", "in", "not in"):
            left = evaluate(check.left, env)
            if check.op in ("in", "not in"):
                return "%s: expected %s, got %s" % (readable(check, names), True, False)
            return "%s: expected %s, got %s" % (readable(check.left, names),
                                                _spell(check.right, env), _show(left))
        return "%s: expected True, got False" % readable(check, names)
    return "no check fails now (%s)" % type(guard).__name__


def _tensor(guard, env, names):
    from ..refgraph import guards as G

    path = readable(guard.source.expr(), names)
    value = evaluate(guard.source.expr(), env)
    if type(value) is not guard.tp:
        return "type(%s): expected %s, got %s" % (path, G._name(guard.tp),
                                                  G._name(type(value)))
    seen = (value.dtype, value.device, tuple(value.shape), tuple(value.stride()),
            value.requires_grad)
    expected = (guard.dtype, guard.device, tuple(guard.shape), tuple(guard.stride),
                guard.requires_grad)
    out = []
    for field, want, got in zip(_TENSOR_FIELDS, expected, seen):
        if want == got:
            continue
        name = field[:-2] if field.endswith("()") else field
        if field in ("shape", "stride()") and len(want) == len(got):
            index = "%s.%s(%%d)" % (path, name) if field == "stride()" else \
                "%s.%s[%%d]" % (path, name)
            out += ["%s: expected %s, got %s" % (index % i, w, g)
                    for i, (w, g) in enumerate(zip(want, got)) if w != g]
        else:
            out.append("%s.%s: expected %s, got %s" % (path, field, _plain(want), _plain(got)))
    return "; ".join(out) or "%s: no tensor property differs now" % path


def _plain(value):
    return repr(value) if not isinstance(value, tuple) else str(value)


def _spell(expr, env):
    from ..refgraph.expr import Obj

    if type(expr) is Obj and expr.hint:
        return expr.hint
    return _show(evaluate(expr, env))


def _show(value, limit=80):
    from ..refgraph import guards as G

    if isinstance(value, type) or callable(value) and hasattr(value, "__qualname__"):
        return G._name(value)
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a user __repr__
        text = "<%s>" % type(value).__name__
    return text if len(text) <= limit else text[:limit - 3] + "..."
