#!/usr/bin/env python3
"""Interpreter slowdown against native CPython on fixed pure-Python workloads.

For every workload (a deterministic zero-argument function doing a few
milliseconds of native work) this script, in one process and one run:

* checks that ``pyinterp.interpret(fn)()`` returns the same value as ``fn()``;
* times native and interpreted calls interleaved (native, interpreted,
  native, interpreted, ...), ``--repeats`` times, and takes the median of
  each side; the slowdown is interpreted median / native median;
* counts the bytecode instructions one *native* run executes, with
  ``sys.settrace`` and ``frame.f_trace_opcodes`` (every frame of the call
  tree, library code included), and divides that count by the interpreted
  median time to give instructions per second.

The summary gives the median slowdown over workloads, its spread (min and
max), the geometric mean, and whether the median meets the target (<= 30x).

Usage::

    python3 benchmarks/interp_speed.py              # full run (< 2 min)
    python3 benchmarks/interp_speed.py --quick      # CI smoke
    python3 benchmarks/interp_speed.py --json out.json
    python3 benchmarks/interp_speed.py --only fib_recursive --only argparse_cli
    python3 benchmarks/interp_speed.py --profile difflib_matcher  # cProfile

Exit status: 1 if any workload failed or returned a different value under
the interpreter (or, with ``--check-target``, if the median slowdown is over
the target); 0 otherwise.
"""
import argparse
import dataclasses
import difflib
import gc
import json
import json.decoder
import json.scanner
import math
import platform
import statistics
import sys
import textwrap
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyinterp  # noqa: E402

TARGET_SLOWDOWN = 30.0

# ---------------------------------------------------------------------------
# Workloads.  Each is a zero-argument, deterministic function whose result
# compares equal (==) between a native and an interpreted run.  Everything a
# workload calls (including the standard-library Python code of argparse,
# dataclasses, json, textwrap and difflib) runs interpreted.
# ---------------------------------------------------------------------------

WORKLOADS = []


def workload(fn):
    WORKLOADS.append(fn)
    return fn


@workload
def arith_loop():
    """Integer and float arithmetic in while/for loops with branches."""
    total = 0
    acc = 0.0
    i = 0
    while i < 6000:
        if i % 3 == 0:
            total += i * i
        elif i & 1:
            total -= i // 7
        else:
            total ^= i << 2
        acc += (i % 17) * 0.5 - 1.25
        i += 1
    for j in range(3000):
        total = (total * 31 + j) % 1000003
    return total, acc


@workload
def string_format():
    """f-strings, %-formatting, str.format, slicing, join, split."""
    parts = []
    for i in range(1200):
        name = "item%d" % i
        s = f"{name:>10}|{i:05d}|{i / 7:.3f}"
        s2 = "{0}-{1!r}-{2:x}".format(name, s[:4], i)
        parts.append(s if i % 2 else s2.upper())
    joined = ",".join(parts)
    words = joined.split("|")
    return len(joined), len(words), joined[:80], words[-1]


@workload
def comprehensions():
    """List/dict/set comprehensions, sorting with a key, nested loops."""
    nums = [(i * 7919) % 1009 for i in range(3000)]
    squares = {n: n * n for n in nums if n % 3}
    evens = {n for n in nums if not n & 1}
    pairs = [(a, b) for a in range(40) for b in range(a, 40) if (a + b) % 5 == 0]
    ordered = sorted(nums, key=lambda n: (n % 10, -n))
    grouped = {}
    for n in nums:
        grouped.setdefault(n % 13, []).append(n)
    return (sum(squares.values()), len(evens), len(pairs), ordered[:10],
            sorted((k, len(v)) for k, v in grouped.items()))


def _fib(n):
    return n if n < 2 else _fib(n - 1) + _fib(n - 2)


@workload
def fib_recursive():
    """Recursive calls: fib(20) is about 22,000 Python calls."""
    return _fib(20)


