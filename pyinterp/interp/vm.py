"""The run loop: execute a frame's instructions until it returns or yields.

The loop is deliberately small.  Each instruction carries its handler
(``ins.fn``, bound at decode time), so dispatch is one attribute load and one
call.  A handler returns None (next instruction), an ``int`` (jump to that
index) or a :class:`~pyinterp.opcodes.signals.Signal`.  User exceptions are
ordinary Python exceptions raised by handlers; the loop unwinds them through
the exception table only when one is actually raised, so the per-instruction
path has no exception bookkeeping at all.
"""
import dis
import sys

from .model import attributes, containers, dunders, operators, text
from . import calls, excstate, generators, importing
from . import steps as _steps
from . import tracebacks
from .tracebacks import LOOP_CODES, TracebackType, mark_arrival
from .model import lookup as lookup_module
from ..errors import PyinterpInternal, StackEffectError
from .decode import (SUSPENDABLE_FLAGS, INLINE_JUMP, INLINE_LOAD_CONST, INLINE_LOAD_FAST,
                     INLINE_NOTHING, INLINE_POP_TOP, INLINE_STORE_FAST, INLINE_FOR_ITER)
from ..opcodes.fastpath import NATIVE_ITERATORS
from .frame import decoded_for, may_die_bound, release_locals
from ..opcodes.signals import NULL
from .hostfiles import HOST_DIRS as _HOST_DIRS


def _release_host_frames(exc):
    """Clear the finished host frames an exception passed through.

    CPython pops an instruction's operands before the exception leaves it,
    so a temporary (``C() + 0`` raising ``TypeError``) dies at once even if
    the traceback is kept.  Here the handler and the data-model helpers it
    called held those operands in their locals, and the traceback kept
    those frames alive: ``__del__`` ran late.  Frames of pyinterp's own
    code that already finished are cleared (their code and line stay in the
    traceback); the frame catching the exception is still running and is
    left alone, and so are generator frames (clearing a suspended one
    would finalize its generator).  Run loops are kept too: each holds an
    interpreted frame, whose locals a CPython traceback keeps alive.

    Only the entries above the next run loop are new: the exception left
    that loop through its own ``_unwind``, which released what lies below.
    (Walking the whole traceback at every level was quadratic in the depth
    of an exception's way out of recursive code.)
    """
    tb = exc.__traceback__
    head = True
    while tb is not None:
        frame = tb.tb_frame
        code = frame.f_code
        if code is _LOOP_CODE:
            if not head:
                break
        elif code.co_filename.startswith(_HOST_DIRS) and not code.co_flags & SUSPENDABLE_FLAGS:
            try:
                frame.clear()
            except RuntimeError:  # still executing
                pass
        head = False
        tb = tb.tb_next

# dis.stack_effect() describes the compiler's accounting, which differs from
# what some instructions do at run time.  (opname -> fn(ins, jumped) giving
# the real effect.)  Each entry holds on every supported version, so one
# table serves them all.
_STACK_EFFECT_OVERRIDES = {
    # 3.11: PRECALL pops nothing; CALL pops the callable, NULL/self and
    # arguments (dis charges -arg and -1).  3.12+ dis agrees with CALL.
    "PRECALL": lambda ins, jumped: 0,
    "CALL": lambda ins, jumped: -(ins.arg + 1),
    # 3.12+: dis counts the exit jumps as landing on END_FOR/END_SEND with
    # their operands still pushed (+1 / 0); the decoded exits are past those
    # instructions, so an exhausted FOR_ITER pops the iterator and a
    # finished SEND leaves only the return value (3.11 dis agrees).
    "FOR_ITER": lambda ins, jumped: -1 if jumped else 1,
    "SEND": lambda ins, jumped: -1 if jumped else 0,
}


