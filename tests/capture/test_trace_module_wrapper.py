"""pyinterp.trace(model) on an nn.Module is an nn.Module (issue 17, item 2):
its tree, modes, hooks, moves, attributes, state_dict (the model's keys, no
``_orig_mod.`` prefix), copies and training -- each against an eager copy of
the same model, with the calls still served by the cache."""
import copy
import io
import pickle

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from torch import nn  # noqa: E402

from trace_support import CountingBackend, assert_hits_ran_graph, assert_same, fresh  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 3)
        self.scale = 0.5

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x)))) * self.scale


def pair(make=Net, **kwargs):
    """(eager model, its traced copy, the counting backend)."""
    torch.manual_seed(0)
    eager = make()
    counter = CountingBackend()
    traced = pyinterp.trace(copy.deepcopy(eager), backend=counter, **kwargs)
    return eager, traced, counter


def calls_match(traced, eager, n=3, seed=0, **kw):
    for i in range(n):
        x = fresh(5, 4, seed=seed + i, **kw)
        assert_same(traced(x), eager(x))
    assert_same(dict(traced.state_dict()), dict(eager.state_dict()))
    assert traced.training == eager.training


# -- it is a module, with the model's tree ------------------------------------------

def test_is_a_module_with_the_models_tree():
    eager, traced, counter = pair()
    model = traced._orig_mod
    assert isinstance(traced, nn.Module)
    assert [n for n, _ in traced.named_modules()] == [n for n, _ in eager.named_modules()]
    assert [n for n, _ in traced.named_parameters()] == [n for n, _ in eager.named_parameters()]
    assert [n for n, _ in traced.named_buffers()] == [n for n, _ in eager.named_buffers()]
    assert all(a is b for a, b in zip(traced.parameters(), model.parameters()))
    assert traced.fc1 is model.fc1 and traced.get_submodule("bn") is model.bn
    calls_match(traced, eager, n=4)
    assert counter.count == 1  # one capture: the later calls were hits
    assert_hits_ran_graph(counter, 3)


def test_functions_and_methods_stay_plain_callables():
    model = Net()
    assert not isinstance(pyinterp.trace(model.forward, backend="eager"), nn.Module)
    assert not isinstance(pyinterp.trace(lambda x: x + 1, backend="eager"), nn.Module)


def test_attributes_read_and_written_through():
    eager, traced, counter = pair()
    calls_match(traced, eager)
    assert traced.scale == 0.5
    traced.scale = 2.0  # the model's attribute: the guard on it fails, a new capture
    eager.scale = 2.0
    assert traced._orig_mod.scale == 2.0 and "scale" not in traced.__dict__
    calls_match(traced, eager, seed=10)
    assert counter.count == 2
    traced.extra = nn.Linear(2, 2)  # a submodule registered on the model
    assert "extra" in traced._orig_mod._modules
    assert [n for n, _ in traced.named_parameters()][-2:] == ["extra.weight", "extra.bias"]
    del traced.extra
    assert not hasattr(traced._orig_mod, "extra")
    with pytest.raises(AttributeError):
        traced.no_such_attribute  # noqa: B018


# -- modes ----------------------------------------------------------------------------

def test_train_and_eval_switch_the_model():
    eager, traced, counter = pair()
    calls_match(traced, eager)  # training: batch statistics, running stats updated
    assert traced.eval() is traced
    eager.eval()
    assert not traced.training and not traced._orig_mod.training
    assert not traced._orig_mod.bn.training
    calls_match(traced, eager, seed=20)  # running statistics: a new capture
    assert traced.train() is traced
    eager.train()
    assert traced.training and traced._orig_mod.bn.training
    calls_match(traced, eager, seed=30)
    assert counter.count == 2  # train mode's entry is hit again


def test_apply_runs_on_the_model():
    eager, traced, _ = pair()
    seen = []
    assert traced.apply(lambda m: seen.append(type(m).__name__)) is traced
    expected = []
    eager.apply(lambda m: expected.append(type(m).__name__))
    assert seen == expected  # ending with 'Net', not the wrapper


# -- hooks ----------------------------------------------------------------------------

def hooks(target, log):
    pre = target.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    post = target.register_forward_hook(lambda m, args, out: log.append(out.sum()) or out + 1)
    return pre, post


