"""Differential tests: the ``control`` opcode family (and 3.11's jumps).

JUMP_FORWARD, JUMP_BACKWARD(_NO_INTERRUPT), POP_JUMP_*_IF_*,
JUMP_IF_*_OR_POP, GET_ITER, FOR_ITER, RETURN_VALUE, GET_LEN.
"""
import pytest

from pyinterp.testing import case, run_case

CASES = {
    "if_elif_else": case("""
        def f(xs):
            out = []
            for x in xs:
                if x < 0:
                    out.append("neg")
                elif x == 0:
                    out.append("zero")
                elif x is None:
                    out.append("none")
                else:
                    out.append("pos")
            return out
    """, args=([-1, 0, 3],), expect=["neg", "zero", "pos"]),
    "none_jumps": case("""
        def f(xs):
            return [("N" if x is None else "V") + ("!" if x is not None else "?") for x in xs]
    """, args=([None, 0, ""],)),
    "and_or_short_circuit": case("""
        log = []
        def t(v):
            log.append(v)
            return v
        def f():
            return [t(0) and t(1), t(2) and t(3), t(0) or t(4), t(5) or t(6),
                    t([]) or t(None) or t("last"), t(1) and t("") and t(7),
                    not (t(1) and t(0))]
    """),
    "truth_of_user_objects_in_jumps": case("""
        log = []
        class T:
            def __init__(self, v): self.v = v
            def __bool__(self):
                log.append(self.v)
                return self.v
        def f():
            r = []
            if T(True):
                r.append(1)
            while T(False):
                r.append(2)
            r.append(T(False) or "fallback")
            r.append(bool(T(True) and T(False)))
            return r
    """),
    "truth_of_rich_comparisons_and_failing_bool": case("""
        # (3.13: the TO_BOOL or COMPARE_OP bool bit before a jump is folded
        # into the jump by the decoder: __bool__ still runs once, and its
        # error is caught by the same handler)
        log = []
        class R:
            def __init__(self, v): self.v = v
            def __bool__(self):
                log.append(self.v)
                if self.v is None:
                    raise ValueError("no truth")
                return self.v
        class C:
            def __lt__(self, other): return R(other)
        def f():
            r = []
            if C() < True:
                r.append(1)
            if not (C() < False):
                r.append(2)
            for v in (None, True):
                try:
                    if R(v):
                        r.append(3)
                except ValueError as e:
                    r.append(str(e))
            return r, log
    """),
    "while_break_continue_else": case("""
        def f(n):
            i, out = 0, []
            while i < n:
                i += 1
                if i == 2:
                    continue
                if i == 5:
                    break
                out.append(i)
            else:
                out.append("no-break")
            for j in range(3):
                pass
            else:
                out.append("for-else")
            for j in range(3):
                if j == 1:
                    break
            else:
                out.append("unreached")
            return out
    """, args=(10,), expect=[1, 3, 4, "for-else"]),
    "nested_loops_with_return": case("""
        def f(grid):
            for i, row in enumerate(grid):
                for j, v in enumerate(row):
                    if v == "x":
                        return i, j
            return None
    """, args=([["a", "b"], ["c", "x"]],), expect=(1, 1)),
    "for_over_user_iterators": case("""
        class Count:
            def __init__(self, n): self.n = n
            def __iter__(self): return self
            def __next__(self):
                if self.n == 0:
                    raise StopIteration
                self.n -= 1
                return self.n
        class Legacy:
            def __getitem__(self, i):
                if i >= 3:
                    raise IndexError
                return i * i
        def f():
            return [x for x in Count(4)], [x for x in Legacy()], list(iter(Legacy()))
    """, expect=([3, 2, 1, 0], [0, 1, 4], [0, 1, 4])),
    "for_over_non_iterable": case("""
        def f():
            for x in 42:
                pass
    """, raises=TypeError),
    "iter_returning_non_iterator": case("""
        class Bad:
            def __iter__(self): return 5
        def f():
            for x in Bad():
                pass
    """, raises=TypeError),
    "next_raising_other_error": case("""
        class Boom:
            def __iter__(self): return self
            def __next__(self): raise KeyError("boom")
        def f():
            for x in Boom():
                pass
    """, raises=KeyError),
    "for_over_dict_views_and_strings": case("""
        def f():
            d = {"a": 1, "b": 2}
            return ([k for k in d], [v for v in d.values()], [kv for kv in d.items()],
                    [c for c in "hé"], [b for b in b"ab"], [x for x in range(10, 0, -3)])
    """),
    "mutating_dict_during_iteration": case("""
        def f():
            d = {1: 1}
            for k in d:
                d[k + 1] = 0
    """, raises=RuntimeError),
    "return_in_finally_overrides": case("""
        def g():
            try:
                return "try"
            finally:
                return "finally"
        def h():
            for i in range(3):
                try:
                    if i == 1:
                        break
                finally:
                    pass
            return i
        def f():
            return g(), h()
    """, expect=("finally", 1)),
    "conditional_expression_and_ternary_chain": case("""
        def f(x):
            return "a" if x > 2 else "b" if x > 1 else "c"
    """, args=(2,), expect="b"),
    "get_len_in_match": case("""
        class S(list):
            pass
        def g(v):
            match v:
                case [a, b, *rest]:
                    return a, b, len(rest)
                case _:
                    return None
        def f():
            return g(S([1, 2, 3, 4])), g(S([1])), g((5, 6))
    """, expect=((1, 2, 2), None, (5, 6, 0))),
    "long_loop": case("""
        def f():
            total = 0
            for i in range(2000):
                if i % 3 == 0 or i % 5 == 0:
                    total += i
            return total
    """),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_control(name):
    run_case(CASES[name])
