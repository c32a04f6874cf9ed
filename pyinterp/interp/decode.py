"""Decode a code object once into version-neutral instructions.

The interpreter never looks at raw bytecode.  ``decode(code)`` turns
``dis.get_instructions(code)`` into a tuple of :class:`Instruction` objects
with everything a handler needs already worked out:

* jump targets as instruction *indices* (``ins.target``), including the exit
  of ``FOR_ITER`` and ``SEND``;
* the exception handler covering each instruction (``ins.exc_target``,
  ``ins.exc_depth``, ``ins.exc_lasti``), from the exception table;
* the opcode's handler function (``ins.fn``), looked up in the registry;
* operands pre-digested where a handler would otherwise redo the work on every
  execution (``ins.argval``), and the bits packed into some arguments as
  named fields (``ins.push_null``, ``ins.method``, ``ins.to_bool``,
  ``ins.after_yield_from``; see :class:`Instruction`).

This is also where most differences between Python versions end: operand
encodings that changed (the method bit of ``LOAD_ATTR``, ``COMPARE_OP``'s
to-bool bit, the packed slot pairs of 3.13's superinstructions, what
``RESUME``'s argument says) become the same version-neutral fields on every
version, and the exits of ``FOR_ITER`` and ``SEND`` land past the
instructions CPython steps over when it takes them (see ``_SKIPPED_AT_EXIT``).

The result is cached per code object **by identity**: code objects compare
equal by value, so two identical functions from different files would share
an entry under a value-keyed cache.
"""
import bisect
import inspect
import sys
import weakref

from ..errors import PyinterpError, UnsupportedOpcodeError
from ..ownbuiltins import private_module
from ..opcodes.info import CONVERTS_TO_BOOL, SLOT_OPERANDS, SLOT_PAIR_OPERANDS, TRUTH_TESTS
from ..opcodes.registry import handler_for
from ..opcodes.signals import NULL

_VERSION_TEXT = "%d.%d" % sys.version_info[:2]

dis = private_module("dis")
"""``dis``, as pyinterp's own copy: decoding runs when the program first
calls a function, maybe after it changed the builtins (ownbuiltins.py)."""


class Instruction:
    """One decoded instruction; a plain record read by handlers.

    Besides ``dis``'s fields (``argval`` pre-digested, see ``_predigest``),
    an instruction carries what its argument's bits mean, as named fields
    (False or None where they do not apply):

    * ``push_null``: ``LOAD_GLOBAL`` pushes a NULL too, for a call;
    * ``method``: a method load (``LOAD_ATTR`` on 3.12+, ``LOAD_SUPER_ATTR``);
    * ``to_bool``: 3.13's ``COMPARE_OP`` converts its result to a bool,
      ``TO_BOOL`` converts the top; False where the next instruction is a
      truth test (:func:`_fold_truth_tests`): the jump converts it;
    * ``after_yield_from``: this ``RESUME`` follows the yield of a
      ``yield from``/``await``;
    * ``line``: the instruction's own line (None for an instruction with
      no location; ``lineno`` carries the previous line forward instead);
    * ``varname``: the variable of an instruction whose ``argval`` is a
      local slot (for error messages); ``varnames``: the two variables of
      3.13's slot-pair superinstructions.
    """

    __slots__ = (
        "fn", "inline", "opname", "opcode", "arg", "argval", "target", "index",
        "offset", "lineno", "line", "exc_target", "exc_depth", "exc_lasti",
        "push_null", "method", "to_bool", "after_yield_from", "varname", "varnames",
    )

    def __repr__(self):
        return "<%d %s %r>" % (self.index, self.opname, self.argval)

    def copy(self):
        """A shallow copy (debug mode wraps the copies' handlers), with the
        instruction's own handler even while tracing lends it a traced one
        (:data:`LENT_HANDLERS`)."""
        clone = Instruction()
        for name in Instruction.__slots__:
            setattr(clone, name, getattr(self, name))
        lent = LENT_HANDLERS.get(id(self))
        if lent is not None:
            clone.fn, clone.inline = lent[1], lent[2]
        return clone


LENT_HANDLERS = {}
"""id(instruction) -> (instruction, its own handler, its inline kind), for
decoded instructions running traced handlers for a while
(``tracing._patch_running``)."""


SUSPENDABLE_FLAGS = (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
                     | inspect.CO_ITERABLE_COROUTINE)
"""Code flags of functions whose frames suspend (generators, coroutines)."""


