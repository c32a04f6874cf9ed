"""Ints from tensor data that the traced function returns or prints: graph outputs.

``correct = (pred == y).sum().item()`` then ``return loss, correct``: the
int leaves the traced function.  It is kept in the graph as an unbacked
size (``values/listed_ints.py``); the graph outputs it as a 0-d int64
tensor and the mock gives it back with ``.item()``, a plain ``int``, as it
does for floats (``values/sizes.py``'s ``LeavingInts``).  So does one that
``print`` or logging receive: the mock replays the call with the graph's
value.  One graph serves every count.  Each test compares with eager on data whose counts differ
from call to call, so a count baked in at the capture would show.
"""
import functools
import logging

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

from trace_support import CountingBackend, assert_same  # noqa: E402


def loss_and_correct(logits, labels):
    correct = (logits.argmax(1) == labels).sum().item()
    loss = torch.nn.functional.cross_entropy(logits, labels)
    return loss, correct


def correct_over_batches(logits, labels):
    correct = 0
    for i in range(logits.shape[0]):
        correct += (logits[i].argmax(-1) == labels[i]).sum().item()
    return logits.sum(), [correct, 7], {"n": correct}


def arithmetic_on_it(logits, labels):
    n = int((logits.argmax(1) == labels).sum())
    return logits * n, -n, n * 3 - 1, (n, [n])


def count_of_a_mask(logits, labels):
    rows = logits[labels > 1]
    return rows.sum(0), len(rows), torch.nonzero(labels).shape[0]


def tolist_total(logits, labels):
    total = 0
    for v in labels.tolist():
        total += v
    return logits.sum() / (total + 1), total


def count_and_accuracy(logits, labels):
    correct = (logits.argmax(1) == labels).sum().item()
    accuracy = correct / labels.shape[0]  # (a float: values/scalars.py follows it)
    print("correct", correct, "accuracy", accuracy, f"{accuracy:.3f}")
    return logits.sum() * accuracy, correct, correct * 0.5 - 1


def float_arithmetic(logits, labels):
    n = (labels > 1).sum().item()
    return logits.sum(), n / 0.5, n * 2.5, 3.0 - n, n + 0.25, n / 3


def lengths_mean(logits, labels):
    first, second = labels[:2].tolist()
    mean = (first + second) / 2
    return logits[:first].sum(0) + mean, mean


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x, labels):
        logits = self.fc(x)
        return logits, int((logits.argmax(1) == labels).sum())


def helper_count(logits, labels):
    return (logits.argmax(1) == labels).sum().item()


def count_from_a_helper(logits, labels):  # (the int crosses frames: a callee returns it)
    return logits.sum(), helper_count(logits, labels) + 1


def _passes_through(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@_passes_through
def wrapped_count(logits, labels):
    n = (labels > 1).sum().item()
    return n, n * 2


class Counter(torch.nn.Module):
    def forward(self, logits, labels):
        return int((logits.argmax(1) == labels).sum())


class CountingClassifier(torch.nn.Module):  # (through a submodule's call, then a decorator)
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.counter = Counter()

    def forward(self, x, labels):
        logits = self.fc(x)
        n, twice = wrapped_count(logits, labels)
        return logits, self.counter(logits, labels) - n + twice


torch.manual_seed(0)
CLASSIFIER = Classifier()
COUNTING_CLASSIFIER = CountingClassifier()
FUNCTIONS = [loss_and_correct, correct_over_batches, arithmetic_on_it, count_of_a_mask,
             tolist_total, CLASSIFIER, float_arithmetic, lengths_mean, count_from_a_helper,
             COUNTING_CLASSIFIER]


def _inputs(fn, seed):
    gen = torch.Generator().manual_seed(seed)
    if fn is correct_over_batches:
        return torch.randn(2, 8, 4, generator=gen), torch.randint(0, 4, (2, 8), generator=gen)
    return torch.randn(8, 4, generator=gen), torch.randint(0, 4, (8,), generator=gen)


def _name(fn):
    return getattr(fn, "__name__", type(fn).__name__)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=_name)
