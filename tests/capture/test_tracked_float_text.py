"""``max``/``min`` of tracked floats, and text made from them, against eager.

A Python float computed from tensor data (``s = t.std().item()``) may go
through ``max(s, eps)``/``min(s, eps)`` (a ``torch.where`` node with
Python's exact semantics) and be turned into text (``round(s, 1)``,
``"%.2f" % s``, f-strings, ``str``/``repr``/``format``) whose only use is
``print``, logging or ``warnings.warn``: one graph, no break, and on every
later call (other data) the replayed text is the text eager prints.  Text
that goes anywhere else still breaks, and stays correct.  See
``pyinterp/capture/values/float_minmax.py`` and ``float_text.py``.
"""
import contextlib
import io
import logging
import math
import warnings

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

from trace_support import assert_hits_ran_graph, assert_same, traced_counting  # noqa: E402

CALLS = 4
LOG = logging.getLogger("tests.tracked_float_text")


def _args(seed, *shapes):
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(*s, generator=gen) * (seed + 1) for s in shapes)


def _observe(fn, args):
    """``fn(*args)``'s result and what it printed, warned and logged."""
    out = io.StringIO()
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    LOG.addHandler(handler)
    LOG.setLevel(logging.INFO)
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            result = fn(*args)
    finally:
        LOG.removeHandler(handler)
    text = (out.getvalue(), [str(w.message) for w in warned],
            [r.getMessage() for r in records])
    return result, text


def _same_as_eager(traced, fn, args):
    """Same result and same printed, warned and logged text; the text."""
    expected, expected_text = _observe(fn, args)
    actual, actual_text = _observe(traced, args)
    assert_same(actual, expected)
    assert actual_text == expected_text
    return actual_text


def _check_in_graph(fn, *shapes):
    """One graph, no break (also under fullgraph), and every call (each
    with other data, so other text) replays eager's text."""
    explanation, _ = _observe(lambda *a: pyinterp.explain(fn, *a), _args(0, *shapes))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1
    _observe(pyinterp.trace(fn, fullgraph=True, backend="eager"), _args(0, *shapes))
    traced, counter = traced_counting(fn)
    texts = [_same_as_eager(traced, fn, _args(seed, *shapes)) for seed in range(CALLS)]
    assert counter.count == 1, "later calls with other data must hit the one graph"
    assert_hits_ran_graph(counter, CALLS - 1)
    return texts


def _check_breaks(fn, *shapes):
    """A data-dependent-value break (fullgraph raises it), and eager's
    results and text on every call."""
    explanation, _ = _observe(lambda *a: pyinterp.explain(fn, *a), _args(0, *shapes))
    assert "data-dependent-value" in [r.kind for r in explanation.break_reasons], \
        explanation.break_reasons
    with pytest.raises(pyinterp.GraphBreakError):
        _observe(pyinterp.trace(fn, fullgraph=True, backend="eager"), _args(0, *shapes))
    traced = pyinterp.trace(fn, backend="eager")
    for seed in range(CALLS):
        _same_as_eager(traced, fn, _args(seed, *shapes))


# -- max / min --------------------------------------------------------------------
def max_floor(x):
    h = x * 2
    return h / max(h.std().item(), 1e-3)


def min_cap(x):
    return x * min(x.abs().max().item(), 1.5)


def max_of_two_tracked(x, y):
    a, b = x.max().item(), y.max().item()
    return x + max(a, b) - min(b, a), max(b, a), min(a, b)


def minmax_chain(x):
    s = x.mean().item()
    clipped = min(max(s, -0.25), 0.25)
    return x - clipped, clipped * 2


