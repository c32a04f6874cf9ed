"""A program that changes the builtins changes neither pyinterp nor the
outcome: pyinterp's modules bind their own builtins (pyinterp/ownbuiltins.py).

Differential cases delete or replace builtins inside interpreted code (and
put them back before returning), then exercise the interpreter: a first
call of a function (decoding), classes, comprehensions, generators,
exceptions, calls with keywords, ``exec``.  Then what C code reads from the
program's builtins on its behalf (``iter.__reduce__``, ``exec`` filling in
``__builtins__``) must be the program's, as natively.
"""
import builtins
import importlib
import os
import pkgutil
import sys

import pytest

import pyinterp
from pyinterp import ownbuiltins
from pyinterp.testing import case, run_case

_DELETED = ("iter", "len", "isinstance", "type", "getattr", "next", "hasattr", "tuple",
            "list", "dict", "str", "repr", "object", "super", "range", "callable", "id",
            "issubclass", "setattr", "bool", "int", "min", "max", "sorted", "set",
            "frozenset", "any", "all", "zip", "map", "enumerate", "reversed", "print",
            "Exception", "TypeError", "KeyError", "StopIteration", "AttributeError",
            "ValueError", "sum", "abs", "hash", "float", "slice", "property",
            "staticmethod", "classmethod", "format", "vars", "bytes", "compile", "exec",
            "eval", "locals", "globals", "dir", "delattr")