def test_a_returned_int_is_one_graph_for_every_count(fn):
    assert pyinterp.explain(fn, *_inputs(fn, 0)).graph_break_count == 0
    backend = CountingBackend()
    traced = pyinterp.trace(fn, backend=backend, fullgraph=True)
    results = set()
    for seed in range(6):
        expected = fn(*_inputs(fn, seed))
        got = traced(*_inputs(fn, seed))
        assert_same(got, expected)  # (types too: plain ints, not the capture's)
        results.add(repr(expected[1]))
    assert len(results) > 1, "the data must give different ints"
    assert backend.compiles == 1 and traced.cache_entries()[0].hits == 5


@pytest.mark.parametrize("fn", [loss_and_correct, arithmetic_on_it, count_of_a_mask,
                                CLASSIFIER, count_and_accuracy], ids=_name)
def test_a_returned_int_under_inductor(fn):
    backend = CountingBackend("inductor")
    traced = pyinterp.trace(fn, backend=backend, fullgraph=True)
    for seed in range(4):
        assert_same(traced(*_inputs(fn, seed)), fn(*_inputs(fn, seed)), rtol=1e-4, atol=1e-5)
    assert backend.compiles == 1


def test_gradients_beside_a_returned_int():
    model = Classifier()
    twin = Classifier()
    twin.load_state_dict(model.state_dict())

    def step(m, x, labels):
        logits = m.fc(x)
        loss = torch.nn.functional.cross_entropy(logits, labels)
        return loss, (logits.argmax(1) == labels).sum().item()

    traced = pyinterp.trace(step, backend="eager", fullgraph=True)
    for seed in range(3):
        x, labels = _inputs(loss_and_correct, seed)
        (loss, n), (expected_loss, m) = traced(model, x, labels), step(twin, x, labels)
        assert_same((loss, n), (expected_loss, m))
        loss.backward()
        expected_loss.backward()
        for a, b in zip(model.parameters(), twin.parameters()):
            torch.testing.assert_close(a.grad, b.grad)


@pytest.mark.parametrize("fn", [loss_and_correct, count_and_accuracy], ids=_name)
def test_with_symbolic_input_sizes(fn, capsys):
    # dynamic=True: the batch size is a symbol and the count an unbacked one
    # (count_and_accuracy divides the count by the symbolic batch size)
    backend = CountingBackend()
    traced = pyinterp.trace(fn, backend=backend, dynamic=True)
    for batch in (8, 5, 11, 8):
        gen = torch.Generator().manual_seed(batch)
        logits, labels = torch.randn(batch, 4, generator=gen), torch.randint(0, 4, (batch,),
                                                                             generator=gen)
        expected = fn(logits, labels)
        printed = capsys.readouterr().out
        assert_same(traced(logits, labels), expected)
        assert capsys.readouterr().out == printed
    assert backend.compiles == 1


def test_the_mock_reads_it_back_with_item():
    explanation = pyinterp.explain(loss_and_correct, *_inputs(loss_and_correct, 0))
    assert ".item()" in explanation.details()


def printed_count(logits, labels):
    correct = (logits.argmax(1) == labels).sum().item()
    print("correct:", correct, "of", labels.shape[0])
    return logits.sum()


LOG = logging.getLogger("pyinterp.test.leaving_ints")


def logged_count(logits, labels):
    correct = int((logits.argmax(1) == labels).sum())
    LOG.warning("correct: %d", correct)
    return logits * correct


def printed_lengths(logits, labels):
    first, second = labels[:2].tolist()
    print(first, second, sep=", ")
    return logits[:first].sum(0)


def printed_mask_count(logits, labels):
    rows = logits[labels > 1]
    print(len(rows), "rows kept")
    return rows.sum(0)


