"""Bools from tensor data that the graph assumes and checks on every call.

``flag = mask.any().item()`` handed to other functions (Hugging Face
Longformer's ``is_global_attn``, passed to every layer) was a break at
``.item()``.  Now the capture takes the run's value as a constant, the graph
checks that the tensor still gives it, and a call where it differs uses
another cache entry or captures anew (``pyinterp/capture/values/assumptions.py``).
Every test compares with eager on the same inputs, over calls where the
value changes.
"""
import random

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

from trace_support import assert_same, line_of, run_both, traced_counting  # noqa: E402


def layer(x, is_global):
    if is_global:  # (data-dependent sizes inside: no torch.cond could take it)
        where = (x > 0).nonzero()
        return x + where.sum()
    return x * 2


def model(x, mask):
    is_global = (mask > 0).flatten().any().item()
    for _ in range(2):
        x = layer(x, is_global)
    return x


def _masks(*kinds):
    return [torch.ones(4) if k else torch.zeros(4) for k in kinds]


def test_a_bool_handed_to_every_layer_is_one_graph_with_its_assumption_named():
    explanation = pyinterp.explain(model, torch.randn(4), torch.zeros(4))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1
    line = line_of(model, "is_global = ")
    assert len(explanation.assumptions) == 1
    assert explanation.assumptions[0].endswith(
        ":%d: assumed False: is_global = (mask > 0).flatten().any().item()" % line)
    assert "Assumptions" in str(explanation) and "Assumptions (1):" in explanation.details()


def test_calls_where_the_value_changes_give_eager_results_from_one_entry_per_value():
    traced, counter = traced_counting(model)
    x = torch.randn(4)
    for mask in _masks(0, 0, 1, 1, 0, 1, 0):
        assert_same(traced(x, mask), model(x, mask))
    assert counter.count == 2, "one capture per value of the bool"
    entries = traced._entries.snapshot
    assert len(entries) == 2
    assert sum(e.assumption_failures for e in entries) >= 2
    reasons = pyinterp.explain(traced, x, torch.zeros(4)).recompile_reasons
    assert any("assumed differed" in text for text, _ in reasons), reasons


def test_fullgraph_takes_the_assumption():
    traced = pyinterp.trace(model, fullgraph=True)
    x = torch.randn(4)
    for mask in _masks(1, 0, 1):
        assert_same(traced(x, mask), model(x, mask))


def test_a_failed_check_puts_the_random_state_back():
    def noisy(x, mask):
        noise = torch.rand(4)
        flag = (mask > 0).any().item()
        return layer(x + noise, flag), torch.rand(2)

    traced = pyinterp.trace(noisy, backend="eager")
    x = torch.randn(4)
    for seed, mask in enumerate(_masks(0, 1, 1, 0)):
        torch.manual_seed(seed)
        expected = noisy(x, mask)
        after_eager = torch.rand(3)
        torch.manual_seed(seed)
        actual = traced(x, mask)
        assert_same(actual, expected)
        assert torch.equal(torch.rand(3), after_eager), "the generator must be where eager left it"


def test_a_failed_check_puts_pythons_random_state_back():
    # The mock draws random.random() again before its graph runs; a failed
    # check must not leave that draw taken.
    def jittered(x, mask):
        scale = 1.0 + random.random()
        flag = (mask > 0).any().item()
        return layer(x * scale, flag), random.random()

    traced = pyinterp.trace(jittered, backend="eager")
    x = torch.randn(4)
    for seed, mask in enumerate(_masks(0, 1, 1, 0, 1)):
        random.seed(seed)
        expected = jittered(x, mask), random.random()
        random.seed(seed)
        actual = traced(x, mask), random.random()
        assert_same(actual, expected)


def test_a_write_to_an_input_after_the_assumption_breaks_before_it():
    def counting(x, mask, calls):
        flag = (mask > 0).any().item()
        calls.add_(1)  # (a failed check must leave the inputs as they were)
        return layer(x, flag)

    explanation = pyinterp.explain(counting, torch.randn(4), torch.zeros(4), torch.zeros(()))
    kinds = [(r.kind, r.lineno) for r in explanation.break_reasons]
    assert ("data-dependent-value", line_of(counting, "calls.add_(1)")) in kinds, kinds
    traced = pyinterp.trace(counting)
    x = torch.randn(4)
    for mask in _masks(0, 1, 0, 1):
        run_both(traced, counting, x, mask, torch.zeros(()))


def test_a_write_to_an_input_before_keeps_the_break_at_item():
    def counting(x, mask, calls):
        calls.add_(1)
        flag = (mask > 0).any().item()
        return layer(x, flag)

    explanation = pyinterp.explain(counting, torch.randn(4), torch.zeros(4), torch.zeros(()))
    assert [r.lineno for r in explanation.break_reasons] == [line_of(counting, "flag = ")]
    assert not explanation.assumptions
    traced = pyinterp.trace(counting)
    for mask in _masks(0, 1, 0):
        run_both(traced, counting, torch.randn(4), mask, torch.zeros(()))


