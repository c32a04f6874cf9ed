"""Lookasides: Python replacements for builtins that need the caller's frame
or that would call back into Python natively.

A lookaside has the signature ``(vm, args, kwargs) -> result`` and is
registered for one builtin object with :func:`lookaside`, as that object's
plain handler in the one interception registry (``calls.INTERCEPTIONS``;
capture runs it too unless it registers its own).  Whenever it can,
a lookaside defers to the real builtin for argument checking and error
messages (it calls it natively once no Python code would run inside it).

Two groups:

* **frame-dependent**: zero-argument ``super()``, ``locals()``,
  ``globals()``, ``vars()``, ``dir()``, ``eval``/``exec`` with implicit
  namespaces, ``sys._getframe``, ``inspect.currentframe``, and
  ``__build_class__`` (which runs the class body as a frame with the class
  namespace as its locals);
* **callback-taking**: ``map``, ``filter``, ``sorted``/``list.sort``,
  ``min``/``max``, ``functools.reduce``, ``iter(callable, sentinel)``, and
  the protocol builtins (``len``, ``iter``, ``next``, ``bool``, ``str``,
  ``repr``, ``format``, ``print``, ``getattr``...), so that Python callbacks
  and dunders they reach run interpreted.

A builtin named here (``_native(locals, ...)``) is pyinterp's own binding
of it (``pyinterp/ownbuiltins.py``), the real one whatever the program did
to the ``builtins`` module; ``builtins.X`` is read only at import.
"""
import bisect
import builtins
import functools
import inspect
import itertools
import re
import sys
import types
import warnings

from .model import lookup as _lookup
from .calls import METHOD_LOOKASIDES, intercept, interception, namespace_with_module
from .model.dunders import needs_interpreter
from .decode import localsplus_names
from . import tracing
from .frame import Frame
from .frameview import FrameProxy, current_index, frame_locals, outside, proxy
from .model.lookup import MISSING, lookup
from ..opcodes.signals import NULL
from .model.operators import NATIVE_TYPES
from .model.containers import iterate_hinted, reduce_as


def lookaside(*targets):
    """Register the decorated function as the lookaside of ``targets``."""

    def register(fn):
        for target in targets:
            intercept(target, fn)
        return fn

    return register


def _native(fn, args, kwargs):
    return fn(*args, **kwargs) if kwargs else fn(*args)


def interpreted(vm, fn):
    """A host callable that runs ``fn`` through the interpreter.

    Handed to C code (``map``, ``sorted``...) in place of a Python function
    so that the callback is interpreted.  C callables are returned as is.
    """
    if fn is None or (type(fn) in _NATIVE_CALLABLES and interception(fn) is None):
        return fn
    return _InterpretedCallback(vm, fn)


@_lookup.host_type
class _InterpretedCallback:
    """What :func:`interpreted` hands to C code; pickled or copied (with the
    C object holding it, ``iter(f, sentinel)``, ``map(f, ...)``) it is
    ``fn`` itself."""

    __slots__ = ("vm", "fn")

    def __init__(self, vm, fn):
        self.vm = vm
        self.fn = fn

    def __call__(self, *args, **kwargs):
        return self.vm.call(self.fn, args, kwargs or None)

    def __reduce__(self):
        return reduce_as(self.fn)


_NATIVE_CALLABLES = frozenset({
    types.BuiltinFunctionType, types.MethodDescriptorType,
    types.WrapperDescriptorType, types.MethodWrapperType,
})


def _caller(vm):
    """The interpreted frame that made the current call."""
    frame = vm.top
    if frame is None:
        raise RuntimeError("pyinterp: no interpreted frame is running")
    return frame


# -- frame-dependent builtins -------------------------------------------
@lookaside(builtins.locals)
def _locals(vm, args, kwargs):
    if args or kwargs:
        return _native(locals, args, kwargs)
    return frame_locals(_caller(vm))


@lookaside(builtins.globals)
def _globals(vm, args, kwargs):
    if args or kwargs:
        return _native(globals, args, kwargs)
    return _caller(vm).globals


@lookaside(builtins.vars)
def _vars(vm, args, kwargs):
    if args or kwargs:
        if len(args) == 1 and not kwargs:
            try:
                return vm.load_attr(args[0], "__dict__")
            except AttributeError:
                pass
            raise TypeError("vars() argument must have __dict__ attribute")
        return _native(vars, args, kwargs)
    return frame_locals(_caller(vm))


@lookaside(builtins.dir)
def _dir(vm, args, kwargs):
    if args or kwargs:
        if len(args) == 1 and not kwargs:
            method = lookup(type(args[0]), "__dir__")
            if needs_interpreter(method):
                return sorted(vm.iterate(vm.call_special(method, args[0])))
        return _native(dir, args, kwargs)
    return sorted(frame_locals(_caller(vm)))


def _run_code(vm, code, globals, locals):
    if "__builtins__" not in globals:  # CPython puts in the caller's builtins
        globals["__builtins__"] = vm.top.builtins if vm.top is not None else builtins.__dict__
    frame = Frame(code, globals, locals)
    if code.co_freevars:
        raise TypeError("code object passed to exec() may not contain free variables")
    return vm.run_frame(frame)


