"""What C code reads from containers is guarded; in-place updates of outside
containers are replayed on a hit (pyinterp/capture/consumers.py).

* Hand-written regressions: MagPy's two failing tests, and one test per
  family of native operation (concatenation, comparison, membership,
  consumers, formatting, torch ops) and of in-place update.
* ``test_generated_functions_*``: Hypothesis draws functions over lists,
  tuples, dicts and sets (flat and nested) that read and update their
  arguments natively, with a tensor op so there is a graph, then calls the
  traced function on a first input, on copies of it (which must hit the
  cache) and on other inputs; every call's result, exception and the
  arguments' state afterwards must be eager's.  Examples per family: a
  quarter of the profile's ``max_examples`` (``ci``: 50, ``slow``: 2,500;
  see ``tests/conftest.py``).
"""
import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trace_support import assert_same, run_both, traced_counting

torch = pytest.importorskip("torch")
import pyinterp  # noqa: E402


def traced(fn):
    return pyinterp.trace(fn, backend="eager")


def entries(t):
    return len(t._entries)


def native_entries(t):
    return sum(1 for e in t._entries if e.native)


# -- MagPy's two tests -----------------------------------------------------------------
def test_list_concatenation_guards_the_items_c_code_read():
    def f(a, b):
        return a + b

    t = traced(f)
    assert run_both(t, f, [1, 2.5], [2, 4]) == [1, 2.5, 2, 4]
    assert run_both(t, f, [10, 6], [8, 7]) == [10, 6, 8, 7]
    run_both(t, f, [1, 2.5], [2, 4])
    assert entries(t) == 2  # the first input still hits its own entry


def test_inplace_add_of_an_outside_list_is_replayed_on_a_hit():
    def f(a, b):
        a += b
        return a

    t = traced(f)
    for _ in range(3):
        a = [1]
        out = run_both(t, f, a, [2])
        assert out is a and a == [1, 2]
    assert entries(t) == 1 and native_entries(t) == 0  # hits, served by the mock


# -- reads by C code ---------------------------------------------------------------------
READS = {
    "concat_tuple": (lambda a, b: a + b, ((1, [2]), (3,)), ((1, [5]), (3,))),
    "repeat": (lambda a, b: a * 2, ([1], 0), ([2], 0)),
    "eq": (lambda a, b: a == b, ([1, [2]], [1, [2]]), ([1, [2]], [1, [3]])),
    "lt": (lambda a, b: a < b, ((1, [2]), (1, [3])), ((1, [4]), (1, [3]))),
    "in_nested": (lambda a, b: [1] in a, ([[1], 2], 0), ([[2], 2], 0)),
    "list_index": (lambda a, b: a.index(b), ([[1], [2]], [2]), ([[2], [1]], [2])),
    "list_count": (lambda a, b: a.count(b), ([[1], [2]], [1]), ([[1], [1]], [1])),
    "sorted_nested": (lambda a, b: sorted(a), ([[2], [1]], 0), ([[0], [1]], 0)),
    "sorted_pair": (lambda a, b: sorted([a, b]), ([2], [1]), ([0], [1])),
    "max_nested": (lambda a, b: max(a), ([[2], [1]], 0), ([[0], [1]], 0)),
    "sum_nested": (lambda a, b: sum(a, []), ([[1], [2]], 0), ([[3], [2]], 0)),
    "set_of_tuples": (lambda a, b: len(set(a)), ([(1,), (1,)], 0), ([(1,), (2,)], 0)),
    "dict_or": (lambda a, b: a | b, ({1: 2}, {2: 3}), ({1: 5}, {2: 3})),
    "set_union_method": (lambda a, b: a.union(b), ({1}, [2]), ({1}, [3])),
    "str": (lambda a, b: str(a), ([1, [2]], 0), ([1, [3]], 0)),
    "fstring": (lambda a, b: f"{a}", ({"k": [1]}, 0), ({"k": [2]}, 0)),
    "join": (lambda a, b: "-".join(a), (["x", "y"], 0), (["x", "z"], 0)),
    "deque": (lambda a, b: list(__import__("collections").deque(a)), ([1, 2], 0), ([3, 4], 0)),
    "torch_tensor": (lambda a, b: torch.tensor(a) + 1, ([1.0, 2.0], 0), ([3.0, 4.0], 0)),
    "torch_tensor_nested": (lambda a, b: torch.tensor([a, b]) + 1,
                            ([1.0, 2.0], [0.0, 0.0]), ([3.0, 4.0], [0.0, 0.0])),
    "view_shape_list": (lambda a, b: b.view(a) * 2, ([2, 1], torch.ones(2)),
                        ([1, 2], torch.ones(2))),
    "extend_then_read": (lambda a, b: (a.extend(b), a[-1])[1], ([], [5]), ([], [6])),
    "local_extend": (lambda a, b: (lambda r: (r.extend(a), r)[1])([]), ([1], 0), ([2], 0)),
}


