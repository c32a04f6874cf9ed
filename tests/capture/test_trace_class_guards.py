"""pyinterp.trace guards on classes: what the run looked up on a type (a
dunder, a method, a property or another descriptor, found or not found
along the MRO) is replaced, added or deleted on the class after the first
call; every later call must match eager (issue 14, item 1)."""
import functools

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from torch import nn  # noqa: E402

from trace_support import fresh, raises_same, run_both, traced_counting  # noqa: E402


def twice(traced, counter, eager, *args):
    """Two calls, both matching eager; the second is a hit that ran a graph."""
    run_both(traced, eager, *args)
    compiled, runs = counter.count, counter.runs
    run_both(traced, eager, *args)
    assert counter.count == compiled, "the repeated call recompiled"
    assert counter.runs > runs, "the repeated call did not run a compiled graph"


def check_change(fn, change, *args):
    """``fn`` traced and called (miss, hit); ``change()``; called again:
    both calls after the change match eager, the first a miss."""
    traced, counter = traced_counting(fn)
    args = args or (fresh(3),)
    twice(traced, counter, fn, *args)
    compiled = counter.count
    change()
    twice(traced, counter, fn, *args)
    assert counter.count > compiled, "the change did not fail the guard"
    return traced, counter


# --------------------------------------------------------------------------
# dunders replaced, added or deleted on the class
# --------------------------------------------------------------------------

def test_call_replaced_on_the_class():
    class Gate:
        def __call__(self, x):
            return x + 1

    g = Gate()

    def change():
        Gate.__call__ = lambda self, x: x * 10

    check_change(lambda x: g(x), change)


def test_call_override_added_on_a_subclass():
    class Base:
        def __call__(self, x):
            return x + 1

    class Sub(Base):
        pass

    g = Sub()

    def change():
        Sub.__call__ = lambda self, x: x - 5

    check_change(lambda x: g(x), change)


def test_call_deleted_from_the_class_raises_as_eager():
    class Gate:
        def __call__(self, x):
            return x + 1

    g = Gate()
    f = lambda x: g(x)  # noqa: E731
    traced, counter = traced_counting(f)
    x = fresh(3)
    twice(traced, counter, f, x)
    del Gate.__call__
    raises_same(traced, f, x)  # the guard raises: a miss, then eager's TypeError


def test_bool_replaced():
    class Flag:
        def __bool__(self):
            return True

    flag = Flag()

    def change():
        Flag.__bool__ = lambda self: False

    check_change(lambda x: x + 1 if flag else x - 1, change)


def test_bool_added_where_the_default_truth_was_used():
    class Plain:
        pass

    plain = Plain()

    def change():
        Plain.__bool__ = lambda self: False

    check_change(lambda x: x * 2 if plain else x * 3, change)


def test_len_replaced():
    class Bag:
        def __len__(self):
            return 2

    bag = Bag()

    def change():
        Bag.__len__ = lambda self: 5

    check_change(lambda x: x * len(bag), change)


def test_len_added_changes_truth():
    class Box:
        pass

    box = Box()

    def change():
        Box.__len__ = lambda self: 0

    check_change(lambda x: x + 1 if box else x - 1, change)


def test_getattr_replaced():
    class Lazy:
        def __getattr__(self, name):
            return 2.0

    obj = Lazy()

    def change():
        Lazy.__getattr__ = lambda self, name: 7.0

    check_change(lambda x: x * obj.scale, change)


def test_getattr_added_where_an_attribute_was_missing():
    class Opt:
        pass

    opt = Opt()

    def f(x):
        return x * getattr(opt, "scale", 3.0)

    def change():
        Opt.__getattr__ = lambda self, name: 0.5

    check_change(f, change)


def test_binary_operator_replaced():
    class Num:
        def __init__(self, v):
            self.v = v

        def __add__(self, other):
            return other + self.v

    n = Num(2.0)

    def change():
        Num.__add__ = lambda self, other: other * self.v

    check_change(lambda x: (n + x) * 2, change)


def test_reflected_operator_added():
    class Other:
        pass

    def f(x):
        try:
            return x + (1 + Other())  # (made by the run: only its class is read)
        except TypeError:
            return x - 1

    def change():
        Other.__radd__ = lambda self, other: other + 100

    check_change(f, change)


def test_getitem_and_iter_replaced():
    class Table:
        def __getitem__(self, key):
            return 2.0

        def __iter__(self):
            return iter([1.0, 2.0])

    t = Table()

    def f(x):
        for s in t:
            x = x * s
        return x + t["bias"]

    def change():
        Table.__getitem__ = lambda self, key: -1.0
        Table.__iter__ = lambda self: iter([3.0])

    check_change(f, change)


def test_enter_exit_replaced():
    class Ctx:
        def __enter__(self):
            return 2.0

        def __exit__(self, *exc):
            return False

    ctx = Ctx()

    def f(x):
        with ctx as s:
            return x * s

    def change():
        Ctx.__enter__ = lambda self: 5.0

    check_change(f, change)


def test_eq_replaced():
    class Key:
        def __eq__(self, other):
            return True

        __hash__ = object.__hash__

    k = Key()

    def change():
        Key.__eq__ = lambda self, other: False

    check_change(lambda x: x + 1 if k == 3 else x - 1, change)