def _argument_binder(native):
    """A function with the signature of C function ``native`` that returns
    the arguments it binds as a dict, defaults included: CPython binds them
    (made once; ``inspect`` itself is Python code that reads the builtins)."""
    parameters = inspect.signature(native).parameters
    namespace = {}
    exec("def bind%s:\n    return {%s}\n" % (
        inspect.signature(native), ", ".join("%r: %s" % (n, n) for n in parameters)), namespace)
    return namespace["bind"]


_BINDERS = {eval: _argument_binder(eval), exec: _argument_binder(exec)}


def _eval_or_exec(vm, native, mode, args, kwargs):
    if kwargs:
        try:
            bound = _BINDERS[native](*args, **kwargs)
        except TypeError:
            bound = None  # (outside the except block: no chaining)
        if bound is None or bound.get("closure") is not None:
            return _native(native, args, kwargs)  # CPython's own message
        args = (bound["source"], bound["globals"], bound["locals"])
    if not args or len(args) > 3:
        return _native(native, args, kwargs)
    source = args[0]
    globals = args[1] if len(args) > 1 else None
    locals = args[2] if len(args) > 2 else None
    if globals is not None and type(globals) is not dict and not isinstance(globals, dict):
        return _native(native, args, kwargs)
    if globals is None:
        caller = _caller(vm)
        globals = caller.globals
        if locals is None:
            locals = frame_locals(caller)
    elif locals is None:
        locals = globals
    if isinstance(source, types.CodeType):
        code = source
    else:
        if isinstance(source, (bytes, bytearray, memoryview)):
            source = bytes(source).decode()
        if not isinstance(source, str):
            return _native(native, args, kwargs)
        if mode == "eval":
            source = source.lstrip(" \t")
        code = compile(source, "<string>", mode, dont_inherit=False)
    result = _run_code(vm, code, globals, locals)
    return result if mode == "eval" else None


@lookaside(builtins.eval)
def _eval(vm, args, kwargs):
    return _eval_or_exec(vm, eval, "eval", args, kwargs)


@lookaside(builtins.exec)
def _exec(vm, args, kwargs):
    return _eval_or_exec(vm, exec, "exec", args, kwargs)


def _host_frame_outside():
    """What the program sees below its outermost interpreted frame: the
    real frame that called into pyinterp, or an enclosing interpreted
    frame (see :func:`frameview.outside`)."""
    return outside(sys._getframe(1))


@lookaside(sys._getframe)
def _getframe(vm, args, kwargs):
    depth = args[0] if args else 0
    if type(depth) is not int or kwargs:
        return _native(sys._getframe, args, kwargs)
    frame = proxy(_caller(vm))
    for _ in range(depth):
        frame = frame.f_back
        if frame is None:
            raise ValueError("call stack is not deep enough")
    return frame


def _getframemodulename_arguments(depth=0):
    return depth


def _getframemodulename(vm, args, kwargs):
    """``sys._getframemodulename(depth=0)`` (3.12+): the module of the function
    running ``depth`` frames up (``enum``, ``typing`` and ``namedtuple`` name
    what they create after it), on interpreted frames first."""
    try:
        depth = _getframemodulename_arguments(*args, **(kwargs or {}))
    except TypeError:
        depth = MISSING
    if type(depth) is not int:  # outside the except block: no __context__
        return _native(sys._getframemodulename, args, kwargs)
    sys.audit("sys._getframemodulename", depth)
    frame = _caller(vm)
    while depth > 0 and frame.back is not None:
        frame, depth = frame.back, depth - 1
    if depth > 0:
        outside = _host_frame_outside()
        while depth > 1 and outside is not None:
            outside, depth = outside.f_back, depth - 1
        return None if outside is None else outside.f_globals.get("__name__")
    if frame.func is not None:
        return getattr(frame.func, "__module__", None)
    return dict.get(frame.globals, "__name__")


if hasattr(sys, "_getframemodulename"):
    lookaside(sys._getframemodulename)(_getframemodulename)


def _warn_arguments(message, category=None, stacklevel=1, source=None):
    return message, category, stacklevel, source


_NO_FRAME_LOCATION = ("<sys>", 0) if sys.version_info >= (3, 13) else ("sys", 1)
"""Where a warning whose ``stacklevel`` is past the outermost frame points."""


@lookaside(warnings.warn)
def _warn(vm, args, kwargs):
    """``warnings.warn``: the C function takes the warning's file, line, module
    and registry from the caller's frames (``stacklevel``), which are
    interpreted frames here; the rest is the native ``warn_explicit``."""
    try:
        message, category, stacklevel, source = _warn_arguments(*args, **(kwargs or {}))
    except TypeError:
        message = MISSING
    if message is MISSING:  # outside the except block: no __context__
        return _native(warnings.warn, args, kwargs)
    if isinstance(message, Warning):
        category = type(message)
    elif category is None:
        category = UserWarning
    if type(stacklevel) is not int or not (
            isinstance(category, type) and issubclass(category, Warning)):
        return _native(warnings.warn, args, kwargs)  # its own TypeError
    # setup_context() in Python/_warnings.c, on the program's frames.
    frame = proxy(_caller(vm))
    if stacklevel <= 0 or _is_internal_frame(frame):
        while stacklevel > 1 and frame is not None:
            frame, stacklevel = frame.f_back, stacklevel - 1
    else:
        while stacklevel > 1 and frame is not None:
            frame, stacklevel = frame.f_back, stacklevel - 1
            while frame is not None and _is_internal_frame(frame):
                frame = frame.f_back
    warn_from(frame, message, category, source)


