"""Partial graphs: split a traced function at a graph break.

When the capture breaks while the traced function's own frame (the *top
frame*) is at instruction ``I``, the entry for these guards becomes:

    guard -> graph of the ops before I -> the side effects before I
          -> I itself, run natively (a call whose callee broke runs through
             that callee's own traced wrapper, so it still gets graphs)
          -> resume(stack after I, locals)

``resume`` is a function generated from the original code object: its
arguments are the stack left by ``I`` and the bound locals, its prologue
pushes the stack and jumps to the instruction after ``I``.  It is itself
wrapped in ``pyinterp.trace``, so the code after the break is captured (and
cached) on its own.  On the first call nothing of this runs: the run goes
on in the interpreter with capture off, and returns the real result.

This module decides: whether the break point can be split, what is live
there, which graph and side effects come before it, which callables get
traced wrappers.  The bytecode (the resume function's code object and the
mock's tail) is built by :mod:`pyinterp.codegen.resume`.

Supported break points: a ``CALL`` in the top frame, outside any ``try``/
``with`` block, with no NULL left on the stack after it, in code without
cells, with every live value representable by the mock (no iterators of a
``for`` loop).  Anything else keeps the whole-function native entry.

Records (:class:`~..state.Capture`): owns none; reads ``recording`` and
``interp`` (the volatile ids).  The :class:`PreState` it splits at is kept
in ``top.pre`` by :mod:`..variants`.
"""
import sys
import types

from ...codegen import backends
from ...codegen.mockgen import MockBuilder, Walker, graph_outputs
from ...codegen.resume import call_then_resume, resume_code
from ...interp.decode import SUSPENDABLE_FLAGS
from ...opcodes.signals import NULL
from .. import logreport
from ..values import assumptions
from ..values.sizes import holds_unbacked
from .callees import NO_SELF

SPLIT_POINTS = frozenset({"CALL"})
"""The instructions a break can split at (the capture snapshots its
pre-state only before these)."""


class Unsupported(Exception):
    """This break point cannot be split (the native entry is used)."""


class PreState:
    """The top frame just before one of its instructions ran."""

    __slots__ = ("frame", "ins", "stack", "kw_names", "n_effects", "n_nodes", "n_inputs",
                 "n_ops")

    def __init__(self, cap, frame, ins):
        rec = cap.recording.recorder
        self.frame = frame
        self.ins = ins
        self.stack = list(frame.stack)
        self.kw_names = frame.kw_names
        self.n_effects = len(cap.recording.refgraph.effects)
        self.n_nodes = len(rec.graph.nodes)
        self.n_inputs = len(rec.inputs)
        self.n_ops = rec.op_count


