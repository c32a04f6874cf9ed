"""Python code that torch calls back: decorators, wrappers, hooks.

Each test runs a program eagerly and through ``pyinterp.trace`` on the same
inputs over several calls (the first is a capture, the others cache hits)
and compares the results, the side-effect logs and the gradients.  The
Python code torch calls back (a ``torch.compiler.disable``d function, a
custom ``autograd.Function``, a tensor hook, a checkpointed function, a
saved-tensors hook) must have its effects on every call, as in eager.
"""
import functools

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
import torch.utils.checkpoint  # noqa: E402
import torch.utils._pytree as pytree  # noqa: E402
import torch.nn.utils.parametrize  # noqa: E402,F401

from trace_support import assert_same, fresh, traced_counting  # noqa: E402

CALLS = 3


def against_eager(make, grad=False, shape=(4,), calls=CALLS, **options):
    """``make(log)`` builds the program; run it eagerly and traced (each
    with its own log) on the same inputs, ``calls`` times, and compare
    results, logs and (with ``grad``) the input's gradient after
    ``result.sum().backward()``.  Returns the traced wrapper's counter."""
    e_log, t_log = [], []
    eager_fn = make(e_log)
    traced, counter = traced_counting(make(t_log), **options)
    for i in range(calls):
        xe = fresh(*shape, seed=i, requires_grad=grad)
        xt = xe.detach().clone().requires_grad_(grad)
        expected = eager_fn(xe)
        actual = traced(xt)
        assert_same(actual, expected)
        if grad:
            expected.sum().backward()
            actual.sum().backward()
            assert_same(xt.grad, xe.grad, "grad after call %d" % i)
        assert t_log == e_log, "log after call %d" % i
    return counter


def _graph_targets(counter):
    return [getattr(n.target, "__name__", n.target)
            for gm in counter.graphs for n in gm.graph.nodes if n.op.startswith("call")]


# --------------------------------------------------------------------------
# torch.compiler.disable
# --------------------------------------------------------------------------

DISABLES = {
    "compiler.disable": torch.compiler.disable,
    "_dynamo.disable": torch._dynamo.disable,
    "non-recursive": functools.partial(torch._dynamo.disable, recursive=False),
}


@pytest.mark.parametrize("decorator", DISABLES.values(), ids=DISABLES.keys())
def test_disabled_function_runs_on_every_call_outside_the_graph(decorator):
    def make(log):
        @decorator
        def side(x):
            log.append(len(log))
            return x.mul(3)

        def f(x):
            return side(x + 1) - 1

        return f

    counter = against_eager(make, grad=True)
    assert "mul" not in _graph_targets(counter)  # never inside a graph


SIDE_LOG = []


@torch.compiler.disable
def _disabled_side(x):
    SIDE_LOG.append(len(SIDE_LOG))
    return x.mul(3)


def _calls_disabled(x):
    y = x.cos() + 1
    y = _disabled_side(y)
    return y.sin()


def test_code_around_a_disabled_function_is_still_compiled():
    # A split entry: the graph before the call, the call natively, the
    # code after it traced on its own.
    traced, counter = traced_counting(_calls_disabled)
    runs = []
    for i in range(CALLS):
        runs.append(counter.runs)
        x = fresh(4, seed=i)
        SIDE_LOG.clear()
        expected = _calls_disabled(x)
        expected_log = list(SIDE_LOG)
        SIDE_LOG.clear()
        assert_same(traced(x), expected)
        assert SIDE_LOG == expected_log
    assert "mul" not in _graph_targets(counter)
    assert "cos" in _graph_targets(counter) and "sin" in _graph_targets(counter)
    assert counter.runs - runs[-1] == 2  # the last call ran both graphs


def test_disabled_function_called_by_a_callee():
    def make(log):
        @torch.compiler.disable
        def side(x):
            log.append("side")
            return x * 2

        def inner(x):
            return side(x.sin())

        def f(x):
            return inner(x) + 1

        return f

    against_eager(make, grad=True)


def test_disabled_class_call_and_init():
    def make(log):
        @torch.compiler.disable
        class Scale:
            def __init__(self, k):
                log.append(("init", k))
                self.k = k

            def __call__(self, x):
                log.append("call")
                return x * self.k

        scale = Scale(2)

        def f(x):
            return scale(x) + Scale(3)(x)

        return f

    against_eager(make)


def test_disabled_function_under_fullgraph_raises():
    @torch.compiler.disable
    def side(x):
        return x * 2

    def f(x):
        return side(x) + 1

    with pytest.raises(pyinterp.GraphBreakError) as info:
        pyinterp.trace(f, backend="eager", fullgraph=True)(fresh(3))
    assert info.value.kind == "compiler-disable"


