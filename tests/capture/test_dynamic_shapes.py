"""Dynamic shapes (issue 15): one capture serves many sizes, and every
output, exception and returned value equals eager's.

Each test runs the function natively and traced on the same inputs and
compares; compiles are counted by a callable backend (which runs the
graph's own ``forward``, so a wrong symbolic graph would give wrong
numbers, not a skipped check).
"""
import pytest
import torch
import torch._dynamo

import pyinterp


class Counting:
    """A backend counting its compiles (the GraphModule's own forward)."""

    def __init__(self):
        self.compiles = 0

    def __call__(self, gm, example_inputs):
        self.compiles += 1
        return gm.forward


def _check(fn, traced, shapes, **kwargs):
    for shape in shapes:
        torch.manual_seed(sum(shape))
        x = torch.randn(*shape)
        expected = fn(x, **kwargs)
        got = traced(x, **kwargs)
        if isinstance(expected, tuple):
            assert len(got) == len(expected)
            for a, b in zip(got, expected):
                if isinstance(b, torch.Tensor):
                    torch.testing.assert_close(a, b)
                else:
                    assert a == b and type(a) is type(b)
        else:
            torch.testing.assert_close(got, expected)


def reshape_arithmetic(x):
    b, n, d = x.shape
    y = x.view(b * n, d) * 2
    pos = torch.arange(n)
    half = x[:, : n // 2]
    z = y.reshape(b, n, d) + pos.view(1, n, 1)
    return z.sum(-1) + x.new_zeros(b, n) + half.sum() + x.size(1) % 3


def test_symbolic_arithmetic_into_view_arange_slicing_one_compile():
    backend = Counting()
    traced = pyinterp.trace(reshape_arithmetic, backend=backend, dynamic=True)
    _check(reshape_arithmetic, traced, [(2, 4, 3), (3, 6, 3), (5, 7, 3), (2, 9, 3), (4, 4, 3)])
    assert backend.compiles == 1
    [entry] = traced.cache_entries()
    assert entry.hits == 4


def rows_by_len(x):
    return x.view(len(x) * 2, -1).sum(1) + len(x[0]) + len(x.t())


def test_len_of_a_tensor_is_a_symbolic_size():
    # len(x) is x.size(0): symbolic, not a constant that fixes the shape
    backend = Counting()
    traced = pyinterp.trace(rows_by_len, backend=backend, dynamic=True)
    _check(rows_by_len, traced, [(2, 4), (3, 6), (5, 8), (2, 10)])
    assert backend.compiles == 1
    text = str(pyinterp.explain(traced, torch.randn(3, 4)))
    assert "specialized" not in text, text
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        pyinterp.trace(lambda t: len(t), backend="eager", dynamic=True)(torch.tensor(1.0))


def test_automatic_dynamic_recompiles_once_then_serves_every_size():
    backend = Counting()
    traced = pyinterp.trace(reshape_arithmetic, backend=backend)  # dynamic=None
    _check(reshape_arithmetic, traced, [(2, 4, 3), (3, 6, 3), (5, 7, 3), (2, 9, 3), (4, 5, 3)])
    assert backend.compiles == 2  # exact, then one symbolic graph for the rest
    _check(reshape_arithmetic, traced, [(6, 3, 3), (2, 2, 3)])
    assert backend.compiles == 2


def test_dynamic_false_compiles_every_shape():
    backend = Counting()
    traced = pyinterp.trace(reshape_arithmetic, backend=backend, dynamic=False)
    _check(reshape_arithmetic, traced, [(2, 4, 3), (3, 6, 3), (5, 7, 3)])
    assert backend.compiles == 3


def branch_on_size(x):
    if x.shape[0] > 4:
        return x.sum(0)
    return x.mean(0) - 1


def test_branch_on_size_is_a_guard_both_outcomes():
    backend = Counting()
    traced = pyinterp.trace(branch_on_size, backend=backend, dynamic=True, fullgraph=True)
    _check(branch_on_size, traced, [(3, 2), (6, 2), (2, 2), (8, 2), (4, 2), (5, 2)])
    assert backend.compiles == 2  # one graph per outcome of the relation
    texts = [line for e in traced.cache_entries() for line in e.dynamic_lines]
    assert any("x.shape[0]" in t and "4" in t for t in texts), texts


def test_zero_one_specialization():
    backend = Counting()
    traced = pyinterp.trace(branch_on_size, backend=backend, dynamic=True)
    _check(branch_on_size, traced, [(3, 2), (1, 2), (2, 2), (1, 2)])
    assert backend.compiles == 2  # size 1 gets its own entry, as in torch.compile


def loop_over_size(x):
    total = x[0]
    for i in range(x.shape[0]):  # a native call: the size is specialized
        total = total + x[i] * i
    return total


def test_native_use_specializes_with_a_reason():
    backend = Counting()
    traced = pyinterp.trace(loop_over_size, backend=backend, dynamic=True)
    _check(loop_over_size, traced, [(3, 2), (3, 5), (4, 2), (3, 2)])
    assert backend.compiles == 2  # the length is exact; the other dim stays symbolic
    lines = traced.cache_entries()[-1].dynamic_lines
    assert any("specialized" in t and "range" in t for t in lines), lines


def _scale(x, n):
    return x.reshape(n * 2, -1) * n


def crosses_frames(x):
    n = x.shape[0] // 2
    return _scale(x, n) + 1


def test_ints_cross_frames():
    backend = Counting()
    traced = pyinterp.trace(crosses_frames, backend=backend, dynamic=True, fullgraph=True)
    _check(crosses_frames, traced, [(4, 3), (6, 3), (10, 3), (8, 3)])
    assert backend.compiles == 1


def returns_a_size(x):
    return x * 2, x.shape[0], x.shape


def test_returned_sizes_are_plain_and_right():
    traced = pyinterp.trace(returns_a_size, backend="eager", dynamic=True)
    _check(returns_a_size, traced, [(3, 2), (5, 2), (3, 2)])
    _, n, shape = traced(torch.randn(6, 2))
    assert type(n) is int and n == 6 and type(shape[0]) is int


def returns_a_size_deep_inside(x):
    return x * 2, {"sizes": [[(x.shape[0], [x.shape[1]])]]}


def test_a_size_deep_in_the_result_is_a_plain_int_and_a_graph():
    traced = pyinterp.trace(returns_a_size_deep_inside, backend="eager", dynamic=True)
    _check(returns_a_size_deep_inside, traced, [(3, 2), (5, 2), (3, 2)])
    _, sizes = traced(torch.randn(6, 2))
    n, (m,) = sizes["sizes"][0][0]
    assert (type(n), type(m), n, m) == (int, int, 6, 2)
    assert all(e.graph_count == 1 for e in traced.cache_entries())


def test_mark_dynamic_makes_the_first_capture_symbolic():
    backend = Counting()
    traced = pyinterp.trace(reshape_arithmetic, backend=backend)
    for shape in [(2, 4, 3), (3, 6, 3), (5, 7, 3)]:
        x = torch.randn(*shape)
        torch._dynamo.mark_dynamic(x, 0)
        torch._dynamo.mark_dynamic(x, 1)
        torch.testing.assert_close(traced(x), reshape_arithmetic(x))
    assert backend.compiles == 1


def fixed_rows(x):
    return x + torch.ones(4, 3)  # broadcasting forces x.shape[0] == 4


def test_mark_dynamic_on_a_forced_dimension():
    x = torch.randn(4, 3)
    torch._dynamo.mark_dynamic(x, 0)
    strict = pyinterp.trace(fixed_rows, backend="eager", fullgraph=True)
    from torch.fx.experimental.symbolic_shapes import ConstraintViolationError

    with pytest.raises(ConstraintViolationError, match="specialized it to be a constant"):
        strict(x)
    lenient = pyinterp.trace(fixed_rows, backend="eager")
    torch.testing.assert_close(lenient(x), fixed_rows(x))
    lines = lenient.cache_entries()[0].dynamic_lines
    assert any("exact shapes" in t and "constant" in t for t in lines), lines


def test_mark_static_keeps_a_dimension_exact():
    backend = Counting()
    traced = pyinterp.trace(reshape_arithmetic, backend=backend, dynamic=True)
    for shape in [(2, 4, 3), (2, 6, 3), (3, 6, 3)]:
        x = torch.randn(*shape)
        torch._dynamo.mark_static(x, 0)
        torch.testing.assert_close(traced(x), reshape_arithmetic(x))
    assert backend.compiles == 2  # a new batch size recompiles; the length does not


def test_rank_or_dtype_change_is_a_miss_not_an_error():
    traced = pyinterp.trace(lambda x: x.sum(-1) * x.shape[-1], backend="eager", dynamic=True)
    for x in [torch.randn(3, 4), torch.randn(5, 4), torch.randn(2, 3, 4),
              torch.randn(3, 4, dtype=torch.float64), torch.arange(6).view(2, 3)]:
        torch.testing.assert_close(traced(x), x.sum(-1) * x.shape[-1])


def test_violated_relation_misses_and_recaptures():
    def f(x, y):
        return x + y  # broadcasting: the sizes must agree

    backend = Counting()
    traced = pyinterp.trace(f, backend=backend, dynamic=True)
    for a, b in [((3, 4), (3, 4)), ((5, 4), (5, 4)), ((5, 4), (1, 4)), ((6, 2), (6, 2))]:
        x, y = torch.randn(*a), torch.randn(*b)
        torch.testing.assert_close(traced(x, y), f(x, y))
    assert backend.compiles == 2
    with pytest.raises(RuntimeError) as native:
        f(torch.randn(3, 4), torch.randn(2, 4))
    with pytest.raises(RuntimeError) as traced_error:
        traced(torch.randn(3, 4), torch.randn(2, 4))
    assert str(traced_error.value) == str(native.value)


class _Reshaper(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x):
        b, n, d = x.size()
        h = self.proj(x.reshape(b * n, d)).view(b, n, d)
        return torch.softmax(h @ h.transpose(1, 2) / d ** 0.5, -1) @ h


def test_module_outputs_and_gradients_match_eager_across_sizes():
    torch.manual_seed(0)
    model = _Reshaper()
    backend = Counting()
    traced = pyinterp.trace(model, backend=backend)
    for shape in [(2, 3, 8), (2, 5, 8), (3, 4, 8), (4, 7, 8), (3, 4, 8)]:
        x = torch.randn(*shape, requires_grad=True)
        x2 = x.detach().clone().requires_grad_()
        out, ref = traced(x2), model(x)
        torch.testing.assert_close(out, ref)
        out.sum().backward()
        grads = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        ref.sum().backward()
        torch.testing.assert_close(x2.grad, x.grad)
        for g, p in zip(grads, model.parameters()):
            torch.testing.assert_close(g, p.grad)
        model.zero_grad()
    assert backend.compiles <= 3


def test_inductor_compiles_one_symbolic_graph():
    backend = "inductor"
    traced = pyinterp.trace(reshape_arithmetic, backend=backend, dynamic=True)
    _check(reshape_arithmetic, traced, [(2, 4, 3), (3, 6, 3), (5, 7, 3)])
    [entry] = traced.cache_entries()
    assert entry.hits == 2


# -- uses of a size that the graph cannot follow: each must stay right ------------
def _same_shape(x):
    y = x[:, :2]
    if x.shape == y.shape:  # containers compared item by item
        return x + 1
    return x - 1


def _dict_key(x):
    table = {3: 10.0, 4: 20.0}
    return x * table.get(x.shape[0], 1.0)


def _bound_method(x):
    return x * x.shape[0].bit_length()


def _type_check(x):
    n = x.shape[0]
    return x * (2 if type(n) is int else 3)


def _iterate_rows(x):
    total = torch.zeros_like(x[0])
    for row in x:
        total = total + row
    return total


def _split_by_size(x):
    n = x.shape[0]
    a, b = x.split([n // 2, n - n // 2])
    return a.sum(0) - b.sum(0) * (n // 2)


def _formatted(x):
    return x * len("%d" % x.shape[0])


def _floats(x):
    return x * (x.shape[0] / 2) + x.shape[1] ** 0.5


def _min_max(x):
    return x[: max(x.shape[0] - 2, 1)] * min(x.shape[1], 3)


def _stored_on_self(x, holder={}):
    holder["n"] = x.shape[0]
    return x * holder["n"]


def _expand_and_pad(x):
    b, n = x.shape
    grid = torch.arange(n).expand(b, n)
    pad = torch.nn.functional.pad(x, (0, n // 2))
    return pad[:, :n] + grid


def _broadcast_shapes(x):
    shape = torch.broadcast_shapes(x.shape, (1, x.shape[1]))
    return x.expand(shape) * 2


@pytest.mark.parametrize("fn", [_same_shape, _dict_key, _bound_method, _type_check,
                                _iterate_rows, _split_by_size, _formatted, _floats, _min_max,
                                _stored_on_self, _expand_and_pad, _broadcast_shapes])
@pytest.mark.parametrize("dynamic", [True, None])
def test_every_use_of_a_size_stays_right(fn, dynamic):
    traced = pyinterp.trace(fn, backend="eager", dynamic=dynamic)
    _check(fn, traced, [(3, 2), (4, 2), (6, 5), (3, 2), (4, 7), (8, 3), (6, 5)])


# -- data-dependent sizes (unbacked): kept in the graph when only ops use them ------
def _masked_rows(x):
    rows = x[x[:, 0] > 0]
    return rows.sum(0) * 2 + torch.nonzero(x > 0.5).shape[0] * 0 + rows.mean(0)


def _unique_embed(x):
    ids = torch.unique((x * 3).long().clamp(0, 5))
    table = torch.arange(12.0).view(6, 2)
    return table[ids].sum(0)


def _decides_on_count(x):
    rows = x[x[:, 0] > 0]
    if rows.shape[0] > 2:  # a Python decision on a data-dependent size: a merged branch
        return rows.sum(0)
    return x.sum(0) - 1


def _count_leaves(x):
    rows = x[x[:, 0] > 0]
    return x * 2, len(rows)  # the count leaves the function: a graph output


def _count_looped(x):
    rows = x[x[:, 0] > 0]
    for _ in range(len(rows)):  # range() needs the count's value: a break
        x = x * 2
    return x


@pytest.mark.parametrize("fn", [_masked_rows, _unique_embed, _decides_on_count,
                                _count_leaves, _count_looped])
@pytest.mark.parametrize("dynamic", [False, None])
def test_data_dependent_sizes_stay_right_on_new_data(fn, dynamic):
    traced = pyinterp.trace(fn, backend="eager", dynamic=dynamic)
    for seed in range(6):
        torch.manual_seed(seed)
        x = torch.randn(8, 3)
        expected, got = fn(x), traced(x)
        if isinstance(expected, tuple):
            torch.testing.assert_close(got[0], expected[0])
            assert got[1] == expected[1] and type(got[1]) is int
        else:
            torch.testing.assert_close(got, expected)


def test_an_unbacked_size_used_only_by_ops_is_one_graph():
    backend = Counting()
    traced = pyinterp.trace(_masked_rows, backend=backend, fullgraph=True)
    for seed in range(4):
        torch.manual_seed(seed)
        x = torch.randn(8, 3)
        torch.testing.assert_close(traced(x), _masked_rows(x))
    assert backend.compiles == 1 and traced.cache_entries()[0].hits == 3
    with pytest.raises(pyinterp.GraphBreakError, match="data-dependent size"):
        pyinterp.trace(_count_looped, backend="eager", fullgraph=True)(torch.randn(8, 3))


def test_a_decision_on_an_unbacked_size_is_a_merged_branch():
    # rows.shape[0] > 2 is decided by the data: the graph computes it
    # (scalar_tensor(size) > 2) and both arms, merged by torch.where
    backend = Counting()
    traced = pyinterp.trace(_decides_on_count, backend=backend, fullgraph=True)
    taken = set()
    for seed in range(8):
        torch.manual_seed(seed)
        x = torch.randn(8, 3)
        taken.add(bool((x[:, 0] > 0).sum() > 2))
        torch.testing.assert_close(traced(x), _decides_on_count(x))
    assert taken == {True, False}
    assert backend.compiles == 1 and traced.cache_entries()[0].hits == 7


def test_unbacked_sizes_compile_with_inductor():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # (no fallback to the eager backend)
        traced = pyinterp.trace(_unique_embed, backend="inductor")
        for seed in range(3):
            torch.manual_seed(seed)
            x = torch.randn(8, 3)
            torch.testing.assert_close(traced(x), _unique_embed(x))
    assert traced.cache_entries()[0].hits == 2


def test_explain_names_symbolic_dims_specializations_and_relations():
    traced = pyinterp.trace(loop_over_size, backend="eager", dynamic=True)
    traced(torch.randn(3, 4))
    text = str(pyinterp.explain(traced, torch.randn(3, 5)))
    assert "Dynamic shapes:" in text
    assert "symbolic: x dims [1] (dynamic=True)" in text
    assert "range() received it" in text and "x.shape[0] == 3" in text
    assert "2 <= x.shape[1]" in text


def _slices_and_star_args(x):
    n = x.shape[0]
    head = x[: n // 2]  # (BINARY_SLICE on 3.12+)
    x[n // 2:] = 0.5  # (STORE_SLICE on 3.12+)
    return head.reshape(*head.shape[:-1], -1, 1) * +n


def test_slices_and_star_arguments_stay_symbolic():
    backend = Counting()
    traced = pyinterp.trace(_slices_and_star_args, backend=backend, dynamic=True)
    for shape in [(4, 3), (6, 3), (8, 3), (10, 3)]:
        x = torch.randn(*shape)
        torch.testing.assert_close(traced(x.clone()), _slices_and_star_args(x.clone()))
    # (unary + specializes the size: one graph per first dimension)
    assert backend.compiles == 4
    backend = Counting()

    def no_plus(x):
        n = x.shape[0]
        return x[: n // 2].reshape(-1, *x.shape[1:]) * n

    traced = pyinterp.trace(no_plus, backend=backend, dynamic=True)
    for shape in [(4, 3), (6, 3), (8, 3), (10, 3)]:
        x = torch.randn(*shape)
        torch.testing.assert_close(traced(x), no_plus(x))
    assert backend.compiles == 1


@pytest.mark.parametrize("read", [
    lambda x: torch.numel(x), lambda x: x.nelement(), lambda x: x.stride(0),
    lambda x: x.size(dim=1), lambda x: len(x.tolist()),
    lambda x: int(torch.is_same_size(x, x[:3])),
], ids=["torch.numel", "nelement", "stride(0)", "size(dim=1)", "tolist", "is_same_size"])
def test_size_reads_not_modeled_fix_the_sizes(read):
    def f(x):
        return x * read(x)

    traced = pyinterp.trace(f, backend="eager", dynamic=True)
    _check(f, traced, [(3, 2), (4, 2), (3, 5), (2, 2), (3, 2), (5, 4)])


def test_mark_dynamic_range_is_checked():
    def f(x):
        return x * 2

    traced = pyinterp.trace(f, backend="eager", fullgraph=True)
    x = torch.randn(4, 3)
    torch._dynamo.mark_dynamic(x, 0, min=2, max=64)
    torch.testing.assert_close(traced(x), f(x))
    lines = traced.cache_entries()[0].dynamic_lines
    assert any("x.shape[0] <= 64" in t for t in lines), lines
    big = torch.randn(80, 3)  # outside the range: a miss, never a wrong result
    torch.testing.assert_close(traced(big), f(big))
