"""GraphMend-style rewrite of a data-dependent branch into ``torch.where``.

When a conditional jump meets a one-element tensor (``if x.sum() > 0:``,
``a and b`` on tensors), the branch depends on tensor data and a plain
trace would have to break.  If both ways rejoin, both are run:

* the join is the branch's immediate post-dominator (:func:`.joins.join_of`);
  every path from the branch to it must go forward without returning,
  raising, looping or entering a ``try``, so ``else`` arms, ``elif``
  chains, nested ``if``s and ``and``/``or`` chains qualify (a nested
  data-dependent branch inside an arm is speculated in turn).  An ``if``
  at the end of a loop's body has no such instruction (each arm ends in
  its own jump back to the loop's head); there the join is the loop's
  head, reached by those jumps.  When every path returns (``if c: return
  x`` then ``return y``, outside any ``try``/``with``), the join is the
  return: the returned values are merged;
* inside the arms nothing may write outside state, call something impure
  or consume the RNG (:class:`Speculating` is raised before such a write
  happens, and the RNG state is compared after each arm).  The one write
  allowed is ``append`` to a list of the run: each arm's appends are
  taken back after it (:class:`Journal`);
* at the join, every local and stack slot that differs between the arms
  holds a tensor of identical shape and dtype in both, and so does every
  pair of items the two arms appended to a list (the same number each);
  they are merged as ``torch.where(cond, then_value, else_value)``, or,
  when one of them requires grad, by one ``torch.cond`` of the two arms'
  ops (:mod:`.condmerge`: ``where``'s backward would run the untaken arm).

Anything else restores the frame as it was and leaves the decision to the
caller, which breaks the graph as before.  The merged values equal those of
the arm the real program would take, so the run's results do not change.

Records (:class:`~..state.Capture`): owns ``speculation``
(:class:`Speculation`: how deep the arms being run nest, and their
journals; :mod:`.whileloop` goes through its methods); reads ``recording``.
"""
import attrs
import torch

from . import condmerge, joins
from ...interp.decode import SUSPENDABLE_FLAGS
from ...errors import PyinterpInternal
from ...opcodes import info
from ...opcodes.signals import NULL
from ...refgraph.fxgraph import Unrepresentable


@attrs.define(slots=True)
class Speculation:
    """The capture's speculation record (``Capture.speculation``), written
    only here (:mod:`.whileloop` runs its body through these methods)."""

    depth: int = 0  # data-dependent branches (or loop bodies) being run both ways
    journals: list = attrs.Factory(list)  # one Journal per arm being run, innermost last
    writable: set = attrs.Factory(set)  # ids of the objects an arm may write (a stand-in ctx)
    plain: int = 0  # arms whose data-dependent branches must not merge (autograd_functions.py)
    made_here: object = None  # tensor -> True if the innermost plain arm made it (may write it)

    def may_write_tensor(self, written):
        """True if the arm may write ``written`` (a tensor or a tuple of
        them) in place: a plain arm's own tensors (autograd_functions.py)."""
        judge = self.made_here
        if judge is None or written is None:
            return False
        return all(map(judge, written)) if type(written) is tuple else judge(written)

    def enter(self):
        self.depth += 1

    def leave(self):
        self.depth -= 1

    def open_arm(self):
        """An arm starts: its appends are noted in a new journal."""
        self.journals.append(Journal())

    def close_arm(self):
        """The arm is over: take its appends back (see :meth:`Journal.take_back`)."""
        return self.journals.pop().take_back()


class Speculating(PyinterpInternal):
    """Raised inside a speculative arm before an outside write or an impure
    call: the arm cannot be run both ways."""


def run_arm(vm, frame, instructions, start, join, step=None):
    """Execute ``frame`` from ``start`` until control reaches one of
    ``join.stops`` (forward jumps only; a nested data-dependent branch
    speculates too), each instruction by its handler, or by
    ``step(vm, frame, ins)`` when given."""
    pc = start
    stops = join.stops
    while pc not in stops:
        if pc > join.last:
            raise Speculating("an arm jumped past its join")
        ins = instructions[pc]
        frame.lasti = pc
        nxt = ins.fn(vm, frame, ins) if step is None else step(vm, frame, ins)
        if nxt is None:
            pc += 1
        elif type(nxt) is int and nxt > pc:
            pc = nxt
        elif nxt == join.resume and type(nxt) is int:
            return  # a nested branch merged at the same loop head
        else:
            raise Speculating("unexpected control flow in a speculative arm")


