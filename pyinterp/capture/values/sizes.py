"""Symbolic sizes during a capture (dynamic shapes, issue 15).

A capture with dynamic dimensions (``trace(dynamic=None)`` after a miss on
sizes alone, ``dynamic=True``, ``mark_dynamic``) still runs the program on
the call's real tensors, but the sizes it reads stay symbols in the graph:

* :class:`SizeTracker` keeps torch's symbolic-shape machinery for the
  capture: a ``ShapeEnv`` and a ``FakeTensorMode``.  Each graph input is
  made a fake tensor whose dynamic dimensions are symbols (the real sizes
  are their hints), and every recorded op is replayed on fake tensors when
  a size is next read (:meth:`SizeTracker.fake_of`), so every tensor of the
  graph has a symbolic shape: ``x.view(b * n, d)`` has shape
  ``(s0*s1, d)``.  The ops' own requirements (broadcasting, ``view``'s
  element count, ``matmul``'s inner sizes) become guards of the shape
  environment there, as under Dynamo.
* A size read (``x.shape``, ``x.size()``, ``x.size(1)``, ``len(x)``,
  ``x.numel()``) of a symbolic dimension gives a
  :class:`~pyinterp.refgraph.symbolic.SymbolicInt`: the real int, with its
  ``SymInt`` and a ``size`` node (``x.size(d)``, as Dynamo records it).  Python ``+ - * // %`` and unary
  ``-`` on them give new ones, recorded as ``operator`` nodes
  (:func:`step`); where one reaches a recorded op, the recorder uses its
  node.
* A comparison or truth test of one (``if n > 1:``, ``assert
  x.shape[-1] == d``) is decided by the ``SymInt``, which adds that
  relation to the shape environment's guards: never a break.
* Any other use (a native call such as ``range(n)``, formatting, a store
  into outside state, the traced function's return value, a return or
  yield that pyinterp's own code receives and reads natively, such as a
  ``sorted`` key: :mod:`.receivers`...) specializes
  it: the shape environment guards the value (``s0 == 4``), and the reason
  is kept for ``explain``.  An int the data decides cannot be guarded:
  in the return value, or an argument of ``print``/logging, it is a graph
  output instead (:meth:`SizeTracker.leave`, :class:`LeavingInts`), and
  float arithmetic on it (``n / 8``) a float :mod:`.scalars` tracks
  (:func:`_float_arithmetic`).

Data-dependent sizes (``nonzero()``, masks, ``unique()``: their sizes
are *unbacked* symbols) and the ints of ``t.tolist()``
(:mod:`.listed_ints`: unbacked too, and *value symbols*) stay symbolic
the same way.  A decision on an unbacked size that the shape environment
cannot prove is a ``data-dependent-shape`` break; any decision on a value
symbol, or a use that would specialize it, is a ``data-dependent-value``
break (:class:`DataDependentValue`), proof or not: torch's proofs about
them may rest on an op's preconditions, which the graph run by the eager
backend does not check.

A graph break, or an op the fake replay cannot run, gives the sizes up
(:meth:`SizeTracker.give_up`): the entry then keeps exact-shape guards
(``TensorMatch``), which is sound for every size the run computed from
the guarded shapes.  An int from an unbacked size or from tensor data is
not one of those: giving the sizes up while one is live is a break, and
a split there is refused (:attr:`SizeTracker.lost_unbacked`).

Records (:class:`~..state.Capture`): owns ``recording.sizes`` (None in a
static capture); reads ``recording.recorder``, ``breaks``, ``top``.
"""
import dis
import operator
import types

import torch

from . import data_decisions, identity, quiet_replay, receivers, scalars
from .. import legacy_tensors, rules
from ...interp import calls
from ...interp.model.dunders import needs_interpreter
from ...interp.model.lookup import lookup
from ...opcodes import info
from ...opcodes.callshape import peek_call
from ...opcodes.signals import NULL
from ...refgraph.symbolic import RESULT_DEPTH, SymbolicInt, carries, each, plain
from ..torchfiles import is_torch_function

Tensor = torch.Tensor

ARITHMETIC = {"+": operator.add, "-": operator.sub, "*": operator.mul,
              "//": operator.floordiv, "%": operator.mod,
              "+=": operator.add, "-=": operator.sub, "*=": operator.mul,
              "//=": operator.floordiv, "%=": operator.mod}
COMPARISONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
               "==": operator.eq, "!=": operator.ne}

# Instructions that only move a value (from the rules of tracked floats:
# a move is a move), and those that read only their top n values.
_MOVES = rules.keys("float_flow", "float_move") | info.for_running({
    info.ALL: ("BUILD_SLICE", "UNPACK_SEQUENCE", "UNPACK_EX", "BUILD_MAP", "BUILD_SET",
               "BUILD_CONST_KEY_MAP", "LIST_EXTEND", "DICT_UPDATE",
               "DICT_MERGE", "MAP_ADD", "SET_ADD", "IS_OP", "LOAD_ATTR", "GET_ITER",
               "RAISE_VARARGS", "RERAISE", "PUSH_EXC_INFO", "POP_EXCEPT", "CHECK_EXC_MATCH",
               "BEFORE_WITH", "MAKE_FUNCTION"),
    info.V311: ("LOAD_METHOD", "LIST_TO_TUPLE"),
    info.SINCE_312: ("LOAD_SUPER_ATTR",),
})
# CALL_INTRINSIC_1 (3.12+) moves only for LIST_TO_TUPLE (``f(*args)``);
# its other forms (``+n``...) compute.
_LIST_TO_TUPLE = dis._intrinsic_1_descs.index("INTRINSIC_LIST_TO_TUPLE") \
    if hasattr(dis, "_intrinsic_1_descs") else None
