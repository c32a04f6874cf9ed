"""Text the mock makes again from Python floats and tensors the graph computes.

``print(f"max {t.max().item():.3f}")`` or ``warnings.warn("spread %.2f" %
round(s, 1))`` turns a tracked float (:mod:`.scalars`) into text whose only
use is a call the mock replays (``print``, logging, ``warnings.warn``:
:mod:`..special_calls`); so does ``print(f"mean {h.mean():.4f}, max
{h.max()}")`` of a tensor the graph computes or takes (``str``, ``repr``,
``format`` and f-string fields of it: the recipe formats a ``clone()``
snapshot, a graph output, as the replayed ``print(t)`` does; text that
shows the tensor's autograd state, ``grad_fn=...``, is a ``text-of-tensor``
break, as the graph's output has the graph's own autograd node).  Such text is a *derived value*: the run keeps the
real object (the program sees exactly what it would natively), and
:class:`TextTable` remembers, by identity, how to make it again: a *recipe*
``(fn, operands)``, whose operands are tracked floats (read by the mock
from graph outputs with ``.item()``), other derived values, or plain
constants.  The mock evaluates the recipe on every call, so the replayed
text follows the data of that call.

What makes a derived value (each a pure C computation on its operands):

* ``round(s, n)`` (a float: Python's correctly rounded ``round``, which no
  graph op reproduces bit for bit, so it is recomputed rather than
  recorded);
* ``str``, ``repr``, ``ascii``, ``format(s, spec)``, ``"{:.3f}".format(s)``
  (positional and keyword arguments) and the f-string field
  instructions (``FORMAT_VALUE``; on 3.13 ``CONVERT_VALUE``,
  ``FORMAT_SIMPLE``, ``FORMAT_WITH_SPEC``), through the capture
  interpreter's ``to_str``/``to_repr``/``to_ascii``/``format``;
* ``fmt % value`` (a str on the left; on the right a tracked or derived
  value, or a tuple of those and plain constants), ``text + text`` and
  ``BUILD_STRING`` (an f-string's pieces joined).

A derived value may only move (locals, the stack, tuples, arguments of
interpreted Python functions and module calls, a return into an
interpreted caller), feed the operations above, or be an argument of a
replayed call.  Anything else (returned by the traced function, stored,
compared, hashed, used in control flow, passed to other native code) is a
``data-dependent-value`` break before the instruction, as formatting a
tracked float was before this module.  So is a derived value that would
not be a new object of its own (a one-character or empty str may be
CPython's shared singleton; a result that *is* one of its operands), and
any of this inside a speculated branch arm.

Records (:class:`~..state.Capture`): owns none (its :class:`TextTable` is
``recording.text``); reads ``recording``, ``breaks``, ``speculation`` and
``interp``.
"""
import operator
import re

import torch

from .. import rules
from ...opcodes import info
from ..torchfiles import runs_interpreted
from . import receivers
from .identity import IdentityTable


class TextTable(IdentityTable):
    """The derived values of one capture: ``id -> (value, fn, operands)``."""

    TYPES = (str, float)

    def add(self, value, fn, operands):
        self._entries[id(value)] = (value, fn, tuple(operands))

    def recipe(self, value):
        """``(fn, operands)``: ``fn(*operands)`` makes ``value`` again; None
        if ``value`` is not a derived value."""
        entry = self._entries.get(id(value)) if type(value) in self.TYPES else None
        return None if entry is None or entry[0] is not value else entry[1:]


_DERIVED_TYPES = TextTable.TYPES
Tensor = torch.Tensor
Parameter = torch.nn.Parameter
# How a tensor's text shows its autograd state (str/repr of a tensor that
# requires grad; a 0-d one formatted with a spec goes through .item()).
_AUTOGRAD_TEXT = re.compile(r"grad_fn=|requires_grad=|Parameter containing")


def concat(*pieces):
    """``BUILD_STRING``'s join, as the mock replays it."""
    return "".join(pieces)


def str_format(template, args, keywords):
    """``template.format(*args, **dict(keywords))``, as the mock replays it."""
    return template.format(*args, **dict(keywords))


# -- making derived values ------------------------------------------------------
def is_source(cap, value):
    """True if ``value`` is a tracked float, a derived value (text the
    mock can make from it) or a tensor of the graph while capture records."""
    return cap.breaks.active and (cap.recording.scalars.tracks(value)
                                  or cap.recording.text.tracks(value)
                                  or _graph_tensor(cap, value))


