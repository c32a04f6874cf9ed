"""Differential tests: the ``stack`` and ``names`` opcode families.

NOP, RESUME, POP_TOP, PUSH_NULL, COPY, SWAP, EXTENDED_ARG; LOAD/STORE/DELETE
of fast locals, cells, globals, names and attributes, LOAD_CLASSDEREF and
SETUP_ANNOTATIONS.
"""
import textwrap

import pytest

from pyinterp.testing import case, check, run_case

CASES = {
    "pop_top_and_consts": case("""
        def f():
            1 + 1
            "unused"
            x = (1, 2.5, "s", b"b", None, ..., 3j, frozenset({1}))
            return x
    """, expect=(1, 2.5, "s", b"b", None, ..., 3j, frozenset({1}))),
    "swap_via_tuple_assignment": case("""
        def f(a, b, c):
            a, b, c = c, a, b
            a, b = b, a
            return a, b, c
    """, args=(1, 2, 3), expect=(1, 3, 2)),
    "copy_in_chained_compare": case("""
        def f(x):
            return 1 < x < 10, 1 < x > 3, x == x == x
    """, args=(5,), expect=(True, True, True)),
    "copy_in_augmented_subscript": case("""
        def f():
            d = {"k": [1]}
            d["k"] += [2]
            o = type("O", (), {})()
            o.v = 1
            o.v += 41
            return d, o.v
    """, expect=({"k": [1, 2]}, 42)),
    "fast_locals": case("""
        def f(n):
            total = 0
            for i in range(n):
                total += i
            del i
            return total
    """, args=(10,), expect=45),
    "unbound_local_read": case("""
        def f():
            if False:
                x = 1
            return x
    """, raises=UnboundLocalError),
    "unbound_local_after_del": case("""
        def f():
            x = 1
            del x
            return x
    """, raises=UnboundLocalError),
    "delete_unbound_local": case("""
        def f():
            if False:
                y = 0
            del y
    """, raises=UnboundLocalError),
    "global_read_write_delete": case("""
        counter = 10
        def bump():
            global counter
            counter += 1
        def f():
            global made
            bump(); bump()
            made = counter
            result = made
            del made
            return result, "made" in globals()
    """, expect=(12, False)),
    "name_error_global": case("""
        def f():
            return undefined_name_xyz
    """, raises=NameError),
    "delete_missing_global": case("""
        def f():
            global nothing_here
            del nothing_here
    """, raises=NameError),
    "builtin_lookup_and_shadowing": case("""
        len = lambda x: "shadowed"
        def f():
            return len([1, 2]), abs(-3), max(1, 5)
    """, expect=("shadowed", 3, 5)),
    "cells_and_free_vars": case("""
        def f():
            x = 1
            def get():
                return x
            def put(v):
                nonlocal x
                x = v
            put(5)
            first = get()
            x = 7
            return first, get()
    """, expect=(5, 7)),
    "cell_argument": case("""
        def f(a, b=2):
            def inner():
                return a * b
            a = a + 1
            return inner()
    """, args=(3,), expect=8),
    "free_variable_unbound": case("""
        def f():
            def inner():
                return y
            r = []
            try:
                inner()
            except NameError as e:
                r.append(str(e))
            y = 3
            r.append(inner())
            return r
    """),
    "delete_deref": case("""
        def f():
            z = 1
            def inner():
                return z
            del z
            try:
                inner()
            except NameError as e:
                return str(e)
    """),
    "delete_deref_unbound": case("""
        def f():
            def inner():
                return w
            del w
            w = 1
    """, raises=NameError),
    "class_body_names": case("""
        def f():
            x = "enclosing"
            class C:
                y = 1
                z = y + 1
                w = x
                del y
                def m(self):
                    return x
            return C.z, C.w, hasattr(C, "y"), C().m()
    """, expect=(2, "enclosing", False, "enclosing")),
    "load_classderef_prefers_namespace": case("""
        def f():
            x = "cell"
            class C:
                x = "class"
                seen = x
                def g():
                    return x
            class D:
                seen = x
                def g():
                    return x
            return C.seen, D.seen
    """, expect=("class", "cell")),
    "class_body_name_error": case("""
        def f():
            class C:
                q = not_defined_anywhere
    """, raises=NameError),
    "class_body_delete_missing": case("""
        def f():
            class C:
                del missing
    """, raises=NameError),
    "attributes": case("""
        class O:
            pass
        def f():
            o = O()
            o.a = 1
            o.b = o.a + 1
            del o.a
            r = [o.b, hasattr(o, "a")]
            try:
                o.a
            except AttributeError as e:
                r.append(str(e))
            try:
                del o.zzz
            except AttributeError as e:
                r.append(str(e))
            return r
    """),
    "attribute_on_builtin": case("""
        def f():
            try:
                (1).foo = 3
            except AttributeError as e:
                r1 = str(e)
            try:
                "s".nope
            except AttributeError as e:
                r2 = str(e)
            return r1, r2, (1).real, "abc".upper()
    """),
    # An AttributeError raised by Python code on the way (__getattr__,
    # __getattribute__, a property) gets the name and object it lacks, as
    # PyObject_GetAttr adds them; traceback's "Did you mean" reads them.
    "attribute_error_gets_name_and_obj": case("""
        import traceback
        class A:
            blech = None
            def __getattr__(self, attr):
                raise AttributeError()
        class B:
            blech = None
            def __getattribute__(self, attr):
                raise AttributeError("no", 23)
        class P:
            @property
            def blech(self):
                raise AttributeError("inner")
        class Named:
            def __getattr__(self, attr):
                raise AttributeError("set", name="given", obj=None)
        def f():
            out = []
            for obj, name in ((A(), "bluch"), (B(), "bluch"), (P(), "blech"), (Named(), "x")):
                try:
                    getattr(obj, name) if name == "x" else obj.bluch if name == "bluch" else obj.blech
                except AttributeError as e:
                    out.append((e.args, e.name, e.obj is obj,
                                traceback.format_exception_only(e)[-1].strip()))
            return out
    """),
    # CPython's test_dynamic: LOAD_GLOBAL with globals or builtins that are
    # not exactly dicts subscripts them (__getitem__, __missing__ run).
    "load_global_from_dict_subclasses": case("""
        log = []
        class MyGlobals(dict):
            def __missing__(self, key):
                log.append(("missing", key))
                if key.startswith("_number_"):
                    return int(key.removeprefix("_number_"))
                raise KeyError(key)
        class Loud(dict):
            def __getitem__(self, key):
                log.append(("getitem", key))
                return dict.__getitem__(self, key)
        def f():
            g = eval("lambda: _number_3 + _number_4 + len('ab')", MyGlobals())
            h = eval("lambda: x * 2", Loud(x=21))
            b = Loud(len=lambda s: 40)
            k = eval("lambda: len('ab') + abs(-2)", {"__builtins__": b, "abs": abs})
            try:
                eval("lambda: nowhere", MyGlobals())()
            except NameError as e:
                log.append(str(e))
            return g(), h(), k(), log
    """),
    "annotations_in_class_and_module_style_exec": case("""
        def f():
            class C:
                a: int
                b: str = "x"
            ns = {}
            exec("q: int = 3", ns)
            return C.__annotations__, C.b, ns["__annotations__"], ns["q"]
    """),
    "extended_arg_many_constants": case(
        "def f():\n    values = [" + ", ".join("%d.5" % i for i in range(300))
        + "]\n    x = values[299]\n    return x, len(values)\n", expect=(299.5, 300)),
    "extended_arg_far_jump": case(
        "def f(c):\n    if c:\n" + "".join("        c = c * 3 + %d\n" % i for i in range(120))
        + "    return c\n", args=(1,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_stack_and_names(name):
    run_case(CASES[name])


def test_locals_are_independent_between_calls():
    check(textwrap.dedent("""
        def g(v, acc=[]):
            acc.append(v)
            return list(acc)
        def f():
            return g(1), g(2)
    """), expect=([1], [1, 2]))


def test_global_statement_in_nested_function():
    check(textwrap.dedent("""
        log = []
        value = "module"
        def f():
            value = "local"
            def inner():
                global value
                value = "changed"
                log.append(value)
            inner()
            log.append(value)
            return globals()["value"]
    """), expect="changed")
