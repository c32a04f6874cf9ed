"""``sys.settrace`` and ``sys.setprofile`` for interpreted frames.

A trace function set before ``interpret`` runs, or by the interpreted
program itself, sees the events of the program's frames as CPython would
deliver them: ``call`` (entering a frame, resuming a generator),
``line`` (per CPython's rules for the running version), ``return`` (also
on ``yield`` and when an exception leaves the frame, then with None),
``exception`` (an exception arriving in a frame) and ``opcode`` (with
``f_trace_opcodes``); a profile function sees ``call``, ``return`` and
``c_call``/``c_return``/``c_exception`` around calls of C functions.  The
functions receive the frames' :class:`~.frameview.FrameProxy` (one per
frame, live), and the local trace function is kept per frame as CPython's
``f_trace`` (a ``call`` event's result; a later event's result replaces it
unless None).

How: while an interpreted call runs, the host's own trace and profile
functions are off (they would see pyinterp's frames) and live here, per
thread (:data:`STATE`); ``sys.settrace``/``sys.gettrace``/
``sys.setprofile``/``sys.getprofile`` in the program read and write these
(lookasides).  When the outermost interpreted call of the thread ends, the
host gets them back.  While one is set, the interpreters of the thread run
*traced copies* of the instructions (``Interpreter.variant``, composed
with any variant already there), whose handlers deliver the events around
the real handlers, and a run loop that reports an exception leaving a frame.
When none is set, nothing of this runs: an interpreter runs exactly as
without this module (its ``variant`` and ``loop`` are its class's).
"""
import re
import sys
import threading
import types

from .. import config
from ..errors import PyinterpInternal
from ..opcodes.callshape import callable_at, peek_call
from ..opcodes.signals import RETURN, YIELD
from . import excstate
from .decode import LENT_HANDLERS
from .frame import decoded_for
from .frameview import OPCODE_EVENTS_ASKED, current_index, extra_of, proxy
from .stubframes import globals_of, stub_frame
from .model.dunders import needs_interpreter
from .model.lookup import lookup

_VERSION = sys.version_info[:2]
# (bound once: the program may change ``sys`` and ``types``; see ownbuiltins)
_gettrace, _getprofile = sys.gettrace, sys.getprofile
_settrace, _setprofile = sys.settrace, sys.setprofile
_MethodType, _BuiltinFunctionType = types.MethodType, types.BuiltinFunctionType
_MethodDescriptorType = types.MethodDescriptorType
LINE_STARTS_ONLY = _VERSION >= (3, 12)
"""3.12+ (``sys.settrace`` on ``sys.monitoring``): a ``line`` event only at
an instruction that starts a line (the first of its line in code order, a
jump's target or an exception handler) and whose line differs from the
previous instruction's (or follows ``RESUME``), or on a backward jump
within one line.  3.11: whenever the line differs from the previous
instruction's, or on any backward jump (except to a ``SEND``)."""
EXACT_C_TYPES = _VERSION < (3, 12)
"""3.11 reports ``c_call`` for exact builtin functions and methods only;
3.12+ for their subclasses too."""


OPCODES_NEED_NEW_SETTRACE = _VERSION == (3, 12)
"""3.12: ``f_trace_opcodes`` takes effect only for trace functions set
(``sys.settrace``) after some frame asked for opcode events."""


class TraceState(threading.local):
    """The thread's trace and profile functions while it runs interpreted
    code, and the interpreters running in it (innermost last)."""

    def __init__(self):
        self.trace = None
        self.profile = None
        self.vms = []
        self.host = None  # what the host had when the outermost call began
        self.requests = None  # sys.settrace/setprofile calls of a function running
        self.opcodes = not OPCODES_NEED_NEW_SETTRACE  # opcode events possible


STATE = TraceState()


