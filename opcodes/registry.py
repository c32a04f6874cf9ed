"""The opcode registry: one handler per opcode, with version bounds.

A handler is registered with::

    @opcode("BINARY_OP", since=(3, 11), until=None)
    def binary_op(vm, frame, ins):
        '''(lhs, rhs -- result) ...'''

``since`` is the first Python (major, minor) that has the opcode with this
meaning, ``until`` the first one that no longer does (exclusive).  A handler
whose bounds exclude the running Python is not installed.  Registration checks,
at import time, that the opcode exists in ``dis.opmap`` and that no opcode is
registered twice for the running version.

Handler contract: ``handler(vm, frame, ins)`` returns ``None`` to fall through
to the next instruction, an ``int`` instruction index to jump there, or one of
the signals :data:`RETURN`, :data:`YIELD`, :data:`GENERATOR` from
:mod:`pyinterp.opcodes.signals`.  User exceptions are simply raised; the loop
unwinds them through the exception table.
"""
import dis
import sys

_RUNNING = tuple(sys.version_info[:2])
HANDLERS = {}
"""opname -> handler for the running Python."""
REGISTRATIONS = []
"""Every ``(name, since, until, handler)`` registered, for any version (the
opcode reference documents all supported versions at once)."""

# Opcodes that exist in dis.opmap but never reach a handler:
#   CACHE             inline cache entries, skipped by dis.get_instructions
#   RESERVED          3.12+: a placeholder number, never emitted
#   INTERPRETER_EXIT  3.12+: ends the C entry frame, never in a code object
#   ENTER_EXECUTOR    3.13: installed over a hot loop by the optimizer;
#                     dis shows the original instruction
#   EXIT_INIT_CHECK   3.13: only in the shim frame of CALL_ALLOC_AND_ENTER_INIT
# EXTENDED_ARG is *not* here: dis folds it into the next instruction's
# argument but still lists it (and jumps may land on it), so it has a no-op
# handler.  Instrumented opcodes (3.12+) and pseudo-ops (>= 256) are excluded
# by rule in :func:`real_opcodes`.  Keep this list per version, here and
# only here.
NEVER_EXECUTED = {
    (3, 11): frozenset({"CACHE"}),
    (3, 12): frozenset({"CACHE", "RESERVED", "INTERPRETER_EXIT"}),
    (3, 13): frozenset({"CACHE", "RESERVED", "INTERPRETER_EXIT", "ENTER_EXECUTOR",
                        "EXIT_INIT_CHECK"}),
}


def real_opcodes(version=_RUNNING):
    """The opcodes of ``dis.opmap`` that user code can actually execute."""
    excluded = NEVER_EXECUTED.get(version, frozenset({"CACHE"}))
    return sorted(
        name for name, num in dis.opmap.items()
        if num < 256 and not name.startswith("INSTRUMENTED_") and name not in excluded
    )


def opcode(name, since=(3, 11), until=None):
    """Register the decorated function as the handler of opcode ``name``."""

    def register(fn):
        if not (since <= _RUNNING and (until is None or _RUNNING < until)):
            REGISTRATIONS.append((name, since, until, fn))
            return fn
        if name not in dis.opmap:
            raise RuntimeError("opcode %s does not exist on Python %d.%d"
                               % ((name,) + _RUNNING))
        if name in HANDLERS:
            raise RuntimeError("opcode %s registered twice (%s and %s)"
                               % (name, HANDLERS[name].__qualname__, fn.__qualname__))
        fn.opname = name
        HANDLERS[name] = fn
        REGISTRATIONS.append((name, since, until, fn))
        return fn

    return register


def handler_for(opname):
    """The handler for ``opname`` on the running Python, or None."""
    return HANDLERS.get(opname)