def warn_from(frame, message, category, source=None):
    """Issue a warning as ``warnings.warn`` does once it found ``frame`` (a
    real frame, an interpreted frame's proxy, or None past the outermost):
    that frame's file, line, module and ``__warningregistry__``."""
    if frame is None:
        globals, filename, lineno = (sys.__dict__,) + _NO_FRAME_LOCATION
    elif type(frame) is FrameProxy:
        inner = frame._frame
        globals, filename = inner.globals, inner.code.co_filename
        lineno = inner.instructions[current_index(inner)].lineno
    else:
        globals, filename, lineno = frame.f_globals, frame.f_code.co_filename, frame.f_lineno
    registry = dict.get(globals, "__warningregistry__", MISSING)
    if registry is MISSING:
        registry = {}
        dict.__setitem__(globals, "__warningregistry__", registry)
    module = dict.get(globals, "__name__", MISSING)
    if module is not None and not isinstance(module, str):
        module = "<string>"
    warnings.warn_explicit(message, category, filename, lineno, module, registry, None, source)


def issue_warning(vm, message, source=None):
    """Issue the ``Warning`` instance ``message`` from the innermost interpreted
    frame, as C code's ``PyErr_WarnEx(..., 1)`` does natively (see
    :mod:`pyinterp.warnbridge`)."""
    _warn(vm, (message,), {"stacklevel": 1, "source": source})


def _is_internal_frame(frame):
    filename = frame.f_code.co_filename
    return "importlib" in filename and "_bootstrap" in filename


@lookaside(inspect.currentframe)
def _currentframe(vm, args, kwargs):
    if args or kwargs:
        return _native(inspect.currentframe, args, kwargs)
    return proxy(_caller(vm))


@lookaside(builtins.super)
def _super(vm, args, kwargs):
    if args or kwargs:
        return _native(super, args, kwargs)
    frame = _caller(vm)
    code = frame.code
    if code.co_argcount == 0 and not code.co_flags & inspect.CO_VARARGS:
        raise RuntimeError("super(): no arguments")
    first = frame.fast[0]
    if code.co_varnames[0] in code.co_cellvars and type(first) is types.CellType:
        try:
            first = first.cell_contents
        except ValueError:
            first = NULL
    if first is NULL:
        raise RuntimeError("super(): arg[0] deleted")
    if "__class__" not in code.co_freevars:
        raise RuntimeError("super(): __class__ cell not found")
    cell = frame.fast[len(frame.fast) - len(code.co_freevars) + code.co_freevars.index("__class__")]
    try:
        cls = cell.cell_contents
    except ValueError:
        cls = NULL
    if cls is NULL:
        raise RuntimeError("super(): empty __class__ cell")
    if not isinstance(cls, type):
        raise RuntimeError("super(): __class__ is not a type (%s)" % type(cls).__name__)
    return super(cls, first)


_BUILD_CLASS = builtins.__build_class__


@lookaside(_BUILD_CLASS)
def _build_class(vm, args, kwargs):
    """``class`` statements: the body runs interpreted in the class namespace."""
    if len(args) < 2:
        return _native(_BUILD_CLASS, args, kwargs)
    func, name, *bases = args
    if type(func) is not types.FunctionType:
        raise TypeError("__build_class__: func must be a function")
    if not isinstance(name, str):
        raise TypeError("__build_class__: name is not a string")
    kwds = dict(kwargs or {})
    orig_bases = tuple(bases)
    bases = _resolve_bases(vm, orig_bases)
    meta = kwds.pop("metaclass", MISSING)
    if meta is MISSING:
        meta = type(bases[0]) if bases else type
    if isinstance(meta, type):
        meta = _calculate_meta(meta, bases)
    try:
        prepare = vm.load_attr(meta, "__prepare__")
    except AttributeError:
        prepare = None
    ns = vm.call(prepare, (name, bases), kwds) if prepare is not None else {}
    if lookup(type(ns), "__getitem__") is MISSING:
        raise TypeError("%s.__prepare__() must return a mapping, not %s"
                        % (meta.__name__ if isinstance(meta, type) else "<metaclass>",
                           type(ns).__name__))
    frame = Frame(func.__code__, func.__globals__, ns, func)
    cell = vm.run_frame(frame)
    if bases is not orig_bases:
        ns["__orig_bases__"] = orig_bases
    cls = vm.call(meta, (name, bases, ns), kwds)
    if isinstance(cls, type) and type(cell) is types.CellType:
        try:
            cell_value = cell.cell_contents
        except ValueError:
            cell_value = NULL
        if cell_value is not cls:
            if cell_value is NULL:
                raise RuntimeError("__class__ not set defining %r as %r. Was __classcell__ "
                                   "propagated to type.__new__?" % (name, cls))
            raise TypeError("__class__ set to %r defining %r as %r" % (cell_value, name, cls))
    return cls


lookaside(sys.settrace)(tracing.settrace)
lookaside(sys.gettrace)(tracing.gettrace)
lookaside(sys.setprofile)(tracing.setprofile)
lookaside(sys.getprofile)(tracing.getprofile)


