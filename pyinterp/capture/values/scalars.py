"""Python floats the graph computes: from tensor data, or impure calls.

``s = t.max().item()`` turns tensor data into a Python ``float``.  When
``s`` only feeds tensor ops again (``x * s``), or Python arithmetic whose
result feeds tensor ops, nothing needs to leave the graph: ``s`` stands for
a 0-d float64 node (``t.detach().reshape(()).to(float64)``; a Python float
is an IEEE double, so Python arithmetic on ``s`` and float64 arithmetic in
the graph agree bit for bit), and each use is recorded against that node.

``random.random()`` and clocks (``time.perf_counter()``...) are impure: the
mock calls them again, in the run's order, before it calls the graph, and
passes each result in as a 0-d float64 graph input that stands for the
float the same way (:func:`recompute`).

The run keeps the real ``float`` objects (the program sees exactly what it
would natively) and remembers them by identity in :class:`ScalarTable`
(they stay alive for the whole capture, so an id is never reused).  Only
floats are tracked by identity: ``int``/``bool`` results may be interned
objects that other code shares.  :mod:`.tracked_ints` tracks the ints and
bools of ``.item()``/``int(t)``/``bool(t)`` by the stack slot or local that
holds them instead; ``random.randint`` stays a break.

What a tracked float may do without a break (everything else is a
``data-dependent-value`` break, checked *before* the instruction runs):

* move: locals, the stack, tuples, lists and dicts built by the run,
  arguments of interpreted Python functions and module calls, ``list.append``,
  attribute and item stores on outside objects (replayed by the mock);
  a store where a later native use could not find it (an attribute of one
  of the run's own objects) breaks;
* Python arithmetic with another tracked float or a plain ``int``/``float``:
  ``+``, ``-``, ``*`` and unary ``-``, and ``/`` by a non-zero plain number
  (Python raises ``ZeroDivisionError`` where a graph would give ``inf``, so
  dividing *by* a tracked value breaks);
* tensor arithmetic (``+ - * /`` operators, ``torch.add/sub/mul/div`` and
  their in-place forms), tensor comparisons (``h > s``, ``torch.gt``)
  and ``clamp``/``clip`` bounds (``h.clamp(-s, s)``) computed in
  float32/float64: the node is cast to the op's computation dtype, as a
  Python scalar operand would be;
* leave the function: in the return value, a replayed write, or a
  ``print``/logging argument; the mock reads it from a graph output with
  ``.item()``;
* ``max(a, b)``/``min(a, b)`` with another float: a tracked float again
  (:mod:`.float_minmax`);
* text: ``round(s, n)``, ``"%.2f" % s``, f-string fields, ``str``/
  ``format`` make derived values that the mock makes again from the float
  where they only feed ``print``/logging/``warnings.warn``
  (:mod:`.float_text`, which also says where such text may go).

A comparison with a plain number that feeds a conditional jump
(``if random.random() < self.p:``) is recorded as a 0-d bool node, and the
jump sees that tensor: the branch is then data-dependent, and
:mod:`.speculate` runs both arms and merges them, or assumes it as for
``if x.sum() > 0``.  Its truth value is the Python comparison's.  The
arms of such a branch may compute with tracked floats in turn (the nodes
of the floats in the frame's slots are made before the arms, so that
``torch.cond`` can take them as operands of both).

A comparison with a plain number whose result goes elsewhere (``flag =
s > 0``) is recorded the same way and its truth assumed, checked by the
graph on every call (:mod:`.data_decisions`, the rule shared by every kind
of value the graph computes); where no assumption can be made it breaks.
Truth tests, hashing, indexing, and any native call other than the above
feed Python control flow or data the mock cannot recompute: those break.

Records (:class:`~..state.Capture`): owns none (its :class:`ScalarTable` is
held as ``recording.scalars``); reads ``recording``, ``breaks``,
``speculation`` and ``interp``.
"""
import operator
import types

import torch

from .. import rules
from . import data_decisions, float_text, receivers
from .identity import STORES, IdentityTable, stored_where_unseen
from ...opcodes import info
from ...refgraph.fxgraph import Unrepresentable
from ...refgraph.sources import Recomputed
from ..torchfiles import runs_interpreted

Tensor = torch.Tensor

