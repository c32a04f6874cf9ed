"""Call dispatch: the one call ladder, and the hooks that extend it.

``call(vm, fn, args, kwargs)`` is the single entry point for every call the
interpreted program makes (``CALL``, ``CALL_FUNCTION_EX``, and calls made by
protocols).  It goes down one ladder:

* Python functions (and bound methods of them) run in a new interpreted
  frame;
* a callable registered in :data:`INTERCEPTIONS` is replaced by its handler
  (the *lookasides*, pyinterp/interp/lookasides.py: builtins that need the
  caller's frame or call back into Python, ``super``, ``locals``,
  ``sorted(key=...)``...);
* C callables run natively (a bound C method listed in
  :data:`METHOD_LOOKASIDES` by its replacement);
* classes are constructed with ``type.__call__``'s algorithm, so a Python
  ``__new__``/``__init__``/metaclass ``__call__`` is interpreted;
* ``functools.partial`` is unwrapped;
* objects with a Python ``__call__`` have it interpreted;
* everything else is C code and is called natively.

Hooks.  An interpreter subclass (graph capture, the hybrid runner) changes
what happens at the ladder's decision points by overriding these methods of
:class:`~pyinterp.interp.vm.Interpreter`, never the ladder itself.  Each
takes the interpreter first; the plain interpreter's are this module's
names of the same name (functions, or None where the ladder has no step):

``divert_call(vm, fn, args, kwargs)``
    Consulted first, on every call that enters the ladder: None to go on
    down it, or the function ``(vm, fn, args, kwargs)`` that makes this call
    instead (:func:`call`, this module's plain ladder, for the plain
    behaviour).  The plain interpreter has none (the attribute is None).
``call_function(vm, func, args, kwargs)``
    A Python function's entry (also ``CALL``'s fast path).
``call_native(vm, fn, args, kwargs)``
    A C callable, or an object whose ``__call__`` is C code.  The plain
    ladder calls the builtin callable types itself (the commonest calls pay
    for no extra Python call); a copy with its own hook sends every C call
    there, and the hook makes its plain native call with :func:`call`.
``construct(vm, cls, args, kwargs)``
    A class called.
``call_object(vm, fn, method, args, kwargs)``
    An object whose type has a Python ``__call__`` (``method``).
``interception_mode``
    Which handler of an :data:`INTERCEPTIONS` entry the interpreter runs:
    :data:`PLAIN` or :data:`CAPTURE`.

The hooks are bound into a subclass's own copy of the ladder when the class
is made (:func:`ladder`, called by ``Interpreter.__init_subclass__``), so no
call pays an attribute lookup for them.  The recursion of the ladder (a
bound method's function, a partial's callable) goes through the same copy;
:func:`construct` and the plain hooks call this module's plain ladder and
:func:`call_function`.
"""
import functools
import re
import types

from .binding import bind_arguments
from .model.dunders import bind, call_special, needs_interpreter
from .frame import Frame, decoded_for, release_locals
from .generators import start_generator
from .model.lookup import HOST_TYPES, MISSING, lookup

FunctionType = types.FunctionType
MethodType = types.MethodType

_BuiltinMethodType = type(re.compile("").sub)
"""``builtin_method``: bound C methods declared METH_METHOD (``Pattern.sub``)."""
_NATIVE_CALLABLES = frozenset({
    types.BuiltinFunctionType, _BuiltinMethodType, types.MethodDescriptorType,
    types.WrapperDescriptorType, types.MethodWrapperType,
    types.ClassMethodDescriptorType,
})

INTERCEPTIONS = {}
"""The one registry of intercepted calls: ``id(callable) -> (callable,
plain handler, capture handler)``.  A handler is called as ``handler(vm,
args, kwargs)`` in place of the callable (``args`` a sequence, ``kwargs`` a
dict or None).  Register with :func:`intercept`."""
PLAIN = 1
"""Index of the plain handler in an :data:`INTERCEPTIONS` entry: the one
every interpreter runs, capture included unless it registered its own."""
CAPTURE = 2
"""Index of the capture handler: the one the capture interpreter runs while
it captures (its own entry if it registered one, else the plain handler).
After a break capture runs the plain ladder, hence the plain handler."""
METHOD_LOOKASIDES = {}
"""(type, method name) -> replacement(vm, self, args, kwargs), for bound C
methods such as ``some_list.sort``: they are made afresh on each attribute
read, so they have no identity to register in :data:`INTERCEPTIONS`."""


