"""Calls and function creation."""
from types import FunctionType

from .callshape import callable_at, pop_call
from .registry import opcode
from .signals import NULL


@opcode("KW_NAMES", until=(3, 13))
def kw_names(vm, frame, ins):
    """``( -- )`` Remember the constant tuple of keyword names for the next
    ``CALL``: its last ``len(names)`` arguments are passed by keyword.

    RefGraph: records nothing; `float_move`.
    """
    frame.kw_names = ins.argval


@opcode("CALL")
def call(vm, frame, ins):
    """``(callable_slots, arg_1 ... arg_n -- result)`` Call with ``arg``
    arguments.  The two slots below the arguments hold ``NULL, callable``
    (3.11/3.12) or ``callable, NULL`` (3.13), or ``method, self`` for a
    method call on every version (``callshape.pop_call``).  A preceding
    ``KW_NAMES`` (3.11/3.12) or ``CALL_KW`` (3.13) left the names of the
    last arguments, which are passed by keyword, in ``frame.kw_names``.

    Python callees run in a new interpreted frame; C callees natively;
    lookasides replace builtins that need the caller's frame.
    RefGraph: rules `call` and `call_function`: a Python callee runs
    interpreted (inlined in the trace); a torch function or Tensor method
    becomes an FX node (rule `torch_function`); other C calls are classified
    (pure, impure, reading or writing an outside container, or a break);
    `int_call`: a tracked int passed to a tensor op becomes its node (an
    int passed to any other call becomes an unbacked size first, a bool
    breaks); `float_move` (the callee is vetted by
    ``scalars.check_call``).
    """
    stack = frame.stack
    fn, args = pop_call(stack, ins.arg)
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
    """``(callable_slots, args[, kwargs] -- result)`` ``callable(*args,
    **kwargs)``; ``kwargs`` is present if ``arg & 1``.  The slots are
    ``NULL, callable`` on 3.11/3.12 and ``callable, NULL`` on 3.13.

    A non-tuple ``args`` is converted (``TypeError`` naming the callee if it
    is not iterable).
    RefGraph: as ``CALL`` (rule `call`; `float_move`), after
    `call_function_ex`: outside ``args`` and ``kwargs`` containers are read
    whole; rule `iterate` for an ``args`` that is not a tuple.
    """
    stack = frame.stack
    kwargs = stack.pop() if ins.arg & 1 else None
    args = stack.pop()
    fn = callable_at(stack, 1)
    del stack[-2:]
    if type(args) is not tuple:
        tp = type(args)
        if vm.lookup(tp, "__iter__") is vm.MISSING and vm.lookup(tp, "__getitem__") is vm.MISSING:
            raise TypeError("%s argument after * must be an iterable, not %s"
                            % (vm.function_str(fn), tp.__name__))
        args = tuple(vm.iterate(args))
    frame.lasti = ins.index
    stack.append(vm.call(fn, args, kwargs))


FUNCTION_DEFAULTS = 0x01
FUNCTION_KWDEFAULTS = 0x02
FUNCTION_ANNOTATIONS = 0x04
FUNCTION_CLOSURE = 0x08


@opcode("MAKE_FUNCTION", until=(3, 13))
def make_function(vm, frame, ins):
    """``([defaults, kwdefaults, annotations, closure,] code -- function)``
    3.11/3.12: create a function from a code object; ``arg`` flags say which
    optional parts are on the stack (0x01 defaults tuple, 0x02 keyword-only
    defaults dict, 0x04 annotations, 0x08 closure tuple of cells).  3.13
    creates the bare function and adds the parts with
    ``SET_FUNCTION_ATTRIBUTE``.

    RefGraph: rule `make_function`: a closure cell it shares with an outside
    function is registered (its reads and writes are then guarded and
    replayed); calls to the new function run interpreted.
    """
    stack = frame.stack
    code = stack.pop()
    flags = ins.arg
    closure = stack.pop() if flags & FUNCTION_CLOSURE else None
    annotations = stack.pop() if flags & FUNCTION_ANNOTATIONS else None
    kwdefaults = stack.pop() if flags & FUNCTION_KWDEFAULTS else None
    defaults = stack.pop() if flags & FUNCTION_DEFAULTS else None
    func = FunctionType(code, frame.globals, None, defaults, closure)
    if kwdefaults is not None:
        func.__kwdefaults__ = kwdefaults
    if annotations is not None:
        set_function_attribute(func, FUNCTION_ANNOTATIONS, annotations)
    stack.append(func)


def set_function_attribute(func, flag, value):
    """Give a new function one optional part; returns the function.

    A closure cannot be assigned to an existing function object, so for
    ``FUNCTION_CLOSURE`` (which 3.13 sets first, right after
    ``MAKE_FUNCTION``) the function is re-created around the cells.
    """
    if flag == FUNCTION_DEFAULTS:
        func.__defaults__ = value
    elif flag == FUNCTION_KWDEFAULTS:
        func.__kwdefaults__ = value
    elif flag == FUNCTION_ANNOTATIONS:
        if type(value) is tuple:  # name, value, name, value...
            value = dict(zip(value[::2], value[1::2]))
        func.__annotations__ = value
    elif flag == FUNCTION_CLOSURE:
        old = func
        func = FunctionType(old.__code__, old.__globals__, None, old.__defaults__, value)
        func.__kwdefaults__ = old.__kwdefaults__
        if old.__annotations__:
            func.__annotations__ = old.__annotations__
        if old.__dict__:
            func.__dict__.update(old.__dict__)
    else:
        raise SystemError("unknown function attribute flag %r" % (flag,))
    return func


@opcode("LOAD_BUILD_CLASS")
def load_build_class(vm, frame, ins):
    """``( -- __build_class__)`` Push ``builtins.__build_class__``, which a
    ``CALL`` then runs on the class body function (the call is a lookaside:
    the body runs interpreted with the class namespace as its locals).

    RefGraph: none (the class the ``CALL`` builds is created by the run).
    """
    build = frame.builtins.get("__build_class__", NULL)
    if build is NULL:
        raise NameError("__build_class__ not found")
    frame.stack.append(build)
