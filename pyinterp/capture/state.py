"""Capture state for one traced run: the RefGraph, the FX recorder, breaks.

Tensor ops are seen by a ``TorchFunctionMode`` (:class:`RecordingMode`)
pushed for the whole traced run: every torch function, ``Tensor`` method,
operator and tensor property reaches :meth:`Capture.on_torch_function`,
which classifies it, runs it for real and records it in the FX graph.  The
interpreter marks the native calls it makes on behalf of the program that
are *not* torch calls (``Capture.interp.opaque``); a torch op seen inside
one of those ran in a native callback the interpreter did not follow, and
is a break (``native-callback``).

A break (``Capture.break_graph``) either raises :class:`GraphBreakSignal`
(``fullgraph=True``) or turns capture off for the rest of the run, which
then simply finishes in the interpreter.

Records (see :class:`Capture`): owns ``recording`` (:class:`Recording`) and
``breaks`` (:class:`BreakState`); reads ``speculation``, ``top`` and
``interp``.
"""
import contextlib
import linecache
import logging
import os
import sys
import sysconfig

import attrs
import torch

from . import callbacks, grad_hooks, legacy_tensors, numpy_calls, tensor_setters
from .consumers import ARGS, consume
from .guardfail import site_text
from .graphmend.speculate import Speculating, Speculation
from .torchfiles import is_torch_file
from .values import arrays, assumptions, equal_branch, float_text, listed_ints, scalars, sizes, tracked_ints
from ..errors import GraphBreakSignal
from ..refgraph.breaks import BreakRecord
from ..refgraph.fxgraph import GraphRecorder, Unrepresentable
from ..refgraph.sources import Produced
from ..refgraph.refgraph import RefGraph

Tensor = torch.Tensor
_TENSOR_TYPE = Tensor.type

# Tensor methods (by __name__) whose Python result depends on tensor data.
_DATA_DEPENDENT = frozenset({
    "item", "tolist", "__bool__", "__int__", "__float__", "__index__", "__complex__",
    "__contains__", "equal", "is_nonzero", "allclose", "__hash__", "_local_scalar_dense",
})
_TO_OTHER_LIBRARY = frozenset({"numpy", "__array__", "__array_wrap__", "data_ptr",
                               "untyped_storage", "storage", "__dlpack__"})
_TEXT = frozenset({"__format__", "__repr__", "__str__"})
_BACKWARD = frozenset({"backward", "grad"})
# Tensor methods that change a tensor's autograd state: a graph does not
# carry it to the tensors it returns (AOTAutograd backends drop it even on
# the graph's inputs).
_AUTOGRAD_STATE = frozenset({"requires_grad_", "retain_grad", "detach_"})
_DATA_DEPENDENT_SHAPE = frozenset({
    "nonzero", "masked_select", "unique", "unique_consecutive", "argwhere",
    "repeat_interleave", "bincount", "nonzero_static",
})
_MUTATING = frozenset({"__setitem__", "__delitem__", "copy_", "set_", "resize_"})
_INPLACE_DUNDERS = frozenset("__i%s__" % op for op in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
    "lshift", "rshift"))


_break_logger = logging.getLogger("pyinterp.breaks")  # (switched in capture/logs.py)


@contextlib.contextmanager
def recording(capture):
    """:class:`RecordingMode` on for a traced run, and torch's function-mode
    stack as it was afterwards (:func:`restore_mode_stack`); gives the
    stack as it was before."""
    before = mode_stack()
    mode = RecordingMode(capture)
    torch.overrides._push_mode(mode)
    try:
        yield before
    finally:
        stack = mode_stack()
        if len(stack) == len(before) + 1 and stack[-1] is mode:
            torch.overrides._pop_mode()
        else:
            restore_mode_stack(before)


def mode_stack():
    """torch's function-mode stack, bottom first."""
    return torch.overrides._get_current_function_mode_stack()


def restore_mode_stack(modes):
    """Put torch's function-mode stack back to ``modes``.  A graph-break
    signal (under ``fullgraph``) leaves the interpreted program without
    running its ``finally`` blocks and ``with`` exits, so torch's own code
    interrupted there (its ``_pop_mode_temporarily``) may leave the stack
    short of the recording mode, and push it back later, when that
    suspended generator is collected: call this after collecting the
    aborted run's frames too."""
    overrides = torch.overrides
    while overrides._len_torch_function_stack():
        overrides._pop_mode()
    for mode in modes:
        overrides._push_mode(mode)


