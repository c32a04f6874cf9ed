"""pyinterp.trace and autograd: gradients through traced code equal eager
gradients, over several optimizer steps (parameters updated in place)."""
import copy
import shutil

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from torch import nn  # noqa: E402

from trace_support import (  # noqa: E402
    assert_same, count_captures, fresh, traced_counting,
)


def _mlp(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))


def _grads(module):
    return {name: p.grad for name, p in module.named_parameters()}


def test_mlp_backward_gives_same_grads():
    m_e = _mlp()
    m_t = copy.deepcopy(m_e)
    traced, counter = traced_counting(m_t)
    for i in range(3):
        x = fresh(5, 4, seed=i)
        m_e.zero_grad()
        m_t.zero_grad()
        loss_e = m_e(x).pow(2).sum()
        loss_t = traced(x).pow(2).sum()
        loss_e.backward()
        loss_t.backward()
        assert_same(loss_t, loss_e)
        assert_same(_grads(m_t), _grads(m_e))
    assert count_captures(counter) == 1


def test_loss_inside_traced_function_backward():
    m_e = _mlp(1)
    m_t = copy.deepcopy(m_e)

    def step_e(x, y):
        return nn.functional.mse_loss(m_e(x), y)

    def step_t(x, y):
        return nn.functional.mse_loss(m_t(x), y)

    traced = pyinterp.trace(step_t, backend="eager")
    for i in range(3):
        x, y = fresh(5, 4, seed=i), fresh(5, 3, seed=i + 10)
        m_e.zero_grad()
        m_t.zero_grad()
        step_e(x, y).backward()
        traced(x, y).backward()
        assert_same(_grads(m_t), _grads(m_e))


def test_training_loop_with_optimizer_matches_eager():
    m_e = _mlp(2)
    m_t = copy.deepcopy(m_e)
    opt_e = torch.optim.SGD(m_e.parameters(), lr=0.1, momentum=0.9)
    opt_t = torch.optim.SGD(m_t.parameters(), lr=0.1, momentum=0.9)
    traced, counter = traced_counting(m_t)
    x, y = fresh(6, 4), fresh(6, 3, seed=1)
    for step in range(4):
        opt_e.zero_grad()
        opt_t.zero_grad()
        loss_e = nn.functional.mse_loss(m_e(x), y)
        loss_t = nn.functional.mse_loss(traced(x), y)
        assert_same(loss_t, loss_e, "loss at step %d" % step)
        loss_e.backward()
        loss_t.backward()
        opt_e.step()
        opt_t.step()
        assert_same(dict(m_t.named_parameters()), dict(m_e.named_parameters()))
    # the optimizer updates parameters in place: no recompilation needed
    assert count_captures(counter) == 1


def test_grad_with_respect_to_input():
    def f(x, w):
        return (x.sin() * w).sum()

    traced = pyinterp.trace(f, backend="eager")
    for i in range(3):
        w = fresh(3, seed=i + 5)
        x_e = fresh(3, seed=i, requires_grad=True)
        x_t = fresh(3, seed=i, requires_grad=True)
        f(x_e, w).backward()
        traced(x_t, w).backward()
        assert_same(x_t.grad, x_e.grad)


def test_function_taking_parameters_as_arguments():
    def f(x, w1, b1, w2):
        h = torch.relu(x @ w1 + b1)
        return (h @ w2).mean()

    traced = pyinterp.trace(f, backend="eager")
    for i in range(3):
        params_e = [fresh(4, 5, seed=i, requires_grad=True), fresh(5, seed=i + 1, requires_grad=True),
                    fresh(5, 2, seed=i + 2, requires_grad=True)]
        params_t = [p.detach().clone().requires_grad_(True) for p in params_e]
        x = fresh(3, 4, seed=i + 3)
        f(x, *params_e).backward()
        traced(x, *params_t).backward()
        for pt, pe in zip(params_t, params_e):
            assert_same(pt.grad, pe.grad)


def test_gradient_accumulation_over_calls():
    m_e = _mlp(3)
    m_t = copy.deepcopy(m_e)
    traced = pyinterp.trace(m_t, backend="eager")
    for i in range(3):
        x = fresh(2, 4, seed=i)
        m_e(x).sum().backward()
        traced(x).sum().backward()
    assert_same(_grads(m_t), _grads(m_e))


def test_frozen_parameter_between_calls():
    m_e = _mlp(4)
    m_t = copy.deepcopy(m_e)
    traced = pyinterp.trace(m_t, backend="eager")
    x = fresh(2, 4)
    for freeze in [False, True, False]:
        for m in (m_e, m_t):
            m.zero_grad(set_to_none=True)
            m[0].weight.requires_grad_(not freeze)
        m_e(x).sum().backward()
        traced(x).sum().backward()
        assert (m_t[0].weight.grad is None) == freeze
        assert_same(_grads(m_t), _grads(m_e))


def test_no_grad_inside_function_blocks_gradient():
    def f(w, x):
        with torch.no_grad():
            scale = (w * w).sum()
        return (w * x * scale).sum()

    traced = pyinterp.trace(f, backend="eager")
    for i in range(3):
        w_e = fresh(3, seed=i, requires_grad=True)
        w_t = fresh(3, seed=i, requires_grad=True)
        x = fresh(3, seed=i + 1)
        f(w_e, x).backward()
        traced(w_t, x).backward()
        assert_same(w_t.grad, w_e.grad)


