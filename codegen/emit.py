"""Emit CPython bytecode that is right on 3.11, 3.12 and 3.13.

Guards and mocks are generated as real bytecode with the ``bytecode``
library (``Instr``, ``Label``, ``Bytecode``).  That library hides the
encoding of arguments (caches, ``EXTENDED_ARG``, jump offsets, the
``COMPARE_OP`` bit layout) but not the *shape* of the instruction stream,
which changed between the versions we support.  This module is the one
place that knows those shapes:

* **call**: ``NULL, f, args; PRECALL n; CALL n`` on 3.11; the same
  without ``PRECALL`` on 3.12; ``f, NULL, args; CALL n`` on 3.13.
* **keyword call**: ``KW_NAMES names`` just before ``PRECALL`` (3.11) or
  ``CALL`` (3.12); ``LOAD_CONST names; CALL_KW n`` on 3.13, where the
  names travel on the stack.
* **method load**: ``LOAD_METHOD name`` on 3.11; ``LOAD_ATTR`` with the
  method bit on 3.12+, written ``LOAD_ATTR (True, name)`` in ``bytecode``.
* **attribute load**: ``LOAD_ATTR name`` on 3.11, ``LOAD_ATTR (False, name)``
  on 3.12+.
* **backward conditional jump**: ``POP_JUMP_BACKWARD_IF_X`` on 3.11; 3.12+
  has none, so an inverted forward jump skips over a ``JUMP_BACKWARD``.
* **truth test**: a conditional jump takes any object on 3.11/3.12; on 3.13
  it needs an exact bool, so ``TO_BOOL`` comes first.
* **return a constant**: ``LOAD_CONST; RETURN_VALUE`` on 3.11,
  ``RETURN_CONST`` on 3.12+.

Everything is built through :class:`Emitter`, a tiny builder whose methods
read like the Python they stand for::

    e = Emitter()
    e.load_global("len", push_null=True)     # len(
    e.load_fast("xs")                        #     xs
    e.call(1)                                #       )
    e.load_const(3)
    e.compare("==")
    e.return_value()
    f = e.build_function("has_three", ["xs"], globals())

Rewriting an *existing* code object (resume functions, later) goes through
:func:`editable` and :func:`assemble`, which avoid a known ``bytecode``
0.19.1 bug in exception-table stack depths (DESIGN §10).
"""
import contextlib
import sys
import types

from bytecode import BinaryOp, Bytecode, Compare, CompilerFlags, Instr, Label, SetLineno

PY312 = sys.version_info >= (3, 12)
"""3.12 dropped ``PRECALL`` and the backward conditional jumps, and folded
``LOAD_METHOD`` into ``LOAD_ATTR``."""

PY313 = sys.version_info >= (3, 13)
"""3.13 moved the call's NULL above the callable, added ``CALL_KW`` and
``TO_BOOL``."""

COMPARE_OPS = {
    "<": Compare.LT, "<=": Compare.LE, "==": Compare.EQ,
    "!=": Compare.NE, ">": Compare.GT, ">=": Compare.GE,
}
"""``COMPARE_OP`` operators by symbol.  ``bytecode`` encodes ``Compare``
per version itself: ``cmp_op`` index on 3.11, ``op << 4`` plus a mask on
3.12, ``op << 5`` plus a to-bool bit on 3.13."""

BINARY_OPS = {
    "+": BinaryOp.ADD, "-": BinaryOp.SUBTRACT, "*": BinaryOp.MULTIPLY,
    "/": BinaryOp.TRUE_DIVIDE, "//": BinaryOp.FLOOR_DIVIDE, "%": BinaryOp.REMAINDER,
    "**": BinaryOp.POWER, "@": BinaryOp.MATRIX_MULTIPLY, "&": BinaryOp.AND,
    "|": BinaryOp.OR, "^": BinaryOp.XOR, "<<": BinaryOp.LSHIFT, ">>": BinaryOp.RSHIFT,
}
"""``BINARY_OP`` operators by symbol (the same encoding on 3.11 to 3.13)."""

