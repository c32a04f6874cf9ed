"""Real frame objects that stand for interpreted frames.

A traceback entry (``types.TracebackType``) takes a *real* frame, and
``traceback``, ``pdb.post_mortem``, IDEs and C code read frames natively.
An interpreted frame has none: its code runs in pyinterp's loop, whose host
frames name ``vm.py``.  :func:`stub_frame` makes a real frame that looks
like the interpreted one: its code object is the user's code object with
the same file, names, first line and line table (so every offset has the
user's line and positions, PEP 657 carets included), its globals are the
frame's globals and its locals are the frame's bound variables.

How a frame is made without running any of the user's code: the stub's
bytecode is ``NOP``s with ``RETURN_GENERATOR; POP_TOP; RESUME`` placed so
that the frame stops right at the instruction it stands for, and the stub
function is a generator function taking the locals as arguments.  Calling it
runs the ``NOP``s and ``RETURN_GENERATOR`` (nothing that a trace function or
profiler sees: they come before ``RESUME``), which returns a generator whose
unstarted frame (``gi_frame``) has ``f_lasti``, ``f_lineno``,
``f_code``, ``f_globals`` and ``f_locals`` of the interpreted frame.  The
generator is never started; the frame outlives it.

Stub code objects are cached per code object (on its
:class:`~pyinterp.interp.decode.DecodedCode`), by stop index and local names.
"""
import dis
import inspect
import sys
import types

from .decode import localsplus_names
from .frame import decoded_for
from ..opcodes.signals import NULL

# (bound once: the program may change ``sys``, ``types``...; pyinterp's code
# reads only its own bindings at run time)
_gettrace, _getprofile = sys.gettrace, sys.getprofile
_settrace, _setprofile = sys.settrace, sys.setprofile
_FunctionType, _CellType = types.FunctionType, types.CellType
_NOP = bytes((dis.opmap["NOP"], 0))
_RETURN_GENERATOR = bytes((dis.opmap["RETURN_GENERATOR"], 0))
_RESUME = dis.opmap["RESUME"]
_KEPT_FLAGS = inspect.CO_NESTED
_STUB_FLAGS = inspect.CO_OPTIMIZED | inspect.CO_NEWLOCALS | inspect.CO_GENERATOR


