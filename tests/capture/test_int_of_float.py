"""``int(t)`` of a float tensor whose int only feeds tensor ops stays in
the graph (issue 18 item 5): truncated toward zero as in Python, and
where Python's int() raises (NaN, infinity) or leaves int64, the graph
raises and the call runs natively, with eager's exception or int."""
import math

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from trace_support import CountingBackend, assert_hits_ran_graph, raises_same  # noqa: E402


def scaled_by_int_of_norm(x):
    k = int(x.norm() * 0.5)
    return x * k + k, x - int(x[0])


def _input(first, rest=1.0):
    return torch.tensor([first, rest, -rest], dtype=torch.float32)


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_int_of_a_float_tensor_is_one_graph_with_pythons_truncation(backend):
    counter = CountingBackend()
    traced = pyinterp.trace(scaled_by_int_of_norm, fullgraph=True,
                            backend=counter if backend == "eager" else "inductor")
    for first in (3.7, -2.7, 0.4, -0.6, 12.0, 5.5):  # (toward zero on both signs)
        x = _input(first)
        got, expected = traced(x), scaled_by_int_of_norm(x)
        for a, b in zip(got, expected):
            assert a.dtype == b.dtype and torch.equal(a, b)
    assert len(traced.cache_entries()) == 1
    if backend == "eager":
        assert_hits_ran_graph(counter, 5)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_where_pythons_int_raises_the_call_raises_eagers_error(bad):
    traced = pyinterp.trace(scaled_by_int_of_norm, backend="eager")
    traced(_input(3.0))  # (the capture: a graph with the int in it)
    raises_same(traced, scaled_by_int_of_norm, _input(bad))
    x = _input(-4.2)  # (and the entry still serves ordinary calls)
    for a, b in zip(traced(x), scaled_by_int_of_norm(x)):
        assert torch.equal(a, b)


def test_a_float_past_int64_runs_natively_with_pythons_int():
    def f(x):
        k = int(x[0])
        return x.double() * k

    traced = pyinterp.trace(f, backend="eager")
    traced(torch.tensor([2.5, 1.0], dtype=torch.float64))
    x = torch.tensor([3e19, 1.0], dtype=torch.float64)  # (int(3e19) > 2**63)
    error = raises_same(traced, f, x)  # (eager: torch cannot take that int)
    assert isinstance(error, OverflowError)