class _Vec:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return _Vec(self.x + other.x, self.y + other.y)

    def __sub__(self, other):
        return _Vec(self.x - other.x, self.y - other.y)

    def __mul__(self, k):
        return _Vec(self.x * k, self.y * k)

    def __eq__(self, other):
        return isinstance(other, _Vec) and self.x == other.x and self.y == other.y

    def __hash__(self):
        return hash((self.x, self.y))

    @property
    def norm1(self):
        return abs(self.x) + abs(self.y)


class _Body:
    count = 0

    def __init__(self, pos, vel):
        self.pos = pos
        self.vel = vel
        type(self).count += 1

    def step(self, dt):
        self.pos = self.pos + self.vel * dt

    @property
    def energy(self):
        return self.vel.norm1

    @classmethod
    def at_rest(cls, x, y):
        return cls(_Vec(x, y), _Vec(0, 0))

    def __repr__(self):
        return f"{type(self).__name__}({self.pos.x}, {self.pos.y})"


class _Bouncer(_Body):
    def step(self, dt):
        super().step(dt)
        if self.pos.norm1 > 50:
            self.vel = self.vel * -1


@workload
def class_sim():
    """Objects, methods, properties, classmethod, super(), dunder ops."""
    bodies = [_Bouncer(_Vec(i, -i), _Vec(i % 3 - 1, i % 5 - 2)) for i in range(20)]
    bodies.append(_Body.at_rest(1, 2))
    for _ in range(60):
        for b in bodies:
            b.step(1)
    seen = {b.pos for b in bodies}
    energy = sum(b.energy for b in bodies)
    return len(seen), energy, repr(bodies[3]), bodies[0].pos == bodies[0].pos


def _gen_numbers(n):
    for i in range(n):
        yield i


def _gen_filter(src):
    for v in src:
        if v % 3 != 1:
            yield v


def _gen_map(src):
    for v in src:
        yield v * v - v


def _gen_chain(*sources):
    for s in sources:
        yield from s


@workload
def generator_pipeline():
    """Chained generators, yield from, generator expressions."""
    total = sum(_gen_map(_gen_filter(_gen_numbers(12000))))
    chained = list(_gen_chain(_gen_numbers(1500), (x * 2 for x in range(1500))))
    windows = max(a + b for a, b in zip(chained, chained[1:]))
    return total, len(chained), windows


