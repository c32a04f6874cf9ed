"""A torch that capture was not tested with gets one warning, at the first
capture, naming the tested versions (issue 16, bad input)."""
import warnings

import pytest

torch = pytest.importorskip("torch")

import pyinterp  # noqa: E402
from pyinterp import versions  # noqa: E402
from pyinterp.capture import torchversion  # noqa: E402


@pytest.mark.parametrize("version", ["2.13.0", "2.13.0+cpu", "2.13.1+cu130"])
def test_tested_versions_need_no_warning(version):
    assert versions.untested_torch_message(version) is None


@pytest.mark.parametrize("version", ["2.9.1", "2.11.0+cu128", "3.0.0a0", "not-a-version"])
def test_untested_versions_are_named_with_the_tested_range(version):
    message = versions.untested_torch_message(version)
    assert "tested with torch 2.13" in message and version in message


def _add_one(x):
    return x + 1


def _double(x):
    return x * 2


def test_one_warning_at_the_first_capture_pointing_at_the_call(monkeypatch):
    monkeypatch.setattr(torch, "__version__", "2.9.1")
    monkeypatch.setattr(torchversion, "_checked", type(torchversion._checked)())
    x = torch.ones(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = pyinterp.trace(_add_one, backend="eager")(x)
        second = pyinterp.trace(_double, backend="eager")(x)
        pyinterp.trace(_double, backend="eager")(x + 1)
    assert torch.equal(first, x + 1) and torch.equal(second, x * 2)
    about_torch = [w for w in caught if "tested with torch" in str(w.message)]
    assert len(about_torch) == 1, [str(w.message) for w in caught]
    assert "2.9.1" in str(about_torch[0].message)
    assert about_torch[0].filename == __file__


def test_no_warning_on_the_tested_torch(monkeypatch):
    monkeypatch.setattr(torch, "__version__", "2.13.0+cpu")
    monkeypatch.setattr(torchversion, "_checked", type(torchversion._checked)())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pyinterp.trace(_add_one, backend="eager")(torch.ones(2))
    assert not [w for w in caught if "tested with torch" in str(w.message)]
