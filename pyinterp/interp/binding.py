"""Bind call arguments to a code object's parameters, exactly as CPython does.

Argument binding has many error cases, each with its own message
("f() missing 1 required positional argument: 'x'", "got multiple values
for argument", positional-only passed by keyword, ...).  Rather than
re-implement them, pyinterp lets CPython bind: for every code object it
compiles, once, a *binder* with the same signature whose body just returns
the parameters as a tuple.  Calling the binder natively performs CPython's
own binding, with its own messages; no user code runs inside it.

The common case (positional arguments only, exactly the right number, no
``*args``) never gets here: :func:`pyinterp.calls.call_function` skips
binding for it.
"""
import inspect
import types

CO_VARARGS = inspect.CO_VARARGS
CO_VARKEYWORDS = inspect.CO_VARKEYWORDS

_binders = {}  # (id(code), qualname) -> (code, binder code)


def _binder_code(code, qualname):
    """Compile a function with ``code``'s signature that returns its arguments."""
    key = (id(code), qualname)
    entry = _binders.get(key)
    if entry is not None and entry[0] is code:
        return entry[1]
    nargs = code.co_argcount
    nkw = code.co_kwonlyargcount
    names = list(code.co_varnames[: nargs + nkw])
    flags = code.co_flags
    star = code.co_varnames[nargs + nkw] if flags & CO_VARARGS else None
    dstar = None
    if flags & CO_VARKEYWORDS:
        dstar = code.co_varnames[nargs + nkw + (1 if star else 0)]
    # Comprehension code objects take ".0", which is not an identifier.
    safe = {n: (n if n.isidentifier() else "_pyinterp_arg%d" % i)
            for i, n in enumerate(code.co_varnames)}
    params = []
    for i, n in enumerate(names[:nargs]):
        params.append(safe[n])
        if i + 1 == code.co_posonlyargcount:
            params.append("/")
    if star:
        params.append("*" + safe[star])
    elif nkw:
        params.append("*")
    params.extend(safe[n] for n in names[nargs:])
    if dstar:
        params.append("**" + safe[dstar])
    # co_varnames order: positional, keyword-only, *args, **kwargs.
    order = names + ([star] if star else []) + ([dstar] if dstar else [])
    src = "def binder(%s):\n    return (%s,)\n" % (
        ", ".join(params), ", ".join(safe[n] for n in order) or "")
    if not order:
        src = "def binder():\n    return ()\n"
    namespace = {}
    exec(compile(src, code.co_filename, "exec"), namespace)
    bcode = namespace["binder"].__code__.replace(
        co_name=code.co_name, co_qualname=qualname)
    _binders[key] = (code, bcode)
    return bcode


def bind_arguments(func, code, args, kwargs):
    """Return the values of ``code``'s parameters, in ``co_varnames`` order.

    ``args`` is a sequence, ``kwargs`` a dict or None.  Raises the same
    ``TypeError`` CPython raises for a bad call.
    """
    binder = types.FunctionType(
        _binder_code(code, func.__qualname__), {}, None, func.__defaults__)
    if func.__kwdefaults__:
        binder.__kwdefaults__ = func.__kwdefaults__
    if kwargs:
        return binder(*args, **kwargs)
    return binder(*args)