def _calculate_meta(meta, bases):
    """The most derived metaclass (``_PyType_CalculateMetaclass``, C code
    natively: here, so that a conflict's traceback shows no stdlib frame)."""
    winner = meta
    for base in bases:
        base_meta = type(base)
        if issubclass(winner, base_meta):
            continue
        if issubclass(base_meta, winner):
            winner = base_meta
            continue
        raise TypeError("metaclass conflict: the metaclass of a derived class must be "
                        "a (non-strict) subclass of the metaclasses of all its bases")
    return winner


@lookaside(types.FunctionType)
def _function(vm, args, kwargs):
    """``types.FunctionType(code, globals, ...)``: when ``globals`` has no
    ``__builtins__``, CPython gives the function the builtins of the
    calling frame (bpo-42990), which is the interpreted caller's, not the
    frame of pyinterp that calls the constructor: lent to the globals for
    the call."""
    frame = vm.top
    namespace = args[1] if len(args) > 1 else (kwargs or {}).get("globals")
    if frame is None or type(namespace) is not dict or "__builtins__" in namespace \
            or frame.builtins is builtins.__dict__:
        return _native(types.FunctionType, args, kwargs)
    namespace["__builtins__"] = frame.builtins
    try:
        return _native(types.FunctionType, args, kwargs)
    finally:
        del namespace["__builtins__"]


@lookaside(type.__new__)
def _type_new(vm, args, kwargs):
    """``type.__new__(meta, name, bases, namespace)`` (``super().__new__`` in a
    metaclass): the class's ``__module__`` comes from the interpreted caller."""
    if len(args) == 4 and isinstance(args[0], type) and issubclass(args[0], type):
        args = tuple(args[:3]) + (namespace_with_module(vm, args[3]),)
    return _native(type.__new__, args, kwargs)


def _resolve_bases(vm, bases):
    """PEP 560: replace non-class bases by their ``__mro_entries__(bases)``."""
    resolved = []
    changed = False
    for base in bases:
        if isinstance(base, type):
            resolved.append(base)
            continue
        try:
            entries_of = vm.load_attr(base, "__mro_entries__")
        except AttributeError:
            resolved.append(base)
            continue
        entries = vm.call(entries_of, (bases,))
        if type(entries) is not tuple:
            raise TypeError("__mro_entries__ must return a tuple")
        resolved.extend(entries)
        changed = True
    return tuple(resolved) if changed else bases


# -- protocol builtins ----------------------------------------------------
def _one_argument(native, protocol):
    """Lookaside for a builtin that applies one protocol to one argument."""

    def run(vm, args, kwargs):
        if len(args) != 1 or kwargs:
            return _native(native, args, kwargs)
        return getattr(vm, protocol)(args[0])

    run.__qualname__ = "lookaside(%s)" % native.__name__
    return run


for _native_fn, _protocol in ((builtins.len, "length"), (builtins.bool, "truth"),
                              (builtins.str, "to_str"), (builtins.repr, "to_repr"),
                              (builtins.ascii, "to_ascii")):
    lookaside(_native_fn)(_one_argument(_native_fn, _protocol))


@lookaside(builtins.iter)
def _iter(vm, args, kwargs):
    if kwargs:
        return _native(iter, args, kwargs)
    if len(args) == 1:
        return vm.get_iter(args[0])
    if len(args) == 2 and callable(args[0]):
        return iter(interpreted(vm, args[0]), args[1])
    return _native(iter, args, kwargs)


@lookaside(builtins.next)
def _next(vm, args, kwargs):
    if kwargs or not 1 <= len(args) <= 2:
        return _native(next, args, kwargs)
    it = args[0]
    if lookup(type(it), "__next__") is MISSING:
        raise TypeError("'%s' object is not an iterator" % type(it).__name__)
    if len(args) == 1:
        return vm.next_value(it)
    try:
        return vm.next_value(it)
    except StopIteration:
        pass
    return args[1]


@lookaside(builtins.format)
def _format(vm, args, kwargs):
    if kwargs or not 1 <= len(args) <= 2:
        return _native(format, args, kwargs)
    spec = args[1] if len(args) == 2 else ""
    if not isinstance(spec, str):
        return _native(format, args, kwargs)
    return vm.format(args[0], spec)


_PRINT_PLAIN = frozenset({str, int, float, bool, type(None)})


def _print_options(sep=None, end=None, file=None, flush=False):
    return sep, end, file, flush


@lookaside(builtins.print)
def _print(vm, args, kwargs):
    """``print``: like CPython, write each piece to ``file.write`` as soon as
    it is made (an argument whose ``__str__`` raises leaves the earlier
    pieces written); a Python ``__str__`` or ``write`` is interpreted."""
    try:
        sep, end, file, flush = _print_options(**(kwargs or {}))
    except TypeError:
        sep = MISSING
    if sep is MISSING:  # outside the except block: no __context__
        return _native(print, args, kwargs)  # CPython's own message
    target = sys.stdout if file is None else file
    if all(type(a) in _PRINT_PLAIN for a in args) and \
            not needs_interpreter(lookup(type(target), "write")):
        return _native(print, args, kwargs)
    flush = vm.truth(flush)
    if target is None:
        return None
    for name, value in (("sep", sep), ("end", end)):
        if value is not None and not isinstance(value, str):
            raise TypeError("%s must be None or a string, not %.200s"
                            % (name, type(value).__name__))
    for i, arg in enumerate(args):
        if i:
            vm.call(vm.load_attr(target, "write"), (" " if sep is None else sep,))
        write = vm.load_attr(target, "write")
        vm.call(write, (arg if type(arg) is str else vm.to_str(arg),))
    vm.call(vm.load_attr(target, "write"), ("\n" if end is None else end,))
    if flush:
        vm.call(vm.load_attr(target, "flush"), ())


