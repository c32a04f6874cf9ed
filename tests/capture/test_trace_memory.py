"""What a traced callable keeps after a call returns: no tensor of the call
(inputs, activations, output), no module or closure passed as an argument,
and no ``linecache`` lines of entries that are gone.  Results still match
eager's on every later call."""
import gc
import linecache
import warnings
import weakref

import pytest

from trace_support import assert_same

torch = pytest.importorskip("torch")

import pyinterp  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensor  # noqa: E402


def _live_tensors():
    gc.collect()
    with warnings.catch_warnings():  # (isinstance on torch's deprecated aliases warns)
        warnings.simplefilter("ignore")
        return {id(t): t for t in gc.get_objects()
                if isinstance(t, torch.Tensor) and not isinstance(t, FakeTensor)
                and t.device.type != "meta" and t.numel() > 0}


def _new_tensors(before):
    """Real tensors (with data) alive now that were not alive at ``before``."""
    return [tuple(t.shape) for i, t in _live_tensors().items() if i not in before]


class Block(torch.nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.fc1 = torch.nn.Linear(width, 2 * width)
        self.fc2 = torch.nn.Linear(2 * width, width)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x))) + x


def step(model, x):
    h = x * 2
    h = model(h)
    return h.tanh() - 1


def _call_leaves_nothing(traced, fn, rows, before):
    """``traced(model, x)`` on a fresh model and input matches eager's; once
    the caller drops them, no tensor of the call and not the model is alive
    (``before``: the tensors alive before)."""

    def call():
        model, x = Block(), torch.randn(rows, 8)
        y = traced(model, x)
        assert_same(y, fn(model, x))
        return weakref.ref(model), weakref.ref(x), weakref.ref(y)

    refs = call()
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
    assert _new_tensors(before) == []


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_no_tensor_of_the_call_and_not_the_module_outlive_it(backend):
    traced = pyinterp.trace(step, backend=backend)
    traced(Block(), torch.randn(3, 8))  # (Inductor's one-time set-up, outside the count)
    _call_leaves_nothing(traced, step, 5, _live_tensors())
    # The entry still serves calls of the same kind, with eager's results.
    model, x = Block(), torch.randn(5, 8)
    assert_same(traced(model, x), step(model, x))
    assert len(traced._entries) == 2


def test_a_hit_keeps_nothing_either():
    traced = pyinterp.trace(step, backend="eager")
    model = Block()
    traced(model, torch.randn(4, 8))
    before = _live_tensors()
    x = torch.randn(4, 8)
    y = traced(model, x)
    assert_same(y, step(model, x))
    del x, y
    assert _new_tensors(before) == []


def test_a_closure_passed_as_an_argument_is_not_kept_and_its_entry_retires():
    def apply(fn, x):
        return fn(x) + 1

    traced = pyinterp.trace(apply, backend="eager")

    def make(scale):
        big = torch.full((64, 64), scale)
        return lambda x: x @ big

    for scale in (1.0, 2.0, 3.0):
        fn, x = make(scale), torch.ones(2, 64)
        assert_same(traced(fn, x), apply(fn, x))
        ref = weakref.ref(fn)
        del fn
        gc.collect()
        assert ref() is None
    # Each dead closure's entry retired; the next miss cleared them out.
    assert len(traced._entries) == 1
    fn = make(4.0)
    assert_same(traced(fn, torch.ones(2, 64)), apply(fn, torch.ones(2, 64)))
    assert_same(traced(fn, torch.ones(2, 64)), apply(fn, torch.ones(2, 64)))
    assert len(traced._entries) == 1


def _breaks_in_the_middle(model, x):
    h = model(x.sin() * 2)
    n = int(h.sum() > 0)  # an int from a tensor, used as an index: a break here
    return (h.cos(), h.sin())[n]


def _breaks_in_a_loop(model, x):
    for _ in range(2):
        x = model(x)
        print("sum", int(x.sum()))  # a break inside a loop: no resume point
    return x


@pytest.mark.parametrize("fn", [_breaks_in_the_middle, _breaks_in_a_loop])
def test_graph_breaks_keep_no_tensor_of_the_first_call_either(fn, capsys):
    traced = pyinterp.trace(fn, backend="eager")
    before = _live_tensors()
    for _ in range(2):  # the first call (a capture), then a hit
        _call_leaves_nothing(traced, fn, 4, before)


def test_linecache_does_not_grow_with_recaptures():
    def f(x, k):
        return (x * k).sin() + k

    def capture_some():
        traced = pyinterp.trace(f, backend="eager", cache_limit=4)
        with pytest.warns(pyinterp.RecompileLimitWarning):
            for k in range(6):  # four captures, then natively
                assert_same(traced(torch.ones(2), float(k)), f(torch.ones(2), float(k)))

    capture_some()
    gc.collect()
    before = len(linecache.cache)
    for _ in range(5):
        capture_some()
    gc.collect()
    assert len(linecache.cache) <= before


def test_the_graphs_keep_metadata_not_values():
    def f(x):
        return (x + 1).relu() * 3

    explanation = pyinterp.explain(f, torch.randn(2, 3))
    (gm,) = explanation.graphs
    metas = [n.meta for n in gm.graph.nodes if n.op in ("placeholder", "call_method",
                                                        "call_function")]
    assert metas and all("example_value" not in m for m in metas)
    assert [tuple(m["tensor_meta"].shape) for m in metas] == [(2, 3)] * len(metas)
    assert "relu" in gm.code
