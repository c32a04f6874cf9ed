"""pyinterp.trace guards: every piece of state a capture depends on is
changed between calls, and every call must match eager (misses and hits)."""
import types
import warnings

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from torch import nn  # noqa: E402

from trace_support import (  # noqa: E402
    assert_same, count_captures, fresh, run_both, traced_counting,
)


def twice(traced, counter, eager, *args, **kwargs):
    """A miss (or hit) then a hit with the same state; both must match eager.

    The second call must be a hit served by a compiled graph: no new
    compilation, and a compiled graph ran.
    """
    run_both(traced, eager, *args, **kwargs)
    compiled, runs = counter.count, counter.runs
    run_both(traced, eager, *args, **kwargs)
    assert counter.count == compiled, "the repeated call recompiled"
    assert counter.runs > runs, "the repeated call did not run a compiled graph"


# --------------------------------------------------------------------------
# globals
# --------------------------------------------------------------------------

G_SCALE = 2.0


def _uses_global_scalar(x):
    return x * G_SCALE + 1


def test_global_scalar_rebound():
    global G_SCALE
    G_SCALE = 2.0
    traced, counter = traced_counting(_uses_global_scalar)
    x = fresh(3)
    try:
        for value in [2.0, 3.0, -1.5, 2.0, 7]:
            G_SCALE = value
            twice(traced, counter, _uses_global_scalar, x)
    finally:
        G_SCALE = 2.0


def _act_relu(x):
    return x.relu()


def _act_square(x):
    return x * x


G_ACT = _act_relu


def _uses_global_function(x):
    return G_ACT(x) + 1


def test_global_function_rebound():
    global G_ACT
    G_ACT = _act_relu
    traced, counter = traced_counting(_uses_global_function)
    x = fresh(4)
    try:
        for act in [_act_relu, _act_square, torch.sigmoid, _act_relu, lambda t: t - 5]:
            G_ACT = act
            twice(traced, counter, _uses_global_function, x)
    finally:
        G_ACT = _act_relu


def _act_v1(x):
    return x + 1


def _uses_helper_by_name(x):
    return _act_v1(x) * 2


def test_global_function_code_replaced():
    # Same function object, different __code__.
    original = _act_v1.__code__
    traced, counter = traced_counting(_uses_helper_by_name)
    x = fresh(3)
    try:
        twice(traced, counter, _uses_helper_by_name, x)
        _act_v1.__code__ = (lambda x: x - 100).__code__
        twice(traced, counter, _uses_helper_by_name, x)
    finally:
        _act_v1.__code__ = original
    twice(traced, counter, _uses_helper_by_name, x)


G_CFG = types.SimpleNamespace(scale=2.0, activation="relu")
G_TABLE = {"shift": 1.0}


def _uses_global_config(x):
    y = x * G_CFG.scale + G_TABLE["shift"]
    return y.relu() if G_CFG.activation == "relu" else y.tanh()


def test_global_object_attribute_and_dict_item_changed():
    traced, counter = traced_counting(_uses_global_config)
    x = fresh(4)
    try:
        twice(traced, counter, _uses_global_config, x)
        G_CFG.scale = 5.0
        twice(traced, counter, _uses_global_config, x)
        G_CFG.activation = "tanh"
        twice(traced, counter, _uses_global_config, x)
        G_TABLE["shift"] = -3.0
        twice(traced, counter, _uses_global_config, x)
    finally:
        G_CFG.scale, G_CFG.activation = 2.0, "relu"
        G_TABLE["shift"] = 1.0


G_WEIGHT = torch.ones(3)


def _uses_global_tensor(x):
    return x * G_WEIGHT


def test_global_tensor_updated_in_place_and_rebound():
    global G_WEIGHT
    G_WEIGHT = torch.ones(3)
    traced, counter = traced_counting(_uses_global_tensor)
    x = fresh(3)
    try:
        twice(traced, counter, _uses_global_tensor, x)
        G_WEIGHT.add_(1)  # in place: the next call must see it (no frozen copy)
        twice(traced, counter, _uses_global_tensor, x)
        G_WEIGHT = torch.full((3,), -4.0)  # rebound
        twice(traced, counter, _uses_global_tensor, x)
        G_WEIGHT = torch.arange(3, dtype=torch.float64)  # dtype changes
        twice(traced, counter, _uses_global_tensor, x)
    finally:
        G_WEIGHT = torch.ones(3)


class _Consts:
    factor = 2.0


def _uses_class_attribute(x):
    return x * _Consts.factor


def test_class_attribute_changed():
    traced, counter = traced_counting(_uses_class_attribute)
    x = fresh(3)
    try:
        twice(traced, counter, _uses_class_attribute, x)
        _Consts.factor = 10.0
        twice(traced, counter, _uses_class_attribute, x)
    finally:
        _Consts.factor = 2.0


