"""``pyinterp.explain``: what a trace of one call captures, and why not more.

Like ``torch._dynamo.explain``, it runs the function once in a fresh
capture (ignoring any cache) and reports the graphs, every graph-break
event (a break inside a loop that runs three times counts three), the
guards as readable Python with the user's line that caused each one, and
the mock.  ``print(explanation)`` shows a one-screen summary;
``explanation.details()`` shows everything (:mod:`.explain_text`).
Given a traced function, it also reports that function's cache: its
entries and the guards that failed (its recompiles).
"""
from typing import Any, Callable

from . import explain_text, torchversion
from .guardfail import name_parameters
from .specialized import specializations
from .traced import (Traced, as_traced, brief_failure, capture, describe_guard, roots_of,
                     signature_of)

class Explanation:
    """The report of :func:`explain`.

    ``str()`` (and ``print()``) is the one-screen summary; :meth:`details`
    is everything.  The fields named as ``torch._dynamo.explain``'s
    ``ExplainOutput`` mean the same: ``graphs``, ``graph_count``,
    ``graph_break_count``, ``break_reasons`` (one per break event, with
    ``kind``, ``message``, ``filename``, ``lineno``, ``hint``),
    ``op_count``, ``out_guards`` (the guard objects) and ``compile_times``
    (a line of text).  ``ops_per_graph`` is each graph's op count (torch's
    lists the ops: :func:`.explain_text.graph_op_names` gives them).
    ``guards`` are the guards as readable Python, ``guard_code`` the guard
    function, ``mock`` the mock, ``times`` the seconds spent (``capture``,
    ``guards``, ``compile``), ``specializations`` the inputs and values the
    entry is specialized on, ``dynamic_lines`` its symbolic dimensions and
    why, what was specialized and why, and the size relations guarded (a
    traced function's explain captures with its ``dynamic`` setting and
    the dimensions it has seen change), ``assumptions`` the bools from
    tensor data its graphs assume and check on every call (``file:line:
    assumed value: source``), ``merged_branches`` the conditions on tensor
    data whose two arms its graphs both compute, picking with
    ``torch.where``/``torch.cond`` (``file:line: source``), ``result`` what
    the call returned.  For a
    traced function: ``cache_entries`` (its entries' :class:`TraceResult`,
    most recent first; None otherwise) and ``recompile_reasons``
    (``(guard, failures)`` pairs).  ``ddp_parts``: for a traced DDP module,
    how many parts each graph is split into at DDP's gradient buckets
    (:mod:`.ddp_split`); empty otherwise.
    """

    def __init__(self, trace, name="", cache=None):
        self.name = name
        self.graph_count = trace.graph_count
        self.graph_break_count = len(trace.breaks)
        self.break_reasons = list(trace.breaks)
        self.ops_per_graph = list(trace.ops_per_graph)
        self.op_count = sum(self.ops_per_graph)
        self.graphs = list(trace.graphs)
        self.out_guards = list(trace.guards)
        self.guard_code = trace.guard_text
        self.guards = [describe_guard(g, trace.param_names) for g in trace.guards]
        self.mock = trace.mock_text
        self.result = trace.result
        self.times = dict(trace.times)
        self.compile_times = _times_line(self.times)
        self.specializations = specializations(trace.guards, trace.param_names)
        self.assumptions = [_assumption_text(site, value) for site, value in trace.assumptions]
        self.merged_branches = [_site_text(site) for site in trace.merged]
        self.dynamic_lines = [] if trace.dynamic is None else [
            name_parameters(line, trace.param_names) for line in trace.dynamic.lines()]
        from .ddp_split import parts_of  # (torch is loaded: a capture ran)

        self.ddp_parts = parts_of(self.graphs)
        self.cache_entries = None if cache is None else [e.trace for e in cache]
        self.recompile_reasons = [] if cache is None else recompile_reasons(cache)

    def summary(self) -> str:
        """The one-screen summary (what ``str()`` gives)."""
        return explain_text.summary(self)

    def details(self) -> str:
        """Every break, guard (with its user line), the guard code, the mock,
        and each graph with the user's source line above each node."""
        return explain_text.details(self)

    def __str__(self):
        return self.summary()

    __repr__ = __str__


