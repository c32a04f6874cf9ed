"""``while`` loops on tensor data as one ``torch.while_loop`` (``pyinterp/capture/graphmend/whileloop.py``).

A loop whose trip count depends on tensor data, whose body only computes
tensors of unchanged shape, becomes one ``while_loop`` node: one graph, no
break, and later calls with other trip counts (none at all included) hit
that graph and give eager's result.  Loops that do anything else break as
before and stay correct.
"""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

from trace_support import assert_hits_ran_graph, assert_same, traced_counting  # noqa: E402

# Scales of the inputs: the loops below run 0, 1, several and many times.
SCALES = [0.01, 1.5, 3.0, 40.0, 0.5, 1000.0]


def _args(scale, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(8, generator=gen) * scale,)


def _check_one_loop_graph(fn, args=_args):
    explanation = pyinterp.explain(fn, *args(SCALES[1]))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1
    assert "higher_order.while_loop" in explanation.graphs[0].code
    traced, counter = traced_counting(fn)
    for scale in SCALES:
        assert_same(traced(*args(scale)), fn(*args(scale)))
    assert counter.count == 1, "other trip counts must hit the one graph"
    assert_hits_ran_graph(counter, len(SCALES) - 1)


# -- one graph ----------------------------------------------------------------
def halve_until_small(x):
    while x.norm() > 1:
        x = x / 2
    return x


def with_a_temporary(x):
    w = torch.eye(8) * 0.5
    while x.abs().max() > 0.1:
        h = x @ w
        x = h + 0.01
    return x * 2


def two_carried_values(x):
    a, b = x, torch.zeros_like(x)
    while a.sum() > b.sum():
        a = a - 1
        b = b + 0.5
    return a, b


def if_inside_the_body(x):
    while x.norm() > 1:
        if x.sum() > 0:
            x = x / 2
        else:
            x = x / 3
    return x


def loop_after_other_ops(x):
    y = x.relu() + 1
    while y.max() > 2:
        y = y.sqrt()
    return y - x


def value_also_bound_before(x):
    h = x  # (bound before the loop: carried like x)
    while x.norm() > 1:
        h = x / 2
        x = h
    return x + h


def with_an_else(x):
    while x.norm() > 1:
        x = x / 2
    else:  # (the top test's target: the loop's exit on every layout)
        x = x + 1
    return x


def truth_of_a_tensor(x):
    # (3.13: TO_BOOL before each test's jump, not COMPARE_OP's bool bit)
    while (x.norm() > 1).any():
        x = x / 2
    return x


def negated_test(x):
    # (the not is the jumps' polarity: they leave the loop on a true test)
    while not x.abs().max() < 0.1:
        x = x * 0.5
    return x


@pytest.mark.parametrize("fn", [halve_until_small, with_a_temporary, two_carried_values,
                                if_inside_the_body, loop_after_other_ops,
                                value_also_bound_before, with_an_else, truth_of_a_tensor,
                                negated_test],
                         ids=lambda f: f.__name__)
def test_data_dependent_while_is_one_graph(fn):
    _check_one_loop_graph(fn)


def test_the_running_versions_loop_layout_is_recognised():
    """3.11 tests again at the bottom with a backward conditional jump; 3.12+
    with a forward one past the loop, then a plain backward jump: one
    recogniser, from the opcode facts, finds both."""
    from pyinterp.capture.graphmend import looptest
    from pyinterp.interp.frame import decoded_for

    instructions = decoded_for(halve_until_small.__code__).instructions
    found = [(ins, looptest.loop_of(instructions, ins)) for ins in instructions]
    loops = [(ins, loop) for ins, loop in found if loop is not None]
    # (the top test's jump, and the bottom copy's: the loop's first
    # data-dependent test may come after iterations Python decided)
    assert len(loops) == 2 and loops[0][1] == loops[1][1]
    (top, loop), (bottom_jump, _) = loops
    assert loop.bottom <= bottom_jump.index < loop.exit
    assert (loop.body, loop.exit) == (top.index + 1, top.target)
    # (the bottom test repeats the top one: the same instructions, but jumps)
    assert [i.opname for i in instructions[loop.head:top.index]] \
        == [i.opname for i in instructions[loop.bottom:loop.bottom + top.index - loop.head]]
    assert loop.head < top.index < loop.body < loop.bottom < loop.exit


