"""A ``while`` loop's layout, and its test as one 0-d bool tensor.

CPython compiles a ``while`` loop's test twice: at the top, where it jumps
past the loop (the *exit*) when it fails, and again at the bottom, where it
jumps back to the body when it holds.  A test may be a short-circuit chain
(``while x.norm() > 1 and n < 20:``, ``while n < 3 or x.sum() > 0:``): each
copy is then several conditional jumps, whose targets are the body, the
exit, or a later test of the same copy.  The bottom copy's layout depends
on the version, which is read from the opcode facts
(:mod:`pyinterp.opcodes.info`), not from the version:

* 3.11: the tests of the bottom copy that go on jump back to the body
  (``POP_JUMP_BACKWARD_IF_TRUE``), the others forward past the loop;
* 3.12, 3.13: conditional jumps are forward only: a test that goes on
  jumps (or falls through) to an unconditional backward jump to the body
  (``JUMP_BACKWARD``).  3.13's ``TO_BOOL`` before a jump is folded into
  the jump by the decoder (``pyinterp.interp.decode``).

:func:`loop_of` finds the body, the exit, and where each copy of the test
starts (the two copies are the same instructions, on the test's line, but
for their jumps).  :func:`test_value` runs one copy from a given
instruction on, as a speculative arm does (:mod:`.speculate`), and gives
the test's value: a conditional jump on a one-element tensor runs *both*
ways and combines them with logical ops (``c and rest`` is
``logical_and(c, rest)``), one on a plain Python number goes the one way
Python goes.  Running the other way of a tensor test is safe: the arm may
not write outside state (:class:`.speculate.Speculating`), so a test Python
would have skipped only adds pure ops to the graph.

Records (:class:`~..state.Capture`): owns none; runs instructions through
their handlers inside the caller's speculation.
"""
import attrs
import torch

from .speculate import Speculating
from ...opcodes import info

_BACK_EDGES = info.UNCONDITIONAL_JUMPS & info.BACKWARD_JUMPS
_PLAIN_CONDITIONS = (bool, int, float, type(None))


@attrs.frozen
class Loop:
    """Where a ``while`` loop's parts are (indices into its instructions)."""

    head: int
    """The top copy of the test's first instruction."""
    body: int
    """The body's first instruction (after the top copy of the test)."""
    bottom: int
    """The bottom copy of the test's first instruction (the body runs up to it)."""
    exit: int
    """The first instruction after the loop."""


def loop_of(instructions, ins):
    """The :class:`Loop` whose test contains the conditional jump ``ins``,
    in its top copy or in its bottom one (the loop's first data-dependent
    test may come after iterations Python decided), if ``ins`` is part of a
    ``while`` loop's test laid out as above (either layout); else None."""
    if ins.opname not in info.TRUTH_TESTS or ins.target is None:
        return None
    for body in _bodies(instructions, ins.index):
        ends = [x.index for x in instructions[body:] if x.opname in info.BACKWARD_JUMPS
                and x.target == body]
        exit = max(ends) + 1
        if not _goes_back(instructions[exit - 1], body):
            continue
        head, bottom = _copies(instructions, body, exit)
        if body < bottom and (head <= ins.index < body or bottom <= ins.index < exit):
            return Loop(head, body, bottom, exit)
    return None


def has_while_loop(instructions):
    """True if some conditional jump of ``instructions`` is in a ``while``
    loop's test (:func:`loop_of`): the frame may get a loop's counter as a
    Python int the graph computes (:mod:`.whileloop`)."""
    return any(loop_of(instructions, x) is not None for x in instructions
               if x.opname in info.TRUTH_TESTS)


def _bodies(instructions, index):
    """Where the body starts of the loop whose test has instruction
    ``index``, if it is the top copy: the lowest target past ``index`` of a
    backward jump after it (inner loops' heads are inside the body); if it
    is the bottom copy: the highest target before ``index`` of a backward
    jump from ``index`` on (outer loops' heads come before)."""
    later = [x.target for x in instructions[index:] if x.opname in info.BACKWARD_JUMPS]
    ahead = [t for t in later if t > index]
    behind = [t for t in later if t <= index]
    return ([min(ahead)] if ahead else []) + ([max(behind)] if behind else [])


def _goes_back(x, body):
    """``x`` jumps back to ``body`` (the bottom copy's last jump)."""
    return x.target == body and (x.opname in _BACK_EDGES or x.opname in info.TRUTH_TESTS)


