"""The interpreter with capture on: the annotation rules of the opcodes.

:class:`CaptureInterpreter` is the plain :class:`~pyinterp.interp.vm.Interpreter`
with its data-model entry points (``load_attr``, ``getitem``...) wrapped:
each runs the real operation, then tells the RefGraph what was read from or
written to outside state.  Calls go down the core's one call ladder
(:mod:`pyinterp.interp.calls`); this class overrides its hooks only
(``divert_call``, ``call_function``, ``call_native``, ``construct``,
``call_object``).  Native calls are classified here (torch ops, neutral
builtins, consumers of containers, methods of outside containers, impure
calls, opaque C calls).  Calls handled by identity are capture's entries in
the interception registry (:mod:`.special_calls`); the instructions that
touch namespaces directly get capture variants (:mod:`.variants`).  With
capture inactive (after a break) every wrapper and hook goes straight to
the plain behaviour.  Each wrapper is registered in :mod:`.rules` (kind
``data_model``); importing this module checks that the class wraps exactly
those.

Capture runs none of the program's Python code that the program did not
run: it tests types (``issubclass(type(x), T)``; ``isinstance`` asks an
object that is not a ``T`` for its ``__class__``, which runs a Python
``__getattribute__``), reads instance dicts with ``object.__getattribute__``
and containers with the builtins' C methods.  What the run looks up on
classes is guarded through the lookup observer (:meth:`looked_up`).

Records (:class:`~.state.Capture`): owns ``interp`` (:class:`InterpState`:
the interpreter itself, its watched native calls, the volatile ids); reads
``recording``, ``breaks``, ``speculation`` and ``top`` (the top frame's
callees are counted through :meth:`.variants.TopFrame.count_callee`).
"""
import collections
import contextvars
import copyreg
import functools
import logging
import types

import attrs
import torch

from ..interp.model import attributes, containers, operators, text
from ..interp import calls, generators
from .partial import hybrid
from .values import arrays, float_builtins, float_text, scalars, tracked_ints
from .graphmend import speculate
from .torchfiles import is_torch_function
from . import (autograd_functions, callbacks, checkpointing, consumers, grad_hooks,  # noqa: F401
               lazy_modules, legacy_tensors, numpy_calls, rules, scripted,
               tensor_setters)  # (checkpointing: its interception)
from .consumers import CONSUMERS, HASH, ITEMS, REFS, TEXT, VALUE
from .special_calls import captured_call, deferred, is_deferred
from .state import RecordingMode
from .variants import captured_instructions
from ..interp.model.dunders import bind, needs_interpreter
from ..interp.model.lookup import MISSING, is_data_descriptor, lookup, python_getter
from .modules import GLOBAL_HOOK_NAMES, GLOBAL_HOOKS, MODULE_HOOKS, hooks_in_the_way
from ..refgraph import guards as G
from ..refgraph.expr import is_literal
from ..refgraph.sources import Attr, Item, Root
from ..interp.vm import Interpreter, checked_copy
from ..opcodes.fastpath import SCALAR_TYPES

Tensor = torch.Tensor
_PLAIN_TENSORS = (Tensor, torch.nn.Parameter)
FunctionType = types.FunctionType
MethodType = types.MethodType
_IMPURE_MODULES = frozenset({"random", "_random", "time", "os", "posix", "nt", "uuid",
                             "secrets", "socket", "select", "_io", "io", "datetime"})

# Builtins that read nothing but what the guards already fix (types).
_NEUTRAL = frozenset(id(f) for f in (isinstance, issubclass, callable, type))
# Torch functions that change global state the graph cannot record.
_GLOBAL_STATE_SETTERS = frozenset({
    "set_default_dtype", "set_default_device", "set_default_tensor_type",
    "use_deterministic_algorithms", "set_num_threads", "set_num_interop_threads",
    "set_flush_denormal", "set_float32_matmul_precision", "set_anomaly_enabled"})
_MODULE_GETATTR = torch.nn.Module.__getattr__
_WRAPPED_CALL = torch.nn.Module._wrapped_call_impl
_CALL_IMPL = torch.nn.Module._call_impl
_LRU_WRAPPER = type(functools.lru_cache(None)(lambda: None))
# An autocast context entered or left (its own instance may come from
# outside, a decorator's closure): enter and exit nodes (Capture.call_torch).
_AUTOCAST_METHODS = (torch.amp.autocast_mode.autocast.__enter__,
                     torch.amp.autocast_mode.autocast.__exit__)
_RNG_SETTERS = frozenset({"manual_seed", "seed", "set_rng_state", "manual_seed_all",
                          "seed_all", "set_rng_state_all"})


@attrs.define(slots=True)
class InterpState:
    """The capture interpreter's record (``Capture.interp``), written only
    here: the interpreter itself, and what the native calls it makes on
    behalf of the program left."""

    vm: object = None  # the CaptureInterpreter running the capture (for sites)
    opaque: int = 0  # watched native calls under way (a torch op inside one: a break)
    volatile: set = attrs.Factory(set)  # ints (ids of outside objects) valid for this call only


