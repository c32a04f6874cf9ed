"""Custom ``torch.autograd.Function``s in a traced function.

A Function whose forward and backward are pure is one node of the graph
(its target is ``MyFn.apply``): no graph break, and the user's backward is
the one autograd runs, with the eager backend and with Inductor.  One whose
code cannot be captured (a print, a write outside, a data-dependent Python
value) is a ``native-callback`` break and runs natively with its backward.
Every test compares outputs and input/parameter gradients with eager over
several calls (the first a capture, the others cache hits).
"""
import warnings

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from torch.autograd.function import once_differentiable  # noqa: E402

from trace_support import (assert_hits_ran_graph, assert_same, count_captures,  # noqa: E402
                           fresh, traced_counting)

CALLS = 3
SCALE = 4.0  # read by Quantize's forward: a guarded global


class Quantize(torch.autograd.Function):
    """A straight-through rounding quantizer (a non-tensor argument, a
    saved tensor, an attribute on ctx, a backward that is not the
    derivative of the forward)."""

    @staticmethod
    def forward(ctx, x, bits):
        ctx.save_for_backward(x)
        ctx.bits = bits
        return torch.round(x * SCALE * bits) / (SCALE * bits)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x.abs() < 1).to(g.dtype) * 3.0, None


class Swish(torch.autograd.Function):
    """A memory-efficient activation: saves only its input, recomputes."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return g * (s * (1 + x * (1 - s)))


class MaxWithIndex(torch.autograd.Function):
    """Two outputs, the index one marked non-differentiable."""

    @staticmethod
    def forward(ctx, x):
        value, index = x.max(dim=-1)
        ctx.mark_non_differentiable(index)
        ctx.save_for_backward(x, index)
        return value, index

    @staticmethod
    def backward(ctx, g_value, g_index):
        x, index = ctx.saved_tensors
        grad = torch.zeros_like(x)
        return grad.scatter(-1, index.unsqueeze(-1), g_value.unsqueeze(-1))


class OnceScaled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x * factor

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        return g * ctx.factor * 2, None


class ScaledMul(torch.autograd.Function):
    """Gradients only for the inputs that need them (``needs_input_grad``)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = g * b * 5 if ctx.needs_input_grad[0] else None
        gb = g * a * 7 if ctx.needs_input_grad[1] else None
        return ga, gb


class GradReverse(torch.autograd.Function):
    """Domain adaptation's gradient reversal: its output is a view of its input."""

    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g.neg() * ctx.alpha, None


class CubeSetupContext(torch.autograd.Function):
    """The ``setup_context`` style (forward without ctx)."""

    @staticmethod
    def forward(x, power):
        return x ** power

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, power = inputs
        ctx.save_for_backward(x)
        ctx.power = power

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ctx.power * x ** (ctx.power - 1) * 2, None


def grads_against_eager(fn, make_inputs, calls=CALLS, backend="eager", **options):
    """Run ``fn`` eagerly and traced on equal inputs ``calls`` times;
    compare outputs and the gradients of every input that requires grad
    after ``sum of outputs .backward()``.  Returns the counter."""
    traced, counter = traced_counting(fn, **options) if backend == "eager" else \
        (pyinterp.trace(fn, backend=backend, **options), None)
    for i in range(calls):
        e_inputs = make_inputs(i)
        t_inputs = [t.detach().clone().requires_grad_(t.requires_grad) for t in e_inputs]
        expected = fn(*e_inputs)
        actual = traced(*t_inputs)
        assert_same(actual, expected)
        _backward(actual)
        _backward(expected)
        for te, tt in zip(e_inputs, t_inputs):
            assert_same(tt.grad, te.grad, "grad")
    return counter


def _backward(out):
    outputs = out if isinstance(out, tuple) else (out,)
    total = sum(o.sum() for o in outputs if o.requires_grad)
    total.backward()


def _no_breaks(fn, *args):
    explanation = pyinterp.explain(fn, *args)
    assert explanation.graph_break_count == 0, explanation.break_reasons
    return explanation


def f_quantize(x, w):
    return Quantize.apply(x @ w, 2).sum(-1).relu()


def f_swish(x):
    return Swish.apply(x.cos() * 2) + 1


def f_max(x):
    value, index = MaxWithIndex.apply(x * 3)
    return value.sin(), index


def f_once(x):
    return OnceScaled.apply(x.exp(), 1.5).tanh()


def f_scaled_mul(a, b):
    return ScaledMul.apply(a + 1, b)


def f_reverse(x):
    return GradReverse.apply(x, 0.5) * 2  # (a view of the graph's input)


def f_cube(x):
    return CubeSetupContext.apply(x + 1, 3)


def two(i):
    return [fresh(3, 4, seed=i, requires_grad=True), fresh(4, 5, seed=10 + i, requires_grad=True)]


def one(i):
    return [fresh(3, 4, seed=i, requires_grad=True)]


