"""A compiled graph that raises on a cache hit.

The mock replays side effects after the graph; when the graph raises (an
index out of range), the side effects that come before the failing op in
program order must still happen, as in eager, and the exception must be
eager's (type and message).  Each test runs the program eagerly and traced
on the same inputs: a first call that captures, a hit that succeeds, then
a hit whose graph raises; prints, log records, list appends and attribute
writes are compared after every call.
"""
import logging

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

from trace_support import assert_same, traced_counting  # noqa: E402

_logger = logging.getLogger("pyinterp.tests.graph_failure")


class Box:
    pass


def _program(log, box):
    def f(x, idx):
        print("start", x.shape[0])
        _logger.warning("indexing %d rows", x.shape[0])
        log.append("before")
        box.seen = True
        y = x[idx] * 2  # raises when idx is out of range
        log.append("after")
        box.done = True
        return y + 1

    return f


def _outcome(fn, args, log, box, capsys, caplog):
    """What one call did: result or exception, printed text, log records,
    the list, the object's attributes."""
    caplog.clear()
    try:
        result = ("value", fn(*args))
    except Exception as e:  # noqa: BLE001 - compared below
        result = ("raised", type(e), str(e))
    out = capsys.readouterr().out
    records = [(r.levelname, r.getMessage(), r.filename, r.lineno) for r in caplog.records]
    return result, out, records, list(log), dict(vars(box))


def _compare(actual, expected):
    assert actual[0][0] == expected[0][0], (actual[0], expected[0])
    if expected[0][0] == "value":
        assert_same(actual[0][1], expected[0][1])
    else:
        assert actual[0][1:] == expected[0][1:]
    assert actual[1:] == expected[1:]


CALLS = [
    (torch.arange(5.0), torch.tensor([1, 2])),
    (torch.arange(5.0) * 3, torch.tensor([4, 0])),
    (torch.arange(5.0), torch.tensor([1, 7])),  # out of range: the graph raises
    (torch.arange(5.0) - 1, torch.tensor([3, 3])),  # and the entry still serves hits
]


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_effects_before_the_failing_op_happen_on_a_hit(backend, capsys, caplog):
    caplog.set_level(logging.WARNING, logger=_logger.name)
    e_log, e_box, t_log, t_box = [], Box(), [], Box()
    eager_fn = _program(e_log, e_box)
    traced, counter = traced_counting(_program(t_log, t_box)) if backend == "eager" else (
        pyinterp.trace(_program(t_log, t_box), backend=backend), None)
    for args in CALLS:
        for lst, box in ((e_log, e_box), (t_log, t_box)):
            lst.clear()
            box.__dict__.clear()
        expected = _outcome(eager_fn, args, e_log, e_box, capsys, caplog)
        actual = _outcome(traced, args, t_log, t_box, capsys, caplog)
        _compare(actual, expected)
    if counter is not None:
        assert counter.count == 1  # one capture; the failing call was a hit


def test_graph_failure_inside_no_grad_leaves_grad_mode_as_eager():
    log = []

    def f(x, idx):
        log.append("start")
        with torch.no_grad():
            y = x[idx] * 2
        return x * y.sum()

    traced, counter = traced_counting(f)
    x = torch.ones(4, requires_grad=True)
    traced(x, torch.tensor([0, 1]))
    traced(x, torch.tensor([2, 3]))
    log.clear()
    with pytest.raises(IndexError) as traced_info:
        traced(x, torch.tensor([9, 0]))
    assert torch.is_grad_enabled()
    assert log == ["start"]
    with pytest.raises(IndexError) as eager_info:
        f(x, torch.tensor([9, 0]))
    assert str(traced_info.value) == str(eager_info.value)
    assert counter.count == 1  # the failing call was a hit


def test_graph_that_wrote_an_input_is_not_run_twice():
    # The graph writes its input before it fails: running the function
    # again would write it twice, so the graph's own exception propagates
    # (the input is written once, as in eager).
    def f(x, idx):
        x.add_(1)
        return x[idx]

    traced, counter = traced_counting(f)
    traced(torch.zeros(3), torch.tensor([0]))
    traced(torch.zeros(3), torch.tensor([1]))
    xt, xe = torch.zeros(3), torch.zeros(3)
    with pytest.raises(IndexError):
        traced(xt, torch.tensor([5]))
    with pytest.raises(IndexError):
        f(xe, torch.tensor([5]))
    assert_same(xt, xe)
    assert counter.count == 1