# --------------------------------------------------------------------------
# modules
# --------------------------------------------------------------------------

class _Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.scale = 2.0

    def forward(self, x):
        return self.lin(x) * self.scale


def _check_module(traced, counter, m, x):
    assert_same(traced(x), m(x))
    compiled, runs = counter.count, counter.runs
    assert_same(traced(x), m(x))
    assert counter.count == compiled, "the repeated call recompiled"
    assert counter.runs > runs, "the repeated call did not run a compiled graph"


def test_module_python_attribute_changed():
    torch.manual_seed(0)
    m = _Scaled()
    traced, counter = traced_counting(m)
    x = fresh(2, 3)
    for scale in [2.0, 3.0, 0.5, 2.0]:
        m.scale = scale
        _check_module(traced, counter, m, x)


def test_module_training_flag_train_eval():
    class Gated(nn.Module):
        def forward(self, x):
            return x * 2 if self.training else x - 1

    m = Gated()
    traced, counter = traced_counting(m)
    x = fresh(3)
    for mode in ["train", "eval", "train", "eval"]:
        getattr(m, mode)()
        _check_module(traced, counter, m, x)


def test_module_training_flag_with_dropout_deterministic():
    # p=1.0 drops everything in training mode and nothing in eval mode.
    m = nn.Sequential(nn.Linear(3, 3), nn.Dropout(p=1.0))
    traced, counter = traced_counting(m)
    x = fresh(2, 3)
    for mode in ["eval", "train", "eval", "train"]:
        getattr(m, mode)()
        _check_module(traced, counter, m, x)
    m.train()
    assert torch.count_nonzero(traced(x)) == 0
    m.eval()
    assert torch.count_nonzero(traced(x)) > 0


def test_module_training_flag_with_dropout_seeded():
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(p=0.5))
    traced, counter = traced_counting(m)
    x = fresh(3, 4)
    for mode, seed in [("train", 1), ("train", 2), ("eval", 3), ("train", 4), ("eval", 5)]:
        getattr(m, mode)()
        torch.manual_seed(seed)
        expected = m(x)
        torch.manual_seed(seed)
        assert_same(traced(x), expected)


def test_submodule_replaced():
    torch.manual_seed(0)
    m = _Scaled()
    traced, counter = traced_counting(m)
    x = fresh(2, 3)
    _check_module(traced, counter, m, x)
    m.lin = nn.Linear(3, 3)
    _check_module(traced, counter, m, x)
    m.lin = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    _check_module(traced, counter, m, x)
    m.lin = nn.Identity()
    _check_module(traced, counter, m, x)


def test_parameter_replaced():
    torch.manual_seed(0)
    m = _Scaled()
    traced, counter = traced_counting(m)
    x = fresh(2, 3)
    _check_module(traced, counter, m, x)
    m.lin.weight = nn.Parameter(torch.full((3, 3), 0.5))
    _check_module(traced, counter, m, x)
    m.lin.bias = None
    _check_module(traced, counter, m, x)


def test_parameter_updated_in_place():
    torch.manual_seed(0)
    m = _Scaled()
    traced, counter = traced_counting(m)
    x = fresh(2, 3)
    for _ in range(3):
        _check_module(traced, counter, m, x)
        with torch.no_grad():
            for p in m.parameters():
                p.add_(1)
    _check_module(traced, counter, m, x)
    # an in-place update is not a reason to recompile
    assert count_captures(counter) == 1


def test_buffer_updated_in_place():
    class WithBuffer(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("offset", torch.zeros(3))

        def forward(self, x):
            return x + self.offset

    m = WithBuffer()
    traced, counter = traced_counting(m)
    x = fresh(3)
    for _ in range(3):
        _check_module(traced, counter, m, x)
        m.offset.add_(2.0)


def test_module_list_appended():
    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(2, 2)])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    torch.manual_seed(0)
    m = Stack()
    traced, counter = traced_counting(m)
    x = fresh(1, 2)
    for _ in range(3):
        _check_module(traced, counter, m, x)
        m.layers.append(nn.Linear(2, 2))


def test_instance_method_monkeypatched_on_module():
    class M(nn.Module):
        def act(self, x):
            return x.relu()

        def forward(self, x):
            return self.act(x) + 1

    m = M()
    traced, counter = traced_counting(m)
    x = fresh(4)
    _check_module(traced, counter, m, x)
    m.act = lambda t: t * 100
    _check_module(traced, counter, m, x)
    del m.act
    _check_module(traced, counter, m, x)


# --------------------------------------------------------------------------
# tensors and grad mode
# --------------------------------------------------------------------------

def _tensor_fn(x):
    return (x * 2).sum(0) + x.shape[0]


def test_tensor_shape_changed():
    traced, counter = traced_counting(_tensor_fn)
    for shape in [(2, 3), (2, 3), (4, 3), (4, 3), (1, 5), (2, 3), (3,)]:
        run_both(traced, _tensor_fn, fresh(*shape))


