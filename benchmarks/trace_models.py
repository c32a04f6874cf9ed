#!/usr/bin/env python3
"""Whole-model capture: pyinterp.trace against torch.compile (TorchDynamo).

For every model of ``benchmarks/models.py`` this script, in one process:

1. **Reference.** Builds the model (seeded random weights, ``eval()``) and
   runs it eagerly on three fresh inputs (seeds 0, 1, 2).
2. **pyinterp capture.** ``pyinterp.trace(model, backend=B)`` plus its first
   call (seed 0) is timed as the *first-call* (capture) time (with inductor,
   inside ``fresh_inductor_cache()``: no compiled kernels are reused, from
   earlier runs or from the other compiler); the traced
   model is then called on seeds 1 and 2, and all three outputs are compared
   with eager's (``allclose``; ``rtol = atol = 1e-4`` with the eager backend on
   CPU, ``1e-3`` otherwise, overridable).  *outputs match* is ``yes`` only if
   all three agree.
3. **Dynamo capture.** After ``torch._dynamo.reset()``, ``torch.compile(model,
   backend=B)`` plus its first call (seed 0) is timed the same way.  Both
   captures are then repeated, alternating sides, ``--capture-repeats``
   times in all (default 3); each side reports its fastest.
4. **Steady state.** Eager, pyinterp and Dynamo are called interleaved
   (eager, pyinterp, Dynamo, eager, ...) on the seed-0 inputs, ``--repeat``
   rounds after two warm-up calls each; each side's latency is the median of
   its single-call times.
5. **Graph counts.** ``pyinterp.explain(model, *inputs)`` (a fresh capture)
   gives pyinterp's graph and graph-break counts; ``torch._dynamo.explain(
   model)(*inputs)`` (after a reset) gives Dynamo's ``graph_count`` and
   ``graph_break_count``.

Ratios (each between figures of the same run; > 1 means pyinterp is slower):

* ``capture pi/dyn`` = pyinterp first-call time / Dynamo first-call time;
* ``steady pi/eager`` = pyinterp steady latency / eager steady latency;
* ``steady pi/dyn`` = pyinterp steady latency / Dynamo steady latency.

Their geometric means over the models where both sides ran are printed under
the table.  Both compilers are warmed up once on a trivial function first,
so one-time imports do not land on the first model.  Everything runs under
``torch.no_grad()`` unless ``--grad`` is given.  Exceptions are caught per
model and per phase and shown in the table as ``ERR[n]``, with the full
message listed under it; the run never stops on one.

Usage::

    python3 benchmarks/trace_models.py --quick
    python3 benchmarks/trace_models.py --models hf_gpt2,mlp --repeat 50
    python3 benchmarks/trace_models.py --device cuda --backend inductor
"""
import argparse
import contextlib
import dataclasses
import sys
import traceback
from typing import Optional

import _harness as H  # noqa: E402  (puts the repository root on sys.path)
import torch  # noqa: E402
import torch._dynamo  # noqa: E402

import models as zoo  # noqa: E402

HEADERS = [
    "model", "pi graphs", "pi breaks", "dyn graphs", "dyn breaks", "outputs match",
    "1st call pi", "1st call dyn", "capture pi/dyn", "steady eager", "steady pi",
    "steady dyn", "steady pi/eager", "steady pi/dyn",
]
ALIGN = "lrrrrlrrrrrrrr"


@dataclasses.dataclass
class Row:
    """Everything measured for one model; ``None`` means not measured."""

    name: str
    pi_graphs: object = None
    pi_breaks: object = None
    dyn_graphs: object = None
    dyn_breaks: object = None
    match: str = "–"
    first_pi: Optional[float] = None
    first_dyn: Optional[float] = None
    steady: dict = dataclasses.field(default_factory=dict)
    break_reasons: list = dataclasses.field(default_factory=list)  # from pyinterp.explain
    cells: dict = dataclasses.field(default_factory=dict)  # column -> error cell text

    def ratios(self):
        return {
            "capture": H.ratio(self.first_pi, self.first_dyn),
            "pi/eager": H.ratio(self.steady.get("pyinterp"), self.steady.get("eager")),
            "pi/dyn": H.ratio(self.steady.get("pyinterp"), self.steady.get("dynamo")),
            "dyn/eager": H.ratio(self.steady.get("dynamo"), self.steady.get("eager")),
        }

    def table_row(self):
        r = self.ratios()
        values = [
            self.name, self.pi_graphs, self.pi_breaks, self.dyn_graphs, self.dyn_breaks,
            self.match, H.fmt_seconds(self.first_pi), H.fmt_seconds(self.first_dyn),
            H.fmt_ratio(r["capture"]), H.fmt_seconds(self.steady.get("eager")),
            H.fmt_seconds(self.steady.get("pyinterp")), H.fmt_seconds(self.steady.get("dynamo")),
            H.fmt_ratio(r["pi/eager"]), H.fmt_ratio(r["pi/dyn"]),
        ]
        values = ["–" if v is None else v for v in values]
        for column, text in self.cells.items():
            values[HEADERS.index(column)] = text
        return values


