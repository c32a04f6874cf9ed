"""More legacy idioms and custom Functions (issue 18 items 1 and 2), each
checked against eager over several calls (a capture, then hits), with
gradients and mutated inputs, and as one graph also under
``fullgraph=True``:

* a legacy constructor given sizes (``torch.Tensor(n, d)``,
  ``torch.FloatTensor(x.shape)``, ``x.new(2, 3)``): uninitialized memory,
  recorded as ``torch.empty`` (capture/legacy_tensors.py);
* a ``@torch.jit.script`` function: its original Python interpreted
  (capture/scripted.py), TorchScript's own errors kept;
* a custom Function whose forward writes its input in place and marks it
  dirty (capture/autograd_functions.py).
"""
import warnings

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

from trace_support import (  # noqa: E402
    CountingBackend, assert_same, count_captures, fresh, line_of, raises_same, run_both,
)

CALLS = 4


class ReturnCounter(CountingBackend):
    """A :class:`CountingBackend` whose ``returned`` counts the calls of
    its graphs that returned (a graph that raises is rerun natively by the
    mock: its result is still right, but no graph ran)."""

    def __init__(self):
        super().__init__()
        self.returned = 0

    def __call__(self, gm, example_inputs):
        compiled = super().__call__(gm, example_inputs)

        def returning(*args):
            result = compiled(*args)
            self.returned += 1
            return result

        return returning


def traced_counting(fn, **options):
    counter = ReturnCounter()
    return pyinterp.trace(fn, backend=counter, **options), counter


def assert_hits_ran_graph(counter, hits):
    assert counter.returned >= hits, "only %d of %d hits ran the graph" % (
        counter.returned, hits)


def _calls_against_eager(fn, make_inputs, calls=CALLS, **options):
    """Eager and traced on equal inputs ``calls`` times: results, inputs
    afterwards and the gradients of inputs that require grad."""
    traced, counter = traced_counting(fn, **options)
    for i in range(calls):
        mine, eagers = make_inputs(i), make_inputs(i)  # (equal: made from the seed i)
        got, want = traced(*mine), fn(*eagers)
        assert_same((got, mine), (want, eagers))  # (the inputs as they are left, too)
        if want.requires_grad:
            (got.sum() + want.sum()).backward()
            assert_same([t.grad for t in mine], [t.grad for t in eagers], "gradients")
    return counter


def _one_graph(fn, *args):
    explanation = pyinterp.explain(fn, *args)
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1


def _targets(counter):
    return [n.target for n in counter.graphs[0].graph.nodes if n.op == "call_function"]


# --------------------------------------------------------------------------
# 1. legacy constructors given sizes: torch.empty
# --------------------------------------------------------------------------

def f_state_zeroed(x):
    h = torch.Tensor(x.size(0), 4).zero_()
    return torch.tanh(x[:, :4] + h)


def f_float_tensor_shape_filled(x):
    return x * torch.FloatTensor(x.shape).fill_(2.5)


def f_size_copied(x):
    return torch.Tensor(x.size()).copy_(x) * 3  # (copy_ carries x's gradient)


def f_long_tensor_index(x):
    return x[torch.LongTensor(2).fill_(1)]


def f_new_sizes(x):
    return x[:2, :3] + x.new(2, 3).fill_(1.5)


SIZED = [f_state_zeroed, f_float_tensor_shape_filled, f_size_copied, f_long_tensor_index,
         f_new_sizes]


def _rows(i):
    return [fresh(2 + i, 5, seed=i, requires_grad=True)]


@pytest.mark.parametrize("fn", SIZED, ids=lambda f: f.__name__)
def test_sized_constructor_is_one_graph(fn):
    _one_graph(fn, *_rows(0))
    _calls_against_eager(fn, _rows, fullgraph=True)


@pytest.mark.parametrize("fn", SIZED, ids=lambda f: f.__name__)
def test_sized_constructor_hits_run_the_graph(fn):
    def same_size(i):
        return [fresh(3, 5, seed=i, requires_grad=True)]

    counter = _calls_against_eager(fn, same_size)
    assert count_captures(counter) == 1
    assert_hits_ran_graph(counter, CALLS - 1)


def test_recorded_as_empty_of_the_default_dtype():
    counter = _calls_against_eager(f_state_zeroed, _rows, calls=1)
    empties = [n for n in counter.graphs[0].graph.nodes if n.target is torch.empty]
    assert len(empties) == 1
    assert empties[0].kwargs == {"dtype": torch.float32, "device": torch.device("cpu")}


def test_symbolic_sizes_stay_symbolic():
    """Four batch sizes: the same captures as ``torch.zeros(x.size(0), 4)``
    (the sizes of ``torch.Tensor(n, d)`` are not baked in)."""
    def with_zeros(x):
        return torch.tanh(x[:, :4] + torch.zeros(x.size(0), 4))

    legacy = _calls_against_eager(f_state_zeroed, _rows)
    plain = _calls_against_eager(with_zeros, _rows)
    assert count_captures(legacy) == count_captures(plain) < CALLS


