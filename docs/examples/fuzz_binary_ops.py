"""A Hypothesis property for one opcode family: BINARY_OP on ints.

The worked example of docs/fuzzing.md (its listings are generated from this
file; tests/fuzz/test_fuzz_example.py runs it).
"""
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from pyinterp.testing import assert_same_source

# The operators BINARY_OP serves on ints, plain and in-place
# (`a // b` is BINARY_OP 2, `a //= b` is BINARY_OP 15).
OPERATORS = ["+", "-", "*", "//", "%", "**", "&", "|", "^", "<<", ">>"]
SMALL = st.integers(min_value=-20, max_value=20)


@st.composite
def binary_programs(draw):
    """A function of two ints that applies one operator, as an expression
    or an augmented assignment, and its arguments."""
    op = draw(st.sampled_from(OPERATORS))
    if draw(st.booleans()):
        body = "    a %s= b\n    return a\n" % op
    else:
        body = "    return a %s b\n" % op
    args = (draw(SMALL), draw(SMALL))
    return "def f(a, b):\n" + body, args


@settings(max_examples=200, derandomize=True, database=None, deadline=None,
          phases=[Phase.generate, Phase.shrink])
@given(binary_programs())
def test_binary_op_on_ints(program):
    source, args = program
    assert_same_source(source, "f", args)

