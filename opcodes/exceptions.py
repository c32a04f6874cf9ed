"""Raising and handling exceptions; ``with`` blocks.

The interpreted program's "exception being handled" lives in the real
thread state (``vm.set_handled``), exactly where CPython keeps it, so that
implicit chaining and ``sys.exc_info()`` behave natively.
"""
import bisect
import sys

from .registry import opcode


@opcode("PUSH_EXC_INFO")
def push_exc_info(vm, frame, ins):
    """``(exc -- prev_exc, exc)`` Enter a handler: save the exception being
    handled (or None) below ``exc`` and make ``exc`` the one being handled.

    RefGraph: none (exceptions are not captured values).
    """
    stack = frame.stack
    exc = stack[-1]
    stack[-1] = vm.get_handled()
    stack.append(exc)
    vm.set_handled(exc)


@opcode("POP_EXCEPT")
def pop_except(vm, frame, ins):
    """``(prev_exc -- )`` Leave a handler: restore the saved exception being
    handled.

    RefGraph: none.
    """
    vm.set_handled(frame.stack.pop())


@opcode("RERAISE")
def reraise(vm, frame, ins):
    """``([lasti,] ..., exc -- )`` Re-raise ``exc`` without chaining and
    without a new traceback entry; if ``arg`` is non-zero, ``lasti`` (``arg``
    entries down) restores the frame's instruction (``f_lasti``, hence
    ``f_lineno``) to the original raise's.

    RefGraph: none.
    """
    exc = frame.stack.pop()
    lasti = None
    if ins.arg:
        # (pushed as an offset in code units; frames count instructions)
        lasti = bisect.bisect_left(frame.instructions, frame.stack[-ins.arg] * 2,
                                   key=_offset)
    vm.reraise_in_frame(frame, exc, lasti)


def _offset(ins):
    return ins.offset


def _instantiate(vm, value):
    if isinstance(value, type) and BaseException in value.__mro__:
        instance = vm.call(value, ())
        if not isinstance(instance, BaseException):
            raise TypeError("calling %r should have returned an instance of "
                            "BaseException, not %r" % (value, type(instance)))
        return instance
    return value


@opcode("RAISE_VARARGS")
def raise_varargs(vm, frame, ins):
    """``([exc[, cause]] -- )`` ``raise`` (arg 0: re-raise the exception being
    handled), ``raise exc`` (arg 1) or ``raise exc from cause`` (arg 2).

    An exception class is instantiated (its Python ``__init__``
    interpreted).  The new exception is chained implicitly to the one being
    handled, as in CPython.
    RefGraph: rule `call` instantiates an exception class.  An exception that
    leaves the traced function propagates to its caller; nothing is cached
    from that run.
    """
    stack = frame.stack
    n = ins.arg
    if n == 0:
        exc = vm.current_exception()
        if exc is None:
            raise RuntimeError("No active exception to reraise")
        vm.reraise_in_frame(frame, exc)
    cause = stack.pop() if n == 2 else None
    exc = _instantiate(vm, stack.pop())
    if not isinstance(exc, BaseException):
        raise TypeError("exceptions must derive from BaseException")
    try:
        if n == 2:
            if cause is not None:
                cause = _instantiate(vm, cause)
                if not isinstance(cause, BaseException):
                    raise TypeError("exception causes must derive from BaseException")
            raise exc from cause
        raise exc
    finally:
        exc = cause = None


def _is_exception_class(value):
    return isinstance(value, type) and BaseException in value.__mro__


def _check_catchable(match_type):
    types = match_type if type(match_type) is tuple else (match_type,)
    for t in types:
        if not _is_exception_class(t):
            raise TypeError("catching classes that do not inherit from "
                            "BaseException is not allowed")
    return types


def exception_matches(exc, match_type):
    """``PyErr_GivenExceptionMatches``: a real subclass test (no ABC hooks)."""
    mro = type(exc).__mro__
    if type(match_type) is tuple:
        return any(exception_matches(exc, t) for t in match_type)
    return match_type in mro


@opcode("CHECK_EXC_MATCH")
def check_exc_match(vm, frame, ins):
    """``(exc, type -- exc, bool)`` Does ``exc`` match the ``except`` clause's
    type (or tuple of types)?  A non-exception type is a ``TypeError``.

    RefGraph: none.
    """
    stack = frame.stack
    match_type = stack.pop()
    _check_catchable(match_type)
    stack.append(exception_matches(stack[-1], match_type))


_NO_MATCH_KEEPS_SPLIT_REST = sys.version_info >= (3, 12)
"""3.11's ``CHECK_EG_MATCH`` drops ``split``'s rest when nothing matched."""


