"""Debug mode checks stack effects during capture too (``PYINTERP_DEBUG=1``).

The capture variants of instructions (reads of globals, tensor arithmetic,
branches merged by GraphMend...) run in place of the plain handlers; in debug
mode each is followed by the same stack-effect assertion as
``interpret(fn, debug=True)``.
"""
import pytest

torch = pytest.importorskip("torch")

import pyinterp  # noqa: E402
from pyinterp import config  # noqa: E402
from pyinterp.interp import vm as vm_module  # noqa: E402

SCALE = 3.0


def scaled(x):
    y = x * SCALE
    if y.sum() > 0:  # a data-dependent branch: merged, a region in one handler
        y = y + 1
    else:
        y = y - 1
    return y


def _checked_opnames(monkeypatch, debug):
    seen = []
    real = vm_module._check_stack_effect

    def spy(ins, jumped, actual):
        seen.append(ins.opname)
        return real(ins, jumped, actual)

    monkeypatch.setattr(vm_module, "_check_stack_effect", spy)
    monkeypatch.setattr(config, "debug_capture", debug)
    x = torch.arange(4.0)
    result = pyinterp.trace(scaled, backend="eager")(x)
    assert torch.equal(result, scaled(x))
    return seen


def test_capture_in_debug_mode_checks_every_instruction(monkeypatch):
    seen = _checked_opnames(monkeypatch, debug=True)
    # LOAD_GLOBAL, BINARY_OP and COMPARE_OP run capture variants; LOAD_FAST
    # runs inline outside debug mode.
    assert {"LOAD_GLOBAL", "BINARY_OP", "COMPARE_OP", "LOAD_FAST"} <= set(seen)


def test_capture_without_debug_mode_checks_nothing(monkeypatch):
    assert _checked_opnames(monkeypatch, debug=False) == []


def test_a_wrong_stack_effect_in_a_capture_variant_is_caught(monkeypatch):
    from pyinterp.errors import StackEffectError

    real = vm_module._check_stack_effect

    def off_by_one(ins, jumped, actual):
        if ins.opname == "LOAD_GLOBAL":
            actual += 1  # as if the variant had pushed one value too many
        return real(ins, jumped, actual)

    monkeypatch.setattr(vm_module, "_check_stack_effect", off_by_one)
    monkeypatch.setattr(config, "debug_capture", True)
    with pytest.raises(StackEffectError, match="LOAD_GLOBAL"):
        pyinterp.trace(scaled, backend="eager")(torch.arange(4.0))
