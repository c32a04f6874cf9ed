"""Differential tests: the ``arith`` opcode family.

BINARY_OP (every operator, in-place forms), UNARY_*, COMPARE_OP, IS_OP,
CONTAINS_OP, BINARY_SUBSCR, STORE_SUBSCR, DELETE_SUBSCR; with builtin
operands, user classes (reflected operands, ``NotImplemented``, subclass
priority) and CPython's error messages.
"""
import pytest

from pyinterp.testing import case, run_case

BINARY_OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "@"]

CASES = {
    "all_binary_ops_on_ints": case("""
        def f(a, b):
            return [a + b, a - b, a * b, a / b, a // b, a % b, a ** b,
                    a << b, a >> b, a & b, a | b, a ^ b, divmod(a, b), -a // b, -a % b]
    """, args=(37, 5)),
    "floats_and_complex": case("""
        def f():
            x = 2.5
            z = 1 + 2j
            return [x * 2, x / 0.5, x // 1.5, x % 1.5, x ** 2, z * z, z / 2, abs(z),
                    -x, +x, 7 ** -1, (-8) ** (1 / 3) == (-8) ** (1 / 3)]
    """),
    "inplace_ops_on_ints_and_lists": case("""
        def f():
            a = 10
            a += 1; a -= 2; a *= 3; a //= 2; a %= 7; a **= 2; a <<= 3; a >>= 1
            a &= 0xFF; a |= 0x100; a ^= 0x3
            b = 7.0
            b /= 2
            lst = [1]
            alias = lst
            lst += [2]
            lst *= 2
            t = (1,)
            talias = t
            t += (2,)
            return a, b, lst, alias is lst, t, talias
    """),
    "strings_and_sequences": case("""
        def f():
            return ["ab" + "cd", "ab" * 3, 3 * [0], (1, 2) + (3,), "%s-%d" % ("x", 4),
                    "%(a)s" % {"a": 1}, b"%d" % 5, "abc"[::-1], [1, 2, 3][1:], "x" in "xyz"]
    """),
    "unsupported_operand": case("""
        def f():
            out = []
            for op in (lambda: 1 + "a", lambda: [] - [], lambda: {} * 2, lambda: None @ 1,
                       lambda: "a" < 1, lambda: [] >= 3):
                try:
                    op()
                except TypeError as e:
                    out.append(str(e))
            return out
    """),
    "zero_division": case("""
        def f(kind):
            if kind == 0:
                return 1 / 0
            if kind == 1:
                return 1 // 0
            if kind == 2:
                return 1 % 0
            return 1.0 / 0
    """, args=(3,), raises=ZeroDivisionError),
    "zero_division_int": case("""
        def f():
            return 5 // 0
    """, raises=ZeroDivisionError),
    "overflow": case("""
        def f():
            return 2.0 ** 10000
    """, raises=OverflowError),
    "unary_ops": case("""
        class U:
            def __neg__(self): return "neg"
            def __pos__(self): return "pos"
            def __invert__(self): return "inv"
            def __bool__(self): return False
        def f():
            u = U()
            return [-u, +u, ~u, not u, -5, ~5, not 0, not [], not [0], +True]
    """),
    "unary_unsupported": case("""
        def f():
            return -"s"
    """, raises=TypeError),
    "invert_unsupported": case("""
        def f():
            return ~1.5
    """, raises=TypeError),
    "bool_returning_non_bool": case("""
        class B:
            def __bool__(self):
                return 1
        def f():
            return not B()
    """, raises=TypeError),
    "len_fallback_for_truth": case("""
        class L:
            def __init__(self, n): self.n = n
            def __len__(self): return self.n
        def f():
            return [bool(L(0)), bool(L(3)), not L(0), "yes" if L(2) else "no"]
    """, expect=[False, True, True, "yes"]),
    "negative_len": case("""
        class L:
            def __len__(self): return -1
        def f():
            return not L()
    """, raises=ValueError),
    "user_binary_and_reflected": case("""
        log = []
        class V:
            def __init__(self, v): self.v = v
            def __add__(self, o):
                log.append("add")
                return V(self.v + (o.v if isinstance(o, V) else o))
            def __radd__(self, o):
                log.append("radd")
                return V(o + self.v)
            def __sub__(self, o):
                log.append("sub")
                return NotImplemented
            def __rsub__(self, o):
                log.append("rsub")
                return "rsub"
            def __matmul__(self, o): return "matmul"
            def __rpow__(self, o): return ("rpow", o)
            def __repr__(self): return "V(%r)" % self.v
        def f():
            return [V(1) + V(2), V(1) + 5, 5 + V(1), V(1) - V(2), 3 - V(1), V(0) @ 1, 2 ** V(0)]
    """),
    "subclass_reflected_priority": case("""
        log = []
        class A:
            def __add__(self, o):
                log.append("A.add")
                return "A"
            def __radd__(self, o):
                log.append("A.radd")
                return "rA"
            def __lt__(self, o):
                log.append("A.lt")
                return "A<"
            def __gt__(self, o):
                log.append("A.gt")
                return "A>"
        class B(A):
            def __radd__(self, o):
                log.append("B.radd")
                return "rB"
            def __gt__(self, o):
                log.append("B.gt")
                return "B>"
        def f():
            return A() + B(), B() + A(), A() < B(), B() < A()
    """),
    "inplace_fallback_and_notimplemented": case("""
        log = []
        class I:
            def __init__(self, v): self.v = v
            def __iadd__(self, o):
                log.append("iadd")
                return NotImplemented
            def __add__(self, o):
                log.append("add")
                return I(self.v + o)
            def __imul__(self, o):
                log.append("imul")
                self.v *= o
                return self
        class Plain:
            def __add__(self, o): return "plain"
        def f():
            a = I(1)
            a += 2
            b = I(3)
            c = b
            b *= 4
            p = Plain()
            p += 1
            return a.v, b is c, b.v, p
    """),
    "inplace_unsupported_message": case("""
        class N: pass
        def f():
            x = N()
            x += 1
    """, raises=TypeError),
    "rich_comparisons": case("""
        def f():
            return [1 < 2, 2 <= 2, 3 > 4, 3 >= 3, 1 == 1.0, 1 != 2, "a" < "b",
                    (1, 2) < (1, 3), [1] == [1], {1: 2} == {1: 2}, 0.1 + 0.2 == 0.3,
                    float("nan") == float("nan"), None == 0]
    """),
    "comparison_fallbacks": case("""
        log = []
        class E:
            def __init__(self, k): self.k = k
            def __eq__(self, o):
                log.append("eq")
                return NotImplemented
        class Ord:
            def __lt__(self, o):
                log.append("lt")
                return NotImplemented
        def f():
            e = E(1)
            r = [e == e, e == E(1), e != E(1), e != e]
            try:
                Ord() < Ord()
            except TypeError as exc:
                r.append(str(exc))
            try:
                Ord() <= 1
            except TypeError as exc:
                r.append(str(exc))
            return r
    """),
    # CPython's test_class: a comparison dunder whose binding raises (a
    # property) counts as NotImplemented, its error cleared; a binary
    # operator's binding error propagates.
    "comparison_method_binding_raises": case("""
        def booh(self):
            raise AttributeError("booh")
        class E:
            __eq__ = property(booh)
            __lt__ = property(booh)
            __add__ = property(booh)
        def f():
            e = E()
            r = [e == E(), e == e, e != e, 1 == e]
            try:
                e < e
            except TypeError as exc:
                r.append(str(exc))
            try:
                e + 1
            except AttributeError as exc:
                r.append(str(exc))
            return r
    """),
    "comparison_returning_non_bool": case("""
        class Weird:
            def __eq__(self, o): return "eq!"
            def __lt__(self, o): return [1]
        def f():
            w = Weird()
            r = [w == 1, 1 == w, w < 2, 2 > w]
            if w < 0:
                r.append("truthy list")
            return r
    """),
    "is_and_is_not": case("""
        def f(x):
            a = []
            b = a
            return [a is b, a is not b, [] is [], x is None, x is not None, None is None]
    """, args=(None,)),
    "contains": case("""
        log = []
        class C:
            def __contains__(self, v):
                log.append(v)
                return v == 3
        class It:
            def __iter__(self):
                log.append("iter")
                return iter([1, 2])
        class Seq:
            def __getitem__(self, i):
                log.append(i)
                if i > 3:
                    raise IndexError(i)
                return i * 10
        class Falsy:
            def __contains__(self, v): return 0
        def f():
            return [3 in C(), 4 not in C(), 2 in It(), 5 in It(), 20 in Seq(), 99 in Seq(),
                    1 in [1], "k" in {"k": 1}, 2 in {1, 2}, "bc" in "abcd", 1 in Falsy()]
    """),
    "contains_not_container": case("""
        def f():
            return 1 in 5
    """, raises=TypeError),
    "subscripts": case("""
        def f():
            lst = [0, 1, 2, 3, 4]
            d = {"a": 1}
            lst[0] = 10
            lst[1:3] = ["x"]
            del lst[-1]
            d["b"] = 2
            del d["a"]
            s = "hello"
            return lst, d, s[1], s[1:-1], s[::2], lst[-1], (1, 2, 3)[-2]
    """),
    "subscript_errors": case("""
        def f():
            out = []
            tup, five = (1,), 5
            for op in (lambda: [1][5], lambda: {}["k"], lambda: tup["a"], lambda: five[0],
                       lambda: [].__setitem__(0, 1)):
                try:
                    op()
                except (IndexError, KeyError, TypeError) as e:
                    out.append((type(e).__name__, str(e)))
            return out
    """),
    "store_subscript_unsupported": case("""
        def f():
            t = (1, 2)
            t[0] = 3
    """, raises=TypeError),
    "delete_subscript_unsupported": case("""
        def f():
            s = "abc"
            del s[0]
    """, raises=TypeError),
    "user_getitem_setitem_delitem": case("""
        log = []
        class M:
            def __getitem__(self, k):
                log.append(("get", k))
                return k
            def __setitem__(self, k, v):
                log.append(("set", k, v))
            def __delitem__(self, k):
                log.append(("del", k))
        def f():
            m = M()
            m[1] = 2
            x = m[1:2, ...]
            del m["k"]
            m[0] += 5
            return x
    """),
    "class_getitem_and_index": case("""
        class G:
            def __class_getitem__(cls, item):
                return ("generic", cls.__name__, item)
        class Idx:
            def __index__(self): return 2
        def f():
            return G[int], [10, 20, 30][Idx()], "abcd"[Idx():], list[int]
    """),
    "missing_dict_subclass": case("""
        class D(dict):
            def __missing__(self, k):
                return k * 2
        def f():
            d = D(a=1)
            return d["a"], d["zz"], d.get("zz")
    """, expect=(1, "zzzz", None)),
    "big_and_bool_arithmetic": case("""
        def f():
            return [2 ** 200 // 3, True + True, -(2 ** 63), 10 ** 20 % 7, True & False, 7 // -2]
    """),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_arith(name):
    run_case(CASES[name])


@pytest.mark.parametrize("op", BINARY_OPERATORS)
def test_binary_operator_dispatch(op):
    """Each operator: forward, reflected, in-place, and the error message."""
    source = """
        log = []
        class L:
            def __{name}__(self, o):
                log.append("{name}")
                return NotImplemented
        class R:
            def __r{name}__(self, o):
                log.append("r{name}")
                return "r"
        class I:
            def __i{name}__(self, o):
                log.append("i{name}")
                return "i"
        def f():
            x = I()
            x {op}= 1
            out = [L() {op} R(), x]
            try:
                L() {op} L()
            except TypeError as e:
                out.append(str(e))
            try:
                y = L()
                y {op}= 2
            except TypeError as e:
                out.append(str(e))
            return out
    """
    names = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv",
             "%": "mod", "**": "pow", "<<": "lshift", ">>": "rshift", "&": "and",
             "|": "or", "^": "xor", "@": "matmul"}
    run_case(case(source.format(name=names[op], op=op)))
