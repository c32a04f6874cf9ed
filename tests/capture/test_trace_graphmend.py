"""Data-dependent ``if`` without a graph break (GraphMend's rewrite).

A branch on a one-element tensor whose two arms only compute local values
is captured as both arms plus ``torch.where``; every test runs the traced
function and eager on inputs that take each arm, several times, and checks
one graph, no break, and that later calls are cache hits.  Arms that write
outside state, print, draw random numbers, or produce values that cannot be
merged are not merged: the branch's truth is *assumed* (one graph per path,
checked on every call: ``pyinterp/capture/values/assumptions.py``), and stays
correct on calls that take the other path.
"""
import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

SIGNS = [1.0, -1.0, -1.0, 1.0]


def _inputs(sign, *shapes):
    gen = torch.Generator().manual_seed(len(shapes))
    return tuple(torch.rand(*s, generator=gen) * sign + 0.01 * sign for s in shapes)


def _check_no_break(fn, *shapes):
    explanation = pyinterp.explain(fn, *_inputs(1.0, *shapes))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1
    compiled = []

    def backend(gm, example_inputs):
        compiled.append(gm)
        return gm.forward

    traced = pyinterp.trace(fn, backend=backend)
    for sign in SIGNS:
        args = _inputs(sign, *shapes)
        torch.testing.assert_close(traced(*args), fn(*args))
    assert len(compiled) == 1, "both signs must be served by the one graph"


def if_else(x, y):
    if x.sum() > 0:
        y = y * 2
        z = x + 1
    else:
        y = y - 1
        z = x - 1
    return y + z


def if_without_else(x):
    out = x
    if x.mean() > 0:
        out = out * 10
    return out


def conditional_expression(x):
    return x * 2 if x.max() > 0 else x / 2


def inside_module_forward(x):
    layer = torch.nn.functional.relu
    h = x + 1
    if (h * h).sum() < 100:
        h = layer(h) * 3
    return h


def local_only_in_one_arm(x):
    # transformers' fp16 clamp: `limit` is bound in one arm and dead after it
    if not torch.isfinite(x * 1e30).all():
        limit = 1e3
        x = torch.clamp(x * 1e30, min=-limit, max=limit)
    return x


def local_only_in_one_arm_but_read_later(x):
    scale = 1.0
    if x.sum() > 0:
        scale = 2.0  # a Python float that differs between the arms: a break
    return x * scale


