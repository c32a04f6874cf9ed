"""pyinterp.trace side effects: replayed exactly once per call, on the first
call (the interpreter's real run) and on every hit (the generated mock)."""
import builtins

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from torch import nn  # noqa: E402

from trace_support import (  # noqa: E402
    assert_hits_ran_graph, assert_same, count_captures, fresh, run_both, traced_counting,
)

CALLS = 4


class Box:
    def __init__(self, **kw):
        self.__dict__.update(kw)


# --------------------------------------------------------------------------
# attributes of argument objects
# --------------------------------------------------------------------------

def test_setattr_on_argument_object():
    def f(obj, x):
        obj.n = obj.n + 1
        obj.last = x * 2
        obj.tag = "seen"
        return x + 1

    traced = pyinterp.trace(f, backend="eager")
    t_obj, e_obj = Box(n=0), Box(n=0)
    for i in range(CALLS):
        x = fresh(3, seed=i)
        assert_same(traced(t_obj, x), f(e_obj, x))
        assert_same(t_obj, e_obj, "obj after call %d" % i)
    assert t_obj.n == CALLS


def test_setattr_not_read_is_replayed_on_hits():
    # The attribute is written but never read: hits must still write it.
    def f(obj, x):
        obj.out = x.sin()
        obj.flag = True
        return x.cos()

    traced, counter = traced_counting(f)
    for i in range(CALLS):
        t_obj, e_obj = Box(), Box()
        x = fresh(3, seed=i)
        assert_same(traced(t_obj, x), f(e_obj, x))
        assert_same(t_obj, e_obj)
    assert count_captures(counter) == 1
    assert_hits_ran_graph(counter, CALLS - 1)



def test_builtins_setattr_and_dynamic_setattr():
    def f(obj, x, name):
        setattr(obj, name, x * 3)
        builtins.setattr(obj, "count", getattr(obj, "count", 0) + 1)
        object.__setattr__(obj, "raw", x.sum())
        return x

    traced = pyinterp.trace(f, backend="eager")
    t_obj, e_obj = Box(), Box()
    for i in range(CALLS):
        x = fresh(2, seed=i)
        name = "a" if i < 2 else "b"
        out = traced(t_obj, x, name)
        assert out is x
        f(e_obj, x, name)
        assert_same(t_obj, e_obj, "obj after call %d" % i)


def test_delattr_on_argument_object():
    def f(obj, x):
        y = x * obj.k
        del obj.k
        return y

    traced, counter = traced_counting(f)
    for i in range(CALLS):
        t_obj, e_obj = Box(k=2.0, other=1), Box(k=2.0, other=1)
        x = fresh(3, seed=i)
        assert_same(traced(t_obj, x), f(e_obj, x))
        assert_same(t_obj, e_obj)
        assert not hasattr(t_obj, "k")
    assert_hits_ran_graph(counter, CALLS - 1)


def test_module_attribute_counter_in_forward():
    class Counting(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)
            self.calls = 0
            self.last = None

        def forward(self, x):
            self.calls += 1
            out = self.lin(x)
            self.last = out.detach()
            return out

    torch.manual_seed(0)
    m = Counting()
    traced = pyinterp.trace(m, backend="eager")
    for i in range(CALLS):
        x = fresh(1, 2, seed=i)
        out = traced(x)
        assert m.calls == i + 1
        assert_same(m.last, out.detach())


# --------------------------------------------------------------------------
# containers
# --------------------------------------------------------------------------

def test_item_set_and_delete_on_argument_dict():
    def f(d, x):
        d["y"] = x * 2
        d["count"] = d.get("count", 0) + 1
        del d["tmp"]
        return x + 1

    traced = pyinterp.trace(f, backend="eager")
    t_d, e_d = {}, {}
    for i in range(CALLS):
        t_d["tmp"] = e_d["tmp"] = i
        x = fresh(3, seed=i)
        assert_same(traced(t_d, x), f(e_d, x))
        assert_same(t_d, e_d, "dict after call %d" % i)
    assert t_d["count"] == CALLS


