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
import sys

from ...interp.frame import decoded_for
from ...opcodes import info

ARITHMETIC_SYMBOLS = frozenset({"+", "-", "*", "+=", "-=", "*="})
DIVISION_SYMBOLS = frozenset({"/", "/="})
COMPARISON_SYMBOLS = frozenset(info.COMPARISON_OPERATORS)

# The instructions a tracked int may wait under, deeper on the stack: the
# ones that commonly run meanwhile.  Any other instruction counts as
# consuming the whole stack (a policy of this look, not an opcode fact:
# how many items each opcode takes is :func:`.info.pops`).
_WAITS_UNDER = info.CONDITIONAL_JUMPS | info.UNCONDITIONAL_JUMPS | info.RETURNS \
    | info.for_running({
        info.ALL: (
            "NOP", "RESUME", "EXTENDED_ARG", "PUSH_NULL", "LOAD_CONST", "LOAD_GLOBAL",
            "LOAD_DEREF", "LOAD_ATTR", "GET_ITER", "FOR_ITER", "BINARY_SUBSCR", "COMPARE_OP",
            "IS_OP", "CONTAINS_OP", "UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT",
            "LIST_APPEND", "SET_ADD", "MAP_ADD", "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE",
            "DICT_MERGE", "STORE_ATTR", "STORE_SUBSCR", "STORE_GLOBAL", "STORE_DEREF",
            "UNPACK_SEQUENCE", "UNPACK_EX", "YIELD_VALUE", "CALL", "BUILD_TUPLE",
            "BUILD_LIST", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE", "BUILD_MAP",
            "BUILD_CONST_KEY_MAP", "RAISE_VARARGS",
        ),
        info.V311: ("PRECALL", "LOAD_METHOD"),
        info.UNTIL_313: ("KW_NAMES", "LOAD_CLOSURE"),
    })


def consumes(ins):
    """How many stack items ``ins`` reads from the top of the stack (its
    :func:`.info.pops`); None for an instruction a tracked int may not wait
    under (then: everything)."""
    name = ins.opname
    if name not in _WAITS_UNDER:
        return None
    return info.pops(name, ins.arg)


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


_FAST_MOVES = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "STORE_FAST"})


def _fast_move(name, slot, h, tainted, slots):
    """Follow the int through one load or store of local ``slot`` (sets
    updated in place); return the new height."""
    if name == "STORE_FAST":
        h -= 1
        if h in tainted:
            tainted.discard(h)
            slots.add(slot)
        else:
            slots.discard(slot)
        return h
    if slot in slots:
        tainted.add(h)
        if name == "LOAD_FAST_AND_CLEAR":
            slots.discard(slot)
    return h + 1


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
    if name in _FAST_MOVES:
        h = _fast_move(name, arg, h, tainted, slots)
    elif name in info.SLOT_PAIR_HALVES:  # (3.13: as its two halves)
        for half, slot in zip(info.SLOT_PAIR_HALVES[name], arg):
            h = _fast_move(half, slot, h, tainted, slots)
    elif name in info.CONVERTS_TO_BOOL and not ins.to_bool:
        pass  # (folded into the truth test after it: see decode)
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
        if {h - 2, h - 1} & tainted and info.NB_SYMBOL.get(ins.arg) not in ALL_ARITHMETIC:
            return None
        h -= 1
        tainted.difference_update((h - 1, h))  # (the result is not followed)
    elif name == "COMPARE_OP":
        if {h - 2, h - 1} & tainted and not (
                ins.argval in COMPARISON_SYMBOLS and instructions[nxt].opname in info.TRUTH_TESTS):
            return None
        h -= 1
        tainted.difference_update((h - 1, h))
    elif name in info.TRUTH_TESTS:  # (a truth test of the int itself is fine)
        h -= 1
        tainted.discard(h)
        out.append((ins.target, h, frozenset(tainted), frozenset(slots)))
    elif name in info.CONDITIONAL_JUMPS:
        if h - 1 in tainted:  # (``is None`` tests, ``and``/``or`` values)
            return None
        kept = h if name in info.KEEPS_ON_JUMP else h - 1
        out.append((ins.target, kept, frozenset(tainted), frozenset(slots)))
        h -= 1
    else:
        pops = consumes(ins)
        if tainted and (pops is None or any(p >= h - pops for p in tainted)):
            return None
        if name in info.BLOCK_ENDS:
            return out
        if name == "FOR_ITER":
            # exhausted: 3.11 pops the iterator at the jump; 3.12+ jumps to
            # END_FOR with one more item (dis's jump effect), which END_FOR
            # (and 3.13's POP_TOP after it) pops with the iterator
            exhausted = h - 1 if sys.version_info < (3, 12) else h + 1
            out.append((ins.target, exhausted, frozenset(tainted), frozenset(slots)))
            h += 1
        else:  # (the stack effect when it does not jump)
            h += info.pushes(name, ins.arg) - info.pops(name, ins.arg)
        if name in info.UNCONDITIONAL_JUMPS:
            nxt = ins.target
        elif ins.target is not None and name != "FOR_ITER":
            return None  # (another jump: not followed)
    out.append((nxt, h, frozenset(tainted), frozenset(slots)))
    return out


ALL_ARITHMETIC = ARITHMETIC_SYMBOLS | DIVISION_SYMBOLS
