"""Generators, coroutines and async generators of interpreted code.

An interpreted generator is a *real* generator (or coroutine, or async
generator) of the host, whose body resumes the interpreter's frame.  So it
has exactly the native type and protocol: ``send``/``throw``/``close``,
``gi_running`` errors, StopIteration-to-RuntimeError conversion (PEP 479),
``asyncio`` compatibility, and the per-generator "exception being handled"
state that CPython keeps, which :mod:`pyinterp.excstate` mirrors.

At a ``yield`` the interpreter returns the YIELD signal; the driver yields
the value to whoever resumed the host generator, and on resumption pushes
the sent value (or raises the thrown exception at the ``yield``).

``yield from``/``await`` delegation (``SEND``) is done by the interpreted
bytecode itself; only ``throw()`` and ``close()`` while suspended inside a
delegation need help, because CPython forwards them to the sub-iterator
before the frame sees them (see :func:`_throw_into`).
"""
import inspect
import sys
import types

from . import excstate
from .decode import CLEANUP_THROW_IN_BYTECODE
from .frame import may_die_suspended, release_locals
from .tracebacks import user_facing
from ..opcodes.signals import GENERATOR, RETURN, YIELD

CO_GENERATOR = inspect.CO_GENERATOR
CO_COROUTINE = inspect.CO_COROUTINE
CO_ASYNC_GENERATOR = inspect.CO_ASYNC_GENERATOR
CO_ITERABLE_COROUTINE = inspect.CO_ITERABLE_COROUTINE



class AsyncGenWrapped:
    """``ASYNC_GEN_WRAP``'s marker: this value is a real async-gen yield,
    not an ``await`` passing a value through to the event loop."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def start_generator(vm, frame):
    """Run the frame's prologue up to ``RETURN_GENERATOR`` and wrap it."""
    signal = vm.resume(frame, None)
    frame.back = None  # see _step
    may_die_suspended(frame)  # (dropped while suspended)
    assert signal is GENERATOR, signal
    flags = frame.code.co_flags
    if flags & CO_COROUTINE:
        gen = _coroutine_driver(vm, frame)
    elif flags & CO_ASYNC_GENERATOR:
        gen = _async_generator_driver(vm, frame)
    elif flags & CO_ITERABLE_COROUTINE:
        gen = _iterable_coroutine_driver(vm, frame)
    else:
        gen = _generator_driver(vm, frame)
    func = frame.func  # CPython names a generator after its function
    gen.__name__ = func.__name__ if func is not None else frame.code.co_name
    gen.__qualname__ = func.__qualname__ if func is not None else frame.code.co_qualname
    return gen


def _step(vm, frame, sent, thrown):
    """Resume ``frame``; return (finished, value)."""
    try:
        if thrown is None:
            frame.stack.append(sent)
            signal = vm.resume(frame, None)
        else:
            signal = _throw_into(vm, frame, thrown)
    finally:
        # A suspended generator has no caller (CPython unlinks
        # frame->previous).  Keeping the resumer's frame would make a cycle
        # (resumer -> generator -> frame -> resumer) that only the cyclic GC
        # breaks, delaying the generator's finalization (``finally``
        # blocks, context managers' exits) past the point where CPython
        # runs it.
        frame.back = None
        thrown = None  # the traceback holds this frame: no cycle through it
    if signal is RETURN:
        release_locals(frame)
        return True, frame.retval
    # A yielded value belongs to the consumer: neither the frame nor the
    # driver keeps it once resumed, so it dies when the consumer drops it
    # (all(C() for ...) finalizes each C before the next is made).
    value, frame.retval = frame.retval, None
    return False, value


def _leaving(vm, exc):
    """An exception leaves the generator: when no interpreted frame of its
    interpreter waits for it (native code resumed the generator), it leaves
    for the user, with the user's frames in its traceback."""
    if vm.top is None:
        user_facing(exc)


def _generator_driver(vm, frame):
    sent = thrown = None
    while True:
        try:
            finished, value = _step(vm, frame, sent, thrown)
        except BaseException as e:
            _leaving(vm, e)
            raise  # (bare: no traceback entry for this driver)
        finally:
            thrown = None  # no cycle through the traceback (see _step)
        if finished:
            return value
        try:
            sent = yield value
            thrown = None
        except BaseException as e:
            thrown = e
        value = None  # (see _step)


# A generator driver whose code carries CO_ITERABLE_COROUTINE, for generator
# functions decorated with @types.coroutine (they may be awaited).
_iterable_coroutine_driver = types.FunctionType(
    _generator_driver.__code__.replace(
        co_flags=_generator_driver.__code__.co_flags | CO_ITERABLE_COROUTINE),
    globals(), "_iterable_coroutine_driver")


@types.coroutine
def _suspend(value):
    """Pass ``value`` up to whoever drives the coroutine; return what it sends."""
    return (yield value)


async def _coroutine_driver(vm, frame):
    sent = thrown = None
    while True:
        try:
            finished, value = _step(vm, frame, sent, thrown)
        except BaseException as e:
            _leaving(vm, e)
            raise  # (bare: no traceback entry for this driver)
        finally:
            thrown = None  # no cycle through the traceback (see _step)
        if finished:
            return value
        try:
            sent = await _suspend(value)
            thrown = None
        except BaseException as e:
            thrown = e
        value = None  # (see _step)


async def _async_generator_driver(vm, frame):
    sent = thrown = None
    while True:
        try:
            finished, value = _step(vm, frame, sent, thrown)
        except BaseException as e:
            _leaving(vm, e)
            raise  # (bare: no traceback entry for this driver)
        finally:
            thrown = None  # no cycle through the traceback (see _step)
        if finished:
            return
        try:
            if type(value) is AsyncGenWrapped:
                sent = yield value.value
            else:
                sent = await _suspend(value)
            thrown = None
        except BaseException as e:
            thrown = e
        value = None  # (see _step)


