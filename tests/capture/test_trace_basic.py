"""pyinterp.trace: the decorator forms, backends, modes, modules, argument
errors and exceptions -- always traced vs eager over several calls."""
import gc
import warnings

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from torch import nn  # noqa: E402

from trace_support import (  # noqa: E402
    CountingBackend, assert_same, count_captures, fresh, raises_same, run_both, traced_counting,
)


# --------------------------------------------------------------------------
# decorator / call forms
# --------------------------------------------------------------------------

def test_bare_decorator_on_function_without_tensor_ops():
    # The default backend is inductor; nothing is compiled without tensor ops.
    @pyinterp.trace
    def add(a, b):
        return a * 10 + b

    for a, b in [(1, 2), (1, 2), (3, 4), (3, 4)]:
        assert add(a, b) == a * 10 + b


def test_decorator_with_arguments():
    counter = CountingBackend()

    @pyinterp.trace(backend=counter)
    def f(x):
        return x.sin() * 2 + 1

    def eager(x):
        return x.sin() * 2 + 1

    for seed in range(3):
        run_both(f, eager, fresh(3, seed=seed))
    assert count_captures(counter) == 1


def test_call_form_with_eager_backend():
    def f(x, y):
        return torch.relu(x @ y) - y.mean()

    traced = pyinterp.trace(f, backend="eager")
    for seed in range(3):
        run_both(traced, f, fresh(2, 2, seed=seed), fresh(2, 2, seed=seed + 10))


def test_call_form_with_no_arguments_then_function():
    deco = pyinterp.trace(backend="eager")
    traced = deco(lambda x: x * 3)
    x = fresh(4)
    assert_same(traced(x), x * 3)
    assert_same(traced(x), x * 3)


def test_hits_do_not_recompile():
    def f(x):
        return (x + 1).cos()

    traced, counter = traced_counting(f)
    for seed in range(4):
        run_both(traced, f, fresh(5, seed=seed))
    assert count_captures(counter) == 1


def test_backend_receives_graph_module_and_example_tensors():
    def f(x, y):
        return x * y + 1

    traced, counter = traced_counting(f)
    x, y = fresh(3), fresh(3, seed=1)
    run_both(traced, f, x, y)
    assert count_captures(counter) == 1
    assert isinstance(counter.graphs[0], torch.fx.GraphModule)
    assert counter.inputs[0], "example_inputs should not be empty"
    assert all(isinstance(t, torch.Tensor) for t in counter.inputs[0])


@pytest.mark.parametrize("user_has_it_on", [True, False])
def test_capture_pauses_the_collector_and_the_backend_runs_as_the_user_had_it(user_has_it_on):
    seen = []

    def backend(gm, example_inputs):
        seen.append(gc.isenabled())
        return gm.forward

    def f(x):
        return x * 2 + 1

    was_on = gc.isenabled()
    (gc.enable if user_has_it_on else gc.disable)()
    try:
        traced = pyinterp.trace(f, backend=backend)
        run_both(traced, f, fresh(3))
        assert gc.isenabled() is user_has_it_on
    finally:
        (gc.enable if was_on else gc.disable)()
    assert seen == [user_has_it_on]


def test_bound_method():
    class Scaler:
        def __init__(self, k):
            self.k = k

        def apply(self, x):
            return x * self.k + 1

    s = Scaler(3.0)
    traced = pyinterp.trace(s.apply, backend="eager")
    for seed in range(3):
        x = fresh(3, seed=seed)
        assert_same(traced(x), s.apply(x))


def test_method_decorated_in_class_body_binds_per_instance():
    class Model:
        def __init__(self, k):
            self.k = k

        @pyinterp.trace(backend="eager")
        def forward(self, x):
            return x * self.k

    a, b = Model(2.0), Model(5.0)
    x = fresh(3)
    for _ in range(2):
        assert_same(a.forward(x), x * 2.0)
        assert_same(b.forward(x), x * 5.0)
    a.k = 7.0
    assert_same(a.forward(x), x * 7.0)
    assert_same(b.forward(x), x * 5.0)


