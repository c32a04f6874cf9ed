#!/usr/bin/env python3
"""Per-call hit-path overhead: pyinterp.trace against torch.compile (TorchDynamo).

Once a function has been captured, every later call with compatible inputs
only checks guards and runs the compiled graph (pyinterp: guard -> mock;
Dynamo: its C guard check -> cached code).  This script measures what that
*hit path* costs on top of running the same operations eagerly, on three
tiny workloads where the overhead dominates:

* ``one_op``: ``x + 1`` on an 8-element tensor;
* ``mlp6``: a 6-layer MLP (``nn.Module``, width 32, ReLU) on a 4x32 batch;
* ``config``: ``f(x, cfg)`` that reads a dict holding a list of scales and
  a float bias (``for s in cfg['scales']: x = x * s``; ``x + cfg['bias']``),
  so guards must cover a dict, a list and Python scalars;
* ``flag``: ``flag = mask.any().item()`` handed to a callee that branches
  on it (Longformer's ``is_global_attn``): pyinterp's graph assumes it and
  its mock checks it on every call (and saves torch's random state for a
  failed check); Dynamo breaks at ``.item()``;
* ``gpt2``, ``bert``, ``llama``: the Hugging Face models of
  ``benchmarks/models.py`` (tiny configs, random weights; skipped without
  ``transformers``), whose guards have hundreds of checks (modules, their
  classes, configs).  ``--no-models`` leaves them out.

For each workload, in one process: eager ``fn``, ``torch.compile(fn,
backend=B)`` and ``pyinterp.trace(fn, backend=B)`` are built, called a few
times (capture and warm-up) and checked against eager's output.  Then, for
``--rounds`` rounds, each of the three is timed over a loop of ``--loops``
calls with ``time.perf_counter_ns`` (eager loop, Dynamo loop, pyinterp loop,
next round...); a round's per-call time is loop time / loops, and each side's
figure is the median over the rounds.

Definitions (all from the same run):

* overhead(X) = per-call(X) - per-call(eager);
* ``overhead pi/dyn`` = overhead(pyinterp) / overhead(Dynamo);
* ``total pi/dyn`` = per-call(pyinterp) / per-call(Dynamo).

Target: overhead pi/dyn <= 0.5 and total pi/dyn <= 1.0 on every workload.
Where Dynamo is no slower than eager (it can be faster: its graph skips
``nn.Module.__call__`` and hook dispatch), the overhead ratio is undefined
(``n/a``) and only the total ratio is judged.  Where pyinterp is no slower
than eager, the overhead target is met and the cell says ``<= 0``; such
workloads are left out of the overhead geomean (the count is printed).
Exit status is 0 whatever the result unless ``--check-target`` is given.

Usage::

    python3 benchmarks/hit_overhead.py --quick
    python3 benchmarks/hit_overhead.py --loops 2000 --rounds 9
    python3 benchmarks/hit_overhead.py --workloads one_op,config
"""
import argparse
import dataclasses
import sys
from typing import Callable

import _harness as H  # noqa: E402  (puts the repository root on sys.path)
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

TARGET_OVERHEAD_RATIO = 0.5
TARGET_TOTAL_RATIO = 1.0
WARMUP_CALLS = 3


# ---------------------------------------------------------------------------
# Workloads: name -> (callable, example args)
# ---------------------------------------------------------------------------

def add_one(x):
    return x + 1


class MLP6(nn.Module):
    def __init__(self, width=32, layers=6):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


def scale_by_config(x, cfg):
    for s in cfg["scales"]:
        x = x * s
    return x + cfg["bias"]


def _routed(x, flag):
    return x * 2 if flag else x - 1


def global_flag(x, mask):
    """Longformer's pattern: a bool from tensor data handed to a callee
    (pyinterp assumes it and checks it in the graph; Dynamo breaks at
    ``.item()``)."""
    flag = (mask > 0).any().item()
    return _routed(x + 1, flag)


@dataclasses.dataclass
class Workload:
    name: str
    description: str
    make: Callable  # device -> (fn, args)


def _one_op(device):
    return add_one, (torch.randn(8, device=device),)


def _mlp6(device):
    torch.manual_seed(0)
    return MLP6().to(device).eval(), (torch.randn(4, 32, device=device),)


def _config(device):
    cfg = {"scales": [0.5, 2.0, 1.5], "bias": 0.25}
    return scale_by_config, (torch.randn(8, device=device), cfg)


def _flag(device):
    return global_flag, (torch.randn(8, device=device), torch.zeros(8, device=device))


def _model(name):
    def make(device):
        import models

        spec = models.get_model(name)
        args, kwargs = spec.example(0, device)
        assert not kwargs and 1 <= len(args) <= 2, name
        return spec.build(device), args

    return make