class CaptureInterpreter(Interpreter):
    """Runs a traced function, applying each opcode's RefGraph rule."""

    def __init__(self, capture, traced_type, debug=False):
        """``traced_type``: the class of ``pyinterp.trace``'s wrappers, given
        by its owner (:mod:`.traced`): one called during a capture runs its
        function inline, so the caller gets one graph."""
        super().__init__(debug=debug)
        self.capture = capture
        self.traced_type = traced_type
        self.refgraph = capture.recording.refgraph
        capture.interp.vm = self

    def variant(self, code):
        instructions = captured_instructions(code)
        return checked_copy(instructions) if self.debug else instructions

    # -- reads ----------------------------------------------------------------
    def looked_up(self, mro, name, found):
        """The lookup observer (:func:`~pyinterp.interp.model.lookup.observe`):
        the run looked ``name`` up along ``mro``; guard what it found there."""
        if self.capture.breaks.active:
            self.refgraph.read_lookup(mro, name, self.capture.site())

    def load_attr(self, obj, name):
        if arrays.hooked(self.capture, obj):
            return arrays.load_attr(self.capture, obj, name)  # a.T, a.shape, a.sum
        if self.capture.breaks.active:
            if lookup(type(obj), "__getattr__") is _MODULE_GETATTR:
                value = self._module_attr(obj, name)
                if value is not MISSING:
                    return value
            elif self.refgraph.is_outside(obj) and _shadowable_getter(obj, name):
                self._instance_entry(obj, name)
        try:
            value = attributes.load_attr(self, obj, name)
        except AttributeError:
            if self.capture.breaks.active and self.refgraph.is_outside(obj) \
                    and not issubclass(type(obj), Tensor):
                if _native_read(obj, name):
                    self.refgraph.read_hasattr(obj, name, False, self.capture.site())
                elif _served_by_getattr_hook(obj, name):
                    self._instance_entry(obj, name)  # (the hook's own reads are guarded)
            raise
        if self.capture.breaks.active and self.refgraph.is_outside(obj) \
                and not issubclass(type(obj), Tensor):
            if _native_read(obj, name):
                self.refgraph.read_attr(obj, name, value, self.capture.site())
            elif _served_by_getattr_hook(obj, name):
                # Served by a Python __getattr__: an instance attribute set
                # later would take precedence, so guard its absence.
                self._instance_entry(obj, name)
        return value

    def _instance_dict(self, obj):
        """``obj``'s instance ``__dict__`` (a plain dict), registered under
        ``<obj's path>.__dict__``, or None (no dict, or ``obj`` created by
        the run)."""
        d = _raw_instance_dict(obj)
        rg = self.refgraph
        if type(d) is not dict or rg.source_of(obj) is None:
            return None
        if not rg.is_outside(d):
            raw = needs_interpreter(lookup(type(obj), "__getattribute__"))
            rg.read(Attr(rg.source_of(obj), "__dict__", raw), d, self.capture.site())
        return d

    def _instance_entry(self, obj, name):
        """The instance dict decides what ``obj.name`` is (a non-data
        descriptor found on the type, or a ``__getattr__`` fallback): guard
        its entry ``name``, or that it has none."""
        d = self._instance_dict(obj)
        if d is None:
            return
        if name in d:
            self.refgraph.read_item(d, name, d[name], self.capture.site())
        else:
            self.refgraph.read_contains(d, name, False, self.capture.site())

    def _module_attr(self, module, name):
        """``module.name`` served by ``nn.Module.__getattr__`` (a parameter,
        buffer or submodule), read natively with two guards: the name is
        absent from the instance dict, and the entry of the registry dict
        that holds it.  (``Module.__setattr__`` keeps a name in at most one
        of ``_parameters``, ``_buffers`` and ``_modules``.)  MISSING when
        the ordinary lookup applies."""
        if lookup(type(module), name) is not MISSING:
            return MISSING
        d = object.__getattribute__(module, "__dict__")
        if name in d:
            return MISSING
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = d.get(registry)
            if entries is not None and name in entries:
                break
        else:
            return MISSING
        value = entries[name]
        rg = self.refgraph
        source = rg.source_of(module)
        if source is not None:
            site = self.capture.site()
            if not rg.is_outside(d):
                rg.register(d, Attr(source, "__dict__"))
            rg.read_contains(d, name, False, site)
            if not rg.is_outside(entries):
                rg.register(entries, Item(Attr(source, "__dict__"), registry))
            rg.read_item(entries, name, value, site)
        return value

    def _module_call(self, module, args, kwargs, own_call=True):
        """``module(*args)`` without hooks: straight to ``forward``, guarding
        that no hook is registered (the module's and the global ones).
        MISSING when ``Module.__call__``'s full logic is needed."""
        tp = type(module)
        if not issubclass(type(module), torch.nn.Module) or own_call and tp.__call__ is not _WRAPPED_CALL \
                or tp._call_impl is not _CALL_IMPL or torch._C._get_tracing_state():
            return MISSING
        d = object.__getattribute__(module, "__dict__")
        if hooks_in_the_way(d):
            return MISSING
        forward = lookup(tp, "forward")
        if type(forward) is not FunctionType or "forward" in d:
            return MISSING
        rg = self.refgraph
        source = rg.source_of(module)
        site = self.capture.site()
        if source is not None:
            if not rg.is_outside(d):
                rg.register(d, Attr(source, "__dict__"))
            rg.read_contains(d, "forward", False, site)  # (the class's: a ClassLookups guard)
            self._class_function(tp, "forward", forward, site)
            for h in MODULE_HOOKS:  # (a write to one is then replayed)
                if not rg.is_outside(d[h]):
                    rg.register(d[h], Item(Attr(source, "__dict__"), h))
            if "_compiled_call_impl" in d:  # set to None by module.compile()
                rg.read_item(d, "_compiled_call_impl", None, site)
                for h in MODULE_HOOKS:
                    rg.read_len(d[h], site)
            elif rg.is_clean(d):
                rg.add_guard(G.NoModuleHooks(rg.source_of(d), site=site))
        hooks_source = rg.source_of(GLOBAL_HOOKS)
        if hooks_source is None:
            hooks_source = Root(GLOBAL_HOOKS, "torch.nn.modules.module.__dict__")
            rg.register(GLOBAL_HOOKS, hooks_source)
        for h in GLOBAL_HOOK_NAMES:
            hooks = GLOBAL_HOOKS[h]
            if not rg.is_outside(hooks):
                rg.register(hooks, Item(hooks_source, h))
            rg.read_len(hooks, site)
        return self.call_function(forward, (module,) + tuple(args), kwargs)

    def plain_method(self, obj, name):
        func = attributes.plain_method(self, obj, name)
        if func is not None and self.capture.breaks.active and self.refgraph.is_outside(obj):
            # The function is what the class lookup found (guarded with the
            # class); an instance attribute would shadow it.
            site = self.capture.site()
            d = _raw_instance_dict(obj)
            if type(d) is dict:
                self.refgraph.read_contains(self._instance_dict(obj), name, False, site)
            elif d is not None:  # an unusual __dict__: guard the bound method's function
                base = self.refgraph.source_of(obj)
                self.refgraph.read(Attr(Attr(base, name), "__func__"), func, site)
                return func
            self._class_function(type(obj), name, func, site)
        return func

    def _class_function(self, tp, name, fn, site):
        """``fn``, a Python function the lookup of ``name`` found on ``tp``
        (its identity is guarded by a ClassLookups guard): known by its
        class-dict entry, with its code and defaults guarded, once for every
        instance of the class."""
        rg = self.refgraph
        if rg.source_of(fn) is None:
            source = rg.class_entry(tp, name)
            rg.register(fn, source)
            rg.read_function_state(fn, source, site)

    def getitem(self, container, key):
        cap = self.capture
        if arrays.hooked(cap, container):
            return arrays.getitem(cap, container, key)  # a[:, 0]: mirrored
        try:
            value = containers.getitem(self, container, key)
        except (KeyError, IndexError):
            self._failed_item_read(container, key)
            raise
        if self.capture.breaks.active and self.refgraph.is_outside(container) \
                and not issubclass(type(container), Tensor):
            if type(key) is slice or not _hashable(key):
                self._read_all(container)
            elif not needs_interpreter(lookup(type(container), "__getitem__")):
                self.refgraph.read_item(container, key, value, self.capture.site())
        return value

    def _failed_item_read(self, container, key):
        """``container[key]`` raised: guard that it still would."""
        if not (self.capture.breaks.active and self.refgraph.is_outside(container)):
            return
        if issubclass(type(container), dict) and _hashable(key) \
                and not needs_interpreter(lookup(type(container), "__getitem__")):
            self.refgraph.read_contains(container, key, False, self.capture.site())
        elif issubclass(type(container), (list, tuple)):
            self._read_len(container)

    def contains(self, container, item):
        """``item in container``: a hashed lookup in a dict or set hashes
        the item (:data:`.consumers.HASH`; in an outside one it is guarded as
        such); a sequence compares the item with its items natively
        (:data:`.consumers.VALUE`)."""
        cap = self.capture
        if cap.breaks.active and not issubclass(type(container), Tensor) \
                and not needs_interpreter(lookup(type(container), "__contains__")):
            if issubclass(type(container), (dict, set, frozenset)) and _hashable(item):
                consumers.consume(cap, (), HASH, unchecked=(item,))
                result = containers.contains(self, container, item)
                if cap.breaks.active and self.refgraph.is_outside(container):
                    self.refgraph.read_contains(container, item, result, cap.site())
                return result
            consumers.consume(cap, (container,), VALUE, unchecked=(item,))
        return containers.contains(self, container, item)

    def binary_op(self, nb, a, b):
        """``a <op> b`` run by C code (no Python dunder in the way): the
        containers it reads are guarded (:mod:`.consumers`), an in-place
        operator on an outside container is a write the mock replays, and
        an outside object whose value no guard fixes is a break."""
        ta, tb = type(a), type(b)
        if (ta in SCALAR_TYPES and tb in SCALAR_TYPES) or not self.capture.breaks.active \
                or ta is Tensor or tb is Tensor or issubclass(type(a), Tensor) or issubclass(type(b), Tensor):
            return operators.binary_op(self, nb, a, b)
        if arrays.hooked(self.capture, a, b):
            result = arrays.binary_op(self.capture, nb, a, b)  # a * 2: mirrored
            if result is not arrays.MISSING:
                return result
        if not operators.python_binary(nb, a, b):
            self._native_operands(operators.native_inplace(nb, a), a, b)
        return operators.binary_op(self, nb, a, b)

    def _native_operands(self, inplace, a, b):
        cap = self.capture
        rg = self.refgraph
        if inplace and rg.is_outside(a):
            if issubclass(type(a), (list, dict, set)):
                self._no_writes_while_speculating("an in-place %s" % inplace)
                consumers.mutate(cap, a, inplace, (b,))
                return
            cap.break_graph("opaque-native-call", "%s of a %s from outside"
                            % (inplace, type(a).__name__))
            return
        for v in (a, b):
            if rg.is_outside(v) and consumers.container_kind(v) is None and not rg.fixed(v):
                cap.break_graph("opaque-native-call", "an operator on a %s from outside"
                                % type(v).__name__)
                return
        consumers.consume(cap, (a, b), ITEMS if _hashes_items(a, b) else REFS)

    def unary_op(self, opname, value):
        """``-a``/``~a`` of a NumPy array the graph computes: mirrored
        (values/arrays.py); anything else as in the plain interpreter."""
        if arrays.hooked(self.capture, value):
            result = arrays.unary_op(self.capture, opname, value)
            if result is not arrays.MISSING:
                return result
        return operators.unary_op(self, opname, value)

    def compare(self, op, a, b):
        """``a <op> b`` compared by C code: both sides are read through and
        through (:data:`.consumers.VALUE`)."""
        ta, tb = type(a), type(b)
        if (ta in SCALAR_TYPES and tb in SCALAR_TYPES) or not self.capture.breaks.active \
                or issubclass(type(a), Tensor) or issubclass(type(b), Tensor):
            return operators.compare(self, op, a, b)
        if arrays.hooked(self.capture, a, b):
            result = arrays.compare(self.capture, op, a, b)  # a > 0: mirrored
            if result is not arrays.MISSING:
                return result
        if not operators.python_compare(op, a, b):
            consumers.consume(self.capture, (a, b), VALUE)
        return operators.compare(self, op, a, b)

    def to_str(self, value):
        if float_text.is_source(self.capture, value):  # f"{s!s}": derived text
            return float_text.apply(self.capture, str, (value,))
        self._formatted(value, "__str__")
        return text.to_str(self, value)

    def to_repr(self, value):
        if float_text.is_source(self.capture, value):
            return float_text.apply(self.capture, repr, (value,))
        self._formatted(value, "__repr__")
        return text.to_repr(self, value)

    def to_ascii(self, value):
        if float_text.is_source(self.capture, value):
            return float_text.apply(self.capture, ascii, (value,))
        self._formatted(value, "__repr__")
        return text.to_ascii(self, value)

    def format(self, value, spec=""):
        if float_text.is_source(self.capture, value):  # f"{s:.3f}": derived text
            return float_text.apply(self.capture, format, (value, spec))
        self._formatted(value, "__format__")
        return text.format_value(self, value, spec)

    def _formatted(self, value, method):
        """C code formats ``value`` (a container's repr formats its items):
        :data:`.consumers.TEXT`."""
        if type(value) not in SCALAR_TYPES and self.capture.breaks.active \
                and not needs_interpreter(lookup(type(value), method)):
            consumers.consume(self.capture, (value,), TEXT)

    def length(self, obj):
        sizes = self.capture.recording.sizes
        if type(obj) in _PLAIN_TENSORS and sizes is not None and sizes.active \
                and self.capture.breaks.active and not self.capture.interp.opaque:
            # len(x) with symbolic sizes: x.size(0) as a SymbolicInt (native
            # len() would hand back a plain int, a constant in the graph)
            return Tensor.__len__(obj)  # (through the recording mode)
        result = operators.length(self, obj)
        self._read_len(obj)
        return result

    def truth(self, value):
        result = operators.truth(self, value)
        if type(value) not in (bool, int, float, str, type(None)):
            self._read_len(value)
        return result

    def get_iter(self, obj):
        self._read_all(obj)
        return containers.get_iter(self, obj)

    def next_value(self, it):
        if self.capture.breaks.active and self.refgraph.is_outside(it):
            self.capture.break_graph("opaque-native-call",
                                     "advancing a %s from outside" % type(it).__name__)
        return containers.next_value(self, it)

    def iterate(self, obj):
        self._read_all(obj)
        return containers.iterate(self, obj)

    def unpack(self, seq, before, after):
        self._read_all(seq)
        return containers.unpack(self, seq, before, after)

    def _read_len(self, obj):
        method = lookup(type(obj), "__len__")
        if self.capture.breaks.active and self.refgraph.is_outside(obj) \
                and not issubclass(type(obj), Tensor) \
                and method is not MISSING and not needs_interpreter(method):
            self.refgraph.read_len(obj, self.capture.site())

    def _read_all(self, obj):
        """``obj`` is about to be iterated natively: guard all of it."""
        consumers.consume(self.capture, (obj,), REFS)

    # -- writes ---------------------------------------------------------------
    def _no_writes_while_speculating(self, what):
        if self.capture.speculation.depth:
            raise speculate.Speculating("%s in a speculative arm" % what)

    def store_attr(self, obj, name, value):
        if id(obj) not in self.capture.speculation.writable:
            self._no_writes_while_speculating("an attribute store")
        cap = self.capture
        if cap.breaks.active and issubclass(type(obj), Tensor):
            # (t.data = v: capture's setter rule, tensor_setters; any other
            # store, .requires_grad, .grad or a Python attribute, on an input
            # or a graph-made tensor: a graph output would not carry it)
            if name != "data":
                cap.break_graph("tensor-attribute-write", "assigning .%s of a tensor" % name)
                if cap.breaks.active:  # explain() goes on: the setter must not break again
                    with cap.breaks.paused():
                        return attributes.store_attr(self, obj, name, value)
        elif cap.breaks.active and self.refgraph.is_outside(obj):
            self.refgraph.write_attr(obj, name, value, cap.site())
            self._mark_module_dirty(obj, name)
            setattr(obj, name, value)  # Python __setattr__ runs natively; replayed as is
            return
        attributes.store_attr(self, obj, name, value)

    def delete_attr(self, obj, name):
        self._no_writes_while_speculating("an attribute deletion")
        cap = self.capture
        if cap.breaks.active and self.refgraph.is_outside(obj):
            self.refgraph.write_attr(obj, name, None, cap.site(), delete=True)
            self._mark_module_dirty(obj, name)
            delattr(obj, name)
            return
        attributes.delete_attr(self, obj, name)

    def _mark_module_dirty(self, obj, name):
        """A native ``__setattr__`` of ``name`` may have written that key of
        the object's dicts (``nn.Module`` keeps parameters, buffers and
        submodules in their own): later reads of it see the run's value."""
        d = _raw_instance_dict(obj)
        targets = [d] if issubclass(type(d), dict) else []
        if issubclass(type(obj), torch.nn.Module):
            targets += [obj._parameters, obj._buffers, obj._modules]
        for t in targets:
            self.refgraph.mark_dirty(t, name)

    def setitem(self, container, key, value):
        if not self.capture.speculation.may_write_tensor(container):
            self._no_writes_while_speculating("an item store")
        self._write_item(container, key, value, False)
        containers.setitem(self, container, key, value)

    def delitem(self, container, key):
        self._no_writes_while_speculating("an item deletion")
        self._write_item(container, key, None, True)
        containers.delitem(self, container, key)

    def _write_item(self, container, key, value, delete):
        cap = self.capture
        if cap.breaks.active and self.refgraph.is_outside(container) \
                and not issubclass(type(container), Tensor):
            if type(container) is arrays.ndarray_type() \
                    and not arrays.outside_write(cap, container):
                return  # (a break: the graph reads arrays from outside as inputs)
            method = "__delitem__" if delete else "__setitem__"
            if needs_interpreter(lookup(type(container), method)):
                return  # the Python method's own writes are recorded
            if type(key) is slice or not _hashable(key):
                # (a slice store copies the items of its value in)
                consumers.mutate(cap, container, method, (key,) if delete else (key, value))
            else:
                self.refgraph.write_item(container, key, value, cap.site(), delete=delete)

    # -- calls: the hooks of the core's call ladder (interp/calls.py) ---------
    # (``CaptureInterpreter.call``, the code of the data-model rule ``call``,
    # is that ladder with these hooks bound in by Interpreter.__init_subclass__.)
    interception_mode = calls.CAPTURE  # its own interceptions win (special_calls.py)

    def divert_call(self, fn, args, kwargs):
        """Before the ladder, on every call: count the top frame's callees
        that a native entry would trace (hybrid.py); materialize a lazy
        module's parameters on its first call (lazy_modules.py); then the plain ladder
        makes the call when capture is off, or when a tracked float it
        receives broke the graph; otherwise the ladder goes on, with this
        interpreter's hooks."""
        cap = self.capture
        if self.top is cap.top.frame is not None and hybrid.wraps(fn):
            cap.top.count_callee()  # would be traced by a native entry (hybrid.py)
        if not cap.breaks.active:
            return calls.call
        if lazy_modules.uninitialized(fn):  # (before its class is read and guarded)
            lazy_modules.materialize(cap, fn, args, kwargs)
        if cap.recording.ints.shadows:
            tracked_ints.check_native_call(cap, fn)
        if cap.recording.arrays or arrays.may_take_arrays(fn):
            modelled = arrays.divert(cap, fn, args, kwargs)  # np.clip(a, 0, 1), from_numpy(a)
            if modelled is not None:
                return modelled
            if not is_deferred(fn) and not arrays.check_call(cap, fn, args, kwargs):
                return calls.call
        if cap.recording.scalars or cap.recording.text or fn is str or fn is format \
                or fn is repr or fn is ascii:
            modelled = float_builtins.divert(cap, fn, args, kwargs)  # max(s, eps), str(t)
            if modelled is not None:
                return modelled
            if not is_deferred(fn) and not (scalars.check_call(cap, fn, args, kwargs)
                                            and float_text.check_call(cap, fn, args, kwargs)):
                return calls.call
        return None

    def call_object(self, fn, method, args, kwargs=None):
        """A callable object with a Python ``__call__``: a module without
        hooks goes straight to ``forward``; other objects as in the plain
        interpreter."""
        if self.capture.breaks.active and callbacks.disabled(method):
            return self._run_disabled(fn, args, kwargs)
        if type(fn) is scripted.ScriptFunction and self.capture.breaks.active \
                and scripted.original(fn) is not None:  # @torch.jit.script: its Python
            return scripted.call(self, fn, args, kwargs)
        if issubclass(type(fn), torch.nn.Module):
            result = self._module_call(fn, args, kwargs)
            if result is not MISSING:
                return result
        return calls.call_object(self, fn, method, args, kwargs)

    def missing_attribute(self, obj, name):
        """``hasattr``/``getattr`` with a default found no ``obj.name``: guard
        that it stays absent.  Where Python code decided (a ``__getattr__``,
        a ``__getattribute__``), its reads are guarded instead: ``hasattr``
        in the guard would run that code again on every call."""
        if self.capture.breaks.active and (issubclass(type(obj), Tensor)
                                           or _native_read(obj, name)):
            self.refgraph.read_hasattr(obj, name, False, self.capture.site())

    def call_function(self, func, args, kwargs=None):
        """A Python function's entry: ``Module.__call__`` reached directly
        takes the hook-free fast path, capture's own interceptions of Python
        functions (logging, ``is_compiling``) run, torch functions are
        recorded (or break: RNG and global-state setters); other functions
        run interpreted."""
        if func is _RECORDING_TORCH_FUNCTION:  # (called by torch's interpreted Python)
            return func(*args, **kwargs) if kwargs else func(*args)
        cap = self.capture
        if self.top is cap.top.frame is not None and hybrid.wraps(func):
            cap.top.count_callee()
        if cap.breaks.active and (func is _WRAPPED_CALL or func is _CALL_IMPL) and args:
            # Module.__call__ reached directly (a subclass's own __call__
            # calling super().__call__): the hook-free fast path.
            result = self._module_call(args[0], args[1:], kwargs, own_call=False)
            if result is not MISSING:
                return result
        if cap.breaks.active:
            if grad_hooks.removes_captured_hook(cap, func, args):
                cap.break_graph("native-callback", "removing a gradient hook that the graph "
                                "holds (grad_hooks.py)")
            handler = captured_call(func)
            if handler is not None:
                return handler(self, args, kwargs)
            if callbacks.disabled(func):
                return self._run_disabled(func, args, kwargs)
            if callbacks.allowed_in_graph(func):
                return cap.call_in_graph(func, args, kwargs)
            if autograd_functions.is_apply(func, args):
                return autograd_functions.call(self, args[0], args[1:], kwargs)
            if is_torch_function(func) and func.__name__ in _RNG_SETTERS:
                cap.break_graph("impure-call", "%s() changes the global RNG state" % func.__name__)
            elif is_torch_function(func) and func.__name__ in _GLOBAL_STATE_SETTERS:
                cap.break_graph("unsupported-global-state",
                                "%s() changes global torch state" % func.__name__)
            elif func in _AUTOCAST_METHODS or is_torch_function(func) \
                    and not self._has_outside_object(args, kwargs) \
                    and callbacks.held_callable(func) is None:
                # (torch's decorators wrap the user's function: interpreted,
                # the wrapper calls it through the interpreter)
                return cap.call_torch(func, args, kwargs)
            elif numpy_calls.is_pure_function(func):  # np.ones((2, 3)): native, unwatched
                return self.call_native(func, args, kwargs)
        return calls.call_function(self, func, args, kwargs)

    def _run_disabled(self, fn, args, kwargs):
        """A ``torch.compiler.disable``d function: a break before it, then
        the call natively, as Dynamo runs it (never inside a graph; a split
        entry calls it natively on every call)."""
        inner = callbacks.disabled_target(fn)
        self.capture.break_graph("compiler-disable", "%s() is marked torch.compiler.disable"
                                 % _name_of(inner))
        return fn(*args, **kwargs) if kwargs else fn(*args)

    def _is_local(self, value):
        """Created by this run (not outside, not a tensor input)."""
        return not self.refgraph.is_outside(value) and not (
            issubclass(type(value), Tensor)
            and not self.capture.recording.recorder.is_graph_value(value))

    def _has_outside_object(self, args, kwargs):
        """True if an argument is an outside non-tensor object (a torch
        function reading it natively could not be guarded), or a Python
        callable that torch's code would call back natively (interpreted,
        torch's function calls it through the interpreter: callbacks.py)."""
        rg = self.refgraph
        values = list(args) + (list(kwargs.values()) if kwargs else [])
        return any(rg.is_outside(v) and not issubclass(type(v), Tensor) for v in values) \
            or callbacks.stored_callable(values, Tensor) is not None

    def construct(self, cls, args, kwargs=None):
        """A class called: ``type(x)`` registers the class it returns, torch
        classes are recorded, the consumers' arguments are guarded."""
        args = tuple(args)
        if cls is type and len(args) == 1 and not kwargs:
            result = type(args[0])
            if not self.refgraph.is_outside(result):
                # A class is a long-lived outside object: writes to it
                # (type(self).count += 1) must be replayed.
                self.refgraph.register(result, Root(result, result.__qualname__))
            return result
        if id(cls) in CONSUMERS:
            consumers.consume_call(self.capture, cls, args, kwargs)
            return calls.construct(self, cls, args, kwargs)
        cap = self.capture
        if cap.breaks.active and callbacks.disabled(lookup(cls, "__init__")):
            return self._run_disabled(cls, args, kwargs)
        if cls.__module__.startswith("torch") and not issubclass(cls, torch.nn.Module):
            values = list(args) + (list(kwargs.values()) if kwargs else [])
            stored = callbacks.stored_callable(values, Tensor) if cap.breaks.active else None
            if stored is not None:  # (saved_tensors_hooks(pack, unpack))
                cap.break_graph("native-callback", "%s() received a Python callable (%s) it "
                                "may call natively" % (cls.__qualname__, _name_of(stored)))
            made = cap.call_torch(cls, args, kwargs)
            if legacy_tensors.makes_unseen_tensor(cls):  # (made in C, unseen by the mode)
                return legacy_tensors.recorded(cap, cls, args, kwargs, made)
            return made
        if not _python_construction(cls):
            # C code builds it from its arguments (a frozen copy of a list...).
            consumers.consume(cap, args + tuple((kwargs or {}).values()), consumers.ARGS)
        return calls.construct(self, cls, args, kwargs)

    def call_native(self, fn, args, kwargs=None):
        """C code called: classified (torch ops, neutral builtins, consumers
        of containers, methods of outside containers, impure calls, opaque
        C calls that may run Python code natively), then run.  A traced
        function's wrapper (a host type: called natively) is seen through,
        its ``__wrapped__`` read as the program's read, so that a traced
        module's tensors keep their paths."""
        if type(fn) is self.traced_type:
            return self.call(self.load_attr(fn, "__wrapped__"), args, kwargs)
        if type(fn) is _LRU_WRAPPER and args and issubclass(type(args[0]), logging.Logger):
            # A cached logger method (transformers' logger.warning_once):
            # replayed like logging; the cache keeps it once per message.
            return deferred(self, MethodType(fn, args[0]), tuple(args[1:]), kwargs or {})
        args = tuple(args)
        cap = self.capture
        rg = self.refgraph
        owner = getattr(fn, "__self__", None)
        if cap.speculation.depth and speculate.appended_to(cap, fn, args, kwargs) is not None:
            return fn(*args)  # (taken back after the arm: speculate.Journal)
        if cap.speculation.depth and (owner is not None or type(fn) in (
                types.MethodDescriptorType, types.WrapperDescriptorType)) \
                and getattr(fn, "__name__", "") in consumers.MUTATORS:
            self._no_writes_while_speculating("%s()" % fn.__name__)
        if not args and not kwargs and _is_impure(fn) and scalars.recomputable(cap, fn):
            return scalars.recompute(cap, fn)  # random.random(), time.time()
        if owner is not None and not issubclass(type(owner), types.ModuleType):
            if issubclass(type(owner), Tensor):
                return calls.call(self, fn, args, kwargs)
            if fn.__name__ == "__getattribute__" and len(args) == 1 and not kwargs \
                    and type(args[0]) is str and _is_object_getattribute(fn):
                return self._object_getattribute_read(owner, args[0])
            if fn.__name__ == "__reduce_ex__" and _plain_reduce(owner, args, kwargs):
                return self._reduce_ex(owner)
            if rg.is_outside(owner):
                self._outside_method(owner, fn.__name__, args, kwargs)
                return calls.call(self, fn, args, kwargs)
        if fn is _OBJECT_GETATTRIBUTE and len(args) == 2 and not kwargs \
                and type(args[1]) is str:
            return self._object_getattribute_read(args[0], args[1])  # (inside an override)
        if type(fn) in (types.MethodDescriptorType, types.WrapperDescriptorType) and args \
                and rg.is_outside(args[0]) and issubclass(type(args[0]), fn.__objclass__):
            if issubclass(type(args[0]), Tensor):  # Tensor.add(x, 1): the mode records it
                return calls.call(self, fn, args, kwargs)
            # dict.get(d, k): an unbound C method applied to an outside object
            self._outside_method(args[0], fn.__name__, args[1:], kwargs)
            return calls.call(self, fn, args, kwargs)
        if owner is not None and type(owner) in _OWN_CONTAINERS and not rg.is_outside(owner):
            # A method of the run's own container (or of a str): it reads
            # its arguments as its entry in consumers.METHODS says.
            spec = consumers.method(owner, fn.__name__)
            if spec is not None:
                consumers.read_for(cap, spec, owner, args, kwargs)
                return calls.call(self, fn, args, kwargs)
            if type(owner) is not str:
                return calls.call(self, fn, args, kwargs)
        if _plain_object_setattr(fn, owner, args, kwargs) and not rg.is_outside(
                owner if owner is not None else args[0]):
            # object.__setattr__ of the run's own object (a ModelOutput's
            # super().__setattr__): a reference stored in its __dict__.
            return calls.call(self, fn, args, kwargs)
        if owner is not None and _container_subclass_method(type(owner), fn) \
                and not rg.is_outside(owner):
            # The same, for the run's own instance of a Python subclass of a
            # container (a ModelOutput's super().__setitem__(name, value)).
            consumers.read_for(cap, consumers.method(owner, fn.__name__), owner, args, kwargs)
            return calls.call(self, fn, args, kwargs)
        if _is_torch_native(fn):
            return self._call_torch_native(fn, args, kwargs)
        if _is_impure(fn):
            cap.break_graph("impure-call", "%s() returns a different value on every call"
                            % getattr(fn, "__qualname__", fn))
            return calls.call(self, fn, args, kwargs)
        if id(fn) in _NEUTRAL:
            return calls.call(self, fn, args, kwargs)
        if fn is id and args and not self._is_local(args[0]):
            # Fine as a memo key inside the run; a break if it reaches the
            # result or a side effect (the mock would replay a stale id).
            result = calls.call(self, fn, args, kwargs)
            cap.interp.volatile.add(result)
            return result
        if id(fn) in CONSUMERS:
            consumers.consume_call(cap, fn, args, kwargs)
            return calls.call(self, fn, args, kwargs)
        values = list(args) + (list(kwargs.values()) if kwargs else [])
        if any(rg.is_outside(v) and not issubclass(type(v), _PASSIVE_ARGUMENTS) for v in values):
            cap.break_graph("opaque-native-call", "%s() received an object from outside"
                            % getattr(fn, "__qualname__", fn))
            return calls.call(self, fn, args, kwargs)
        consumers.consume(cap, values, consumers.ARGS)  # (what the run's containers hold)
        if any(issubclass(type(v), Tensor) for v in values):
            # (the tensors' ops run the recording mode's and torch's Python:
            # only the program's own Python code run natively is a break)
            return self._call_watched(fn, args, kwargs, judge=callbacks.is_foreign)
        if numpy_calls.pure_call(fn, args, kwargs):  # np.prod(x.shape)
            return numpy_calls.run(cap, fn, args, kwargs)
        return self._call_watched(fn, args, kwargs)

    def _call_torch_native(self, fn, args, kwargs):
        """Torch's C code called with the program's values.  It reads what it
        receives natively: containers are read through and through
        (:data:`.consumers.ARGS`); any other
        outside object (a DDP reducer, a C++ logger) or a Python callable
        (a hook it would store) is a break before the call.  The call runs
        watched: Python code outside torch that it calls back (the
        ``forward`` of a custom ``autograd.Function``) is a break after it
        (callbacks.py)."""
        cap = self.capture
        rg = self.refgraph
        values = list(args) + (list(kwargs.values()) if kwargs else [])
        for v in values:
            if rg.is_outside(v) and not issubclass(type(v), _PASSIVE_ARGUMENTS) \
                    and consumers.container_kind(v) is None \
                    and not cap.recording.arrays.tracks(v):  # (an array that is an input)
                cap.break_graph("opaque-native-call", "torch's %s() received a %s from outside"
                                % (_name_of(fn), type(v).__name__))
                return calls.call(self, fn, args, kwargs)
        consumers.consume(cap, values, consumers.ARGS)  # (a list is a constant of the op)
        if not cap.breaks.active:
            return calls.call(self, fn, args, kwargs)
        stored = callbacks.stored_callable(values, Tensor)
        if stored is not None:
            cap.break_graph("native-callback", "torch's %s() received a Python callable (%s) "
                            "it may call natively" % (_name_of(fn), _name_of(stored)))
            return calls.call(self, fn, args, kwargs)
        return cap.call_torch(fn, args, kwargs)  # (watched; grad-mode changes recorded)

    def _call_watched(self, fn, args, kwargs, judge=None):
        """Run a C callable that may call back into Python natively (an
        ``lru_cache`` wrapper, a C iterator over a user object): Python code
        run that way is neither guarded nor replayed, so it is a break
        (any Python code, or the code ``judge(frame)`` picks)."""
        cap = self.capture
        owner = getattr(fn, "__self__", None)
        if owner is not None and calls.METHOD_LOOKASIDES.get((type(owner), fn.__name__)):
            return calls.call(self, fn, args, kwargs)
        if type(owner) in _DRIVEN_TYPES and generators.driver_vm(owner) is self:
            # gen.close()/throw()/send() of a generator this run interprets:
            # its driver resumes the frame here, watched by this capture
            return fn(*args, **kwargs) if kwargs else fn(*args)
        watch = callbacks.Watch(judge=judge)  # (judge None: any Python frame)
        cap.interp.opaque += 1
        try:
            with watch:
                return fn(*args, **kwargs) if kwargs else fn(*args)
        finally:
            cap.interp.opaque -= 1
            if watch.entered is not None:
                cap.break_graph("native-callback", "%s() ran Python code (%s) natively"
                                % (getattr(fn, "__qualname__", type(fn).__name__),
                                   watch.entered.co_qualname))

    def _reduce_ex(self, owner):
        """``object.__reduce_ex__(obj, protocol >= 2)`` for a plain object
        (``copy``/``pickle``), in Python: the state is the instance
        ``__dict__``, read through the interpreter (so a Python
        ``__getattribute__`` runs interpreted and the read is guarded)."""
        state = self.load_attr(owner, "__dict__")
        return (copyreg.__newobj__, (type(owner),), state or None, None, None)

    def _object_getattribute_read(self, owner, name):
        """``object.__getattribute__(owner, name)``, its read guarded (a
        failed one: the name stays absent from the instance dict; the class
        lookup is guarded with the class)."""
        try:
            value = self._object_getattribute(owner, name)
        except AttributeError:
            if self.refgraph.is_outside(owner):
                self._instance_entry(owner, name)
            raise
        if self.refgraph.is_outside(owner):
            self._raw_attribute_read(owner, name, value)
        return value

    def _object_getattribute(self, owner, name):
        """``object.__getattribute__(owner, name)`` with a Python property
        getter or descriptor interpreted (natively it would run unseen)."""
        tp = type(owner)
        attr = lookup(tp, name)
        if attr is not MISSING and is_data_descriptor(attr):
            if issubclass(type(attr), property) and needs_interpreter(attr.fget):
                return self.call(attr.fget, (owner,))
            if python_getter(attr):
                return bind(self, attr, owner, tp)
        elif attr is not MISSING and python_getter(attr):
            d = _raw_instance_dict(owner)
            if not (issubclass(type(d), dict) and name in d):
                return bind(self, attr, owner, tp)
        return object.__getattribute__(owner, name)

    def _raw_attribute_read(self, owner, name, value):
        """``object.__getattribute__(owner, name)``: guard the instance-dict
        entry when that is where the value came from (cheap to re-read),
        else the attribute."""
        d = _raw_instance_dict(owner)
        if type(d) is dict and name in d and d[name] is value:
            self._instance_entry(owner, name)
        else:
            self.refgraph.read_attr(owner, name, value, self.capture.site())

    def _outside_method(self, owner, name, args, kwargs):
        """A C method of an outside object: record its read or write
        (the builtin containers' methods: :data:`.consumers.METHODS`)."""
        rg = self.refgraph
        cap = self.capture
        spec = consumers.method(owner, name)
        if spec is None:
            if not issubclass(type(owner), _IMMUTABLE_OWNERS + _NEUTRAL_OWNERS):
                cap.break_graph("opaque-native-call", "%s.%s() on an object from outside"
                                % (type(owner).__name__, name))
            return
        if spec.writes:
            consumers.mutate(cap, owner, name, args, kwargs)
        elif issubclass(type(owner), dict) and name == "get" and args and is_literal(args[0]):
            site = cap.site()
            present = dict.__contains__(owner, args[0])
            rg.read_contains(owner, args[0], present, site)
            if present:
                rg.read_item(owner, args[0], dict.__getitem__(owner, args[0]), site)
        else:
            consumers.read_for(cap, spec, owner, args, kwargs)


