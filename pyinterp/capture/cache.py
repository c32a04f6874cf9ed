"""The cache of one traced callable: its entries, most recently used first.

**Threads.**  Several threads may call one traced callable at once.  The
entries are a tuple that is replaced, never changed in place, so a call
walks a consistent snapshot without a lock; moving a hit to the front and
adding an entry take a short lock.  One capture at a time per callable: a
miss while another thread is capturing runs the function natively (its
real result, no second capture of the same guards), and a miss that finds
entries added since its walk walks them first.  (The capture runs the
user's code for real, so no lock is held while it runs: code that waits for
another thread's call cannot deadlock on the cache.)

**Lifetimes.**  An entry holds no object of the call that made it beyond
what its guard checks (see ``refgraph.guards.hold``); a guarded object held
by weak reference that dies retires the entry (its guard fails from then
on, and the next miss removes it).
"""
import threading
import weakref

RETIRED = -3
"""What a retired entry's guard returns (a failure index of its own)."""


def _retired_guard(args, kwargs):
    return RETIRED


class Entry:
    """One cache entry: a guard and what to run when it passes."""

    __slots__ = ("guard", "mock", "native", "run", "trace", "hits", "failures", "assumes",
                 "assumption_failures", "_watches", "__weakref__")

    def __init__(self, guard, mock, trace, run=None):
        self.guard = guard
        self.mock = mock
        self.native = mock is None
        # For a native entry: run(args, kwargs) with the callees traced
        # (hybrid.py), or None to call the function plainly.
        self.run = run
        self.trace = trace
        self.hits = 0  # calls its guard passed
        self.failures = {}  # guard failure index -> calls it failed
        # Its graph assumes bools from tensor data (values/assumptions.py):
        # the calls where one differed (the mock raised AssumptionFailed).
        self.assumes = bool(getattr(trace, "assumptions", ()))
        self.assumption_failures = 0
        self._watches = ()

    def watch(self, refs):
        """Retire this entry when the object of any of ``refs`` (weak
        references its guard checks through) dies."""
        retire = _retirer(weakref.ref(self))
        self._watches = tuple(weakref.ref(r(), retire) for r in refs if r() is not None)
        if len(self._watches) < len(refs):
            self.guard = _retired_guard

    @property
    def retired(self):
        return self.guard is _retired_guard


def _retirer(entry_ref):
    def retire(_):
        entry = entry_ref()
        if entry is not None:
            # One attribute store: safe from a collector callback in any thread.
            entry.guard = _retired_guard

    return retire


class Entries:
    """The entries of one traced callable and the bookkeeping of its misses.

    ``snapshot`` is the current tuple (most recently used first)."""

    __slots__ = ("snapshot", "limit", "_lock", "_capturing")

    def __init__(self, limit):
        self.snapshot = ()
        self.limit = limit
        self._lock = threading.Lock()
        self._capturing = {}  # thread id -> captures in flight in that thread

    def __len__(self):
        return len(self.snapshot)

    def __iter__(self):
        return iter(self.snapshot)

    def clear(self):
        """Drop every entry (a capture in flight still adds its own)."""
        with self._lock:
            self.snapshot = ()

    def to_front(self, entry):
        """``entry`` passed its guard: make it the first one tried."""
        with self._lock:
            current = self.snapshot
            if current and current[0] is not entry and any(e is entry for e in current):
                self.snapshot = (entry,) + tuple(e for e in current if e is not entry)

    def begin_miss(self, seen):
        """Decide what a miss after walking ``seen`` does: ``"retry"`` (entries
        were added since: walk them), ``"native"`` (another thread is
        capturing), ``"full"`` (``limit`` entries) or ``"capture"`` (then
        :meth:`end_miss` must follow)."""
        me = threading.get_ident()
        with self._lock:
            current = self.snapshot
            live = tuple(e for e in current if not e.retired)
            if len(live) < len(current):
                self.snapshot = current = live
            if any(all(e is not s for s in seen) for e in current):
                return "retry"
            if any(thread != me for thread in self._capturing):
                return "native"
            if len(current) >= self.limit:
                return "full"
            self._capturing[me] = self._capturing.get(me, 0) + 1
            return "capture"

    def end_miss(self, entry):
        """The capture that :meth:`begin_miss` allowed ended; ``entry`` is the
        new entry (None if the capture raised)."""
        me = threading.get_ident()
        with self._lock:
            if entry is not None:
                self.snapshot = (entry,) + self.snapshot
            left = self._capturing[me] - 1
            if left:
                self._capturing[me] = left
            else:
                del self._capturing[me]
