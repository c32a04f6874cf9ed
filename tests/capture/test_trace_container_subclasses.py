"""The run's own instances of Python subclasses of containers (a Hugging
Face ``ModelOutput`` is an ``OrderedDict``) holding objects from outside:
``super().__setitem__(name, value)`` and ``super().__setattr__(name,
value)`` store references, so they are captured (no break) and the mock
puts the same outside objects back; C methods that would call the
subclass's Python code back natively keep their break.  Every case runs
traced and eager on the same inputs, several times (capture, then hits)."""
import collections

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

from trace_support import assert_same, fresh  # noqa: E402


class Output(collections.OrderedDict):
    """A ModelOutput-like record: items and attributes kept in step."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        super().__setattr__(key, value)


class Frozen:
    """A frozen-dataclass-like object written with object.__setattr__."""

    def __init__(self, cache, logits):
        object.__setattr__(self, "cache", cache)
        object.__setattr__(self, "logits", logits)

    def __setattr__(self, name, value):
        raise AttributeError("frozen")


class Tracked:
    """A registry the program keeps between calls (outside the function)."""

    def __init__(self):
        self.seen = []


def with_output(x, cache):
    out = Output()
    out["logits"] = x * 2
    out["cache"] = cache  # an outside object stored in the run's record
    return out


def with_frozen(x, cache):
    return Frozen(cache, x + 1)


@pytest.mark.parametrize("fn", [with_output, with_frozen], ids=lambda f: f.__name__)
def test_outside_objects_stored_in_the_runs_records_are_captured(fn):
    traced = pyinterp.trace(fn, backend="eager")
    explanation = pyinterp.explain(fn, fresh(3), Tracked())
    assert explanation.graph_break_count == 0, explanation.break_reasons
    for seed in range(3):
        x, cache = fresh(3, seed=seed), Tracked()
        expected, actual = fn(x, cache), traced(x, cache)
        assert type(actual) is type(expected)
        assert actual.cache is cache  # the same outside object, by path
        assert_same(actual.logits, expected.logits)
        if fn is with_output:
            assert list(actual) == list(expected) and actual["cache"] is cache
    assert sum(e.hits for e in traced.cache_entries()) == 2


class WithMissing(dict):
    def __missing__(self, key):
        return key * 2


def reads_missing(x, table):
    d = WithMissing()
    d["a"] = x
    return super(WithMissing, d).__getitem__("a"), d["b"]


class Mirror(collections.OrderedDict):
    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self.log.append(key)  # (the subclass's Python __setitem__ writes outside)


def updates(x, log):
    m = Mirror()
    m.log = log
    super(Mirror, m).update(a=x)  # C update calls Mirror.__setitem__ back
    return m["a"] * 2


def test_c_methods_that_call_the_subclass_back_stay_correct():
    for fn, args in [(reads_missing, lambda s: (fresh(2, seed=s), None)),
                     (updates, lambda s: (fresh(2, seed=s), []))]:
        traced = pyinterp.trace(fn, backend="eager")
        for seed in range(3):
            a_eager, a_traced = args(seed), args(seed)
            assert_same(traced(*a_traced), fn(*a_eager))
            assert a_traced[1] == a_eager[1]


def test_update_of_a_subclass_with_a_python_setitem_is_a_break():
    explanation = pyinterp.explain(updates, fresh(2), [])
    assert explanation.graph_break_count >= 1