class _AppError(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


class _Resource:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append(1)
        return self

    def __exit__(self, et, ev, tb):
        self.log.append(2)
        return et is KeyError


@workload
def exceptions():
    """try/except/else/finally, custom exceptions, with-statements."""
    caught = 0
    finals = 0
    codes = 0
    log = []
    d = {}
    for i in range(1500):
        try:
            if i % 4 == 0:
                raise _AppError(i)
            elif i % 4 == 1:
                d[i]
            elif i % 4 == 2:
                int("x%d" % i)
        except _AppError as e:
            codes += e.code
        except (KeyError, ValueError):
            caught += 1
        else:
            caught -= 1
        finally:
            finals += 1
        with _Resource(log):
            if i % 5 == 0:
                raise KeyError(i)
    return caught, finals, codes, len(log)


@workload
def argparse_cli():
    """Build an argparse parser (with subcommands) and parse argument lists."""
    parser = argparse.ArgumentParser(prog="tool", description="demo tool")
    parser.add_argument("-v", "--verbose", action="count", default=0)
    parser.add_argument("--name", default="anon")
    parser.add_argument("--level", type=int, choices=range(10), default=3)
    parser.add_argument("--tag", action="append", default=[])
    parser.add_argument("--dry-run", action="store_true")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--fast", action="store_true")
    group.add_argument("--slow", action="store_true")
    sub = parser.add_subparsers(dest="cmd")
    build = sub.add_parser("build")
    build.add_argument("targets", nargs="*")
    build.add_argument("-j", "--jobs", type=int, default=1)
    run = sub.add_parser("run")
    run.add_argument("script")
    run.add_argument("rest", nargs=argparse.REMAINDER)
    argvs = [
        ["-vv", "--name", "x", "build", "a", "b", "-j", "4"],
        ["--level", "7", "--tag", "t1", "--tag", "t2", "--fast", "run", "s.py", "--opt", "1"],
        ["--dry-run", "--slow", "build"],
        ["-v", "--name=long-name", "--level=2", "run", "main.py"],
    ]
    out = []
    for argv in argvs:
        ns = parser.parse_args(argv)
        out.append(sorted(vars(ns).items()))
    out.append(len(parser.format_help()))
    return out


@workload
def dataclasses_records():
    """Define a dataclass inside the workload; create, compare, asdict, replace."""

    @dataclasses.dataclass(order=True)
    class Record:
        key: int
        name: str
        score: float = 0.0
        tags: list = dataclasses.field(default_factory=list)
        active: bool = True

    @dataclasses.dataclass(frozen=True)
    class Point:
        x: int
        y: int

    recs = [Record(i % 17, "r%d" % i, i * 0.25, ["t%d" % (i % 3)]) for i in range(150)]
    recs.sort()
    same = sum(1 for a, b in zip(recs, recs[1:]) if a == b)
    dicts = [dataclasses.asdict(r) for r in recs[:60]]
    replaced = [dataclasses.replace(r, active=False) for r in recs[:40]]
    pts = {Point(i % 7, i % 5) for i in range(100)}
    return (same, dicts[:3], dicts[-1], sum(not r.active for r in replaced),
            sorted((p.x, p.y) for p in pts)[:5], repr(recs[0]))


_JSON_DATA = {
    "name": "benchmark",
    "version": [1, 2, 3],
    "items": [
        {"id": i, "label": "item-%d" % i, "price": i * 1.5, "ok": i % 2 == 0,
         "tags": ["a", "b", "c"][: i % 4], "extra": None}
        for i in range(60)
    ],
    "nested": {"a": {"b": {"c": [1, 2, {"d": "e"}]}}},
}


@workload
def json_encode():
    """json.JSONEncoder(indent=2): the pure-Python _make_iterencode path."""
    enc = json.JSONEncoder(indent=2, sort_keys=True)
    texts = [enc.encode(_JSON_DATA) for _ in range(4)]
    text = texts[-1]
    return len(text), text[:120], text[-60:], texts[0] == text


_JSON_TEXT = json.dumps(_JSON_DATA)


@workload
def json_decode():
    """json decoding through json.scanner.py_make_scanner and py_scanstring.

    String *values* go through py_scanstring; object keys are scanned by the
    module-level ``json.decoder.scanstring`` (the C one), which the workload
    does not patch.
    """
    dec = json.JSONDecoder()
    dec.parse_string = json.decoder.py_scanstring
    dec.scan_once = json.scanner.py_make_scanner(dec)
    out = None
    for _ in range(2):
        out = dec.decode(_JSON_TEXT)
    return out


_TEXT = (
    "The quick brown fox jumps over the lazy dog. Pack my box with five dozen "
    "liquor jugs! How vexingly quick daft zebras jump; sphinx of black quartz, "
    "judge my vow. "
) * 12


@workload
def textwrap_fill():
    """textwrap.fill / wrap / indent / dedent over a paragraph."""
    out = []
    for width in (30, 45, 60, 79):
        out.append(textwrap.fill(_TEXT, width=width))
    wrapped = textwrap.wrap(_TEXT, width=50, initial_indent="* ", subsequent_indent="  ")
    ind = textwrap.indent("\n".join(wrapped), "> ")
    return [len(s) for s in out], out[0][:100], textwrap.dedent(ind)[:100]


_DIFF_A = ["line %d: %s" % (i, "abcdefghij"[i % 10] * (i % 7 + 1)) for i in range(120)]
_DIFF_B = list(_DIFF_A)
for _k in range(0, 120, 9):
    _DIFF_B[_k] = _DIFF_B[_k].upper()
del _DIFF_B[50:55]
_DIFF_B[80:80] = ["inserted %d" % k for k in range(4)]


@workload
def difflib_matcher():
    """difflib.SequenceMatcher on line lists and on strings; unified_diff."""
    sm = difflib.SequenceMatcher(None, _DIFF_A, _DIFF_B)
    ops = sm.get_opcodes()
    ratio = sm.ratio()
    s = difflib.SequenceMatcher(None, "".join(_DIFF_A[:20]), "".join(_DIFF_B[:20]))
    blocks = s.get_matching_blocks()
    udiff = list(difflib.unified_diff(_DIFF_A, _DIFF_B, lineterm=""))
    return ops, round(ratio, 12), len(blocks), len(udiff)


# ---------------------------------------------------------------------------
# Measurement.
# ---------------------------------------------------------------------------


def count_native_instructions(fn):
    """Bytecode instructions executed by one native call of ``fn``.

    Every frame of the call tree is traced with ``f_trace_opcodes`` and each
    'opcode' event is counted.  Returns (count, result).
    """
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if event == "call":
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
        elif event == "opcode":
            count += 1
        return tracer

    old = sys.gettrace()
    # 3.12+ (PEP 669 under settrace): a code object delivers opcode events
    # only from its second traced call on, so one traced run warms them up.
    for _ in range(2 if sys.version_info >= (3, 12) else 1):
        count = 0
        sys.settrace(tracer)
        try:
            result = fn()
        finally:
            sys.settrace(old)
    return count, result


def _timed(fn, n=1):
    gc.collect()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def measure(fn, repeats, min_native_s, max_interp_s):
    """Interleaved timing; returns dict of results for one workload."""
    name = fn.__name__
    res = {"name": name, "ok": False}
    try:
        expected = fn()
    except Exception:
        res["error"] = "native run failed:\n" + traceback.format_exc()
        return res
    try:
        ifn = pyinterp.interpret(fn)
        got = ifn()  # warm-up + correctness
    except Exception:
        res["error"] = "interpreted run failed:\n" + traceback.format_exc()
        return res
    if got != expected:
        res["error"] = "result mismatch:\n  native:      %r\n  interpreted: %r" % (
            _short(expected), _short(got))
        return res

    # Native calls per native sample, so each sample lasts >= min_native_s.
    one = _timed(fn)
    n_native = max(1, int(math.ceil(min_native_s / max(one, 1e-7))))

    native, interp = [], []
    spent = 0.0
    for r in range(repeats):
        native.append(_timed(fn, n_native))
        t = _timed(ifn)
        interp.append(t)
        spent += t
        if r >= 2 and spent > max_interp_s:  # keep the whole run bounded
            break

    instrs, _ = count_native_instructions(fn)
    nat_med = statistics.median(native)
    int_med = statistics.median(interp)
    ratios = sorted(i / n for n, i in zip(native, interp))
    res.update(
        ok=True,
        repeats=len(interp),
        native_calls_per_sample=n_native,
        native_ms=nat_med * 1e3,
        interp_ms=int_med * 1e3,
        slowdown=int_med / nat_med,
        pair_ratio_min=ratios[0],
        pair_ratio_max=ratios[-1],
        native_instructions=instrs,
        minstr_per_s=instrs / int_med / 1e6,
        native_ns_per_instr=nat_med / instrs * 1e9 if instrs else None,
        interp_ns_per_instr=int_med / instrs * 1e9 if instrs else None,
    )
    return res


def _short(v, limit=300):
    s = repr(v)
    return s if len(s) <= limit else s[:limit] + "..."


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def run_profile(name, top):
    import cProfile
    import pstats

    fn = _select([name])[0]
    ifn = pyinterp.interpret(fn)
    ifn()  # warm-up outside the profile
    prof = cProfile.Profile()
    prof.enable()
    ifn()
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


def _select(names):
    if not names:
        return list(WORKLOADS)
    by_name = {f.__name__: f for f in WORKLOADS}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        sys.exit("unknown workload(s): %s; known: %s" % (
            ", ".join(unknown), ", ".join(by_name)))
    return [by_name[n] for n in names]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="fewer repeats and shorter native samples (CI smoke)")
    ap.add_argument("--repeats", type=int, default=None,
                    help="interleaved native/interpreted pairs per workload "
                         "(default 7, 3 with --quick)")
    ap.add_argument("--only", action="append", default=[], metavar="NAME",
                    help="run only this workload (repeatable)")
    ap.add_argument("--list", action="store_true", help="list workloads and exit")
    ap.add_argument("--json", metavar="PATH", help="write results as JSON")
    ap.add_argument("--check-target", action="store_true",
                    help="exit 1 if the median slowdown exceeds the target")
    ap.add_argument("--profile", metavar="NAME",
                    help="cProfile one interpreted call of NAME and print the "
                         "top functions by tottime, then exit")
    ap.add_argument("--top", type=int, default=15, help="rows for --profile")
    args = ap.parse_args(argv)

    if args.list:
        for f in WORKLOADS:
            print("%-22s %s" % (f.__name__, (f.__doc__ or "").strip().splitlines()[0]))
        return 0
    if args.profile:
        run_profile(args.profile, args.top)
        return 0

    repeats = args.repeats or (3 if args.quick else 7)
    min_native_s = 0.005 if args.quick else 0.02
    max_interp_s = 3.0 if args.quick else 8.0
    fns = _select(args.only)

    print("pyinterp interpreter speed: Python %s (%s), %s" % (
        platform.python_version(), platform.python_implementation(), platform.machine()))
    print("repeats=%d (interleaved native/interpreted), median per side; "
          "instructions = native bytecode count (sys.settrace opcode events)\n" % repeats)
    hdr = "%-20s %10s %12s %10s %15s %10s" % (
        "workload", "native ms", "interp ms", "slowdown", "(pair min-max)", "Minstr/s")
    print(hdr)
    print("-" * len(hdr))

    results = []
    failed = []
    t_start = time.perf_counter()
    for fn in fns:
        r = measure(fn, repeats, min_native_s, max_interp_s)
        results.append(r)
        if not r["ok"]:
            failed.append(r)
            print("%-20s  FAILED: %s" % (r["name"], r["error"].splitlines()[0]))
            continue
        print("%-20s %10.3f %12.2f %9.1fx %15s %10.2f" % (
            r["name"], r["native_ms"], r["interp_ms"], r["slowdown"],
            "(%.1f-%.1f)" % (r["pair_ratio_min"], r["pair_ratio_max"]),
            r["minstr_per_s"]))
        sys.stdout.flush()
    elapsed = time.perf_counter() - t_start

    ok = [r for r in results if r["ok"]]
    summary = {"workloads": len(results), "passed": len(ok), "failed": len(failed),
               "target_slowdown": TARGET_SLOWDOWN, "elapsed_s": elapsed}
    print()
    if ok:
        sl = [r["slowdown"] for r in ok]
        total_instr = sum(r["native_instructions"] for r in ok)
        total_interp = sum(r["interp_ms"] for r in ok) / 1e3
        summary.update(
            median_slowdown=statistics.median(sl),
            min_slowdown=min(sl),
            max_slowdown=max(sl),
            geomean_slowdown=geomean(sl),
            aggregate_minstr_per_s=total_instr / total_interp / 1e6,
        )
        summary["target_met"] = (not failed and
                                 summary["median_slowdown"] <= TARGET_SLOWDOWN)
        print("median slowdown %.1fx  (spread: min %.1fx, max %.1fx; geomean %.1fx) "
              "over %d workloads" % (summary["median_slowdown"], summary["min_slowdown"],
                                     summary["max_slowdown"], summary["geomean_slowdown"],
                                     len(ok)))
        print("aggregate %.2f M native-instructions/s interpreted" %
              summary["aggregate_minstr_per_s"])
        print("target: median <= %.0fx -> %s%s" % (
            TARGET_SLOWDOWN, "MET" if summary["target_met"] else "NOT MET",
            " (some workloads failed)" if failed else ""))
    else:
        summary["target_met"] = False
    print("elapsed %.1f s" % elapsed)

    if failed:
        print("\n" + "!" * 70)
        print("%d WORKLOAD(S) FAILED UNDER THE INTERPRETER" % len(failed))
        for r in failed:
            print("\n--- %s ---\n%s" % (r["name"], r["error"].rstrip()))
        print("!" * 70)

    if args.json:
        payload = {
            "python": platform.python_version(),
            "implementation": platform.python_implementation(),
            "machine": platform.machine(),
            "repeats": repeats,
            "quick": bool(args.quick),
            "summary": summary,
            "results": results,
        }
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n")
        print("wrote %s" % args.json)

    if failed:
        return 1
    if args.check_target and not summary.get("target_met"):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
