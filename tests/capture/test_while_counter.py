"""``while`` loops on tensor data with a Python int counter
(``pyinterp/capture/graphmend/whileloop.py``, ``looptest.py``).

``while x.norm() > 1 and n < 20:`` tests tensor data *and* a Python int the
body counts: the counter is carried through the ``torch.while_loop`` as a
0-d int64 tensor and the short-circuit test becomes logical ops on 0-d bool
tensors.  One graph, no break, and calls whose data make the loop run no
time, stop on the tensor test, or stop on the counter all hit that graph
and give eager's result.  A counter whose value Python needs after the loop
(returned, printed) is data: the loop breaks as before and stays correct.
"""
import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

from trace_support import assert_hits_ran_graph, assert_same, traced_counting  # noqa: E402

# Scales of the inputs: no trip (0.01), a few (1.5, 3, 40), the counter's
# limit (1e9: 20 halvings leave it above 1), and back.
SCALES = [0.01, 1.5, 3.0, 40.0, 1e9, 0.5, 1e12]


def _args(scale, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(8, generator=gen) * scale,)


def _check_one_loop_graph(fn, scales=SCALES):
    """``fn`` captures whole (fullgraph) as one graph with a while_loop node,
    and every scale hits that graph with eager's result."""
    explanation = pyinterp.explain(fn, *_args(scales[1]))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1
    assert "higher_order.while_loop" in explanation.graphs[0].code
    whole = pyinterp.trace(fn, backend="eager", fullgraph=True)
    traced, counter = traced_counting(fn)
    for scale in scales:
        expected = fn(*_args(scale))
        assert_same(whole(*_args(scale)), expected)
        assert_same(traced(*_args(scale)), expected)
    assert counter.count == 1, "other trip counts must hit the one graph"
    assert_hits_ran_graph(counter, len(scales) - 1)


def _check_breaks_and_stays_correct(fn, capsys=None):
    explanation = pyinterp.explain(fn, *_args(40.0))
    assert explanation.graph_break_count >= 1
    assert any("data-dependent" in str(r) for r in explanation.break_reasons)
    if capsys is not None:
        capsys.readouterr()
    traced = pyinterp.trace(fn, backend="eager")
    for scale in SCALES:
        expected = fn(*_args(scale))
        eager_out = capsys.readouterr().out if capsys is not None else None
        assert_same(traced(*_args(scale)), expected)
        if capsys is not None:
            assert capsys.readouterr().out == eager_out


# -- counters in the test: one graph ---------------------------------------------
def norm_and_counter(x):
    n = 0
    while x.norm() > 1 and n < 20:
        x = x * 0.5
        n += 1
    return x * 2


def counter_first(x):
    n = 0
    while n < 20 and x.norm() > 1:
        x = x * 0.5
        n += 1
    return x


def counter_or_norm(x):
    n = 0
    while n < 3 or x.norm() > 1:  # (at least three trips, more while the norm is big)
        x = x * 0.5
        n = n + 1
    return x


def norm_or_counter(x):
    n = 0
    while x.abs().max() > 4 or n < 2:
        x = x / 2
        n += 1
    return x


def nested_conditions(x):
    n, m = 0, 0
    while (x.norm() > 1 and n < 20) or m < 1:
        x = x * 0.5
        n += 1
        m += 1
    return x


def negated_chain(x):
    n = 10
    while not (x.norm() < 1 or n <= 0):
        x = x * 0.5
        n -= 1
    return x


def counter_steps_by_two(x):
    n = 1
    while x.norm() > 1 and n < 40:
        x = x * 0.5
        n += 2
    return x


def counter_stepped_twice(x):
    n = 0
    while x.norm() > 1 and n < 30:
        x = x * 0.5
        n = n + 1
        n += 1  # (on the tensor the line above made: not in place either)
    return x


def counter_halved(x):
    n = 64
    while x.norm() > 1 and n > 1:  # (64 32 16 8 4 2 1: six trips at most)
        x = x * 0.5
        n //= 2
    return x


def counter_modulo(x):
    m = 0
    while x.norm() > 1 and m != 4:  # (0 3 1 4: three trips at most)
        x = x * 0.5
        m += 3
        m %= 5
    return x