@pytest.mark.parametrize("fn, shapes", [
    (max_floor, [(3, 4)]), (min_cap, [(5,)]), (max_of_two_tracked, [(3,), (4,)]),
    (minmax_chain, [(6,)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_max_min_stay_in_graph(fn, shapes):
    _check_in_graph(fn, *shapes)


def picks(x):
    s = x.max().item()
    return max(s, 0.0), max(0.0, s), min(s, 0.0), min(0.0, s)


def _same_float(a, b):
    """Equal as Python sees floats, and with the same sign bit (-0.0)."""
    assert type(a) is float and type(b) is float
    if math.isnan(b):
        return math.isnan(a)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def test_max_min_follow_python_for_nan_and_signed_zero():
    """The graph is captured on ordinary data; NaN and -0.0 then come in
    as data on the later calls, and each pick is Python's."""
    traced, counter = traced_counting(picks)
    data = [0.5, -0.0, 0.0, float("nan"), -2.0, float("inf"), -0.0]
    for value in data:
        x = torch.tensor([value])
        actual, expected = traced(x), picks(x)
        assert all(_same_float(a, e) for a, e in zip(actual, expected)), (value, actual,
                                                                          expected)
    assert counter.count == 1
    assert_hits_ran_graph(counter, len(data) - 1)


def max_against_an_int(x):
    return x * max(x.std().item(), 1)  # the int 1 when it wins: its type depends on data


def max_with_a_key(x):
    return x * max(x.std().item(), 0.5, key=abs)


def max_of_text(x):
    return x * max(round(x.std().item(), 1), 0.5)


@pytest.mark.parametrize("fn", [max_against_an_int, max_with_a_key, max_of_text],
                         ids=lambda f: f.__name__)
def test_max_uses_that_are_not_modelled_break(fn):
    _check_breaks(fn, (3, 4))


# -- text -------------------------------------------------------------------------
def warn_rounded(x):  # (the benchmark's break_then_warn)
    h = x * 2
    spread = h.std().item()
    warnings.warn("spread %.2f" % round(spread, 1))
    return h / max(spread, 1e-3)


def print_fstring(x):  # (the benchmark's break_then_random, without the random)
    print(f"max {x.max().item():.3f}")
    return x * 0.5


def print_many_forms(x, y):
    s, t = x.sum().item(), y.min().item()
    print(f"{s}", f"{s!r}", f"[{t:>12.4e}]", f"{s:.2f}/{t:+.1f} {-s:g}")
    print(str(s), repr(t), format(s, ".3f"), round(t, 2), round(s * 2 + t, 3))
    print("%s and %.1f and %d%%" % (s, t, 7), "%.2f" % (s,), "x=" + str(t) + "!")
    print("{0:.3f} {t:+.2e} {0!r:>30}".format(s, t=t), "<{}>".format(t), ascii(s))
    return x + s


def show(label, value):
    text = f"{label}: {value:.4f}"
    print(text)


def text_through_helper(x):
    show("mean", x.mean().item())
    return x.abs()


def logged(x):
    s = x.std().item()
    LOG.info("std %s", round(s, 3))
    LOG.info(f"std {s:.4f}")
    LOG.warning("as %%: %.5f" % s)
    return x / max(s, 1e-3)


def text_in_a_tuple(x):
    s = x.max().item()
    parts = (f"{s:.1f}", "max")
    print(*parts, sep=" | ")
    return x


@pytest.mark.parametrize("fn, shapes", [
    (warn_rounded, [(3, 4)]), (print_fstring, [(5,)]), (print_many_forms, [(4,), (3,)]),
    (text_through_helper, [(6,)]), (logged, [(2, 3)]), (text_in_a_tuple, [(4,)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_text_for_replayed_calls_stays_in_graph(fn, shapes):
    texts = _check_in_graph(fn, *shapes)
    assert len(set(map(repr, texts))) == CALLS, "other data must give other text"


def test_the_benchmark_random_case_is_one_graph():
    import random

    def fn(x):
        print(f"max {x.max().item():.3f}")
        return x * (0.5 + random.random())

    traced, counter = traced_counting(fn)
    for seed in range(CALLS):
        args = _args(seed, (3, 4))
        random.seed(seed)
        expected, expected_text = _observe(fn, args)
        random.seed(seed)
        actual, actual_text = _observe(traced, args)
        assert_same(actual, expected)
        assert actual_text == expected_text
    assert counter.count == 1
    assert_hits_ran_graph(counter, CALLS - 1)


def random_formatted(x):
    import random

    print(f"draw {random.random():.4f}")
    return x * 2


@torch.compiler.disable
def _numpy_of(x):
    return x.numpy()


def text_before_another_break(x):
    text = f"{x.sum().item():.2f}"
    n = _numpy_of(x)  # a break that splits: the text crosses it in a local
    y = torch.from_numpy(n * 2)
    print(text, "then", f"{y.max().item():.3f}")
    return y


def test_recomputed_random_formatted_is_one_graph():
    import random

    traced, counter = traced_counting(random_formatted)
    for seed in range(CALLS):
        random.seed(seed)
        expected = _observe(random_formatted, _args(seed, (3,)))
        random.seed(seed)
        actual = _observe(traced, _args(seed, (3,)))
        assert_same(actual[0], expected[0])
        assert actual[1] == expected[1]
    assert counter.count == 1


def test_text_crossing_another_break_is_made_again():
    """The partial graph's mock makes the text from its graph output and
    hands it to the resume function."""
    traced, counter = traced_counting(text_before_another_break)
    texts = [_same_as_eager(traced, text_before_another_break, _args(seed, (4,)))
             for seed in range(CALLS)]
    assert len(set(map(repr, texts))) == CALLS
    assert_hits_ran_graph(counter, CALLS - 1)


def text_returned(x):
    return x, "%.3f" % x.sum().item()


def text_compared(x):
    text = f"{x.sum().item():.1f}"
    if text.startswith("-"):
        return -x
    return x


def text_equal(x):
    return x * (2 if f"{x.max().item():.0e}" == "1e+00" else 3)


class Holder:
    pass


HOLDER = Holder()


def text_stored(x):
    HOLDER.label = f"{x.sum().item():.2f}"
    print(HOLDER.label)
    return x


def text_to_a_native_call(x):
    return x * len(f"{x.sum().item():.3f}")


def rounded_into_tensor_math(x):
    return x * round(x.std().item(), 2)


def one_character(x):
    print(f"{x.abs().max().item() * 0:.0f}")  # "0": maybe CPython's shared one-char str
    return x


@pytest.mark.parametrize("fn", [text_returned, text_compared, text_equal, text_stored,
                                text_to_a_native_call, rounded_into_tensor_math,
                                one_character], ids=lambda f: f.__name__)
def test_text_used_elsewhere_still_breaks(fn):
    _check_breaks(fn, (5,))


# -- text of tensors ------------------------------------------------------------------
# A tensor the graph computes (or takes) formatted into text whose only use
# is a replayed call: the text is made again from a clone() snapshot, a
# graph output, on every call.
def print_tensor_fstring(x):
    h = torch.tanh(x * 2)
    print(f"hidden mean {h.mean():.4f}, max {h.max()}, first {h[:2]}")
    return h.relu()


def text_of_tensors_for_replayed_calls(x, y):
    h = x + 1
    text = "sum " + str(h.sum()) + " " + repr(y[0]) + " {:.2f}".format(h.min())
    text += " | %s %.3f" % (h[:2], h.max())
    LOG.info("%s", text)
    warnings.warn(f"norm {torch.linalg.norm(h):.3f}")
    return h


def text_before_an_in_place_change(x):
    h = x * 3
    label = f"before {h}"
    h.add_(1)  # the text keeps the values it was made from
    print(label, h)
    return h


@pytest.mark.parametrize("fn, shapes", [
    (print_tensor_fstring, [(5,)]), (text_of_tensors_for_replayed_calls, [(4,), (3, 2)]),
    (text_before_an_in_place_change, [(3,)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_text_of_tensors_for_replayed_calls_stays_in_graph(fn, shapes):
    with torch.no_grad():
        texts = _check_in_graph(fn, *shapes)
    assert len(set(map(repr, texts))) == CALLS  # other data, other text, each eager's


def tensor_text_returned(x):
    return x, f"{x.sum():.3f}"


def tensor_text_compared(x):
    return -x if str(x.sum()).startswith("tensor(-") else x


@pytest.mark.parametrize("fn", [tensor_text_returned, tensor_text_compared],
                         ids=lambda f: f.__name__)
def test_text_of_tensors_used_elsewhere_still_breaks(fn):
    with torch.no_grad():
        _check_breaks(fn, (5,))


def text_showing_the_autograd_node(x):
    h = x * 2
    print("h is " + str(h))  # "grad_fn=<MulBackward0>": the graph's own node would show
    return h


def test_text_that_shows_the_autograd_node_breaks_and_stays_eagers():
    x = _args(0, (3,))[0].requires_grad_()
    explanation, _ = _observe(lambda a: pyinterp.explain(text_showing_the_autograd_node, a),
                              (x,))
    assert [r.kind for r in explanation.break_reasons] == ["text-of-tensor"]
    traced = pyinterp.trace(text_showing_the_autograd_node, backend="eager")
    for seed in range(CALLS):
        _same_as_eager(traced, text_showing_the_autograd_node,
                       (_args(seed, (3,))[0].requires_grad_(),))


# -- generated: text of tensors -------------------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PIECES = ["{h.sum():%s}", "{h.max()!r}", "{h[:2]}", "{h.mean():%s}", "{str(h.min())}",
           "{repr(h[0])}", "{h.abs().max().item():%s}", "{format(h.std(), '%s')}"]
_SPECS = ["", ".2f", ".3e", ">9.1f", "+.0f", "g"]


@st.composite
def _tensor_texts(draw):
    pieces = [draw(st.sampled_from(_PIECES)).replace("%s", draw(st.sampled_from(_SPECS)))
              for _ in range(draw(st.integers(1, 3)))]
    where = draw(st.sampled_from(["print(text)", "LOG.info('%s', text)",
                                  "warnings.warn(text)", "return h, text"]))
    percent = draw(st.sampled_from(["", " + ' %s' % (h[1],)", " + ' %.3f|%s' % (h.sum(), h[:1])"]))
    body = "    h = torch.tanh(x * 3)\n    text = f\"%s\"%s\n    %s\n" % (
        " ".join(pieces), percent, where)
    if not where.startswith("return"):
        body += "    return h\n"
    return "def f(x):\n" + body


@settings(max_examples=max(5, settings().max_examples // 4))
@given(_tensor_texts())
def test_generated_text_of_tensors_matches_eager(source):
    namespace = {"torch": torch, "LOG": LOG, "warnings": warnings}
    exec(compile(source, "<tensor-text>", "exec"), namespace)
    fn = namespace["f"]
    traced = pyinterp.trace(fn, backend="eager")
    with torch.no_grad():
        for seed in range(3):
            _same_as_eager(traced, fn, _args(seed, (4,)))
