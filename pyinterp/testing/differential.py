"""Differential runner: execute a function natively and interpreted, compare.

Everything CPython makes observable about a call is recorded in an
:class:`Outcome`:

* the return value (or the exception raised: its type, ``args``, message,
  notes, the members of an exception group, its traceback as
  ``traceback.extract_tb`` gives it (file, line, function, source line and
  positions of each entry, pyinterp's own files left out), and its
  ``__cause__`` / ``__context__`` chain, recursively and bounded);
* the items a returned generator yields, when it is consumed;
* what the call printed to ``sys.stdout`` and ``sys.stderr``, and the
  exceptions reported through ``sys.unraisablehook`` (for example by a
  generator that ignores ``GeneratorExit`` when it is finalized), as type,
  message and the object's canonical text, without the host's traceback;
* the warnings issued during the call (all of them, filters set to
  ``"always"``): category, message, and the file and line they are
  attributed to (see :data:`WARNING_LOCATIONS`);
* ``sys.exc_info()`` right after the call returned (or, when it raised,
  once the exception has left it);
* the arguments after the call (a ``log`` list passed in is the side-effect
  log of generated code) and the module globals after the call.

Values are compared through :func:`canonical`, a deterministic text form that
never calls user-defined ``__eq__`` or ``__repr__`` of objects that have a
``__dict__``, keeps types apart (``1``, ``1.0`` and ``True`` differ) and
strips memory addresses.

Fresh state: :func:`assert_same_source` compiles the source twice, into two
fresh modules (:func:`load_module`, registered in ``sys.modules`` while they
run), so globals, class attributes and logs never leak from the native run
into the interpreted one.  :func:`assert_same` takes a
function object; it deep-copies the arguments for each run but both runs
share the function's globals.

Isolation: with ``isolate=True`` the whole comparison runs in a forked child
process (POSIX only), so an interpreter that crashes the host or hangs loses
neither the fuzzing session nor the example (DESIGN section 10).
"""
import builtins
import contextlib
import copy
import gc
import inspect
import io
import os
import re
import select
import signal
import sys
import traceback
import types
import warnings

import attrs

__all__ = [
    "ActiveException",
    "ExceptionRecord",
    "FuzzTimeout",
    "Outcome",
    "assert_same",
    "assert_same_source",
    "canonical",
    "check_same",
    "check_same_source",
    "compare_source",
    "diff_outcomes",
    "divergence_report",
    "import_file",
    "load_module",
    "load_source",
    "raised_by",
    "run",
    "run_interpreted",
    "run_native",
    "run_source",
    "strip_addresses",
]

MAX_DEPTH = 12
"""How deep :func:`canonical` descends into nested containers and objects."""

MAX_CHAIN = 8
"""How many links of a ``__cause__`` / ``__context__`` chain are recorded."""

MAX_GENERATOR_ITEMS = 200
"""How many items of a returned generator are consumed and compared."""

WARNING_LOCATIONS = True
"""Also compare the file and line that warnings are attributed to.

CPython attributes a warning raised by C code (say, ``__index__`` returning a
bool) to the innermost Python frame, the user's line; the interpreter must
attribute it there too.  Set to False to compare category and message only."""

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def strip_addresses(text):
    """Replace every ``0x...`` memory address in ``text`` with ``0x?``."""
    return _ADDRESS.sub("0x?", text)


class ActiveException(Exception):
    """The exception being handled around the call when ``under_exception``.

    Running the call inside ``except ActiveException:`` checks that the
    interpreter sees (and restores) the caller's handled exception: implicit
    ``__context__`` chaining, ``sys.exc_info()`` inside and after the call.
    """


class FuzzTimeout(BaseException):
    """Raised into a run that exceeded its ``timeout`` (in-process mode)."""


# ---------------------------------------------------------------------------
# Canonical text form of values
# ---------------------------------------------------------------------------
_SCALARS = (int, float, complex, str, bytes, bool, type(None), type(Ellipsis))


