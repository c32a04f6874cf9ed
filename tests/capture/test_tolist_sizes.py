"""``t.tolist()`` of a 1-d integer tensor: its ints are data-dependent
sizes of the graph (values/listed_ints.py), kept in one graph while only
tensor ops use them, and a break before any Python decision on them.

Every test runs the function natively and traced on the same inputs, over
calls whose lengths change (0, the full length, past the end, negative),
and compares.  Compiles are counted by a backend running the graph's own
``forward``, so a wrong graph gives wrong numbers, not a skipped check.
"""
import pytest
import torch

import pyinterp

LENGTHS = [[3, 1, 4, 2], [2, 4, 1, 3], [0, 6, 6, 0], [6, 0, 3, 1], [-1, 9, 2, -7],
           [-6, -7, 8, 5], [3, 1, 4, 2]]


class Counting:
    """A backend counting its compiles (the GraphModule's own forward)."""

    def __init__(self):
        self.compiles = 0
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.compiles += 1
        self.graphs.append(gm)
        return gm.forward


def _outcome(fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - compared by type with the traced side
        return e


def _same(expected, got):
    if isinstance(expected, Exception):
        assert type(got) is type(expected), (expected, got)
    elif isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected)
        for a, b in zip(got, expected):
            _same(b, a)
    elif isinstance(expected, torch.Tensor):
        torch.testing.assert_close(got, expected, equal_nan=True)
    else:
        assert got == expected and type(got) is type(expected)


def _check(fn, traced, lengths=LENGTHS, shape=(4, 6, 3)):
    for i, values in enumerate(lengths):
        torch.manual_seed(i)
        x = torch.randn(*shape)
        lens = torch.tensor(values)
        _same(_outcome(fn, x, lens), _outcome(traced, x, lens))


# -- the ints only feed tensor ops: one graph, right on every call ----------------------
fc = torch.nn.Linear(3, 3)


def pool(x, lengths):  # the benchmark's graphmend/tolist_lengths
    h = fc(x)
    pooled = [h[i, :n].mean(0) for i, n in enumerate(lengths.tolist())]
    return torch.stack(pooled)