# Outside values a C function may receive without reading state we guard
# by path: tensors (their ops are recorded), and classes, functions and
# modules (identity-guarded; object.__new__(cls) only reads the type).
_OBJECT_GETATTRIBUTE = object.__getattribute__
_PASSIVE_ARGUMENTS = (Tensor, type, types.FunctionType, types.ModuleType)
_DRIVEN_TYPES = (types.GeneratorType, types.CoroutineType)


def _name_of(fn):
    """A callable's qualified name for a break message (read from its type's
    C slots or its own dict, never through a user ``__getattr__``)."""
    if type(fn) is types.BuiltinFunctionType and not issubclass(type(
            fn.__self__), (types.ModuleType, type, type(None))):
        return fn.__name__  # (a pybind11 method: its __self__ is a function record)
    name = getattr(fn, "__qualname__", None) if issubclass(type(
        fn), (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType)) else None
    return name if type(name) is str else type(fn).__qualname__


def _is_object_getattribute(fn):
    """True for ``object.__getattribute__`` bound to an instance (what
    ``super().__getattribute__`` gives inside an override): method-wrappers
    are equal when they wrap the same slot of the same object."""
    if type(fn) is not types.MethodWrapperType or fn.__name__ != "__getattribute__":
        return False
    return fn == object.__getattribute__.__get__(fn.__self__)