def test_item_set_and_delete_on_fresh_argument_dicts():
    def f(d, x):
        d["new"] = d["old"] * 2
        del d["old"]
        return x.sum()

    traced, counter = traced_counting(f)
    for i in range(CALLS):
        t_d, e_d = {"old": fresh(2, seed=i)}, {"old": fresh(2, seed=i)}
        x = fresh(3, seed=i)
        assert_same(traced(t_d, x), f(e_d, x))
        assert_same(t_d, e_d)
    assert count_captures(counter) == 1
    assert_hits_ran_graph(counter, CALLS - 1)



def test_item_set_and_delete_on_argument_list():
    def f(lst, x):
        lst[0] = x * 2
        lst[-1] = lst[-1] + 1
        del lst[1]
        return len(lst)

    traced, counter = traced_counting(f)
    for i in range(CALLS):
        x = fresh(2, seed=i)
        t_l, e_l = [0, "drop", 5], [0, "drop", 5]
        assert_same(traced(t_l, x), f(e_l, x))
        assert_same(t_l, e_l)
    assert_hits_ran_graph(counter, CALLS - 1)


def test_slice_assignment_on_argument_list():
    def f(lst, x):
        lst[1:3] = [x, x * 2, x * 3]
        return x

    traced, counter = traced_counting(f)
    for i in range(CALLS):
        x = fresh(2, seed=i)
        t_l, e_l = [1, 2, 3, 4], [1, 2, 3, 4]
        traced(t_l, x)
        f(e_l, x)
        assert_same(t_l, e_l)
    assert_hits_ran_graph(counter, CALLS - 1)


def test_list_methods_on_argument_list_accumulate():
    def f(lst, x):
        lst.append(x * 2)
        lst.extend([x + 1, "s"])
        lst.insert(0, len(lst))
        popped = lst.pop()
        return popped, x.sum()

    traced = pyinterp.trace(f, backend="eager")
    t_l, e_l = [], []
    for i in range(CALLS):
        x = fresh(2, seed=i)
        assert_same(traced(t_l, x), f(e_l, x))
        assert_same(t_l, e_l, "list after call %d" % i)


def test_list_pop_of_tensor_used_in_result():
    def f(stack, x):
        top = stack.pop()
        return x + top

    traced = pyinterp.trace(f, backend="eager")
    t_s = [fresh(2, seed=10 + i) for i in range(CALLS)]
    e_s = [t.clone() for t in t_s]
    for i in range(CALLS):
        x = fresh(2, seed=i)
        assert_same(traced(t_s, x), f(e_s, x))
        assert_same(t_s, e_s)


def test_list_pop_of_python_scalars():
    def f(stack, x):
        return x * stack.pop(0)

    traced = pyinterp.trace(f, backend="eager")
    t_s, e_s = [1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0]
    x = fresh(3)
    for i in range(CALLS):
        assert_same(traced(t_s, x), f(e_s, x))
        assert t_s == e_s


G_LOG = []


def _append_to_global_list(x):
    y = x * 2
    G_LOG.append(y)
    G_LOG.extend([y.sum()])
    return y + 1


def test_list_methods_on_global_list():
    G_LOG.clear()
    traced = pyinterp.trace(_append_to_global_list, backend="eager")
    expected = []
    for i in range(CALLS):
        x = fresh(3, seed=i)
        out = traced(x)
        assert_same(out, x * 2 + 1)
        expected += [x * 2, (x * 2).sum()]
        assert_same(G_LOG, expected, "G_LOG after call %d" % i)
    G_LOG.clear()


def test_dict_methods_on_argument_dict():
    def f(d, x):
        d.update({"a": x * 2, "n": d.get("n", 0) + 1})
        gone = d.pop("tmp", None)
        first = d.setdefault("first", x.sum())
        return first, gone

    traced = pyinterp.trace(f, backend="eager")
    t_d, e_d = {}, {}
    for i in range(CALLS):
        x = fresh(3, seed=i)
        if i % 2:
            t_d["tmp"] = e_d["tmp"] = "v%d" % i
        assert_same(traced(t_d, x), f(e_d, x))
        assert_same(t_d, e_d, "dict after call %d" % i)


G_STATE = {}


def _touch_global_dict(x):
    G_STATE.update(last=x + 1)
    G_STATE.setdefault("first", x * 1)
    G_STATE.pop("transient", None)
    G_STATE["transient"] = x.mean()
    return x * 3


