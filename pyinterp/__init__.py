"""pyinterp: a pure-Python re-interpreter of CPython bytecode.

``pyinterp.interpret(fn)`` runs ``fn`` opcode by opcode inside an interpreter
written in Python, with results identical to CPython's.  Graph capture
(``pyinterp.trace``) is built on top of it.

This module must stay importable on old Pythons long enough to say clearly
that they are not supported, so it uses no new syntax before the check.
"""
import os as _os
import sys as _sys

from .versions import SUPPORTED_VERSIONS
from .versions import unsupported_python_message as _unsupported_python_message

_why_not = _unsupported_python_message(_sys.version_info, _sys.implementation.name)
if _why_not is not None:
    raise ImportError(_why_not)

# pyinterp's modules bind the builtins they use as their own globals, so
# that a program changing the builtins cannot change pyinterp (ownbuiltins.py).
from . import ownbuiltins as _ownbuiltins  # noqa: E402

_ownbuiltins.install()

# In a source checkout the helper packages sit beside this one (the
# repository keeps the design card's layout); installed, they live inside it
# as pyinterp.opcodes, pyinterp.refgraph and pyinterp.codegen.
_here = _os.path.dirname(_os.path.abspath(__file__))
_root = _os.path.dirname(_here)
if not _os.path.isdir(_os.path.join(_here, "opcodes")) and _os.path.isfile(
    _os.path.join(_root, "opcodes", "__init__.py")
):
    __path__.append(_root)  # noqa: F821  (package __path__)

from .errors import (  # noqa: E402
    GraphBreakError,
    PyinterpError,
    RecompileLimitWarning,
    UnsupportedOpcodeError,
    UnsupportedPythonError,
)
from .api import interpret  # noqa: E402
from .capture.traced import reset, trace  # noqa: E402  (imports torch only when used)
from .capture.explain import explain  # noqa: E402
from .capture.dumping import dump_to  # noqa: E402
from .capture.runlog import trace_to  # noqa: E402
from .stepping import Steps, steps  # noqa: E402
from .capture.logs import set_logs  # noqa: E402


def log_breaks(enabled: bool = True) -> None:
    """Deprecated: ``set_logs(breaks=enabled)`` (logs each graph break as it
    happens, on the ``pyinterp.breaks`` logger; ``PYINTERP_LOG_BREAKS=1``
    is ``PYINTERP_LOGS=breaks``)."""
    set_logs(breaks=bool(enabled))

__all__ = [
    "interpret",
    "trace",
    "reset",
    "explain",
    "steps",
    "Steps",
    "set_logs",
    "log_breaks",
    "dump_to",
    "trace_to",
    "GraphBreakError",
    "RecompileLimitWarning",
    "PyinterpError",
    "UnsupportedOpcodeError",
    "UnsupportedPythonError",
    "SUPPORTED_VERSIONS",
]
__version__ = "0.1.0"