def _plain_reduce(obj, args, kwargs):
    """True when ``obj.__reduce_ex__(protocol)`` is object's own, protocol 2+,
    for an object whose whole state is its ``__dict__``."""
    tp = type(obj)
    if kwargs or len(args) != 1 or type(args[0]) is not int or args[0] < 2:
        return False
    if tp.__reduce_ex__ is not object.__reduce_ex__ or tp.__reduce__ is not object.__reduce__:
        return False
    if getattr(tp, "__getstate__", object.__getstate__) is not object.__getstate__:
        return False
    if any(hasattr(tp, n) for n in ("__getnewargs_ex__", "__getnewargs__")):
        return False
    if issubclass(type(obj), (list, dict, set, tuple, type)) or any(
            "__slots__" in c.__dict__ for c in tp.__mro__):
        return False
    return type(_raw_instance_dict(obj)) is dict


def _python_construction(cls):
    """True if building ``cls`` runs Python code (``__new__``, ``__init__``
    or a metaclass ``__call__``), which is interpreted."""
    meta_call = lookup(type(cls), "__call__")
    if meta_call is not type.__call__ and needs_interpreter(meta_call):
        return True
    new = lookup(cls, "__new__")
    if issubclass(type(new), staticmethod):
        new = new.__func__
    return needs_interpreter(new) or needs_interpreter(lookup(cls, "__init__"))