def test_kwargs_defaults_and_varargs():
    def f(x, *rest, scale=2.0, shift=0.0, **extra):
        out = x * scale + shift
        for r in rest:
            out = out + r
        if "bias" in extra:
            out = out + extra["bias"]
        return out

    traced = pyinterp.trace(f, backend="eager")
    x, y = fresh(3), fresh(3, seed=1)
    for _ in range(2):
        run_both(traced, f, x)
        run_both(traced, f, x, y)
        run_both(traced, f, x, y, y, scale=3.0)
        run_both(traced, f, x, shift=1.0, bias=y)


def test_helper_functions_closures_and_lambdas_are_followed():
    def helper(t, k):
        return t * k

    def make(k):
        return lambda t: helper(t, k) + 1

    g = make(4.0)

    def f(x):
        ys = [g(x[i]) for i in range(x.shape[0])]
        return torch.stack(ys).sum(0)

    traced = pyinterp.trace(f, backend="eager")
    for seed in range(3):
        run_both(traced, f, fresh(3, 2, seed=seed))


def test_python_control_flow_on_python_values():
    def f(x, n, flag):
        for i in range(n):
            x = x * 2 if i % 2 else x + 1
        if flag:
            x = -x
        return x

    traced = pyinterp.trace(f, backend="eager")
    x = fresh(3)
    for n, flag in [(3, True), (3, True), (4, False), (3, True), (0, False)]:
        run_both(traced, f, x, n, flag)


def test_tensor_metadata_in_python():
    def f(x):
        n, m = x.shape
        y = x.reshape(m, n) * x.dim()
        return y.sum(-1) + x.size(0), x.shape, x.dtype, len(x)

    traced = pyinterp.trace(f, backend="eager")
    for shape in [(2, 3), (2, 3), (4, 1)]:
        run_both(traced, f, fresh(*shape))


def test_torch_functions_methods_and_indexing():
    def f(x, idx):
        a = torch.cat([x, x[:, :1]], dim=1)
        b = a.transpose(0, 1).contiguous()
        c = torch.where(b > 0, b, torch.zeros_like(b))
        return c[idx] + torch.nn.functional.softmax(c, dim=-1).sum()

    traced = pyinterp.trace(f, backend="eager")
    for seed in range(3):
        run_both(traced, f, fresh(2, 3, seed=seed), 1)


def test_no_grad_inside_function():
    def f(w, x):
        with torch.no_grad():
            frozen = w * 2
        return frozen + w * x, frozen

    traced = pyinterp.trace(f, backend="eager")
    for seed in range(3):
        w = fresh(3, seed=seed, requires_grad=True)
        out, frozen = run_both(traced, f, w, fresh(3, seed=seed + 1))
        assert out.requires_grad and not frozen.requires_grad
    assert torch.is_grad_enabled()


def test_fullgraph_true_on_capturable_function_works():
    def f(x):
        return x.exp() - 1

    traced, counter = traced_counting(f, fullgraph=True)
    for seed in range(3):
        run_both(traced, f, fresh(3, seed=seed))
    assert count_captures(counter) == 1


# --------------------------------------------------------------------------
# backends and modes
# --------------------------------------------------------------------------

