"""Legacy ways to make or reach tensors (issue 18 item 2): the legacy
constructors (``torch.Tensor(data)``, ``torch.FloatTensor(data)``...),
``torch.autograd.Variable(x)``, ``x.new(data)``, ``x.type(T)`` and
``x.type_as(y)``.  The constructors and ``Variable`` make their tensor in C
without a ``__torch_function__`` dispatch; they are recorded as the torch
call that makes the same tensor (``capture/legacy_tensors.py``).  Each case
is checked against eager over several calls (a capture, then hits), with
gradients where they flow, and as ONE graph without a break, also under
``fullgraph=True``.  What cannot be recorded (a list holding tensors, a
new leaf) keeps its break and stays correct.  The sized forms
(``torch.Tensor(3)``: uninitialized memory) are tested in
test_legacy_more.py."""
import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from torch.autograd import Variable  # noqa: E402

from trace_support import (  # noqa: E402
    assert_hits_ran_graph, assert_same, count_captures, fresh, line_of, run_both,
    traced_counting,
)

OTHER = fresh(3, seed=7, dtype=torch.float64)  # a global read by some cases
KERNEL = [[1, 0, -1], [2, 0, -2], [1, 0, -1]]  # a global list: a constant, guarded


# --------------------------------------------------------------------------
# cases that are one graph now; each takes a float32 (3, 3) tensor
# --------------------------------------------------------------------------

def f_tensor_list(x):
    return x @ torch.Tensor([[1, 0, -1], [2, 0, -2], [1, 0, -1]])


def f_tensor_global_list(x):
    return x @ torch.Tensor(KERNEL)


def f_tensor_tuple_bools(x):
    return x * torch.Tensor(((True, False, True),))


def f_tensor_empty(x):
    return torch.cat([x.flatten(), torch.Tensor()])


def f_float_tensor(x):
    return x * torch.FloatTensor([1, 2.5, 3], device="cpu")


def f_double_tensor(x):
    return x.double() + torch.DoubleTensor([1, 2, 3])


def f_long_tensor_index(x):
    return x[torch.LongTensor([0, 2])]


def f_long_tensor_truncates(x):
    return torch.LongTensor([1.7, -2.5, 3.9]) + x.long()


def f_int_bool_byte(x):
    return (torch.IntTensor([3, 1, 2]), torch.BoolTensor([2, 0, 1]), torch.ByteTensor([1, 2, 3]),
            x.sum())


def f_tensor_of_tensor(x):
    return torch.Tensor(x) * 2


def f_float_tensor_of_tensor(x):
    return torch.FloatTensor(x).sin()


def f_new_list(x):
    return x + x.new([1, 2, 3])


def f_variable(x):
    return Variable(x) * 2 + x


def f_variable_positional_flag(x):
    return Variable(x, False) + 1


def f_type_of_other(x):
    return x.type(OTHER.type()) + OTHER


def f_type_class(x):
    return x.double().type(torch.FloatTensor) + 1


def f_type_class_keyword(x):
    return x.type(dtype=torch.DoubleTensor) * 2


def f_type_string(x):
    return x.double().type("torch.FloatTensor") + 1


def f_type_as(x):
    return x.type_as(OTHER) + OTHER


def f_unbound_methods(x):  # methods taken from the class, applied to an input
    return torch.Tensor.add(x, 1) * torch.Tensor.type(x, torch.DoubleTensor) \
        + torch.Tensor.new(x, [1, 2, 3])


# aliasing and identity, as in eager (run_both compares the arguments after)

def f_tensor_of_tensor_writes_through(x):
    alias = torch.Tensor(x)
    alias.add_(1)  # writes x: an alias in eager
    return alias._is_view(), x * 2


def f_variable_writes_through(x):
    Variable(x).mul_(2)  # writes x: the same storage in eager
    return x + 1


def f_type_own_type_is_itself(x):
    same = x.type(x.type())
    also = x.type(torch.FloatTensor)
    same.add_(1)  # writes x: x.type(its own type) is x in eager
    return same is x, also is x, x * 2


def f_type_converting_copies(x):
    y = x.type(torch.DoubleTensor)
    y.add_(1)  # x untouched, as in eager
    return y, x


ONE_GRAPH = [
    f_tensor_list, f_tensor_global_list, f_tensor_tuple_bools, f_tensor_empty, f_float_tensor,
    f_double_tensor, f_long_tensor_index, f_long_tensor_truncates, f_int_bool_byte,
    f_tensor_of_tensor, f_float_tensor_of_tensor, f_new_list, f_variable,
    f_variable_positional_flag, f_type_of_other, f_type_class,
    f_type_class_keyword, f_type_string, f_type_as, f_tensor_of_tensor_writes_through,
    f_variable_writes_through, f_type_own_type_is_itself, f_type_converting_copies,
    f_unbound_methods,
]


@pytest.mark.parametrize("fn", ONE_GRAPH, ids=lambda f: f.__name__)
def test_one_graph_no_break(fn):
    exp = pyinterp.explain(fn, fresh(3, 3))
    assert exp.graph_break_count == 0, str(exp)
    assert exp.graph_count == 1, str(exp)


@pytest.mark.parametrize("fn", ONE_GRAPH, ids=lambda f: f.__name__)
def test_same_as_eager_capture_then_hits(fn):
    traced, counter = traced_counting(fn, fullgraph=True)
    for seed in range(3):
        run_both(traced, fn, fresh(3, 3, seed=seed))
    assert count_captures(counter) == 1
    assert_hits_ran_graph(counter, 2)  # (the first call captured)


@pytest.mark.parametrize("fn", [f_tensor_list, f_float_tensor, f_tensor_of_tensor, f_variable,
                                f_type_class, f_type_as],
                         ids=lambda f: f.__name__)