_OWN_CONTAINERS = frozenset({list, tuple, dict, set, frozenset, str})
_SUBCLASSED_BASES = frozenset({list, dict, set, collections.OrderedDict, object})
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement
_NO_DISPATCH = frozenset({
    "__setitem__", "__delitem__", "__getitem__", "get", "__contains__", "__len__", "keys",
    "values", "items", "__iter__", "append", "insert", "add", "discard"})
"""C container methods that, called on an instance of a Python subclass,
call none of the subclass's Python methods back (``OrderedDict.update``,
``setdefault``, ``pop`` and ``copy`` do: they go through the subclass's
``__setitem__``)."""


_OBJECT_SETATTR = object.__setattr__
_RECORDING_TORCH_FUNCTION = RecordingMode.__dict__["__torch_function__"]


def _plain_object_setattr(fn, owner, args, kwargs):
    """True for ``object.__setattr__`` (bound: ``super().__setattr__(name,
    value)``, or ``object.__setattr__(obj, name, value)``) storing into an
    instance ``__dict__``: no data descriptor on the type for ``name`` (its
    ``__set__`` would run natively)."""
    if kwargs:
        return False
    if owner is not None:
        if type(fn) is not types.MethodWrapperType or fn.__name__ != "__setattr__" \
                or getattr(fn, "__objclass__", None) is not object or len(args) != 2:
            return False
        obj, name = owner, args[0]
    else:
        if fn is not _OBJECT_SETATTR or len(args) != 3:
            return False
        obj, name = args[0], args[1]
    if type(name) is not str or not hasattr(obj, "__dict__") or isinstance(obj, type):
        return False
    return not is_data_descriptor(lookup(type(obj), name))


