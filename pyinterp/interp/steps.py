"""Recording a run instruction by instruction (``pyinterp.steps``).

Built on debug mode's checked copies of the instructions
(:func:`.vm.checked_instructions`): in debug mode every instruction calls
its handler (nothing runs inline), through a wrapper that checks its stack
effect.  While a :class:`StepRecorder` is active on the thread
(:func:`recording`), that wrapper also asks it to note the instruction, the
value stack before and after and, through the registered *probes*, what
else the instruction recorded (capture registers one:
``pyinterp.capture.steps``).  Outside debug mode nothing here runs: the run
loop has no hook of its own.

A step's stack is a tuple of short reprs (bottom first; a first entry
``"...N more"`` stands for the N values below the ones shown).  Values are
shown without running the program's code: an object whose class defines
``__repr__`` in Python shows as ``<Class object>`` (a repr with side
effects would change the run being watched).
"""
import dis
import linecache
import re
import threading
import types

from ..opcodes.signals import NULL


class Step:
    """One executed instruction (see ``pyinterp.steps``)."""

    __slots__ = ("code", "filename", "offset", "line", "source", "opname", "argrepr",
                 "depth", "stack_before", "stack_after", "records", "raised")

    def __init__(self, **fields):
        for name in self.__slots__:
            setattr(self, name, fields.get(name))

    def __repr__(self):
        return "<Step %s+%d %s %s depth=%d>" % (self.code, self.offset, self.opname,
                                              self.argrepr, self.depth)


class _Active(threading.local):
    recorder = None


ACTIVE = _Active()
"""The thread's recording recorder, or None (read by debug mode's wrapper)."""

PROBES = []
"""Extra recorders of what an instruction did (capture's, registered by
``pyinterp.capture.steps``): objects with ``snapshot(vm, frame)`` (None
when the probe has nothing to say about this interpreter) and
``changes(vm, frame, snapshot)`` returning a sequence of short strings (what
changed since the snapshot; a step whose instruction runs callees' steps is
asked up to their first step, and again from the end of their last)."""

VALUE_FORMATTERS = []
"""Functions ``value -> str or None`` tried before the generic short repr
(capture registers one for tensors, which shows no data and runs no torch
function)."""


class StepRecorder:
    """Collects :class:`Step` records; ``max_stack`` bounds each stack tuple,
    ``width`` each repr."""

    def __init__(self, max_stack=6, width=40):
        self.steps = []
        self.max_stack = max_stack
        self.width = width
        self._base = None
        self._active = []  # [step, vm, frame, [(probe, snapshot)]] of the steps under way
        self._argreprs = {}

    # -- called by debug mode's wrapper (vm._checking) ----------------------
    def run(self, call, vm, frame, ins):
        """Run ``call()`` (the checked handler) as one recorded step."""
        code = frame.code
        if self._base is None:
            self._base = vm.depth
        line = ins.line if ins.line is not None else ins.lineno
        step = Step(records=(), code=code.co_qualname, filename=code.co_filename, offset=ins.offset,
                    line=line, opname=ins.opname, argrepr=self._argrepr(code, ins.offset),
                    depth=vm.depth - self._base,
                    source=linecache.getline(code.co_filename, line).strip() if line else "",
                    stack_before=self.stack(frame.stack))
        self.steps.append(step)  # (before any step this one's handler runs)
        active = self._active
        if active:  # what the caller's step recorded so far is the caller's
            _collect(active[-1], vm)
        entry = [step, vm, frame, [(p, p.snapshot(vm, frame)) for p in PROBES]]
        active.append(entry)
        try:
            return call()
        except BaseException as e:
            step.raised = _exception_text(e)
            raise
        finally:
            step.stack_after = self.stack(frame.stack)
            _collect(entry, vm)
            active.pop()
            if active:  # the caller's step records from here on
                caller = active[-1]
                caller[3] = [(p, p.snapshot(caller[1], caller[2])) for p in PROBES]

    # -- reprs ----------------------------------------------------------------
    def stack(self, values):
        shown = values[-self.max_stack:] if self.max_stack else values
        out = tuple(self.short(v) for v in shown)
        hidden = len(values) - len(shown)
        return ("...%d more" % hidden,) + out if hidden else out

    def short(self, value):
        """A short repr of ``value`` that runs none of the program's code."""
        limit = self.width
        text = _short(value, 0)
        return text if len(text) <= limit else text[:limit - 3] + "..."

    def _argrepr(self, code, offset):
        table = self._argreprs.get(code)
        if table is None:
            table = self._argreprs[code] = {i.offset: i.argrepr
                                            for i in dis.get_instructions(code)}
        return table.get(offset, "")


_ADDRESS = re.compile(r" (object )?at 0x[0-9a-fA-F]+")
"""(``<function f at 0x...>`` shows as ``<function f>``)"""
_CONTAINERS = {list: "[%s]", tuple: "(%s)", set: "{%s}", frozenset: "frozenset({%s})"}


def _short(value, depth):
    if value is NULL:
        return "NULL"
    for fmt in VALUE_FORMATTERS:
        text = fmt(value)
        if text is not None:
            return text
    tp = type(value)
    if tp in _CONTAINERS or tp is dict:
        if depth >= 2:
            return "%s(...)" % tp.__name__
        if tp is dict:
            items = list(value.items())
            parts = ["%s: %s" % (_short(k, depth + 1), _short(v, depth + 1))
                     for k, v in items[:4]]
        else:
            items = list(value)
            parts = [_short(v, depth + 1) for v in items[:4]]
        if len(items) > 4:
            parts.append("...")
        if tp is tuple and len(items) == 1:
            return "(%s,)" % parts[0]
        return ("{%s}" if tp is dict else _CONTAINERS[tp]) % ", ".join(parts)
    if tp is types.ModuleType:
        return "<module %s>" % value.__name__
    if isinstance(tp.__repr__, types.FunctionType) or isinstance(
            getattr(tp, "__repr__", None), (types.MethodType, property)):
        return "<%s object>" % tp.__name__
    try:
        return _ADDRESS.sub("", repr(value))
    except Exception:  # noqa: BLE001 - a broken C repr: show the type
        return "<%s object>" % tp.__name__


def _collect(entry, vm):
    step, vm, frame, snaps = entry
    records = [r for probe, snap in snaps if snap is not None
               for r in probe.changes(vm, frame, snap)]
    if records:
        step.records += tuple(records)


def _exception_text(exc):
    tp = type(exc)
    if isinstance(tp.__str__, types.FunctionType):
        return tp.__qualname__
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001
        text = ""
    return "%s: %s" % (tp.__qualname__, text) if text else tp.__qualname__


def recording(recorder):
    """Context manager: ``recorder`` records the debug-mode steps of this thread."""
    return _Recording(recorder)


class _Recording:
    def __init__(self, recorder):
        self.recorder = recorder

    def __enter__(self):
        self.previous = ACTIVE.recorder
        ACTIVE.recorder = self.recorder
        return self.recorder

    def __exit__(self, *exc):
        ACTIVE.recorder = self.previous