class RecordingMode(torch.overrides.TorchFunctionMode):
    """Routes every torch call made during a traced run to the capture.

    Torch's Python code that the capture interprets (its
    ``handle_torch_function``) calls the mode's ``__torch_function__``
    natively (``CaptureInterpreter.call_function``): pyinterp's own code is
    never interpreted."""

    def __init__(self, capture):
        super().__init__()
        self.capture = capture

    def __torch_function__(self, func, types, args=(), kwargs=None):
        watch = sys.getprofile()
        if type(watch) is not callbacks.Watch:
            return self.capture.on_torch_function(func, args, kwargs or {})
        # Inside a watched native call: the op is recorded (a graph runs it,
        # and whatever it calls back, again on every hit), and recording is
        # pyinterp's own code: unwatched, it costs no profile events.
        sys.setprofile(None)
        try:
            return self.capture.on_torch_function(func, args, kwargs or {})
        finally:
            sys.setprofile(watch)


class _NodeSites:
    """Notes in each new FX node where the user's code made it: the
    interpreted frames running (outermost first) as ``meta["stack_trace"]``
    (text in ``traceback``'s format, which FX prints in the graph's code
    and Inductor in its errors) and as ``meta["pyinterp_stack"]`` (code,
    instruction offset, line and globals of each frame, from which an error
    on a cache hit gets the user's frames: ``tracebacks_for_hits``)."""

    __slots__ = ("interp", "texts")

    def __init__(self, interp):
        self.interp = interp
        self.texts = {}  # the stack's key -> (stack, text)

    def note(self, node):
        vm = self.interp.vm
        frame = vm.top if vm is not None else None
        frames = []
        while frame is not None:
            ins = frame.instructions[frame.lasti]
            frames.append((frame.code, ins.offset, ins.line, frame.globals))
            frame = frame.back
        frames.reverse()
        key = tuple((id(code), offset) for code, offset, _, _ in frames)
        known = self.texts.get(key)
        if known is None or any(a[0] is not b[0] for a, b in zip(known[0], frames)):
            known = self.texts[key] = (tuple(frames), _stack_text(frames))
        node.meta["pyinterp_stack"], node.meta["stack_trace"] = known


def _stack_text(frames):
    lines = []
    for code, _, line, _ in frames:
        lines.append('  File "%s", line %s, in %s\n' % (code.co_filename, line, code.co_name))
        text = linecache.getline(code.co_filename, line or 0).strip()
        if text:
            lines.append("    %s\n" % text)
    return "".join(lines)


