"""Shared helpers for the capture benchmarks (``trace_models.py``, ``hit_overhead.py``).

Timing, ratios, Markdown tables and error cells live here so the scripts do
not repeat them.  Conventions every script follows:

* Every ratio is taken between two figures measured **in the same run**,
  interleaved, so both sides see the same machine state; absolute times are
  noise on a shared machine and are printed only for orientation.
* A ratio ``a/b`` above 1 means ``a`` is slower than ``b``.
* Geometric means are taken over the ratios that could be measured; models or
  workloads where a side failed are left out (and the count is printed).
"""
import math
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))


# ---------------------------------------------------------------------------
# pyinterp availability
# ---------------------------------------------------------------------------

def load_pyinterp():
    """Return ``(module, None)`` if ``pyinterp.trace`` exists, else ``(None, reason)``."""
    try:
        import pyinterp
    except Exception as exc:  # noqa: BLE001  (any import failure is reported)
        return None, "import pyinterp failed: %s" % one_line(exc)
    missing = [name for name in ("trace", "explain") if not hasattr(pyinterp, name)]
    if missing:
        return pyinterp, "pyinterp has no %s yet" % " / ".join(missing)
    return pyinterp, None


def pyinterp_trace(fn, backend):
    """``pyinterp.trace(fn, backend=backend)``, raising if the API is missing."""
    import pyinterp

    if not hasattr(pyinterp, "trace"):
        raise NotImplementedError("pyinterp.trace does not exist yet")
    return pyinterp.trace(fn, backend=backend)


def pyinterp_explain(fn, *args, **kwargs):
    import pyinterp

    if not hasattr(pyinterp, "explain"):
        raise NotImplementedError("pyinterp.explain does not exist yet")
    return pyinterp.explain(fn, *args, **kwargs)


def dynamo_compile(fn, backend):
    import torch

    return torch.compile(fn, backend=backend)


def dynamo_reset():
    import torch._dynamo

    torch._dynamo.reset()


def warm_up_compilers(backend, device="cpu"):
    """Compile and call a trivial function once with each compiler.

    One-time costs (lazy imports inside torch._dynamo / the backend, pyinterp's
    own first-use set-up) then do not land on the first model measured.
    Failures are ignored here; they show up, per model, later.
    """
    import torch

    def tiny(x):
        return torch.relu(x) + 1

    x = torch.ones(4, device=device)
    for make in (dynamo_compile, pyinterp_trace):
        try:
            make(tiny, backend)(x)
        except Exception:  # noqa: BLE001
            pass
    dynamo_reset()


def find_named(items, name, what="case"):
    """The item of ``items`` whose ``.name`` is ``name``; KeyError listing the names."""
    for item in items:
        if item.name == name:
            return item
    raise KeyError("no %s %r (have: %s)" % (what, name, ", ".join(i.name for i in items)))


# ---------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------

def synchronizer(device):
    """A no-argument function that waits for queued device work (no-op on CPU)."""
    if str(device).startswith("cuda"):
        import torch

        return torch.cuda.synchronize
    return lambda: None


CLOCKS = {"wall": time.perf_counter_ns, "cpu": time.thread_time_ns}
CLOCK = "wall"
"""The clock of the timings: ``wall``, or ``cpu`` (``--cpu-time``: the CPU
time of the measuring thread, so other jobs on a shared machine do not
count, but work on other threads is not seen either: CPU only, with one
intra-op thread)."""


def time_once(call, sync):
    """Seconds taken by one ``call()``, device work included."""
    clock = CLOCKS[CLOCK]
    sync()
    t0 = clock()
    call()
    sync()
    return (clock() - t0) / 1e9


