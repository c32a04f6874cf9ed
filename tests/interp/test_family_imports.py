"""Differential tests: the ``imports`` opcode family.

IMPORT_NAME (absolute and relative), IMPORT_FROM and IMPORT_STAR, against a
package written to a temporary directory.  Module bodies run natively (the
import system executes them); the functions doing the importing are
interpreted.  Every run starts with the package unloaded.
"""
import importlib
import sys
import textwrap

import pytest

from pyinterp.testing import check

PACKAGE = {
    "dpkg/__init__.py": """
        top = "package top"
        from . import sub as _sub_at_init
    """,
    "dpkg/sibling.py": """
        value = 41
        def helper():
            return "helper from sibling"
        _private = "hidden"
    """,
    "dpkg/stars.py": """
        __all__ = ["exported", "also"]
        exported = 1
        also = 2
        not_exported = 3
    """,
    "dpkg/nostars.py": """
        public = "p"
        _private = "q"
    """,
    "dpkg/badall.py": """
        __all__ = ["ok", 5]
        ok = 1
    """,
    "dpkg/sub/__init__.py": """
        def relative_imports():
            from . import leaf
            from .leaf import leaf_value
            from .. import sibling
            from ..sibling import value, helper
            from .. import top
            import dpkg.sub.leaf as aliased
            return leaf.leaf_value, leaf_value, sibling.value + 1, value, helper(), top, aliased is leaf
        def beyond_top():
            from ... import anything
        def missing_name():
            from .leaf import nothing_here
        def missing_module():
            from . import no_such_module
    """,
    "dpkg/sub/leaf.py": """
        leaf_value = "leaf"
    """,
}
NAMES = ("dpkg",)


@pytest.fixture(autouse=True)
def package(tmp_path):
    for rel, text in PACKAGE.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    yield tmp_path
    sys.path.remove(str(tmp_path))
    _unload()


def _unload():
    for name in list(sys.modules):
        if name.split(".")[0] in NAMES:
            del sys.modules[name]


def run(source, **options):
    return check(textwrap.dedent(source), setup=_unload, **options)


def test_import_stdlib_modules():
    run("""
        def f():
            import math
            import os.path
            import collections.abc as cabc
            from json import dumps, loads as lds
            return math.sqrt(16), os.path.basename("/a/b"), cabc.Mapping.__name__, dumps([1]), lds("2")
    """, expect=(4.0, "b", "Mapping", "[1]", 2))


def test_import_dotted_binds_top_package():
    run("""
        def f():
            import dpkg.sub.leaf
            return dpkg.__name__, dpkg.sub.leaf.leaf_value, dpkg.top
    """, expect=("dpkg", "leaf", "package top"))


def test_import_as_submodule():
    run("""
        def f():
            import dpkg.sub.leaf as leaf
            from dpkg.sub import leaf as leaf2
            return leaf.leaf_value, leaf is leaf2
    """, expect=("leaf", True))


def test_relative_imports_inside_package_function():
    run("""
        def f():
            from dpkg.sub import relative_imports
            return relative_imports()
    """, expect=("leaf", "leaf", 42, 41, "helper from sibling", "package top", True))


def test_relative_import_beyond_top_level():
    run("""
        def f():
            from dpkg import sub
            sub.beyond_top()
    """, raises=ImportError)


def test_relative_import_without_package():
    run("""
        def f():
            from . import something
    """, raises=ImportError)


def test_import_missing_name_message():
    run("""
        def f():
            from dpkg import sub
            sub.missing_name()
    """, raises=ImportError)


def test_import_missing_relative_module():
    run("""
        def f():
            from dpkg import sub
            sub.missing_module()
    """, raises=ImportError)


def test_module_not_found():
    run("""
        def f():
            import dpkg_does_not_exist.child
    """, raises=ModuleNotFoundError)


def test_from_import_missing_from_stdlib():
    run("""
        def f():
            from math import no_such_function
    """, raises=ImportError)


def test_from_import_missing_name_attributes():
    """The ImportError names the module, its path and (3.12+) the missing
    name, from which the traceback suggests a close one."""
    run("""
        import traceback
        def f():
            try:
                from dpkg.sibling import valeu
            except ImportError as e:
                return (e.name, e.path.endswith("sibling.py"), getattr(e, "name_from", None),
                        traceback.format_exception_only(e)[-1].split(". ")[-1])
    """)


def test_import_star_with_all():
    run("""
        def f():
            ns = {}
            exec("from dpkg.stars import *", ns)
            return sorted(k for k in ns if k != "__builtins__")
    """, expect=["also", "exported"])


def test_import_star_without_all_skips_private():
    run("""
        def f():
            ns = {}
            exec("from dpkg.nostars import *\\nseen = sorted(dir())", ns)
            return [k for k in ns["seen"] if not k.startswith("__")]
    """, expect=["public"])


def test_import_star_bad_all_entry():
    run("""
        def f():
            exec("from dpkg.badall import *", {})
    """, raises=TypeError)


def test_import_star_in_class_body_via_exec_locals():
    run("""
        def f():
            glob, loc = {}, {}
            exec("from dpkg.stars import *", glob, loc)
            return sorted(loc), "exported" in glob
    """, expect=(["also", "exported"], False))


def test_import_side_effects_happen_once():
    run("""
        import sys
        def f():
            import dpkg.sibling
            first = sys.modules["dpkg.sibling"]
            import dpkg.sibling
            from dpkg import sibling
            return first is sibling, "dpkg.sub" in sys.modules
    """, expect=(True, True))


def test_dunder_import_and_importlib():
    run("""
        import importlib
        def f():
            m = __import__("dpkg.sub.leaf", fromlist=["leaf_value"])
            n = importlib.import_module(".leaf", "dpkg.sub")
            return m.__name__, m is n
    """, expect=("dpkg.sub.leaf", True))


def test_custom_import_hook_in_builtins():
    run("""
        import builtins
        log = []
        def f():
            real = builtins.__import__
            def hook(name, *args):
                log.append(name)
                return real(name, *args)
            ns = {"__builtins__": dict(vars(builtins), __import__=hook)}
            exec("import math\\nfrom dpkg import top", ns)
            return ns["top"]
    """, expect="package top")