def _delegating_to(frame):
    """The sub-iterator if ``frame`` is suspended inside ``yield from``/``await``.

    Such a yield is followed by a ``RESUME`` whose argument says "after
    ``yield from``/``await``" (``ins.after_yield_from``, decoded from ``arg & 3 >= 2`` on
    every version; 3.13's CPython reads the same fact from the frame state
    its ``YIELD_VALUE`` set), and the sub-iterator is on top of the stack
    (CPython's ``_PyGen_yf``).
    """
    if frame.pc < len(frame.instructions):
        nxt = frame.instructions[frame.pc]
        if nxt.opname == "RESUME" and nxt.after_yield_from and frame.stack:
            return frame.stack[-1]
    return None


def _throw_into(vm, frame, exc):
    """``gen.throw(exc)``/``gen.close()`` for a suspended interpreted frame."""
    try:
        return _forward_throw(vm, frame, exc)
    finally:
        exc = None  # the traceback holds this frame: no cycle through it


def _forward_throw(vm, frame, exc):
    sub = _delegating_to(frame)
    if sub is not None:
        if isinstance(exc, GeneratorExit):
            close = getattr(sub, "close", None)
            if close is not None:
                try:
                    if driver_vm(sub) is vm:
                        close()  # (its driver runs its frame interpreted)
                    else:
                        vm.call(close, ())
                except BaseException as e:
                    exc = e
        else:
            throw = getattr(sub, "throw", None)
            if throw is not None:
                # CPython forwards throw()'s own arguments; the driver only
                # sees the normalized exception, which is what the usual
                # gen.throw(exc) passes.
                try:
                    frame.retval = _throw_sub(vm, frame, sub, throw, exc)
                    return YIELD
                except StopIteration as stop:
                    if CLEANUP_THROW_IN_BYTECODE:
                        error = stop
                    else:
                        result = stop.value
                        error = None
                except BaseException as e:
                    error = e
                if error is not None:
                    try:
                        return _raise_into(vm, frame, error)
                    finally:
                        exc = error = None  # no cycle through this frame (excstate.reraise)
                # 3.11: the sub-iterator finished: continue after the SEND
                # loop with its return value, as if SEND had seen
                # StopIteration.  (3.12+ raise the StopIteration into the
                # frame, where CLEANUP_THROW does that.)
                frame.stack[-1] = result
                frame.pc = _send_exit(frame)
                return vm.resume(frame, None)
    if CLOSE_SKIPS_PLAIN_YIELDS and type(exc) is GeneratorExit and _at_plain_yield(frame):
        # 3.13's gen_close: nothing could catch it, so the frame is just
        # done (no code runs, a trace function sees nothing).
        del frame.stack[:]
        release_locals(frame)
        try:
            excstate.reraise(exc)  # (the driver ends; close() is content)
        finally:
            exc = None
    try:
        return _raise_into(vm, frame, exc)
    finally:
        exc = None


_DRIVER_CODES = frozenset({_generator_driver.__code__, _coroutine_driver.__code__,
                           _iterable_coroutine_driver.__code__})


CLOSE_SKIPS_PLAIN_YIELDS = sys.version_info >= (3, 13)
"""3.13: ``close()`` of a generator suspended at a ``yield`` outside any
``try``/``with`` (its ``RESUME`` says exception depth 1) finishes it
without running its frame."""


def _at_plain_yield(frame):
    if frame.pc < len(frame.instructions):
        nxt = frame.instructions[frame.pc]
        return nxt.opname == "RESUME" and bool(nxt.arg & 4)
    return False


def driver_vm(obj):
    """The interpreter that runs ``obj``'s frame when ``obj`` is the driver
    of an interpreted generator or coroutine (made by
    :func:`start_generator`) and has not finished, else None.  Its
    ``send``/``throw``/``close`` run that frame in that interpreter: for it
    they are not native code."""
    code = getattr(obj, "gi_code", None) or getattr(obj, "cr_code", None)
    if code not in _DRIVER_CODES:
        return None
    host = getattr(obj, "gi_frame", None) or getattr(obj, "cr_frame", None)
    return host.f_locals.get("vm") if host is not None else None


def _throw_sub(vm, frame, sub, throw, exc):
    """``sub.throw(exc)`` for a frame delegating to ``sub``: as CPython's
    ``_gen_throw``, a generator or coroutine runs with the delegating frame
    as its caller (its ``f_back``); another iterator's ``throw`` is called
    as is."""
    if type(sub) is not types.GeneratorType and type(sub) is not types.CoroutineType:
        return vm.call(throw, (exc,))
    frame.back = vm.top
    vm.top = frame
    try:
        return throw(exc) if driver_vm(sub) is vm else vm.call(throw, (exc,))
    finally:
        vm.top = frame.back
        frame.back = None  # (suspended again: see _step)
        exc = None


def _raise_into(vm, frame, exc):
    """Resume ``frame`` by raising ``exc`` at its ``yield``.

    As CPython's ``gen_send_ex2``, push the sent value (None) first: the
    exception table's depth for the ``yield`` of a ``yield from``/``await``
    keeps it, as ``CLEANUP_THROW``'s ``last_sent`` operand (3.12+).
    """
    frame.stack.append(None)
    try:
        return vm.resume(frame, exc)
    finally:
        exc = None  # the traceback holds this frame: no cycle through it


def _send_exit(frame):
    """Index of the instruction after the ``SEND`` loop we are suspended in."""
    jump_back = frame.instructions[frame.pc + 1]
    send = frame.instructions[jump_back.target]
    return send.target
