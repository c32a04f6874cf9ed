"""``pyinterp.steps``: run a function and keep every instruction it executed.

See docs/steps.md.  Recording is debug mode's (:mod:`.interp.steps`); the
table is :mod:`.steptable`'s; under ``capture=True`` the capture side
(:mod:`.capture.steps`) adds what each instruction recorded.
"""
from typing import Any, Callable, Optional, Tuple

from . import api
from .interp import steps as _steps
from .steptable import DEFAULT_LIMIT, format_steps


class Steps(tuple):
    """The executed instructions of one call (a tuple of
    :class:`~pyinterp.interp.steps.Step`, in execution order).

    ``error`` is the exception the call raised (None if it returned);
    ``result`` is the value it returned, and re-raises ``error`` if it
    raised (so the steps up to the raise stay readable first).
    """

    def __new__(cls, steps, result=None, error=None):
        self = super().__new__(cls, steps)
        self._result = result
        self.error = error
        return self

    @property
    def result(self) -> Any:
        if self.error is not None:
            raise self.error
        return self._result

    def format(self, color: bool = False, function: Optional[str] = None,
               lines: Optional[Tuple[int, int]] = None,
               limit: Optional[int] = DEFAULT_LIMIT) -> str:
        """The steps as a table (see :func:`pyinterp.steptable.format_steps`):
        ``function`` keeps one function's steps (by qualname or name),
        ``lines`` a ``(first, last)`` range of source lines, and a run of
        more than ``limit`` consecutive steps shown keeps its first
        ``limit`` and says how many more it had (None: no limit)."""
        return format_steps(self, color=color, function=function, lines=lines, limit=limit)

    def __str__(self):
        return self.format()

    def __repr__(self):
        return "<Steps: %d steps, %s>" % (
            len(self), "raised %s" % type(self.error).__name__ if self.error is not None
            else "returned %s" % _steps._short(self._result, 0))


def steps(fn: Callable[..., Any], *args: Any, capture: bool = False, **kwargs: Any) -> Steps:
    """Run ``fn(*args, **kwargs)`` inside pyinterp, in debug mode, and return
    its :class:`Steps`; with ``capture=True`` the call is the first call of
    ``pyinterp.trace(fn, backend="eager")`` (a capture) and each step also
    says what it recorded.  An exception the call raises is kept in
    ``Steps.error``, not raised."""
    recorder = _steps.StepRecorder()
    result = error = None
    try:
        if capture:
            from .capture.steps import capture_steps

            result = capture_steps(recorder, fn, args, kwargs)
        else:
            with _steps.recording(recorder):
                result = api.interpret(fn, debug=True)(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - kept for the learner, see Steps.error
        error = e
    return Steps(recorder.steps, result, error)