@pytest.mark.parametrize("name", sorted(READS))
def test_what_c_code_reads_is_guarded(name):
    fn, first, second = READS[name]
    t = traced(fn)
    run_both(t, fn, *copy.deepcopy(first))
    run_both(t, fn, *copy.deepcopy(second))
    run_both(t, fn, *copy.deepcopy(first))
    assert entries(t) <= 2


def test_an_outside_object_compared_by_identity_to_another_is_a_break():
    class Box:
        pass

    def f(a, b):
        return a == b, [a] == [b]

    p, q = Box(), Box()
    t = traced(f)
    run_both(t, f, p, q)
    assert f(p, p) == t(p, p) == (True, True)
    assert f(p, q) == t(p, q) == (False, False)


def test_comparing_with_none_keeps_the_hit():
    class Box:
        pass

    def f(a, x):
        return x * 3 if a == None else x + 1  # noqa: E711

    t, counter = traced_counting(f)
    x = torch.ones(2)
    for _ in range(3):
        assert torch.equal(t(Box(), x), x + 1)
    assert counter.count == 1 and counter.runs == 2


# -- in-place updates of outside containers ------------------------------------------------
def _iadd_op(a, b):
    a += b
    return a


def _nested_iadd(d, b):
    d["v"] += b
    return d


def _set_ops(a, b):
    a |= b
    a -= {3}
    a ^= {9}
    a &= {1, 2, 9, 7}
    return a


