"""``pyinterp.trace``: the cache of guarded entries around a function.

A :class:`Traced` callable keeps entries in most-recently-used order.  A
call tries each entry's guard; the first that passes runs that entry's mock
(or, for an entry whose trace hit a graph break, the original function
natively).  When every guard fails, the call is a miss: the function runs
once inside the capturing interpreter (:func:`capture`), which returns the
real result and produces a new entry.

Records (:class:`~.state.Capture`): owns none; :func:`capture` makes the
``interp`` and ``top`` records of the Capture it builds (their owners fill
them in) and reads ``recording``, ``breaks``, ``top`` and ``interp`` after
the run.
"""
import functools
import gc
import time
import types
import warnings
import weakref
from typing import Any, Callable, Dict, Optional, Union

from .. import api, config
from ..codegen import collector
from ..interp.model import lookup
from ..errors import AssumptionFailed, GraphBreakError, GraphBreakSignal, RecompileLimitWarning
from ..interp.tracebacks import user_traceback
from . import logreport, sourcelines, torchversion
from .guardfail import describe_guard, name_parameters  # (explain's and the tutorial's)
from .cache import RETIRED, Entries, Entry
from .partial.callees import Callees


class TraceResult:
    """What one capture produced (also the material of ``explain``).

    Kept by its cache entry: it holds no tensor of the call (``result`` is
    handed over and cleared, graphs keep metadata only) and owns the
    ``linecache`` names its capture registered (``lines``), dropped when
    it dies (:mod:`.sourcelines`)."""

    @property
    def guard_text(self):
        """The guard as Python (rendered on demand)."""
        return self.guard_listing() if self.guard_listing else ""

    @property
    def mock_text(self):
        """The mock as Python (rendered on demand)."""
        return self.mock_listing() if self.mock_listing else ""

    def __init__(self):
        self.guard = None
        self.guard_listing = None
        self.guards = []
        self.mock = None
        self.mock_listing = None
        self.graphs = []
        self.dynamic = None  # DynamicSummary (dynamic_shapes.py) or None
        self.ops_per_graph = []
        self.breaks = []
        self.graph_count = 0
        self.result = None
        self.param_names = ()
        # (site, value) per bool from tensor data a graph assumes and checks
        # (values/assumptions.py); a call where one differs does not use it.
        self.assumptions = []
        self.merged = []  # site per data-dependent branch a graph computes both arms of
        self.draws_python_random = False  # (its mock calls random.random() again)
        self.lines = []
        # Seconds: "capture" (the whole run, guard build and compile included),
        # "guards" (building the guard), "compile" (the backend, on the graph
        # this capture compiles itself; a split entry's graph compiles in the run).
        self.times = {"capture": 0.0, "guards": 0.0, "compile": 0.0}

    def take_result(self):
        """The real result of the captured call, no longer held here."""
        result, self.result = self.result, None
        return result

    def __del__(self):
        try:
            sourcelines.forget(self.lines)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def capture(target, args, kwargs, roots=(), backend=None, fullgraph=False,
            explain=False, callees=None, dim_policy=None, inspect_graph=None, assume=True):
    """Run ``target(*args, **kwargs)`` with capture on.

    Returns a :class:`TraceResult` whose ``result`` is the real result.
    ``roots`` are ``(object, name)`` pairs fixed by the traced wrapper (the
    module or bound ``self``): reachable by identity, never guarded.
    ``callees`` (a :class:`.partial.callees.Callees`) makes the traced
    wrappers a split entry calls.  User exceptions propagate; under
    ``fullgraph`` a break raises :class:`GraphBreakError`.  The cyclic collector is paused throughout
    (see :mod:`pyinterp.codegen.collector`).  ``inspect_graph(gm)`` runs on
    each graph while its nodes still hold the run's tensors (explain of a
    DDP module counts its bucket parts).  ``assume``: bools from tensor
    data may be assumed and checked (:mod:`.values.assumptions`); False
    breaks at them.
    """
    torchversion.warn_if_untested()
    start = time.perf_counter()
    with collector.paused(), sourcelines.recording() as lines:
        try:
            out = _capture(target, args, kwargs, roots, backend, fullgraph, explain, callees,
                           dim_policy, assume)
        except GraphBreakSignal as signal:
            # (a break found after the run, building the mock: no user frame)
            sourcelines.forget(lines)
            raise _graph_break_error(signal.record) from None
        except BaseException:
            sourcelines.forget(lines)
            raise
    out.lines = lines
    out.times["capture"] = time.perf_counter() - start
    from ..refgraph.fxgraph import keep_metadata_only
    from ..refgraph.symbolic import RESULT_DEPTH, plain

    out.result = plain(out.result, RESULT_DEPTH)  # (the caller's ints are plain ints)

    for gm in out.graphs:
        if inspect_graph is not None:
            inspect_graph(gm)
        keep_metadata_only(gm)
    return out


