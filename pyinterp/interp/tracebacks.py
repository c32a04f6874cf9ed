"""Tracebacks that show the user's frames, not pyinterp's.

An exception raised in interpreted code travels through pyinterp's own host
frames (the run loop, handlers, the call ladder), and those are what its
``__traceback__`` records.  CPython's would record one entry per frame of
the program the exception arrived in: the frame, the instruction
(``tb_lasti``) and its line.

**While the program runs** the run loop marks each arrival
(:func:`mark_arrival`, from ``Interpreter._unwind``): the traceback entry of
the loop's host frame is replaced by one whose ``tb_lasti`` encodes the
interpreted instruction's index (``-2 - index``: negative, so that
``traceback`` draws no carets for it if it is ever shown untranslated).
The loop's host frame holds the interpreted frame in its local ``frame``.
That is one ``TracebackType`` per arrival and nothing else: exceptions that
the program handles itself cost no more.

**Where an exception becomes visible** (it leaves ``interpret`` or
``trace`` for the user, or an interpreted generator for native code),
:func:`user_facing` rewrites the traceback: each marked entry becomes an entry whose frame is a
real stub frame of the user's code (:mod:`.stubframes`), every other entry
of pyinterp's own files is dropped, and every other entry (native Python
frames the program reached through C code, earlier stubs) is kept.  The
chain (``__cause__``, ``__context__``, members of exception groups) is
rewritten too.  Boundaries re-raise with a bare ``raise``, which adds no
entry for the boundary's own frame.  Where the program itself looks
(it reads ``tb_frame``, ``tb_next``... of a traceback, as ``traceback``
and ``logging`` do), it reads them through a rewritten view
(:func:`traceback_attribute`), and the exception keeps the host's
traceback until it leaves.

``config.host_tracebacks`` (``PYINTERP_HOST_TRACEBACKS=1``) keeps the host's
tracebacks as they are, for debugging pyinterp itself.
"""
import types

from .. import config
from ..errors import PyinterpInternal
from .hostfiles import HOST_DIRS, TESTING_DIR
from .stubframes import bound_variables, globals_of, stub_frame

TracebackType = types.TracebackType

LOOP_CODES = set()
"""Code objects of run loops whose host frames hold an interpreted
``frame`` (``vm.py`` registers ``Interpreter.loop``)."""


def mark_arrival(exc, index, host):
    """Record that ``exc`` arrived in the interpreted frame run by the loop
    whose host frame is ``host``, at instruction ``index``."""
    tb = exc.__traceback__
    if tb is not None and tb.tb_frame is host:
        lineno = tb.tb_lineno
        tb = tb.tb_next
    else:
        lineno = host.f_lineno
    exc.__traceback__ = TracebackType(tb, host, -2 - index, lineno)


def is_host_file(filename):
    """Whether ``filename`` is one of pyinterp's own source files."""
    return filename.startswith(HOST_DIRS) and not filename.startswith(TESTING_DIR)


def _needs_rewrite(tb):
    while tb is not None:
        if is_host_file(tb.tb_frame.f_code.co_filename):
            return True
        tb = tb.tb_next
    return False


def _host_locals(host):
    """The interpreted frame a loop's host frame runs (or ran), and the
    index of its current instruction: the loop's ``pc - 1`` while the frame
    runs, else where it stopped (``frame.pc - 1``: its return, its yield,
    or the instruction an exception left it from)."""
    try:
        variables = host.f_locals
        frame, pc, vm = variables.get("frame"), variables.get("pc"), variables.get("self")
    except Exception:  # noqa: BLE001 - a cleared or odd frame: no entry
        return None, None
    if frame is None:
        return None, None
    running = getattr(vm, "top", None)
    while running is not None and running is not frame:
        running = running.back
    if running is None or type(pc) is not int:
        pc = frame.pc
    return frame, pc - 1


def user_traceback(tb, internal=False):
    """``tb`` with the interpreted frames as real (stub) frames and
    pyinterp's own frames left out (see the module docstring).

    ``internal``: ``tb`` is a :class:`~pyinterp.errors.PyinterpInternal`'s
    (a graph break's signal), which passes each run loop once, unmarked,
    having left the frame's instruction in ``frame.lasti``."""
    entries = []
    stubs = {}
    while tb is not None:
        host = tb.tb_frame
        code = host.f_code
        if code in LOOP_CODES:
            index = -2 - tb.tb_lasti if tb.tb_lasti <= -2 else None
            if index is None and internal:
                frame = _host_locals(host)[0]
                index = frame.lasti if frame is not None else None
            if index is not None:
                entry = _interpreted_entry(host, index, stubs)
                if entry is not None:
                    entries.append(entry)
        elif not is_host_file(code.co_filename):
            entries.append((host, tb.tb_lasti, tb.tb_lineno))
        tb = tb.tb_next
    result = None
    for frame, lasti, lineno in reversed(entries):
        result = TracebackType(result, frame, lasti, lineno)
    return result


def _interpreted_entry(host, index, stubs):
    frame, current = _host_locals(host)
    if frame is None or index >= len(frame.instructions):
        return None
    stub = stubs.get(id(frame))
    if stub is None:
        stub = stubs[id(frame)] = (frame,) + _stub_for(frame, current)
    ins = frame.instructions[index]
    return stub[1], ins.offset + stub[2], ins.line if ins.line is not None else -1


def _stub_for(frame, current):
    """A real frame standing for ``frame``, at instruction ``current``, and
    the shift of offsets in its code (``stubframes.stub_frame``)."""
    instructions = frame.instructions
    current = min(max(current, 0), len(instructions) - 1)
    return stub_frame(frame.code, globals_of(frame), instructions[current].offset,
                      bound_variables(frame))


def user_facing(exc):
    """Rewrite the tracebacks of ``exc`` and of the exceptions chained to it
    for the user (see the module docstring); returns ``exc``."""
    if config.host_tracebacks or isinstance(exc, PyinterpInternal):
        return exc
    seen = set()
    pending = [exc]
    while pending:
        e = pending.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        tb = e.__traceback__
        if tb is not None and _needs_rewrite(tb):
            e.__traceback__ = user_traceback(tb)
        pending.append(e.__cause__)
        pending.append(e.__context__)
        if isinstance(e, BaseExceptionGroup):
            pending.extend(e.exceptions)
    return exc


_VIEWS_KEPT = 32


def traceback_view(vm, tb):
    """The interpreted program's view of the traceback ``tb``: rewritten
    for the user (:func:`user_traceback`) if it names pyinterp's frames,
    else ``tb`` itself; the same view object for the same ``tb`` while
    ``vm`` keeps it among its last few (None: no entry is the user's)."""
    if tb is None or config.host_tracebacks:
        return tb
    views = vm.traceback_views
    if views is None:
        views = vm.traceback_views = {}
    seen = views.get(id(tb))
    if seen is not None and seen[0] is tb:
        return seen[1]
    view = user_traceback(tb) if _needs_rewrite(tb) else tb
    if len(views) >= _VIEWS_KEPT:
        views.clear()
    views[id(tb)] = (tb, view)
    return view


def traceback_attribute(vm, tb, name):
    """``tb.name`` read by interpreted code (``tb_frame``, ``tb_next``,
    ``tb_lineno``, ``tb_lasti``): read through the program's view.

    A traceback stays the host's everywhere (``__traceback__``,
    ``sys.exc_info()``, a ``with`` block's ``__exit__`` get it as it is: no
    cost while nobody looks, and ``except*``'s identity tests hold); only
    its entries, when the program walks them, are the user's."""
    view = traceback_view(vm, tb)
    return getattr(view if view is not None else tb, name)
