"""``max(a, b)`` and ``min(a, b)`` of Python floats the graph computes.

``h / max(h.std().item(), 1e-3)``: two floats, one or both tracked
(:mod:`.scalars`), the other a plain ``float``.  The result is a tracked
float whose node follows Python's definition exactly: ``max(a, b)`` is
``b if b > a else a`` and ``min(a, b)`` is ``b if b < a else a``, built
with ``torch.where`` on the 0-d float64 nodes (so a NaN, and which of
``-0.0`` and ``0.0`` is kept, are decided as Python decides them).

The run returns the float Python returns, as a new object of the same
value (``x * 1.0``, exact for every float, ``-0.0`` and NaN included): the
table tracks floats by identity, and the object Python returns is one of
the operands, which stands for another value or is a constant of the
code.

A plain ``int`` operand stays a break: ``max(s, 1)`` is the int ``1``
when ``1`` wins, so the result's type would depend on the data (``int``
and ``float`` scalars promote tensors differently).  So do keys, defaults,
iterables, more than two arguments, and tracked floats on two devices.

Records (:class:`~..state.Capture`): owns none; reads ``recording``,
``breaks``, ``speculation`` and ``interp``.
"""
import operator

import torch

_PICKS = {max: operator.gt, min: operator.lt}
"""``fn -> test``: ``fn(a, b)`` is ``b if test(b, a) else a``."""


def accepts(cap, fn, args, kwargs):
    """True if :func:`call` models ``fn(*args, **kwargs)``."""
    table = cap.recording.scalars
    return (fn is max or fn is min) and not kwargs and len(args) == 2 \
        and all(type(v) is float for v in args) and any(table.tracks(v) for v in args) \
        and not cap.recording.text.carried(args) and cap.breaks.active \
        and not cap.speculation.depth and not cap.interp.opaque


def call(vm, fn, args, kwargs):
    """``max(a, b)``/``min(a, b)``: the float Python returns, tracked as
    the ``torch.where`` of the operands' nodes."""
    cap = vm.capture
    table = cap.recording.scalars
    a, b = args
    devices = {table.device(v) for v in args if table.tracks(v)}
    if len(devices) > 1:
        cap.break_graph("data-dependent-value", "%s() of Python floats the graph computes on "
                        "different devices" % fn.__name__)
        return fn(a, b)
    value = fn(a, b) * 1.0  # (a new object: see the module docstring)
    rec = cap.recording.recorder
    test = _PICKS[fn]

    def make():
        na, nb = (table.node(v, rec) if table.tracks(v) else v for v in args)
        graph = rec.graph
        return graph.call_function(torch.where, (graph.call_function(test, (nb, na)), nb, na))

    table.add(value, rec, make, devices.pop())
    return value