class Recording:
    """What the run recorded (``Capture.recording``), written only by this
    module: the RefGraph, the FX recorder, and the values the graph
    computes (the tables of :mod:`.values`, whose entries those modules
    keep)."""

    __slots__ = ("refgraph", "recorder", "scalars", "text", "ints", "arrays",
                 "autocast_nodes", "segment_graphs", "produced", "where", "sizes", "assumed",
                 "merged")

    def __init__(self, where=None, sizes=None):
        self.where = where  # where(node): the user's stack of a new node
        # Symbolic sizes (dynamic shapes: values/sizes.py), or None: all exact.
        self.sizes = sizes
        self.refgraph = RefGraph(torch)
        self.scalars = scalars.ScalarTable()  # floats from tensor data (.item())
        self.text = float_text.TextTable()  # text the mock makes from those floats
        self.ints = tracked_ints.IntTable()  # ints and bools from tensor data, by location
        self.arrays = arrays.ArrayTable()  # NumPy arrays from tensor data (t.numpy())
        self.recorder = GraphRecorder(self.refgraph.source_of, self.scalar_node, where)
        self.recorder.input_check = self.check_input
        self.autocast_nodes = {}  # id(autocast context) -> (context, its enter node)
        self.segment_graphs = []  # explain with breaks: (GraphModule, op count) per graph
        self.produced = {}  # explain with breaks: id -> tensor, outputs of the closed graphs
        self.assumed = []  # (site, value): the bools any graph of the run assumes
        self.merged = []  # site: the data-dependent branches a graph computes both arms of

    def end_segment(self):
        """Close the graph recorded since the last break (explain mode) and
        start the next one, which takes earlier graphs' tensors as inputs."""
        rec = self.recorder
        if rec.op_count == 0:
            return
        produced = [t for i, t in rec.tensor_of.items() if rec.is_graph_value(t)]
        self.segment_graphs.append((rec.finish(produced), rec.op_count))
        earlier = self.produced
        earlier.update((id(t), t) for t in produced)
        source_of = self.refgraph.source_of

        def source_or_earlier(tensor):
            source = source_of(tensor)
            if source is None and id(tensor) in earlier:
                source = Produced("graph%d_output" % (len(self.segment_graphs) - 1))
            return source

        self.recorder = GraphRecorder(source_or_earlier, self.scalar_node, self.where)
        self.recorder.input_check = self.check_input
        # A resume point hands live values over as plain Python floats.
        self.scalars = scalars.ScalarTable()
        self.text = float_text.TextTable()
        self.ints.clear()
        self.arrays = arrays.ArrayTable()

    def check_input(self, tensor):
        """A tensor from outside is about to be a graph input: refused
        (Unrepresentable) where its memory was written through a NumPy
        array whose write the mock replays after the graph."""
        if self.arrays.written:
            arrays.check_input(self.arrays, tensor)

    def scalar_node(self, value):
        """The node of a non-tensor graph output: a tracked float, a
        tracked NumPy array, or an int from tensor data that the result
        holds (:class:`.sizes.LeavingInts`)."""
        if self.arrays.tracks(value):
            return self.recorder.node_for(self.arrays.tensor(value, self.recorder))
        if self.sizes is not None and self.sizes.leaving.tracks(value):
            return self.recorder.node_for(self.sizes.leaving.tensor(value))
        return self.scalars.node(value, self.recorder)


@attrs.define(slots=True)
class BreakState:
    """Whether the run is still captured, and what its breaks left
    (``Capture.breaks``); written only by this module (:meth:`Capture.break_graph`)."""

    fullgraph: bool  # a break raises GraphBreakSignal
    explain: bool  # explain(): count every break, split the ops into graphs
    splitter: object  # splitter(capture) builds the split entry at a break, or None
    active: bool = True  # False once a break stopped capture (the run finishes plainly)
    records: list = attrs.Factory(list)  # a BreakRecord per break
    split: object = None  # (mock, listing, graph module) from splitter at the first break
    # explain(): the (frame, instruction) of the last break, whose native
    # run (a Function.apply after its break) goes on recorded, not re-broken
    broken_at: tuple = ()

    @contextlib.contextmanager
    def paused(self):
        """Capture off for a call the mock replays whole (special_calls.deferred)."""
        self.active = False
        try:
            yield
        finally:
            self.active = True


