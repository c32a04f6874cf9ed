"""Capture variants of instruction handlers, and the instruction list that
uses them.

Most of the annotation rules live in the data-model entry points that
:class:`~pyinterp.capture.interpreter.CaptureInterpreter` wraps.  The
instructions here touch state directly: globals and closure cells (read or
written by path), the fast paths that read whole containers, and
conditional jumps on tensors (GraphMend's rewrite, :mod:`.speculate`).
Which opcode runs which variant is registered in :mod:`.rules` (kind
``variant``, with the variants of :mod:`.values.scalars` for floats the
graph computes).  Every non-inline instruction also records where it is
(for guard and break sites), its pre-state in the traced function's own
frame (for a split at a break, :mod:`.resume`), and is vetted for floats
the graph computes.

Records (:class:`~.state.Capture`): owns ``top`` (:class:`TopFrame`),
updated by :func:`_run_variant` on every non-inline instruction; reads
``breaks``, ``speculation`` and ``recording``.
"""
import functools
import types

import attrs
import torch

from . import consumers, rules
from .values import arrays, assumptions, float_text, scalars, sizes, tracked_ints
from .graphmend import looptest, speculate, whileloop
from ..interp.frame import decoded_for
from ..refgraph.sources import Attr, Item, Root
from .partial.resume import SPLIT_POINTS, PreState

Tensor = torch.Tensor


@attrs.define(slots=True)
class TopFrame:
    """The traced function's own frame (``Capture.top``), written only here:
    :func:`_run_variant` follows it instruction by instruction.  For partial
    graphs (:mod:`.partial.resume`): its state before its current
    instruction; for the native entry (:mod:`.partial.hybrid`): how much it
    ran and called."""

    code: object = None  # the code object whose frame a break may split (None: no split)
    frame: object = None  # its frame, once the run enters it
    steps: int = 0  # non-inline instructions that frame ran (see hybrid.py)
    callees: int = 0  # its calls that a native entry would trace
    pre: object = None  # resume.PreState before its current split point

    def count_callee(self):
        """The top frame calls something a native entry would trace
        (:func:`.partial.hybrid.wraps`; counted by the interpreter's calls)."""
        self.callees += 1


def _globals_source(rg, globals_):
    source = rg.source_of(globals_)
    if source is None:
        source = Root(globals_, "%s.__dict__" % globals_.get("__name__", "module"))
        rg.register(globals_, source)
    return source


def load_global(vm, frame, ins, base):
    """``LOAD_GLOBAL``: a read of ``globals[name]`` (the module dict is a
    root), or, for a builtin, the guarded absence from globals and a read of
    ``builtins[name]``."""
    cap = vm.capture
    if cap.breaks.active and (type(frame.globals) is not dict
                              or type(frame.builtins) is not dict):
        cap.break_graph("unsupported-value", "globals or builtins that are not plain dicts")
    result = base(vm, frame, ins)
    if cap.breaks.active:
        rg = vm.refgraph
        name = ins.argval
        site = cap.site()
        _globals_source(rg, frame.globals)
        if name in frame.globals:
            rg.read_item(frame.globals, name, frame.globals[name], site)
        else:
            rg.read_contains(frame.globals, name, False, site)
            _globals_source(rg, frame.builtins)
            rg.read_item(frame.builtins, name, frame.builtins[name], site)
    return result


def store_global(vm, frame, ins, base):
    """``STORE_GLOBAL``: a write of ``globals[name]`` (replayed by the mock;
    later reads see it)."""
    cap = vm.capture
    if cap.breaks.active:
        _globals_source(vm.refgraph, frame.globals)
        vm.refgraph.write_item(frame.globals, ins.argval, frame.stack[-1], cap.site())
    return base(vm, frame, ins)


def delete_global(vm, frame, ins, base):
    """``DELETE_GLOBAL``: a deletion of ``globals[name]``."""
    cap = vm.capture
    if cap.breaks.active and ins.argval in frame.globals:
        _globals_source(vm.refgraph, frame.globals)
        vm.refgraph.write_item(frame.globals, ins.argval, None, cap.site(), delete=True)
    return base(vm, frame, ins)


