"""Silence torch's own report of an op that fails on fake tensors while
the capture replays its graph on them (:meth:`.sizes.SizeTracker.fake_of`).

The capture handles that failure itself: it gives the symbolic sizes up
(the entry guards exact shapes) and says why in ``cache_entries()``.  But
``torch._subclasses.fake_tensor`` first logs the failing meta kernel's
traceback at ERROR level (``failed while attempting to run meta for
aten.constant_pad_nd.default``), which reads like a crash to the user.
:func:`replaying` drops exactly those records, on this thread, while a
replay runs; every other record of that logger passes.
"""
import contextlib
import logging
import threading

_LOGGER = "torch._subclasses.fake_tensor"
_state = threading.local()


class _DuringReplay(logging.Filter):
    """Drops the records the fake-tensor logger emits while this thread
    replays a capture's ops."""

    def filter(self, record):
        return not getattr(_state, "depth", 0)


_FILTER = _DuringReplay()
logging.getLogger(_LOGGER).addFilter(_FILTER)


@contextlib.contextmanager
def replaying():
    """Within: the fake-tensor logger's records on this thread are dropped."""
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1
