"""Hypothesis: generated programs that compute with the sizes of their
input, traced with ``dynamic=True`` and ``dynamic=None``, called on a run
of shapes: every result, returned value and exception equals eager's.

Each program reads sizes (``x.shape``, ``x.size(d)``, ``len(x)``,
``x.numel()``), computes with them (``+ - * // %``, unary minus, a helper
function in another frame), branches on them, passes them to tensor ops
(``view``, ``reshape``, ``arange``, ``new_zeros``, ``expand``, slicing)
and to native code (``range``, ``max``, formatting, a dict key), and
returns tensors and ints.  A wrong symbolic graph, or a size baked in as a
constant without its guard, gives a different result on a later shape.
"""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

_READS = ["x.shape[0]", "x.shape[1]", "x.size(0)", "x.size(-1)", "len(x)", "x.numel()"]


def helper(a, b):
    """Interpreted code in another frame (sizes cross frames)."""
    return a * 2 + b


@st.composite
def _size_programs(draw):
    ints, lines = ["b", "n"], ["b, n = x.shape"]
    for _ in range(draw(st.integers(1, 8))):
        a, c = draw(st.sampled_from(ints)), draw(st.sampled_from(ints))
        new = "i%d" % len(lines)
        kind = draw(st.integers(0, 13))
        if kind == 0:
            lines.append("%s = %s" % (new, draw(st.sampled_from(_READS))))
        elif kind == 1:
            lines.append("%s = %s %s %s" % (new, a, draw(st.sampled_from("+-*")), c))
        elif kind == 2:
            lines.append("%s = %s %s %d" % (new, a, draw(st.sampled_from(["//", "%"])),
                                             draw(st.integers(1, 5))))
        elif kind == 3:
            lines.append("%s = helper(%s, %s)" % (new, a, c))
        elif kind == 4:
            lines.append("%s = -%s + %s * 3" % (new, a, c))
        elif kind == 5:
            lines.append("x = x * (%s %% 7) + 1" % a)
            continue
        elif kind == 6:
            lines.append("if %s %s %s:\n    x = x * 2\nelse:\n    x = x - 1"
                         % (a, draw(st.sampled_from(["<", ">", "==", "!=", ">=", "<="])), c))
            continue
        elif kind == 7:
            lines.append("x = x.reshape(-1).view(b * n).view(b, n)")
            continue
        elif kind == 8:
            lines.append("x = x + torch.arange(n).expand(b, n) * 0.5")
            continue
        elif kind == 9:
            lines.append("x = x + x.new_zeros(b, n)[:, : max(%s %% n, 1)].sum()" % a)
            continue
        elif kind == 10:
            lines.append("x = x[:, : n // 2 + 1].sum(1, keepdim=True).expand(b, n) + x")
            continue
        elif kind == 11:
            lines.append("for k in range(%s %% 3):\n    x = x + k" % a)
            continue
        elif kind == 12:
            lines.append("x = x * len(str(%s))" % a)
            continue
        else:
            lines.append("x = x + {3: 1.0, 4: 2.0}.get(%s, 0.5)" % a)
            continue
        ints.append(new)
    ret = draw(st.sampled_from(["x", "x, %s" % draw(st.sampled_from(ints)),
                                "x.sum(0) * %s" % draw(st.sampled_from(ints))]))
    lines.append("return " + ret)
    return "def f(x):\n" + "\n".join("    " + ln.replace("\n", "\n    ") for ln in lines) + "\n"


_SHAPES = st.lists(st.tuples(st.integers(1, 7), st.integers(1, 9)), min_size=2, max_size=6)


def _outcome(fn, x):
    try:
        return "ok", fn(x)
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return "raised", (type(e), str(e))


@settings(max_examples=max(5, settings().max_examples // 4))
@given(_size_programs(), _SHAPES, st.sampled_from([True, None]))
def test_generated_size_programs_match_eager(source, shapes, dynamic):
    namespace = {"torch": torch, "helper": helper}
    exec(compile(source, "<size-program>", "exec"), namespace)  # noqa: S102
    fn = namespace["f"]
    traced = pyinterp.trace(fn, backend="eager", dynamic=dynamic)
    for i, shape in enumerate(shapes):
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(i))
        expected = _outcome(fn, x.clone())
        got = _outcome(traced, x.clone())
        assert got[0] == expected[0], (source, shape, got, expected)
        if expected[0] == "raised":
            assert got[1] == expected[1], (source, shape)
            continue
        want, have = expected[1], got[1]
        if isinstance(want, tuple):
            torch.testing.assert_close(have[0], want[0], msg=lambda m: source + m)
            assert have[1] == want[1] and type(have[1]) is type(want[1]), (source, shape)
        else:
            torch.testing.assert_close(have, want, msg=lambda m: source + m)