def test_dict_methods_on_global_dict():
    G_STATE.clear()
    traced, counter = traced_counting(_touch_global_dict)
    expected = {}
    try:
        for i in range(CALLS):
            x = fresh(3, seed=i)
            assert_same(traced(x), x * 3)
            expected.update(last=x + 1)
            expected.setdefault("first", x * 1)
            expected.pop("transient", None)
            expected["transient"] = x.mean()
            assert_same(G_STATE, expected, "G_STATE after call %d" % i)
        assert_hits_ran_graph(counter, CALLS - 2)
    finally:
        G_STATE.clear()


# --------------------------------------------------------------------------
# global and cell stores
# --------------------------------------------------------------------------

G_COUNTER = 0


def _bump_global_counter(x):
    global G_COUNTER
    G_COUNTER += 1
    return x * 2


def test_global_counter_increases_every_call():
    global G_COUNTER
    G_COUNTER = 0
    traced = pyinterp.trace(_bump_global_counter, backend="eager")
    for i in range(CALLS):
        x = fresh(3, seed=i)
        assert_same(traced(x), x * 2)
        assert G_COUNTER == i + 1


G_TOTAL = 0.0


def _accumulate_global_used(x):
    global G_TOTAL
    G_TOTAL = G_TOTAL + 1.5
    return x * G_TOTAL


def test_global_store_value_used_in_computation():
    global G_TOTAL
    G_TOTAL = 0.0
    traced = pyinterp.trace(_accumulate_global_used, backend="eager")
    x = fresh(3)
    for i in range(CALLS):
        assert_same(traced(x), x * (1.5 * (i + 1)))
        assert G_TOTAL == 1.5 * (i + 1)


G_LAST = None


def _store_global_tensor(x):
    global G_LAST
    G_LAST = x.relu()
    return x


def test_global_store_of_new_tensor():
    traced, counter = traced_counting(_store_global_tensor)
    for i in range(CALLS):
        x = fresh(3, seed=i)
        assert traced(x) is x
        assert_same(G_LAST, x.relu())
    assert_hits_ran_graph(counter, CALLS - 1)


def test_cell_store_nonlocal_counter():
    def make():
        count = 0
        seen = []

        def f(x):
            nonlocal count
            count += 1
            seen.append(x.sum())
            return x * 2

        return f, lambda: count, seen

    f, get_count, seen = make()
    traced = pyinterp.trace(f, backend="eager")
    for i in range(CALLS):
        x = fresh(3, seed=i)
        assert_same(traced(x), x * 2)
        assert get_count() == i + 1
        assert len(seen) == i + 1
        assert_same(seen[-1], x.sum())


def test_cell_store_of_tensor_nonlocal():
    def make():
        last = None

        def f(x):
            nonlocal last
            prev = last
            last = x * 2
            return prev is None

        return f, lambda: last

    f, get_last = make()
    traced, counter = traced_counting(f)
    for i in range(CALLS):
        x = fresh(3, seed=i)
        assert traced(x) is (i == 0)
        assert_same(get_last(), x * 2)


# --------------------------------------------------------------------------
# in-place tensor updates
# --------------------------------------------------------------------------
    assert_hits_ran_graph(counter, CALLS - 2)


def test_inplace_update_of_input_tensor_applied_once_per_call():
    def f(x):
        x.add_(1)
        return x * 2

    traced, counter = traced_counting(f)
    t_x, e_x = torch.zeros(3), torch.zeros(3)
    for i in range(CALLS):
        assert_same(traced(t_x), f(e_x))
        assert t_x.tolist() == [float(i + 1)] * 3
    assert count_captures(counter) == 1
    assert_hits_ran_graph(counter, CALLS - 1)



def test_inplace_update_returns_input_itself():
    def f(x):
        return x.mul_(2)

    traced, counter = traced_counting(f)
    x = torch.ones(2)
    for i in range(CALLS):
        assert traced(x) is x
        assert x.tolist() == [2.0 ** (i + 1)] * 2
    assert_hits_ran_graph(counter, CALLS - 1)


