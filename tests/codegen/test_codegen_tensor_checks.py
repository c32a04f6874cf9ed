"""The tensor checks of a guard in one C++ call (codegen/tensor_checks.py),
against the same guard with every tensor checked in Python: on every call
both pass or both fail, and the index the batched one returns is a guard
that really fails (tensors' metadata is checked last, so where several
guards fail it may name another one than the Python-only guard)."""
import weakref

import attrs
import pytest

torch = pytest.importorskip("torch", reason="guards of tensors need torch")

from hypothesis import given, settings, strategies as st  # noqa: E402

import pyinterp  # noqa: E402
from pyinterp.codegen import guardgen, tensor_checks  # noqa: E402
from pyinterp.refgraph.guards import TensorMatch  # noqa: E402

pytestmark = pytest.mark.skipif(tensor_checks.TensorGuards is None,
                                reason="this torch has no TensorGuards")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)
        self.register_buffer("shift", torch.zeros(3))

    def forward(self, x, y):
        return self.lin(x) + self.shift + y


def _captured(fn, *args):
    traced = pyinterp.trace(fn, backend="eager")
    traced(*args)
    (entry,) = traced._entries.snapshot
    return entry.trace.guards


def _both(guards, nargs):
    batched, listing = guardgen.build_guard(guards, nargs, ())
    saved = tensor_checks.TensorGuards
    tensor_checks.TensorGuards = None
    try:
        plain, _ = guardgen.build_guard(guards, nargs, ())
    finally:
        tensor_checks.TensorGuards = saved
    return batched, plain, listing()


def _variant(t, how):
    """``t`` changed in one way (or in none that the Python checks see)."""
    if how == "same":
        return t
    if how == "copy":
        return t.detach().clone().requires_grad_(t.requires_grad)
    if how == "dtype":
        return t.detach().double()
    if how == "shape":
        return torch.zeros(t.shape[0] + 1, *t.shape[1:])
    if how == "strides":
        return torch.zeros(tuple(reversed(t.shape))).t() if t.dim() == 2 else t[::1].clone()[None][0]
    if how == "requires_grad":
        return t.detach().clone().requires_grad_(not t.requires_grad)
    if how == "subclass":
        return torch.nn.Parameter(t.detach().clone()) if type(t) is torch.Tensor else t.detach().clone()
    if how == "inference":  # other dispatch keys only: the Python checks pass
        with torch.inference_mode():
            return t.detach().clone()
    if how == "meta":
        return torch.empty(t.shape, dtype=t.dtype, device="meta")
    raise AssertionError(how)


def _fails(guard, call):
    """Does ``guard`` alone reject ``call`` (or raise on it)?"""
    alone, _ = guardgen.build_guard([guard], len(call[0]), ())
    try:
        return alone(*call) is not True
    except Exception:  # noqa: BLE001 - a guard that raises rejects
        return True


def _agree(guards, batched, plain, call):
    assert (batched is True) == (plain is True)
    if batched is not True:
        assert _fails(guards[batched], call)
        if plain in (batched, -1):
            return
        assert _fails(guards[plain], call)


HOWS = ["same", "copy", "dtype", "shape", "strides", "requires_grad", "subclass", "inference",
        "meta"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(HOWS), min_size=4, max_size=4))
def test_batched_guard_answers_as_the_python_checks(hows):
    torch.manual_seed(0)
    net = Net()
    x, y = torch.randn(2, 4), torch.randn(3)
    guards = _captured(net, x, y)
    batched, plain, listing = _both(guards, 2)
    assert "tensor_guards.check(" in listing
    assert batched((x, y), {}) is True
    weight, bias = net.lin.weight, net.lin.bias
    try:
        # (a parameter replaced by a tensor of another kind: the module
        # holds what the call reads)
        new_weight = _variant(weight, hows[2])
        new_shift = _variant(net.shift, hows[3])
        net.lin._parameters["weight"] = new_weight
        net._buffers["shift"] = new_shift
        call = ((_variant(x, hows[0]), _variant(y, hows[1])), {})
        _agree(guards, batched(*call), plain(*call), call)
    finally:
        net.lin._parameters["weight"] = weight
        net.lin._parameters["bias"] = bias