def _container_subclass_method(tp, fn):
    """True when ``fn`` is a C method of :data:`_NO_DISPATCH` reached on an
    instance of ``tp``, a Python subclass of containers of the standard
    library only (a ``ModelOutput`` is an ``OrderedDict``), and described
    by ``consumers.METHODS``.  Not ``__getitem__`` when ``tp`` has
    ``__missing__`` (the C lookup calls it back natively)."""
    name = getattr(fn, "__name__", "")
    if name not in _NO_DISPATCH or not tp.__flags__ & _HEAPTYPE \
            or type(fn) not in (types.BuiltinMethodType, types.MethodWrapperType):
        return False
    c_bases = [b for b in tp.__mro__ if not b.__flags__ & _HEAPTYPE]
    if len(c_bases) < 2 or not all(b in _SUBCLASSED_BASES for b in c_bases):
        return False
    if name == "__getitem__" and lookup(tp, "__missing__") is not MISSING:
        return False
    return consumers.method_of_type(tp, name) is not None


def _hashes_items(a, b):
    """Set operators hash (and compare) the items of their operands."""
    return any(issubclass(type(v), (set, frozenset)) or consumers.container_kind(v) == "view"
               for v in (a, b))


def _hashable(key):
    """True if ``key`` can key a guarded read.  A Python ``__hash__`` is not
    called for the question (it may do anything; the program's own lookup
    just ran it): its key counts as hashable."""
    tp = type(key)
    if issubclass(tp, Tensor):
        return False
    method = lookup(tp, "__hash__")
    if method is None or method is MISSING:
        return False
    if needs_interpreter(method):
        return True
    try:
        hash(key)  # (C code: a tuple hashes its items, which may not be hashable)
    except TypeError:
        return False
    return True


