"""``pyinterp.trace(model)`` on an ``nn.Module``: a traced module that is a module.

A :class:`TracedModule` is an ``nn.Module`` standing in for the model: a call
goes through the cache of a :class:`~.traced.Traced` of the model (guards,
then the mock), and everything else is the model's own.

* **One module tree, no prefix.**  The wrapper does not hold the model as a
  submodule (``torch.compile``'s ``OptimizedModule`` does, hence its
  ``_orig_mod.`` prefix).  Its ``__dict__`` holds the model's *own*
  containers: ``_parameters``, ``_buffers``, ``_modules`` and every hook
  dict are the same objects as the model's.  So ``parameters()``,
  ``named_modules()``, ``register_buffer()``... see the model's tree, and
  ``state_dict()``/``load_state_dict()`` (delegated to the model, with its
  overrides and hooks) use the model's keys.
* **Hooks are the model's.**  A hook registered on the wrapper lands in the
  model's hook dict, so it runs where the model's own hooks run: inside the
  traced call, where capture guards the hook dicts (``NoModuleHooks``) and
  captures the hooks.  A hook added after a capture fails that guard and the
  next call captures again.  The wrapper's own call never dispatches hooks
  (no ``Module.__call__``), so a global module hook runs once, for the model,
  as in eager.
* **Everything else is forwarded:** attribute reads, writes and deletes go to
  the model; ``train``/``eval``, ``to``/``cuda`` (``_apply``) and ``apply``
  run the model's methods and return the wrapper.
* A copy (``copy.deepcopy``, pickling, ``torch.save`` of the whole object)
  is a fresh trace of a copy of the model, with the same ``trace`` options:
  compiled entries are never copied.

Interpreted code that calls a traced module (another traced function) runs
its ``__call__``, which calls the :class:`~.traced.Traced`, which the capture
inlines: the caller still gets one graph.
"""
import torch

_OWN = frozenset(("_orig_mod", "_traced", "_remake", "__wrapped__"))


class TracedModule(torch.nn.Module):
    """What :func:`pyinterp.trace` returns for an ``nn.Module``."""

    def __init__(self, traced, remake, module=None):
        """``traced``: the :class:`~.traced.Traced` of the model;
        ``remake(model)``: ``trace`` with the same options (for copies);
        ``module``: the model, when ``traced`` traces another callable (a
        DDP module's trace traces its inner module: :mod:`.ddp_forward`)."""
        if module is None:
            module = traced.__wrapped__
        torch.nn.Module.__init__(self)  # (its ``training`` write is ignored: no model yet)
        d = self.__dict__
        mine = module.__dict__
        for name in list(d):
            if name in mine and isinstance(d[name], (dict, set)):
                d[name] = mine[name]  # the model's container itself
            else:
                del d[name]  # a flag: read through to the model's
        d["_orig_mod"] = module
        d["__wrapped__"] = module
        d["_traced"] = traced
        d["_remake"] = remake

    def __call__(self, *args, **kwargs):
        return self._traced(*args, **kwargs)

    forward = __call__

    # -- the model's state, with the model's keys ----------------------------------
    def state_dict(self, *args, **kwargs):
        return self._orig_mod.state_dict(*args, **kwargs)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        return self._orig_mod.load_state_dict(state_dict, strict=strict, assign=assign)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        self._orig_mod._save_to_state_dict(destination, prefix, keep_vars)

    def _load_from_state_dict(self, *args, **kwargs):
        self._orig_mod._load_from_state_dict(*args, **kwargs)

    def _apply(self, fn, *args, **kwargs):
        self._orig_mod._apply(fn, *args, **kwargs)
        return self

    def apply(self, fn):
        self._orig_mod.apply(fn)
        return self

    def train(self, mode=True):
        self._orig_mod.train(mode)
        return self

    @property
    def training(self):
        return self._orig_mod.training

    @training.setter
    def training(self, value):
        module = self.__dict__.get("_orig_mod")
        if module is not None:
            module.training = value

    # -- attributes: the model's -----------------------------------------------
    def __getattr__(self, name):
        d = self.__dict__
        if "_orig_mod" not in d:
            raise AttributeError(name)
        try:
            return getattr(d["_orig_mod"], name)
        except AttributeError:
            traced = d["_traced"]
            if name in traced.__dict__ or hasattr(type(traced), name):
                return getattr(traced, name)  # the cache's own API (entries...)
            raise

    def __setattr__(self, name, value):
        if name in _OWN:
            self.__dict__[name] = value  # (never registered: no prefix)
        elif hasattr(type(self), name):
            torch.nn.Module.__setattr__(self, name, value)
        else:
            setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        if name in _OWN:
            del self.__dict__[name]
        elif hasattr(type(self), name):
            torch.nn.Module.__delattr__(self, name)
        else:
            delattr(self._orig_mod, name)

    def __dir__(self):
        return sorted(set(dir(self._orig_mod)) | set(dir(type(self))))

    def __repr__(self):
        return "pyinterp.trace(%r)" % (self._orig_mod,)

    # -- copies: a fresh trace of a copy -----------------------------------------
    def __deepcopy__(self, memo):
        import copy

        return self._remake(copy.deepcopy(self._orig_mod, memo))

    def __reduce_ex__(self, protocol):
        return self._remake, (self._orig_mod,)