def _capture(target, args, kwargs, roots, backend, fullgraph, explain, callees, dim_policy,
             assume):
    # The capture machinery loads on the first capture, not on ``import
    # pyinterp``: torch, the capture interpreter and the code generators.
    import torch

    from .state import Capture, recording, restore_mode_stack
    from .interpreter import CaptureInterpreter, InterpState
    from .variants import TopFrame
    from . import dynamic_shapes
    from ..codegen import backends
    from ..codegen.guardgen import build_guard
    from ..codegen.mockgen import MockBuilder, Walker, graph_outputs
    from .values import assumptions
    from ..refgraph import guards as G
    from ..refgraph.fxgraph import Unrepresentable
    from ..refgraph.sources import Arg, Kwarg, Root
    from ..refgraph.state import restore_torch_state, torch_state

    splits = not explain and not fullgraph
    if splits and callees is None:
        callees = Callees(wrapper_maker({}))
    cap = Capture(InterpState(), TopFrame(_top_code(target) if splits else None),
                  fullgraph=fullgraph, explain=explain,
                  splitter=_splitter(backend, callees) if splits else None,
                  dim_policy=dim_policy)
    if not assume:
        cap.recording.assumed = None  # (values/assumptions.py: none made)
    rg = cap.recording.refgraph
    state_before = torch_state()
    rg.add_guard(G.StateIs(torch_state, value=state_before))
    for obj, name in roots:
        rg.register(obj, Root(obj, name))
        if isinstance(obj, types.FunctionType):
            rg.read_function_state(obj, Root(obj, name))
    for i, value in enumerate(args):
        rg.read(Arg(i), value)
    for name, value in kwargs.items():
        rg.read(Kwarg(name), value)
    vm = CaptureInterpreter(cap, Traced, debug=config.debug_capture)
    error = None
    observer = vm.looked_up  # (one bound method: removed by identity)
    lookup.observe(observer)  # what the run looks up on types
    modes = None
    try:
        with recording(cap) as modes:  # (torch's mode stack before the run)
            result = api.run(target, args, kwargs, vm=vm)
    except GraphBreakSignal as signal:
        # (with the user's frames, down to where the break happened)
        error = _graph_break_error(signal.record)
        error.__traceback__ = user_traceback(signal.__traceback__, internal=True)
        signal = None
    finally:
        lookup.observe(observer, on=False)
    if error is not None:
        # The signal skipped the program's finally blocks and with exits:
        # put torch's global state back (a ``with torch.no_grad():`` left
        # midway would leave grad mode off for the program's next calls).
        vm = cap = None  # (the aborted run's frames: their suspended generators
        gc.collect()     # finish now, and torch's may push a mode back)
        restore_mode_stack(modes)
        restore_torch_state(state_before)
        raise error from None
    cap.finish()
    leaving = cap.recording.sizes.leaving if cap.recording.sizes is not None else None
    if leaving is not None:
        from ..refgraph.symbolic import RESULT_DEPTH, plain

        # (a size that leaves after a break: a plain int; an int from tensor
        # data stays itself until the mock is built, see capture(): a graph
        # output gives it back, or the mock builder refuses it)
        result = plain(result, RESULT_DEPTH, keep=cap.recording.sizes.data_ids(result)
                       if not cap.breaks.records else ())
    out = TraceResult()
    out.assumptions = list(cap.recording.assumed or ())
    out.merged = list(cap.recording.merged)
    out.draws_python_random = bool(out.assumptions) and assumptions.draws_python_random(
        cap.recording.recorder)
    out.call_shape = (len(args), tuple(kwargs))  # (the recompiles log's reason)
    out.result = result
    out.top_steps = cap.top.steps
    out.top_callees = cap.top.callees
    out.param_names = parameter_names(target)
    rec = cap.recording.recorder
    walker = Walker(torch, rg.source_of, rec.is_graph_value, cap.interp.volatile,
                    cap.recording.scalars, cap.recording.text, cap.recording.arrays, leaving)
    outputs = []
    if explain and cap.breaks.records:
        return _explained_with_breaks(out, cap, build_guard, args, kwargs)
    if cap.breaks.active or explain:
        values = [result] + [v for eff in rg.effects for v in _effect_values(eff)]
        try:
            outputs = graph_outputs(walker, values)
        except Unrepresentable as e:  # (the result or a write: name the function)
            cap.break_graph(e.kind, e.message, _definition_site(target))
        why = assumptions.check_finished(rec)
        if why is not None:
            cap.break_graph("data-dependent-value", why, _definition_site(target))
        if explain and cap.breaks.records:  # (the result or an effect broke)
            return _explained_with_breaks(out, cap, build_guard, args, kwargs)
    out.breaks = list(cap.breaks.records)
    rg.alias_guards()
    guards = rg.all_guards()
    out.guards = guards
    if cap.breaks.records and not explain:
        _build_guard(out, build_guard, guards, len(args), tuple(kwargs))
        if cap.breaks.split is not None:  # a partial graph, then a resume function
            out.mock, out.mock_listing, gm = cap.breaks.split
            out.graphs = [gm] if gm is not None else []
            out.ops_per_graph = [len(gm.graph.nodes)] if gm is not None else []
        out.graph_count = len(out.graphs)
        return out
    gm = None
    if rec.op_count or outputs or rec.assumptions:
        gm = rec.finish(outputs, assumptions.output_nodes(rec))
        out.graphs.append(gm)
        out.ops_per_graph.append(rec.op_count)
    out.graph_count = len(out.graphs)
    builder = MockBuilder(walker, outputs)
    sizes = dynamic_shapes.ready(cap.recording.sizes, gm, rec)  # None: exact shapes
    if gm is not None:
        example = [t for _, t, _ in rec.inputs]
        start = time.perf_counter()
        compiled = logreport.compile_graph(dynamic_shapes.compiler(backends.compile_graph, sizes),
                                           backend or backends.eager, gm, example)
        out.times["compile"] = time.perf_counter() - start
        builder.call_graph(compiled, [s for s, _, _ in rec.inputs],
                           rerunnable=not rec.mutated_input,
                           check=assumptions.checker(rec, len(outputs)))
    out.dynamic = dynamic_shapes.summary(cap.recording.sizes)
    if sizes is not None:
        out.guards = dynamic_shapes.guards(sizes, out.guards, fullgraph, out.dynamic,
                                           out.param_names)
    _build_guard(out, build_guard, out.guards, len(args), tuple(kwargs))
    try:
        builder.preload(rg.effects, [result])
        for eff in rg.effects:
            builder.effect(eff)
        out.mock, out.mock_listing = builder.finish(result)
    except Unrepresentable as e:  # pragma: no cover - graph_outputs checked the values
        cap.break_graph(e.kind, e.message, _definition_site(target))
        out.breaks = list(cap.breaks.records)
        out.mock = None
    return out