class Interpreter:
    """Executes frames.  One instance serves one top-level ``interpret`` call.

    ``top`` is the innermost frame being executed (for ``sys._getframe``,
    ``locals()`` and friends); ``depth`` counts nested interpreted calls, to
    raise ``RecursionError`` well before the host's own stack runs out.
    """

    variant = None
    """Where a frame's instructions come from when not the decoded ones: a
    function of the code object returning them.  Debug mode sets it to
    :func:`checked_instructions`; a subclass may define it as a method
    (capture variants, see ``pyinterp.capture.interpreter``), which then
    honours ``debug`` itself (:func:`checked_copy`)."""

    traceback_views = None
    """The program's views of host tracebacks (``tracebacks.traceback_view``)."""

    regions_run = 0
    """How many times a handler ran a whole region of instructions in place
    of one (capture's merged branches and loops): a debug-mode check then
    skips that handler's own stack effect, since the region ends at its
    join with the stack the join expects, which no single instruction's
    effect predicts (each instruction inside the region was checked)."""

    def __init__(self, debug=False):
        self.top = None
        self.depth = 0
        self.debug = debug
        if debug and self.variant is None:
            self.variant = checked_instructions
        self.recursion_limit = sys.getrecursionlimit()
        self.rethrown = None

    # -- running frames -------------------------------------------------
    def run_frame(self, frame):
        """Run a non-generator frame to completion and return its value."""
        self.resume(frame, None)
        release_locals(frame)
        return frame.retval

    def resume(self, frame, thrown=None):
        """Run ``frame`` from ``frame.pc`` until it returns, yields or signals.

        If ``thrown`` is an exception, it is raised at the instruction before
        ``frame.pc`` (a suspended ``YIELD_VALUE``), as ``generator.throw``
        does.  Returns the signal; an exception that no handler in this frame
        catches propagates to the caller.

        Entering makes ``frame`` the innermost one (``top``) and counts it in
        ``depth``; the loop undoes both on every way out.
        """
        depth = self.depth = self.depth + 1
        if depth > self.recursion_limit:
            self.depth -= 1
            raise RecursionError("maximum recursion depth exceeded")
        frame.back = self.top
        self.top = frame
        try:
            return self.loop(frame, thrown)
        finally:
            thrown = None  # the traceback holds this frame: no cycle through it

    def reraise_in_frame(self, frame, exc, lasti=None):
        """``RERAISE`` or a bare ``raise``: re-raise ``exc`` unchained; when
        this frame's loop catches it again, its traceback is restored, and
        the frame's current instruction is ``lasti`` (an index) if given
        (``RERAISE``'s restored ``f_lasti``)."""
        self.rethrown = (exc, exc.__traceback__, frame, lasti)
        try:
            excstate.reraise(exc)
        finally:
            exc = None

    def _leave(self, frame):
        self.top = frame.back
        self.depth -= 1

    def loop(self, frame, exc):
        """Run ``frame`` from ``frame.pc`` until it returns or yields.

        The frame runs its decoded instructions, or the copy ``variant``
        gives: in debug mode the *checked* copy, where every handler is
        called (nothing inline) and followed by a stack-effect assertion.
        """
        instructions = frame.instructions
        if self.variant is not None:
            instructions = self.variant(frame.code)
        pc = frame.pc
        fast = frame.fast
        stack = frame.stack
        push = stack.append
        pop = stack.pop
        while True:
            if exc is not None:
                try:
                    pc = self._unwind(frame, exc, pc - 1)
                finally:
                    exc = None  # (as in resume: no reference cycle)
            try:
                while True:
                    ins = instructions[pc]
                    pc += 1
                    # The commonest instructions run inline (their handlers,
                    # which debug mode always calls, define them).
                    inline = ins.inline
                    # (No local names a pushed value: the loop must not keep
                    # a value alive once the stack lets go of it, or
                    # __del__ would run later than in CPython.)
                    if inline:
                        if inline is INLINE_LOAD_FAST:
                            push(fast[ins.argval])
                            if stack[-1] is not NULL:
                                continue
                            pop()  # unbound: the handler raises
                        elif inline is INLINE_LOAD_CONST:
                            push(ins.argval)
                            continue
                        elif inline is INLINE_STORE_FAST:
                            fast[ins.argval] = pop()
                            continue
                        elif inline is INLINE_POP_TOP:
                            pop()
                            continue
                        elif inline is INLINE_FOR_ITER:
                            if type(stack[-1]) in NATIVE_ITERATORS:
                                push(next(stack[-1], NULL))
                                if stack[-1] is NULL:
                                    pop()
                                    pop()
                                    pc = ins.target
                                continue
                        elif inline is INLINE_JUMP:
                            pc = ins.target
                            continue
                        elif inline is INLINE_NOTHING:
                            continue
                    result = ins.fn(self, frame, ins)
                    if result is not None:
                        if result.__class__ is int:
                            pc = result
                        else:
                            frame.pc = pc
                            self.top = frame.back
                            self.depth -= 1
                            return result
            except PyinterpInternal:
                frame.lasti = pc - 1
                self._leave(frame)
                raise
            except BaseException as e:
                exc = e

    def _unwind(self, frame, exc, index):
        """Find the handler for an exception raised by instruction ``index``.

        Mirrors CPython: truncate the stack to the handler's depth, push the
        raising instruction's offset if the entry says ``lasti``, push the
        exception, and continue at the handler.  With no handler the exception
        leaves the frame.
        """
        _release_host_frames(exc)
        rethrown = self.rethrown
        lasti = index
        if rethrown is not None:
            self.rethrown = None
            if rethrown[0] is exc and rethrown[2] is frame:
                # A re-raise inside this frame adds no traceback entry in
                # CPython (``except*`` relies on that); drop the host's.
                exc.__traceback__ = rethrown[1]
                if rethrown[3] is not None:
                    lasti = rethrown[3]
            else:
                mark_arrival(exc, index, sys._getframe(1))
            rethrown = None  # it holds exc: no cycle through the traceback
        else:
            # The traceback entry CPython adds for this frame (tracebacks.py):
            # the loop's own entry, with the instruction in tb_lasti.
            tb = exc.__traceback__
            if tb is not None and tb.tb_frame.f_code is _LOOP_CODE:
                exc.__traceback__ = TracebackType(tb.tb_next, tb.tb_frame, -2 - index,
                                                  tb.tb_lineno)
            else:
                mark_arrival(exc, index, sys._getframe(1))
            tb = None
        ins = frame.instructions[index]
        frame.lasti = lasti
        if ins.exc_target is None:
            frame.pc = lasti + 1  # (where a finished frame stands: tracebacks.py)
            # CPython pops what is left on the stack of a frame that an
            # exception leaves: its values die now, even if the traceback
            # keeps the frame itself alive.
            del frame.stack[:]
            may_die_bound(frame)
            self._leave(frame)
            try:
                excstate.reraise(exc)
            finally:
                exc = None
        stack = frame.stack
        del stack[ins.exc_depth:]
        if ins.exc_lasti:
            stack.append(ins.offset // 2)
        stack.append(exc)
        return ins.exc_target

    # -- the data model, as handlers see it ------------------------------
    # Handlers reach every protocol through ``vm`` (they never import
    # pyinterp), so these class attributes are the interface of the opcode
    # package.  Each is a plain function taking ``vm`` first.
    call_special = dunders.call_special
    bind = dunders.bind
    lookup = staticmethod(lookup_module.lookup)
    MISSING = lookup_module.MISSING
    binary_op = operators.binary_op
    unary_op = operators.unary_op
    compare = operators.compare
    truth = operators.truth
    length = operators.length
    load_attr = attributes.load_attr
    store_attr = attributes.store_attr
    delete_attr = attributes.delete_attr
    plain_method = attributes.plain_method
    get_iter = containers.get_iter
    next_value = containers.next_value
    iterate = containers.iterate
    unpack = containers.unpack
    getitem = containers.getitem
    setitem = containers.setitem
    delitem = containers.delitem
    contains = containers.contains
    to_str = text.to_str
    to_repr = text.to_repr
    to_ascii = text.to_ascii
    format = text.format_value
    function_str = staticmethod(text.function_str)
    import_from = importing.import_from
    import_star = importing.import_star
    get_handled = staticmethod(excstate.current_item_value)
    set_handled = staticmethod(excstate.set_handled)
    reraise = staticmethod(excstate.reraise)
    current_exception = staticmethod(sys.exception)
    traceback_view = tracebacks.traceback_view
    traceback_attribute = tracebacks.traceback_attribute
    async_gen_wrap = staticmethod(generators.AsyncGenWrapped)

    # -- calls: the one ladder and its hooks (calls.py) -------------------
    # A subclass overrides hooks, never ``call``: ``__init_subclass__``
    # gives it its own copy of the ladder with its hooks bound in.
    call = calls.call
    divert_call = None
    call_function = calls.call_function
    call_native = calls.call_native
    construct = calls.construct
    call_object = calls.call_object
    interception_mode = calls.PLAIN

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "call" in cls.__dict__:
            raise TypeError("%s overrides the call ladder; override its hooks instead"
                            % cls.__name__)
        cls.call = calls.ladder(cls)

    def missing_attribute(self, obj, name):
        """``hasattr``/``getattr`` with a default found no attribute ``name``
        on ``obj`` (a hook: capture guards the absence; nothing here)."""

    def isinstance(self, obj, cls):
        """``isinstance`` for match patterns (``__instancecheck__`` runs natively)."""
        return isinstance(obj, cls)

def checked_instructions(code):
    """``code``'s instructions with every handler wrapped in a stack check."""
    decoded = decoded_for(code)
    if decoded.checked is None:
        decoded.checked = _checked(decoded.instructions)
    return decoded.checked


_checked_copies = {}
"""id(instruction tuple) -> (that tuple, its checked copy), for the copies
that are not a code object's decoded instructions (capture variants); the
tuples are cached for good by their makers, so their ids stay theirs."""


def checked_copy(instructions):
    """A checked copy of any instruction tuple (see :func:`checked_instructions`),
    made once per tuple."""
    entry = _checked_copies.get(id(instructions))
    if entry is None or entry[0] is not instructions:
        entry = _checked_copies[id(instructions)] = (instructions, _checked(instructions))
    return entry[1]


def _checked(instructions):
    checked = []
    for ins in instructions:
        copy = ins.copy()
        copy.inline = 0
        copy.fn = _checking(ins.fn)
        checked.append(copy)
    return tuple(checked)


def _checking(handler):
    def checked(vm, frame, ins):
        recorder = _steps.ACTIVE.recorder
        if recorder is not None:  # pyinterp.steps: note the step around the check
            return recorder.run(lambda: checked_call(vm, frame, ins), vm, frame, ins)
        return checked_call(vm, frame, ins)

    def checked_call(vm, frame, ins):
        before = len(frame.stack)
        regions = vm.regions_run
        result = handler(vm, frame, ins)
        if (result is None or result.__class__ is int) and vm.regions_run == regions:
            jumped = result is not None and result != ins.index + 1
            _check_stack_effect(ins, jumped, len(frame.stack) - before)
        return result

    checked.__doc__ = handler.__doc__
    return checked


def _check_stack_effect(ins, jumped, actual):
    override = _STACK_EFFECT_OVERRIDES.get(ins.opname)
    if override is not None:
        expected = override(ins, jumped)
    else:
        arg = ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None
        expected = dis.stack_effect(ins.opcode, arg, jump=jumped)
    if expected != actual:
        raise StackEffectError(
            "stack effect of %s (arg %r, jumped=%s): expected %d, got %d"
            % (ins.opname, ins.arg, jumped, expected, actual))


_LOOP_CODE = Interpreter.loop.__code__
LOOP_CODES.add(_LOOP_CODE)
