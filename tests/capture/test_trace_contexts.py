"""Context managers and cached logging inside traced code: recorded in the
graph or replayed, with no break, and equal to eager over several calls."""
import functools
import logging

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

LIN = torch.nn.Linear(4, 4)


def under_autocast(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = LIN(x)
    return y.float() * 2, y.dtype


def under_no_grad(x):
    with torch.no_grad():
        y = LIN(x)
    return y * 2, y.requires_grad


@pytest.mark.parametrize("fn", [under_autocast, under_no_grad], ids=lambda f: f.__name__)
def test_context_is_recorded_in_the_graph(fn):
    explanation = pyinterp.explain(fn, torch.randn(2, 4))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    traced = pyinterp.trace(fn, backend="eager")
    for seed in range(3):
        x = torch.randn(2, 4, generator=torch.Generator().manual_seed(seed))
        (a, a_meta), (b, b_meta) = traced(x), fn(x)
        torch.testing.assert_close(a, b)
        assert a_meta == b_meta
        assert a.requires_grad == b.requires_grad
    assert not torch.is_autocast_enabled("cpu") and torch.is_grad_enabled()


_LOG = logging.getLogger("pyinterp.tests.cached")


@functools.lru_cache(None)
def _warn_once(logger, message):
    logger.warning(message)


logging.Logger.pyinterp_test_warn_once = _warn_once


def warns_once(x):
    _LOG.pyinterp_test_warn_once("shape %s" % (tuple(x.shape),))
    return x + 1


def test_cached_logger_method_is_replayed_once_per_message(caplog):
    _warn_once.cache_clear()
    traced = pyinterp.trace(warns_once, backend="eager")
    assert pyinterp.explain(warns_once, torch.ones(2)).graph_break_count == 0
    _warn_once.cache_clear()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="pyinterp.tests.cached"):
        for _ in range(3):
            torch.testing.assert_close(traced(torch.ones(2)), torch.ones(2) + 1)
    assert [r.getMessage() for r in caplog.records] == ["shape (2,)"]


def test_module_hooks_added_between_calls_are_honoured():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    traced = pyinterp.trace(model, backend="eager")
    x = torch.randn(3, 4)
    torch.testing.assert_close(traced(x), model(x))
    torch.testing.assert_close(traced(x), model(x))
    seen = []
    handle = model[1].register_forward_hook(lambda mod, inp, out: seen.append(out.shape) or out * 2)
    try:
        torch.testing.assert_close(traced(x), model(x))
        assert len(seen) == 2  # the hook ran for the traced call and for eager
        torch.testing.assert_close(traced(x), model(x))
    finally:
        handle.remove()
    torch.testing.assert_close(traced(x), model(x))
    glob = torch.nn.modules.module.register_module_forward_pre_hook(
        lambda mod, inp: tuple(i + 1 for i in inp) if isinstance(mod, torch.nn.ReLU) else None)
    try:
        torch.testing.assert_close(traced(x), model(x))
    finally:
        glob.remove()
    torch.testing.assert_close(traced(x), model(x))


def test_backward_hook_added_between_calls_is_honoured():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    traced = pyinterp.trace(model, backend="eager")
    x = torch.randn(3, 4)
    traced(x).sum().backward()
    seen = []
    handle = model[2].register_full_backward_pre_hook(lambda mod, grad: seen.append(1))
    try:
        model.zero_grad()
        traced(x).sum().backward()
        assert seen == [1], "the hook registered after the capture must run (a guard miss)"
    finally:
        handle.remove()
