"""Python decisions on ints from tensor data (values/data_decisions.py):
a comparison or truth test of an int from ``.item()``/``int()``/
``.tolist()`` (in the frame that made it or in one it was passed to) or
of a data-dependent size (``nonzero()``, a mask) is a merged branch when
it feeds a jump, and an assumption the graph checks otherwise: never a
guard, never a wrong result.  Every call is compared with eager (outputs,
printed text, gradients)."""
import pytest
import torch

import pyinterp
from pyinterp.capture.explain_text import short_file
from trace_support import CountingBackend


_HERE = short_file(__file__)  # (as explain shows the file: relative to the working directory)
MASKS = ([1, 0, 1, 0], [0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 1, 0])


def _inputs(mask):
    return torch.arange(4.0) - 1.5, torch.tensor(mask, dtype=torch.bool)


# -- an int handed to another frame, which branches on it ------------------------------
def _head(x, n):
    if n > 1:
        return x * n
    return x - 1


def item_to_a_callee(x, mask):
    n = mask.sum().item()
    return _head(x * 2, n)


def int_to_a_callee(x, mask):
    return _head(x, int(mask.sum()))


def _truthy(x, n):
    if n:
        return x.exp()
    return x.abs()


def truth_in_a_callee(x, mask):
    return _truthy(x, mask.sum().item())


def tolist_decided_twice(x, mask):
    first, second = mask.long().tolist()[:2]
    y = x * 2 if first == second else x + 1
    if first + second >= 1:
        y = y.sin()
    return y


# -- data-dependent sizes -----------------------------------------------------------
def count_of_nonzero(x, mask):
    idx = mask.nonzero()
    if idx.shape[0] == 0:
        return x.sum()
    return x[idx[:, 0]].sum()


def len_of_masked(x, mask):
    kept = x[mask]
    if len(kept) > 1:
        return kept.mean() + x
    return x * 0


MERGED = [item_to_a_callee, int_to_a_callee, truth_in_a_callee, tolist_decided_twice,
          count_of_nonzero, len_of_masked]


@pytest.mark.parametrize("fn", MERGED)
def test_a_decision_feeding_a_jump_is_one_merged_graph(fn):
    backend = CountingBackend()
    traced = pyinterp.trace(fn, backend=backend, fullgraph=True)
    for mask in MASKS:
        torch.testing.assert_close(traced(*_inputs(mask)), fn(*_inputs(mask)))
    explanation = pyinterp.explain(fn, *_inputs(MASKS[0]))
    assert explanation.graph_count == 1 and explanation.graph_break_count == 0
    assert explanation.assumptions == []  # (merged, not assumed)
    assert explanation.merged_branches and all(
        line.startswith(_HERE + ":") for line in explanation.merged_branches)
    assert backend.compiles == 1 and traced.cache_entries()[0].hits == len(MASKS) - 1


def test_explain_lists_the_merged_branch_with_its_line():
    explanation = pyinterp.explain(item_to_a_callee, *_inputs(MASKS[0]))
    line = _head.__code__.co_firstlineno + 1
    assert explanation.merged_branches == ["%s:%d: if n > 1:" % (_HERE, line)]
    text = str(explanation)
    assert "Merged branches (conditions on tensor data" in text and "if n > 1:" in text
    assert "Merged branches (1):" in explanation.details()


@pytest.mark.parametrize("fn", [item_to_a_callee, count_of_nonzero, tolist_decided_twice])
def test_merged_decisions_compile_with_inductor(fn):
    backend = CountingBackend("inductor")
    traced = pyinterp.trace(fn, backend=backend)
    for mask in MASKS:
        torch.testing.assert_close(traced(*_inputs(mask)), fn(*_inputs(mask)))
    assert backend.compiles == 1


def _index_first(x, mask):
    idx = mask.nonzero()
    if idx.shape[0] > 0:
        return x[idx[0, 0]]  # (raises on an empty idx: the arm not taken then)
    return x.sum()


def test_an_arm_that_would_raise_on_other_data_stays_right():
    # the merged graph computes both arms; where the untaken one raises
    # on a call's data, that call runs natively, as the graph wrote nothing
    traced = pyinterp.trace(_index_first, backend="eager")
    for mask in MASKS:
        torch.testing.assert_close(traced(*_inputs(mask)), _index_first(*_inputs(mask)))