# Slices of a container (3.12+): the container's depth below the top.
_SLICES = info.for_running({info.SINCE_312: ("BINARY_SLICE", "STORE_SLICE")})
_TOP_FRAME_EXITS = info.RETURNS | info.for_running({info.ALL: ("YIELD_VALUE",)})
_STORED_AT = {"STORE_ATTR": -2, "STORE_SUBSCR": -3, "STORE_GLOBAL": -1, "STORE_DEREF": -1,
              "STORE_NAME": -1}
_TRUTH = info.TRUTH_TESTS | info.KEEPS_ON_JUMP | info.for_running({info.ALL: ("UNARY_NOT",),
                                              info.SINCE_313: ("TO_BOOL",)})

_COUNTED = info.stack_names()
# Instructions that hash values into a dict or set: the stack positions of the keys.
_HASHED = {"BUILD_MAP": lambda n: range(-2 * n, 0, 2), "BUILD_SET": lambda n: range(-n, 0),
           "SET_ADD": lambda n: (-1,), "MAP_ADD": lambda n: (-2,)}

# Native callables that only move or count the items of what they get.
# (not ``type``: it gets the plain int, so ``type(n) is int`` holds as natively)
_NATIVE_MOVES = (len, isinstance, tuple, list, torch.Size)


class DataDependentValue(Exception):
    """A Python decision on an int from tensor data (a value symbol of
    :mod:`.listed_ints`): the capture breaks (``data-dependent-value``)."""


def break_kind(error):
    """The break kind of a decision the sizes could not make."""
    return "data-dependent-value" if isinstance(error, DataDependentValue) \
        else "data-dependent-shape"


