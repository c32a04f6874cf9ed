#!/usr/bin/env python3
"""Graph-break causes: pyinterp against TorchDynamo, and pyinterp's correctness.

For every case of ``benchmarks/break_cases.py`` (classic break causes written
for this benchmark, then the Hugging Face models GraphMend studied), in one
process and under ``torch.no_grad()`` unless ``--grad``:

1. **pyinterp.** ``pyinterp.explain(obj, *args)`` on the seed-0 inputs gives
   ``graph_count``, ``graph_break_count`` and the kind of every break.
2. **Dynamo.** After ``torch._dynamo.reset()``, ``torch._dynamo.explain(obj)
   (*args)`` gives ``graph_count``, ``graph_break_count`` and the break
   reasons (first line of each).
3. **Correctness.** Eager and ``pyinterp.trace(obj, backend=B)`` are each run
   on seeds 0, 1, 2 (fresh inputs per call) from identical starting state: a
   fresh build (same weights), the case's globals reset, ``random``,
   ``numpy`` and ``torch`` re-seeded the same way before each side.  Every
   call is compared with eager's: outputs (``allclose``), printed stdout
   (``contextlib.redirect_stdout``), log records (``getMessage()``,
   ``pathname``, ``lineno``, level, from a handler on the root logger),
   warnings (message, category, filename, lineno, under
   ``warnings.catch_warnings(record=True)`` + ``simplefilter("always")``) and
   the case's side effects (the global list, ``self.cache``...).  Any
   difference, or an exception eager did not raise, marks the case **WRONG**.
   *cache* shows the traced callable's cache entries after the three calls
   and how many of them run the function natively (a break).
4. **Latency** (Hugging Face models only): eager, pyinterp and
   ``torch.compile(obj, backend=B)`` called interleaved on the seed-0 inputs,
   after two warm-up calls each; the median of ``--repeat`` single calls.
   Ratios above 1 mean pyinterp is slower.

Usage::

    python3 benchmarks/breaks.py --list
    python3 benchmarks/breaks.py --quick
    python3 benchmarks/breaks.py --cases print,item_scale,hf_t5
"""
import argparse
import collections
import contextlib
import dataclasses
import io
import logging
import random
import sys
import traceback
import warnings

import _harness as H  # noqa: E402  (puts the repository root on sys.path)
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch._dynamo  # noqa: E402

import break_cases as bc  # noqa: E402
import models as zoo  # noqa: E402

CALLS = 3
REASONS_PER_CASE = 4

HEADERS = ["case", "pi graphs", "pi breaks", "pi break kinds", "dyn graphs", "dyn breaks",
           "dyn break reasons", "pi trace vs eager (3 calls)", "pi cache"]
ALIGN = "lrrlrrlll"
LATENCY_HEADERS = ["model", "eager", "pyinterp", "dynamo", "pi/eager", "pi/dyn"]
LATENCY_ALIGN = "lrrrrr"


@dataclasses.dataclass
class Row:
    name: str
    hf: bool
    pi_graphs: object = None
    pi_breaks: object = None
    pi_kinds: str = "–"
    pi_reasons: list = dataclasses.field(default_factory=list)
    dyn_graphs: object = None
    dyn_breaks: object = None
    dyn_kinds: str = "–"
    dyn_reasons: list = dataclasses.field(default_factory=list)
    verdict: str = "–"
    wrong: bool = False
    differences: list = dataclasses.field(default_factory=list)
    cache: str = "–"
    latency: dict = dataclasses.field(default_factory=dict)
    cells: dict = dataclasses.field(default_factory=dict)

    def table_row(self):
        values = [self.name, self.pi_graphs, self.pi_breaks, self.pi_kinds, self.dyn_graphs,
                  self.dyn_breaks, self.dyn_kinds, self.verdict, self.cache]
        values = ["–" if v is None else v for v in values]
        for column, text in self.cells.items():
            if column in HEADERS:
                values[HEADERS.index(column)] = text
        return values

    def latency_row(self):
        lat = self.latency
        pe = H.ratio(lat.get("pyinterp"), lat.get("eager"))
        pd = H.ratio(lat.get("pyinterp"), lat.get("dynamo"))
        values = [self.name, H.fmt_seconds(lat.get("eager")),
                  H.fmt_seconds(lat.get("pyinterp")), H.fmt_seconds(lat.get("dynamo")),
                  H.fmt_ratio(pe), H.fmt_ratio(pd)]
        for column, text in self.cells.items():
            if column in LATENCY_HEADERS:
                values[LATENCY_HEADERS.index(column)] = text
        return values