def test_tensor_dtype_changed():
    traced, counter = traced_counting(_tensor_fn)
    for dtype in [torch.float32, torch.float64, torch.int64, torch.float32, torch.bfloat16]:
        twice(traced, counter, _tensor_fn, fresh(2, 3).mul(10).to(dtype))


def test_tensor_requires_grad_changed():
    traced, counter = traced_counting(_tensor_fn)
    for rg in [False, True, False, True]:
        x = fresh(2, 3, requires_grad=rg)
        out = traced(x)
        assert_same(out, _tensor_fn(x))
        assert_same(traced(x), _tensor_fn(x))
        if rg:
            out.sum().backward()
            assert_same(x.grad, torch.full((2, 3), 2.0))


def test_grad_mode_around_call():
    def f(w, x):
        return w * x + 1

    traced, counter = traced_counting(f)
    w, x = fresh(3, requires_grad=True), fresh(3, seed=1)
    for no_grad in [False, True, False, True]:
        if no_grad:
            with torch.no_grad():
                out = traced(w, x)
                assert_same(out, f(w, x))
            assert not out.requires_grad
        else:
            out = traced(w, x)
            assert_same(out, f(w, x))
            assert out.requires_grad


def test_non_contiguous_and_transposed_inputs():
    def f(x):
        return x.view(-1) * 2 if x.is_contiguous() else x.reshape(-1) * 3

    traced, counter = traced_counting(f)
    base = fresh(2, 3)
    for x in [base, base, base.t(), base.t(), base]:
        run_both(traced, f, x)


def test_tensor_subclass_parameter_vs_tensor():
    def f(x):
        return x * 2 if isinstance(x, nn.Parameter) else x * 3

    traced, counter = traced_counting(f)
    t = fresh(3)
    p = nn.Parameter(fresh(3))
    for arg in [t, t, p, p, t]:
        assert_same(traced(arg), f(arg))


# --------------------------------------------------------------------------
# Python arguments
# --------------------------------------------------------------------------

def test_python_int_argument_changed():
    def f(x, n):
        for _ in range(n):
            x = x * 2
        return x + n

    traced, counter = traced_counting(f)
    x = fresh(3)
    for n in [1, 1, 2, 2, 3, 0, 1]:
        run_both(traced, f, x, n)


def test_python_float_argument_changed():
    def f(x, alpha):
        return x * alpha, alpha * 2

    traced, counter = traced_counting(f)
    x = fresh(3)
    for alpha in [0.5, 0.5, 1.5, -2.0, 0.5, float("inf")]:
        run_both(traced, f, x, alpha)


def test_one_vs_one_point_oh_vs_true_do_not_share_an_entry():
    def f(x, n):
        return x * n, str(n), n, n / 2 if n else 0

    traced, counter = traced_counting(f)
    x = torch.arange(3)  # int64: the result dtype depends on the type of n
    for n in [1, 1.0, True, 1, True, 1.0, 1]:
        out = traced(x, n)
        assert_same(out, f(x, n))
        assert type(out[2]) is type(n)


def test_zero_vs_false_vs_none():
    def f(x, v):
        if v is None:
            return x, "none"
        if v is False:
            return x * 2, "false"
        return x + v, repr(v)

    traced, counter = traced_counting(f)
    x = fresh(2)
    for v in [0, 0, False, None, 0.0, False, 0, None]:
        run_both(traced, f, x, v)


def test_str_argument_changed():
    def f(x, mode):
        if mode == "double":
            return x * 2
        if mode.startswith("neg"):
            return -x
        return x + len(mode)

    traced, counter = traced_counting(f)
    x = fresh(3)
    for mode in ["double", "double", "negate", "other", "double", "neg", ""]:
        run_both(traced, f, x, mode)


def test_none_argument_vs_tensor():
    def f(x, bias=None):
        if bias is None:
            return x * 2
        return x * 2 + bias

    traced, counter = traced_counting(f)
    x, b = fresh(3), fresh(3, seed=1)
    for args in [(x,), (x, None), (x, b), (x, b), (x,), (x, None)]:
        run_both(traced, f, *args)


def test_tuple_argument_changed():
    def f(x, scales):
        out = x
        for s in scales:
            out = out * s
        return out, len(scales)

    traced, counter = traced_counting(f)
    x = fresh(3)
    for scales in [(2.0, 3.0), (2.0, 3.0), (2.0, 4.0), (2.0,), (1, 2, 3), (), (2.0, 3.0)]:
        run_both(traced, f, x, scales)


def test_tuple_of_ints_used_as_shape():
    def f(x, shape):
        return x.reshape(shape) + 1

    traced, counter = traced_counting(f)
    x = fresh(6)
    for shape in [(2, 3), (2, 3), (3, 2), (6,), (1, 6), (2, 3)]:
        run_both(traced, f, x, shape)


