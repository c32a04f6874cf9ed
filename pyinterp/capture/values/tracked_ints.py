"""Python ints and bools the graph computes: ``.item()``/``int(t)`` of an
integer or bool tensor, ``int(t)`` of a float tensor (truncated in the
graph, :func:`int_of_float`) and ``bool(t)``, tracked by *where they are*.

``n = (y > 0).sum().item()`` then ``x.sum() / n``: ``n`` only feeds a
tensor op again, so nothing needs to leave the graph; ``n`` stands for a
0-d int64 node (bool for ``.item()`` of a bool tensor), as floats do in
:mod:`.scalars`.  Floats are tracked by identity, but ints cannot be: the
3 that ``int(t)`` returns is the same object as the 3 of ``range(3)`` or of
a constant, so "is this value tracked?" has no answer by value.  Here the
answer is by *location*: a :class:`Shadow` per frame names the stack slots
and local variables that hold a tracked int, and every instruction of the
frame updates it.

Which mechanism takes an int from tensor data: ``.item()``/``int(t)`` of
an integer tensor becomes an unbacked :class:`SymbolicInt` whenever the
static look at its uses allows (:func:`_size_producer`: arithmetic,
decisions the graph may keep, tensor ops, sizes, the result, a callee's
return its caller follows); that one is an object, known wherever it goes
(``locals()``, a merged branch's arms, another frame), and :mod:`.sizes`
follows it.  What stays here, by location: bools (``bool(t)``, ``.item()``
of a bool tensor), ``int(t)`` of a float tensor, ``random.randint``'s
int, a ``while`` loop's counter, and an int whose uses the size look
refuses but this one takes (a comparison that feeds a jump while no
decision may be kept in the graph).

A ``while`` loop on tensor data also leaves one: its Python int counter,
read after the loop (``graphmend/whileloop.py``).  Only frames whose code
may produce one (its names include ``item`` or ``int``: :func:`may_produce`,
or it has a ``while`` loop: ``graphmend.looptest.has_while_loop``) can hold
tracked ints.  Their instructions
all run through the capture variants (none inline), so :func:`step` sees
every move.  What a tracked int may do without a break:

* move inside its frame: ``LOAD_FAST``, ``STORE_FAST``, ``DELETE_FAST``,
  ``POP_TOP``, ``COPY``, ``SWAP``;
* be an operand of tensor arithmetic (``x * n``, ``n - x``, ``x / n``,
  ``torch.mul(x, n)``, ``x.add(n)``...): the node, cast to the op's result
  dtype, replaces it (which is how torch treats a Python scalar operand);
* Python ``+``, ``-``, ``*`` with another int (plain or tracked): the
  result is tracked in turn (int64 arithmetic: past 2**63 Python's ints
  would differ); ``+ - * /`` with a float or ``/`` by a non-zero plain
  number gives a float tracked by :mod:`.scalars`;
* a comparison that feeds a conditional jump, or a truth test by a jump
  (``if (y > 0).any().item():``): the jump sees a 0-d bool tensor, and the
  branch is data-dependent (:mod:`.speculate` merges it, or it is
  assumed); a comparison whose result goes elsewhere (``ok = n > 1``) is
  assumed at once (:mod:`.data_decisions`).

An int (not a bool) that an instruction is about to read in any other
way becomes an unbacked size first (:func:`_promoted`,
:func:`.listed_ints.promote`): a slice bound, a call's argument (a torch
op's size, another frame), an item of a tuple; from there
:mod:`.sizes` follows it, and a decision on it breaks at that use.  Where
that cannot be, anything else that reads a tracked int breaks the graph
*before* it runs: calls (other than the tensor ops above), returns,
containers, formatting, stores, yields, other frames.  A split at a break while a tracked int is
live is refused (the resume function would get it as a constant); the
call then finishes natively.  ``locals()``-like introspection breaks while
any tracked int is live.

Records (:class:`~..state.Capture`): owns none (its :class:`IntTable` is
held as ``recording.ints``); reads ``recording``, ``breaks``,
``speculation`` and ``interp``.
"""
import inspect
import operator
import random

import torch

from . import data_decisions, listed_ints, receivers, scalars, sizes
from .. import rules
from .int_flow import (DIVISION_SYMBOLS, consumes, flows_only_to_graph_uses,
                       flows_only_to_size_uses)
from ...errors import PyinterpInternal
from ...opcodes import info
from ...opcodes.callshape import peek_call
from ...refgraph.fxgraph import Unrepresentable

