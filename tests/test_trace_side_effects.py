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