class Capture:
    """The state of one traced run: five records, each written by one module
    (the others only read it, or call its owner's methods):

    * ``recording`` (:class:`Recording`, this module): RefGraph, FX recorder,
      tables of the numbers the graph computes;
    * ``breaks`` (:class:`BreakState`, this module): whether capture is on,
      the breaks met, the split entry made at the first one;
    * ``speculation`` (:class:`~.graphmend.speculate.Speculation`): the
      data-dependent branches being run both ways, and their journals;
    * ``top`` (:class:`~.variants.TopFrame`): the traced function's own frame,
      followed instruction by instruction;
    * ``interp`` (:class:`~.interpreter.InterpState`): the interpreter
      running the capture, its watched native calls, the volatile ids.

    ``interp`` and ``top`` are made by the caller (:func:`.traced.capture`):
    importing their owners here would close an import circle."""

    __slots__ = ("recording", "breaks", "speculation", "top", "interp")

    def __init__(self, interp, top, fullgraph=False, explain=False, splitter=None,
                 dim_policy=None):
        self.recording = Recording(_NodeSites(interp).note,
                                   sizes.SizeTracker(dim_policy, interp) if dim_policy else None)
        self.breaks = BreakState(fullgraph, explain, splitter)
        self.interp = interp
        self.speculation = Speculation()
        self.top = top

    # -- where we are -------------------------------------------------------
    def site(self):
        """The user's ``(filename, lineno)`` being executed, or None."""
        innermost = frame = self.interp.vm.top if self.interp.vm is not None else None
        while frame is not None and is_torch_file(frame.code.co_filename):
            frame = frame.back
        frame = frame or innermost  # all torch frames: name torch's line
        if frame is None:
            return None
        return frame.code.co_filename, frame.lineno

    def _instruction(self):
        """The innermost interpreted frame and its current instruction."""
        frame = self.interp.vm.top if self.interp.vm is not None else None
        return (frame, frame.lasti) if frame is not None else ()

    # -- breaks -------------------------------------------------------------
    def break_graph(self, kind, message, site=None):
        """The run met something it cannot capture: raise under fullgraph,
        else stop capturing (the run finishes in the interpreter).
        ``site``: where, when no frame is running (the run is over)."""
        if self.speculation.depth:
            raise Speculating(message)
        site = self.site() or site
        record = BreakRecord(kind, message, *(site or (None, None)))
        if self.recording.sizes is not None:
            self.recording.sizes.give_up("a graph break (%s)" % record.message, breaking=True)
        if not self.breaks.explain and _break_logger.isEnabledFor(logging.INFO):
            _break_logger.info("graph break at %s\n    %s [%s]\n    hint: %s", site_text(site),
                               record.message, record.kind, record.hint)
        if self.breaks.fullgraph:
            raise GraphBreakSignal(record)
        if self.breaks.explain:
            # explain() counts every break event and keeps going, splitting
            # the ops into the graphs a run with resume points would have.
            self.breaks.records.append(record)
            self.breaks.broken_at = self._instruction()
            self.recording.end_segment()
        elif self.breaks.active:
            self.breaks.records.append(record)
            self.breaks.active = False
            top = self.top
            if self.breaks.splitter is not None and top.pre is not None \
                    and top.pre.frame is top.frame and top.pre.ins.index == top.frame.lasti:
                self.breaks.split = self.breaks.splitter(self)

    def finish(self):
        """The run is over (explain mode): close the last graph."""
        if self.breaks.explain and self.breaks.records:
            self.recording.end_segment()

    # -- torch calls ----------------------------------------------------------
    def on_torch_function(self, func, args, kwargs):
        """A torch function, Tensor method or tensor property was called."""
        if not self.breaks.active:
            return func(*args, **kwargs)
        caller = _python_run_natively(sys._getframe(2))
        if caller is not None and not (self.breaks.explain
                                       and self.breaks.broken_at == self._instruction()):
            # (e.g. a __index__ that C's list[i] called)
            self.break_graph("native-callback", "%s() ran natively, called by C code the "
                             "interpreter did not follow, and computes with tensors"
                             % caller.co_qualname)
            if not self.breaks.active:  # (explain() goes on recording)
                return func(*args, **kwargs)
        if self.recording.sizes is None or not self.recording.sizes.active:
            return self._torch_call(func, args, kwargs)
        name = getattr(func, "__name__", "")
        prop = _property_name(func)
        if (prop == "shape" or name in _SIZE_READS) and not kwargs and not self.interp.opaque:
            value = sizes.read(self, func, name, prop, args)
            if value is not None:  # x.shape with symbolic sizes
                return value
        result = self._torch_call(func, args, kwargs)
        sizes.after_call(self, prop or name, args, kwargs, result)
        return result

    def _torch_call(self, func, args, kwargs):
        name = getattr(func, "__name__", "")
        prop = _property_name(func)
        graph_args, graph_kwargs = args, kwargs
        if prop is None and self.recording.arrays and not self.interp.opaque and (
                self.recording.arrays.carried(args) or self.recording.arrays.carried(kwargs)):
            made = arrays.tensor_op(self, func, name, args, kwargs)  # torch.tensor(a)
            return made if made is not None else func(*args, **kwargs)
        if name == "numpy" and prop is None:
            made = arrays.produce(self, func, args, kwargs)  # t.numpy(): followed
            if made is not None:
                return made
        if func is torch.tensor and args and not self.interp.opaque:
            # torch.tensor(np.tile([1, 2], 2)): the array's values as a constant
            graph_args, graph_kwargs = numpy_calls.tensor_arguments(self, args, kwargs)
        if name == "__set__" and not self.interp.opaque:
            setter = tensor_setters.setter_name(func)
            if setter is not None:  # t.data = v, setattr(t, "grad", g)
                return tensor_setters.assign(self, func, setter, args)
        if self.recording.ints.operand is not None and prop is None:
            graph_args = tracked_ints.tensor_op_args(self, func, name, args, kwargs)
            if graph_args is None:
                return func(*args, **kwargs)
        elif prop is None and self.recording.scalars and (
                self.recording.scalars.carried(args) or self.recording.scalars.carried(kwargs)):
            graph_call = scalars.tensor_op_args(self, func, name, args, kwargs)
            if graph_call is None:
                return func(*args, **kwargs)
            graph_args, graph_kwargs = graph_call
        elif name in _DATA_DEPENDENT and prop is None:
            result = scalars.produce(self, func, name, args, kwargs)
            if result is None:
                result = listed_ints.produce(self, func, name, args, kwargs)
            if result is None and not kwargs:
                result = tracked_ints.produce(self, func, name, args)
            if result is None:  # x[:, :lengths.max().item()]: an unbacked size
                result = listed_ints.produce_one(self, func, name, args, kwargs)
            if result is None:
                result = equal_branch.produce(self, func, args, kwargs)  # if torch.equal(a, b):
            if result is not None:
                return result
        if name == "__getitem__" and len(args) == 2 and not kwargs and not self.interp.opaque:
            bounds = listed_ints.tensor_slice_bounds(self, args[1])  # x[:, :lengths.max()]
            if bounds is not None:
                args = graph_args = (args[0], bounds)
        if name == "type" and func is _TENSOR_TYPE and graph_args is args:
            spelled = legacy_tensors.type_argument(args, kwargs)  # x.type(torch.FloatTensor)
            if spelled is not None:
                args, kwargs = spelled
                graph_args, graph_kwargs = args, kwargs
        if prop is None:
            why = self._refuse(func, name, args)
            if why is not None and name == "item" and not kwargs:
                value = assumptions.assume(self, func, args)  # x.any().item(): checked
                if value is not None:
                    return value
            if why is not None:
                self.break_graph(*why)
                return func(*args, **kwargs)
            if name == "__iter__" and len(args) == 1 and isinstance(args[0], Tensor):
                return iter(self.on_torch_function(Tensor.unbind, (args[0], 0), {}))
        elif prop == "grad" or prop == "_base":
            self.break_graph("tensor-to-python", "reading .%s of a tensor" % prop)
            return func(*args, **kwargs)
        if prop is None:
            stored = callbacks.stored_callable(
                tuple(args) + tuple(kwargs.values()) if kwargs else args, Tensor)
            if stored is not None and grad_hooks.is_register_hook(func):
                handle = grad_hooks.register(self, args, kwargs)
                if handle is not None:  # (the hook is part of the graph's backward)
                    return handle
            if stored is not None:  # Tensor.register_hook(fn), Tensor.apply_(fn)
                self.break_graph("native-callback", "%s received a Python callable (%s) it may "
                                 "call natively" % (_spell(func), _spell(stored)))
                return func(*args, **kwargs)
        if self.interp.opaque:
            self.break_graph("native-callback", "%s ran inside a native call" % _spell(func))
            return func(*args, **kwargs)
        # Containers among the arguments are constants of the node: guard them.
        consume(self, args + tuple(kwargs.values()), ARGS)
        if not self.breaks.active:
            return func(*args, **kwargs)
        written = _written(name, args, kwargs)
        if self.speculation.depth and (name in _MUTATING or name.endswith("_")
                                       and not name.endswith("__")) \
                and not self.speculation.may_write_tensor(written):
            self.break_graph("unsupported-value", "in-place %s in a speculative arm" % name)
        elif (hazard := self.recording.recorder.write_hazard(written)) is not None:
            kind, message = _WRITE_HAZARDS[hazard]
            self.break_graph(kind, message % _spell(func))
        result = func(*args, **kwargs)
        if _holds_tensor(result) or name in _MUTATING or name.endswith("_") and \
                not name.endswith("__"):
            try:
                if prop is not None:
                    self.recording.recorder.record(getattr, (args[0], prop), {}, result)
                elif args and isinstance(args[0], Tensor) and (
                        getattr(Tensor, name, None) is func
                        or getattr(func, "__module__", None) == "torch._tensor"):
                    # A Tensor method (some are Python wrappers FX cannot
                    # name as functions, such as Tensor.__rpow__).
                    self.recording.recorder.record(name, graph_args, graph_kwargs, result,
                                                   method=True)
                else:
                    self.recording.recorder.record(func, graph_args, graph_kwargs, result)
            except Unrepresentable as e:
                self.break_graph(e.kind, e.message)
        if written is not None and self.breaks.active:
            self.recording.recorder.note_mutation(written)
        return result

    def _refuse(self, func, name, args):
        """``(kind, message)`` if ``func`` cannot be captured, else None."""
        if name in _DATA_DEPENDENT:
            return "data-dependent-value", "%s() turns tensor data into a Python value" % name
        if name in _TO_OTHER_LIBRARY:
            return "tensor-to-python", "Tensor.%s() leaves torch" % name
        if name in _TEXT:
            return "text-of-tensor", "%s of a tensor reads its data" % name
        if name in _AUTOGRAD_STATE and args and isinstance(args[0], Tensor):
            return "tensor-attribute-write", "%s() changes a tensor's autograd state" % name
        if name in _BACKWARD and ("autograd" in (getattr(func, "__module__", "") or "")
                                  or name == "backward"):
            return "backward", "%s() inside the traced function" % _spell(func)
        if name in _DATA_DEPENDENT_SHAPE:
            why = "%s() has a data-dependent output size" % name
        elif name == "__getitem__" and len(args) == 2 and _bool_index(args[1]):
            why = "indexing with a boolean mask"
        elif name == "where" and len(args) == 1:
            why = "torch.where(condition) with one argument"
        else:
            return None
        # An unbacked size in the graph (values/sizes.py), while the sizes
        # can be followed; a Python decision on one breaks later.
        if self.recording.sizes is None:
            self.recording.sizes = sizes.SizeTracker(None, self.interp)
        if self.recording.sizes.allow_unbacked():
            return None
        return "data-dependent-shape", why

    # -- native calls ---------------------------------------------------------

    def _record_autocast(self, method, ctx):
        """``with torch.autocast(...)``: enter and exit nodes in the graph,
        so the compiled graph runs the same ops under autocast."""
        graph = self.recording.recorder.graph
        if method == "__enter__":
            node = graph.call_function(torch.amp.autocast_mode._enter_autocast,
                                       _autocast_args(ctx))
            self.recording.autocast_nodes[id(ctx)] = (ctx, node)
        else:
            entry = self.recording.autocast_nodes.pop(id(ctx), None)
            if entry is None:
                self.break_graph("unsupported-global-state", "autocast exited without entering")
                return
            graph.call_function(torch.amp.autocast_mode._exit_autocast, (entry[1],))
        self.recording.recorder.op_count += 1

    def call_torch(self, fn, args, kwargs):
        """Run torch's own Python natively (recorded as leaf ops); keep
        grad-mode changes (``no_grad().__enter__``) as graph nodes."""
        grad = torch.is_grad_enabled()
        inference = torch.is_inference_mode_enabled()
        autocast = torch.is_autocast_enabled("cpu"), torch.is_autocast_enabled("cuda")
        consume(self, tuple(args) + tuple((kwargs or {}).values()), ARGS)
        sizes = self.recording.sizes
        if sizes is None:
            result = self.run_watched(fn, args, kwargs)
        else:
            sizes.native_depth += 1  # (its size reads are exact: values/sizes.py)
            try:
                result = self.run_watched(fn, args, kwargs)
            finally:
                sizes.native_depth -= 1
        if self.breaks.active and args and isinstance(args[0], torch.amp.autocast_mode.autocast) \
                and getattr(fn, "__name__", "") in ("__enter__", "__exit__"):
            self._record_autocast(fn.__name__, args[0])
            return result
        if self.breaks.active:
            now = torch.is_grad_enabled()
            if now != grad:
                self.recording.recorder.record_effect(torch._C._set_grad_enabled, (now,))
            if torch.is_inference_mode_enabled() != inference:
                self.break_graph("unsupported-global-state",
                                 "inference mode changed by %s" % _spell(fn))
            if (torch.is_autocast_enabled("cpu"), torch.is_autocast_enabled("cuda")) != autocast:
                self.break_graph("unsupported-global-state",
                                 "autocast state changed by %s" % _spell(fn))
        return result


    def run_watched(self, fn, args, kwargs):
        """Torch's own code run natively, watched for Python code outside
        torch that it calls back (:mod:`.callbacks`): such code ran unseen,
        so the call is a break (after it; a split forgets the ops it
        recorded and runs it natively on every call).  In a speculative arm
        that code is stopped before it runs, and the arm undone."""
        watch = callbacks.Watch(_callback_in_arm if self.speculation.depth else None)
        try:
            with watch:
                return fn(*args, **kwargs) if kwargs else fn(*args)
        finally:
            if watch.entered is not None and self.breaks.active:
                self.break_graph("native-callback", "%s ran %s natively"
                                 % (_spell(fn), callbacks.describe(watch.entered)))

    def call_in_graph(self, fn, args, kwargs):
        """A ``torch.compiler.allow_in_graph`` function: run natively (its
        own ops unrecorded) and recorded as one node, as Dynamo does."""
        with self.breaks.paused():
            result = fn(*args, **kwargs) if kwargs else fn(*args)
        if not _all_tensors(result):
            self.break_graph("unsupported-value", "allow_in_graph function %s returned a %s, "
                             "not tensors" % (_spell(fn), type(result).__name__))
            return result
        try:
            self.recording.recorder.record(fn, args, kwargs or {}, result)
        except Unrepresentable as e:
            self.break_graph(e.kind, e.message)
        return result


