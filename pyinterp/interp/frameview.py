"""The program's view of its interpreted frames: :class:`FrameProxy`.

``sys._getframe``, ``inspect.currentframe``, ``f_back`` chains, the frames a
trace function receives: interpreted code sees a :class:`FrameProxy` for
each of its frames.  A proxy is live (its ``f_lineno`` and ``f_locals``
follow the running frame), one per frame (``is`` holds, as debuggers need),
and reports ``types.FrameType`` as its ``__class__``, so ``inspect.isframe``
accepts it and ``inspect.stack()``, ``traceback.extract_stack()``,
``logging``'s ``findCaller`` and ``warnings.warn(stacklevel=...)`` work
with the user's frames in order.  Past the outermost interpreted frame,
``f_back`` continues with the host's real frames (pyinterp's own skipped),
or with the frames of an enclosing interpreted call.

Where an interpreted frame is: the run loop keeps its current instruction
in a local (``pc``), so a frame's current instruction is read from the
loop's host frame while it runs (:func:`current_index`), and from
``frame.pc`` once it returned, yielded or an exception left it.  Nothing is
recorded per instruction.
"""
import sys
import types

from .decode import localsplus_names
from .model import lookup as _lookup
from .stubframes import bound_variables
from .tracebacks import LOOP_CODES, is_host_file
from ..opcodes.signals import NULL


_getframe = sys._getframe
_FrameType = types.FrameType
OPCODE_EVENTS_ASKED = [False]
"""Some frame set ``f_trace_opcodes`` (3.12's interpreter-wide flag, read
by ``tracing``)."""


class FrameExtra:
    """What a frame keeps only once it is looked at or traced (``Frame.extra``,
    unset otherwise): its proxy, its local trace function and flags, and the
    last instruction the tracer saw (``tracing``)."""

    __slots__ = ("proxy", "f_trace", "f_trace_lines", "f_trace_opcodes", "last")

    def __init__(self):
        self.proxy = None
        self.f_trace = None
        self.f_trace_lines = True
        self.f_trace_opcodes = False
        self.last = -1


def extra_of(frame):
    """The :class:`FrameExtra` of ``frame`` (made on first use)."""
    try:
        return frame.extra
    except AttributeError:
        extra = frame.extra = FrameExtra()
        return extra


def proxy(frame):
    """The one :class:`FrameProxy` of the interpreted ``frame``."""
    extra = extra_of(frame)
    view = extra.proxy
    if view is None:
        view = extra.proxy = FrameProxy(frame)
    return view


def _loop_host(frame):
    """The host frame of the run loop running ``frame``, or None."""
    host = _getframe(1)
    while host is not None:
        if host.f_code in LOOP_CODES and host.f_locals.get("frame") is frame:
            return host
        host = host.f_back
    return None


PAST_YIELD = sys.version_info >= (3, 13)
"""3.13: a frame that yielded stands at the instruction after its
``YIELD_VALUE`` (already while its ``return`` event is delivered)."""


def current_index(frame):
    """The index of the instruction ``frame`` is executing (or stopped at)."""
    host = _loop_host(frame)
    index = None
    if host is not None:
        pc = host.f_locals.get("pc")
        if type(pc) is int and pc > 0:
            index = pc - 1
    if index is None:
        index = max(frame.pc - 1, 0)
    if PAST_YIELD and frame.instructions[index].opname == "YIELD_VALUE":
        index += 1
    return index


def outside(host):
    """The frame the program sees at or below the host frame ``host``: the
    proxy of an enclosing interpreted frame (an interpreted call that made
    a native call into another interpreter), or the first real frame that
    is not pyinterp's own; None at the bottom of the stack."""
    while host is not None:
        code = host.f_code
        if code in LOOP_CODES:
            frame = host.f_locals.get("frame")
            if frame is not None:
                return proxy(frame)
        elif not is_host_file(code.co_filename):
            return host
        host = host.f_back
    return None


_LOCALS_SNAPSHOT = sys.version_info >= (3, 13)
"""PEP 667 (3.13): ``locals()`` of a function frame is a new snapshot dict
on every call; before, it was one dict per frame, refreshed on each call."""


def frame_locals(frame):
    """``locals()`` of an interpreted frame.

    3.11/3.12: a function frame has one dict, refreshed from the fast locals
    on every call (CPython's ``PyFrame_FastToLocals``): bound variables are
    written, unbound ones removed, other keys (written by ``exec``) kept.
    3.13: a fresh dict of the bound variables each time (PEP 667), so what
    ``exec`` writes into it is not seen by the next ``locals()``.
    """
    if frame.locals is not None:
        return frame.locals
    bound = bound_variables(frame)
    if _LOCALS_SNAPSHOT:
        return bound
    result = frame.locals_dict
    if result is None:
        result = frame.locals_dict = {}
    for name in localsplus_names(frame.code):
        if name in bound:
            result[name] = bound[name]
        else:
            result.pop(name, None)
    return result


@_lookup.host_type
class FrameProxy:
    """What interpreted code sees of an interpreted frame (see the module
    docstring): ``f_back``, ``f_code``, ``f_globals``, ``f_builtins``,
    ``f_locals``, ``f_lineno``, ``f_lasti``, ``f_trace`` (settable, with
    ``f_trace_lines`` and ``f_trace_opcodes``) and ``clear()``."""

    __slots__ = ("_frame",)

    def __init__(self, frame):
        self._frame = frame

    @property
    def __class__(self):
        return _FrameType

    @property
    def __module__(self):  # (a frame has none: inspect.getmodule looks)
        raise AttributeError("__module__")

    @property
    def f_locals(self):
        return frame_locals(self._frame)

    @property
    def f_globals(self):
        return self._frame.globals

    @property
    def f_builtins(self):
        return self._frame.builtins

    @property
    def f_code(self):
        return self._frame.code

    @property
    def f_lineno(self):
        frame = self._frame
        return frame.instructions[current_index(frame)].line

    @property
    def f_lasti(self):
        frame = self._frame
        return frame.instructions[current_index(frame)].offset

    @property
    def f_back(self):
        frame = self._frame
        if frame.back is not None:
            return proxy(frame.back)
        host = _loop_host(frame)
        return outside(host.f_back) if host is not None else None

    @property
    def f_trace(self):
        return extra_of(self._frame).f_trace

    @f_trace.setter
    def f_trace(self, value):
        extra_of(self._frame).f_trace = value

    @f_trace.deleter
    def f_trace(self):
        extra_of(self._frame).f_trace = None

    @property
    def f_trace_lines(self):
        return extra_of(self._frame).f_trace_lines

    @f_trace_lines.setter
    def f_trace_lines(self, value):
        extra_of(self._frame).f_trace_lines = bool(value)

    @property
    def f_trace_opcodes(self):
        return extra_of(self._frame).f_trace_opcodes

    @f_trace_opcodes.setter
    def f_trace_opcodes(self, value):
        extra_of(self._frame).f_trace_opcodes = bool(value)
        if value:
            OPCODE_EVENTS_ASKED[0] = True

    def clear(self):
        """``frame.clear()``: a running frame cannot be cleared."""
        if _loop_host(self._frame) is not None:
            raise RuntimeError("cannot clear an executing frame")
        fast = self._frame.fast
        fast[:] = [NULL] * len(fast)

    def __repr__(self):
        code = self._frame.code
        return "<frame at %#x, file %r, line %s, code %s>" % (
            id(self), code.co_filename, self.f_lineno, code.co_name)