# BINARY_OP operators allowed between a tracked float and a number.
ARITHMETIC = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
               "+=": operator.add, "-=": operator.sub, "*=": operator.mul, "/=": operator.truediv}

# Tensor ops that take a tracked float as an operand (as a 0-d tensor cast
# to the op's result dtype, which is how a Python scalar operand behaves).
TENSOR_ARITHMETIC = frozenset({
    "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__",
    "__mul__", "__rmul__", "__imul__", "__truediv__", "__rtruediv__", "__itruediv__",
    "__div__", "__rdiv__", "__idiv__", "add", "add_", "sub", "sub_", "subtract", "mul",
    "mul_", "multiply", "div", "div_", "divide", "true_divide",
    # comparisons (h > s): the float is cast to the op's type as well
    "__gt__", "__lt__", "__ge__", "__le__", "__eq__", "__ne__", "gt", "lt", "ge", "le",
    "eq", "ne", "greater", "less", "greater_equal", "less_equal", "not_equal",
})
_EXACT_RESULT_DTYPES = (torch.float32, torch.float64)
CLAMPS = frozenset({"clamp", "clip", "clamp_", "clip_"})  # (bounds: tracked floats)

# What a tracked float may do in each instruction is registered in
# :mod:`..rules` (kind ``float_flow``): instructions that only move a value
# (the stack, locals, run-made tuples and lists, calls: :func:`check_call`
# vets the callee; BINARY_OP and UNARY_NEGATIVE are vetted by their capture
# variants), and instructions that consume only their top ``n`` values
# (containers holding tracked floats among them are fine: they are read,
# not consumed).
_MOVES = rules.keys("float_flow", "float_move")
_CONSUMES_TOP = rules.arguments("float_flow", "float_reads_top")


class ScalarTable(IdentityTable):
    """The tracked floats of one capture: ``id -> (value, recorder, make)``.

    ``make()`` builds the value's 0-d float64 node in ``recorder``'s graph
    (lazily: ``t.tolist()`` of a large tensor adds a node only for the
    elements that are used).
    """

    TYPES = (float,)

    def __init__(self):
        super().__init__()
        self._nodes = {}

    def add(self, value, recorder, make, device):
        """Track ``value``; its node, made by ``make()``, lives on ``device``."""
        self._entries[id(value)] = (value, recorder, make, device)

    def device(self, value):
        return self._entries[id(value)][3]

    def node(self, value, recorder):
        """The node of a tracked float in ``recorder``'s graph."""
        _, owner, make, _ = self._entries[id(value)]
        if owner is not recorder:
            raise Unrepresentable("data-dependent-value",
                                  "a Python float the graph computes crossed a graph break")
        node = self._nodes.get(id(value))
        if node is None or getattr(node, "_erased", False):  # (erased by a split)
            node = self._nodes[id(value)] = make()
        return node


# -- producing: .item(), float(t), .tolist() ---------------------------------
def produce(cap, func, name, args, kwargs):
    """Run ``.item()``/``float(t)``/``.tolist()`` of a floating tensor and
    track the floats it returns; None if this call is not one of those
    (the caller then refuses it as a data-dependent value)."""
    if name not in ("item", "__float__", "tolist") or kwargs or len(args) != 1 \
            or not isinstance(args[0], Tensor) or not args[0].dtype.is_floating_point \
            or cap.speculation.depth or cap.interp.opaque:
        return None
    tensor = args[0]
    rec = cap.recording.recorder
    try:
        base = rec.node_for(tensor)
    except Unrepresentable:
        return None
    result = func(*args)
    graph = rec.graph

    def as_double(node, shape):
        node = graph.call_method("reshape", (graph.call_method("detach", (node,)), shape))
        return graph.call_method("to", (node, torch.float64))

    if name != "tolist":
        rec.op_count += 1
        cap.recording.scalars.add(result, rec, lambda: as_double(base, ()), tensor.device)
        return result
    flat = []

    def flat_node():
        if not flat:
            flat.append(as_double(base, (-1,)))
        return flat[0]

    def element(i):
        return lambda: graph.call_function(operator.getitem, (flat_node(), i))

    index = 0

    def walk(value):
        nonlocal index
        if type(value) is float:
            cap.recording.scalars.add(value, rec, element(index), tensor.device)
            index += 1
        elif type(value) is list:
            for v in value:
                walk(v)

    walk(result)
    rec.op_count += 1
    return result


