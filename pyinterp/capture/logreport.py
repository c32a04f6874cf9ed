"""What the logs say about one miss that captures (see :mod:`.logs`).

``Traced._miss`` calls :func:`begin` once it knows the miss will capture
and :func:`end` when the capture is over; :func:`begin` returns None, and
nothing else here runs, when the ``recompiles``, ``perf``, ``graph`` and
``guards`` logs are all off and no run log is written
(``PYINTERP_TRACE_DIR``, :mod:`.runlog`: the report then writes the
capture's record when it ends, the recompile reasons included).  Between
the two, the capture's backend compiles (the split entry's too) go through
:func:`compile_graph`, timed (a plain call when no report is open on the
thread); the guard build's time is the ``TraceResult``'s.

* recompiles: the reason each cache entry missed (:mod:`.guardfail`);
* perf: the capture's time, and within it the guard build's and the
  backend compiles'; a compile still running after
  :data:`LONG_COMPILE_S` seconds says so from a timer thread, and says
  again when it ends, so a long first call never looks hung;
* graph: each graph's readable code, the user's line above each op;
* guards: every guard as Python, grouped under the user's line that made it.
"""
import logging
import sys
import threading
import time

from .. import config
from . import logs

LONG_COMPILE_S = 5.0
"""A backend compile running longer than this (seconds) logs as it goes."""

_thread = threading.local()


def begin(fn, seen, args, kwargs):
    """A miss of traced ``fn`` after every entry of ``seen`` failed is about
    to capture: log why, and open a report (None when the logs are off)."""
    if config.trace_dir is None and not any(
            logs.enabled(name) for name in ("recompiles", "perf", "graph", "guards")):
        return None
    report = Report(fn)
    if seen and (report.trace_dir is not None or logs.enabled("recompiles")):
        _safely(report.recompiles, seen, args, kwargs)
    stack = getattr(_thread, "stack", None)
    if stack is None:
        stack = _thread.stack = []
    stack.append(report)
    return report


def end(report, entry, count):
    """The capture opened by :func:`begin` ended with ``entry`` (None if it
    raised: called while its exception propagates); the callable now has
    ``count`` entries."""
    _thread.stack.remove(report)
    _safely(report.finish, entry, count)
    if report.trace_dir is not None:
        report.write_record(entry, count, None if entry is not None else sys.exc_info()[1])


def _safely(write, *args):
    """Logs never change what a call does: an error writing one is reported."""
    try:
        write(*args)
    except Exception as e:  # noqa: BLE001
        logging.getLogger("pyinterp").warning("pyinterp could not write a log (%s: %s)",
                                              type(e).__name__, e)


def _current():
    stack = getattr(_thread, "stack", None)
    return stack[-1] if stack else None


def compile_graph(compile, backend, gm, example):
    """``compile(backend, gm, example)`` (``backends.compile_graph``),
    timed; logs its start and end when it runs long.  A graph compiled
    inside a DDP forward is split at DDP's gradient buckets
    (:mod:`.ddp_split`)."""
    from .ddp_split import inside_active_ddp  # (torch is loaded: a capture ran)

    backend = inside_active_ddp(backend)
    report = _current()
    if report is None:
        return compile(backend, gm, example)
    what = "%s's graph (%d ops, backend %s)" % (
        report.name, _ops(gm), getattr(backend, "__name__", backend))
    watch = _LongCompile(what) if logs.enabled("perf") else None
    start = time.perf_counter()
    try:
        return compile(backend, gm, example)
    finally:
        seconds = time.perf_counter() - start
        report.add("backend compile", seconds)
        report.backends.add(getattr(backend, "__name__", str(backend)))
        if watch is not None:
            watch.done(seconds)


def _ops(gm):
    return sum(1 for n in gm.graph.nodes if n.op not in ("placeholder", "output"))


class _LongCompile:
    """A timer thread that logs a compile still running after
    :data:`LONG_COMPILE_S`, and its end if it did."""

    def __init__(self, what):
        self.what = what
        self.started = time.strftime("%H:%M:%S")
        self.fired = False
        self.timer = threading.Timer(LONG_COMPILE_S, self.still_running)
        self.timer.daemon = True
        self.timer.start()

    def still_running(self):
        self.fired = True
        logs.loggers["perf"].info("backend compile of %s started at %s, still running "
                                  "after %.1f s", self.what, self.started, LONG_COMPILE_S)

    def done(self, seconds):
        self.timer.cancel()
        if self.fired:
            logs.loggers["perf"].info("backend compile of %s finished after %.1f s",
                                      self.what, seconds)