@lookaside(builtins.getattr)
def _getattr(vm, args, kwargs):
    if kwargs or not 2 <= len(args) <= 3 or type(args[1]) is not str:
        return _native(getattr, args, kwargs)
    if len(args) == 2:
        return vm.load_attr(args[0], args[1])
    try:
        return vm.load_attr(args[0], args[1])
    except AttributeError:
        vm.missing_attribute(args[0], args[1])
    return args[2]


@lookaside(builtins.hasattr)
def _hasattr(vm, args, kwargs):
    if kwargs or len(args) != 2 or type(args[1]) is not str:
        return _native(hasattr, args, kwargs)
    try:
        vm.load_attr(args[0], args[1])
    except AttributeError:
        vm.missing_attribute(args[0], args[1])
        return False
    return True


@lookaside(builtins.setattr)
def _setattr(vm, args, kwargs):
    if kwargs or len(args) != 3 or type(args[1]) is not str:
        return _native(setattr, args, kwargs)
    vm.store_attr(*args)


@lookaside(builtins.delattr)
def _delattr(vm, args, kwargs):
    if kwargs or len(args) != 2 or type(args[1]) is not str:
        return _native(delattr, args, kwargs)
    vm.delete_attr(*args)


def _invalidating(native):
    def run(vm, args, kwargs):
        result = _native(native, args, kwargs)
        if args and issubclass(type(args[0]), type):  # (asks no __class__)
            _lookup.invalidate()
        return result

    return run


for _target in (type.__setattr__, type.__delattr__, object.__setattr__, object.__delattr__):
    lookaside(_target)(_invalidating(_target))


@lookaside(builtins.abs)
def _abs(vm, args, kwargs):
    if len(args) == 1 and not kwargs:
        method = lookup(type(args[0]), "__abs__")
        if needs_interpreter(method):
            return vm.call_special(method, args[0])
    return _native(abs, args, kwargs)


@lookaside(builtins.hash)
def _hash(vm, args, kwargs):
    """``hash(x)`` with a Python ``__hash__`` interpreted (``slot_tp_hash``)."""
    if len(args) == 1 and not kwargs and type(args[0]) not in NATIVE_TYPES:
        method = lookup(type(args[0]), "__hash__")
        if needs_interpreter(method):
            result = vm.call_special(method, args[0])
            if not isinstance(result, int):
                raise TypeError("__hash__ method should return an integer")
            if -sys.maxsize - 1 <= result <= sys.maxsize:
                return -2 if result == -1 else int(result)
            return int.__hash__(result)  # out of Py_hash_t range: long_hash
    return _native(hash, args, kwargs)


@lookaside(builtins.round)
def _round(vm, args, kwargs):
    if 1 <= len(args) <= 2 and not kwargs:
        method = lookup(type(args[0]), "__round__")
        if needs_interpreter(method):
            return vm.call_special(method, *args)
    return _native(round, args, kwargs)


def _number_result(vm, value, method, name, expected):
    """Check what a Python ``__int__``/``__index__``/``__float__`` returned,
    as ``PyNumber_Long``/``PyNumber_Index``/``PyNumber_Float`` do."""
    result = vm.call_special(method, value)
    if type(result) is expected:
        return result
    owner = "%s.__float__" % type(value).__name__ if expected is float else name
    if not isinstance(result, expected):
        article = "non-float" if expected is float else "non-int"
        raise TypeError("%s returned %s (type %s)" % (owner, article, type(result).__name__))
    _warn(vm, ("%s returned non-%s (type %s).  The ability to return an instance of a "
               "strict subclass of %s is deprecated, and may be removed in a future "
               "version of Python." % (owner, expected.__name__, type(result).__name__,
                                       expected.__name__), DeprecationWarning), None)
    return expected(result)


@lookaside(int)
def _int(vm, args, kwargs):
    """``int(x)`` with a Python ``__int__`` (else ``__index__``) interpreted."""
    if len(args) == 1 and not kwargs and type(args[0]) not in NATIVE_TYPES:
        value = args[0]
        method = lookup(type(value), "__int__")
        if needs_interpreter(method):
            return _number_result(vm, value, method, "__int__", int)
        if method is MISSING:
            method = lookup(type(value), "__index__")
            if needs_interpreter(method):
                return _number_result(vm, value, method, "__index__", int)
    return _native(int, args, kwargs)


@lookaside(float)
def _float(vm, args, kwargs):
    """``float(x)`` with a Python ``__float__`` (else ``__index__``) interpreted."""
    if len(args) == 1 and not kwargs and type(args[0]) not in NATIVE_TYPES:
        value = args[0]
        method = lookup(type(value), "__float__")
        if needs_interpreter(method):
            return _number_result(vm, value, method, "__float__", float)
        if method is MISSING:
            method = lookup(type(value), "__index__")
            if needs_interpreter(method):
                return float(_number_result(vm, value, method, "__index__", int))
    return _native(float, args, kwargs)


# -- callback-taking builtins --------------------------------------------
def _iterable_arg(vm, obj):
    """Pass an iterable to C code with its Python protocol interpreted."""
    if type(obj) in NATIVE_TYPES:
        return obj
    return vm.iterate(obj)


