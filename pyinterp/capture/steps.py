"""What capture recorded at each step of ``pyinterp.steps(..., capture=True)``.

Registers, with the step recorder (:mod:`pyinterp.interp.steps`), a probe
that compares the capture's record before and after each instruction: the
guards the RefGraph added (``read``: the path and the guard), the writes it
logged (``write``) and the FX nodes the graph gained (``fx``); and a
formatter that shows a tensor by its type, shape and dtype without running
a torch function (which the recording mode would record).
"""
import itertools

import attrs
import torch

from .. import config
from ..interp import steps as _steps


class CaptureProbe:
    """The probe (see :data:`pyinterp.interp.steps.PROBES`)."""

    def snapshot(self, vm, frame):
        cap = getattr(vm, "capture", None)
        if cap is None:
            return None
        rg = cap.recording.refgraph
        rec = cap.recording.recorder
        return (len(rg._classes), len(rg.guards), len(rg.effects), rec, len(rec.graph.nodes))

    def changes(self, vm, frame, snap):
        rg = vm.capture.recording.refgraph
        rec = vm.capture.recording.recorder
        classes, guards, effects, old_rec, nodes = snap
        out = []
        for guard in itertools.islice(rg._classes.values(), classes, None):
            out.append("read %s" % describe_guard(guard))
        for guard in itertools.islice(rg.guards.values(), guards, None):
            out.append("read %s" % describe_guard(guard))
        for effect in rg.effects[effects:]:
            out.append("write %s" % describe_effect(effect))
        start = nodes if rec is old_rec else 0
        for node in itertools.islice(rec.graph.nodes, start, None):
            out.append("fx %s" % describe_node(node))
        return out


def describe_guard(guard):
    """``source: Kind(detail)``, e.g. ``self.scale: ValueEq(value=0.5)``."""
    detail = []
    for field in attrs.fields(type(guard)):
        if field.name in ("source", "site"):
            continue
        detail.append("%s=%s" % (field.name, _field(getattr(guard, field.name))))
    text = "%s: %s(%s)" % (guard.source, type(guard).__name__, ", ".join(detail))
    return text if len(text) <= 140 else text[:137] + "..."


def _field(value):
    if isinstance(value, type):
        return value.__qualname__
    if isinstance(value, (torch.dtype, torch.device)):
        return str(value).replace("torch.", "")
    return _short(value, 24)


def describe_effect(effect):
    """``setattr self.count``, ``setitem cfg['k']``, ``call log.append(...)``."""
    target, name = effect.target, effect.name
    if effect.kind in ("setattr", "delattr"):
        return "%s %s.%s" % (effect.kind, target, name)
    if effect.kind in ("setitem", "delitem"):
        return "%s %s[%s]" % (effect.kind, target, _short(name, 24))
    args = ", ".join(_short(v, 24) for v in effect.operands)
    if target is None:  # a deferred call of a function (by the function it ran in)
        if type(name) is tuple and name:
            name = name[-1]
        return "%s %s(%s)" % (effect.kind, _short(name, 24), args)
    return "%s %s.%s(%s)" % (effect.kind, target, name, args)


def describe_node(node):
    """``name = op target(args)``, e.g. ``relu = torch.relu(linear)``."""
    if node.op == "placeholder":
        return "%s = input" % node.name
    if node.op == "output":
        return "output"
    target = node.target
    if node.op == "call_method":
        return "%s = %s.%s(%s)" % (node.name, _arg(node.args[0]), target,
                                   ", ".join(_arg(a) for a in node.args[1:]))
    if node.op == "get_attr":
        return "%s = self.%s" % (node.name, target)
    name = target if isinstance(target, str) else (
        getattr(target, "__module__", "") and "%s.%s" % (
            getattr(target, "__module__", "").replace("torch._C._nn", "torch.nn.functional")
            .replace("torch._C._VariableFunctions", "torch"), getattr(target, "__name__", target))
        or getattr(target, "__name__", str(target)))
    args = ", ".join(_arg(a) for a in node.args)
    return "%s = %s(%s)" % (node.name, name, args)


def _arg(value):
    if isinstance(value, torch.fx.Node):
        return value.name
    return _short(value)


def _short(value, width=40):
    text = _steps._short(value, 1)
    return text if len(text) <= width else text[:width - 3] + "..."


def tensor_repr(value):
    """A tensor's short repr: ``Tensor(2x8 float32)``; None for other values."""
    if not isinstance(value, torch.Tensor):
        return None
    with torch._C.DisableTorchFunction():
        shape = "x".join(str(n) for n in value.shape) or "scalar"
        dtype = str(value.dtype).replace("torch.", "")
    return "%s(%s %s)" % (type(value).__name__, shape, dtype)


def capture_steps(recorder, fn, args, kwargs):
    """Run the first (capturing) call of ``pyinterp.trace(fn)`` in debug
    mode, with ``recorder`` recording its steps; returns its result."""
    from .traced import trace

    traced = trace(fn, backend="eager")
    saved = config.debug_capture
    config.debug_capture = True
    try:
        with _steps.recording(recorder):
            return traced(*args, **kwargs)
    finally:
        config.debug_capture = saved


if not any(isinstance(p, CaptureProbe) for p in _steps.PROBES):
    _steps.PROBES.append(CaptureProbe())
    _steps.VALUE_FORMATTERS.append(tensor_repr)
