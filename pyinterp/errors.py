"""Exceptions that pyinterp itself raises.

User exceptions raised by interpreted code are never wrapped: they propagate
exactly as CPython would propagate them.  The classes here signal problems of
the interpreter (an opcode it does not know, an unsupported Python), and they
derive from :class:`PyinterpInternal` so that the interpreted program's own
``try``/``except`` blocks can never catch them.
"""
from .versions import supported_range_text


class PyinterpInternal(BaseException):
    """Marker base: bypasses the interpreted program's exception handlers.

    Subclasses are *about* the interpreter, not *from* the program, so an
    interpreted ``except BaseException:`` must not swallow them.
    """


class PyinterpError(PyinterpInternal, RuntimeError):
    """Base class of errors that pyinterp reports to its user."""


class UnsupportedPythonError(PyinterpError):
    """The running Python version is outside the supported range."""


class UnsupportedOpcodeError(PyinterpError):
    """An instruction has no handler on this Python version.

    Raised at decode time, before any instruction of the code object runs, so
    the program never executes half-way.
    """

    def __init__(self, opname, version, where=""):
        self.opname = opname
        self.version = version
        super().__init__(
            "pyinterp has no handler for opcode %s on Python %s%s; supported "
            "versions: %s" % (opname, version, where, supported_range_text())
        )


class StackEffectError(PyinterpInternal, AssertionError):
    """Debug mode: an instruction changed the stack by the wrong amount."""


class GraphBreakError(RuntimeError):
    """Under ``pyinterp.trace(..., fullgraph=True)``: the traced function does
    something that cannot be captured in one graph.

    ``kind`` is a stable name from the break-kind registry
    (``pyinterp.refgraph.breaks.KINDS``); ``message`` says what happened,
    ``filename``/``lineno`` where in the user's code, ``hint`` what to do.
    """

    def __init__(self, kind, message, filename=None, lineno=None, hint=None):
        self.kind = kind
        self.message = message
        self.filename = filename
        self.lineno = lineno
        self.hint = hint
        where = "%s:%s: " % (filename, lineno) if filename else ""
        super().__init__("%sgraph break (%s): %s\n  hint: %s" % (where, kind, message, hint))


class GraphBreakSignal(PyinterpInternal):
    """Carries a break out of the interpreter under ``fullgraph=True``
    (internal: the program's own ``except`` clauses never see it)."""

    def __init__(self, record):
        super().__init__(str(record))
        self.record = record


class AssumptionFailed(PyinterpInternal):
    """Raised by a mock right after its graph: a bool the graph assumed
    from tensor data (``mask.any().item()``) differs on this call.  The
    traced callable catches it and uses another cache entry (internal: the
    program never sees it)."""


class RecompileLimitWarning(UserWarning):
    """A traced function reached its ``cache_limit``: new misses now run
    natively.  The message names the guard that failed most often."""
