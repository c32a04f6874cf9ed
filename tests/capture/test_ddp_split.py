"""The DDP bucket split (pyinterp/capture/ddp_split.py) in one process: a
captured graph cut into one part per bucket by the caps of a stand-in DDP
module, its parts compiled by the user's backend, forward and gradients
equal to eager's.  (The real thing, two gloo ranks: test_trace_ddp.py.)"""
import types

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from pyinterp.capture import ddp_split  # noqa: E402
from torch import nn  # noqa: E402
from ddp_worker import compiled_backward_nodes  # noqa: E402  (beside this file)

LAYER_BYTES = 32 * 32 * 4 + 32 * 4  # (one 32x32 linear layer's weight and bias)


def stand_in_ddp(cap, first=None):
    """What the split reads of a DDP module: its bucket caps."""
    config = types.SimpleNamespace(first_bucket_bytes_cap=cap if first is None else first)
    return types.SimpleNamespace(bucket_bytes_cap=cap, _bucket_config=config)


def model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                         nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 32))


class Splitting:
    """The split over an eager backend that counts the parts it compiles."""

    def __init__(self, ddp, backend=None):
        self.parts = 0
        self.split = ddp_split.BucketSplitBackend(backend or self._count, ddp)

    def _count(self, gm, example_inputs):
        self.parts += 1
        return gm.forward

    def __call__(self, gm, example_inputs):
        return self.split(gm, example_inputs)


def check(ddp, backend=None):
    """Trace the model through the split; compare one forward and backward
    with eager's; the parts compiled and ``ddp_parts``."""
    x = torch.randn(4, 32)
    eager = model()
    eager(x).pow(2).sum().backward()
    m = model()
    splitting = Splitting(ddp, backend)
    traced = pyinterp.trace(m, backend=splitting)
    for _ in range(2):  # (a capture, then a hit that runs the parts)
        m.zero_grad()
        out = traced(x)
        out.pow(2).sum().backward()
    assert torch.equal(out, eager(x))
    for a, b in zip(m.parameters(), eager.parameters()):
        assert torch.equal(a.grad, b.grad)
    [entry] = traced.cache_entries()
    return splitting.parts, entry.ddp_parts


@pytest.mark.parametrize("layers_per_bucket, parts", [(1, 4), (2, 2), (4, 1), (100, 1)])
def test_one_part_per_bucket(layers_per_bucket, parts):
    compiled, reported = check(stand_in_ddp(layers_per_bucket * LAYER_BYTES))
    assert reported == [parts]
    assert compiled == parts


def test_first_bucket_has_its_own_cap():
    # Buckets fill from the last layer (its gradients are ready first): a
    # first bucket of one layer, then two layers a bucket: [1] [2, 3] [4].
    _, reported = check(stand_in_ddp(2 * LAYER_BYTES, first=LAYER_BYTES))
    assert reported == [3]
    _, reported = check(stand_in_ddp(2 * LAYER_BYTES))  # [1, 2] [3, 4]
    assert reported == [2]


def test_aot_backend_gets_a_backward_node_per_part():
    from torch._dynamo.backends.registry import lookup_backend

    m = model()
    x = torch.randn(4, 32)
    traced = pyinterp.trace(m, backend=ddp_split.BucketSplitBackend(
        lookup_backend("aot_eager"), stand_in_ddp(LAYER_BYTES)))
    for _ in range(2):
        loss = traced(x).pow(2).sum()
    assert compiled_backward_nodes(loss) == 4
    assert torch.equal(loss, model()(x).pow(2).sum())


def test_not_inside_ddp_no_split():
    backend = ddp_split.inside_active_ddp(ddp_split.BucketSplitBackend)
    assert backend is ddp_split.BucketSplitBackend  # (no DDP forward is running)
