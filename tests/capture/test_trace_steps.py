"""``pyinterp.steps(..., capture=True)``: each step says what capture recorded.

The first call of ``pyinterp.trace`` runs in debug mode with the steps
recorded; the guards, FX nodes and stacks it shows are those of that capture.
"""
import pytest

torch = pytest.importorskip("torch")

import pyinterp  # noqa: E402


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.scale = 0.5

    def forward(self, x):
        return torch.relu(self.fc(x)) * self.scale


def _step(steps, opname, argrepr, code="Block.forward"):
    return next(s for s in steps if s.code == code and s.opname == opname
                and s.argrepr == argrepr)


def test_capture_steps_show_guards_and_fx_nodes():
    torch.manual_seed(0)
    block = Block()
    x = torch.randn(2, 4)
    steps = pyinterp.steps(block, x, capture=True)
    assert steps.error is None
    assert torch.equal(steps.result, block(x))

    scale = _step(steps, "LOAD_ATTR", "scale")
    assert scale.stack_after[-1] == "0.5"
    assert any(r.startswith("read ") and r.endswith(".scale: ValueEq(value=0.5)")
               for r in scale.records), scale.records

    weight = _step(steps, "LOAD_ATTR", "weight", code="Linear.forward")
    assert weight.depth == 1
    assert weight.stack_after[-1] == "Parameter(4x4 float32)"
    assert any("['weight']: TensorMatch(" in r and "shape=(4, 4)" in r for r in weight.records)

    fx = [r for s in steps for r in s.records if r.startswith("fx ")]
    assert "fx relu = torch.relu(linear)" in fx
    assert any(r.startswith("fx linear = ") for r in fx)
    assert "fx mul = relu.mul(0.5)" in fx
    # each node is shown once, at the instruction that added it
    assert len(fx) == len(set(fx))
    relu = next(s for s in steps for r in s.records if r == "fx relu = torch.relu(linear)")
    assert relu.code == "Block.forward" and relu.opname == "CALL"


def test_without_capture_nothing_is_recorded():
    block = Block()
    steps = pyinterp.steps(block.forward, torch.randn(2, 4))
    assert all(s.records == () for s in steps)
    assert "Tensor(2x4 float32)" in _step(steps, "LOAD_FAST", "x").stack_after


def test_the_capture_table_shows_the_records():
    block = Block()
    table = pyinterp.steps(block, torch.randn(2, 4), capture=True).format(function="forward")
    assert "fx relu = torch.relu(linear)" in table
    assert "ValueEq(value=0.5)" in table


class Counter:
    calls = 0


LOG = []


def counted(x):
    Counter.calls = Counter.calls + 1
    LOG.append(2)
    return x + 1


def test_writes_to_outside_state_are_shown_where_they_happen():
    steps = pyinterp.steps(counted, torch.ones(2), capture=True)
    assert torch.equal(steps.result, torch.ones(2) + 1)
    writes = [(s.opname, r) for s in steps for r in s.records if r.startswith("write ")]
    assert ("STORE_ATTR", "write setattr %s.calls" % _source_text("Counter")) in writes
    assert ("CALL", "write call %s.append(2)" % _source_text("LOG")) in writes
    assert Counter.calls == 1 and LOG == [2]  # (the capture ran the call once)


def _source_text(name):
    return "%s.__dict__[%r]" % (__name__, name)
