"""``int(t)`` and ``.item()`` of integer and bool tensors kept in the graph.

An int or bool computed from tensor data that only feeds tensor ops,
Python arithmetic, or a data-dependent ``if`` is captured as a 0-d node,
tracked by the stack slot or local that holds it (``pyinterp/capture/values/tracked_ints.py``):
one graph, no break, and later calls with other data (other counts, the
other branch) hit that graph and give eager's result.  Every other use
breaks before it runs and stays correct.
"""
import contextlib
import io
import logging
import random
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

from trace_support import (assert_hits_ran_graph, assert_same, raises_same,  # noqa: E402
                           traced_counting)

# Seeds whose inputs give different counts of positives (0 to 4 of 4), so
# a constant baked in at the capture would show.
SEEDS = range(6)


def _args(seed, shift=True):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(3, generator=gen)
    y = torch.randn(4, generator=gen) + ((seed % 5) - 2 if shift else 0)
    return x, y


def _check_in_graph(fn, args=_args):
    explanation = pyinterp.explain(fn, *args(0))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1
    traced, counter = traced_counting(fn)
    for seed in SEEDS:
        assert_same(traced(*args(seed)), fn(*args(seed)))
    assert counter.count == 1, "later calls with other data must hit the one graph"
    assert_hits_ran_graph(counter, len(SEEDS) - 1)


def _check_breaks(fn, reason):
    explanation = pyinterp.explain(fn, *_args(0))
    messages = [r.message for r in explanation.break_reasons]
    assert any(reason in m for m in messages), messages
    assert all(r.kind == "data-dependent-value" for r in explanation.break_reasons)
    traced = pyinterp.trace(fn, backend="eager")
    for seed in SEEDS:
        assert_same(traced(*_args(seed)), fn(*_args(seed)))


# -- kept in the graph ------------------------------------------------------------
def int_of_count(x, y):
    n = int((y > 0).sum())
    return x * n


def item_count_divides(x, y):
    return x.sum() / (y > 0).sum().item()


def item_on_the_left(x, y):
    return (y > 0).sum().item() - x


def int_arithmetic(x, y):
    n = (y > 0).sum().item()
    m = n * 2 + 1 - n
    return x * m


def int_to_float_arithmetic(x, y):
    n = (y > 0).sum().item()
    return x * (n / 4) + x * (n * 0.5)


def int_moved_between_locals(x, y):
    n = (y > 0).sum().item()
    m = n
    del n
    return x + m


def same_small_int_as_a_constant(x, y):
    # 3 is one shared object in CPython: the constant must stay a constant
    # even on the capture where the count is 3 too.
    n = (y > 0).sum().item()
    c = 3
    return x * c + n


def int_through_torch_functions(x, y):
    # (a result of arithmetic on the int: the int itself, passed to a
    # call, is not followed before the run, see test_int_passed_to_a_call)
    m = (y > 0).sum().item() * 1
    return torch.mul(x, m) + x.add(m)


def int_in_place_op(x, y):
    n = (y > 0).sum().item()
    h = x * 1
    h += n
    return h


def ints_swapped_and_stored(x, y):
    # 3.13 fuses the moves: ``n, k = k, n`` is LOAD_FAST_LOAD_FAST then
    # STORE_FAST_STORE_FAST, storing ``m`` then loading ``k`` (one line)
    # STORE_FAST_LOAD_FAST.
    n = (y > 0).sum().item()
    k = (x > 0).sum().item()
    n, k = k, n
    return x * ((m := n * 2) + k) + m


def int_used_in_a_loop(x, y):
    n = (y > 0).sum().item()
    for _ in range(3):
        x = x + n
    return x


def int_with_int_tensor(x, y):
    n = (y > 0).sum().item()
    return torch.arange(4) * n + (y > 0).long()


def bool_item_branch(x, y):
    if (y > 0).any().item():
        return x + 1
    return x - 1


def bool_item_all_and_any(x, y):
    flag = (y > 0).all().item()
    other = (y < 0).any().item()
    if flag or other:
        x = x * 2
    return x


def bool_of_tensors(x, y):
    positive = bool(y.sum() > 0)
    big = bool(y.abs().max())  # (a float tensor: nonzero)
    if positive and big:
        x = x + 1
    return x * (positive + 1)