# ---------------------------------------------------------------------------
# Observation of one call: output, stdout, log records, warnings, effects
# ---------------------------------------------------------------------------

class _Collect(logging.Handler):
    def __init__(self, records):
        super().__init__(level=logging.DEBUG)
        self.records = records

    def emit(self, record):
        self.records.append((record.levelname, record.getMessage(), record.pathname,
                             record.lineno))


@dataclasses.dataclass
class Observed:
    output: object = None
    error: object = None  # the exception the call raised, if any
    stdout: str = ""
    logs: list = dataclasses.field(default_factory=list)
    warns: list = dataclasses.field(default_factory=list)
    effects: object = None


@contextlib.contextmanager
def observing():
    """Collect stdout, root-logger records and warnings of the block into an Observed."""
    seen = Observed()
    buffer = io.StringIO()
    handler = _Collect(seen.logs)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with contextlib.redirect_stdout(buffer), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield seen
    finally:
        root.removeHandler(handler)
        seen.stdout = buffer.getvalue()
        seen.warns = [(str(w.message), w.category.__name__, w.filename, w.lineno)
                      for w in caught]


def seed_everything():
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)


def run_side(case, make_callable, examples):
    """Fresh build, reset globals, re-seed; call on every example; one Observed per call."""
    case.reset()
    obj = case.build()
    fn = make_callable(obj)
    seed_everything()
    observed = []
    for args, kwargs in examples:
        with observing() as seen:
            try:
                seen.output = fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001
                seen.error = exc
        if case.effects is not None:
            seen.effects = case.effects(obj)
        observed.append(seen)
    return fn, observed


def short(value, limit=120):
    return H.one_line(repr(value), limit)


def compare_sides(case, eager, traced):
    """Differences between the two sides, as readable lines (empty: identical)."""
    diffs = []
    for i, (e, t) in enumerate(zip(eager, traced)):
        where = "call %d" % (i + 1)
        if (e.error is None) != (t.error is None) or (
                e.error is not None and type(e.error) is not type(t.error)):
            diffs.append("%s: exception: eager %s, traced %s" % (
                where, short(e.error), H.one_line(t.error, 200) if t.error else None))
            continue
        if e.error is None:
            ok, err, why = zoo.compare_outputs(e.output, t.output, case.rtol, case.atol)
            if not ok:
                diffs.append("%s: outputs differ (%s)" % (
                    where, why or "max abs err %.3g" % err))
        for field in ("stdout", "logs", "warns"):
            a, b = getattr(e, field), getattr(t, field)
            if a != b:
                diffs.append("%s: %s differ: eager %s, traced %s" % (
                    where, field, short(a), short(b)))
    if case.effects is not None:
        a, b = [s.effects for s in eager], [s.effects for s in traced]
        if not case.same_effects(a, b):
            diffs.append("side effects differ: eager %s, traced %s" % (
                short(a, 300), short(b, 300)))
    return diffs


def describe_cache(traced):
    entries = getattr(traced, "_entries", None)
    if entries is None:
        return "?"
    native = sum(bool(getattr(e, "native", False)) for e in entries)
    return "%d entr%s, %d native" % (len(entries), "y" if len(entries) == 1 else "ies", native)


# ---------------------------------------------------------------------------
# Break counts
# ---------------------------------------------------------------------------

def counted(labels):
    """``a×2, b`` from a list of labels, in first-seen order."""
    counts = collections.Counter(labels)
    return ", ".join(k if n == 1 else "%s×%d" % (k, n) for k, n in counts.items()) or "–"


def dynamo_reason_line(reason):
    text = getattr(reason, "reason", reason)
    first = str(text).strip().splitlines()[0] if str(text).strip() else "?"
    return H.one_line(first, 200)


def pyinterp_reason_line(reason):
    where = "%s:%s" % (getattr(reason, "filename", "?"), getattr(reason, "lineno", "?"))
    return H.one_line("%s at %s: %s" % (reason.kind, where, reason.message), 240)


def explain_pyinterp(case, row, args, kwargs):
    case.reset()
    obj = case.build()
    seed_everything()
    with observing():
        explained = H.pyinterp_explain(obj, *args, **kwargs)
    row.pi_graphs, row.pi_breaks = explained.graph_count, explained.graph_break_count
    row.pi_kinds = counted([r.kind for r in explained.break_reasons])
    row.pi_reasons = [pyinterp_reason_line(r) for r in explained.break_reasons]