def test_backend_that_raises_warns_and_falls_back_to_eager():
    calls = []

    def broken_backend(gm, example_inputs):
        calls.append(gm)
        raise RuntimeError("backend exploded")

    def f(x):
        return x * 2 + 1

    traced = pyinterp.trace(f, backend=broken_backend)
    x = fresh(3)
    with pytest.warns(Warning):
        first = traced(x)
    assert_same(first, f(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(3):
            x = fresh(3, seed=seed)
            assert_same(traced(x), f(x))
    assert calls, "the backend should have been tried"


def test_mode_reduce_overhead_warns_once_and_has_no_effect():
    def f(x):
        return x.tanh() + 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = pyinterp.trace(f, backend="eager", mode="reduce-overhead")
        for seed in range(3):
            x = fresh(3, seed=seed)
            assert_same(traced(x), f(x))
    relevant = [w for w in caught if "reduce-overhead" in str(w.message)]
    assert len(relevant) == 1, [str(w.message) for w in caught]


def test_mode_none_emits_no_warning():
    def f(x):
        return x + 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = pyinterp.trace(f, backend="eager", mode=None)
        for _ in range(2):
            traced(fresh(2))
    assert not [w for w in caught if "mode" in str(w.message) or "reduce-overhead" in str(w.message)]


def test_inductor_backend_small_function():
    def f(x, y):
        return (x * y).relu() + 1

    traced = pyinterp.trace(f)  # default backend: inductor
    for seed in range(2):
        x, y = fresh(4, seed=seed), fresh(4, seed=seed + 5)
        assert_same(traced(x, y), f(x, y))


# --------------------------------------------------------------------------
# nn.Module
# --------------------------------------------------------------------------

def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def test_sequential_module_traced_like_the_module():
    m = _mlp()
    traced, counter = traced_counting(m)
    for seed in range(3):
        x = fresh(3, 4, seed=seed)
        assert_same(traced(x), m(x))
    assert count_captures(counter) == 1


def test_traced_module_forwards_attribute_access_and_wrapped():
    m = _mlp()
    traced = pyinterp.trace(m, backend="eager")
    assert traced.__wrapped__ is m
    assert traced.training is m.training
    params = list(traced.parameters())
    assert len(params) == len(list(m.parameters()))
    assert all(a is b for a, b in zip(params, m.parameters()))
    assert traced.state_dict is not None
    assert traced.state_dict().keys() == m.state_dict().keys()


def test_module_attribute_forwarding_custom_module():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.scale = 2.0

        def forward(self, x):
            return self.lin(x) * self.scale

    m = M()
    traced = pyinterp.trace(m, backend="eager")
    assert traced.lin is m.lin
    assert traced.scale == 2.0
    assert traced.__wrapped__ is m
    x = fresh(2, 3)
    assert_same(traced(x), m(x))


def test_module_with_python_config_attribute():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.use_residual = True
            self.depth = 2

        def forward(self, x):
            y = x
            for _ in range(self.depth):
                y = self.lin(y).relu()
            return y + x if self.use_residual else y

    m = M()
    traced = pyinterp.trace(m, backend="eager")
    x = fresh(2, 3)
    for residual, depth in [(True, 2), (True, 2), (False, 2), (False, 3), (True, 2)]:
        m.use_residual, m.depth = residual, depth
        assert_same(traced(x), m(x))
        assert_same(traced(x), m(x))


def test_module_forward_loops_over_module_list():
    class M(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.blocks = nn.ModuleList(nn.Linear(3, 3) for _ in range(n))

        def forward(self, x):
            for i, block in enumerate(self.blocks):
                x = block(x) + i
            return x

    torch.manual_seed(1)
    m = M(3)
    traced = pyinterp.trace(m, backend="eager")
    for seed in range(3):
        x = fresh(2, 3, seed=seed)
        assert_same(traced(x), m(x))
    m.blocks.append(nn.Linear(3, 3))
    for seed in range(2):
        x = fresh(2, 3, seed=seed)
        assert_same(traced(x), m(x))


def test_module_with_kwargs_in_forward():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x, *, mask=None, scale=1.0):
            y = self.lin(x) * scale
            if mask is not None:
                y = y * mask
            return y

    m = M()
    traced = pyinterp.trace(m, backend="eager")
    x, mask = fresh(2, 3), (fresh(2, 3, seed=1) > 0).float()
    for _ in range(2):
        assert_same(traced(x), m(x))
        assert_same(traced(x, mask=mask), m(x, mask=mask))
        assert_same(traced(x, scale=3.0), m(x, scale=3.0))


# --------------------------------------------------------------------------
# wrong arguments and user exceptions
# --------------------------------------------------------------------------

def test_wrong_argument_count_same_error_as_eager():
    def f(x, y):
        return x + y

    traced = pyinterp.trace(f, backend="eager")
    x = fresh(2)
    # before any successful call
    raises_same(traced, f, x)
    raises_same(traced, f, x, x, x)
    raises_same(traced, f, x, y=x, z=x)
    # after the cache has an entry
    assert_same(traced(x, x), f(x, x))
    raises_same(traced, f, x)
    raises_same(traced, f, x, x, x)
    raises_same(traced, f, x, x, y=x)
    assert_same(traced(x, x), f(x, x))


def test_wrong_argument_types_same_error_as_eager():
    def f(x, y):
        return x.matmul(y)

    traced = pyinterp.trace(f, backend="eager")
    x = fresh(2, 2)
    raises_same(traced, f, x, "nope")
    assert_same(traced(x, x), f(x, x))
    raises_same(traced, f, x, "nope")
    raises_same(traced, f, 3, x)
    raises_same(traced, f, x, fresh(3, 3))  # shape mismatch inside torch
    assert_same(traced(x, x), f(x, x))


def test_wrong_argument_count_module():
    m = nn.Linear(3, 2)
    traced = pyinterp.trace(m, backend="eager")
    x = fresh(1, 3)
    assert_same(traced(x), m(x))
    raises_same(traced, m, x, x)
    raises_same(traced, m)
    assert_same(traced(x), m(x))


def test_user_exception_on_first_call_propagates_and_cache_stays_consistent():
    def f(x, n):
        y = x * 2
        if n < 0:
            raise ValueError("negative n: %d" % n)
        return y + n

    traced = pyinterp.trace(f, backend="eager")
    x = fresh(3)
    with pytest.raises(ValueError, match=r"^negative n: -1$"):
        traced(x, -1)
    assert_same(traced(x, 2), f(x, 2))
    assert_same(traced(x, 2), f(x, 2))
    with pytest.raises(ValueError, match=r"^negative n: -5$"):
        traced(x, -5)
    assert_same(traced(x, 2), f(x, 2))


def test_user_exception_from_nested_helper_keeps_type_and_chain():
    class MyError(Exception):
        pass

    def helper(d, key):
        try:
            return d[key]
        except KeyError as e:
            raise MyError("missing %s" % key) from e

    def f(x, d, key):
        return x * helper(d, key)

    traced = pyinterp.trace(f, backend="eager")
    x = fresh(2)
    with pytest.raises(MyError, match="missing b") as info:
        traced(x, {"a": 2.0}, "b")
    assert isinstance(info.value.__cause__, KeyError)
    assert_same(traced(x, {"a": 2.0}, "a"), f(x, {"a": 2.0}, "a"))
    with pytest.raises(MyError, match="missing c"):
        traced(x, {"a": 2.0}, "c")
    assert_same(traced(x, {"a": 2.0}, "a"), f(x, {"a": 2.0}, "a"))


def test_exception_caught_inside_function_is_fine():
    def f(x, d):
        try:
            k = d["scale"]
        except KeyError:
            k = -1.0
        return x * k

    traced = pyinterp.trace(f, backend="eager")
    x = fresh(3)
    for d in [{}, {}, {"scale": 3.0}, {"scale": 3.0}, {}]:
        run_both(traced, f, x, d)


def test_traced_function_calling_another_traced_function():
    @pyinterp.trace(backend="eager")
    def inner(x):
        return x * 2

    @pyinterp.trace(backend="eager")
    def outer(x):
        return inner(x) + 1

    for seed in range(3):
        x = fresh(2, seed=seed)
        assert_same(outer(x), x * 2 + 1)
        assert_same(inner(x), x * 2)


def test_traced_module_containing_traced_submodule():
    class Outer(nn.Module):
        def __init__(self, block):
            super().__init__()
            self.__dict__["block"] = block  # a traced callable, whatever its type

        def forward(self, x):
            return self.block(x).relu() + 1

    torch.manual_seed(0)
    inner = nn.Linear(3, 3)
    eager = Outer(inner)
    traced = pyinterp.trace(Outer(pyinterp.trace(inner, backend="eager")), backend="eager")
    for seed in range(3):
        x = fresh(2, 3, seed=seed)
        assert_same(traced(x), eager(x))


def test_inplace_on_leaf_requiring_grad_raises_like_eager():
    def f(x):
        x.add_(1)
        return x

    traced = pyinterp.trace(f, backend="eager")
    leaf = torch.ones(2, requires_grad=True)
    raises_same(traced, f, leaf)
    y = torch.ones(2)
    traced(y)
    traced(y)
    raises_same(traced, f, leaf)


def test_tensor_passed_by_keyword_and_position():
    def f(x, y=None):
        return x * 2 if y is None else x * y

    traced = pyinterp.trace(f, backend="eager")
    x, y = fresh(2), fresh(2, seed=1)
    for _ in range(2):
        run_both(traced, f, x=x)
        run_both(traced, f, x)
        run_both(traced, f, x, y=y)
        run_both(traced, f, y=y, x=x)
        run_both(traced, f, x, y)


class _AttnWrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(4, 2, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x)[0]


class _FirstOutput(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x)[0]


@pytest.mark.parametrize("make, make_input", [
    (lambda: _FirstOutput(nn.LSTM(3, 4, batch_first=True)), lambda i: fresh(2, 5, 3, seed=i)),
    (lambda: nn.Embedding(10, 3), lambda i: torch.tensor([[1, 2], [i, 3]])),
    (lambda: nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU()),
     lambda i: fresh(2, 1, 5, 5, seed=i)),
    (_AttnWrapper, lambda i: fresh(2, 3, 4, seed=i)),
    (lambda: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True),
     lambda i: fresh(2, 3, 4, seed=i)),
    (lambda: nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.GELU()), lambda i: fresh(2, 3, seed=i)),
], ids=["lstm", "embedding", "conv_bn", "attention", "transformer_layer", "layernorm_gelu"])
def test_common_layers_match_eager_and_hit(make, make_input):
    torch.manual_seed(0)
    m = make()
    traced, counter = traced_counting(m)
    for i in range(3):
        x = make_input(i)
        assert_same(traced(x), m(x))
    assert count_captures(counter) == 1
    assert counter.runs >= 2
    m.eval()
    with torch.no_grad():
        for i in range(2):
            x = make_input(i)
            assert_same(traced(x), m(x))


