"""``MODULE:FUNCTION`` on the command line: the module it names and the
object in it (shared by ``python -m pyinterp steps`` and ``explain``).

MODULE is a dotted module name (importable from the current directory) or
the path of a ``.py`` file; FUNCTION a name in it (``Class.method`` reaches
further).  Every mistake exits with a one-line message that starts with the
command's name, except an import error inside the module, which keeps its
traceback.
"""
import importlib
import importlib.util
import os
import sys


def load(target, command):
    """``(module, object)`` for ``target`` = ``MODULE:FUNCTION``."""
    module_name, sep, attr = target.rpartition(":")
    if not sep or not module_name or not attr:
        raise SystemExit("%s: expected MODULE:FUNCTION, got %r" % (command, target))
    module = _module(module_name, command)
    return module, attribute(module, attr, module_name, command)


def attribute(module, dotted, module_name, command):
    """``module.<dotted>``, or exit saying which part is missing."""
    obj = module
    for part in dotted.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise SystemExit("%s: %s has no attribute %r" % (command, module_name, part)) from None
    return obj


def _module(module_name, command):
    if module_name.endswith(".py") or os.sep in module_name:
        path = module_name  # (as given: the step table names the file so)
        name = os.path.splitext(os.path.basename(path))[0]
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None:
            raise SystemExit("%s: cannot load %r" % (command, module_name))
        if not os.path.isfile(path):
            raise SystemExit("%s: no such file: %r" % (command, path))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if module_name != missing and not module_name.startswith(missing + "."):
            raise  # (the module was found; something it imports was not)
        raise SystemExit("%s: no module named %r (give a dotted module name importable "
                         "from here, or a path to a .py file)" % (command, missing)) from None
