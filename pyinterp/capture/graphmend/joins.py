"""Where the two arms of a data-dependent branch meet (control flow only).

:mod:`.speculate` runs both arms of a branch and merges them at their
*join*.  This module finds it from the code alone:

* a forward join: the branch's immediate post-dominator, when every path
  from the branch to it goes forward without returning, raising, looping or
  entering a ``try`` (``else`` arms, ``elif`` chains, nested ``if``s,
  ``and``/``or`` chains);
* a loop's head: an ``if`` at the end of a loop's body, where each arm ends
  in its own jump back to the head;
* the return: every path returns (outside any ``try``/``with``, not in a
  generator).

It also says which local slots no instruction outside the arms reads (a
value left there can be dropped instead of merged).
"""
from ...opcodes import info

_BACK_EDGES = info.UNCONDITIONAL_JUMPS & info.BACKWARD_JUMPS
_NOT_IN_ARMS = info.BLOCK_ENDS | _BACK_EDGES | info.for_running({info.ALL: (
    # loops, suspensions, ``with`` and handlers; writes to outside state
    "YIELD_VALUE", "FOR_ITER", "SEND", "BEFORE_WITH", "PUSH_EXC_INFO", "STORE_GLOBAL",
    "DELETE_GLOBAL", "STORE_DEREF", "DELETE_DEREF", "IMPORT_NAME", "STORE_NAME",
    "DELETE_NAME",
)})
# How far past a branch its join is looked for (instructions).
_WINDOW = 2000
_EXIT = float("inf")


def _successors(x):
    """Where control goes after ``x`` (forward only), or None if it leaves
    the region an arm may span: a return, a raise, a loop's back edge, an
    instruction inside a ``try`` or one of ``_NOT_IN_ARMS``."""
    if x.opname in _NOT_IN_ARMS or x.exc_target is not None:
        return None
    if x.target is None:
        return (x.index + 1,)
    if x.target <= x.index:
        return None
    return (x.target,) if x.opname in info.UNCONDITIONAL_JUMPS else (x.target, x.index + 1)


_joins = {}


class Join:
    """Where both arms of a branch meet: ``stops``, the instructions an arm
    runs up to (not included), and ``resume``, where the merged frame goes
    on.  A forward join is one instruction, both.  A loop's head is reached
    by the arms' own back edges: they are the stops, the head is ``resume``
    (a back edge does nothing but jump).  A return join (``returns``)
    stops at the arms' ``RETURN_VALUE``s and resumes at one of them, with
    the merged value on the stack; no local is read after it."""

    __slots__ = ("stops", "resume", "last", "returns")

    def __init__(self, stops, resume, returns=False):
        self.stops = frozenset(stops)
        self.resume = resume
        self.last = max(self.stops)
        self.returns = returns


def join_of(instructions, ins, suspends=False):
    """The :class:`Join` of the conditional jump ``ins``: its immediate
    post-dominator, the first instruction every path from both arms reaches
    (nested ``if``s, ``and``/``or`` chains and ``else`` arms included), or
    the head of the loop around it when each arm ends in a back edge to
    it; None if some path leaves first (see :func:`_successors`).

    Control flow inside the window only goes forward, so post-dominators
    are found in one backward pass, meeting two chains by walking the lower
    one up (each step increases the index).  A back edge to a loop's head
    ``t`` (before the branch) goes to a virtual node ``hi + t`` past the
    window: two chains that reach the same one meet there.
    """
    key = (id(instructions), ins.index, suspends)
    cached = _joins.get(key)
    if cached is not None and cached[0] is instructions:
        return cached[1]
    lo, hi = ins.index, min(len(instructions), ins.index + _WINDOW)
    ipdom = {}

    def up(i):
        return _EXIT if i >= hi else ipdom[i]

    returning = hi + len(instructions)  # the virtual node every return goes to
    # (a generator's return raises StopIteration; inside a try or with, a
    # return runs handlers or __exit__ on its way)
    may_return = ins.exc_target is None and not suspends

    def back_edge(x):
        """The loop head ``x`` jumps back to, if it encloses the branch, or
        ``len(instructions)`` for a return that may be a join."""
        if x.opname in _BACK_EDGES and x.target <= lo and x.exc_target is None:
            return x.target
        if x.opname == "RETURN_VALUE" and may_return:
            return len(instructions)
        return None

    def meet(a, b):
        while a != b:
            if a < b:
                a = up(a)
            else:
                b = up(b)
        return a

    for i in range(hi - 1, lo - 1, -1):
        succ = _successors(instructions[i]) if i > lo else (ins.target, ins.index + 1)
        head = back_edge(instructions[i]) if i > lo else None
        if head is not None:
            ipdom[i] = hi + head
        elif succ is None:
            ipdom[i] = _EXIT
        elif len(succ) == 1:
            ipdom[i] = succ[0] if succ[0] < hi else _EXIT
        else:
            ipdom[i] = meet(*succ)
    found = ipdom[lo]
    join = None
    if found != _EXIT and ins.target > ins.index:
        if found < hi:
            join = Join((found,), found)
        else:  # the loop's head or the return: stop at the arms' edges to it
            head = found - hi
            edges = [i for i in region(instructions, (ins.target, ins.index + 1), ())
                     if back_edge(instructions[i]) == head]
            join = Join(edges, edges[0], True) if found == returning else Join(edges, head)
    _joins[key] = (instructions, join)
    return join


def region(instructions, starts, stops):
    """The indices executed on some path from ``starts`` up to one of
    ``stops`` (a path's back edge ends it)."""
    seen = set()
    todo = [s for s in starts if s not in stops]
    while todo:
        i = todo.pop()
        if i in seen:
            continue
        seen.add(i)
        succ = _successors(instructions[i]) or ()
        todo.extend(s for s in succ if s not in stops and s not in seen)
    return seen


_READS = info.for_running({
    info.ALL: ("LOAD_FAST", "DELETE_FAST"),
    info.UNTIL_313: ("LOAD_CLOSURE",),
    info.SINCE_312: ("LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR"),
    info.SINCE_313: ("LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST"),
})


def ALL_DEAD(slot):
    """After a return join no slot is read again."""
    return True


def dead_outside(instructions, inside):
    """Slots no instruction outside the arms (the indices ``inside``) reads:
    a value an arm leaves there (``clamp_value`` in transformers' fp16
    clamp) can be dropped."""
    read = set()
    for x in instructions:
        if x.index not in inside and x.opname in _READS:
            read.update(x.argval if isinstance(x.argval, tuple) else (x.argval,))
    return lambda slot: slot not in read