def _model_class(decorate):
    deco = pyinterp.trace(backend="eager") if decorate else (lambda fn: fn)

    class Model:
        k = 2.0

        @deco
        def forward(self, x, *, y=1):
            return x * self.k + y

    return Model


def test_method_in_class_body_wrong_arguments_same_error_as_eager():
    traced_obj, eager_obj = _model_class(True)(), _model_class(False)()
    x = fresh(2)
    for _ in range(2):
        for args, kwargs in [((), {}), ((x, 2), {}), ((x,), {"z": 1})]:
            with pytest.raises(TypeError) as e_info:
                eager_obj.forward(*args, **kwargs)
            with pytest.raises(TypeError) as t_info:
                traced_obj.forward(*args, **kwargs)
            assert str(t_info.value) == str(e_info.value)
        assert_same(traced_obj.forward(x, y=3), eager_obj.forward(x, y=3))


@pytest.mark.parametrize("kwargs", [
    {"mode": "fastest"},
    {"cache_limit": 0},
    {"backend": "no-such-backend"},
], ids=["mode", "cache_limit", "backend"])
def test_invalid_options_are_rejected_at_trace_time(kwargs):
    # (torch.compile's own errors: test_trace_compile_api.py)
    with pytest.raises((ValueError, TypeError, RuntimeError)):
        pyinterp.trace(lambda x: x * 2, **kwargs)


def test_non_callable_is_rejected():
    with pytest.raises(TypeError):
        pyinterp.trace(3)
