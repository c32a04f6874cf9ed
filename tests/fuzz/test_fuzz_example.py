"""The worked example of docs/fuzzing.md: the property passes on the real
interpreter and finds the mutant handler, shrinking to the same report."""
import pytest

from pyinterp.doclistings import example
from pyinterp.testing import mutants


def test_worked_example_property_passes():
    example("fuzz_binary_ops").test_binary_op_on_ints()


def test_worked_example_property_finds_the_mutant():
    report = example("listings").shrunk_divergence()
    assert "(1, -2)" in report
    assert "returned differs:\n   native:      -1\n   interpreted: 0" in report


def test_mutant_is_removed_after_the_block():
    from pyinterp.opcodes import registry

    correct = registry.HANDLERS["BINARY_OP"]
    with pytest.raises(AssertionError):
        with mutants.floor_division_truncates():
            assert registry.HANDLERS["BINARY_OP"] is not correct
            raise AssertionError("leave the block by an exception")
    assert registry.HANDLERS["BINARY_OP"] is correct