def test_read_before_written_has_eagers_shape_and_dtype():
    """Uninitialized memory read as it is: arbitrary values in eager and
    traced alike, but the same shape, dtype, device and requires_grad."""
    def f(x):
        return torch.Tensor(x.size(0), 3), torch.IntTensor(2)

    traced = pyinterp.trace(f, backend="eager", fullgraph=True)
    for i in range(3):
        x = fresh(2 + i, 4, seed=i)
        for got, want in zip(traced(x), f(x)):
            assert (type(got), got.dtype, got.shape, got.device, got.requires_grad) \
                == (type(want), want.dtype, want.shape, want.device, want.requires_grad)


def test_default_dtype_is_followed():
    traced, counter = traced_counting(f_state_zeroed)
    run_both(traced, f_state_zeroed, fresh(3, 5))
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        run_both(traced, f_state_zeroed, fresh(3, 5, dtype=torch.float64))
    finally:
        torch.set_default_dtype(old)
    assert count_captures(counter) == 2


def test_bad_size_raises_eagers_error():
    def f(x):
        return x + torch.Tensor(x.size(0) - 10).zero_()

    raises_same(pyinterp.trace(f, backend="eager"), f, fresh(3))


def test_data_tuple_is_still_data():
    def f(x):
        return x * torch.Tensor((2, 3))  # a tuple of ints: data, not sizes

    traced = pyinterp.trace(f, backend="eager", fullgraph=True)
    for i in range(3):
        run_both(traced, f, fresh(4, 2, seed=i))


# --------------------------------------------------------------------------
# 2. @torch.jit.script functions: their Python
# --------------------------------------------------------------------------

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)

    @torch.jit.script
    def scripted_gelu(x):
        return x * 0.5 * (1.0 + torch.erf(x / 1.41421))

    @torch.jit.script
    def scripted_scale(x, alpha: float = 2.0):
        if alpha < 0:
            raise ValueError("alpha must not be negative")
        return x * alpha

    @torch.jit.script
    def scripted_layers(x, n: int):
        for i in range(n):
            x = scripted_gelu(x) + i
        return x

    @torch.jit.script
    def scripted_add_in_place(x):
        x.add_(1)
        return x * 2

    def _doubled(x):
        return x * 2

    traced_double = torch.jit.trace(_doubled, torch.ones(2))


def f_scripted(x):
    return scripted_gelu(x @ x.t()).sum(-1)


def f_scripted_args(x):
    return scripted_scale(x, 1.5) + scripted_scale(x) + scripted_scale(x, alpha=0.5)


def f_scripted_nested(x):
    return scripted_layers(x, 3)


SCRIPTED = [f_scripted, f_scripted_args, f_scripted_nested]


def _square(i):
    return [fresh(3, 3, seed=i, requires_grad=True)]


@pytest.mark.parametrize("fn", SCRIPTED, ids=lambda f: f.__name__)
def test_scripted_function_is_one_graph(fn):
    _one_graph(fn, *_square(0))
    counter = _calls_against_eager(fn, _square, fullgraph=True)
    assert count_captures(counter) == 1
    assert_hits_ran_graph(counter, CALLS - 1)
    assert torch.erf in _targets(counter) or fn is f_scripted_args  # its ops, not one call


def test_scripted_function_raising_raises_torchscripts_error():
    def f(x, alpha):
        return scripted_scale(x, alpha)

    traced = pyinterp.trace(f, backend="eager")
    error = raises_same(traced, f, fresh(3), -1.0)
    assert type(error) is torch.jit.Error and "alpha must not be negative" in str(error)
    run_both(traced, f, fresh(3), 2.0)  # (and a good call still works)


def test_scripted_function_wrong_argument_raises_torchscripts_error():
    def f(x):
        return scripted_gelu(x.shape[0])

    error = raises_same(pyinterp.trace(f, backend="eager"), f, fresh(3))
    assert type(error) is RuntimeError and "Expected a value of type" in str(error)


def test_scripted_function_writing_its_argument_keeps_its_break():
    def f(x):
        return scripted_add_in_place(x) + 1  # BREAK

    reasons = pyinterp.explain(f, fresh(3)).break_reasons
    assert reasons[0].kind == "opaque-native-call"
    assert "in-place" in reasons[0].message and reasons[0].lineno == line_of(f, "# BREAK")
    traced = pyinterp.trace(f, backend="eager")
    for i in range(3):
        run_both(traced, f, fresh(3, seed=i))  # (x written once, as in eager)


def test_jit_traced_function_keeps_its_break():
    """A ``torch.jit.trace``d function runs its recorded trace, which its
    Python need not follow: not interpreted."""
    def f(x):
        return traced_double(x) + 1

    reasons = pyinterp.explain(f, fresh(2)).break_reasons
    assert reasons and reasons[0].kind == "opaque-native-call"
    traced = pyinterp.trace(f, backend="eager")
    run_both(traced, f, fresh(2))


