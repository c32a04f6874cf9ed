"""Python code that torch's own code calls back: decorators, wrappers, hooks.

While tracing, torch's own Python runs natively as leaf ops
(:mod:`.torchfiles`), and so does its C code.  Either may call Python code
that is *not* torch's: a function wrapped by ``torch.compiler.disable``,
the ``forward`` of a custom ``autograd.Function`` (one that is pure is a
graph node instead: autograd_functions.py), a function given to
``torch.utils.checkpoint``, a hook.  Run natively, that code is invisible
to the interpreter: its reads are not guarded, its writes (a list append,
an attribute store, a print) are not replayed, and its tensor ops land in
the graph as if they were the program's.  The rule:

    Python code outside torch, torch's own dependencies, the standard
    library and pyinterp (*foreign* code, :func:`is_foreign`) that a
    torch call runs natively is a graph break (``native-callback``).
    The call then runs natively on every call, after the graph of the
    code before it (a partial graph), so its effects happen every time.

The checks that apply it:

* :class:`Watch`: torch's Python and C functions that the capture runs
  natively run under a ``sys.setprofile`` watch that notes the first
  foreign frame entered (in a speculative arm it stops that frame before
  its first instruction, so the arm can be undone with nothing done);
* :func:`stored_callable`: a torch op given a Python callable (a hook
  registration such as ``Tensor.register_hook``, ``Tensor.apply_``) may
  run it now or later, natively: a break before the op runs;
* :func:`disabled`: ``torch.compiler.disable`` / ``torch._dynamo.disable``
  wrappers, known by the mark Dynamo puts on them: a break *before* the
  call, which then runs natively (never inside a graph), as Dynamo does;
* :func:`allowed_in_graph`: ``torch.compiler.allow_in_graph`` functions
  run natively once and become one node of the graph, as in Dynamo (their
  Python side effects are not replayed: that is the decorator's contract).
"""
import importlib.metadata
import os
import sys
import types

import torch

from .torchfiles import TORCH_DIR

_Tensor = torch.Tensor

_ALWAYS_OWN = frozenset({"torch", "torchgen", "functorch", "pyinterp"})
_OWN_FILE_PREFIXES = (TORCH_DIR, "<eval_with_key>", "<frozen ")
_verdicts = {}  # module name -> True if its code is foreign
_own_packages = None  # top-level names of the stdlib, torch and torch's dependencies


def _dependencies():
    """Top-level import names of torch's requirements, transitively (sympy
    brings mpmath, jinja2 brings markupsafe): torch's own code may call
    theirs, so it is not a user's callback."""
    try:
        by_module = importlib.metadata.packages_distributions()
    except Exception:  # noqa: BLE001 - broken metadata: only the fixed names
        return set()
    modules_of = {}
    for module, dists in by_module.items():
        for dist in dists:
            modules_of.setdefault(_normal(dist), set()).add(module)
    seen, todo = set(), ["torch"]
    while todo:
        dist = todo.pop()
        try:
            requires = importlib.metadata.requires(dist) or ()
        except importlib.metadata.PackageNotFoundError:
            continue
        for line in requires:
            name = _normal(line.split(";")[0].split("[")[0].split("<")[0].split(">")[0]
                           .split("=")[0].split("!")[0].split("~")[0])
            if name and name not in seen:
                seen.add(name)
                todo.append(name)
    return {m for dist in seen for m in modules_of.get(dist, ())}


def _normal(dist):
    return dist.strip().lower().replace("-", "_").replace(".", "_")


def is_foreign(frame):
    """True if ``frame`` runs code that is not torch's, its dependencies',
    the standard library's or pyinterp's (``__main__`` and every other
    module count as the user's)."""
    name = frame.f_globals.get("__name__")
    verdict = _verdicts.get(name)
    if verdict is None:
        verdict = _judge(name, frame.f_code.co_filename)
        if type(name) is str:
            _verdicts[name] = verdict
    return verdict


def _judge(name, filename):
    global _own_packages
    if type(name) is not str:
        return not filename.startswith(_OWN_FILE_PREFIXES)
    if name == "__main__":
        return True
    if name.startswith("namedtuple_"):  # collections.namedtuple's generated __new__
        return False
    top = name.partition(".")[0]
    if top in _ALWAYS_OWN or top in sys.stdlib_module_names:
        return False
    if _own_packages is None:
        _own_packages = frozenset(_dependencies())
    return top not in _own_packages