class Phase:
    """Context manager: an exception inside becomes an error cell in ``columns``."""

    def __init__(self, row, notes, where, columns, verbose):
        self.row, self.notes, self.where = row, notes, where
        self.columns, self.verbose = columns, verbose

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if exc is None or not isinstance(exc, Exception):
            return False
        cell = self.notes.cell("%s / %s" % (self.row.name, self.where), exc)
        for column in self.columns:
            self.row.cells[column] = cell
        if self.verbose:
            traceback.print_exception(kind, exc, tb, file=sys.stderr)
        return True


def bind(fn, args, kwargs):
    return lambda: fn(*args, **kwargs)


def timed_first_call(make, model, backend, args, kwargs, sync):
    """Build the compiled callable and call it once; return (callable, output, seconds)."""
    box = {}

    def first():
        box["fn"] = make(model, backend)
        box["out"] = box["fn"](*args, **kwargs)

    with H.cold_compile(backend):
        seconds = H.time_once(first, sync)
    return box["fn"], box["out"], seconds


def check_outputs(fn, first_out, examples, expected, rtol, atol):
    """``yes``/``NO`` cell: ``fn`` on every example against the eager outputs.

    ``first_out`` is ``fn``'s output on the first example (from the timed
    first call); the others are called here.
    """
    results = []
    for i, ((args, kwargs), want) in enumerate(zip(examples, expected)):
        got = first_out if i == 0 else fn(*args, **kwargs)
        results.append(zoo.compare_outputs(want, got, rtol, atol))
    passed = sum(ok for ok, _, _ in results)
    why = next((w for _, _, w in results if w), None)
    errs = [e for _, e, _ in results if e is not None]
    detail = why or "max abs err %.1e" % max(errs)
    return "%s %d/%d (%s)" % ("yes" if passed == len(results) else "NO",
                              passed, len(results), detail)


def describe_break(reason):
    """``kind at file:line: message (hint)`` for one of ``pyinterp.explain``'s break reasons."""
    get = lambda name: getattr(reason, name, None)  # noqa: E731
    where = "%s:%s" % (get("filename"), get("lineno")) if get("filename") else "?"
    text = "%s at %s: %s" % (get("kind"), where, get("message"))
    if get("hint"):
        text += " (hint: %s)" % get("hint")
    return H.one_line(text, 300)


def break_lines(rows, per_model):
    """Up to ``per_model`` pyinterp break reasons per model, for under the table."""
    lines = []
    for row in rows:
        for reason in row.break_reasons[:per_model]:
            lines.append("- %s: %s" % (row.name, reason))
        if len(row.break_reasons) > per_model:
            lines.append("- %s: ... %d more" % (row.name, len(row.break_reasons) - per_model))
    return lines


def count_fields(explained, graphs="graph_count", breaks="graph_break_count"):
    return getattr(explained, graphs), getattr(explained, breaks)


def bench_model(spec, args, notes):
    """Measure one model; never raises (errors go into the row)."""
    row = Row(spec.name)
    sync = H.synchronizer(args.device)
    verbose = args.verbose

    def phase(where, *columns):
        return Phase(row, notes, where, columns, verbose)

    with phase("build/eager", *HEADERS[1:]):
        model = spec.build(args.device)
        examples = [spec.example(seed, args.device) for seed in range(3)]
        expected = [model(*a, **k) for a, k in examples]
    if row.cells:  # no model or no reference outputs: nothing else to measure
        return row
    args0, kwargs0 = examples[0]
    callers = {"eager": bind(model, args0, kwargs0)}

    traced = None
    with phase("pyinterp capture", "outputs match", "1st call pi", "capture pi/dyn"):
        traced, out, row.first_pi = timed_first_call(
            H.pyinterp_trace, model, args.backend, args0, kwargs0, sync)
    if traced is not None:
        callers["pyinterp"] = bind(traced, args0, kwargs0)
        with phase("pyinterp outputs", "outputs match"):
            row.match = check_outputs(traced, out, examples, expected, args.rtol, args.atol)

    H.dynamo_reset()
    with phase("dynamo compile", "1st call dyn", "steady dyn"):
        compiled, _, row.first_dyn = timed_first_call(
            H.dynamo_compile, model, args.backend, args0, kwargs0, sync)
        callers["dynamo"] = bind(compiled, args0, kwargs0)

    # More captures, alternating sides, each side keeping its fastest: one
    # first call per side is at the mercy of whatever else the machine runs.
    for _ in range(args.capture_repeats - 1):
        if row.first_pi is None or row.first_dyn is None:
            break
        with phase("pyinterp capture (repeat)", "1st call pi", "capture pi/dyn"):
            row.first_pi = min(row.first_pi, timed_first_call(
                H.pyinterp_trace, model, args.backend, args0, kwargs0, sync)[2])
        H.dynamo_reset()
        with phase("dynamo compile (repeat)", "1st call dyn"):
            compiled, _, seconds = timed_first_call(
                H.dynamo_compile, model, args.backend, args0, kwargs0, sync)
            row.first_dyn = min(row.first_dyn, seconds)
            callers["dynamo"] = bind(compiled, args0, kwargs0)

    row.steady, errors = H.interleaved_call_times(callers, args.repeat, sync)
    for name, exc in errors.items():
        column = {"eager": "steady eager", "pyinterp": "steady pi", "dynamo": "steady dyn"}[name]
        row.cells[column] = notes.cell("%s / steady %s" % (spec.name, name), exc)

    with phase("pyinterp explain", "pi graphs", "pi breaks"):
        explained = H.pyinterp_explain(model, *args0, **kwargs0)
        row.pi_graphs, row.pi_breaks = count_fields(explained)
        row.break_reasons = [describe_break(r) for r in getattr(explained, "break_reasons", ())]
    H.dynamo_reset()
    with phase("dynamo explain", "dyn graphs", "dyn breaks"):
        row.dyn_graphs, row.dyn_breaks = count_fields(
            torch._dynamo.explain(model)(*args0, **kwargs0))
    H.dynamo_reset()
    return row


