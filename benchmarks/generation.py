#!/usr/bin/env python3
"""Text generation (issue 20): ``model.generate()`` with a compiled forward,
``pyinterp.trace`` against ``torch.compile``, in one process.

For every (family, cache, batch) row: build a tiny decoder (seeded random
weights, 2 layers, hidden 64, vocab 128; nothing is downloaded), run a
greedy eager ``generate`` as the reference, then for each system

* ``dynamo``: ``torch._dynamo.reset()``, ``torch.compile(model.forward, backend=B)``;
* ``pyinterp``: ``pyinterp.trace(model.forward, backend=B)``;

assign ``model.forward = compiled`` and time the first ``generate``
(captures and compiles included; with inductor inside a fresh Inductor
cache, so neither side reuses the other's kernels).  Then warm
``generate`` calls of eager, Dynamo and pyinterp are timed interleaved
(``model.forward`` swapped before each), and each side's median gives its
warm tokens per second (``batch * new_tokens / seconds``).  Every
``generate`` is compared with eager's tokens (``torch.equal``).

Both systems compile through the same counting backend
(``CountingBackend``): it counts the compiles, and wraps each compiled
callable to count its calls.  A decoding step is "served by a graph" when
it calls a compiled graph; the table shows the graph calls of the first and
of the last warm ``generate`` against the steps (``new_tokens``) of one
``generate``.  ``--backend inductor`` (the default) wraps
``torch._inductor.compile_fx.compile_fx`` (which is what both systems run
for ``"inductor"``), so both really use Inductor; ``eager`` runs the
GraphModule's ``forward``.

Targets (issue 20), per row: every step served by a graph; compiles <=
Dynamo's; first ``generate`` faster than Dynamo's; warm tokens per second
>= Dynamo's.  An error in one system or row is shown in its row and the run
goes on.  Exit status 0 unless ``--check-target`` and a target is missed.

Usage::

    python3 benchmarks/generation.py --quick
    python3 benchmarks/generation.py                      # full matrix, inductor
    python3 benchmarks/generation.py --backend eager --families llama,gpt2
"""
import argparse
import dataclasses
import statistics
import sys
import traceback
from typing import Optional

import _harness as H  # noqa: E402  (puts the repository root on sys.path)
import torch  # noqa: E402

VOCAB = 128
PROMPT_LEN = 6
FAMILY_NAMES = ["llama", "gpt2", "qwen2"]
MORE_FAMILIES = ["mistral"]  # built by build_model, not in the default matrix
CACHES = ["dynamic", "static"]
BATCHES = [1, 4]
SYSTEMS = ["dynamo", "pyinterp"]


# ---------------------------------------------------------------------------
# The models and the generate call
# ---------------------------------------------------------------------------

def build_model(family):
    """A tiny decoder of ``family`` (seeded random weights, ``eval()``)."""
    import transformers

    torch.manual_seed(0)
    ids = dict(vocab_size=VOCAB, bos_token_id=1, eos_token_id=2, pad_token_id=0)
    if family == "gpt2":
        config = transformers.GPT2Config(n_positions=128, n_embd=64, n_layer=2, n_head=4, **ids)
        return transformers.GPT2LMHeadModel(config).eval()
    decoder = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                   num_attention_heads=4, num_key_value_heads=2,
                   max_position_embeddings=128, **ids)
    classes = {"llama": ("LlamaConfig", "LlamaForCausalLM"),
               "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"),
               "mistral": ("MistralConfig", "MistralForCausalLM")}
    config_name, model_name = classes[family]
    config = getattr(transformers, config_name)(**decoder)
    return getattr(transformers, model_name)(config).eval()


