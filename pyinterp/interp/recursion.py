"""The host's recursion limit while interpreted calls run.

Each interpreted call costs several host frames (the run loop, the call
ladder, a handler), so while an interpreted call runs the host's limit is
raised to ``HOST_FRAMES_PER_CALL`` times the program's limit (plus room for
pyinterp's own frames); the interpreter raises ``RecursionError`` itself
when the program's own frames reach the program's limit
(``Interpreter.recursion_limit``).

``sys.setrecursionlimit`` is process-wide, and interpreted calls run in
several threads at once, so the raise is counted: the first run to start in
the process notes the program's limit and raises the host's, the last one
to end puts the program's limit back (unless something set another limit
natively in between: that one stays).  A run started inside another run of
the same thread (interpreted code calling ``interpret``) gets the room left
under the raised limit.

Interpreted code sees the program's limit: ``sys.getrecursionlimit()``
returns it and ``sys.setrecursionlimit(n)`` changes it (the host's limit
follows, never below what running frames need).
"""
import sys
import threading

from .calls import intercept

HOST_FRAMES_PER_CALL = 8
_ROOM = 200  # host frames for pyinterp's own calls around the program's

_lock = threading.Lock()
_state = {"runs": 0, "limit": None, "raised": None}
_thread = threading.local()


def _host_limit(limit):
    return limit * HOST_FRAMES_PER_CALL + _ROOM


def enter():
    """A run starts in this thread; returns the number of interpreted frames
    it may nest (its interpreter's ``recursion_limit``)."""
    depth = getattr(_thread, "depth", 0)
    _thread.depth = depth + 1
    with _lock:
        if _state["runs"] == 0:
            _state["limit"] = sys.getrecursionlimit()
            _state["raised"] = _host_limit(_state["limit"])
            sys.setrecursionlimit(_state["raised"])
        _state["runs"] += 1
        if depth:  # nested in a run of this thread: what is left above it
            return sys.getrecursionlimit() // HOST_FRAMES_PER_CALL
        return _state["limit"]


def leave():
    """The matching end of :func:`enter`."""
    _thread.depth -= 1
    with _lock:
        _state["runs"] -= 1
        if _state["runs"] == 0 and sys.getrecursionlimit() == _state["raised"]:
            sys.setrecursionlimit(_state["limit"])


def program_limit():
    """The recursion limit the program set (the host's while no run is on)."""
    with _lock:
        return _state["limit"] if _state["runs"] else sys.getrecursionlimit()


def _getrecursionlimit(vm, args, kwargs):
    if args or kwargs:
        return sys.getrecursionlimit(*args, **kwargs)  # CPython's TypeError
    return program_limit()


def _setrecursionlimit(vm, args, kwargs):
    if kwargs or len(args) != 1 or type(args[0]) is not int or args[0] < 1:
        return sys.setrecursionlimit(*args, **kwargs)  # CPython's own error
    limit = args[0]
    if limit <= vm.depth:
        raise RecursionError("cannot set the recursion limit to %d at the recursion depth "
                             "%d: the limit is too low" % (limit, vm.depth))
    with _lock:
        if _state["runs"] == 0:  # (a vm run outside enter/leave: plain)
            sys.setrecursionlimit(limit)
            return None
        _state["limit"] = limit
        _state["raised"] = max(_host_limit(limit), sys.getrecursionlimit())
        sys.setrecursionlimit(_state["raised"])
    vm.recursion_limit = limit
    return None


intercept(sys.getrecursionlimit, _getrecursionlimit)
intercept(sys.setrecursionlimit, _setrecursionlimit)
