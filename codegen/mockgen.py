"""Mock generation: replay a traced run without interpreting it.

The generated ``mock(args, kwargs)``:

1. loads each graph input by its access path and calls the compiled graph
   (``outs = graph(s1, s4, ...)``);
2. replays the run's writes to outside state in program order: ``setattr``,
   ``delattr``, item stores and deletes, container methods (``append``...),
   global and cell stores, deferred calls such as ``print``;
3. rebuilds the return value: literals are constants, tensors computed by
   the graph come from ``outs`` (floats computed from tensor data too, read
   with ``.item()``; text made from those floats is made again from them),
   objects from outside come by their path (so ``f(x) is x`` still holds),
   containers and objects created by the run are built anew on every call.

Values are planned twice: :func:`graph_outputs` first finds the tensors the
mock needs from the graph (the graph's outputs), then :class:`MockBuilder`
emits the code.
"""
import enum
import struct
import sys
import types
from collections import OrderedDict

import attrs

from ..refgraph.expr import Build, Call, GetAttr, GetItem, Local, Obj, const, is_literal
from ..refgraph.fxgraph import Unrepresentable
from ..refgraph.symbolic import SymbolicInt
from .function import GeneratedFunction

_IMMUTABLE_LEAVES = (int, float, bool, str, bytes, complex, type(None), type(Ellipsis),
                     range, slice)


def rebuild_object(cls, base, state, items=None):
    """A new ``cls`` instance with ``state`` as its attributes (and
    ``items``: the keys and values of a dict subclass, the items of a
    list, tuple, set or frozenset subclass), made without calling
    ``__init__``: how the mock recreates objects (dataclasses,
    ``ModelOutput``, a ``StoppingCriteriaList``) that the traced run
    created.  ``base``: ``_layout_base(cls)``, found when the mock was
    made (a class's layout cannot change)."""
    if base is tuple or base is frozenset:
        obj = base.__new__(cls, items or ())  # (immutable: the items go in at birth)
    else:
        obj = cls.__new__(cls)
    if state:
        try:  # (its dict at C level: a Python __getattribute__ does not run)
            object.__getattribute__(obj, "__dict__").update(state)
        except AttributeError:  # __slots__
            for name, value in state.items():
                object.__setattr__(obj, name, value)
    if items and (base is dict or base is OrderedDict):
        # The item store of the builtin mapping: bypasses overrides
        # (ModelOutput.__setitem__) and keeps an OrderedDict's order.
        setitem = base.__setitem__
        for key, value in items.items():
            setitem(obj, key, value)
    elif items and base is list:
        list.extend(obj, items)
    elif items and base is set:
        set.update(obj, items)
    return obj


def _layout_base(tp):
    """The first class in ``tp``'s MRO that Python code did not define:
    the C type whose layout its instances have (``object`` for a plain
    class, ``list`` for a ``list`` subclass, ``deque`` for a ``deque``
    subclass)."""
    for base in tp.__mro__:
        if not _python_defined(base):
            return base
    return object


def _python_defined(cls):
    """True for a class made by a ``class`` statement.  A heap type that
    Python can change (3.12+ makes some C types, ``deque`` and
    ``defaultdict`` among them, heap types too, but immutable ones), whose
    instances have its base's layout plus at most the instance dict, the
    weak reference list and its own ``__slots__``."""
    flags = cls.__flags__
    if not flags & _HEAPTYPE or flags & _IMMUTABLETYPE or cls.__base__ is None:
        return False
    slots = cls.__dict__.get("__slots__", ())
    added = cls.__basicsize__ - cls.__base__.__basicsize__ \
        - _POINTER * (1 if isinstance(slots, str) else len(slots))
    return 0 <= added <= 2 * _POINTER


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: allocated at run time
_IMMUTABLETYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: no attribute may be set on it
_POINTER = struct.calcsize("P")

# The C bases whose whole state rebuild_object restores (the items, the
# instance dict); a subclass of any other (a deque, a defaultdict, an
# exception, str) keeps state there that it would lose.
_REBUILT_BASES = (object, dict, OrderedDict, list, tuple, set, frozenset,
                  types.SimpleNamespace)