class Watch:
    """A ``sys.setprofile`` watch around one native call (``with
    Watch(...): fn(...)``): ``entered`` is the code object of the first
    frame it saw that ``judge(frame)`` calls a callback (every Python frame
    with ``judge=None``), or None.  With ``stop`` (an exception factory),
    that frame raises ``stop()`` before its first instruction instead of
    running.  Watches nest (an inner one puts the outer one back); a
    profiler that is not ours owns the hook: the call runs unwatched
    (cProfile's cannot be reinstalled from Python)."""

    __slots__ = ("entered", "stop", "judge", "previous", "on")

    def __init__(self, stop=None, judge=is_foreign):
        self.entered = None
        self.stop = stop
        self.judge = judge
        self.previous = None
        self.on = False

    def __call__(self, frame, event, arg):
        if event == "call" and (self.judge(frame) if self.judge is not None
                                else frame.f_code is not _EXIT):
            self.entered = frame.f_code
            sys.setprofile(None)  # seen: the rest of the call runs unwatched
            if self.stop is not None:
                raise self.stop()

    def __enter__(self):
        previous = sys.getprofile()
        self.on = previous is None or type(previous) is Watch
        if self.on:
            self.previous = previous
            sys.setprofile(self)
        return self

    def __exit__(self, *exc):
        if self.on:
            sys.setprofile(self.previous)
        return False


_EXIT = Watch.__exit__.__code__  # (the watch's own exit is seen entering)


def describe(code):
    """``qualname (file:line)`` of a foreign code object, for a break message."""
    return "%s (%s:%d)" % (code.co_qualname, os.path.basename(code.co_filename),
                           code.co_firstlineno)


def disabled(fn):
    """True for a function wrapped by ``torch.compiler.disable`` or
    ``torch._dynamo.disable`` (recursive or not): Dynamo marks the wrapper
    with ``_torchdynamo_disable``.  Reads the function's own ``__dict__``
    only (no user ``__getattr__`` runs)."""
    d = getattr(fn, "__dict__", None) if type(fn) is types.FunctionType else None
    return bool(d) and d.get("_torchdynamo_disable") is True


def disabled_target(fn):
    """The function a disabled wrapper (a function or a class whose
    ``__init__`` is one) stands for, for messages."""
    init = fn.__dict__.get("__init__") if isinstance(fn, type) else None
    wrapper = init if disabled(init) else fn
    d = getattr(wrapper, "__dict__", None) if type(wrapper) is types.FunctionType else None
    return (d or {}).get("_torchdynamo_orig_callable", fn)


def allowed_in_graph(fn):
    """True for a function given to ``torch.compiler.allow_in_graph`` (the
    ids Dynamo keeps; none unless Dynamo's rules were loaded, which that
    decorator does)."""
    rules = sys.modules.get("torch._dynamo.trace_rules")
    if rules is None:
        return False
    ids = rules._allowed_callable_ids.function_ids
    return ids is not None and id(fn) in ids


def held_callable(fn):
    """A callable that the closure of ``fn`` (a Python function) holds and
    that torch's code could call back: a decorator's wrapper
    (``torch.no_grad()(f)``, ``torch.autocast(...)(f)``) holds ``f``."""
    values = []
    for cell in fn.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
    return stored_callable(values, _Tensor) if values else None


def stored_callable(values, tensor_type, depth=2):
    """The first argument in ``values`` that a torch call could call back
    natively, now or later: a callable that is neither a class nor a
    tensor, nor torch's own function (also inside list, tuple and dict
    arguments, ``depth`` levels down: ``BackwardHook(module, [hook], [])``
    keeps the user's hooks in lists); None if there is none."""
    for v in values:
        tp = type(v)
        if tp is tensor_type or tp in _SCALARS:
            continue
        if tp in _CONTAINERS:
            if depth:
                found = stored_callable(v.values() if tp is dict else v, tensor_type, depth - 1)
                if found is not None:
                    return found
            continue
        if callable(v) and not isinstance(v, (type, tensor_type)) and not _torch_own(v):
            return v
    return None


_SCALARS = frozenset({int, float, bool, str, type(None), slice})
_CONTAINERS = frozenset({tuple, list, dict})


def _torch_own(fn):
    """True for torch's own functions, methods and callable objects (read
    through types and C attributes only: no user ``__getattr__`` runs)."""
    tp = type(fn)
    if tp is types.MethodType:
        fn = fn.__func__
        tp = type(fn)
    if tp is types.FunctionType:
        return fn.__code__.co_filename.startswith(TORCH_DIR)
    if tp is types.BuiltinFunctionType:
        module = fn.__module__
        owner = fn.__self__
        if module is None and isinstance(owner, types.ModuleType):
            module = owner.__name__
        elif module is None:
            module = (owner if isinstance(owner, type) else type(owner)).__module__
    else:
        module = tp.__module__
    return type(module) is str and (module == "torch" or module.startswith("torch."))