def _stub_code(code, stop, names):
    """``code`` as a generator function of ``names`` whose frame, once its
    generator is done, stands where unit ``stop`` of ``code`` is (see the
    module docstring); returns it and how many units the user's code is
    shifted by in it (0 unless ``stop`` is among its first units).

    Such a frame stands at its code's first ``RESUME`` (CPython makes an
    unstarted generator's dead frame look as if that ``RESUME`` ran), one
    unit past it on 3.13 (:data:`_PAST_RESUME`).  So: ``NOP``s, then
    ``RETURN_GENERATOR``, one more unit, then that ``RESUME``; from where
    the frame stands on, the user's own bytes, for C tracers that read the
    code at ``f_lasti`` (a ``RESUME``'s argument tells a call from a
    generator's resumption, the ``RESUME`` after a yield a yield from a
    return).  None of it runs.  When ``stop`` leaves no room for the three
    units before it, the user's code (and its line table, by an entry
    without location in front) moves up by the units missing.
    """
    original = code.co_code
    shift = max(0, 2 + _PAST_RESUME - stop)
    stand = stop + shift
    resume = stand - _PAST_RESUME
    raw = _NOP * (resume - 2) + _RETURN_GENERATOR + _NOP
    if _PAST_RESUME:
        raw += bytes((_RESUME, 0)) + original[2 * stop:]
    else:
        argument = original[2 * stop + 1] if 2 * stop + 1 < len(original) else 0
        raw += bytes((_RESUME, argument)) + original[2 * stop + 2:]
    raw += _NOP * max(0, (len(original) - len(raw)) // 2 + shift)
    table = code.co_linetable
    if shift:
        table = bytes((0x80 | (15 << 3) | (shift - 1),)) + table  # (15: no location)
    stub = code.replace(
        co_code=raw, co_linetable=table, co_argcount=len(names), co_posonlyargcount=0,
        co_kwonlyargcount=0, co_nlocals=len(names), co_varnames=tuple(names), co_cellvars=(),
        co_freevars=(), co_flags=(code.co_flags & _KEPT_FLAGS) | _STUB_FLAGS,
        co_stacksize=max(code.co_stacksize, 1), co_exceptiontable=b"")
    return stub, shift


_CLOSE_RUNS_THE_FRAME = sys.version_info < (3, 12)
"""3.11 closes a generator that never started by throwing ``GeneratorExit``
into its frame, which a trace function would see (3.12+ just marks it
done); so the stub's generator is closed at once, with tracing off."""


def _made(fn, values):
    """Call the stub function; its generator's frame, the generator done."""
    gen = fn(*values)
    frame = gen.gi_frame
    if _CLOSE_RUNS_THE_FRAME:
        trace, profile = _gettrace(), _getprofile()
        if trace is not None or profile is not None:
            _settrace(None)
            _setprofile(None)
        try:
            gen.close()
        finally:
            if trace is not None or profile is not None:
                _setprofile(profile)
                _settrace(trace)
    return frame


def _past_resume():
    """How far past its first ``RESUME`` a stub's frame stands, measured
    once: 0 on 3.11 and 3.12, 1 on 3.13."""  # noqa: D401
    def probe():
        return 0

    raw = _RETURN_GENERATOR + _NOP + bytes((_RESUME, 0)) + _NOP * 3
    stub = probe.__code__.replace(co_code=raw, co_flags=_STUB_FLAGS, co_stacksize=1,
                                  co_exceptiontable=b"")
    return _made(_FunctionType(stub, {}), ()).f_lasti // 2 - 2


_PAST_RESUME = _past_resume()


def stub_function(code, index_units, names, globals):
    """The stub generator function for ``code`` standing at ``index_units``
    (its code cached per code object), and the shift of the user's code in
    it, in bytes (see :func:`_stub_code`)."""
    decoded = decoded_for(code)
    stubs = decoded.stubs
    if stubs is None:
        stubs = decoded.stubs = {}
    key = (index_units, names)
    stub = stubs.get(key)
    if stub is None:
        stub = stubs[key] = _stub_code(code, index_units, names)
    return _FunctionType(stub[0], globals, code.co_name), 2 * stub[1]


def stub_frame(code, globals, offset, variables):
    """A real frame of ``code`` (with ``globals``) standing at byte offset
    ``offset``, whose locals are ``variables`` (a dict); and the shift to
    add to offsets of ``code`` to name the same instruction in that frame's
    code (``tb_lasti``: nonzero only for the first few instructions)."""
    names = tuple(name for name in variables if type(name) is str)
    values = [variables[name] for name in names]
    fn, shift = stub_function(code, max(offset, 0) // 2, names, globals)
    return _made(fn, values), shift


def bound_variables(frame):
    """The bound variables of an interpreted frame, as ``f_locals`` would
    show them (cells read through), without touching the frame's own
    ``locals()`` dict."""
    if frame.locals is not None:
        namespace = frame.locals
        return dict(namespace) if isinstance(namespace, dict) else {}
    code = frame.code
    cells = set(code.co_cellvars) | set(code.co_freevars)
    out = {}
    for name, value in zip(localsplus_names(code), frame.fast):
        if name in cells and type(value) is _CellType:
            try:
                value = value.cell_contents
            except ValueError:
                continue
        if value is not NULL:
            out[name] = value
    return out


def globals_of(frame):
    """A dict a function can have as globals (``exec`` with a dict subclass
    or a plain mapping as globals has no such dict)."""
    g = frame.globals
    return g if isinstance(g, dict) else {}