def _native_read(obj, name):
    """True if ``obj.name`` is found without running Python code (then the
    read itself is guarded; otherwise the interpreted getter's reads are)."""
    if issubclass(type(obj), type):
        plan = attributes._plans.get((obj, name, "cls"), attributes._plans)
        if getattr(plan, "native_first", False):
            # A metaclass __getattr__ (3.11's EnumType) serves only the
            # names that the native lookup does not find.
            return lookup(obj, name) is not MISSING or lookup(type(obj), name) is not MISSING
        return plan is attributes.NATIVE
    plan = attributes._plans.get((type(obj), name, "get"), attributes._plans)
    if plan is attributes.NATIVE:
        return True
    tp = type(obj)
    if needs_interpreter(lookup(tp, "__getattribute__")):
        return False
    attr = lookup(tp, name)
    if attr is not MISSING:
        return not needs_interpreter(lookup(type(attr), "__get__")) and \
            not issubclass(type(attr), property)
    d = _raw_instance_dict(obj)
    return issubclass(type(d), dict) and name in d


def _raw_instance_dict(obj):
    """``obj``'s instance ``__dict__`` read at C level, or None (it has none)."""
    try:
        return object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return None


def _shadowable_getter(obj, name):
    """True if ``obj.name`` finds, on the type, a non-data descriptor whose
    ``__get__`` is Python (``functools.cached_property``): the instance dict
    shadows it, so its entry decides whether that code runs."""
    tp = type(obj)
    if needs_interpreter(lookup(tp, "__getattribute__")):
        return False
    attr = lookup(tp, name)
    return attr is not MISSING and python_getter(attr) is not None \
        and not is_data_descriptor(attr)