WRITES = {
    "iadd_op": (_iadd_op, ([1], [2])),
    "imul": (lambda a, b: a.__imul__(2), ([3, 1], 0)),
    "extend": (lambda a, b: a.extend(b), ([1], [2])),
    "extend_run_list": (lambda a, b: a.extend([b, b]), ([1], 2)),
    "insert": (lambda a, b: a.insert(0, b), ([1], 2)),
    "sort": (lambda a, b: a.sort(reverse=b), ([3, 1, 2], True)),
    "reverse": (lambda a, b: a.reverse(), ([3, 1], 0)),
    "remove": (lambda a, b: a.remove(b), ([3, 1], 1)),
    "pop": (lambda a, b: a.pop(b), ([3, 1], 0)),
    "clear": (lambda a, b: a.clear(), ([3, 1], 0)),
    "slice_store": (lambda a, b: a.__setitem__(slice(0, 1), b), ([1, 2], [5, 6])),
    "dict_update": (lambda a, b: a.update(b), ({1: 2}, {3: 4})),
    "dict_ior": (lambda a, b: a.__ior__(b), ({1: 2}, {3: 4})),
    "setdefault": (lambda a, b: a.setdefault("k", b), ({}, [1])),
    "dict_pop": (lambda a, b: a.pop("k", b), ({"k": 2}, 1)),
    "popitem": (lambda a, b: a.popitem(), ({"k": 2, "j": 3}, 1)),
    "set_add": (lambda a, b: a.add(b), ({1}, 2)),
    "set_discard": (lambda a, b: a.discard(b), ({1, 2}, 2)),
    "set_operators": (_set_ops, ({1, 3}, {2, 7})),
    "nested_append": (lambda a, b: a["x"].append(b), ({"x": [1]}, 2)),
    "nested_iadd": (_nested_iadd, ({"v": [1]}, [2])),
    "nested_in_tuple": (lambda a, b: a[0].extend(b), (([1],), [2])),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_inplace_updates_are_replayed_on_hits(name):
    fn, args = WRITES[name]
    t = traced(fn)
    for _ in range(3):
        run_both(t, fn, *copy.deepcopy(args))
    assert entries(t) == 1 and native_entries(t) == 0, "later calls must hit the mock"


def test_an_appended_log_stays_a_hit():
    def f(x, log):
        log.append(x.sum())
        log += [x.mean()]
        log.extend([x.max()])
        return x * 2

    t, counter = traced_counting(f)
    log = []
    for i in range(4):
        t(torch.ones(2) * i, log)
    assert counter.count == 1 and len(log) == 12
    assert [float(v) for v in log[-3:]] == [6.0, 3.0, 3.0]


def test_an_operand_made_by_the_run_is_replayed_as_it_was():
    def f(a):
        b = [1]
        a += b
        b.append(2)
        return b

    t = traced(f)
    for _ in range(3):
        run_both(t, f, [0])
    assert entries(t) == 1


# -- generated functions -------------------------------------------------------------------
EXAMPLES = max(10, settings().max_examples // 4)
SMALL = st.one_of(st.integers(0, 3), st.sampled_from([2.5, True]))  # 1 == True == 1.0
KEYS = st.sampled_from(["p", "q", "r"])
FAMILIES = {
    "list_int": st.lists(SMALL, max_size=3),
    "list_nested": st.lists(st.lists(SMALL, max_size=2), max_size=3),
    "tuple_int": st.lists(SMALL, max_size=3).map(tuple),
    "tuple_nested": st.lists(st.lists(SMALL, max_size=2), max_size=3).map(tuple),
    "dict_int": st.dictionaries(KEYS, SMALL, max_size=3),
    "dict_nested": st.dictionaries(KEYS, st.lists(SMALL, max_size=2), max_size=3),
    "set_int": st.sets(SMALL, max_size=3),
}
_ALL = [
    "r = len(a) + len(b)", "r = a == b", "r = a != b", "r = list(a)", "r = tuple(a)",
    "r = sorted(a)", "r = str(a)", "r = f'{a}-{b!r}'", "r = [*a, *b]", "r = list(zip(a, b))",
    "r = list(enumerate(a))", "r = any(a)", "r = all(b)", "r = min(a) if a else None",
    "r = max(b) if b else None", "r = [v for v in a]", "r = (lambda *v: v)(*a)",
    "r = next(iter(b)) in a if b else None", "r = bool(a) and not b",
    "r = sorted(a) == sorted(b)", "r = ','.join(map(str, a))",
]
_SEQ = [
    "r = a + b", "r = a * 2", "r = a[1:]", "r = a[0] if a else None", "r = a < b",
    "r = a.count(b[0]) if b else 0", "r = a.index(b[0]) if b and b[0] in a else -1",
    "r = tuple(reversed(a))", "p, *q = a if a else [0]; r = (p, q)",
]
_LIST = [
    "a += b", "a *= 2", "a.extend(b)", "a.append(len(b))", "a.insert(0, b[0] if b else 7)",
    "a.sort()", "a.reverse()", "if a: a.remove(a[-1])", "r = a.pop() if a else None",
    "a.clear()", "if a: a[0] = b[0] if b else 9", "if a: del a[0]", "a[:1] = b",
    "a.extend(list(b))",
]
_INTS = ["r = sum(a)", "r = x * sum(a)", "r = torch.tensor(list(a) + [0.5]) * 2",
         "r = set(a) | set(b)", "r = {*a}", "r = x * (1 in a)",
         "r = x.new_tensor(list(b) + [0]) + x.sum()", "r = x[int(a[0])] if a else None"]
_NESTED = ["r = sum(a, [])", "r = [len(v) for v in a]", "r = sorted(map(tuple, a))",
           "r = [1] in a", "r = torch.tensor([len(v) for v in a] + [0]) + x.sum()"]
_NESTED_WRITES = ["if a: a[0].append(5)", "if a and b: a[0].extend(b[0])",
                  "if a: a[0].sort()", "if a: a[0] += [len(b)]"]
_DICT = [
    "r = a | b", "r = list(a.items())", "r = sorted(a.values())", "r = a.get('p', -1)",
    "r = 'p' in a", "r = dict(a)", "r = {**a, **b}", "r = list(a.keys())", "r = sorted(a)",
]
_DICT_WRITES = [
    "a.update(b)", "a |= b", "r = a.setdefault('q', len(b))", "r = a.pop('p', None)",
    "r = a.popitem() if a else None", "a['r'] = len(b)", "a.clear()",
    "if 'p' in a: del a['p']",
]
_DICT_INT = ["r = sum(a.values())", "r = x * sum(a.values())"]
_DICT_NESTED = ["r = sum(a.values(), [])", "r = [v for v in a.values() if v]"]
_DICT_NESTED_WRITES = ["if 'p' in a: a['p'].append(1)",
                       "if 'p' in a and 'p' in b: a['p'] += b['p']",
                       "if 'q' in a: a['q'].extend(b.get('q', []))"]
_SET = [
    "r = a | b", "r = a & b", "r = a - b", "r = a ^ b", "r = a <= b", "r = a.union(b)",
    "r = a.isdisjoint(b)", "r = sorted(a | b)", "r = 1 in a", "r = sum(a)",
    "r = torch.tensor(sorted(a) + [0]) * 2",
]
_SET_WRITES = ["a.add(len(b))", "a.discard(1)", "a |= b", "a -= b", "a &= b | {0}", "a ^= b",
               "a.update(b)", "if a: a.remove(min(a))", "a.clear()", "a.difference_update(b)"]
LINES = {
    "list_int": _ALL + _SEQ + _LIST + _INTS,
    "list_nested": _ALL + _SEQ + _LIST + _NESTED + _NESTED_WRITES,
    "tuple_int": _ALL + _SEQ + _INTS,
    "tuple_nested": _ALL + _SEQ + _NESTED + _NESTED_WRITES,
    "dict_int": _ALL + _DICT + _DICT_WRITES + _DICT_INT,
    "dict_nested": _ALL + _DICT + _DICT_WRITES + _DICT_NESTED + _DICT_NESTED_WRITES,
    "set_int": _ALL + _SET + _SET_WRITES + _INTS[:3],
}


def make_function(lines):
    """``f(a, b, x)`` running ``lines`` (each may set ``r``), keeping every
    ``r`` and ending with a tensor op, so that the trace has a graph."""
    body = ["    out = []"]
    for line in lines:
        body += ["    r = None", "    " + line, "    out.append(r)"]
    body += ["    out.append(x * (len(a) + 1))", "    return out"]
    source = "def f(a, b, x):\n" + "\n".join(body) + "\n"
    namespace = {"torch": torch}
    exec(compile(source, "<generated containers>", "exec"), namespace)
    return namespace["f"], source


def outcome(fn, args):
    """(result, None) or (None, exception), and the arguments afterwards."""
    try:
        return fn(*args), None, args
    except Exception as e:  # noqa: BLE001 - compared with eager's
        return None, e, args


def check_call(t, f, source, args):
    expected, e_exc, e_args = outcome(f, copy.deepcopy(args))
    actual, a_exc, a_args = outcome(t, copy.deepcopy(args))
    where = "\n%s\nargs=%r" % (source, args)
    if e_exc is not None or a_exc is not None:
        assert type(a_exc) is type(e_exc) and str(a_exc) == str(e_exc), (a_exc, e_exc, where)
    else:
        try:
            assert_same(actual, expected)
        except AssertionError as e:
            raise AssertionError(str(e) + where) from None
    try:
        assert_same(list(a_args[:2]), list(e_args[:2]), "args")
    except AssertionError as e:
        raise AssertionError(str(e) + where) from None
    return e_exc is None


def generated(family):
    values = FAMILIES[family]
    return st.tuples(st.lists(st.sampled_from(LINES[family]), min_size=1, max_size=4),
                     values, values, st.lists(st.tuples(values, values), min_size=1,
                                              max_size=3))


def run_generated(lines, first, others):
    f, source = make_function(lines)
    t = traced(f)
    x = torch.arange(3.0)
    # (check_call copies the arguments: a copy of a set may iterate in
    # another order than the set, so every call gets a copy of the same one)
    first_ok = check_call(t, f, source, (first[0], first[1], x))
    for a, b in others:
        before = entries(t)
        check_call(t, f, source, (first[0], first[1], x))
        if first_ok:
            assert entries(t) == before, "a copy of the first input must hit%s" % source
        check_call(t, f, source, (a, b, x))


def _family_test(family):
    @settings(max_examples=EXAMPLES)
    @given(generated(family))
    def test(drawn):
        lines, a, b, others = drawn
        run_generated(lines, (a, b), others)

    test.__name__ = "test_generated_functions_" + family
    return test


for _family in FAMILIES:
    globals()["test_generated_functions_" + _family] = _family_test(_family)
del _family
