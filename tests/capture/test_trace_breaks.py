"""pyinterp.trace graph breaks: with fullgraph=True they raise
GraphBreakError at the user's line; without it every call still returns the
eager result (first call: the interpreter's real run; later calls: native)."""
import random
import time

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from torch import nn  # noqa: E402

from trace_support import (  # noqa: E402
    assert_same, count_captures, fresh, line_of, run_both, traced_counting,
)

THIS_FILE = __file__


# --------------------------------------------------------------------------
# the break causes; each function marks its breaking line with "# BREAK"
# --------------------------------------------------------------------------

def f_item(x):
    s = x.sum().long().item()  # BREAK (an int whose value Python needs: range(s))
    return x * len(range(s)), s


def f_tolist(x):
    values = x.tolist()
    return x + max(values), values  # BREAK (max() of floats from tensor data)


def f_bool(x):
    positive = bool(x.sum() > 0)  # BREAK (a bool from tensor data that leaves the function)
    return (x * 2 if positive else x * -3), positive


def f_int(x):
    n = int(x.abs().sum())  # BREAK
    return x * n, n


def f_float(x):
    v = float(x.max().int())  # BREAK (float() of an integer tensor)
    return x - v


def f_numpy(x):
    arr = x.numpy() * 2  # (mirrored by torch._numpy: in the graph)
    arr.sort()  # BREAK (an in-place NumPy method)
    return torch.from_numpy(arr) + x


def f_backward(w, x):
    loss = (w * x).sum()
    loss.backward()  # BREAK
    return loss.detach() * 2


def f_random(x):
    for _ in range(random.getrandbits(2)):  # BREAK (a random int as a loop count)
        x = x + 1
    return x


def f_nonzero(x):
    idx = x.nonzero()  # BREAK
    return idx.shape[0], x[x > 0] * 2


def _helper_with_item(t):
    return abs(t.max().item()) + 1e-4  # BREAK (not round(s, 4): a value the mock remakes)


def f_nested_item(x):
    return x / _helper_with_item(x)


BREAKING = [f_item, f_tolist, f_bool, f_int, f_float, f_numpy, f_random, f_nested_item]


def _inputs():
    # values chosen so that data-dependent decisions change between calls
    return [fresh(3, seed=0), fresh(3, seed=0), fresh(3, offset=2.0), fresh(3, offset=-2.0),
            fresh(3, seed=1), fresh(3, seed=0)]


# --------------------------------------------------------------------------
# without fullgraph: results right on every call
# --------------------------------------------------------------------------

@pytest.mark.parametrize("fn", BREAKING, ids=lambda f: f.__name__)
def test_break_results_match_eager_on_every_call(fn):
    traced = pyinterp.trace(fn, backend="eager")
    for i, x in enumerate(_inputs()):
        random.seed(i)
        expected = fn(x.clone())
        random.seed(i)
        assert_same(traced(x.clone()), expected)


def test_bool_branch_follows_data_every_call():
    traced = pyinterp.trace(f_bool, backend="eager")
    pos, neg = torch.ones(2), -torch.ones(2)
    for x in [pos, pos, neg, neg, pos, neg]:
        assert_same(traced(x), f_bool(x))


def test_item_value_is_not_frozen():
    traced = pyinterp.trace(f_item, backend="eager")
    for k in [1.0, 1.0, 2.0, 3.0]:
        x = torch.full((2,), k)
        out, s = traced(x)
        assert s == 2 * k
        assert_same(out, x * (2 * k))


def test_break_after_tensor_ops_and_before_more():
    def f(x):
        y = x * 2
        s = y.sum().item()
        z = y + s
        return z.relu(), s

    traced = pyinterp.trace(f, backend="eager")
    for x in _inputs():
        run_both(traced, f, x)


def test_nonzero_data_dependent_shape():
    traced = pyinterp.trace(f_nonzero, backend="eager")
    for x in _inputs():
        assert_same(traced(x), f_nonzero(x))


