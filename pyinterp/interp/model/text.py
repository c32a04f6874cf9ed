"""``str``, ``repr``, ``ascii`` and ``format`` with Python dunders interpreted."""
from .dunders import call_special, needs_interpreter
from .lookup import lookup

_PLAIN = frozenset({str, int, float, bool, type(None), bytes, complex})


def to_repr(vm, value):
    """``repr(value)``; a Python ``__repr__`` must return a str."""
    tp = type(value)
    if tp in _PLAIN:
        return repr(value)
    method = lookup(tp, "__repr__")
    if not needs_interpreter(method):
        return repr(value)
    return _string_from(vm, method, value, "__repr__")


def to_str(vm, value):
    """``str(value)``; ``object.__str__`` falls back to (interpreted) ``repr``."""
    tp = type(value)
    if tp is str:
        return value
    if tp in _PLAIN:
        return str(value)
    method = lookup(tp, "__str__")
    if method is object.__str__:
        return to_repr(vm, value)
    if not needs_interpreter(method):
        return str(value)
    return _string_from(vm, method, value, "__str__")


def _string_from(vm, method, value, name):
    """Call a Python ``__str__``/``__repr__``; it must return a str."""
    result = call_special(vm, method, value)
    if not isinstance(result, str):
        raise TypeError("%s returned non-string (type %s)" % (name, type(result).__name__))
    return result


def to_ascii(vm, value):
    """``ascii(value)``: the repr with non-ASCII characters escaped."""
    text = to_repr(vm, value)
    if text.isascii():
        return text
    return text.encode("ascii", "backslashreplace").decode("ascii")


def format_value(vm, value, spec=""):
    """``format(value, spec)``; ``object.__format__`` with an empty spec is
    ``str(value)`` (interpreted)."""
    tp = type(value)
    if tp in _PLAIN:
        return format(value, spec)
    method = lookup(tp, "__format__")
    if method is object.__format__:
        if spec:
            return format(value, spec)  # raises the exact TypeError
        return to_str(vm, value)
    if not needs_interpreter(method):
        return format(value, spec)
    result = call_special(vm, method, value, spec)
    if not isinstance(result, str):
        raise TypeError("__format__ must return a str, not %s" % type(result).__name__)
    return result


def function_str(func):
    """``_PyObject_FunctionStr``: how call errors name a callable (``mod.f()``)."""
    try:
        qualname = func.__qualname__
    except Exception:
        return type(func).__name__ + " object"
    module = getattr(func, "__module__", None)
    if module is not None and module != "builtins":
        return "%s.%s()" % (module, qualname)
    return "%s()" % qualname
