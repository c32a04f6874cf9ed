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
(``DDP(pyinterp.trace(model))``).
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

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ddp_worker.py")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(pyinterp.__file__)))


def test_ddp_trains_exactly_as_eager_ddp(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
        OMP_NUM_THREADS="1")
    init = str(tmp_path / "init")
    outs = [str(tmp_path / ("rank%d.json" % r)) for r in range(2)]
    procs = [subprocess.Popen([sys.executable, WORKER, str(r), "2", init, outs[r]], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(2)]
    logs = [p.communicate(timeout=120)[0] for p in procs]
    for p, log in zip(procs, logs):
        assert p.returncode == 0, log
    for out in outs:
        with open(out) as f:
            report = json.load(f)
        for name in ("traced", "split", "split_aot", "inner", "outer"):
            assert report[name]["equal"], (name, report[name])
        for name in ("traced", "split", "inner", "outer"):
            assert report[name]["graph_runs"] >= 2, (name, report[name])  # hits ran graphs
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
        explained = report["explain"]
        assert (explained["graph_count"], explained["breaks"], explained["ddp_parts"]) \
            == (1, 0, [3]), explained
        assert explained["result_equal"], explained
        assert "split into 3 part(s)" in explained["summary"], explained["summary"]