def interleaved_call_times(calls, n, sync, warmup=2):
    """Time single calls of each entry of ``calls`` (name -> thunk), interleaved.

    After ``warmup`` untimed calls each, every one of the ``n`` rounds times
    one call of every thunk, in order.  Returns name -> median seconds per
    call.  A thunk that raises is dropped (its median is missing) and the
    exception is returned in the second dict.
    """
    errors = {}
    live = dict(calls)
    for _ in range(warmup):
        for name, call in list(live.items()):
            try:
                call()
            except Exception as exc:  # noqa: BLE001
                errors[name] = exc
                del live[name]
    samples = {name: [] for name in live}
    for _ in range(n):
        for name, call in list(live.items()):
            try:
                samples[name].append(time_once(call, sync))
            except Exception as exc:  # noqa: BLE001
                errors[name] = exc
                del live[name]
                del samples[name]
    return {name: statistics.median(s) for name, s in samples.items() if s}, errors


def interleaved_loop_times(calls, loops, rounds, sync):
    """Per-call time of each thunk, timed over loops of ``loops`` calls.

    Every round times one loop of every thunk in turn (interleaved) with
    ``time.perf_counter_ns`` (``--cpu-time``: ``time.thread_time_ns``); the
    per-call time of a round is the loop time
    divided by ``loops``.  Returns name -> median per-call nanoseconds over
    the rounds, and name -> the list of per-round figures.
    """
    per_round = {name: [] for name in calls}
    clock = CLOCKS[CLOCK]
    for _ in range(rounds):
        for name, call in calls.items():
            sync()
            t0 = clock()
            for _ in range(loops):
                call()
            sync()
            per_round[name].append((clock() - t0) / loops)
    return {name: statistics.median(v) for name, v in per_round.items()}, per_round


# ---------------------------------------------------------------------------
# Ratios and formatting
# ---------------------------------------------------------------------------

def ratio(a, b):
    """``a / b``, or None if either is missing or ``b`` is not positive."""
    if a is None or b is None or b <= 0:
        return None
    return a / b


def geomean(values):
    """Geometric mean of the positive, present values, or None if there are none."""
    vals = [v for v in values if v is not None and v > 0]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def fmt_ratio(r):
    return "–" if r is None else "%.2f×" % r


def fmt_seconds(s):
    """Seconds in a readable unit (ns to s); negative values keep their sign."""
    if s is None:
        return "–"
    sign, s = ("-" if s < 0 else ""), abs(s)
    if s >= 1.0:
        return "%s%.2f s" % (sign, s)
    if s >= 1e-3:
        return "%s%.2f ms" % (sign, s * 1e3)
    if s >= 1e-6:
        return "%s%.1f µs" % (sign, s * 1e6)
    return "%s%.0f ns" % (sign, s * 1e9)


def fmt_ns(ns):
    return fmt_seconds(None if ns is None else ns / 1e9)


def one_line(exc_or_text, limit=None):
    """``Type: message`` on one line, optionally truncated to ``limit`` chars."""
    if isinstance(exc_or_text, BaseException):
        text = "%s: %s" % (type(exc_or_text).__name__, exc_or_text)
    else:
        text = str(exc_or_text)
    text = " ".join(text.split()).replace("|", "\\|")
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


class ErrorNotes:
    """Collects exceptions as numbered footnotes; ``cell()`` gives the table cell.

    The cell shows a short form (``ERR[n] TypeError``); ``render()`` lists the
    messages (up to ``detail_limit`` characters) under the table.  Identical
    messages share one number, listed with every place they occurred.
    """

    def __init__(self, detail_limit=400):
        self.detail_limit = detail_limit
        self.notes = {}  # message -> list of places, in first-seen order

    def cell(self, where, exc):
        message = one_line(exc, self.detail_limit)
        places = self.notes.setdefault(message, [])
        if where not in places:
            places.append(where)
        number = list(self.notes).index(message) + 1
        kind = type(exc).__name__ if isinstance(exc, BaseException) else "error"
        return "ERR[%d] %s" % (number, kind)

    def render(self):
        if not self.notes:
            return ""
        lines = ["Errors:", ""]
        for i, (message, places) in enumerate(self.notes.items(), 1):
            lines.append("[%d] %s (in: %s)" % (i, message, ", ".join(places)))
        return "\n".join(lines)


