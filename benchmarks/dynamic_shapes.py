#!/usr/bin/env python3
"""Dynamic shapes (issue 15): a server-like schedule of input shapes and a
generation loop, ``pyinterp.trace`` against ``torch.compile``, in one process.

Workloads (tiny configs, seeded random weights; nothing is downloaded):

* ``mlp``: our own MLP that reshapes by ``batch * length``
  (``x.view(b * n, d)`` -> Linear -> GELU -> Linear -> ``view(b, n, d)``);
* ``hf_gpt2``, ``hf_llama`` (token ids), ``hf_bert`` (token ids and an
  attention mask, each row padded at a random length), ``hf_t5``
  (encoder-decoder: ``input_ids`` of length n, ``decoder_input_ids`` of
  length n // 2 + 1), ``hf_resnet`` (images of height 16 + 2n and width
  16 + 3n), all from ``benchmarks/models.py``: each is called on the
  ``SCHEDULE`` of 18 calls over 13 distinct ``(batch, length)`` shapes, some
  repeated, batch 1 among them, in a fixed server-like order;
* ``gen_llama`` (and ``gen_gpt2``, on request): a greedy generation loop of
  32 steps by hand (no ``generate``) over the tiny decoder of
  ``benchmarks/generation.py``: the compiled ``model.forward`` is called
  once per step with ``use_cache=True``, the step's ``DynamicCache`` as
  ``past_key_values`` and a growing attention mask; the prefill has 6
  tokens and every later step 1, so the cache length (and the mask's) grows
  at every step.

Inputs come from a ``torch.Generator`` seeded per call.  For every workload,
backend ``B`` (``--backend``: eager, inductor; default both) and ``dynamic``
value ``D`` (``--dynamic``: none, true; default both), after an eager run
(the reference outputs, and the eager schedule time, from a second eager
run):

0. with inductor, one throwaway ``torch.compile`` of the workload in a
   fresh cache (:func:`warm_up_workload`: process-wide first-use costs of
   its kinds of kernels land on neither timed side);
1. ``torch._dynamo.reset()``, ``pyinterp.reset()``; ``pyinterp.trace(model,
   backend=counting, dynamic=D)`` runs the whole schedule, timed (captures
   and compiles included; with inductor inside a fresh Inductor cache, so
   neither side reuses the other's kernels);
2. ``torch._dynamo.reset()``; ``torch.compile(model, backend=counting,
   dynamic=D)`` runs it the same way (pyinterp's entries stay: Dynamo's
   reset does not touch them, and they are needed for step 3);
3. steady latency: eager, pyinterp and Dynamo called interleaved on the last
   call of the schedule (two warm-up calls each, then ``--repeat`` rounds;
   the median per side).  For the generation loop, the whole loop is
   repeated, and the figure is its time divided by the steps.

``counting`` is ``generation.CountingBackend``: it counts backend compiles,
and the calls of the compiled graphs, so a call that ran natively is seen:
it neither compiled nor called a graph.  pyinterp's misses past its
``cache_limit`` (8 entries) run natively, and so do Dynamo's past its
``recompile_limit``.  (A pyinterp call that captures runs the code itself,
not the new graph; it counts as a compile, not as native.)

Reported per workload, pyinterp (pi) next to torch.compile (dyn):

* captures: pyinterp's cache entries of the traced callable
  (``len(traced.cache_entries())``; resume functions' entries after a break
  are not counted); Dynamo's graphs (``counters["stats"]["unique_graphs"]``,
  recompiles included);
* compiles: the counting backend's compiles (both systems);
* native calls: calls of the schedule that neither compiled nor called a
  compiled graph;
* correct: every output equals eager's (every tensor of it, flattened with
  ``models.flatten_tensors``; exactly with the eager backend, ``allclose``
  with ``rtol = atol = 1e-3`` with inductor), ``NO (k)`` with the count of
  wrong calls otherwise;
* schedule time of eager and of both systems, and the ratio pi/dyn;
* steady per-call latency of eager and both systems, and the ratio pi/dyn.

Ratios follow ``benchmarks/_harness.py``: both figures from the same run, > 1
means pyinterp is slower.  Targets (issue 15), per workload and column:
compiles <= torch.compile's; every output correct (``--check-target``
exits 1 if one is missed).  The issue's Inductor schedule-time target
(pyinterp's below torch.compile's) is printed, not checked.  An error in
one system or workload is shown in its cell and the run goes on.

Usage::

    python3 benchmarks/dynamic_shapes.py --quick
    python3 benchmarks/dynamic_shapes.py --backend eager
    python3 benchmarks/dynamic_shapes.py --models mlp,hf_bert --dynamic true
"""
import argparse
import dataclasses
import logging
import sys
import traceback
import warnings
from typing import Callable, Optional