def _type_name(tp):
    module = getattr(tp, "__module__", None)
    name = getattr(tp, "__qualname__", None) or getattr(tp, "__name__", "?")
    if module in (None, "builtins"):
        return name
    return "%s.%s" % (module, name)


def canonical(value, _depth=0, _seen=None):
    """Return a deterministic text form of ``value`` for comparison.

    Scalars use ``repr`` (so ``1``, ``1.0`` and ``True`` differ, and NaN
    equals NaN); containers recurse (dicts in insertion order, sets sorted);
    exceptions show type, args, attributes, a message of their own and
    their ``__cause__`` / ``__context__`` chain; functions, classes, modules and generators
    show their qualified name; other objects with a ``__dict__`` show their
    type and attributes.  Anything else falls back to ``repr`` with memory
    addresses stripped.  User-defined ``__eq__`` is never called; a class
    without ``__dict__`` may have its ``__repr__`` called.
    """
    if _depth > MAX_DEPTH:
        return "..."
    tp = type(value)
    if tp in _SCALARS:
        return repr(value)
    if _seen is None:
        _seen = set()
    if id(value) in _seen:
        return "<cycle %s>" % _type_name(tp)
    _seen.add(id(value))
    try:
        return _canonical(value, tp, _depth + 1, _seen)
    finally:
        _seen.discard(id(value))


def _canonical(value, tp, depth, seen):
    def c(v):
        return canonical(v, depth, seen)

    if tp is list:
        return "[%s]" % ", ".join(map(c, value))
    if tp is tuple:
        return "(%s%s)" % (", ".join(map(c, value)), "," if len(value) == 1 else "")
    if tp is dict:
        return "{%s}" % ", ".join("%s: %s" % (c(k), c(v)) for k, v in value.items())
    if tp in (set, frozenset):
        body = ", ".join(sorted(map(c, value)))
        return "%s({%s})" % (tp.__name__, body)
    if isinstance(value, BaseException):
        text = "%s(%s)" % (_type_name(tp), ", ".join(map(c, value.args)))
        extra = _instance_attrs(value, depth, seen)
        text = text + extra if extra != "{}" else text
        return text + _exception_links(value, c)
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
        return "<function %s>" % value.__qualname__
    if isinstance(value, types.MethodType):
        return "<bound method %s of %s>" % (value.__func__.__qualname__, c(value.__self__))
    if isinstance(value, type):
        attrs_text = ", ".join(
            "%s=%s" % (k, c(v))
            for k, v in sorted(vars(value).items())
            if not k.startswith("__") and not callable(v)
            and not isinstance(v, (property, staticmethod, classmethod))
        )
        return "<class %s{%s}>" % (_type_name(value), attrs_text)
    if isinstance(value, types.ModuleType):
        return "<module %s>" % value.__name__
    if isinstance(value, types.GeneratorType):
        return "<generator %s>" % value.__qualname__
    if isinstance(value, (types.CoroutineType, types.AsyncGeneratorType)):
        return "<%s %s>" % (tp.__name__, value.__qualname__)
    if isinstance(value, (range, slice)):
        return repr(value)
    if isinstance(value, (int, float, str, complex, bytes)):
        # A subclass of a scalar: keep its type and its scalar value.
        base = next(b for b in (bool, int, float, complex, str, bytes) if isinstance(value, b))
        return "%s(%s)%s" % (_type_name(tp), base.__repr__(value), _instance_attrs(value, depth, seen))
    if isinstance(value, (list, tuple, dict)):
        base = next(b for b in (list, tuple, dict) if isinstance(value, b))
        return "%s(%s)%s" % (_type_name(tp), _canonical(base(value), base, depth, seen),
                             _instance_attrs(value, depth, seen))
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return "%s%s" % (_type_name(tp), _instance_attrs(value, depth, seen))
    try:
        return strip_addresses(repr(value))
    except Exception as exc:  # a broken __repr__ is still a deterministic fact
        return "<%s; repr raised %s>" % (_type_name(tp), type(exc).__name__)