def _graph_tensor(cap, value):
    """A plain tensor the graph computes or takes as an input."""
    if type(value) is not Tensor and type(value) is not Parameter:
        return False
    rec = cap.recording.recorder
    return rec.is_graph_value(value) or cap.recording.refgraph.source_of(value) is not None


def apply(cap, fn, operands):
    """``fn(*operands)``, run now (a pure computation on floats, text and
    tensors), its result tracked as a derived value; a break if it cannot
    be (see the module docstring).  A tensor operand is formatted as it is
    now: the recipe takes a ``clone()`` of it, recorded in the graph, so a
    later in-place change does not show in the replayed text."""
    if (fn is str or fn is format and operands[1:] == ("",)) and type(operands[0]) is str:
        return operands[0]  # str(text) and format(text, "") are the text itself
    if any(isinstance(v, Tensor) for v in _flat(operands)):
        with torch._C.DisableTorchFunction():  # (the program's text, not graph ops)
            result = fn(*operands)
        if type(result) is str and _AUTOGRAD_TEXT.search(result):
            # (a graph output's autograd node is the graph's own, not the op's)
            cap.break_graph("text-of-tensor", "text of a tensor that requires grad shows its "
                            "autograd node")
            return result
        if not cap.speculation.depth and cap.breaks.active:
            operands = _snapshots(operands)
    else:
        result = fn(*operands)
    if not derive(cap, fn, operands, result):
        cap.break_graph("data-dependent-value", "%s() of a value the graph computes, where the "
                        "mock cannot make the same value again"
                        % getattr(fn, "__name__", fn))
    return result


def derive(cap, fn, operands, result):
    """Track ``result``, made by ``fn(*operands)``; False (nothing tracked)
    where its identity is not its own, its operands are not all sources or
    constants, or a speculated arm runs."""
    if cap.speculation.depth or cap.interp.opaque or not cap.breaks.active \
            or type(result) not in _DERIVED_TYPES or type(result) is str and len(result) < 2:
        return False
    flat = list(_flat(operands))
    if any(v is result for v in flat) or cap.recording.text.tracks(result) \
            or cap.recording.scalars.tracks(result) \
            or not all(is_source(cap, v) or type(v) in _CONSTANTS for v in flat):
        return False
    cap.recording.text.add(result, fn, operands)
    return True


_CONSTANTS = (str, int, float, bool, type(None))


def _snapshots(values):
    """``values`` with each tensor replaced by its ``clone()`` (recorded by
    the recording mode: a graph value)."""
    return tuple(_snapshots(v) if type(v) is tuple else
                 v.clone() if isinstance(v, Tensor) else v for v in values)


def _flat(values):
    for v in values:
        if type(v) is tuple:
            yield from _flat(v)
        else:
            yield v


def round_call(vm, fn, args, kwargs):
    """``round(s, n)``: a derived float (the capture handler of
    :mod:`.float_builtins`)."""
    return apply(vm.capture, round, tuple(args))


def text_call(vm, fn, args, kwargs):
    """``str(s)``, ``repr(s)``, ``ascii(s)``, ``format(s[, spec])``: derived text."""
    return apply(vm.capture, fn, tuple(args))


def str_format_call(vm, fn, args, kwargs):
    """``"max {:.3f}".format(s)``: derived text."""
    keywords = tuple((k, v) for k, v in (kwargs or {}).items())
    return apply(vm.capture, str_format, (fn.__self__, tuple(args), keywords))


def accepts_str_format(cap, fn, args, kwargs):
    """``fn`` is a str's ``format`` method, and its arguments are sources
    and constants, a source among them."""
    values = tuple(args) + tuple((kwargs or {}).values())
    return type(fn) is _BUILTIN_METHOD and type(fn.__self__) is str \
        and fn.__name__ == "format" and _formattable(cap, values) \
        and any(is_source(cap, v) for v in _flat(values))


_BUILTIN_METHOD = type("".join)


def accepts_round(cap, args, kwargs):
    """``round(s, n)`` of a tracked or derived float and a plain int
    (``round(s)`` is an int: not text, it stays a break)."""
    return not kwargs and len(args) == 2 and type(args[0]) is float \
        and is_source(cap, args[0]) and type(args[1]) is int


def accepts_text(cap, fn, args, kwargs):
    """``str``/``repr``/``ascii`` of one source, ``format`` of one with a
    str spec or none."""
    if kwargs or not args or not is_source(cap, args[0]):
        return False
    if fn is format:
        return len(args) == 1 or len(args) == 2 and type(args[1]) is str
    return len(args) == 1


