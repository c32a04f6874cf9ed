"""What ``traced.cache_entries()`` returns: one readable record per entry.

Built on request from a :class:`.cache.Entry` (nothing here runs on a call).
"""
from typing import Dict, List, Optional


class CacheEntryInfo:
    """One cache entry of a traced callable, as a user reads it.

    * ``guard_source``: the guard function's Python source;
    * ``guards``: its checks, one readable line each, with the user's
      ``file:line`` whose read made it;
    * ``kind``: ``"graph"`` (one mock around the compiled graph),
      ``"partial"`` (graph breaks: compiled graphs around the break, resumed
      by resume functions) or ``"native"`` (a break where no split is
      possible: the function runs natively, its callees traced);
    * ``graph_count``, ``break_reasons`` (the breaks' messages);
    * ``hits``: calls whose guard passed;
    * ``failures``: ``{check: calls}``, the check that failed first on a
      call this entry did not serve, in a few words (``x: float32[4, 16]
      on cpu``) (a call that another entry then served
      counts too);
    * ``dynamic_lines``: dynamic shapes, one line each: the symbolic
      dimensions and why (``symbolic: x dims [0, 1] (dynamic=True)``),
      each specialization and why, the relations guarded (``relation: 2
      <= x.shape[0]``), or why the entry guards exact shapes; empty for
      a capture with exact shapes only;
    * ``ddp_parts``: for a traced DDP module, how many parts each graph was
      compiled as, split at DDP's gradient buckets (1: not split); empty
      otherwise.
    """

    def __init__(self, guard_source: str, guards: List[str], kind: str, graph_count: int,
                 break_reasons: List[str], hits: int, failures: Dict[str, int],
                 dynamic_lines: Optional[List[str]] = None,
                 ddp_parts: Optional[List[int]] = None):
        self.guard_source = guard_source
        self.guards = guards
        self.kind = kind
        self.graph_count = graph_count
        self.break_reasons = break_reasons
        self.hits = hits
        self.failures = failures
        self.dynamic_lines = dynamic_lines or []
        self.ddp_parts = ddp_parts or []

    def __repr__(self) -> str:
        parts = " (DDP buckets: %s parts)" % "+".join(map(str, self.ddp_parts)) \
            if self.ddp_parts else ""
        return "<cache entry: %s, %d graph(s)%s, %d guards, %d hits, %d failures>" % (
            self.kind, self.graph_count, parts, len(self.guards), self.hits,
            sum(self.failures.values()))


def entry_info(entry, describe, brief, name) -> CacheEntryInfo:
    """``entry``'s record; ``describe(trace, index)`` renders a check in
    full, ``brief(trace, index)`` in a few words (``index``: a guard's, or
    one of the cache's negative codes for a failure); ``name(text,
    param_names)`` spells ``args[0]`` by its parameter's name."""
    from .ddp_split import parts_of  # (torch is loaded: the entry holds a capture)

    trace = entry.trace
    failures: Dict[str, int] = {}
    for index, n in entry.failures.items():
        text = brief(trace, index)
        failures[text] = failures.get(text, 0) + n
    return CacheEntryInfo(
        guard_source=trace.guard_text,
        guards=[describe(trace, i) for i in range(len(trace.guards))],
        kind="native" if entry.native else "partial" if trace.breaks else "graph",
        graph_count=trace.graph_count,
        break_reasons=[_reason(record) for record in trace.breaks],
        hits=entry.hits,
        failures=failures,
        dynamic_lines=[name(line, trace.param_names) for line in trace.dynamic.lines()]
        if trace.dynamic is not None else [],
        ddp_parts=parts_of(trace.graphs))


def _reason(record) -> str:
    where = " (%s:%s)" % (record.filename, record.lineno) if record.filename else ""
    return "%s: %s%s" % (record.kind, record.message, where)