# --------------------------------------------------------------------------
# torch.compiler.allow_in_graph
# --------------------------------------------------------------------------

def _scaled_sin(x):
    return torch.sin(x) * 2


torch.compiler.allow_in_graph(_scaled_sin)


def test_allow_in_graph_is_one_node():
    def make(log):
        def f(x):
            return _scaled_sin(x) + 1

        return f

    counter = against_eager(make, grad=True)
    targets = _graph_targets(counter)
    assert targets.count("_scaled_sin") == 1 and "sin" not in targets
    assert counter.count == 1 and counter.runs == CALLS - 1


# --------------------------------------------------------------------------
# Python code that torch's own code calls back
# --------------------------------------------------------------------------

def test_function_under_torch_decorators_is_followed():
    # torch.no_grad() and torch.autocast(...) as decorators wrap the user's
    # function in torch's code: followed, the whole call is one graph with
    # the grad-mode and autocast changes in it, and the append replayed.
    def make(log):
        @torch.no_grad()
        def stats(x):
            log.append("stats")
            return x * 2

        @torch.autocast("cpu", dtype=torch.bfloat16)
        def mm(a, b):
            return a @ b

        def f(x):
            y = stats(x)
            z = mm(x.view(2, 2), x.view(2, 2))
            return x * y + z.float().sum()

        return f

    counter = against_eager(make, grad=True)
    assert counter.count == 1 and counter.runs == CALLS - 1


def test_custom_autograd_function_keeps_its_backward_and_effects():
    def make(log):
        class Triple(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                log.append("forward")
                return x * 2

            @staticmethod
            def backward(ctx, g):
                log.append("backward")
                return g * 3  # not the derivative of forward: must be kept

        def f(x):
            return Triple.apply(x.cos()) + 1

        return f

    against_eager(make, grad=True)


def test_tensor_hook_registered_on_every_call():
    def make(log):
        def f(x):
            y = x * 2
            y.register_hook(lambda g: (log.append("hook"), g * 10)[1])
            return y + 1

        return f

    against_eager(make, grad=True)


def test_checkpointed_function_runs_its_effects_on_every_call():
    def make(log):
        def block(x):
            log.append("block")
            return x.sin() * 2

        def f(x):
            return torch.utils.checkpoint.checkpoint(block, x + 1, use_reentrant=False)

        return f

    against_eager(make, grad=True)


def test_saved_tensors_hooks_run_on_every_call():
    def make(log):
        def pack(t):
            log.append("pack")
            return t

        def unpack(t):
            log.append("unpack")
            return t

        def f(x):
            with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
                y = x.sin()
            return y * 2

        return f

    against_eager(make, grad=True)


def test_callback_given_to_a_torch_python_function_is_followed():
    # torch's pytree calls the lambda: interpreted, its append is replayed.
    def make(log):
        def f(x):
            ys = pytree.tree_map(lambda t: (log.append(tuple(t.shape)), t * 2)[1], [x, x + 1])
            return ys[0] + ys[1]

        return f

    counter = against_eager(make)
    assert counter.count == 1 and counter.runs == CALLS - 1


def test_native_callback_in_a_speculated_branch_runs_once():
    # The data-dependent if is run both ways speculatively; the vmapped
    # function is called back natively by torch: it must not run while an
    # arm is speculated (eager runs it only when the branch is taken).
    def make(log):
        def g(x):
            log.append("g")
            return x * 2

        batched = torch.func.vmap(g)

        def f(x):
            if x.sum() > 0:
                y = batched(x)
            else:
                y = x - 1
            return y + 1

        return f

    e_log, t_log = [], []
    eager_fn, traced = make(e_log), pyinterp.trace(make(t_log), backend="eager")
    for i in range(4):
        x = fresh(2, 3, seed=i).abs() * (1 if i % 2 else -1)
        assert_same(traced(x), eager_fn(x))
        assert t_log == e_log, "log after call %d" % i


def test_vmapped_function_runs_its_effects_on_every_call():
    def make(log):
        def g(x):
            log.append("g")
            return x.sin()

        batched = torch.func.vmap(g)

        def f(x):
            return batched(x * 2) + 1

        return f

    against_eager(make, shape=(2, 3))


# --------------------------------------------------------------------------
# Hooks that libraries register on modules
# --------------------------------------------------------------------------

def train_against_eager(make, steps=CALLS):
    """``make(log)`` builds a module; train it eagerly and traced (each
    with its own log, same seed and data) for ``steps`` SGD steps and
    compare the outputs, logs and parameters after every step."""
    runs = {}
    for side in ("eager", "traced"):
        log = []
        torch.manual_seed(0)
        module = make(log)
        forward = pyinterp.trace(module, backend="eager") if side == "traced" else module
        opt = torch.optim.SGD(module.parameters(), lr=0.1)
        history = []
        for i in range(steps):
            y = forward(fresh(5, 8, seed=i))
            opt.zero_grad()
            y.pow(2).mean().backward()
            opt.step()
            history.append((y.detach(), [p.detach().clone() for p in module.parameters()],
                            list(log)))
        runs[side] = history
    for i, (actual, expected) in enumerate(zip(runs["traced"], runs["eager"])):
        assert_same(actual[0], expected[0], "output of step %d" % i)
        assert_same(actual[1], expected[1], "parameters after step %d" % i)
        assert actual[2] == expected[2], "log after step %d" % i


def _mlp():
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))