def _copies(instructions, body, exit):
    """Where the top and the bottom copies of the test start: the longest
    run of instructions ending before ``body`` that the instructions ending
    at ``exit`` repeat (their jumps aside; the bottom copy's plain back
    edges are skipped)."""
    i, j = body - 1, exit - 1
    while True:
        while j >= body and _is_back_edge(instructions[j], body):
            j -= 1
        if i < 0 or j < body or _key(instructions[i]) != _key(instructions[j]):
            return i + 1, j + 1
        i, j = i - 1, j - 1


def _is_back_edge(x, body):
    return x.opname in _BACK_EDGES and x.target == body


def _key(x):
    """What two copies of one test's instruction share."""
    if x.opname in info.TRUTH_TESTS:
        return ("test", x.line)
    if x.target is not None:
        return ("jump", x.line)
    return (x.opname, x.arg, x.line)


def test_value(vm, frame, instructions, loop, start, stop):
    """Run the copy of ``loop``'s test that spans ``start:stop`` from
    ``start`` on; return its value: True or False, or a 0-d bool tensor
    (recorded).  The frame's stack is as it was after; its locals may not
    change (raises :class:`.speculate.Speculating`)."""
    pc = start
    while True:
        if pc == loop.body:
            return True
        if pc == loop.exit:
            return False
        if not start <= pc < stop:
            raise Speculating("a while loop's test left its instructions")
        ins = instructions[pc]
        if _is_back_edge(ins, loop.body):
            return True
        if ins.opname in info.TRUTH_TESTS:
            return jump_value(vm, frame, instructions, loop, ins, frame.stack.pop(), stop)
        frame.lasti = pc
        nxt = ins.fn(vm, frame, ins)
        if nxt is None:
            pc += 1
        elif type(nxt) is int and nxt > pc:
            pc = nxt
        else:
            raise Speculating("unexpected control flow in a while loop's test")


def jump_value(vm, frame, instructions, loop, ins, cond, stop):
    """The test's value from the conditional jump ``ins`` on, its condition
    ``cond`` popped (see :func:`test_value`; the copy ends at ``stop``)."""
    start = ins.index + 1
    where = (ins.target, ins.index + 1) if ins.opname in info.JUMPS_IF_TRUE else \
        (ins.index + 1, ins.target)  # (where control goes when cond is true, when false)
    if type(cond) in _PLAIN_CONDITIONS:
        return _from(vm, frame, instructions, loop, where[0 if cond else 1], start, stop)
    if not isinstance(cond, torch.Tensor) or cond.numel() != 1:
        raise Speculating("a while loop's test on %s" % type(cond).__name__)
    fast, stack = list(frame.fast), list(frame.stack)
    values = []
    for pc in where:
        values.append(_from(vm, frame, instructions, loop, pc, start, stop))
        if any(a is not b for a, b in zip(fast, frame.fast)):
            raise Speculating("a while loop's test changed a local")
        frame.stack[:] = stack
    return _choose(as_predicate(cond), *values)


def _from(vm, frame, instructions, loop, pc, start, stop):
    """The test's value from ``pc`` (a jump's target or the next instruction)."""
    if pc == loop.body or pc == loop.exit or start <= pc < stop:
        return test_value(vm, frame, instructions, loop, pc, stop) if pc != loop.body else True
    raise Speculating("a while loop's test jumps outside it")


def as_predicate(cond):
    """``cond`` as a 0-d bool tensor (recorded when it is a new op)."""
    pick = cond if cond.dtype is torch.bool else cond.bool()
    return pick.reshape(()) if pick.dim() else pick


def _choose(c, if_true, if_false):
    """``if_true if c else if_false`` for a 0-d bool tensor ``c`` and two
    values (True, False or 0-d bool tensors), with logical ops."""
    if if_true is if_false and type(if_true) is bool:
        return if_true
    if if_true is True:
        return c if if_false is False else torch.logical_or(c, if_false)
    if if_true is False:
        return c.logical_not() if if_false is True else \
            torch.logical_and(c.logical_not(), if_false)
    if if_false is True:
        return torch.logical_or(c.logical_not(), if_true)
    if if_false is False:
        return torch.logical_and(c, if_true)
    return torch.where(c, if_true, if_false)
