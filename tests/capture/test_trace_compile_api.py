"""pyinterp.trace as a drop-in for torch.compile: its signature, backend
registry, modes and options, ``disable``, ``dynamic``, ``reset()`` and the
cache entries -- each checked against what torch.compile does with the same
arguments."""
import inspect
import itertools
import warnings

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from torch import nn  # noqa: E402

from trace_support import CountingBackend, assert_same, fresh, raises_same  # noqa: E402

_names = itertools.count()


def _f(x):
    return (x * 2).relu() + 1


class _Net(nn.Module):
    """A small model with Python control flow on a constructor flag."""

    def __init__(self, residual=True):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in range(3))
        self.residual = residual

    def forward(self, x):
        for layer in self.layers:
            y = torch.tanh(layer(x))
            x = x + y if self.residual else y
        return x.sum(dim=-1)


# --------------------------------------------------------------------------
# the signature
# --------------------------------------------------------------------------

def test_signature_has_torch_compile_arguments_and_defaults():
    ours = inspect.signature(pyinterp.trace).parameters
    theirs = inspect.signature(torch.compile).parameters
    for name in ("fullgraph", "dynamic", "mode", "options", "disable"):
        assert ours[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert ours[name].default == theirs[name].default, name
    assert ours["backend"].default == "inductor"
    first = next(iter(ours.values()))
    assert first.name == "model" and first.default is None


# --------------------------------------------------------------------------
# bad input: torch.compile's errors, at trace() time
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    dict(backend="no_such_backend"),
    dict(mode="fastest"),
    dict(options={"no_such_option": 1}),
    dict(options={"max_autotune": "yes"}),
    dict(mode="max-autotune", options={"max_autotune": True}),
], ids=["backend", "mode", "option-name", "option-type", "mode-and-options"])
def test_bad_arguments_raise_torch_compiles_error_at_trace_time(kwargs):
    raises_same(lambda: pyinterp.trace(_f, **kwargs), lambda: torch.compile(_f, **kwargs))


def test_bad_arguments_raise_even_with_disable():
    raises_same(lambda: pyinterp.trace(_f, backend="nope", disable=True),
                lambda: torch.compile(_f, backend="nope", disable=True))


def test_bad_dynamic_value_raises():
    with pytest.raises(ValueError, match="dynamic must be None, True or False"):
        pyinterp.trace(_f, dynamic="yes", backend="eager")


# --------------------------------------------------------------------------
# disable, dynamic
# --------------------------------------------------------------------------

def test_disable_returns_the_function_untouched():
    assert pyinterp.trace(_f, disable=True) is _f
    assert pyinterp.trace(disable=True)(_f) is _f
    model = _Net()
    assert pyinterp.trace(model, disable=True, backend="eager") is model


def test_dynamic_true_serves_every_size_with_one_graph():
    backend = CountingBackend()
    traced = pyinterp.trace(_f, backend=backend, dynamic=True)
    for n in (2, 3, 5):
        assert_same(traced(fresh(n)), _f(fresh(n)))
    assert backend.count == 1 and len(traced.cache_entries()) == 1


@pytest.mark.parametrize("dynamic,entries", [(None, 2), (False, 3)])
def test_dynamic_none_recompiles_once_false_every_shape(dynamic, entries):
    traced = pyinterp.trace(_f, backend="eager", dynamic=dynamic)
    for n in (2, 3, 4, 3):
        assert_same(traced(fresh(n)), _f(fresh(n)))
    assert len(traced.cache_entries()) == entries  # None: exact, then symbolic


# --------------------------------------------------------------------------
# backends: torch's registry
# --------------------------------------------------------------------------

def _register(compiler):
    """Register ``compiler`` under a fresh name (names are process-wide)."""
    name = "pyinterp_test_backend_%d" % next(_names)
    torch._dynamo.register_backend(compiler, name=name)
    return name