def _exception_links(exc, c):
    """What an exception value shows beyond its type, args and attributes.

    A message of its own (a ``__str__`` written in Python), its
    ``__cause__``, ``__suppress_context__`` and ``__context__``.
    """
    text = ""
    if isinstance(getattr(type(exc), "__str__", None), types.FunctionType):
        try:
            text += " message=%r" % strip_addresses(str(exc))
        except Exception as err:
            text += " message=<str raised %s>" % type(err).__name__
    if exc.__cause__ is not None:
        text += " from " + c(exc.__cause__)
    if exc.__suppress_context__:
        text += " (context suppressed)"
    if exc.__context__ is not None:
        text += " during " + c(exc.__context__)
    return text


def _instance_attrs(value, depth, seen):
    try:
        items = vars(value)
    except TypeError:
        return ""
    return "{%s}" % ", ".join(
        "%s=%s" % (k, canonical(v, depth, seen)) for k, v in items.items()
    )


# ---------------------------------------------------------------------------
# Exceptions
# ---------------------------------------------------------------------------
@attrs.frozen
class ExceptionRecord:
    """What is observable about a raised exception.

    ``frames`` is its traceback as ``traceback.extract_tb`` gives it (file,
    line, function, source line and, on 3.11+, positions), without the
    entries of pyinterp's own files (the runner's frame, which calls the
    function natively, and the interpreter's boundary).  ``cause`` and ``context`` are records of ``__cause__`` and
    ``__context__`` (``None`` when absent), followed for at most
    :data:`MAX_CHAIN` links; ``group`` holds the records of the members of a
    ``BaseExceptionGroup``.
    """

    type: str
    args: str
    message: str
    suppress_context: bool = False
    notes: str = ""
    group: tuple = ()
    frames: tuple = ()
    cause: "ExceptionRecord | None" = None
    context: "ExceptionRecord | None" = None

    @classmethod
    def of(cls, exc, _depth=0, _seen=None):
        """Build the record of ``exc`` (``None`` gives ``None``)."""
        if exc is None:
            return None
        if _seen is None:
            _seen = set()
        if _depth >= MAX_CHAIN or id(exc) in _seen:
            return cls(type=_type_name(type(exc)), args="<chain cut>", message="")
        _seen = _seen | {id(exc)}
        try:
            message = strip_addresses(str(exc))
        except Exception as err:
            message = "<str raised %s>" % type(err).__name__
        group = ()
        if isinstance(exc, BaseExceptionGroup):
            group = tuple(cls.of(e, _depth + 1, _seen) for e in exc.exceptions)
        return cls(
            type=_type_name(type(exc)),
            args=canonical(exc.args),
            message=message,
            suppress_context=bool(exc.__suppress_context__),
            notes=canonical(getattr(exc, "__notes__", None)),
            group=group,
            frames=traceback_entries(exc.__traceback__),
            cause=cls.of(exc.__cause__, _depth + 1, _seen),
            context=cls.of(exc.__context__, _depth + 1, _seen),
        )

    def render(self, indent=""):
        """A multi-line, human-readable rendering of the record."""
        lines = ["%s%s%s  message=%r" % (indent, self.type, self.args, self.message)]
        if self.suppress_context:
            lines.append(indent + "  __suppress_context__=True")
        if self.notes != "None":
            lines.append(indent + "  __notes__=" + self.notes)
        for entry in self.frames:
            lines.append(indent + "  at %s" % (entry,))
        for i, member in enumerate(self.group):
            lines.append(indent + "  group[%d]:" % i)
            lines.append(member.render(indent + "    "))
        if self.cause is not None:
            lines.append(indent + "  __cause__:")
            lines.append(self.cause.render(indent + "    "))
        if self.context is not None:
            lines.append(indent + "  __context__:")
            lines.append(self.context.render(indent + "    "))
        return "\n".join(lines)