import _harness as H  # noqa: E402  (puts the repository root on sys.path)
import torch  # noqa: E402
import torch._dynamo  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import generation  # noqa: E402  (CountingBackend, the tiny decoders)
import models as zoo  # noqa: E402

SCHEDULE = [(1, 8), (2, 8), (1, 12), (4, 16), (2, 8), (3, 20), (1, 5), (8, 32), (2, 24),
            (1, 8), (5, 10), (6, 14), (4, 16), (2, 40), (7, 9), (3, 28), (1, 12), (2, 8)]
"""(batch, length) of each call: 18 calls, 13 distinct shapes."""
QUICK_SCHEDULE = SCHEDULE[:16]  # still 13 distinct shapes
GEN_STEPS = 32
QUICK_GEN_STEPS = 8
GEN_BATCH = 1
DYNAMIC = {"none": None, "true": True, "false": False}
BACKENDS = ["eager", "inductor"]
TOLERANCE = {"eager": 0.0, "inductor": 1e-3}
SYSTEMS = ["pi", "dyn"]


# ---------------------------------------------------------------------------
# Workloads
# ---------------------------------------------------------------------------

class ReshapeMLP(nn.Module):
    """Flattens batch and length into one dimension around two linear layers."""

    def __init__(self, features=zoo.HIDDEN, hidden=128):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, features)

    def forward(self, x):
        b, n, d = x.shape
        h = self.fc2(F.gelu(self.fc1(x.view(b * n, d))))
        return h.view(b, n, d)


def _ids(gen, batch, length):
    return torch.randint(3, zoo.VOCAB, (batch, length), generator=gen)


def _padded_mask(gen, batch, length):
    """Each row keeps a random prefix of 1 to ``length`` tokens."""
    keep = torch.randint(1, length + 1, (batch, 1), generator=gen)
    return (torch.arange(length)[None, :] < keep).long()


def _mlp_call(gen, b, n):
    return (torch.randn(b, n, zoo.HIDDEN, generator=gen),), {}


def _ids_call(gen, b, n):
    return (_ids(gen, b, n),), {}


def _bert_call(gen, b, n):
    return (), {"input_ids": _ids(gen, b, n), "attention_mask": _padded_mask(gen, b, n)}