def try_merge(vm, frame, ins, cond):
    """Run both arms of the data-dependent branch ``ins`` on ``cond`` and
    merge them; return the index to continue at, or None (frame untouched).
    ``cond`` has been popped; the ``*_OR_POP`` forms keep it on the stack
    of the arm that jumps."""
    cap = vm.capture
    if not isinstance(cond, torch.Tensor) or cond.numel() != 1 or ins.target <= ins.index:
        return None  # (a backward jump: a loop's bottom test, see .whileloop)
    instructions = vm.variant(frame.code)
    join = joins.join_of(instructions, ins, bool(frame.code.co_flags & SUSPENDABLE_FLAGS))
    if join is None:
        return None
    arms = ((ins.index + 1, []), (ins.target, [cond] if ins.opname in info.KEEPS_ON_JUMP else []))
    fast0, stack0 = list(frame.fast), list(frame.stack)
    premade = len(cap.recording.recorder.graph.nodes)
    _nodes_before_arms(cap, fast0 + stack0)
    ints0 = cap.recording.ints.snapshot()  # where tracked ints are (tracked_ints.py)
    cap.recording.ints.make_nodes(cap.recording.recorder)
    int_places = []
    site, merged_before = cap.site(), len(cap.recording.merged)  # (explain lists the merges)
    rng0 = torch.random.get_rng_state()
    results = []
    before_arms = cap.recording.recorder.mark()
    marks = [before_arms[0]]  # where each arm's recorded nodes start
    cap.speculation.enter()
    try:
        for start, pushed in arms:
            frame.fast[:] = fast0
            frame.stack[:] = stack0 + pushed
            cap.recording.ints.restore(ints0)
            rng = torch.random.get_rng_state()
            cap.speculation.open_arm()
            try:
                run_arm(vm, frame, instructions, start, join)
            finally:
                appended = cap.speculation.close_arm()
            with torch._C.DisableTorchFunction():  # our own check: not recorded
                drew = not torch.equal(rng, torch.random.get_rng_state())
            if drew:
                raise Speculating("random numbers drawn in a speculative arm")
            results.append((list(frame.fast), list(frame.stack), appended))
            int_places.append(cap.recording.ints.snapshot())
            marks.append(len(cap.recording.recorder.graph.nodes))
        if join.returns:
            dead = joins.ALL_DEAD
        else:
            dead = joins.dead_outside(instructions, joins.region(instructions, [a for a, _ in arms],
                                                       join.stops))
        if not cap.recording.ints.same(*int_places):
            raise Speculating("the arms leave Python ints the graph computes in different places")
        merged = _merge(cap, cond, ins.opname in info.JUMPS_IF_TRUE, results, dead, marks)
    except Exception:  # noqa: BLE001 - any failure: undo, let the caller break
        merged = None
    except Speculating:
        merged = None
    finally:
        cap.speculation.leave()
    if merged is None:
        frame.fast[:] = fast0
        frame.stack[:] = stack0
        cap.recording.ints.restore(ints0)
        torch.random.set_rng_state(rng0)  # an aborted arm may have drawn numbers
        cap.recording.recorder.roll_back(before_arms)  # (nothing can reach the arms' values)
        _drop_unused(cap.recording.recorder, premade, marks[0])
        del cap.recording.merged[merged_before:]  # (branches merged inside the arms)
        return None
    _drop_unused(cap.recording.recorder, premade, marks[0])
    cap.recording.merged.append(site)
    frame.fast[:], frame.stack[:], appends = merged
    cap.recording.ints.restore(int_places[0])
    for lst, items in appends:
        if cap.speculation.journals:  # (inside an outer arm: its journal takes these back too)
            cap.speculation.journals[-1].note(lst)
        lst.extend(items)
    return join.resume


def _nodes_before_arms(cap, values):
    """Make the nodes of the tracked floats in ``values`` now: a node made
    lazily inside one arm and used by the other would keep ``torch.cond``
    from splitting the arms' ops in two."""
    table = cap.recording.scalars
    if table:
        for value in values:
            if table.tracks(value):
                try:
                    table.node(value, cap.recording.recorder)
                except Unrepresentable:
                    pass  # (from another graph: its use in an arm breaks)


def _drop_unused(rec, lo, hi):
    """Erase the nodes ``lo:hi`` made before the arms (the nodes of numbers
    the graph computes) that no arm used: the eager backend would run them
    on every call."""
    made = list(rec.graph.nodes)[lo:hi]
    unused = set()
    for n in reversed(made):
        if n.op != "placeholder" and all(u in unused for u in n.users):
            unused.add(n)
    if unused:
        rec.erase(unused)


class Journal:
    """The lists of the run that one speculative arm appended to, so that
    the appends can be taken back after the arm (and merged at the join).
    ``append`` is the one write an arm may make (``out.append(row * 2)``
    in one arm, ``out.append(-row)`` in the other)."""

    __slots__ = ("lengths",)

    def __init__(self):
        self.lengths = {}  # id(list) -> (list, its length before the arm's first append)

    def note(self, lst):
        if id(lst) not in self.lengths:
            self.lengths[id(lst)] = (lst, len(lst))

    def take_back(self):
        """Undo the arm's appends; return ``{id: (list, items appended)}``."""
        appended = {}
        for key, (lst, length) in self.lengths.items():
            appended[key] = (lst, lst[length:])
            del lst[length:]
        return appended