# -- entering and leaving interpreted calls -------------------------------------
def enter(vm):
    """An interpreted call begins in this thread (``api.run``)."""
    state = STATE
    vms = state.vms
    if not vms and not config.trace_host:
        trace, profile = _gettrace(), _getprofile()
        # A hook installed from C with an object that cannot be called
        # (cProfile's profiler) is not a function to deliver events to: it
        # stays on the host, seeing pyinterp's frames (as before pyinterp
        # knew of tracing; cProfile then profiles the interpreter).
        if trace is not None and not callable(trace):
            trace = None
        if profile is not None and not callable(profile):
            profile = None
        if trace is not None or profile is not None:
            state.host = (trace, profile)
            state.trace, state.profile = trace, profile
            if OPCODES_NEED_NEW_SETTRACE:
                state.opcodes = OPCODE_EVENTS_ASKED[0]
            if trace is not None:
                _settrace(None)
            if profile is not None:
                _setprofile(None)
    vms.append(vm)
    if state.trace is not None or state.profile is not None:
        _switch_on(vm)


def leave(vm):
    """The matching end of :func:`enter`."""
    state = STATE
    state.vms.pop()
    _switch_off(vm)
    if not state.vms and _PATCHED:
        _unpatch()
    if not state.vms and (state.host is not None or state.trace is not None
                          or state.profile is not None):
        trace, profile = state.trace, state.profile
        state.trace = state.profile = state.host = None
        if profile is not None or _getprofile() is None:
            _setprofile(profile)
        if trace is not None or _gettrace() is None:
            _settrace(trace)


def _changed():
    """The program set or cleared a function: switch the thread's
    interpreters on or off, and the frames already running."""
    state = STATE
    on = state.trace is not None or state.profile is not None
    for vm in state.vms:
        (_switch_on if on else _switch_off)(vm)
    if on:
        _patch_running(state)
    else:
        _unpatch()


_PATCHED = LENT_HANDLERS
"""id(instruction) -> (instruction, its handler, its inline kind), for the
decoded instructions of frames that were running when a trace function
was set (:func:`_patch_running`; ``Instruction.copy`` reads it)."""


def _patch_running(state):
    """Frames already running when the program sets a trace function (a
    debugger's ``set_trace`` sets ``f_trace`` up the stack) run on in the
    run loop they are in, whose instructions are their code's decoded
    ones: those instruction objects get the traced handlers (and lose their
    inline kind) until tracing ends (:func:`_unpatch`).  Other threads
    running the same code pay for the handlers, but see no event (the
    events follow the thread's own functions)."""
    for vm in state.vms:
        frame = vm.top
        while frame is not None:
            decoded = decoded_for(frame.code)
            plain = decoded.instructions
            if frame.instructions is plain and plain and id(plain[0]) not in _PATCHED:
                for ins, traced in zip(plain, traced_copy(plain)):
                    _PATCHED[id(ins)] = (ins, ins.fn, ins.inline)
                    ins.fn, ins.inline = traced.fn, 0
            extra_of(frame).last = current_index(frame)
            frame = frame.back


def _unpatch():
    for ins, fn, inline in _PATCHED.values():
        ins.fn, ins.inline = fn, inline
    _PATCHED.clear()


def _switch_on(vm):
    if "_plain_variant" in vm.__dict__:
        return
    own = vm.__dict__.get("variant", _NOTHING)
    vm._plain_variant = own
    base = vm.variant
    if base is None:
        vm.variant = lambda code: traced_copy(decoded_for(code).instructions)
    else:
        vm.variant = lambda code: traced_copy(base(code))
    vm.loop = _MethodType(_traced_loop, vm)


def _switch_off(vm):
    own = vm.__dict__.pop("_plain_variant", None)
    if own is None:
        return
    if own is _NOTHING:
        del vm.variant
    else:
        vm.variant = own
    del vm.loop


_NOTHING = object()


# -- the program's calls -----------------------------------------------------------
def settrace(vm, args, kwargs):
    """``sys.settrace(fn)`` in interpreted code."""
    function = _one_argument(_settrace, args, kwargs)
    STATE.trace = function
    if OPCODES_NEED_NEW_SETTRACE:
        STATE.opcodes = OPCODE_EVENTS_ASKED[0]
    _changed()


def setprofile(vm, args, kwargs):
    """``sys.setprofile(fn)`` in interpreted code."""
    function = _one_argument(_setprofile, args, kwargs)
    STATE.profile = function
    _changed()


def gettrace(vm, args, kwargs):
    if args or kwargs:
        return _gettrace(*args, **(kwargs or {}))
    return STATE.trace


