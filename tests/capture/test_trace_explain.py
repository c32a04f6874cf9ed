"""pyinterp.explain: graphs, breaks with the user's file and line, guards,
the mock, and a printable summary."""
import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from pyinterp.capture.explain import Explanation  # noqa: E402
from torch import nn  # noqa: E402

from trace_support import fresh, line_of  # noqa: E402

THIS_FILE = __file__
EXPLAIN_SCALE = 3.0


def no_tensor_ops(a, b):
    return [a, b, a * b]


def simple(inp_tensor):
    return (inp_tensor * EXPLAIN_SCALE).relu() + 1


def break_in_loop(x):
    total = x * 0
    for i in range(3):
        total = total + x * round(x.sum().item(), 4)  # LOOP-BREAK
    return total


def two_breaks(x):
    a = abs(x.sum().item())  # FIRST
    if abs(x.mean().item()) > 0:  # SECOND (abs() of a float from tensor data)
        return x * a
    return x - a


def test_no_tensor_ops_has_no_graph():
    exp = pyinterp.explain(no_tensor_ops, 2, 3)
    assert exp.graph_count == 0
    assert exp.graph_break_count == 0
    assert list(exp.break_reasons) == []
    assert len(exp.graphs) == 0


def test_simple_function_one_graph_no_breaks():
    exp = pyinterp.explain(simple, fresh(3))
    assert exp.graph_count == 1
    assert exp.graph_break_count == 0
    assert len(exp.graphs) == 1
    assert isinstance(exp.graphs[0], torch.fx.GraphModule)
    assert len(exp.ops_per_graph) == 1
    assert exp.ops_per_graph[0]


def test_graph_module_computes_the_function():
    x = fresh(3)
    exp = pyinterp.explain(simple, x)
    gm = exp.graphs[0]
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    assert len(placeholders) == 1
    out = gm(x)
    result = out[0] if isinstance(out, (tuple, list)) else out
    torch.testing.assert_close(result, simple(x))


def test_guards_are_readable_strings_naming_the_state():
    exp = pyinterp.explain(simple, fresh(3))
    assert exp.guards
    assert all(isinstance(g, str) for g in exp.guards)
    assert any("EXPLAIN_SCALE" in g for g in exp.guards), exp.guards
    assert any("inp_tensor" in g for g in exp.guards), exp.guards


def test_guard_keeps_a_path_in_a_local_only_if_it_reads_it_again():
    # An access path used once is read where it is used; a local costs a
    # store and a load (and the guard of a big model has hundreds).
    import re
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2)).eval()
    exp = pyinterp.explain(model, fresh(2, 4))
    lines = exp.guard_code.splitlines()
    assigned = [(i, m.group(1)) for i, line in enumerate(lines)
                for m in [re.match(r"\s*(s\d+) = ", line)] if m]
    assert assigned, exp.guard_code
    for i, name in assigned:
        later = sum(len(re.findall(r"\b%s\b" % name, line)) for line in lines[i + 1:])
        assert later >= 2, (name, exp.guard_code)
    with torch.no_grad():
        traced = pyinterp.trace(model, backend="eager")
        for seed in range(3):
            x = fresh(2, 4, seed=seed)
            torch.testing.assert_close(traced(x), model(x))


def test_mock_is_readable_text():
    exp = pyinterp.explain(simple, fresh(3))
    assert isinstance(exp.mock, str) and exp.mock.strip()


def test_break_in_loop_counts_each_iteration():
    exp = pyinterp.explain(break_in_loop, fresh(3))
    assert exp.graph_break_count == 3
    assert len(exp.break_reasons) == 3
    line = line_of(break_in_loop, "# LOOP-BREAK")
    for r in exp.break_reasons:
        assert r.filename == THIS_FILE
        assert r.lineno == line


def test_break_reasons_point_at_user_lines_in_order():
    exp = pyinterp.explain(two_breaks, torch.ones(3))
    assert exp.graph_break_count == 2
    assert [r.lineno for r in exp.break_reasons] == [
        line_of(two_breaks, "# FIRST"), line_of(two_breaks, "# SECOND")]
    for r in exp.break_reasons:
        assert r.filename == THIS_FILE
        assert isinstance(r.kind, str) and r.kind
        assert isinstance(r.message, str) and r.message
        assert isinstance(r.hint, str) and r.hint


def test_break_count_follows_the_path_taken():
    def f(x, n):
        for _ in range(n):
            x = x + round(x.max().item(), 4)
        return x

    assert pyinterp.explain(f, fresh(2), 0).graph_break_count == 0
    assert pyinterp.explain(f, fresh(2), 2).graph_break_count == 2
    assert pyinterp.explain(f, fresh(2), n=5).graph_break_count == 5


def test_break_in_helper_points_at_helper_line():
    def helper(t):
        return t.long().reshape(1, -1).tolist()  # HELPER-BREAK (a 2-d tensor's ints: a break)

    def f(x):
        return helper(x * 2)

    exp = pyinterp.explain(f, fresh(2))
    assert exp.graph_break_count == 1
    (r,) = exp.break_reasons
    assert (r.filename, r.lineno) == (THIS_FILE, line_of(helper, "# HELPER-BREAK"))


