"""Opcode facts as data, for the running Python.

The analyses of graph capture (where a branch's arms meet, where an int
the graph computes may flow, which comparison feeds which jump) and the
decoder need a few facts about opcodes: which ones branch and on what,
which end a block, how many stack items each one takes and leaves, what
``BINARY_OP``'s operator numbers mean, which arguments are local slots.
They live here, once, instead of being retyped where they are used.

* What ``dis`` knows is taken from ``dis``: the binary operators
  (``dis._nb_ops``), the comparison operators (``dis.cmp_op``) and the
  instructions whose argument is a local slot (``dis.haslocal``,
  ``dis.hasfree``).
* The rest is written down in tables with version bounds, like handler
  registrations (:mod:`.registry`): a name outside its bounds is left out,
  and every name kept is checked, at import time, to be a real opcode of the
  running Python (in ``dis.opmap``, not a pseudo-op, not one that never
  executes).  ``tests/interp/test_opcode_info.py`` checks the tables
  against ``dis`` on each supported version: the jumps against
  ``dis.hasjrel``, the backward ones against ``dis._is_backward_jump``, and
  the stack counts against ``dis.stack_effect``.

Stack counts follow the handlers' docstrings (CPython's ``(inputs --
outputs)`` notation): :func:`pops` is the number of inputs, the items at the
top of the stack that the instruction takes or reads (an item read in place
and left there counts on both sides: ``FOR_ITER`` is ``(iterator --
iterator, value)``, 1 and 2; ``LIST_APPEND`` reaches its list ``arg`` items
down, so it takes ``arg + 1`` and leaves ``arg``); :func:`pushes` is the
number of outputs.  Their difference is the run-time stack effect: the one
``dis.stack_effect`` gives when the instruction does not jump, except for
3.11's ``PRECALL``/``CALL`` pair, which ``dis`` charges differently from
what runs (see ``vm._STACK_EFFECT_OVERRIDES``).
"""
import dis
import sys

from .registry import real_opcodes

RUNNING = tuple(sys.version_info[:2])

# Version bounds, ``(since, until)`` as in handler registrations.
ALL = ((3, 11), None)
V311 = ((3, 11), (3, 12))
UNTIL_313 = ((3, 11), (3, 13))
V312 = ((3, 12), (3, 13))
SINCE_312 = ((3, 12), None)
SINCE_313 = ((3, 13), None)

_REAL = frozenset(real_opcodes())


def for_running(groups):
    """The entries of ``groups`` (``{(since, until): names or {name: value}}``)
    whose bounds include the running Python: a frozenset of names, or a dict
    when the groups are dicts.  Raises if an entry kept is not a real opcode
    of the running Python, or is listed twice."""
    names, values = [], {}
    for (since, until), entries in groups.items():
        if not (since <= RUNNING and (until is None or RUNNING < until)):
            continue
        for name in entries:
            if name not in _REAL:
                raise RuntimeError("%s is not a real opcode of Python %d.%d"
                                   % ((name,) + RUNNING))
            if name in values or name in names:
                raise RuntimeError("%s is listed twice" % name)
            if isinstance(entries, dict):
                values[name] = entries[name]
            else:
                names.append(name)
    if values and names:
        raise RuntimeError("mixed name sets and tables")
    return values if values else frozenset(names)


# -- branches -----------------------------------------------------------------
_CONDITIONS = for_running({
    V311: {
        "POP_JUMP_FORWARD_IF_TRUE": "true", "POP_JUMP_BACKWARD_IF_TRUE": "true",
        "POP_JUMP_FORWARD_IF_FALSE": "false", "POP_JUMP_BACKWARD_IF_FALSE": "false",
        "POP_JUMP_FORWARD_IF_NONE": "none", "POP_JUMP_BACKWARD_IF_NONE": "none",
        "POP_JUMP_FORWARD_IF_NOT_NONE": "not none", "POP_JUMP_BACKWARD_IF_NOT_NONE": "not none",
        "JUMP_IF_TRUE_OR_POP": "true", "JUMP_IF_FALSE_OR_POP": "false",
    },
    SINCE_312: {
        "POP_JUMP_IF_TRUE": "true", "POP_JUMP_IF_FALSE": "false",
        "POP_JUMP_IF_NONE": "none", "POP_JUMP_IF_NOT_NONE": "not none",
    },
})
"""Conditional jump -> when it jumps: on a ``"true"`` or ``"false"``
condition, on ``"none"`` or ``"not none"``."""

