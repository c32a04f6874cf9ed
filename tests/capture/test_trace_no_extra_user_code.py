"""Capture and guards run no user code that eager would not (issue 14,
item 8): the user's dunders log every call; over a first call (capture)
and several hits, the log of the traced function must equal eager's, and
results and exceptions must match.

Guards and capture may only read what the program read, or use C-level
reads that run no Python code (``list.__len__(x)``, ``dict.get(d, k)``).
"""
import collections

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

from trace_support import assert_same, fresh  # noqa: E402

LOG = []


def same_calls(fn, *args, calls=4, change=None):
    """``fn`` eagerly and traced, ``calls`` times each (``change()`` between
    the second and third calls, on both sides' state): the same results
    and the same log of user dunder calls, call by call."""
    traced = pyinterp.trace(fn, backend="eager")
    for i in range(calls):
        if change is not None and i == 2:
            change()
        del LOG[:]
        expected = fn(*args)
        eager_log = list(LOG)
        del LOG[:]
        actual = traced(*args)
        assert_same(actual, expected)
        assert LOG == eager_log, "call %d: traced ran %r, eager %r" % (i, LOG, eager_log)
    return traced


def logging_subclass(base, *names):
    """A subclass of ``base`` whose methods ``names`` log each call and
    delegate to ``base``'s; its ``__len__`` logs and raises (C iteration
    reads the storage: for ``for``, eager calls none of them)."""

    def logged(name):
        def method(self, *args):
            LOG.append(name)
            if name == "__len__":
                raise RuntimeError("__len__ must not be called")
            return getattr(base, name)(self, *args)

        method.__name__ = name
        return method

    methods = {name: logged(name) for name in ("__len__",) + names}
    return type("Logging" + base.__name__.capitalize(), (base,), methods)


LoggingList = logging_subclass(list, "__getitem__", "__contains__")
LoggingTuple = logging_subclass(tuple, "__getitem__")
LoggingDict = logging_subclass(dict, "__getitem__", "__contains__", "keys")


def test_iterating_a_list_subclass_calls_no_len_or_getitem():
    xs = LoggingList([2.0, 3.0])

    def f(x):
        for v in xs:
            x = x * v
        return x

    same_calls(f, fresh(3))


def test_list_subclass_changed_between_calls():
    xs = LoggingList([2.0, 3.0])

    def f(x):
        for v in xs:
            x = x * v
        return x

    same_calls(f, fresh(3), calls=5, change=lambda: list.append(xs, 0.5))


def test_unpacking_a_tuple_subclass():
    pair = LoggingTuple((2.0, 3.0))

    def f(x):
        a, b = pair
        return x * a + b

    same_calls(f, fresh(3))


def test_list_subclass_argument_iterated():
    def f(x, xs):
        for v in xs:
            x = x + v
        return x

    same_calls(f, fresh(3), LoggingList([1.0, 2.0, 3.0]))


def test_iterating_a_dict_subclass():
    d = LoggingDict(a=2.0, b=3.0)

    def f(x):
        for k in d:
            x = x * d[k]  # a Python __getitem__: interpreted, as many calls as eager
        return x

    same_calls(f, fresh(3))


def test_dict_subclass_items_iterated():
    d = LoggingDict(a=2.0, b=3.0)

    def f(x):
        for k, v in dict.items(d):
            x = x * v
        return x

    same_calls(f, fresh(3), change=lambda: dict.__setitem__(d, "c", 0.5))


def test_dict_subclass_read_through_get():
    d = LoggingDict(scale=2.0)

    def f(x):
        return x * d.get("scale", 1.0) + d.get("bias", 0.0)

    same_calls(f, fresh(3), calls=5, change=lambda: dict.__setitem__(d, "bias", 1.0))


def test_defaultdict_guard_never_calls_the_factory():
    def setup():
        made = []

        def factory():
            made.append(1)
            return 5.0

        d = collections.defaultdict(factory, scale=2.0)
        return (lambda x, d=d: x * d.get("scale", 1.0) + len(d)), d, made

    eager, eager_d, eager_made = setup()
    fn, d, made = setup()
    traced = pyinterp.trace(fn, backend="eager")
    x = fresh(3)
    for i in range(4):
        if i == 2:
            del eager_d["scale"], d["scale"]
        assert_same(traced(x), eager(x))
        assert made == eager_made == [] and dict(d) == dict(eager_d)


class Key:
    def __init__(self, name):
        self.name = name

    def __hash__(self):
        LOG.append("__hash__")
        return hash(self.name)

    def __eq__(self, other):
        LOG.append("__eq__")
        return isinstance(other, Key) and other.name == self.name


def test_user_key_hashed_as_often_as_eager():
    k = Key("scale")
    table = {k: 2.0}

    def f(x):
        return x * table[k]

    same_calls(f, fresh(3))


class Hooked:
    """Python attribute hooks: every run logs them."""

    def __init__(self):
        object.__setattr__(self, "scale", 2.0)

    def __getattribute__(self, name):
        LOG.append("__getattribute__ " + name)
        return object.__getattribute__(self, name)


class Fallback:
    def __getattr__(self, name):
        LOG.append("__getattr__ " + name)
        raise AttributeError(name)


def test_python_getattribute_runs_as_often_as_eager():
    h = Hooked()

    def f(x):
        return x * h.scale

    same_calls(f, fresh(3))


def test_missing_attribute_behind_a_python_getattr():
    fb = Fallback()

    def f(x):
        return x * getattr(fb, "scale", 3.0) + (1 if hasattr(fb, "bias") else 0)

    same_calls(f, fresh(3))


def test_getattribute_of_an_argument():
    def f(x, h):
        return x * h.scale

    same_calls(f, fresh(3), Hooked())


class Record:
    """Made by the run and returned: the mock rebuilds it on every hit."""

    def __init__(self, value):
        object.__setattr__(self, "value", value)

    def __getattribute__(self, name):
        LOG.append("__getattribute__ " + name)
        return object.__getattribute__(self, name)


def test_object_with_python_getattribute_made_and_returned():
    def f(x):
        return Record(x * 2)

    traced = pyinterp.trace(f, backend="eager")
    x = fresh(3)
    for i in range(3):
        del LOG[:]
        expected = f(x)
        eager_log = list(LOG)
        del LOG[:]
        actual = traced(x)
        assert LOG == eager_log, "call %d: traced ran %r, eager %r" % (i, LOG, eager_log)
        assert type(actual) is Record
        del LOG[:]
        assert_same(object.__getattribute__(actual, "value"),
                    object.__getattribute__(expected, "value"))
