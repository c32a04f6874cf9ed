"""One rank of the DistributedDataParallel test (test_trace_ddp.py).

``python ddp_worker.py RANK WORLD INIT_FILE OUT_FILE``: joins a gloo process
group (``file://INIT_FILE``, CPU), trains three copies of the same model for
three SGD steps on the same data, each wrapped in DDP:

* ``eager``: ``DDP(model)`` called as it is (the reference);
* ``traced``: ``pyinterp.trace(DDP(model))``;
* ``inner``: ``DDP(model)`` whose ``model.forward`` is ``pyinterp.trace``d;
* ``outer``: ``DDP(pyinterp.trace(model))`` (a traced module is a module).

and writes JSON to OUT_FILE: for each traced copy, whether its parameters
equal the reference's exactly (``torch.equal``) and the largest difference,
and how many of the inner forward's calls ran a compiled graph.
"""
import json
import os
import sys

import torch
import torch.distributed as dist
from torch import nn

import pyinterp

STEPS = 3


class Counting:
    """An eager backend that counts the runs of its compiled graphs."""

    def __init__(self):
        self.runs = 0

    def __call__(self, gm, example_inputs):
        def run(*args):
            self.runs += 1
            return gm.forward(*args)

        return run


def model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def train(module, forward, rank):
    opt = torch.optim.SGD(module.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(100 + rank)
    for _ in range(STEPS):
        x = torch.randn(5, 8, generator=g)
        loss = forward(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [p.detach().clone() for p in module.parameters()]


def main(rank, world, init_file, out_file):
    dist.init_process_group("gloo", init_method="file://" + init_file, rank=rank,
                            world_size=world)
    ddp = nn.parallel.DistributedDataParallel
    reference = train(*(lambda m: (m, ddp(m)))(model()), rank)
    results = {}

    m = model()
    results["traced"] = train(m, pyinterp.trace(ddp(m), backend="eager"), rank)
    m = model()
    counter = Counting()
    m.forward = pyinterp.trace(m.forward, backend=counter)
    results["inner"] = train(m, ddp(m), rank)
    m = model()
    outer = Counting()
    results["outer"] = train(m, ddp(pyinterp.trace(m, backend=outer)), rank)
    report = {name: {"equal": all(torch.equal(a, b) for a, b in zip(params, reference)),
                     "max_diff": max((a - b).abs().max().item()
                                     for a, b in zip(params, reference))}
              for name, params in results.items()}
    report["inner_graph_runs"] = counter.runs
    report["outer_graph_runs"] = outer.runs
    with open(out_file, "w") as f:
        json.dump(report, f)
    dist.barrier()  # neither rank tears gloo down while the other still talks
    dist.destroy_process_group()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4])
    # gloo's worker threads can still be joinable when C++ runs static
    # destructors at exit ("terminate called without an active exception",
    # SIGABRT, seen under load); the report is written, so leave at once.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