def _explained_with_breaks(out, cap, build_guard, args, kwargs):
    """``out`` for explain of a run that broke: the graphs a run with resume
    points would have, their guards; no mock."""
    out.breaks = list(cap.breaks.records)
    out.graphs = [gm for gm, _ in cap.recording.segment_graphs]
    out.ops_per_graph = [n for _, n in cap.recording.segment_graphs]
    out.graph_count = len(out.graphs)
    out.guards = cap.recording.refgraph.all_guards()
    _build_guard(out, build_guard, out.guards, len(args), tuple(kwargs))
    return out


def _build_guard(out, build_guard, guards, nargs, kwnames):
    """``out.guard`` and its listing from ``build_guard``, timed."""
    start = time.perf_counter()
    out.guard, out.guard_listing = build_guard(guards, nargs, kwnames)
    out.times["guards"] = time.perf_counter() - start


def _top_code(target):
    """The code object whose frame a break may split: the function itself,
    or a module's ``forward``."""
    fn = target.__func__ if isinstance(target, types.MethodType) else target
    if isinstance(fn, types.FunctionType):
        return fn.__code__
    forward = getattr(type(fn), "forward", None)
    return getattr(forward, "__code__", None)


def _definition_site(target):
    """``(filename, first line)`` of the traced function (a module's
    ``forward``), for what is found wrong after its run: its result, or
    a value it wrote; None where there is no code."""
    code = _top_code(target)
    return (code.co_filename, code.co_firstlineno) if code is not None else None