def test_inplace_index_assignment_into_input():
    def f(x, v):
        x[0] = v.sum()
        x[1:] += 1
        return x.sum()

    traced, counter = traced_counting(f)
    for i in range(CALLS):
        run_both(traced, f, fresh(4, seed=i), fresh(2, seed=i + 7))
    assert_hits_ran_graph(counter, CALLS - 1)


def test_inplace_update_of_tensor_in_argument_list():
    def f(xs):
        for t in xs:
            t.mul_(2)
        return len(xs)

    traced, counter = traced_counting(f)
    xs = [torch.ones(2), torch.full((2,), 3.0)]
    for i in range(CALLS):
        assert traced(xs) == 2
        assert xs[0].tolist() == [2.0 ** (i + 1)] * 2
        assert xs[1].tolist() == [3.0 * 2.0 ** (i + 1)] * 2
    assert_hits_ran_graph(counter, CALLS - 1)


def test_inplace_update_of_global_tensor():
    state = {"t": torch.zeros(2)}

    def f(x):
        state["t"].add_(x)
        return state["t"] * 1

    traced, counter = traced_counting(f)
    x = torch.ones(2)
    for i in range(CALLS):
        assert traced(x).tolist() == [float(i + 1)] * 2
        assert state["t"].tolist() == [float(i + 1)] * 2
    assert_hits_ran_graph(counter, CALLS - 1)


def test_batchnorm_running_stats_updated_every_call():
    torch.manual_seed(0)
    m_t = nn.BatchNorm1d(3)
    m_e = nn.BatchNorm1d(3)
    traced, counter = traced_counting(m_t)
    for i in range(CALLS):
        x = fresh(4, 3, seed=i)
        assert_same(traced(x), m_e(x))
        assert_same(m_t.running_mean, m_e.running_mean)
        assert_same(m_t.running_var, m_e.running_var)
        assert int(m_t.num_batches_tracked) == i + 1
    assert_hits_ran_graph(counter, CALLS - 1)
    m_t.eval()
    m_e.eval()
    x = fresh(4, 3, seed=99)
    assert_same(traced(x), m_e(x))


# --------------------------------------------------------------------------
# print
# --------------------------------------------------------------------------

def _printing(x):
    print("start")
    y = x * 2
    print("y =", y)
    print(y.sum(), end="|\n")
    print("shape", tuple(y.shape), sep=":")
    return y + 1


def test_print_output_identical_to_eager_each_call(capsys):
    traced = pyinterp.trace(_printing, backend="eager")
    for i in range(CALLS):
        x = fresh(3, seed=i)
        expected = _printing(x)
        eager_out = capsys.readouterr().out
        actual = traced(x)
        traced_out = capsys.readouterr().out
        assert_same(actual, expected)
        assert traced_out == eager_out, "call %d" % i


def test_print_order_relative_to_other_prints(capsys):
    def helper(t):
        print("helper sees", t)
        return t - 1

    def f(x):
        print("a")
        y = helper(x * 3)
        print("b", y.sum())
        return y

    traced = pyinterp.trace(f, backend="eager")
    for i in range(CALLS):
        x = fresh(2, seed=i)
        print("before")
        f(x)
        print("after")
        eager_out = capsys.readouterr().out
        print("before")
        traced(x)
        print("after")
        assert capsys.readouterr().out == eager_out, "call %d" % i


def test_print_interleaved_with_list_side_effects(capsys):
    log = []

    def f(x):
        log.append("one")
        print("p1", len(log))
        log.append(x.sum())
        print("p2", log[-1])
        return x

    traced = pyinterp.trace(f, backend="eager")
    eager_log_len = 0
    for i in range(CALLS):
        x = fresh(2, seed=i)
        f(x)
        eager_out = capsys.readouterr().out
        del log[eager_log_len:]
        traced(x)
        assert capsys.readouterr().out == eager_out, "call %d" % i
        assert len(log) == eager_log_len + 2
        eager_log_len = len(log)


# --------------------------------------------------------------------------
# order and exactly-once
# --------------------------------------------------------------------------