@attrs.define
class Walker:
    """Classifies the values a mock must produce (shared by both passes)."""

    torch: object
    source_of: object
    is_graph_value: object
    volatile: object = frozenset()
    scalars: object = None  # floats computed from tensor data (graph outputs)
    # Text (and rounded floats) made from those floats: ``derived.recipe(v)``
    # is ``(fn, operands)``, made again on every call as ``fn(*operands)``.
    derived: object = None
    arrays: object = None  # NumPy arrays and scalars computed from tensor data (outputs)
    ints: object = None  # ints from tensor data the result holds (0-d int64 graph outputs)

    def kind(self, value):
        torch = self.torch
        if type(value) is float and self.scalars is not None and self.scalars.tracks(value) \
                or self.ints is not None and self.ints.tracks(value):
            return "scalar"
        if self.arrays and self.arrays.tracks(value):
            # (an array from outside, a graph input, is itself by its path)
            return "source" if self.source_of(value) is not None else "array"
        tp = type(value)
        if tp is SymbolicInt:  # (one that no graph output gives back)
            raise Unrepresentable("data-dependent-value", "an int the graph computes reaches the "
                                  "result or a side effect")
        if (tp is str or tp is float) and self.derived is not None \
                and self.derived.recipe(value) is not None:
            return "derived"
        if torch is not None and issubclass(tp, torch.Tensor):
            if self.source_of(value) is not None:
                return "source"
            if self.is_graph_value(value):
                return "output"
            raise Unrepresentable("untracked-tensor",
                                  "the result holds a tensor no recorded op produced")
        if type(value) is int and value in self.volatile:
            raise Unrepresentable("impure-call", "id() of an object from outside reaches the "
                                  "result or a side effect")
        if tp in _IMMUTABLE_LEAVES or (torch is not None and issubclass(
                tp, (torch.dtype, torch.device, torch.Size, torch.layout))):
            return "literal"
        if self.source_of(value) is not None:
            return "source"
        if tp in _BOUND_METHODS and not issubclass(type(value.__self__),
                                                   (types.ModuleType, type(None))):
            return "method"
        if _is_constant(value):
            return "constant"
        if issubclass(tp, enum.Enum):  # (a member no one can make anew)
            raise Unrepresentable("unsupported-value", "the result holds a member of %s, "
                                  "a class the traced run defined" % tp.__qualname__)
        if tp in (tuple, list, dict, set, frozenset):
            return "container"
        if issubclass(tp, tuple) and hasattr(tp, "_fields"):
            return "namedtuple"
        if _rebuildable(value):
            return "object"
        raise Unrepresentable("unsupported-value",
                              "cannot rebuild a %s created by the traced run"
                              % tp.__qualname__)

    def children(self, value):
        """The values inside a container or rebuildable object."""
        kind = self.kind(value)
        if kind == "method":
            return [value.__self__]
        if kind == "derived":
            return list(self.derived.recipe(value)[1])
        if kind in ("container", "namedtuple"):
            if type(value) is dict:
                return list(value.keys()) + list(value.values())
            return list(value)
        if kind == "object":
            state, items, _ = _object_state(value)
            if type(items) is list:
                return list(state.values()) + items
            return list(state.values()) + list(items.values()) + list(items.keys())
        return []


def graph_outputs(walker, values):
    """The graph-computed tensors reachable from ``values``, in first-seen order."""
    outputs = []
    seen = set()
    stack = list(reversed(values))
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        kind = walker.kind(value)
        if kind == "output" or kind == "scalar" or kind == "array":
            outputs.append(value)
        else:
            stack.extend(reversed(walker.children(value)))
    return outputs


