"""Differential tests for what changed between the supported Pythons.

Each case runs on every supported version (through the debug loop, so the
stack-effect check runs too); a case that needs syntax newer than 3.11
(PEP 695 type parameters) is marked to run from 3.12 on.  Cases target the
version-specific machinery: the exits of ``FOR_ITER``/``SEND`` (``END_FOR``,
``END_SEND``, ``CLEANUP_THROW``), the call layout (``LOAD_GLOBAL``/
``LOAD_ATTR``/``LOAD_SUPER_ATTR`` NULLs, ``CALL_KW``, ``CALL_FUNCTION_EX``),
the intrinsics, inlined comprehensions (PEP 709), ``TO_BOOL`` and
``COMPARE_OP``'s bool bit, 3.13's superinstructions and function building.
"""
import dis
import sys

import pytest

from pyinterp.interp.decode import decode
from pyinterp.opcodes import intrinsics
from pyinterp.testing import case, run_case

PEP_695 = pytest.mark.skipif(sys.version_info < (3, 12),
                             reason="PEP 695 syntax is new in 3.12")

CASES = {
    # -- comprehensions inlined into their function (PEP 709, 3.12+) ------
    "comprehension_restores_shadowed_local": case("""
        def f():
            x = "outer"
            ys = [x for x in range(3)]
            return x, ys
    """, expect=("outer", [0, 1, 2])),
    "comprehension_variable_stays_unbound": case("""
        def f():
            [x for x in range(3)]
            try:
                return x
            except NameError as e:
                return type(e).__name__, str(e)
    """),
    "comprehension_restores_unbound_local_after_error": case("""
        def f():
            try:
                [1 // x for x in (1, 0)]
            except ZeroDivisionError:
                pass
            try:
                x
            except UnboundLocalError as e:
                return str(e)
            x = 1
    """),
    "comprehension_in_class_body": case("""
        def f():
            class C:
                base = 10
                items = [i * 2 for i in range(3)]
                pairs = {k: v for k, v in zip("ab", items)}
            return C.items, C.pairs, hasattr(C, "i")
    """),
    "comprehension_sees_and_writes_cells": case("""
        def f():
            n = 2
            fs = [lambda: n * i for i in range(3)]
            n = 5
            return [g() for g in fs]
    """),
    "locals_inside_comprehension": case("""
        def f():
            a = 1
            return [sorted(locals()) for b in range(1)]
    """),
    # -- loops: FOR_ITER exits past END_FOR (3.12: END_FOR; 3.13: + POP_TOP)
    "for_over_python_iterator_and_else": case("""
        class It:
            def __init__(self):
                self.n = 0
            def __iter__(self):
                return self
            def __next__(self):
                self.n += 1
                if self.n > 3:
                    raise StopIteration
                return self.n
        def f():
            out = []
            for v in It():
                out.append(v)
            else:
                out.append("else")
            for v in It():
                if v == 2:
                    break
            return out, v
    """),
    "nested_loops_with_generators": case("""
        def f():
            total = []
            for a in (x * x for x in range(3)):
                for b in iter([a, -a]):
                    total.append(b)
            return total
    """),
    # -- conditions: TO_BOOL and COMPARE_OP's bool bit (3.13) --------------
    "truth_of_python_objects_in_jumps": case("""
        log = []
        class B:
            def __init__(self, v):
                self.v = v
            def __bool__(self):
                log.append(("bool", self.v))
                return self.v
        class Cmp:
            def __lt__(self, other):
                log.append("lt")
                return B(True)
        def f():
            out = []
            if B(True) and not B(False):
                out.append(1)
            while Cmp() < 1:
                out.append(2)
                break
            out.append(B(False) or B(True))
            return len(out), [type(x).__name__ for x in out]
    """),
    "bool_returning_non_bool_raises": case("""
        class Bad:
            def __bool__(self):
                return 1
        def f():
            if Bad():
                return "yes"
    """, raises=TypeError),
    "comparison_result_is_kept_when_not_jumping": case("""
        class Weird:
            def __eq__(self, other):
                return "not a bool"
        def f():
            return Weird() == 1, [Weird() == 2]
    """, expect=("not a bool", ["not a bool"])),
    # -- calls: NULL placement, keywords, star-args -------------------------
    "calls_of_every_shape": case("""
        def g(*args, **kw):
            return args, kw
        class K:
            def m(self, *a, **k):
                return a, k
            @staticmethod
            def s(x, y=0):
                return x - y
        def f():
            k = K()
            m = k.m
            return (g(1, b=2), k.m(1, x=3), K.s(5, y=1), m(*[1, 2], **{"z": 4}),
                    g(*(1,), **{}), (lambda *a: a)(*range(2)), print(1, 2, sep="-"))
    """),
    "keyword_errors_name_the_callee": case("""
        def g(a):
            return a
        def f():
            try:
                g(b=1)
            except TypeError as e:
                first = str(e)
            try:
                g(**{"a": 1}, **{"a": 2})
            except TypeError as e:
                return first, str(e)
    """),
    "star_args_not_iterable": case("""
        def g(*a):
            return a
        def f():
            return g(*5)
    """, raises=TypeError),
    # -- super: LOAD_SUPER_ATTR (3.12+) --------------------------------------
    "zero_and_two_argument_super": case("""
        class A:
            x = "A.x"
            def m(self, v=0):
                return ("A.m", v)
            @classmethod
            def c(cls):
                return ("A.c", cls.__name__)
            @property
            def p(self):
                return "A.p"
        class B(A):
            x = "B.x"
            def m(self, v=0):
                return super().m(v + 1), super().x, super(B, self).m(v), super().p
            @classmethod
            def c(cls):
                return super().c(), super(B, cls).c()
        def f():
            return B().m(1), B.c()
    """),
    "super_when_the_name_is_rebound": case("""
        calls = []
        real_super = super
        def super(*args):
            calls.append(len(args))
            return real_super(B, args[1] if args else B())
        class A:
            def m(self):
                return "A.m"
        class B(A):
            def m(self):
                return super().m(), super(B, self).m()
        def f():
            return B().m(), calls
    """),
    "super_errors": case("""
        class A:
            def m(self):
                return 1
        class B(A):
            def m(self):
                return super().missing
            def n(self):
                return super(int, self).m()
        def f():
            out = []
            for name in ("m", "n"):
                try:
                    getattr(B(), name)()
                except (AttributeError, TypeError) as e:
                    out.append((type(e).__name__, str(e)))
            return out
    """),
    "super_in_init_with_keywords": case("""
        class A:
            def __init__(self, *, a, b=2):
                self.ab = (a, b)
        class B(A):
            def __init__(self):
                super().__init__(a=1, b=3)
        def f():
            return B().ab
    """, expect=(1, 3)),
    # -- class bodies: LOAD_LOCALS + LOAD_FROM_DICT_OR_DEREF (3.12+) ---------
    "class_body_free_variables": case("""
        def f():
            z = "cell"
            w = "cell-w"
            class C:
                z = "class"
                a = z
                b = w
                def m(self):
                    return z
            return C.a, C.b, C().m()
    """, expect=("class", "cell-w", "cell")),
    "class_body_unbound_free_variable": case("""
        def f():
            class C:
                a = later
            later = 1
    """, raises=NameError),
    "class_attributes_set_by_the_compiler": case("""
        def f():
            class C:
                def __init__(self):
                    self.a = 1
                    self.b = 2
            return sorted(k for k in vars(C) if not k.startswith("__") or k in (
                "__static_attributes__", "__firstlineno__", "__qualname__", "__module__"))
    """),
    # -- slices: BINARY_SLICE / STORE_SLICE (3.12+) -------------------------
    "slices_of_python_containers": case("""
        class S:
            def __init__(self):
                self.log = []
            def __getitem__(self, key):
                self.log.append(("get", key.start, key.stop, key.step))
                return key.start
            def __setitem__(self, key, value):
                self.log.append(("set", key.start, key.stop, value))
        def f():
            s = S()
            a = s[1:2]
            s[3:] = "v"
            xs = list(range(6))
            xs[1:3] = "ab"
            return a, s[::2], s.log, xs, xs[-2:], "hello"[1:-1]
    """),
    # -- f-strings: FORMAT_VALUE / CONVERT_VALUE, FORMAT_SIMPLE, FORMAT_WITH_SPEC
    "f_strings_with_python_dunders": case("""
        class V:
            def __repr__(self):
                return "V-repr"
            def __str__(self):
                return "V-str"
            def __format__(self, spec):
                return "V<" + spec + ">"
        def f():
            v = V()
            w = 7
            return f"{v} {v!r} {v!s} {v!a} {v:>{w}} {w:03d} {'x'!r:>4} {w}"
    """),
    # -- functions: MAKE_FUNCTION flags / SET_FUNCTION_ATTRIBUTE (3.13) ------
    "functions_with_every_optional_part": case("""
        def f():
            n = 3
            def g(a, b=1, *args, c, d=4, **kw) -> int:
                return a + b + c + d + n
            return (g(1, c=2), g.__defaults__, g.__kwdefaults__, g.__annotations__,
                    [c.cell_contents for c in g.__closure__], g.__qualname__)
    """),
    "closures_over_loop_and_class": case("""
        def f():
            out = []
            for i in range(3):
                def g(i=i):
                    return i * 10
                out.append(g)
            class C:
                def m(self):
                    return __class__.__name__
            return [h() for h in out], C().m()
    """),
    # -- generators: PEP 479 conversion by the STOPITERATION_ERROR intrinsic -
    "generator_raising_stopiteration": case("""
        def gen():
            yield 1
            raise StopIteration("inner")
        def f():
            return list(gen())
    """, raises=RuntimeError),
    "generator_next_on_exhausted_iterator": case("""
        def gen(it):
            while True:
                yield next(it)
        def f():
            try:
                return list(gen(iter([1, 2])))
            except RuntimeError as e:
                return str(e), type(e.__cause__).__name__, e.__suppress_context__
    """),
    "coroutine_raising_stopiteration": case("""
        async def co():
            raise StopIteration
        def f():
            c = co()
            try:
                c.send(None)
            except RuntimeError as e:
                return str(e)
    """, expect="coroutine raised StopIteration"),
    "async_generator_raising_stop_async_iteration": case("""
        import asyncio
        async def agen():
            yield 1
            raise StopAsyncIteration
        async def main():
            out = []
            try:
                async for v in agen():
                    out.append(v)
            except RuntimeError as e:
                out.append(str(e))
            return out
        def f():
            return asyncio.run(main())
    """, expect=[1, "async generator raised StopAsyncIteration"]),
    # -- yield from: SEND exits past END_SEND; CLEANUP_THROW (3.12+) --------
    "yield_from_return_value_and_throw": case("""
        log = []
        def inner():
            try:
                x = yield 1
                log.append(("sent", x))
                yield 2
            except KeyError:
                return "caught"
            return "done"
        def outer():
            r = yield from inner()
            log.append(("result", r))
            yield r
        def f():
            g = outer()
            a = next(g), g.send("s"), g.throw(KeyError)
            h = outer()
            b = list(h)
            k = outer()
            next(k)
            try:
                k.throw(ValueError("v"))
            except ValueError as e:
                c = str(e)
            return a, b, c
    """),
    "yield_from_close_and_throw_into_non_generator": case("""
        log = []
        class Sub:
            def __iter__(self):
                return self
            def __next__(self):
                return "item"
            def throw(self, *exc):
                log.append("throw")
                raise StopIteration("from throw")
            def close(self):
                log.append("close")
        def outer():
            r = yield from Sub()
            yield ("after", r)
        def f():
            g = outer()
            next(g)
            first = g.throw(KeyError)
            h = outer()
            next(h)
            h.close()
            return first, log
    """),
    "await_chain": case("""
        import asyncio
        class Aw:
            def __await__(self):
                v = yield from asyncio.sleep(0, "slept").__await__()
                return v + "!"
        async def inner():
            return await Aw()
        async def main():
            return [await inner(), await asyncio.gather(inner(), inner())]
        def f():
            return asyncio.run(main())
    """),
    # -- exceptions: except* (PREP_RERAISE_STAR intrinsic on 3.12+) ----------
    "except_star_reraise_and_raise": case("""
        def f():
            try:
                try:
                    raise ExceptionGroup("eg", [ValueError(1), TypeError(2), KeyError(3)])
                except* ValueError:
                    raise
                except* TypeError as e:
                    raise RuntimeError("from handler") from e
            except BaseException as e:
                return repr(e), [repr(x) for x in getattr(e, "exceptions", ())]
    """),
    # -- intrinsics --------------------------------------------------------
    "unary_positive_and_list_to_tuple": case("""
        class P:
            def __pos__(self):
                return "pos"
        def g(*a):
            return a
        def f():
            return +P(), +3, g(*[1, 2], 3), (*range(2), 5)
    """),
    "import_star_in_exec": case("""
        def f():
            ns = {}
            exec("from string import *", ns)
            return sorted(k for k in ns if not k.startswith("__"))[:5]
    """),
    "interactive_expression_statement": case("""
        import sys
        def f():
            code = compile("6 * 7", "<input>", "single")
            exec(code, {})
            return "done"
    """, output="42\n"),
    # -- found by the fuzzer (not version-specific) ---------------------------
    "exception_leaving_a_frame_drops_its_stack": case("""
        log = []
        class Tracked:
            def __del__(self):
                log.append("del")
        def boom():
            1 / 0
        def f():
            return (Tracked(), boom())
    """, raises=ZeroDivisionError),
    "generator_closed_in_handler_frees_its_locals": case("""
        log = []
        class Tracked:
            def __del__(self):
                log.append("del")
        def gen():
            try:
                {}[""]
            except KeyError:
                yield 0
            finally:
                t = Tracked()
        def f():
            value = next(gen())
            log.append("after")
            return value
    """, expect=0),
    "warnings_from_c_code_name_the_program": case("""
        import warnings
        class Odd:
            def __index__(self):
                return True
        def f():
            out = []
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("default")
                for _ in range(2):
                    range(Odd())       # reported once: same line, same registry
                range(Odd())
                out.append(len(warnings.filters) > 0)
            out.append([(x.category.__name__, x.filename, x.lineno) for x in w])
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("once")
                range(Odd())
                range(Odd())
            out.append([(x.category.__name__, x.filename, x.lineno) for x in w])
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    range(Odd())
                except DeprecationWarning as e:
                    out.append(type(e).__name__)
            return out
    """),
    # -- decoding: EXTENDED_ARG and long jumps --------------------------------
    "long_function_with_extended_args": case(
        "def f(flag):\n"
        + "".join("    v%d = %d\n" % (i, i + 1000) for i in range(300))
        + "    total = 0\n"
        + "    for i in range(3):\n"
        + "        if flag:\n"
        + "            total += v299 - v0\n"
        + "    return total, v150\n",
        args=(True,), expect=(897, 1150)),
}