def test_gradients_follow_the_path_the_call_takes():
    class Router(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(4, 4)
            self.b = torch.nn.Linear(4, 4)

        def forward(self, x, mask):
            use_a = (mask > 0).any().item()
            return self.pick(x, use_a)

        def pick(self, x, use_a):
            return self.a(x) if use_a else self.b(x)

    torch.manual_seed(0)
    eager = Router()
    mine = Router()
    mine.load_state_dict(eager.state_dict())
    traced = pyinterp.trace(mine)
    x = torch.randn(2, 4)
    for mask in _masks(1, 0, 1):
        for m in (eager, mine):
            m.zero_grad(set_to_none=True)
        eager(x, mask).sum().backward()
        traced(x, mask).sum().backward()
        for (name, p), q in zip(eager.named_parameters(), mine.parameters()):
            if p.grad is None:
                assert q.grad is None, name
            else:
                assert_same(q.grad, p.grad, path=name)


def test_a_comparison_of_a_float_item_handed_on_is_assumed():
    # n is a tracked float; n > 0 feeds no jump, so its truth is assumed
    # (data_decisions.py) and the callee gets a plain bool
    def scaled(x, y):
        n = y.sum().item()
        return layer(x, n > 0)

    explanation = pyinterp.explain(scaled, torch.randn(4), torch.randn(3))
    assert len(explanation.assumptions) == 1 and explanation.graph_break_count == 0
    traced = pyinterp.trace(scaled, backend="eager", fullgraph=True)
    for sign in (1, -1, -1, 1):
        x, y = torch.randn(4), torch.rand(3) * sign
        assert_same(traced(x, y), scaled(x, y))
    assert len(traced.cache_entries()) == 2


def test_a_bool_that_keeps_changing_stops_being_assumed():
    # A loop's test read with .item() in a callee: each trip count is a
    # new path.  After MAX_ASSUMPTION_RECAPTURES captures made because the
    # bool differed, the next capture breaks at the .item() instead, and
    # its entry serves every later call.
    from pyinterp.capture.traced import MAX_ASSUMPTION_RECAPTURES

    def keep_going(x):
        return (x.abs().max() > 1).item()

    def shrink(x):
        steps = 0
        while keep_going(x):
            x = x / 2
            steps += 1
        return x, steps

    traced, counter = traced_counting(shrink)
    scales = [1.0, 3.0, 6.0, 12.0, 24.0, 48.0, 3.0, 48.0]
    for scale in scales:
        x = torch.full((3,), 0.9) * scale
        assert_same(traced(x), shrink(x))
    entries = traced._entries.snapshot
    assert len(entries) <= MAX_ASSUMPTION_RECAPTURES + 2, len(entries)
    assert any(not e.assumes for e in entries)


def test_longformer_with_and_without_global_attention_matches_eager():
    # Hugging Face's LongformerModel: is_global_attn is assumed (one graph
    # per value); a mask with global tokens (2) makes the check fail, and
    # the call finds or makes the entry for True.
    transformers = pytest.importorskip("transformers", reason="needs transformers")
    config = transformers.LongformerConfig(
        vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=40, attention_window=4, pad_token_id=0)
    torch.manual_seed(0)
    model = transformers.LongformerModel(config).eval()
    traced = pyinterp.trace(model, backend="eager")
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for global_tokens in (0, 0, 2, 0, 2):
            ids = torch.randint(1, 50, (2, 10), generator=gen)
            mask = torch.ones(2, 10, dtype=torch.long)
            mask[-1, -3:] = 0
            mask[:, :global_tokens] = 2
            expected = model(input_ids=ids, attention_mask=mask).last_hidden_state
            actual = traced(input_ids=ids, attention_mask=mask).last_hidden_state
            assert_same(actual, expected)
    assert sum(e.assumption_failures for e in traced._entries.snapshot) >= 1
    explanation = pyinterp.explain(model, input_ids=ids, attention_mask=torch.ones(2, 10,
                                                                                 dtype=torch.long))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert len(explanation.assumptions) == 1


def test_an_in_place_write_to_the_tested_tensor_after_the_test_does_not_change_the_check(capsys):
    # The check reads `flag != 0` computed where the run tested it, not a
    # view of `flag`, which the later fill_ changes.
    def f(x):
        flag = (x > 0).any()
        if flag:  # (the print stops the merge: assumed)
            print("positive")
        flag.fill_(True)
        return x * 2, flag

    for first in (1.0, -1.0):
        traced = pyinterp.trace(f, backend="eager")
        for sign in (first, -first, first, -first):
            x = torch.rand(3) * sign
            expected, eager_out = f(x), capsys.readouterr().out
            assert_same(traced(x), expected)
            assert capsys.readouterr().out == eager_out


def test_a_branch_on_an_input_tensor_with_no_op_before_it_is_checked(capsys):
    # The graph would have no op but the check: it is still made.
    def f(flag, x):
        if flag:
            print("on")
        return x

    traced = pyinterp.trace(f, backend="eager")
    for value in (True, False, True, False):
        flag = torch.tensor(value)
        expected, eager_out = f(flag, torch.ones(2)), capsys.readouterr().out
        assert_same(traced(flag, torch.ones(2)), expected)
        assert capsys.readouterr().out == eager_out