class Report:
    """What one capture of ``fn`` took and made."""

    def __init__(self, fn):
        self.fn = fn
        self.name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
        self.where = _where(fn)
        self.start = time.perf_counter()
        self.times = {}
        self.backends = set()
        self.trace_dir = config.trace_dir  # (the run log's directory, or None)
        self.reasons = []  # why each entry missed: "entry N: reason"

    def add(self, what, seconds):
        self.times[what] = self.times.get(what, 0.0) + seconds

    def title(self):
        return "%s (%s)" % (self.name, self.where) if self.where else self.name

    def recompiles(self, seen, args, kwargs):
        from .guardfail import reason

        for number, entry in enumerate(seen, 1):
            try:
                index = entry.guard(args, kwargs)
            except Exception:  # noqa: BLE001 - as on the call: a miss
                index = -2
            why = "passes now" if index is True else reason(entry.trace, index, args, kwargs)
            self.reasons.append("entry %d: %s" % (number, why))
        if not logs.enabled("recompiles"):
            return
        lines = ["    " + text for text in self.reasons]
        logs.loggers["recompiles"].info("recompiling %s: %d cache %s missed\n%s", self.title(),
                                        len(seen), "entry" if len(seen) == 1 else "entries",
                                        "\n".join(lines))

    def write_record(self, entry, count, error):
        """Append this capture's record to the run log (:mod:`.runlog`)."""
        from . import runlog
        from .runrecord import entry_record

        seconds = time.perf_counter() - self.start
        runlog.write(self.trace_dir, lambda: entry_record(
            self.name, code_of(self.fn), self.start - runlog.STARTED, seconds, entry, count,
            self.reasons, error))

    def finish(self, entry, count):
        total = time.perf_counter() - self.start
        if entry is None:
            logs.loggers["perf"].info("capture of %s raised after %s", self.title(), _ms(total))
            return
        trace = entry.trace
        head = "%s, cache entry %d" % (self.title(), count)
        if logs.enabled("perf"):
            self._perf(head, trace, total)
        if logs.enabled("graph"):
            _graphs(head, trace, entry)
        if logs.enabled("guards"):
            _guards(head, trace)

    def _perf(self, head, trace, total):
        guards = trace.times.get("guards", 0.0)
        compiles = self.times.get("backend compile", 0.0)
        logs.loggers["perf"].info(
            "%s: captured in %s: guard build %s (%d guards), backend compile %s "
            "(%d %s%s), interpreting and code generation %s", head, _ms(total), _ms(guards),
            len(trace.guards), _ms(compiles), trace.graph_count,
            "graph" if trace.graph_count == 1 else "graphs",
            ", " + ", ".join(sorted(self.backends)) if self.backends else "",
            _ms(max(total - guards - compiles, 0.0)))


def _graphs(head, trace, entry):
    log = logs.loggers["graph"]
    if not trace.graphs:
        log.info("%s: no graph%s", head, " (runs natively)" if entry.native else "")
    for i, gm in enumerate(trace.graphs):
        log.info("%s: graph %d of %d, %d ops\n%s", head, i + 1, len(trace.graphs), _ops(gm),
                 gm.print_readable(print_output=False).rstrip())
    if log.isEnabledFor(logging.DEBUG) and trace.mock_text:
        log.debug("%s: mock\n%s", head, trace.mock_text.rstrip())


def _guards(head, trace):
    from .guardfail import guard_text, site_text

    log = logs.loggers["guards"]
    by_site = {}
    for guard in trace.guards:
        by_site.setdefault(guard.site, []).append(guard_text(guard, trace.param_names))
    lines = []
    for site, texts in by_site.items():
        lines.append("  " + (site_text(site) if site else "(no user line: the call itself)"))
        lines += ["      " + t for t in texts]
    log.info("%s: %d guards\n%s", head, len(trace.guards), "\n".join(lines))
    if log.isEnabledFor(logging.DEBUG) and trace.guard_text:
        log.debug("%s: guard code\n%s", head, trace.guard_text.rstrip())


def code_of(fn):
    """The traced function's (or module's ``forward``'s) code, or None."""
    return getattr(getattr(fn, "__func__", fn), "__code__", None) or \
        getattr(getattr(type(fn), "forward", None), "__code__", None)


def _where(fn):
    """``file:line`` of the traced function's (or module's ``forward``'s) code."""
    code = code_of(fn)
    return "%s:%d" % (code.co_filename, code.co_firstlineno) if code is not None else ""


def _ms(seconds):
    return "%.1f ms" % (seconds * 1e3) if seconds < 10 else "%.1f s" % seconds