class SizeTracker:
    """The symbolic shapes of one capture: shape environment, fake mode,
    the fake value of every graph node replayed so far, and what was
    specialized and why."""

    def __init__(self, policy, interp=None):
        from torch._subclasses.fake_tensor import FakeTensorMode
        from torch.fx.experimental.symbolic_shapes import ShapeEnv

        self.policy = policy  # (source, tensor) -> a DimChoice (shape_guards.py)
        self.interp = interp  # the capture's InterpState (its vm runs the frames)
        self.shape_env = ShapeEnv()
        self.fake_mode = FakeTensorMode(shape_env=self.shape_env)
        self.fakes = {}  # FX node -> its fake value
        self.inputs = []  # (source, placeholder, fake tensor, DimChoice), graph order
        self.specialized = []  # (what, why, site) for explain
        self.given_up = None  # why the capture fell back to exact shapes
        self.native_depth = 0  # torch's Python functions running natively
        self.unbacked = False  # the graph has ops with data-dependent output sizes
        self.value_symbols = set()  # the unbacked symbols of ints from tensor data
        self.lost_unbacked = False  # give_up made a data-dependent int plain
        self.leaving = LeavingInts()  # ints from tensor data returned by a graph output
        self._sizes = {}  # (node, dim or kind) -> (SymInt, its node)

    @property
    def active(self):
        return self.given_up is None

    def allow_unbacked(self):
        """May the graph hold an op with a data-dependent output size (an
        unbacked size: torch's fake tensors give it a symbol no guard
        fixes)?  Only while the sizes are followed."""
        if not self.active:
            return False
        self.unbacked = True
        return True

    def note_values(self, syms):
        """``syms`` (unbacked SymInts) stand for ints from tensor data."""
        for sym in syms:
            self.value_symbols |= sym.node.expr.free_symbols

    def give_up(self, why, breaking=False):
        """Stop keeping sizes symbolic: the entry guards exact shapes.  The
        SymbolicInts the run's frames hold become plain ints (nothing
        follows them any more, and the program must not see them).  One
        whose value depends on tensor data would be a constant from now
        on: unless a break (``breaking``) is giving the sizes up, that is
        a break too."""
        if self.given_up is not None:
            return
        self.given_up = why
        vm = self.interp.vm if self.interp is not None else None
        frame = vm.top if vm is not None else None
        while frame is not None:
            for values in (frame.stack, frame.fast):
                for i, v in enumerate(values):
                    if carries(v):
                        self.lost_unbacked |= holds_unbacked(v)
                        values[i] = plain(v)
            frame = frame.back
        if self.lost_unbacked and not breaking:
            vm.capture.break_graph("data-dependent-value" if self.value_symbols else
                                   "data-dependent-shape",
                                   "the sizes could no longer be followed (%s) while a "
                                   "data-dependent int was live" % why)

    # -- fake replay ------------------------------------------------------------
    def fake_of(self, node, recorder):
        """The fake value of ``node`` (a node of ``recorder``'s graph),
        replaying the ops recorded since the last call; None after
        :meth:`give_up`."""
        fake = self.fakes.get(node)
        if fake is not None or not self.active:
            return fake
        for n in recorder.graph.nodes:
            if n in self.fakes or n.op == "output":
                continue
            try:
                self.fakes[n] = self._replay(n, recorder)
            except Exception as e:  # noqa: BLE001 - an op fake tensors cannot run
                self.give_up("the op %s could not run on symbolic shapes (%s: %s)"
                             % (_target_name(n), type(e).__name__, str(e).split("\n")[0][:200]))
                return None
            if n is node:
                break
        return self.fakes.get(node)

    def _replay(self, node, recorder):
        if node.op == "placeholder":
            return self._fake_input(node, recorder)
        if node.op not in ("call_function", "call_method"):
            raise NotImplementedError("a %s node" % node.op)
        fakes = self.fakes

        def fake(a):
            return fakes[a]

        args = torch.fx.node.map_arg(node.args, fake)
        kwargs = torch.fx.node.map_arg(node.kwargs, fake)
        with torch._C.DisableTorchFunction(), self.fake_mode, quiet_replay.replaying():
            if node.op == "call_method":
                return getattr(args[0], node.target)(*args[1:], **kwargs)
            return node.target(*args, **kwargs)

    def _fake_input(self, node, recorder):
        from torch._dynamo.source import LocalSource
        from torch.fx.experimental.symbolic_shapes import StatelessSymbolicContext

        tensor = node.meta["example_value"]
        source = next(s for s, _, n in recorder.inputs if n is node)
        choice = self.policy(source, tensor) if self.policy is not None else None
        name = "a%d" % len(self.inputs)
        # (outside the recording mode: an int of tensor data can become an
        # unbacked size while an instruction runs, listed_ints.promote)
        with torch._C.DisableTorchFunction():
            if choice is None or not choice.dynamic:
                fake = self.fake_mode.from_tensor(tensor, static_shapes=True,
                                                  source=LocalSource(name))
            else:
                context = StatelessSymbolicContext(dynamic_sizes=choice.dim_dynamic(),
                                                   constraint_sizes=choice.constraints())
                fake = self.fake_mode.from_tensor(tensor, symbolic_context=context,
                                                  source=LocalSource(name))
        self.inputs.append((source, node, fake, choice))
        return fake

    # -- reading sizes ---------------------------------------------------------------
    def size(self, recorder, tensor, dim):
        """``tensor.size(dim)``: a SymbolicInt if that size is symbolic."""
        real = tensor.shape[dim]
        fake = self._fake_tensor(recorder, tensor)
        if fake is None:
            return real
        dim = dim + fake.dim() if dim < 0 else dim
        return self._symbolic(recorder, real, fake.shape[dim], (tensor, dim),
                              "size", dim)

    def shape(self, recorder, tensor):
        """``tensor.shape``: a ``torch.Size`` holding SymbolicInts for the
        symbolic sizes."""
        fake = self._fake_tensor(recorder, tensor)
        real = tensor.shape
        if fake is None or not any(type(s) is torch.SymInt for s in fake.shape):
            return real
        return torch.Size([self._symbolic(recorder, r, f, (tensor, d), "size", d)
                           for d, (r, f) in enumerate(zip(real, fake.shape))])

    def numel(self, recorder, tensor):
        fake = self._fake_tensor(recorder, tensor)
        real = tensor.numel()
        if fake is None:
            return real
        return self._symbolic(recorder, real, fake.numel(), (tensor, "numel"),
                              "numel")

    def strides(self, recorder, tensor):
        """``tensor.stride()``: plain ints; symbolic strides are specialized
        (a program reading them computes with exact layouts)."""
        fake = self._fake_tensor(recorder, tensor)
        if fake is not None:
            for s in fake.stride():
                self._guard_value(s)
            if any(type(s) is torch.SymInt for s in fake.stride()):
                self.specialized.append(("a stride", "Tensor.stride() was read", None))
        return tensor.stride()

    def specialize_tensor(self, recorder, tensor, why, site):
        """Guard every symbolic size and stride of ``tensor`` exactly."""
        fake = self._fake_tensor(recorder, tensor)
        if fake is None:
            return
        symbolic = [s for s in tuple(fake.shape) + tuple(fake.stride())
                    if type(s) is torch.SymInt and s.node.maybe_as_int() is None]
        if symbolic:
            self.specialized.append(("the sizes of a %s tensor" % (tuple(tensor.shape),),
                                     why, site))
        for s in symbolic:
            self._guard_value(s)

    def _fake_tensor(self, recorder, tensor):
        """The fake tensor of ``tensor``; None after :meth:`give_up` (then
        the entry guards exact shapes).  A size the graph cannot follow (a
        tensor subclass, a tensor with no node) gives up: its real value
        would otherwise be taken for a constant."""
        if not self.active:
            return None
        if type(tensor) not in (Tensor, torch.nn.Parameter):
            self.give_up("a size of a %s was read" % type(tensor).__name__)
            return None
        from ...refgraph.fxgraph import Unrepresentable

        try:
            node = recorder.node_for(tensor)
        except Unrepresentable as e:
            self.give_up("a size of a tensor outside the graph was read (%s)" % e.message)
            return None
        fake = self.fake_of(node, recorder)
        if not isinstance(fake, Tensor):
            if self.active:
                self.give_up("a size of a tensor the fake replay did not make was read")
            return None
        if fake.dim() != tensor.dim() or any(
                h is not None and h != r for h, r in zip(_hints(fake.shape), tensor.shape)):
            self.give_up("a symbolic shape %s disagreed with the real one %s"
                         % (tuple(fake.shape), tuple(tensor.shape)))
            return None
        return fake

    def _symbolic(self, recorder, real, sym, key, method, *extra):
        if type(sym) is not torch.SymInt or sym.node.maybe_as_int() is not None:
            return real
        known = self._sizes.get(key)
        if known is None or getattr(known[1], "_erased", False):  # (a speculative arm's)
            tensor = key[0]
            # (a method call: cheap when the eager backend runs the graph)
            node = recorder.graph.call_method(method, (recorder.node_for(tensor),) + extra)
            known = self._sizes[key] = (sym, node)
            recorder.pinned.append(tensor)  # (its id keys the memo)
        return SymbolicInt(real, known[0], known[1])

    # -- arithmetic and decisions ----------------------------------------------------
    def arithmetic(self, recorder, op, lhs, rhs):
        """``op(lhs, rhs)`` of ints, at least one a SymbolicInt."""
        value = op(int(lhs), int(rhs))
        sym = op(_sym(lhs), _sym(rhs))
        if type(sym) is not torch.SymInt or sym.node.maybe_as_int() is not None:
            return value
        node = recorder.graph.call_function(op, (_node(lhs), _node(rhs)))
        return SymbolicInt(value, sym, node)

    def negate(self, recorder, operand):
        sym = -operand.sym
        return SymbolicInt(-int(operand), sym, recorder.graph.call_function(
            operator.neg, (operand.node,)))

    def decide(self, value, *operands):
        """The truth of a SymBool or SymInt (a relation guarded from now
        on), computed from ``operands`` (SymbolicInts and ints)."""
        for v in (value,) + operands:
            self._check_not_value(v.sym if type(v) is SymbolicInt else v)
        return bool(value)

    def from_data(self, *values):
        """True if one of ``values`` is a SymbolicInt whose value tensor
        data decides (an int from ``.item()``/``.tolist()``): a decision on
        it is never a guard."""
        return any(type(v) is SymbolicInt and not self._check_not_value(v.sym, raising=False)
                   for v in values)

    def _check_not_value(self, sym, raising=True):
        """Raise :class:`DataDependentValue` (or return False, unless
        ``raising``) if ``sym`` depends on an int from tensor data."""
        if self.value_symbols and type(sym) in (torch.SymInt, torch.SymBool) \
                and not self.value_symbols.isdisjoint(sym.node.expr.free_symbols):
            if raising:
                raise DataDependentValue("its value decides (%s)" % sym)
            return False
        return True

    def leave(self, recorder, value, site, why="it leaves the traced function"):
        """``value``, which the traced function returns (or a call the mock
        replays receives: ``print``, logging): the SymbolicInts in it that
        tensor data decides (ints from ``.item()``/``.tolist()``,
        data-dependent sizes and arithmetic on them) leave through graph
        outputs (a 0-d int64 tensor each, :class:`LeavingInts`), as tracked
        floats do; the others are specialized (``why``).  The same value,
        with plain ints for the latter."""
        for s in each(value, RESULT_DEPTH):
            if _data_dependent(s.sym) and not self.leaving.tracks(s):
                self.leaving.add(s, data_decisions.int_tensor(recorder, s))
        return self.specialize(value, why, site, keep=self.leaving.ids(), depth=RESULT_DEPTH)

    def data_ids(self, value):
        """The ids of the SymbolicInts in ``value`` that tensor data decides
        (kept as they are when the result is made plain: those that no
        graph output gives back, :meth:`leave`, make the mock break, never
        a constant)."""
        return {id(s) for s in each(value, RESULT_DEPTH) if _data_dependent(s.sym)}

    def specialize(self, value, why, site, keep=(), depth=3):
        """Guard the exact values of the SymbolicInts in ``value``, ``depth``
        containers deep (but those whose ids are in ``keep``); the same
        value with plain ints."""
        found = [s for s in each(value, depth) if id(s) not in keep]
        for s in found:
            if not self._check_not_value(s.sym, raising=False):
                raise DataDependentValue("its value is needed (%s)" % why)
        if found:
            self.specialized.append((_describe(value), why, site))
        for s in found:
            self._guard_value(s.sym)
        return plain(value, depth, keep=keep)

    def _guard_value(self, sym):
        if type(sym) is torch.SymInt:
            self._check_not_value(sym)
            from torch.fx.experimental.symbolic_shapes import guard_int

            guard_int(sym)


