"""``benchmarks/real_world.py`` (issue 18) run in-process on its ``--quick``
cases: no side returns a result that differs from eager (outputs, gradients,
module state, inputs, stdout, warnings) or leaves a torch function mode on
torch's stack -- pyinterp with and without ``fullgraph``, and
``torch.compile`` -- and pyinterp's default mode never raises where eager
runs.  Capture counts are not asserted: they change as the
capture improves; a wrong result must never appear.
"""
import os
import sys

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "benchmarks"))
import real_world  # noqa: E402

QUICK = real_world.select_cases(quick=True)

# Known failures, each with its reproducer in docs/benchmarks.md
# ("Real-world idioms"): name -> (the Python versions it shows on, why).
# Strict, so a fix makes the test say so.
KNOWN_FAILURES = {}  # (none now: the three found at first are fixed)


def _param(case):
    marks = ()
    if case.name in KNOWN_FAILURES:
        shows_on, why = KNOWN_FAILURES[case.name]
        marks = pytest.mark.xfail(shows_on(sys.version_info[:2]), strict=True, reason=why)
    return pytest.param(case, id=case.name, marks=marks)


@pytest.fixture(scope="module", autouse=True)
def _quiet_dynamo():
    import logging

    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    yield
    torch._dynamo.reset()


def test_quick_covers_every_category():
    assert {c.category for c in QUICK} == set(real_world.rc.CATEGORIES)


@pytest.mark.parametrize("case", [_param(c) for c in QUICK])
def test_no_side_is_wrong(case):
    row = real_world.bench_case(case)
    wrong = {side: row.sides[side].differences for side in real_world.SIDES
             if row.sides[side].wrong}
    assert not wrong, wrong
    leaked = {side: row.sides[side].leaked for side in real_world.SIDES
              if row.sides[side].leaked}
    assert not leaked, "torch function modes left on the stack: %s" % leaked
    # pyinterp's default mode breaks where it must; it never raises where eager runs.
    assert row.sides["pi_default"].captured, row.sides["pi_default"].error
    # An ordinary module must be captured whole by pyinterp and compared.
    if case.category == "control":
        assert row.sides["pi_full"].captured, row.sides["pi_full"].error


def test_a_difference_is_reported_as_wrong():
    """The comparison itself flags a changed output, gradient or warning."""
    case = real_world.rc.get_case("mlp")
    eager = [real_world.Call(output=torch.ones(2), grads=[torch.ones(3)],
                             warns=[("w", "UserWarning", "f.py", 3)])]
    same = [real_world.Call(output=torch.ones(2), grads=[torch.ones(3)],
                            warns=[("w", "UserWarning", "f.py", 3)])]
    assert real_world.compare_calls(case, eager, same) == []
    for changed in (
            real_world.Call(output=torch.ones(2) * 2, grads=[torch.ones(3)],
                            warns=eager[0].warns),
            real_world.Call(output=torch.ones(2), grads=[torch.zeros(3)], warns=eager[0].warns),
            real_world.Call(output=torch.ones(2), grads=[None], warns=eager[0].warns),
            real_world.Call(output=torch.ones(2), grads=[torch.ones(3)], warns=[])):
        assert real_world.compare_calls(case, eager, [changed]), changed
