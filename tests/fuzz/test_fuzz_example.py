"""The worked example of docs/fuzzing.md: the property passes on the real
interpreter and finds the mutant handler, shrinking to a minimal pair."""
import re

import pytest

from pyinterp.doclistings import example
from pyinterp.testing import mutants


def test_worked_example_property_passes():
    example("fuzz_binary_ops").test_binary_op_on_ints()


def test_worked_example_property_finds_the_mutant():
    report = example("listings").shrunk_divergence()
    # shrunk to a small pair of opposite signs: (1, -2) on 3.11, (-1, 2)
    # where Hypothesis's shrinker takes the other path (3.12 in CI)
    args = re.search(r"^args: \((-?\d+), (-?\d+)\)$", report, re.M)
    assert args, report
    a, b = int(args.group(1)), int(args.group(2))
    assert a * b < 0 and abs(a) < abs(b) <= 3, report  # (small, opposite signs)
    assert "return a // b" in report
    assert "returned differs:\n   native:      -1\n   interpreted: 0" in report


def test_mutant_is_removed_after_the_block():
    from pyinterp.opcodes import registry

    correct = registry.HANDLERS["BINARY_OP"]
    with pytest.raises(AssertionError):
        with mutants.floor_division_truncates():
            assert registry.HANDLERS["BINARY_OP"] is not correct
            raise AssertionError("leave the block by an exception")
    assert registry.HANDLERS["BINARY_OP"] is correct
