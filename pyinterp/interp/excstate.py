"""Mirror the interpreted program's handled exception into the real thread.

CPython keeps "the exception being handled" in a per-thread stack of items
(one per running generator plus the thread's own).  It drives implicit
chaining (``__context__``), ``sys.exc_info()`` and ``sys.exception()``.

Instead of simulating that state, pyinterp makes the *host* interpreter's
state equal to the interpreted program's: ``PUSH_EXC_INFO`` and
``POP_EXCEPT`` write the current item exactly as CPython's own opcodes do.
Then everything that reads the state natively (a C function raising inside an
``except`` block, ``traceback.print_exc()``, a generator being thrown into)
sees the right value, with no special cases.

Two primitives are needed:

* ``current_item_value()``: the value of the *current* item (not the
  topmost non-empty one that ``sys.exc_info()`` reports), which
  ``PUSH_EXC_INFO`` saves so that ``POP_EXCEPT`` can restore it.
* ``set_handled(exc)``: ``PyErr_SetHandledException``, a public C API since
  3.11.

``reraise(exc)`` re-raises an exception the way the ``RERAISE`` opcode does,
without the implicit chaining a Python ``raise exc`` statement would apply.
"""
import ctypes
import sys

_api = ctypes.pythonapi
_set_handled = _api.PyErr_SetHandledException
_set_handled.argtypes = [ctypes.py_object]
_set_handled.restype = None
_tstate_get = _api.PyThreadState_Get
_tstate_get.restype = ctypes.c_void_p
_tstate_get.argtypes = []

_WORD = ctypes.sizeof(ctypes.c_void_p)
_word_at = ctypes.c_void_p.from_address
_NONE_ADDRESS = id(None)
_EXC_INFO_OFFSET = None


def _find_exc_info_offset():
    """Locate ``PyThreadState.exc_info`` without dereferencing unknown memory.

    Outside any generator, ``tstate->exc_info`` points at ``tstate->exc_state``,
    an item embedded in the thread state itself.  So the field is a word whose
    value is an address inside the struct; inside an ``except`` block, the
    first word of that item is the exception being handled.
    """
    sentinel = LookupError("pyinterp probe")
    try:
        raise sentinel
    except LookupError:
        tstate = _tstate_get()
        for offset in range(_WORD, 200 * _WORD, _WORD):
            word = ctypes.c_void_p.from_address(tstate + offset).value
            if word and 0 <= word - tstate < 400 * _WORD and word % _WORD == 0:
                if ctypes.c_void_p.from_address(word).value == id(sentinel):
                    return offset
    return None


def _find_in_a_fresh_thread():
    """:func:`_find_exc_info_offset` in a new thread: importing this module
    inside a running generator (pytest collects test modules from
    generators) would have ``tstate->exc_info`` point at that generator's
    item, outside the thread state, and the probe would find nothing.  A new
    thread runs no generator; the offset is the same for every thread."""
    import threading

    found = []
    probe = threading.Thread(target=lambda: found.append(_find_exc_info_offset()))
    probe.start()
    probe.join()
    return found[0] if found else None


_EXC_INFO_OFFSET = _find_in_a_fresh_thread()


def current_item_value():
    """The handled exception stored in the current stack item, or None."""
    if _EXC_INFO_OFFSET is None:  # pragma: no cover - layout not recognised
        return sys.exception()
    item = _word_at(_tstate_get() + _EXC_INFO_OFFSET).value
    value = _word_at(item).value
    if not value or value == _NONE_ADDRESS:
        return None
    # A non-empty current item is also the topmost one, which sys.exception()
    # returns without any pointer casting.
    return sys.exception()


def set_handled(exc):
    """Make ``exc`` (or None) the exception being handled in the current item."""
    _set_handled(exc)


def reraise(exc):
    """Raise ``exc`` again with its ``__context__`` left as it is.

    A Python ``raise exc`` statement chains ``exc`` to the exception being
    handled; ``RERAISE`` and frame unwinding do not.  Raise once, undo the
    chaining, then re-raise with a bare ``raise`` (which never chains).
    """
    context = exc.__context__
    cut = _link_to(_handled_exception(), exc)
    try:
        raise exc
    except BaseException:
        exc.__context__ = context
        if cut is not None:
            cut.__context__ = exc
        raise
    finally:
        # The traceback keeps this frame alive: a local referring to the
        # exception would be a reference cycle, freeing the exception (and
        # everything its frames hold) only at the next cyclic collection
        # instead of when CPython frees it.
        exc = context = cut = None


_handled_exception = sys.exception  # (bound at import: the program may replace sys's)


def _link_to(handled, exc):
    """The exception in ``handled``'s context chain whose ``__context__`` is
    ``exc``: chaining ``exc`` to ``handled`` (``raise exc``) cuts that link
    to avoid a cycle, and :func:`reraise` puts it back (CPython's walk:
    stop at ``exc``, or where the chain loops back)."""
    if handled is None or handled is exc:
        return None
    seen = set()
    while True:
        context = handled.__context__
        if context is None or id(handled) in seen:
            return None
        if context is exc:
            return handled
        seen.add(id(handled))
        handled = context