class LeavingInts(identity.IdentityTable):
    """The SymbolicInts from tensor data in the traced function's result:
    ``id -> (value, 0-d int64 tensor of the graph)``.  Each is a graph
    output, which the mock reads back with ``.item()``
    (``codegen.mockgen``'s ``scalar`` kind)."""

    TYPES = (SymbolicInt,)

    def add(self, value, tensor):
        self._entries[id(value)] = (value, tensor)

    def tensor(self, value):
        return self._entries[id(value)][1]

    def ids(self):
        return self._entries.keys()


def _data_dependent(sym):
    """True if ``sym`` depends on an unbacked symbol (tensor data decides it)."""
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    return type(sym) is torch.SymInt and bool(free_unbacked_symbols(sym))


def holds_unbacked(value):
    """True if ``value`` is or holds a SymbolicInt that depends on an
    unbacked symbol (a data-dependent size, an int from tensor data)."""
    return any(_data_dependent(s.sym) for s in each(value))


def _hints(shape):
    """The sizes' values on this call (None for an unbacked size)."""
    from torch.fx.experimental.symbolic_shapes import guarding_hint_or_throw, has_guarding_hint

    return [guarding_hint_or_throw(s) if has_guarding_hint(s) else None for s in shape]


def _sym(value):
    return value.sym if type(value) is SymbolicInt else int(value)


