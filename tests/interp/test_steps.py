"""``pyinterp.steps``: the executed instructions, with the value stack.

Checked against the interpreter's real frames (a probe reads the running
frame's stack at each step, in debug mode) and against native CPython (the
offsets ``sys.settrace`` reports with ``f_trace_opcodes``, in order).
"""
import dis
import re
import sys

import pytest

import pyinterp
from pyinterp.interp import steps as steps_module
from pyinterp.opcodes.signals import NULL

_ADDRESS = re.compile(r" (object )?at 0x[0-9a-fA-F]+")


def double(x):
    return x * 2


def loop_and_call(n, extra):
    total = 0
    for i in range(n):
        total += double(i)
    words = ["a", "b"] + [str(n)]
    return total + extra, words


def with_try(x):
    try:
        return 10 // x
    except ZeroDivisionError:
        return -1


def squares(n):
    for i in range(n):
        yield i * i


def sum_of_squares(n):
    return sum(squares(n)) + len([v for v in squares(2)])


def divide(a, b):
    c = a + 1
    return c / b


def many(n):
    """Several instructions per line, for the filters."""
    a = n + 1
    b = a * 2
    c = b - 3
    return double(c)


class _StackProbe:
    """Reads the running frame's actual stack when a step ends (a test's own
    probe, beside the recorder's reprs), keyed by the step being recorded
    (the recorder asks again when a callee's steps end: the last answer is
    the step's own end)."""

    def __init__(self):
        self.stacks = {}

    def snapshot(self, vm, frame):
        return True

    def changes(self, vm, frame, snapshot):
        step = steps_module.ACTIVE.recorder._active[-1][0]
        self.stacks[id(step)] = (frame.code.co_qualname, tuple(_real_repr(v) for v in frame.stack))
        return ()


def _real_repr(value):
    text = "NULL" if value is NULL else _ADDRESS.sub("", repr(value))
    return text if len(text) <= 40 else text[:37] + "..."


@pytest.fixture
def stack_probe():
    probe = _StackProbe()
    steps_module.PROBES.append(probe)
    try:
        yield probe
    finally:
        steps_module.PROBES.remove(probe)


def _native_offsets(fn, *args):
    """The (qualname, offset) of each ``opcode`` event of a native run.

    (The first traced run of a function on 3.12 may deliver none: the
    second run is the one kept.)"""
    _native_run(fn, *args)
    return _native_run(fn, *args)


def _native_run(fn, *args):
    codes = {double.__code__, loop_and_call.__code__, with_try.__code__, squares.__code__,
             sum_of_squares.__code__, divide.__code__, many.__code__}
    codes |= {c for c in sum_of_squares.__code__.co_consts if hasattr(c, "co_code")}
    seen = []

    def tracer(frame, event, arg):
        if frame.f_code not in codes:
            return None
        frame.f_trace_opcodes = True
        if event == "opcode":
            seen.append((frame.f_code.co_qualname, frame.f_lasti))
        return tracer

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - the raising case: same offsets up to the raise
        pass
    finally:
        sys.settrace(old)
    return seen


CASES = [(loop_and_call, (3, 4)), (with_try, (0,)), (with_try, (3,)),
         (sum_of_squares, (4,)), (divide, (1, 0)), (many, (5,))]


@pytest.mark.parametrize("fn,args", CASES, ids=lambda v: getattr(v, "__name__", repr(v)))
def test_instructions_are_the_native_ones_in_order(fn, args):
    steps = pyinterp.steps(fn, *args)
    assert [(s.code, s.offset) for s in steps if _traced_natively(s)] == \
        _native_offsets(fn, *args)


def _traced_natively(step):
    """CPython delivers a frame's ``call`` event at its ``RESUME``: no
    ``opcode`` event for that instruction, nor for a generator's prologue
    before it (``RETURN_GENERATOR``, ``POP_TOP``)."""
    if step.opname == "RESUME":
        return False
    code = {f.__code__.co_qualname: f.__code__ for f in (squares,)}.get(step.code)
    if code is not None:
        first_resume = next(i.offset for i in dis.get_instructions(code) if i.opname == "RESUME")
        return step.offset > first_resume
    return True


@pytest.mark.parametrize("fn,args", CASES, ids=lambda v: getattr(v, "__name__", repr(v)))
def test_stack_after_each_step_is_the_real_stack(fn, args, stack_probe):
    steps = pyinterp.steps(fn, *args)
    assert len(stack_probe.stacks) == len(steps)
    for step in steps:
        code, real = stack_probe.stacks[id(step)]
        assert step.code == code
        shown = real[-6:]
        expected = (("...%d more" % (len(real) - 6),) if len(real) > 6 else ()) + shown
        assert step.stack_after == expected, step
    # and each step starts from the stack the previous one of its frame left
    # (unless the previous one raised: the handler's stack replaced it)
    for before, after in zip(steps, steps[1:]):
        if before.code == after.code and before.depth == after.depth and not before.raised \
                and before.opname not in ("RETURN_VALUE", "RETURN_CONST", "YIELD_VALUE"):
            assert after.stack_before == before.stack_after