def _splitter(backend, callees):
    """Builds the split entry at a break (None when the point is unsupported)."""
    from .partial import resume

    def split(cap):
        in_callee = cap.interp.vm.top is not cap.top.frame
        try:
            return resume.split_entry(cap, cap.top.pre, in_callee, backend, callees)
        except Exception:  # noqa: BLE001 - unsupported point: the native entry
            return None

    return split


def roots_of(fn):
    """The objects a traced callable fixes (reached by identity, unguarded):
    the function itself, a bound method's ``self``, a traced module."""
    if isinstance(fn, types.MethodType):
        return ((fn.__self__, "self"), (fn.__func__, fn.__func__.__qualname__))
    if isinstance(fn, types.FunctionType):
        return ((fn, fn.__qualname__),)
    return ((fn, type(fn).__name__),)


def _effect_values(eff):
    yield from eff.operands
    yield from eff.kwargs.values()


def _graph_break_error(record):
    return GraphBreakError(record.kind, record.message, record.filename, record.lineno,
                           record.hint)


@lookup.host_type
class Traced:
    """The callable returned by :func:`trace`.

    A host type: interpreted code that calls one runs it natively; a traced
    function called while another is being captured is inlined instead
    (``CaptureInterpreter.call``), so the caller gets one graph."""

    _pyinterp_constant = True  # a mock may hold one as it is (a resume function)

    def __init__(self, fn, backend="inductor", mode=None, options=None, dynamic=None,
                 fullgraph=False, cache_limit=8):
        from ..codegen import backends

        if not callable(fn):
            raise TypeError("pyinterp.trace expects a callable, got %s" % type(fn).__name__)
        if not isinstance(cache_limit, int) or cache_limit < 1:
            raise ValueError("cache_limit must be a positive int, not %r" % (cache_limit,))
        if dynamic not in (None, True, False):
            raise ValueError("dynamic must be None, True or False, not %r" % (dynamic,))
        self.__dict__["__wrapped__"] = fn
        self._backend = backends.resolve(backend, mode, options, dynamic)
        self._fullgraph = fullgraph
        self._cache_limit = cache_limit
        # What the traced wrappers of resume functions and callees share.
        self._options = {"backend": self._backend, "cache_limit": cache_limit}
        self._entries = Entries(cache_limit)
        # The traced wrappers of callees that partial graphs call (partial/callees.py).
        self._callees = Callees(wrapper_maker(self._options))
        self._warned_limit = False
        # Captures made because a bool an entry's graph assumed differed
        # (values/assumptions.py): past MAX_ASSUMPTION_RECAPTURES, later
        # captures break at such bools instead (a value that keeps changing,
        # such as a loop's test, would fill the cache).
        self._assumption_recaptures = 0
        self._dynamic = dynamic
        # Automatic dynamic: source path -> the dimensions seen changing.
        self._learned = {}
        if mode == "reduce-overhead":
            _warn_reduce_overhead_on_cpu()
        if hasattr(fn, "__name__"):
            functools.update_wrapper(self, fn, updated=())
        _all_traced.add(self)

    # -- the cache ---------------------------------------------------------------
    def cache_entries(self):
        """This callable's cache entries, most recently used first, as
        :class:`.cacheinfo.CacheEntryInfo` (the guard's readable source,
        its checks one per line, hits, failures counted by check)."""
        from .cacheinfo import entry_info

        return [entry_info(entry, _describe_guard, brief_failure, name_parameters)
                for entry in self._entries]

    def compiles_nothing(self):
        """True when a call through this traced callable gains nothing over
        calling the function itself: none of its entries holds a graph or
        runs callees traced, and it has :data:`GRAPHLESS_ENTRIES` of them
        or its cache is full (a helper of Python values, which a native
        entry's frame may call thousands of times: :mod:`.partial.hybrid`
        then calls it directly)."""
        entries = self._entries.snapshot
        for entry in entries:
            if entry.run is not None or (entry.trace is not None and entry.trace.graph_count):
                return False
        return len(entries) >= GRAPHLESS_ENTRIES or self._warned_limit

    def reset(self):
        """Drop every cache entry: the next call captures afresh."""
        self._entries.clear()
        self._learned = {}
        self._warned_limit = False
        self._assumption_recaptures = 0

    # -- calling ---------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        entry = None
        assumed_differently = False
        try:
            entries = self._entries.snapshot
            for index, entry in enumerate(entries):
                try:
                    ok = entry.guard(args, kwargs)
                except Exception:  # noqa: BLE001 - a guard that raises is a miss
                    ok = -2
                if ok is True:
                    entry.hits += 1
                    if index:
                        self._entries.to_front(entry)
                    if entry.native:
                        if entry.run is not None:
                            return entry.run(args, kwargs)
                        return self.__wrapped__(*args, **kwargs)
                    saved = _global_state(entry) if entry.assumes else None
                    try:
                        return entry.mock(args, kwargs)
                    except AssumptionFailed:
                        if saved is None:
                            raise
                        _put_back(saved)  # (the graph ran: it wrote no input)
                        entry.assumption_failures += 1
                        assumed_differently = True
                        continue  # (another entry may assume this call's value)
                    except BaseException as e:  # noqa: B036 - re-raised unless the graph raised
                        if not _graph_raised(entry.mock, e):
                            raise
                    failed, entry = entry, None  # (it runs natively: its own frames)
                    return self._after_graph_failure(failed, args, kwargs)
                entry.failures[ok] = entry.failures.get(ok, 0) + 1
            entry = None
            return self._miss(args, kwargs, entries, assumed_differently)
        except BaseException as e:
            # The user's frames (a hit's graph names the user's line), not
            # pyinterp's; a bare raise adds no entry for this frame.
            from .hit_tracebacks import user_facing_hit

            user_facing_hit(e, entry)
            raise

    def _miss(self, args, kwargs, seen, assumed_differently=False):
        """Every entry of ``seen`` failed (see :class:`.cache.Entries` for
        what happens when threads miss at once); ``assumed_differently``:
        one passed its guard, but a bool its graph assumed differed."""
        what = self._entries.begin_miss(seen)
        if what == "retry":
            return self(*args, **kwargs)
        if what == "full":
            self._limit_reached()
        if what != "capture":
            return self.__wrapped__(*args, **kwargs)
        fn = self.__wrapped__
        entry = None
        if assumed_differently:
            self._assumption_recaptures += 1
        assume = self._fullgraph or self._assumption_recaptures <= MAX_ASSUMPTION_RECAPTURES
        report = logreport.begin(fn, seen, args, kwargs)  # None: logs and run log off
        try:
            trace = capture(fn, args, kwargs, roots_of(fn), self._backend, self._fullgraph,
                            callees=self._callees, dim_policy=self._dim_policy(args, kwargs, seen),
                            assume=assume)
            run = None
            if trace.mock is None and trace.top_callees:
                from .partial import hybrid

                run = hybrid.runner(fn, self._callees, trace.top_steps)
            if config.dump_dir:
                from .dumping import write_entry

                write_entry(fn, trace)
            entry = Entry(trace.guard, trace.mock, trace, run)
            entry.watch([ref for guard in trace.guards for ref in guard.weak_refs()])
        finally:
            self._entries.end_miss(entry)
            if report is not None:
                logreport.end(report, entry, len(self._entries))
        return trace.take_result()

    def _dim_policy(self, args, kwargs, seen):
        """Which dimensions the capture of this miss keeps symbolic
        (:func:`.values.shape_guards.policy`), or None for exact shapes:
        with ``dynamic=None``, the dimensions earlier entries saw change
        when sizes alone failed their guards (automatic dynamic)."""
        if self._dynamic is False:
            return None
        from .values import shape_guards

        if self._dynamic is None:
            for entry in seen:
                if entry.trace is None or entry.retired:
                    continue
                changed = shape_guards.sizes_only_miss(entry.trace.guards, args, kwargs)
                for path, dims in (changed or {}).items():
                    self._learned.setdefault(path, set()).update(dims)
        if self._dynamic or self._learned or shape_guards.marked(args, kwargs):
            return shape_guards.policy(self._dynamic, self._learned)
        return None

    def _after_graph_failure(self, entry, args, kwargs):
        """The compiled graph raised on a hit (an index out of range): the
        mock had done nothing yet (it replays side effects after the graph,
        and the graph wrote no input), so the function runs natively
        instead, as eager would: the side effects before the failing op
        happen, and the exception is eager's own."""
        _restore_torch_state(entry.trace)  # (a graph's no_grad region left open)
        return self.__wrapped__(*args, **kwargs)

    def _limit_reached(self):
        if self._warned_limit:
            return
        self._warned_limit = True
        worst, count = None, 0
        for entry in self._entries:
            for index, n in entry.failures.items():
                if n > count:
                    worst, count = (entry, index), n
        if worst is None:
            which = "no guard failed more than once"
        else:
            entry, index = worst
            which = _describe_guard(entry.trace, index)
        warnings.warn(
            "pyinterp.trace(%s) reached cache_limit=%d; new misses now run natively, "
            "untraced. The guard that failed most often: %s"
            % (getattr(self.__wrapped__, "__qualname__", self.__wrapped__), self._cache_limit,
               which), RecompileLimitWarning, stacklevel=4)

    # -- looking like the original ---------------------------------------------------
    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return functools.partial(self, instance)

    def __getattr__(self, name):
        return getattr(self.__dict__["__wrapped__"], name)

    def __repr__(self):
        return "<pyinterp.trace of %r>" % (self.__wrapped__,)