def split_entry(cap, pre, in_callee, backend, callees):
    """Build the mock of a split entry at ``pre`` (see the module docstring);
    returns ``(mock, listing, graph_module_or_None)``.  ``callees`` (a
    :class:`.callees.Callees`) makes traced wrappers with the traced
    function's options: the resume function and a broken callee get one."""
    import torch

    ins = pre.ins
    frame = pre.frame
    code = frame.code
    if ins.opname not in SPLIT_POINTS:
        raise Unsupported("breaks only at calls")
    if ins.exc_target is not None or code.co_cellvars or code.co_freevars:
        raise Unsupported("inside a try/with block, or code with cells")
    if code.co_flags & SUSPENDABLE_FLAGS:
        raise Unsupported("generator code")
    if cap.recording.ints:
        raise Unsupported("a Python int the graph computes is live (it would be a constant)")
    sizes = cap.recording.sizes
    if sizes is not None and (sizes.lost_unbacked or holds_unbacked(pre.stack)):
        raise Unsupported("a data-dependent int is live (it would be a constant)")
    argc = ins.arg
    consumed = argc + 2
    below = pre.stack[:-consumed] if consumed <= len(pre.stack) else None
    if below is None or any(v is NULL for v in below):
        raise Unsupported("a NULL would stay on the stack")
    rec = cap.recording.recorder
    rg = cap.recording.refgraph
    # Forget what the broken instruction itself recorded (it reruns natively).
    nodes = list(rec.graph.nodes)
    for node in reversed(nodes[pre.n_nodes:]):
        rec.graph.erase_node(node)
    del rec.inputs[pre.n_inputs:]
    rec.op_count = pre.n_ops
    effects = rg.effects[:pre.n_effects]
    bound = [(name, value) for name, value in zip(_localsplus(code), frame.fast)
             if value is not NULL]
    stack = list(pre.stack)
    if in_callee:
        stack, argc = _wrap_callee(stack, argc, callees)
    walker = Walker(torch, rg.source_of, rec.is_graph_value, cap.interp.volatile,
                    cap.recording.scalars, cap.recording.text, cap.recording.arrays)
    values = [v for v in stack if v is not NULL] + [v for _, v in bound]
    values += [v for eff in effects for v in list(eff.operands) + list(eff.kwargs.values())]
    outputs = graph_outputs(walker, values)
    gm = None
    builder = MockBuilder(walker, outputs)
    if rec.op_count or outputs or rec.assumptions:
        why = assumptions.check_finished(rec)
        if why is not None:
            raise Unsupported(why)
        gm = rec.finish(outputs, assumptions.output_nodes(rec))
        example = [t for _, t, _ in rec.inputs]
        compiled = logreport.compile_graph(backends.compile_graph, backend or backends.eager,
                                           gm, example)
        builder.call_graph(compiled, [s for s, _, _ in rec.inputs],
                           rerunnable=not rec.mutated_input,
                           check=assumptions.checker(rec, len(outputs)))
    builder.preload(effects, values)
    for eff in effects:
        builder.effect(eff)
    stack_exprs = [None if v is NULL else builder.value(v) for v in stack]
    local_exprs = [builder.value(v) for _, v in bound]
    n_after = len(below) + 1
    resume = _resume_function(frame, ins, n_after, [name for name, _ in bound], callees)
    note = "# %s at %s:%s runs natively" % (ins.opname, code.co_filename, ins.lineno)
    mock, listing = call_then_resume(builder, stack_exprs, argc, pre.kw_names or (), n_after,
                                     resume, "resume_" + code.co_name, local_exprs, note)
    return mock, listing, gm


def _wrap_callee(stack, argc, callees):
    """The broken call made through the callee's traced wrapper (see
    :mod:`.callees`): ``(stack, argc)`` for the new call.  A module or a
    bound method stays on the stack as the wrapper's first argument, so the
    mock takes it from where the call found it."""
    stack = list(stack)
    slot = len(stack) - argc - 2
    first, second = stack[slot], stack[slot + 1]
    if first is NULL or sys.version_info >= (3, 13) and second is NULL:
        index = slot + 1 if first is NULL else slot
    else:
        index = slot  # [function, self, args]: the plain function
    route = callees.route(stack[index])
    if route is None:
        return stack, argc
    wrapper, self_arg = route
    if self_arg is NO_SELF:
        stack[index] = wrapper
        return stack, argc
    if first is NULL:  # [NULL, callee, args] -> [NULL, wrapper, callee, args]
        return stack[:index] + [wrapper, self_arg] + stack[index + 1:], argc + 1
    # 3.13's [callee, NULL, args] -> [wrapper, NULL, callee, args]
    return stack[:index] + [wrapper, NULL, self_arg] + stack[index + 2:], argc + 1


def _localsplus(code):
    return code.co_varnames + code.co_cellvars + code.co_freevars


def _resume_function(frame, ins, n_stack, local_names, callees):
    """``resume(stack..., locals...)``: ``frame``'s code entered after
    ``ins`` (bytecode from :func:`pyinterp.codegen.resume.resume_code`),
    as a traced function, made once per traced callable (``callees``: its
    callees' wrappers), so each recapture of that callable reuses it and
    its cache.  Another traced callable of the same code gets its own, with
    its own backend (a process-wide cache once handed one the other's)."""
    code = frame.code
    key = (id(code), ins.index, n_stack, tuple(local_names))
    cached = callees.resumes.get(key)
    if cached is not None and cached.__dict__.get("resumes") is code:
        return cached
    new_code = resume_code(code, ins.index, ins.lineno, n_stack, local_names)
    fn = types.FunctionType(new_code, frame.globals, code.co_name)
    traced = callees.wrap(fn)
    traced.__dict__["resumes"] = code
    callees.resumes[key] = traced
    return traced
