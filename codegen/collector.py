"""The cyclic garbage collector, paused while pyinterp does its own work.

A capture allocates many objects that live for a while (frames, RefGraph
entries, FX nodes, the instructions of the guard and the mock).  With the
collector on, they push it into full collections, which scan the whole heap
(torch, a model, earlier traces) and can cost as much as the capture itself.
When cyclic garbage is collected is not something a program is promised, so
a capture pauses the collector; a compiler backend (third-party code that
may make much cyclic garbage) runs with the collector as the user had it.

The collector is process-wide, and captures in several threads overlap, so
the pauses are counted, not nested: the first pause in the process notes
whether the user had the collector on, the last one out restores that, and
in between the collector is on exactly when the user had it on and some
thread is inside :func:`as_the_user_had_it` (a backend compiling).
"""
import contextlib
import gc
import threading

_lock = threading.Lock()
_state = {"pauses": 0, "resumes": 0, "user_on": True}


def _apply():
    """Put the collector where the counts say it should be (under the lock)."""
    on = _state["user_on"] and (_state["pauses"] == 0 or _state["resumes"] > 0)
    if on != gc.isenabled():
        (gc.enable if on else gc.disable)()


@contextlib.contextmanager
def paused():
    """Pause automatic collection; the last pause to end restores the state
    the user had when the first one began."""
    with _lock:
        if _state["pauses"] == 0:
            _state["user_on"] = gc.isenabled()
        _state["pauses"] += 1
        _apply()
    try:
        yield
    finally:
        with _lock:
            _state["pauses"] -= 1
            _apply()


@contextlib.contextmanager
def as_the_user_had_it():
    """Inside :func:`paused`: turn automatic collection back on for a while
    if it was on before the first pause."""
    with _lock:
        inside = _state["pauses"] > 0
        if inside:
            _state["resumes"] += 1
            _apply()
    try:
        yield
    finally:
        if inside:
            with _lock:
                _state["resumes"] -= 1
                _apply()
