"""Differential tests: the ``build`` opcode family.

BUILD_TUPLE/LIST/SET/MAP/CONST_KEY_MAP/STRING/SLICE, LIST_APPEND, SET_ADD,
MAP_ADD, LIST_EXTEND, SET_UPDATE, DICT_UPDATE, DICT_MERGE, LIST_TO_TUPLE,
FORMAT_VALUE, UNPACK_SEQUENCE and UNPACK_EX, including their errors.
"""
import sys

import pytest

from pyinterp.testing import case, check, run_case

CASES = {
    "displays": case("""
        def f(a, b):
            return (a, b), [a, b, a], {a, b}, {a: b, b: a}, {"x": a, "y": b}, (), [], {}
    """, args=(1, 2)),
    "const_key_map_with_duplicates": case("""
        def f():
            return {"a": 1, "b": 2, "a": 3}
    """, expect={"a": 3, "b": 2}),
    "map_evaluation_order": case("""
        log = []
        def k(v):
            log.append(v)
            return v
        def f():
            return {k("k1"): k("v1"), k("k2"): k("v2")}
    """),
    "starred_displays": case("""
        def f(xs, d):
            return [*xs, 0, *range(2)], (*xs,), {*xs, *"ab"}, {**d, "z": 0, **{"a": 9}}
    """, args=([1, 2], {"a": 1})),
    "star_of_generator_and_user_iterable": case("""
        class It:
            def __init__(self): self.i = 0
            def __iter__(self): return self
            def __next__(self):
                self.i += 1
                if self.i > 3:
                    raise StopIteration
                return self.i
        def f():
            return [*It()], (*(x * 2 for x in It()),), {*It()}
    """, expect=([1, 2, 3], (2, 4, 6), {1, 2, 3})),
    "star_not_iterable": case("""
        def f():
            n = 5
            return [*n]
    """, raises=TypeError),
    "star_set_not_iterable": case("""
        def f():
            n = None
            return {*n}
    """, raises=TypeError),
    "dict_unpack_not_mapping": case("""
        def f():
            n = 1
            return {**n}
    """, raises=TypeError),
    "dict_unpack_user_mapping": case("""
        class M:
            def keys(self): return ["a", "b"]
            def __getitem__(self, k): return k.upper()
        def f():
            return {**M(), "c": 1}
    """, expect={"a": "A", "b": "B", "c": 1}),
    "call_double_star_merge": case("""
        def g(**kw):
            return kw
        def f():
            a = {"x": 1}
            b = {"y": 2}
            return g(**a, **b, z=3)
    """, expect={"x": 1, "y": 2, "z": 3}),
    "call_double_star_duplicate": case("""
        def g(**kw):
            return kw
        def f():
            a = {"x": 1}
            return g(**a, **{"x": 2})
    """, raises=TypeError),
    "call_double_star_duplicate_explicit": case("""
        def g(**kw):
            return kw
        def f():
            return g(x=1, **{"x": 2})
    """, raises=TypeError),
    "call_double_star_duplicate_non_string_key": case("""
        def g(**kw):
            return kw
        def f():
            return g(**{1: 2}, **{1: 3})
    """, raises=TypeError),
    "call_double_star_not_mapping": case("""
        def g(**kw):
            return kw
        def f():
            return g(**[1])
    """, raises=TypeError),
    "call_double_star_non_string_keys": case("""
        def g(**kw):
            return kw
        def f():
            return g(**{1: 2})
    """, raises=TypeError),
    "call_star_not_iterable": case("""
        def g(*a):
            return a
        def f():
            return g(*5)
    """, raises=TypeError),
    "unhashable_in_set_and_dict": case("""
        def f():
            r = []
            for build in (lambda: {[1]}, lambda: {[]: 1}, lambda: {x: 1 for x in [[2]]}):
                try:
                    build()
                except TypeError as e:
                    r.append(str(e))
            return r
    """),
    "comprehensions_append_add": case("""
        def f(n):
            return ([i * i for i in range(n) if i % 2],
                    {i % 3 for i in range(n)},
                    {i: str(i) for i in range(n)},
                    [(i, j) for i in range(3) for j in range(i)])
    """, args=(7,)),
    "dict_comprehension_order_of_key_and_value": case("""
        log = []
        def f():
            return {log.append(("k", i)) or i: log.append(("v", i)) or -i for i in range(3)}
    """),
    "build_string_and_format": case("""
        class P:
            def __format__(self, spec): return "P[" + spec + "]"
            def __str__(self): return "str-P"
            def __repr__(self): return "repr-P"
        def f(x, w):
            p = P()
            return [f"{x}", f"{x!r}", f"{x!s}", f"{x!a}", f"{x:>{w}}", f"{3.14159:.{w}f}",
                    f"{p}", f"{p!r}", f"{p!s}", f"{p:spec}", f"a{x}b{x}c", f"{'é'!a}",
                    f"{x=}", f"{12:#x}", f"{1234567:,}"]
    """, args=("hi", 6)),
    "format_errors": case("""
        class BadFormat:
            def __format__(self, spec): return 5
        def f():
            out = []
            try:
                f"{object():d}"
            except TypeError as e:
                out.append(str(e))
            try:
                f"{BadFormat()}"
            except TypeError as e:
                out.append(str(e))
            try:
                f"{3:zz}"
            except ValueError as e:
                out.append(str(e))
            return out
    """),
    "slices": case("""
        class S:
            def __getitem__(self, k): return k
        def f():
            s = S()
            lst = list(range(10))
            return [s[1:2], s[::3], s[1:2:3], s[:], s[1:, ::2], lst[1:8:2], lst[::-3],
                    lst[-3:], slice(1, 2)]
    """),
    "unpack_sequence": case("""
        def f():
            a, b = 1, 2
            (c, d), e = [3, 4], 5
            g, h, i = "xyz"
            j, = [6]
            k, l = {"k": 1, "l": 2}
            m, n = range(2)
            return a, b, c, d, e, g, h, i, j, k, l, m, n
    """),
    "unpack_user_iterable_and_generator": case("""
        class It:
            def __iter__(self): return iter([7, 8])
        def f():
            a, b = It()
            c, d = (x for x in "cd")
            return a, b, c, d
    """, expect=(7, 8, "c", "d")),
    "unpack_too_few": case("""
        def f():
            a, b, c = [1, 2]
    """, raises=ValueError),
    "unpack_too_many": case("""
        def f():
            a, b = [1, 2, 3]
    """, raises=ValueError),
    "unpack_too_many_from_iterator": case("""
        def f():
            a, b = iter([1, 2, 3])
    """, raises=ValueError),
    "unpack_non_iterable": case("""
        def f():
            a, b = 5
    """, raises=TypeError),
    "unpack_ex": case("""
        def f():
            a, *b = [1, 2, 3]
            *c, d = "xyz"
            e, *f_, g = range(5)
            *h, = ()
            i, *j = (1,)
            (k, *l), m = ([1, 2, 3], 4)
            return a, b, c, d, e, f_, g, h, i, j, k, l, m
    """),
    "unpack_ex_too_few": case("""
        def f():
            a, b, *c, d = [1, 2]
    """, raises=ValueError),
    "unpack_ex_non_iterable": case("""
        def f():
            a, *b = None
    """, raises=TypeError),
    "list_to_tuple_in_call": case("""
        def g(*args):
            return args
        def f(xs):
            return g(1, *xs, 2, *"ab")
    """, args=([5, 6],), expect=(1, 5, 6, 2, "a", "b")),
    "set_update_and_list_extend_with_user_iter": case("""
        log = []
        class It:
            def __iter__(self):
                log.append("iter")
                yield from (1, 2)
        def f():
            return {*It(), 3}, [0, *It()]
    """),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_build(name):
    run_case(CASES[name])


@pytest.mark.parametrize("name", ["call_double_star_duplicate",
                                  "call_double_star_duplicate_explicit",
                                  "call_double_star_duplicate_non_string_key"])
def test_duplicate_keyword_while_an_exception_is_handled(name):
    """CPython 3.11 lets the merge's KeyError escape while handling another
    (3.12+ raise the usual TypeError)."""
    source, _ = CASES[name]
    outcome = check(source, under_exception=True)
    assert type(outcome.exception) is (KeyError if sys.version_info < (3, 12) else TypeError)