Tensor = torch.Tensor

_PRODUCER_NAMES = frozenset({"item", "int", "bool", "randint", "randrange", "getrandbits"})
# The random module's int functions (of its hidden instance), which the
# mock calls again (:mod:`.random_ints`).
RANDOM_INTS = (random.randint, random.randrange, random.getrandbits)
_PRODUCED_BY = frozenset({"item", "__int__", "__bool__"})
_ARITHMETIC = {"+": operator.add, "-": operator.sub, "*": operator.mul,
               "+=": operator.add, "-=": operator.sub, "*=": operator.mul}
_INT_TYPES = (int, bool)
_TRACKABLE_TENSORS = (Tensor, torch.nn.Parameter)

_GENERATORS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_NATIVE_CALLABLES = (type(len), type(Tensor.add), type(Tensor.__add__))


def may_produce(code):
    """True if ``code`` may produce a tracked int (it names ``item`` or
    ``int``): its frames run every instruction through :func:`step`."""
    return not _PRODUCER_NAMES.isdisjoint(code.co_names)


class TrackedInt:
    """One int or bool the graph computes: its value and how to make its
    0-d node (lazily, in the graph of ``recorder``)."""

    __slots__ = ("value", "recorder", "make", "device", "_node")

    def __init__(self, value, recorder, make, device):
        self.value, self.recorder, self.make, self.device = value, recorder, make, device
        self._node = None

    def node(self, recorder):
        if recorder is not self.recorder:
            raise Unrepresentable("data-dependent-value",
                                  "a Python int the graph computes crossed a graph break")
        if self._node is None or getattr(self._node, "_erased", False):
            self._node = self.make()
        return self._node

    def int64_node(self, recorder):
        node = self.node(recorder)
        if type(self.value) is bool:  # (bool arithmetic in Python gives ints)
            node = recorder.graph.call_method("to", (node, torch.int64))
        return node


class Shadow:
    """Where one frame's tracked ints are: stack position -> entry and
    local slot -> entry."""

    __slots__ = ("frame", "stack", "fast")

    def __init__(self, frame, stack=None, fast=None):
        self.frame = frame  # (held: its id must not be reused while it is here)
        self.stack = dict(stack or {})
        self.fast = dict(fast or {})

    def __bool__(self):
        return bool(self.stack or self.fast)

    def copy(self):
        return Shadow(self.frame, self.stack, self.fast)

    def same(self, other):
        return self.frame is other.frame and _same_entries(self.stack, other.stack) \
            and _same_entries(self.fast, other.fast)

    def entries(self):
        return list(self.stack.values()) + list(self.fast.values())


def _same_entries(a, b):
    return a.keys() == b.keys() and all(a[k] is b[k] for k in a)


class IntTable:
    """The tracked ints of one capture: a :class:`Shadow` per frame."""

    def __init__(self):
        self.shadows = {}  # id(frame) -> Shadow
        self.request = None  # the tensor whose .item()/int() a CALL is producing
        # (or the random function: RANDOM_INTS)
        self.size_request = None  # the tensor whose int a CALL makes an unbacked size
        self.produced = None  # (value, TrackedInt) the request gave
        self.operand = None  # the entry a tensor op about to run takes as a node

    def __bool__(self):
        return any(self.shadows.values())

    def shadow(self, frame):
        shadow = self.shadows.get(id(frame))
        return shadow if shadow is not None and shadow.frame is frame else None

    def clear(self):
        self.shadows.clear()
        self.request = self.produced = self.operand = self.size_request = None

    def snapshot(self):
        return {k: s.copy() for k, s in self.shadows.items() if s}

    def restore(self, snap):
        """Put the shadows back as in ``snap``, in place (a model that is
        running an instruction holds its frame's :class:`Shadow`)."""
        for key, shadow in self.shadows.items():
            if key not in snap:
                shadow.stack, shadow.fast = {}, {}
        for key, saved in snap.items():
            shadow = self.shadows.get(key)
            if shadow is None or shadow.frame is not saved.frame:
                self.shadows[key] = saved.copy()
            else:
                shadow.stack, shadow.fast = dict(saved.stack), dict(saved.fast)

    @staticmethod
    def same(a, b):
        return a.keys() == b.keys() and all(a[k].same(b[k]) for k in a)

    def make_nodes(self, recorder):
        """Make every entry's node now (before speculative arms: see
        ``speculate._nodes_before_arms``)."""
        for shadow in self.shadows.values():
            for entry in shadow.entries():
                try:
                    entry.node(recorder)
                except Unrepresentable:
                    pass