def getprofile(vm, args, kwargs):
    if args or kwargs:
        return _getprofile(*args, **(kwargs or {}))
    return STATE.profile


def _one_argument(native, args, kwargs):
    if kwargs or len(args) != 1:
        native(*args, **(kwargs or {}))  # CPython's own TypeError
    return args[0]


# -- events --------------------------------------------------------------------------
_PYTHON_CALLABLES = frozenset({types.FunctionType, types.MethodType})


def real_frame(frame):
    """A real frame standing for ``frame`` at its current instruction, for
    a trace function written in C (coverage's ``CTracer`` accepts nothing
    else): code, file, line and globals are the frame's; it is made anew
    for each event (its line is fixed when it is made)."""
    offset = frame.instructions[current_index(frame)].offset
    return stub_frame(frame.code, globals_of(frame), offset, {})[0]


def _dispatch(function, frame, event, arg, profiling=False):
    """Call a trace or profile ``function`` as CPython's trampoline does:
    with tracing off inside it; if it raises, tracing (or profiling) is
    turned off and the exception propagates into the program."""
    state = STATE
    saved = state.trace, state.profile
    state.trace = state.profile = None
    error = None
    host = None
    view = proxy(frame) if type(function) in _PYTHON_CALLABLES else real_frame(frame)
    before = _gettrace(), _getprofile()  # (None, unless a C hook was left there)
    requests = state.requests = []
    sys.settrace, sys.setprofile = _requested_settrace, _requested_setprofile
    try:
        # If the function set the host's own trace or profile function
        # (natively: a debugger's ``sys.settrace``, coverage's C tracer
        # installing itself the C way), it is read and the host's turned
        # off in the same expression, on one line: a C tracer gets no
        # event from pyinterp's own code in between.
        if before[0] is None and before[1] is None:
            host = (function(view, event, arg), _gettrace(), _getprofile(), _settrace(None),
                    _setprofile(None))
        else:
            host = (function(view, event, arg), _gettrace(), _getprofile())
    except BaseException as e:  # noqa: BLE001 - re-raised below
        error = e
    sys.settrace, sys.setprofile = _settrace, _setprofile
    state.requests = None
    view = None
    state.trace, state.profile = saved
    if host is not None and (host[1] is not before[0] or host[2] is not before[1]):
        _adopt(host[1] if host[1] is not before[0] else None,
               host[2] if host[2] is not before[1] else None, before)
    if requests:
        for which, value in requests:  # (in the order it made them)
            setattr(state, which, value)
        _changed()
    if error is None:
        return host[0]
    if before[0] is None and before[1] is None:
        _settrace(None)
        _setprofile(None)
    if profiling:
        state.profile = None
    else:
        state.trace = None
        extra_of(frame).f_trace = None
    _changed()
    try:
        excstate.reraise(error)
    finally:
        error = None


def _requested_settrace(function):
    """``sys.settrace`` while a trace or profile function runs (natively):
    in this thread it sets the program's trace function (pdb's ``continue``
    clears it from its dispatch); another thread's call goes through."""
    state = STATE
    if state.requests is None:
        return _settrace(function)
    state.requests.append(("trace", function))


def _requested_setprofile(function):
    """``sys.setprofile``, as :func:`_requested_settrace`."""
    state = STATE
    if state.requests is None:
        return _setprofile(function)
    state.requests.append(("profile", function))


def _adopt(trace, profile, before):
    """The trace or profile function, running natively, set the host's own
    (see :func:`_dispatch`): it is the program's now, and the host's goes
    back to what it was."""
    state = STATE
    if trace is not None and callable(trace):
        state.trace = trace
        if _gettrace() is not before[0] and before[0] is None:
            _settrace(None)
    if profile is not None and callable(profile):
        state.profile = profile
        if _getprofile() is not before[1] and before[1] is None:
            _setprofile(None)
    _changed()


def _trace_event(frame, event, arg):
    """Deliver ``event`` to the frame's local trace function."""
    if STATE.trace is None:
        return
    extra = extra_of(frame)
    local = extra.f_trace
    if local is None:
        return
    result = _dispatch(local, frame, event, arg)
    if result is not None:
        extra.f_trace = result


