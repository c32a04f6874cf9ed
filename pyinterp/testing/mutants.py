"""Deliberately broken handlers, to check that a property finds a bug.

A mutant replaces one opcode handler for the duration of a ``with`` block;
a fuzz property run inside it should fail, and the failure shows what a real
divergence report looks like (``docs/fuzzing.md``'s worked example).  The
mutant lives in this package so that, like every pyinterp frame, it is left
out of the tracebacks the runner compares.
"""
import contextlib

from pyinterp.opcodes import registry

NB_FLOOR_DIVIDE = 2
NB_INPLACE_FLOOR_DIVIDE = 15


@contextlib.contextmanager
def replaced_handler(opname, make):
    """Install ``make(correct_handler)`` as the handler of ``opname``.

    Decoding looks handlers up when a code object is first decoded, so the
    mutant applies to code decoded inside the block (the runner compiles
    each program afresh)."""
    correct = registry.HANDLERS[opname]
    registry.HANDLERS[opname] = make(correct)
    try:
        yield
    finally:
        registry.HANDLERS[opname] = correct


def floor_division_truncates():
    """``BINARY_OP``: ``a // b`` and ``a //= b`` on ints round towards zero
    (C's division) instead of down; everything else is unchanged."""

    def make(correct):
        def binary_op(vm, frame, ins):
            stack = frame.stack
            if (ins.argval in (NB_FLOOR_DIVIDE, NB_INPLACE_FLOOR_DIVIDE)
                    and type(stack[-2]) is int and type(stack[-1]) is int and stack[-1]):
                b = stack.pop()
                a = stack[-1]
                quotient = abs(a) // abs(b)
                stack[-1] = quotient if (a < 0) == (b < 0) else -quotient
                return None
            return correct(vm, frame, ins)

        binary_op.__doc__ = correct.__doc__
        return binary_op

    return replaced_handler("BINARY_OP", make)