@pytest.mark.parametrize("fn", [printed_count, printed_lengths, printed_mask_count,
                                count_and_accuracy, lengths_mean], ids=_name)
def test_a_printed_int_is_a_graph_output_the_replay_prints(fn, capsys):
    # print() is replayed by the mock: the int is a graph output, printed
    # again on every call with that call's value
    backend = CountingBackend()
    traced = pyinterp.trace(fn, backend=backend, fullgraph=True)
    for seed in range(6):
        expected = fn(*_inputs(fn, seed))
        printed = capsys.readouterr().out
        assert_same(traced(*_inputs(fn, seed)), expected)
        assert capsys.readouterr().out == printed
    assert backend.compiles == 1


def _messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == LOG.name]


def test_a_logged_int_is_a_graph_output_the_replay_logs(caplog):
    backend = CountingBackend()
    traced = pyinterp.trace(logged_count, backend=backend, fullgraph=True)
    for seed in range(6):
        caplog.clear()
        expected = logged_count(*_inputs(logged_count, seed))
        logged = _messages(caplog)
        caplog.clear()
        assert_same(traced(*_inputs(logged_count, seed)), expected)
        assert _messages(caplog) == logged
    assert backend.compiles == 1


def formatted_count(logits, labels):
    correct = (logits.argmax(1) == labels).sum().item()  # (formatting needs the value)
    print(f"correct: {correct}")
    return logits.sum(), correct


def formatted_from_a_helper(logits, labels):
    return logits.sum(), "%d right" % helper_count(logits, labels)


def sorted_by_a_count(logits, labels):
    rows = sorted([logits[:4], logits[4:]], key=lambda t: (t.argmax(1) == 1).sum().item())
    return rows[0] * 2 + rows[1]


@pytest.mark.parametrize("fn", [formatted_count, formatted_from_a_helper, sorted_by_a_count],
                         ids=_name)
def test_uses_that_need_the_value_still_break_and_stay_right(fn, capsys):
    # an f-string needs the number, in the frame of the .item() or in its
    # caller's; a sort key is compared by sorted(): each breaks at the call
    explanation = pyinterp.explain(fn, *_inputs(fn, 0))
    assert {r.kind for r in explanation.break_reasons} == {"data-dependent-value"}
    capsys.readouterr()
    traced = pyinterp.trace(fn, backend="eager")
    for seed in range(4):
        expected = fn(*_inputs(fn, seed))
        printed = capsys.readouterr().out
        assert_same(traced(*_inputs(fn, seed)), expected)
        assert capsys.readouterr().out == printed


def test_a_generator_does_not_return_it_through_a_graph():
    def counts(logits, labels):
        yield (logits.argmax(1) == labels).sum().item()

    traced = pyinterp.trace(counts, backend="eager")
    for seed in range(3):
        assert list(traced(*_inputs(counts, seed))) == list(counts(*_inputs(counts, seed)))


def count_ratio(logits, labels):
    n = labels.sum().item()
    return logits.sum(), n / 3


def count_and_ratio(logits, labels):  # (n returned too: followed as an unbacked size)
    n = labels.sum().item()
    return logits.sum(), n, n / 3


@pytest.mark.parametrize("fn", [count_ratio, count_and_ratio], ids=_name)
@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_a_ratio_of_an_int_past_2_53_is_pythons_exact_division(backend, fn):
    # float64 holds every int below 2**53 exactly; past it the graph's
    # check fails and the call runs natively (or, met by the capture, the
    # division breaks): Python's exact division
    big = 2 ** 53 + 1
    assert big / 3 != float(big) / 3  # (a float64 division would differ)
    logits = torch.ones(2, 4)
    for calls in ((5, 7, big, 9), (big, 5, big)):
        traced = pyinterp.trace(fn, backend=CountingBackend(backend))
        for n in calls:
            labels = torch.tensor([n, 0])
            assert_same(traced(logits, labels), fn(logits, labels))