def test_no_grad_around_call_then_training_call():
    m_e = _mlp(5)
    m_t = copy.deepcopy(m_e)
    traced = pyinterp.trace(m_t, backend="eager")
    x = fresh(2, 4)
    for _ in range(2):
        with torch.no_grad():
            out = traced(x)
        assert not out.requires_grad
        assert_same(out, m_e(x).detach())
        m_e.zero_grad()
        m_t.zero_grad()
        m_e(x).sum().backward()
        traced(x).sum().backward()
        assert_same(_grads(m_t), _grads(m_e))


def test_dropout_training_with_seed_grads_match():
    torch.manual_seed(6)
    m_e = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.Linear(4, 1))
    m_t = copy.deepcopy(m_e)
    traced = pyinterp.trace(m_t, backend="eager")
    x = fresh(3, 4)
    for seed in range(3):
        m_e.zero_grad()
        m_t.zero_grad()
        torch.manual_seed(seed)
        m_e(x).sum().backward()
        torch.manual_seed(seed)
        traced(x).sum().backward()
        assert_same(_grads(m_t), _grads(m_e))


def test_eval_mode_then_train_mode_grads():
    torch.manual_seed(7)
    m_e = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
    m_t = copy.deepcopy(m_e)
    traced = pyinterp.trace(m_t, backend="eager")
    x = fresh(5, 4)
    for mode in ["train", "eval", "train"]:
        getattr(m_e, mode)()
        getattr(m_t, mode)()
        m_e.zero_grad()
        m_t.zero_grad()
        m_e(x).sum().backward()
        traced(x).sum().backward()
        assert_same(_grads(m_t), _grads(m_e))
        assert_same(m_t[1].running_mean, m_e[1].running_mean)


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                    reason="inductor on CPU needs a C compiler")
def test_inductor_small_mlp_grads_match():
    torch.manual_seed(0)
    m_e = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    m_t = copy.deepcopy(m_e)
    traced = pyinterp.trace(m_t, backend="inductor")
    for i in range(2):
        x = fresh(2, 3, seed=i)
        m_e.zero_grad()
        m_t.zero_grad()
        loss_e = m_e(x).sum()
        loss_t = traced(x).sum()
        loss_e.backward()
        loss_t.backward()
        assert_same(loss_t, loss_e, rtol=1e-4, atol=1e-5)
        for (name, pt), pe in zip(m_t.named_parameters(), m_e.parameters()):
            torch.testing.assert_close(pt.grad, pe.grad, rtol=1e-4, atol=1e-5, msg=name)


def test_inference_mode_inside_function():
    def f(w, x):
        with torch.inference_mode():
            return w * x

    traced = pyinterp.trace(f, backend="eager")
    w = fresh(2, requires_grad=True)
    for i in range(3):
        x = fresh(2, seed=i)
        out, expected = traced(w, x), f(w, x)
        assert_same(out, expected)
        assert out.is_inference() == expected.is_inference(), "call %d" % i


def test_enable_grad_inside_function_called_under_no_grad():
    def f(w):
        with torch.enable_grad():
            return (w * 2).sum()

    traced = pyinterp.trace(f, backend="eager")
    for i in range(3):
        w_t, w_e = fresh(2, seed=i, requires_grad=True), fresh(2, seed=i, requires_grad=True)
        with torch.no_grad():
            out, expected = traced(w_t), f(w_e)
        assert_same(out, expected)
        out.backward()
        expected.backward()
        assert_same(w_t.grad, w_e.grad)


def test_inference_mode_around_call():
    def f(x):
        return x * 2

    traced = pyinterp.trace(f, backend="eager")
    x = fresh(2)
    for inference in [False, True, False, True]:
        if inference:
            with torch.inference_mode():
                out = traced(x)
            assert out.is_inference()
        else:
            out = traced(x)
            assert not out.is_inference()
        assert_same(out, x * 2)


def test_inplace_on_non_leaf_input_backward():
    def f(x):
        x.mul_(3)
        return x.sum()

    traced = pyinterp.trace(f, backend="eager")
    for i in range(3):
        w_t, w_e = fresh(2, seed=i, requires_grad=True), fresh(2, seed=i, requires_grad=True)
        x_t, x_e = w_t * 2, w_e * 2
        out, expected = traced(x_t), f(x_e)
        assert_same(out, expected)
        assert_same(x_t, x_e)
        out.backward()
        expected.backward()
        assert_same(w_t.grad, w_e.grad)


def test_index_assignment_on_clone_backward():
    def f(x, idx):
        y = x.clone()
        y[idx] = 0
        return (y * y).sum()

    traced = pyinterp.trace(f, backend="eager")
    for i in range(4):
        w_t, w_e = fresh(3, seed=i, requires_grad=True), fresh(3, seed=i, requires_grad=True)
        traced(w_t, i % 2).backward()
        f(w_e, i % 2).backward()
        assert_same(w_t.grad, w_e.grad)