def test_keyword_argument_changed():
    def f(x, *, scale=1.0, clamp=False):
        y = x * scale
        return y.clamp(-1, 1) if clamp else y

    traced, counter = traced_counting(f)
    x = fresh(4)
    for kw in [{}, {}, {"scale": 3.0}, {"clamp": True}, {"scale": 3.0, "clamp": True}, {}]:
        run_both(traced, f, x, **kw)


def test_list_length_of_iterated_argument():
    def f(xs):
        total = xs[0]
        for t in xs[1:]:
            total = total + t
        return total, len(xs)

    traced, counter = traced_counting(f)
    ts = [fresh(2, seed=i) for i in range(5)]
    for n in [2, 2, 3, 3, 5, 2, 1]:
        run_both(traced, f, ts[:n])


def test_same_list_object_mutated_between_calls():
    def f(x, coefs):
        out = x * 0
        for i, c in enumerate(coefs):
            out = out + c * x ** i
        return out

    traced, counter = traced_counting(f)
    x = fresh(3)
    coefs = [1.0, 2.0]
    twice(traced, counter, f, x, coefs)
    coefs[0] = 5.0
    twice(traced, counter, f, x, coefs)
    coefs.append(-1.0)
    twice(traced, counter, f, x, coefs)
    coefs.clear()
    twice(traced, counter, f, x, coefs)


def test_dict_keys_of_iterated_argument():
    def f(d):
        return {k: v * 2 for k, v in d.items()}

    traced, counter = traced_counting(f)
    a, b, c = fresh(2), fresh(2, seed=1), fresh(2, seed=2)
    d = {"a": a, "b": b}
    twice(traced, counter, f, d)
    d["c"] = c  # same dict object, one more key
    twice(traced, counter, f, d)
    del d["a"]
    twice(traced, counter, f, d)
    twice(traced, counter, f, {"c": c, "b": b})  # same keys, other order
    run_both(traced, f, {})  # no tensor ops: no graph
    run_both(traced, f, {})


def test_dict_python_values_changed():
    def f(x, cfg):
        y = x * cfg["scale"]
        if cfg.get("relu"):
            y = y.relu()
        return y

    traced, counter = traced_counting(f)
    x = fresh(4)
    cfg = {"scale": 2.0}
    twice(traced, counter, f, x, cfg)
    cfg["scale"] = -1.0
    twice(traced, counter, f, x, cfg)
    cfg["relu"] = True
    twice(traced, counter, f, x, cfg)
    cfg["relu"] = 0
    twice(traced, counter, f, x, cfg)


def test_argument_object_attribute_changed():
    class Cfg:
        def __init__(self, scale, bias):
            self.scale, self.bias = scale, bias

    def f(x, cfg):
        y = x * cfg.scale
        return y + cfg.bias if cfg.bias is not None else y

    traced, counter = traced_counting(f)
    x = fresh(3)
    cfg = Cfg(2.0, None)
    for scale, bias in [(2.0, None), (3.0, None), (3.0, fresh(3, seed=1)), (2.0, 1.0)]:
        cfg.scale, cfg.bias = scale, bias
        assert_same(traced(x, cfg), f(x, cfg))
        assert_same(traced(x, cfg), f(x, cfg))


# --------------------------------------------------------------------------
# closures
# --------------------------------------------------------------------------

def test_closure_cell_rebound_by_nonlocal():
    def make():
        scale = 2.0

        def f(x):
            return x * scale

        def set_scale(v):
            nonlocal scale
            scale = v

        return f, set_scale

    f, set_scale = make()
    traced, counter = traced_counting(f)
    x = fresh(3)
    for v in [2.0, 3.0, -1.0, 2.0]:
        set_scale(v)
        twice(traced, counter, f, x)


def test_closure_cell_holding_function_rebound():
    def make():
        act = torch.relu

        def f(x):
            return act(x) + 1

        def set_act(fn):
            nonlocal act
            act = fn

        return f, set_act

    f, set_act = make()
    traced, counter = traced_counting(f)
    x = fresh(4)
    for fn in [torch.relu, torch.tanh, lambda t: t * 3, torch.relu]:
        set_act(fn)
        twice(traced, counter, f, x)


def test_closure_cell_holding_tensor_rebound_and_mutated():
    def make():
        w = torch.ones(3)

        def f(x):
            return x * w

        def set_w(t):
            nonlocal w
            w = t

        def bump():
            w.add_(1)

        return f, set_w, bump

    f, set_w, bump = make()
    traced, counter = traced_counting(f)
    x = fresh(3)
    twice(traced, counter, f, x)
    bump()
    twice(traced, counter, f, x)
    set_w(torch.full((3,), -2.0))
    twice(traced, counter, f, x)


