"""Values the graph computes that an interpreted frame hands to native code.

A size (``t.shape[0]`` under ``dynamic=True``), a data-dependent count
(``len(t[t > 0])``, ``.item()``) or a float from ``.item()`` returned by
a Python function is followed into its caller when an instruction there
receives it.  When pyinterp's own stand-in for a builtin receives it
instead (a ``sorted``/``max``/``min`` key, a ``__len__`` behind ``len()``
or a truth test, a generator's items summed by ``sum``), its value is used
natively: the capture guards a size there and breaks on a value from tensor
data (``values/receivers.py``).  Before, the order or count of the first
call was baked into the graph, a silent wrong result on a later call.
Python code that C code runs natively (a ``__index__`` behind ``list[i]``)
and that computes with tensors is a ``native-callback`` break
(``state._python_run_natively``): its ops were recorded, its int was not.

Each function runs traced and eagerly on inputs whose order or counts
change from call to call.
"""
import math

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

from trace_support import CountingBackend, assert_same  # noqa: E402


def positives(t):
    return len(t[t > 0])


def sorted_by_count(a, b):
    xs = sorted([a, b], key=positives)
    return xs[0] * 2 + xs[1]


def max_by_sum(a, b):
    return max([a, b], key=lambda t: t.sum().item()) * 2


def min_by_text(a, b):
    return min([a, b], key=lambda t: f"{t.sum().item():+.4f}") * 2


class Positives:
    def __init__(self, t):
        self.t = t

    def __len__(self):
        return len(self.t[self.t > 0])


def length_of_an_object(a, b):
    return a[:len(Positives(b))].sum()


def truth_of_an_object(a, b):
    if Positives(b):
        return a * 2
    return a - 1


class Position:
    def __init__(self, t):
        self.t = t

    def __index__(self):  # (C's list[i] calls it natively, not through the interpreter)
        return len(self.t[self.t > 0])


def index_of_an_object(a, b):
    return a * [1, 2, 3, 4, 5, 6, 7, 8, 9][Position(b)]


def sum_of_a_generator(a, b):
    return a * sum(len(t[t > 0]) for t in (a, b))


def fsum_of_floats(a, b):
    return a * math.fsum(t.sum().item() for t in (a, b))


NATIVE_USES = [sorted_by_count, max_by_sum, min_by_text, length_of_an_object,
               truth_of_an_object, index_of_an_object, sum_of_a_generator, fsum_of_floats]


def _inputs(seed):
    gen = torch.Generator().manual_seed(seed)
    a, b = torch.randn(8, generator=gen), torch.randn(8, generator=gen)
    if seed % 3 == 0:
        b = -b.abs()  # (no positives: the empty and the falsy case)
    return a, b


@pytest.mark.parametrize("fn", NATIVE_USES, ids=lambda fn: fn.__name__)
def test_a_value_from_tensor_data_used_natively_is_never_baked_in(fn):
    traced = pyinterp.trace(fn, backend="eager")
    outcomes = set()
    for seed in range(12):
        expected = fn(*_inputs(seed))
        assert_same(traced(*_inputs(seed)), expected)
        outcomes.add(expected.sum().item())
    assert len(outcomes) > 1
    kinds = {r.kind for r in pyinterp.explain(fn, *_inputs(0)).break_reasons}
    assert kinds <= {"data-dependent-value", "data-dependent-shape", "native-callback"}
    assert kinds


def test_a_traced_builtin_with_a_python_key():
    def key(t):
        return t.sum().item()

    traced = pyinterp.trace(sorted, backend="eager")
    for seed in range(8):
        a, b = _inputs(seed)
        got, expected = traced([a, b], key=key), sorted([a, b], key=key)
        assert [x is y for x, y in zip(got, expected)] == [True, True]


def by_length(a, b):
    xs = sorted([a, b], key=lambda t: t.shape[0])
    return xs[0].sum() * 2 + xs[1].sum()


def test_a_symbolic_size_used_as_a_sort_key_is_guarded():
    backend = CountingBackend()
    traced = pyinterp.trace(by_length, backend=backend, dynamic=True)
    for n in (3, 9, 4, 10, 5):
        a, b = torch.randn(n), torch.randn(6)
        assert_same(traced(a, b), by_length(a, b))
    explanation = pyinterp.explain(traced, torch.randn(3), torch.randn(6))
    assert explanation.graph_break_count == 0
    assert "RETURN_VALUE hands it to code that reads its value" in str(explanation)
    assert backend.compiles == 5  # (the key's value is guarded: one entry per length)


class Sized:
    def __init__(self, t):
        self.t = t

    @property
    def rows(self):
        return self.t.shape[0]

    def __add__(self, other):
        return self.t.shape[0] + other


def sizes_through_python_code(x):
    for k in (n for n in (x.shape[0], x.shape[1])):
        x = x + k
    s = Sized(x)
    doubled = [n * 2 for n in x.shape]
    return x.reshape(s.rows * x.shape[1]), x.new_ones(doubled[0], doubled[1]) * (s + 1)


def test_sizes_an_instruction_receives_stay_symbolic():
    # a property, a Python __add__, a generator a for loop iterates, a list
    # comprehension: one graph for every shape
    backend = CountingBackend()
    traced = pyinterp.trace(sizes_through_python_code, backend=backend, dynamic=True)
    for shape in ((3, 4), (5, 2), (7, 6), (2, 9)):
        x = torch.randn(*shape)
        assert_same(traced(x), sizes_through_python_code(x))
    assert backend.compiles == 1


def _function_names(module_name):
    """The names of every function and method defined in a module's source."""
    import importlib
    import types

    module = importlib.import_module(module_name)
    with open(module.__file__, encoding="utf-8") as f:
        todo, names = [compile(f.read(), module.__file__, "exec")], set()
    while todo:
        code = todo.pop()
        names.add(code.co_name)
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return names


def test_every_step_the_receivers_know_exists():
    # receivers.py names the host functions that hand a value up; a rename
    # would only make it answer "no" (a guard or a break), never a wrong
    # result, but it would lose graphs silently: the names must exist
    from pyinterp.capture.values import receivers

    steps = receivers._HANDS_UP | receivers._GENERATOR_STEPS | receivers._FOR_ITER \
        | {receivers._ENTRY, (receivers._VM, "loop"), (receivers._VM, "resume")}
    missing = [(m, n) for m, n in sorted(steps) if n not in _function_names(m)]
    assert missing == []