_PACKAGE = __name__.split(".")[0]
_STDLIB_DIR = sysconfig.get_paths()["stdlib"] + os.sep


def _python_run_natively(host):
    """The code of the Python function that called a torch op, from the op
    caller's host frame ``host``, when C code ran that function natively
    (user code or a library's, not interpreted: its ops would be recorded
    but its Python decisions on them not seen); None when the op comes
    from pyinterp's own code (the interpreter's calls, torch's Python and
    the standard library's that it runs natively on the program's behalf)."""
    while host is not None:
        module = host.f_globals.get("__name__") or ""
        if module == _PACKAGE or module.startswith(_PACKAGE + "."):
            return None
        filename = host.f_code.co_filename
        if not (is_torch_file(filename) or filename.startswith(_STDLIB_DIR)):
            return host.f_code
        host = host.f_back
    return None


def _callback_in_arm():
    return Speculating("a native callback in a speculative arm")


def _all_tensors(value):
    if isinstance(value, Tensor):
        return True
    return isinstance(value, (tuple, list)) and bool(value) and all(map(_all_tensors, value))


# GraphRecorder.write_hazard -> the break before such a write: (kind, message % op)
_WRITE_HAZARDS = {
    "assumed": ("data-dependent-value", "%s writes a graph input in place after the graph "
                "assumed a value from tensor data"),
    "rebound": ("tensor-attribute-write", "%s writes in place the memory of a tensor "
                "requiring grad whose .data was assigned"),
}


def _written(name, args, kwargs):
    """The tensor (or tensors) an op writes in place, or None."""
    out = kwargs.get("out") if kwargs else None
    if out is not None:
        return out
    if args and (name in _MUTATING or name in _INPLACE_DUNDERS
                 or name.endswith("_") and not name.endswith("__")):
        return args[0]
    return None


def _autocast_args(ctx):
    return (ctx.device, ctx.fast_dtype, ctx._enabled, ctx._cache_enabled)


_SIZE_READS = frozenset({"size", "__len__", "numel", "stride"})


def _property_name(func):
    """For a tensor property's getter (``Tensor.T.__get__``), the name."""
    owner = getattr(func, "__self__", None)
    if getattr(func, "__name__", None) == "__get__" and owner is not None:
        return getattr(owner, "__name__", None)
    return None


def _bool_index(index):
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, Tensor) and i.dtype in (torch.bool, torch.uint8) for i in items)


def _holds_tensor(value):
    if isinstance(value, Tensor):
        return True
    if isinstance(value, (tuple, list)):
        return any(_holds_tensor(v) for v in value)
    return False


def _spell(func):
    module = getattr(func, "__module__", None) or ""
    qualname = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    return "%s.%s" % (module, qualname) if module else qualname