def test_closure_cell_via_cell_contents():
    def make(k):
        def f(x):
            return x + k
        return f

    f = make(1.0)
    traced, counter = traced_counting(f)
    x = fresh(3)
    twice(traced, counter, f, x)
    f.__closure__[0].cell_contents = 10.0
    twice(traced, counter, f, x)


# --------------------------------------------------------------------------
# aliasing
# --------------------------------------------------------------------------

def _inplace_then_add(a, b):
    a.add_(1)
    return a + b


def test_aliasing_trace_of_distinct_args_does_not_serve_aliased():
    traced, counter = traced_counting(_inplace_then_add)
    for _ in range(2):
        run_both(traced, _inplace_then_add, fresh(3), fresh(3, seed=1))
    for _ in range(2):
        a = fresh(3)
        run_both(traced, _inplace_then_add, a, a)
    run_both(traced, _inplace_then_add, fresh(3), fresh(3, seed=1))


def test_aliasing_trace_of_aliased_args_does_not_serve_distinct():
    traced, counter = traced_counting(_inplace_then_add)
    for _ in range(2):
        a = fresh(3)
        run_both(traced, _inplace_then_add, a, a)
    for _ in range(2):
        run_both(traced, _inplace_then_add, fresh(3), fresh(3, seed=1))


def test_aliasing_explicit_values():
    traced, counter = traced_counting(_inplace_then_add)
    a, b = torch.zeros(2), torch.zeros(2)
    assert traced(a, b).tolist() == [1.0, 1.0]
    a = torch.zeros(2)
    assert traced(a, a).tolist() == [2.0, 2.0]
    assert a.tolist() == [1.0, 1.0]


def _inplace_three(a, b, c):
    a.add_(1)
    b.mul_(2)
    if a is b or b is c:  # (a Python branch on aliasing, no tensor op)
        return a * 10
    return a + b + c


@pytest.mark.parametrize("same", [(0, 1), (0, 2), (1, 2), (0, 1, 2)])
def test_aliasing_three_tensors(same):
    """Three tensor inputs (the set-of-addresses form of the guard): a trace
    of distinct tensors serves none of the aliased calls, and back."""
    traced, counter = traced_counting(_inplace_three)

    def distinct():
        return [fresh(3, seed=i) for i in range(3)]

    def aliased():
        args = distinct()
        for i in same[1:]:
            args[i] = args[same[0]]
        return args

    for make in (distinct, aliased, distinct, aliased):
        for _ in range(2):
            run_both(traced, _inplace_three, *make())


def test_aliasing_same_list_passed_twice():
    def f(xs, ys, t):
        xs.append(t)
        return len(ys), t * len(ys)

    traced, counter = traced_counting(f)
    for _ in range(2):
        run_both(traced, f, [], [], fresh(2))
    for _ in range(2):
        shared = []
        run_both(traced, f, shared, shared, fresh(2))


# --------------------------------------------------------------------------
# cache limit
# --------------------------------------------------------------------------

def test_recompile_limit_warning_is_user_warning():
    assert issubclass(pyinterp.RecompileLimitWarning, UserWarning)