class MockBuilder:
    """Emits the mock for one trace."""

    def __init__(self, walker, outputs):
        self.w = walker
        self.out_index = {id(t): i for i, t in enumerate(outputs)}
        self.g = GeneratedFunction("mock", ["args", "kwargs"], "<pyinterp-mock>")
        self._built = {}
        self._building = set()
        self.graph_code = None

    def call_graph(self, graph, input_sources, rerunnable=True, check=None):
        """``outs = graph(*inputs)``.  ``rerunnable``: a graph that raises
        leaves no trace (it mutates no input), so the function may run
        again natively in its place (:func:`graph_raised`).  ``check``:
        called with ``outs`` right after, before anything else of the mock
        (it raises where a value the graph assumed differs)."""
        inputs = tuple(self.g.resolve(s) for s in input_sources)
        self.g.assign("outs", Call(Obj(graph, "graph"), inputs))
        if check is not None:
            self.g.assign("_", Call(Obj(check, check.__name__), (Local("outs"),)))
        self.graph_code = _entered_code(graph) if rerunnable else None

    def build(self):
        """The mock function and its listing (``g.build()``), with the code
        of the frame its graph call enters, for :func:`graph_raised`."""
        fn, listing = self.g.build()
        fn.graph_code = self.graph_code
        return fn, listing

    def value(self, value):
        """An expression producing ``value`` on every call."""
        kind = self.w.kind(value)
        if kind == "literal":
            return const(value) if is_literal(value) else Obj(value, repr(value))
        if kind == "output":
            return GetItem(Local("outs"), const(self.out_index[id(value)]))
        if kind == "source":
            return self.g.resolve(self.w.source_of(value))
        if kind == "constant":
            return Obj(value, getattr(value, "__qualname__", type(value).__name__))
        if kind == "method":
            name = value.__func__.__name__ if type(value) is types.MethodType else value.__name__
            return GetAttr(self.value(value.__self__), name)
        key = id(value)
        if key in self._built:
            return Local(self._built[key])
        if key in self._building:
            raise Unrepresentable("unsupported-value", "a returned object refers to itself")
        self._building.add(key)
        try:
            expr = self._construct(kind, value)
        finally:
            self._building.discard(key)
        if type(value) in (tuple, frozenset) and kind == "container":
            return expr  # immutable: no identity to preserve
        name = self.g.new_local("v")
        self.g.assign(name, expr)
        self._built[key] = name
        return Local(name)

    def _construct(self, kind, value):
        tp = type(value)
        if kind == "scalar":  # a 0-d float64 (or int64) graph output, read once
            output = GetItem(Local("outs"), const(self.out_index[id(value)]))
            return Call(GetAttr(output, "item"), ())
        if kind == "array":  # a graph output back in NumPy: .numpy(), [()] for a scalar
            output = GetItem(Local("outs"), const(self.out_index[id(value)]))
            array = Call(GetAttr(output, "numpy"), ())
            return array if type(value).__name__ == "ndarray" else GetItem(array, const(()))
        if kind == "derived":  # round(s, 1), "%.2f" % s, f"{s:.3f}": made again
            fn, operands = self.w.derived.recipe(value)
            return Call(Obj(fn, getattr(fn, "__name__", "fn")), self._items(operands))
        if kind == "container":
            if tp is dict:
                return Build("dict", tuple((self.value(k), self.value(v)) for k, v in value.items()))
            if tp is frozenset:
                return Call(Obj(frozenset, "frozenset"), (Build("tuple", self._items(value)),))
            return Build(tp.__name__, self._items(value))
        if kind == "namedtuple":
            return Call(Obj(tp, tp.__qualname__), self._items(value))
        state, items, base = _object_state(value)
        args = [Obj(tp, tp.__qualname__), Obj(base, base.__qualname__),
                Build("dict", tuple((const(k), self.value(v)) for k, v in state.items()))]
        if type(items) is list:
            args.append(Build("tuple", self._items(items)))
        elif items:
            args.append(Build("dict", tuple((self.value(k), self.value(v))
                                            for k, v in items.items())))
        return Call(Obj(rebuild_object, "rebuild_object"), tuple(args))

    def _items(self, values):
        return tuple(self.value(v) for v in values)

    # -- side effects ---------------------------------------------------------
    def preload(self, effects, values):
        """Evaluate now, before any effect is replayed, every path that goes
        through an object an effect writes, for the effects' targets and
        operands and for ``values`` (what the mock returns).  A path names
        the object that was there before the call (where the run first read
        it); a replayed write may move it (``del a[0]`` moves ``a[1]``)."""
        written = {eff.target for eff in effects if eff.target is not None}
        if not written:
            return
        needed = [eff.target for eff in effects if eff.target is not None]
        pending = list(values)
        for eff in effects:
            pending += list(eff.operands) + list(eff.kwargs.values())
            if eff.kind in ("setitem", "delitem") and not is_literal(eff.name):
                pending.append(eff.name)
        seen = set()
        while pending:
            value = pending.pop()
            if id(value) in seen:
                continue
            seen.add(id(value))
            if self.w.kind(value) == "source":
                needed.append(self.w.source_of(value))
            else:
                pending.extend(self.w.children(value))
        for source in needed:
            base = source.base
            while base is not None and base not in written:
                base = base.base
            if base is not None:
                self.g.resolve(source)

    def effect(self, eff):
        g = self.g
        if eff.kind == "call" and eff.target is None:
            # A deferred call (print, logging, warnings) through the
            # trampoline that carries the user's file and line.
            bounce, fn = eff.name
            expr = Call(Obj(bounce, "at_" + bounce.__name__), (
                Obj(fn, getattr(fn, "__qualname__", "fn")),
                Build("tuple", self._items(eff.operands)),
                Build("dict", tuple((const(k), self.value(v)) for k, v in eff.kwargs.items()))))
        elif eff.kind == "call":
            expr = Call(GetAttr(g.resolve(eff.target), eff.name), self._items(eff.operands),
                        tuple((k, self.value(v)) for k, v in eff.kwargs.items()))
        else:
            target = g.resolve(eff.target)
            fn = {"setattr": setattr, "delattr": delattr}.get(eff.kind)
            if fn is not None:
                expr = Call(Obj(fn, fn.__name__), (target, const(eff.name)) + self._items(eff.operands))
            else:
                method = "__setitem__" if eff.kind == "setitem" else "__delitem__"
                expr = Call(GetAttr(target, method), (self.key(eff.name),) + self._items(eff.operands))
        g.line(lambda: g.c.render(expr), eff.site)
        g.c.emit(expr)
        g.e.pop_top()

    def key(self, key):
        return const(key) if is_literal(key) else self.value(key)

    def finish(self, result):
        g = self.g  # (the listing's closures keep g, never the builder and its values)
        expr = self.value(result)
        g.line(lambda: "return %s" % g.c.render(expr))
        g.c.emit(expr)
        g.e.return_value()
        return self.build()