WORKLOADS = [
    Workload("one_op", "x + 1 on an 8-element tensor", _one_op),
    Workload("mlp6", "6 x (Linear(32, 32) + ReLU) module, batch 4", _mlp6),
    Workload("config", "loop over cfg['scales'] (list), add cfg['bias'] (float)", _config),
    Workload("flag", "mask.any().item() handed to a callee that branches on it", _flag),
]
MODEL_WORKLOADS = [
    Workload("gpt2", "transformers GPT2LMHeadModel, 2 layers, hidden 64", _model("hf_gpt2")),
    Workload("bert", "transformers BertModel, 2 layers, hidden 64", _model("hf_bert")),
    Workload("llama", "transformers LlamaForCausalLM, 2 layers, hidden 64", _model("hf_llama")),
]

HEADERS = [
    "workload", "outputs", "eager", "Dynamo", "pyinterp", "overhead Dynamo",
    "overhead pyinterp", "overhead pi/dyn", "total pi/dyn", "target",
]
ALIGN = "llrrrrrrrl"


# ---------------------------------------------------------------------------
# Measurement
# ---------------------------------------------------------------------------

def prepare(fn, args, backend, notes, name):
    """Build the three callables, warm them up, check outputs against eager.

    Returns (callables name -> fn, outputs cell).  A compiler that fails is
    left out, and its error noted.
    """
    makers = {
        "eager": lambda: fn,
        "dynamo": lambda: H.dynamo_compile(fn, backend),
        "pyinterp": lambda: H.pyinterp_trace(fn, backend),
    }
    callables, checks = {}, []
    expected = fn(*args)
    for side, make in makers.items():
        try:
            compiled = make()
            for _ in range(WARMUP_CALLS):
                out = compiled(*args)
            same = _same(out, expected)
        except Exception as exc:  # noqa: BLE001
            checks.append("%s %s" % (side, notes.cell("%s / %s" % (name, side), exc)))
            continue
        callables[side] = compiled
        if side != "eager":
            checks.append("%s %s" % (side, "ok" if same else "MISMATCH"))
    return callables, ", ".join(checks)


def _same(out, expected):
    if isinstance(expected, torch.Tensor):
        return torch.allclose(out, expected, rtol=1e-4, atol=1e-4)
    import models

    return models.compare_outputs(expected, out, rtol=1e-4, atol=1e-4)[0]


def time_workload(callables, args, loops, rounds, sync):
    """Median per-call seconds of each callable, loops interleaved per round."""
    thunks = {side: _looped(fn, args) for side, fn in callables.items()}
    medians, _ = H.interleaved_loop_times(thunks, loops, rounds, sync)
    return {side: ns / 1e9 for side, ns in medians.items()}


def _looped(fn, args):
    """A no-argument thunk calling ``fn(*args)`` without re-packing ``args``.

    The thunk's own cost is the same for all three sides, so it cancels out
    of the overheads.
    """
    if len(args) == 1:
        (a,) = args
        return lambda: fn(a)
    a, b = args
    return lambda: fn(a, b)


@dataclasses.dataclass
class Result:
    """One workload's per-call figures (seconds; None where a side failed)."""

    name: str
    outputs: str
    per_call: dict

    def overhead(self, side):
        eager, t = self.per_call.get("eager"), self.per_call.get(side)
        return None if eager is None or t is None else t - eager

    def overhead_ratio(self):
        """overhead(pyinterp) / overhead(Dynamo), or None where undefined.

        Undefined when a side is missing, when Dynamo is no slower than eager,
        or when pyinterp is no slower than eager (then its overhead is <= 0:
        the target is met, but a ratio of 0 or below would break the geomean).
        """
        pi, dyn = self.overhead("pyinterp"), self.overhead("dynamo")
        if pi is None or dyn is None or dyn <= 0 or pi <= 0:
            return None
        return pi / dyn

    def total_ratio(self):
        return H.ratio(self.per_call.get("pyinterp"), self.per_call.get("dynamo"))

    def overhead_cell(self):
        pi, dyn = self.overhead("pyinterp"), self.overhead("dynamo")
        if dyn is not None and dyn <= 0:
            return "n/a (Dynamo <= eager)"
        if pi is not None and pi <= 0 and dyn is not None:
            return "<= 0 (pi <= eager)"
        return H.fmt_ratio(self.overhead_ratio())

    def verdict(self):
        """``met``/``MISSED``/``–``: total pi/dyn <= 1 and, where defined, overhead pi/dyn <= 0.5."""
        total, pi, dyn = self.total_ratio(), self.overhead("pyinterp"), self.overhead("dynamo")
        if total is None:
            return "–"
        ok = total <= TARGET_TOTAL_RATIO
        if dyn is not None and pi is not None and dyn > 0:
            # (with Dynamo no slower than eager, only the total is judged)
            ok = ok and pi <= TARGET_OVERHEAD_RATIO * dyn
        return "met" if ok else "MISSED"

    def table_row(self):
        t = self.per_call.get
        return [
            self.name, self.outputs, H.fmt_seconds(t("eager")), H.fmt_seconds(t("dynamo")),
            H.fmt_seconds(t("pyinterp")), H.fmt_seconds(self.overhead("dynamo")),
            H.fmt_seconds(self.overhead("pyinterp")), self.overhead_cell(),
            H.fmt_ratio(self.total_ratio()), self.verdict(),
        ]


