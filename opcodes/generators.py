"""Generators, coroutines, ``yield from``/``await`` and ``async for``."""
import inspect
import types

from .fastpath import NATIVE_ITERATORS
from .registry import opcode
from .signals import GENERATOR, YIELD

_AWAITABLE_FLAGS = inspect.CO_COROUTINE | inspect.CO_ITERABLE_COROUTINE


@opcode("RETURN_GENERATOR")
def return_generator(vm, frame, ins):
    """``( -- )`` First instruction of a generator/coroutine body: stop here
    and hand the frame to a new generator object (the caller gets the
    generator; the body runs on the first ``send``).

    RefGraph: none (a generator created by the run; consuming it runs its
    body interpreted).
    """
    return GENERATOR


@opcode("YIELD_VALUE")
def yield_value(vm, frame, ins):
    """``(value -- sent)`` Suspend the frame, producing ``value``; on resumption
    the sent value (``None`` for ``next``) is pushed in its place.

    RefGraph: none (the yielded value flows to the consumer, as a return
    would).
    """
    frame.retval = frame.stack.pop()
    return YIELD


@opcode("SEND")
def send(vm, frame, ins):
    """``(receiver, value -- receiver, result)`` One step of ``yield from``/
    ``await``: ``receiver.send(value)`` (``next`` when value is None).  When
    the receiver returns, replace it by its return value and jump to the
    target: ``(receiver, value -- retval)``.  3.12+ push the return value
    above the receiver and jump to an ``END_SEND`` that pops the receiver;
    the decoded target is past it, so this handler does both.

    RefGraph: rules `next_value` (advancing an outside iterator breaks the
    graph), `load_attr` and `call` (``receiver.send``); delegating to a
    generator of the run runs its body interpreted.
    """
    stack = frame.stack
    value = stack.pop()
    receiver = stack[-1]
    try:
        if type(receiver) in NATIVE_ITERATORS:
            result = next(receiver) if value is None else receiver.send(value)
        elif value is None and vm.lookup(type(receiver), "__next__") is not vm.MISSING:
            result = vm.next_value(receiver)
        else:
            result = vm.call(vm.load_attr(receiver, "send"), (value,))
    except StopIteration as stop:
        stack[-1] = stop.value
        return ins.target
    stack.append(result)


@opcode("END_SEND", since=(3, 12))
def end_send(vm, frame, ins):
    """``(receiver, value -- value)`` 3.12+: drop the finished receiver of a
    ``yield from``/``await`` (reached after ``CLEANUP_THROW``; a ``SEND``
    that finishes jumps past it).

    RefGraph: none.
    """
    stack = frame.stack
    value = stack.pop()
    stack[-1] = value


@opcode("CLEANUP_THROW", since=(3, 12))
def cleanup_throw(vm, frame, ins):
    """``(receiver, last_sent, exc -- None, value)`` 3.12+: the handler of a
    ``yield from``/``await`` whose ``throw()``/``close()`` was forwarded to the
    receiver.  If the receiver finished (``StopIteration``), continue with
    its value; otherwise re-raise ``exc`` unchanged.

    RefGraph: none.
    """
    stack = frame.stack
    exc = stack[-1]
    if not issubclass(type(exc), StopIteration):
        stack.pop()
        try:
            vm.reraise_in_frame(frame, exc)
        finally:
            exc = None  # no reference cycle through this frame (see excstate.reraise)
    del stack[-3:]
    stack.append(None)
    stack.append(exc.value)


def _is_coroutine_like(obj):
    """A coroutine, or a generator made awaitable by ``@types.coroutine``."""
    tp = type(obj)
    return tp is types.CoroutineType or (
        tp is types.GeneratorType and obj.gi_code.co_flags & inspect.CO_ITERABLE_COROUTINE)


@opcode("GET_YIELD_FROM_ITER")
def get_yield_from_iter(vm, frame, ins):
    """``(iterable -- iterator)`` Prepare ``yield from``: a generator or
    coroutine is used as is (a coroutine only inside a coroutine), anything
    else goes through ``iter``.

    RefGraph: rule `get_iter`, as ``GET_ITER``.
    """
    stack = frame.stack
    value = stack[-1]
    if type(value) is types.CoroutineType:
        if not frame.code.co_flags & _AWAITABLE_FLAGS:
            raise TypeError("cannot 'yield from' a coroutine object in a non-coroutine generator")
    elif type(value) is not types.GeneratorType:
        stack[-1] = vm.get_iter(value)