_PYINTERP_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_OPCODES_DIR = None


def _own_dirs():
    global _OPCODES_DIR
    if _OPCODES_DIR is None:
        try:
            from pyinterp import opcodes

            _OPCODES_DIR = os.path.dirname(os.path.abspath(opcodes.__file__)) + os.sep
        except Exception:  # the interpreter may be half-written
            _OPCODES_DIR = _PYINTERP_DIR
    return (_PYINTERP_DIR, _OPCODES_DIR)


def traceback_entries(tb):
    """The entries of ``tb`` as comparable tuples: (file, line, function,
    source line, end line, column, end column), leaving out pyinterp's own
    files (see :class:`ExceptionRecord`)."""
    own = _own_dirs()
    out = []
    for entry in traceback.extract_tb(tb):
        if entry.filename.startswith(own):
            continue
        out.append((entry.filename, entry.lineno, entry.name, entry.line,
                    getattr(entry, "end_lineno", None), getattr(entry, "colno", None),
                    getattr(entry, "end_colno", None)))
    return tuple(out)


def _internal_error_types():
    try:
        from pyinterp.errors import PyinterpInternal
    except Exception:  # the interpreter may be half-written
        return ()
    return (PyinterpInternal,)


# ---------------------------------------------------------------------------
# Outcomes
# ---------------------------------------------------------------------------
@attrs.frozen
class Outcome:
    """Everything observable about one call, in comparable form.

    Fields compared by :func:`diff_outcomes` (and ``==``): ``returned``,
    ``raised``, ``generator``, ``stdout``, ``stderr``, ``unraisable``, ``warnings``, ``exc_info``,
    ``args_after``, ``globals_after`` and ``internal``.  ``mode``, ``value``,
    ``exception`` and ``traceback`` are for reports only.
    """

    mode: str = attrs.field(eq=False)
    returned: "str | None"
    """Canonical text of the return value; ``None`` when the call raised."""
    raised: "ExceptionRecord | None"
    """Record of the exception the call raised (or the generator, when consumed)."""
    generator: "tuple | None"
    """``("yield", item)``... and a final ``("return", value)``/``("raise", type)``."""
    stdout: str
    stderr: str
    unraisable: tuple
    """``(message, exception type, str(exception), object)`` per unraisable report."""
    warnings: tuple
    """``(category, message, "file:line")`` per warning issued during the call."""
    exc_info: str
    """Canonical text of ``sys.exc_info()[:2]`` right after the call returned."""
    args_after: str
    """Canonical text of the arguments after the call (side-effect log)."""
    globals_after: "str | None"
    """Canonical text of the module namespace after the call, when known."""
    internal: "str | None" = None
    """Type and message of a pyinterp-internal error (never raised natively)."""
    value: object = attrs.field(default=None, eq=False, repr=False)
    exception: "BaseException | None" = attrs.field(default=None, eq=False, repr=False)
    traceback: str = attrs.field(default="", eq=False, repr=False)

    @property
    def ok(self):
        """True when the call returned (did not raise)."""
        return self.raised is None


@contextlib.contextmanager
def _deadline(timeout):
    if not timeout or not hasattr(signal, "setitimer"):
        yield
        return
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum, frame):
        raise FuzzTimeout("run exceeded %ss" % timeout)

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _consume(gen, events):
    for _ in range(MAX_GENERATOR_ITEMS):
        try:
            item = next(gen)
        except StopIteration as stop:
            events.append(("return", canonical(stop.value)))
            return
        events.append(("yield", canonical(item)))
    events.append(("truncated",))


def _globals_text(namespace, ignored):
    if namespace is None:
        return None
    # __warningregistry__ depends on where warnings were attributed; the
    # warnings themselves are compared in Outcome.warnings.
    ignored = ("__builtins__", "__warningregistry__") + tuple(ignored)
    return canonical({k: v for k, v in namespace.items() if k not in ignored})


