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
"""
import os


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