# Impure calls whose float result the mock computes again (random numbers,
# clocks), by name; their module is checked by the caller.
_RECOMPUTABLE = frozenset({"random", "time", "perf_counter", "monotonic", "process_time",
                           "thread_time"})


def recomputable(cap, fn):
    """True if the impure C call ``fn()`` (no arguments) returns a float the
    mock can compute again, in program order, before it calls the graph."""
    return getattr(fn, "__name__", "") in _RECOMPUTABLE and not cap.speculation.depth \
        and not cap.interp.opaque


def recompute(cap, fn):
    """Call ``fn()`` and track its float as a graph input that the mock
    recomputes (``refgraph.sources.Recomputed``).  The placeholder is made
    now, so the mock's calls happen in the run's order, used or not."""
    value = fn()
    rec = cap.recording.recorder
    source = Recomputed(fn, as_double, len(rec.inputs))
    with torch._C.DisableTorchFunction():  # not an op of the program: not recorded
        example = as_double(value)
    node = rec.graph.placeholder("%s_%d" % (getattr(fn, "__name__", "impure"), len(rec.inputs)))
    node.meta["example_value"] = example
    rec.inputs.append((source, example, node))
    cap.recording.scalars.add(value, rec, lambda: node, example.device)
    return value


def as_double(value):
    """A Python float as a 0-d float64 tensor (how the graph holds it)."""
    return torch.tensor(value, dtype=torch.float64)


# -- consuming ----------------------------------------------------------------
def tensor_op_args(cap, func, name, args, kwargs):
    """The ``(args, kwargs)`` to record for a tensor op that received a
    tracked float (the float replaced by its node, cast as a Python scalar
    would be), or None after breaking the graph when the op cannot take
    it: an arithmetic op or comparison of a tensor and a float, or a
    ``clamp``/``clip`` whose bounds are floats."""
    table = cap.recording.scalars
    if name in CLAMPS and args and isinstance(args[0], Tensor) and len(args) <= 3 \
            and set(kwargs) <= {"min", "max"} \
            and not any(isinstance(v, Tensor) for v in args[1:] + tuple(kwargs.values())):
        bound = {i: v for i, v in enumerate(args) if i and table.tracks(v)}
        bound.update((k, v) for k, v in kwargs.items() if table.tracks(v))
        nodes = {}
        for key, value in bound.items():
            nodes[key] = _operand_node(cap, table, args[0], value)
            if nodes[key] is None:
                return None
        return (tuple(nodes.get(i, v) for i, v in enumerate(args)),
                {k: nodes.get(k, v) for k, v in kwargs.items()})
    if name not in TENSOR_ARITHMETIC or table.carried(kwargs) or len(args) != 2:
        return _refuse(cap, "%s() of a Python float the graph computes" % (name or func))
    tensors = [a for a in args if isinstance(a, Tensor)]
    if len(tensors) != 1 or not any(table.tracks(a) for a in args):
        return _refuse(cap, "%s() of a Python float the graph computes" % name)
    scalar = args[0] if table.tracks(args[0]) else args[1]
    node = _operand_node(cap, table, tensors[0], scalar)
    if node is None:
        return None
    return tuple(node if a is scalar else a for a in args), kwargs


def _operand_node(cap, table, tensor, scalar):
    """The node of the tracked float ``scalar`` as an operand of an op on
    ``tensor``: cast to the dtype the op computes in with a Python float,
    on ``tensor``'s device; None after a break."""
    dtype = torch.result_type(tensor, scalar)
    if dtype not in _EXACT_RESULT_DTYPES:
        return _refuse(cap, "a Python float the graph computes, in a %s op" % dtype)
    try:
        node = table.node(scalar, cap.recording.recorder)
    except Unrepresentable as e:
        return _refuse(cap, e.message)
    device = tensor.device
    if dtype != torch.float64 or table.device(scalar) != device:
        # (a 0-d tensor on another device than the operand would fail)
        node = cap.recording.recorder.graph.call_method("to", (node, device, dtype))
    return node


