"""``trace`` in several threads at once, first calls included: captures
that overlap leave the process as they found it (the collector, the
recursion limit), racing first calls make one cache entry, and concurrent
hits keep the cache intact.  Every result is compared with eager's."""
import gc
import sys
import threading
import time

import pytest

from trace_support import CountingBackend, traced_counting

torch = pytest.importorskip("torch")

import pyinterp  # noqa: E402


def _in_threads(n, work):
    """Run ``work(i)`` in ``n`` threads started together; re-raise the first
    exception a thread hit."""
    start = threading.Barrier(n)
    errors = []

    def run(i):
        start.wait()
        try:
            work(i)
        except BaseException as e:  # noqa: BLE001 - re-raised below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_overlapping_first_calls_leave_the_collector_on():
    # A's capture pauses the collector; B's starts inside it and compiles
    # (the collector back on for its backend) while A ends (A has no graph
    # to compile); then B ends.
    a_in, a_go, b_in, b_go = (threading.Event() for _ in range(4))

    def fa(x):
        a_in.set()
        a_go.wait(60)
        return x

    def fb(x):
        return x * 2

    def backend_b(gm, example_inputs):
        b_in.set()
        b_go.wait(60)
        return gm.forward

    out = {}
    was_on = gc.isenabled()
    gc.enable()
    try:
        ta = threading.Thread(target=lambda: out.setdefault(
            "a", pyinterp.trace(fa, backend="eager")(torch.ones(2))))
        tb = threading.Thread(target=lambda: out.setdefault(
            "b", pyinterp.trace(fb, backend=backend_b)(torch.ones(2))))
        ta.start()
        a_in.wait(60)
        tb.start()
        b_in.wait(60)
        a_go.set()
        ta.join()
        b_go.set()
        tb.join()
        assert gc.isenabled()
    finally:
        (gc.enable if was_on else gc.disable)()
    assert torch.equal(out["a"], torch.ones(2))
    assert torch.equal(out["b"], fb(torch.ones(2)))


def test_racing_first_calls_make_one_entry():
    # Each capture's backend waits until every thread has run the
    # function's body once: the first calls overlap for sure.
    arrived = []

    def f(x, k):
        arrived.append(k)
        return (x * k).sin() + k

    class Waiting(CountingBackend):
        def __call__(self, gm, example_inputs):
            while len(arrived) < 4 and time.monotonic() < deadline:
                time.sleep(0.001)
            return super().__call__(gm, example_inputs)

    deadline = time.monotonic() + 60
    counter = Waiting()
    traced = pyinterp.trace(f, backend=counter, dynamic=False)  # (an entry per shape)
    results = [None] * 4

    def work(i):
        x = torch.full((3,), float(i))
        results[i] = [traced(x, 2.0) for _ in range(3)]

    _in_threads(4, work)
    assert counter.count == 1
    assert len(traced._entries) == 1
    assert arrived == [2.0] * 12
    for i, got in enumerate(results):
        want = (torch.full((3,), float(i)) * 2.0).sin() + 2.0
        assert all(torch.equal(g, want) for g in got)


def test_concurrent_hits_on_several_entries_keep_the_cache_intact():
    def f(x):
        return x + 1

    traced, counter = traced_counting(f, dynamic=False)  # (an entry per shape)
    shapes = [(n,) for n in range(1, 7)]
    for shape in shapes:
        traced(torch.zeros(shape))
    assert counter.count == len(shapes)
    wrong = []

    def work(i):
        for k in range(6000):
            x = torch.zeros(shapes[(k * (i + 1)) % len(shapes)])
            if not torch.equal(traced(x), f(x)):
                wrong.append(x.shape)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often: the races show
    try:
        _in_threads(8, work)
    finally:
        sys.setswitchinterval(interval)
    assert wrong == []
    assert counter.count == len(shapes)  # every call a hit: no entry lost
    assert len(traced._entries) == len(set(map(id, traced._entries))) == len(shapes)


def _depth(n):
    return 0 if n == 0 else _depth(n - 1) + 1


def test_interpret_and_trace_in_many_threads_at_once():
    limit = sys.getrecursionlimit()
    was_on = gc.isenabled()
    shared, shared_counter = traced_counting(lambda x: x.cos() * 3)
    results = {}

    def work(i):
        def own(x, n):
            return x.relu() + n

        traced_own = pyinterp.trace(own, backend="eager")
        x = torch.randn(4, generator=torch.Generator().manual_seed(i))
        for step in range(3):
            results[i, step] = (pyinterp.interpret(_depth)(300 + i),
                                traced_own(x, step), shared(x))

    _in_threads(6, work)
    for (i, step), (depth, own_out, shared_out) in results.items():
        x = torch.randn(4, generator=torch.Generator().manual_seed(i))
        assert depth == 300 + i
        assert torch.equal(own_out, x.relu() + step)
        assert torch.equal(shared_out, x.cos() * 3)
    assert len(results) == 18
    assert shared_counter.count == 1
    assert sys.getrecursionlimit() == limit
    assert gc.isenabled() is was_on