@lookaside(builtins.map)
def _map(vm, args, kwargs):
    if kwargs or len(args) < 2:
        return _native(map, args, kwargs)
    return map(interpreted(vm, args[0]), *[_iterable_arg(vm, a) for a in args[1:]])


@lookaside(builtins.filter)
def _filter(vm, args, kwargs):
    if kwargs or len(args) != 2:
        return _native(filter, args, kwargs)
    func = args[0]
    if func is None or func is bool:
        return filter(lambda v: vm.truth(v), _iterable_arg(vm, args[1]))
    return filter(interpreted(vm, func), _iterable_arg(vm, args[1]))


@_lookup.host_type
class _OrderKey:
    """Wraps sort/min/max items so that ``<``/``>`` between Python objects go
    through the interpreter (``list.sort`` compares with ``<`` only)."""

    __slots__ = ("vm", "value")

    def __init__(self, vm, value):
        self.vm = vm
        self.value = value

    def __lt__(self, other):
        return _order(self.vm, "<", self.value, _unwrapped(other))

    def __gt__(self, other):
        return _order(self.vm, ">", self.value, _unwrapped(other))


def _unwrapped(key):
    """A sort key as the program made it (plain keys are not wrapped)."""
    return key.value if type(key) is _OrderKey else key


def _plain_key(key):
    """True if comparing ``key`` runs no Python code (tuples and lists are
    compared item by item, so their items must be plain too)."""
    tp = type(key)
    if tp is tuple or tp is list:
        return all(_plain_key(k) for k in key)
    return tp in NATIVE_TYPES


def _order(vm, op, a, b):
    """``bool(a < b)`` or ``bool(a > b)``; two tuples (or lists) holding Python
    objects are compared as their C comparison does, with the items' dunders
    interpreted: ``==`` up to the first unequal item, then ``op`` on it."""
    tp = type(a)
    if (tp is tuple or tp is list) and type(b) is tp and not (_plain_key(a) and _plain_key(b)):
        for x, y in zip(a, b):
            if not _equal(vm, x, y):
                return _order(vm, op, x, y)
        return len(a) < len(b) if op == "<" else len(a) > len(b)
    return vm.truth(vm.compare(op, a, b))


def _equal(vm, a, b):
    """``PyObject_RichCompareBool(a, b, Py_EQ)`` for :func:`_order`."""
    if a is b:
        return True
    tp = type(a)
    if (tp is tuple or tp is list) and type(b) is tp and not (_plain_key(a) and _plain_key(b)):
        if tp is list and len(a) != len(b):
            return False
        for x, y in zip(a, b):
            if not _equal(vm, x, y):
                return False
        return len(a) == len(b)
    return vm.truth(vm.compare("==", a, b))


@_lookup.host_type
class _SortKey:
    """The key ``list.sort`` runs natively with: the program's key function
    interpreted, and a key that takes Python code to compare wrapped in
    :class:`_OrderKey` (plain ones stay as they are, compared in C)."""

    __slots__ = ("vm", "key")

    def __init__(self, vm, key):
        self.vm = vm
        self.key = key

    def __call__(self, item):
        key = item if self.key is None else self.vm.call(self.key, (item,))
        return key if _plain_key(key) else _OrderKey(self.vm, key)


@lookaside(builtins.sorted)
def _sorted(vm, args, kwargs):
    if len(args) != 1 or (kwargs and set(kwargs) - {"key", "reverse"}):
        return _native(sorted, args, kwargs)
    items = list(_hinted_iterable_arg(vm, args[0]))
    _sort_list(vm, items, kwargs or {})
    return items


def _sort_list(vm, items, kwargs):
    """``items.sort(**kwargs)`` by CPython's own sort (which empties the list
    while it sorts and reports a mutation), with the key function and the
    comparisons that need Python code interpreted."""
    key = kwargs.get("key")
    if key is None and all(_plain_key(item) for item in items):
        return items.sort(**kwargs)
    return items.sort(key=_SortKey(vm, key), reverse=kwargs.get("reverse", False))


def _list_sort(vm, self, args, kwargs):
    if args or (kwargs and set(kwargs) - {"key", "reverse"}) or type(self) is not list:
        return _native(self.sort, args, kwargs)
    _sort_list(vm, self, kwargs or {})


METHOD_LOOKASIDES[(list, "sort")] = _list_sort


_NOTHING = object()


def _min_max(native, op):
    def run(vm, args, kwargs):
        if kwargs and set(kwargs) - {"key", "default"}:
            return _native(native, args, kwargs)
        kwargs = dict(kwargs or {})
        key = kwargs.pop("key", None)
        if len(args) == 1:
            items = _iterable_arg(vm, args[0])
        elif len(args) > 1:
            if "default" in kwargs:
                return _native(native, args, kwargs)
            items = args
        else:
            return _native(native, args, kwargs)
        if key is not None:
            key = interpreted(vm, key)
        # One item at a time, as C's min/max: the best so far is kept, every
        # other item (and key) released before the next one exists.
        best = best_key = _NOTHING
        for item in items:
            k = item if key is None else key(item)
            if best is _NOTHING or _order(vm, op, k, best_key):
                best, best_key = item, k
            del item, k
        if best is _NOTHING:
            return _native(native, ([],), kwargs)
        return best

    return run


