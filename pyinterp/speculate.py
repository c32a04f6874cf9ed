"""GraphMend-style rewrite of a data-dependent ``if`` into ``torch.where``.

When a ``POP_JUMP_IF_TRUE/FALSE`` meets a one-element tensor (``if
x.sum() > 0:``), the branch depends on tensor data and a plain trace would
have to break.  If the two arms form a simple diamond, both are run:

* the arms are straight-line code (no jumps other than the ``then`` arm's
  final ``JUMP_FORWARD`` to the join point, no returns, no raises);
* inside them nothing may write outside state, call something impure or
  consume the RNG (:class:`Speculating` is raised before such a write
  happens, and the RNG state is compared after each arm);
* at the join, every local and stack slot that differs between the arms
  holds a tensor of identical shape and dtype in both, and is merged as
  ``torch.where(cond, then_value, else_value)``.

Anything else restores the frame as it was and leaves the decision to the
caller, which breaks the graph as before.  The merged values equal those of
the arm the real program would take, so the run's results do not change.
"""
import torch

from .errors import PyinterpInternal
from .opcodes.signals import NULL

_JUMP_IF_TRUE = frozenset({"POP_JUMP_IF_TRUE", "POP_JUMP_FORWARD_IF_TRUE"})
_JUMP_IF_FALSE = frozenset({"POP_JUMP_IF_FALSE", "POP_JUMP_FORWARD_IF_FALSE"})
_ARM_ENDS = frozenset({"JUMP_FORWARD"})
_NOT_IN_ARMS = frozenset({
    "RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "YIELD_VALUE",
    "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "FOR_ITER", "SEND", "SETUP_FINALLY",
    "BEFORE_WITH", "PUSH_EXC_INFO", "STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF",
    "DELETE_DEREF", "IMPORT_NAME", "STORE_NAME", "DELETE_NAME",
})


class Speculating(PyinterpInternal):
    """Raised inside a speculative arm before an outside write or an impure
    call: the arm cannot be run both ways."""


def diamond(instructions, ins):
    """``(then_start, then_end, else_start, else_end, join)`` for the
    conditional jump ``ins``, or None if its arms are not a simple diamond.

    The fall-through arm runs from ``ins.index + 1``; if it ends with a
    ``JUMP_FORWARD`` to ``J`` past the jump target, the target starts an
    ``else`` arm ending at ``J``; otherwise the target is the join.
    """
    start, target = ins.index + 1, ins.target
    if target <= start:
        return None
    last = instructions[target - 1]
    if last.opname in _ARM_ENDS and last.target > target:
        fall = (start, target - 1)
        taken = (target, last.target)
        join = last.target
    else:
        fall = (start, target)
        taken = (target, target)
        join = target
    for lo, hi in (fall, taken):
        for i in range(lo, hi):
            x = instructions[i]
            if x.opname in _NOT_IN_ARMS or x.target is not None or x.exc_target is not None:
                return None
    if ins.exc_target is not None:
        return None
    return fall, taken, join


def run_arm(vm, frame, instructions, span):
    """Execute ``instructions[span[0]:span[1]]`` in ``frame`` (no jumps)."""
    for i in range(*span):
        ins = instructions[i]
        frame.lasti = i
        if ins.fn(vm, frame, ins) is not None:
            raise Speculating("a jump inside a speculative arm")


def try_merge(vm, frame, ins, cond):
    """Run both arms of the data-dependent branch ``ins`` on ``cond`` and
    merge them; return the index to continue at, or None (frame untouched)."""
    cap = vm.capture
    if cap.speculating or not isinstance(cond, torch.Tensor) or cond.numel() != 1:
        return None
    instructions = vm.variant(frame.code)
    shape = diamond(instructions, ins)
    if shape is None:
        return None
    fall, taken, join = shape
    fast0, stack0 = list(frame.fast), list(frame.stack)
    rng0 = torch.random.get_rng_state()
    results = []
    cap.speculating = True
    try:
        for span in (fall, taken):
            frame.fast[:] = fast0
            frame.stack[:] = stack0
            rng = torch.random.get_rng_state()
            run_arm(vm, frame, instructions, span)
            with torch._C.DisableTorchFunction():  # our own check: not recorded
                drew = not torch.equal(rng, torch.random.get_rng_state())
            if drew:
                raise Speculating("random numbers drawn in a speculative arm")
            results.append((list(frame.fast), list(frame.stack)))
        dead = _dead_outside(instructions, (fall, taken))
        merged = _merge(cap, cond, ins.opname in _JUMP_IF_TRUE, results, dead)
    except Exception:  # noqa: BLE001 - any failure: undo, let the caller break
        merged = None
    except Speculating:
        merged = None
    finally:
        cap.speculating = False
    if merged is None:
        frame.fast[:] = fast0
        frame.stack[:] = stack0
        torch.random.set_rng_state(rng0)  # an aborted arm may have drawn numbers
        return None
    frame.fast[:], frame.stack[:] = merged
    return join


_READS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "DELETE_FAST",
                    "LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "LOAD_CLOSURE"})


def _dead_outside(instructions, spans):
    """Slots no instruction outside the arms reads: a value an arm leaves
    there (``clamp_value`` in transformers' fp16 clamp) can be dropped."""
    inside = set()
    for lo, hi in spans:
        inside.update(range(lo, hi))
    read = set()
    for x in instructions:
        if x.index not in inside and x.opname in _READS:
            read.update(x.argval if isinstance(x.argval, tuple) else (x.argval,))
    return lambda slot: slot not in read


def _merge(cap, cond, jumps_if_true, results, dead=lambda slot: False):
    """Merge the two arms' locals and stacks with ``torch.where``."""
    (fast_fall, stack_fall), (fast_taken, stack_taken) = results
    if len(stack_fall) != len(stack_taken):
        return None
    # The fall-through arm runs when the jump is not taken.
    then_fast, else_fast = (fast_taken, fast_fall) if jumps_if_true else (fast_fall, fast_taken)
    then_stack, else_stack = (stack_taken, stack_fall) if jumps_if_true else \
        (stack_fall, stack_taken)
    # Called with the recording mode on: these ops go into the graph.
    pick = cond.bool() if cond.dtype is not torch.bool else cond
    pick = pick.reshape(()) if pick.dim() else pick
    fast = [NULL if dead(i) and (a is not b) else _merge_value(cap, pick, a, b)
            for i, (a, b) in enumerate(zip(then_fast, else_fast))]
    stack = [_merge_value(cap, pick, a, b) for a, b in zip(then_stack, else_stack)]
    if any(v is _CONFLICT for v in fast + stack):
        return None
    return fast, stack


_CONFLICT = object()


def _merge_value(cap, pick, a, b):
    if a is b:
        return a
    if a is NULL or b is NULL or cap.scalars.tracks(a) or cap.scalars.tracks(b):
        return _CONFLICT  # (equal floats from tensor data may differ next call)
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) \
            and a.shape == b.shape and a.dtype == b.dtype and a.device == b.device:
        return torch.where(pick, a, b)
    if type(a) is type(b) and type(a) in (int, float, bool, str) and a == b:
        return a
    return _CONFLICT