# -- the per-instruction step ---------------------------------------------------
def step(vm, frame, ins, run):
    """Run ``ins`` (by ``run(vm, frame, ins)``) in a frame that may hold
    tracked ints, keeping its :class:`Shadow` up to date."""
    cap = vm.capture
    table = cap.recording.ints
    if not cap.breaks.active or cap.interp.opaque:
        if table.shadows:
            table.clear()
        return run(vm, frame, ins)
    shadow = table.shadow(frame)
    name = ins.opname
    if name == "CALL" and not cap.speculation.depth:
        decides = data_decisions.possible(cap)
        tensor = _size_producer(frame, ins, decides)
        if tensor is not None and not (shadow and _generic_consumed(frame, ins, shadow)):
            return _produce_size(vm, frame, ins, run, tensor, shadow)
        producer = _producer(frame, ins, decides)
        if producer is not None:
            return _produce(vm, frame, ins, run, producer, shadow)
    if not shadow:
        result = run(vm, frame, ins)
        if name in info.RETURNS:
            table.shadows.pop(id(frame), None)
        return result
    if cap.recording.sizes is not None and cap.recording.sizes.active:
        sizes.guard_operands(cap, frame, ins)  # (a size next to a tracked int is exact)
    model = _MODELS.get(name)
    if model is not None:
        return model(vm, frame, ins, run, shadow)
    return _generic(vm, frame, ins, run, shadow)


def _run(vm, frame, ins, run, shadow):
    """``run`` the instruction; an exception trims the shadow to the
    handler's stack depth (or drops it when the exception leaves)."""
    try:
        return run(vm, frame, ins)
    except Exception as e:
        if not isinstance(e, PyinterpInternal):
            if ins.exc_target is None:
                vm.capture.recording.ints.shadows.pop(id(frame), None)
            else:
                for pos in [p for p in shadow.stack if p >= ins.exc_depth]:
                    del shadow.stack[pos]
        raise


def _generic(vm, frame, ins, run, shadow):
    """Any other instruction: it may not read a tracked int (the top
    :func:`~.int_flow.consumes` slots, or a local for the 3.13
    superinstructions); if it would, break before it runs."""
    cap = vm.capture
    name = ins.opname
    depth = len(frame.stack)
    pops = consumes(ins)
    if "FAST" in name and shadow.fast:
        consumed = True  # (a local read or written in a way not modeled here)
    elif pops is None:
        consumed = bool(shadow.stack)
    else:
        consumed = any(p >= depth - pops for p in shadow.stack)
    if consumed and not ("FAST" in name and shadow.fast) \
            and _promoted(cap, frame, shadow, depth - pops if pops is not None else 0):
        consumed = False
    if consumed:
        _break(cap, "%s on a Python int the graph computes" % name)
        return run(vm, frame, ins)
    result = _run(vm, frame, ins, run, shadow)
    if name in info.RETURNS:
        cap.recording.ints.shadows.pop(id(frame), None)
    return result


def _break(cap, message):
    cap.break_graph("data-dependent-value", message)
    if not cap.breaks.active:
        cap.recording.ints.clear()


# -- moves ----------------------------------------------------------------------
def _load_fast(vm, frame, ins, run, shadow):
    """``LOAD_FAST`` and its forms (``-- value``): a tracked local's entry
    follows the value onto the stack (``LOAD_FAST_AND_CLEAR`` moves it)."""
    entry = shadow.fast.get(ins.argval)
    depth = len(frame.stack)
    result = _run(vm, frame, ins, run, shadow)
    if entry is not None and len(frame.stack) == depth + 1:
        shadow.stack[depth] = entry
    if ins.opname == "LOAD_FAST_AND_CLEAR":
        shadow.fast.pop(ins.argval, None)
    return result


def _store_fast(vm, frame, ins, run, shadow):
    """``STORE_FAST`` (``value --``): the local takes the top's entry, or
    loses its own."""
    top = len(frame.stack) - 1
    entry = shadow.stack.pop(top, None)
    result = _run(vm, frame, ins, run, shadow)
    if entry is None:
        shadow.fast.pop(ins.argval, None)
    else:
        shadow.fast[ins.argval] = entry
    return result


def _delete_fast(vm, frame, ins, run, shadow):
    """``DELETE_FAST`` (``--``): the local loses its entry."""
    result = _run(vm, frame, ins, run, shadow)
    shadow.fast.pop(ins.argval, None)
    return result


