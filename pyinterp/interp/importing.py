"""``from module import name`` and ``from module import *``."""
import sys


def import_from(vm, module, name):
    """``IMPORT_FROM``: ``module.name``, else the submodule ``pkg.name``."""
    try:
        return vm.load_attr(module, name)
    except AttributeError:
        pass
    try:
        pkgname = module.__name__
    except AttributeError:
        pkgname = None
    if isinstance(pkgname, str):
        found = sys.modules.get("%s.%s" % (pkgname, name))
        if found is not None:
            return found
    else:
        pkgname = "<unknown module name>"
    path = getattr(module, "__file__", None)
    spec = getattr(module, "__spec__", None)
    if spec is not None and getattr(spec, "_initializing", False):
        message = ("cannot import name %r from partially initialized module %r "
                   "(most likely due to a circular import) (%s)"
                   % (name, pkgname, path if path is not None else "unknown location"))
    else:
        message = "cannot import name %r from %r (%s)" % (
            name, pkgname, path if path is not None else "unknown location")
    raise ImportError(message, name=pkgname, path=path, **_name_from(name))


def _name_from(name):
    """3.12+ name the missing name (``name_from``, for the traceback's
    "Did you mean" suggestion)."""
    return {"name_from": name} if _HAS_NAME_FROM else {}


_HAS_NAME_FROM = sys.version_info >= (3, 12)


def import_star(vm, module, namespace):
    """``IMPORT_STAR``: copy the public names of ``module`` into ``namespace``."""
    if namespace is None:
        raise SystemError("no locals found during 'import *'")
    try:
        names = vm.load_attr(module, "__all__")
        skip_private = False
    except AttributeError:
        names = None
    if names is None:
        try:
            names = vm.load_attr(module, "__dict__")
        except AttributeError:
            names = None
        if names is None:
            raise ImportError("from-import-* object has no __dict__ and no __all__")
        names = list(vm.iterate(vm.call(vm.load_attr(names, "keys"), ())))
        skip_private = True
    for name in vm.iterate(names):
        if type(name) is not str:
            where = "__dict__" if skip_private else "__all__"
            raise TypeError("%s in %s.%s must be str, not %s" % (
                "Key" if skip_private else "Item", module.__name__, where, type(name).__name__))
        if skip_private and name.startswith("_"):
            continue
        namespace[name] = vm.load_attr(module, name)
