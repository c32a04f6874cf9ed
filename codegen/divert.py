"""A code object whose calls pass their callable through a function first.

A native entry runs a function whose capture broke where no split was
possible (:mod:`pyinterp.capture.partial.hybrid`), with its callees still
traced.  Without a PEP 523 hook, the only way to reach those callees from a
frame CPython runs itself is to rewrite the frame's code: :func:`divert_calls`
returns ``code`` where, right before each call, the callable is replaced
by ``divert(callable)`` (the callee's traced wrapper, or the callable
itself).  The call then happens in the function's own frame, so ``super()``,
``locals()`` and ``sys._getframe()`` in the callee's arguments or in a
native callee see that frame, exactly as natively.

Where the callable sits (:mod:`.emit` lists the shapes), ``n`` arguments
on top:

* 3.11/3.12: ``NULL, f, args`` (depth ``n + 1``, counted from the top,
  1-based), with ``KW_NAMES`` (and 3.11's ``PRECALL``) before the call;
* 3.13: ``f, NULL, args`` (depth ``n + 2``); ``CALL_KW`` has the names
  tuple on top (depth ``n + 3``);
* ``CALL_FUNCTION_EX``: ``NULL, f, args[, kwargs]`` (3.11/3.12) or
  ``f, NULL, args[, kwargs]`` (3.13).

A method load puts the *function* in that place and ``self`` beside it
(``LOAD_METHOD``, or ``LOAD_ATTR``/``LOAD_SUPER_ATTR`` with the method
bit), so the rewrite first turns each into the plain attribute load (the
bound method) followed by the ``NULL`` that a plain call has.  The
compiler makes calls of its own whose ``NULL`` place holds something else
(``deco, func; CALL 0`` applies a decorator on 3.11/3.12; a comprehension
is called with its iterator there; a ``with`` block's ``__exit__`` gets
``None``): those are left as they are.  Which calls have their ``NULL``
is known by following the stack through the code (:func:`_null_calls`:
which slots hold a ``NULL``, along every jump and into every exception
handler); a call whose ``NULL`` place is unknown there is not diverted.

The diverting sequence (``c`` the callable, swapped to the top and back
when arguments sit above it) calls ``divert`` on a copy of ``c`` in the
shape :class:`.emit.Emitter` makes, then drops ``c`` for the result::

    c | NULL, divert (3.13: divert, NULL) | COPY 3 | call 1 | SWAP 2; POP_TOP

Line numbers, exception table and every other instruction are kept;
:class:`CannotDivert` is raised for code this module does not handle
(generators and coroutines: their frames are not entered through a call).
"""
import inspect

from bytecode import Instr

from .emit import PY312, PY313, Emitter, assemble, editable

_SUSPENDABLE = (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
                | inspect.CO_ITERABLE_COROUTINE)
_METHOD_LOADS = ("LOAD_METHOD", "LOAD_ATTR", "LOAD_SUPER_ATTR")
# The kinds of stack slot :func:`_null_calls` follows, and a state past a
# return, raise or unconditional jump.
_NULL, _VALUE, _UNKNOWN = "NULL", "value", "?"
_UNREACHED = None


class CannotDivert(Exception):
    """The code cannot be rewritten (see the module docstring)."""


def divert_calls(code, divert):
    """``code`` with each call's callable replaced by ``divert(callable)``
    just before the call (a new code object; ``code`` is unchanged)."""
    if code.co_flags & _SUSPENDABLE:
        raise CannotDivert("a generator or coroutine")
    bc = editable(code)
    plain = []
    for item in bc:
        if isinstance(item, Instr) and item.name in _METHOD_LOADS and _is_method_load(item):
            plain += _as_attribute_load(item)
        else:
            plain.append(item)
    diverted = _null_calls(plain)  # index -> the callable's depth
    out = []
    for index, item in enumerate(plain):
        depth = diverted.get(index)
        if depth is not None:
            at = len(out)
            if out and isinstance(out[-1], Instr) and out[-1].name == "KW_NAMES":
                at -= 1  # (the names are for the user's call, not for divert)
            out[at:at] = _diverting(depth, divert, item.location)
        out.append(item)
    bc[:] = out
    return assemble(bc)


def _is_method_load(instr):
    if instr.name == "LOAD_METHOD":
        return True
    arg = instr.arg
    return PY312 and isinstance(arg, tuple) and bool(arg[0])


def _as_attribute_load(instr):
    """A method load as an attribute load and the plain call's ``NULL``."""
    loc = instr.location
    if instr.name == "LOAD_METHOD":
        plain = Instr("LOAD_ATTR", instr.arg, location=loc)
    else:
        plain = Instr(instr.name, (False,) + tuple(instr.arg[1:]), location=loc)
    if PY313:
        return [plain, Instr("PUSH_NULL", location=loc)]
    return [plain, Instr("PUSH_NULL", location=loc), Instr("SWAP", 2, location=loc)]


