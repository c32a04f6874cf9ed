"""Differential tests: the ``calls`` opcode family.

PRECALL/CALL with positional and keyword arguments (KW_NAMES), LOAD_METHOD,
PUSH_NULL, CALL_FUNCTION_EX, MAKE_FUNCTION (defaults, keyword-only
defaults, annotations, closures) and LOAD_BUILD_CLASS; CPython's argument
binding errors.
"""
import pytest

from pyinterp.testing import case, run_case

CASES = {
    "positional_and_keyword": case("""
        def g(a, b, c=3, *, d, e=5):
            return a, b, c, d, e
        def f():
            return [g(1, 2, d=4), g(1, b=2, d=4, e=6), g(a=1, b=2, c=0, d=9), g(*(1, 2), **{"d": 0})]
    """),
    "varargs_varkw": case("""
        def g(a, /, b, *args, c, **kw):
            return a, b, args, c, kw
        def f():
            return [g(1, 2, c=3), g(1, 2, 3, 4, c=5, z=6, a=7), g(*range(4), c=0, **{"b2": 1})]
    """),
    "defaults_are_evaluated_once": case("""
        def make(log=[]):
            log.append(len(log))
            return log
        def f():
            make(); make()
            return make()
    """, expect=[0, 1, 2]),
    "make_function_flags": case("""
        def f():
            x = 10
            def g(a: int, b: "str" = "B", *, c: float = 1.5) -> list:
                return [a, b, c, x]
            return g(1), g.__defaults__, g.__kwdefaults__, g.__annotations__, g.__name__, g.__qualname__
    """),
    "lambda_defaults_and_closure": case("""
        def f():
            fs = [lambda i=i: i * 2 for i in range(3)]
            late = [lambda: i for i in range(3)]
            return [g() for g in fs], [g() for g in late]
    """, expect=([0, 2, 4], [2, 2, 2])),
    "missing_positional": case("""
        def g(a, b): pass
        def f():
            g(1)
    """, raises=TypeError),
    "missing_two_positional": case("""
        def g(a, b, c): pass
        def f():
            g(1)
    """, raises=TypeError),
    "too_many_positional": case("""
        def g(a, b=1): pass
        def f():
            g(1, 2, 3)
    """, raises=TypeError),
    "unexpected_keyword": case("""
        def g(a): pass
        def f():
            g(1, zz=2)
    """, raises=TypeError),
    "multiple_values": case("""
        def g(a, b): pass
        def f():
            g(1, a=2)
    """, raises=TypeError),
    "positional_only_by_keyword": case("""
        def g(a, /, b): pass
        def f():
            g(a=1, b=2)
    """, raises=TypeError),
    "missing_keyword_only": case("""
        def g(*, k, j): pass
        def f():
            g()
    """, raises=TypeError),
    "method_binding_error_names_qualname": case("""
        class C:
            def m(self, x): return x
        def f():
            C().m(1, 2)
    """, raises=TypeError),
    "class_takes_no_arguments": case("""
        class C: pass
        def f():
            C(1)
    """, raises=TypeError),
    "init_missing_argument": case("""
        class C:
            def __init__(self, x): self.x = x
        def f():
            C()
    """, raises=TypeError),
    "not_callable": case("""
        def f():
            x = 5
            return x()
    """, raises=TypeError),
    "not_callable_none_with_kwargs": case("""
        def f():
            x = None
            return x(a=1)
    """, raises=TypeError),
    "call_ex_non_iterable_message": case("""
        def g(*a): pass
        def f():
            g(*None)
    """, raises=TypeError),
    "call_ex_user_iterable_and_mapping": case("""
        class It:
            def __iter__(self): return iter((1, 2))
        class M:
            def keys(self): return ["k"]
            def __getitem__(self, key): return key * 2
        def g(*a, **kw): return a, kw
        def f():
            return g(*It(), **M())
    """, expect=((1, 2), {"k": "kk"})),
    "load_method_variants": case("""
        class C:
            def m(self): return "method"
            @classmethod
            def cm(cls): return ("classmethod", cls.__name__)
            @staticmethod
            def sm(): return "staticmethod"
        def f():
            c = C()
            r = [c.m(), c.cm(), c.sm(), C.cm(), C.sm(), C.m(c)]
            c.m = lambda: "instance attribute"
            r.append(c.m())
            r.append([3, 1, 2].index(1))
            r.append("a,b".split(","))
            r.append({}.get("x", "dflt"))
            return r
    """),
    "builtin_calls_with_keywords": case("""
        def f():
            return (sorted([3, 1, 2], reverse=True), int("ff", base=16),
                    print("x", "y", sep="-", end="!\\n"), dict(a=1, b=2), "{a}".format(a=5))
    """, output="x-y!\n"),
    "nested_calls_and_evaluation_order": case("""
        log = []
        def t(v):
            log.append(v)
            return v
        def g(*a, **k):
            return a, k
        def f():
            return g(t(1), t(2), x=t(3), *[t(4)], **{"y": t(5)})
    """),
    "build_class_via_call": case("""
        def f():
            class Base:
                def hello(self): return "base"
            class Child(Base):
                def hello(self): return "child+" + super().hello()
            return Child().hello(), Child.__qualname__, Child.__module__, Child.__mro__[1] is Base
    """),
    "recursion_result": case("""
        def fact(n):
            return 1 if n <= 1 else n * fact(n - 1)
        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)
        def f():
            return fact(30), fib(12)
    """),
    "call_returns_function_and_calls_it": case("""
        def adder(n):
            def add(x):
                return x + n
            return add
        def f():
            return adder(3)(4), (lambda *a, **k: (a, k))(1, b=2)
    """, expect=(7, ((1,), {"b": 2}))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_calls(name):
    run_case(CASES[name])