def _outside_cell(vm, frame, slot):
    """The cell in ``slot`` if it belongs to an outside function, registered."""
    rg = vm.refgraph
    cell = frame.fast[slot]
    if rg.is_outside(cell):
        return cell
    func = frame.func
    closure = getattr(func, "__closure__", None)
    fsource = rg.source_of(func) if func is not None else None
    if fsource is None or not closure:
        return None
    for i, c in enumerate(closure):
        if c is cell:
            rg.register(cell, Item(Attr(fsource, "__closure__"), i))
            return cell
    return None


def load_deref(vm, frame, ins, base):
    """``LOAD_DEREF`` of a cell from an outside function's closure: a read
    of the cell's ``cell_contents``."""
    result = base(vm, frame, ins)
    if vm.capture.breaks.active:
        cell = _outside_cell(vm, frame, ins.argval)
        if cell is not None:
            vm.refgraph.read_attr(cell, "cell_contents", frame.stack[-1], vm.capture.site())
    return result


def store_deref(vm, frame, ins, base):
    """``STORE_DEREF`` into an outside function's cell: a write (replayed)."""
    if vm.capture.breaks.active:
        cell = _outside_cell(vm, frame, ins.argval)
        if cell is not None:
            vm.refgraph.write_attr(cell, "cell_contents", frame.stack[-1], vm.capture.site())
    return base(vm, frame, ins)


def delete_deref(vm, frame, ins, base):
    """``DELETE_DEREF`` of an outside function's cell: a deletion (replayed)."""
    if vm.capture.breaks.active:
        cell = _outside_cell(vm, frame, ins.argval)
        if cell is not None:
            vm.refgraph.write_attr(cell, "cell_contents", None, vm.capture.site(), delete=True)
    return base(vm, frame, ins)


def make_function(vm, frame, ins, base):
    """``MAKE_FUNCTION`` (3.11, 3.12; ``SET_FUNCTION_ATTRIBUTE`` on 3.13): a
    function made by the run whose closure shares a cell of an outside
    function (``lambda: log.append(1)`` inside a closure over ``log``): the
    cell is registered, so the new function's reads and writes of it are
    guarded and replayed like the outside function's own."""
    result = base(vm, frame, ins)
    if vm.capture.breaks.active and frame.code.co_freevars:
        fn = frame.stack[-1]
        closure = fn.__closure__ if type(fn) is types.FunctionType else None
        for cell in closure or ():
            if not vm.refgraph.is_outside(cell):
                for slot, value in enumerate(frame.fast):
                    if value is cell:
                        _outside_cell(vm, frame, slot)
                        break
    return result


def jump_if_tensor(vm, frame, ins, base):
    """A data-dependent ``if`` (a tensor condition): try the GraphMend
    rewrite (both arms, merged with ``torch.where``), or for a ``while``
    loop's test one ``torch.while_loop`` (:mod:`.whileloop`); failing both,
    assume the condition's truth (:mod:`.values.assumptions`: the graph
    checks it on every call), and only where that cannot be, let the
    truth test break the graph (not in a custom ``autograd.Function``'s
    code, which a traced backend runs as plain Python: autograd_functions.py)."""
    cond = frame.stack[-1]
    if vm.capture.breaks.active and isinstance(cond, Tensor) and not vm.capture.speculation.plain:
        frame.stack.pop()
        join = speculate.try_merge(vm, frame, ins, cond)
        if join is None:
            join = whileloop.try_loop(vm, frame, ins, cond)
        if join is not None:
            vm.regions_run += 1  # (for the debug-mode stack check)
            return join
        frame.lasti = ins.index  # (the arms ran: a break here names the ``if``'s line)
        value = assumptions.assume_truth(vm.capture, cond)  # (checked by the graph)
        frame.stack.append(cond if value is None else value)
    return base(vm, frame, ins)