def _node(value):
    return value.node if type(value) is SymbolicInt else int(value)


def _describe(value):
    if type(value) is SymbolicInt:
        return "a size (%s, %d on this call)" % (value.sym, int(value))
    return "sizes in a %s" % type(value).__name__


def _target_name(node):
    target = node.target
    return target if isinstance(target, str) else getattr(target, "__name__", repr(target))


# -- the run's torch calls ---------------------------------------------------------
def read(cap, func, name, prop, args):
    """A size read by a torch call, or None when ``func`` is no size read
    of a tensor with symbolic sizes (then the call runs as usual)."""
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    try:
        return _read(cap, func, prop, args)
    except (GuardOnDataDependentSymNode, DataDependentValue) as e:
        cap.break_graph(break_kind(e), "%s needs the exact value of a data-dependent size"
                        % (prop or name))
        return None


def _read(cap, func, prop, args):
    sizes = cap.recording.sizes
    if not args or not issubclass(type(args[0]), Tensor):
        return None
    if not sizes.active:
        if sizes.unbacked:  # (a data-dependent size would be read as a constant)
            cap.break_graph("data-dependent-shape", "a size was read after the sizes could "
                            "no longer be followed (%s)" % sizes.given_up)
        return None
    rec = cap.recording.recorder
    tensor = args[0]
    if sizes.native_depth:
        # torch's own Python run natively (capture's call_torch) computes
        # with the sizes where the graph cannot follow: exact sizes
        sizes.specialize_tensor(rec, tensor, "torch's Python code read them natively",
                                cap.site())
        return None
    if prop == "shape" and len(args) == 1:
        return sizes.shape(rec, tensor)
    if func is _SIZE:
        if len(args) == 1:
            return sizes.shape(rec, tensor)
        if len(args) == 2 and type(args[1]) is int:
            return sizes.size(rec, tensor, args[1])
        return None  # (after_call: the plain result fixes the sizes)
    if func is _LEN:
        return sizes.size(rec, tensor, 0) if tensor.dim() else None
    if func is _NUMEL and len(args) == 1:
        return sizes.numel(rec, tensor)
    if func is _STRIDE and len(args) == 1:
        return sizes.strides(rec, tensor)
    return None


# Tensor methods and properties whose plain results do not depend on sizes.
_SIZE_FREE = frozenset({
    "dim", "ndim", "ndimension", "element_size", "get_device", "is_floating_point",
    "is_complex", "is_signed", "is_cuda", "is_cpu", "is_sparse", "is_quantized", "is_meta",
    "is_mkldnn", "is_nested", "requires_grad", "is_leaf", "_version", "is_inference",
    "is_conj", "is_neg", "dtype", "device", "layout", "names", "grad_fn", "retains_grad",
})
_PLAIN_RESULTS = (int, float, bool, tuple, list, torch.Size)


def after_call(cap, name, args, kwargs, result):
    """After a torch call the size reads did not model (``torch.numel(x)``,
    ``x.stride(0)``, ``x.size(dim=1)``, ``x.tolist()``, ``torch.is_same_size``...):
    a plain result that may depend on the sizes of a tensor argument fixes
    those sizes (its exact sizes are guarded)."""
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    sizes = cap.recording.sizes
    if name in _SIZE_FREE or not sizes.active or not issubclass(type(result), _PLAIN_RESULTS) \
            or _has_tensor(result):
        return
    try:
        for value in tuple(args) + tuple(kwargs.values()):
            if issubclass(type(value), Tensor):
                sizes.specialize_tensor(cap.recording.recorder, value,
                                        "%s() gave a plain value" % name, cap.site())
    except (GuardOnDataDependentSymNode, DataDependentValue) as e:
        cap.break_graph(break_kind(e), "%s() needs the exact value of a data-dependent size"
                        % name)


def _has_tensor(value):
    if issubclass(type(value), Tensor):
        return True
    return issubclass(type(value), (tuple, list)) and any(_has_tensor(v) for v in value)


_SIZE = Tensor.size
_LEN = Tensor.__len__
_NUMEL = Tensor.numel
_STRIDE = Tensor.stride


# -- instructions ---------------------------------------------------------------------
def step(vm, frame, ins):
    """Before a (non-inline) instruction of a capture with symbolic sizes:
    run it here if it computes on SymbolicInts (arithmetic, comparisons,
    truth tests; then True), or specialize the ones it would consume in a
    way the graph cannot follow (then False: it runs as usual).  A
    decision on a data-dependent (unbacked) size is a graph break."""
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    try:
        return _step(vm, frame, ins)
    except GuardOnDataDependentSymNode:
        vm.capture.break_graph("data-dependent-shape", "%s decides on a data-dependent size"
                               % ins.opname)
        return False
    except DataDependentValue as e:
        vm.capture.break_graph("data-dependent-value", "%s on a Python int from tensor data "
                               "(.item(), int() or .tolist()): %s" % (ins.opname, e))
        return False