@pytest.mark.parametrize("fn,shapes", [
    (local_only_in_one_arm, [(3,)]),
    (if_else, [(3,), (3,)]),
    (if_without_else, [(4,)]),
    (conditional_expression, [(2, 2)]),
    (inside_module_forward, [(5,)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_data_dependent_if_becomes_where(fn, shapes):
    _check_no_break(fn, *shapes)


# -- compound conditions: and/or, elif chains, nested ifs ---------------------
# Inputs with every sign combination of x and y, so that each path is taken.
SIGN_PAIRS = [(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, 1.0)]


def _pair(sx, sy, shape=(3,)):
    gen = torch.Generator().manual_seed(int(sx * 3 + sy))
    return (torch.rand(*shape, generator=gen) * sx + 0.01 * sx,
            torch.rand(*shape, generator=gen) * sy + 0.01 * sy)


def if_and(x, y):
    if x.sum() > 0 and y.sum() > 0:
        z = x + y
    else:
        z = x - y
    return z


def if_or(x, y):
    if x.sum() > 0 or y.sum() > 0:
        z = x * y
    else:
        z = x + y
    return z


def if_not_and(x, y):
    if not (x.sum() > 0 and y.sum() > 0):
        x = x * 3
    return x


def elif_chain(x, y):
    if x.sum() > 0:
        z = x * 2
    elif y.sum() > 0:
        z = y * 2
    else:
        z = x + y
    return z


def nested_if(x, y):
    z = x
    if x.sum() > 0:
        if y.sum() > 0:
            z = x * 2
        else:
            z = x * 3
        z = z + 1
    return z


def value_and(x, y):
    both = (x.sum() > 0) and (y.sum() > 0)
    return torch.where(both, x, y)


def value_or(x, y):
    return x * ((x.sum() > 0) or (y.sum() > 0))


def nested_conditional_expression(x, y):
    return x if x.sum() > 0 else (y if y.sum() > 0 else x + y)


@pytest.mark.parametrize("fn", [if_and, if_or, if_not_and, elif_chain, nested_if, value_and,
                                value_or, nested_conditional_expression],
                         ids=lambda f: f.__name__)
def test_compound_condition_becomes_where(fn):
    explanation = pyinterp.explain(fn, *_pair(1.0, -1.0))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1
    compiled = []

    def backend(gm, example_inputs):
        compiled.append(gm)
        return gm.forward

    traced = pyinterp.trace(fn, backend=backend)
    for sx, sy in SIGN_PAIRS:
        args = _pair(sx, sy)
        torch.testing.assert_close(traced(*args), fn(*args))
    assert len(compiled) == 1, "every sign combination must be served by the one graph"


def nested_arm_returns(x, y):
    if x.sum() > 0:
        if y.sum() > 0:
            return x * 2
        x = x + 1
    return x


def nested_arm_writes_outside(x, y):
    if x.sum() > 0:
        if y.sum() > 0:
            SEEN.append(2)
        x = x + 1
    return x


def nested_arm_returns_in_a_loop(x, y):
    for _ in range(2):
        if x.sum() > 0:
            if y.sum() > 0:
                return x * 2
            x = x + 1
    return x


def test_branches_whose_paths_all_return_merge_the_returned_values():
    # Every path returns (outside any try/with): the join is the return.
    explanation = pyinterp.explain(nested_arm_returns, *_pair(1.0, 1.0))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    traced = pyinterp.trace(nested_arm_returns, backend="eager")
    for sx, sy in SIGN_PAIRS:
        torch.testing.assert_close(traced(*_pair(sx, sy)), nested_arm_returns(*_pair(sx, sy)))
    assert len(traced._entries) == 1


def arm_returns_inside_with(x):
    with torch.no_grad():
        if x.sum() > 0:
            return x * 2
        return x - 1


def _assumed(explanation):
    """The branch was not merged: no break, its truth assumed."""
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.assumptions, "the unmerged branch must be an assumption"


@pytest.mark.parametrize("fn", [nested_arm_returns_in_a_loop, nested_arm_writes_outside,
                                arm_returns_inside_with],
                         ids=lambda f: f.__name__)
def test_compound_condition_that_cannot_merge_is_assumed_and_stays_correct(fn):
    args = _pair(1.0, 1.0)
    _assumed(pyinterp.explain(fn, *args[:fn.__code__.co_argcount]))
    traced = pyinterp.trace(fn, backend="eager")
    n = fn.__code__.co_argcount
    for sx, sy in SIGN_PAIRS:
        del SEEN[:]
        expected, seen = fn(*_pair(sx, sy)[:n]), list(SEEN)
        del SEEN[:]
        torch.testing.assert_close(traced(*_pair(sx, sy)[:n]), expected)
        assert SEEN == seen


SEEN = []


def arm_writes_outside(x):
    if x.sum() > 0:
        SEEN.append(1)
        x = x + 1
    return x


def arm_prints(x):
    if x.sum() > 0:
        print("positive")
        x = x + 1
    return x


def arm_draws_random(x):
    if x.sum() > 0:
        x = x + torch.rand(x.shape)
    return x


def arms_disagree_on_shape(x):
    if x.sum() > 0:
        y = x[:1]
    else:
        y = x
    return y


def arm_mutates_in_place(x):
    y = x * 1
    if x.sum() > 0:
        y.add_(1)
    return y


@pytest.mark.parametrize("fn", [local_only_in_one_arm_but_read_later,
                                arm_writes_outside, arm_prints, arm_draws_random,
                                arms_disagree_on_shape, arm_mutates_in_place],
                         ids=lambda f: f.__name__)
def test_unmergeable_arms_are_assumed_and_stay_correct(fn, capsys):
    _assumed(pyinterp.explain(fn, *_inputs(1.0, (3,))))
    capsys.readouterr()
    del SEEN[:]
    traced = pyinterp.trace(fn, backend="eager")
    for sign in SIGNS:
        (x,) = _inputs(sign, (3,))
        torch.manual_seed(0)
        expected = fn(x.clone())
        eager_out, eager_seen = capsys.readouterr().out, list(SEEN)
        del SEEN[:]
        torch.manual_seed(0)
        actual = traced(x.clone())
        assert capsys.readouterr().out == eager_out
        assert SEEN == eager_seen
        del SEEN[:]
        torch.testing.assert_close(actual, expected)


# -- inside loops, and appends to a list of the run ------------------------------
def per_row_append(x):
    out = []
    for row in x:
        if row.sum() > 0:
            out.append(row * 2)
        else:
            out.append(-row)
    return torch.stack(out)


def per_row_nested(x):
    out = []
    for row in x:
        if row.sum() > 0:
            if row[0] > 0:
                out.append(row * 3)
            else:
                out.append(row * 2)
        else:
            out.append(-row)
    return torch.stack(out)


def per_row_continue(x):
    acc = x[0] * 0
    for row in x:
        if row.sum() > 0:
            continue
        acc = acc + row
    return acc


def while_rows(x):
    i = 0
    acc = x[0] * 0
    while i < x.shape[0]:
        if x[i].sum() > 0:
            acc = acc + x[i]
        else:
            acc = acc - x[i] * 2
        i += 1
    return acc


def append_outside_a_loop(x):
    out = [x]
    if x.sum() > 0:
        out.append(x + 1)
    else:
        out.append(x - 1)
    return out


def _mixed_rows(seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(5, 3, generator=gen)


def _same(a, b):
    if isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b)
        for p, q in zip(a, b):
            torch.testing.assert_close(p, q)
    else:
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("fn", [per_row_append, per_row_nested, per_row_continue, while_rows,
                                append_outside_a_loop], ids=lambda f: f.__name__)
def test_branch_in_a_loop_or_appending_merges_without_a_break(fn):
    # An if at the end of a loop's body joins at the loop's head (each arm
    # ends in its own back edge); appends to a list of the run are taken
    # back after each arm and merged item by item.
    explanation = pyinterp.explain(fn, _mixed_rows(0))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1
    traced = pyinterp.trace(fn, backend="eager")
    for seed in range(5):  # rows of both signs, a different mix each call
        x = _mixed_rows(seed)
        _same(traced(x), fn(x))
    assert len(traced._entries) == 1


def arms_append_different_counts(x):
    out = []
    for row in x:
        if row.sum() > 0:
            out.append(row * 2)
            out.append(row)
        else:
            out.append(-row)
    return out


def arm_appends_to_outside_list(x):
    for row in x:
        if row.sum() > 0:
            SEEN.append(row * 2)
        else:
            SEEN.append(-row)
    return x * 1


@pytest.mark.parametrize("fn", [arms_append_different_counts, arm_appends_to_outside_list],
                         ids=lambda f: f.__name__)
def test_appends_that_cannot_merge_are_assumed_and_stay_correct(fn):
    del SEEN[:]
    _assumed(pyinterp.explain(fn, _mixed_rows(0)))
    traced = pyinterp.trace(fn, backend="eager")
    for seed in range(4):
        x = _mixed_rows(seed)
        del SEEN[:]
        expected, eager_seen = fn(x), list(SEEN)
        del SEEN[:]
        _same(traced(x), expected)
        _same(list(SEEN), eager_seen)
    del SEEN[:]


def test_per_row_branch_with_gradients_matches_eager():
    w0 = torch.tensor([0.5, 2.0, 1.0])

    def per_row_grad(x, w):
        out = []
        for row in x:
            if row.sum() > 0:
                out.append((row * w).sqrt())
            else:
                out.append(row * w)
        return torch.stack(out).sum()

    def inputs(k):
        x = _mixed_rows(k).abs() * torch.tensor([1.0, -1.0, 1.0, -1.0, 1.0])[:, None]
        if k % 2:
            x = -x
        return [x, w0.clone().requires_grad_(True)]

    explanation = pyinterp.explain(per_row_grad, *inputs(0))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    _grads_match(per_row_grad, inputs, "eager")


def arm_computes_then_writes_outside(x):
    if x.sum() > 0:
        y = x.exp()
        SEEN.append(1)
        x = x + y
    return x


def test_failed_speculation_leaves_no_ops_in_the_graph():
    # The arm recorded exp() before the write refused it; nothing can reach
    # that value, and the eager backend would run it on every call.  The
    # branch is then assumed, and the arm runs for real: one exp().
    del SEEN[:]
    explanation = pyinterp.explain(arm_computes_then_writes_outside, torch.ones(3))
    del SEEN[:]
    _assumed(explanation)
    graph, = explanation.graphs
    assert [n.target for n in graph.graph.nodes if n.op == "call_method"] == [
        "sum", "gt", "exp", "add"]
    traced = pyinterp.trace(arm_computes_then_writes_outside, backend="eager")
    for sign in SIGNS:
        (x,) = _inputs(sign, (3,))
        expected, eager_seen = arm_computes_then_writes_outside(x), list(SEEN)
        del SEEN[:]
        torch.testing.assert_close(traced(x), expected)
        assert SEEN == eager_seen
        del SEEN[:]


# -- gradients: torch.cond instead of torch.where ------------------------------
def sqrt_or_double(x):
    if x.min() > 0:
        y = x.sqrt()
    else:
        y = x * 2
    return y.sum()


def nested_grad_branch(x, w):
    h = x * w
    if h.sum() > 0:
        if h.max() > 1:
            h = h.sqrt()
        else:
            h = h * 3
    return h.sum()


class BranchyLayer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        h = self.lin(x)
        if h.mean() > 0:
            h = h.relu().sqrt()
        else:
            h = h.abs()
        return h.sum()


def _grads_match(fn, make_inputs, backend, calls=4):
    """Results and input gradients equal eager's, NaN-free where eager's are."""
    traced = pyinterp.trace(fn, backend=backend)
    for k in range(calls):
        eager_in = make_inputs(k)
        traced_in = [t.detach().clone().requires_grad_(t.requires_grad) for t in eager_in]
        expected, actual = fn(*eager_in), traced(*traced_in)
        torch.testing.assert_close(actual, expected)
        expected.backward()
        actual.backward()
        for e, a in zip(eager_in, traced_in):
            if e.requires_grad:
                torch.testing.assert_close(a.grad, e.grad)


def _with_zero(k):
    # alternately all positive (sqrt arm) and containing 0 (the other arm,
    # where sqrt's gradient at 0 is infinite)
    x = torch.tensor([0.0, 1.0, 4.0]) + (1.0 if k % 2 else 0.0)
    return [x.requires_grad_(True)]


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_branch_with_gradients_uses_cond_and_matches_eager_grads(backend):
    explanation = pyinterp.explain(sqrt_or_double, *_with_zero(0))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    code = explanation.graphs[0].code
    assert "higher_order.cond" in code and "where" not in code
    _grads_match(sqrt_or_double, _with_zero, backend)


def test_nested_branches_with_gradients():
    def inputs(k):
        x = torch.tensor([0.0, 0.5, 2.0]) * (1 if k % 2 else -1) + (k % 3) * 0.1
        return [x.requires_grad_(True), torch.tensor([1.0, 2.0, 0.25], requires_grad=True)]
    _grads_match(nested_grad_branch, inputs, "eager", calls=6)


def test_branch_in_training_module_matches_eager_grads():
    torch.manual_seed(0)
    eager_module = BranchyLayer()
    traced_module = BranchyLayer()
    traced_module.load_state_dict(eager_module.state_dict())
    traced = pyinterp.trace(traced_module, backend="eager")
    for k in range(4):
        x = torch.randn(2, 3, generator=torch.Generator().manual_seed(k))
        expected, actual = eager_module(x), traced(x)
        torch.testing.assert_close(actual, expected)
        expected.backward()
        actual.backward()
    for (name, e), (_, a) in zip(eager_module.named_parameters(), traced_module.named_parameters()):
        torch.testing.assert_close(a.grad, e.grad, msg=name)


def test_branch_without_gradients_still_uses_where():
    with torch.no_grad():
        explanation = pyinterp.explain(sqrt_or_double, *_with_zero(0))
    assert "where" in explanation.graphs[0].code


def test_nested_branches_with_gradients_are_one_graph():
    x = torch.tensor([0.0, 0.5, 2.0], requires_grad=True)
    w = torch.tensor([1.0, 2.0, 0.25], requires_grad=True)
    explanation = pyinterp.explain(nested_grad_branch, x, w)
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graphs[0].code.count("higher_order.cond") == 1  # the inner one is nested


def test_a_branch_that_cannot_merge_is_assumed_at_the_if_line():
    # The arms run speculatively first; when the merge fails (a print in an
    # arm), the assumption names the ``if`` line, not the arm's line it
    # stopped at.
    from trace_support import line_of

    def f(x):
        h = x * 2
        if h.sum().item() > 100:  # the assumption
            print("big")
        return h + 1

    for fill, taken in ((1.0, False), (100.0, True)):
        explanation = pyinterp.explain(f, torch.full((4,), fill))
        _assumed(explanation)
        text, = explanation.assumptions
        assert text.endswith(":%d: assumed %s: if h.sum().item() > 100:  # the assumption"
                             % (line_of(f, "# the assumption"), taken)), text