def run(fn, args=(), kwargs=None, *, interpreted=False, namespace=None,
        under_exception=False, consume_generators=True, copy_args=True,
        timeout=None, debug=False, record_interrupts=False, ignore_globals=()):
    """Call ``fn(*args, **kwargs)`` once and return its :class:`Outcome`.

    ``interpreted`` runs ``pyinterp.interpret(fn)`` instead of ``fn``
    (``pyinterp.interpret(fn, debug=True)`` with ``debug``: the interpreter
    then checks every instruction's stack effect).
    ``namespace`` is the module dict whose state is recorded afterwards (by
    default ``fn.__globals__`` when it is a plain dict of a generated module,
    otherwise not recorded), less the names in ``ignore_globals`` (values
    that differ by design).  ``under_exception`` makes the call from inside
    an ``except ActiveException`` block.  A returned generator is consumed
    (at most :data:`MAX_GENERATOR_ITEMS` items) when ``consume_generators``.
    ``copy_args`` deep-copies ``args``/``kwargs`` first, so that each run
    sees its own.  ``timeout`` (seconds, main thread only) interrupts a run
    with :class:`FuzzTimeout`, recorded as the outcome's exception.  A
    ``KeyboardInterrupt`` propagates (Ctrl-C stops a fuzzing session) unless
    ``record_interrupts``, for code that raises it on purpose.
    """
    kwargs = dict(kwargs or {})
    if copy_args:
        args, kwargs = copy.deepcopy((tuple(args), kwargs))
    if interpreted:
        from pyinterp import interpret

        target = interpret(fn, debug=True) if debug else interpret(fn)
    else:
        target = fn
    out, err = io.StringIO(), io.StringIO()
    value = exc = None
    events = None
    exc_info = None
    propagated = () if record_interrupts else KeyboardInterrupt
    internal_types = _internal_error_types()
    unraisable = []

    def hook(report):
        unraisable.append((
            strip_addresses(report.err_msg or "Exception ignored in"),
            _type_name(report.exc_type),
            strip_addresses(str(report.exc_value)),
            canonical(report.object),
        ))

    # The cyclic collector runs at moments that depend on allocation counts,
    # which differ between the two runs; finalizers (__del__, weakref
    # callbacks) must not fire at such arbitrary points, so it is paused.
    # Garbage left by an earlier run is collected first, before this run's
    # hooks are in place, so that its finalizers are not reported as this
    # run's.
    gc.collect()
    gc_was_enabled = gc.isenabled()
    gc.disable()
    old_hook, sys.unraisablehook = sys.unraisablehook, hook
    caught = []
    try:
        with _deadline(timeout), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    if under_exception:
                        try:
                            raise ActiveException("outer")
                        except ActiveException:
                            try:
                                value = target(*args, **kwargs)
                            finally:
                                exc_info = _exc_info_text()
                    else:
                        value = target(*args, **kwargs)
                        exc_info = _exc_info_text()
                    if consume_generators and isinstance(value, types.GeneratorType):
                        events = []
                        _consume(value, events)
                except propagated:
                    raise
                except BaseException as e:  # noqa: B036 - everything is an outcome
                    exc = e
                if exc_info is None:  # the call raised: what is handled once it has left
                    exc_info = _exc_info_text()
    finally:
        sys.unraisablehook = old_hook
    # The outcome is recorded with the collector still paused: re-enabled,
    # the next allocation collects the run's young cycles, whose finalizers
    # would then show in ``globals_after`` for one run and not the other
    # (the interpreted run allocates far more, so it crosses the threshold).
    try:
        return _outcome(interpreted, exc, events, value, out, err, unraisable, caught,
                        exc_info, args, kwargs, namespace, ignore_globals, internal_types)
    finally:
        if gc_was_enabled:
            gc.enable()


def _exc_info_text():
    return canonical(sys.exc_info()[:2])


