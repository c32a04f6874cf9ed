"""The cyclic garbage collector, paused while pyinterp does its own work.

A capture allocates many objects that live for a while (frames, RefGraph
entries, FX nodes, the instructions of the guard and the mock).  With the
collector on, they push it into full collections, which scan the whole heap
(torch, a model, earlier traces) and can cost as much as the capture itself.
When cyclic garbage is collected is not something a program is promised, so
a capture pauses the collector; a compiler backend (third-party code that
may make much cyclic garbage) runs with the collector as the user had it.
"""
import contextlib
import gc

_user_had_it_on = []  # one entry per active pause, outermost first


@contextlib.contextmanager
def paused():
    """Pause automatic collection; restore the previous state afterwards."""
    was_on = gc.isenabled()
    _user_had_it_on.append(was_on)
    gc.disable()
    try:
        yield
    finally:
        _user_had_it_on.pop()
        if was_on:
            gc.enable()


@contextlib.contextmanager
def as_the_user_had_it():
    """Inside :func:`paused`: turn automatic collection back on for a while
    if it was on before the outermost pause."""
    if not (_user_had_it_on and _user_had_it_on[0]) or gc.isenabled():
        yield
        return
    gc.enable()
    try:
        yield
    finally:
        gc.disable()
