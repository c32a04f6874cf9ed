"""One rank of the FSDP2 (``fully_shard``) test (test_trace_ddp.py).

``python fsdp_worker.py RANK WORLD INIT_FILE OUT_FILE``: a gloo process
group on the CPU, a model of two blocks and a head, each block and the root
``fully_shard``ed on a 1-D CPU mesh; three SGD steps, compared with eager
FSDP2 (losses, gathered gradients and parameters):

* ``traced``: ``pyinterp.trace(model)``: FSDP2's hooks (all-gather before a
  module's forward, reshard after) are ``torch.compiler.disable``d, so the
  capture breaks at the root's first hook where no split is possible: the
  entry runs natively;
* ``blocks``: each block's ``forward`` traced before ``fully_shard``: FSDP2's
  hooks run natively around the blocks' compiled graphs (eager backend,
  counted);
* ``blocks_aot``: the same with ``aot_eager``.

Writes JSON to OUT_FILE: per copy, equality and largest difference, its
cache entries' kinds and break reasons, graph runs.
"""
import json

import torch
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

import pyinterp
from ddp_worker import Counting, compare, run_rank, train

FEATURES = 16


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(FEATURES, FEATURES)
        self.b = nn.Linear(FEATURES, FEATURES)

    def forward(self, x):
        return x + self.b(torch.relu(self.a(x)))


def model(mesh, trace_block=None):
    torch.manual_seed(0)
    m = nn.Sequential(Block(), Block(), nn.Linear(FEATURES, 4))
    for block in m[:2]:
        if trace_block is not None:
            block.forward = trace_block(block.forward)
        fully_shard(block, mesh=mesh)
    fully_shard(m, mesh=mesh)
    return m


def entries(traced):
    return [{"kind": e.kind, "graph_count": e.graph_count, "breaks": e.break_reasons}
            for e in traced.cache_entries()]


def main(rank, world, out_file):
    mesh = init_device_mesh("cpu", (world,))

    def fit(m, forward):
        return train(m, forward, rank, FEATURES, lambda t: t.full_tensor().clone())

    m = model(mesh)
    reference = fit(m, m)
    report = {}
    m = model(mesh)
    traced = pyinterp.trace(m, backend="eager")
    report["traced"] = dict(compare(fit(m, traced), reference), cache=entries(traced))
    counter = Counting()
    m = model(mesh, lambda forward: pyinterp.trace(forward, backend=counter))
    report["blocks"] = dict(compare(fit(m, m), reference), graph_runs=counter.runs,
                            cache=entries(m[0].forward) + entries(m[1].forward))
    m = model(mesh, lambda forward: pyinterp.trace(forward, backend="aot_eager"))
    report["blocks_aot"] = dict(compare(fit(m, m), reference),
                                cache=entries(m[0].forward) + entries(m[1].forward))
    with open(out_file, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    run_rank(main)