def measure(workload, args, notes):
    fn, call_args = workload.make(args.device)
    callables, outputs = prepare(fn, call_args, args.backend, notes, workload.name)
    per_call = time_workload(callables, call_args, args.loops, args.rounds,
                             H.synchronizer(args.device))
    return Result(workload.name, outputs, per_call)


def summary_lines(results):
    over = [r.overhead_ratio() for r in results]
    total = [r.total_ratio() for r in results]
    met = sum(r.verdict() == "met" for r in results)
    return [
        "- geomean overhead pi/dyn: %s over %d/%d workloads where defined (target <= %.1fx)"
        % (H.fmt_ratio(H.geomean(over)), sum(v is not None for v in over), len(results),
           TARGET_OVERHEAD_RATIO),
        "- geomean total pi/dyn: %s over %d/%d workloads (target <= %.1fx)"
        % (H.fmt_ratio(H.geomean(total)), sum(v is not None for v in total), len(results),
           TARGET_TOTAL_RATIO),
        "- target met on %d/%d workloads" % (met, len(results)),
    ]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    H.add_common_args(parser, default_repeat=7)
    parser.set_defaults(backend=None)
    parser.add_argument("--loops", type=int, default=2000, help="calls per timed loop")
    parser.add_argument("--rounds", type=int, default=None,
                        help="timed loops per side (default: --repeat)")
    parser.add_argument("--workloads", default="", help="comma-separated workload names")
    parser.add_argument("--no-models", action="store_true",
                        help="leave out the Hugging Face models (gpt2, bert, llama)")
    parser.add_argument("--check-target", action="store_true",
                        help="exit 1 if any workload misses the target")
    args = parser.parse_args(argv)
    args.backend = args.backend or "eager"  # the hit path is measured with backend=eager
    H.apply_common_args(args)
    args.rounds = args.rounds or args.repeat
    if args.quick:
        args.rounds = min(args.rounds, 3)
        args.loops = min(args.loops, 500)
    return args


def select_workloads(names, with_models=True):
    import models

    usable = [w for w in MODEL_WORKLOADS
              if "hf_" + w.name not in models.SKIPPED]
    if not names:
        return WORKLOADS + (usable if with_models else [])
    by_name = {w.name: w for w in WORKLOADS + MODEL_WORKLOADS}
    return [by_name[n.strip()] for n in names.split(",") if n.strip()]


def main(argv=None):
    args = parse_args(argv)
    print("# Hit-path overhead: pyinterp.trace vs torch.compile, backend=%s" % args.backend)
    print()
    print("Target: pyinterp overhead <= %.1fx Dynamo's overhead, and never slower than "
          "Dynamo in total (total pi/dyn <= %.1fx)." % (TARGET_OVERHEAD_RATIO,
                                                        TARGET_TOTAL_RATIO))
    print(H.environment_line(args.device))
    print("per-call time (%s clock): median over %d rounds of %d-call loops, interleaved; "
          "overhead = per-call - eager per-call" % (H.CLOCK, args.rounds, args.loops))
    _, missing = H.load_pyinterp()
    if missing:
        print("note: %s; pyinterp columns will be empty" % missing)
    print()
    sys.stdout.flush()

    H.warm_up_compilers(args.backend, args.device)
    notes = H.ErrorNotes()
    results = []
    for workload in select_workloads(args.workloads, not args.no_models):
        print("running %s ..." % workload.name, file=sys.stderr, flush=True)
        results.append(measure(workload, args, notes))
    print(H.markdown_table(HEADERS, [r.table_row() for r in results], ALIGN))
    print()
    print("\n".join(summary_lines(results)))
    print(H.audit_hook_line())
    errors = notes.render()
    if errors:
        print()
        print(errors)
    missed = any(r.verdict() != "met" for r in results)
    return 1 if args.check_target and missed else 0


if __name__ == "__main__":
    sys.exit(main())