@opcode("CHECK_EG_MATCH")
def check_eg_match(vm, frame, ins):
    """``(exc, type -- rest, match)`` ``except*``: split ``exc`` into the part
    matching ``type`` and the rest.  A bare matching exception is wrapped in
    an ``ExceptionGroup("", [exc])``.  With a match, ``match`` becomes the
    exception being handled.  With none, the stack becomes ``(exc, None)``
    on 3.11; 3.12+ keep what ``split`` gave as the rest, which is a derived
    copy of the group (``__suppress_context__`` set, as ``derive`` copies
    set the cause) when ``exc`` is a group.

    RefGraph: rules `load_attr` and `call` run the group's ``split``.
    """
    stack = frame.stack
    match_type = stack.pop()
    for t in _check_catchable(match_type):
        if BaseExceptionGroup in t.__mro__:
            raise TypeError("catching ExceptionGroup with except* is not allowed. "
                            "Use except instead.")
    exc = stack[-1]
    if exc is None:
        match = rest = None
    elif exception_matches(exc, match_type):
        if isinstance(exc, BaseExceptionGroup):
            match = exc
        else:
            match = BaseExceptionGroup("", (exc,))
            match.__traceback__ = exc.__traceback__
        rest = None
    elif isinstance(exc, BaseExceptionGroup):
        match, rest = vm.call(vm.load_attr(exc, "split"), (match_type,))
    else:
        match, rest = None, exc
    if match is None:
        if _NO_MATCH_KEEPS_SPLIT_REST:
            stack[-1] = rest
        stack.append(None)
        return
    stack[-1] = rest
    stack.append(match)
    vm.set_handled(match)


@opcode("LOAD_ASSERTION_ERROR")
def load_assertion_error(vm, frame, ins):
    """``( -- AssertionError)`` Push the builtin ``AssertionError`` (not a
    global lookup, so ``assert`` cannot be fooled by shadowing).

    RefGraph: none.
    """
    frame.stack.append(AssertionError)


def _bound_special(vm, mgr, name, message):
    descr = vm.lookup(type(mgr), name)
    if descr is vm.MISSING:
        raise TypeError(message % type(mgr).__name__)
    return vm.bind(descr, mgr, type(mgr))


@opcode("BEFORE_WITH")
def before_with(vm, frame, ins):
    """``(mgr -- exit, result)`` Start a ``with``: look up ``__enter__`` and
    ``__exit__`` on the type, push the bound ``__exit__``, call
    ``__enter__`` and push its result.

    RefGraph: rules `call` and `call_function` run ``__enter__``:
    ``torch.no_grad()`` and ``autocast`` managers become grad-mode and
    autocast nodes in the graph (``Capture.call_torch``); other managers are
    interpreted like any call.
    """
    stack = frame.stack
    mgr = stack[-1]
    enter = _bound_special(vm, mgr, "__enter__",
                           "'%s' object does not support the context manager protocol")
    exit_ = _bound_special(
        vm, mgr, "__exit__",
        "'%s' object does not support the context manager protocol (missed __exit__ method)")
    stack[-1] = exit_
    stack.append(vm.call(enter, ()))


@opcode("BEFORE_ASYNC_WITH")
def before_async_with(vm, frame, ins):
    """``(mgr -- aexit, awaitable)`` Start an ``async with``: push the bound
    ``__aexit__``, call ``__aenter__`` and push its (awaitable) result.

    RefGraph: as ``BEFORE_WITH``: rules `call` and `call_function`.
    """
    stack = frame.stack
    mgr = stack[-1]
    enter = _bound_special(
        vm, mgr, "__aenter__",
        "'%s' object does not support the asynchronous context manager protocol")
    exit_ = _bound_special(
        vm, mgr, "__aexit__",
        "'%s' object does not support the asynchronous context manager protocol "
        "(missed __aexit__ method)")
    stack[-1] = exit_
    stack.append(vm.call(enter, ()))


@opcode("WITH_EXCEPT_START")
def with_except_start(vm, frame, ins):
    """``(exit, lasti, prev_exc, exc -- exit, lasti, prev_exc, exc, result)``
    An exception left a ``with`` body: call ``exit(type(exc), exc,
    exc.__traceback__)`` and push its result (true suppresses).

    RefGraph: rule `call`: a call of the manager's ``__exit__``.
    """
    stack = frame.stack
    exc = stack[-1]
    exit_ = stack[-4]
    stack.append(vm.call(exit_, (type(exc), exc, exc.__traceback__)))


def _leaf_ids(exc, ids):
    if isinstance(exc, BaseExceptionGroup):
        for e in exc.exceptions:
            _leaf_ids(e, ids)
    else:
        ids.add(id(exc))


def _same_metadata(a, b):
    return (getattr(a, "__notes__", None) is getattr(b, "__notes__", None)
            and a.__traceback__ is b.__traceback__
            and a.__cause__ is b.__cause__
            and a.__context__ is b.__context__)


def prep_reraise(orig, excs):
    """Python rendering of CPython's ``_PyExc_PrepReraiseStar``."""
    if not excs:
        return None
    if not isinstance(orig, BaseExceptionGroup):
        return excs[0]
    raised, reraised = [], []
    for e in excs:
        if e is None:
            continue
        (reraised if _same_metadata(e, orig) else raised).append(e)
    keep = set()
    for e in reraised:
        _leaf_ids(e, keep)
    reraised_eg = None
    if keep:
        reraised_eg = orig.split(lambda leaf: id(leaf) in keep)[0]
    if raised:
        if reraised_eg is not None:
            raised.append(reraised_eg)
        if len(raised) > 1:
            return BaseExceptionGroup("", raised)
        return raised[0]
    return reraised_eg