def _outcome(interpreted, exc, events, value, out, err, unraisable, caught, exc_info,
             args, kwargs, namespace, ignore_globals, internal_types):
    internal = None
    if exc is not None and internal_types and isinstance(exc, internal_types):
        internal = "%s: %s" % (type(exc).__name__, exc)
    tb = "".join(traceback.format_exception(exc)) if exc is not None else ""
    raised = ExceptionRecord.of(exc)
    if events is not None and exc is not None:
        events.append(("raise", raised.type))
    return Outcome(
        mode="interpreted" if interpreted else "native",
        returned=None if exc is not None and events is None else canonical(value),
        raised=raised,
        generator=None if events is None else tuple(events),
        stdout=strip_addresses(out.getvalue()),
        stderr=strip_addresses(err.getvalue()),
        unraisable=tuple(unraisable),
        warnings=tuple(
            (_type_name(w.category), strip_addresses(str(w.message)),
             "%s:%s" % (w.filename, w.lineno) if WARNING_LOCATIONS else "")
            for w in caught),
        exc_info=exc_info,
        args_after=canonical((args, kwargs) if kwargs else args),
        globals_after=_globals_text(namespace, ignore_globals),
        internal=internal,
        value=value,
        exception=exc,
        traceback=tb,
    )


def run_native(fn, *args, **kwargs):
    """Call ``fn(*args, **kwargs)`` natively; return its :class:`Outcome`."""
    return run(fn, args, kwargs)


def run_interpreted(fn, *args, **kwargs):
    """Call ``pyinterp.interpret(fn)(*args, **kwargs)``; return its :class:`Outcome`."""
    return run(fn, args, kwargs, interpreted=True)


# ---------------------------------------------------------------------------
# Comparing
# ---------------------------------------------------------------------------
_COMPARED = ("internal", "raised", "returned", "generator", "stdout", "stderr",
             "unraisable", "warnings", "exc_info", "args_after", "globals_after")


def _show(field, value):
    if value is None:
        return "None"
    if isinstance(value, ExceptionRecord):
        return "\n" + value.render("      ")
    if isinstance(value, tuple):  # generator events, unraisable reports, warnings
        return "\n" + "\n".join("      %r" % (e,) for e in value) if value else "()"
    if isinstance(value, str) and ("\n" in value or field in ("stdout", "stderr")):
        return "\n" + "\n".join("      |" + line for line in value.split("\n"))
    return value


def diff_outcomes(native, interpreted):
    """Return a list of readable lines describing how two outcomes differ.

    An empty list means the outcomes are the same.
    """
    lines = []
    for field in _COMPARED:
        a, b = getattr(native, field), getattr(interpreted, field)
        if a != b:
            lines.append("%s differs:" % field)
            lines.append("   native:      %s" % (_show(field, a),))
            lines.append("   interpreted: %s" % (_show(field, b),))
    if lines and interpreted.traceback and native.raised != interpreted.raised:
        lines.append("interpreted traceback:")
        lines.extend("   " + line for line in interpreted.traceback.rstrip().split("\n"))
    return lines


def divergence_report(lines, native, interpreted, source=None, args=None):
    """The failure message for the ``lines`` of :func:`diff_outcomes`.

    ``source`` and ``args``, when given, are shown first (numbered lines).
    """
    parts = ["pyinterp diverges from CPython"]
    if source is not None:
        parts.append("source:\n" + "\n".join("   %4d  %s" % (i + 1, line)
                                            for i, line in enumerate(source.split("\n"))))
    if args is not None:
        parts.append("args: %s" % canonical(tuple(args)))
    parts.extend(lines)
    return "\n".join(parts)


