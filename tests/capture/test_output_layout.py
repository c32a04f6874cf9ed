"""Graph outputs keep eager's layout under backend="inductor"
(pyinterp/codegen/output_layout.py).

Inductor gives ``torch.cat`` of a transposed product the inputs' strides
where eager gives a contiguous tensor; the capture call (eager) and the
hits (compiled) then disagree on strides, and a tensor that flows into the
next call (a KV cache) missed its guard once more than under torch.compile.
"""
import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from pyinterp.codegen import output_layout  # noqa: E402


def cache_append(x):
    keys = x.view(1, 6, 2, 16).transpose(1, 2) * 2
    return torch.cat([torch.zeros(1, 2, 0, 16), keys], dim=2)


def test_inductor_output_has_eager_strides_on_capture_and_hits():
    x = torch.randn(1, 6, 32)
    expected = cache_append(x)
    traced = pyinterp.trace(cache_append, backend="inductor", dynamic=False)
    for _ in range(3):
        got = traced(x)
        assert got.stride() == expected.stride() == (192, 96, 16, 1)
        torch.testing.assert_close(got, expected, rtol=0, atol=0)
    assert len(traced.cache_entries()) == 1


def _layout_pass_on(fn, *args):
    """The graph of ``fn`` and how many outputs the pass wrapped in it (run
    where a backend runs: the graph still has its example values)."""
    seen = []

    def backend(gm, example_inputs):
        seen.append((gm, output_layout.keep_eager_layout(gm)))
        return gm.forward

    traced = pyinterp.trace(fn, backend=backend, dynamic=False)
    traced(*args)
    return seen[0]


def _clones(gm):
    return [n for n in gm.graph.nodes if n.target is torch.ops.aten.clone.default]


def test_only_fresh_contiguous_outputs_are_wrapped():
    def f(x, w):
        y = x * 2            # fresh, contiguous: wrapped
        v = y.view(-1)       # a view of another output: neither is wrapped
        z = (x + 1).t()      # not contiguous in eager: left to the compiler
        s = x.sum()          # one element: nothing to choose
        return y, v, z, s, w  # w: an input returned as it is

    x, w = torch.randn(3, 4), torch.randn(2)
    gm, wrapped = _layout_pass_on(f, x, w)
    assert wrapped == 0 and not _clones(gm)  # (y and v share memory)

    def g(x):
        return x * 2, (x + 1).t(), x.sum()

    gm, wrapped = _layout_pass_on(g, x)
    assert wrapped == 1
    (clone,) = _clones(gm)
    assert clone.kwargs == {"memory_format": torch.contiguous_format}
    got = gm(x)
    expected = g(x)
    for a, b in zip(got, expected):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
        assert a.stride() == b.stride()


def test_aliasing_outputs_keep_their_aliasing_under_inductor():
    def f(x):
        y = x * 2
        return y, y.view(-1)

    x = torch.randn(3, 4)
    traced = pyinterp.trace(f, backend="inductor", dynamic=False)
    for _ in range(2):
        y, v = traced(x)
        assert v.data_ptr() == y.data_ptr()
        torch.testing.assert_close(y, x * 2, rtol=0, atol=0)
