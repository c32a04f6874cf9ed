"""Lookasides: builtins that need the caller's frame or call back into Python.

Two kinds of tests:

* differential ones (same observable behaviour as CPython);
* "was it interpreted?" ones: a callback handed to ``map``/``sorted``/...
  records ``type(sys._getframe(0))``.  Under pyinterp that is the interpreter's
  frame stand-in; had the C builtin called the callback natively, it would be
  a real frame.
"""
import sys
import textwrap
import types

import pytest

import pyinterp
from pyinterp.testing import case, check, load_module, run_case

CASES = {
    # -- super() ---------------------------------------------------------------
    "super_forms": case("""
        class A:
            def m(self): return "A.m"
            @classmethod
            def c(cls): return "A.c:" + cls.__name__
            @staticmethod
            def s(): return "A.s"
        class B(A):
            def m(self):
                inner = lambda: "no super here"
                return ("B", super().m(), super(B, self).m(), inner())
            @classmethod
            def c(cls): return super().c()
            def s_via_super(self): return super().s()
        def f():
            b = B()
            return b.m(), B.c(), b.s_via_super()
    """),
    "super_in_nested_function_without_args": case("""
        class A:
            def m(self):
                def inner():
                    return super()
                return inner()
        def f():
            A().m()
    """, raises=RuntimeError),
    "super_with_explicit_args_outside_class": case("""
        class A:
            def hi(self): return "hi"
        class B(A):
            pass
        def f():
            return super(B, B()).hi(), super(B, B).hi(B())
    """, expect=("hi", "hi")),
    # -- locals / globals / vars / dir ---------------------------------------
    "locals_snapshot_contents": case("""
        def f(a, *args, k=3, **kw):
            b = 2
            def inner():
                return b
            del a
            return sorted(locals().items(), key=lambda kv: kv[0])[:4], sorted(locals())
    """, args=(1, 9), kwargs={"z": 0}),
    "locals_in_class_body": case("""
        def f():
            class C:
                x = 1
                y = sorted(k for k in locals() if not k.startswith("__"))
                snapshot = dict(locals())
            return C.y, sorted(k for k in C.snapshot if not k.startswith("__"))
    """, expect=(["x"], ["x", "y"])),
    "globals_is_module_namespace": case("""
        G = "module value"
        def f():
            g = globals()
            g["CREATED"] = 1
            return g["G"], CREATED, g is globals(), g["__name__"]
    """, expect=("module value", 1, True, "difftest")),
    "vars_forms": case("""
        class O:
            def __init__(self): self.a = 1
        def f():
            x = 5
            out = [vars()["x"], vars(O()), sorted(vars(O).keys())[:2]]
            try:
                vars(5)
            except TypeError as e:
                out.append(str(e))
            return out
    """),
    "dir_forms": case("""
        class D:
            def __dir__(self): return ["zeta", "alpha"]
        def f():
            a = 1
            b = 2
            return dir(), dir(D()), "append" in dir([]), dir(D)[-1]
    """),
    # -- eval / exec -----------------------------------------------------------
    "eval_implicit_namespaces": case("""
        G = 100
        def f(a):
            b = 2
            return eval("a + b + G"), eval("[G * i for i in range(3)]"), eval(" 1 + 1")
    """, args=(3,), expect=(105, [0, 100, 200], 2)),
    # 3.12+ inline the comprehension into the eval'd code (PEP 709), so it
    # sees the function's locals that eval was given.
    "eval_comprehension_cannot_see_function_locals": case("""
        def f(a):
            return eval("[a * i for i in range(3)]")
    """, args=(3,), **({"raises": NameError} if sys.version_info < (3, 12)
                       else {"expect": [0, 3, 6]})),
    "eval_explicit_namespaces": case("""
        def f():
            ns = {"x": 2}
            loc = {"y": 3}
            return eval("x * y", ns, loc), eval("len(ns)", {"ns": ns}), "__builtins__" in ns
    """, expect=(6, 2, True)),
    "exec_implicit_namespaces": case("""
        G = 1
        def f():
            x = 10
            exec("global G\\nG = x + 1\\nz = 'local to exec dict'")
            return G
    """, expect=11),
    "exec_defines_function_and_class": case("""
        def f():
            ns = {}
            exec("def g(v):\\n    return v * 2\\nclass K:\\n    val = g(4)", ns)
            return ns["g"](5), ns["K"].val, ns["K"].__module__
    """, expect=(10, 8, "builtins")),
    "exec_code_object_and_errors": case("""
        def f():
            code = compile("r = 1 / d", "<code>", "exec")
            ns = {"d": 4}
            exec(code, ns)
            out = [ns["r"]]
            try:
                exec("1 / 0", {})
            except ZeroDivisionError as e:
                out.append(str(e))
            try:
                eval("def")
            except SyntaxError as e:
                out.append(e.msg)
            return out
    """),
    # -- frames ------------------------------------------------------------------
    "getframe_attributes": case("""
        import sys
        def callee():
            fr = sys._getframe(0)
            back = sys._getframe(1)
            line = sys._getframe(0).f_lineno
            return (fr.f_code.co_name, line, sorted(fr.f_locals), back.f_code.co_name,
                    fr.f_back.f_code.co_name, fr.f_globals is globals(), back.f_locals["marker"],
                    back.f_lineno)
        def f():
            marker = "caller local"
            return callee()
    """),
    "getframe_line_numbers_follow_execution": case("""
        import sys
        def f():
            lines = [sys._getframe().f_lineno]
            lines.append(
                sys._getframe().f_lineno
            )
            for _ in range(2):
                lines.append(sys._getframe(0).f_lineno)
            return [n - lines[0] for n in lines]
    """),
    "getframe_too_deep": case("""
        import sys
        def f():
            return sys._getframe(10 ** 6)
    """, raises=ValueError),
    "inspect_currentframe": case("""
        import inspect
        def who_called():
            return inspect.currentframe().f_back.f_code.co_name
        def f():
            frame = inspect.currentframe()
            return frame.f_code.co_name, who_called(), frame.f_locals["frame"] is frame
    """, expect=("f", "f", True)),
    # -- callback-taking builtins ---------------------------------------------
    "map_filter": case("""
        log = []
        def sq(x):
            log.append(x)
            return x * x
        def f():
            out = [list(map(sq, [1, 2, 3])), list(map(lambda a, b: a + b, "ab", "cd")),
                   list(filter(lambda x: x % 2, range(6))), list(filter(None, [0, 1, "", "a"]))]
            lazy = map(sq, [7, 8])
            log.append("before consuming")
            out.append(next(lazy))
            return out
    """),
    "sorted_and_list_sort": case("""
        log = []
        class V:
            def __init__(self, v): self.v = v
            def __lt__(self, o): return self.v < o.v
            def __repr__(self): return "V(%d)" % self.v
        def key(s):
            log.append(s)
            return s.lower()
        def f():
            words = ["b", "A", "c", "B"]
            out = [sorted(words, key=key), sorted(words, key=key, reverse=True), sorted([V(2), V(1)])]
            words.sort(key=len)
            words.sort(key=key)
            out.append(words)
            vs = [V(3), V(1), V(2)]
            vs.sort(reverse=True)
            out.append(vs)
            return out
    """),
    "sort_key_raising": case("""
        def f():
            data = [3, 1, 2]
            def bad(x):
                if x == 2:
                    raise KeyError("key failed")
                return x
            try:
                data.sort(key=bad)
            except KeyError as e:
                return str(e), data
    """),
    "sort_unorderable": case("""
        class U: pass
        def f():
            return sorted([U(), U()])
    """, raises=TypeError),
    "min_max": case("""
        def f():
            words = ["apple", "fig", "banana"]
            return (min(words, key=len), max(words, key=len), max(3, 9, 2), min([], default="none"),
                    max([(1, "b"), (1, "a")]), min("bca"), max([1, 5, 2], key=lambda x: -x))
    """),
    "min_max_errors": case("""
        def f():
            out = []
            for call in (lambda: min([]), lambda: max(), lambda: max(1, 2, default=0), lambda: min(5)):
                try:
                    call()
                except (TypeError, ValueError) as e:
                    out.append((type(e).__name__, str(e)))
            return out
    """),
    "reduce": case("""
        import functools
        log = []
        def add(a, b):
            log.append((a, b))
            return a + b
        def f():
            out = [functools.reduce(add, [1, 2, 3]), functools.reduce(add, [], "init"),
                   functools.reduce(lambda acc, c: c + acc, "abc", "")]
            try:
                functools.reduce(add, [])
            except TypeError as e:
                out.append(str(e))
            return out
    """),
    # CPython's test_funcattrs (bpo-42990): a function made from globals
    # without __builtins__ takes the calling frame's builtins.
    "function_constructor_takes_the_callers_builtins": case("""
        CODE = (
            "def func3(s): pass\\n"
            "func4 = type(func3)(func3.__code__, {})\\n"
            "func5 = type(func3)(func3.__code__, {'__builtins__': {'x': 1}})\\n")
        def f():
            safe_builtins = {'None': None}
            ns = {'type': type, '__builtins__': safe_builtins}
            exec(CODE, ns)
            plain = type(f)(f.__code__, {})
            return (ns['func4'].__builtins__ is safe_builtins,
                    '__builtins__' in ns['func4'].__globals__,
                    ns['func5'].__builtins__, plain.__builtins__ is f.__builtins__)
    """, expect=(True, False, {"x": 1}, True)),
    # CPython's test_sort: list.sort empties the list while it sorts and
    # raises ValueError if the key or a comparison changed it (even back).
    "sort_detects_mutation": case("""
        from functools import cmp_to_key
        class C:
            def __init__(self, v):
                self.v = v
            def __lt__(self, other):
                L.append(3)
                L.pop()
                return self.v < other.v
        def f():
            global L
            out = []
            data = list(range(5))
            def key(x):
                out.append(len(data))
                data[:] = range(7)
                return -x
            try:
                data.sort(key=key)
            except ValueError as e:
                out.append((str(e), data))
            L = [C(2), C(1)]
            try:
                L.sort()
            except ValueError as e:
                out.append(str(e))
            L = [1, 2]
            def cmp(x, y):
                L.append(3)
                del L[:]
                return (x > y) - (x < y)
            try:
                L.sort(key=cmp_to_key(cmp))
            except ValueError as e:
                out.append((str(e), L))
            words = ["b", "A", "c"]
            words.sort(key=str.lower, reverse=True)
            mixed = [C(3), C(1)]
            mixed.sort(key=lambda c: (c.v % 2, c))
            return out, words, [c.v for c in mixed]
    """),
    # CPython's test_descr (special method lookup): list(), tuple() and
    # sorted() ask the iterable for a length hint after its iterator: a
    # Python __len__ or __length_hint__ runs (through its descriptor), and
    # its errors are theirs.
    "consumers_ask_for_a_length_hint": case("""
        log = []
        class Descr:
            def __init__(self, impl):
                self.impl = impl
            def __get__(self, obj, owner):
                log.append("get")
                return self.impl.__get__(obj, owner)
        class MyExc(Exception):
            pass
        class Err:
            def __get__(self, obj, owner):
                raise MyExc
        def zero(self):
            log.append("hint")
            return 0
        def f():
            out = []
            impls = (Descr(zero), Err(), lambda self: -1, lambda self: "x",
                     lambda self: 1 / 0, lambda self: NotImplemented, lambda self: {}[0])
            for impl in impls:
                class X:
                    def __iter__(self):
                        log.append("iter")
                        return iter([2, 1])
                    __length_hint__ = impl
                for consumer in (list, tuple, sorted, set):
                    try:
                        out.append(consumer(X()))
                    except Exception as e:
                        out.append((type(e).__name__, str(e)))
            class L:
                def __iter__(self):
                    return iter([3])
                def __len__(self):
                    log.append("len")
                    return 1
            class LT(L):
                def __len__(self):
                    raise TypeError("no")
                def __length_hint__(self):
                    log.append("hint")
                    return 1
            out.append((list(L()), list(LT())))
            return out, log
    """),
    "iter_callable_sentinel": case("""
        def f():
            state = [0]
            def tick():
                state[0] += 1
                return state[0]
            lines = iter(["a", "b", "", "c"])
            return list(iter(tick, 4)), list(iter(lambda: next(lines), ""))
    """, expect=([1, 2, 3], ["a", "b"])),
    # C iterators over pyinterp's stand-ins (a callback, a sequence with a
    # Python __getitem__) pickle and copy as they do natively (CPython's
    # test_iter checks the first two).
    "stand_ins_pickle_as_their_targets": case("""
        import copy, pickle
        class Counter:
            def __init__(self):
                self.i = 0
            def __call__(self):
                self.i += 1
                if self.i > 6:  # (a copy shares the counter: it may pass 4)
                    raise StopIteration
                return self.i
        class Seq:
            def __getitem__(self, i):
                if i < 4:
                    return i * i
                raise IndexError
        def double(x):
            return 2 * x
        def f():
            out = []
            for it in (iter(Counter(), 4), iter(Seq()), map(double, [5, 6]),
                       filter(double, [0, 7])):
                next(it)
                for proto in range(pickle.HIGHEST_PROTOCOL + 1):
                    out.append(list(pickle.loads(pickle.dumps(it, proto))))
                out.append(list(copy.copy(it)))
                out.append(list(it))
            return out
    """),
    "getattr_setattr_hasattr_with_python_hooks": case("""
        log = []
        class H:
            def __getattr__(self, name):
                log.append(name)
                if name == "ok":
                    return "dynamic"
                raise AttributeError(name)
        def f():
            h = H()
            setattr(h, "x", 1)
            return getattr(h, "ok"), getattr(h, "nope", None), hasattr(h, "x"), hasattr(h, "y"), log
    """),
    "len_str_repr_format_bool_protocols": case("""
        class P:
            def __len__(self): return 4
            def __str__(self): return "P-str"
            def __repr__(self): return "P-repr"
            def __format__(self, spec): return "P-format[" + spec + "]"
            def __bool__(self): return False
        def f():
            p = P()
            return len(p), str(p), repr(p), format(p, "x"), bool(p), ascii(p), "%s|%r" % (p, p)
    """),
    "len_errors": case("""
        class Neg:
            def __len__(self): return -1
        class NotInt:
            def __len__(self): return "3"
        def f():
            out = []
            for obj in (Neg(), NotInt(), 5):
                try:
                    len(obj)
                except (TypeError, ValueError) as e:
                    out.append(str(e))
            return out
    """),
    "print_writes_pieces_before_a_failing_str": case("""
        class S:
            def __str__(self): raise KeyError("no str")
        def f():
            print("a", 1, S(), "never")
    """, raises=KeyError, output="a 1 "),
    "print_to_python_file_object": case("""
        log = []
        class F:
            def write(self, s): log.append(s)
            def flush(self): log.append("flush")
        class S:
            def __str__(self): return "S!"
        def f():
            print("a", 1, S(), sep="-", end="!", file=F(), flush=True)
            print(file=F())
            print(S(), file=None)
            return log
    """, output="S!\n"),
    "print_errors": case("""
        def f():
            out = []
            for kw in ({"sep": 5}, {"end": b"x"}, {"bogus": 1}):
                try:
                    print("x", object(), **kw)
                except TypeError as e:
                    out.append((str(e), e.__context__))
            return out
    """, output=""),
    "builtins_iterating_user_iterables": case("""
        class Gen:
            def __iter__(self):
                yield from (3, 1, 2)
        def f():
            g = Gen()
            return (list(g), tuple(g), set(g), sorted(g), sum(g), any(g), all(g), list(zip(g, g)),
                    dict(zip(g, "abc")), list(enumerate(g)), "".join(str(x) for x in g), max(g), min(g))
    """),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lookasides(name):
    run_case(CASES[name])


# -- locals(): CPython returns the frame's one f_locals dict -------------------
LOCALS_IDENTITY = textwrap.dedent("""
    def f():
        x = 1
        first = locals()
        y = 2
        second = locals()
        return first is second, sorted(first)
""")
EXEC_WRITES_LOCALS = textwrap.dedent("""
    def f():
        exec("created = 5")
        return locals().get("created")
""")


PEP_667 = sys.version_info >= (3, 13)  # locals() of a function is a new snapshot each call


def test_locals_returns_the_same_dict_per_frame():
    check(LOCALS_IDENTITY, expect=(False, ["x"]) if PEP_667 else (True, ["first", "x", "y"]))


def test_exec_writes_are_visible_through_locals():
    check(EXEC_WRITES_LOCALS, expect=None if PEP_667 else 5)


def test_f_lineno_of_running_frame_follows_later_lines():
    check(textwrap.dedent("""
        import sys
        def f():
            fr = sys._getframe(0)
            first = fr.f_lineno
            x = 1
            return first, fr.f_lineno - first
    """))


# -- were the callbacks interpreted? -------------------------------------------
CALLBACK_SOURCE = textwrap.dedent("""
    import sys, functools
    seen = []
    def probe(*args):
        seen.append(type(sys._getframe(0)))
        return args[-1] if args else 0
    def key_probe(x):
        seen.append(type(sys._getframe(0)))
        return -x
    class Ordered:
        def __init__(self, v): self.v = v
        def __lt__(self, other):
            seen.append(type(sys._getframe(0)))
            return self.v < other.v
        def __gt__(self, other):
            seen.append(type(sys._getframe(0)))
            return self.v > other.v
    def run_map(): return list(map(probe, [1, 2]))
    def run_filter(): return list(filter(probe, [1, 0, 2]))
    def run_sorted(): return sorted([1, 3, 2], key=key_probe)
    def run_list_sort():
        data = [1, 3, 2]
        data.sort(key=key_probe)
        return data
    def run_sorted_dunder(): return [o.v for o in sorted([Ordered(2), Ordered(1), Ordered(3)])]
    def run_min(): return min([1, 3, 2], key=key_probe)
    def run_max(): return max([1, 3, 2], key=key_probe)
    def run_max_dunder(): return max(Ordered(1), Ordered(5)).v
    def run_reduce(): return functools.reduce(probe, [1, 2, 3])
    def run_iter_sentinel():
        state = iter([5, 6, 0, 7])
        def nxt():
            seen.append(type(sys._getframe(0)))
            return next(state)
        return list(iter(nxt, 0))
""")
def interpreted_frame_type():
    """The class ``sys._getframe()`` returns under pyinterp (a stand-in)."""
    def probe():
        return type(sys._getframe(0))

    return pyinterp.interpret(probe, debug=True)()


CALLBACK_ENTRIES = ["run_map", "run_filter", "run_sorted", "run_list_sort", "run_sorted_dunder",
                    "run_min", "run_max", "run_max_dunder", "run_reduce", "run_iter_sentinel"]


@pytest.mark.parametrize("entry", CALLBACK_ENTRIES)
def test_callbacks_are_interpreted(entry):
    # Same result as CPython; ``seen`` holds the frame types, which differ
    # by design (the stand-in), as the asserts below check.
    check(CALLBACK_SOURCE, entry=entry, ignore_globals=("seen",))
    module = load_module(CALLBACK_SOURCE)
    result = pyinterp.interpret(getattr(module, entry), debug=True)()
    native_module = load_module(CALLBACK_SOURCE)
    assert result == getattr(native_module, entry)()
    proxy = interpreted_frame_type()
    assert module.seen, "the callback never ran"
    assert all(t is proxy for t in module.seen), module.seen
    assert all(t is types.FrameType for t in native_module.seen)


def test_getframe_returns_the_interpreter_stand_in():
    proxy = interpreted_frame_type()
    assert proxy is not types.FrameType
    assert proxy.__name__ == "FrameProxy"


def test_getframe_beyond_interpreted_frames_reaches_the_real_caller():
    def inner():
        return sys._getframe(1).f_code.co_name, sys._getframe(2).f_code.co_name

    def outer():
        return inner()

    marker_for_this_test = pyinterp.interpret(outer, debug=True)()
    assert marker_for_this_test == ("outer", sys._getframe(0).f_code.co_name)


def test_no_real_frames_for_interpreted_callbacks():
    """A profiler sees the user's callbacks only as interpreted frames (the
    stand-in, delivered by pyinterp): none runs natively."""
    module = load_module(CALLBACK_SOURCE)
    user_codes = {getattr(module, n).__code__ for n in ("probe", "key_probe")}
    user_codes.add(module.Ordered.__lt__.__code__)
    calls = []

    def profiler(frame, event, arg):
        if event == "call" and frame.f_code in user_codes:
            calls.append(type(frame))

    sys.setprofile(profiler)
    try:
        for entry in CALLBACK_ENTRIES:
            pyinterp.interpret(getattr(module, entry), debug=True)()
    finally:
        sys.setprofile(None)
    assert module.seen
    assert calls and set(calls) == {interpreted_frame_type()}