CONDITIONAL_JUMPS = frozenset(_CONDITIONS)
"""Every conditional jump (3.12+ compiles them forward only; 3.11 has a
forward and a backward form of each ``POP_JUMP_*``)."""
JUMPS_IF_TRUE = frozenset(n for n, c in _CONDITIONS.items() if c == "true")
"""The conditional jumps taken when the condition is true."""
JUMPS_IF_FALSE = frozenset(n for n, c in _CONDITIONS.items() if c == "false")
"""The conditional jumps taken when the condition is false."""
JUMPS_IF_NONE = frozenset(n for n, c in _CONDITIONS.items() if c == "none")
"""The conditional jumps taken when the value is ``None``."""
JUMPS_IF_NOT_NONE = frozenset(n for n, c in _CONDITIONS.items() if c == "not none")
"""The conditional jumps taken when the value is not ``None``."""

KEEPS_ON_JUMP = for_running({V311: ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP")})
"""3.11's value forms of ``and``/``or``: the condition stays on the stack
when the jump is taken (and is popped when it is not)."""

TRUTH_TESTS = (JUMPS_IF_TRUE | JUMPS_IF_FALSE) - KEEPS_ON_JUMP
"""The conditional jumps that pop their condition and jump on its truth
(``if``, ``while``, ``assert``; not the ``None`` tests)."""

CONVERTS_TO_BOOL = for_running({SINCE_313: ("TO_BOOL",)})
"""3.13: converts the top to an exact bool (``if``/``while`` conditions,
``not``, ``and``/``or`` tests), as ``COMPARE_OP``'s bool bit does its
result.  Right before one of :data:`TRUTH_TESTS` the conversion is the
jump's own truth test done one instruction early: the decoder folds such a
pair into the jump (``ins.to_bool`` False, see
``pyinterp.interp.decode``), so that every version tests a condition at the
jump, and the analyses read the folded ``TO_BOOL`` as a no-op."""

UNCONDITIONAL_JUMPS = for_running({
    ALL: ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"),
})
"""The jumps that are always taken."""

BACKWARD_JUMPS = for_running({
    ALL: ("JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"),
    V311: ("POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_FALSE",
           "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE"),
})
"""The jumps whose target comes before them (loops' back edges)."""

RETURNS = for_running({ALL: ("RETURN_VALUE",), SINCE_312: ("RETURN_CONST",)})
"""The instructions that return from the frame."""

CALLS = for_running({ALL: ("CALL", "CALL_FUNCTION_EX"), SINCE_313: ("CALL_KW",)})
"""The instructions that call a callable (3.11/3.12 ``CALL`` takes keyword
arguments through ``KW_NAMES`` first)."""

BLOCK_ENDS = RETURNS | for_running({ALL: ("RAISE_VARARGS", "RERAISE")})
"""The instructions after which control never reaches the next one nor a
jump target: they return or raise."""


# -- operands ------------------------------------------------------------------
SLOT_PAIR_OPERANDS = for_running({
    SINCE_313: ("LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST"),
})
"""3.13's superinstructions whose argument packs two local slots,
``(first << 4) | second``."""

SLOT_PAIR_HALVES = {
    name: halves for name, halves in (
        ("LOAD_FAST_LOAD_FAST", ("LOAD_FAST", "LOAD_FAST")),
        ("STORE_FAST_LOAD_FAST", ("STORE_FAST", "LOAD_FAST")),
        ("STORE_FAST_STORE_FAST", ("STORE_FAST", "STORE_FAST")),
    ) if name in SLOT_PAIR_OPERANDS}
"""3.13's slot-pair superinstruction -> the two instructions it does, in
order, the first on the first slot (``LOAD_FAST_LOAD_FAST`` is two
``LOAD_FAST``; ``STORE_FAST_LOAD_FAST`` stores the top into its first
slot, then loads its second; ``STORE_FAST_STORE_FAST`` stores the top into
its first slot, then the next into its second).  Analyses that follow
values through locals read them as these halves."""

SLOT_OPERANDS = frozenset(
    dis.opname[op] for op in dis.haslocal + dis.hasfree) & _REAL - SLOT_PAIR_OPERANDS
"""The instructions whose argument is one local slot (a fast local, a cell
or a free variable: ``dis.haslocal`` and ``dis.hasfree``)."""


# -- stack counts ---------------------------------------------------------------
def _arg(arg):
    return arg


def _arg_plus(n):
    return lambda arg: arg + n


def _with_low_bit(n):
    """``n`` plus one when the argument's low bit is set (a NULL or ``self``
    pushed too; the ``kwargs`` of ``CALL_FUNCTION_EX``)."""
    return lambda arg: n + (arg & 1)


def _unpack_ex(arg):
    return (arg & 0xFF) + (arg >> 8) + 1


def _make_function(arg):
    return 1 + bin(arg & 0xF).count("1")


_ZERO = (0, 0)
_LOAD = (0, 1)
_STORE = (1, 0)
_UNARY = (1, 1)
_BINARY = (2, 1)
_CONTAINER_ADD = (_arg_plus(1), _arg)  # (container, [arg-1 items], item -- container, [...])

_STACK = for_running({
    ALL: {
        "NOP": _ZERO, "RESUME": _ZERO, "EXTENDED_ARG": _ZERO, "SETUP_ANNOTATIONS": _ZERO,
        "COPY_FREE_VARS": _ZERO, "MAKE_CELL": _ZERO, "DELETE_FAST": _ZERO,
        "DELETE_DEREF": _ZERO, "DELETE_GLOBAL": _ZERO, "DELETE_NAME": _ZERO,
        "JUMP_FORWARD": _ZERO, "JUMP_BACKWARD": _ZERO, "JUMP_BACKWARD_NO_INTERRUPT": _ZERO,
        "LOAD_CONST": _LOAD, "LOAD_FAST": _LOAD, "LOAD_DEREF": _LOAD, "LOAD_NAME": _LOAD,
        "PUSH_NULL": _LOAD, "LOAD_ASSERTION_ERROR": _LOAD, "LOAD_BUILD_CLASS": _LOAD,
        "LOAD_GLOBAL": (0, _with_low_bit(1)),
        "STORE_FAST": _STORE, "STORE_DEREF": _STORE, "STORE_GLOBAL": _STORE,
        "STORE_NAME": _STORE, "POP_TOP": _STORE, "POP_EXCEPT": _STORE,
        "RETURN_VALUE": _STORE, "DELETE_ATTR": _STORE,
        "STORE_ATTR": (2, 0), "DELETE_SUBSCR": (2, 0), "STORE_SUBSCR": (3, 0),
        "END_ASYNC_FOR": (2, 0),
        "UNARY_NEGATIVE": _UNARY, "UNARY_NOT": _UNARY, "UNARY_INVERT": _UNARY,
        "GET_ITER": _UNARY, "GET_YIELD_FROM_ITER": _UNARY, "GET_AITER": _UNARY,
        "GET_AWAITABLE": _UNARY, "YIELD_VALUE": _UNARY,
        "BINARY_OP": _BINARY, "BINARY_SUBSCR": _BINARY, "COMPARE_OP": _BINARY,
        "IS_OP": _BINARY, "CONTAINS_OP": _BINARY, "IMPORT_NAME": _BINARY,
        "MATCH_CLASS": (3, 1),
        "FOR_ITER": (1, 2), "GET_ANEXT": (1, 2), "GET_LEN": (1, 2), "IMPORT_FROM": (1, 2),
        "MATCH_MAPPING": (1, 2), "MATCH_SEQUENCE": (1, 2), "PUSH_EXC_INFO": (1, 2),
        "BEFORE_WITH": (1, 2), "BEFORE_ASYNC_WITH": (1, 2),
        "MATCH_KEYS": (2, 3), "CHECK_EXC_MATCH": (2, 2), "CHECK_EG_MATCH": (2, 2),
        "SEND": (2, 2), "WITH_EXCEPT_START": (4, 5),
        "COPY": (_arg, _arg_plus(1)), "SWAP": (_arg, _arg),
        "LIST_APPEND": _CONTAINER_ADD, "SET_ADD": _CONTAINER_ADD,
        "LIST_EXTEND": _CONTAINER_ADD, "SET_UPDATE": _CONTAINER_ADD,
        "DICT_UPDATE": _CONTAINER_ADD,
        # (its error message also names the callable further down)
        "DICT_MERGE": _CONTAINER_ADD,
        "MAP_ADD": (_arg_plus(2), _arg),
        "BUILD_TUPLE": (_arg, 1), "BUILD_LIST": (_arg, 1), "BUILD_SET": (_arg, 1),
        "BUILD_STRING": (_arg, 1), "BUILD_SLICE": (lambda arg: 3 if arg == 3 else 2, 1),
        "BUILD_MAP": (lambda arg: 2 * arg, 1), "BUILD_CONST_KEY_MAP": (_arg_plus(1), 1),
        "UNPACK_SEQUENCE": (1, _arg), "UNPACK_EX": (1, _unpack_ex),
        "RAISE_VARARGS": (_arg, 0),
        # ([lasti,] ..., exc --): with ``arg``, lasti is read ``arg`` items down
        "RERAISE": (_arg_plus(1), _arg),
        "CALL": (_arg_plus(2), 1),  # the two callable slots and the arguments
        "CALL_FUNCTION_EX": (_with_low_bit(3), 1),
    },
    V311: {
        "POP_JUMP_FORWARD_IF_TRUE": _STORE, "POP_JUMP_BACKWARD_IF_TRUE": _STORE,
        "POP_JUMP_FORWARD_IF_FALSE": _STORE, "POP_JUMP_BACKWARD_IF_FALSE": _STORE,
        "POP_JUMP_FORWARD_IF_NONE": _STORE, "POP_JUMP_BACKWARD_IF_NONE": _STORE,
        "POP_JUMP_FORWARD_IF_NOT_NONE": _STORE, "POP_JUMP_BACKWARD_IF_NOT_NONE": _STORE,
        # (cond -- ) when it falls through; (cond -- cond) when it jumps
        "JUMP_IF_TRUE_OR_POP": _STORE, "JUMP_IF_FALSE_OR_POP": _STORE,
        "PRECALL": _ZERO,  # (CALL takes the callable and the arguments)
        "LOAD_METHOD": (1, 2), "LOAD_ATTR": _UNARY, "LOAD_CLASSDEREF": _LOAD,
        "UNARY_POSITIVE": _UNARY, "LIST_TO_TUPLE": _UNARY, "ASYNC_GEN_WRAP": _UNARY,
        "PRINT_EXPR": _STORE, "IMPORT_STAR": _STORE, "PREP_RERAISE_STAR": _BINARY,
    },
    UNTIL_313: {
        "LOAD_CLOSURE": _LOAD, "KW_NAMES": _ZERO, "RETURN_GENERATOR": _ZERO,
        "FORMAT_VALUE": (lambda arg: 1 + bool(arg & 4), 1),  # (value[, spec] -- str)
        "MAKE_FUNCTION": (_make_function, 1),
    },
    SINCE_312: {
        "POP_JUMP_IF_TRUE": _STORE, "POP_JUMP_IF_FALSE": _STORE,
        "POP_JUMP_IF_NONE": _STORE, "POP_JUMP_IF_NOT_NONE": _STORE,
        "RETURN_CONST": _ZERO, "LOAD_FAST_CHECK": _LOAD, "LOAD_FAST_AND_CLEAR": _LOAD,
        "LOAD_LOCALS": _LOAD, "LOAD_FROM_DICT_OR_DEREF": _UNARY,
        "LOAD_FROM_DICT_OR_GLOBALS": _UNARY, "CALL_INTRINSIC_1": _UNARY,
        "CALL_INTRINSIC_2": _BINARY, "LOAD_ATTR": (1, _with_low_bit(1)),
        "LOAD_SUPER_ATTR": (3, _with_low_bit(1)), "BINARY_SLICE": (3, 1),
        "STORE_SLICE": (4, 0), "END_SEND": _BINARY, "CLEANUP_THROW": (3, 2),
    },
    V312: {"END_FOR": (2, 0)},  # (iterator, value -- )
    SINCE_313: {
        "END_FOR": _STORE, "RETURN_GENERATOR": _LOAD, "MAKE_FUNCTION": _UNARY,
        "CALL_KW": (_arg_plus(3), 1),  # the callable slots, the arguments, the names
        "SET_FUNCTION_ATTRIBUTE": _BINARY, "TO_BOOL": _UNARY, "CONVERT_VALUE": _UNARY,
        "FORMAT_SIMPLE": _UNARY, "FORMAT_WITH_SPEC": _BINARY,
        "LOAD_FAST_LOAD_FAST": (0, 2), "STORE_FAST_LOAD_FAST": _UNARY,
        "STORE_FAST_STORE_FAST": (2, 0),
    },
})
"""opname -> (pops, pushes), each a count or a function of the argument."""

ARG_DEPENDENT = frozenset(name for name, counts in _STACK.items()
                          if any(callable(c) for c in counts))
"""The opcodes whose stack counts depend on their argument (``CALL``,
``BUILD_*``, ``UNPACK_*``, ``LOAD_GLOBAL``'s NULL...)."""


def pops(name, arg):
    """How many items at the top of the stack instruction ``name`` with
    argument ``arg`` takes (or reads in place); see the module docstring."""
    count = _STACK[name][0]
    return count(arg) if count.__class__ is not int else count


def pushes(name, arg):
    """How many items instruction ``name`` with argument ``arg`` leaves in
    place of those :func:`pops` counts (when it does not jump)."""
    count = _STACK[name][1]
    return count(arg) if count.__class__ is not int else count


def stack_names():
    """The opcodes with stack counts (every real opcode of the running Python)."""
    return frozenset(_STACK)


# -- operators --------------------------------------------------------------------
NB_SYMBOLS = tuple(symbol for _name, symbol in dis._nb_ops)
"""``BINARY_OP``'s operator number -> its symbol (``"+"``, ``"+="``...), from ``dis``."""
NB_SYMBOL = dict(enumerate(NB_SYMBOLS))
"""The same as a dict: ``NB_SYMBOL.get(arg)`` is None for an unknown number."""

COMPARISON_OPERATORS = tuple(dis.cmp_op)
"""The operators of ``COMPARE_OP`` (its decoded ``argval``), from ``dis``."""