def start_and_stop(x, lengths):
    a, b, c, d = lengths.tolist()
    return x[0, a:b].sum(0) + x[1, b - 1:].sum(0) + x[2, : a * 2 - b].sum(0) \
        + x[3, c // 2: d % 4].sum(0)


def sizes_of_ops(x, lengths):
    a, b, c, _ = lengths.tolist()
    z = torch.zeros(a) + torch.arange(a)
    first, rest = torch.split(x[0, :, 0], [b, 6 - b])
    return z.sum() + first.sum() * 2 + rest.sum() + x[0].narrow(0, 0, c).sum()


def split_by_lengths(x, lengths):
    parts = torch.split(x.reshape(-1, 3)[:10], lengths.tolist())
    return torch.stack([p.sum(0) for p in parts])


def zipped(x, lengths):
    out = x[0, 0] * 0
    for row, n in zip(x, lengths.tolist()):
        out = out + row[:n].sum(0)
    return out


def size_of_a_slice(x, lengths):
    n, m = lengths.tolist()[:2]
    y = x[0, :n]
    k = y.shape[0]  # a data-dependent size, only used by ops
    return y.sum(0) + x[1, :k].sum(0) + torch.ones(m + 6).sum()


def in_a_merged_branch(x, lengths):
    ns = lengths.tolist()
    if x.sum() > 0:  # a data-dependent branch, merged (GraphMend)
        y = x[0, :ns[0]].sum(0)
    else:
        y = x[1, :ns[1]].sum(0) * 2
    return y


def back_to_a_tensor(x, lengths):
    ns = lengths.tolist()[::-1]
    return x[0, :ns[0]].sum(0) * torch.tensor(ns).sum() + len(ns)


def returns_the_list(x, lengths):
    return x.sum(), lengths.tolist()


def returns_the_sum(x, lengths):
    total = 0
    for n in lengths.tolist():
        total += n
    return x[0, :total % 6].sum(), total  # (the ints leave: graph outputs)


ONE_GRAPH = [pool, start_and_stop, sizes_of_ops, split_by_lengths, zipped, size_of_a_slice,
             in_a_merged_branch, back_to_a_tensor, returns_the_list, returns_the_sum]


@pytest.mark.parametrize("fn", ONE_GRAPH)
def test_one_graph_serves_every_length(fn):
    backend = Counting()
    traced = pyinterp.trace(fn, backend=backend, fullgraph=True)
    _check(fn, traced)
    assert backend.compiles == 1
    [entry] = traced.cache_entries()
    assert entry.hits == len(LENGTHS) - 1
    assert "tolist" in backend.graphs[0].code


@pytest.mark.parametrize("fn", [pool, start_and_stop, size_of_a_slice])
def test_with_symbolic_input_sizes(fn):
    traced = pyinterp.trace(fn, backend="eager", dynamic=True)
    _check(fn, traced)
    _check(fn, traced, shape=(4, 9, 3))


def test_empty_and_int32_tensors():
    def f(x, lengths):
        return torch.stack([x[0, :n].sum(0) for n in lengths.tolist()] + [x[0, 0]])

    backend = Counting()
    traced = pyinterp.trace(f, backend=backend, fullgraph=True)
    for values in ([], [2, 5], [0, -2], [7, 1]):
        lens = torch.tensor(values, dtype=torch.int32)
        x = torch.randn(2, 6, 3)
        _same(f(x, lens), traced(x, lens))


def test_inductor_compiles_the_graph_once():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # (no fallback to the eager backend)
        traced = pyinterp.trace(pool, backend="inductor", fullgraph=True)
        _check(pool, traced)
    assert traced.cache_entries()[0].hits == len(LENGTHS) - 1


# -- a Python decision on one: a merged branch (data_decisions.py) -------------------------
def decides(x, lengths):
    n = lengths.tolist()[0]
    if n > 2:
        return x.sum()
    return x.mean()


def decides_what_torch_could_prove(x, lengths):
    n = lengths.tolist()[0]
    z = torch.zeros(n)  # (torch's fake zeros assumes n >= 0)
    if n >= 0:
        return x.sum() + z.sum()
    return x.mean()


@pytest.mark.parametrize("fn", [decides, decides_what_torch_could_prove])
def test_a_decision_on_one_is_a_merged_branch(fn):
    # never a guard (the next call's data may decide otherwise with the
    # same shapes), not even where torch could prove it: one graph computes
    # the comparison and both arms
    backend = Counting()
    traced = pyinterp.trace(fn, backend=backend, fullgraph=True)
    for lengths in ([3, 1, 4, 2], [1, 1, 4, 2], [4, 2, 2, 1], [0, 3, 3, 3]):
        x = torch.randn(4, 6, 3)
        lengths = torch.tensor(lengths)
        torch.testing.assert_close(traced(x, lengths), fn(x, lengths))
    assert backend.compiles == 1 and traced.cache_entries()[0].hits == 3


def loops_over_it(x, lengths):
    t = x[0, 0]
    for _ in range(lengths.tolist()[0]):
        t = t * 2
    return t


def dict_key(x, lengths):
    table = {lengths.tolist()[0]: 2.0}
    return x * table.get(3, 1.0)


def divides_by_it(x, lengths):
    n, m = lengths.tolist()[:2]
    return x[0, : 7 // (m or 1)].sum() + n


def appends_outside(x, lengths, box=[]):
    box.append(lengths.tolist()[0])
    return x * 2


def sorts_them(x, lengths):
    ns = lengths.tolist()
    ns.sort()  # (compares the ints natively)
    return x[0, :ns[0]].sum()


def op_the_sizes_cannot_follow(x, lengths):
    n, m = lengths.tolist()[:2]
    y = torch.nn.functional.pad(x, (0, m))  # (no fake pad with a data-dependent width)
    return y.sum() * y.shape[-1] + x[0, :n].sum()


BREAKS = {loops_over_it: r"range\(\) received it",
          dict_key: "a key",
          divides_by_it: "its value", appends_outside: r"append\(\) received it",
          sorts_them: r"list.sort\(\) compared it",
          op_the_sizes_cannot_follow: "could no longer be followed"}


@pytest.mark.parametrize("fn", BREAKS)
def test_a_decision_on_one_breaks_with_its_kind(fn):
    traced = pyinterp.trace(fn, backend="eager", fullgraph=True)
    with pytest.raises(pyinterp.GraphBreakError,
                       match=r"\(data-dependent-value\): .*%s" % BREAKS[fn]):
        traced(torch.randn(4, 6, 3), torch.tensor([3, 1, 4, 2]))


@pytest.mark.parametrize("fn", BREAKS)
def test_after_the_break_every_call_stays_right(fn, capsys):
    if fn is appends_outside:
        def fn(x, lengths, f=appends_outside):  # (a fresh box for each side)
            box = []
            return f(x, lengths, box), box
    traced = pyinterp.trace(fn, backend="eager")
    _check(fn, traced)


def _leaves_torch(x):  # a break inside a callee: the traced function splits at the call
    return torch.from_numpy(x.untyped_storage() and x.numpy() * 2)


def live_across_a_split(x, lengths):
    n = lengths.tolist()[0]
    y = x[0, :n].sum()
    z = _leaves_torch(x)
    return y + z.sum() + n  # (a resume function would get n as a constant)


def test_no_split_while_one_is_live():
    traced = pyinterp.trace(live_across_a_split, backend="eager")
    _check(live_across_a_split, traced)
    assert traced.cache_entries()[0].kind == "native"


def unbacked_size_across_a_split(x, _):
    n = x[x[:, 0, 0] > 0].shape[0]  # a data-dependent size (nonzero), as for tolist
    z = _leaves_torch(x)
    return z.sum() + n


def test_no_split_while_a_data_dependent_size_is_live():
    traced = pyinterp.trace(unbacked_size_across_a_split, backend="eager")
    _check(unbacked_size_across_a_split, traced)
    assert traced.cache_entries()[0].kind == "native"