def _assumption_text(site, value):
    """``file:line: assumed value: source`` for one assumed bool (the value
    before the source line, which a narrow summary may clip)."""
    return _site_text(site, "assumed %s" % value)


def _site_text(site, what=None):
    """``file:line: [what: ]source`` for a user line of the run (the file
    as :func:`.explain_text.short_file` shows it, so that the clipped line
    does not depend on where the checkout is)."""
    import linecache

    head = "" if what is None else what + ": "
    if site is None:
        return "(no user line): " + (what or "")
    filename, lineno = site
    return "%s:%s: %s%s" % (explain_text.short_file(filename), lineno, head,
                            linecache.getline(filename, lineno).strip())


def _times_line(times):
    return "capture %.3f s (guard build %.3f s), backend compile %.3f s" % (
        times["capture"], times["guards"], times["compile"])


def recompile_reasons(entries):
    """``[(guard, count)]``: the guards of ``entries`` (a traced function's
    cache, most recent first) that failed on a call, in a few words, most
    failures first; a guard names its entry (``entry 1`` is the most
    recent)."""
    counts = {}
    for number, entry in enumerate(entries, 1):
        for index, n in entry.failures.items():
            text = "%s (entry %d)" % (brief_failure(entry.trace, index), number)
            counts[text] = counts.get(text, 0) + n
        if entry.assumption_failures:
            text = "a bool its graph assumed differed (entry %d)" % number
            counts[text] = entry.assumption_failures
    return sorted(counts.items(), key=lambda item: -item[1])


def explain(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Explanation:
    """Trace ``fn(*args, **kwargs)`` once, afresh, and report what was captured.

    The call really runs (once); its result is ``explanation.result``.
    ``print(explanation)`` shows a summary, ``explanation.details()`` all.

    ``explain(fn)(*args, **kwargs)``, ``torch._dynamo.explain``'s form,
    does the same: given no arguments for a function that needs some,
    ``explain`` returns the function that explains a call with them.  (A
    function that needs none is explained at once, called with none.)
    """
    torchversion.require_torch("pyinterp.explain")
    if not args and not kwargs and _needs_arguments(fn):
        def explain_call(*args, **kwargs):
            return explain(fn, *args, **kwargs)

        explain_call.__doc__ = "explain(%s, *args, **kwargs)" % _name_of(fn)
        return explain_call
    from . import ddp_forward

    cache = policy = None
    ddp = fn._orig_mod if isinstance(fn, ddp_forward.TracedDDP) else None
    fn = as_traced(fn)  # (a traced module: its Traced; a traced DDP: its inner module's)
    if isinstance(fn, Traced):
        cache = list(fn._entries)
        # (the dimensions its next capture would keep symbolic)
        policy = fn._dim_policy(args, kwargs, ())
        fn = fn.__wrapped__
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    trace = None
    if ddp is not None:  # (DDP's forward natively, around the inner module's capture)
        trace = ddp_forward.explain_inside(
            ddp, lambda a, k, inspect: capture(fn, a, k, roots_of(fn), explain=True,
                                               dim_policy=policy, inspect_graph=inspect),
            args, kwargs)
        name = "DistributedDataParallel(%s)" % name
        if trace is None:  # (a DDP that runs natively as it is)
            fn = ddp
    if trace is None:
        trace = capture(fn, args, kwargs, roots_of(fn), explain=True, dim_policy=policy)
    return Explanation(trace, name, cache)


def _needs_arguments(fn):
    """Does calling ``fn`` with no arguments fail to bind?  False where
    its signature cannot be read."""
    target = as_traced(fn)
    if isinstance(target, Traced):
        target = target.__wrapped__
    try:
        signature_of(target).bind()
    except TypeError:
        return True
    except ValueError:  # (no signature: a builtin)
        return False
    return False


def _name_of(fn):
    return getattr(fn, "__qualname__", None) or type(fn).__name__