def test_side_effects_around_break_happen_exactly_once(capsys):
    events = []

    def f(x):
        events.append("before")
        print("p1")
        n = int(x.sum() > 0)
        events.append(n)
        print("p2", n)
        return x * n

    traced = pyinterp.trace(f, backend="eager")
    for i, x in enumerate(_inputs()):
        del events[:]
        expected = f(x)
        eager_events = list(events)
        eager_out = capsys.readouterr().out
        del events[:]
        assert_same(traced(x), expected)
        assert events == eager_events, "call %d" % i
        assert capsys.readouterr().out == eager_out, "call %d" % i


def test_break_in_loop_results_match():
    def f(x):
        total = 0.0
        for i in range(3):
            total += (x * i).sum().item()
        return x + total

    traced = pyinterp.trace(f, backend="eager")
    for x in _inputs():
        run_both(traced, f, x)


def test_break_with_inplace_input_update_applied_once():
    def f(x):
        x.add_(1)
        if x.sum() > 100:
            return x * 0
        return x * 2

    traced = pyinterp.trace(f, backend="eager")
    t_x, e_x = torch.zeros(2), torch.zeros(2)
    for i in range(4):
        assert_same(traced(t_x), f(e_x))
        assert t_x.tolist() == [float(i + 1)] * 2


def test_break_with_global_counter_increments_once():
    box = {"n": 0}

    def f(x):
        box["n"] += 1
        return x * x.sum().item()

    traced = pyinterp.trace(f, backend="eager")
    for i in range(4):
        traced(fresh(2, seed=i))
        assert box["n"] == i + 1


def test_break_in_module_forward():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            y = self.lin(x)
            if y.mean() > 0:
                return y.relu()
            return y.tanh()

    torch.manual_seed(0)
    m = M()
    traced = pyinterp.trace(m, backend="eager")
    for x in _inputs():
        assert_same(traced(x), m(x))


def test_backward_inside_function_accumulates_like_eager():
    traced = pyinterp.trace(f_backward, backend="eager")
    w_t = fresh(3, requires_grad=True)
    w_e = fresh(3, requires_grad=True)
    for i in range(3):
        x = fresh(3, seed=i)
        assert_same(traced(w_t, x), f_backward(w_e, x))
        assert_same(w_t.grad, w_e.grad)


def test_random_values_differ_between_calls_when_unseeded():
    traced = pyinterp.trace(f_random, backend="eager")
    x = torch.ones(1, dtype=torch.float64)
    outs = {traced(x).item() for _ in range(5)}
    assert len(outs) > 1


def test_random_seeded_matches_eager():
    def f(x):
        k = random.randint(1, 100)
        return x * k, k

    traced = pyinterp.trace(f, backend="eager")
    x = fresh(3)
    for seed in [0, 0, 1, 2, 0]:
        random.seed(seed)
        expected = f(x)
        random.seed(seed)
        assert_same(traced(x), expected)


def test_time_value_is_not_frozen():
    def f(x):
        return x + time.time()

    traced = pyinterp.trace(f, backend="eager")
    x = torch.zeros(1, dtype=torch.float64)
    for _ in range(3):
        before = time.time()
        out = traced(x).item()
        after = time.time()
        assert before - 1e-3 <= out <= after + 1e-3
        time.sleep(0.01)


def test_time_used_in_control_flow():
    def f(x, deadline):
        if time.monotonic() > deadline:
            return x * 0
        return x + 1

    traced = pyinterp.trace(f, backend="eager")
    x = fresh(2)
    far, past = time.monotonic() + 1000, time.monotonic() - 1000
    for d in [far, far, past, past, far]:
        assert_same(traced(x, d), f(x, d))


def test_print_of_tensor_output_once_per_call(capsys):
    def f(x):
        y = x * 3
        print("value:", y)
        return y

    traced = pyinterp.trace(f, backend="eager")
    for i in range(3):
        x = fresh(2, seed=i)
        f(x)
        eager_out = capsys.readouterr().out
        traced(x)
        assert capsys.readouterr().out == eager_out