def limit_in_a_local(x):
    n, limit = 0, 5
    while x.norm() > 1 and n < limit:
        x = x * 0.5
        n += 1
    return x + limit


def two_tensor_tests_and_a_counter(x):
    n = 0
    while x.sum() > -100 and x.norm() > 1 and n < 20:
        x = x * 0.5
        n += 1
    return x


def counted_but_unused(x):
    steps = 0
    while x.norm() > 1:
        x = x * 0.5
        steps += 1
    return x


def if_inside_the_body(x):
    n = 0
    while x.norm() > 1 and n < 20:
        if x.sum() > 0:
            x = x * 0.5
        else:
            x = x * 0.25
        n += 1
    return x


class NormLimited(torch.nn.Module):
    """The benchmark's ``graphmend/while_norm`` (under no_grad here: see the
    gradient test below)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        n = 0
        while x.norm() > 1 and n < 20:
            x = x * 0.5
            n += 1
        return self.fc(x)


@pytest.mark.parametrize("fn", [norm_and_counter, counter_first, counter_or_norm,
                                norm_or_counter, nested_conditions, negated_chain,
                                counter_steps_by_two, counter_stepped_twice, counter_halved,
                                counter_modulo, limit_in_a_local, two_tensor_tests_and_a_counter,
                                counted_but_unused, if_inside_the_body],
                         ids=lambda f: f.__name__)
def test_counted_loop_is_one_graph(fn):
    _check_one_loop_graph(fn)


def test_the_counter_is_a_carried_int64_tensor():
    explanation = pyinterp.explain(norm_and_counter, *_args(40.0))
    code = explanation.graphs[0].code
    assert "torch.int64" in code
    assert code.count("torch.ops.higher_order.while_loop(") == 1


def test_module_under_no_grad_is_one_graph():
    module = NormLimited()
    with torch.no_grad():
        _check_one_loop_graph(module)


def test_the_counter_limit_stops_the_loop():
    # (1e12 needs 40 halvings to get under 1: the counter stops it at 20)
    traced = pyinterp.trace(norm_and_counter, backend="eager", fullgraph=True)
    x, = _args(1e12)
    out = traced(x)
    assert_same(out, norm_and_counter(x))
    torch.testing.assert_close(out, x * 0.5 ** 20 * 2)


def test_a_counter_limit_from_an_argument():
    def limited(x, limit):
        n = 0
        while x.norm() > 1 and n < limit:
            x = x * 0.5
            n += 1
        return x

    traced = pyinterp.trace(limited, backend="eager", fullgraph=True)
    for limit in (0, 3, 30):
        for scale in (0.5, 40.0, 1e9):
            x, = _args(scale)
            assert_same(traced(x, limit), limited(x, limit))


# -- the counter after the loop --------------------------------------------------
def counter_returned(x):
    n = 0
    while x.norm() > 1 and n < 20:
        x = x * 0.5
        n += 1
    return x, n


def counter_in_a_range(x):
    n = 0
    while x.norm() > 1 and n < 20:
        x = x * 0.5
        n += 1
    for _ in range(n):
        x = x + 1
    return x


def counter_scales_a_tensor(x):
    n = 0
    while x.norm() > 1 and n < 20:
        x = x * 0.5
        n += 1
    return x * n


def counter_printed(x):
    n = 0
    while x.norm() > 1 and n < 20:
        x = x * 0.5
        n += 1
    print("halved", n, "times")
    return x


# (a counter only the body counts, returned: test_trace_whileloop's python_counter)
def counter_compared_in_a_tensor_op(x):
    n = 0
    while x.norm() > 1 and n < 20:
        x = x * 0.5
        n += 1
    return torch.where(x > 0, x + n, x - n * 2)


@pytest.mark.parametrize("fn", [counter_scales_a_tensor, counter_compared_in_a_tensor_op],
                         ids=lambda f: f.__name__)
def test_a_counter_only_tensor_ops_read_after_the_loop_stays_in_the_graph(fn):
    """Its value after the loop is the loop's int64 output, which the tensor
    ops take as a Python int the graph computes (tracked_ints)."""
    _check_one_loop_graph(fn)


@pytest.mark.parametrize("fn", [counter_returned, counter_in_a_range],
                         ids=lambda f: f.__name__)
def test_a_counter_python_reads_after_the_loop_breaks_and_stays_correct(fn):
    _check_breaks_and_stays_correct(fn)


def test_a_printed_counter_breaks_and_prints_what_eager_prints(capsys):
    _check_breaks_and_stays_correct(counter_printed, capsys)


def test_a_counter_read_after_the_loop_refuses_fullgraph():
    whole = pyinterp.trace(counter_returned, backend="eager", fullgraph=True)
    with pytest.raises(pyinterp.GraphBreakError, match="data-dependent"):
        whole(*_args(40.0))


# -- what stays as before -------------------------------------------------------
def test_python_only_while_is_untouched():
    def countdown(x):
        n = 5
        while n > 0 and x.dim() == 1:
            x = x * 2
            n -= 1
        return x, n

    traced = pyinterp.trace(countdown, backend="eager", fullgraph=True)
    assert_same(traced(*_args(1.0)), countdown(*_args(1.0)))


def test_a_test_with_a_side_effect_is_not_merged(capsys):
    seen = []

    def logged_test(x):
        n = 0
        while x.norm() > 1 and seen.append(n) is None and n < 20:
            x = x * 0.5
            n += 1
        return x

    traced = pyinterp.trace(logged_test, backend="eager")
    for scale in (0.01, 40.0, 1e9):
        seen.clear()
        expected = logged_test(*_args(scale))
        eager_seen = list(seen)
        seen.clear()
        assert_same(traced(*_args(scale)), expected)
        assert seen == eager_seen


class ScaledNormLimited(NormLimited):
    """A parameter in the body: an operand of the loop that needs grad."""

    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor(0.5))

    def forward(self, x):
        n = 0
        while x.norm() > 1 and n < 20:
            x = x * self.scale
            n += 1
        return self.fc(x)


def _grads(module, out, x):
    """The parameters' gradients (None stays None: an optimizer skips such
    a parameter) and the input's, cleared after."""
    out.sum().backward()
    grads = [None if p.grad is None else p.grad.clone() for p in module.parameters()]
    grads.append(x.grad.clone())
    module.zero_grad(set_to_none=True)
    return grads


