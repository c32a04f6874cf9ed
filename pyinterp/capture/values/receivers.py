"""Who receives the value an interpreted frame returns or yields.

A Python value that stands for a graph value (a :class:`SymbolicInt`, a
float :mod:`.scalars` tracks) is followed instruction by instruction, so a
frame's ``return`` of one is safe when an instruction of the calling frame
pushes it (``n = helper(x)``, ``a + b`` with a Python ``__add__``, a
property): the caller's instructions are followed in turn.  The same return
may instead reach pyinterp's own code standing in for a builtin, which
consumes it natively: a ``sorted``/``max`` key compared, a ``__len__``'s
result turned into ``len()``'s plain int, a generator's items summed by
``sum``.  There the value is used without the graph knowing it (a later
call with other sizes or other data would get this run's order or count),
so the callers of :func:`receiver` specialize it (a
guarded size) or breaks (a value from tensor data).

The receiver is read from the host stack: between the loop running the
returning frame and the loop running its interpreted caller, every host
frame must be one of the steps below, which hand the callee's value up
unchanged (the calling instruction's handler, the call ladder, the dunder
dispatch of an operator, a subscript or an attribute, a ``for`` loop's
step of a generator).  Anything else in between (a lookaside, a native
callable's Python callback wrapper, a generator driven by ``next()`` or by
C code) answers no: the answer errs towards a guard or a break, never
towards a value used unseen.
"""
import sys

_PACKAGE = __name__.split(".")[0]


def _steps(*groups):
    """``{(module name, function name)}`` of the host functions in ``groups``
    (``(module name under the package, function names...)``)."""
    return frozenset(("%s.%s" % (_PACKAGE, module), name)
                     for module, *functions in groups for name in functions)


# Wrappers around an instruction's handler: capture's variants, the
# location tracker's step, debug mode's stack-effect check.
_TRACKING_WRAPPERS = (
    ("capture.variants", "_run_variant", "_plain", "_run_tracking", "_run_tracking_move"),
    ("capture.values.tracked_ints", "step", "_run", "_generic", "_call"),
    ("interp.vm", "checked", "checked_call"),
)
# Host functions that hand a callee's value up to the instruction that
# pushes it (its handler, capture's wrappers of it, the call ladder and
# its hooks, the dunder dispatch of operators, subscripts and attributes).
_HANDS_UP = _steps(
    *_TRACKING_WRAPPERS,
    ("capture.variants", "call_function_ex"),
    ("capture.values.scalars", "binary_op"),
    ("opcodes.calls", "call", "call_function_ex"),
    ("opcodes.v313", "call_kw"),
    ("opcodes.arith", "binary_op", "binary_subscr"),
    ("opcodes.names", "load_attr", "load_method"),
    ("interp.calls", "call", "diverting", "call_function", "call_object", "_call_special_kw"),
    ("capture.interpreter", "call_function", "call_object", "_module_call", "load_attr",
     "getitem", "binary_op"),
    ("interp.model.dunders", "call_special"),
    ("interp.model.operators", "binary_op", "_binary_protocol", "_call_binary"),
    ("interp.model.containers", "getitem"),
    ("interp.model.attributes", "load_attr", "<lambda>"),
)
# A generator's frame is resumed through these; its items are then pushed
# only by a ``for`` loop's step (``FOR_ITER``, inline in the loop or its
# handler), not by ``next()``, ``sum()`` or C code that iterates it.
_GENERATOR_STEPS = _steps(("interp.generators", "_step", "_generator_driver"))
_FOR_ITER = _steps(
    *_TRACKING_WRAPPERS,
    ("opcodes.control", "for_iter"),
    ("capture.interpreter", "next_value"),
    ("interp.model.containers", "next_value"),
)
_VM = "%s.interp.vm" % _PACKAGE


INSTRUCTION = "instruction"
"""The value is pushed by an instruction of the interpreted caller."""
RESULT = "result"
"""The value is the traced call's own result (the capture's entry)."""
_ENTRY = ("%s.api" % _PACKAGE, "run")


def receivers(frames=1):
    """Who receives the value each of the ``frames`` innermost interpreted
    frames returns or yields (the innermost first, then its caller...):
    :data:`INSTRUCTION`, :data:`RESULT`, or None where pyinterp's own code
    or C code consumes it first, or the host stack is not one this module
    knows.  Fewer kinds than ``frames`` where the host stack ends."""
    kinds = []
    host = sys._getframe(1)
    while host is not None and not _is_vm(host, "loop"):
        host = host.f_back
    while host is not None and len(kinds) < frames:
        kind, host = _receiver(host.f_back)
        kinds.append(kind)
    return kinds


def receiver():
    """Who receives the value the innermost interpreted frame is about to
    return or yield (see :func:`receivers`)."""
    kinds = receivers(1)
    return kinds[0] if kinds else None


def _receiver(host):
    """``(kind, the caller's loop or None)`` for the host frames above one
    interpreted frame's loop, from ``host`` (the frame's own ``resume``) up."""
    if host is not None and _is_vm(host, "resume"):
        host = host.f_back
    allowed = _HANDS_UP
    while host is not None:
        if _is_vm(host, "loop"):
            return INSTRUCTION, host
        key = (host.f_globals.get("__name__"), host.f_code.co_name)
        if key == _ENTRY and allowed is _HANDS_UP:
            return RESULT, None
        if key in _GENERATOR_STEPS:
            allowed = _FOR_ITER  # (past the generator: only a for loop's step)
        elif key not in allowed:
            return None, _next_loop(host)
        host = host.f_back
    return None, None


def _next_loop(host):
    while host is not None and not _is_vm(host, "loop"):
        host = host.f_back
    return host


def _is_vm(host, name):
    return host.f_code.co_name == name and host.f_globals.get("__name__") == _VM