def reads_container(vm, frame, ins, base):
    """The instructions that read the container on top whole, natively
    (``[*a]``, ``{**d}``, unpacking; ``{*a}`` hashes its items): guard all
    of it first (:mod:`.consumers`)."""
    consumers.consume(vm.capture, (frame.stack[-1],),
                      consumers.ITEMS if ins.opname == "SET_UPDATE" else consumers.REFS)
    return base(vm, frame, ins)


def call_function_ex(vm, frame, ins, base):
    """``CALL_FUNCTION_EX``: the ``*args`` (and ``**kwargs``) containers are
    read whole, natively: guard all of them first."""
    stack = frame.stack
    if ins.arg & 1:
        vm._read_all(stack[-1])
        vm._read_all(stack[-2])
    else:
        vm._read_all(stack[-1])
    return base(vm, frame, ins)


_captured_cache = {}


def captured_instructions(code):
    """``code``'s instructions with the capture variants of their handlers."""
    decoded = decoded_for(code)
    entry = _captured_cache.get(id(code))
    if entry is not None and entry[0] is decoded:
        return entry[1]
    # A frame that may hold ints the graph computes (from .item() and the
    # like, or a while loop's counter) runs every instruction through
    # tracked_ints.step, which follows them (none inline).
    tracking = tracked_ints.may_produce(code) or looptest.has_while_loop(decoded.instructions)
    out = []
    for ins in decoded.instructions:
        variant = _VARIANTS.get(ins.opname)
        if variant is None and ins.inline and not tracking:
            out.append(ins)
            continue
        copy = ins.copy()
        copy.inline = 0
        # Every non-trivial instruction records where it is, so that a
        # guard or break names the user's line.
        copy.fn = functools.partial(_run_variant, variant or _plain, ins.fn)
        if tracking:
            if variant is None and ins.inline:  # (a move: plain while nothing is tracked)
                copy.fn = functools.partial(_run_tracking_move, ins.fn)
            else:
                copy.fn = functools.partial(_run_tracking, copy.fn)
        out.append(copy)
    out = tuple(out)
    _captured_cache[id(code)] = (decoded, out)
    return out


def _run_variant(variant, base, vm, frame, ins):
    frame.lasti = ins.index
    cap = vm.capture
    top = cap.top
    if frame is top.frame or top.frame is None and frame.code is top.code \
            and cap.breaks.active:
        top.frame = frame
        top.steps += 1
        if cap.breaks.active and cap.breaks.splitter is not None and not cap.speculation.depth \
                and ins.opname in SPLIT_POINTS:
            top.pre = PreState(cap, frame, ins)
    if cap.recording.sizes is not None and cap.breaks.active and cap.recording.sizes.active \
            and sizes.step(vm, frame, ins):
        return None  # (it computed on symbolic sizes)
    if cap.recording.arrays and cap.breaks.active:
        arrays.check_instruction(cap, frame, ins)
    if cap.recording.scalars and cap.breaks.active:
        scalars.check_instruction(cap, frame, ins)
    if cap.recording.text and cap.breaks.active:  # (text of floats or of tensors)
        float_text.check_instruction(cap, frame, ins)
    return variant(vm, frame, ins, base)


def _run_tracking(run, vm, frame, ins):
    return tracked_ints.step(vm, frame, ins, run)


def _run_tracking_move(base, vm, frame, ins):
    # A move is inline elsewhere: it does not count as a step of the top
    # frame (hybrid.py), tracked or not.
    if not vm.capture.recording.ints.shadows:
        return base(vm, frame, ins)
    frame.lasti = ins.index  # (for the site of a break)
    return tracked_ints.step(vm, frame, ins, base)


def _plain(vm, frame, ins, base):
    return base(vm, frame, ins)


_VARIANTS = rules.functions("variant")
"""opname -> capture variant, for the running Python (from :mod:`.rules`)."""