def load_module(source, module_name="__fuzz__", filename=None, interpreted=False):
    """Compile and execute ``source`` as the body of a fresh module; return it.

    The module is named ``module_name`` and sits in ``sys.modules`` while
    its body runs (and, in :func:`run_source`, while the call runs), as an
    imported module would; ``filename`` defaults to ``"<module_name>"``.
    Each call gives new, independent objects.  With ``interpreted``, the
    module body itself runs through ``pyinterp.interpret`` (as a function
    made from the module's code object, whose locals are its globals)
    instead of ``exec``.
    """
    filename = filename or "<%s>" % module_name
    module = types.ModuleType(module_name)
    module.__file__ = filename
    module.__builtins__ = builtins
    code = compile(source, filename, "exec")
    with _registered(module):
        if interpreted:
            from pyinterp import interpret

            interpret(types.FunctionType(code, module.__dict__))()
        else:
            exec(code, module.__dict__)
    return module


def import_file(directory, module_name, source):
    """Write ``source`` (dedented) to ``directory/module_name.py`` and import
    it as a module of its own (not registered in ``sys.modules``): code with
    a real file, whose lines ``linecache`` and tracebacks show."""
    import importlib.util
    import pathlib
    import textwrap

    path = pathlib.Path(directory) / ("%s.py" % module_name)
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def raised_by(call):
    """The exception ``call()`` raises (AssertionError if it returns)."""
    try:
        call()
    except Exception as e:  # noqa: BLE001 - any exception is the result
        return e
    raise AssertionError("%r raised no exception" % (call,))


def load_source(source, filename="<fuzz>", module_name="__fuzz__", interpreted=False):
    """Like :func:`load_module`, but return the module's namespace dict."""
    return load_module(source, module_name, filename, interpreted).__dict__


@contextlib.contextmanager
def _registered(module):
    sys.modules[module.__name__] = module
    try:
        yield module
    finally:
        sys.modules.pop(module.__name__, None)


def run_source(source, entry="f", args=(), kwargs=None, *, interpreted=False,
               module_name="__fuzz__", filename=None, interpret_module=False, **options):
    """Load ``source`` into a fresh module and :func:`run` its ``entry`` once.

    The module (see :func:`load_module`) stays in ``sys.modules`` during the
    call, and its namespace is recorded afterwards.  ``interpret_module``
    also runs the module body through the interpreter when ``interpreted``.
    The other options are those of :func:`run`.
    """
    module = load_module(source, module_name, filename,
                         interpreted=interpreted and interpret_module)
    with _registered(module):
        return run(getattr(module, entry), args, kwargs, interpreted=interpreted,
                   namespace=module.__dict__, **options)


_child_heap_frozen = False  # set in the forked child of _isolated, which froze the heap


def _isolated(thunk, timeout):
    """Run ``thunk`` in a forked child; return None or a failure message."""
    if not hasattr(os, "fork"):
        return thunk()
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        # Everything inherited from the parent (the test framework, its
        # garbage) is frozen out of the child's collections (gc.freeze), so
        # that the full collection before each run scans only what the
        # child creates; a scan of the whole parent heap was most of a fuzz
        # example's time.  The parent is left as it was.
        global _child_heap_frozen
        gc.freeze()
        _child_heap_frozen = True
        status = 0
        try:
            os.close(read_end)
            message = thunk() or ""
            status = 1 if message else 0
        except BaseException:  # noqa: B036
            message = "runner error in child:\n" + traceback.format_exc()
            status = 2
        try:
            data = message.encode("utf-8", "backslashreplace")
            while data:
                data = data[os.write(write_end, data):]
        finally:
            os._exit(status)
    os.close(write_end)
    chunks = []
    timed_out = False
    try:
        while True:
            ready, _, _ = select.select([read_end], [], [], timeout)
            if not ready:
                timed_out = True
                os.kill(pid, signal.SIGKILL)
                break
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
    message = b"".join(chunks).decode("utf-8", "replace")
    if timed_out:
        return "pyinterp run timed out after %ss (child killed)\n%s" % (timeout, message)
    if os.WIFSIGNALED(status):
        return "child process crashed with signal %d\n%s" % (os.WTERMSIG(status), message)
    return message or None