def test_nothing_runs_twice_on_first_call():
    events = []

    def f(x):
        events.append("enter")
        y = x * 2
        events.append("exit")
        return y

    traced = pyinterp.trace(f, backend="eager")
    traced(fresh(2))
    assert events == ["enter", "exit"]
    traced(fresh(2))
    assert events == ["enter", "exit"] * 2


def test_side_effects_on_an_object_created_outside_and_returned():
    def f(acc, x):
        acc.append(x + 1)
        return acc

    traced = pyinterp.trace(f, backend="eager")
    acc = []
    for i in range(CALLS):
        x = fresh(2, seed=i)
        assert traced(acc, x) is acc
        assert len(acc) == i + 1
        assert_same(acc[-1], x + 1)


def test_mutation_order_of_several_containers():
    def f(a, b, x):
        a.append(len(b))
        b.append(len(a))
        a.append(x.sum())
        b.insert(0, a[-2])
        return x

    traced = pyinterp.trace(f, backend="eager")
    ta, tb, ea, eb = [], [], [], []
    for i in range(CALLS):
        x = fresh(2, seed=i)
        traced(ta, tb, x)
        f(ea, eb, x)
        assert_same((ta, tb), (ea, eb), "after call %d" % i)


# --------------------------------------------------------------------------
# less obvious outside state
# --------------------------------------------------------------------------

def test_mutable_default_argument_list_appended():
    # The default list is state outside the call: it grows on every call.
    def f(x, acc=[]):  # noqa: B006 -- on purpose
        acc.append(x * 2)
        return len(acc), x + 1

    traced = pyinterp.trace(f, backend="eager")
    for i in range(CALLS):
        x = fresh(2, seed=i)
        n, y = traced(x)
        assert n == i + 1
        assert len(f.__defaults__[0]) == i + 1
        assert_same(f.__defaults__[0][-1], x * 2)
        assert_same(y, x + 1)


def test_mutable_default_argument_not_read_still_mutated():
    def f(x, seen=[]):  # noqa: B006 -- on purpose
        seen.append("call")
        return x * 3

    traced = pyinterp.trace(f, backend="eager")
    for i in range(CALLS):
        assert_same(traced(fresh(2, seed=i)), fresh(2, seed=i) * 3)
        assert f.__defaults__[0] == ["call"] * (i + 1)


def test_torch_manual_seed_inside_function_replayed():
    def f(x):
        torch.manual_seed(0)
        return x + torch.rand(2)

    traced = pyinterp.trace(f, backend="eager")
    x = torch.zeros(2)
    for i in range(CALLS):
        torch.manual_seed(100 + i)
        expected = f(x)
        expected_next = torch.rand(1)
        torch.manual_seed(100 + i)
        actual = traced(x)
        actual_next = torch.rand(1)
        assert_same(actual, expected, "result of call %d" % i)
        assert_same(actual_next, expected_next, "global RNG after call %d" % i)


def test_random_tensor_ops_advance_the_global_rng():
    def f(x):
        return x + torch.randn(3)

    traced, counter = traced_counting(f)
    x = torch.zeros(3)
    for seed in range(CALLS):
        torch.manual_seed(seed)
        expected = (f(x), torch.rand(1))
        torch.manual_seed(seed)
        actual = (traced(x), torch.rand(1))
        assert_same(actual, expected, "seed %d" % seed)
    a, b = traced(x), traced(x)
    assert not torch.equal(a, b)
    assert count_captures(counter) == 1


def test_tensor_created_inside_and_mutated_is_fresh_each_call():
    def f(x):
        c = torch.zeros(2)
        c.add_(x)
        return c

    traced, counter = traced_counting(f)
    for i in range(CALLS):
        assert traced(torch.ones(2)).tolist() == [1.0, 1.0], "call %d" % i
    assert_hits_ran_graph(counter, CALLS - 1)


def test_exception_after_side_effect_keeps_side_effect_once():
    log = []

    def f(x, bad):
        log.append(x.sum())
        y = x * 2
        if bad:
            raise ValueError("bad input")
        return y

    traced = pyinterp.trace(f, backend="eager")
    x = fresh(2)
    traced(x, False)
    traced(x, False)
    assert len(log) == 2
    with pytest.raises(ValueError, match="bad input"):
        traced(x, True)
    assert len(log) == 3
    with pytest.raises(ValueError, match="bad input"):
        traced(x, True)
    assert len(log) == 4
    assert_same(traced(x, False), x * 2)
    assert len(log) == 5