lookaside(builtins.min)(_min_max(min, "<"))
lookaside(builtins.max)(_min_max(max, ">"))


@lookaside(functools.reduce)
def _reduce(vm, args, kwargs):
    if kwargs or not 2 <= len(args) <= 3:
        return _native(functools.reduce, args, kwargs)
    return functools.reduce(interpreted(vm, args[0]), _iterable_arg(vm, args[1]), *args[2:])


def _consuming(native, iterable_arg):
    """Builtins that only iterate their single argument (``list(x)``...)."""

    def run(vm, args, kwargs):
        if len(args) == 1 and not kwargs and type(args[0]) not in NATIVE_TYPES:
            return native(iterable_arg(vm, args[0]))
        return _native(native, args, kwargs)

    return run


def _hinted_iterable_arg(vm, obj):
    """:func:`_iterable_arg` for C code that asks ``obj`` for a length hint
    too (``list``, ``tuple``, ``sorted``)."""
    if type(obj) in NATIVE_TYPES:
        return obj
    return iterate_hinted(vm, obj)


for _target in (list, tuple):
    lookaside(_target)(_consuming(_target, _hinted_iterable_arg))
for _target in (set, frozenset, enumerate):
    lookaside(_target)(_consuming(_target, _iterable_arg))


def _with_callbacks(native, callbacks=(), iterables=(), names=()):
    """C functions that call a Python function they are given (a key, a
    predicate...): the callable at a position in ``callbacks`` or passed by
    a keyword in ``names`` runs interpreted, and the iterable at a position
    in ``iterables`` (which they iterate at once) has its Python protocol
    interpreted.  A non-callable is passed as is, for the native error."""

    def run(vm, args, kwargs):
        args = list(args)
        for i in callbacks:
            if i < len(args) and callable(args[i]):
                args[i] = interpreted(vm, args[i])
        for i in (range(len(args)) if iterables == "all" else iterables):
            if i < len(args):
                args[i] = _iterable_arg(vm, args[i])
        if kwargs:
            kwargs = {k: interpreted(vm, v) if k in names and callable(v) else v
                      for k, v in kwargs.items()}
        return _native(native, args, kwargs)

    return run


for _target, _spec in [
        (itertools.groupby, dict(callbacks=(1,), iterables=(0,), names=("key",))),
        (itertools.accumulate, dict(callbacks=(1,), iterables=(0,), names=("func",))),
        (itertools.starmap, dict(callbacks=(0,), iterables=(1,))),
        (itertools.filterfalse, dict(callbacks=(0,), iterables=(1,))),
        (itertools.takewhile, dict(callbacks=(0,), iterables=(1,))),
        (itertools.dropwhile, dict(callbacks=(0,), iterables=(1,))),
        (functools.cmp_to_key, dict(callbacks=(0,), names=("mycmp",))),
        (bisect.bisect_left, dict(names=("key",))),
        (bisect.bisect_right, dict(names=("key",))),
        (bisect.insort_left, dict(names=("key",))),
        (bisect.insort_right, dict(names=("key",))),
        # They call iter() on their arguments at once.
        (itertools.zip_longest, dict(iterables="all")),
        (itertools.product, dict(iterables="all")),
        (itertools.cycle, dict(iterables=(0,))),
        (itertools.islice, dict(iterables=(0,))),
        (itertools.compress, dict(iterables=(0, 1))),
        (itertools.pairwise, dict(iterables=(0,))),
        (itertools.permutations, dict(iterables=(0,))),
        (itertools.combinations, dict(iterables=(0,))),
        (itertools.combinations_with_replacement, dict(iterables=(0,)))]:
    lookaside(_target)(_with_callbacks(_target, **_spec))


def _lazy_iterable(vm, obj):
    """``obj`` for C code that calls iter() on it only when it gets there."""
    if type(obj) in NATIVE_TYPES:
        return obj
    return _lazily(vm, obj)


def _lazily(vm, obj):
    yield from _iterable_arg(vm, obj)


@lookaside(itertools.chain)
def _chain(vm, args, kwargs):
    return _native(itertools.chain, [_lazy_iterable(vm, a) for a in args], kwargs)


@lookaside(builtins.any)
def _any(vm, args, kwargs):
    if len(args) != 1 or kwargs:
        return _native(any, args, kwargs)
    for value in _iterable_arg(vm, args[0]):
        if vm.truth(value):
            return True
        del value  # released before the next item exists, as in C
    return False


@lookaside(builtins.all)
def _all(vm, args, kwargs):
    if len(args) != 1 or kwargs:
        return _native(all, args, kwargs)
    for value in _iterable_arg(vm, args[0]):
        if not vm.truth(value):
            return False
        del value  # released before the next item exists, as in C
    return True


@lookaside(builtins.zip)
def _zip(vm, args, kwargs):
    return _native(zip, [_iterable_arg(vm, a) for a in args], kwargs)


@lookaside(builtins.sum)
def _sum(vm, args, kwargs):
    if not 1 <= len(args) <= 2 or (kwargs and set(kwargs) - {"start"}):
        return _native(sum, args, kwargs)
    start = args[1] if len(args) == 2 else (kwargs or {}).get("start", 0)
    if isinstance(start, (str, bytes, bytearray)):
        return _native(sum, ([], start), None)
    source = args[0]
    if type(source) is range or type(source) in NATIVE_TYPES and type(start) in NATIVE_TYPES \
            and all(type(x) in NATIVE_TYPES for x in source):
        return sum(source, start)  # a container of builtin values: all native
    # One item at a time, each released once added (as C's sum does).
    total = start
    for value in _iterable_arg(vm, source):
        total = vm.binary_op(0, total, value)
        del value
    return total


