"""Calls and function creation."""
from types import FunctionType

from .registry import opcode
from .signals import NULL


@opcode("KW_NAMES", until=(3, 13))
def kw_names(vm, frame, ins):
    """``( -- )`` Remember the constant tuple of keyword names for the next
    ``CALL``: its last ``len(names)`` arguments are passed by keyword.

    RefGraph: none.
    """
    frame.kw_names = ins.argval


@opcode("CALL")
def call(vm, frame, ins):
    """``(NULL|method, callable|self, arg_1 ... arg_n -- result)`` Call with
    ``arg`` arguments (3.11/3.12 layout: if the entry below the callable is
    not NULL, it is the callable and the next entry is ``self``).

    Python callees run in a new interpreted frame; C callees natively;
    lookasides replace builtins that need the caller's frame.
    RefGraph: a torch function or Tensor method with tracked tensors becomes
    an FX node; a Python callee is inlined; an unknown C call on outside
    objects is classified (pure, impure, or a break).
    """
    stack = frame.stack
    n = ins.arg
    base = len(stack) - n - 2
    first = stack[base]
    if first is NULL:
        fn = stack[base + 1]
        args = stack[base + 2:]
    else:
        fn = first
        args = stack[base + 1:]
    del stack[base:]
    kw = frame.kw_names
    kwargs = None
    if kw is not None:
        frame.kw_names = None
        k = len(kw)
        kwargs = dict(zip(kw, args[len(args) - k:]))
        del args[len(args) - k:]
    frame.lasti = ins.index
    if type(fn) is FunctionType:
        stack.append(vm.call_function(fn, args, kwargs))
    else:
        stack.append(vm.call(fn, args, kwargs))


@opcode("CALL_FUNCTION_EX")
def call_function_ex(vm, frame, ins):
    """``(NULL, callable, args[, kwargs] -- result)`` ``callable(*args,
    **kwargs)``; ``kwargs`` is present if ``arg & 1``.

    A non-tuple ``args`` is converted (``TypeError`` naming the callee if it
    is not iterable).  RefGraph: as ``CALL``.
    """
    stack = frame.stack
    kwargs = stack.pop() if ins.arg & 1 else None
    args = stack.pop()
    fn = stack.pop()
    if stack[-1] is NULL:
        stack.pop()
    if type(args) is not tuple:
        tp = type(args)
        if vm.lookup(tp, "__iter__") is vm.MISSING and vm.lookup(tp, "__getitem__") is vm.MISSING:
            raise TypeError("%s argument after * must be an iterable, not %s"
                            % (vm.function_str(fn), tp.__name__))
        args = tuple(vm.iterate(args))
    frame.lasti = ins.index
    stack.append(vm.call(fn, args, kwargs))


@opcode("MAKE_FUNCTION")
def make_function(vm, frame, ins):
    """``([defaults, kwdefaults, annotations, closure,] code -- function)``
    Create a function from a code object; ``arg`` flags say which optional
    parts are on the stack (0x01 defaults tuple, 0x02 keyword-only defaults
    dict, 0x04 annotations, 0x08 closure tuple of cells).

    RefGraph: a function created by the run; its closure cells are tracked
    so that calls to it are inlined with the right ``Cell`` paths.
    """
    stack = frame.stack
    code = stack.pop()
    flags = ins.arg
    closure = stack.pop() if flags & 0x08 else None
    annotations = stack.pop() if flags & 0x04 else None
    kwdefaults = stack.pop() if flags & 0x02 else None
    defaults = stack.pop() if flags & 0x01 else None
    func = FunctionType(code, frame.globals, None, defaults, closure)
    if kwdefaults is not None:
        func.__kwdefaults__ = kwdefaults
    if annotations is not None:
        if type(annotations) is tuple:
            annotations = dict(zip(annotations[::2], annotations[1::2]))
        func.__annotations__ = annotations
    stack.append(func)


@opcode("LOAD_BUILD_CLASS")
def load_build_class(vm, frame, ins):
    """``( -- __build_class__)`` Push ``builtins.__build_class__``, which a
    ``CALL`` then runs on the class body function (the call is a lookaside:
    the body runs interpreted with the class namespace as its locals).

    RefGraph: a class created by the run.
    """
    build = frame.builtins.get("__build_class__", NULL)
    if build is NULL:
        raise NameError("__build_class__ not found")
    frame.stack.append(build)
