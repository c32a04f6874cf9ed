"""Where an int that ``.item()``/``int()`` makes may go: a static look
at the code after the call, before :mod:`.tracked_ints` decides to track it.

The int is followed through moves (``LOAD_FAST``, ``STORE_FAST``, ``COPY``,
``SWAP``...) along every path of the code object, exception handlers
included, as a set of stack positions and local slots that may hold it.
Each instruction that reads one of those must be something a tracked int
can do (arithmetic, a comparison that feeds a jump, a truth test by a
jump); any other use, or an instruction this look does not know, answers
no.  Nothing here runs code: it reads the decoded instructions only.
"""
import dis
import sys

from ...interp.frame import decoded_for
from .scalars import NB_SYMBOL

ARITHMETIC_SYMBOLS = frozenset({"+", "-", "*", "+=", "-=", "*="})
DIVISION_SYMBOLS = frozenset({"/", "/="})
COMPARISON_SYMBOLS = frozenset({"<", "<=", ">", ">=", "==", "!="})
BRANCHES = frozenset({"POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE",
                      "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_TRUE",
                      "POP_JUMP_BACKWARD_IF_FALSE"})
"""The conditional jumps that pop their condition."""

# Stack items an instruction consumes (pops or reads in place), for the
# instructions that commonly run while a tracked int waits deeper on the
# stack.  An instruction not listed here consumes everything.
_POPS = {
    "NOP": 0, "RESUME": 0, "CACHE": 0, "EXTENDED_ARG": 0, "PRECALL": 0, "KW_NAMES": 0,
    "PUSH_NULL": 0, "LOAD_CONST": 0, "LOAD_GLOBAL": 0, "LOAD_DEREF": 0, "LOAD_CLOSURE": 0,
    "LOAD_ATTR": 1, "LOAD_METHOD": 1, "JUMP_FORWARD": 0, "JUMP_BACKWARD": 0,
    "JUMP_BACKWARD_NO_INTERRUPT": 0, "JUMP": 0, "GET_ITER": 1, "FOR_ITER": 1,
    "BINARY_SUBSCR": 2, "COMPARE_OP": 2, "IS_OP": 2, "CONTAINS_OP": 2, "UNARY_NEGATIVE": 1,
    "UNARY_NOT": 1, "UNARY_INVERT": 1, "LIST_APPEND": 1, "SET_ADD": 1, "MAP_ADD": 2,
    "LIST_EXTEND": 1, "SET_UPDATE": 1, "DICT_UPDATE": 1, "DICT_MERGE": 1, "STORE_ATTR": 2,
    "STORE_SUBSCR": 3, "STORE_GLOBAL": 1, "STORE_DEREF": 1, "UNPACK_SEQUENCE": 1,
    "UNPACK_EX": 1, "RETURN_VALUE": 1, "RETURN_CONST": 0, "YIELD_VALUE": 1,
}
_POPS_ARG = {"CALL": lambda arg: arg + 2, "BUILD_TUPLE": None, "BUILD_LIST": None,
             "BUILD_SET": None, "BUILD_STRING": None, "BUILD_SLICE": None,
             "BUILD_MAP": lambda arg: 2 * arg, "BUILD_CONST_KEY_MAP": lambda arg: arg + 1,
             "RAISE_VARARGS": None}


def consumes(ins):
    """How many stack items ``ins`` reads from the top of the stack;
    None when unknown (then: everything)."""
    name = ins.opname
    pops = _POPS.get(name)
    if pops is not None:
        return pops
    if name in _POPS_ARG:
        count = _POPS_ARG[name]
        return ins.arg if count is None else count(ins.arg)
    if name.startswith("JUMP_IF_") or name.startswith("POP_JUMP"):
        return 1
    return None


_MAX_STATES = 2000
_flow_cache = {}


def flows_only_to_graph_uses(code, index, height):
    """True if the int that the CALL at ``index`` pushes (the stack then
    ``height`` deep) can only reach, through moves, what a tracked int may
    do: arithmetic, comparisons that feed a jump, truth tests by a jump.

    The check is static and may say no where the run would have been fine;
    a no keeps the old behaviour: the ``.item()``/``int()`` call itself
    breaks the graph, where a split (resume.py) can continue the graph
    after it.  A yes that the run then contradicts (an arithmetic result
    that flows somewhere else) breaks later, at the use.
    """
    key = (id(code), index, height)
    entry = _flow_cache.get(key)
    if entry is None or entry[0] is not code:
        entry = _flow_cache[key] = (code, _flows(decoded_for(code).instructions, index, height))
    return entry[1]


