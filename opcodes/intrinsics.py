"""Intrinsic functions (3.12+ ``CALL_INTRINSIC_1``/``CALL_INTRINSIC_2``).

3.12 folded several rare instructions into two opcodes that call one of a
table of C functions: printing an expression statement, ``import *``,
PEP 479's StopIteration conversion, async-generator wrapping, unary ``+``,
list-to-tuple, the end of ``except*``, and the objects of PEP 695 type
parameters and ``type`` statements.  The decoder turns the argument into the
intrinsic's name (``dis`` spells them ``INTRINSIC_...``), so the tables below
are keyed by name, not by number.

The intrinsics that only build ``typing`` objects in C (``TypeVar`` with a
lazily evaluated bound, ``TypeAliasType``...) have no Python-level
constructor with the same behaviour; they run natively, through a tiny code
object that executes that one intrinsic (:func:`_native`).  The lazy
evaluation functions they receive are later called by C code, natively (see
``docs/native-entry-points.md``).
"""
import dis
import inspect
import types

from .exceptions import prep_reraise
from .registry import opcode

_CO_COROUTINE = inspect.CO_COROUTINE
_CO_ASYNC_GENERATOR = inspect.CO_ASYNC_GENERATOR


def display(vm, value):
    """Pass the value of an interactive expression statement to
    ``sys.displayhook``; returns the hook's result."""
    import sys

    hook = getattr(sys, "displayhook", None)
    if hook is None:
        raise RuntimeError("lost sys.displayhook")
    return vm.call(hook, (value,))


def stopiteration_error(frame, exc):
    """PEP 479: the ``RuntimeError`` that replaces a ``StopIteration`` (or an
    async generator's ``StopAsyncIteration``) leaving a generator body, with
    the original as its cause and context; any other exception unchanged."""
    flags = frame.code.co_flags
    message = None
    if issubclass(type(exc), StopIteration):
        if flags & _CO_ASYNC_GENERATOR:
            message = "async generator raised StopIteration"
        elif flags & _CO_COROUTINE:
            message = "coroutine raised StopIteration"
        else:
            message = "generator raised StopIteration"
    elif flags & _CO_ASYNC_GENERATOR and issubclass(type(exc), StopAsyncIteration):
        message = "async generator raised StopAsyncIteration"
    if message is None:
        return exc
    error = RuntimeError(message)
    error.__cause__ = exc
    error.__context__ = exc
    return error


def _subscript_generic(vm, frame, params):
    """``Generic[*params]`` for a PEP 695 class: ``typing._GenericAlias(Generic,
    params)``, a ``TypeVarTuple`` parameter unpacked (``Unpack[Ts]``)."""
    import typing

    if any(type(p) is typing.TypeVarTuple for p in params):
        params = tuple(vm.getitem(typing.Unpack, p) if type(p) is typing.TypeVarTuple else p
                       for p in params)
    return vm.call(typing._GenericAlias, (typing.Generic, params))


def _set_function_type_params(vm, frame, func, params):
    func.__type_params__ = params
    return func


def _native(opname, name):
    """A function that runs intrinsic ``name`` of ``opname`` natively."""
    descs = dis._intrinsic_1_descs if opname == "CALL_INTRINSIC_1" else dis._intrinsic_2_descs
    nargs = 1 if opname == "CALL_INTRINSIC_1" else 2
    template = (lambda a: a) if nargs == 1 else (lambda a, b: (a, b))
    ops = [dis.opmap["RESUME"], 0]
    for slot in range(nargs):
        ops += [dis.opmap["LOAD_FAST"], slot]
    ops += [dis.opmap[opname], descs.index(name), dis.opmap["RETURN_VALUE"], 0]
    code = template.__code__.replace(
        co_code=bytes(ops), co_linetable=b"", co_exceptiontable=b"",
        co_name=name.lower(), co_qualname=name.lower())
    run = types.FunctionType(code, {})

    def intrinsic(vm, frame, *args):
        return run(*args)

    intrinsic.__qualname__ = "native(%s)" % name
    return intrinsic