def _callable_depth(instr):
    """How deep below the top the callable of ``instr`` is (1: the top),
    or None when ``instr`` does not call.  On 3.11 the place to divert is
    before ``PRECALL``."""
    name = instr.name
    if name == "CALL_FUNCTION_EX":
        return (3 if PY313 else 2) + (instr.arg & 1)
    if name == ("CALL" if PY312 else "PRECALL"):
        return instr.arg + (2 if PY313 else 1)
    if name == "CALL_KW":
        return instr.arg + 3
    return None


def _null_calls(items):
    """``{index: depth of the callable}`` for the calls in ``items``
    (instructions, labels, ``TryBegin``...) whose ``NULL`` place surely
    holds a ``NULL``.  The stack is
    followed as a list of slot kinds (``NULL``, value, unknown); a label
    takes the state of the jumps to it, a handler the unknown slots of its
    ``TryBegin``'s depth.  A ``NULL`` that a later jump to a label already
    passed contradicts (a loop whose back edge differs) makes the whole
    answer empty; calls are only ever diverted on a ``NULL``, so a value
    turning unknown there changes nothing."""
    labels = _Labels()
    state, out = [], {}
    for index, item in enumerate(items):
        kind = type(item).__name__
        if kind == "Label":
            state = labels.enter(item, state)
        elif kind == "TryBegin":
            if type(item.stack_depth) is not int:
                return {}
            labels.jump(item.target, [_UNKNOWN] * (
                item.stack_depth + (1 if item.push_lasti else 0) + 1))
        elif kind == "Instr" and state is not _UNREACHED:
            depth = _callable_depth(item)
            if depth is not None:
                null_at = depth + (-1 if PY313 else 1)
                if len(state) >= null_at and state[-null_at] is _NULL:
                    out[index] = depth
            if item.has_jump():
                labels.jump(item.arg, _after(item, state, True))
            state = _UNREACHED if item.is_final() else _after(item, state, False)
    return out if labels.consistent else {}


class _Labels:
    """The stack on entry to each label: the merge of every way in."""

    def __init__(self):
        self.slots = {}  # id(label) -> (label, slots)
        self.passed = set()
        self.consistent = True

    def jump(self, label, state):
        known = self.slots.get(id(label))
        if known is None:
            self.slots[id(label)] = (label, state)
            self.consistent &= id(label) not in self.passed
            return
        merged = self._merged(known[1], state)
        if id(label) in self.passed and any(
                a is _NULL and b is not _NULL for a, b in zip(known[1], merged)):
            self.consistent = False  # (a call after the label was diverted on that NULL)
        self.slots[id(label)] = (label, merged)

    def enter(self, label, state):
        known = self.slots.get(id(label))
        self.passed.add(id(label))
        if known is None:
            if state is not _UNREACHED:
                self.slots[id(label)] = (label, list(state))
            return state
        if state is _UNREACHED:
            return list(known[1])
        merged = self._merged(known[1], state)
        self.slots[id(label)] = (label, merged)
        return list(merged)

    def _merged(self, a, b):
        if len(a) != len(b):
            self.consistent = False
            return a
        return [x if x == y else _UNKNOWN for x, y in zip(a, b)]


def _after(instr, state, jump):
    """The slots after ``instr`` (along its jump when ``jump``)."""
    name, state = instr.name, list(state)
    if name == "SWAP":
        state[-1], state[-instr.arg] = state[-instr.arg], state[-1]
        return state
    if name == "COPY":
        return state + [state[-instr.arg]]
    if name == "PUSH_NULL":
        return state + [_NULL]
    if name == "LOAD_GLOBAL" and isinstance(instr.arg, tuple) and instr.arg[0]:
        return state + ([_VALUE, _NULL] if PY313 else [_NULL, _VALUE])
    pre, post = instr.pre_and_post_stack_effect(jump)
    pops, pushes = -min(pre, 0), post + max(pre, 0)
    if pops > len(state):
        raise CannotDivert("the stack of %s is not followed" % name)
    return state[:len(state) - pops] + [_VALUE] * pushes


def _diverting(depth, divert, loc):
    """The instructions that replace the callable at ``depth`` by
    ``divert(callable)``: the call ``divert(copy of the callable)`` is made
    above it (:meth:`.emit.Emitter.call` knows each version's shape), and
    its result takes the callable's place."""
    e = Emitter()
    if depth > 1:
        e.emit("SWAP", depth)  # (the callable on top)
    with e.callable():
        e.load_const(divert)
    e.emit("COPY", 3)
    e.call(1)
    e.emit("SWAP", 2)
    e.pop_top()
    if depth > 1:
        e.emit("SWAP", depth)
    for instr in e.instructions:
        instr.location = loc
    return e.instructions
