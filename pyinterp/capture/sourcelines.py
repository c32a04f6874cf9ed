"""Source lines a capture registers in ``linecache``, dropped with its entry.

torch.fx gives the generated ``forward`` of every ``GraphModule`` a file
name of its own (``<eval_with_key>.N``) and registers its source with
``linecache`` (and in its loader's ``eval_cache``), so that a traceback
through it shows the code.  A capture makes such modules (the recorded
graph; Inductor makes a dozen more while it compiles), and nothing ever
removes their lines: each capture would grow ``linecache`` for good.

While a capture runs, :func:`recording` collects the names that the current
thread's new GraphModules register: the fx loader's ``cache`` method is
wrapped while any capture runs in the process (counted across threads, as
the collector's pause is; a thread that is not capturing passes through
unrecorded).  The capture's ``TraceResult`` owns the names, and
:func:`forget` drops them when it dies: with its cache entry, or with the
explanation that holds it.  Other names a capture registers with
``linecache`` (generated guard and mock source) belong in the same list.
"""
import contextlib
import linecache
import threading

_lock = threading.Lock()
_state = {"users": 0}
_thread = threading.local()


def _fx_loader():
    try:
        from torch.fx import graph_module
    except ImportError:  # pragma: no cover - capture needs torch
        return None
    loader = getattr(graph_module, "_loader", None)
    return loader if callable(getattr(type(loader), "cache", None)) else None


def _recording_cache(*args, **kwargs):
    """The fx loader's ``cache`` while captures run: the same, noting the
    name for the current thread's capture."""
    loader = _fx_loader()
    key = type(loader).cache(loader, *args, **kwargs)
    names = getattr(_thread, "names", None)
    if names is not None:
        names.append(key)
    return key


@contextlib.contextmanager
def recording():
    """Collect the ``linecache`` names registered by this thread until the
    block ends; yields the list."""
    loader = _fx_loader()
    with _lock:
        if _state["users"] == 0 and loader is not None:
            loader.cache = _recording_cache
        _state["users"] += 1
    outer = getattr(_thread, "names", None)
    names = _thread.names = []
    try:
        yield names
    finally:
        _thread.names = outer
        with _lock:
            _state["users"] -= 1
            if _state["users"] == 0 and loader is not None \
                    and loader.__dict__.get("cache") is _recording_cache:
                del loader.cache


def forget(names):
    """Drop ``names`` from ``linecache`` (and from the fx loader's cache)."""
    loader = _fx_loader()
    eval_cache = getattr(loader, "eval_cache", None)
    for name in names:
        linecache.cache.pop(name, None)
        if type(eval_cache) is dict:
            eval_cache.pop(name, None)