PEP_695_CASES = {
    "generic_function": case("""
        def g[T: int, *Ts, **P](a: T) -> T:
            return a
        def f():
            T, Ts, P = g.__type_params__
            return (g(3), [type(p).__name__ for p in g.__type_params__],
                    T.__name__, T.__bound__, T.__constraints__, repr(Ts), repr(P),
                    g.__annotations__["a"] is T)
    """),
    "generic_function_with_constraints_and_forward_bound": case("""
        def g[T: (int, str), U: Later]():
            return T, U
        class Later:
            pass
        def f():
            T, U = g()
            return T.__constraints__, U.__bound__ is Later, T.__infer_variance__
    """),
    "type_alias": case("""
        type Alias[K] = list[K]
        type Plain = int | None
        def f():
            return (Alias.__name__, Alias.__value__, Alias[int], Plain.__value__,
                    Alias.__type_params__[0].__name__, type(Alias).__name__)
    """),
    "type_alias_statement_in_function": case("""
        def f():
            type Pair[A] = tuple[A, A]
            return Pair.__value__, Pair[str]
    """),
    "generic_class": case("""
        class Box[T]:
            def __init__(self, item: T):
                self.item = item
            def get(self) -> T:
                return self.item
        class Sub[U](Box[U]):
            pass
        def f():
            b = Box[int](3)
            return (b.get(), Box.__type_params__[0].__name__, Box.__mro__[1:],
                    Sub.__orig_bases__, Box[int], type(Sub[str]).__name__)
    """),
    "generic_class_with_type_var_tuple": case("""
        class Arr[*Shape, D]:
            pass
        def f():
            return Arr.__type_params__, Arr.__orig_bases__, Arr[int, str]
    """),
    "generic_method_annotation_scope_sees_class_names": case("""
        class C:
            X = int
            def m[T](self, a: X, b: T) -> list[T]:
                return [a, b]
            type Alias = list[X]
        def f():
            return C().m(1, 2), C.m.__annotations__, C.Alias.__value__
    """),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_version_sensitive(name):
    run_case(CASES[name])


@PEP_695
@pytest.mark.parametrize("name", sorted(PEP_695_CASES))
def test_pep_695(name):
    run_case(PEP_695_CASES[name])


def test_every_intrinsic_has_an_implementation():
    """The decoder names intrinsics by ``dis``; each one this Python has is handled."""
    for table, names in ((intrinsics.INTRINSICS_1, getattr(dis, "_intrinsic_1_descs", [])),
                         (intrinsics.INTRINSICS_2, getattr(dis, "_intrinsic_2_descs", []))):
        missing = [n for n in names if not n.endswith("_INVALID") and n not in table]
        assert missing == []


def test_loop_and_send_exits_skip_what_cpython_skips():
    """``FOR_ITER``/``SEND`` targets land past ``END_FOR`` (and 3.13's POP_TOP)
    and ``END_SEND``."""
    def gen(xs):
        for x in xs:
            yield x
        return (yield from xs)

    instructions = decode(gen.__code__).instructions
    for ins in instructions:
        if ins.opname in ("FOR_ITER", "SEND"):
            before = instructions[ins.target - 1].opname
            assert before not in ("FOR_ITER", "SEND")
            if sys.version_info >= (3, 12):
                assert before in ("END_FOR", "END_SEND", "POP_TOP")
