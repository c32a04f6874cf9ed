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
import builtins
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
        info.UNTIL_313: ("KW_NAMES", "LOAD_CLOSURE", "FORMAT_VALUE"),
        info.SINCE_313: ("FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "CONVERT_VALUE"),
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


def flows_only_to_graph_uses(code, index, height, decides=False):
    """True if the int that the CALL at ``index`` pushes (the stack then
    ``height`` deep) can only reach, through moves, what a tracked int may
    do: arithmetic, comparisons that feed a jump (any comparison with
    ``decides``: one that feeds no jump is assumed), truth tests by a jump.

    The check is static and may say no where the run would have been fine;
    a no keeps the old behaviour: the ``.item()``/``int()`` call itself
    breaks the graph, where a split (resume.py) can continue the graph
    after it.  A yes that the run then contradicts (an arithmetic result
    that flows somewhere else) breaks later, at the use.
    """
    return _cached_flow(code, index, height, False, decides)


def flows_only_to_size_uses(code, index, height, below=(), decides=False, leaves=False):
    """True if the int that the CALL at ``index`` pushes (the stack then
    ``height`` deep) can only reach, through moves and ``+ - * // %`` (whose
    results are followed too), arguments of calls, slice bounds (also of a
    store, ``out[:n] = v``) and the items of a tuple or list (the sizes of
    ``view``): the uses an
    unbacked size (:mod:`.listed_ints`) can have without its value.  No
    decision on it (a comparison, a truth test), no return, store or
    formatting: those need the value, and a break there could not split
    the graph (the int would be a constant after it), where a break at the
    ``.item()``/``int()`` call can.  A call that turns out to need the
    value (``range(n)``, :data:`NEEDS_VALUE`: also where ``below``, the
    stack under the int, holds one) breaks there, late.  With ``decides``
    (the capture may keep a decision on tensor data in the graph,
    :mod:`.data_decisions`), comparisons and truth tests of it are fine
    too.  With ``leaves`` (the frame is the traced function's own, whose
    result a graph output may give back: :meth:`.sizes.SizeTracker.leave`;
    or a callee whose caller's use passes this look in turn), so is
    returning it, alone or in a tuple or list; a tuple or list that holds
    it may be unpacked (its items are then all followed)."""
    valued = frozenset(p for p, v in enumerate(below) if id(v) in _NEEDS_VALUE_IDS)
    return _cached_flow(code, index, height, valued, decides, leaves)


def _cached_flow(code, index, height, sizes, decides=False, leaves=False):
    """``sizes``: False (graph uses), or the positions of the stack under
    the int that hold a callable of :data:`NEEDS_VALUE` (size uses)."""
    key = (id(code), index, height, sizes, decides, leaves)
    entry = _flow_cache.get(key)
    if entry is None or entry[0] is not code:
        entry = _flow_cache[key] = (code, _flows(decoded_for(code).instructions, index, height,
                                                 sizes, decides, leaves))
    return entry[1]


def _flows(instructions, index, height, sizes, decides, leaves=False):
    # A state: (pc, height, tainted stack positions, tainted locals, stack
    # positions holding a callable that needs its arguments' values).
    # With sizes, also: the positions holding a slice or tuple with the int
    # in it (an index may be one of those, not the int itself: a fake
    # tensor cannot be indexed by a symbolic int).
    start = (index + 1, height, frozenset({height - 1}), frozenset(),
             sizes if sizes is not False else frozenset(), frozenset())
    sizes = sizes is not False
    todo, seen = [start], {start}
    while todo:
        if len(seen) > _MAX_STATES:
            return False
        pc, h, tainted, slots, valued, holders = todo.pop()
        ins = instructions[pc]
        if sizes and (valued and _call_needs_value(ins, h, tainted, valued)
                      or not _indexes_by_holder(ins, h, tainted, holders)):
            return False
        following = _flow_step(instructions, ins, h, set(tainted), set(slots), sizes, decides,
                               leaves)
        if following is None:
            return False
        for state in following:
            state += _size_state(ins, h, state[1], tainted, valued, holders) if sizes \
                else (valued, holders)
            if (state[2] or state[3]) and state not in seen:
                seen.add(state)
                todo.append(state)
    return True


# Callables that need the value of an int argument: an unbacked size passed
# to one breaks there, where no split is possible (range(n), str(n)...).
NEEDS_VALUE = frozenset({"range", "int", "float", "bool", "str", "repr", "format",
                          "hex", "oct", "bin", "chr", "abs", "round", "divmod", "pow", "hash",
                          "enumerate", "zip", "list", "tuple", "dict", "set", "max", "min",
                          "sum", "sorted", "reversed", "isinstance", "len", "id", "type"})
_LOADS_BY_NAME = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_NEEDS_VALUE_IDS = frozenset(id(getattr(builtins, name)) for name in NEEDS_VALUE)
_COUNTED = info.stack_names()


def _call_needs_value(ins, h, tainted, valued):
    """Is ``ins`` a call of one of :data:`NEEDS_VALUE` (its callable at a
    position in ``valued``) with a tainted argument?"""
    if ins.opname not in _SIZE_CONSUMERS or ins.opname in _HOLDS_ITEMS:
        return False
    low = h - info.pops(ins.opname, ins.arg)
    return any(p >= low for p in tainted) and any(p in valued for p in (low, low + 1))


def _indexes_by_holder(ins, h, tainted, holders):
    """False for a subscript whose index is the int itself (``y[n]``, not
    ``y[:n]``), or that stores the int or into it."""
    name = ins.opname
    if name == "BINARY_SUBSCR":
        return h - 1 not in tainted or h - 1 in holders
    if name == "STORE_SUBSCR":  # (value, container, index)
        return not {h - 3, h - 2} & tainted and (h - 1 not in tainted or h - 1 in holders)
    if name == "STORE_SLICE":  # (3.12+: value, container, start, stop)
        return not {h - 4, h - 3} & tainted
    return True


def _size_state(ins, h, after, tainted, valued, holders):
    """``(valued, holders)`` after ``ins`` (stack ``h`` deep before it,
    ``after`` deep after; ``tainted`` before it)."""
    name = ins.opname
    kept_valued = _kept_after(ins, h, after, valued)
    kept_holders = _kept_after(ins, h, after, holders)
    if name in _LOADS_BY_NAME and ins.argval in NEEDS_VALUE:
        kept_valued |= frozenset(range(h, after))
    if name in _HOLDS_ITEMS:
        items = [p for p in tainted if p >= h - info.pops(name, ins.arg)]
        if items and (name == "BUILD_SLICE" or all(p in holders for p in items)):
            kept_holders |= {after - 1}  # (x[:n], x[:, :n]; not x[0, n])
    return kept_valued, kept_holders


def _kept_after(ins, h, after, positions):
    """The stack ``positions`` that ``ins`` (stack ``h`` deep before it,
    ``after`` deep after) leaves alone."""
    low = min(h - (info.pops(ins.opname, ins.arg) if ins.opname in _COUNTED else h), after)
    return frozenset(p for p in positions if p < low)


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


def _flow_step(instructions, ins, h, tainted, slots, sizes, decides=False, leaves=False):
    """The states after ``ins`` (``(pc, height, tainted stack positions,
    tainted locals)``), or None if ``ins`` may use the int in a way a
    tracked int (an unbacked size if ``sizes``; deciding on it if
    ``decides``; returning it if ``leaves``) cannot follow."""
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
    elif sizes and name == "UNARY_NEGATIVE":
        pass  # (-n is a size too)
    elif sizes and name == "UNPACK_SEQUENCE" and h - 1 in tainted:
        # ``n, m = helper()``: a callee returned it in a tuple or list
        # (every item is followed, whatever it is)
        tainted.discard(h - 1)
        tainted.update(range(h - 1, h - 1 + ins.arg))
        h += ins.arg - 1
    elif leaves and name in info.RETURNS:
        return out  # (the value returned leaves through a graph output)
    elif name == "COPY":
        if h - ins.arg in tainted:
            tainted.add(h)
        h += 1
    elif name == "SWAP":
        a, b = h - 1, h - ins.arg
        ta, tb = a in tainted, b in tainted
        tainted.difference_update((a, b))
        tainted.update(p for p, t in ((a, tb), (b, ta)) if t)
    elif name == "BINARY_OP" and sizes:
        used = {h - 2, h - 1} & tainted
        symbol = info.NB_SYMBOL.get(ins.arg)
        if h - 1 in tainted and symbol in _BY_DIVISOR \
                or used and symbol not in SIZE_ARITHMETIC and symbol not in DIVISION_SYMBOLS:
            return None  # (``"%d" % n`` formats it; ``k // n``, ``k / n`` need its value)
        h -= 1
        tainted.difference_update((h - 1, h))
        if used and symbol not in DIVISION_SYMBOLS:
            tainted.add(h - 1)  # (n + 1 is a size too; n / 8 a float :mod:`.scalars` follows)
    elif name == "BINARY_OP":
        if {h - 2, h - 1} & tainted and info.NB_SYMBOL.get(ins.arg) not in ALL_ARITHMETIC:
            return None
        h -= 1
        tainted.difference_update((h - 1, h))  # (the result is not followed)
    elif sizes and name in _SIZE_CONSUMERS:
        pops = info.pops(name, ins.arg)
        used = any(p >= h - pops for p in tainted)
        tainted.difference_update(range(h - pops, h))
        h += info.pushes(name, ins.arg) - pops
        if used and name in _HOLDS_ITEMS:
            tainted.add(h - 1)  # (a slice, or the sizes of view: followed)
    elif sizes and not decides and (name == "COMPARE_OP" and {h - 2, h - 1} & tainted
                                    or name in info.TRUTH_TESTS and h - 1 in tainted):
        return None  # (a decision needs the value)
    elif name == "COMPARE_OP":
        if {h - 2, h - 1} & tainted and not (ins.argval in COMPARISON_SYMBOLS and (
                decides or instructions[nxt].opname in info.TRUTH_TESTS)):
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
SIZE_ARITHMETIC = ARITHMETIC_SYMBOLS | frozenset({"//", "%", "//=", "%="})
_BY_DIVISOR = frozenset({"//", "%", "//=", "%="}) | DIVISION_SYMBOLS
# Instructions an unbacked size may be read by (as a call's argument, an
# index, a slice bound, an item): the instruction itself does not need its
# value; the ones in _HOLDS_ITEMS give a value that holds it.
_HOLDS_ITEMS = frozenset({"BUILD_SLICE", "BUILD_TUPLE", "BUILD_LIST"})
_SIZE_CONSUMERS = _HOLDS_ITEMS | info.for_running({
    info.ALL: ("CALL", "BINARY_SUBSCR", "STORE_SUBSCR"),
    info.SINCE_312: ("BINARY_SLICE", "STORE_SLICE"),
    info.SINCE_313: ("CALL_KW",),
})
