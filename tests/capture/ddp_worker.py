"""One rank of the DistributedDataParallel test (test_trace_ddp.py).

``python ddp_worker.py RANK WORLD INIT_FILE OUT_FILE``: joins a gloo process
group (``file://INIT_FILE``, CPU), trains copies of the same model for three
SGD steps on the same data, each wrapped in DDP, and compares each traced
copy's losses, gradients (every step) and parameters with eager DDP's:

* ``traced``: ``pyinterp.trace(DDP(model))`` (DDP's default buckets: one);
* ``split``: the same with a small ``bucket_cap_mb``: several buckets, and
  the captured graph split into one part per bucket;
* ``split_aot``: ``split`` with the ``aot_eager`` backend, whose parts are
  autograd nodes of their own (one per bucket in backward);
* ``calls``: a traced function that calls ``DDP(model)`` (small buckets):
  split at the call, DDP's forward natively, the inner module's graph
  split into parts;
* ``inner``: ``DDP(model)`` whose ``model.forward`` is ``pyinterp.trace``d;
* ``outer``: ``DDP(pyinterp.trace(model))`` (a traced module is a module);
  both with the small buckets: their graphs, compiled inside DDP's
  forward, are split too.

Writes JSON to OUT_FILE: per copy, whether losses, gradients and parameters
equal the reference's exactly (``torch.equal``), the largest difference,
how many times its compiled graphs (or their parts) ran, its cache entries'
kinds and bucket parts, DDP's bucket count, and what ``pyinterp.explain``
says of a traced DDP module.
"""
import json
import os
import sys

import torch
import torch.distributed as dist
from torch import nn

import pyinterp

STEPS = 3
SMALL_BUCKET_MB = 0.004  # (4194 bytes: about one 32x32 linear layer per bucket)


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
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                         nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))


def train(module, forward, rank, features=8, whole=torch.Tensor.clone):
    """Three SGD steps: ``(losses, gradients of each step, parameters, last
    loss)``; ``whole(t)``: a copy of parameter or gradient ``t`` whole (a
    sharded one gathered)."""
    opt = torch.optim.SGD(module.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(100 + rank)
    losses, grads = [], []
    for _ in range(STEPS):
        x = torch.randn(5, features, generator=g)
        loss = forward(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        losses.append(loss.detach().clone())
        grads.append([whole(p.grad) for p in module.parameters()])
        opt.step()
    return losses, grads, [whole(p.detach()) for p in module.parameters()], loss


def compare(run, reference):
    """Exact equality and the largest difference of losses, gradients, parameters."""
    pairs = list(zip(run[0], reference[0]))
    pairs += [pair for got, want in zip(run[1], reference[1]) for pair in zip(got, want)]
    pairs += list(zip(run[2], reference[2]))
    return {"equal": all(torch.equal(a, b) for a, b in pairs),
            "max_diff": max((a - b).abs().max().item() for a, b in pairs)}


def compiled_backward_nodes(loss):
    """How many AOTAutograd backward nodes ``loss``'s autograd graph has."""
    seen, todo, count = set(), [loss.grad_fn], 0
    while todo:
        fn = todo.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        count += "CompiledFunction" in type(fn).__name__
        todo.extend(next_fn for next_fn, _ in fn.next_functions)
    return count


def ddp_buckets(ddp):
    """How many gradient buckets DDP's reducer has (after its rebuild)."""
    return len(ddp.reducer._get_zeros_like_grad_buckets())


def cache_report(traced):
    return [{"kind": e.kind, "graph_count": e.graph_count, "ddp_parts": e.ddp_parts,
             "hits": e.hits} for e in traced.cache_entries()]


def run_rank(main):
    """``main(rank, world, init_file, out_file)`` from the command line, in a
    gloo process group, then leave at once."""
    rank, world, init_file, out_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    dist.init_process_group("gloo", init_method="file://" + init_file, rank=rank,
                            world_size=world)
    main(rank, world, out_file)
    dist.barrier()  # neither rank tears gloo down while the other still talks
    dist.destroy_process_group()
    # gloo's worker threads can still be joinable when C++ runs static
    # destructors at exit ("terminate called without an active exception",
    # SIGABRT, seen under load); the report is written, so leave at once.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def main(rank, world, out_file):
    ddp = nn.parallel.DistributedDataParallel
    report = {}
    m = model()
    reference = train(m, ddp(m), rank)
    m = model()
    reference_small = train(m, ddp(m, bucket_cap_mb=SMALL_BUCKET_MB), rank)

    m = model()
    counter = Counting()
    traced = pyinterp.trace(ddp(m), backend=counter)
    report["traced"] = dict(compare(train(m, traced, rank), reference),
                            graph_runs=counter.runs, cache=cache_report(traced),
                            buckets=ddp_buckets(traced._orig_mod))

    m = model()
    counter = Counting()
    wrapped = ddp(m, bucket_cap_mb=SMALL_BUCKET_MB)
    traced = pyinterp.trace(wrapped, backend=counter)
    report["split"] = dict(compare(train(m, traced, rank), reference_small),
                           graph_runs=counter.runs, cache=cache_report(traced),
                           buckets=ddp_buckets(wrapped))
    x = torch.randn(5, 8)
    explanation = pyinterp.explain(traced, x)
    explanation.result.sum().backward()  # (the reducer's iteration, finished)
    report["explain"] = {"graph_count": explanation.graph_count,
                         "breaks": explanation.graph_break_count,
                         "ddp_parts": explanation.ddp_parts, "summary": str(explanation),
                         "result_equal": torch.equal(explanation.result, wrapped(x))}

    m = model()
    wrapped = ddp(m, bucket_cap_mb=SMALL_BUCKET_MB)
    traced = pyinterp.trace(wrapped, backend="aot_eager")
    run = train(m, traced, rank)
    report["split_aot"] = dict(compare(run, reference_small), cache=cache_report(traced),
                               buckets=ddp_buckets(wrapped),
                               backward_nodes=compiled_backward_nodes(run[3]))

    m = model()
    counter = Counting()
    wrapped = ddp(m, bucket_cap_mb=SMALL_BUCKET_MB)

    @pyinterp.trace(backend=counter)
    def step(module, x):
        return module(x * 1.0) * 1.0  # (a graph, DDP's call, a graph; exact as eager)

    report["calls"] = dict(compare(train(m, lambda x: step(wrapped, x), rank), reference_small),
                           cache=cache_report(step))
    before = counter.runs
    step(wrapped, torch.randn(5, 8)).sum().backward()
    report["calls"]["graph_runs_of_a_hit"] = counter.runs - before

    m = model()
    counter = Counting()
    m.forward = traced = pyinterp.trace(m.forward, backend=counter)
    report["inner"] = dict(compare(train(m, ddp(m, bucket_cap_mb=SMALL_BUCKET_MB), rank),
                                   reference_small),
                           graph_runs=counter.runs, cache=cache_report(traced))
    m = model()
    counter = Counting()
    traced = pyinterp.trace(m, backend=counter)
    report["outer"] = dict(compare(train(m, ddp(traced, bucket_cap_mb=SMALL_BUCKET_MB), rank),
                                   reference_small),
                           graph_runs=counter.runs, cache=cache_report(traced))
    with open(out_file, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    run_rank(main)