def appended_to(cap, fn, args, kwargs):
    """If ``fn(*args)`` is ``append`` on a list of the run (not outside
    state) while an arm runs, note the list in the arm's journal and return
    it; otherwise None."""
    if kwargs or not cap.speculation.journals:
        return None
    if fn is _LIST_APPEND and len(args) == 2:
        lst = args[0]
    elif getattr(fn, "__name__", None) == "append" and len(args) == 1 \
            and type(fn) is _BUILTIN_METHOD:
        lst = fn.__self__
    else:
        return None
    if type(lst) is not list or cap.recording.refgraph.is_outside(lst):
        return None
    cap.speculation.journals[-1].note(lst)
    return lst


_LIST_APPEND = list.append
_BUILTIN_METHOD = type([].append)


def _merge(cap, cond, jumps_if_true, results, dead, marks):
    """Merge the two arms' locals and stacks with ``torch.where``, or with
    ``torch.cond`` when gradients flow through a merged value
    (:mod:`.condmerge`); ``marks`` delimit the nodes each arm recorded."""
    (fast_fall, stack_fall, app_fall), (fast_taken, stack_taken, app_taken) = results
    if len(stack_fall) != len(stack_taken) or app_fall.keys() != app_taken.keys() or any(
            len(app_fall[k][1]) != len(app_taken[k][1]) for k in app_fall):
        return None
    # The fall-through arm runs when the jump is not taken.
    then_fast, else_fast = (fast_taken, fast_fall) if jumps_if_true else (fast_fall, fast_taken)
    then_stack, else_stack = (stack_taken, stack_fall) if jumps_if_true else \
        (stack_fall, stack_taken)
    then_app, else_app = (app_taken, app_fall) if jumps_if_true else (app_fall, app_taken)
    fast_pairs = [(NULL, NULL) if dead(i) and (a is not b) else (a, b)
                  for i, (a, b) in enumerate(zip(then_fast, else_fast))]
    app_pairs = [pair for k in then_app for pair in zip(then_app[k][1], else_app[k][1])]
    pairs = [(a, a) if _same_scalar(cap, a, b) else (a, b)
             for a, b in fast_pairs + list(zip(then_stack, else_stack)) + app_pairs]
    # Called with the recording mode on: these ops go into the graph.
    pick = cond.bool() if cond.dtype is not torch.bool else cond
    pick = pick.reshape(()) if pick.dim() else pick
    if condmerge.needs_cond(pairs):
        with torch._C.DisableTorchFunction():  # our own reading: not recorded
            taken_is_then = bool(pick)
        nodes = list(cap.recording.recorder.graph.nodes)
        fall_nodes, taken_nodes = (
            [n for n in nodes[lo:hi] if n.op != "placeholder"]
            for lo, hi in ((marks[0], marks[1]), (marks[1], marks[2])))
        then_nodes, else_nodes = (taken_nodes, fall_nodes) if jumps_if_true else \
            (fall_nodes, taken_nodes)
        if any(a is not b and (cap.recording.scalars.tracks(a) or cap.recording.scalars.tracks(b))
               for a, b in pairs):
            return None  # (a float that differs between the arms: not a tensor to merge)
        values = condmerge.merge(cap.recording.recorder, pick, taken_is_then, then_nodes,
                                 else_nodes, pairs)
    else:
        values = [_merge_value(cap, pick, a, b) for a, b in pairs]
    if values is None or any(v is _CONFLICT for v in values):
        return None
    n_fast, n_app = len(fast_pairs), len(app_pairs)
    appends, at = [], len(values) - n_app
    for lst, items in then_app.values():
        appends.append((lst, values[at:at + len(items)]))
        at += len(items)
    return values[:n_fast], values[n_fast:len(values) - n_app], appends


_CONFLICT = object()


def _merge_value(cap, pick, a, b):
    if a is b:
        return a
    if a is NULL or b is NULL or cap.recording.scalars.tracks(a) \
            or cap.recording.scalars.tracks(b):
        return _CONFLICT  # (equal floats from tensor data may differ next call)
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) \
            and a.shape == b.shape and a.dtype == b.dtype and a.device == b.device:
        return torch.where(pick, a, b)
    return _CONFLICT


def _same_scalar(cap, a, b):
    """Equal plain Python scalars (not floats the graph computes, which may
    differ on the next call)."""
    return a is not b and type(a) is type(b) and type(a) in (int, float, bool, str) \
        and a == b and not cap.recording.scalars.tracks(a) and not cap.recording.scalars.tracks(b)