# -- no jump after it, or arms that cannot merge: assumed ----------------------------
def compared_into_a_value(x, mask):
    n = mask.sum().item()
    ok = n > 1
    return x + 1, ok


def negated(x, mask):
    n, _ = mask.long().tolist()[:2]
    return x * (not n)


def _report(x, n):
    if n > 1:
        print("many:", x.shape)
        return x * 2
    print("few")
    return x


def prints_in_a_callee(x, mask):
    return _report(x, mask.sum().item())


@pytest.mark.parametrize("fn", [compared_into_a_value, negated, prints_in_a_callee])
def test_a_decision_that_cannot_merge_is_assumed(fn, capsys):
    backend = CountingBackend()
    traced = pyinterp.trace(fn, backend=backend, fullgraph=True)
    for mask in MASKS:
        expected = fn(*_inputs(mask))
        eager_out = capsys.readouterr().out
        got = traced(*_inputs(mask))
        assert capsys.readouterr().out == eager_out
        if isinstance(expected, tuple):
            torch.testing.assert_close(got[0], expected[0])
            assert got[1] is expected[1]
        else:
            torch.testing.assert_close(got, expected)
    explanation = pyinterp.explain(fn, *_inputs(MASKS[0]))
    assert explanation.graph_break_count == 0 and len(explanation.assumptions) == 1
    assert explanation.assumptions[0].startswith(_HERE + ":")
    assert len(traced.cache_entries()) == 2 and backend.compiles == 2


def test_a_decision_inside_a_merged_arm_is_merged_too():
    def fn(x, mask):
        n = mask.sum().item()
        if x.sum() > 0:  # (a tensor condition, merged)
            if n > 1:  # (a decision inside the arm: merged in turn)
                return x * 3
            return x * 4
        return x

    traced = pyinterp.trace(fn, backend="eager", fullgraph=True)
    for mask in MASKS:
        for sign in (1, -1):
            x, m = _inputs(mask)
            torch.testing.assert_close(traced(x * sign + 1, m), fn(x * sign + 1, m))
    assert len(traced.cache_entries()) == 1
    assert len(pyinterp.explain(fn, *_inputs(MASKS[0])).merged_branches) == 2  # (outer, inner)


def test_a_branch_that_cannot_merge_is_not_listed_as_merged():
    def fn(x, mask):
        n = mask.sum().item()
        if x.sum() > 0:  # (an arm that prints: not merged, assumed)
            if n > 1:  # (merged inside the arm, then undone with it)
                x = x * 3
            print("positive")
        return x

    explanation = pyinterp.explain(fn, *_inputs(MASKS[0]))
    assert explanation.merged_branches == [] and len(explanation.assumptions) == 1


# -- gradients --------------------------------------------------------------------------
class Routed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.wide = torch.nn.Linear(4, 4)
        self.narrow = torch.nn.Linear(4, 4)

    def pick(self, x, n):
        if n > 1:  # a submodule chosen by an int from tensor data, in a callee
            return self.wide(x)
        return self.narrow(x)

    def forward(self, x, mask):
        return self.pick(x, mask.sum().item()).relu().sum()


def test_gradients_follow_the_path_each_call_takes():
    eager, model = Routed(), Routed()
    traced = pyinterp.trace(model, backend="eager", fullgraph=True)
    for mask in MASKS:
        x = torch.arange(8.0).view(2, 4) / 7
        m = torch.tensor(mask, dtype=torch.bool)
        for module, run in ((eager, eager), (model, traced)):
            module.zero_grad(set_to_none=True)
            run(x, m).backward()
        for (name, p), q in zip(eager.named_parameters(), model.parameters()):
            if p.grad is None:
                assert q.grad is None, name
            else:
                torch.testing.assert_close(q.grad, p.grad, msg=name)


# -- when nothing can be kept in the graph ------------------------------------------------
def test_a_value_needed_as_a_number_still_breaks_and_stays_right():
    def fn(x, mask):
        first = mask.long().tolist()[0]
        for _ in range(first + 1):  # range() needs the number
            x = x * 2
        return x

    with pytest.raises(pyinterp.GraphBreakError, match="data-dependent-value"):
        pyinterp.trace(fn, backend="eager", fullgraph=True)(*_inputs(MASKS[0]))
    traced = pyinterp.trace(fn, backend="eager")
    for mask in MASKS:
        torch.testing.assert_close(traced(*_inputs(mask)), fn(*_inputs(mask)))
