"""pyinterp's own code keeps its own bindings of the builtins.

The program pyinterp runs may change the builtins: ``del builtins.iter``,
``builtins.len = ...``, even keys of its own type in ``builtins.__dict__``
(CPython's ``test_iter`` does all of that).  pyinterp's code must not see
it: ``len`` in a pyinterp module is the real ``len`` whatever the program
did.  So each pyinterp module gets, before its code runs, a global binding
of every public builtin (the names ``from builtins import *`` binds), taken
from :data:`BUILTINS`, the builtins as they were when pyinterp was first
imported.  A global name is found before the builtins, so pyinterp's code
never looks a name up in ``builtins.__dict__``.  (Names the module defines
itself replace their binding as usual.)

The modules' ``__builtins__`` stay the real ones, on purpose: C code that
pyinterp calls on the program's behalf reads the builtins of the Python
frame that called it (``iter.__reduce__`` reads ``iter``,
``types.FunctionType`` without ``__builtins__`` in its globals takes the
caller's, ``PyImport_Import`` reads ``__import__``), and natively that is the
program's frame: it must see what the program did to its builtins.

The bindings come from an import hook (:class:`OwnBuiltinsFinder`, first on
``sys.meta_path``) for every module named ``pyinterp`` or ``pyinterp.*``
(``opcodes/``, ``refgraph/`` and ``codegen/`` are ``pyinterp.opcodes``...),
so they need no line in each module and modules imported later (capture,
lazily) get them too; :func:`install` also binds the modules already
imported.  ``tests/interp/test_own_builtins.py`` checks every module.

The standard library's Python code reads the shared builtins too.  The
one such module the interpreter core calls at run time, ``dis`` (decoding a
code object on its first call), is loaded a second time as pyinterp's own
copy with the bindings (:func:`private_module`).

What stays shared with the program: the ``import`` statements inside
pyinterp's functions call the frame's ``builtins.__import__``, and classes
defined at run time its ``__build_class__``, as in any Python code; the
attributes of other modules (``sys``, ``types``...) that pyinterp reads at
run time; and the Python code of other libraries capture calls (torch's).
"""
import builtins
import importlib.util
import sys
from importlib.machinery import SourceFileLoader, SourcelessFileLoader

PACKAGE = __name__.split(".", 1)[0]

BUILTINS = {name: value for name, value in vars(builtins).items() if not name.startswith("_")}
"""The public builtins when pyinterp was first imported: what each of its
modules binds as globals."""


def bind(namespace):
    """Bind :data:`BUILTINS` in a module's namespace (names it already has
    are left alone)."""
    for name, value in BUILTINS.items():
        if name not in namespace:
            namespace[name] = value


def ours(name):
    """Whether module ``name`` is pyinterp's."""
    return name == PACKAGE or name.startswith(PACKAGE + ".")


class _BindingLoader:
    """Mixed into a source loader's class: bind the builtins, then run the
    module's code."""

    def exec_module(self, module):
        bind(module.__dict__)
        super().exec_module(module)


_LOADER_CLASSES = {}
"""loader class -> its subclass with :class:`_BindingLoader` mixed in."""

_LOADERS = (SourceFileLoader, SourcelessFileLoader)
"""The loaders whose modules get the bindings before their code runs (the
ones our modules come from: source files, or ``.pyc`` files alone)."""


def _binding_loader(loader):
    cls = type(loader)
    sub = _LOADER_CLASSES.get(cls)
    if sub is None:
        sub = _LOADER_CLASSES[cls] = type(cls.__name__, (_BindingLoader, cls), {
            "__module__": __name__, "__doc__": cls.__doc__})
    copy = sub.__new__(sub)
    copy.__dict__.update(loader.__dict__)
    return copy


class OwnBuiltinsFinder:
    """A meta path finder that finds pyinterp's modules with the other
    finders, and gives their spec a loader that binds the builtins first."""

    pyinterp_own_builtins = True
    """Marks the finder (a second copy of pyinterp imported under another
    name has its own class: the two must not ask each other)."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if not ours(name):
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if find is None or getattr(finder, "pyinterp_own_builtins", False):
                continue
            spec = find(name, path, target)
            if spec is not None:
                if isinstance(spec.loader, _LOADERS) \
                        and not isinstance(spec.loader, _BindingLoader):
                    spec.loader = _binding_loader(spec.loader)
                return spec
        return None


def install():
    """Put :class:`OwnBuiltinsFinder` first on ``sys.meta_path`` (once) and
    bind the builtins in pyinterp's modules already imported."""
    if not any(getattr(finder, "pyinterp_own_builtins", False) for finder in sys.meta_path):
        sys.meta_path.insert(0, OwnBuiltinsFinder)
    for name, module in list(sys.modules.items()):
        if ours(name) and module is not None:
            bind(module.__dict__)


def private_module(name):
    """A copy of pure-Python module ``name`` that is pyinterp's own: loaded
    afresh from its file as ``pyinterp.ownbuiltins.<name>`` (not put in
    ``sys.modules``), with :data:`BUILTINS` bound before its code runs.  The
    modules it imports are the shared ones."""
    origin = importlib.util.find_spec(name).origin
    spec = importlib.util.spec_from_file_location("%s.%s" % (__name__, name), origin)
    module = importlib.util.module_from_spec(spec)
    bind(module.__dict__)
    spec.loader.exec_module(module)
    return module