# Instructions the fast run loop executes inline, without calling their
# handler (small ints; 0 means "call the handler").
INLINE_LOAD_FAST = 1
INLINE_LOAD_CONST = 2
INLINE_JUMP = 3
INLINE_NOTHING = 4
INLINE_STORE_FAST = 5
INLINE_POP_TOP = 6
INLINE_FOR_ITER = 7
_INLINE = {
    "LOAD_FAST": INLINE_LOAD_FAST,
    "LOAD_FAST_CHECK": INLINE_LOAD_FAST,
    "LOAD_CONST": INLINE_LOAD_CONST,
    "STORE_FAST": INLINE_STORE_FAST,
    "POP_TOP": INLINE_POP_TOP,
    "FOR_ITER": INLINE_FOR_ITER,
    "JUMP_FORWARD": INLINE_JUMP,
    "JUMP_BACKWARD": INLINE_JUMP,
    "JUMP_BACKWARD_NO_INTERRUPT": INLINE_JUMP,
    "NOP": INLINE_NOTHING,
    "RESUME": INLINE_NOTHING,
    "EXTENDED_ARG": INLINE_NOTHING,
    "PRECALL": INLINE_NOTHING,
    "CACHE": INLINE_NOTHING,
}


class DecodedCode:
    """The decoded form of one code object, plus facts handlers reuse.

    It holds its code object only weakly (``ref``), so that decoding a code
    object never keeps it alive: when the code object dies, its cache entry
    goes too.
    """

    __slots__ = ("ref", "instructions", "localsplus_names", "nlocalsplus",
                 "offset_to_index", "plain_argcount", "is_generator",
                 "after_arguments", "checked", "stubs")

    def __init__(self, code, ref, instructions, offset_to_index):
        self.ref = ref
        self.instructions = instructions
        self.localsplus_names = localsplus_names(code)
        self.nlocalsplus = len(self.localsplus_names)
        self.offset_to_index = offset_to_index
        self.stubs = None
        """Stub code objects standing for this code's frames (``stubframes``)."""
        self.checked = None
        """Debug mode's copy of the instructions (see ``vm.checked_instructions``)."""
        flags = code.co_flags
        plain = not (flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)) \
            and not code.co_kwonlyargcount
        self.plain_argcount = code.co_argcount if plain else -1
        """The positional argument count when a call with exactly that many
        positional arguments needs no binding, else -1."""
        nargs = (code.co_argcount + code.co_kwonlyargcount
                 + bool(flags & inspect.CO_VARARGS) + bool(flags & inspect.CO_VARKEYWORDS))
        self.after_arguments = (NULL,) * (self.nlocalsplus - nargs)
        """Initial (unbound) values of the local slots after the arguments."""
        self.is_generator = bool(flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE
                                          | inspect.CO_ASYNC_GENERATOR))


CACHE = {}
"""id(code) -> DecodedCode.  Check ``entry.ref() is code`` before use: ids
are reused once a code object dies (its entry is removed then, too)."""


def decode(code):
    """Return the :class:`DecodedCode` for ``code``, decoding it on first use."""
    entry = CACHE.get(id(code))
    if entry is not None and entry.ref() is code:
        return entry
    key = id(code)
    ref = weakref.ref(code, lambda _ref, key=key: CACHE.pop(key, None))
    decoded = _decode(code, ref)
    CACHE[key] = decoded
    return decoded


def localsplus_names(code):
    """Names of the fast locals, cells and free variables, in slot order."""
    names = list(code.co_varnames)
    names.extend(n for n in code.co_cellvars if n not in code.co_varnames)
    names.extend(code.co_freevars)
    return tuple(names)


def _decode(code, ref):
    raw = list(dis.get_instructions(code))
    offset_to_index = {ins.offset: i for i, ins in enumerate(raw)}
    # Offsets of cache entries are not instructions; a jump never lands there.
    table = _exception_table(code, raw, offset_to_index)
    out = []
    lineno = code.co_firstlineno
    for i, d in enumerate(raw):
        fn = handler_for(d.opname)
        if fn is None:
            raise UnsupportedOpcodeError(
                d.opname, _VERSION_TEXT,
                " (in %s, %s:%s)" % (code.co_qualname, code.co_filename, lineno))
        ins = Instruction()
        ins.fn = fn
        ins.inline = _INLINE.get(d.opname, 0)
        ins.opname = d.opname
        ins.opcode = d.opcode
        ins.arg = d.arg
        ins.argval = d.argval
        ins.push_null = ins.method = ins.to_bool = ins.after_yield_from = False
        ins.varname = ins.varnames = None
        ins.index = i
        ins.offset = d.offset
        ins.line = d.positions.lineno if d.positions is not None else None
        if ins.line is not None:
            lineno = ins.line
        ins.lineno = lineno
        ins.target = None
        if d.opcode in dis.hasjrel or d.opcode in dis.hasjabs:
            ins.target = _exit_target(code, raw, d, offset_to_index[d.argval])
        ins.exc_target, ins.exc_depth, ins.exc_lasti = table.get(i, (None, 0, False))
        _predigest(ins, d, code)
        out.append(ins)
    _fold_truth_tests(out)
    return DecodedCode(code, ref, tuple(out), offset_to_index)


