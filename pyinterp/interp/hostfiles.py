"""Which source files are pyinterp's own (the *host*), not the program's.

Frames running pyinterp's code are the interpreter's, never the
interpreted program's: the run loop clears them from tracebacks early, and
the warning bridge re-issues warnings C code attributed to them.  The
host's code is the ``pyinterp`` package (core, capture and all) and the
opcode handlers (``opcodes/`` beside it in a source checkout, inside it
when installed).  ``pyinterp.testing`` is not host code: it is a library
the program may call.
"""
import os

from .. import opcodes as _opcodes_package

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""The ``pyinterp`` package's directory."""

HOST_DIRS = tuple(sorted({PACKAGE_DIR + os.sep,
                          os.path.dirname(os.path.abspath(_opcodes_package.__file__)) + os.sep}))
"""Directory prefixes of pyinterp's own source files."""

TESTING_DIR = os.path.join(PACKAGE_DIR, "testing") + os.sep
"""``pyinterp.testing``: inside the package directory, but not host code."""
