"""``random.randint``, ``random.randrange``, ``random.getrandbits``: ints
the mock draws again, like ``random.random()``'s floats.

A call of one of the random module's int functions (:data:`.tracked_ints.RANDOM_INTS`,
the module's hidden instance's methods) with plain int arguments, whose
result may only feed what a tracked int can do (tensor arithmetic, int
arithmetic, a comparison that feeds a branch), is a *producer* of
:mod:`.tracked_ints`: the CALL asks for it (``IntTable.request``), and the
capture handler of the callee (:func:`handlers`) then

* calls it for real, once, natively (``randint``'s rejection loop in
  ``random.py`` is not interpreted: its ``getrandbits`` calls are what
  consume the stream, as in eager);
* makes a graph input, a 0-d int64 tensor from the source
  ``Recomputed(fn, as_int64, serial, args)``: the mock calls
  ``random.randint(*args)`` again, in program order among the other
  recomputed values, before the graph (the same stream as eager for the
  same seed, call after call);
* hands the int to :mod:`.tracked_ints` (``IntTable.produced``), which
  tracks it where it goes.

The arguments are constants of the mock: they are guarded (consumed as
values).  A call that was not asked for (its int goes elsewhere: an index,
a ``range``) keeps the old rule: ``getrandbits`` is an ``impure-call``
break, ``randint`` runs ``random.py`` interpreted up to its own
``getrandbits``.

Records (:class:`~..state.Capture`): owns none; writes ``recording.ints``'
request and produced value, and the recorder's inputs.
"""
import random

import torch

from ..consumers import VALUE, consume
from ...interp import calls
from ...refgraph.sources import Recomputed
from .tracked_ints import RANDOM_INTS, TrackedInt


def as_int64(value):
    """A Python int as a 0-d int64 tensor (how the graph holds it)."""
    return torch.tensor(value, dtype=torch.int64)


def _recompute(cap, public, args):
    """Draw ``public(*args)`` now and make its recomputed graph input."""
    table = cap.recording.ints
    table.request = None
    consume(cap, args, VALUE)
    value = public(*args)
    rec = cap.recording.recorder
    source = Recomputed(public, as_int64, len(rec.inputs), tuple(args))
    with torch._C.DisableTorchFunction():  # not an op of the program: not recorded
        example = as_int64(value)
    node = rec.graph.placeholder("%s_%d" % (public.__name__, len(rec.inputs)))
    node.meta["example_value"] = example
    rec.inputs.append((source, example, node))
    table.produced = TrackedInt(value, rec, lambda: node, example.device)
    return value


def _method_handler(public):
    """The capture handler of ``Random.randint`` (a Python function, called
    with the instance first)."""
    fn = public.__func__

    def run(vm, args, kwargs):
        if vm.capture.recording.ints.request is public and not kwargs and args \
                and args[0] is public.__self__:
            return _recompute(vm.capture, public, tuple(args[1:]))
        return calls.call_function(vm, fn, args, kwargs)

    return fn, run


def _builtin_handler(public):
    """The capture handler of ``random.getrandbits`` (a C method)."""

    def run(vm, args, kwargs):
        if vm.capture.recording.ints.request is public and not kwargs:
            return _recompute(vm.capture, public, tuple(args))
        return vm.call_native(public, args, kwargs)

    return public, run


def handlers():
    """``(callee, capture handler)`` for each of :data:`RANDOM_INTS`."""
    return [_method_handler(f) if type(f) is type(random.randint) else _builtin_handler(f)
            for f in RANDOM_INTS]