def _pop_top(vm, frame, ins, run, shadow):
    """``POP_TOP`` (``value --``): the top's entry goes with it."""
    shadow.stack.pop(len(frame.stack) - 1, None)
    return _run(vm, frame, ins, run, shadow)


def _slot_pair(vm, frame, ins, run, shadow):
    """3.13's slot-pair superinstructions (``LOAD_FAST_LOAD_FAST``,
    ``STORE_FAST_LOAD_FAST``, ``STORE_FAST_STORE_FAST``): entries move as
    through the two halves (:data:`~...opcodes.info.SLOT_PAIR_HALVES`), in
    order.  The entries move before it runs: a failing load's store has
    happened (the exception then trims the stack's entries, :func:`_run`)."""
    depth = len(frame.stack)
    for half, slot in zip(info.SLOT_PAIR_HALVES[ins.opname], ins.argval):
        if half == "STORE_FAST":
            depth -= 1
            entry = shadow.stack.pop(depth, None)
            if entry is None:
                shadow.fast.pop(slot, None)
            else:
                shadow.fast[slot] = entry
        else:
            entry = shadow.fast.get(slot)
            if entry is not None:
                shadow.stack[depth] = entry
            depth += 1
    return _run(vm, frame, ins, run, shadow)


def _to_bool(vm, frame, ins, run, shadow):
    """3.13 ``TO_BOOL``: folded into the truth test after it (``ins.to_bool``
    False, see the decoder) it leaves the top, and its entry, as they are:
    the jump tests it (:func:`_jump`); any other conversion is a use."""
    if ins.to_bool:
        return _generic(vm, frame, ins, run, shadow)
    return _run(vm, frame, ins, run, shadow)


def _copy(vm, frame, ins, run, shadow):
    """``COPY i`` (``... v -- ... v v``): the copy shares the entry."""
    depth = len(frame.stack)
    entry = shadow.stack.get(depth - ins.arg)
    result = _run(vm, frame, ins, run, shadow)
    if entry is not None:
        shadow.stack[depth] = entry
    return result


def _swap(vm, frame, ins, run, shadow):
    """``SWAP i``: the two slots' entries swap too."""
    depth = len(frame.stack)
    top, other = depth - 1, depth - ins.arg
    a, b = shadow.stack.pop(top, None), shadow.stack.pop(other, None)
    result = _run(vm, frame, ins, run, shadow)
    if a is not None:
        shadow.stack[other] = a
    if b is not None:
        shadow.stack[top] = b
    return result


# -- producing ----------------------------------------------------------------
def _producer(frame, ins, decides=False):
    """The tensor whose ``.item()`` or ``int()`` this CALL makes, if it
    makes a trackable int (an integer or bool tensor of one element) that
    may only feed what a tracked int can do (:func:`flows_only_to_graph_uses`);
    or the random function (:data:`RANDOM_INTS`) whose int it makes, of
    plain int arguments."""
    peeked = _peek_call(frame, ins)
    if peeked is None:
        return None
    fn, args, base = peeked
    if any(fn is f for f in RANDOM_INTS):  # random.randint(0, 9): recomputed by the mock
        if all(type(a) is int for a in args) \
                and flows_only_to_graph_uses(frame.code, ins.index, base + 1, decides):
            return fn
        return None
    if fn is bool and len(args) == 1:  # (``bool(t)``: any real dtype, t != 0)
        tensor = args[0]
        if type(tensor) not in _TRACKABLE_TENSORS or tensor.dtype.is_complex \
                or tensor.numel() != 1 \
                or not flows_only_to_graph_uses(frame.code, ins.index, base + 1, decides):
            return None
        return tensor
    if fn is int and len(args) == 1:
        tensor = args[0]
        if isinstance(tensor, Tensor) and tensor.dtype.is_floating_point:
            # (``int(t)`` of a float tensor: truncated in the graph, which
            # raises where Python's int() would raise or leave int64)
            if type(tensor) not in _TRACKABLE_TENSORS or tensor.numel() != 1 \
                    or not flows_only_to_graph_uses(frame.code, ins.index, base + 1, decides):
                return None
            return tensor
    else:
        tensor = _item_of(fn, args)
    if tensor is None or type(tensor) not in _TRACKABLE_TENSORS \
            or tensor.dtype.is_floating_point or tensor.dtype.is_complex or tensor.numel() != 1 \
            or not flows_only_to_graph_uses(frame.code, ins.index, base + 1, decides):
        return None
    return tensor