def graph_raised(mock, exc):
    """True if ``exc``, raised by a call of ``mock``, came out of the
    compiled graph it calls first: nothing of the call has happened yet (a
    rerunnable graph mutates no input), so the function can run natively
    instead, with eager's side effects up to the failing op and eager's own
    exception.  Read from the traceback (no cost until something raises):
    the frame under the mock's is the graph's."""
    code = getattr(mock, "graph_code", None)
    if code is None:
        return False
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code is not mock.__code__:
        tb = tb.tb_next
    return tb is not None and tb.tb_next is not None and tb.tb_next.tb_frame.f_code is code


def _entered_code(fn):
    """The code object of the first Python frame a call of ``fn`` enters
    (a function, a bound method, a callable object with a Python
    ``__call__``), or None for C code."""
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if isinstance(fn, types.FunctionType):
        return fn.__code__
    call = getattr(type(fn), "__call__", None)
    return call.__code__ if isinstance(call, types.FunctionType) else None


_BOUND_METHODS = (types.MethodType, types.BuiltinMethodType, types.MethodWrapperType)


def _is_constant(value):
    """Objects the mock may hold as they are: classes, modules, builtins,
    pyinterp's own wrappers, and functions that carry no per-call state
    (no closure, literal defaults)."""
    if issubclass(type(value), (type, types.ModuleType, types.BuiltinFunctionType)):
        return True
    if getattr(type(value), "_pyinterp_constant", False):
        return True
    if issubclass(type(value), enum.Enum):
        # A member is a singleton of its class: the same object on every
        # call, held as it is, when the class is the module's own.
        tp = type(value)
        module = sys.modules.get(tp.__module__)
        return module is not None and _qualified(module, tp.__qualname__) is tp
    if type(value) is types.FunctionType:
        return value.__closure__ is None and is_literal(value.__defaults__ or ()) \
            and not value.__kwdefaults__
    return False


def _qualified(module, qualname):
    obj = module
    for part in qualname.split("."):
        d = getattr(obj, "__dict__", None)  # (its own namespace: no __getattr__ runs)
        obj = d.get(part) if d is not None else None
    return obj


def _rebuildable(value):
    tp = type(value)
    has_dict = _instance_dict(value) is not None
    if tp.__module__ == "builtins" and tp not in (object,):
        return False
    if callable(value) and not has_dict:
        return False
    if issubclass(tp, (types.FunctionType, types.ModuleType, type, types.GeneratorType,
                       types.CoroutineType, types.MethodType)):
        return False
    if _layout_base(tp) not in _REBUILT_BASES:
        return False
    return has_dict or bool(getattr(tp, "__slots__", ()))


def _instance_dict(value):
    """``value``'s instance ``__dict__``, read at C level (a Python
    ``__getattribute__`` does not run), or None."""
    try:
        return object.__getattribute__(value, "__dict__")
    except AttributeError:
        return None


def _object_state(value):
    """``value``'s attributes, its items (a builtin container's subclass)
    and its class's layout base (:func:`_layout_base`)."""
    state = dict(_instance_dict(value) or {})
    for cls in type(value).__mro__:
        for slot in getattr(cls, "__slots__", ()) if "__slots__" in cls.__dict__ else ():
            if slot not in ("__dict__", "__weakref__"):
                try:
                    state[slot] = object.__getattribute__(value, slot)
                except AttributeError:
                    pass
    base = _layout_base(type(value))
    if base is dict or base is OrderedDict:
        items = dict(dict.items(value))
    elif base in (list, tuple, set, frozenset):
        items = list(base.__iter__(value))  # (C level: a Python __iter__ does not run)
    else:
        items = {}
    return state, items, base
