"""A small differential checker for the family and language tests.

``check(source, entry, args, kwargs)`` compiles ``source`` into two fresh
module namespaces, calls ``entry`` natively in one and through
``pyinterp.interpret(..., debug=True)`` in the other, and asserts that
everything observable is the same:

* the return value (``==`` with the same type, else ``repr`` with memory
  addresses stripped; containers are compared element by element);
* or the exception: type, ``str``, the types and messages along its
  ``__cause__``/``__context__`` chain, ``__suppress_context__`` and the
  members of exception groups;
* what the call printed to ``sys.stdout``;
* the module's ``log`` list, if the source defines one;
* ``sys.exc_info()`` right after the call.

It returns the native :class:`Outcome`, so a test can also pin down what
CPython does (``expect=`` / ``raises=`` do that inline) and be sure the
snippet exercises what it claims to.

This is deliberately independent of :mod:`pyinterp.testing` (a separate,
fuller runner).
"""
import contextlib
import io
import re
import sys
import textwrap
import types

import pyinterp
from pyinterp.errors import PyinterpInternal

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_MAX_CHAIN = 8
_MAX_DEPTH = 10


def strip(text):
    """``text`` with memory addresses replaced by ``0x?``."""
    return _ADDRESS.sub("0x?", text)


def _type_name(tp):
    return "%s.%s" % (getattr(tp, "__module__", "?"), tp.__qualname__)


def _safe_repr(value):
    try:
        return strip(repr(value))
    except Exception as e:  # a repr that fails is itself an observation
        return "<repr raised %s>" % type(e).__name__


def describe_exception(exc, depth=0):
    """A comparable description of an exception and its chain."""
    if exc is None:
        return None
    if depth > _MAX_CHAIN:
        return "..."
    try:
        text = str(exc)
    except Exception as e:
        text = "<str raised %s>" % type(e).__name__
    record = {
        "type": _type_name(type(exc)),
        "str": strip(text),
        "suppress_context": exc.__suppress_context__,
        "cause": describe_exception(exc.__cause__, depth + 1),
        "context": describe_exception(exc.__context__, depth + 1),
        "notes": list(getattr(exc, "__notes__", ()) or ()),
    }
    if isinstance(exc, BaseExceptionGroup):
        record["members"] = [describe_exception(e, depth + 1) for e in exc.exceptions]
    return record


def _same_value(a, b, depth=0):
    if type(a).__qualname__ != type(b).__qualname__:
        return False
    if depth > _MAX_DEPTH:
        return True
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(_same_value(x, y, depth + 1) for x, y in zip(a, b))
    if type(a) is dict:
        return list(a) == list(b) and all(_same_value(a[k], b[k], depth + 1) for k in a)
    if isinstance(a, BaseException):
        return describe_exception(a) == describe_exception(b)
    try:
        if a == b:
            return True
    except Exception:
        pass
    if isinstance(a, float) and a != a and b != b:
        return True
    return _safe_repr(a) == _safe_repr(b)


class Outcome:
    """What one run of the entry point made observable."""

    def __init__(self, value, exc, stdout, log, exc_info):
        self.value = value
        self.exc = exc
        self.stdout = stdout
        self.log = log
        self.exc_info = exc_info

    def __repr__(self):
        return "Outcome(value=%s, exc=%r, stdout=%r, log=%s, exc_info=%r)" % (
            _safe_repr(self.value), describe_exception(self.exc), self.stdout,
            _safe_repr(self.log), self.exc_info)


def load(source, module_name="difftest"):
    """Execute ``source`` as the body of a fresh module and return it."""
    module = types.ModuleType(module_name)
    module.__file__ = "<%s>" % module_name
    code = compile(source, "<%s>" % module_name, "exec")
    sys.modules[module_name] = module
    try:
        exec(code, module.__dict__)
    finally:
        sys.modules.pop(module_name, None)
    return module


def _exc_info_now():
    return tuple(_type_name(t) if isinstance(t, type) else _safe_repr(t)
                 for t in sys.exc_info()[:2])