@contextlib.contextmanager
def _frozen_heap():
    """Keep the objects that exist now out of the collections made inside.

    Each :func:`run` starts with a full collection; with the heap that was
    there before frozen (``gc.freeze``), it scans only what the comparison
    created, and garbage from before cannot be finalized during it.  A heap
    already frozen (the child of an isolated comparison) is left as it is.
    (Known by a flag, not by ``gc.get_freeze_count()``: CPython 3.12 starts
    with a few hundred objects in the permanent generation, which made every
    collection on 3.12 scan the whole heap: its test suite ran 5x slower.)
    """
    if _child_heap_frozen:
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def compare_source(source, entry="f", args=(), kwargs=None, *, setup=None, **options):
    """Run ``entry`` of ``source`` natively, then interpreted; return both outcomes.

    Each run loads the source into a fresh module (:func:`run_source`,
    whose options these are); ``setup`` (no arguments), when given, runs
    before each load, to reset outside state such as ``sys.modules``.
    """
    runs = []
    with _frozen_heap():
        for interpreted in (False, True):
            if setup is not None:
                setup()
            runs.append(run_source(source, entry, args, kwargs, interpreted=interpreted,
                                   **options))
    return runs


def check_same(fn, args=(), kwargs=None, *, under_exception=False,
               consume_generators=True, timeout=None, isolate=False, source=None):
    """Run ``fn`` natively and interpreted; return a failure message or None.

    Arguments are deep-copied for each run.  Both runs share ``fn`` and its
    globals; use :func:`check_same_source` for fully separate state.  The
    options are those of :func:`assert_same_source`; ``source`` is only
    shown in the report.
    """
    options = dict(under_exception=under_exception, consume_generators=consume_generators,
                   timeout=None if isolate else timeout)

    def compare():
        native = run(fn, args, kwargs, **options)
        interpreted = run(fn, args, kwargs, interpreted=True, **options)
        lines = diff_outcomes(native, interpreted)
        return divergence_report(lines, native, interpreted, source, args) if lines else None

    return _isolated(compare, timeout) if isolate else compare()


def check_same_source(source, entry="f", args=(), kwargs=None, *,
                      filename="<fuzz>", under_exception=False,
                      consume_generators=True, timeout=None, isolate=False,
                      interpret_module=False):
    """Like :func:`assert_same_source`, but return the message (or None)."""

    def compare():
        runs = compare_source(source, entry, args, kwargs, filename=filename,
                              interpret_module=interpret_module,
                              under_exception=under_exception,
                              consume_generators=consume_generators,
                              timeout=None if isolate else timeout)
        lines = diff_outcomes(*runs)
        return divergence_report(lines, *runs, source, args) if lines else None

    if isolate:
        return _isolated(compare, timeout)
    return compare()


def assert_same(fn, *args, **kwargs):
    """Assert that ``fn(*args, **kwargs)`` behaves the same interpreted.

    Raises ``AssertionError`` with a field-by-field diff of the two
    :class:`Outcome` records otherwise.  See :func:`check_same` for options.
    """
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        source = None
    message = check_same(fn, args, kwargs, source=source)
    if message:
        raise AssertionError(message)


def assert_same_source(source, entry="f", args=(), kwargs=None, **options):
    """Assert that ``entry(*args)`` from ``source`` behaves the same interpreted.

    The source is compiled and executed natively twice (filename
    ``"<fuzz>"``), into two fresh modules named ``__fuzz__``; the
    native run calls ``entry`` of the first, the interpreted run
    ``pyinterp.interpret(entry)`` of the second.  ``args`` are deep-copied
    per run.  Module globals after the call are compared too.

    Options: ``under_exception`` (call from inside an ``except`` block),
    ``consume_generators``, ``timeout`` (seconds), ``isolate`` (run the
    comparison in a forked child; the timeout then kills the child),
    ``interpret_module`` (the interpreted run also executes the module body,
    class bodies included, through the interpreter), ``filename``.  Raises
    ``AssertionError`` with a readable report.
    """
    message = check_same_source(source, entry, args, kwargs, **options)
    if message:
        raise AssertionError(message)
