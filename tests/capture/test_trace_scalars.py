"""``.item()``, ``float(t)`` and ``.tolist()`` kept in the graph.

A Python float computed from tensor data that only feeds tensor ops, Python
arithmetic, ``print`` or the result is captured as a 0-d node: one graph, no
break, and every later call (with different data) is a cache hit that gives
eager's result.  Uses that feed control flow or a native call break, and
stay correct.  See ``pyinterp/capture/values/scalars.py``.
"""
import contextlib
import io

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

from trace_support import assert_same, traced_counting, assert_hits_ran_graph  # noqa: E402

CALLS = 4


def _args(seed, *shapes, dtype=torch.float32):
    gen = torch.Generator().manual_seed(seed)
    return tuple((torch.randn(*s, generator=gen)).to(dtype) for s in shapes)


def _run_both(traced, fn, args):
    """Same result and same printed output, traced and eager."""
    out_eager, out_traced = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out_eager):
        expected = fn(*args)
    with contextlib.redirect_stdout(out_traced):
        actual = traced(*args)
    assert_same(actual, expected)
    assert out_traced.getvalue() == out_eager.getvalue()


def _check_in_graph(fn, *shapes, dtype=torch.float32, backend=None):
    explanation = pyinterp.explain(fn, *_args(0, *shapes, dtype=dtype))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1
    traced, counter = traced_counting(fn)
    for seed in range(CALLS):
        _run_both(traced, fn, _args(seed, *shapes, dtype=dtype))
    assert counter.count == 1, "later calls with other data must hit the one graph"
    assert_hits_ran_graph(counter, CALLS - 1)  # the first call is the capture


def _check_breaks(fn, *shapes, kind="data-dependent-value"):
    explanation = pyinterp.explain(fn, *_args(0, *shapes))
    assert kind in [r.kind for r in explanation.break_reasons], explanation.break_reasons
    traced = pyinterp.trace(fn, backend="eager")
    for seed in range(CALLS):
        _run_both(traced, fn, _args(seed, *shapes))


def item_scale(x, y):
    return x * y.max().item()


def item_arithmetic(x, y):
    s = y.abs().max().item()
    scale = 2.0 * s + 1
    return x / scale - s, -scale


def float_of_tensor(x, y):
    return float(y.sum()) * x


def tolist_elements(x, y):
    values = y.tolist()
    return x * values[0] + values[1] * 3, values


def tolist_2d(x, y):
    rows = y.tolist()
    return x + rows[1][0], rows


def item_printed(x, y):
    s = y.sum().item()
    print("sum", s)
    return x + s


def item_in_place(x, y):
    h = x.clone()
    h.mul_(y.mean().item())
    h += y.std().item()
    return h


def item_through_helper(x, y):
    def scaled(t, factor):
        return t * factor
    return scaled(x, y.max().item())


def item_int_tensor_times_float(x, y):
    return torch.arange(3) * y.max().item() + x


def item_into_list(x, y):
    seen = []
    seen.append(y.min().item())
    seen.append(y.max().item())
    return x * seen[0] + x * seen[1], seen


def scalar_stored_on_object(x, y):
    class Box:
        pass
    box = Box()
    box.value = y.sum().item()
    return x * box.value


def scalar_in_if(x, y):
    # (a comparison feeding a jump: a data-dependent branch, merged)
    if y.sum().item() > 0:
        return x
    return -x


def scalar_in_if_with_else(x, y):
    s = y.sum().item()
    if s > 0.25:
        h = x * 2
    else:
        h = x - 1
    return h * s


def scalar_in_both_arms(x, y):
    # (a tracked float used by the ops of a speculated branch's arms)
    s = y.sum().item()
    if x.sum() > 0:
        h = x * s
    else:
        h = x - s
    return h


def scalar_in_nested_compare(x, y):
    s = y.sum().item()
    if s > 0.25 and s < 2:
        h = x * (s * 2 + 1)
    else:
        h = x - 1
    return h


def scalar_compared_with_a_tensor(x, y):
    s = y.mean().item()
    return x * (x > s) + (s <= x).float() + torch.gt(x, s)