def test_registered_backend_is_used_by_name_with_mode_and_options_as_keywords():
    def run(wrap, **kwargs):
        calls = []

        def backend(gm, example_inputs, **kw):
            calls.append((type(gm).__name__, len(example_inputs), kw))
            return gm.forward

        compiled = wrap(_f, backend=_register(backend), **kwargs)
        x = fresh(4)
        assert_same(compiled(x), _f(x))
        return calls

    for kwargs in ({}, {"mode": "max-autotune"}, {"options": {"answer": 42}}):
        assert run(pyinterp.trace, **kwargs) == run(torch.compile, **kwargs), kwargs


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cudagraphs"])
def test_registry_backend_names_run(backend):
    traced = pyinterp.trace(_f, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (cudagraphs on a CPU tensor: skipped, as in torch)
        for seed in range(3):
            x = fresh(5, seed=seed)
            assert_same(traced(x), _f(x))
    entry, = traced.cache_entries()
    assert entry.kind == "graph" and entry.hits == 2


def test_mode_and_options_become_inductors_config(monkeypatch):
    import torch._inductor.compile_fx as compile_fx_module

    seen = []

    def fake_compile_fx(gm, example_inputs, config_patches=None, **kwargs):
        seen.append(dict(config_patches or {}))
        return gm.forward

    monkeypatch.setattr(compile_fx_module, "compile_fx", fake_compile_fx)
    for kwargs in ({"mode": "max-autotune-no-cudagraphs"}, {"options": {"max_autotune": True}},
                   {"mode": "default"}, {}):
        traced = pyinterp.trace(_f, **kwargs)
        x = fresh(3)
        assert_same(traced(x), _f(x))
        expected = torch._TorchCompileInductorWrapper(kwargs.get("mode"),
                                                      kwargs.get("options"), None).config
        assert seen.pop() == expected, kwargs
    assert {"max_autotune": True}.items() <= expected.items() or not expected


# --------------------------------------------------------------------------
# the same model under torch.compile and pyinterp.trace, same arguments
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    dict(backend="aot_eager"),
    dict(backend="inductor", mode="default"),
    dict(backend="eager", fullgraph=True),
], ids=["aot_eager", "inductor", "eager-fullgraph"])
def test_same_model_under_torch_compile_and_trace(kwargs):
    torch.manual_seed(0)
    model = _Net()
    ours, theirs = pyinterp.trace(model, **kwargs), torch.compile(model, **kwargs)
    for seed, batch in [(0, 4), (1, 4), (2, 4)]:
        x = fresh(batch, 8, seed=seed, requires_grad=True)
        x2 = x.detach().clone().requires_grad_()
        a, b = ours(x), theirs(x2)
        assert_same(a, b, rtol=1e-5, atol=1e-6)
        a.sum().backward()
        b.sum().backward()
        assert_same(x.grad, x2.grad, rtol=1e-5, atol=1e-6)
    assert sum(e.hits for e in ours.cache_entries()) == 2
    torch._dynamo.reset()


# --------------------------------------------------------------------------
# reset() and the cache entries
# --------------------------------------------------------------------------

def test_reset_clears_every_traced_callables_cache():
    traced = pyinterp.trace(_f, backend="eager")
    module = pyinterp.trace(_Net(), backend="eager")
    x = fresh(2, 8)
    traced(x)
    module(x)
    assert len(traced.cache_entries()) == 1 and len(module.cache_entries()) == 1
    pyinterp.reset()
    assert traced.cache_entries() == [] and module.cache_entries() == []
    assert_same(traced(x), _f(x))  # captures afresh
    assert len(traced.cache_entries()) == 1


def test_cache_entries_list_guards_hits_and_failures():
    traced = pyinterp.trace(_f, backend="eager", dynamic=False)
    small, large = fresh(3), fresh(4)
    traced(small)
    traced(small)
    traced(large)   # a miss: the first entry's shape check fails
    traced(small)   # the newer entry fails, the older one hits (and moves to the front)
    older, newer = traced.cache_entries()
    assert older.hits == 2 and newer.hits == 0
    assert older.guard_source.startswith("def guard(")
    assert any("x.shape" in line and "(3,)" in line for line in older.guards)
    assert older.failures == {"x: float32[3] on cpu": 1}  # (the call with x of shape (4,))
    assert newer.failures == {"x: float32[4] on cpu": 1}
    assert older.kind == "graph" and older.graph_count == 1 and older.break_reasons == []
    assert "1 graph(s)" in repr(older)


def test_cache_entries_name_breaks():
    def broken(x):
        y = x * 2
        print("tensor ready", y.shape)  # (replayed: no break)
        z = y.tolist()  # a break: a tensor read as Python data
        return torch.tensor(z) + 1

    traced = pyinterp.trace(broken, backend="eager")
    x = fresh(3)
    assert_same(traced(x), broken(x))
    entry, = traced.cache_entries()
    assert entry.kind in ("partial", "native")
    assert entry.break_reasons and "test_trace_compile_api.py" in entry.break_reasons[0]


def _returns_a_list_holding_itself(x):
    out = [x * 2]
    out.append(out)
    return out


def test_fullgraph_break_found_after_the_run_is_a_graph_break_error():
    # (the result cannot be rebuilt by a mock: found after the run ended,
    # when no user frame is left; still the public error, never internal)
    with pytest.raises(pyinterp.GraphBreakError, match="refers to itself") as info:
        pyinterp.trace(_returns_a_list_holding_itself, fullgraph=True, backend="eager")(fresh(2))
    assert info.value.kind == "unsupported-value"
    traced = pyinterp.trace(_returns_a_list_holding_itself, backend="eager")
    for seed in range(2):
        got = traced(fresh(2, seed=seed))
        assert got[1] is got and torch.equal(got[0], fresh(2, seed=seed) * 2)