_UNARY = {
    "INTRINSIC_PRINT": lambda vm, frame, value: display(vm, value),
    "INTRINSIC_IMPORT_STAR": lambda vm, frame, module: vm.import_star(module, frame.locals),
    "INTRINSIC_STOPITERATION_ERROR": lambda vm, frame, exc: stopiteration_error(frame, exc),
    "INTRINSIC_ASYNC_GEN_WRAP": lambda vm, frame, value: vm.async_gen_wrap(value),
    "INTRINSIC_UNARY_POSITIVE": lambda vm, frame, value: vm.unary_op("UNARY_POSITIVE", value),
    "INTRINSIC_LIST_TO_TUPLE": lambda vm, frame, items: tuple(items),
    "INTRINSIC_SUBSCRIPT_GENERIC": _subscript_generic,
}
_BINARY = {
    "INTRINSIC_PREP_RERAISE_STAR": lambda vm, frame, orig, excs: prep_reraise(orig, excs),
    "INTRINSIC_SET_FUNCTION_TYPE_PARAMS": _set_function_type_params,
}
_NATIVE_UNARY = ("INTRINSIC_TYPEVAR", "INTRINSIC_PARAMSPEC", "INTRINSIC_TYPEVARTUPLE",
                 "INTRINSIC_TYPEALIAS")
_NATIVE_BINARY = ("INTRINSIC_TYPEVAR_WITH_BOUND", "INTRINSIC_TYPEVAR_WITH_CONSTRAINTS",
                  "INTRINSIC_SET_TYPEPARAM_DEFAULT")


def _table(opname, python, native):
    """name -> implementation, for the intrinsics this Python has."""
    descs = getattr(dis, "_intrinsic_1_descs" if opname == "CALL_INTRINSIC_1"
                    else "_intrinsic_2_descs", ())
    table = {}
    for name in descs:
        if name in python:
            table[name] = python[name]
        elif name in native:
            table[name] = _native(opname, name)
    return table


INTRINSICS_1 = _table("CALL_INTRINSIC_1", _UNARY, _NATIVE_UNARY)
"""Intrinsic name -> ``fn(vm, frame, arg)`` for ``CALL_INTRINSIC_1``."""
INTRINSICS_2 = _table("CALL_INTRINSIC_2", _BINARY, _NATIVE_BINARY)
"""Intrinsic name -> ``fn(vm, frame, arg1, arg2)`` for ``CALL_INTRINSIC_2``."""


def _invalid(ins):
    return SystemError("invalid intrinsic function %s" % ins.argval)


@opcode("CALL_INTRINSIC_1", since=(3, 12))
def call_intrinsic_1(vm, frame, ins):
    """``(value -- result)`` 3.12+: apply the one-argument intrinsic named by
    ``arg``: ``PRINT`` (interactive ``sys.displayhook``), ``IMPORT_STAR``,
    ``STOPITERATION_ERROR`` (PEP 479, at the end of every generator body),
    ``ASYNC_GEN_WRAP``, ``UNARY_POSITIVE``, ``LIST_TO_TUPLE``,
    ``SUBSCRIPT_GENERIC`` (``Generic[T]`` for a PEP 695 class), and the
    natively built ``TYPEVAR``/``PARAMSPEC``/``TYPEVARTUPLE``/``TYPEALIAS``.

    RefGraph: none of its own (the intrinsic functions come from a table, so
    the reference lists no rule): ``UNARY_POSITIVE`` on a tensor gives an FX
    node (rule `torch_function`); ``PRINT``, ``IMPORT_STAR`` and
    ``SUBSCRIPT_GENERIC`` call through the vm as their 3.11 instructions or a
    ``CALL`` would; the others create values in the run.
    """
    stack = frame.stack
    fn = INTRINSICS_1.get(ins.argval)
    if fn is None:
        raise _invalid(ins)
    frame.lasti = ins.index
    stack[-1] = fn(vm, frame, stack[-1])


@opcode("CALL_INTRINSIC_2", since=(3, 12))
def call_intrinsic_2(vm, frame, ins):
    """``(value1, value2 -- result)`` 3.12+: apply the two-argument intrinsic
    named by ``arg``: ``PREP_RERAISE_STAR`` (end of ``except*``: what to
    re-raise), ``SET_FUNCTION_TYPE_PARAMS``, and the natively built
    ``TYPEVAR_WITH_BOUND``/``TYPEVAR_WITH_CONSTRAINTS`` (lazy bounds) and,
    on 3.13, ``SET_TYPEPARAM_DEFAULT``.

    RefGraph: none (exception bookkeeping and values created in the run).
    """
    stack = frame.stack
    fn = INTRINSICS_2.get(ins.argval)
    if fn is None:
        raise _invalid(ins)
    frame.lasti = ins.index
    second = stack.pop()
    stack[-1] = fn(vm, frame, stack[-1], second)