def _print_then_mutate(x):
    y = x * 1
    print("before", y)
    y.add_(1)
    print("after", y)
    return y


def _print_input_between_inplace(x):
    x.add_(1)
    print("middle", x)
    x.add_(1)
    return x


@pytest.mark.parametrize("fn", [_print_then_mutate, _print_input_between_inplace],
                         ids=lambda f: f.__name__)
def test_print_shows_value_at_print_time_not_final_value(fn, capsys):
    traced = pyinterp.trace(fn, backend="eager")
    for i in range(CALLS):
        t_x, e_x = torch.full((2,), float(i)), torch.full((2,), float(i))
        expected = fn(e_x)
        eager_out = capsys.readouterr().out
        assert_same(traced(t_x), expected)
        assert capsys.readouterr().out == eager_out, "call %d" % i
        assert_same(t_x, e_x)


def test_print_to_stderr_and_stdout_interleaved(capsys):
    import sys

    def f(x):
        print("err", x * 2, file=sys.stderr)
        print("out", x.sum())
        return x

    traced = pyinterp.trace(f, backend="eager")
    for i in range(CALLS):
        x = fresh(2, seed=i)
        f(x)
        eager = capsys.readouterr()
        traced(x)
        got = capsys.readouterr()
        assert (got.out, got.err) == (eager.out, eager.err), "call %d" % i


def test_print_formatted_tensor_values(capsys):
    def f(x):
        print(f"sum={x.sum():.3f} all={x * 2}", [x, {"k": x + 1}])
        return x

    traced = pyinterp.trace(f, backend="eager")
    for i in range(CALLS):
        x = fresh(2, seed=i)
        f(x)
        eager_out = capsys.readouterr().out
        traced(x)
        assert capsys.readouterr().out == eager_out, "call %d" % i