def _assert_same_grads(got, expected):
    assert [g is None for g in got] == [g is None for g in expected]
    for a, b in zip(got, expected):
        if a is not None:
            torch.testing.assert_close(a, b)


def _eager_and_traced_grads(module, traced, scale):
    x1 = _args(scale)[0].requires_grad_()
    x2 = x1.detach().clone().requires_grad_()
    out1 = traced(x1)
    grads1 = _grads(module, out1, x1)
    out2 = module(x2)
    grads2 = _grads(module, out2, x2)
    assert_same(out1, out2)
    _assert_same_grads(grads1, grads2)


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_with_gradients_the_counted_loop_is_one_graph_with_eagers_gradients(backend):
    """Inputs that need grad (the benchmark's training run): while_loop's
    autograd gives the gradients, for no trip too (torch 2.13 gives one
    iteration's gradient there: whileloop._no_trip_gradient corrects it)."""
    module = NormLimited()
    explanation = pyinterp.explain(module, _args(40.0)[0].requires_grad_())
    assert explanation.graph_break_count == 0, explanation.break_reasons
    traced = pyinterp.trace(module, backend=backend, fullgraph=True)
    for scale in (0.01, 3.0, 40.0, 1e9, 0.5):
        _eager_and_traced_grads(module, traced, scale)


def test_a_parameter_only_the_body_reads_is_not_a_while_loop():
    """On a call whose loop runs no trip, eager leaves such a parameter's
    ``.grad`` None; while_loop's backward would give zeros: refused at the
    top test, which is assumed instead (values/assumptions.py).  With one
    trip certain, the bottom test's loop may be a while_loop: the
    parameter always gets its gradient from the first trip."""
    module = ScaledNormLimited()
    explanation = pyinterp.explain(module, _args(40.0)[0].requires_grad_())
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert len(explanation.assumptions) == 1
    traced = pyinterp.trace(module, backend="eager")
    for scale in (0.01, 3.0, 40.0, 0.5):
        _eager_and_traced_grads(module, traced, scale)
