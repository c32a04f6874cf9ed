"""Gradient hooks on intermediates, lazy modules and activation
checkpointing in a traced function (issue 18's ``more_idioms`` cases).

* ``h.register_hook(fn)`` on a tensor the graph computes is part of the
  graph's backward (grad_hooks.py); a hook the graph cannot hold keeps the
  ``native-callback`` break;
* a lazy module's first call materializes its parameters natively before
  the capture (lazy_modules.py): one graph, every later call a hit;
* ``torch.utils.checkpoint.checkpoint(fn, ..., use_reentrant=False)``
  captures ``fn``'s ops inline (checkpointing.py), or keeps the
  ``compiler-disable`` break where eager's recomputation could differ.

Each test runs the traced model and an eager twin (a deep copy) on the
same inputs over several calls and compares outputs, parameter gradients,
module state and the global RNG state; with ``fullgraph=True`` no break
may happen.
"""
import copy
import warnings

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from torch import nn  # noqa: E402

from trace_support import assert_same  # noqa: E402

CALLS = 4
DIM = 8
SCALE = 0.5  # read by scaled_grad: a guarded global


def clip_grad(g):
    return g.clamp(-0.01, 0.01)


def scaled_grad(g):
    return g * SCALE


class HookedActivation(nn.Module):
    """The benchmark's ``grad_hook``, with a choice of hooks."""

    def __init__(self, *hooks):
        super().__init__()
        self.fc1 = nn.Linear(DIM, DIM)
        self.fc2 = nn.Linear(DIM, 2)
        self.hooks = hooks

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if h.requires_grad:
            for hook in self.hooks:
                h.register_hook(hook)
        return self.fc2(h)


class LambdaHook(HookedActivation):
    """The hook a lambda made in ``forward`` (a new function each call)."""

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h.register_hook(lambda g: g.clamp(-0.01, 0.01))
        return self.fc2(h), h * 3  # (two uses after the hook, one a result)


class LazyHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.LazyLinear(3)
        self.out = nn.Sequential(nn.ReLU(), nn.LazyLinear(2))

    def forward(self, x):
        return self.out(self.fc(x))


class Checkpointed(nn.Module):
    def __init__(self, p=0.0, preserve_rng_state=True):
        super().__init__()
        self.block1 = nn.Sequential(nn.Linear(DIM, DIM), nn.GELU(), nn.Dropout(p))
        self.block2 = nn.Sequential(nn.Linear(DIM, DIM), nn.GELU())
        self.preserve = preserve_rng_state

    def forward(self, x):
        x = torch.utils.checkpoint.checkpoint(self.block1, x, use_reentrant=False,
                                              preserve_rng_state=self.preserve)
        return self.block2(x)


def run_against_eager(model, backend="eager", fullgraph=True, exact=True, calls=CALLS):
    """Train-step both: outputs, gradients, parameters and RNG state equal
    to eager's on every call; returns the traced callable."""
    eager = copy.deepcopy(model)
    traced = pyinterp.trace(model, backend=backend, fullgraph=fullgraph)
    tol = {"rtol": 0, "atol": 0} if exact else {}
    for i in range(calls):
        x = torch.randn(4, DIM, generator=torch.Generator().manual_seed(i))
        state = torch.get_rng_state()
        actual = traced(x)
        after = torch.get_rng_state()
        torch.set_rng_state(state)
        expected = eager(x)
        assert torch.equal(after, torch.get_rng_state()), "RNG state differs on call %d" % i
        assert_same(actual, expected, **tol)
        total = lambda out: sum(o.sum() for o in out) if type(out) is tuple else out.sum()  # noqa: E731
        state = torch.get_rng_state()  # (a recomputation may draw numbers: the same ones)
        total(actual).backward()
        torch.set_rng_state(state)
        total(expected).backward()
        for (name, p), q in zip(model.named_parameters(), eager.parameters()):
            assert p.grad is not None, name
            assert_same(p.grad, q.grad, "%s.grad" % name, **tol)
        model.zero_grad()
        eager.zero_grad()
        assert_same(model, eager, "module")
    return traced


def only_graph_entries(traced, entries=1):
    infos = traced.cache_entries()
    assert [e.kind for e in infos] == ["graph"] * entries, [(e.kind, e.break_reasons)
                                                            for e in infos]
    return infos


# -- gradient hooks ------------------------------------------------------------

@pytest.mark.parametrize("make", [
    LambdaHook,
    lambda: HookedActivation(clip_grad, scaled_grad),  # (the order shows: clamp, then scale)
    lambda: LazyHead(),
    lambda: Checkpointed(),
    lambda: Checkpointed(p=0.5),  # (dropout, preserve_rng_state=True)
], ids=["lambda_hook", "two_hooks_in_order", "lazy_modules", "checkpoint", "checkpoint_dropout"])
def test_captured_whole_and_later_calls_hit(make):
    torch.manual_seed(0)
    traced = run_against_eager(make())
    assert only_graph_entries(traced)[0].hits == CALLS - 1


def test_hook_returning_none_keeps_the_gradient():
    torch.manual_seed(0)
    run_against_eager(HookedActivation(lambda g: None))


def test_a_global_the_hook_reads_is_guarded():
    global SCALE
    torch.manual_seed(0)
    model = HookedActivation(scaled_grad)
    traced = run_against_eager(model, calls=2)
    try:
        SCALE = 3.0
        run_against_eager(model, calls=2)  # (a fresh trace: eager's side)
        x = torch.randn(4, DIM)
        eager = copy.deepcopy(model)
        traced(x).sum().backward()
        eager(x).sum().backward()
        assert_same(model.fc1.weight.grad, eager.fc1.weight.grad, rtol=0, atol=0)
        assert len(traced.cache_entries()) == 2  # the guard failed: captured again
    finally:
        SCALE = 0.5