@lookaside(dict)
def _dict(vm, args, kwargs):
    if len(args) == 1 and type(args[0]) not in NATIVE_TYPES and not kwargs:
        source = args[0]
        keys = lookup(type(source), "keys")
        if keys is not MISSING:
            result = {}
            for k in vm.iterate(vm.call_special(keys, source)):
                result[k] = vm.getitem(source, k)
            return result
        return dict(_iterable_arg(vm, source))
    return _native(dict, args, kwargs)


@lookaside(builtins.reversed)
def _reversed(vm, args, kwargs):
    if len(args) == 1 and not kwargs:
        method = lookup(type(args[0]), "__reversed__")
        if needs_interpreter(method):
            return vm.call_special(method, args[0])
    return _native(reversed, args, kwargs)


@lookaside(str.join)
def _str_join(vm, args, kwargs):
    if len(args) == 2 and not kwargs:
        return str.join(args[0], _iterable_arg(vm, args[1]))
    return _native(str.join, args, kwargs)


def _bound_str_join(vm, self, args, kwargs):
    if len(args) == 1 and not kwargs:
        return str.join(self, _iterable_arg(vm, args[0]))
    return _native(self.join, args, kwargs)


METHOD_LOOKASIDES[(str, "join")] = _bound_str_join


def _sub_arguments(repl, string, count=0):
    return repl, string, count


def _pattern_sub(name):
    """``Pattern.sub``/``subn``: a callable replacement, and the parsing of a
    template with backslashes, run interpreted.

    3.11's ``_sre`` calls ``re._subx(pattern, template)`` for a literal or a
    function to call per match; 3.12+ call ``re._compile_template``, whose
    result (a C template object, behind a C ``lru_cache``) is expanded
    natively: calling it interpreted first leaves the native call a cache hit.
    """

    def run(vm, pattern, args, kwargs):
        native = getattr(pattern, name)
        try:
            repl, string, count = _sub_arguments(*args, **(kwargs or {}))
        except TypeError:
            repl = MISSING
        if repl is MISSING:  # outside the except block: no __context__
            return _native(native, args, kwargs)
        if isinstance(repl, (str, bytes)) and not callable(repl):
            if (b"\\" if isinstance(repl, bytes) else "\\") not in repl:
                return native(repl, string, count)
            re_module = sys.modules["re"]
            if not hasattr(re_module, "_subx"):  # 3.12+
                vm.call(re_module._compile_template, (pattern, repl))
                return native(repl, string, count)
            # _sre calls re._subx(pattern, template): a literal or a function.
            template = vm.call(re_module._subx, (pattern, repl))
            if callable(template):
                repl = interpreted(vm, template)
            else:
                repl = lambda match: template  # noqa: E731  (the literal, as is)
        elif callable(repl):
            repl = interpreted(vm, repl)
        return native(repl, string, count)

    return run


METHOD_LOOKASIDES[(type(re.compile("")), "sub")] = _pattern_sub("sub")
METHOD_LOOKASIDES[(type(re.compile("")), "subn")] = _pattern_sub("subn")


# -- typing's C types (3.12+) -----------------------------------------------
# From 3.12, TypeVar, ParamSpec, TypeVarTuple and Generic are C types whose
# methods below only call a function of the typing module with their
# arguments (``call_typing_func_object`` in Objects/typevarobject.c).  The
# lookasides make that call through the interpreter.
def _typing_bridge(function_name):
    def run(vm, owner, args, kwargs):
        import typing

        return vm.call(getattr(typing, function_name), (owner,) + tuple(args), kwargs)

    run.__qualname__ = "lookaside(typing.%s)" % function_name
    return run


def _generic_class_getitem(vm, owner, args, kwargs):
    """``Generic.__class_getitem__`` (C, 3.12+) calls
    ``typing._generic_class_getitem(cls, params)``; other C
    ``__class_getitem__`` (``list[int]``) run natively."""
    if isinstance(owner, type) and lookup(owner, "__class_getitem__") is _GENERIC_CLASS_GETITEM:
        return _typing_bridge("_generic_class_getitem")(vm, owner, args, kwargs)
    return _native(getattr(owner, "__class_getitem__"), args, kwargs)


import _typing  # noqa: E402  (3.11's has none of these types: typing.py defines them)

if hasattr(_typing, "TypeVar"):  # 3.12+
    for _owner, _name, _function in (
            (_typing.TypeVar, "__typing_subst__", "_typevar_subst"),
            (_typing.ParamSpec, "__typing_subst__", "_paramspec_subst"),
            (_typing.ParamSpec, "__typing_prepare_subst__", "_paramspec_prepare_subst"),
            (_typing.TypeVarTuple, "__typing_prepare_subst__", "_typevartuple_prepare_subst")):
        METHOD_LOOKASIDES[(_owner, _name)] = _typing_bridge(_function)
    _GENERIC_CLASS_GETITEM = vars(_typing.Generic)["__class_getitem__"]
    METHOD_LOOKASIDES[(type, "__class_getitem__")] = _generic_class_getitem