# Captures a traced callable makes because a bool its graphs assumed
# differed, before later captures break at such bools instead (a value that
# keeps changing, such as a loop's test, would fill the cache; under
# fullgraph a break would raise, so there the cache limit bounds them).
MAX_ASSUMPTION_RECAPTURES = 2

# Entries without a graph after which a traced callable compiles nothing
# (:meth:`Traced.compiles_nothing`).
GRAPHLESS_ENTRIES = 2


def _restore_torch_state(trace):
    """Put torch's global state (grad mode...) back as ``trace``'s guard
    found it on entry."""
    from ..refgraph.state import restore_torch_state, torch_state
    from ..refgraph.guards import StateIs

    for guard in trace.guards:
        if type(guard) is StateIs and guard.source is torch_state:
            restore_torch_state(guard.value)
            break


def _global_state(entry):
    """What the mock of ``entry``, whose graph assumes values, may change
    before its check fails, to be put back (:func:`_put_back`): torch's
    random number generators (CPU, and CUDA's where initialized), Python's
    ``random`` where the mock draws from it again before its graph
    (``random.random()``: 15 us to save, so only then), and the trace for
    torch's state."""
    import random

    import torch

    trace = entry.trace
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
    python = random.getstate() if trace.draws_python_random else None
    return trace, torch.random.get_rng_state(), cuda, python