def binary_op(vm, frame, ins, base):
    """``BINARY_OP`` with a derived value or a ``%`` format of a tracked
    float or a graph tensor (called by :func:`.scalars.binary_op`): ``fmt
    % value`` and ``text + text`` make derived text; any other operator
    breaks first."""
    cap = vm.capture
    lhs, rhs = frame.stack[-2], frame.stack[-1]
    symbol = info.NB_SYMBOL.get(ins.arg)
    fn = None
    if type(lhs) is str and symbol in ("%", "%="):
        fn = operator.mod
    elif type(lhs) is str and type(rhs) is str and symbol in ("+", "+="):
        fn = operator.add
    if fn is None or not _formattable(cap, rhs):
        cap.break_graph("data-dependent-value", "%r on text or a value the graph computes"
                        % symbol)
        return base(vm, frame, ins)
    # (C's str.__mod__ or str.__add__, as BINARY_OP would call them; a
    # tensor among the operands is formatted as apply does)
    result = apply(cap, fn, (lhs, rhs))
    stack = frame.stack
    del stack[-2:]
    stack.append(result)
    return None


def formats(cap, ins, lhs, rhs):
    """True if :func:`binary_op` handles this ``BINARY_OP``: a derived
    operand, or a str formatted with ``%`` by a tracked float or a graph
    tensor."""
    text = cap.recording.text
    if text and (text.carried(lhs) or text.carried(rhs)):
        return True
    return type(lhs) is str and info.NB_SYMBOL.get(ins.arg) in ("%", "%=") \
        and (cap.recording.scalars.carried(rhs) or _graph_tensor(cap, rhs)
             or type(rhs) is tuple and any(_graph_tensor(cap, v) for v in rhs))


def _formattable(cap, value):
    """A ``%`` operand or a piece of text: a source, a constant, or a tuple of those."""
    if type(value) is tuple:
        return all(_formattable(cap, v) for v in value)
    return is_source(cap, value) or type(value) in _CONSTANTS


def build_string(vm, frame, ins, base):
    """The capture variant of ``BUILD_STRING``: an f-string joined from
    derived pieces is derived text."""
    cap = vm.capture
    text = cap.recording.text
    if not (text and cap.breaks.active):
        return base(vm, frame, ins)
    pieces = tuple(frame.stack[len(frame.stack) - ins.arg:])
    if not any(text.tracks(p) for p in pieces):
        return base(vm, frame, ins)
    result = base(vm, frame, ins)
    if not derive(cap, concat, pieces, frame.stack[-1]):
        cap.break_graph("data-dependent-value", "an f-string made text the mock cannot make "
                        "again")
    return result


# -- where derived values may go -------------------------------------------------
# What only moves a tracked float moves a derived value too, less what would
# put it where the checks below no longer see it (a list) or compute with it;
# the formatting instructions are vetted by the capture interpreter's format
# hooks and the variants above, and a return only moves it into an
# interpreted caller's instruction (:mod:`.receivers`; not a sort key).  Other instructions consume the values they take from
# the stack (``info.pops``), less the containers some of them only read.
_MOVES = rules.keys("float_flow", "float_move") - {
    "LIST_APPEND", "BUILD_LIST", "UNARY_NEGATIVE", "RETURN_VALUE"}
_READS_TOP = rules.arguments("float_flow", "float_reads_top")
_STORES = frozenset({"STORE_ATTR", "STORE_SUBSCR"})


def check_instruction(cap, frame, ins):
    """Break before an instruction that would consume a derived value (see
    the module docstring)."""
    name = ins.opname
    table = cap.recording.text
    stack = frame.stack
    if name in _MOVES or name == "RETURN_VALUE" and (
            not table.carried(stack[-1]) or receivers.receiver() is receivers.INSTRUCTION):
        return
    depth = _READS_TOP.get(name)
    if depth is not None and name not in _STORES:
        consumed = any(table.tracks(v) for v in stack[len(stack) - depth:])
    else:
        depth = info.pops(name, ins.arg) if name in _COUNTED else len(stack)
        consumed = any(table.carried(v) for v in stack[len(stack) - depth:])
    if consumed:
        cap.break_graph("data-dependent-value", "%s on text made from values the graph computes"
                        % name)


_COUNTED = frozenset(info.stack_names())


def check_call(cap, fn, args, kwargs):
    """True if a call may receive derived values: interpreted Python code
    and module calls see them as values (replayed calls are let through
    before this).  Any other callee breaks the graph first; then False."""
    table = cap.recording.text
    if not (table.carried(args) or table.carried(kwargs or {})):
        return True
    if runs_interpreted(fn):
        return True
    cap.break_graph("data-dependent-value", "%s() received text made from values the graph "
                    "computes" % getattr(fn, "__qualname__", type(fn).__name__))
    return False