def test_no_hook_under_no_grad():
    torch.manual_seed(0)
    model = HookedActivation(clip_grad)
    traced = pyinterp.trace(model, backend="eager", fullgraph=True)
    with torch.no_grad():
        for _ in range(2):
            x = torch.randn(4, DIM)
            assert_same(traced(x), model(x), rtol=0, atol=0)


def test_inductor_runs_the_hook_in_its_backward():
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_against_eager(HookedActivation(clip_grad, scaled_grad), backend="inductor",
                          exact=False, calls=2)


class HookAfterAUse(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        early = h * 2  # eager's hook sees this use's gradient too
        h.register_hook(clip_grad)
        return early + h


class HookWithClosure(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        bound = 0.01
        h = self.fc(x)
        h.register_hook(lambda g: g.clamp(-bound, bound))
        return h.sum(1)


class HookRemoved(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        handle = h.register_hook(clip_grad)
        out = h * 2
        handle.remove()
        return out


class HookWritesOutside(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)
        self.seen = []

    def forward(self, x):
        h = self.fc(x)
        h.register_hook(self.seen.append)
        return h * 2


SEEN = []


def record_grad_norm(g):
    SEEN.append(g.norm())  # (an outside write: eager does it at backward time)


class HookFunctionWritesOutside(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        h.register_hook(record_grad_norm)
        return h * 2


class HookOnAnInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        self.fc.weight.register_hook(clip_grad)  # (eager keeps it after the call)
        return self.fc(x)


@pytest.mark.parametrize("cls", [HookAfterAUse, HookWithClosure, HookRemoved,
                                 HookWritesOutside, HookFunctionWritesOutside, HookOnAnInput])
def test_hooks_the_graph_cannot_hold_still_break(cls):
    torch.manual_seed(0)
    x = torch.randn(4, DIM)
    with pytest.raises(pyinterp.GraphBreakError) as info:
        pyinterp.trace(cls(), backend="eager", fullgraph=True)(x)
    assert info.value.kind == "native-callback"


@pytest.mark.parametrize("cls", [HookAfterAUse, HookWithClosure, HookRemoved])
def test_hooks_the_graph_cannot_hold_run_as_eager_without_fullgraph(cls):
    torch.manual_seed(0)
    run_against_eager(cls(), fullgraph=False)


# -- lazy modules --------------------------------------------------------------

def test_lazy_modules_are_materialized_once():
    torch.manual_seed(0)
    model = LazyHead()
    traced = run_against_eager(model, calls=2)
    assert type(model.fc) is nn.Linear and type(model.out[1]) is nn.Linear
    weight = model.fc.weight
    traced(torch.randn(4, DIM))
    assert model.fc.weight is weight  # (materialized once, kept)


def test_lazy_module_with_inductor():
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_against_eager(LazyHead(), backend="inductor", exact=False, calls=2)


def test_lazy_module_read_before_its_call_captures_again():
    # A read through the uninitialized module (its class then LazyLinear)
    # keeps its guards: the second call captures once more, then hits.
    class ReadFirst(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.LazyLinear(3)

        def forward(self, x):
            scale = 2.0 if self.fc.out_features == 3 else 1.0
            return self.fc(x) * scale

    torch.manual_seed(0)
    traced = run_against_eager(ReadFirst())
    infos = only_graph_entries(traced, entries=2)
    assert sum(e.hits for e in infos) == CALLS - 2


# -- activation checkpointing ----------------------------------------------------

def test_checkpoint_with_inductor():
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_against_eager(Checkpointed(), backend="inductor", exact=False, calls=2)


def test_checkpoint_with_dropout_without_preserving_rng_state_breaks():
    # Eager's recomputation draws other numbers: the break, then native.
    torch.manual_seed(0)
    model = Checkpointed(p=0.5, preserve_rng_state=False)
    with pytest.raises(pyinterp.GraphBreakError) as info:
        pyinterp.trace(model, backend="eager", fullgraph=True)(torch.randn(4, DIM))
    assert info.value.kind == "compiler-disable"
    assert "random numbers" in str(info.value)
    run_against_eager(Checkpointed(p=0.5, preserve_rng_state=False), fullgraph=False)


class CheckpointCounting(nn.Module):
    """The body writes outside: eager runs it again in the backward."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)
        self.runs = 0

    def body(self, x):
        self.runs += 1
        return self.fc(x).tanh()

    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.body, x, use_reentrant=False)


def test_checkpoint_body_with_an_outside_write_keeps_the_break():
    torch.manual_seed(0)
    with pytest.raises(pyinterp.GraphBreakError) as info:
        pyinterp.trace(CheckpointCounting(), backend="eager", fullgraph=True)(
            torch.randn(4, DIM))
    assert info.value.kind == "compiler-disable"
    run_against_eager(CheckpointCounting(), fullgraph=False)


def test_reentrant_checkpoint_keeps_the_break():
    lin = nn.Linear(DIM, DIM)

    def f(x):
        return torch.utils.checkpoint.checkpoint(lin, x, use_reentrant=True)

    with pytest.raises(pyinterp.GraphBreakError) as info:
        pyinterp.trace(f, backend="eager", fullgraph=True)(torch.randn(4, DIM))
    assert "use_reentrant=False" in str(info.value)
