"""The interpreter's frame: one activation of a code object."""
import builtins as _builtins_module

from .decode import CACHE, decode
from ..opcodes.signals import NULL


class Frame:
    """The state of one running code object.

    ``fast`` holds CPython's "localsplus": fast locals, then cells, then free
    variables, each slot ``NULL`` while unbound.  ``stack`` is the value stack.
    ``locals`` is the mapping used by ``*_NAME`` opcodes (module and class
    bodies, ``exec``), or None for function frames; these get
    ``locals_dict``, the one dict ``locals()`` returns (and refreshes) for
    the frame, as CPython's ``f_locals``.
    """

    __slots__ = (
        "code", "instructions", "fast", "stack", "globals", "builtins",
        "locals", "pc", "lasti", "kw_names", "func", "back", "retval",
        "locals_dict", "extra",
    )
    # ``extra`` is left unset until the frame is looked at or traced
    # (``frameview.extra_of``): nothing per call for it.

    def __init__(self, code, globals, locals=None, func=None, builtins=None,
                 decoded=None, fast=None):
        if decoded is None:
            decoded = decoded_for(code)
        self.code = code
        self.instructions = decoded.instructions
        self.fast = [NULL] * decoded.nlocalsplus if fast is None else fast
        self.stack = []
        self.globals = globals
        self.builtins = builtins if builtins is not None else builtins_of(globals)
        self.locals = locals
        self.pc = 0
        self.lasti = 0
        self.kw_names = None
        self.func = func
        self.back = None
        self.retval = None
        self.locals_dict = None

    @property
    def lineno(self):
        """The source line of the instruction being executed."""
        return self.instructions[self.lasti].lineno

    def __repr__(self):
        return "<pyinterp Frame %s line %s>" % (self.code.co_qualname, self.lineno)


class _FrameThatMayDieBound(Frame):
    """A frame that may die with values still bound: a generator's (dropped
    while suspended) or one an exception left (a traceback keeps it).  It
    frees its locals first slot first, then its stack bottom first, as
    CPython's frame clear does.  (A list frees its items last first, so
    both are reversed; the slots are then freed in declaration order.)
    Other frames free their locals on return (:func:`release_locals`) and
    do without the finalizer, which costs a Python call per frame."""

    __slots__ = ()

    def __del__(self):
        self.fast.reverse()
        self.stack.reverse()


class _GeneratorFrame(_FrameThatMayDieBound):
    """A generator's frame (until an exception leaves it, which makes it a
    plain :class:`_FrameThatMayDieBound`): as its base, except while it is
    suspended at a ``yield``.  Then only a cycle
    collected with its generator kills it, and the generator's finalizer,
    which runs the frame's ``finally`` blocks, may come after this one: the
    frame must still be intact."""

    __slots__ = ()

    def __del__(self):
        pc = self.pc
        if pc and self.instructions[pc - 1].opname == "YIELD_VALUE":
            return
        _FrameThatMayDieBound.__del__(self)


def may_die_bound(frame):
    """Give ``frame`` the finalizer of :class:`_FrameThatMayDieBound`."""
    frame.__class__ = _FrameThatMayDieBound


def may_die_suspended(frame):
    """Give a generator's ``frame`` the finalizer of :class:`_GeneratorFrame`."""
    frame.__class__ = _GeneratorFrame


def release_locals(frame):
    """Free a finished frame's locals as CPython does: first slot first.

    (Letting the list die would free them last slot first, which changes the
    order in which ``__del__`` methods and weakref callbacks run.)
    """
    fast = frame.fast
    fast.reverse()
    fast.clear()


def decoded_for(code):
    """The cached :class:`~pyinterp.decode.DecodedCode` of ``code``."""
    decoded = CACHE.get(id(code))
    if decoded is None or decoded.ref() is not code:
        decoded = decode(code)
    return decoded


def builtins_of(globals):
    """The builtins namespace (a dict) a frame with these globals uses."""
    b = globals.get("__builtins__", _builtins_module)
    if type(b) is not dict:
        b = getattr(b, "__dict__", _builtins_module.__dict__)
    return b
