#!/usr/bin/env python3
"""Hit-path cost of symbolic-size guards (issue 15's target: within 10% of
a static entry's).

For each model of ``benchmarks/models.py`` named by ``--models``, two
traced callables of the same module: ``dynamic=False`` (an entry with exact
shapes: ``TensorMatch`` guards) and ``dynamic=True`` (an entry with
symbolic sizes: ``TensorKind`` guards and the size relations).  Each is
called twice on the model's example input, so it holds one entry; then,
interleaved in the same rounds:

* ``guard``: the entry's guard function alone, on those arguments;
* ``hit``: the whole traced call (guard, then the mock and the eager
  backend's graph), under ``torch.no_grad``.

The table gives the medians and the symbolic/static ratios; the geometric
means summarise them.  Every call's output is compared with eager's first.

Usage::

    python3 benchmarks/dynamic_guards.py            # mlp, GPT-2, BERT, Llama, T5
    python3 benchmarks/dynamic_guards.py --quick --cpu-time
"""
import argparse
import sys

import _harness as H  # noqa: E402  (puts the repository root on sys.path)
import torch  # noqa: E402

import models  # noqa: E402

DEFAULT_MODELS = "mlp,hf_gpt2,hf_bert,hf_llama,hf_t5"


def measure(spec, loops, rounds):
    """``{(kind, side): median ns}`` for one model, and whether both sides
    gave eager's outputs."""
    import pyinterp

    model = spec.build()
    args, kwargs = spec.example(0)
    with torch.no_grad():
        expected = models.flatten_tensors(model(*args, **kwargs))
    calls, correct = {}, True
    for side, dynamic in (("static", False), ("symbolic", True)):
        traced = pyinterp.trace(model, backend="eager", dynamic=dynamic)
        with torch.no_grad():
            traced(*args, **kwargs)
            got = models.flatten_tensors(traced(*args, **kwargs))
        correct &= len(got) == len(expected) and all(
            torch.equal(a, b) for a, b in zip(got, expected))
        [entry] = traced._traced._entries.snapshot
        guard = entry.guard

        def guard_call(guard=guard):
            return guard(args, kwargs)

        def hit_call(traced=traced):
            return traced(*args, **kwargs)

        calls[("guard", side)] = guard_call
        calls[("hit", side)] = hit_call
    with torch.no_grad():
        assert all(calls[("guard", side)]() is True for side in ("static", "symbolic"))
        medians, _ = H.interleaved_loop_times(calls, loops, rounds, H.synchronizer("cpu"))
    return medians, correct


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    H.add_common_args(parser, default_repeat=15)
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--loops", type=int, default=200, help="calls per timed loop")
    args = H.apply_common_args(parser.parse_args(argv))
    if args.quick:
        args.repeat, args.loops = 5, 50
    print("# Symbolic-size guards against exact-shape guards (hit path)\n")
    print("- " + H.environment_line("cpu"))
    rows, ratios = [], {"guard": [], "hit": []}
    for name in args.models.split(","):
        spec = H.find_named(models.MODELS, name, "model")
        try:
            medians, correct = measure(spec, args.loops, args.repeat)
        except Exception as e:  # noqa: BLE001 - one model's failure is its row
            rows.append([name, "error: " + H.one_line(e, 80)] + [""] * 6)
            continue
        cells = [name, "yes" if correct else "NO"]
        for kind in ("guard", "hit"):
            static, symbolic = medians[(kind, "static")], medians[(kind, "symbolic")]
            r = H.ratio(symbolic, static)
            ratios[kind].append(r)
            cells += [H.fmt_ns(static), H.fmt_ns(symbolic), H.fmt_ratio(r)]
        rows.append(cells)
    print()
    print(H.markdown_table(["model", "outputs = eager", "guard static", "guard symbolic",
                            "guard sym/static", "hit static", "hit symbolic",
                            "hit sym/static"], rows))
    print()
    for kind in ("guard", "hit"):
        print("- geomean %s symbolic/static: %s" % (kind, H.fmt_ratio(H.geomean(ratios[kind]))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