# --------------------------------------------------------------------------
# fullgraph=True
# --------------------------------------------------------------------------

@pytest.mark.parametrize("fn", BREAKING, ids=lambda f: f.__name__)
def test_fullgraph_raises_graph_break_error_at_user_line(fn):
    traced = pyinterp.trace(fn, backend="eager", fullgraph=True)
    with pytest.raises(pyinterp.GraphBreakError) as info:
        traced(fresh(3))
    err = info.value
    assert isinstance(err, RuntimeError)
    target = _helper_with_item if fn is f_nested_item else fn
    assert err.filename == THIS_FILE
    assert err.lineno == line_of(target, "# BREAK")
    assert isinstance(err.kind, str) and err.kind
    assert isinstance(err.message, str) and err.message
    assert hasattr(err, "hint")


def test_fullgraph_backward_raises():
    traced = pyinterp.trace(f_backward, backend="eager", fullgraph=True)
    with pytest.raises(pyinterp.GraphBreakError) as info:
        traced(fresh(3, requires_grad=True), fresh(3))
    assert info.value.lineno == line_of(f_backward, "# BREAK")


def test_fullgraph_error_raised_again_on_every_call():
    traced = pyinterp.trace(f_item, backend="eager", fullgraph=True)
    for _ in range(3):
        with pytest.raises(pyinterp.GraphBreakError):
            traced(fresh(3))


def test_fullgraph_error_only_on_breaking_path():
    def f(x, check):
        y = x * 2
        if check:
            return y, bool(y.sum() > 0)  # BREAK
        return y, None

    traced = pyinterp.trace(f, backend="eager", fullgraph=True)
    x = fresh(3)
    assert_same(traced(x, False), f(x, False))
    with pytest.raises(pyinterp.GraphBreakError) as info:
        traced(x, True)
    assert info.value.lineno == line_of(f, "# BREAK")
    assert_same(traced(x, False), f(x, False))


def test_graph_break_error_class():
    assert issubclass(pyinterp.GraphBreakError, RuntimeError)


def test_break_is_in_explain_with_user_line():
    exp = pyinterp.explain(f_item, fresh(3))
    assert exp.graph_break_count >= 1
    lines = [(r.filename, r.lineno) for r in exp.break_reasons]
    assert (THIS_FILE, line_of(f_item, "# BREAK")) in lines


def test_break_on_one_path_does_not_stop_capture_of_another():
    def f(x, flag):
        y = x * 2
        if flag:
            y = y * y.sum().item()
        return y

    traced, counter = traced_counting(f)
    x = fresh(2)
    for flag in [True, True, False, False, False, True, False]:
        assert_same(traced(x, flag), f(x, flag))
    compiled, runs = count_captures(counter), counter.runs
    assert_same(traced(x, False), f(x, False))
    assert count_captures(counter) == compiled  # the clean path is a hit
    assert counter.runs > runs  # that ran its graph


def test_fullgraph_break_in_module_forward():
    class M(nn.Module):
        def forward(self, x):
            y = x * 2
            return y + y[y.abs().argmax().item()]  # BREAK (an index from tensor data)

    traced = pyinterp.trace(M(), backend="eager", fullgraph=True)
    with pytest.raises(pyinterp.GraphBreakError) as info:
        traced(fresh(3))
    assert info.value.filename == THIS_FILE
    assert info.value.lineno == line_of(M.forward, "# BREAK")


def test_fullgraph_error_does_not_leave_partial_side_effects_twice():
    log = []

    def f(x):
        log.append("a")
        return x + x[x.abs().argmax().item()]

    traced = pyinterp.trace(f, backend="eager", fullgraph=True)
    for i in range(2):
        with pytest.raises(pyinterp.GraphBreakError):
            traced(fresh(2))
        assert len(log) <= i + 1  # never more than once per call