def test_details_contain_guards_and_break_reasons():
    exp = pyinterp.explain(two_breaks, torch.ones(3))
    text = exp.details()
    for g in exp.guards:
        assert g in text
    for r in exp.break_reasons:
        assert r.message in text
        assert str(r.lineno) in text


def test_details_of_clean_function_contain_guards_and_summary_counts_them():
    exp = pyinterp.explain(simple, fresh(3))
    text = exp.details()
    assert exp.guards
    for g in exp.guards:
        assert g in text
    assert "%d guards" % len(exp.guards) in str(exp)


def test_print_explanation(capsys):
    exp = pyinterp.explain(break_in_loop, fresh(3))
    print(exp)
    out = capsys.readouterr().out
    assert out.strip()
    assert str(line_of(break_in_loop, "# LOOP-BREAK")) in out


def test_explain_module_and_kwargs():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)

        def forward(self, x, scale=1.0):
            return self.lin(x) * scale

    m = M()
    exp = pyinterp.explain(m, fresh(1, 3), scale=2.0)
    assert exp.graph_count == 1
    assert exp.graph_break_count == 0


def test_explain_runs_side_effects_once():
    calls = []

    def f(x):
        calls.append(1)
        return x + 1

    pyinterp.explain(f, fresh(2))
    assert len(calls) == 1


def test_explain_does_not_affect_a_traced_function():
    counter = []

    def backend(gm, example_inputs):
        counter.append(gm)
        return gm.forward

    traced = pyinterp.trace(simple, backend=backend)
    x = fresh(3)
    torch.testing.assert_close(traced(x), simple(x))
    pyinterp.explain(simple, x)
    torch.testing.assert_close(traced(x), simple(x))
    assert len(counter) == 1


@pytest.mark.parametrize("fn", [no_tensor_ops, simple, break_in_loop, two_breaks],
                         ids=lambda f: f.__name__)
def test_graph_count_graphs_and_ops_per_graph_agree(fn):
    args = (2, 3) if fn is no_tensor_ops else (torch.ones(3),)
    exp = pyinterp.explain(fn, *args)
    assert len(exp.graphs) == exp.graph_count
    assert len(exp.ops_per_graph) == exp.graph_count
    assert all(isinstance(g, torch.fx.GraphModule) for g in exp.graphs)


def test_explain_counts_breaks_on_module():
    class M(nn.Module):
        def forward(self, x):
            for _ in range(2):
                x = x * round(x.max().item(), 4)  # MODULE-BREAK
            return x

    m = M()
    exp = pyinterp.explain(m, torch.ones(2))
    assert exp.graph_break_count == 2
    assert all(r.lineno == line_of(M.forward, "# MODULE-BREAK") for r in exp.break_reasons)


def test_explain_of_a_result_the_mock_cannot_rebuild():
    # the break is found after the run, building the mock: explain reports
    # it with the run's graph (it used to fail with a KeyError)
    def fn(x):
        return x * 2, iter([1])

    exp = pyinterp.explain(fn, torch.ones(3))
    assert [r.kind for r in exp.break_reasons] == ["unsupported-value"]
    assert "list_iterator" in exp.break_reasons[0].message
    # (found after the run: it names the function, not an unknown place)
    where = exp.break_reasons[0]
    assert (where.filename, where.lineno) == (THIS_FILE, fn.__code__.co_firstlineno)
    assert "<unknown>" not in str(exp)
    assert exp.graph_count == 1 and exp.ops_per_graph == [1]
    traced = pyinterp.trace(fn, backend="eager")
    for _ in range(2):
        out, it = traced(torch.ones(3))
        assert torch.equal(out, torch.ones(3) * 2) and list(it) == [1]


# -- explain(fn)(*args): torch._dynamo.explain's form -----------------------------


def _zero_args():
    return torch.ones(2) * EXPLAIN_SCALE


def test_curried_form_explains_the_call_with_those_arguments():
    x = fresh(3)
    later = pyinterp.explain(two_breaks)
    assert callable(later) and not isinstance(later, Explanation)
    curried, direct = later(x), pyinterp.explain(two_breaks, x)
    assert curried.guards == direct.guards
    assert (curried.graph_count, curried.graph_break_count, curried.ops_per_graph) \
        == (direct.graph_count, direct.graph_break_count, direct.ops_per_graph)
    assert torch.equal(curried.result, two_breaks(x))


def test_curried_form_for_a_module_and_a_traced_module():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    x = fresh(2, 4)
    assert pyinterp.explain(model)(x).graph_count == 1
    traced = pyinterp.trace(model, backend="eager")
    traced(x)
    exp = pyinterp.explain(traced)(x)
    assert exp.graph_count == 1 and torch.equal(exp.result, model(x))


def test_function_that_needs_no_arguments_is_explained_at_once():
    exp = pyinterp.explain(_zero_args)
    assert isinstance(exp, Explanation) and exp.graph_count == 1
    assert torch.equal(exp.result, _zero_args())