def _step(vm, frame, ins):
    cap = vm.capture
    sizes = cap.recording.sizes
    stack = frame.stack
    name = ins.opname
    if name == "BINARY_OP":
        return _binary_op(cap, sizes, frame, ins)
    if name == "COMPARE_OP":
        return _compare_op(vm, cap, sizes, frame, ins)
    if name == "UNARY_NEGATIVE":
        if type(stack[-1]) is SymbolicInt:
            stack[-1] = sizes.negate(cap.recording.recorder, stack[-1])
            return True
        return False
    if name in _TRUTH:
        if type(stack[-1]) is SymbolicInt:
            if name in info.KEEPS_ON_JUMP:
                stack[-1] = sizes.specialize(stack[-1], "its value is kept by " + name,
                                             cap.site())
            else:  # the jump sees the decided truth (a guarded relation)
                truth = _decided(sizes, stack[-1].sym, stack[-1])
                if truth is None and data_decisions.truth(vm, frame, ins):
                    return False  # (the data decides: a condition on tensor data, or assumed)
                stack[-1] = truth if truth is not None \
                    else sizes.decide(stack[-1].sym, stack[-1])
        return False
    if name in info.CALLS:
        _call(cap, sizes, frame, ins)
        return False
    if name in _TOP_FRAME_EXITS:
        if not (stack and carries(stack[-1], RESULT_DEPTH)):
            return False
        kind = receivers.receiver()
        if kind is receivers.RESULT and name in info.RETURNS:
            stack[-1] = sizes.leave(cap.recording.recorder, stack[-1], cap.site())
        elif kind is not receivers.INSTRUCTION:  # (a generator's item, a sort key, __len__)
            stack[-1] = sizes.specialize(stack[-1], "it leaves the traced function"
                                         if kind is receivers.RESULT or frame.back is None
                                         else "%s hands it to code that reads its value" % name,
                                         cap.site(), depth=RESULT_DEPTH)
        return False
    if name in _STORED_AT:
        if name == "STORE_SUBSCR" and issubclass(type(stack[-2]), Tensor):
            return False  # (x[:n] = v: the tensor op records the sizes)
        # the stored value, and a key (its hash and equality decide)
        for at in (_STORED_AT[name], -1) if name == "STORE_SUBSCR" else (_STORED_AT[name],):
            if carries(stack[at]):
                stack[at] = sizes.specialize(stack[at], "it is stored (%s)" % name, cap.site())
        return False
    if name in _HASHED:  # {n: v}, {n}: the key's hash and equality decide
        for at in _HASHED[name](ins.arg):
            if carries(stack[at]):
                stack[at] = sizes.specialize(stack[at], "it is a key (%s)" % name, cap.site())
        return False
    if name in _MOVES or name in info.CONDITIONAL_JUMPS:
        return False
    if name == "CALL_INTRINSIC_1" and ins.arg == _LIST_TO_TUPLE:
        return False
    if name in _SLICES:  # x[a:b] (3.12+): a tensor's slice records the sizes
        if not issubclass(type(stack[-3]), Tensor):
            for at in (-2, -1):
                if carries(stack[at]):
                    stack[at] = sizes.specialize(stack[at], "it slices a %s"
                                                 % type(stack[-3]).__name__, cap.site())
        return False
    if name == "BINARY_SUBSCR":
        if carries(stack[-1]) and not issubclass(type(stack[-2]), Tensor):
            stack[-1] = sizes.specialize(stack[-1], "it indexes a %s" % type(stack[-2]).__name__,
                                         cap.site())
        return False
    pops = info.pops(name, ins.arg) if name in _COUNTED else None
    for i in range(len(stack) - pops if pops is not None else 0, len(stack)):
        if carries(stack[i]):
            stack[i] = sizes.specialize(stack[i], "%s reads it" % name, cap.site())
    return False


def _tracked_operand(cap, frame):
    """Is an operand of the binary instruction about to run in ``frame`` a
    tracked int (:mod:`.tracked_ints`: a plain int standing for a node)?"""
    shadow = cap.recording.ints.shadow(frame)
    depth = len(frame.stack)
    return shadow is not None and (depth - 1 in shadow.stack or depth - 2 in shadow.stack)


def _binary_op(cap, sizes, frame, ins):
    stack = frame.stack
    lhs, rhs = stack[-2], stack[-1]
    if type(lhs) is not SymbolicInt and type(rhs) is not SymbolicInt \
            or issubclass(type(lhs), Tensor) or issubclass(type(rhs), Tensor):
        return False  # (a tensor op records the size's node: RecordingMode)
    symbol = info.NB_SYMBOL.get(ins.arg)
    op = ARITHMETIC.get(symbol)
    ints = all(type(v) in (int, SymbolicInt) for v in (lhs, rhs))
    if (op is None or not ints) and _float_arithmetic(cap, sizes, frame, symbol):
        return True
    if op is None or not ints or _tracked_operand(cap, frame) or (
            op in (operator.floordiv, operator.mod) and not sizes.decide(_sym(rhs) > 0, rhs)):
        # (a tracked int from tensor data, a float, a tensor, a container:
        # the other side is not a size; // and % by a non-positive size
        # are left to Python's own errors and signs)
        for at in (-2, -1):
            if type(stack[at]) is SymbolicInt:
                stack[at] = sizes.specialize(stack[at], "%r with a %s" % (
                    symbol, type(stack[at + 1 if at == -2 else -2]).__name__), cap.site())
        return False
    result = sizes.arithmetic(cap.recording.recorder, op, lhs, rhs)
    del stack[-2:]
    stack.append(result)
    return True


