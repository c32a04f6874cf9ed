"""``warnings.warn(..., stacklevel=n)``, replayed by the mock as in eager.

``stacklevel=n`` attributes the warning to the frame ``n - 1`` levels above
the caller of ``warn``: its file, line, module and ``__warningregistry__``
(which decides "once per location").  The mock replays the warning
(:func:`.special_calls.deferred`), so it must find the same frame on every
call.  :func:`relocate` turns the call into one whose location is fixed:

* the frame is one of the traced call's own (a helper warning about its
  caller inside the traced function): it runs the same code at the same
  line on every call the guards admit, so the warning is replayed from a
  trampoline at that frame's line and with its globals, with
  ``stacklevel=1``;
* the frame is past the traced function (``stacklevel=2`` in the traced
  function itself names the code that called it): that caller differs
  from call to call, so the replay calls :func:`warn_outside`, which finds
  it when it runs, as ``warnings.warn`` would: the first frame below the
  trampoline that is not pyinterp's (its host files, its generated mock
  and guard code), then ``levels - 1`` frames further out.

The warning is issued the same way when the run first makes the call, so
the capture's own warning and every replay agree with eager.

Records: none (a pure helper of ``special_calls.deferred``).
"""
import sys
import warnings

from ..interp.tracebacks import is_host_file
from ..interp.lookasides import warn_from


def _warn_arguments(message, category=None, stacklevel=1, source=None):
    return message, category, stacklevel, source


def relocate(frame, args, kwargs):
    """``(fn, args, kwargs, frame)`` to replay ``warnings.warn(*args,
    **kwargs)`` made by the interpreted ``frame``: ``frame`` is the one
    whose line and globals the trampoline takes.  None if the arguments
    are not a plain ``warn`` call (the caller then breaks)."""
    try:
        message, category, stacklevel, source = _warn_arguments(*args, **kwargs)
    except TypeError:
        return None
    if type(stacklevel) is not int:
        return None
    if stacklevel <= 1:
        return warnings.warn, args, kwargs, frame
    if isinstance(message, Warning):
        category = type(message)
    elif category is None:
        category = UserWarning
    if not (isinstance(category, type) and issubclass(category, Warning)):
        return None
    level = stacklevel
    while level > 1 and frame.back is not None:
        frame, level = frame.back, level - 1
    plain = {} if source is None else {"source": source}
    if level == 1:  # one of the traced call's own frames
        return warnings.warn, (message, category, 1), plain, frame
    while frame.back is not None:
        frame = frame.back
    return warn_outside, (level - 1, message, category, source), {}, frame


def warn_outside(levels, message, category, source=None):
    """Warn about the frame ``levels`` frames out from the code that called
    the traced function (1: that code itself); called by a trampoline."""
    frame = sys._getframe(2)  # (1 is the trampoline)
    while frame is not None and _pyinterp_frame(frame):
        frame = frame.f_back
    while levels > 1 and frame is not None:
        frame, levels = frame.f_back, levels - 1
    warn_from(frame, message, category, source)


def _pyinterp_frame(frame):
    filename = frame.f_code.co_filename
    return is_host_file(filename) or filename.startswith("<pyinterp")