def _call(fn, args, kwargs, consume):
    value = fn(*args, **(kwargs or {}))
    return list(value) if consume else value


def _run(module, entry, args, kwargs, interpreted, consume, under_exception):
    fn = getattr(module, entry)
    if interpreted:
        fn = pyinterp.interpret(fn, debug=True)
    out = io.StringIO()
    value = exc = exc_info = None
    sys.modules[module.__name__] = module
    try:
        with contextlib.redirect_stdout(out):
            try:
                if under_exception:
                    try:
                        raise KeyError("outer")
                    except KeyError:
                        try:
                            value = _call(fn, args, kwargs, consume)
                        finally:
                            exc_info = _exc_info_now()
                else:
                    value = _call(fn, args, kwargs, consume)
            except PyinterpInternal:
                raise
            except BaseException as e:  # noqa: B902 - everything is observable
                exc = e
            if exc_info is None:
                exc_info = _exc_info_now()
    finally:
        sys.modules.pop(module.__name__, None)
    log = getattr(module, "log", None)
    return Outcome(value, exc, out.getvalue(), list(log) if isinstance(log, list) else None,
                   exc_info)


_NOTHING = object()


def check(source, entry="f", args=(), kwargs=None, *, module_name="difftest",
          expect=_NOTHING, raises=None, output=None, consume=False,
          under_exception=False, setup=None):
    """Run ``entry`` natively and interpreted; assert identical outcomes.

    ``args``/``kwargs`` may be callables of no argument, called once per run
    to get fresh (possibly mutable) arguments.  ``consume=True`` drains the
    returned iterator with ``list``.  ``under_exception=True`` makes the
    call from inside an ``except`` block (for implicit chaining).
    ``expect``/``raises``/``output`` assert what CPython itself does.
    ``setup`` (no arguments) runs before each of the two runs, to reset
    outside state such as ``sys.modules``.  Returns the native
    :class:`Outcome`.
    """
    outcomes = []
    for interpreted in (False, True):
        if setup is not None:
            setup()
        module = load(source, module_name)
        a = args() if callable(args) else args
        k = kwargs() if callable(kwargs) else kwargs
        outcomes.append(_run(module, entry, a, k, interpreted, consume, under_exception))
    native, interp = outcomes
    assert describe_exception(interp.exc) == describe_exception(native.exc), (
        "exception differs:\n native: %r\n interp: %r" % (native, interp))
    if native.exc is None:
        assert _same_value(native.value, interp.value), (
            "return value differs:\n native: %r\n interp: %r" % (native, interp))
    assert interp.stdout == native.stdout, (
        "printed output differs:\n native: %r\n interp: %r" % (native.stdout, interp.stdout))
    assert (native.log is None) == (interp.log is None)
    if native.log is not None:
        assert _same_value(native.log, interp.log), (
            "log differs:\n native: %r\n interp: %r" % (native.log, interp.log))
    assert interp.exc_info == native.exc_info, (
        "sys.exc_info() after the call differs: native %r, interp %r"
        % (native.exc_info, interp.exc_info))
    if raises is not None:
        assert isinstance(native.exc, raises), "CPython did not raise %r: %r" % (raises, native)
    elif native.exc is not None and expect is not _NOTHING:
        raise AssertionError("CPython raised unexpectedly: %r" % (native,))
    if expect is not _NOTHING:
        assert _same_value(native.value, expect), "CPython returned %r, expected %r" % (
            native.value, expect)
    if output is not None:
        assert native.stdout == output, "CPython printed %r" % (native.stdout,)
    return native


def interpreted_frame_type():
    """The class ``sys._getframe()`` returns under pyinterp (a stand-in)."""
    def probe():
        return type(sys._getframe(0))

    return pyinterp.interpret(probe, debug=True)()


def case(source, **options):
    """A table entry for :func:`run_case`: dedented source plus ``check`` options."""
    return (textwrap.dedent(source), options)


def run_case(entry):
    """Run one :func:`case` entry through :func:`check`."""
    source, options = entry
    return check(source, **options)