def _t5_call(gen, b, n):
    return (), {"input_ids": _ids(gen, b, n), "decoder_input_ids": _ids(gen, b, n // 2 + 1)}


def _image_call(gen, b, n):
    return (torch.randn(b, 3, 16 + 2 * n, 16 + 3 * n, generator=gen),), {}


@dataclasses.dataclass
class Workload:
    """One row: how to build the model and how to run its calls.

    ``make_call(generator, batch, length) -> (args, kwargs)`` for a
    schedule workload; ``family`` (a ``generation.build_model`` name) for a
    generation loop."""

    name: str
    description: str
    build: Callable[[], nn.Module]
    make_call: Optional[Callable] = None
    family: Optional[str] = None

    @property
    def is_generation(self):
        return self.family is not None


def _zoo_builder(name):
    return lambda: zoo.get_model(name).build()


def _decoder_builder(family):
    return lambda: generation.build_model(family)


WORKLOADS = [
    Workload("mlp", "own: view(b * n, d) -> Linear -> GELU -> Linear -> view(b, n, d)",
             lambda: ReshapeMLP().eval(), _mlp_call),
    Workload("hf_gpt2", "GPT2LMHeadModel, token ids", _zoo_builder("hf_gpt2"), _ids_call),
    Workload("hf_bert", "BertModel, ids and padded attention mask", _zoo_builder("hf_bert"),
             _bert_call),
    Workload("hf_llama", "LlamaForCausalLM, token ids", _zoo_builder("hf_llama"), _ids_call),
    Workload("hf_t5", "T5Model, encoder ids n, decoder ids n // 2 + 1", _zoo_builder("hf_t5"),
             _t5_call),
    Workload("hf_resnet", "ResNetForImageClassification, images (16 + 2n) x (16 + 3n)",
             _zoo_builder("hf_resnet"), _image_call),
    Workload("gen_llama", "greedy loop by hand, LlamaForCausalLM, DynamicCache",
             _decoder_builder("llama"), family="llama"),
    Workload("gen_gpt2", "greedy loop by hand, GPT2LMHeadModel, DynamicCache",
             _decoder_builder("gpt2"), family="gpt2"),
]
DEFAULT_WORKLOADS = [w.name for w in WORKLOADS if w.name != "gen_gpt2"]
QUICK_WORKLOADS = ["mlp", "hf_gpt2", "gen_llama"]


def schedule_calls(workload, schedule):
    """The (args, kwargs) of every call of ``schedule``, seeded per call."""
    calls = []
    for i, (batch, length) in enumerate(schedule):
        gen = torch.Generator().manual_seed(1000 + i)
        calls.append(workload.make_call(gen, batch, length))
    return calls


# ---------------------------------------------------------------------------
# Playing a workload with one callable
# ---------------------------------------------------------------------------

@dataclasses.dataclass
class Played:
    """What one pass over a workload gave: the flattened outputs of every
    call, and of every call whether it ran natively: it neither called a
    compiled graph nor compiled one (a capture runs the code itself, not
    its graph)."""

    outputs: list = dataclasses.field(default_factory=list)
    native: list = dataclasses.field(default_factory=list)

    def record(self, output, counter, before):
        self.outputs.append([t.detach().clone() for t in zoo.flatten_tensors(output)])
        if counter is not None:
            self.native.append((counter.calls, counter.compiles) == before)


def _counts(counter):
    return None if counter is None else (counter.calls, counter.compiles)


def play_schedule(fn, calls, counter=None):
    """Call ``fn`` on every (args, kwargs) of ``calls``."""
    played = Played()
    for args, kwargs in calls:
        before = _counts(counter)
        played.record(fn(*args, **kwargs), counter, before)
    return played


def play_generation(forward, model, steps, counter=None):
    """Greedy decoding of ``steps`` tokens by hand: one ``forward`` call per
    step, with a ``DynamicCache`` and an attention mask that grow.  Each
    step's output is its logits and the chosen token."""
    from transformers import DynamicCache

    played = Played()
    ids = generation.prompt(GEN_BATCH)
    mask = torch.ones_like(ids)
    cache = DynamicCache(config=model.config)
    for _ in range(steps):
        before = _counts(counter)
        out = forward(input_ids=ids, attention_mask=mask, past_key_values=cache,
                      use_cache=True)
        ids = out.logits[:, -1, :].argmax(-1, keepdim=True)
        played.record([out.logits, ids], counter, before)
        mask = torch.cat([mask, torch.ones_like(ids)], dim=1)
    return played


class Runner:
    """Plays one workload (with its model and inputs) with any callable."""

    def __init__(self, workload, schedule, steps):
        self.workload = workload
        self.model = workload.build()
        if workload.is_generation:
            self.calls, self.steps = None, steps
        else:
            self.calls, self.steps = schedule_calls(workload, schedule), len(schedule)

    def target(self):
        """What the systems compile: ``model.forward`` for the generation
        loop (as ``generation.py`` does), the module otherwise."""
        return self.model.forward if self.workload.is_generation else self.model

    def play(self, fn, counter=None):
        if self.workload.is_generation:
            return play_generation(fn, self.model, self.steps, counter)
        return play_schedule(fn, self.calls, counter)

    def last_call(self, fn):
        """A thunk for the steady latency: the last call of the schedule, or
        the whole generation loop (its time is divided by the steps)."""
        if self.workload.is_generation:
            return lambda: play_generation(fn, self.model, self.steps)
        args, kwargs = self.calls[-1]
        return lambda: fn(*args, **kwargs)


# ---------------------------------------------------------------------------
# The systems
# ---------------------------------------------------------------------------

def compile_with(system, target, backend, dynamic):
    if system == "dyn":
        return torch.compile(target, backend=backend, dynamic=dynamic)
    import pyinterp

    return pyinterp.trace(target, backend=backend, dynamic=dynamic)


def captures_of(system, compiled, graphs_before):
    if system == "dyn":
        return torch._dynamo.utils.counters["stats"]["unique_graphs"] - graphs_before
    return len(compiled.cache_entries())


@dataclasses.dataclass
class SystemResult:
    """One system on one workload, backend and dynamic value."""

    compiled: object = None
    captures: Optional[int] = None
    compiles: Optional[int] = None
    native_calls: Optional[int] = None
    wrong_calls: Optional[int] = None
    max_err: Optional[float] = None
    schedule_s: Optional[float] = None
    steady_s: Optional[float] = None
    error: Optional[str] = None


def run_system(system, runner, reference, backend, dynamic, verbose=False):
    """Compile ``runner``'s model with ``system`` and play the workload,
    timed; compare every output with ``reference`` (eager's)."""
    result = SystemResult()
    counter = generation.CountingBackend(backend, system)
    graphs_before = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    box = {}

    def whole():
        result.compiled = compile_with(system, runner.target(), counter, dynamic)
        box["played"] = runner.play(result.compiled, counter)

    try:
        with H.cold_compile(backend):
            result.schedule_s = H.time_once(whole, lambda: None)
    except Exception as exc:  # noqa: BLE001
        if verbose:
            traceback.print_exc()
        result.error = H.one_line(exc, 300)
        result.compiled = None
        return result
    finally:
        result.compiles = counter.compiles
    played = box["played"]
    result.captures = captures_of(system, result.compiled, graphs_before)
    result.native_calls = sum(played.native)
    result.wrong_calls, result.max_err = count_wrong(reference, played, TOLERANCE[backend])
    return result


def count_wrong(reference, played, tol):
    """``(calls whose output differs from the reference's, the largest
    absolute error)``; a missing or extra call counts as wrong."""
    wrong, worst = 0, 0.0
    for expected, actual in zip(reference.outputs, played.outputs):
        ok, err, _why = zoo.compare_outputs(expected, actual, rtol=tol, atol=tol)
        wrong += not ok
        worst = max(worst, err or 0.0)
    return wrong + abs(len(reference.outputs) - len(played.outputs)), worst


def measure_steady(runner, results, repeat):
    """Steady latency of eager and of every live system, interleaved;
    returns eager's seconds per call (per step for a generation loop)."""
    per = runner.steps if runner.workload.is_generation else 1
    calls = {"eager": runner.last_call(runner.target())}
    for system, result in results.items():
        if result.error is None:
            calls[system] = runner.last_call(result.compiled)
    times, errors = H.interleaved_call_times(calls, repeat, lambda: None)
    for system, result in results.items():
        if system in errors:
            result.error = H.one_line(errors[system], 300)
        elif system in times:
            result.steady_s = times[system] / per
    return None if "eager" not in times else times["eager"] / per


@dataclasses.dataclass
class Row:
    """One workload under one backend and dynamic value."""

    workload: str
    backend: str
    dynamic: str
    calls: int = 0
    shapes: int = 0
    eager_schedule_s: Optional[float] = None
    eager_steady_s: Optional[float] = None
    results: dict = dataclasses.field(default_factory=dict)
    error: Optional[str] = None

    def targets(self):
        """Target name -> met (True/False), None where not measured."""
        pi, dyn = self.results.get("pi"), self.results.get("dyn")
        live = lambda r: r is not None and r.error is None  # noqa: E731
        return {
            "compiles <= torch.compile": (pi.compiles <= dyn.compiles
                                          if live(pi) and live(dyn) else None),
            "every output correct": (all(r.wrong_calls == 0 for r in (pi, dyn))
                                     if live(pi) and live(dyn) else None),
            "inductor schedule faster": (pi.schedule_s < dyn.schedule_s
                                         if live(pi) and live(dyn)
                                         and self.backend == "inductor" else None),
        }


def warm_up_workload(runner, backend):
    """With Inductor: one throwaway ``torch.compile`` of the workload's last
    call, in a fresh Inductor cache, before either timed side.  The first
    compile of a kind of kernel in a process (a convolution, say) pays
    process-wide first-use costs that no cache directory holds (measured:
    the ResNet's first symbolic compile took about twice as long for
    whichever system ran first); this puts them on neither side."""
    if backend != "inductor":
        return
    H.dynamo_reset()
    with H.cold_compile(backend):
        runner.last_call(torch.compile(runner.target(), backend="inductor"))()
    H.dynamo_reset()


def run_workload(workload, backend, dynamic_names, schedule, steps, repeat, verbose=False):
    """All rows of one workload and backend (one per dynamic value)."""
    import pyinterp

    runner = Runner(workload, schedule, steps)
    shapes = (len(set(schedule)) if not workload.is_generation else steps)
    rows = []
    with torch.no_grad():
        runner.play(runner.target())  # (lazy set-up of eager's first call)
        reference = runner.play(runner.target())
        warm_up_workload(runner, backend)
        eager_s = H.time_once(lambda: runner.play(runner.target()), lambda: None)
        for name in dynamic_names:
            row = Row(workload.name, backend, name, runner.steps, shapes, eager_s)
            rows.append(row)
            H.dynamo_reset()
            pyinterp.reset()
            for system in SYSTEMS:
                if system == "dyn":
                    H.dynamo_reset()
                row.results[system] = run_system(system, runner, reference, backend,
                                                 DYNAMIC[name], verbose)
            row.eager_steady_s = measure_steady(runner, row.results, repeat)
            H.dynamo_reset()
            pyinterp.reset()
    return rows


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

HEADERS = ["workload", "calls/shapes", "captures pi/dyn", "compiles pi/dyn",
           "native calls pi/dyn", "correct pi/dyn", "schedule eager", "schedule pi",
           "schedule dyn", "schedule pi/dyn", "steady eager", "steady pi", "steady dyn",
           "steady pi/dyn"]
ALIGN = "lrrrrlrrrrrrrr"


def row_cells(row, notes):
    head = [row.workload, "%d/%d" % (row.calls, row.shapes)]
    if row.error:
        return head + [notes.cell(row.workload, row.error)] + ["–"] * (len(HEADERS) - 3)
    pi, dyn = row.results["pi"], row.results["dyn"]

    def pair(value):
        cells = []
        for system, result in (("pi", pi), ("dyn", dyn)):
            if result.error:
                cells.append(notes.cell("%s %s %s dynamic=%s" % (
                    system, row.workload, row.backend, row.dynamic), result.error))
            else:
                cells.append(value(result))
        return " / ".join(cells)

    def correct(r):
        return "yes" if r.wrong_calls == 0 else "NO (%d)" % r.wrong_calls

    return head + [
        pair(lambda r: str(r.captures)), pair(lambda r: str(r.compiles)),
        pair(lambda r: str(r.native_calls)), pair(correct),
        H.fmt_seconds(row.eager_schedule_s), H.fmt_seconds(pi.schedule_s),
        H.fmt_seconds(dyn.schedule_s), H.fmt_ratio(H.ratio(pi.schedule_s, dyn.schedule_s)),
        H.fmt_seconds(row.eager_steady_s), H.fmt_seconds(pi.steady_s),
        H.fmt_seconds(dyn.steady_s), H.fmt_ratio(H.ratio(pi.steady_s, dyn.steady_s)),
    ]


TARGETS = ["compiles <= torch.compile", "every output correct", "inductor schedule faster"]
CHECKED = TARGETS[:2]


def summary(rows):
    """Lines: per target, on how many rows it was met; and whether every
    checked target was met on every row."""
    lines, all_met = [], True
    for name in TARGETS:
        results = [(row, row.targets()[name]) for row in rows]
        if name not in CHECKED and all(ok is None for _, ok in results):
            continue
        met = sum(1 for _, ok in results if ok)
        missed = ["%s (%s, dynamic=%s)" % (r.workload, r.backend, r.dynamic)
                  for r, ok in results if ok is False]
        unknown = sum(ok is None for _, ok in results)
        if name in CHECKED:
            all_met &= not missed and not unknown
        line = "- %s: met on %d of %d rows" % (name, met, len(results))
        if missed:
            line += "; missed on %s" % ", ".join(missed)
        if unknown:
            line += "; not measured on %d" % unknown
        if name not in CHECKED:
            line += " (not checked by --check-target)"
        lines.append(line)
    for backend in sorted({r.backend for r in rows}):
        for dyn_name in sorted({r.dynamic for r in rows}):
            part = [r for r in rows if r.backend == backend and r.dynamic == dyn_name
                    and not r.error and all(x.error is None for x in r.results.values())]
            sched = H.geomean([H.ratio(r.results["pi"].schedule_s, r.results["dyn"].schedule_s)
                               for r in part])
            steady = H.geomean([H.ratio(r.results["pi"].steady_s, r.results["dyn"].steady_s)
                                for r in part])
            lines.append("- %s, dynamic=%s: geomean schedule pi/dyn %s, steady pi/dyn %s "
                         "(%d rows)" % (backend, dyn_name, H.fmt_ratio(sched),
                                        H.fmt_ratio(steady), len(part)))
    return lines, all_met


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default=None,
                        help="comma-separated, of eager,inductor (default both; eager with "
                             "--quick)")
    parser.add_argument("--dynamic", default="none,true",
                        help="comma-separated dynamic= values, of none,true,false "
                             "(default none,true)")
    parser.add_argument("--models", default=None,
                        help="comma-separated workloads, of %s (default all but gen_gpt2; "
                             "%s with --quick)" % (",".join(w.name for w in WORKLOADS),
                                                   ",".join(QUICK_WORKLOADS)))
    parser.add_argument("--steps", type=int, default=None,
                        help="generation steps (default %d; %d with --quick)"
                             % (GEN_STEPS, QUICK_GEN_STEPS))
    parser.add_argument("--repeat", type=int, default=None,
                        help="steady rounds per side (median; default 7, 3 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="%s, a 16-call schedule over 13 shapes, %d generation steps, "
                             "backend eager" % (",".join(QUICK_WORKLOADS), QUICK_GEN_STEPS))
    parser.add_argument("--threads", type=int, default=1,
                        help="torch.set_num_threads (default 1; 0 keeps torch's default)")
    parser.add_argument("--check-target", action="store_true",
                        help="exit 1 unless compiles <= torch.compile's and every output "
                             "is correct on every row")
    parser.add_argument("--verbose", action="store_true", help="print tracebacks of errors")
    args = parser.parse_args(argv)
    quick = args.quick
    args.backend = (args.backend or ("eager" if quick else ",".join(BACKENDS))).split(",")
    args.dynamic = args.dynamic.split(",")
    for value in args.dynamic:
        if value not in DYNAMIC:
            parser.error("--dynamic: %r is not one of %s" % (value, ",".join(DYNAMIC)))
    names = (args.models or ",".join(QUICK_WORKLOADS if quick else DEFAULT_WORKLOADS))
    args.workloads = [H.find_named(WORKLOADS, n, "workload") for n in names.split(",")]
    args.schedule = QUICK_SCHEDULE if quick else SCHEDULE
    args.steps = args.steps or (QUICK_GEN_STEPS if quick else GEN_STEPS)
    args.repeat = args.repeat or (3 if quick else 7)
    if args.threads:
        torch.set_num_threads(args.threads)
    return args


def run(args, progress=True):
    """Every row of the run (``args`` from :func:`parse_args`)."""
    rows = []
    for backend in args.backend:
        H.warm_up_compilers(backend)
        for workload in args.workloads:
            try:
                new = run_workload(workload, backend, args.dynamic, args.schedule,
                                   args.steps, args.repeat, args.verbose)
            except Exception as exc:  # noqa: BLE001
                if args.verbose:
                    traceback.print_exc()
                new = [Row(workload.name, backend, d, error=H.one_line(exc, 300))
                       for d in args.dynamic]
            rows.extend(new)
            if progress:
                for row in new:
                    print(backend, row.dynamic, " ".join(row_cells(row, H.ErrorNotes())),
                          file=sys.stderr, flush=True)
    return rows


def report(rows):
    """The Markdown report: one table per backend and dynamic value, the
    error notes and the targets; returns ``(text, all_met)``."""
    notes = H.ErrorNotes()
    parts = []
    for backend in dict.fromkeys(r.backend for r in rows):
        for dyn_name in dict.fromkeys(r.dynamic for r in rows):
            part = [r for r in rows if r.backend == backend and r.dynamic == dyn_name]
            parts.append("## backend %s, dynamic=%s" % (backend, DYNAMIC[dyn_name]))
            parts.append(H.markdown_table(HEADERS, [row_cells(r, notes) for r in part], ALIGN))
            parts.append("")
    errors = notes.render()
    if errors:
        parts += [errors, ""]
    lines, all_met = summary(rows)
    parts += ["Targets:"] + lines
    return "\n".join(parts), all_met


def main(argv=None):
    args = parse_args(argv)
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    from pyinterp.errors import RecompileLimitWarning

    warnings.filterwarnings("ignore", category=RecompileLimitWarning)
    warnings.filterwarnings("ignore", message=r".*symbolic shapes are not supported.*")
    print("# Dynamic shapes: pyinterp.trace vs torch.compile, backends %s, dynamic %s, "
          "%d-call schedule over %d shapes, %d generation steps, %d steady rounds"
          % (",".join(args.backend), ",".join(args.dynamic), len(args.schedule),
             len(set(args.schedule)), args.steps, args.repeat))
    print("- " + H.environment_line())
    print("- schedule (batch, length): %s" % " ".join("%dx%d" % s for s in args.schedule))
    print("- captures: pyinterp's cache entries (len(traced.cache_entries())), "
          "torch.compile's counters['stats']['unique_graphs']; compiles: the counting "
          "backend's, both; native calls: calls that neither compiled nor ran a graph "
          "(pyinterp's past cache_limit=8)")
    rows = run(args)
    text, all_met = report(rows)
    print()
    print(text)
    return 1 if args.check_target and not all_met else 0


if __name__ == "__main__":
    sys.exit(main())
