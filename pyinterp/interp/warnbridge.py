"""Warnings that C code issues while the interpreter runs it.

C code warns about the innermost *Python* frame (``range(x)`` whose
``x.__index__`` returns a bool, ``int(x)`` whose ``__int__`` returns an int
subclass...): natively that is the program's own code, whose module, line,
``__warningregistry__`` and filters decide what happens.  Under pyinterp the
innermost Python frame is one of pyinterp's own (the handler or the call
dispatch that made the C call), so the warning would name the wrong file and
line, and the wrong module's filters and registry would decide whether it is
shown at all (``DeprecationWarning`` is ignored outside ``__main__`` by
default).

While an interpreted call runs, :func:`install` puts three things in place:

* a first filter, action ``always``, for warnings attributed to pyinterp's
  own modules: C code lets them through;
* ``__warningregistry__ = None`` in pyinterp's modules, so that a filter the
  program puts in front of that one (``simplefilter("default")``) never
  suppresses a warning as already shown from a pyinterp line;
* a hook on ``warnings._showwarnmsg`` (which C code calls to show a warning)
  that issues such a warning again from the innermost interpreted frame,
  through the ``warnings.warn`` lookaside: there the program's filters and
  registry decide, as natively.  (A program filter with action ``once`` in
  front has already marked the message in the global once-registry; the hook
  unmarks it first.)

The three are process-wide and interpreted calls run in several threads at
once: the first :func:`install` in the process puts them in place, the last
:func:`uninstall` takes them away, and each thread routes the warnings of
its own C calls to its own innermost interpreted call.

What stays different: the program can see the extra entry in
``warnings.filters`` while it runs, and a warning from an instruction that
does not record its position (most non-call instructions) is attributed to
the line of the frame's last call or attribute load.
"""
import re
import sys
import threading
import warnings

from .hostfiles import HOST_DIRS as _HOST_DIRS, TESTING_DIR as _TESTING_DIR
from .lookasides import issue_warning

_HOST_MODULES = re.compile(r"pyinterp(?:$|\.(?!testing(?:$|\.)))")
_FILTER = ("always", None, Warning, _HOST_MODULES, 0)

_REGISTRY = "__warningregistry__"
_MISSING = object()

_thread = threading.local()
"""``_thread.active``: this thread's interpreters of running interpreted
calls, innermost last."""
_lock = threading.Lock()
_state = {"shown": None, "registries": None, "installs": 0}


def _active():
    active = getattr(_thread, "active", None)
    if active is None:
        active = _thread.active = []
    return active


def _is_host_file(filename):
    return (isinstance(filename, str) and filename.startswith(_HOST_DIRS)
            and not filename.startswith(_TESTING_DIR))


def _show(msg):
    """``warnings._showwarnmsg`` while interpreted code runs."""
    active = getattr(_thread, "active", None)
    if active and _is_host_file(msg.filename):
        vm = active[-1]
        if vm.top is not None:
            warnings._onceregistry.pop((str(msg.message), msg.category), None)
            issue_warning(vm, msg.message, msg.source)
            return
    _state["shown"](msg)


def _host_namespaces():
    """The globals of pyinterp's own modules (found once)."""
    found = _state.get("namespaces")
    if found is None:
        found = _state["namespaces"] = tuple(
            module.__dict__ for name, module in list(sys.modules.items())
            if _HOST_MODULES.match(name) and type(getattr(module, "__dict__", None)) is dict)
    return found


def install(vm):
    """Route C code's warnings to ``vm``'s frames until :func:`uninstall`.

    (Plain functions, not a context manager: ``contextlib`` is Python code,
    which must not run natively inside an interpreted call.)
    """
    with _lock:
        if _state["installs"] == 0:
            _put_in_place()
        _state["installs"] += 1
    _active().append(vm)


def _put_in_place():
    _state["shown"] = warnings._showwarnmsg
    warnings._showwarnmsg = _show
    # The filter concerns pyinterp's modules only, whose registries are
    # None: no registry of the program's needs invalidating, so the
    # filters version is left alone (bumping it would make the program's
    # "default" warnings show again after every interpreted call).
    warnings.filters.insert(0, _FILTER)
    _state["registries"] = saved = []
    for namespace in _host_namespaces():
        saved.append((namespace, namespace.get(_REGISTRY, _MISSING)))
        namespace[_REGISTRY] = None


def uninstall():
    """Undo the matching :func:`install`."""
    _thread.active.pop()
    with _lock:
        _state["installs"] -= 1
        if _state["installs"] == 0:
            _take_away()


def _take_away():
    if warnings._showwarnmsg is _show:
        warnings._showwarnmsg = _state["shown"]
    filters = warnings.filters
    for i, entry in enumerate(filters):
        if entry is _FILTER:
            del filters[i]
            break
    for namespace, registry in _state["registries"]:
        if registry is _MISSING:
            namespace.pop(_REGISTRY, None)
        else:
            namespace[_REGISTRY] = registry