class Shrink(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        while x.abs().max() > 1:
            x = self.lin(x) * 0.5
        return x


def test_module_weights_are_loop_operands_under_no_grad():
    module = Shrink()
    with torch.no_grad():
        _check_one_loop_graph(module)


def _unrolled(explanation):
    """The loop was not one node: no break, each trip's test assumed."""
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.assumptions


def test_with_gradients_the_loop_is_unrolled_and_stays_correct():
    module = Shrink()  # (x needs no grad, the body's x does: not a carried value)
    _unrolled(pyinterp.explain(module, *_args(40.0)))
    traced = pyinterp.trace(module, backend="eager")
    for scale in SCALES:
        assert_same(traced(*_args(scale)), module(*_args(scale)))


def test_under_inductor_matches_eager():
    traced = pyinterp.trace(with_a_temporary)  # the default backend
    for scale in SCALES[:4]:
        torch.testing.assert_close(traced(*_args(scale)), with_a_temporary(*_args(scale)))


@settings(max_examples=max(5, settings().max_examples // 10))
@given(st.lists(st.floats(0.0, 100.0), min_size=2, max_size=5),
       st.sampled_from([halve_until_small, two_carried_values, if_inside_the_body]))
def test_loops_match_eager_on_any_scale(scales, fn):
    traced = pyinterp.trace(fn, backend="eager")
    for i, scale in enumerate(scales):
        assert_same(traced(*_args(scale, seed=i)), fn(*_args(scale, seed=i)))


# -- loops that break -----------------------------------------------------------
def python_counter(x):
    steps = 0
    while x.norm() > 1:
        x = x / 2
        steps += 1
    return x, steps


def item_in_the_test(x):
    # (the loop is not one node: the bottom test's .item() runs in the
    # speculative body; each trip's comparison is assumed)
    while x.norm().item() > 1.0:
        x = x * 0.5
    return x


def break_statement(x):
    while x.norm() > 1:
        x = x / 2
        if x.sum() > 0:
            break
    return x


def continue_statement(x):
    while x.norm() > 1:
        x = x / 2
        if x.sum() > 0:
            continue
        x = x * 0.9
    return x


def growing_shape(x):
    while x.sum() < 100:
        x = torch.cat([x, x.abs() + 1])
    return x


def printed_in_the_body(x):
    while x.norm() > 1:
        x = x / 2
        print("step")
    return x


def random_in_the_body(x):
    while x.norm() > 1:
        x = x / (2 + torch.rand(()))
    return x


@pytest.mark.parametrize("fn,unrolled", [
    (python_counter, False),  # (the counter leaves as a Python int: returned)
    # (a float the graph computes, compared: the top test feeds a jump, 3.11's
    # bottom test a backward jump, which is not merged: assumed on every version)
    (item_in_the_test, True),
    (break_statement, True), (continue_statement, True), (growing_shape, True),
    (printed_in_the_body, True), (random_in_the_body, True)],
    ids=lambda v: getattr(v, "__name__", ""))
def test_loops_that_cannot_be_one_node_stay_correct(fn, unrolled, capsys):
    # Unrolled: each trip's test is assumed (values/assumptions.py); SCALES
    # give other trip counts, so the traced callable stops assuming after
    # two captures.  Otherwise: a break.
    explanation = pyinterp.explain(fn, *_args(40.0))
    if unrolled:
        _unrolled(explanation)
    else:
        assert explanation.graph_break_count >= 1
    capsys.readouterr()  # (what explain's run printed)
    traced = pyinterp.trace(fn, backend="eager")
    for scale in SCALES:
        torch.manual_seed(0)
        expected = fn(*_args(scale))
        eager_out = capsys.readouterr().out
        torch.manual_seed(0)
        assert_same(traced(*_args(scale)), expected)
        assert capsys.readouterr().out == eager_out


# -- generated loops --------------------------------------------------------------
_BODY_LINES = [
    "a = a * 0.5", "a = a / 3 + b * 0.01", "b = b * 0.9", "t = a + b\na = t * 0.5",
    "if a.sum() > 0:\n    a = a * 0.5\nelse:\n    a = a / 4",
    "a = a - a.mean() * 0.1", "b = b.abs() * 0.5", "c = c + 1",
    "steps = steps + 1", "a = torch.cat([a[1:], a[:1]]) * 0.7",
]
_TESTS = ["a.norm() > 1", "a.abs().max() > 0.5", "a.sum() + b.sum() > 1", "(a * b).sum() > 0.1"]


@st.composite
def _loop_programs(draw):
    """A function with one data-dependent while loop whose body is drawn
    from lines the rewrite takes (tensor updates, a nested if) and lines it
    must refuse (a Python counter), with the loop's test on tensor data."""
    body = draw(st.lists(st.sampled_from(_BODY_LINES), min_size=1, max_size=4))
    body += ["a = a * 0.5", "b = b * 0.5"]  # (so that every test turns false)
    test = draw(st.sampled_from(_TESTS))
    lines = ["b = torch.ones(8) * 0.1", "c = 0", "steps = 0", "while %s:" % test]
    lines += ["    " + ln.replace("\n", "\n    ") for ln in body]
    lines.append("return a, b, c, steps")
    return "def f(a):\n" + "\n".join("    " + ln.replace("\n", "\n    ") for ln in lines) + "\n"


@settings(max_examples=max(5, settings().max_examples // 10))
@given(_loop_programs(), st.lists(st.floats(0.0, 50.0), min_size=2, max_size=4))
def test_generated_loops_match_eager(source, scales):
    namespace = {"torch": torch}
    exec(compile(source, "<loop-program>", "exec"), namespace)
    fn = namespace["f"]
    traced = pyinterp.trace(fn, backend="eager")
    for i, scale in enumerate(scales):
        assert_same(traced(*_args(scale, seed=i)), fn(*_args(scale, seed=i)))