def intercept(fn, handler, mode=PLAIN):
    """Register ``handler(vm, args, kwargs)`` to run in place of calls of
    ``fn``: as its plain handler (``mode=PLAIN``, which capture also runs
    unless it has its own), or as its capture handler (``mode=CAPTURE``,
    which wins while capture is on).  An entry whose handler for a mode is
    None is not intercepted in that mode."""
    entry = INTERCEPTIONS.get(id(fn))
    plain = captured = None
    if entry is not None and entry[0] is fn:
        plain, captured = entry[PLAIN], entry[CAPTURE]
    if mode == PLAIN:
        if captured is plain:  # capture has no handler of its own
            captured = handler
        plain = handler
    else:
        captured = handler
    INTERCEPTIONS[id(fn)] = (fn, plain, captured)


def interception(fn, mode=PLAIN):
    """The handler registered for calls of ``fn`` in ``mode``, or None."""
    entry = INTERCEPTIONS.get(id(fn))
    if entry is not None and entry[0] is fn:
        return entry[mode]
    return None


def call(vm, fn, args, kwargs=None):
    """Call ``fn(*args, **kwargs)`` on behalf of the interpreted program.

    The ladder.  Its hooks are the module-level names ``call_function``,
    ``call_native``, ``construct``, ``call_object`` and
    ``interception_mode``: here the plain ones; a copy made by
    :func:`ladder` runs this same code with its own (and consults its
    ``divert_call`` first)."""
    tp = type(fn)
    if tp is FunctionType:
        return call_function(vm, fn, args, kwargs)
    if tp is MethodType:
        return call(vm, fn.__func__, (fn.__self__,) + tuple(args), kwargs)
    entry = INTERCEPTIONS.get(id(fn))
    if entry is not None and entry[0] is fn:
        handler = entry[interception_mode]
        if handler is not None:
            return handler(vm, args, kwargs)
    if tp in _INLINE_NATIVE:
        if (tp is types.BuiltinFunctionType or tp is _BuiltinMethodType) and METHOD_LOOKASIDES:
            owner = fn.__self__
            replacement = METHOD_LOOKASIDES.get((type(owner), fn.__name__))
            if replacement is not None:
                return replacement(vm, owner, args, kwargs)
        if kwargs:
            return fn(*args, **kwargs)
        return fn(*args)
    if isinstance(fn, type):
        return construct(vm, fn, args, kwargs)
    if tp is functools.partial:
        merged = {**fn.keywords, **kwargs} if kwargs else fn.keywords
        return call(vm, fn.func, fn.args + tuple(args), merged)
    method = lookup(tp, "__call__")
    if needs_interpreter(method):
        return call_object(vm, fn, method, args, kwargs)
    return call_native(vm, fn, args, kwargs)


_INLINE_NATIVE = _NATIVE_CALLABLES
"""The C callables the ladder calls itself (the commonest calls: no hook to
call); in a copy with a ``call_native`` hook, none: all go to the hook."""
HOOKS = ("divert_call", "call_function", "call_native", "construct", "call_object",
         "interception_mode")
"""The names of the ladder's hooks (attributes of an interpreter class)."""
LADDER_HOOKS = ("divert_call", "call_native", "construct", "call_object")
"""The hooks only the ladder calls (``call_function`` is a hook too, and
also the entry point of ``CALL``'s fast path)."""
divert_call = None
"""The plain ladder has no first step."""
interception_mode = PLAIN


def ladder(hooks):
    """A copy of :func:`call` that runs with the hooks of ``hooks`` (an
    interpreter class, see :data:`HOOKS`): the same code object, with a
    namespace of its own where the hooks' names are bound to them, and
    ``call`` (the recursion) to the copy's entry: the ladder itself, or a
    first step that consults a ``divert_call`` hook.  (Global names, unlike
    a closure's cells, cost a call nothing to set up; and the plain ladder
    has no step it skips.)"""
    namespace = dict(globals())
    namespace.update((name, getattr(hooks, name)) for name in HOOKS)
    if namespace["call_native"] is not call_native:
        namespace["_INLINE_NATIVE"] = frozenset()
    body = types.FunctionType(call.__code__, namespace, call.__name__, call.__defaults__)
    divert = namespace["divert_call"]

    def diverting(vm, fn, args, kwargs=None):
        diverted = divert(vm, fn, args, kwargs)
        if diverted is not None:
            return diverted(vm, fn, args, kwargs)
        return body(vm, fn, args, kwargs)

    entry = body if divert is None else diverting
    entry.__doc__, entry.__qualname__ = call.__doc__, call.__qualname__
    namespace["call"] = entry
    return entry