def _put_back(saved):
    import random

    import torch

    trace, cpu, cuda, python = saved
    _restore_torch_state(trace)
    torch.random.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state_all(cuda)
    if python is not None:
        random.setstate(python)


def _graph_raised(mock, exc):
    from ..codegen.mockgen import graph_raised

    return graph_raised(mock, exc)


def wrapper_maker(options):
    """``wrap(fn)``: ``fn``'s traced wrapper made with ``options`` (``trace``'s
    keyword arguments), or ``fn`` itself if it is one already.  The partial
    graphs (:mod:`.partial`) wrap resume functions and callees through it:
    they are given this callable rather than importing :class:`Traced`."""

    def wrap(fn):
        return fn if isinstance(fn, Traced) else Traced(fn, **options)

    return wrap


def brief_failure(trace, index):
    """The check of ``trace``'s entry that failed (``index``, as its guard
    returned it), in a few words (``x: float32[4, 16] on cpu``)."""
    if 0 <= index < len(trace.guards):
        from .specialized import brief_guard

        return brief_guard(trace.guards[index], trace.param_names)
    return _describe_guard(trace, index)


def _describe_guard(trace, index):
    if index == -1:
        return "the call's arguments (number of positional arguments or keyword names)"
    if index == -2:
        return "a guard raised an exception"
    if index == RETIRED:
        return "an object its guard held by weak reference died"
    return describe_guard(trace.guards[index], trace.param_names)