def summary_lines(rows):
    lines = []
    labels = {
        "capture": "first call (capture) pyinterp/Dynamo",
        "pi/eager": "steady-state pyinterp/eager",
        "pi/dyn": "steady-state pyinterp/Dynamo",
        "dyn/eager": "steady-state Dynamo/eager (reference)",
    }
    for key, label in labels.items():
        values = [r.ratios()[key] for r in rows]
        n = sum(v is not None for v in values)
        lines.append("- geomean %s: %s over %d/%d models" % (
            label, H.fmt_ratio(H.geomean(values)), n, len(rows)))
    matched = sum(r.match.startswith("yes") for r in rows)
    lines.append("- outputs match eager: %d/%d models" % (matched, len(rows)))
    return lines


def select_models(args):
    specs = list(zoo.MODELS)
    if args.models:
        wanted = [n.strip() for n in args.models.split(",") if n.strip()]
        specs = [zoo.get_model(n) for n in wanted]
    elif args.quick:
        specs = [s for s in specs if not s.heavy]
    return specs


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    H.add_common_args(parser, default_repeat=30)
    parser.add_argument("--models", default="",
                        help="comma-separated model names (default: all; see --list)")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    parser.add_argument("--capture-repeats", type=int, default=3,
                        help="captures per side (alternating); the fastest is reported")
    parser.add_argument("--rtol", type=float, default=None)
    parser.add_argument("--atol", type=float, default=None)
    parser.add_argument("--grad", action="store_true",
                        help="run with autograd enabled (default: torch.no_grad())")
    parser.add_argument("--verbose", action="store_true",
                        help="print full tracebacks of errors to stderr")
    args = H.apply_common_args(parser.parse_args(argv))
    if args.quick:
        args.repeat = min(args.repeat, 5)
    loose = args.backend != "eager" or args.device != "cpu"
    default_tol = 1e-3 if loose else 1e-4
    args.rtol = default_tol if args.rtol is None else args.rtol
    args.atol = default_tol if args.atol is None else args.atol
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.list:
        for spec in zoo.MODELS:
            print("%-16s %s" % (spec.name, spec.description))
        if zoo.SKIPPED:
            print(zoo.skipped_note())
        return 0
    print("# pyinterp.trace vs torch.compile: backend=%s" % args.backend)
    print()
    print(H.environment_line(args.device))
    print("steady state: median of %d interleaved calls; tolerance rtol=%g atol=%g; %s"
          % (args.repeat, args.rtol, args.atol, "grad enabled" if args.grad else "no_grad"))
    _, missing = H.load_pyinterp()
    if missing:
        print("note: %s; pyinterp columns will show errors" % missing)
    if zoo.SKIPPED:
        print(zoo.skipped_note())
    print()
    sys.stdout.flush()

    H.warm_up_compilers(args.backend, args.device)
    notes = H.ErrorNotes()
    rows = []
    grad = contextlib.nullcontext() if args.grad else torch.no_grad()
    with grad:
        for spec in select_models(args):
            print("running %s ..." % spec.name, file=sys.stderr, flush=True)
            rows.append(bench_model(spec, args, notes))
    print(H.markdown_table(HEADERS, [r.table_row() for r in rows], ALIGN))
    print()
    print("\n".join(summary_lines(rows)))
    breaks = break_lines(rows, per_model=3)
    if breaks:
        print()
        print("pyinterp graph breaks (from pyinterp.explain):")
        print()
        print("\n".join(breaks))
    errors = notes.render()
    if errors:
        print()
        print(errors)
    return 0


if __name__ == "__main__":
    sys.exit(main())
