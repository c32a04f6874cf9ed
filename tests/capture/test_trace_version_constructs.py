"""Constructs that compile differently on newer Pythons, captured on every
version: 3.12's inlined comprehensions (``LOAD_FAST_AND_CLEAR``, no nested
frame), 3.13's paired local loads and stores (``LOAD_FAST_LOAD_FAST``,
``STORE_FAST_STORE_FAST``), ``END_FOR`` (3.12+), ``CALL_KW`` (3.13),
``LOAD_SUPER_ATTR`` (3.12+) and ``CALL_INTRINSIC_1`` (3.12+: ``*args`` into
a tuple, unary ``+``).  Each is one graph with no break, and later calls
with other data hit it and match eager (issue 16)."""
import dis

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")
nn = torch.nn

import pyinterp  # noqa: E402

from trace_support import assert_hits_ran_graph, assert_same, traced_counting  # noqa: E402


def comprehension_over_tensors(x, y):
    parts = [t * 2 for t in (x, y)]
    scaled = {i: t + i for i, t in enumerate(parts)}
    return sum(scaled.values())


def paired_locals(x, y):
    a, b = y, x          # STORE_FAST_STORE_FAST on 3.13
    return a * b + b     # LOAD_FAST_LOAD_FAST on 3.13


def loop_over_a_list(x, y):
    total = x
    for t in [y, y * 2, y * 3]:   # FOR_ITER / END_FOR (3.12+)
        total = total + t
    return total


def keyword_call(x, y):
    return torch.clamp(x + y, min=-0.5, max=0.5)   # CALL_KW on 3.13


def star_args(x, y):
    def combine(*tensors):
        return torch.stack(tensors).sum(0)
    tensors = (*[x], +y)             # CALL_INTRINSIC_1 (list to tuple, unary +) on 3.12+
    return combine(*tensors)


class Base(nn.Module):
    def forward(self, x, y):
        return x * y


class Child(Base):
    def forward(self, x, y):
        return super().forward(x, y) + 1   # LOAD_SUPER_ATTR on 3.12+


CASES = [comprehension_over_tensors, paired_locals, loop_over_a_list, keyword_call,
         star_args, Child()]


def _args(seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(4, generator=gen), torch.randn(4, generator=gen)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: getattr(f, "__name__", type(f).__name__))
def test_one_graph_and_hits_match_eager(fn):
    explanation = pyinterp.explain(fn, *_args(0))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1
    traced, counter = traced_counting(fn)
    for seed in range(4):
        assert_same(traced(*_args(seed)), fn(*_args(seed)))
    assert counter.count == 1
    assert_hits_ran_graph(counter, 3)


def _opnames(fn):
    code = getattr(fn, "__code__", None) or type(fn).forward.__code__
    names = {ins.opname for ins in dis.get_instructions(code)}
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            names |= {ins.opname for ins in dis.get_instructions(const)}
    return names


def test_the_cases_use_this_versions_instructions():
    """The cases exercise what they say on the version that runs them."""
    import sys

    used = set().union(*(_opnames(fn) for fn in CASES))
    if sys.version_info >= (3, 12):
        assert {"LOAD_FAST_AND_CLEAR", "END_FOR", "LOAD_SUPER_ATTR",
                "CALL_INTRINSIC_1"} <= used
    if sys.version_info >= (3, 13):
        assert {"LOAD_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST", "CALL_KW"} <= used