def markdown_table(headers, rows, align=None):
    """A Markdown table; ``align`` is a string of ``l``/``r`` per column."""
    align = align or "l" * len(headers)
    cells = [[str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(values):
        padded = [
            v.rjust(w) if a == "r" else v.ljust(w) for v, w, a in zip(values, widths, align)
        ]
        return "| " + " | ".join(padded) + " |"

    rule = ["-" * (w - 1) + ":" if a == "r" else "-" * w for w, a in zip(widths, align)]
    return "\n".join([line(headers), "| " + " | ".join(rule) + " |"] + [line(r) for r in cells])


def environment_line(device="cpu"):
    """One line naming Python, torch, thread count and device, for the report header."""
    import platform

    import torch

    parts = [
        "Python %s" % platform.python_version(),
        "torch %s" % torch.__version__,
        "%d torch threads" % torch.get_num_threads(),
        "device %s" % device,
    ]
    if str(device).startswith("cuda") and torch.cuda.is_available():
        parts.append(torch.cuda.get_device_name())
    return ", ".join(parts)


def audit_hook_line(reads=20000):
    """One line saying whether an audit hook is installed, from what an
    audited attribute read costs over an unaudited one (Python cannot list
    the hooks).  filelock installs one on 3.12+ when torch's Inductor
    imports it; guards pay it on every audited read (see docs/benchmarks.md,
    "Per Python version")."""
    import time

    def probe():
        pass

    def best(read):
        times = []
        for _ in range(3):
            start = time.perf_counter_ns()
            for _ in range(reads):
                read(probe)
            times.append((time.perf_counter_ns() - start) / reads)
        return min(times)

    extra = best(lambda f: f.__code__) - best(lambda f: f.__globals__)
    if extra > 50:
        return ("- an audit hook is installed: each audited read (a function's "
                "__code__/__defaults__, id()) costs %.0f ns more" % extra)
    return "- no audit hook installed (audited reads cost %.0f ns more)" % max(extra, 0)


def add_common_args(parser, default_repeat):
    """Options every capture benchmark shares."""
    parser.add_argument("--backend", default=None,
                        help="backend for both compilers: eager (default on CPU) or "
                             "inductor (default on CUDA)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--repeat", type=int, default=default_repeat,
                        help="timed rounds per measurement (median is reported)")
    parser.add_argument("--quick", action="store_true", help="few repeats, for a smoke run")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time loops by this thread's CPU time, not wall time (a "
                             "loaded shared machine; CPU, --threads 1)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch.set_num_threads before measuring (default 1: on a small "
                             "shared machine intra-op threads on tiny tensors mostly add "
                             "noise; 0 leaves torch's default)")


def apply_common_args(args):
    """Resolve defaults that depend on other options; set the thread count."""
    import torch

    if args.backend is None:
        args.backend = "inductor" if args.device == "cuda" else "eager"
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: CUDA is not available here")
    if args.threads:
        torch.set_num_threads(args.threads)
    global CLOCK
    if getattr(args, "cpu_time", False):
        if args.device != "cpu" or args.threads != 1:
            raise SystemExit("--cpu-time needs --device cpu and --threads 1")
        CLOCK = "cpu"
    return args


def cold_compile(backend):
    """Context for a first call that must compile from scratch.

    With inductor: a fresh, empty cache directory and cleared in-memory
    caches (``torch._inductor.utils.fresh_inductor_cache``), so neither an
    earlier run nor the other compiler's capture of the same graph (which
    yields the same kernels) saves it work.  The directory is kept, since
    compiled kernels may still be loaded from it.  Otherwise a no-op.
    """
    import contextlib

    if backend != "inductor":
        return contextlib.nullcontext()
    from torch._inductor.utils import fresh_inductor_cache

    return fresh_inductor_cache(delete=False)
