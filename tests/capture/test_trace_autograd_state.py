"""A tensor's autograd state changed inside the traced function
(``requires_grad_()``, ``retain_grad()``, ``detach_()``, ``t.requires_grad =
...``, any attribute store on a tensor): a graph's outputs do not carry it
(AOTAutograd backends drop it even on the graph's inputs), so each is a
``tensor-attribute-write`` break, and every call gives eager's tensors,
flags and gradients -- with the eager and the AOTAutograd backends."""
import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

from trace_support import assert_same, fresh, line_of  # noqa: E402


def detached_then_requires_grad(x):
    v = (x * 3).detach().requires_grad_()  # the break
    return v, v * x


def flag_assigned(x):
    v = (x * 3).detach()
    v.requires_grad = True  # the break
    return v, v * x


def input_requires_grad(x):
    x.requires_grad_()  # the break
    return x * 2


def retained(x):
    y = x * 2
    y.retain_grad()  # the break
    return y, (y * y).sum()


def tagged(x):
    y = x + 1
    y.tag = "scaled"  # the break
    return y


CASES = [detached_then_requires_grad, flag_assigned, input_requires_grad, retained, tagged]


def _state(out):
    outs = out if isinstance(out, tuple) else (out,)
    return [(o.requires_grad, o.is_leaf, getattr(o, "tag", None)) for o in outs]


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_autograd_state_writes_give_eagers_tensors(fn, backend):
    traced = pyinterp.trace(fn, backend=backend)
    for seed in range(3):
        x_eager = fresh(4, seed=seed, requires_grad=fn is retained)
        x_traced = x_eager.detach().clone().requires_grad_(x_eager.requires_grad)
        expected, actual = fn(x_eager), traced(x_traced)
        assert_same(actual, expected)
        assert _state(actual) == _state(expected)
        assert x_traced.requires_grad == x_eager.requires_grad
        loss_e = sum(o.sum() for o in (expected if isinstance(expected, tuple) else (expected,)))
        loss_t = sum(o.sum() for o in (actual if isinstance(actual, tuple) else (actual,)))
        if loss_e.requires_grad:
            loss_e.backward()
            loss_t.backward()
            assert_same(x_traced.grad, x_eager.grad)
            if fn is retained:
                assert_same(actual[0].grad, expected[0].grad)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_autograd_state_writes_are_breaks_at_their_line(fn):
    record, = pyinterp.explain(fn, fresh(4, requires_grad=fn is retained)).break_reasons
    assert record.kind == "tensor-attribute-write"
    assert record.lineno == line_of(fn, "# the break")