THROW_IN_PROFILE_CALL = _VERSION == (3, 12)
"""3.12 (only): a generator resumed by ``throw()`` (or ``close()``) shows the
exception as the profile function's ``call`` argument."""


def _call_event(frame, thrown=None):
    state = STATE
    trace, profile = state.trace, state.profile
    if profile is not None:
        _dispatch(profile, frame, "call", thrown if THROW_IN_PROFILE_CALL else None, True)
    if trace is not None:
        result = _dispatch(trace, frame, "call", None)
        if result is not None:
            extra_of(frame).f_trace = result


def _return_event(frame, value):
    profile = STATE.profile
    _trace_event(frame, "return", value)
    if profile is not None:
        _dispatch(profile, frame, "return", value, True)


def _exception_event(vm, frame, exc):
    if STATE.trace is not None and extra_of(frame).f_trace is not None:
        _trace_event(frame, "exception", (type(exc), exc, vm.traceback_view(exc.__traceback__)))


# -- traced instructions -----------------------------------------------------------------
_copies = {}
"""id(instruction tuple) -> (that tuple, its traced copy)."""


def traced_copy(instructions):
    """The traced copy of an instruction tuple (made once per tuple)."""
    entry = _copies.get(id(instructions))
    if entry is None or entry[0] is not instructions:
        entry = _copies[id(instructions)] = (instructions, _traced(instructions))
    return entry[1]


def _traced(instructions):
    starts = _line_starts(instructions)
    first = next((i for i, ins in enumerate(instructions) if ins.opname == "RESUME"), 0)
    out = []
    for ins in instructions:
        copy = ins.copy()
        copy.inline = 0
        copy.fn = _step_of(copy.fn, ins, first, ins.index in starts, instructions)
        out.append(copy)
    return tuple(out)


_JUMPS_AND_EXITS = ("FOR_ITER", "SEND")


def _line_starts(instructions):
    """3.12+'s line-starting instructions: the first of each line in code
    order, jump targets and exception handlers (with a line)."""
    starts = set()
    previous = None
    for ins in instructions:
        if ins.opname in ("END_FOR", "END_SEND", "END_ASYNC_FOR", "RESUME"):
            continue
        if ins.line is not None and ins.line != previous:
            starts.add(ins.index)
        previous = ins.line
    for ins in instructions:
        for target in (ins.target, ins.exc_target):
            if target is not None and target < len(instructions) \
                    and instructions[target].line is not None:
                starts.add(target)
    return starts


_CALLS = {"CALL": 0, "CALL_KW": 1}


def _step_of(handler, ins, first, starts_line, instructions):
    resume = ins.opname == "RESUME"
    traceable = ins.index > first
    call_depth = _CALLS.get(ins.opname)
    call_ex = ins.opname == "CALL_FUNCTION_EX"
    iterates = ins.opname in ("FOR_ITER", "SEND")

    def step(vm, frame, ins):
        state = STATE
        if resume:
            extra_of(frame).last = ins.index
            _call_event(frame)
        elif traceable and state.trace is not None:
            _line_events(frame, ins, instructions, starts_line, first)
        profile = state.profile
        if profile is not None and (call_depth is not None or call_ex):
            target = _c_function_called(frame.stack, ins, call_depth)
            if target is not None:
                return _profiled_call(vm, frame, ins, handler, target)
        if iterates:
            it = frame.stack[-1 - (ins.opname == "SEND")]
        try:
            result = handler(vm, frame, ins)
        except BaseException as e:  # noqa: BLE001 - reported, then re-raised
            error = e
        else:
            if result is RETURN or result is YIELD:
                _return_event(frame, frame.retval)
            elif iterates and result == ins.target and state.trace is not None:
                _stop_iteration_event(vm, frame, ins, it)
            return result
        try:
            _arrived(vm, frame, error)
        finally:
            error = None

    return step