def _peek_call(frame, ins):
    """``(callable, positional arguments, stack height under the call)`` of
    the CALL ``ins`` about to run, or None for a call with keywords."""
    base = len(frame.stack) - ins.arg - 2
    if base < 0 or getattr(frame, "kw_names", None):
        return None
    fn, args = peek_call(frame.stack, ins.arg)
    return fn, args, base


def _item_of(fn, args):
    """The tensor ``t`` of a call ``fn(*args)`` that is ``t.item()``
    (either form); else None."""
    if len(args) == 1 and fn is Tensor.item:
        return args[0]
    if not args and getattr(fn, "__name__", None) == "item" \
            and isinstance(getattr(fn, "__self__", None), Tensor):
        return fn.__self__
    return None


def _size_producer(frame, ins, decides=False):
    """The tensor whose ``.item()`` or ``int()`` this CALL makes, if its
    int is one that only reaches sizes (an integer tensor of one element:
    :func:`.int_flow.flows_only_to_size_uses`); it becomes an unbacked size
    (:func:`.listed_ints.produce_one`), which only a call asked for this
    way makes (not ``.item()`` that native code calls).  It may be returned
    where :func:`_may_return` says so."""
    peeked = _peek_call(frame, ins)
    if peeked is None:
        return None
    fn, args, base = peeked
    tensor = args[0] if fn is int and len(args) == 1 else _item_of(fn, args)
    if tensor is None or not listed_ints.makes_a_size(tensor) \
            or not flows_only_to_size_uses(
                frame.code, ins.index, base + 1, frame.stack[:base], decides,
                leaves=_may_return(frame, receivers.receivers(_RETURN_DEPTH), decides)):
        return None
    return tensor


_RETURN_DEPTH = 8  # (callers followed up from a frame that makes such an int)


def _may_return(frame, kinds, decides):
    """May ``frame`` (not a generator's) return an int from tensor data?
    Its own receiver is ``kinds[0]`` (its callers' follow,
    :func:`.receivers.receivers`).  Yes for the traced function's own frame
    (a graph output gives the result back); for a callee whose caller
    pushes it by the call it is running, yes where the caller then only
    uses it as a size (the same static look, from that call, where the
    caller may return it by the same rule); else no."""
    if not kinds or frame.code.co_flags & _GENERATORS:
        return False
    if kinds[0] is receivers.RESULT:
        return True
    back = frame.back
    if kinds[0] is not receivers.INSTRUCTION or back is None:
        return False
    call = back.instructions[back.lasti]
    return call.opname in info.CALLS and flows_only_to_size_uses(
        back.code, call.index, len(back.stack) + 1, back.stack, decides,
        leaves=_may_return(back, kinds[1:], decides))


def _produce_size(vm, frame, ins, run, tensor, shadow):
    table = vm.capture.recording.ints
    table.size_request = tensor
    try:
        return run(vm, frame, ins) if shadow is None else _run(vm, frame, ins, run, shadow)
    finally:
        table.size_request = None


def _produce(vm, frame, ins, run, tensor, shadow):
    cap = vm.capture
    table = cap.recording.ints
    if shadow is not None and _generic_consumed(frame, ins, shadow):
        _break(cap, "CALL on a Python int the graph computes")
        return run(vm, frame, ins)
    table.request = tensor
    table.produced = None
    try:
        result = run(vm, frame, ins) if shadow is None else _run(vm, frame, ins, run, shadow)
    finally:
        table.request = None
    produced, table.produced = table.produced, None
    if produced is not None and cap.breaks.active and frame.stack \
            and frame.stack[-1] is produced.value:
        shadow = table.shadow(frame)
        if shadow is None:
            shadow = table.shadows[id(frame)] = Shadow(frame)
        shadow.stack[len(frame.stack) - 1] = produced
    return result


def _generic_consumed(frame, ins, shadow):
    depth = len(frame.stack)
    return any(p >= depth - (ins.arg + 2) for p in shadow.stack)