# --------------------------------------------------------------------------
# 3. a custom Function whose forward writes its input (ctx.mark_dirty)
# --------------------------------------------------------------------------

class InplaceLeakyReLU(torch.autograd.Function):
    """Negatives scaled in place by a Tensor method (``mul_``)."""

    @staticmethod
    def forward(ctx, x, slope):
        factor = torch.where(x < 0, slope, 1.0)
        x.mul_(factor)
        ctx.mark_dirty(x)
        ctx.save_for_backward(factor)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.saved_tensors[0], None


class InplaceReLU(torch.autograd.Function):
    """Negatives zeroed in place by an item store."""

    @staticmethod
    def forward(ctx, x):
        x[x < 0] = 0.0
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return grad_output * (out > 0)


class InplaceDoubleUnmarked(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)  # (no mark_dirty)
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2


def f_dirty_intermediate(x, w):
    h = x @ w
    before = h[0].sum()  # (a view read before the write)
    y = InplaceLeakyReLU.apply(h, 0.1)
    return y * 2 + h + before


def f_dirty_input(x, w):
    return InplaceLeakyReLU.apply(x, 0.2) @ w  # x: an input without grad, written


def f_dirty_item_store(x, w):
    return InplaceReLU.apply(x @ w - 0.5).sum(-1)


def _dirty_inputs(i):
    return [fresh(3, 4, seed=i), fresh(4, 4, seed=10 + i, requires_grad=True)]


@pytest.mark.parametrize("fn", [f_dirty_intermediate, f_dirty_input, f_dirty_item_store],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_mark_dirty_is_one_node_with_the_users_backward(fn, backend):
    _one_graph(fn, *_dirty_inputs(0))
    if backend == "eager":
        counter = _calls_against_eager(fn, _dirty_inputs, fullgraph=True)
        assert count_captures(counter) == 1
        assert_hits_ran_graph(counter, CALLS - 1)
        assert [getattr(t, "__name__", "") for t in _targets(counter)].count("apply") == 1
        return
    traced = pyinterp.trace(fn, backend=backend, fullgraph=True)
    for i in range(CALLS):
        x, w = _dirty_inputs(i)
        x2, w2 = x.clone(), w.detach().clone().requires_grad_()
        got, want = traced(x, w), fn(x2, w2)
        assert_same(got, want)
        assert_same(x, x2, "written input")
        got.sum().backward()
        want.sum().backward()
        assert_same(w.grad, w2.grad, "grad")


def test_mark_dirty_of_an_input_that_requires_grad_keeps_its_break():
    def f(x):
        return InplaceLeakyReLU.apply(x * 1, 0.1) + InplaceLeakyReLU.apply(x.clone(), 0.3)

    _one_graph(f, fresh(3, 4, requires_grad=True))  # (intermediates: captured)

    def g(a):
        return InplaceLeakyReLU.apply(a, 0.1) + 1  # BREAK

    reasons = pyinterp.explain(g, fresh(3, 4, requires_grad=True) * 1).break_reasons
    assert reasons[0].kind == "native-callback" and "graph input" in reasons[0].message
    assert reasons[0].lineno == line_of(g, "# BREAK")
    traced = pyinterp.trace(g, backend="aot_eager")
    for i in range(3):
        w = fresh(3, 4, seed=i, requires_grad=True)
        w2 = w.detach().clone().requires_grad_()
        a, a2 = w * 1, w2 * 1
        assert_same(traced(a), g(a2))
        assert_same(a, a2, "written input")
        traced(w * 1).sum().backward()
        g(w2 * 1).sum().backward()
        assert_same(w.grad, w2.grad, "grad")


def test_mark_dirty_of_a_leaf_that_requires_grad_raises_eagers_error():
    def f(x):
        return InplaceLeakyReLU.apply(x, 0.1)

    raises_same(pyinterp.trace(f, backend="eager"), f, fresh(3, requires_grad=True))


def test_input_written_without_mark_dirty_keeps_its_break():
    def f(x):
        return InplaceDoubleUnmarked.apply(x * 1) + 1  # BREAK

    reasons = pyinterp.explain(f, fresh(3)).break_reasons
    assert reasons[0].kind == "native-callback" and "mark_dirty" in reasons[0].message
    traced = pyinterp.trace(f, backend="eager")
    for i in range(3):
        run_both(traced, f, fresh(3, seed=i))


def test_plain_function_graph_runs_on_hits():
    """The node's target is named in the graph's code (it once printed as
    ``torch.autograd.function.apply``, which does not exist)."""
    def f(x, w):
        return InplaceLeakyReLU.apply(x @ w, 0.1).sum(-1)

    counter = _calls_against_eager(f, _dirty_inputs)
    gm = counter.graphs[0]
    assert "torch.autograd.function.apply" not in gm.code
    x, w = _dirty_inputs(0)
    assert_same(gm(x, w)[0], f(x, w))