def _flows(instructions, index, height):
    start = (index + 1, height, frozenset({height - 1}), frozenset())
    todo, seen = [start], {start}
    while todo:
        if len(seen) > _MAX_STATES:
            return False
        pc, h, tainted, slots = todo.pop()
        ins = instructions[pc]
        following = _flow_step(instructions, ins, h, set(tainted), set(slots))
        if following is None:
            return False
        for state in following:
            if (state[2] or state[3]) and state not in seen:
                seen.add(state)
                todo.append(state)
    return True


_UNCONDITIONAL = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
                            "JUMP", "JUMP_NO_INTERRUPT"})
_ENDS = frozenset({"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"})


def _flow_step(instructions, ins, h, tainted, slots):
    """The states after ``ins`` (``(pc, height, tainted stack positions,
    tainted locals)``), or None if ``ins`` may use the int in a way a
    tracked int cannot follow."""
    name, arg = ins.opname, ins.argval
    out = []
    if ins.exc_target is not None:  # (an exception keeps the locals, cuts the stack)
        depth = ins.exc_depth
        out.append((ins.exc_target, depth + 1 + bool(ins.exc_lasti),
                    frozenset(p for p in tainted if p < depth), frozenset(slots)))
    nxt = ins.index + 1
    if name in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR"):
        if arg in slots:
            tainted.add(h)
            if name == "LOAD_FAST_AND_CLEAR":
                slots.discard(arg)
        h += 1
    elif name == "STORE_FAST":
        h -= 1
        if h in tainted:
            tainted.discard(h)
            slots.add(arg)
        else:
            slots.discard(arg)
    elif name == "DELETE_FAST":
        slots.discard(arg)
    elif "FAST" in name and slots:
        return None
    elif name == "POP_TOP":
        h -= 1
        tainted.discard(h)
    elif name == "COPY":
        if h - ins.arg in tainted:
            tainted.add(h)
        h += 1
    elif name == "SWAP":
        a, b = h - 1, h - ins.arg
        ta, tb = a in tainted, b in tainted
        tainted.difference_update((a, b))
        tainted.update(p for p, t in ((a, tb), (b, ta)) if t)
    elif name == "BINARY_OP":
        if {h - 2, h - 1} & tainted and NB_SYMBOL.get(ins.arg) not in ALL_ARITHMETIC:
            return None
        h -= 1
        tainted.difference_update((h - 1, h))  # (the result is not followed)
    elif name == "COMPARE_OP":
        if {h - 2, h - 1} & tainted and not (
                ins.argval in COMPARISON_SYMBOLS and instructions[nxt].opname in BRANCHES):
            return None
        h -= 1
        tainted.difference_update((h - 1, h))
    elif name in BRANCHES:  # (a truth test of the int itself is fine)
        h -= 1
        tainted.discard(h)
        out.append((ins.target, h, frozenset(tainted), frozenset(slots)))
    elif name.startswith("POP_JUMP") or name.startswith("JUMP_IF_"):
        if h - 1 in tainted:  # (``is None`` tests, ``and``/``or`` values)
            return None
        kept = h if name.startswith("JUMP_IF_") else h - 1  # (the *_OR_POP forms keep it)
        out.append((ins.target, kept, frozenset(tainted), frozenset(slots)))
        h -= 1
    else:
        pops = consumes(ins)
        if tainted and (pops is None or any(p >= h - pops for p in tainted)):
            return None
        if name in _ENDS:
            return out
        if name == "FOR_ITER":
            if sys.version_info >= (3, 12):
                return None  # (its exit differs: not followed)
            out.append((ins.target, h - 1, frozenset(tainted), frozenset(slots)))
            h += 1
        elif name == "PRECALL" or name == "KW_NAMES":
            pass
        elif name == "CALL":
            h -= ins.arg + 1
        else:
            try:
                h += dis.stack_effect(ins.opcode, ins.arg if ins.opcode >= dis.HAVE_ARGUMENT
                                      else None, jump=False)
            except ValueError:
                return None
        if name in _UNCONDITIONAL:
            nxt = ins.target
        elif ins.target is not None and name != "FOR_ITER":
            return None  # (another jump: not followed)
    out.append((nxt, h, frozenset(tainted), frozenset(slots)))
    return out


ALL_ARITHMETIC = ARITHMETIC_SYMBOLS | DIVISION_SYMBOLS