def call_native(vm, fn, args, kwargs=None):
    """Call C code natively: a callable object whose ``__call__`` is C code
    (the builtin callable types the plain ladder calls itself)."""
    if kwargs:
        return fn(*args, **kwargs)
    return fn(*args)


def call_object(vm, fn, method, args, kwargs=None):
    """``fn(...)`` for an object whose type has a Python ``__call__``
    (``method``): interpreted, except for pyinterp's own helper types."""
    if type(fn) in HOST_TYPES:
        return fn(*args, **kwargs) if kwargs else fn(*args)
    if kwargs:
        return _call_special_kw(vm, method, fn, args, kwargs)
    return call_special(vm, method, fn, *args)


def _call_special_kw(vm, method, obj, args, kwargs):
    if type(method) is FunctionType:
        return call_function(vm, method, (obj,) + tuple(args), kwargs)
    return call(vm, bind(vm, method, obj, type(obj)), args, kwargs)


def call_function(vm, func, args, kwargs=None):
    """Run a Python function in a new interpreted frame."""
    code = func.__code__
    decoded = decoded_for(code)
    if kwargs or len(args) != decoded.plain_argcount:
        args = bind_arguments(func, code, args, kwargs)
    frame = Frame(code, func.__globals__, None, func, func.__builtins__, decoded,
                  [*args, *decoded.after_arguments])
    if decoded.is_generator:
        return start_generator(vm, frame)
    vm.resume(frame)
    release_locals(frame)
    return frame.retval


def construct(vm, cls, args, kwargs):
    """``cls(*args, **kwargs)``: ``type.__call__`` with Python hooks interpreted."""
    meta = type(cls)
    if meta is type:
        # The common case first: object.__new__ and a Python __init__.
        init = lookup(cls, "__init__")
        if type(init) is FunctionType and lookup(cls, "__new__") is object.__new__:
            # (With the arguments: object.__new__ refuses them when some
            # class assigned __new__ = object.__new__, CPython's check.)
            obj = object.__new__(cls, *args, **kwargs) if kwargs \
                else object.__new__(cls, *args)
            _initialize(vm, init, obj, args, kwargs)
            return obj
    else:
        meta_call = lookup(meta, "__call__")
        if meta_call is not type.__call__ and needs_interpreter(meta_call):
            return _call_special_kw(vm, meta_call, cls, args, kwargs or {})
    if len(args) == 3 and issubclass(cls, type):
        args = (args[0], args[1], namespace_with_module(vm, args[2]))
    if cls is type:
        return type(*args, **(kwargs or {}))
    new = lookup(cls, "__new__")
    init = lookup(cls, "__init__")
    new_is_python = isinstance(new, staticmethod) and needs_interpreter(new.__func__) \
        or type(new) is FunctionType
    if not new_is_python and not needs_interpreter(init):
        return cls(*args, **kwargs) if kwargs else cls(*args)
    if new_is_python:
        new_func = new.__func__ if isinstance(new, staticmethod) else new
        obj = call(vm, new_func, (cls,) + tuple(args), kwargs)
    else:
        obj = new(cls, *args, **kwargs) if kwargs else new(cls, *args)
    if cls not in type(obj).__mro__:
        return obj
    init = lookup(type(obj), "__init__")
    if needs_interpreter(init):
        _initialize(vm, init, obj, args, kwargs)
    elif init is not MISSING:
        if kwargs:
            init(obj, *args, **kwargs)
        else:
            init(obj, *args)
    return obj


def _initialize(vm, init, obj, args, kwargs):
    """Call a Python-level ``__init__``; it must return None."""
    result = _call_special_kw(vm, init, obj, args, kwargs or {})
    if result is not None:
        raise TypeError("__init__() should return None, not '%s'" % type(result).__name__)


def namespace_with_module(vm, namespace):
    """The class namespace ``type.__new__`` should see, with ``__module__`` set.

    ``type.__new__`` names a class's module after ``__name__`` in the globals
    of the running Python frame when the namespace has no ``__module__``
    (``type("X", (), {})``).  Called natively from here, that frame would be
    pyinterp's own, so the interpreted caller's module is filled in, on a
    copy (``type.__new__`` copies the namespace anyway).
    """
    frame = vm.top
    if frame is None or not isinstance(namespace, dict) \
            or dict.__contains__(namespace, "__module__"):
        return namespace
    module = dict.get(frame.globals, "__name__", MISSING)
    if module is MISSING:
        return namespace
    namespace = dict.copy(namespace)
    namespace["__module__"] = module
    return namespace