def scalar_clamp_bounds(x, y):
    b = y.abs().max().item() + 0.1
    return torch.clamp(x, -b, b) + x.clamp(max=b / 2) + x.clip(min=-b, max=1.5)


def scalar_clamp_of_an_int_tensor(x, y):
    return torch.clamp((x * 4).int(), min=y.mean().item())  # (a float result, as eager)


@pytest.mark.parametrize("fn,shapes", [
    (scalar_compared_with_a_tensor, [(5,), (4,)]),
    (scalar_clamp_bounds, [(5,), (4,)]),
    (scalar_clamp_of_an_int_tensor, [(5,), (4,)]),
    (item_scale, [(3,), (4,)]),
    (item_arithmetic, [(3,), (4,)]),
    (float_of_tensor, [(3,), (4,)]),
    (tolist_elements, [(3,), (2,)]),
    (tolist_2d, [(3,), (2, 2)]),
    (item_printed, [(3,), (2,)]),
    (item_in_place, [(3,), (5,)]),
    (item_through_helper, [(3,), (4,)]),
    (item_int_tensor_times_float, [(3,), (4,)]),
    (item_into_list, [(3,), (4,)]),
    (scalar_in_if, [(3,), (4,)]),
    (scalar_in_if_with_else, [(3,), (4,)]),
    (scalar_in_both_arms, [(3,), (4,)]),
    (scalar_in_nested_compare, [(3,), (4,)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_scalar_stays_in_graph(fn, shapes):
    _check_in_graph(fn, *shapes)


@pytest.mark.parametrize("fn", [scalar_in_both_arms, scalar_in_nested_compare],
                         ids=lambda f: f.__name__)
def test_scalar_in_arms_with_gradients_uses_cond_and_matches_eager(fn):
    # With gradients the arms become a torch.cond; the float's node is made
    # before the arms, so both subgraphs take it as an operand.
    explanation = pyinterp.explain(fn, _args(0, (3,))[0].requires_grad_(True),
                                   _args(0, (3,), (4,))[1])
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert "higher_order.cond" in explanation.graphs[0].code
    traced = pyinterp.trace(fn, backend="eager")
    for seed in range(CALLS + 2):
        x, y = _args(seed, (3,), (4,))
        xa, xb = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
        actual, expected = traced(xa, y), fn(xb, y)
        torch.testing.assert_close(actual, expected)
        actual.sum().backward()
        expected.sum().backward()
        torch.testing.assert_close(xa.grad, xb.grad)


def test_scalar_float64_tensor_keeps_full_precision():
    def fn(x, y):
        return x * (y.sum().item() / 3)
    _check_in_graph(fn, (3,), (4,), dtype=torch.float64)


def test_scalar_under_inductor_matches_eager():
    traced = pyinterp.trace(item_arithmetic)  # the default backend
    for seed in range(3):
        args = _args(seed, (3,), (4,))
        actual, expected = traced(*args), item_arithmetic(*args)
        torch.testing.assert_close(actual[0], expected[0])
        assert actual[1] == pytest.approx(expected[1])


def scalar_compared_into_a_value(x, y):
    flag = y.sum().item() > 0
    return x, flag


def scalar_formatted(x, y):
    return x, "%.3f" % y.sum().item()


def scalar_to_factory(x, y):
    return torch.full((2,), y.sum().item()) + x[:2]


def scalar_divides(x, y):
    return x * (1.0 / y.sum().item())


def scalar_to_native_builtin(x, y):
    # (max(s, 0.5) stays in the graph: tests/capture/test_tracked_float_text.py;
    # against the int 1 the result's type would depend on the data)
    return x * max(y.sum().item(), 1)


@pytest.mark.parametrize("fn", [scalar_formatted,
                                scalar_to_factory, scalar_divides,
                                scalar_to_native_builtin, scalar_stored_on_object],
                         ids=lambda f: f.__name__)
def test_scalar_uses_that_break_stay_correct(fn):
    _check_breaks(fn, (3,), (4,))


def test_scalar_compared_into_a_value_is_assumed():
    # flag feeds no jump: its truth is assumed and checked by the graph
    # (data_decisions.py); one entry per truth value
    explanation = pyinterp.explain(scalar_compared_into_a_value, *_args(0, (3,), (4,)))
    assert explanation.graph_break_count == 0 and len(explanation.assumptions) == 1
    traced = pyinterp.trace(scalar_compared_into_a_value, fullgraph=True, backend="eager")
    flags = set()
    for seed in range(8):
        args = _args(seed, (3,), (4,))
        flags.add(scalar_compared_into_a_value(*args)[1])
        _run_both(traced, scalar_compared_into_a_value, args)
    assert flags == {True, False} and len(traced.cache_entries()) == 2


def test_scalar_break_under_fullgraph_names_the_line():
    traced = pyinterp.trace(scalar_formatted, fullgraph=True, backend="eager")
    with pytest.raises(pyinterp.GraphBreakError) as info:
        traced(*_args(0, (3,), (4,)))
    assert info.value.kind == "data-dependent-value"
    assert info.value.lineno == scalar_formatted.__code__.co_firstlineno + 1


def test_scalar_in_data_dependent_if_arm_is_not_merged_as_equal():
    # Both arms leave a float in `s`; equal on this call, but they come from
    # tensor data, so the speculative merge must not keep either as a constant.
    def fn(x, y):
        s = y.max().item()
        if x.sum() > 0:
            t = s * 1.0
        else:
            t = s + 0.0
        return x * t
    traced = pyinterp.trace(fn, backend="eager")
    for seed in range(CALLS):
        _run_both(traced, fn, _args(seed, (3,), (4,)))


def test_half_precision_result_breaks():
    # A Python scalar in a float16 op is applied at higher precision than a
    # float16 0-d tensor would be: a break, not an approximation.
    def fn(x, y):
        return x.half() * y.sum().item()
    _check_breaks(fn, (3,), (4,))


# -- impure calls: recomputed by the mock ---------------------------------------
import random  # noqa: E402
import time  # noqa: E402


def noisy(x):
    return x * random.random() + random.uniform(1, 2), random.random()


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_random_is_recomputed_in_order(backend):
    explanation = pyinterp.explain(noisy, *_args(0, (3,)))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    traced, counter = traced_counting(noisy) if backend == "eager" else (
        pyinterp.trace(noisy), None)
    for seed in range(CALLS):
        (x,) = _args(seed, (3,))
        random.seed(seed)
        expected, state_eager = noisy(x), random.getstate()
        random.seed(seed)
        actual, state_traced = traced(x), random.getstate()
        torch.testing.assert_close(actual[0], expected[0])
        assert actual[1] == expected[1]
        assert state_traced == state_eager, "the same number of draws, in the same order"
    if counter is not None:
        assert counter.count == 1
        assert_hits_ran_graph(counter, CALLS - 1)


class TimedForward(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.elapsed = None
        self.history = []

    def forward(self, x):
        t0 = time.perf_counter()
        h = self.lin(x).relu()
        self.elapsed = time.perf_counter() - t0
        self.history.append(self.elapsed)
        return h


def test_clock_is_recomputed_and_stored_values_are_fresh():
    module = TimedForward()
    explanation = pyinterp.explain(module, *_args(0, (2, 3)))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    del module.history[:]  # explain ran the forward once
    traced, counter = traced_counting(module)
    for seed in range(CALLS):
        (x,) = _args(seed, (2, 3))
        torch.testing.assert_close(traced(x), module.lin(x).relu())
        assert type(module.elapsed) is float and module.elapsed >= 0
        assert module.history[-1] is module.elapsed
    assert len(module.history) == CALLS
    assert len(set(module.history)) == CALLS, "each call measured its own interval"
    assert counter.count == 1


def random_in_condition(x):
    if random.random() < 0.5:
        return x
    return x * 2


def random_int_as_index(x):
    # (random.randint feeding tensor arithmetic is recomputed by the mock:
    # test_trace_idioms.py; as an index it stays a break)
    return x[random.randint(0, 2)]


def test_branch_on_a_recomputed_float_is_merged():
    # The mock draws random.random() again; the branch on it is a
    # data-dependent branch of the graph (both arms, merged).
    explanation = pyinterp.explain(random_in_condition, *_args(0, (3,)))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    traced = pyinterp.trace(random_in_condition, backend="eager")
    for seed in range(8):  # both arms taken, in some order
        _same_from_seed(traced, random_in_condition, seed)
    assert len(traced._entries) == 1


def _same_from_seed(traced, fn, seed):
    """Same result and same ``random`` state afterwards, from ``seed``."""
    (x,) = _args(seed, (3,))
    random.seed(seed)
    expected, state_eager = fn(x), random.getstate()
    random.seed(seed)
    actual, state_traced = traced(x), random.getstate()
    torch.testing.assert_close(actual, expected)
    assert state_traced == state_eager


def test_branch_on_a_float_with_gradients_through_one_arm_only_is_assumed():
    # A parameter used by one arm only: eager leaves its .grad None when the
    # other arm runs; torch.cond would give zeros, so the branch is not
    # merged: its truth is assumed (one graph per path, checked per call).
    lin = torch.nn.Linear(3, 3)

    def fn(x):
        if random.random() < 0.5:
            return x
        return x + lin(x)

    explanation = pyinterp.explain(fn, *_args(0, (3,)))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.assumptions
    traced = pyinterp.trace(fn, backend="eager")
    for seed in range(6):
        (x,) = _args(seed, (3,))
        grads = []
        for f in (fn, traced):
            lin.zero_grad(set_to_none=True)
            random.seed(seed)
            out = f(x.clone().requires_grad_(True))
            out.sum().backward()
            grads.append((out.detach(), lin.weight.grad))
        torch.testing.assert_close(grads[1][0], grads[0][0])
        assert (grads[1][1] is None) == (grads[0][1] is None)
        if grads[0][1] is not None:
            torch.testing.assert_close(grads[1][1], grads[0][1])


@pytest.mark.parametrize("fn", [random_int_as_index], ids=lambda f: f.__name__)
def test_impure_values_that_cannot_be_recomputed_break(fn):
    explanation = pyinterp.explain(fn, *_args(0, (3,)))
    assert explanation.graph_break_count >= 1
    traced = pyinterp.trace(fn, backend="eager")
    for seed in range(CALLS):
        _same_from_seed(traced, fn, seed)


def scalar_on_local_object_then_native(x, y):
    class Box:
        pass
    box = Box()
    box.value = y.sum().item()
    return x, str(vars(box))  # vars() of the box formats the float natively


def scalar_in_local_dict_then_native(x, y):
    d = {}
    d["v"] = y.sum().item()
    return x, str(d)


@pytest.mark.parametrize("fn", [scalar_on_local_object_then_native,
                                scalar_in_local_dict_then_native], ids=lambda f: f.__name__)
def test_scalar_hidden_in_an_object_is_never_frozen(fn):
    _check_breaks(fn, (3,), (4,))


def test_float_nodes_made_for_arms_that_no_arm_used_are_dropped():
    # The float's node is made before the arms (for torch.cond); no arm
    # uses it, so the graph must not compute it on every call.
    def fn(x, y):
        s = y.max().item()  # noqa: F841 - (live in the frame at the branch)
        if x.sum() > 0:
            x = x * 2
        else:
            x = x - 1
        return x
    explanation = pyinterp.explain(fn, *_args(0, (3,), (4,)))
    assert explanation.graph_break_count == 0
    assert "float64" not in explanation.graphs[0].code, explanation.graphs[0].code


def scalar_in_a_list_that_holds_itself(x, y):
    values = []
    values.append(values)
    values.append(y.sum().item())

    class Box:
        pass
    box = Box()
    box.values = values  # (the capture looks into the list for floats: once)
    return x * values[1], str(vars(box))


def test_a_list_that_holds_itself_is_looked_into_once():
    # The walk for tracked floats inside containers met the list again
    # inside itself and recursed until RecursionError (eager runs fine).
    _check_breaks(scalar_in_a_list_that_holds_itself, (3,), (4,))
