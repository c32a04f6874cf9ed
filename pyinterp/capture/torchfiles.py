"""Which Python code is torch's own: code that a capture runs natively.

While tracing, torch's Python functions run natively and are recorded as
leaf ops (their ops are what the graph records), except those of
``torch.nn.modules``, whose ``Module.__call__`` and ``forward`` methods are
followed.  Break sites skip torch's frames to name the user's line.
"""
import os
import types

import torch

TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
"""The torch package's directory (with a trailing separator)."""

_NN_MODULES_DIR = os.path.join(TORCH_DIR, "nn", "modules") + os.sep


def is_torch_file(filename):
    """True for a source file of the torch package."""
    return filename.startswith(TORCH_DIR)


def is_torch_function(fn):
    """True for torch's own Python functions that run natively while tracing
    (everything in the torch package except ``torch.nn.modules``, whose
    ``Module.__call__`` and ``forward`` methods are followed)."""
    filename = fn.__code__.co_filename
    return filename.startswith(TORCH_DIR) and not filename.startswith(_NN_MODULES_DIR)


def runs_interpreted(fn):
    """True if a call of ``fn`` is followed by the interpreter while
    tracing, so that its uses of the values it receives are checked there:
    a Python function (or method) outside torch, or a module."""
    if type(fn) is types.MethodType:
        fn = fn.__func__
    if type(fn) is types.FunctionType:
        return not is_torch_function(fn)
    return isinstance(fn, torch.nn.Module)