def test_cache_limit_exceeded_runs_natively_and_warns_once():
    def f(x, num_steps):
        for _ in range(num_steps):
            x = x + 1
        return x

    traced, counter = traced_counting(f, cache_limit=2)
    x = fresh(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in [1, 2, 1, 2, 3, 4, 5, 3, 1, 2]:
            assert_same(traced(x, n), f(x, n))
    limit = [w for w in caught if issubclass(w.category, pyinterp.RecompileLimitWarning)]
    assert len(limit) == 1, [str(w.message) for w in caught]
    assert "num_steps" in str(limit[0].message)
    assert count_captures(counter) <= 2


def test_cache_limit_one():
    def f(x, k):
        return x * k

    traced, counter = traced_counting(f, cache_limit=1)
    x = fresh(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in [2, 2, 3, 4, 2, 3]:
            assert_same(traced(x, k), f(x, k))
    assert count_captures(counter) == 1
    assert len([w for w in caught if issubclass(w.category, pyinterp.RecompileLimitWarning)]) == 1


def test_cache_entries_are_reused_after_other_entries():
    # entries for n=1 and n=2 both stay; going back to either is a hit
    def f(x, n):
        return x * n

    traced, counter = traced_counting(f)
    x = fresh(3)
    for n in [1, 2, 1, 2, 1, 2]:
        assert_same(traced(x, n), f(x, n))
    assert count_captures(counter) == 2


def test_separate_traced_wrappers_have_separate_caches():
    def f(x, n):
        return x * n

    t1, c1 = traced_counting(f, cache_limit=1)
    t2, c2 = traced_counting(f, cache_limit=1)
    x = fresh(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(t1(x, 2), f(x, 2))
        assert_same(t2(x, 3), f(x, 3))
        assert_same(t1(x, 2), f(x, 2))
        assert_same(t2(x, 3), f(x, 3))
    assert count_captures(c1) == 1 and count_captures(c2) == 1


# --------------------------------------------------------------------------
# less obvious state
# --------------------------------------------------------------------------

def test_function_defaults_changed():
    def f(x, k=2.0):
        return x * k

    traced, counter = traced_counting(f)
    x = fresh(3)
    twice(traced, counter, f, x)
    f.__defaults__ = (5.0,)
    twice(traced, counter, f, x)


def test_function_kwdefaults_changed():
    def f(x, *, k=2.0):
        return x * k

    traced, counter = traced_counting(f)
    x = fresh(3)
    twice(traced, counter, f, x)
    f.__kwdefaults__ = {"k": -1.0}
    twice(traced, counter, f, x)


def test_unusable_defaults_set_later_stay_hits():
    """``__kwdefaults__`` on a function with no keyword-only parameter, or
    ``__defaults__`` on one with no positional parameter, changes no call:
    no guard reads them (each read is an audited attribute access), so
    setting them keeps the hit, and results stay eager's."""
    def f(x):
        return x * 2.0

    def g(*, k):
        return k + 1

    def main(x):
        return f(x) + g(k=x)

    traced, counter = traced_counting(main)
    x = fresh(3)
    twice(traced, counter, main, x)
    f.__kwdefaults__ = {"k": 3.0}
    g.__defaults__ = (4.0,)
    compiled = counter.count
    twice(traced, counter, main, x)
    assert counter.count == compiled, "a default that no call can use forced a new capture"


def test_inner_function_defaults_changed():
    """The defaults of a function the traced one calls stay guarded,
    positional and keyword-only both."""
    def h(x, a=2.0, *, b=3.0):
        return x * a + b

    def main(x):
        return h(x)

    traced, counter = traced_counting(main)
    x = fresh(3)
    twice(traced, counter, main, x)
    h.__defaults__ = (-1.0,)
    twice(traced, counter, main, x)
    h.__kwdefaults__ = {"b": 10.0}
    twice(traced, counter, main, x)


def test_forward_hook_added_and_removed():
    torch.manual_seed(0)
    m = nn.Linear(2, 2)
    traced, counter = traced_counting(m)
    x = fresh(1, 2)
    _check_module(traced, counter, m, x)
    handle = m.register_forward_hook(lambda mod, inp, out: out * 0 + 7)
    _check_module(traced, counter, m, x)
    handle.remove()
    _check_module(traced, counter, m, x)
    handle = m.register_forward_pre_hook(lambda mod, inp: (inp[0] * 10,))
    _check_module(traced, counter, m, x)
    handle.remove()
    _check_module(traced, counter, m, x)


def test_autocast_around_call():
    def f(a, b):
        return a @ b

    traced = pyinterp.trace(f, backend="eager")
    a, b = fresh(2, 2), fresh(2, 2, seed=1)
    for autocast in [False, True, False, True]:
        if autocast:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                assert_same(traced(a, b), f(a, b))
        else:
            assert_same(traced(a, b), f(a, b))


def test_default_dtype_changed():
    def f(x):
        return x + torch.ones(2)

    traced = pyinterp.trace(f, backend="eager")
    x = fresh(2).half()
    old = torch.get_default_dtype()
    try:
        for dtype in [torch.float32, torch.float64, torch.float32]:
            torch.set_default_dtype(dtype)
            assert_same(traced(x), f(x))
            assert_same(traced(x), f(x))
    finally:
        torch.set_default_dtype(old)


G_MAYBE_MISSING = 2.0


def _uses_maybe_missing(x):
    return x * G_MAYBE_MISSING


def test_global_deleted_raises_name_error_like_eager():
    global G_MAYBE_MISSING
    G_MAYBE_MISSING = 2.0
    traced, counter = traced_counting(_uses_maybe_missing)
    x = fresh(2)
    twice(traced, counter, _uses_maybe_missing, x)
    del G_MAYBE_MISSING
    try:
        for _ in range(2):
            with pytest.raises(NameError) as eager_info:
                _uses_maybe_missing(x)
            with pytest.raises(NameError) as traced_info:
                traced(x)
            assert str(traced_info.value) == str(eager_info.value)
    finally:
        G_MAYBE_MISSING = 2.0
    twice(traced, counter, _uses_maybe_missing, x)


def test_parameter_data_replaced():
    torch.manual_seed(0)
    m = nn.Linear(2, 2)
    traced, counter = traced_counting(m)
    x = fresh(1, 2)
    _check_module(traced, counter, m, x)
    m.weight.data = torch.full((2, 2), 3.0)
    _check_module(traced, counter, m, x)


def test_tensor_replaced_in_argument_dict():
    def f(d):
        return d["t"] * 2

    traced, counter = traced_counting(f)
    d = {"t": torch.ones(2)}
    twice(traced, counter, f, d)
    d["t"] = torch.full((2,), 3.0)
    twice(traced, counter, f, d)


# --------------------------------------------------------------------------
# guards are about the state on entry, not the state the function left
# --------------------------------------------------------------------------

def _append_then_len(lst, x):
    lst.append(1)
    return x * len(lst)


def _pop_then_len(lst, x):
    lst.pop()
    return x * len(lst)


def _del_item_then_len(lst, x):
    del lst[0]
    return x * len(lst)


def _dict_setitem_then_len(d, x):
    d["k"] = 1
    return x * len(d)


def _dict_delitem_then_len(d, x):
    del d["a"]
    return x * len(d)


def _setattr_then_read(obj, x):
    obj.n = 5
    return x * obj.n


@pytest.mark.parametrize("fn, make", [
    (_append_then_len, lambda: [1, 2]),
    (_pop_then_len, lambda: [1, 2]),
    (_del_item_then_len, lambda: [1, 2]),
    (_dict_setitem_then_len, lambda: {"a": 1}),
    (_dict_delitem_then_len, lambda: {"a": 1, "b": 2}),
    (_setattr_then_read, lambda: types.SimpleNamespace()),
], ids=lambda v: getattr(v, "__name__", "make"))
def test_read_after_own_mutation_hits_with_fresh_arguments(fn, make):
    # Every call gets a fresh container in the same entry state: after the
    # first call, every call must be a hit (the guards must describe the
    # state on entry, not the state after the function's own writes).
    traced, counter = traced_counting(fn)
    x = fresh(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(10):  # more calls than the default cache_limit
            t_arg, e_arg = make(), make()
            assert_same(traced(t_arg, x), fn(e_arg, x))
            assert_same(t_arg, e_arg)
    assert count_captures(counter) == 1
    assert counter.runs >= 9
    assert not [w for w in caught if issubclass(w.category, pyinterp.RecompileLimitWarning)]


def test_attribute_served_by_getattr_then_set_on_instance():
    class Lazy:
        def __getattr__(self, name):
            if name.startswith("__"):  # copy.deepcopy probes __deepcopy__ etc.
                raise AttributeError(name)
            return float(len(name))

    def f(cfg, x):
        return x * cfg.abc

    traced, counter = traced_counting(f)
    cfg, x = Lazy(), fresh(2)
    twice(traced, counter, f, cfg, x)
    cfg.abc = 10.0  # now found in the instance dict: __getattr__ not called
    twice(traced, counter, f, cfg, x)
    del cfg.abc
    twice(traced, counter, f, cfg, x)


def test_property_on_argument_object():
    class C:
        def __init__(self):
            self._k = 2.0

        @property
        def k(self):
            return self._k * 10

    def f(c, x):
        return x * c.k

    traced, counter = traced_counting(f)
    c, x = C(), fresh(2)
    twice(traced, counter, f, c, x)
    c._k = 3.0
    twice(traced, counter, f, c, x)


def test_instance_attribute_shadows_class_attribute():
    class C:
        k = 1.0

    def f(c, x):
        return x * c.k

    traced, counter = traced_counting(f)
    c, x = C(), fresh(2)
    twice(traced, counter, f, c, x)
    c.k = 5.0
    twice(traced, counter, f, c, x)
    del c.k
    twice(traced, counter, f, c, x)
    C.k = 7.0
    try:
        twice(traced, counter, f, c, x)
    finally:
        C.k = 1.0


def test_module_python_list_config_mutated_in_place():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.scales = [1.0, 2.0]

        def forward(self, x):
            out = x * 0
            for k in self.scales:
                out = out + x * k
            return out

    m = M()
    traced, counter = traced_counting(m)
    x = fresh(2)
    _check_module(traced, counter, m, x)
    m.scales.append(3.0)
    _check_module(traced, counter, m, x)
    m.scales[0] = 10.0
    _check_module(traced, counter, m, x)


def test_module_dtype_changed_with_double():
    torch.manual_seed(0)
    m = nn.Linear(2, 2)
    traced, counter = traced_counting(m)
    x = fresh(1, 2)
    _check_module(traced, counter, m, x)
    m.double()
    _check_module(traced, counter, m, x.double())
    m.float()
    _check_module(traced, counter, m, x)


def test_argument_type_changed_between_user_classes():
    class Base:
        pass

    class Sub(Base):
        pass

    def f(o, x):
        return x * 2 if type(o) is Sub else x * 3

    traced, counter = traced_counting(f)
    x = fresh(2)
    for o in [Base(), Sub(), Base()]:
        twice(traced, counter, f, o, x)


def test_grad_mode_read_inside_function():
    def f(x):
        return x * 2 if torch.is_grad_enabled() else x * 3

    traced, counter = traced_counting(f)
    x = fresh(2)
    twice(traced, counter, f, x)
    with torch.no_grad():
        twice(traced, counter, f, x)
    twice(traced, counter, f, x)


def test_aliasing_inside_argument_list_and_dict():
    def f(xs, d):
        xs[0].add_(1)
        d["a"].add_(1)
        return xs[0] + xs[1], d["a"] + d["b"]

    traced = pyinterp.trace(f, backend="eager")
    for _ in range(2):
        run_both(traced, f, [fresh(2), fresh(2, seed=1)], {"a": fresh(2), "b": fresh(2, seed=1)})
    for _ in range(2):
        a, b = fresh(2), fresh(2, seed=1)
        run_both(traced, f, [a, a], {"a": b, "b": b})
    a = fresh(2)
    run_both(traced, f, [a, a], {"a": a, "b": a})


def test_aliasing_through_views():
    traced = pyinterp.trace(_inplace_then_add, backend="eager")
    for _ in range(2):
        run_both(traced, _inplace_then_add, torch.zeros(4), torch.zeros(4))
    base = torch.zeros(4)
    assert traced(base, base.view(2, 2).view(-1)).tolist() == [2.0] * 4
    base = torch.zeros(4)
    assert traced(base[:4], base[0:4]).tolist() == [2.0] * 4


def test_aliasing_argument_with_attribute_of_other_argument():
    def f(obj, x):
        obj.t.add_(1)
        return obj.t + x

    traced = pyinterp.trace(f, backend="eager")
    for _ in range(2):
        obj = types.SimpleNamespace(t=torch.zeros(2))
        assert traced(obj, torch.zeros(2)).tolist() == [1.0, 1.0]
    obj = types.SimpleNamespace(t=torch.zeros(2))
    assert traced(obj, obj.t).tolist() == [2.0, 2.0]


def test_var_keyword_order_changed():
    def f(**kw):
        return list(kw), sum(v * i for i, v in enumerate(kw.values()))

    traced, counter = traced_counting(f)
    a, b = fresh(1), fresh(1, seed=1)
    twice(traced, counter, f, a=a, b=b)
    twice(traced, counter, f, b=b, a=a)
    twice(traced, counter, f, a=a)
    twice(traced, counter, f, a=a, b=b)


def test_var_positional_count_changed():
    def f(*xs):
        return torch.stack(xs).sum(0) * len(xs)

    traced, counter = traced_counting(f)
    ts = [fresh(2, seed=i) for i in range(3)]
    for n in [1, 2, 3, 1]:
        twice(traced, counter, f, *ts[:n])


def test_callable_argument_changed():
    def f(x, fn):
        return fn(x) + 1

    traced, counter = traced_counting(f)
    x = fresh(2)
    for fn in [torch.sin, torch.cos, lambda v: v * 3, torch.sin]:
        twice(traced, counter, f, x, fn)


def test_dtype_argument_changed():
    def f(x, dt):
        return x.to(dt) * 2

    traced, counter = traced_counting(f)
    x = fresh(2)
    for dt in [torch.float64, torch.int32, torch.float16, torch.float64]:
        twice(traced, counter, f, x, dt)


def test_object_class_changed_and_class_method_replaced():
    class A:
        def val(self):
            return 2.0

    class B:
        def val(self):
            return 5.0

    def f(o, x):
        return x * o.val()

    traced, counter = traced_counting(f)
    o, x = A(), fresh(2)
    twice(traced, counter, f, o, x)
    o.__class__ = B
    twice(traced, counter, f, o, x)
    B.val = lambda self: 9.0
    twice(traced, counter, f, o, x)


def test_sequential_edited_in_place():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    traced, counter = traced_counting(m)
    x = fresh(1, 2)
    _check_module(traced, counter, m, x)
    del m[1]
    _check_module(traced, counter, m, x)
    m.append(nn.Tanh())
    _check_module(traced, counter, m, x)
    m[0] = nn.Identity()
    _check_module(traced, counter, m, x)


def test_parametrization_added_to_module():
    torch.manual_seed(0)
    m = nn.Linear(2, 2)
    traced, counter = traced_counting(m)
    x = fresh(1, 2)
    _check_module(traced, counter, m, x)
    nn.utils.parametrizations.weight_norm(m)
    for _ in range(2):  # correctness only: capture of parametrizations is not required
        assert_same(traced(x), m(x))
    with torch.no_grad():
        m.parametrizations.weight.original0.mul_(2)
    assert_same(traced(x), m(x))


class _Logged:
    """An object whose __getattribute__ override defers to object's."""

    def __init__(self, scale):
        self.scale = scale

    def __getattribute__(self, name):
        return super().__getattribute__(name)


def test_attribute_read_through_object_getattribute_is_guarded():
    cfg = _Logged(2.0)

    def f(x):
        return x * cfg.scale

    traced = pyinterp.trace(f, backend="eager")
    x = fresh(3)
    for scale in (2.0, 2.0, 3.0, -1.0):
        cfg.scale = scale
        assert_same(traced(x), f(x))