def test_failure_index_is_the_first_tensor_that_differs():
    net = Net()
    x, y = torch.randn(2, 4), torch.randn(3)
    guards = _captured(net, x, y)
    batched, plain, _ = _both(guards, 2)
    index = batched((x, torch.randn(3, dtype=torch.float64)), {})
    assert index == plain((x, torch.randn(3, dtype=torch.float64)), {})
    assert type(guards[index]) is TensorMatch and guards[index].source.render() == "args[1]"
    assert batched((x.double(), y.double()), {}) == plain((x.double(), y.double()), {})


def test_only_dispatch_keys_differ_still_hits():
    """An inference tensor where a normal one was read: the C++ check
    fails, the Python checks pass, and so does the guard (as before)."""
    net = Net()
    x, y = torch.randn(2, 4), torch.randn(3)
    guards = _captured(net, x, y)
    batched, _, _ = _both(guards, 2)
    with torch.inference_mode():
        x2 = x.clone()
    assert batched((x2, y), {}) is True


class Holder:
    pass


STATE = Holder()


def _resizes(x):
    STATE.buf.resize_(6)
    return x + STATE.buf.sum()


def _doubles(x):
    return x + STATE.buf * 2


def test_tensor_changed_during_the_run_is_checked_in_python():
    """A tensor resized by the run no longer has the metadata its guard
    expects: it keeps its Python check (and the guard still rejects a call
    whose tensor has the new shape)."""
    STATE.buf = torch.randn(4)
    guards = _captured(_resizes, torch.randn(2))
    (index,) = [i for i, g in enumerate(guards)
                if type(g) is TensorMatch and g.source.render().endswith("buf")]
    assert index not in tensor_checks.TensorBatch(guards)
    batched, plain, _ = _both(guards, 1)
    for buf in (torch.randn(4), torch.randn(6)):
        STATE.buf = buf
        call = ((torch.randn(2),), {})
        _agree(guards, batched(*call), plain(*call), call)
    STATE.buf = torch.randn(4)
    assert batched((torch.randn(2),), {}) is True


def test_dead_example_is_not_batched():
    """The tensor that was read is gone when the guard is built: its check
    stays in Python."""
    STATE.buf = torch.randn(4)
    guards = _captured(_doubles, torch.randn(4))
    assert tensor_checks.TensorBatch(guards).indices
    gone = torch.randn(4)
    guards = [attrs.evolve(g, example=weakref.ref(gone)) if type(g) is TensorMatch else g
              for g in guards]
    del gone
    assert not tensor_checks.TensorBatch(guards).indices
    batched, _, listing = _both(guards, 1)
    assert "tensor_guards" not in listing
    assert batched((torch.randn(4),), {}) is True
    STATE.buf = torch.randn(5)
    assert batched((torch.randn(4),), {}) is not True


def test_arguments_keep_their_checks_in_place():
    """Tensors passed in (an argument, an item of one) are the ones that
    change: their checks stay where they are, so such a miss is cheap."""
    net = Net()
    guards = _captured(lambda batch, y: net(batch["x"], y), {"x": torch.randn(2, 4)},
                       torch.randn(3))
    batch = tensor_checks.TensorBatch(guards)
    kept = {g.source.render() for i, g in enumerate(guards)
            if type(g) is TensorMatch and i not in batch}
    assert kept == {"args[0]['x']", "args[1]"}
    assert len(batch.indices) == 3  # weight, bias, shift


def test_traced_module_hits_and_misses_as_eager_would():
    """End to end: the batched guard serves equal calls and rejects
    changed parameters (the result always equals eager's)."""
    torch.manual_seed(0)
    net = Net()
    traced = pyinterp.trace(net, backend="eager")
    x, y = torch.randn(2, 4), torch.randn(3)
    for _ in range(2):
        torch.testing.assert_close(traced(x, y), net(x, y), rtol=0, atol=0)
    with torch.no_grad():
        net.lin.weight = torch.nn.Parameter(torch.randn(3, 4).double())
        net.lin.bias = torch.nn.Parameter(torch.randn(3).double())
    x2 = x.double()
    torch.testing.assert_close(traced(x2, y.double()), net(x2, y.double()), rtol=0, atol=0)
    assert len(traced._entries.snapshot) == 2
    # The checker made when the guard was built passes on a hit's tensors
    # (the fast path is taken, not only the Python checks).
    entry = traced._entries.snapshot[0]
    (checker,) = [v for v in entry.guard.__globals__.values()
                  if type(v) is tensor_checks.TensorGuards]
    guards = entry.trace.guards
    tensors = [guards[i].example() for i in tensor_checks.TensorBatch(guards).indices]
    assert len(tensors) == 3 and checker.check(*tensors)