def test_same_gradients(fn):
    traced, counter = traced_counting(fn, fullgraph=True)
    for seed in range(3):
        x, x_eager = fresh(3, 3, seed=seed, requires_grad=True), fresh(3, 3, seed=seed,
                                                                       requires_grad=True)
        got, want = traced(x), fn(x_eager)
        assert_same(got, want)
        outs_got = got if isinstance(got, tuple) else (got,)
        outs_want = want if isinstance(want, tuple) else (want,)
        sum(o.sum() for o in outs_got).backward()
        sum(o.sum() for o in outs_want).backward()
        assert_same(x.grad, x_eager.grad)
        for o_got, o_want in zip(outs_got, outs_want):  # a new leaf gets its own grad
            assert o_got.is_leaf == o_want.is_leaf
            if o_want.is_leaf:
                assert_same(o_got.grad, o_want.grad)
    assert count_captures(counter) == 1


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compiling_backends(backend):
    def f(x):
        a = torch.Tensor([[1, 0, -1], [2, 0, -2], [1, 0, -1]])
        b = torch.LongTensor([0, 2])
        return (x @ a)[b].type(torch.DoubleTensor) + Variable(x).type_as(OTHER).sum() \
            + torch.Tensor(x).sum(), torch.FloatTensor(x).cos()

    traced = pyinterp.trace(f, backend=backend, fullgraph=True)
    for seed in range(2):
        x, x_eager = fresh(3, 3, seed=seed, requires_grad=True), fresh(3, 3, seed=seed,
                                                                       requires_grad=True)
        got, want = traced(x), f(x_eager)
        assert_same(got, want)
        (got[0].sum() + got[1].sum()).backward()
        (want[0].sum() + want[1].sum()).backward()
        assert_same(x.grad, x_eager.grad)


# --------------------------------------------------------------------------
# gradients that stop, as in eager
# --------------------------------------------------------------------------

def test_variable_stops_gradient():
    def f(x):
        return Variable(x) * x

    traced = pyinterp.trace(f, backend="eager", fullgraph=True)
    for _ in range(2):
        x, x_eager = fresh(3, requires_grad=True), fresh(3, requires_grad=True)
        traced(x).sum().backward()
        f(x_eager).sum().backward()
        assert_same(x.grad, x_eager.grad)
        assert_same(x.grad, x.detach())  # only the second factor carries the gradient


# --------------------------------------------------------------------------
# what the graph depends on is guarded
# --------------------------------------------------------------------------

def test_default_dtype_change_recaptures():
    def f(x):
        return torch.Tensor([1, 2, 3]) + x

    traced, counter = traced_counting(f)
    x = fresh(3, dtype=torch.float64)
    run_both(traced, f, x)
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert_same(traced(x), f(x))  # torch.Tensor makes float64 now
    finally:
        torch.set_default_dtype(old)
    assert count_captures(counter) == 2


@pytest.mark.parametrize("fn, name, value", [
    (f_tensor_global_list, "KERNEL", [[0, 1, 0], [1, 0, 1], [0, 1, 0]]),
    (f_type_of_other, "OTHER", fresh(3, seed=7, dtype=torch.float16)),  # x.type(float16)
], ids=["legacy-constructor-data", "type-of-other"])
def test_changed_global_recaptures(fn, name, value, monkeypatch):
    traced, counter = traced_counting(fn)
    x = fresh(3, 3)
    run_both(traced, fn, x)
    monkeypatch.setitem(globals(), name, value)
    run_both(traced, fn, x)
    assert count_captures(counter) == 2


# --------------------------------------------------------------------------
# what keeps its break, and stays correct
# --------------------------------------------------------------------------

def f_list_of_tensors(x):
    return x + torch.Tensor([x[0].sum().detach(), 1.0, 2.0])  # BREAK


def f_variable_new_leaf(x):
    v = Variable(x.detach() * 3, requires_grad=True)  # BREAK (a leaf made in a graph)
    return v, v * x


KEEP_BREAK = [f_list_of_tensors, f_variable_new_leaf]


@pytest.mark.parametrize("fn", KEEP_BREAK, ids=lambda f: f.__name__)
def test_kept_breaks_stay_correct(fn):
    traced = pyinterp.trace(fn, backend="eager")
    for seed in range(3):
        run_both(traced, fn, fresh(3, seed=seed))


@pytest.mark.parametrize("fn", KEEP_BREAK, ids=lambda f: f.__name__)
def test_kept_breaks_raise_under_fullgraph(fn):
    traced = pyinterp.trace(fn, backend="eager", fullgraph=True)
    with pytest.raises(pyinterp.GraphBreakError) as info:
        traced(fresh(3))
    assert info.value.lineno == line_of(fn, "# BREAK")


def test_native_errors_are_eagers():
    def f(x):
        return torch.FloatTensor(x.long())  # TypeError in eager: not an alias

    traced = pyinterp.trace(f, backend="eager")
    with pytest.raises(TypeError) as eager:
        f(fresh(3))
    with pytest.raises(TypeError) as got:
        traced(fresh(3))
    assert str(got.value) == str(eager.value)


def test_variable_new_leaf_keeps_break_and_gets_its_gradient():
    exp = pyinterp.explain(f_variable_new_leaf, fresh(3))
    first = exp.break_reasons[0]  # (explain counts each later use of v too)
    assert first.kind == "untracked-tensor" and "new leaf" in first.message
    assert first.lineno == line_of(f_variable_new_leaf, "# BREAK")
    traced = pyinterp.trace(f_variable_new_leaf, backend="aot_eager")
    for seed in range(3):
        x = fresh(3, seed=seed)
        v, out = traced(x)
        out.sum().backward()
        assert v.is_leaf and v.requires_grad
        assert_same(v.grad, x)