_AWAIT_ERRORS = {
    1: "'async with' received an object from __aenter__ that does not implement __await__: %s",
    2: "'async with' received an object from __aexit__ that does not implement __await__: %s",
}


def get_awaitable_iter(vm, obj):
    """``_PyCoro_GetAwaitableIter``: the iterator that ``await obj`` drives."""
    if _is_coroutine_like(obj):
        return obj
    method = vm.lookup(type(obj), "__await__")
    if method is vm.MISSING:
        return None
    result = vm.call_special(method, obj)
    if _is_coroutine_like(result):
        raise TypeError("__await__() returned a coroutine")
    if vm.lookup(type(result), "__next__") is vm.MISSING:
        raise TypeError("__await__() returned non-iterator of type '%s'" % type(result).__name__)
    return result


@opcode("GET_AWAITABLE")
def get_awaitable(vm, frame, ins):
    """``(obj -- iterator)`` Prepare ``await obj``: a coroutine as is, else
    the iterator returned by its ``__await__``.  ``arg`` 1/2 mark the awaits
    of ``__aenter__``/``__aexit__`` results (for the error message).  A
    coroutine already being awaited is a ``RuntimeError``.

    RefGraph: rules `call` and `call_function` (through ``vm.call_special``)
    run ``__await__``.
    """
    stack = frame.stack
    obj = stack[-1]
    it = get_awaitable_iter(vm, obj)
    if it is None:
        template = _AWAIT_ERRORS.get(ins.arg, "object %s can't be used in 'await' expression")
        raise TypeError(template % type(obj).__name__)
    if type(it) is types.CoroutineType and it.cr_await is not None:
        raise RuntimeError("coroutine is being awaited already")
    stack[-1] = it


@opcode("GET_AITER")
def get_aiter(vm, frame, ins):
    """``(obj -- aiter)`` ``async for``: call ``__aiter__``; the result must
    have ``__anext__``.

    RefGraph: rules `call` and `call_function` (through ``vm.call_special``)
    run ``__aiter__``.
    """
    stack = frame.stack
    obj = stack[-1]
    method = vm.lookup(type(obj), "__aiter__")
    if method is vm.MISSING:
        raise TypeError("'async for' requires an object with __aiter__ method, got %s"
                        % type(obj).__name__)
    it = vm.call_special(method, obj)
    if vm.lookup(type(it), "__anext__") is vm.MISSING:
        raise TypeError("'async for' received an object from __aiter__ that does not "
                        "implement __anext__: %s" % type(it).__name__)
    stack[-1] = it


@opcode("GET_ANEXT")
def get_anext(vm, frame, ins):
    """``(aiter -- aiter, awaitable)`` ``async for`` step: push the awaitable
    of ``aiter.__anext__()``; a result that cannot be awaited is a
    ``TypeError`` whose cause is why (``__await__``'s own error included).

    RefGraph: rules `call` and `call_function` (through ``vm.call_special``)
    run ``__anext__`` and ``__await__``.
    """
    stack = frame.stack
    it = stack[-1]
    method = vm.lookup(type(it), "__anext__")
    if method is vm.MISSING:
        raise TypeError("'async for' requires an iterator with __anext__ method, got %s"
                        % type(it).__name__)
    awaitable = vm.call_special(method, it)
    if type(it) is not types.AsyncGeneratorType:
        cause = None
        try:
            result = get_awaitable_iter(vm, awaitable)
            if result is None:
                raise TypeError("object %s can't be used in 'await' expression"
                                % type(awaitable).__name__)
        except Exception as e:
            cause = e
        if cause is not None:
            # _PyErr_FormatFromCause: the error is the cause and the context.
            error = TypeError("'async for' received an invalid object from __anext__: %s"
                              % type(awaitable).__name__)
            error.__cause__ = error.__context__ = cause
            cause = None
            try:
                vm.reraise(error)
            finally:
                error = None
        awaitable = result
    stack.append(awaitable)


@opcode("END_ASYNC_FOR")
def end_async_for(vm, frame, ins):
    """``(aiter, exc -- )`` End of an ``async for``: ``StopAsyncIteration``
    ends the loop (pop the iterator); any other exception is re-raised.

    RefGraph: none.
    """
    stack = frame.stack
    exc = stack.pop()
    if isinstance(exc, StopAsyncIteration):
        stack.pop()
        return
    try:
        vm.reraise_in_frame(frame, exc)  # no new traceback entry, as RERAISE
    finally:
        exc = None  # no reference cycle through this frame (see excstate.reraise)