def signature_of(fn):
    """The signature a call of ``fn`` binds to (a module's is its
    ``forward``'s: its ``__call__`` takes ``*args``); raises ``TypeError``
    or ``ValueError`` where there is none."""
    import inspect

    if not isinstance(fn, (types.FunctionType, types.MethodType)) and callable(
            getattr(type(fn), "forward", None)):
        fn = fn.forward
    return inspect.signature(fn)


def parameter_names(fn):
    """The positional parameter names a traced call's ``args`` map to."""
    try:
        params = signature_of(fn).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for p in params
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


_warned = set()  # the once-per-process warnings already given


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=5)


def _warn_reduce_overhead_on_cpu():
    import torch

    if not torch.cuda.is_available():
        _warn_once("reduce-overhead", "pyinterp.trace(mode='reduce-overhead') has no effect on "
                   "CPU (CUDA graphs need a GPU); tracing as with mode=None")


_all_traced = weakref.WeakSet()
"""Every live :class:`Traced` (for :func:`reset`)."""


def reset() -> None:
    """Clear every cache of pyinterp, like ``torch.compiler.reset()``: every
    traced callable (traced modules, resume functions and callees
    included) drops its entries, so its next call captures afresh."""
    for traced in list(_all_traced):
        traced.reset()


def trace(model: Optional[Callable[..., Any]] = None, *, fullgraph: bool = False,
          dynamic: Optional[bool] = None,
          backend: Union[str, Callable[..., Any]] = "inductor", mode: Optional[str] = None,
          options: Optional[Dict[str, Any]] = None, disable: bool = False,
          cache_limit: int = 8) -> Any:
    """Capture ``model`` into compiled graphs, as ``torch.compile`` does; see
    the README.

    The arguments are ``torch.compile``'s.  ``backend``: ``"inductor"``,
    ``"eager"``, any name in torch's backend registry (``"aot_eager"``,
    ``"cudagraphs"``, one registered with ``torch._dynamo.register_backend``)
    or a callable; ``mode`` (Inductor's modes) and ``options`` (Inductor
    config) are checked now, by Inductor, and raise as ``torch.compile``
    does; ``disable=True`` returns ``model`` untouched.  ``dynamic``:
    ``None`` (automatic: the first call specializes, a miss on sizes alone
    captures again with those dimensions symbolic), ``True`` (every input
    dimension symbolic from the first call) or ``False`` (exact shapes);
    ``torch._dynamo.mark_dynamic``/``mark_static`` on the inputs are
    honoured (docs/trace.md, "Dynamic shapes").
    ``cache_limit`` (``torch.compile``'s ``recompile_limit``): past that
    many entries, new misses run natively.

    Works as ``@trace``, ``@trace(backend=...)`` or ``trace(fn, ...)`` on a
    function, a bound method or an ``nn.Module`` (traced as an ``nn.Module``:
    :mod:`.traced_module`).  (Typed ``Any``: the result is a decorator, or a
    traced callable that keeps a module's attributes.)
    """
    torchversion.require_torch("pyinterp.trace")
    again = functools.partial(trace, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                              mode=mode, options=options, disable=disable,
                              cache_limit=cache_limit)
    if model is None:
        return again
    if disable:
        from ..codegen import backends

        backends.resolve(backend, mode, options, dynamic)  # (bad values raise, as in torch)
        return model
    make = functools.partial(Traced, backend=backend, mode=mode, options=options,
                             dynamic=dynamic, fullgraph=fullgraph, cache_limit=cache_limit)
    from . import ddp_forward

    if ddp_forward.is_ddp(model):  # (its forward natively, its inner module traced)
        return ddp_forward.traced_ddp(model, again, make)
    return _as_module(make(model), again)


def as_traced(fn):
    """The :class:`Traced` behind a traced module (:mod:`.traced_module`),
    else ``fn``."""
    import sys

    module = sys.modules.get(__package__ + ".traced_module")
    if module is not None and isinstance(fn, module.TracedModule):
        return fn._traced
    return fn


def _as_module(traced, remake):
    """An ``nn.Module``'s trace as a module (:mod:`.traced_module`); other
    callables' as they are.  (No torch imported: without it, nothing is a
    module.)"""
    import sys

    torch = sys.modules.get("torch")
    if torch is None or not isinstance(traced.__wrapped__, torch.nn.Module):
        return traced
    from .traced_module import TracedModule

    return TracedModule(traced, remake)
