"""The public entry point ``pyinterp.interpret``."""
import functools
from typing import Callable, ParamSpec, TypeVar

from .interp import lookasides  # noqa: F401  (registers the lookasides)
from .interp.model import lookup
from .interp import recursion, tracing, warnbridge
from .interp.tracebacks import user_facing
from .interp.vm import Interpreter


@lookup.host_type
class _Interpreted:
    """The callable returned by :func:`interpret`.

    A host type: when interpreted code calls one, the call runs natively,
    starting a nested interpreter (rather than interpreting pyinterp).
    """

    def __init__(self, fn, debug):
        self.__wrapped__ = fn
        self.debug = debug
        functools.update_wrapper(self, fn, updated=()) if _has_name(fn) else None

    def __call__(self, *args, **kwargs):
        fn = self.__wrapped__
        if not callable(fn):
            fn(*args, **kwargs)  # raises CPython's own TypeError
        try:
            return run(fn, args, kwargs, debug=self.debug)
        except BaseException as e:
            # The user's frames, not pyinterp's; a bare raise adds no entry
            # for this frame.
            user_facing(e)
            raise

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return functools.partial(self, instance)

    def __repr__(self):
        return "<pyinterp.interpret of %r>" % (self.__wrapped__,)


def _has_name(fn):
    return hasattr(fn, "__name__")


def run(fn, args, kwargs, debug=False, vm=None):
    """Call ``fn(*args, **kwargs)`` with every Python-level callee interpreted
    (by ``vm``, a fresh :class:`Interpreter` unless given).

    The host's recursion limit is raised while runs are on (counted across
    threads, see :mod:`.interp.recursion`), C code's warnings are routed
    to ``vm``'s frames (per thread, see :mod:`.interp.warnbridge`), and the
    thread's trace and profile functions see the program's frames (see
    :mod:`.interp.tracing`)."""
    if vm is None:
        vm = Interpreter(debug=debug)
    lookup.invalidate()
    vm.recursion_limit = recursion.enter()
    warnbridge.install(vm)
    tracing.enter(vm)
    try:
        return vm.call(fn, args, kwargs or None)
    finally:
        tracing.leave(vm)
        warnbridge.uninstall()
        recursion.leave()


_P = ParamSpec("_P")
_R = TypeVar("_R")


def interpret(fn: Callable[_P, _R], *, debug: bool = False) -> Callable[_P, _R]:
    """Return a callable that runs ``fn`` inside pyinterp's bytecode interpreter.

    Every call interprets ``fn`` afresh (no caching of results): Python
    functions, methods, lambdas, classes (construction), callable objects and
    ``functools.partial`` are accepted.  Return values, exceptions, side
    effects and printed output are those of native execution.

    With ``debug=True`` the interpreter also checks, after every
    instruction, that the stack changed by the amount ``dis.stack_effect``
    predicts.
    """
    return _Interpreted(fn, debug)