@pytest.mark.parametrize("where", ["wrapper", "model"])
def test_hooks_added_after_capture_run(where):
    eager, traced, counter = pair()
    calls_match(traced, eager)
    log, expected = [], []
    handles = hooks(traced if where == "wrapper" else traced._orig_mod, log)
    eager_handles = hooks(eager, expected)
    calls_match(traced, eager, seed=40)
    assert len(log) == len(expected) == 3
    assert_same(log, expected)
    for h in handles + eager_handles:
        h.remove()
    calls_match(traced, eager, seed=50)
    assert len(log) == 3
    assert counter.count == 2  # without hooks: the first entry again


def test_kwargs_hooks_and_submodule_hooks():
    eager, traced, _ = pair()
    calls_match(traced, eager)
    for target in (traced, eager):
        target.register_forward_hook(lambda m, args, kwargs, out: out * 3, with_kwargs=True)
        target.fc1.register_forward_hook(lambda m, args, out: out - 1)
    calls_match(traced, eager, seed=60)


def test_a_backward_hook_added_after_capture_runs():
    eager, traced, _ = pair()
    logs = {traced: [], eager: []}
    for step in range(3):
        x = fresh(5, 4, seed=65 + step, requires_grad=True)
        if step == 1:
            for model, log in logs.items():
                model.register_full_backward_hook(
                    lambda m, gin, gout, log=log: log.append(gout[0].sum()))
        grads = []
        for model in logs:
            xi = x.detach().clone().requires_grad_(True)
            model(xi).pow(2).sum().backward()
            grads.append(xi.grad)
        assert_same(grads[0], grads[1])
    assert len(logs[traced]) == len(logs[eager]) == 2
    assert_same(logs[traced], logs[eager])
    assert_same([p.grad for p in traced.parameters()], [p.grad for p in eager.parameters()])