@pytest.mark.parametrize("fn, make", [
    (f_quantize, two), (f_swish, one), (f_max, one), (f_once, one), (f_cube, one),
    (f_reverse, one),
    (f_scaled_mul, lambda i: [fresh(3, seed=i, requires_grad=True),
                              fresh(3, seed=9 + i, requires_grad=True)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_pure_function_is_one_node_with_the_users_backward(fn, make):
    counter = grads_against_eager(fn, make)
    assert count_captures(counter) == 1
    assert_hits_ran_graph(counter, CALLS - 1)
    ops = [n.target for n in counter.graphs[0].graph.nodes if n.op == "call_function"]
    assert any(getattr(t, "__name__", "") == "apply" for t in ops), ops
    _no_breaks(fn, *make(0))


@pytest.mark.parametrize("fn, make", [(f_quantize, two), (f_max, one), (f_once, one)],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_fullgraph_accepts_a_pure_function(fn, make):
    grads_against_eager(fn, make, fullgraph=True)


def test_needs_input_grad_follows_which_inputs_require_grad():
    """Only ``b`` requires grad on some calls: the guard on requires_grad
    recompiles, and the backward sees the right ``needs_input_grad``."""
    def make(i):
        return [fresh(3, seed=i, requires_grad=i % 2 == 0), fresh(3, seed=5 + i, requires_grad=True)]

    counter = grads_against_eager(f_scaled_mul, make, calls=4)
    assert count_captures(counter) == 2


def test_no_grad_inputs_run_the_forward_only():
    def make(i):
        return [fresh(3, 4, seed=i)]

    traced, counter = traced_counting(f_swish)
    for i in range(CALLS):
        (x,) = make(i)
        assert_same(traced(x.clone()), f_swish(x))
    assert count_captures(counter) == 1


def test_parameters_of_a_module_get_the_users_gradients():
    class QuantLinear(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(fresh(4, 4, seed=3))

        def forward(self, x):
            return Quantize.apply(x, 2) @ Quantize.apply(self.weight, 1)

    eager_m, traced_m = QuantLinear(), QuantLinear()
    traced, counter = traced_counting(traced_m)
    for i in range(CALLS):
        x = fresh(2, 4, seed=i, requires_grad=True)
        xt = x.detach().clone().requires_grad_()
        expected, actual = eager_m(x), traced(xt)
        assert_same(actual, expected)
        expected.square().sum().backward()
        actual.square().sum().backward()
        assert_same(xt.grad, x.grad)
        assert_same(traced_m.weight.grad, eager_m.weight.grad)
    assert count_captures(counter) == 1
    _no_breaks(traced_m.forward, fresh(2, 4, requires_grad=True))


def test_a_global_the_forward_reads_is_guarded():
    global SCALE
    traced, counter = traced_counting(f_quantize)
    try:
        for scale in (4.0, 4.0, 8.0, 8.0):
            SCALE = scale
            x, w = two(0)
            assert_same(traced(x, w), f_quantize(x, w))
    finally:
        SCALE = 4.0
    assert count_captures(counter) == 2


def test_a_replaced_backward_is_seen():
    class Twice(Doubling):  # (its backward is its base's until step 2)
        pass

    def f(x):
        return Twice.apply(x.sin())

    traced, counter = traced_counting(f)
    for step in range(4):
        if step == 2:
            Twice.backward = staticmethod(lambda ctx, g: g * 100)
        x = fresh(3, seed=step, requires_grad=True)
        xt = x.detach().clone().requires_grad_()
        f(x).sum().backward()
        traced(xt).sum().backward()
        assert_same(xt.grad, x.grad)
    assert count_captures(counter) == 2


def test_inductor_traces_forward_and_the_users_backward():
    """The default backend: AOTAutograd traces the node's forward and the
    user's backward (not the derivative of the forward: ``* 3.0``); a
    graph Inductor failed to compile would warn and run eagerly."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grads_against_eager(f_quantize, two, backend="inductor")
        grads_against_eager(f_max, one, backend="inductor")
        grads_against_eager(f_once, one, backend="inductor")
        grads_against_eager(f_reverse, one, backend="inductor")
        grads_against_eager(lambda x: ClampedReLU.apply(x * 3), one, backend="inductor")
    failed = [str(w.message) for w in caught if "failed to compile" in str(w.message)]
    assert not failed, failed


# -- code that cannot be captured: a break, the call natively --------------

LOG = []


class BackwardTimesThree(torch.autograd.Function):
    """The backward the Functions below inherit (a class lookup through a base)."""

    @staticmethod
    def backward(ctx, g):
        return g * 3


class Printing(BackwardTimesThree):
    @staticmethod
    def forward(ctx, x):
        print("forward of Printing")
        return x * 2


class AppendsToGlobal(BackwardTimesThree):
    @staticmethod
    def forward(ctx, x):
        LOG.append("forward")
        return x * 2


class BranchesOnItem(BackwardTimesThree):
    @staticmethod
    def forward(ctx, x):
        if x.sum().item() > 0:
            return x * 2
        return x * -4


class BranchesOnTensor(BackwardTimesThree):
    @staticmethod
    def forward(ctx, x):
        if x.sum() > 0:  # (not merged into a torch.where: a traced backend could not run it)
            return x * 2
        return x * -4


class Doubling(BackwardTimesThree):
    @staticmethod
    def forward(ctx, x):
        return x * 2


def test_an_inherited_backward_is_captured():
    def f(x):
        return Doubling.apply(x.cos()) + 1

    counter = grads_against_eager(f, one)
    assert count_captures(counter) == 1
    _no_breaks(f, *one(0))


class LogsInBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        LOG.append("backward")
        return g * 3


OFFSET = fresh(3, seed=42)


class ReadsOutsideTensor(BackwardTimesThree):
    @staticmethod
    def forward(ctx, x):
        return x + OFFSET  # (a traced backend would bake OFFSET into the node)


class SetupContextDefaults(torch.autograd.Function):
    """``apply`` binds the default into the inputs: not captured."""

    @staticmethod
    def forward(x, factor=2.0):
        return x * factor

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.factor = inputs[1]

    @staticmethod
    def backward(ctx, g):
        return g * ctx.factor * 3, None


@pytest.mark.parametrize("cls", [Printing, AppendsToGlobal, BranchesOnItem, BranchesOnTensor,
                                 LogsInBackward, ReadsOutsideTensor, SetupContextDefaults],
                         ids=lambda c: c.__name__)
def test_code_that_cannot_be_captured_breaks_and_keeps_its_backward(cls, capsys):
    def f(x):
        return cls.apply(x.cos()) + 1

    def make(i):
        return [fresh(3, seed=i, requires_grad=True, offset=(-3.0 if i == 1 else 0.0))]

    LOG.clear()
    grads_against_eager(f, make, backend="eager")
    assert len(set(LOG)) <= 1 and len(LOG) in (0, 2 * CALLS)  # every call, as eager
    out = capsys.readouterr().out
    assert out.count("forward of Printing") == (2 * CALLS if cls is Printing else 0)
    explanation = pyinterp.explain(f, *make(0))
    # (explain goes on after a break: the forward run natively may break again)
    assert explanation.graph_break_count == (2 if cls is BranchesOnTensor else 1)
    record = explanation.break_reasons[0]
    assert record.kind == "native-callback" and cls.__name__ in record.message
    with pytest.raises(pyinterp.GraphBreakError) as info:
        pyinterp.trace(f, backend="eager", fullgraph=True)(*make(0))
    assert info.value.kind == "native-callback"


class RaisesOnOddLength(BackwardTimesThree):
    @staticmethod
    def forward(ctx, x):
        if x.shape[0] % 2:
            raise ValueError("odd length %d" % x.shape[0])
        return x * 2


class ReadsCtxInternals(BackwardTimesThree):
    """``ctx.to_save`` exists on the real ctx only: the stand-in lacks it."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * (2 if ctx.to_save is not None else 3)


@pytest.mark.parametrize("fullgraph", [False, True])
def test_an_exception_in_the_forward_is_eagers(fullgraph):
    def f(x):
        return RaisesOnOddLength.apply(x.cos())

    traced = pyinterp.trace(f, backend="eager", fullgraph=fullgraph)
    for n in (3, 3):
        with pytest.raises(ValueError, match="odd length 3"):
            traced(fresh(n, requires_grad=True))
    grads_against_eager(f, lambda i: [fresh(4, seed=i, requires_grad=True)], fullgraph=fullgraph)


def test_what_only_the_real_ctx_has_is_a_break():
    def f(x):
        return ReadsCtxInternals.apply(x.cos())

    grads_against_eager(f, one)
    (record,) = pyinterp.explain(f, *one(0)).break_reasons
    assert record.kind == "native-callback" and "speculative run only" in record.message


class ClampedReLU(torch.autograd.Function):
    """PyTorch's tutorial ReLU: the backward writes its own clone in place."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        out = x.clone()
        out.clamp_(min=0)
        return out

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        grad_input = g.clone()
        grad_input[x < 0] = 0
        return grad_input * 2


class WritesAViewOfItsInput(BackwardTimesThree):
    @staticmethod
    def forward(ctx, x):
        x.detach()[0] = 0  # (its input's storage: refused before it is written)
        return x * 2


def test_in_place_writes_of_its_own_tensors_are_captured():
    def f(x):
        return ClampedReLU.apply(x * 3)

    counter = grads_against_eager(f, one)
    assert count_captures(counter) == 1
    _no_breaks(f, *one(0))


class ScalesAViewOfItsInput(BackwardTimesThree):
    @staticmethod
    def forward(ctx, x):
        x.detach().view(-1)[:2].mul_(5)  # (made by the arm, on its input's storage)
        return x * 2


@pytest.mark.parametrize("cls", [WritesAViewOfItsInput, ScalesAViewOfItsInput],
                         ids=lambda c: c.__name__)
def test_in_place_writes_of_an_inputs_storage_break(cls):
    def f(x):
        return cls.apply(x * 3)

    grads_against_eager(f, one)
    (record,) = pyinterp.explain(f, *one(0)).break_reasons
    assert record.kind == "native-callback" and "speculative arm" in record.message