_CPU = torch.device("cpu")


def _float_arithmetic(cap, sizes, frame, symbol):
    """``n / 8``, ``correct / len(y)``, ``n * 0.5``, ``n + loss_value``:
    arithmetic with an int from tensor data whose result is a Python float.
    The graph computes it in float64 (the int's ``scalar_tensor``, exact
    below 2**53, then IEEE arithmetic, as Python's), and :mod:`.scalars`
    tracks the float from here on; True when done.  False (the caller
    specializes, which breaks) for a division *by* a value the data
    decides, or by zero (Python raises where a graph would give inf), a
    tracked int from tensor data beside it, or a float on another device."""
    stack = frame.stack
    lhs, rhs = stack[-2], stack[-1]
    op = scalars.ARITHMETIC.get(symbol)
    table = cap.recording.scalars
    if op is None or _tracked_operand(cap, frame) \
            or not any(type(v) is SymbolicInt and _data_dependent(v.sym) for v in (lhs, rhs)) \
            or not all(type(v) in (int, float, SymbolicInt) for v in (lhs, rhs)) \
            or op is not operator.truediv and float not in (type(lhs), type(rhs)):
        return False
    if op is operator.truediv and (table.tracks(rhs) or rhs == 0 or type(rhs) is SymbolicInt
                                   and _data_dependent(rhs.sym)):
        return False
    if any(table.device(v) != _CPU for v in (lhs, rhs) if table.tracks(v)):
        return False  # (the int's scalar_tensor is made on the CPU)
    if op is operator.truediv and type(rhs) is SymbolicInt and not sizes.decide(rhs.sym != 0, rhs):
        return False  # (by a size: guarded nonzero)
    exact = scalars.exact_ints(op, (lhs, rhs))  # (the graph checks the ints' size)
    if exact and any(abs(int(v)) >= scalars.EXACT_FLOAT_INTS for v in (lhs, rhs)):
        return False
    value = op(int(lhs) if type(lhs) is SymbolicInt else lhs,
               int(rhs) if type(rhs) is SymbolicInt else rhs)
    rec = cap.recording.recorder

    def operand(v):
        if type(v) is SymbolicInt:
            node = rec.graph.call_function(torch.scalar_tensor, (v.node,),
                                           {"dtype": torch.float64})
            return scalars.checked_exact(rec.graph, node) if exact else node
        return table.node(v, rec) if table.tracks(v) else v

    table.add(value, rec, lambda: rec.graph.call_function(op, (operand(lhs), operand(rhs))),
              _CPU)
    del stack[-2:]
    stack.append(value)
    return True


def _compare_op(vm, cap, sizes, frame, ins):
    stack = frame.stack
    lhs, rhs = stack[-2], stack[-1]
    if issubclass(type(lhs), Tensor) or issubclass(type(rhs), Tensor) \
            or not (carries(lhs) or carries(rhs)):
        return False
    symbol = ins.argval
    if isinstance(symbol, str) and symbol.startswith("bool("):
        symbol = symbol[5:-1]
    op = COMPARISONS.get(symbol)
    if op is None or not all(type(v) in (int, SymbolicInt) for v in (lhs, rhs)):
        # (x.shape == y.shape: containers compared item by item natively)
        for at in (-2, -1):
            if carries(stack[at]):
                stack[at] = sizes.specialize(stack[at], "compared with a %s" % type(
                    stack[-1 if at == -2 else -2]).__name__, cap.site())
        return False
    relation = op(_sym(lhs), _sym(rhs))
    # (n > 0 of an int from tensor data, idx.shape[0] == 0 of a nonzero():
    # the data decides, not the shapes)
    truth = _decided(sizes, relation, lhs, rhs)
    if truth is None and data_decisions.compare(vm, frame, ins, op, lhs, rhs):
        return True
    if truth is None:
        truth = sizes.decide(relation, lhs, rhs)  # (raises: a break)
    del stack[-2:]
    stack.append(truth)
    return True


def _decided(sizes, relation, *operands):
    """The truth of ``relation`` as the shape environment decides it (a
    guarded relation), or None where tensor data decides it: an int from
    tensor data, or a data-dependent size it cannot decide."""
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    if sizes.from_data(*operands):
        return None
    try:
        return sizes.decide(relation, *operands)
    except GuardOnDataDependentSymNode:
        return None


# -- calls ---------------------------------------------------------------------------