CASES = {
    # Every name the interpreter core uses is gone while the program runs; a
    # function called for the first time then (decoded then) exercises most
    # of the interpreter.
    "deleted_builtins": case("""
        import builtins
        NAMES = %r
        def f():
            saved = {n: builtins.__dict__[n] for n in NAMES}
            log = saved["list"]()
            try:
                for n in NAMES:
                    del builtins.__dict__[n]
                def later(x, *a, k=1, **kw):
                    class C(saved["object"]):
                        def __init__(self):
                            self.v = 1
                        def __iter__(self):
                            yield self.v
                            yield from (2, 3)
                    c = C()
                    out = [[y for y in c], {**kw}, a, k, x[0], x[1:], f"{x!r:>9}", 3 in x, x * 2]
                    try:
                        {}["missing"]
                    except LookupError as e:
                        out.append(e.__class__.__name__)
                    try:
                        iter
                    except NameError as e:
                        out.append(e.args)
                    out.append(sorted)
                    return out
                log.append(later((1, 2), 3, k=4, z=5))
            finally:
                builtins.__dict__.update(saved)
            return log
    """ % (_DELETED,)),
    # The program's replacements are called by the program only, never by
    # pyinterp on its own behalf (the log shows every call).
    "replaced_builtins": case("""
        import builtins
        NAMES = ("iter", "len", "isinstance", "type", "getattr", "next", "tuple", "callable")
        def f():
            saved = {n: getattr(builtins, n) for n in NAMES}
            log = []
            def logging(name):
                real = saved[name]
                def replacement(*args):
                    log.append(name)
                    return real(*args)
                return replacement
            try:
                for n in NAMES:
                    setattr(builtins, n, logging(n))
                def later(items, **kw):
                    class C:
                        def __getattr__(self, name):
                            return name * 2
                    total = [x for x in items if isinstance(x, int)]
                    return (len(total), type(total).__name__, getattr(C(), "ab"), C().zz,
                            next(iter(items)), tuple(kw), sorted(items, key=lambda v: -v))
                log.append(later([3, 1, 2], a=1))
            finally:
                for n, v in saved.items():
                    setattr(builtins, n, v)
            return log
    """, expect=["isinstance", "isinstance", "isinstance", "len", "type", "getattr",
                 "iter", "next", "tuple", (3, "list", "abab", "zzzz", 3, ("a",), [3, 2, 1])]),
    # CPython's test_iter (gh-101765): an iterator's __reduce__ looks ``iter``
    # up in the builtins of the frame that calls it: the program's, where a
    # key of the program's own type (equal to "iter") runs its __eq__.
    "iterator_reduce_reads_the_programs_builtins": case("""
        import builtins
        def f():
            orig = builtins.iter
            it = iter("xyz")
            class Name:
                def __hash__(self):
                    return hash("iter")
                def __eq__(self, other):
                    list(it)
                    return other == "iter"
            try:
                del builtins.__dict__["iter"]
                builtins.__dict__[Name()] = orig
                reduced = it.__reduce__()
            finally:
                del builtins.__dict__["iter"]
                builtins.__dict__["iter"] = orig
            return reduced[0] is orig, reduced[1]
    """, expect=(True, ("",))),
    # exec() with globals lacking __builtins__ puts in the caller's builtins.
    "exec_fills_in_the_callers_builtins": case("""
        import builtins, types
        def body():
            g = {}
            exec("x = len('ab')", g)
            return g["x"], g["__builtins__"] is CUSTOM, "len" in g["__builtins__"]
        CUSTOM = dict(vars(builtins), len=lambda s: 42)
        def f():
            custom_body = types.FunctionType(body.__code__, {**globals(), "__builtins__": CUSTOM})
            return custom_body(), body()[1:]
    """, expect=((42, True, True), (False, True))),
    "exec_keyword_arguments": case("""
        def f():
            g = {"y": 2}
            exec("x = y + 1", globals=g) if EXEC_KW else exec("x = y + 1", g)
            return g["x"], eval("y * 5", g), eval("y", None, {"y": 7})
        import sys
        EXEC_KW = sys.version_info >= (3, 13)
    """, expect=(3, 10, 7)),
    "exec_bad_keyword": case("""
        def f():
            exec("x = 1", spam={})
    """, raises=TypeError),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_cases(name):
    run_case(CASES[name])


def _all_modules():
    """Import every pyinterp module (capture's only where torch is there)."""
    names = ["pyinterp"]
    for package in ("pyinterp", "pyinterp.opcodes", "pyinterp.refgraph", "pyinterp.codegen"):
        folder = os.path.dirname(importlib.import_module(package).__file__)
        names.extend(info.name for info in pkgutil.walk_packages([folder], package + "."))
    modules = []
    for name in names:
        if name == "pyinterp.__main__":
            continue  # runs the demo when imported
        try:
            modules.append(importlib.import_module(name))
        except ImportError as exc:
            if "torch" not in str(exc):
                raise
    return modules


def test_every_module_binds_the_builtins():
    """Every pyinterp module has each public builtin bound as a global, to
    the real one (unless it defines the name itself), and keeps the real
    ``__builtins__`` (for the C code it calls on the program's behalf)."""
    modules = _all_modules()
    assert len(modules) > 50
    unbound = []
    for module in modules:
        namespace = vars(module)
        if namespace.get("__builtins__") not in (builtins, builtins.__dict__):
            unbound.append("%s: __builtins__ is not the real one" % module.__name__)
        if namespace.get("iter") is not builtins.iter or namespace.get("len") is not len:
            unbound.append("%s: no bindings" % module.__name__)
    assert not unbound, unbound


def test_no_module_is_named_like_a_builtin():
    """``from package import name`` takes an attribute of the package before
    the submodule: a submodule named like a builtin would be shadowed by the
    package's binding."""
    clashes = [module.__name__ for module in _all_modules()
               if module.__name__.rsplit(".", 1)[-1] in ownbuiltins.BUILTINS]
    assert not clashes


def test_modules_imported_later_get_the_bindings():
    """A pyinterp module imported after ``pyinterp`` (here: imported again)
    is bound before its code runs."""
    name = "pyinterp.versions"
    saved = sys.modules.pop(name)
    try:
        module = importlib.import_module(name)
        assert module is not saved
        assert isinstance(module.__loader__, ownbuiltins._BindingLoader)
        assert module.sorted is sorted and module.__builtins__ is builtins.__dict__
    finally:
        sys.modules[name] = saved
