"""Trampolines: tiny generated functions that carry a user's location.

Logging and warnings find "the caller" by walking frames.  A call that the
mock replays would otherwise be attributed to the mock.  A trampoline is
``def <user function name>(fn, args, kwargs): return fn(*args, **kwargs)``
compiled with the user's file name and line number and run with the user's
module globals, so a log record or warning issued through it names the
user's ``file:line`` and function, and uses the user module's warning
registry, both when the traced run first makes the call and on every
replay.
"""
import types
import weakref

from .emit import Emitter

# Alive as long as a mock calls them: a trampoline holds its module's
# globals, which must not outlive the program's use of them.
_cache = weakref.WeakValueDictionary()


def trampoline(site, name, globals_):
    """The trampoline for ``site`` (``(filename, lineno)`` or None)."""
    filename, lineno = site if site else ("<pyinterp>", 1)
    key = (filename, lineno, name, id(globals_))
    fn = _cache.get(key)
    if fn is None or fn.__globals__ is not globals_:
        e = Emitter(filename=filename, first_lineno=max(1, lineno or 1))
        with e.callable():
            e.load_fast("fn")
        e.load_fast("args")
        e.load_fast("kwargs")
        e.emit("CALL_FUNCTION_EX", 1)
        e.return_value()
        code = e.build_code(name, ["fn", "args", "kwargs"])
        fn = types.FunctionType(code, globals_, name)
        _cache[key] = fn
    return fn