def test_full_backward_hook_of_a_module():
    def make(log):
        m = _mlp()
        m[2].register_full_backward_hook(
            lambda mod, grad_in, grad_out: (log.append("hook"), (grad_in[0] * 3,))[1])
        return m

    train_against_eager(make)


def test_full_backward_pre_hook_of_a_module():
    def make(log):
        m = _mlp()
        m[2].register_full_backward_pre_hook(
            lambda mod, grad_out: (log.append("pre"), (grad_out[0] * 3,))[1])
        return m

    train_against_eager(make)


def test_forward_hooks_and_parametrization_of_a_module():
    # Interpreted by Module.__call__ (no native callback): still one graph.
    def make(log):
        m = _mlp()
        m[0].register_forward_pre_hook(lambda mod, args: log.append("pre"))
        m[2].register_forward_hook(lambda mod, args, out: out * 2)

        class Tanh(torch.nn.Module):
            def forward(self, w):
                return w.tanh() * 2

        torch.nn.utils.parametrize.register_parametrization(m[2], "weight", Tanh())
        return m

    train_against_eager(make)


def test_fullgraph_break_inside_torch_python_leaves_torch_as_it_was():
    # Tensor.register_hook is torch's Python; the break is raised inside its
    # handle_torch_function's ``with _pop_mode_temporarily()``, whose exit a
    # graph-break signal skips: the mode stack must still be put back.  (A
    # hook with closure cells is not part of the graph: grad_hooks.py.)
    from torch.overrides import _get_current_function_mode_stack

    lin = torch.nn.Linear(4, 4)

    def f(x):
        h = lin(x).relu()
        bound = 0.01
        h.register_hook(lambda g: g.clamp(-bound, bound))
        return h.sum()

    before = _get_current_function_mode_stack()
    with pytest.raises(pyinterp.GraphBreakError) as info:
        pyinterp.trace(f, backend="eager", fullgraph=True)(torch.randn(2, 4, requires_grad=True))
    assert info.value.kind == "native-callback"
    assert _get_current_function_mode_stack() == before
    assert str(torch.sin(torch.zeros(1))) == "tensor([0.])"  # plain torch works after it


def test_lazy_module_captures_after_its_first_call():
    # The first call materializes the lazy parameters natively before its
    # capture (lazy_modules.py): one graph entry, its type guards following
    # the modules' new classes, so every later call is a hit.
    import copy

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.LazyLinear(3), torch.nn.ReLU(), torch.nn.LazyLinear(2))
    reference = copy.deepcopy(model)
    traced = pyinterp.trace(model, backend="eager")
    for seed in range(4):
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(seed))
        torch.manual_seed(100 + seed)
        expected = reference(x)
        torch.manual_seed(100 + seed)
        assert torch.equal(traced(x), expected)
    assert [(e.kind, e.hits) for e in traced.cache_entries()] == [("graph", 3)]
    assert [type(m) for m in model] == [type(m) for m in reference]


def test_fullgraph_break_inside_a_no_grad_block_leaves_grad_mode_on():
    # A break under ``torch.no_grad()`` (assigning .data of another shape
    # to a tensor that requires grad) skips that block's exit, so the
    # capture puts the grad mode back itself.
    weight = torch.nn.Parameter(torch.randn(4))

    def assign(x):
        with torch.no_grad():
            weight.data = x[:2]
        return x

    with pytest.raises(pyinterp.GraphBreakError):
        pyinterp.trace(assign, backend="eager", fullgraph=True)(torch.randn(4))
    assert torch.is_grad_enabled()
