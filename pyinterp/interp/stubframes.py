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
import types

from .decode import localsplus_names
from .frame import decoded_for
from ..opcodes.signals import NULL

_NOP = bytes((dis.opmap["NOP"], 0))
_ENTRY = bytes((dis.opmap["RETURN_GENERATOR"], 0, dis.opmap["POP_TOP"], 0,
                dis.opmap["RESUME"], 0))
_KEPT_FLAGS = inspect.CO_NESTED
_STUB_FLAGS = inspect.CO_OPTIMIZED | inspect.CO_NEWLOCALS | inspect.CO_GENERATOR


def _stub_code(code, stop, names):
    """``code`` as a generator function of ``names`` whose frame, when made,
    stops at code unit ``stop`` (see the module docstring)."""
    entry = max(0, stop - _STOP_DELTA)
    length = max(len(code.co_code) // 2, entry + 3)
    raw = _NOP * entry + _ENTRY + _NOP * (length - entry - 3)
    return code.replace(
        co_code=raw, co_argcount=len(names), co_posonlyargcount=0, co_kwonlyargcount=0,
        co_nlocals=len(names), co_varnames=tuple(names), co_cellvars=(), co_freevars=(),
        co_flags=(code.co_flags & _KEPT_FLAGS) | _STUB_FLAGS,
        co_stacksize=max(code.co_stacksize, 1), co_exceptiontable=b"")


def _stop_delta():
    """How far past ``RETURN_GENERATOR`` a new generator's frame stands
    (``f_lasti`` in code units: 2 on 3.11 and 3.12, where it names the
    ``RESUME``; the layout differs per version), measured once."""
    def probe():
        return 0

    global _STOP_DELTA
    _STOP_DELTA = 0
    frame = types.FunctionType(_stub_code(probe.__code__, 0, ()), {})().gi_frame
    return frame.f_lasti // 2


_STOP_DELTA = _stop_delta()


def stub_function(code, index_units, names, globals):
    """The stub generator function for ``code`` stopping at ``index_units``
    (cached per code object)."""
    decoded = decoded_for(code)
    stubs = decoded.stubs
    if stubs is None:
        stubs = decoded.stubs = {}
    key = (index_units, names)
    stub = stubs.get(key)
    if stub is None:
        stub = stubs[key] = _stub_code(code, index_units, names)
    return types.FunctionType(stub, globals, code.co_name)


def stub_frame(code, globals, offset, variables):
    """A real frame of ``code`` (with ``globals``) at byte offset ``offset``
    whose locals are ``variables`` (a dict)."""
    names = tuple(name for name in variables if type(name) is str)
    values = [variables[name] for name in names]
    fn = stub_function(code, max(offset, 0) // 2, names, globals)
    return fn(*values).gi_frame


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
        if name in cells and type(value) is types.CellType:
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