def prompt(batch, seed=0):
    """``batch`` random prompts of ``PROMPT_LEN`` tokens (no special ids)."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(3, VOCAB, (batch, PROMPT_LEN), generator=generator)


def generate_kwargs(cache, new_tokens):
    """Greedy decoding of exactly ``new_tokens`` tokens with the ``cache``."""
    kwargs = dict(max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                  pad_token_id=0, disable_compile=True)
    if cache == "static":
        kwargs["cache_implementation"] = "static"
    return kwargs


# ---------------------------------------------------------------------------
# Counting compiles and graph calls
# ---------------------------------------------------------------------------

class CountingBackend:
    """A ``(gm, example_inputs) -> callable`` backend counting compiles and
    the calls of the callables it made; ``backend`` is ``"eager"`` (the
    GraphModule's ``forward``) or ``"inductor"``: for Dynamo ``compile_fx``
    (what ``torch.compile(backend="inductor")`` runs on Dynamo's graph), for
    pyinterp its own ``backend="inductor"`` (``compile_fx`` too, after
    pyinterp's pass that keeps eager's output layout,
    ``pyinterp.codegen.output_layout``), so each side compiles as its users'
    ``backend="inductor"`` would."""

    def __init__(self, backend, system="dynamo"):
        self.backend = backend
        self.system = system
        self.compiles = 0
        self.calls = 0

    def _compile(self, gm, example_inputs):
        if self.backend == "eager":
            return gm.forward
        if self.backend == "inductor" and self.system in ("pyinterp", "pi"):
            from pyinterp.codegen import backends

            return backends.resolve("inductor")(gm, example_inputs)
        if self.backend == "inductor":
            from torch._inductor.compile_fx import compile_fx

            return compile_fx(gm, example_inputs)
        raise ValueError("backend must be eager or inductor, not %r" % self.backend)

    def __call__(self, gm, example_inputs):
        compiled = self._compile(gm, example_inputs)
        self.compiles += 1

        def counted(*args):
            self.calls += 1
            return compiled(*args)

        return counted


def compile_forward(system, model, backend):
    """``model.forward`` compiled by ``system`` (``dynamo`` or ``pyinterp``)."""
    if system == "dynamo":
        H.dynamo_reset()
        return torch.compile(model.forward, backend=backend)
    import pyinterp

    return pyinterp.trace(model.forward, backend=backend)


@dataclasses.dataclass
class SystemRun:
    """One system on one row; ``None`` means not measured."""

    forward: object = None
    counter: Optional[CountingBackend] = None
    first_s: Optional[float] = None
    first_calls: Optional[int] = None
    warm_calls: Optional[int] = None
    warm_s: Optional[float] = None
    equal: list = dataclasses.field(default_factory=list)  # one bool per generate
    error: Optional[str] = None

    @property
    def compiles(self):
        return None if self.counter is None else self.counter.compiles


def generate_with(model, forward, ids, kwargs):
    """``model.generate(ids, **kwargs)`` with ``model.forward = forward``."""
    model.forward = forward
    return model.generate(ids, **kwargs)


def first_generate(system, model, ids, kwargs, expected, backend):
    """Compile ``model.forward`` with ``system`` and time its first ``generate``."""
    eager_forward = model.forward
    run = SystemRun(counter=CountingBackend(backend, system))
    box = {}

    def first():
        run.forward = compile_forward(system, model, run.counter)
        box["tokens"] = generate_with(model, run.forward, ids, kwargs)

    try:
        with H.cold_compile(backend):
            run.first_s = H.time_once(first, lambda: None)
        run.first_calls = run.counter.calls
        run.equal.append(torch.equal(box["tokens"], expected))
    finally:
        model.forward = eager_forward
    return run


def warm_generates(model, runs, ids, kwargs, expected, repeats):
    """Time warm ``generate`` calls of eager and of every run, interleaved,
    after one untimed round; return eager's median seconds.  A run that
    raises keeps its error."""
    eager_forward = model.forward
    live = {name: run for name, run in runs.items() if run.error is None}
    samples = {name: [] for name in ["eager", *live]}
    try:
        for _ in range(repeats + 1):
            seconds = H.time_once(lambda: generate_with(model, eager_forward, ids, kwargs),
                                  lambda: None)
            samples["eager"].append(seconds)
            for name, run in list(live.items()):
                before = run.counter.calls
                box = {}
                try:
                    seconds = H.time_once(
                        lambda: box.update(tokens=generate_with(model, run.forward, ids, kwargs)),
                        lambda: None)
                except Exception as exc:  # noqa: BLE001
                    run.error = H.one_line(exc, 300)
                    del live[name]
                    continue
                samples[name].append(seconds)
                run.warm_calls = run.counter.calls - before
                run.equal.append(torch.equal(box["tokens"], expected))
    finally:
        model.forward = eager_forward
    for name, run in live.items():
        run.warm_s = statistics.median(samples[name][1:])
    return statistics.median(samples["eager"][1:])


def run_row(family, cache, batch, new_tokens, backend, repeats, verbose=False):
    """Measure one row: returns ``(eager_seconds, {system: SystemRun})``;
    errors are caught per system (in ``SystemRun.error``)."""
    model = build_model(family)
    ids = prompt(batch)
    kwargs = generate_kwargs(cache, new_tokens)
    with torch.no_grad():
        expected = model.generate(ids, **kwargs)
        runs = {}
        for system in SYSTEMS:
            try:
                runs[system] = first_generate(system, model, ids, kwargs, expected, backend)
            except Exception as exc:  # noqa: BLE001
                if verbose:
                    traceback.print_exc()
                runs[system] = SystemRun(error=H.one_line(exc, 300))
        eager_s = warm_generates(model, runs, ids, kwargs, expected, repeats)
    return eager_s, runs


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

HEADERS = ["family", "cache", "batch", "compiles dyn", "compiles pi",
           "graph steps dyn (1st/warm)", "graph steps pi (1st/warm)", "tokens = eager",
           "1st gen dyn", "1st gen pi", "1st pi/dyn", "tok/s eager", "tok/s dyn",
           "tok/s pi", "tok/s pi/dyn"]
ALIGN = "llrrrrrlrrrrrrr"


@dataclasses.dataclass
class Row:
    family: str
    cache: str
    batch: int
    new_tokens: int
    eager_s: Optional[float] = None
    runs: dict = dataclasses.field(default_factory=dict)
    error: Optional[str] = None

    def tokens_per_s(self, seconds):
        return None if not seconds else self.batch * self.new_tokens / seconds

    def targets(self):
        """Target name -> met (True/False), None where not measured."""
        dyn, pi = self.runs.get("dynamo"), self.runs.get("pyinterp")
        if self.error or pi is None or pi.error:
            return dict.fromkeys(["every step a graph", "compiles <= dyn",
                                  "1st gen faster", "warm tok/s >= dyn"])
        both = dyn is not None and dyn.error is None
        return {
            "every step a graph": pi.warm_calls == self.new_tokens,
            "compiles <= dyn": pi.compiles <= dyn.compiles if both else None,
            "1st gen faster": pi.first_s < dyn.first_s if both else None,
            "warm tok/s >= dyn": (pi.warm_s is not None and dyn.warm_s is not None
                                  and pi.warm_s <= dyn.warm_s) if both else None,
        }

    def cells(self, notes):
        head = [self.family, self.cache, str(self.batch)]
        if self.error:
            return head + [notes.cell("%s/%s/%d" % tuple(head[:2] + [self.batch]), self.error)] \
                + ["–"] * (len(HEADERS) - 4)
        dyn, pi = self.runs["dynamo"], self.runs["pyinterp"]

        def per(run, value):
            if run.error:
                return notes.cell("%s %s/%s/%d" % (
                    "dynamo" if run is dyn else "pyinterp", *head[:2], self.batch), run.error)
            return value(run)

        steps = lambda r: "%s/%s of %d" % (r.first_calls, r.warm_calls, self.new_tokens)  # noqa: E731
        equal = lambda r: "yes" if r.equal and all(r.equal) else "NO"  # noqa: E731
        tps = {name: self.tokens_per_s(run.warm_s) for name, run in self.runs.items()}
        return head + [
            per(dyn, lambda r: str(r.compiles)), per(pi, lambda r: str(r.compiles)),
            per(dyn, steps), per(pi, steps),
            "dyn %s, pi %s" % (per(dyn, equal), per(pi, equal)),
            H.fmt_seconds(dyn.first_s), H.fmt_seconds(pi.first_s),
            H.fmt_ratio(H.ratio(pi.first_s, dyn.first_s)),
            "%.0f" % self.tokens_per_s(self.eager_s),
            "–" if tps["dynamo"] is None else "%.0f" % tps["dynamo"],
            "–" if tps["pyinterp"] is None else "%.0f" % tps["pyinterp"],
            H.fmt_ratio(H.ratio(tps["pyinterp"], tps["dynamo"])),
        ]


def summary(rows):
    """Lines: per target, on how many rows it was met."""
    lines = []
    names = ["every step a graph", "compiles <= dyn", "1st gen faster", "warm tok/s >= dyn"]
    all_met = True
    for name in names:
        results = [(row, row.targets()[name]) for row in rows]
        met = [r for r, ok in results if ok]
        missed = ["%s/%s/b%d" % (r.family, r.cache, r.batch) for r, ok in results if ok is False]
        unknown = sum(ok is None for _, ok in results)
        all_met &= not missed and not unknown
        line = "- %s: met on %d of %d rows" % (name, len(met), len(rows))
        if missed:
            line += "; missed on %s" % ", ".join(missed)
        if unknown:
            line += "; not measured on %d" % unknown
        lines.append(line)
    first = H.geomean([H.ratio(r.runs["pyinterp"].first_s, r.runs["dynamo"].first_s)
                       for r in rows if not r.error and not any(x.error for x in r.runs.values())])
    warm = H.geomean([H.ratio(r.runs["dynamo"].warm_s, r.runs["pyinterp"].warm_s)
                      for r in rows if not r.error and not any(x.error for x in r.runs.values())])
    lines.append("- geomean first generate pi/dyn: %s; warm tok/s pi/dyn: %s"
                 % (H.fmt_ratio(first), H.fmt_ratio(warm)))
    return lines, all_met


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default=None, choices=["eager", "inductor"],
                        help="backend of both systems (default inductor; eager with --quick)")
    parser.add_argument("--families", default=None,
                        help="comma-separated, of %s (default all; llama with --quick)"
                             % ",".join(FAMILY_NAMES))
    parser.add_argument("--caches", default=",".join(CACHES))
    parser.add_argument("--batches", default=None, help="default 1,4 (1 with --quick)")
    parser.add_argument("--new-tokens", type=int, default=None, help="default 32 (8 with --quick)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="warm generates per side (median; default 5, 3 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="llama, batch 1, 8 new tokens, backend eager")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch.set_num_threads (default 1; 0 keeps torch's default)")
    parser.add_argument("--check-target", action="store_true",
                        help="exit 1 unless every target is met on every row")
    parser.add_argument("--verbose", action="store_true", help="print tracebacks of errors")
    args = parser.parse_args(argv)
    quick = args.quick
    args.backend = args.backend or ("eager" if quick else "inductor")
    args.families = (args.families or ("llama" if quick else ",".join(FAMILY_NAMES))).split(",")
    args.caches = args.caches.split(",")
    args.batches = [int(b) for b in (args.batches or ("1" if quick else "1,4")).split(",")]
    args.new_tokens = args.new_tokens or (8 if quick else 32)
    args.repeat = args.repeat or (3 if quick else 5)
    if args.threads:
        torch.set_num_threads(args.threads)
    return args


def main(argv=None):
    args = parse_args(argv)
    print("# generate(): pyinterp.trace vs torch.compile, backend %s, %d new tokens, "
          "%d warm repeats" % (args.backend, args.new_tokens, args.repeat))
    print("- " + H.environment_line())
    H.warm_up_compilers(args.backend)
    notes = H.ErrorNotes()
    rows = []
    for family in args.families:
        for cache in args.caches:
            for batch in args.batches:
                row = Row(family, cache, batch, args.new_tokens)
                try:
                    row.eager_s, row.runs = run_row(family, cache, batch, args.new_tokens,
                                                    args.backend, args.repeat, args.verbose)
                except Exception as exc:  # noqa: BLE001
                    if args.verbose:
                        traceback.print_exc()
                    row.error = H.one_line(exc, 300)
                rows.append(row)
                print(" ".join(row.cells(H.ErrorNotes())), file=sys.stderr, flush=True)
    print()
    print(H.markdown_table(HEADERS, [row.cells(notes) for row in rows], ALIGN))
    print()
    errors = notes.render()
    if errors:
        print(errors)
        print()
    lines, all_met = summary(rows)
    print("Targets:")
    print("\n".join(lines))
    return 1 if args.check_target and not all_met else 0


if __name__ == "__main__":
    sys.exit(main())
