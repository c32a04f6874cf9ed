#!/usr/bin/env python3
"""Issue 20's stretch: ``pyinterp.trace(model.generate)``, the whole
decoding loop traced, against eager ``generate`` in the same process.

For every (family, cache, batch) row of ``generation.py``'s tiny models:
``generate = pyinterp.trace(model.generate, backend=<counting>)`` is called
``--calls`` times on the same prompt (each call compared with eager's
tokens), then warm calls of eager and of the traced ``generate`` are timed
interleaved (``--repeat``, medians).  The decoding loop breaks once per
step (``bool(unfinished.max() == 0)``, a decision on tensor data), so
``generate`` and ``_sample`` run natively, their calls diverted to their
callees' traced wrappers (``pyinterp/codegen/divert.py``): the table
shows the calls until every step runs through a graph (*settled*: the first call whose graph calls are at least
the steps and equal the next call's), the graph calls of the last call,
the breaks that ``explain`` counts and where they are, and the warm time
against eager's.  The issue's target: per-step graphs are hits and the
Python around them runs at native speed (warm pi/eager near 1 with the
eager backend, where the graphs do what eager does).

Usage::

    python3 benchmarks/generation_whole.py                 # llama, gpt2; both caches; batch 1
    python3 benchmarks/generation_whole.py --families qwen2 --batches 1,4 --new-tokens 16
"""
import argparse
import statistics
import sys

import _harness as H  # noqa: E402  (puts the repository root on sys.path)
import torch  # noqa: E402

import generation as G  # noqa: E402

HEADERS = ["family", "cache", "batch", "tokens = eager", "settled after", "graph calls (last)",
           "breaks (sites)", "warm eager", "warm pi", "warm pi/eager"]
ALIGN = "llrlrrrrrr"


def run_row(family, cache, batch, new_tokens, calls, repeats, backend):
    import pyinterp

    model = G.build_model(family)
    ids = G.prompt(batch)
    kwargs = G.generate_kwargs(cache, new_tokens)
    counter = G.CountingBackend(backend, "pyinterp")
    with torch.no_grad():
        expected = model.generate(ids, **kwargs)
        generate = pyinterp.trace(model.generate, backend=counter)
        equal, per_call = [], []
        for _ in range(calls):
            before = counter.calls
            equal.append(torch.equal(generate(ids, **kwargs), expected))
            per_call.append(counter.calls - before)
        settled = next((i + 1 for i in range(len(per_call) - 1)
                        if per_call[i] >= new_tokens and per_call[i] == per_call[i + 1]), None)
        samples = {"eager": [], "pi": []}
        for _ in range(repeats + 1):
            samples["eager"].append(H.time_once(lambda: model.generate(ids, **kwargs),
                                                lambda: None))
            samples["pi"].append(H.time_once(lambda: generate(ids, **kwargs), lambda: None))
        explanation = pyinterp.explain(model.generate, ids, **kwargs)
    eager_s = statistics.median(samples["eager"][1:])
    pi_s = statistics.median(samples["pi"][1:])
    sites = {(r.filename, r.lineno) for r in explanation.break_reasons}
    return [family, cache, str(batch), "yes" if all(equal) else "NO (%s)" % equal,
            "%s of %d calls" % (settled, calls), "%d for %d steps" % (per_call[-1], new_tokens),
            "%d (%d)" % (explanation.graph_break_count, len(sites)),
            H.fmt_seconds(eager_s), H.fmt_seconds(pi_s), H.fmt_ratio(pi_s / eager_s)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", default="llama,gpt2")
    parser.add_argument("--caches", default="dynamic,static")
    parser.add_argument("--batches", default="1")
    parser.add_argument("--new-tokens", type=int, default=8)
    parser.add_argument("--calls", type=int, default=8, help="calls before timing (default 8)")
    parser.add_argument("--repeat", type=int, default=5, help="timed warm calls per side")
    parser.add_argument("--backend", default="eager", choices=["eager", "inductor"])
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    print("# pyinterp.trace(model.generate) vs eager generate, backend %s, %d new tokens"
          % (args.backend, args.new_tokens))
    print("- " + H.environment_line())
    rows = []
    for family in args.families.split(","):
        for cache in args.caches.split(","):
            for batch in map(int, args.batches.split(",")):
                try:
                    rows.append(run_row(family, cache, batch, args.new_tokens, args.calls,
                                        args.repeat, args.backend))
                except Exception as exc:  # noqa: BLE001
                    rows.append([family, cache, str(batch), "error: " + H.one_line(exc, 200)]
                                + [""] * (len(HEADERS) - 4))
                print(" ".join(rows[-1]), file=sys.stderr, flush=True)
    print()
    print(H.markdown_table(HEADERS, rows, ALIGN))
    return 0


if __name__ == "__main__":
    sys.exit(main())
