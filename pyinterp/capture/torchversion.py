"""Which torch capture runs on: a clear error when there is none
(:func:`require_torch`), and one warning, at the first capture, when torch is
a version that capture was not tested with
(:data:`pyinterp.versions.TESTED_TORCH_VERSIONS`)."""
import importlib.util
import os
import sys
import threading
import warnings

from ..versions import missing_torch_message, untested_torch_message

_checked = threading.Event()
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def require_torch(what):
    """Raise ``ModuleNotFoundError`` naming the extra to install if torch
    cannot be imported; ``what`` is the API called (``"pyinterp.trace"``).
    Does not import torch."""
    module = sys.modules.get("torch", sys)  # (sys: not imported yet)
    if module is None:  # (``sys.modules["torch"] = None`` blocks the import)
        found = False
    elif module is not sys:
        return
    else:
        try:
            found = importlib.util.find_spec("torch") is not None
        except (ImportError, ValueError):
            found = False
    if not found:
        raise ModuleNotFoundError(missing_torch_message(what), name="torch")


def warn_if_untested():
    """Warn once per process if ``torch.__version__`` is untested; the
    warning points at the program's call of the traced function."""
    if _checked.is_set():
        return
    _checked.set()
    import torch

    message = untested_torch_message(torch.__version__)
    if message is not None:
        warnings.warn(message, UserWarning, stacklevel=_levels_to_caller())


def _levels_to_caller():
    """The ``stacklevel`` of the innermost frame outside pyinterp's package."""
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _PACKAGE_DIR + os.sep):
        frame, level = frame.f_back, level + 1
    return level