def explain_dynamo(case, row, args, kwargs):
    case.reset()
    obj = case.build()
    H.dynamo_reset()
    seed_everything()
    try:
        with observing():
            explained = torch._dynamo.explain(obj)(*args, **kwargs)
    finally:
        H.dynamo_reset()
    row.dyn_graphs, row.dyn_breaks = explained.graph_count, explained.graph_break_count
    lines = [dynamo_reason_line(r) for r in explained.break_reasons]
    row.dyn_reasons = lines
    row.dyn_kinds = counted([H.one_line(line, 48) for line in lines])


# ---------------------------------------------------------------------------
# One case
# ---------------------------------------------------------------------------

class Phase:
    """An exception inside becomes an error cell in ``columns`` (the run goes on)."""

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


def bench_case(case, args, notes):
    row = Row(case.name, case.hf)

    def phase(where, *columns):
        return Phase(row, notes, where, columns, args.verbose)

    examples = [case.example(seed) for seed in range(CALLS)]
    args0, kwargs0 = examples[0]
    with phase("pyinterp explain", "pi graphs", "pi breaks", "pi break kinds"):
        explain_pyinterp(case, row, args0, kwargs0)
    with phase("dynamo explain", "dyn graphs", "dyn breaks", "dyn break reasons"):
        explain_dynamo(case, row, args0, kwargs0)

    traced = None
    with phase("correctness", "pi trace vs eager (3 calls)", "pi cache"):
        _, eager = run_side(case, lambda obj: obj, examples)
        traced, observed = run_side(
            case, lambda obj: H.pyinterp_trace(obj, args.backend), examples)
        row.differences = compare_sides(case, eager, observed)
        row.wrong = bool(row.differences)
        row.verdict = "**WRONG** (%d difference%s)" % (
            len(row.differences), "" if len(row.differences) == 1 else "s") \
            if row.wrong else "ok"
        row.cache = describe_cache(traced)
        if all(seen.error is not None for seen in eager):
            row.verdict += " (eager raised)"

    if case.hf and traced is not None:
        with phase("latency", "eager", "pyinterp", "dynamo"):
            eager_obj = case.build()
            compiled = H.dynamo_compile(eager_obj, args.backend)
            calls = {"eager": lambda: eager_obj(*args0, **kwargs0),
                     "pyinterp": lambda: traced(*args0, **kwargs0),
                     "dynamo": lambda: compiled(*args0, **kwargs0)}
            with observing():
                row.latency, errors = H.interleaved_call_times(
                    calls, args.repeat, H.synchronizer("cpu"))
            for name, exc in errors.items():
                row.cells[name] = notes.cell(
                    "%s / latency %s" % (case.name, name), exc)
            H.dynamo_reset()
    return row


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

def totals(rows):
    def total(attr):
        # A negative count (Dynamo reports -1 breaks for a frame it skipped) is left out.
        values = [getattr(r, attr) for r in rows
                  if isinstance(getattr(r, attr), int) and getattr(r, attr) >= 0]
        return sum(values), len(values)

    pi, pi_n = total("pi_breaks")
    dyn, dyn_n = total("dyn_breaks")
    pi_zero = sum(r.pi_breaks == 0 for r in rows)
    dyn_zero = sum(r.dyn_breaks == 0 for r in rows)
    wrong = [r.name for r in rows if r.wrong]
    unchecked = [r.name for r in rows if r.verdict == "–"]
    lines = [
        "- total graph breaks: pyinterp %d (over %d cases), Dynamo %d (over %d cases)"
        % (pi, pi_n, dyn, dyn_n),
        "- cases with zero breaks: pyinterp %d/%d, Dynamo %d/%d"
        % (pi_zero, len(rows), dyn_zero, len(rows)),
        "- wrong results (pyinterp.trace vs eager): %d/%d%s"
        % (len(wrong), len(rows), (" — **WRONG: %s**" % ", ".join(wrong)) if wrong else ""),
    ]
    if unchecked:
        lines.append("- correctness not checked (error): %s" % ", ".join(unchecked))
    return lines


