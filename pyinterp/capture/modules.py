"""Module hooks: when a module call may go straight to ``forward``.

``Module.__call__`` runs hooks (the module's own and the global ones) and a
``module.compile()``d call; with none of them it only calls ``forward``, so
capture follows ``forward`` directly (and guards that no hook appears).
"""
import torch.nn.modules.module as _module

MODULE_HOOKS = ("_backward_hooks", "_backward_pre_hooks", "_forward_hooks",
                "_forward_pre_hooks")
GLOBAL_HOOKS = vars(_module)
GLOBAL_HOOK_NAMES = ("_global_backward_pre_hooks", "_global_backward_hooks",
                     "_global_forward_hooks", "_global_forward_pre_hooks")


def hooks_in_the_way(module_dict):
    """True if a call of the module whose ``__dict__`` is ``module_dict``
    needs ``Module.__call__``'s full logic: it has hooks or a compiled call,
    or a global module hook is registered."""
    return (module_dict.get("_compiled_call_impl") is not None
            or any(module_dict.get(h) for h in MODULE_HOOKS)
            or any(GLOBAL_HOOKS[h] for h in GLOBAL_HOOK_NAMES))