_EXACT_BOOL_OPS = frozenset({"IS_OP", "CONTAINS_OP", "TO_BOOL", "UNARY_NOT"})
"""Instructions whose result is always an exact ``bool`` (no ``TO_BOOL``
needed before a 3.13 conditional jump)."""

_TRUTH = {True: "TRUE", False: "FALSE"}
"""The condition's spelling in jump names (``POP_JUMP_IF_FALSE``)."""

_NO_ARG = object()
"""Marks an instruction without argument (``None`` is a valid constant)."""


class Emitter:
    """Builds one function's bytecode, instruction by instruction.

    Each method appends the instructions for one step and documents its
    stack effect in CPython's notation.  Labels are created with
    :meth:`label` and placed with :meth:`place`; the emitter remembers which
    labels are placed, so that jumps can pick their direction.

    ``lineno`` is the line number given to the instructions emitted next;
    set it to map generated code onto lines of a rendered listing (a
    guard's line, say), so that tracebacks point somewhere useful.
    """

    def __init__(self, filename="<pyinterp-codegen>", first_lineno=1):
        self.filename = filename
        self.first_lineno = first_lineno
        self.lineno = first_lineno
        self._line_set = first_lineno  # (RESUME, first in the code, has it)
        self.instructions = []
        self._placed = set()

    # -- raw material -----------------------------------------------------

    def emit(self, name, arg=_NO_ARG):
        """Append the instruction ``name`` (with ``arg`` if it takes one).

        The escape hatch for instructions with no helper; the caller is
        then responsible for the per-version differences.
        """
        if self.lineno != self._line_set:
            # One SetLineno per line rather than a line on every
            # instruction: an Instr built with a location costs twice as
            # much, and a guard has thousands.
            self.instructions.append(SetLineno(self.lineno))
            self._line_set = self.lineno
        instr = Instr(name) if arg is _NO_ARG else Instr(name, arg)
        self.instructions.append(instr)
        return instr

    def label(self):
        """A new, not yet placed, jump target."""
        return Label()

    def place(self, label):
        """Place ``label`` here: jumps to it continue with what follows."""
        self.instructions.append(label)
        self._placed.add(label)
        return label

    # -- loads and stores -------------------------------------------------

    def load_const(self, value):
        """``( -- value)``: push a constant (kept alive by the code object)."""
        self.emit("LOAD_CONST", value)

    def load_fast(self, name):
        """``( -- value)``: push the local ``name``, which must be bound
        (an argument, or stored before)."""
        self.emit("LOAD_FAST", name)

    def store_fast(self, name):
        """``(value -- )``: pop into the local ``name``."""
        self.emit("STORE_FAST", name)

    def pop_top(self):
        """``(value -- )``: discard the top of the stack."""
        self.emit("POP_TOP")

    def load_global(self, name, push_null=False):
        """``( -- value)``, or ready to call with ``push_null``.

        ``bytecode`` writes the argument as ``(push_null, name)`` on every
        version.  With the NULL the instruction pushes ``NULL, value`` on
        3.11/3.12 and ``value, NULL`` on 3.13: either way what :meth:`call`
        expects below the arguments.
        """
        self.emit("LOAD_GLOBAL", (push_null, name))

    def load_attr(self, name):
        """``(obj -- obj.name)``.

        3.11: ``LOAD_ATTR name``.  3.12+: ``LOAD_ATTR (False, name)``, the
        low bit of the argument being the method bit (off).
        """
        self.emit("LOAD_ATTR", (False, name) if PY312 else name)

    def load_method(self, name):
        """``(obj -- method, self)`` or ``(obj -- NULL, attr)``, ready for
        :meth:`call` (3.13 pushes ``attr, NULL`` in the second case).

        3.11: ``LOAD_METHOD name``.  3.12+: ``LOAD_ATTR (True, name)``, the
        same instruction as :meth:`load_attr` with the method bit set.
        """
        if PY312:
            self.emit("LOAD_ATTR", (True, name))
        else:
            self.emit("LOAD_METHOD", name)

    # -- calls --------------------------------------------------------------

    @contextlib.contextmanager
    def callable(self):
        """A block whose instructions push a callable, with a NULL beside it.

        A call needs two stack slots below its arguments: the callable and
        ``self`` or NULL.  :meth:`load_global` and :meth:`load_method` fill
        both; for any other callable, push it inside this block::

            with e.callable():
                e.load_fast("cfg")
                e.load_attr("hook")
            e.load_const(1)
            e.call(1)                 # cfg.hook(1)

        ``PUSH_NULL`` goes before the block on 3.11/3.12 (``NULL, f``) and
        after it on 3.13 (``f, NULL``).
        """
        if not PY313:
            self.emit("PUSH_NULL")
        yield
        if PY313:
            self.emit("PUSH_NULL")

    def call(self, argc, kwnames=()):
        """``(callable, self_or_null, args[argc] -- result)``.

        ``argc`` counts every argument on the stack, positional then
        keyword; ``kwnames`` names the last ``len(kwnames)`` of them.

        * 3.11: ``KW_NAMES kwnames`` (if any), ``PRECALL argc``, ``CALL argc``;
        * 3.12: ``KW_NAMES kwnames`` (if any), ``CALL argc``;
        * 3.13: ``CALL argc``, or ``LOAD_CONST kwnames; CALL_KW argc``: the
          names travel on the stack.
        """
        kwnames = tuple(kwnames)
        if PY313:
            if kwnames:
                self.load_const(kwnames)
                self.emit("CALL_KW", argc)
            else:
                self.emit("CALL", argc)
            return
        if kwnames:
            self.emit("KW_NAMES", kwnames)
        if not PY312:
            self.emit("PRECALL", argc)
        self.emit("CALL", argc)

    # -- operators ----------------------------------------------------------

    def compare(self, op):
        """``(left, right -- left <op> right)`` for ``<``, ``<=``, ``==``,
        ``!=``, ``>``, ``>=`` (a symbol or a ``bytecode.Compare``).

        ``bytecode`` encodes the argument per version; the result is what the
        rich comparison returns, not necessarily a bool.
        """
        self.emit("COMPARE_OP", COMPARE_OPS.get(op, op))

    def is_op(self, negate=False):
        """``(left, right -- left is right)``, or ``is not`` with ``negate``."""
        self.emit("IS_OP", int(negate))

    def contains_op(self, negate=False):
        """``(item, container -- item in container)``, or ``not in``."""
        self.emit("CONTAINS_OP", int(negate))

    def binary_op(self, op):
        """``(left, right -- left <op> right)`` for an operator symbol such
        as ``"+"``, or any ``bytecode.BinaryOp`` (in-place forms too)."""
        self.emit("BINARY_OP", BINARY_OPS.get(op, op))

    # -- control flow ---------------------------------------------------------

    def jump(self, target):
        """Jump to ``target``: ``JUMP_BACKWARD`` if it is already placed,
        else ``JUMP_FORWARD``.

        ``bytecode`` rejects ``JUMP_FORWARD`` to an earlier label and the
        pseudo-instruction ``JUMP``, so the direction must be explicit.
        """
        self.emit("JUMP_BACKWARD" if target in self._placed else "JUMP_FORWARD", target)

    def jump_if_false(self, target):
        """``(cond -- )``: pop ``cond``, jump to ``target`` if it is falsy."""
        self._jump_if(False, target)

    def jump_if_true(self, target):
        """``(cond -- )``: pop ``cond``, jump to ``target`` if it is truthy."""
        self._jump_if(True, target)

    def _jump_if(self, when, target):
        """The conditional jump, in the direction of ``target``.

        * 3.13 tests only exact bools in ``POP_JUMP_IF_TRUE/FALSE`` (on
          anything else it silently misbehaves), so ``TO_BOOL`` comes first
          unless the previous instruction already made an exact bool.
        * Forward: ``POP_JUMP_FORWARD_IF_X`` on 3.11, ``POP_JUMP_IF_X`` on
          3.12+.
        * Backward: ``POP_JUMP_BACKWARD_IF_X`` on 3.11.  3.12+ has no
          backward conditional jump, so (as CPython's compiler does) jump
          forward over a ``JUMP_BACKWARD`` on the opposite condition.
        """
        if PY313 and not self._made_exact_bool():
            self.emit("TO_BOOL")
        backward = target in self._placed
        if not PY312:
            direction = "BACKWARD" if backward else "FORWARD"
            self.emit("POP_JUMP_%s_IF_%s" % (direction, _TRUTH[when]), target)
        elif not backward:
            self.emit("POP_JUMP_IF_%s" % _TRUTH[when], target)
        else:
            skip = self.label()
            self.emit("POP_JUMP_IF_%s" % _TRUTH[not when], skip)
            self.emit("JUMP_BACKWARD", target)
            self.place(skip)

    def _made_exact_bool(self):
        """Whether the last thing emitted is an instruction (not a label a
        jump may arrive at) that always pushes an exact bool."""
        last = self.instructions[-1] if self.instructions else None
        return isinstance(last, Instr) and last.name in _EXACT_BOOL_OPS

    def return_value(self):
        """``(value -- )``: return the top of the stack."""
        self.emit("RETURN_VALUE")

    def return_const(self, value):
        """Return a constant: ``RETURN_CONST`` on 3.12+, ``LOAD_CONST;
        RETURN_VALUE`` on 3.11."""
        if PY312:
            self.emit("RETURN_CONST", value)
        else:
            self.load_const(value)
            self.return_value()

    # -- assembly -------------------------------------------------------------

    def build_code(self, name, argnames, stacksize=None):
        """The code object of a plain function of positional ``argnames``.

        Prepends the prologue: ``RESUME 0`` must be the first instruction of
        any non-generator code on 3.11+ (``MAKE_CELL``/``COPY_FREE_VARS``
        would precede it in code with closures; generated code takes its
        inputs as arguments or globals, so it has none).  Flags are those
        of a plain function with no cells: ``OPTIMIZED | NEWLOCALS |
        NOFREE`` (what ``bytecode`` would infer, stated rather than found
        by a scan over every instruction).
        """
        bc = Bytecode([Instr("RESUME", 0, lineno=self.first_lineno)] + self.instructions)
        bc.name = bc.qualname = name
        bc.filename = self.filename
        bc.first_lineno = self.first_lineno
        bc.argnames = list(argnames)
        bc.argcount = len(bc.argnames)
        bc.flags = _PLAIN_FUNCTION_FLAGS
        return assemble(bc, stacksize)

    def build_function(self, name, argnames, globals, stacksize=None):
        """A function running the emitted code, with ``globals`` as its
        module namespace (where ``LOAD_GLOBAL`` looks, then its
        ``__builtins__``).  ``stacksize``, if the caller knows a bound,
        spares ``bytecode`` its control-flow analysis (the slow part of
        assembling a guard with a thousand checks)."""
        return types.FunctionType(self.build_code(name, argnames, stacksize), globals, name)


_PLAIN_FUNCTION_FLAGS = CompilerFlags.OPTIMIZED | CompilerFlags.NEWLOCALS | CompilerFlags.NOFREE


def editable(code):
    """``code`` as a ``bytecode.Bytecode`` to rewrite, keeping the stack
    depths of its exception table as CPython computed them.

    ``bytecode`` 0.19.1 recomputes those depths wrongly in some nested
    ``try``/``finally`` code (a bare ``raise`` in a ``finally`` inside a
    handler), which corrupts exception state and can crash the process.
    A new ``try`` region added to the result needs an explicit
    ``TryBegin(..., stack_depth=n)``.
    """
    return Bytecode.from_code(code, conserve_exception_block_stackdepth=True)


def assemble(bc, stacksize=None):
    """The code object of ``bc``, without recomputing exception-table stack
    depths (see :func:`editable`); the stack size is computed unless given."""
    return bc.to_code(stacksize=stacksize, compute_exception_stack_depths=False)