def test_a_global_hook_runs_once_per_call_as_in_eager():
    eager, traced, _ = pair()
    calls_match(traced, eager)
    seen = []
    handle = nn.modules.module.register_module_forward_hook(
        lambda m, args, out: seen.append(type(m).__name__))
    try:
        x = fresh(5, 4, seed=70)
        assert_same(traced(x), eager(x))
    finally:
        handle.remove()
    assert seen[:len(seen) // 2] == seen[len(seen) // 2:]  # traced's, then eager's
    assert seen.count("Net") == 2


# -- moves --------------------------------------------------------------------------

def test_to_moves_the_model():
    eager, traced, counter = pair()
    calls_match(traced, eager)
    assert traced.to(torch.float64) is traced
    eager.to(torch.float64)
    assert traced._orig_mod.fc1.weight.dtype == torch.float64
    calls_match(traced, eager, seed=80, dtype=torch.float64)
    assert traced.float() is traced
    eager.float()
    calls_match(traced, eager, seed=90)
    assert counter.count == 2


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_moves_the_model():  # pragma: no cover - run on the GPU machine
    eager, traced, _ = pair()
    calls_match(traced, eager)
    assert traced.cuda() is traced
    eager.cuda()
    assert traced._orig_mod.fc1.weight.is_cuda
    for i in range(3):
        x = fresh(5, 4, seed=100 + i).cuda()
        assert_same(traced(x), eager(x), rtol=1e-5, atol=1e-5)
    assert traced.cpu() is traced and not traced.fc1.weight.is_cuda


# -- state_dict ---------------------------------------------------------------------

def test_state_dict_has_the_models_keys():
    eager, traced, _ = pair()
    calls_match(traced, eager)
    sd = traced.state_dict()
    assert not any(k.startswith("_orig_mod") for k in sd)
    assert_same(dict(sd), dict(eager.state_dict()))
    assert traced.state_dict(prefix="p.").keys() == eager.state_dict(prefix="p.").keys()


def test_save_and_load_round_trip_with_the_untraced_model(tmp_path):
    eager, traced, _ = pair()
    calls_match(traced, eager)
    # traced -> file -> a fresh untraced model
    torch.save(traced.state_dict(), tmp_path / "traced.pt")
    torch.manual_seed(1)
    untraced = Net()
    assert untraced.load_state_dict(torch.load(tmp_path / "traced.pt")).missing_keys == []
    assert_same(untraced, traced._orig_mod)
    # an untraced model's file -> the traced model: its calls use the new weights
    torch.manual_seed(2)
    other = Net()
    with torch.no_grad():
        other.fc1.weight.mul_(3)
    torch.save(other.state_dict(), tmp_path / "other.pt")
    result = traced.load_state_dict(torch.load(tmp_path / "other.pt"))
    assert result.missing_keys == [] and result.unexpected_keys == []
    eager.load_state_dict(torch.load(tmp_path / "other.pt"))
    calls_match(traced, eager, seed=110)


def test_load_state_dict_errors_as_the_model_gives_them():
    eager, traced, _ = pair()
    bad = {"fc1.weight": torch.zeros(8, 4)}
    with pytest.raises(RuntimeError) as got:
        traced.load_state_dict(bad)
    with pytest.raises(RuntimeError) as expected:
        eager.load_state_dict(bad)
    assert str(got.value) == str(expected.value)


class Outer(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.head = nn.Linear(3, 2)

    def forward(self, x):
        return self.head(self.inner(x))


def test_a_traced_submodule_keeps_the_parents_keys():
    eager, traced, counter = pair()
    parent, eager_parent = Outer(traced), Outer(eager)
    eager_parent.head.load_state_dict(parent.head.state_dict())
    assert list(parent.state_dict()) == list(eager_parent.state_dict())
    assert [n for n, _ in parent.named_modules()] == [n for n, _ in eager_parent.named_modules()]
    calls_match(parent, eager_parent)
    torch.manual_seed(3)
    other = Outer(Net())
    parent.load_state_dict(other.state_dict())
    eager_parent.load_state_dict(other.state_dict())
    calls_match(parent, eager_parent, seed=120)
    assert counter.count == 1  # the submodule's entry served every call


# -- inside another capture ---------------------------------------------------------

def test_called_inside_another_trace_is_one_graph():
    eager, traced, inner = pair()
    traced.eval()
    eager.eval()
    outer, eager_outer = Outer(traced), Outer(eager)
    eager_outer.head.load_state_dict(outer.head.state_dict())
    counter = CountingBackend()
    whole = pyinterp.trace(outer, backend=counter)
    calls_match(whole, eager_outer)
    assert counter.count == 1 and inner.count == 0  # the inner model inlined
    ops = [n for n in counter.graphs[0].graph.nodes if n.op == "call_function"]
    assert len(ops) >= 5  # fc1, bn, relu, fc2, * scale, head
    assert_hits_ran_graph(counter, 2)
    with torch.no_grad():  # the inner model's weights are read through their path
        traced.fc1.weight.add_(1)
        eager.fc1.weight.add_(1)
    calls_match(whole, eager_outer, seed=130)


def test_explain_sees_the_model():
    eager, traced, _ = pair()
    x = fresh(5, 4)
    got, expected = pyinterp.explain(traced, x), pyinterp.explain(eager, x.clone())
    assert got.graph_count == expected.graph_count == 1
    assert got.graph_break_count == expected.graph_break_count == 0
    assert got.guard_code == expected.guard_code  # the model's guards, none on the wrapper
    assert_same(got.result, expected.result)


# -- copies -----------------------------------------------------------------------

def test_deepcopy_is_a_fresh_trace_of_a_copy():
    eager, traced, counter = pair()
    calls_match(traced, eager)
    twin = copy.deepcopy(traced)
    assert type(twin) is type(traced) and twin._orig_mod is not traced._orig_mod
    assert twin.fc1.weight is not traced.fc1.weight
    assert twin._orig_mod._parameters is twin._parameters  # still one tree
    twin_eager = copy.deepcopy(eager)
    calls_match(twin, twin_eager, seed=140)
    with torch.no_grad():
        twin.fc1.weight.zero_()
        twin_eager.fc1.weight.zero_()
    calls_match(twin, twin_eager, seed=150)
    calls_match(traced, eager, seed=150)  # the original is untouched
    assert counter.count == 2  # (the copy's own capture, same backend)


def test_pickle_and_torch_save_of_the_whole_module():
    torch.manual_seed(0)
    eager = Net().eval()
    traced = pyinterp.trace(copy.deepcopy(eager), backend="eager")
    calls_match(traced, eager)
    for restored in (pickle.loads(pickle.dumps(traced)), _through_torch_save(traced)):
        assert type(restored) is type(traced) and restored._orig_mod is not traced._orig_mod
        assert_same(restored._orig_mod, eager)
        calls_match(restored, eager, seed=160)


def _through_torch_save(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=False)


# -- training ---------------------------------------------------------------------

def test_training_gives_eagers_gradients_and_weights():
    eager, traced, counter = pair()
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (traced, eager)]
    for step in range(3):
        x = fresh(5, 4, seed=170 + step)
        for model, opt in zip((traced, eager), opts):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
        grads = [p.grad for p in traced.parameters()]
        assert_same(grads, [p.grad for p in eager.parameters()])
        for opt in opts:
            opt.step()
        assert_same(traced._orig_mod, eager)
    assert counter.count == 1
    assert_hits_ran_graph(counter, 2)