def produce(cap, func, name, args):
    """Called for the torch function ``func(*args)``: if it is the
    ``.item()``/``int()`` a CALL asked for (:func:`_produce`), run it and
    track the value; else None."""
    table = cap.recording.ints
    tensor = table.request
    if tensor is None or name not in _PRODUCED_BY or len(args) != 1 or args[0] is not tensor:
        return None
    table.request = None
    rec = cap.recording.recorder
    try:
        base = rec.node_for(tensor)
    except Unrepresentable:
        return None
    value = func(*args)
    graph = rec.graph
    as_bool = type(value) is bool

    def make():
        node = graph.call_method("reshape", (graph.call_method("detach", (base,)), ()))
        if tensor.dtype.is_floating_point and not as_bool:
            return graph.call_function(int_of_float, (node,))
        if not as_bool:
            return graph.call_method("to", (node, torch.int64))
        if tensor.dtype is torch.bool:
            return node
        return graph.call_function(operator.ne, (node, 0))  # (bool(t) of a number)

    rec.op_count += 1
    table.produced = TrackedInt(value, rec, make, tensor.device)
    return value


def int_of_float(value):
    """Python's ``int(t)`` of a 0-d float tensor, in a graph: truncated
    toward zero, as int64.  Where Python's int() raises (NaN, infinity) or
    gives an int past int64, the graph raises instead (``_assert_async``:
    eager and Inductor alike), and the mock runs the call natively, which
    raises eager's exception or gives eager's int."""
    fits = torch.isfinite(value) & (value.abs() < 2.0 ** 63)
    torch._assert_async(fits, "int() of a float the graph computes: not finite or past int64")
    return value.trunc().to(torch.int64)


# -- consuming ------------------------------------------------------------------
def _binary_op(vm, frame, ins, run, shadow):
    """``BINARY_OP`` (``lhs rhs -- result``) with a tracked operand: with a
    tensor, a tensor op that takes the node (:func:`tensor_op_args`); with
    numbers, ``+ - *`` of ints give a tracked int and float arithmetic a
    float tracked by :mod:`.scalars`; anything else breaks first."""
    cap = vm.capture
    stack = frame.stack
    depth = len(stack)
    lhs_entry, rhs_entry = shadow.stack.get(depth - 2), shadow.stack.get(depth - 1)
    if lhs_entry is None and rhs_entry is None:
        return _generic(vm, frame, ins, run, shadow)
    lhs, rhs = stack[-2], stack[-1]
    symbol = info.NB_SYMBOL.get(ins.arg)
    tensor = lhs if isinstance(lhs, Tensor) else rhs if isinstance(rhs, Tensor) else None
    if tensor is not None:
        entry = lhs_entry or rhs_entry
        if type(tensor) not in _TRACKABLE_TENSORS or (lhs_entry and rhs_entry):
            _break(cap, "%r of a tensor subclass and a Python int the graph computes"
                   % symbol)
            return run(vm, frame, ins)
        return _with_operand(vm, frame, ins, run, shadow, entry, 2)
    if symbol in _ARITHMETIC and all(type(v) in _INT_TYPES for v in (lhs, rhs)):
        op = _ARITHMETIC[symbol]
    elif (symbol in _ARITHMETIC or symbol in DIVISION_SYMBOLS) and all(
            type(v) in (int, bool, float) for v in (lhs, rhs)) and (
            symbol not in DIVISION_SYMBOLS or (rhs_entry is None
                                         and not cap.recording.scalars.tracks(rhs)
                                         and rhs != 0)):
        op = scalars.ARITHMETIC[symbol]
        if scalars.exact_ints(op, (lhs, rhs)) and any(
                abs(v) >= scalars.EXACT_FLOAT_INTS for v in (lhs, rhs)):
            _break(cap, "'/' of a Python int the graph computes, past 2**53")
            return run(vm, frame, ins)
    else:
        _break(cap, "%r on a Python int the graph computes" % symbol)
        return run(vm, frame, ins)
    rec = cap.recording.recorder
    devices = {e.device for e in (lhs_entry, rhs_entry) if e is not None}
    if cap.recording.scalars.tracks(lhs) or cap.recording.scalars.tracks(rhs):
        devices |= {cap.recording.scalars.device(v) for v in (lhs, rhs)
                    if cap.recording.scalars.tracks(v)}
    if len(devices) > 1:
        _break(cap, "arithmetic on Python numbers the graph computes on different devices")
        return run(vm, frame, ins)
    shadow.stack.pop(depth - 2, None)
    shadow.stack.pop(depth - 1, None)
    result = _run(vm, frame, ins, run, shadow)
    value = stack[-1]

    if not cap.breaks.active:
        return result
    as_double = type(value) is float
    exact = scalars.exact_ints(op, (lhs, rhs))  # (the graph checks the ints' size)

    def operand(value, entry):
        if entry is not None:
            node = entry.int64_node(rec)
            if not as_double:
                return node
            node = rec.graph.call_method("to", (node, torch.float64))
            return scalars.checked_exact(rec.graph, node) if exact else node
        if cap.recording.scalars.tracks(value):
            return cap.recording.scalars.node(value, rec)
        return value

    def make():
        return rec.graph.call_function(op, (operand(lhs, lhs_entry), operand(rhs, rhs_entry)))

    device = devices.pop()
    if type(value) is int:
        shadow.stack[len(stack) - 1] = TrackedInt(value, rec, make, device)
    elif as_double:  # (float64 operands: Python's float arithmetic, bit for bit)
        cap.recording.scalars.add(value, rec, make, device)
    return result


