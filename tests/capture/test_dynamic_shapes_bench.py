"""``benchmarks/dynamic_shapes.py`` (issue 15) in its ``--quick`` mode on two
workloads (the reshaping MLP over the shape schedule, and the generation
loop with a growing ``DynamicCache``), backend eager, ``dynamic=None`` and
``True``: every output of pyinterp and of ``torch.compile`` equals eager's,
exactly, on every call; pyinterp compiles no more graphs than
``torch.compile`` (issue 15's target), and the report has its tables.

The run is in a child process (as ``test_real_world_bench.py`` does): it
resets Dynamo and compiles many graphs, which this process's later tests
need not see.
"""
import os
import sys

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")
pytest.importorskip("transformers", reason="the generation loop needs transformers")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace_support import BENCHMARKS, benchmark_child_results  # noqa: E402

sys.path.insert(0, BENCHMARKS)
import dynamic_shapes  # noqa: E402

WORKLOADS = ["mlp", "gen_llama"]

_CHILD = """
import json, logging, sys, warnings
logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
warnings.simplefilter("ignore")
import dynamic_shapes as ds
args = ds.parse_args(["--quick", "--models", %r, "--repeat", "1"])
rows = ds.run(args, progress=False)
text, _ = ds.report(rows)
out = [{"workload": r.workload, "backend": r.backend, "dynamic": r.dynamic,
        "error": r.error, "calls": r.calls, "shapes": r.shapes,
        "systems": {name: {"error": s.error, "wrong": s.wrong_calls,
                           "captures": s.captures, "compiles": s.compiles,
                           "schedule_s": s.schedule_s, "steady_s": s.steady_s}
                    for name, s in r.results.items()}}
       for r in rows]
sys.stdout.write("RESULTS " + json.dumps({"rows": out, "report": text}) + "\\n")
""" % ",".join(WORKLOADS)


@pytest.fixture(scope="module")
def results():
    return benchmark_child_results(_CHILD, timeout=600)


def test_every_output_equals_eager_on_both_systems(results):
    rows = results["rows"]
    assert {(r["workload"], r["dynamic"]) for r in rows} == {
        (w, d) for w in WORKLOADS for d in ("none", "true")}
    for row in rows:
        assert row["error"] is None, row
        assert set(row["systems"]) == {"pi", "dyn"}
        for system, result in row["systems"].items():
            where = (row["workload"], row["dynamic"], system)
            assert result["error"] is None, (where, result["error"])
            assert result["wrong"] == 0, where
            assert result["captures"] >= 1 and result["compiles"] >= 1, where
            assert result["schedule_s"] > 0 and result["steady_s"] > 0, where


def test_pyinterp_compiles_no_more_than_torch_compile(results):
    for row in results["rows"]:
        pi, dyn = row["systems"]["pi"], row["systems"]["dyn"]
        assert pi["compiles"] <= dyn["compiles"], (row["workload"], row["dynamic"], pi, dyn)
    true_rows = [r for r in results["rows"] if r["dynamic"] == "true"]
    assert all(r["systems"]["pi"]["compiles"] <= 2 for r in true_rows), true_rows


def test_the_quick_schedule_keeps_many_shapes(results):
    mlp = [r for r in results["rows"] if r["workload"] == "mlp"]
    assert all(r["calls"] >= 16 and r["shapes"] >= 12 for r in mlp)
    assert len(dynamic_shapes.SCHEDULE) >= 16 and len(set(dynamic_shapes.SCHEDULE)) >= 12


def test_the_report_has_a_table_per_dynamic_value(results):
    report = results["report"]
    for title in ("## backend eager, dynamic=None", "## backend eager, dynamic=True"):
        assert title in report
    assert report.count("| mlp ") == 2 and report.count("| gen_llama ") == 2
    assert "captures pi/dyn" in report and "Targets:" in report
    assert "every output correct: met on 4 of 4 rows" in report


def test_a_changed_output_counts_as_wrong():
    reference = dynamic_shapes.Played(outputs=[[torch.ones(3)], [torch.zeros(2)]])
    same = dynamic_shapes.Played(outputs=[[torch.ones(3)], [torch.zeros(2)]])
    assert dynamic_shapes.count_wrong(reference, same, 0.0) == (0, 0.0)
    off = dynamic_shapes.Played(outputs=[[torch.ones(3)], [torch.full((2,), 1e-6)]])
    assert dynamic_shapes.count_wrong(reference, off, 0.0)[0] == 1
    assert dynamic_shapes.count_wrong(reference, off, 1e-3)[0] == 0
    short = dynamic_shapes.Played(outputs=[[torch.ones(3)]])
    assert dynamic_shapes.count_wrong(reference, short, 0.0)[0] == 1