def _stop_iteration_event(vm, frame, ins, it):
    """A ``for`` loop or ``yield from`` ended: CPython reports an
    ``exception`` event when the iterator raised ``StopIteration`` (a
    Python ``__next__``, or a generator returning a value to ``yield
    from``), not when a C iterator just ran out."""
    value = None
    if ins.opname == "SEND":
        value = frame.stack[-1]
        raised = value is not None or needs_interpreter(lookup(type(it), "__next__"))
    else:
        raised = needs_interpreter(lookup(type(it), "__next__"))
    if raised:
        stop = StopIteration(value) if value is not None else StopIteration()
        _exception_event(vm, frame, stop)


def _arrived(vm, frame, error):
    """``error`` arrived in ``frame`` (raised by its instruction): the
    ``exception`` event (not for a re-raise), then on its way."""
    rethrown = vm.rethrown
    if not isinstance(error, PyinterpInternal) and not (
            rethrown is not None and rethrown[0] is error and rethrown[2] is frame):
        _exception_event(vm, frame, error)
    try:
        excstate.reraise(error)
    finally:
        error = rethrown = None


def _line_events(frame, ins, instructions, starts_line, first):
    extra = extra_of(frame)
    last = extra.last
    extra.last = ins.index
    if extra.f_trace is None:
        return
    line = ins.line
    if line is not None and extra.f_trace_lines:
        before = instructions[last] if 0 <= last < len(instructions) else None
        # (3.11: coming from the first RESUME counts as coming from no line)
        before_line = before.line if before is not None and (
            LINE_STARTS_ONLY or last > first) else None
        backward = before is not None and ins.index <= last
        if LINE_STARTS_ONLY:
            # (only JUMP_BACKWARD reports a jump; a yield from's loop does not)
            fire = (starts_line and (line != before_line or before is None
                                     or before.opname == "RESUME")) \
                or (backward and line == before_line and before.opname == "JUMP_BACKWARD")
        else:
            fire = line != before_line or (backward and ins.opname != "SEND")
        if fire:
            _trace_event(frame, "line", None)
    if extra.f_trace_opcodes and STATE.opcodes:
        _trace_event(frame, "opcode", None)


def _c_function_called(stack, ins, depth):
    """The C function a call instruction is about to call, as CPython's
    profiler names it (a method descriptor bound to its ``self``), or None."""
    if depth is None:  # CALL_FUNCTION_EX: [callable slots, args[, kwargs]]
        fn = callable_at(stack, 2 + (ins.arg & 1))
        args = stack[-1 - (ins.arg & 1)]
    else:
        fn, args = peek_call(stack[:len(stack) - depth] if depth else stack, ins.arg)
    tp = type(fn)
    if tp in _C_FUNCTIONS or not EXACT_C_TYPES and isinstance(fn, _BuiltinFunctionType):
        return fn
    if tp is _MethodDescriptorType and len(args):
        try:
            return fn.__get__(args[0], type(args[0]))
        except TypeError:
            return None
    return None


_C_FUNCTIONS = frozenset({types.BuiltinFunctionType, type(re.compile("").sub)})
"""``builtin_function_or_method`` and ``builtin_method`` (``Pattern.sub``)."""


def _profiled_call(vm, frame, ins, handler, target):
    profile = STATE.profile
    _dispatch(profile, frame, "c_call", target, True)
    try:
        result = handler(vm, frame, ins)
    except BaseException as e:  # noqa: BLE001 - reported, then re-raised
        error = e
    else:
        if STATE.profile is not None:
            _dispatch(STATE.profile, frame, "c_return", target, True)
        return result
    try:
        if STATE.profile is not None:
            _dispatch(STATE.profile, frame, "c_exception", target, True)
        _arrived(vm, frame, error)
    finally:
        error = None


# -- the traced run loop ---------------------------------------------------------------
def _traced_loop(vm, frame, thrown):
    """``Interpreter.loop`` with the events no instruction sees: a
    generator resumed by ``throw()`` (``call``, then ``exception``), and an
    exception leaving the frame (``return`` with None)."""
    if thrown is not None:
        _call_event(frame, thrown)
        _exception_event(vm, frame, thrown)
    try:
        return type(vm).loop(vm, frame, thrown)
    except BaseException as e:  # noqa: BLE001 - reported, then re-raised
        error = e
    finally:
        thrown = None
    try:
        if not isinstance(error, PyinterpInternal):
            _return_event(frame, None)
        excstate.reraise(error)
    finally:
        error = None