def test_result_and_native_agree():
    steps = pyinterp.steps(loop_and_call, 3, 4)
    assert steps.error is None
    assert steps.result == loop_and_call(3, 4)
    assert steps[-1].opname in ("RETURN_VALUE", "RETURN_CONST")
    assert steps[0].opname == "RESUME" and steps[0].code == "loop_and_call"


def test_a_raising_function_keeps_its_steps():
    steps = pyinterp.steps(divide, 1, 0)
    with pytest.raises(ZeroDivisionError) as native:
        divide(1, 0)
    assert type(steps.error) is ZeroDivisionError
    assert str(steps.error) == str(native.value)
    with pytest.raises(ZeroDivisionError):
        steps.result
    last = steps[-1]
    assert last.opname == "BINARY_OP" and last.raised == "ZeroDivisionError: division by zero"
    assert last.line == divide.__code__.co_firstlineno + 2
    assert last.source == "return c / b"
    assert "raised ZeroDivisionError: division by zero" in str(steps)


def test_a_caught_exception_goes_on_at_the_handler():
    steps = pyinterp.steps(with_try, 0)
    assert steps.result == -1
    raised = [s for s in steps if s.raised]
    assert [s.opname for s in raised] == ["BINARY_OP"]
    after = steps[steps.index(raised[0]) + 1]
    assert after.offset in [e.target for e in _exception_entries(with_try.__code__)]


def _exception_entries(code):
    import dis
    return dis.Bytecode(code).exception_entries


def test_callees_and_generators_are_one_deeper():
    steps = pyinterp.steps(sum_of_squares, 3)
    assert steps.result == sum_of_squares(3)
    depths = {(s.code, s.depth) for s in steps}
    assert ("sum_of_squares", 0) in depths
    assert ("squares", 1) in depths
    yields = [s for s in steps if s.code == "squares" and s.opname == "YIELD_VALUE"]
    assert [s.stack_before[-1] for s in yields] == ["0", "1", "4", "0", "1"]
    assert ("sum_of_squares.<locals>.<listcomp>" in {s.code for s in steps}) == (
        sys.version_info < (3, 12))  # (3.12 inlines comprehensions)


def test_the_table_indents_callees_and_filters():
    steps = pyinterp.steps(loop_and_call, 2, 0)
    table = str(steps)
    assert table == steps.format(color=False)
    assert "\x1b[" not in table and "\x1b[" in steps.format(color=True)
    rows = table.splitlines()
    assert rows[0].split() == ["line", "offset", "instruction", "stack", "after", "records"]
    assert rows[1].strip().startswith("loop_and_call")
    callee_rows = [r for r in rows if "LOAD_FAST x" in r]
    assert len(callee_rows) == 2
    caller_row = next(r for r in rows if "LOAD_FAST n" in r)
    indent = callee_rows[0].index("LOAD_FAST") - caller_row.index("LOAD_FAST")
    assert indent == 2

    only = steps.format(function="double")
    body = [r for r in only.splitlines()[1:] if not r.strip().startswith("double")]
    assert len(body) == sum(1 for s in steps if s.code == "double")
    assert "LOAD_FAST n" not in only

    first = loop_and_call.__code__.co_firstlineno
    ranged = steps.format(lines=(first + 4, first + 4))
    assert "BUILD_LIST" in ranged and "FOR_ITER" not in ranged


def _deep_branch(flag):
    if flag:
        return 1
    return 0


def _deep_middle(flag):
    return _deep_branch(flag)


def _deep_outer(flag):
    return _deep_middle(flag)


def test_deep_instructions_are_shown_whole():
    # a jump's target, two calls deep, used to be cut to the column's width
    steps = pyinterp.steps(_deep_outer, True)
    jump = next(s for s in steps if s.code.endswith("_deep_branch") and "to " in s.argrepr)
    assert jump.depth == 2
    row = next(r for r in str(steps).splitlines() if jump.opname in r)
    assert (jump.opname + " " + jump.argrepr) in row


def test_long_runs_are_truncated_with_a_count():
    steps = pyinterp.steps(loop_and_call, 30, 0)
    table = steps.format(limit=10)
    assert table.splitlines()[-1] == "... %d more steps" % (len(steps) - 10)
    assert steps.format(limit=None).count("\n") > len(steps)
    assert "more steps" not in steps.format(limit=None)
    assert "(no steps match)" in steps.format(function="nowhere")


def test_long_stacks_and_values_are_bounded():
    def deep():
        return [1, 2, 3, 4, 5, 6, 7, 8, "x" * 100, list(range(50))]

    steps = pyinterp.steps(deep)
    widest = max(steps, key=lambda s: len(s.stack_after))
    assert len(widest.stack_after) == 7 and widest.stack_after[0].startswith("...")
    assert all(len(text) <= 40 for s in steps for text in s.stack_after)
    assert steps.result == deep()


def test_python_reprs_are_not_run():
    calls = []

    class Loud:
        def __repr__(self):
            calls.append(1)
            return "Loud()"

    def make():
        return Loud()

    steps = pyinterp.steps(make)
    assert calls == []
    assert "<Loud object>" in steps[-1].stack_before


def test_nothing_is_recorded_outside_debug_mode():
    recorder = steps_module.StepRecorder()
    with steps_module.recording(recorder):
        assert pyinterp.interpret(loop_and_call)(2, 1) == loop_and_call(2, 1)
    assert recorder.steps == []