# --------------------------------------------------------------------------
# methods, properties and other descriptors
# --------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["base", "subclass"])
def test_method_replaced_on_the_base_or_overridden_on_the_subclass(where):
    class Base:
        def act(self, x):
            return x + 1

    class Sub(Base):
        pass

    s = Sub()

    def change():
        setattr(Base if where == "base" else Sub, "act", lambda self, x: x * 4)

    check_change(lambda x: s.act(x), change)


def test_property_replaced_on_the_class():
    class Cfg:
        @property
        def scale(self):
            return 2.0

    cfg = Cfg()

    def change():
        Cfg.scale = property(lambda self: 3.0)

    check_change(lambda x: x * cfg.scale, change)


def test_property_added_over_an_instance_attribute():
    class Cfg:
        def __init__(self):
            self.scale = 2.0

    cfg = Cfg()

    def change():
        Cfg.scale = property(lambda self: 3.0)

    check_change(lambda x: x * cfg.scale, change)


def test_descriptor_get_replaced_on_its_type():
    class Twice:
        def __get__(self, obj, owner=None):
            return 2.0

    class Holder:
        factor = Twice()

    h = Holder()

    def change():
        Twice.__get__ = lambda self, obj, owner=None: 9.0

    check_change(lambda x: x * h.factor, change)


def test_cached_property_shadowed_in_the_instance_dict():
    class Model:
        @functools.cached_property
        def factor(self):
            return 2.0

    m = Model()

    def change():
        m.__dict__["factor"] = 5.0

    check_change(lambda x: x * m.factor, change)


def test_class_constant_read_through_an_object_made_in_the_run():
    class Scaler:
        factor = 2.0

        def apply(self, x):
            return x * self.factor

    def change():
        Scaler.factor = 3.0

    check_change(lambda x: Scaler().apply(x), change)


def test_init_replaced_on_a_class_constructed_in_the_run():
    class Point:
        def __init__(self, v):
            self.v = v

    def change():
        Point.__init__ = lambda self, v: setattr(self, "v", v * 10)

    check_change(lambda x: x + Point(1.0).v, change)


def test_super_method_replaced_on_the_base():
    class Base:
        def act(self, x):
            return x + 1

    class Sub(Base):
        def act(self, x):
            return super().act(x) * 2

    s = Sub()

    def change():
        Base.act = lambda self, x: x - 3

    check_change(lambda x: s.act(x), change)


def test_staticmethod_replaced():
    class Ops:
        @staticmethod
        def f(x):
            return x + 1

    def change():
        Ops.f = staticmethod(lambda x: x * 3)

    check_change(lambda x: Ops.f(x), change)


# --------------------------------------------------------------------------
# modules
# --------------------------------------------------------------------------

class _Lin(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        return self.lin(x)


def test_module_call_override_added_on_the_class():
    torch.manual_seed(0)

    class M(_Lin):
        pass

    m = M()

    def change():
        M.__call__ = lambda self, x: self.forward(x) * 0

    check_change(lambda x: m(x), change, fresh(2, 3))


def test_module_forward_replaced_on_the_class():
    torch.manual_seed(0)

    class M(_Lin):
        pass

    m = M()

    def change():
        M.forward = lambda self, x: self.lin(x) + 1

    check_change(m, change, fresh(2, 3))


def test_module_attribute_shadowed_by_a_class_attribute():
    torch.manual_seed(0)

    class M(_Lin):
        def forward(self, x):
            return self.lin(x) * 2

    m = M()

    def change():
        M.lin = nn.Identity()

    check_change(m, change, fresh(2, 3))


def test_submodule_class_forward_replaced():
    torch.manual_seed(0)

    class Act(nn.Module):
        def forward(self, x):
            return x.relu()

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = Act(), Act()

        def forward(self, x):
            return self.b(self.a(x) - 0.5)

    m = M()

    def change():
        Act.forward = lambda self, x: x.sigmoid()

    check_change(m, change, fresh(2, 3))


# --------------------------------------------------------------------------
# captures in several threads at once
# --------------------------------------------------------------------------

def test_class_guards_of_captures_running_in_threads():
    import threading

    def make(k):
        class Gate:
            def __call__(self, x):
                return x + k

        g = Gate()
        return Gate, (lambda x: g(x))

    pairs = [make(k) for k in range(4)]
    traced = [traced_counting(fn)[0] for _, fn in pairs]
    x = fresh(3)
    barrier = threading.Barrier(len(pairs))
    errors = []

    def first_call(i):
        try:
            barrier.wait()
            run_both(traced[i], pairs[i][1], x)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=first_call, args=(i,)) for i in range(len(pairs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i, (cls, fn) in enumerate(pairs):
        cls.__call__ = lambda self, x, i=i: x * (i + 10)
        run_both(traced[i], fn, x)
        run_both(traced[i], fn, x)


def test_no_lookup_observer_is_left_behind():
    from pyinterp.interp.model import lookup

    class Gate:
        def __call__(self, x):
            return x + 1

    g = Gate()
    traced, _ = traced_counting(lambda x: g(x))
    traced(fresh(3))
    with pytest.raises(ZeroDivisionError):
        pyinterp.trace(lambda x: x / 0 + 1 // 0, backend="eager")(fresh(3))
    assert lookup.observers == ()