def _fold_truth_tests(instructions):
    """3.13 converts a condition to an exact bool (``TO_BOOL``, or
    ``COMPARE_OP``'s bool bit) before the ``POP_JUMP_IF_*`` that tests it;
    3.11 and 3.12 leave the truth test to the jump, whose handler still
    tests any value on 3.13.  Fold such a pair into the jump (``to_bool``
    False): ``bool()`` runs once either way, at the jump, on every version,
    so a condition reaches the jump as the value it is (a tensor: a
    data-dependent branch the capture can merge).  Only where both share an
    exception handler and a line, so an error in ``__bool__`` is handled and
    reported alike."""
    for ins, nxt in zip(instructions, instructions[1:]):
        if ins.to_bool and nxt.opname in TRUTH_TESTS and ins.lineno == nxt.lineno \
                and (ins.exc_target, ins.exc_depth, ins.exc_lasti) \
                == (nxt.exc_target, nxt.exc_depth, nxt.exc_lasti):
            ins.to_bool = False


_VERSION = sys.version_info[:2]

_SKIPPED_AT_EXIT = {
    (3, 11): {},
    # An exhausted FOR_ITER pops the iterator and jumps past END_FOR; a SEND
    # whose receiver returned jumps to END_SEND, which pops the receiver
    # (the SEND handler does that itself, as on 3.11).
    (3, 12): {"FOR_ITER": ("END_FOR",), "SEND": ("END_SEND",)},
    # 3.13 also steps over the POP_TOP after END_FOR (END_FOR pops one value).
    (3, 13): {"FOR_ITER": ("END_FOR", "POP_TOP"), "SEND": ("END_SEND",)},
}[_VERSION]
"""opname -> the instructions CPython steps over after jumping to the
target ``dis`` shows; the decoded target is the instruction after them."""

CLEANUP_THROW_IN_BYTECODE = _VERSION >= (3, 12)
"""3.12+: when ``throw()`` is forwarded to the sub-iterator of a suspended
``yield from``/``await`` and it finishes (``StopIteration``), the exception is
raised into the frame, whose ``CLEANUP_THROW`` handler continues with the
value.  On 3.11 ``gen.throw`` itself resumes the frame after the ``SEND``
loop (see ``generators._throw_into``)."""

_LOAD_ATTR_HAS_METHOD_BIT = _VERSION >= (3, 12)
"""3.12+ ``LOAD_ATTR``'s low bit asks for a method load (3.11's ``LOAD_METHOD``)."""

_COMPARE_TO_BOOL_BIT = 16 if _VERSION >= (3, 13) else 0
"""3.13 ``COMPARE_OP``: bit 4 converts the result to an exact bool (the
operator is in ``arg >> 5``; 3.12: ``arg >> 4``; 3.11: ``arg``; ``dis``
decodes all three into ``argval``)."""


def _exit_target(code, raw, d, target):
    """The index where a jump of ``d`` to instruction ``target`` continues."""
    skipped = _SKIPPED_AT_EXIT.get(d.opname, ())
    for expected in skipped:
        if raw[target].opname != expected:
            raise PyinterpError(
                "%s at offset %d of %s jumps to %s, expected %s"
                % (d.opname, d.offset, code.co_qualname, raw[target].opname, expected))
        target += 1
    return target


def _predigest(ins, d, code):
    """Work out once what a handler would otherwise recompute on every run."""
    name = ins.opname
    if name == "LOAD_GLOBAL":
        ins.push_null = bool(d.arg & 1)
    elif name == "LOAD_ATTR":
        ins.method = _LOAD_ATTR_HAS_METHOD_BIT and bool(d.arg & 1)
    elif name == "LOAD_SUPER_ATTR":
        ins.method = bool(d.arg & 1)        # (arg & 2: two-argument super)
    elif name == "COMPARE_OP":
        ins.to_bool = bool(d.arg & _COMPARE_TO_BOOL_BIT)
    elif name in CONVERTS_TO_BOOL:
        ins.to_bool = True
    elif name == "RESUME":
        ins.after_yield_from = (d.arg & 3) >= 2
    elif name == "KW_NAMES":
        ins.argval = code.co_consts[d.arg]  # dis cannot show it on 3.11
    elif name == "BINARY_OP":
        ins.argval = d.arg                  # the NB_* operator number
    elif name in ("CALL_INTRINSIC_1", "CALL_INTRINSIC_2"):
        ins.argval = d.argrepr              # the intrinsic's name, INTRINSIC_...
    elif name in SLOT_OPERANDS:
        ins.argval = d.arg                  # slot index into localsplus
        ins.varname = d.argval
    elif name in SLOT_PAIR_OPERANDS:
        ins.argval = (d.arg >> 4, d.arg & 15)  # the two slots
        ins.varnames = d.argval


def _exception_table(code, raw, offset_to_index):
    """Map instruction index -> (handler index, stack depth, push-lasti)."""
    offsets = [d.offset for d in raw]
    table = {}
    for entry in dis._parse_exception_table(code):
        target = offset_to_index[entry.target]
        first = bisect.bisect_left(offsets, entry.start)
        last = bisect.bisect_left(offsets, entry.end)
        for i in range(first, last):
            table[i] = (target, entry.depth, entry.lasti)
    return table