def test_buffer_incremented_in_forward():
    class Steps(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("steps", torch.zeros((), dtype=torch.long))

        def forward(self, x):
            self.steps += 1
            return x * self.steps

    m = Steps()
    traced, counter = traced_counting(m)
    for i in range(CALLS):
        assert traced(torch.ones(2)).tolist() == [float(i + 1)] * 2
        assert m.steps.item() == i + 1
    assert_hits_ran_graph(counter, CALLS - 1)


def test_buffer_rebound_in_forward():
    class Ema(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("ema", torch.zeros(2))

        def forward(self, x):
            self.ema = self.ema * 0.5 + x
            return self.ema

    m_t, m_e = Ema(), Ema()
    traced = pyinterp.trace(m_t, backend="eager")
    for i in range(CALLS):
        x = fresh(2, seed=i)
        out = traced(x)
        assert_same(out, m_e(x))
        assert out is m_t.ema
        assert_same(m_t.ema, m_e.ema)


def test_out_kwarg_writes_into_input():
    def f(x):
        torch.add(x, 1, out=x)
        return x

    traced = pyinterp.trace(f, backend="eager")
    x = torch.zeros(2)
    for i in range(CALLS):
        assert traced(x) is x
        assert x.tolist() == [float(i + 1)] * 2


def test_optimizer_zero_grad_inside_traced_step():
    torch.manual_seed(0)
    m = nn.Linear(2, 1)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)

    def f(x):
        opt.zero_grad()
        return m(x).sum()

    traced = pyinterp.trace(f, backend="eager")
    for i in range(CALLS):
        traced(torch.ones(1, 2)).backward()
        assert m.bias.grad.tolist() == [1.0], "call %d: grads accumulated" % i
        opt.step()


def test_requires_grad_set_on_input_inside():
    def f(x):
        x.requires_grad_()
        return (x * x).sum()

    traced = pyinterp.trace(f, backend="eager")
    for i in range(CALLS):
        x = torch.full((2,), float(i))
        loss = traced(x)
        assert x.requires_grad and loss.requires_grad
        loss.backward()
        assert_same(x.grad, 2 * x.detach())


# --------------------------------------------------------------------------
# consuming outside iterators: each call takes the next value
# --------------------------------------------------------------------------

def _counter_gen():
    i = 0
    while True:
        i += 1
        yield i


@pytest.mark.parametrize("make", [
    lambda: iter([1.0, 2.0, 3.0, 4.0, 5.0]),
    lambda: __import__("itertools").count(1),
    _counter_gen,
], ids=["list_iterator", "itertools_count", "generator"])
def test_next_on_outside_iterator_advances_every_call(make):
    t_it, e_it = make(), make()

    def f_t(x):
        return x * next(t_it)

    def f_e(x):
        return x * next(e_it)

    traced = pyinterp.trace(f_t, backend="eager")
    for i in range(CALLS):
        x = fresh(2, seed=i)
        assert_same(traced(x), f_e(x), "call %d" % i)
    assert next(t_it) == next(e_it)


def test_iterator_argument_consumed():
    def f(it, x):
        return x * next(it), next(it)

    traced = pyinterp.trace(f, backend="eager")
    t_it, e_it = iter(range(100)), iter(range(100))
    for i in range(CALLS):
        x = fresh(2, seed=i)
        assert_same(traced(t_it, x), f(e_it, x), "call %d" % i)
    assert next(t_it) == next(e_it)


# --------------------------------------------------------------------------
# other container types
# --------------------------------------------------------------------------

def _set_add_discard(s, x):
    s.add(len(s))
    s.discard(0)
    return x * len(s)


def _deque_appendleft(d, x):
    d.appendleft(x.sum())
    return x * len(d)


def _heappush(h, x):
    import heapq
    heapq.heappush(h, -len(h))
    return x * h[0]


def _counter_update(c, x):
    c.update(["a"])
    return x * c["a"]


def _defaultdict_append(d, x):
    d["k"].append(1)
    return x * len(d["k"])


def _list_sort_reverse(lst, x):
    lst.append(-len(lst))
    lst.sort()
    lst.reverse()
    return x * lst[-1]


@pytest.mark.parametrize("fn, make", [
    (_set_add_discard, set),
    (_deque_appendleft, lambda: __import__("collections").deque()),
    (_heappush, list),
    (_counter_update, lambda: __import__("collections").Counter()),
    (_defaultdict_append, lambda: __import__("collections").defaultdict(list)),
    (_list_sort_reverse, list),
], ids=lambda v: getattr(v, "__name__", "make"))
def test_container_mutations_accumulate_like_eager(fn, make):
    traced = pyinterp.trace(fn, backend="eager")
    t_c, e_c = make(), make()
    for i in range(CALLS):
        x = fresh(2, seed=i)
        assert_same(traced(t_c, x), fn(e_c, x), "result of call %d" % i)
        assert type(t_c) is type(e_c)
        assert repr(t_c) == repr(e_c), "container after call %d" % i


# --------------------------------------------------------------------------
# user code run by attribute access / protocols runs once per call
# --------------------------------------------------------------------------

class _Logged:
    def __init__(self):
        self.log = []
        self._k = 2.0

    @property
    def k(self):
        self.log.append("k")
        return self._k

    def __len__(self):
        self.log.append("len")
        return 2


def test_property_and_dunder_side_effects_once_per_call():
    def f(obj, x):
        return x * obj.k + len(obj)

    traced = pyinterp.trace(f, backend="eager")
    t_obj, e_obj = _Logged(), _Logged()
    for i in range(CALLS):
        x = fresh(2, seed=i)
        assert_same(traced(t_obj, x), f(e_obj, x))
        assert t_obj.log == e_obj.log, "call %d" % i


def test_user_iterator_protocol_consumed_like_eager():
    class Counter3:
        def __init__(self):
            self.i = 0

        def __iter__(self):
            return self

        def __next__(self):
            self.i += 1
            if self.i % 3 == 0:
                raise StopIteration
            return self.i

    def f(it, x):
        return x * sum(it)

    traced = pyinterp.trace(f, backend="eager")
    t_it, e_it = Counter3(), Counter3()
    for i in range(CALLS):
        x = fresh(2, seed=i)
        assert_same(traced(t_it, x), f(e_it, x), "call %d" % i)
        assert t_it.i == e_it.i


def test_print_uses_print_options_in_force_at_print_time(capsys):
    def f(x):
        torch.set_printoptions(precision=1)
        print(x * 1.23456)
        torch.set_printoptions(precision=4)
        return x

    traced = pyinterp.trace(f, backend="eager")
    try:
        for i in range(CALLS):
            x = fresh(2, seed=i)
            f(x)
            eager_out = capsys.readouterr().out
            traced(x)
            assert capsys.readouterr().out == eager_out, "call %d" % i
    finally:
        torch.set_printoptions(profile="default")


def test_warnings_and_logging_inside_once_per_call():
    import io
    import logging
    import warnings

    log = logging.getLogger("pyinterp_trace_test_probe")
    log.setLevel(logging.INFO)
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    log.addHandler(handler)

    def f(x):
        warnings.warn("careful %d" % x.shape[0])
        log.info("value %s", x.sum())
        return x * 2

    traced = pyinterp.trace(f, backend="eager")
    try:
        for i in range(CALLS):
            x = torch.full((2,), float(i))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                traced(x)
            assert [str(w.message) for w in caught if "careful" in str(w.message)] == ["careful 2"]
        assert buf.getvalue() == "".join("value %s\n" % torch.full((2,), float(i)).sum()
                                         for i in range(CALLS))
    finally:
        log.removeHandler(handler)


def test_class_attribute_store_through_argument_type():
    class Tracked:
        instances_seen = 0

        def bump(self):
            type(self).instances_seen += 1

    def f(obj, x):
        obj.bump()
        return x * 2

    traced = pyinterp.trace(f, backend="eager")
    obj = Tracked()
    for i in range(CALLS):
        x = fresh(2, seed=i)
        assert_same(traced(obj, x), x * 2)
        assert Tracked.instances_seen == i + 1, "call %d" % i


class _GlobalTracked:
    n = 0


def _bump_global_class(x):
    _GlobalTracked.n += 1
    return x * 2


def test_class_attribute_store_through_global_class():
    _GlobalTracked.n = 0
    traced = pyinterp.trace(_bump_global_class, backend="eager")
    for i in range(CALLS):
        traced(fresh(2, seed=i))
        assert _GlobalTracked.n == i + 1


def test_lru_cached_helper_after_cache_clear():
    # functools.lru_cache keeps state in C: after cache_clear() the eager
    # function runs the helper body again (a visible side effect).
    import functools

    calls = []

    @functools.lru_cache(maxsize=None)
    def factor(n):
        calls.append(n)
        return n * 1.5

    def f(x, n):
        return x * factor(n)

    traced = pyinterp.trace(f, backend="eager")
    x = fresh(2)
    for n in [1, 1, 2, 2, 1]:
        assert_same(traced(x, n), x * (n * 1.5))
    assert calls == [1, 2]
    factor.cache_clear()
    assert_same(traced(x, 1), x * 1.5)
    assert calls == [1, 2, 1]


# -- outside lists that are only appended to ------------------------------------
def _appender(log):
    def f(x):
        y = x * 2
        log.append(y)
        log.extend([y.sum()])
        return y + 1
    return f


def test_list_only_appended_to_is_one_cache_entry():
    eager_log, traced_log = [], []
    traced, counter = traced_counting(_appender(traced_log))
    eager = _appender(eager_log)
    for seed in range(5):
        x = fresh(3, seed=seed)
        assert_same(traced(x), eager(x))
        assert_same(traced_log, eager_log, "log")
    assert counter.count == 1, "appending must not guard the growing length"
    assert_hits_ran_graph(counter, 4)


def _append_then_read(log):
    def f(x):
        log.append(x)
        return x * len(log) + log[0]
    return f


def test_list_read_after_append_guards_its_old_length_and_items():
    eager_log, traced_log = [torch.ones(3)], [torch.ones(3)]
    traced = pyinterp.trace(_append_then_read(traced_log), backend="eager")
    eager = _append_then_read(eager_log)
    for seed in range(4):
        x = fresh(3, seed=seed)
        assert_same(traced(x), eager(x))
        # the first item is replaced between calls: never served stale
        eager_log[0] = traced_log[0] = torch.full((3,), float(seed))
        assert_same(traced_log, eager_log, "log")
