"""DistributedDataParallel through pyinterp.trace, for real: two gloo
processes on the CPU (tests/capture/ddp_worker.py), three SGD steps, the
losses, gradients and parameters compared with eager DDP's exactly.

``pyinterp.trace(DDP(model))`` runs DDP's forward natively (its C++
reducer and logger are state pyinterp does not model) around the inner
module's trace, as ``torch.compile`` does: the model's forward is one
graph, split at DDP's gradient buckets (one part per bucket, as Dynamo's
DDPOptimizer), so that each bucket's all-reduce starts when its part's
backward ends.  A model whose own ``forward`` is traced inside DDP gets a
graph with DDP's hooks kept, and so does a traced model wrapped in DDP
(``DDP(pyinterp.trace(model))``).  FSDP2 (``fully_shard``, on the CPU
too: tests/capture/fsdp_worker.py): a traced fully-sharded model runs
natively; blocks traced before ``fully_shard`` get graphs.
"""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")
if not torch.distributed.is_available():  # pragma: no cover
    pytest.skip("torch.distributed is not available", allow_module_level=True)

import pyinterp  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(pyinterp.__file__)))


def run_ranks(worker, tmp_path):
    """Run ``worker`` (a script beside this file) as two gloo ranks; their
    JSON reports."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
        OMP_NUM_THREADS="1")
    init = str(tmp_path / "init")
    outs = [str(tmp_path / ("rank%d.json" % r)) for r in range(2)]
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, worker), str(r), "2", init,
                               outs[r]], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(2)]
    logs = [p.communicate(timeout=120)[0] for p in procs]
    for p, log in zip(procs, logs):
        assert p.returncode == 0, log
    reports = []
    for out in outs:
        with open(out) as f:
            reports.append(json.load(f))
    return reports


def test_ddp_trains_exactly_as_eager_ddp(tmp_path):
    for report in run_ranks("ddp_worker.py", tmp_path):
        for name in ("traced", "split", "split_aot", "calls", "inner", "outer"):
            assert report[name]["equal"], (name, report[name])
        # trace(DDP(model)): one graph, no break, no native entry; DDP's
        # default buckets hold the small model whole: no split.
        traced = report["traced"]
        assert traced["buckets"] == 1, traced
        assert [(e["kind"], e["graph_count"], e["ddp_parts"]) for e in traced["cache"]] \
            == [("graph", 1, [1])], traced
        # A small bucket_cap_mb: several buckets, one part per bucket, each
        # part's compiled graph run per call (eager) or a backward node of
        # its own (aot_eager).
        split = report["split"]
        assert split["buckets"] == 3, split
        assert [(e["kind"], e["graph_count"], e["ddp_parts"]) for e in split["cache"]] \
            == [("graph", 1, [3])], split
        assert split["graph_runs"] == 3 * 2, split  # three parts, two hits
        aot = report["split_aot"]
        assert [e["ddp_parts"] for e in aot["cache"]] == [[aot["buckets"]]], aot
        assert aot["backward_nodes"] == aot["buckets"] == 3, aot
        # The model's own forward traced inside DDP, or a traced model in
        # DDP: their graphs are compiled inside DDP's forward, so split too.
        for name in ("inner", "outer"):
            run = report[name]
            assert [(e["kind"], e["ddp_parts"]) for e in run["cache"]] == [("graph", [3])], run
            assert run["graph_runs"] == 3 * 2, run
        # A traced function calling DDP: a graph, DDP's call natively (its
        # inner module's three parts), a graph.
        calls = report["calls"]
        assert [e["kind"] for e in calls["cache"]] == ["partial"] * 2, calls  # (DDP's lazy init)
        assert calls["graph_runs_of_a_hit"] == 1 + 3 + 1, calls
        explained = report["explain"]
        assert (explained["graph_count"], explained["breaks"], explained["ddp_parts"]) \
            == (1, 0, [3]), explained
        assert explained["result_equal"], explained
        assert "split into 3 part(s)" in explained["summary"], explained["summary"]


def test_fully_shard_trains_exactly_as_eager_fsdp2(tmp_path):
    """FSDP2 on the CPU (gloo): a traced fully-sharded model runs natively
    (FSDP2's hooks are ``torch.compiler.disable``d); blocks whose forward
    is traced before ``fully_shard`` get graphs, FSDP2's hooks around them."""
    pytest.importorskip("torch.distributed.fsdp", reason="FSDP2 needs torch.distributed.fsdp")
    for report in run_ranks("fsdp_worker.py", tmp_path):
        for name in ("traced", "blocks", "blocks_aot"):
            assert report[name]["equal"], (name, report[name])
        traced = report["traced"]["cache"]
        assert [e["kind"] for e in traced] == ["native"], traced
        assert traced[0]["breaks"][0].startswith(
            "compiler-disable: FSDPState._pre_forward()"), traced
        for name in ("blocks", "blocks_aot"):
            cache = report[name]["cache"]
            assert [(e["kind"], e["graph_count"]) for e in cache] == [("graph", 1)] * 2, cache
        assert report["blocks"]["graph_runs"] == 2 * 2, report["blocks"]  # two blocks, two hits