def count_compared_in_if(x, y):
    n = (y > 0).sum().item()
    if n > 1:
        x = x * n
    else:
        x = x - n
    return x


def exception_drops_a_stack_slot(x, y):
    n = (y > 0).sum().item()
    try:
        v = n + UNDEFINED_NAME  # noqa: F821 - NameError with n on the stack
    except NameError:
        v = 0
    return x * n + v


IN_GRAPH = [
    int_of_count, item_count_divides, item_on_the_left, int_arithmetic,
    int_to_float_arithmetic, int_moved_between_locals, same_small_int_as_a_constant,
    int_through_torch_functions, int_in_place_op, ints_swapped_and_stored, int_used_in_a_loop,
    int_with_int_tensor,
    bool_item_branch, bool_item_all_and_any, bool_of_tensors, count_compared_in_if,
    exception_drops_a_stack_slot,
]


@pytest.mark.parametrize("fn", IN_GRAPH, ids=lambda f: f.__name__)
def test_int_stays_in_graph(fn):
    _check_in_graph(fn)


_SIGNS = st.lists(st.sampled_from([-1.5, -0.5, 0.0, 0.5, 2.0]), min_size=4, max_size=4)


@settings(max_examples=max(5, settings().max_examples // 10))
@given(st.lists(_SIGNS, min_size=2, max_size=5), st.sampled_from(IN_GRAPH))
def test_int_graphs_match_eager_on_any_data(calls, fn):
    _matches_eager_on(calls, fn)


def _matches_eager_on(calls, fn):
    # The first call captures (on whatever count its data gives); every
    # later one, with other counts and other branches, must agree with eager.
    x = torch.randn(3, generator=torch.Generator().manual_seed(0))
    traced = pyinterp.trace(fn, backend="eager")
    for values in calls:
        y = torch.tensor(values)
        assert_same(traced(x, y), fn(x, y))


def _check_gradients(fn, weight):
    """Results and the gradients of ``(result * weight).sum()`` with respect
    to ``x`` equal eager's on every seed."""
    traced = pyinterp.trace(fn, backend="eager")
    for seed in SEEDS:
        x, y = _args(seed)
        xa, xb = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
        actual, expected = traced(xa, y), fn(xb, y)
        torch.testing.assert_close(actual, expected)
        (actual * weight).sum().backward()
        (expected * weight).sum().backward()
        torch.testing.assert_close(xa.grad, xb.grad)


def test_int_operand_gradients_match_eager():
    _check_gradients(int_of_count, torch.arange(3.0))


def test_int_under_inductor_matches_eager():
    traced = pyinterp.trace(count_compared_in_if)  # the default backend
    for seed in SEEDS:
        torch.testing.assert_close(traced(*_args(seed)), count_compared_in_if(*_args(seed)))


def int_moved_once(x, y):
    n = int((y > 0).sum())
    a = n
    return x * a


def int_moved_three_times(x, y):
    n = int((y > 0).sum())
    a = n
    b = a
    c = b
    return x * c


def test_moves_of_a_tracked_int_are_not_steps_of_the_top_frame():
    # hybrid.py counts the top frame's non-inline instructions; a move is
    # inline whether an int is tracked or not.
    from pyinterp.capture.traced import capture
    steps = [capture(fn, _args(0), {}).top_steps
             for fn in (int_moved_once, int_moved_three_times)]
    assert steps[0] == steps[1] > 0


# -- uses that break, and stay correct ------------------------------------------
def int_returned(x, y):
    return x, (y > 0).sum().item()


def int_as_loop_count(x, y):
    for _ in range(int((y > 0).sum())):
        x = x + 1
    return x


def int_read_by_locals(x, y):
    n = (y > 0).sum().item()
    return x * locals()["n"]


def int_compared_into_a_value(x, y):
    n = (y > 0).sum().item()
    return x, n > 1


def int_negated_with_not(x, y):
    # (3.13: a TO_BOOL that feeds no jump converts the int: a use)
    n = (y > 0).sum().item()
    return x * (not n)


def int_formatted(x, y):
    return x, "%d positives" % (y > 0).sum().item()


def int_placed_differently_by_arms(x, y):
    n = (y > 0).sum().item()
    if x.sum() > 0:
        m = n
    else:
        m = 1
    return x * m


EARLY = "turns tensor data into a Python value"  # (the .item()/int() call breaks)


@pytest.mark.parametrize("fn,reason", [
    (int_as_loop_count, EARLY),
    (int_formatted, EARLY),
    (int_negated_with_not, EARLY),
], ids=lambda v: getattr(v, "__name__", "reason"))
def test_int_uses_that_break_stay_correct(fn, reason):
    _check_breaks(fn, reason)


def test_int_read_by_locals_is_followed_as_an_object():
    # an unbacked SymbolicInt is recognised wherever it goes, locals() too
    # (a tracked int, known only by its slot, broke there)
    _check_in_graph(int_read_by_locals)


def test_int_compared_into_a_value_is_assumed():
    # n > 1 feeds no jump: the graph checks the truth the run took
    # (data_decisions.py), one entry per truth value
    explanation = pyinterp.explain(int_compared_into_a_value, *_args(0))
    assert explanation.graph_break_count == 0
    truth = int_compared_into_a_value(*_args(0))[1]
    assert [a.split(": ")[1] for a in explanation.assumptions] == ["assumed %s" % truth]
    traced = pyinterp.trace(int_compared_into_a_value, backend="eager", fullgraph=True)
    truths = set()
    for seed in SEEDS:
        expected = int_compared_into_a_value(*_args(seed))
        truths.add(expected[1])
        assert_same(traced(*_args(seed)), expected)
    assert truths == {True, False} and len(traced.cache_entries()) == 2


def test_int_placed_differently_by_arms_is_merged_or_assumed():
    # The arms leave the int (an unbacked SymbolicInt) or a constant in m:
    # merged into one value where the rewrite can (3.12+), else the
    # branch's truth is assumed (values/assumptions.py: 3.11's bytecode);
    # the int stays in the graph on each path either way.
    explanation = pyinterp.explain(int_placed_differently_by_arms, *_args(0))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert len(explanation.assumptions) + len(explanation.merged_branches) == 1
    traced = pyinterp.trace(int_placed_differently_by_arms, backend="eager")
    for seed in SEEDS:
        assert_same(traced(*_args(seed)), int_placed_differently_by_arms(*_args(seed)))


def test_int_returned_is_a_graph_output():
    # the int leaves the traced function: the graph outputs it (a 0-d int64
    # tensor) and the mock gives it back as a Python int (values/sizes.py's
    # LeavingInts), as it does for floats
    _check_in_graph(int_returned)


def test_int_needed_under_fullgraph_names_the_line():
    traced = pyinterp.trace(int_as_loop_count, fullgraph=True, backend="eager")
    with pytest.raises(pyinterp.GraphBreakError) as info:
        traced(*_args(0))
    assert info.value.kind == "data-dependent-value"
    assert info.value.lineno == int_as_loop_count.__code__.co_firstlineno + 1


# -- ints that reach sizes: unbacked sizes -------------------------------------
# An int from tensor data that reaches a slice bound, a size argument, a
# torch call the tracked ints do not model, or another frame becomes an
# unbacked size (a SymbolicInt, as ints of .tolist(): values/listed_ints.py):
# the graph computes it with an ``item`` node and every later call, whatever
# its count, runs that one graph.
def int_to_python_function(x, y):
    return _scale(x, (y > 0).sum().item())


def _scale(x, n):
    return x * n


def int_slices(x, y):
    n = (y > 0).sum().item()
    return x[:n]


def arithmetic_result_slices(x, y):
    # m is tracked from n's arithmetic (a 0-d node), and becomes an
    # unbacked size where the slice needs it.
    n = (y > 0).sum().item()
    m = n + 1
    return x * n, x[:m]


def int_passed_to_a_call(x, y):
    n = (y > 0).sum().item()
    return torch.mul(x, n)


def int_of_max_trims_padding(x, y):
    # the padding trim of NLP code: int(lengths.max()) as a slice bound
    lengths = (y > 0).long().cumsum(0)
    max_len = int(lengths.max())
    return x[:max_len] * 2


def topk_of_a_count(x, y):
    k = int((y > 0).sum()) + 1  # (tracked, then a size where topk needs it)
    return torch.cat([x, y]).topk(k).values.sum()


def int_crosses_two_frames(x, y):
    n = int((y > 0).sum())
    return _outer(x, n - 1)


def _outer(x, n):
    return _inner(x, n + 1) + x.new_zeros(3)[:n].sum()


def _inner(x, n):
    return x[:n].sum() * n


def int_sizes_new_tensors(x, y):
    n = (y > 0).sum().item()
    return torch.cat([x.new_ones(n), torch.arange(n) * 1.0]).sum() + x.sum()


def tensor_as_slice_bound(x, y):
    # (Python calls the 0-d tensor's __index__: its int, kept as a size)
    return x[:(y > 0).sum()] * 2, x[None, 1:][:, :(y > 0).sum() + 1]


def count_sets_a_slice(x, y):
    n = int((y > 0).sum())
    out = torch.zeros_like(x)
    out[:n] = x[:n] * 2
    return out


TO_SIZES = [count_sets_a_slice, int_to_python_function, int_slices, arithmetic_result_slices,
            int_passed_to_a_call, int_of_max_trims_padding, topk_of_a_count,
            int_crosses_two_frames, int_sizes_new_tensors, tensor_as_slice_bound]


@pytest.mark.parametrize("fn", TO_SIZES, ids=lambda f: f.__name__)
def test_int_that_reaches_a_size_stays_in_graph(fn):
    _check_in_graph(fn)
    graph = pyinterp.explain(fn, *_args(0)).graphs[0]
    assert any(n.target == "item" for n in graph.graph.nodes), graph.code


@settings(max_examples=max(5, settings().max_examples // 10))
@given(st.lists(_SIGNS, min_size=2, max_size=5), st.sampled_from(TO_SIZES))
def test_unbacked_int_graphs_match_eager_on_any_data(calls, fn):
    _matches_eager_on(calls, fn)


@pytest.mark.parametrize("fn", [int_of_max_trims_padding, int_crosses_two_frames,
                                tensor_as_slice_bound])
def test_unbacked_int_under_inductor_matches_eager(fn):
    traced = pyinterp.trace(fn)  # the default backend
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # (Inductor compiles the graph)
        for seed in SEEDS:
            torch.testing.assert_close(traced(*_args(seed)), fn(*_args(seed)))


def test_int_of_max_gradients_match_eager():
    _check_gradients(int_of_max_trims_padding, torch.ones(()))


def random_repeat_count(x):
    return x.repeat(1 + random.getrandbits(2))  # (drawn again by the mock)


def test_random_int_as_a_size_is_one_graph():
    traced, counter = traced_counting(random_repeat_count)
    for seed in SEEDS:
        x = _args(seed)[0]
        random.seed(seed)
        expected = random_repeat_count(x)
        random.seed(seed)
        assert_same(traced(x), expected)
    assert counter.count == 1
    assert_hits_ran_graph(counter, len(SEEDS) - 1)


def pad_by_a_count(x, y):
    n = (y > 0).sum().item()
    return torch.nn.functional.pad(x, (0, n + 1)) * 2


def test_an_op_fake_tensors_cannot_run_logs_no_torch_error(caplog):
    # F.pad by a data-dependent amount: the fake replay fails (the graph then
    # runs with exact shapes), and torch's own ERROR-level report of the
    # failing meta kernel is not shown to the user.
    traced = pyinterp.trace(pad_by_a_count, backend="eager")
    with caplog.at_level(logging.DEBUG, logger="torch._subclasses.fake_tensor"):
        for seed in SEEDS:
            assert_same(traced(*_args(seed)), pad_by_a_count(*_args(seed)))
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


def items_summed_natively(x, y):
    # .item() and int() called by native code (map, sum): no unbacked size
    # (sum would add them as plain ints, a constant in the graph)
    counts = [(y > 0).sum(), (y < 0).sum()]
    n = sum(map(torch.Tensor.item, counts)) - sum(map(int, counts[1:]))
    return x[:n] * 2


def test_ints_that_native_code_makes_stay_right():
    traced = pyinterp.trace(items_summed_natively, backend="eager")
    for seed in SEEDS:
        assert_same(traced(*_args(seed)), items_summed_natively(*_args(seed)))


def test_int_used_as_a_size_and_decided_on_is_one_graph():
    # A size use and a Python decision: an unbacked size, and the
    # comparison is a merged branch (data_decisions.py)
    def f(x, y):
        n = int((y > 0).sum())
        rows = x[:n]
        return rows * 2 if n > 1 else rows

    traced = pyinterp.trace(f, fullgraph=True, backend="eager")
    for seed in SEEDS:
        assert_same(traced(*_args(seed)), f(*_args(seed)))
    assert len(traced.cache_entries()) == 1


def test_int_whose_value_is_needed_breaks_where_it_is_made():
    # A size use and a use that needs the value: the int() call breaks
    # (where the graph can be split), not the str() after the slice.
    def f(x, y):
        n = int((y > 0).sum())
        rows = x[:n]
        return rows * 2, str(n)

    traced = pyinterp.trace(f, fullgraph=True, backend="eager")
    with pytest.raises(pyinterp.GraphBreakError) as info:
        traced(*_args(0))
    assert info.value.kind == "data-dependent-value"
    assert info.value.lineno == f.__code__.co_firstlineno + 1
    traced = pyinterp.trace(f, backend="eager")
    for seed in SEEDS:
        assert_same(traced(*_args(seed)), f(*_args(seed)))


def test_float_tensor_int_is_tracked_truncated():
    # int() of a float tensor truncates toward zero in the graph
    # (tracked_ints.int_of_float; tests/capture/test_int_of_float.py).
    def fn(x, y):
        return x * int(y.sum())
    explanation = pyinterp.explain(fn, *_args(0))
    assert explanation.graph_break_count == 0
    traced = pyinterp.trace(fn, backend="eager")
    for seed in SEEDS:
        assert_same(traced(*_args(seed)), fn(*_args(seed)))


def test_int_flow_follows_none_tests_and_or_values():
    # An `is None` test and an `or` value after the .item() do not touch the
    # int: it is still tracked.
    def fn(x, y, scale=None):
        n = (y > 0).sum().item()
        if scale is None:
            scale = 2.0
        factor = scale or 1.0
        return x * n * factor
    _check_in_graph(fn)


# -- generated programs ---------------------------------------------------------
_PRODUCERS = ["(y > 0).sum().item()", "int((y > 0).sum())", "(y > 0).any().item()",
              "(y < 1).long().sum().item()", "bool(y.sum() > 0)", "bool(y.max())"]


@st.composite
def _int_programs(draw):
    """A small function of ``(x, y)`` that makes ints from ``y`` and uses
    them in every way a tracked int may be used, and some it may not."""
    ints, lines = ["n"], ["n = %s" % draw(st.sampled_from(_PRODUCERS))]
    for _ in range(draw(st.integers(1, 7))):
        a, b = draw(st.sampled_from(ints)), draw(st.sampled_from(ints))
        new = "i%d" % len(lines)
        kind = draw(st.integers(0, 23))
        if kind == 0:
            lines.append("%s = %s" % (new, a))
        elif kind == 1:
            lines.append("%s = %s %s %s" % (new, a, draw(st.sampled_from("+-*")), b))
        elif kind == 2:
            lines.append("%s = %s %s %d" % (new, a, draw(st.sampled_from("+-*")),
                                             draw(st.integers(-3, 300))))
        elif kind == 3:
            lines.append("x = x %s %s" % (draw(st.sampled_from("+-*")), a))
            continue
        elif kind == 4:
            lines.append("x = %s - x" % a)
            continue
        elif kind == 5:
            lines.append("x = x / (%s * %s + 1)" % (a, a))
            continue
        elif kind == 6:
            lines.append("if %s %s %d:\n    x = x * 2\nelse:\n    x = x - %s"
                         % (a, draw(st.sampled_from(["<", ">", "=="])),
                            draw(st.integers(0, 4)), b))
            continue
        elif kind == 7:
            lines.append("if %s:\n    x = x + 1" % a)
            continue
        elif kind == 8:
            lines.append("c = 3\nx = x * c")
            continue
        elif kind == 9:
            lines.append("try:\n    x = x + %s + undefined_name\nexcept NameError:\n"
                         "    x = x - 1" % a)
            continue
        elif kind == 10:
            lines.append("for _ in range(2):\n    x = x + %s" % a)
            continue
        elif kind == 12:  # (sizes: an unbacked size from here on)
            lines.append("x = x + x.new_ones(5)[:%s].sum()" % a)
            continue
        elif kind == 13:
            lines.append("x = _take(x, %s)" % a)  # (another frame)
            continue
        elif kind == 14:
            lines.append("x = x + torch.zeros(%s %% 4 + 1).sum() + x[None, :][:, :%s].sum()"
                         % (a, b))
            continue
        elif kind == 15:  # (a decision in another frame: merged)
            lines.append("x = _decide(x, %s, %d)" % (a, draw(st.integers(-1, 3))))
            continue
        elif kind == 16:  # (a decision that feeds no jump: assumed)
            lines.append("flag = %s %s %d\nx = x * 2 if flag else x"
                         % (a, draw(st.sampled_from(["<", ">", "!="])), draw(st.integers(0, 3))))
            continue
        elif kind == 17:  # (arms that print: assumed)
            lines.append("x = _report(x, %s)" % a)
            continue
        elif kind == 18:  # (printed: a graph output the replay prints)
            lines.append("print('value', %s, %s)" % (a, b))
            continue
        elif kind == 19:  # (a callee's return: the int crosses frames)
            lines.append("%s = _count(y) + %s" % (new, a))
        elif kind == 20:  # (a key that max() compares natively)
            lines.append("x = max([x, -x], key=lambda t: (t * y).sum().item() * %s)" % a)
            continue
        elif kind == 21:  # (a generator's items summed natively)
            lines.append("x = x + sum(v for v in (%s, %s))" % (a, b))
            continue
        elif kind == 22:  # (a __len__ behind len())
            lines.append("x = x * len(_Sized(%s))" % a)
            continue
        elif kind == 23:  # (a data-dependent size: a SymbolicInt wherever it goes)
            lines.append("%s = len(y[y > %d])" % (new, draw(st.integers(-1, 1))))
        else:
            lines.append("%s = %s / 4" % (new, a))  # (a float tracked by scalars.py)
            lines.append("x = x * %s" % new)
            continue
        ints.append(new)
    kept = draw(st.sampled_from(ints))  # (returned: a graph output where it can be)
    ret = draw(st.sampled_from(["x", "x, %s" % kept, "x[:2] * n", "[%s, x, %s]" % (kept, kept),
                                "{'n': %s + 1, 'x': x}" % kept]))
    lines.append("return " + ret)
    return _TAKE + "def f(x, y):\n" + "\n".join("    " + ln.replace("\n", "\n    ")
                                         for ln in lines) + "\n"


_TAKE = """def _take(x, n):
    return x + x[:n].sum() * 2


def _decide(x, n, k):
    if n > k:
        return x * 2
    return x - 1


def _count(y):
    return (y > 0).sum().item()


class _Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n * self.n


def _report(x, n):
    if n:
        print("n is", n)
        return x + 1
    print("no n")
    return x


"""
_VALUES = st.lists(st.sampled_from([-1.5, -0.5, 0.0, 0.5, 2.0]), min_size=4, max_size=4)


@settings(max_examples=max(5, settings().max_examples // 4))
@given(_int_programs(), st.lists(_VALUES, min_size=2, max_size=4))
def test_generated_int_programs_match_eager(source, calls):
    namespace = {"torch": torch}
    exec(compile(source, "<int-program>", "exec"), namespace)
    fn = namespace["f"]
    traced = pyinterp.trace(fn, backend="eager")
    x = torch.randn(3, generator=torch.Generator().manual_seed(0))
    for values in calls:
        y = torch.tensor(values)
        try:
            with contextlib.redirect_stdout(io.StringIO()) as printed:
                expected = fn(x, y)
        except Exception:  # noqa: BLE001 - (bool - tensor): the same error, traced
            raises_same(traced, fn, x, y)
            continue
        with contextlib.redirect_stdout(io.StringIO()) as replayed:
            got = traced(x, y)
        assert_same(got, expected)
        assert replayed.getvalue() == printed.getvalue()
