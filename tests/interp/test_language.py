"""Differential tests: language coverage, construct by construct."""
import pytest

from pyinterp.testing import case, run_case

CASES = {
    # -- arithmetic and comparison chains ------------------------------------
    "arithmetic_precedence": case("""
        def f(a, b, c):
            return [a + b * c, (a + b) * c, a ** b ** 2, -a ** 2, a // b * c, a % b ** c,
                    a << b + 1, a & b | c ^ a, ~a + 1, a / b / c, 2 ** -1, divmod(-a, b)]
    """, args=(7, 3, 2)),
    "comparison_chains": case("""
        log = []
        def v(x):
            log.append(x)
            return x
        def f():
            return [v(1) < v(2) < v(3), v(3) > v(2) > v(5) > v(0), v(1) == v(1) != v(2),
                    v(1) < v(0) < v(99), 1 <= v(1) < v(2) is not None, 1 in [1] not in [[2]]]
    """),
    "comparison_chain_with_user_objects": case("""
        log = []
        class N:
            def __init__(self, v): self.v = v
            def __lt__(self, o):
                log.append((self.v, o.v))
                return self.v < o.v
        def f():
            return N(1) < N(2) < N(3), N(3) < N(1) < N(2)
    """, expect=(True, False)),
    # -- unpacking -----------------------------------------------------------
    "unpacking_forms": case("""
        def f():
            a, (b, *c), [d, e] = 1, (2, 3, 4), "de"
            first, *middle, last = range(6)
            (x, y), z = divmod(7, 2), 0
            *head, = "abc"
            for i, (j, k) in enumerate([(1, 2), (3, 4)]):
                pass
            p = q = [0]
            s = t, u = 8, 9
            return a, b, c, d, e, first, middle, last, x, y, z, head, i, j, k, p is q, s, t, u
    """),
    "unpacking_errors": case("""
        def f():
            out = []
            for src in ("(a, b) = [1]", "(a, b) = [1, 2, 3]", "a, *b, c = [1]", "a, b = 1",
                        "a, b = {'x': 1}", "[a] = []", "a, b = 'xyz'"):
                try:
                    exec(src, {})
                except (ValueError, TypeError) as e:
                    out.append((type(e).__name__, str(e)))
            return out
    """),
    "unpacking_in_for_error": case("""
        def f():
            for a, b in [(1, 2), (3,)]:
                pass
    """, raises=ValueError),
    # -- calls: *args / **kwargs / binding errors ----------------------------
    "star_args_at_call_sites": case("""
        def g(a, b=2, *args, c, d=4, **kw):
            return a, b, args, c, d, kw
        def f():
            t = (1, 2, 3)
            d = {"c": 5, "e": 6}
            return [g(*t, **d), g(0, c=1), g(*[9], *(), c=0, **{}, **{"z": 1}), g(1, 2, 3, 4, c=5, d=6)]
    """),
    "binding_error_messages": case("""
        def g(a, b, /, c, *, d, e=0): pass
        def h(x, *args, y=1, **kw): pass
        def k(): pass
        class C:
            def m(self, a): pass
        def f():
            out = []
            calls = [lambda: g(), lambda: g(1, 2), lambda: g(1, 2, 3), lambda: g(1, 2, 3, 4, d=1),
                     lambda: g(1, b=2, c=3, d=4), lambda: g(1, 2, 3, d=1, f=2),
                     lambda: g(1, 2, c=3, d=4, **{"c": 5}), lambda: h(), lambda: h(1, x=2),
                     lambda: k(1), lambda: k(a=1), lambda: C().m(), lambda: C.m(1, 2, 3),
                     lambda: g(1, 2, 3, d=4, e=5, **{"e": 6})]
            for call in calls:
                try:
                    call()
                    out.append("no error")
                except TypeError as e:
                    out.append(str(e))
            return out
    """),
    "defaults_and_keyword_only": case("""
        def g(a, b=[], *, c=None, d={}):
            b.append(a)
            return b, c, d
        def f():
            first = g(1)
            second = g(2, c="c")
            return first is second[0], second, g.__defaults__, g.__kwdefaults__
    """),
    "defaults_evaluated_at_definition": case("""
        log = []
        def val(x):
            log.append(x)
            return x
        def f():
            def g(a=val("a"), *, b=val("b")):
                return a, b
            log.append("defined")
            return g(), g(1, b=2), log
    """),
    # -- scopes: closures, nonlocal, global, del ------------------------------
    "closures_counter": case("""
        def counter():
            n = 0
            def inc(step=1):
                nonlocal n
                n += step
                return n
            def get():
                return n
            return inc, get
        def f():
            inc, get = counter()
            inc(); inc(5)
            inc2, get2 = counter()
            inc2()
            return get(), get2(), inc.__closure__[0].cell_contents
    """, expect=(6, 1, 6)),
    "closure_over_loop_variable_and_del": case("""
        def f():
            fs = []
            for i in range(3):
                def g(j=i):
                    return i, j
                fs.append(g)
            r = [g() for g in fs]
            del fs
            try:
                fs
            except UnboundLocalError as e:
                r.append(str(e))
            return r
    """),
    "nested_nonlocal_three_levels": case("""
        def f():
            x = 0
            def a():
                def b():
                    nonlocal x
                    x += 10
                    return x
                return b()
            a(); a()
            return x
    """, expect=20),
    "global_declared_in_function": case("""
        G = 1
        def setg(v):
            global G, NEW
            G = v
            NEW = v * 2
        def f():
            setg(5)
            r = (G, NEW)
            del globals()["NEW"]
            return r, "NEW" in globals()
    """, expect=((5, 10), False)),
    "del_statement_forms": case("""
        def f():
            a, b = 1, 2
            lst = [1, 2, 3, 4]
            d = {"x": 1, "y": 2}
            class O: pass
            o = O()
            o.attr = 1
            del a, lst[0], d["x"], o.attr, lst[1:]
            return "a" in dir(), b, lst, d, hasattr(o, "attr")
    """, expect=(False, 2, [2], {"y": 2}, False)),
    # -- comprehensions and generator expressions -----------------------------
    "comprehensions": case("""
        def f(n):
            m = 3
            return ([x * m for x in range(n)], {x % m for x in range(n)},
                    {x: [y for y in range(x)] for x in range(3)},
                    [x for x in range(n) if x % 2 if x > 2], sum(x for x in range(n)),
                    [[i * j for j in range(3)] for i in range(2)], list((lambda: (yield_ for yield_ in "ab"))()))
    """, args=(6,)),
    "comprehension_scope_does_not_leak": case("""
        def f():
            x = "outer"
            [x for x in range(3)]
            return x
    """, expect="outer"),
    "comprehension_in_class_body": case("""
        def f():
            class C:
                base = 10
                vals = [i for i in range(3)]
                try:
                    bad = [base + i for i in range(2)]
                except NameError as e:
                    err = str(e)
            return C.vals, C.err
    """),
    "walrus_in_comprehension_binds_outer": case("""
        def f():
            data = [1, 5, 2, 8]
            big = [y for x in data if (y := x * 2) > 4]
            return big, y
    """, expect=([10, 16], 16)),
    # -- generators -------------------------------------------------------------
    "generator_send_throw_close": case("""
        log = []
        def gen():
            try:
                received = yield "first"
                log.append(("received", received))
                while True:
                    try:
                        received = yield received
                    except ValueError as e:
                        log.append(("thrown", str(e)))
                        received = "after-throw"
            finally:
                log.append("closed")
        def f():
            g = gen()
            out = [next(g), g.send("hello"), g.throw(ValueError("bad")), g.send("x")]
            g.close()
            return out, log
    """),
    "yield_from_return_values_chain": case("""
        def leaf(n):
            yield n
            return n * 10
        def middle():
            a = yield from leaf(1)
            b = yield from leaf(2)
            return a + b
        def top():
            total = yield from middle()
            yield ("total", total)
        def f():
            return list(top())
    """, expect=[1, 2, ("total", 30)]),
    "generator_return_value_via_stopiteration": case("""
        def gen():
            yield 1
            return "result"
        def f():
            g = gen()
            next(g)
            try:
                next(g)
            except StopIteration as e:
                return e.value, e.args
    """, expect=("result", ("result",))),
    # -- with / try ---------------------------------------------------------------
    "with_statement": case("""
        import contextlib
        log = []
        class CM:
            def __enter__(self):
                log.append("enter")
                return 1
            def __exit__(self, *a):
                log.append(("exit", a[0] is None))
        @contextlib.contextmanager
        def gen_cm():
            log.append("gen enter")
            try:
                yield 2
            except ZeroDivisionError:
                log.append("gen caught")
            log.append("gen exit")
        def f():
            with CM() as a, gen_cm() as b:
                log.append(a + b)
            with gen_cm():
                1 / 0
            with contextlib.suppress(KeyError):
                {}["x"]
            return log
    """),
    "try_except_else_finally_matrix": case("""
        log = []
        def run(mode):
            try:
                log.append("try")
                if mode == "raise":
                    raise ValueError(mode)
                if mode == "return":
                    return "returned"
            except ValueError as e:
                log.append("except " + str(e))
                return "from except"
            else:
                log.append("else")
            finally:
                log.append("finally")
            return "end"
        def f():
            return [run("raise"), run("return"), run("normal")], log
    """),
    "finally_overrides_exception_with_break_and_continue": case("""
        def f():
            out = []
            for i in range(3):
                try:
                    if i == 0:
                        raise KeyError
                finally:
                    if i == 0:
                        continue
                    out.append(i)
                    if i == 1:
                        break
            return out
    """, expect=[1]),
    "except_star": case("""
        log = []
        def f():
            try:
                try:
                    raise ExceptionGroup("top", [ValueError("a"), TypeError("b"),
                                                 ExceptionGroup("nested", [ValueError("c"), KeyError("d")])])
                except* ValueError as eg:
                    log.append(("values", [str(e) for e in eg.exceptions]))
                except* TypeError as eg:
                    log.append(("types", repr(eg)))
                    raise RuntimeError("while handling types")
            except ExceptionGroup as outer:
                log.append(repr(outer))
                log.append([type(e).__name__ for e in outer.exceptions])
            return log
    """),
    "bare_raise_and_raise_from": case("""
        def g():
            try:
                int("x")
            except ValueError as e:
                raise LookupError("wrapped") from e
        def f():
            try:
                g()
            except LookupError as e:
                try:
                    raise
                except LookupError as again:
                    return again is e, type(e.__cause__).__name__, e.__suppress_context__
    """, expect=(True, "ValueError", True)),
    "raise_from_chain_propagates": case("""
        def f():
            try:
                {}["k"]
            except KeyError as e:
                raise ValueError("converted") from e
    """, raises=ValueError),
    # -- f-strings, walrus, lambdas ---------------------------------------------
    "f_strings": case("""
        def f(name, n):
            width = 8
            return [f"{name}", f"{name!r:>{width}}", f"{n:08.3f}", f"{n=}", f"{'nested ' + f'{n:.1f}'}",
                    f"{{braces}}", f"{name.upper()}{n * 2:+}", f"{[1, 2][0]}", f"{n:{'>'}{width}}",
                    f"{3:{'0'}{5}d}", f'{"q"!a}']
    """, args=("ab", 3.14159)),
    "walrus": case("""
        def f(data):
            out = []
            if (n := len(data)) > 2:
                out.append(n)
            while (item := data.pop()) != 2:
                out.append(item)
            out.append([last := x for x in range(3)])
            out.append(last)
            return out, (y := 5) + y
    """, args=lambda: ([1, 2, 3, 4],)),
    "lambdas": case("""
        def f():
            sq = lambda x: x * x
            add = lambda a, b=10, *r, **k: (a + b, r, k)
            curry = lambda a: lambda b: lambda c: a + b + c
            return (sq(4), add(1), add(1, 2, 3, z=4), curry(1)(2)(3), (lambda: sq)()(5),
                    sorted(["bb", "a", "ccc"], key=lambda s: -len(s)), sq.__name__)
    """),
    # -- callables ---------------------------------------------------------------
    "functools_partial": case("""
        import functools
        def g(a, b, *, c=0):
            return a, b, c
        def f():
            p = functools.partial(g, 1, c=3)
            pp = functools.partial(p, 2)
            return p(2), p(b=5, c=9), pp(), pp.func is g, functools.partial(max, key=len)(["a", "bbb"])
    """, expect=((1, 2, 3), (1, 5, 9), (1, 2, 3), True, "bbb")),
    "partial_binding_error": case("""
        import functools
        def g(a): pass
        def f():
            functools.partial(g, 1)(2)
    """, raises=TypeError),
    "bound_methods": case("""
        class C:
            def __init__(self, v): self.v = v
            def get(self, add=0): return self.v + add
        def f():
            c = C(3)
            m = c.get
            u = C.get
            return m(), m(add=1), u(c), m.__self__ is c, m.__func__ is C.get, [1, 2].append.__self__
    """, expect=(3, 4, 3, True, True, [1, 2])),
    "callable_objects_and_classes_as_callables": case("""
        class Mul:
            def __init__(self, k): self.k = k
            def __call__(self, x): return x * self.k
        def apply(fn, *args):
            return fn(*args)
        def f():
            return apply(Mul(3), 2), apply(Mul, 4).k, apply(int, "7"), apply(dict, a=1) if False else apply(list, "ab")
    """, expect=(6, 4, 7, ["a", "b"])),
    # -- misc -------------------------------------------------------------------
    "conditional_import_and_annotations": case("""
        def f(x: int = 1) -> str:
            y: list = []
            z: int
            return str(x) + str(y) + str(f.__annotations__)
    """),
    "string_and_bytes_methods": case("""
        def f():
            s = "Hello, World"
            return [s.lower(), s.split(", "), "-".join(["a", "b"]), s[::-1], s.find("o"),
                    b"abc".hex(), "ß".upper(), "{:>5}|{:<5}|{:^5}".format(1, 2, 3), "%5.2f" % 3.14159]
    """),
    "chained_methods_and_attribute_access": case("""
        def f():
            return "  a,b ,c ".strip().replace(" ", "").split(",")[::-1]
    """, expect=["c", "b", "a"]),
    "integer_and_float_edge_cases": case("""
        import math
        def f():
            return [10 ** 30 + 1, -7 // 2, -7 % 2, 7 // -2, round(2.5), round(3.5), round(1.23456, 3),
                    math.inf > 10 ** 400, int(-3.9), 0.1 + 0.2, 1e308 * 10, float("-inf") < 0,
                    (2 ** 64).bit_length(), (-1) ** 0.5]
    """),
    "recursion_and_mutual_recursion": case("""
        def is_even(n):
            return True if n == 0 else is_odd(n - 1)
        def is_odd(n):
            return False if n == 0 else is_even(n - 1)
        def f():
            return is_even(50), is_odd(7)
    """, expect=(True, True)),
    "print_output": case("""
        import sys
        def f():
            print("a", 1, None, [2], sep="|")
            print("no newline", end="")
            print()
            print("to stdout", file=sys.stdout)
            print(*range(3))
            return None
    """, output="a|1|None|[2]\nno newline\nto stdout\n0 1 2\n"),
    "assert_and_debug": case("""
        def f(x):
            assert isinstance(x, int), f"expected int, got {type(x).__name__}"
            return __debug__
    """, args=("s",), raises=AssertionError),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_language(name):
    run_case(CASES[name])