def _with_operand(vm, frame, ins, run, shadow, entry, pops):
    """Run a tensor op (``BINARY_OP`` or a call) that takes the tracked
    int ``entry`` as an operand: :func:`tensor_op_args` swaps in its node."""
    cap = vm.capture
    depth = len(frame.stack)
    for pos in range(depth - pops, depth):
        shadow.stack.pop(pos, None)
    cap.recording.ints.operand = entry
    try:
        return _run(vm, frame, ins, run, shadow)
    finally:
        cap.recording.ints.operand = None


def tensor_op_args(cap, func, name, args, kwargs):
    """The arguments to record for the tensor op ``func`` that takes the
    pending tracked int (its node, cast as torch casts a Python scalar
    operand); None after breaking the graph when it cannot take it."""
    table = cap.recording.ints
    entry, table.operand = table.operand, None
    positions = [i for i, a in enumerate(args) if type(a) in _INT_TYPES and a == entry.value]
    tensors = [a for a in args if isinstance(a, Tensor)]
    if name not in scalars.TENSOR_ARITHMETIC or kwargs or len(args) != 2 \
            or len(positions) != 1 or len(tensors) != 1:
        cap.break_graph("data-dependent-value",
                        "%s() of a Python int the graph computes" % (name or func))
        return None
    rec = cap.recording.recorder
    try:
        node = entry.node(rec)
    except Unrepresentable as e:
        cap.break_graph(e.kind, e.message)
        return None
    scalar = args[positions[0]]
    dtype = torch.result_type(tensors[0], scalar)
    node = rec.graph.call_method("to", (node, tensors[0].device, dtype))
    return tuple(node if i == positions[0] else a for i, a in enumerate(args))


def _call(vm, frame, ins, run, shadow):
    """A call that receives a tracked int: a tensor arithmetic function or
    method (``torch.mul(x, n)``, ``x.add(n)``) takes its node; anything
    else breaks first."""
    stack = frame.stack
    depth = len(stack)
    argc = ins.arg
    tracked = [p for p in shadow.stack if p >= depth - argc - 2]
    if not tracked:
        return _generic(vm, frame, ins, run, shadow)
    base = depth - argc - 2
    fn, args = peek_call(stack, ins.arg)
    if isinstance(getattr(fn, "__self__", None), Tensor):  # a bound method: self first
        args = [fn.__self__] + list(args)
    if len(tracked) == 1 and len(args) == 2 and not getattr(frame, "kw_names", None) \
            and getattr(fn, "__name__", None) in scalars.TENSOR_ARITHMETIC \
            and tracked[0] >= base + 2 and _is_torch_op(fn) \
            and sum(type(a) in _TRACKABLE_TENSORS for a in args) == 1:
        return _with_operand(vm, frame, ins, run, shadow, shadow.stack[tracked[0]], argc + 2)
    if _promoted(vm.capture, frame, shadow, base):
        return _run(vm, frame, ins, run, shadow)
    _break(vm.capture, "%s() received a Python int the graph computes"
           % getattr(fn, "__qualname__", type(fn).__name__))
    return run(vm, frame, ins)


def _promoted(cap, frame, shadow, lowest):
    """Make the tracked ints at stack positions ``lowest`` and up, which an
    instruction is about to read in a way not modeled here, unbacked sizes
    (:func:`.listed_ints.promote`: slice bounds, sizes, arguments of other
    frames); True if all could be (otherwise none changes, and the item
    nodes made for the others are erased)."""
    positions = [p for p in shadow.stack if p >= lowest]
    if any(type(shadow.stack[p].value) is not int for p in positions):
        return False  # (a bool: no int subclass can stand for it)
    rec = cap.recording.recorder
    made = {}
    for p in positions:
        try:
            node = shadow.stack[p].int64_node(rec)
        except Unrepresentable:
            value = None
        else:
            value = listed_ints.promote(cap, shadow.stack[p].value, node)
        if value is None:
            if made and cap.recording.recorder is rec:
                rec.erase({v.node for v in made.values()})
            return False
        made[p] = value
    for p, value in made.items():
        frame.stack[p] = value
        del shadow.stack[p]
    return True


