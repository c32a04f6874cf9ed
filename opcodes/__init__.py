"""One handler per CPython opcode, grouped by family.

Importing this package registers every handler for the running Python in
:data:`pyinterp.opcodes.registry.HANDLERS`.  Each handler's docstring is the
teaching reference for its instruction: the stack effect in CPython's
notation, the semantics, and the RefGraph rule that graph capture applies.

Handlers reach the interpreter only through their ``vm`` argument (its
methods implement the data model: ``vm.binary_op``, ``vm.load_attr``,
``vm.call``...); they never import :mod:`pyinterp` itself.
"""
from . import (  # noqa: F401  (imported for their registrations)
    stack, names, arith, build, calls, control, exceptions, generators,
    imports, pattern, intrinsics, v311, v313,
)
from .registry import HANDLERS, handler_for, opcode, real_opcodes  # noqa: F401