def _call(cap, sizes, frame, ins):
    """Before a call: a native callee that would compute with sizes the
    graph cannot follow gets them specialized, as plain ints (interpreted
    Python code, torch ops and torch functions that dispatch to the
    recording mode see them as they are)."""
    stack = frame.stack
    if ins.opname == "CALL_FUNCTION_EX":
        top = len(stack) - 1 - (ins.arg & 1)  # the *args tuple (then **kwargs)
        fn = stack[top - 1] if stack[top - 1] is not NULL else stack[top - 2]
        first, last = top, len(stack)
    else:
        names = 1 if ins.opname == "CALL_KW" else 0
        nargs = ins.arg
        fn, args = peek_call(stack[:len(stack) - names] if names else stack, nargs)
        last = len(stack) - names
        first = last - len(args)
    owner = getattr(fn, "__self__", None) if type(fn) in _BOUND_NATIVE else None
    if type(owner) is SymbolicInt:  # n.bit_length(): the int's own C method
        sizes.specialize(owner, "its method %s() ran" % fn.__name__, cap.site())
    elif type(owner) in (list, tuple) and fn.__name__ in _COMPARING and carries(owner):
        # ns.sort(), ns.index(n): the items are compared natively
        sizes.specialize(owner, "%s.%s() compared it" % (type(owner).__name__, fn.__name__),
                         cap.site())
    if not any(carries(stack[i]) for i in range(first, last)):
        return
    if _may_receive(fn) and not (type(owner) is list and cap.recording.refgraph.is_outside(owner)):
        return  # (an outside list's append is a write the mock replays: exact values)
    if getattr(calls.interception(fn, calls.CAPTURE), "replays", False):
        return  # (print(n): special_calls.deferred hands the ints to the replay)
    if ins.opname != "CALL_FUNCTION_EX" and legacy_tensors.takes_sizes(fn, args):
        return  # (torch.Tensor(n, d): recorded as torch.empty(n, d))
    for i in range(_iterated(fn, frame, ins, first, last), last):
        if carries(stack[i]):
            stack[i] = sizes.specialize(stack[i], "%s() received it" % _spell(fn), cap.site())


_BOUND_NATIVE = (types.BuiltinMethodType, types.MethodWrapperType)
_COMPARING = frozenset({"sort", "index", "count", "remove", "__contains__", "__eq__", "__ne__",
                        "__lt__", "__le__", "__gt__", "__ge__"})
# Natives whose iterators give the items of their leading positional
# arguments as they are (how many arguments: None for all).
_ITERATORS = ((enumerate, 1), (zip, None), (reversed, 1), (iter, 1))


def _iterated(fn, frame, ins, first, last):
    """The stack position after the arguments of the call that ``fn`` only
    iterates (``enumerate(ns)``, ``zip(ns, xs)``): ``first`` for any
    other callee."""
    count = next((n for f, n in _ITERATORS if fn is f), 0)
    if count == 0 or ins.opname == "CALL_FUNCTION_EX":
        return first
    names = frame.stack[-1] if ins.opname == "CALL_KW" else frame.kw_names
    positional = last - first - len(names or ())
    return first + (positional if count is None else min(count, positional))


def guard_operands(cap, frame, ins):
    """Before an instruction that :mod:`.tracked_ints` models (a frame
    holding ints from tensor data): sizes among its operands are exact
    (the model would take them for constants)."""
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    try:
        _guard_operands(cap, frame, ins)
    except (GuardOnDataDependentSymNode, DataDependentValue) as e:
        cap.break_graph(break_kind(e), "a data-dependent size next to an int from tensor data")


def _guard_operands(cap, frame, ins):
    if ins.opname in ("BINARY_OP", "COMPARE_OP"):
        stack = frame.stack
        for at in (-2, -1):
            if carries(stack[at]):
                stack[at] = cap.recording.sizes.specialize(
                    stack[at], "an operand next to an int from tensor data", cap.site())


def _may_receive(fn):
    if type(fn) is types.MethodType:
        fn = fn.__func__
    if type(fn) is types.FunctionType:
        if not is_torch_function(fn):
            return True  # interpreted: ints cross frames
        # torch's Python functions run natively: only those that hand the
        # call to the recording mode first (``handle_torch_function``)
        names = fn.__code__.co_names
        return "handle_torch_function" in names
    # (by type: no __class__ of the program's objects runs)
    if issubclass(type(fn), torch.nn.Module) or any(fn is f for f in _NATIVE_MOVES):
        return True
    if issubclass(type(fn), type):  # a class of the program: its methods are interpreted
        return not fn.__module__ == "builtins" and type(fn.__init__) is types.FunctionType
    if type(fn) is not types.BuiltinFunctionType and needs_interpreter(
            lookup(type(fn), "__call__")):
        return True  # a callable object with a Python __call__
    owner = getattr(fn, "__self__", None)
    if type(owner) is list and getattr(fn, "__name__", "") in ("append", "extend", "insert"):
        return True
    if issubclass(type(owner), Tensor):
        return True
    module = getattr(fn, "__module__", None) or ""
    return type(fn) is types.BuiltinFunctionType and module.startswith("torch") \
        or _is_torch_op(fn)


def _is_torch_op(fn):
    return issubclass(type(fn), (torch._ops.OpOverload, torch._ops.OpOverloadPacket)) or (
        type(fn).__name__ in ("method_descriptor", "wrapper_descriptor")
        and getattr(fn, "__objclass__", None) in (Tensor, torch._C.TensorBase))


def _spell(fn):
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) \
        or type(fn).__name__