def _is_torch_op(fn):
    if type(fn) not in _NATIVE_CALLABLES:
        return False
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, Tensor):
        return True
    if getattr(Tensor, getattr(fn, "__name__", ""), None) is fn:
        return True  # the method descriptor (3.11's method-call form)
    return (getattr(fn, "__module__", None) or "").startswith("torch")


def _compare_op(vm, frame, ins, run, shadow):
    """A comparison of a tracked int with a number that only feeds the
    conditional jump after it pushes a 0-d bool tensor (see the module
    docstring); any other comparison of one breaks."""
    cap = vm.capture
    stack = frame.stack
    depth = len(stack)
    entries = (shadow.stack.get(depth - 2), shadow.stack.get(depth - 1))
    if entries == (None, None):
        return _generic(vm, frame, ins, run, shadow)
    lhs, rhs = stack[-2], stack[-1]
    feeds_jump = data_decisions.next_is_branch(vm, frame, ins)
    op = scalars.COMPARISONS.get(ins.argval)
    plain = all(type(v) in (int, bool, float) for v in (lhs, rhs))
    devices = {e.device for e in entries if e is not None}
    assumed = not feeds_jump and data_decisions.possible(cap)  # (ok = n > 2)
    if not ((feeds_jump or assumed) and op is not None and plain) or len(devices) > 1 \
            or cap.recording.scalars.tracks(lhs) or cap.recording.scalars.tracks(rhs):
        _break(cap, "%s on a Python int the graph computes" % ins.opname)
        return run(vm, frame, ins)
    rec = cap.recording.recorder
    try:
        operands = tuple(e.int64_node(rec) if e is not None else v
                         for e, v in zip(entries, (lhs, rhs)))
    except Unrepresentable as e:
        _break(cap, e.message)
        return run(vm, frame, ins)
    # (no jump after it: its truth is assumed, and checked by the graph)
    if not data_decisions.push_decision(cap, stack, feeds_jump, op, operands, op(lhs, rhs),
                                        devices.pop()):
        _break(cap, "%s on a Python int the graph computes" % ins.opname)
        return run(vm, frame, ins)
    shadow.stack.pop(depth - 2, None)
    shadow.stack.pop(depth - 1, None)
    return None


def _jump(vm, frame, ins, run, shadow):
    """A conditional jump on a tracked int or bool: the jump sees
    ``n != 0`` as a 0-d bool tensor (a data-dependent branch)."""
    cap = vm.capture
    stack = frame.stack
    top = len(stack) - 1
    entry = shadow.stack.get(top)
    if entry is None:
        return _generic(vm, frame, ins, run, shadow)
    if ins.opname in info.KEEPS_ON_JUMP:
        _break(cap, "%s on a Python int the graph computes" % ins.opname)
        return run(vm, frame, ins)
    rec = cap.recording.recorder
    try:
        node = entry.node(rec)
    except Unrepresentable as e:
        _break(cap, e.message)
        return run(vm, frame, ins)
    cond = data_decisions.bool_tensor(bool(stack[-1]), entry.device)
    if type(entry.value) is bool:  # (a bool's node is a bool tensor)
        rec.bind(cond, node)
    else:
        rec.record(operator.ne, (node, 0), {}, cond)
    del shadow.stack[top]
    stack[-1] = cond
    return _run(vm, frame, ins, run, shadow)


_MODELS = rules.functions("int_model")
"""opname -> the model above that follows tracked ints through it, for the
running Python (registered in :mod:`..rules`, kind ``int_model``)."""


# -- frame introspection ----------------------------------------------------------
def _frame_readers():
    import inspect
    import sys

    return frozenset({locals, vars, dir, eval, exec, sys._getframe, inspect.currentframe,
                      inspect.stack, breakpoint})


FRAME_READERS = _frame_readers()


def check_native_call(cap, fn):
    """Break before ``locals()``-like introspection while a tracked int is
    live (it would read the int as a plain value)."""
    if cap.recording.ints and fn in FRAME_READERS:
        _break(cap, "%s() while a Python int the graph computes is live"
               % getattr(fn, "__name__", fn))
