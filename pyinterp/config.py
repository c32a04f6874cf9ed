"""Settings that change how pyinterp runs, read from the environment once,
at import; tests and tools may also set the attributes directly.

* ``PYINTERP_DEBUG=1``: graph capture (``trace``, ``explain``) runs in debug
  mode, like ``interpret(fn, debug=True)``: after every instruction,
  including the capture variants that record into the graph and the
  RefGraph, the interpreter asserts that the stack changed by the amount
  ``dis.stack_effect`` predicts (``pyinterp.errors.StackEffectError``
  otherwise).  It is slower; CI runs the capture tests once this way.
* ``PYINTERP_DUMP_DIR=dir``: write the generated code of each new cache
  entry (guard, mock, resume functions, FX graph) to ``dir`` as ``.py``
  files its code objects point at (``pyinterp.dump_to``; see
  ``pyinterp.capture.dumping``).
* ``PYINTERP_TRACE_DIR=dir``: write the structured log of each capture to
  ``dir/pyinterp_trace_PID.jsonl`` (``pyinterp.trace_to``; see
  ``pyinterp.capture.runlog``), which ``python -m pyinterp report dir``
  turns into an HTML page.
"""
import os
from typing import Optional, Union


def _flag(name):
    return os.environ.get(name, "") not in ("", "0")


debug_capture = _flag("PYINTERP_DEBUG")
"""Check every instruction's stack effect during capture too."""

host_tracebacks = _flag("PYINTERP_HOST_TRACEBACKS")
"""Leave tracebacks as the host made them (pyinterp's frames, not the user's)."""

trace_host = _flag("PYINTERP_TRACE_HOST")
"""Leave the host's trace and profile functions on during interpreted calls."""

dump_dir = os.path.abspath(os.environ["PYINTERP_DUMP_DIR"]) \
    if os.environ.get("PYINTERP_DUMP_DIR") else None
"""Where new cache entries' generated code is written (None: nowhere)."""

trace_dir = os.path.abspath(os.environ["PYINTERP_TRACE_DIR"]) \
    if os.environ.get("PYINTERP_TRACE_DIR") else None
"""Where each capture's structured log is written (None: nowhere)."""


class DirectorySetting:
    """Sets the setting :attr:`name` of this module to ``directory`` (made
    absolute; ``None``: off) from now on.  As a context manager, the
    previous setting comes back when the block ends.  (``pyinterp.dump_to``
    and ``pyinterp.trace_to`` are its subclasses.)"""

    name = None

    def __init__(self, directory: "Optional[Union[str, os.PathLike]]") -> None:
        import sys

        self._config = sys.modules[__name__]
        self.previous = getattr(self._config, self.name)
        self.directory = None if directory is None else os.path.abspath(os.fspath(directory))
        setattr(self._config, self.name, self.directory)

    def __enter__(self):
        return self.directory

    def __exit__(self, *exc):
        setattr(self._config, self.name, self.previous)
        return False