def report(rows, notes):
    groups = [("Classic break causes", [r for r in rows if not r.hf]),
              ("Hugging Face models (tiny configs)", [r for r in rows if r.hf])]
    for title, group in groups:
        if not group:
            continue
        print("## %s" % title)
        print()
        print(H.markdown_table(HEADERS, [r.table_row() for r in group], ALIGN))
        print()
        print("\n".join(totals(group)))
        print()
    hf = [r for r in rows if r.hf]
    if hf:
        print("## Hugging Face latency (CPU, median single call)")
        print()
        print(H.markdown_table(LATENCY_HEADERS, [r.latency_row() for r in hf], LATENCY_ALIGN))
        print()
        for key, label in (("eager", "pyinterp/eager"), ("dynamo", "pyinterp/Dynamo")):
            values = [H.ratio(r.latency.get("pyinterp"), r.latency.get(key)) for r in hf]
            n = sum(v is not None for v in values)
            print("- geomean %s: %s over %d/%d models" % (
                label, H.fmt_ratio(H.geomean(values)), n, len(hf)))
        print()
    print("## Totals (all cases)")
    print()
    print("\n".join(totals(rows)))
    wrong = [r for r in rows if r.differences]
    if wrong:
        print()
        print("## WRONG results: what differs")
        print()
        for r in wrong:
            for line in r.differences:
                print("- %s: %s" % (r.name, line))
    print()
    print("## Break reasons (identical ones merged, at most %d per case and side)"
          % REASONS_PER_CASE)
    print()
    for r in rows:
        for side, reasons in (("pyinterp", r.pi_reasons), ("Dynamo", r.dyn_reasons)):
            merged = collections.Counter(reasons)
            for line, n in list(merged.items())[:REASONS_PER_CASE]:
                print("- %s, %s: %s%s" % (r.name, side, line, "" if n == 1 else " (×%d)" % n))
            if len(merged) > REASONS_PER_CASE:
                print("- %s, %s: ... %d more distinct reasons" % (
                    r.name, side, len(merged) - REASONS_PER_CASE))
    errors = notes.render()
    if errors:
        print()
        print(errors)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    H.add_common_args(parser, default_repeat=7)
    parser.add_argument("--cases", default="",
                        help="comma-separated case names (default: all; see --list)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--no-hf", action="store_true", help="leave out the Hugging Face models")
    parser.add_argument("--grad", action="store_true",
                        help="run with autograd enabled (default: torch.no_grad())")
    parser.add_argument("--verbose", action="store_true",
                        help="print full tracebacks of errors to stderr")
    args = parser.parse_args(argv)
    if args.device != "cpu":
        parser.error("breaks.py runs on the CPU only (the numpy case needs CPU tensors)")
    args.backend = args.backend or "eager"
    H.apply_common_args(args)
    if args.quick:
        args.repeat = min(args.repeat, 3)
    return args


def select_cases(args):
    if args.cases:
        return [bc.get_case(n.strip()) for n in args.cases.split(",") if n.strip()]
    return [c for c in bc.CASES if not (args.no_hf and c.hf)]


def main(argv=None):
    args = parse_args(argv)
    if args.list:
        for c in bc.CASES:
            print("%-24s %s%s" % (c.name, c.description, " [HF]" if c.hf else ""))
        for name, why in bc.SKIPPED.items():
            print("note: skipped %s: %s" % (name, why))
        return 0
    cases = select_cases(args)
    # Dynamo's own graph-break warnings go to stderr through torch's loggers: keep them quiet.
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    print("# Graph-break causes: pyinterp vs torch._dynamo (backend=%s)" % args.backend)
    print()
    print(H.environment_line("cpu"))
    print("correctness: %d calls per side, fresh inputs per call; %s; latency: median of %d "
          "interleaved calls" % (CALLS, "grad enabled" if args.grad else "no_grad",
                                 args.repeat))
    for name, why in bc.SKIPPED.items():
        print("note: skipped %s: %s" % (name, why))
    print()
    sys.stdout.flush()

    with contextlib.redirect_stdout(io.StringIO()):
        H.warm_up_compilers(args.backend)
    notes = H.ErrorNotes()
    rows = []
    grad = contextlib.nullcontext() if args.grad else torch.no_grad()
    with grad:
        for c in cases:
            print("running %s ..." % c.name, file=sys.stderr, flush=True)
            rows.append(bench_case(c, args, notes))
    for c in cases:
        if c.note:
            print("note: %s: %s" % (c.name, c.note))
    if any(c.note for c in cases):
        print()
    report(rows, notes)
    return 1 if any(r.wrong for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