def binary_op(vm, frame, ins, base):
    """The capture variant of ``BINARY_OP``: Python arithmetic on tracked
    floats is recorded on their nodes, and its float result is tracked."""
    cap = vm.capture
    table = cap.recording.scalars
    stack = frame.stack
    lhs, rhs = stack[-2], stack[-1]
    if not cap.breaks.active or not (table or cap.recording.text or type(lhs) is str):
        return base(vm, frame, ins)
    if float_text.formats(cap, ins, lhs, rhs):  # "%.2f" % s, or text made from one
        return float_text.binary_op(vm, frame, ins, base)
    if not table:
        return base(vm, frame, ins)
    if not (table.tracks(lhs) or table.tracks(rhs)) \
            or isinstance(lhs, Tensor) or isinstance(rhs, Tensor):
        return base(vm, frame, ins)
    symbol = info.NB_SYMBOL.get(ins.arg)
    op = ARITHMETIC.get(symbol)
    if op is None or not (_plain_number(lhs) and _plain_number(rhs)) \
            or (op is operator.truediv and (table.tracks(rhs) or rhs == 0)):
        cap.break_graph("data-dependent-value",
                        "%r on a Python float the graph computes" % symbol)
        return base(vm, frame, ins)
    result = base(vm, frame, ins)
    value = stack[-1]
    if type(value) is float:
        rec = cap.recording.recorder
        operands = (lhs, rhs)
        devices = [table.device(v) for v in operands if table.tracks(v)]
        if len(set(devices)) > 1:  # (as_double nodes on two devices)
            cap.break_graph("data-dependent-value", "arithmetic on Python floats the graph "
                            "computes on different devices")
            return result
        table.add(value, rec, lambda: rec.graph.call_function(op, tuple(
            table.node(v, rec) if table.tracks(v) else v for v in operands)), devices[0])
    return result


def unary_negative(vm, frame, ins, base):
    """The capture variant of ``UNARY_NEGATIVE`` (``-s`` stays tracked)."""
    cap = vm.capture
    table = cap.recording.scalars
    operand = frame.stack[-1]
    result = base(vm, frame, ins)
    if table and cap.breaks.active and table.tracks(operand):
        rec = cap.recording.recorder
        table.add(frame.stack[-1], rec,
                  lambda: rec.graph.call_function(operator.neg, (table.node(operand, rec),)),
                  table.device(operand))
    return result


# (3.11's backward truth tests, the bottom tests of ``while`` loops, are
# not followed: such a comparison breaks as any other use.)
BRANCHES = info.TRUTH_TESTS - info.BACKWARD_JUMPS


def _decided_compare(vm, frame, ins):
    """How the comparison ``ins`` of a tracked float with a plain number
    (or another tracked float) stays in the graph: ``"jump"`` where only
    the conditional jump after it reads its result (the ``*_OR_POP`` forms
    would leave it on the stack for the program to see), ``"assumed"``
    where another use reads it and the capture may assume its truth
    (``ok = s > 0.5``: :mod:`.data_decisions`); else None."""
    cap = vm.capture
    stack = frame.stack
    lhs, rhs = stack[-2], stack[-1]
    table = cap.recording.scalars
    if not (table.tracks(lhs) or table.tracks(rhs)) or not (_plain_number(lhs)
                                                             and _plain_number(rhs)):
        return None
    if data_decisions.next_is_branch(vm, frame, ins, BRANCHES):
        return "jump"
    return "assumed" if data_decisions.possible(cap) else None


def compare_op(vm, frame, ins, base):
    """The capture variant of ``COMPARE_OP``: a comparison of a tracked
    float that feeds a conditional jump pushes a 0-d bool tensor (its
    node records the comparison), so the jump is a data-dependent branch;
    one whose result goes elsewhere is assumed (see the module docstring)."""
    cap = vm.capture
    how = None
    if cap.recording.scalars and cap.breaks.active and ins.argval in COMPARISONS:
        how = _decided_compare(vm, frame, ins)
    if how is None:
        return base(vm, frame, ins)
    stack = frame.stack
    lhs, rhs = stack[-2], stack[-1]
    table = cap.recording.scalars
    devices = {table.device(v) for v in (lhs, rhs) if table.tracks(v)}
    if len(devices) > 1:
        cap.break_graph("data-dependent-value", "a comparison of Python floats the graph "
                        "computes on different devices")
        return base(vm, frame, ins)
    op = COMPARISONS[ins.argval]
    rec = cap.recording.recorder
    try:
        operands = tuple(table.node(v, rec) if table.tracks(v) else v for v in (lhs, rhs))
    except Unrepresentable as e:
        cap.break_graph(e.kind, e.message)
        return base(vm, frame, ins)
    if not data_decisions.push_decision(cap, stack, how == "jump", op, operands, op(lhs, rhs),
                                        devices.pop()):
        cap.break_graph("data-dependent-value", "%s on a Python float the graph computes"
                        % ins.opname)
        return base(vm, frame, ins)
    return None


COMPARISONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
                "==": operator.eq, "!=": operator.ne}


def check_instruction(cap, frame, ins):
    """Break before an instruction that would consume a tracked float in a
    way the graph cannot follow (see the module docstring)."""
    name = ins.opname
    if name == "RETURN_VALUE" and cap.recording.scalars.carried(frame.stack[-1]) \
            and receivers.receiver() is None:  # (a sort key, a max key)
        cap.break_graph("data-dependent-value", "RETURN_VALUE hands a Python float the graph "
                        "computes to code that reads its value")
        return
    if name in _MOVES:
        return
    if name == "COMPARE_OP" and ins.argval in COMPARISONS \
            and _decided_compare(cap.interp.vm, frame, ins) is not None:
        return  # (the variant records it: compare_op)
    if name == "COMPARE_OP" and any(isinstance(v, Tensor) for v in frame.stack[-2:]):
        return  # h > s: a tensor op, whose float operand tensor_op_args vets
    table = cap.recording.scalars
    if name in STORES and stored_where_unseen(cap, table, name, frame.stack):
        cap.break_graph("data-dependent-value", "%s of a Python float the graph computes into "
                        "an object whose later native use could not be checked" % name)
        return
    depth = _CONSUMES_TOP.get(name)
    stack = frame.stack
    if depth is not None:
        # These read a container or an attribute; the floats inside a
        # container only move (a call on them is vetted by check_call).
        consumed = any(table.tracks(v) for v in stack[len(stack) - depth:])
    else:
        consumed = any(table.carried(v) for v in stack)
    if consumed:
        cap.break_graph("data-dependent-value",
                        "%s on a Python float the graph computes" % name)


def check_call(cap, fn, args, kwargs):
    """True if a call may receive tracked floats: interpreted Python code and
    module calls see them as values, torch ops record them (or break in
    :func:`tensor_op_args`), ``list.append`` on the run's own list stores
    one.  Any other callee breaks the graph first; then False."""
    table = cap.recording.scalars
    if not (table.carried(args) or table.carried(kwargs or {})):
        return True
    if _may_receive(cap, fn):
        return True
    cap.break_graph("data-dependent-value", "%s() received a Python float the graph computes"
                    % getattr(fn, "__qualname__", type(fn).__name__))
    return False


def _may_receive(cap, fn):
    if runs_interpreted(fn):
        return True
    owner = getattr(fn, "__self__", None)
    if type(owner) is list and getattr(fn, "__name__", "") == "append":
        return True  # stored: the run's own list, or a write the mock replays
    module = getattr(fn, "__module__", None) or ""
    return type(fn) is types.BuiltinFunctionType and (
        module.startswith("torch") or isinstance(owner, Tensor))


EXACT_FLOAT_INTS = 2 ** 53  # every int of smaller magnitude is a float64


def exact_ints(op, operands):
    """``op`` is ``/`` of ints (``operands``): Python divides the exact
    ints, which float64 operands match only below :data:`EXACT_FLOAT_INTS`."""
    return op is operator.truediv and float not in map(type, operands)


def checked_exact(graph, node):
    """``node``, a float64 graph value that stands for a Python int in an
    :func:`exact_ints` division, after a graph check that the int is below
    2**53 (past it the graph raises, and the call runs natively)."""
    fits = graph.call_function(torch.lt, (graph.call_function(torch.abs, (node,)),
                                          float(EXACT_FLOAT_INTS)))
    graph.call_function(torch._assert_async, (fits, "an int from tensor data past 2**53 "
                                              "divided: Python's exact division"))
    return node


def _plain_number(value):
    return type(value) is float or (type(value) is int and -(1 << 53) <= value <= 1 << 53)


def _refuse(cap, message):
    cap.break_graph("data-dependent-value", message)
    return None
