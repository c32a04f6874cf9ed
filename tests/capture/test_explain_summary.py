"""pyinterp.explain's summary fits a screen for a real model, agrees with
``torch._dynamo.explain`` and with what a traced entry captures; a break
shows its file:line, the source line and a hint; the details hold every
guard, the mock and each graph with the user's source lines."""
import os
import sys

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from pyinterp.capture.explain_text import WIDTH  # noqa: E402

from trace_support import fresh, line_of  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "benchmarks"))
import models  # noqa: E402

THIS_FILE = __file__
SCREEN = 60


def _model(name):
    pytest.importorskip("transformers", reason="the Hugging Face models need transformers")
    spec = models.get_model(name)
    args, kwargs = spec.example(0)
    return spec.build(), args, kwargs


@pytest.fixture(scope="module", params=["hf_gpt2", "hf_bert"])
def real_model(request):
    module, args, kwargs = _model(request.param)
    with torch.no_grad():
        exp = pyinterp.explain(module, *args, **kwargs)
    return module, args, kwargs, exp


def test_summary_of_a_real_model_fits_a_screen(real_model):
    _, _, _, exp = real_model
    lines = str(exp).splitlines()
    assert len(lines) <= SCREEN, str(exp)
    assert max(len(line) for line in lines) <= WIDTH, str(exp)
    assert len(exp.guards) > SCREEN  # (the whole list would not fit)


def test_summary_counts_agree_with_torch_dynamo_explain(real_model):
    module, args, kwargs, exp = real_model
    torch._dynamo.reset()
    try:
        with torch.no_grad():
            dynamo = torch._dynamo.explain(module)(*args, **kwargs)
    finally:
        torch._dynamo.reset()
    assert (exp.graph_count, exp.graph_break_count) == (dynamo.graph_count,
                                                        dynamo.graph_break_count)
    first = str(exp).splitlines()[0]
    assert "%d graph," % exp.graph_count in first
    assert "%d graph breaks" % exp.graph_break_count in first
    assert "%d guards" % len(exp.out_guards) in first


def test_summary_agrees_with_the_traced_entry(real_model):
    module, args, kwargs, exp = real_model
    traced = pyinterp.trace(module, backend="eager")
    with torch.no_grad():
        result = traced(*args, **kwargs)
        expected = module(*args, **kwargs)
    got, want = models.flatten_tensors(result), models.flatten_tensors(expected)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b)
    (entry,) = traced._entries
    assert entry.trace.graph_count == exp.graph_count
    assert entry.trace.ops_per_graph == exp.ops_per_graph
    assert len(entry.trace.guards) == len(exp.out_guards)
    text = str(exp)
    assert "1. %d ops" % entry.trace.ops_per_graph[0] in text
    shape = list(models.flatten_tensors(args)[0].shape)
    assert "%s on cpu" % shape in text  # the input's specialization


def test_details_of_a_real_model_hold_every_guard_the_mock_and_the_graph(real_model):
    _, _, _, exp = real_model
    details = exp.details()
    for g in exp.guards:
        assert g in details
    assert exp.mock and exp.mock.splitlines()[0] in details
    assert "class GraphModule(torch.nn.Module):" in details
    assert "# File: " in details  # a node's user source line (print_readable)


def with_break(x):
    y = x * 2
    n = y.sum().numpy().tolist()  # THE-BREAK
    return y * float(n)


def break_in_loop(x):
    for _ in range(3):
        x = x + round(x.sum().item(), 4)  # LOOP-BREAK
    return x


def test_break_shows_file_line_source_line_kind_and_hint():
    exp = pyinterp.explain(with_break, fresh(3))
    text = str(exp)
    (r,) = exp.break_reasons
    line = line_of(with_break, "# THE-BREAK")
    assert (r.filename, r.lineno) == (THIS_FILE, line)
    assert "1. %s:%d\n" % (os.path.relpath(THIS_FILE), line) in text, text
    flat = " ".join(text.split())  # (long lines are wrapped)
    assert "n = y.sum().numpy().tolist() # THE-BREAK" in flat
    assert "[%s] %s" % (r.kind, r.message) in flat
    assert "hint: " + r.hint in flat
    assert "1 graph break," in text.splitlines()[0]


def test_breaks_at_one_site_are_one_line_with_their_count():
    exp = pyinterp.explain(break_in_loop, fresh(3))
    assert exp.graph_break_count == 3
    text = str(exp)
    assert "3 graph breaks" in text.splitlines()[0]
    assert "Graph breaks: 3 at 1 site" in text
    assert text.count(":%d (3x)\n" % line_of(break_in_loop, "# LOOP-BREAK")) == 1
    assert exp.details().count(":%d:" % line_of(break_in_loop, "# LOOP-BREAK")) == 3


def test_long_guards_are_cut_in_the_summary_not_in_the_details():
    names = ["option_%03d" % i for i in range(60)]
    config = dict.fromkeys(names, 1.5)

    def f(x):
        return x * sum(config[k] for k in names)

    exp = pyinterp.explain(f, fresh(2))
    details = exp.details().splitlines()
    assert max(len(line) for line in details) > WIDTH  # the keys guard, in full
    assert max(len(line) for line in str(exp).splitlines()) <= WIDTH


def test_specializations_name_inputs_and_values():
    def f(x, n, scale=0.5):
        return x * n * scale

    exp = pyinterp.explain(f, fresh(2, 3), 4, scale=0.25)
    assert exp.specializations[:1] == ["x: float32[2, 3] on cpu"]
    assert "n == 4" in exp.specializations
    assert "scale == 0.25" in exp.specializations
    text = str(exp)
    assert "x: float32[2, 3] on cpu" in text and "n == 4" in text


def test_traced_function_shows_its_recompiles():
    def f(x, n):
        return x * n

    traced = pyinterp.trace(f, backend="eager", dynamic=False)  # (exact shapes: a recompile each)
    for size, n in [(2, 2), (3, 2), (2, 3)]:
        x = fresh(size)
        torch.testing.assert_close(traced(x, n), f(x, n))
    exp = pyinterp.explain(traced, fresh(2), 2)
    assert len(exp.cache_entries) == 3
    text = str(exp)
    assert "3 entries (2 recompiles)" in text, text
    reasons = dict(exp.recompile_reasons)
    # The oldest entry (x: [2], n == 2) failed on its shape, then on n.
    assert reasons["x: float32[2] on cpu (entry 3)"] == 1
    assert reasons["n == 2 (entry 3)"] == 1
    assert reasons["x: float32[3] on cpu (entry 2)"] == 1
    assert "n == 2 (entry 3)" in text


def test_times_are_measured():
    exp = pyinterp.explain(with_break, fresh(3))
    assert exp.times["capture"] > 0
    assert exp.times["capture"] >= exp.times["guards"] > 0
    assert exp.compile_times in str(exp)
