"""Global torch state that a compiled graph depends on.

:func:`torch_state` is called by every guard (a ``StateIs`` guard compares
its result with the snapshot taken when the trace started): grad mode,
autocast, the default dtype, deterministic algorithms, and the depth of the
TorchFunctionMode stack (``torch.set_default_device`` installs a mode).
"""
import torch

_is_grad_enabled = torch.is_grad_enabled
_get_default_dtype = torch.get_default_dtype
_is_autocast_enabled = torch.is_autocast_enabled
_deterministic = torch.are_deterministic_algorithms_enabled
_inference = torch.is_inference_mode_enabled
_mode_stack_len = torch._C._len_torch_function_stack


def torch_state():
    """A tuple snapshot of the global state a graph depends on."""
    return (_is_grad_enabled(), _get_default_dtype(), _is_autocast_enabled("cpu"),
            _is_autocast_enabled("cuda"), _deterministic(), _inference(), _mode_stack_len())


def restore_torch_state(snapshot):
    """Put back the grad mode and autocast flags of a :func:`torch_state`
    snapshot: what a compiled graph that raised midway may have left
    changed (its ``_set_grad_enabled`` and autocast nodes)."""
    if _is_grad_enabled() != snapshot[0]:
        torch._C._set_grad_enabled(snapshot[0])
    for device, enabled in (("cpu", snapshot[2]), ("cuda", snapshot[3])):
        if _is_autocast_enabled(device) != enabled:
            torch.set_autocast_enabled(device, enabled)
