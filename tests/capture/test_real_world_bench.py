"""``benchmarks/real_world.py`` (issue 18) on its ``--quick`` cases: no side
returns a result that differs from eager (outputs, gradients, module state,
inputs, stdout, warnings) or leaves a torch function mode on torch's stack
-- pyinterp with and without ``fullgraph``, and ``torch.compile`` -- and
pyinterp's default mode never raises where eager runs.  Capture counts are
not asserted: they change as the capture improves; a wrong result must
never appear.

The cases run in one child process: a ``torch.compile`` that fails
(Dynamo refusing ``Variable``, on 3.12) leaves its process unable to nest
calls as deeply in new threads, which later tests of this process need.
"""
import os
import sys

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace_support import BENCHMARKS, benchmark_child_results  # noqa: E402

sys.path.insert(0, BENCHMARKS)
import real_world  # noqa: E402

QUICK = real_world.select_cases(quick=True)

_CHILD = """
import json, logging, sys
logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
import real_world
out = {}
for case in real_world.select_cases(quick=True):
    row = real_world.bench_case(case)
    out[case.name] = {side: {"wrong": row.sides[side].differences if row.sides[side].wrong
                             else [],
                             "leaked": row.sides[side].leaked,
                             "captured": row.sides[side].captured,
                             "error": repr(row.sides[side].error)}
                      for side in real_world.SIDES}
sys.stdout.write("RESULTS " + json.dumps(out) + "\\n")
"""


@pytest.fixture(scope="module")
def rows():
    return benchmark_child_results(_CHILD, timeout=900)


def test_quick_covers_every_category():
    assert {c.category for c in QUICK} == set(real_world.rc.CATEGORIES)


@pytest.mark.parametrize("case", QUICK, ids=lambda c: c.name)
def test_no_side_is_wrong(rows, case):
    row = rows[case.name]
    wrong = {side: row[side]["wrong"] for side in real_world.SIDES if row[side]["wrong"]}
    assert not wrong, wrong
    leaked = {side: row[side]["leaked"] for side in real_world.SIDES if row[side]["leaked"]}
    assert not leaked, "torch function modes left on the stack: %s" % leaked
    # pyinterp's default mode breaks where it must; it never raises where eager runs.
    assert row["pi_default"]["captured"], row["pi_default"]["error"]
    # An ordinary module must be captured whole by pyinterp and compared.
    if case.category == "control":
        assert row["pi_full"]["captured"], row["pi_full"]["error"]


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
