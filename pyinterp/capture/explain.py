"""``pyinterp.explain``: what a trace of one call captures, and why not more.

Like ``torch._dynamo.explain``, it runs the function once in a fresh
capture (ignoring any cache) and reports the graphs, every graph-break
event (a break inside a loop that runs three times counts three), the
guards as readable Python with the user's line that caused each one, and
the mock.
"""
from typing import Any, Callable

from . import torchversion
from .traced import Traced, capture, describe_guard, roots_of


class Explanation:
    """The report of :func:`explain`; ``print()`` it for a readable summary."""

    def __init__(self, trace):
        self.graph_count = trace.graph_count
        self.graph_break_count = len(trace.breaks)
        self.break_reasons = list(trace.breaks)
        self.ops_per_graph = list(trace.ops_per_graph)
        self.graphs = list(trace.graphs)
        self.guard_code = trace.guard_text
        self.guards = [describe_guard(g, trace.param_names) for g in trace.guards]
        self.mock = trace.mock_text
        self.result = trace.result

    def __str__(self):
        out = ["Graph count: %d" % self.graph_count,
               "Graph break count: %d" % self.graph_break_count,
               "Ops per graph: %s" % self.ops_per_graph]
        if self.break_reasons:
            out.append("Break reasons:")
            out += ["  %d. %s" % (i + 1, str(r).replace("\n", "\n     "))
                    for i, r in enumerate(self.break_reasons)]
        out.append("Guards (%d):" % len(self.guards))
        out += ["  " + g for g in self.guards]
        out.append("Guard code:")
        out += ["  " + line for line in self.guard_code.splitlines()]
        if self.mock:
            out.append("Mock:")
            out += ["  " + line for line in self.mock.splitlines()]
        for i, gm in enumerate(self.graphs):
            out.append("Graph %d:" % i)
            out += ["  " + line for line in gm.code.strip().splitlines()]
        return "\n".join(out)

    __repr__ = __str__


def explain(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Explanation:
    """Trace ``fn(*args, **kwargs)`` once, afresh, and report what was captured.

    The call really runs (once); its result is ``explanation.result``.
    """
    torchversion.require_torch("pyinterp.explain")
    if isinstance(fn, Traced):
        fn = fn.__wrapped__
    return Explanation(capture(fn, args, kwargs, roots_of(fn), explain=True))