def _served_by_getattr_hook(obj, name):
    tp = type(obj)
    if not needs_interpreter(lookup(tp, "__getattr__")) or lookup(tp, name) is not MISSING:
        return False
    d = _raw_instance_dict(obj)
    return type(d) is dict and name not in d


def _is_torch_native(fn):
    module = getattr(fn, "__module__", None) or ""
    if module.startswith("torch"):
        return True
    owner = getattr(fn, "__self__", None)
    return issubclass(type(owner), types.ModuleType) and owner.__name__.startswith("torch")


def _is_impure(fn):
    module = getattr(fn, "__module__", None)
    if module is None:
        owner = getattr(fn, "__self__", None)
        module = type(owner).__module__ if owner is not None else None
        if issubclass(type(owner), types.ModuleType):
            module = owner.__name__
    return module in _IMPURE_MODULES


_IMMUTABLE_OWNERS = (str, bytes, int, float, complex, frozenset, type(__import__("re").compile("")),
                     torch.dtype, torch.device, torch.Size)
# Owners whose methods the RefGraph treats as neutral: context variables
# (set and reset around a call by libraries such as transformers; the run
# leaves them as it found them).
_NEUTRAL_OWNERS = (contextvars.ContextVar, contextvars.Token)


rules.check_overrides(CaptureInterpreter)
