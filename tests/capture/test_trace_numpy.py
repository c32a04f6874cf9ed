"""The NumPy round trip (``t.numpy()`` -> NumPy -> ``torch.from_numpy``)
stays in the graph: each NumPy step is mirrored by ``torch._numpy``
(``pyinterp/capture/values/arrays.py``).  Every test compares with eager on
the same inputs: results (NumPy arrays and scalars too: same type, dtype and
values), the inputs after the call, gradients; and what still breaks
breaks with kind ``numpy-call`` and stays right."""
import warnings

import pytest

from trace_support import (CountingBackend, assert_same, fresh, line_of, run_both,
                           traced_counting)

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

import pyinterp  # noqa: E402


def explained(fn, *args):
    return pyinterp.explain(fn, *args)


def whole(fn, *args):
    """``fn`` is one graph without a break, and fullgraph runs it."""
    explanation = explained(fn, *args)
    assert explanation.graph_break_count == 0, str(explanation)
    pyinterp.trace(fn, fullgraph=True, backend=CountingBackend())(*args)


def same_numpy(actual, expected):
    """Same Python type, NumPy dtype, shape and values (NaNs equal; floats
    within float32's tolerance: the graph may sum in another order, as
    Inductor does)."""
    assert type(actual) is type(expected), (type(actual), type(expected))
    assert np.asarray(actual).dtype == np.asarray(expected).dtype
    assert np.shape(actual) == np.shape(expected)
    got, want = torch.from_numpy(np.array(actual)), torch.from_numpy(np.array(expected))
    # (float32 at least: a float64 result may come from float32 steps whose
    # transcendental functions differ in the last bit between NumPy and torch)
    loose = {} if want.dtype == torch.float16 else {"rtol": 1.3e-6, "atol": 1e-5}
    torch.testing.assert_close(got, want, equal_nan=True, **loose)


def the_break(fn, *args):
    explanation = explained(fn, *args)
    assert explanation.graph_break_count == 1, str(explanation)
    return explanation.break_reasons[0]


torch.manual_seed(0)
FC = torch.nn.Linear(4, 4)


# -- the round trip, whole -----------------------------------------------------------
def clip_round_trip(x):
    h = FC(x)
    clipped = np.clip(h.detach().numpy(), -0.5, 0.5) * 2
    return h + torch.from_numpy(clipped)


def quantile_threshold(x):
    h = FC(x)
    q = float(np.quantile(h.detach().numpy(), 0.9))
    return h * (h > q)


def operators_and_methods(x):
    a = x.numpy()
    b = (a * 2 - 1).T
    mask = a > 0.1
    picked = np.where(mask, a, 0.0)
    total = b.sum(axis=0).astype(np.float64)
    return torch.from_numpy(total), torch.tensor(picked), torch.as_tensor(b[1:, ::2]), \
        a.mean(), np.maximum(a, 0).reshape(-1)[:3]


def unary_and_constants(x):
    a = x.numpy()
    mask = ~(a > 0)  # UNARY_INVERT
    weights = np.where(mask, 1.0, 0.1)  # (float64, as NumPy's)
    scaled = -a * np.float32(0.5) + np.linspace(0, 1, 4) + np.array([1, 2, 3, 4])
    return torch.from_numpy(weights), torch.from_numpy(scaled)


def percentile_clamp(x):
    bound = float(np.percentile(np.abs(x.numpy()), 90))
    return torch.clamp(x, -bound, bound)


@pytest.mark.parametrize("fn", [clip_round_trip, quantile_threshold, operators_and_methods,
                                unary_and_constants, percentile_clamp],
                         ids=lambda f: f.__name__)
def test_round_trip_is_one_graph_and_matches_eager(fn):
    whole(fn, fresh(3, 4))
    traced, counter = traced_counting(fn)
    for seed in range(4):
        x = fresh(3, 4, seed=seed)
        with torch.no_grad():
            got, want = traced(x), fn(x.clone())
        if isinstance(want, tuple):
            for g, w in zip(got, want):
                if isinstance(w, torch.Tensor):
                    assert_same(g, w)
                else:
                    same_numpy(g, w)
        else:
            assert_same(got, want)
    assert counter.count == 1 and counter.runs == 3  # (the first call is the capture)


def test_round_trip_with_inductor_matches_eager():
    traced = pyinterp.trace(clip_round_trip, fullgraph=True)
    for seed in range(2):
        x = fresh(3, 4, seed=seed)
        torch.testing.assert_close(traced(x), clip_round_trip(x))


def test_gradients_flow_through_the_torch_side():
    traced = pyinterp.trace(clip_round_trip, fullgraph=True, backend="aot_eager")
    x = fresh(3, 4, seed=3)
    FC.zero_grad()
    traced(x).square().sum().backward()
    got = [p.grad.clone() for p in FC.parameters()]
    FC.zero_grad()
    clip_round_trip(x).square().sum().backward()
    for g, p in zip(got, FC.parameters()):
        torch.testing.assert_close(g, p.grad)


def numpy_scalar_item(x):
    s = np.abs(x.numpy()).max()
    return x / s.item(), s


def test_numpy_scalar_item_is_a_tracked_float():
    whole(numpy_scalar_item, fresh(3))
    traced = pyinterp.trace(numpy_scalar_item, backend="eager")
    for seed in range(3):
        x = fresh(3, seed=seed)
        got, want = traced(x), numpy_scalar_item(x.clone())
        assert_same(got[0], want[0])
        same_numpy(got[1], want[1])


def metadata_reads(x):
    a = x.numpy()
    rows = len(a) + a.shape[1] + a.ndim + np.ndim(a)
    assert isinstance(a, np.ndarray) and a.dtype == np.float32
    return torch.from_numpy(a.reshape(a.size)) * rows


def test_metadata_reads_are_plain_values_in_one_graph():
    whole(metadata_reads, fresh(3, 4))
    traced = pyinterp.trace(metadata_reads, backend="eager")
    for shape in ((3, 4), (3, 4), (2, 5)):
        run_both(traced, metadata_reads, fresh(*shape))


def decides_on_values(x):
    a = x.numpy() * 2
    if np.allclose(a, 0.0):  # BREAK (a Python bool of the data)
        return x * 0
    return x + float(np.all(a > -10))


def truth_of_a_numpy_bool(x):
    a = x.numpy()
    if np.all(a > 0):  # BREAK (the truth of a NumPy bool of the data)
        return x * 2
    return x - 1


@pytest.mark.parametrize("fn", [decides_on_values, truth_of_a_numpy_bool],
                         ids=lambda f: f.__name__)
def test_python_decisions_on_numpy_data_break_and_follow_the_data(fn):
    record = explained(fn, fresh(3)).break_reasons[0]
    # (np.allclose's mirror calls torch.allclose, itself a data-dependent value)
    assert record.kind in ("numpy-call", "data-dependent-value"), record
    assert record.lineno == line_of(fn, "# BREAK"), record
    traced = pyinterp.trace(fn, backend="eager")
    for x in (torch.zeros(3), torch.ones(3), torch.zeros(3), -torch.ones(3), torch.ones(3)):
        run_both(traced, fn, x)


# -- memory shared as in eager ---------------------------------------------------------
def write_through_from_numpy(x):
    a = x.numpy()
    t = torch.from_numpy(a)
    t.add_(1)  # writes x too, through the shared memory
    return a.sum(), x * 2


def view_then_torch_write(x):
    a = x.numpy()
    b = a.T  # a view
    c = a.copy()  # a copy
    torch.from_numpy(b).mul_(2)
    return torch.from_numpy(c), torch.from_numpy(a) + 0


@pytest.mark.parametrize("fn", [write_through_from_numpy, view_then_torch_write],
                         ids=lambda f: f.__name__)
def test_shared_memory_writes_match_eager(fn):
    traced = pyinterp.trace(fn, backend="eager")
    for seed in range(3):
        x = fresh(2, 3, seed=seed)
        x_eager = x.clone()
        got, want = traced(x), fn(x_eager)
        assert_same(x, x_eager)  # the input was written the same way
        for g, w in zip(got, want):
            if isinstance(w, torch.Tensor):
                assert_same(g, w)
            else:
                same_numpy(g, w)


# -- a live array at a graph break -----------------------------------------------------
@torch.compiler.disable
def opaque_scale(t):
    return t * 3


def array_live_across_a_break(x):
    a = np.tanh(x.numpy()) * 2
    y = opaque_scale(x)  # a break: a is handed over as an array
    return torch.from_numpy(a) + y, a


def test_array_live_across_a_break_is_rebuilt():
    # (the resume function gets the array as an argument, a graph input;
    # explain's next graph has it as a value of the run, a second break)
    record = explained(array_live_across_a_break, fresh(3)).break_reasons[0]
    assert record.kind == "compiler-disable"
    traced, counter = traced_counting(array_live_across_a_break)
    for seed in range(4):
        x = fresh(3, seed=seed)
        got, want = traced(x), array_live_across_a_break(x.clone())
        assert_same(got[0], want[0])
        same_numpy(got[1], want[1])
    assert counter.runs >= 3  # the first part ran as a graph on every hit (calls 2-4)


# -- what still breaks, and stays right -----------------------------------------------
def item_store(x):
    a = np.exp(x.numpy())
    a[0] = 0.0  # BREAK
    return torch.from_numpy(a)


def ufunc_out(x):
    a = x.numpy() * 1
    np.add(a, 1, out=a)  # BREAK
    return torch.from_numpy(a)


def sort_in_place(x):
    a = x.numpy().copy()
    a.sort()  # BREAK
    return torch.from_numpy(a) + x


def array_in_a_torch_op(x):
    a = x.numpy() * 2
    return x.new_tensor(a)  # BREAK


def array_formatted(x):
    a = x.numpy() * 2
    return x, "%s" % (a,)  # BREAK


@pytest.mark.parametrize("fn", [item_store, ufunc_out, sort_in_place,
                                array_in_a_torch_op, array_formatted],
                         ids=lambda f: f.__name__)
def test_unmirrored_uses_break_on_their_line_and_stay_right(fn):
    # (the first break; after it, explain's next graph has no tracked
    # arrays, and from_numpy of one may be a second break)
    record = explained(fn, fresh(3)).break_reasons[0]
    assert record.kind == "numpy-call", record
    assert record.lineno == line_of(fn, "# BREAK")
    with pytest.raises(pyinterp.GraphBreakError):
        pyinterp.trace(fn, fullgraph=True, backend="eager")(fresh(3))
    traced = pyinterp.trace(fn, backend="eager")
    for seed in range(3):
        run_both(traced, fn, fresh(3, seed=seed))


def numpy_of_grad_tensor(x):
    return torch.from_numpy(FC(x).numpy())


def test_numpy_of_a_tensor_requiring_grad_raises_eagers_error():
    x = fresh(3, 4)
    with pytest.raises(RuntimeError) as native:
        numpy_of_grad_tensor(x)
    with pytest.raises(RuntimeError) as traced:
        pyinterp.trace(numpy_of_grad_tensor, backend="eager")(x)
    assert str(traced.value) == str(native.value)


def test_numpy_warning_breaks_and_is_eagers():
    def log_of(x):
        return torch.from_numpy(np.log(x.numpy()))  # RuntimeWarning on a negative

    x = torch.tensor([1.0, -1.0])
    traced = pyinterp.trace(log_of, backend="eager")
    with pytest.warns(RuntimeWarning):
        got = traced(x)
    assert_same(got, torch.tensor([0.0, float("nan")]))


# -- sizes ------------------------------------------------------------------------------
def test_dynamic_sizes_are_specialized_by_numpy_and_stay_right():
    traced, counter = traced_counting(clip_round_trip, dynamic=True)
    for rows in (2, 3, 5, 3):
        x = fresh(rows, 4)
        with torch.no_grad():
            assert_same(traced(x), clip_round_trip(x))
    text = str(pyinterp.explain(traced, fresh(3, 4)))
    assert "NumPy code reads its sizes as plain ints" in text, text


# -- one expression at a time ------------------------------------------------------------
# Each runs on ``a`` (a 3x4 float32 array from graph data) and ``b``; the
# first list is mirrored whole, the second breaks (a view NumPy makes and
# the mirror copies, a data-dependent size or Python value, a list result,
# a function with no mirror).  Every one must match eager on inputs with
# ties, zeros and signs.
MIRRORED = """np.sum(a)|np.sum(a, axis=0)|a.sum(axis=1, keepdims=True)|np.mean(a)|np.std(a)
np.var(a, axis=0)|np.median(a)|np.percentile(a, 30)|np.max(a)|np.min(a, axis=1)|np.argmax(a)
np.argmin(a, axis=0)|np.cumsum(a)|np.cumprod(a, axis=1)|np.clip(a, -1, 1)|np.abs(a)|np.exp(a)
np.log(np.abs(a) + 1)|np.sqrt(np.abs(a))|np.tanh(a)|np.floor(a)|np.round(a, 1)|np.sign(a)
np.power(a, 2)|a ** 3|a // 0.5|a % 0.7|-a|~(a > 0)|a == 0|np.logical_and(a > 0, a < 1)
np.where(a > 0, a, 0)|np.where(a > 0, 1.0, 0.1)|np.maximum(a, 0)|np.minimum(a, b)|a @ b.T
np.einsum('ij,kj->ik', a, b)|np.outer(a[0], b[0])|np.concatenate([a, b])|np.stack([a, b])
np.transpose(a)|a.T|a.reshape(4, 3)|a.ravel()|a.flatten()|np.expand_dims(a, 0)|a[:, 1]|a[1]
a[0, 0]|a[[0, 2]]|np.tile(a, 2)|np.repeat(a, 2)|np.sort(a, axis=0)|np.diff(a)|np.roll(a, 1)
np.triu(a)|np.trace(a)|a.astype(np.int64)|a.astype(bool)|np.any(a > 1)|a.all()|np.prod(a)
np.isclose(a, b)|np.average(a)|np.ptp(a)|np.searchsorted(np.sort(a[0]), 0.1)|np.pad(a, 1)
np.full_like(a, 2)|np.ones_like(a) + a|np.swapaxes(a, 0, 1)|np.kron(a, b)|np.inner(a, b)
np.take(a, [0, 5])|a.copy()|a.mean(axis=0) - a|a.std()|a.argmax()|a.clip(0, 1)|a.diagonal()
a.astype(np.float16)|np.float32(2) * a|a * np.float64(2)|np.linspace(0, 1, 4) * a
a + np.array([1, 2, 3, 4])|np.linspace(0, 1, 5) * a[0, 0]|a + 1j|np.mean(a) > 0
float(np.mean(a))|np.mean(a).item()""".replace("\n", "|").split("|")
BREAKING = """np.quantile(a, [0.1, 0.9])|np.flip(a, 0)|a[::-1]|a[a > 0]|np.argsort(a)|np.diag(a)
np.allclose(a, b)|np.array_equal(a, a)|np.split(a, 2, axis=1)|np.real(a + 1j)""".replace(
    "\n", "|").split("|")
_INPUTS = [fresh(3, 4, seed=0), fresh(3, 4, seed=1), torch.zeros(3, 4),
           torch.tensor([[1.0, 1, 2, 2], [0, 0, -1, -1], [3, 3, 3, 3]])]


def _expression(text):
    namespace = {"np": np, "torch": torch}
    exec("def f(x):\n    a = x.numpy() * 1\n    b = np.tanh(a) + 0.5\n    return %s\n" % text,
         namespace)
    return namespace["f"]


def _same_everywhere(traced, fn):
    for x in _INPUTS:
        expected = fn(x.clone())
        got = traced(x.clone())
        if isinstance(expected, list):
            assert type(got) is list and len(got) == len(expected)
            for g, w in zip(got, expected):
                same_numpy(g, w)
        elif isinstance(expected, (bool, float)):
            assert type(got) is type(expected) and got == pytest.approx(expected)
        else:
            same_numpy(got, expected)


@pytest.mark.parametrize("text", MIRRORED)
def test_mirrored_expression_is_one_graph_and_matches_eager(text):
    fn = _expression(text)
    assert explained(fn, _INPUTS[0]).graph_break_count == 0
    _same_everywhere(pyinterp.trace(fn, backend="eager"), fn)


@pytest.mark.parametrize("text", BREAKING)
def test_unmirrored_expression_breaks_and_matches_eager(text):
    fn = _expression(text)
    assert explained(fn, _INPUTS[0]).graph_break_count >= 1
    _same_everywhere(pyinterp.trace(fn, backend="eager"), fn)


# -- generated NumPy programs --------------------------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from trace_support import raises_same  # noqa: E402

# Steps on ``a`` (a 3x4 array); the mirrored ones keep the graph whole, the
# in-place ones break it, and a reversed view makes from_numpy raise eager's
# ValueError (negative strides): the traced function must match eager in
# each case.
_STEPS = [
    "a = np.clip(a, {lo}, {hi})",
    "a = a * {c} + 1",
    "a = {c} - a",
    "a = np.tanh(a)",
    "a = np.abs(a) ** 0.5",
    "a = np.where(a > {c}, a, {lo})",
    "a = np.maximum(a, {c})",
    "a = a.astype(np.float64)",
    "a = a.astype(np.float32) / 2",
    "a = (a.T * 2).T",
    "a = np.cumsum(a, axis={axis})",
    "a = a - a.mean(axis={axis}, keepdims=True)",
    "a = a + b",
    "a = np.concatenate([a[:, :2], a[:, 2:]], axis=1)",
    "x = x * float(a.max())",
    "a = a[::-1]",
    "a += 1",
    "a[0, 0] = {c}",
    "np.multiply(a, 2, out=a)",
    "b = a.copy()",
    "a = -a * np.float32(0.5)",
    "a = np.where(~(a > 0), a, 1.0)",
    "a = a + np.linspace(0, 1, 4)",
]
_ENDS = ["return x + torch.from_numpy(a)", "return x + torch.tensor(a), a",
         "return torch.as_tensor(a).sum(0), a.sum()"]
_CONSTANTS = st.sampled_from(["-1.0", "-0.25", "0.0", "0.5", "2"])


@st.composite
def _numpy_programs(draw):
    start = draw(st.sampled_from(["a = x.numpy()", "a = (x * 1).numpy()",
                                  "a = np.exp(x.numpy())"]))
    lines = [start, "b = a * 0.5"]
    for _ in range(draw(st.integers(1, 5))):
        lo, hi = sorted(draw(st.lists(_CONSTANTS, min_size=2, max_size=2)), key=float)
        lines.append(draw(st.sampled_from(_STEPS)).format(
            lo=lo, hi=hi, c=draw(_CONSTANTS), axis=draw(st.integers(0, 1))))
    lines.append(draw(st.sampled_from(_ENDS)))
    return "def f(x):\n" + "".join("    %s\n" % line for line in lines)


@settings(max_examples=max(5, settings().max_examples // 4))
@given(_numpy_programs(), st.lists(st.integers(0, 50), min_size=2, max_size=3))
def test_generated_numpy_programs_match_eager(source, seeds):
    namespace = {"torch": torch, "np": np}
    exec(compile(source, "<numpy-program>", "exec"), namespace)
    fn = namespace["f"]
    traced = pyinterp.trace(fn, backend="eager")
    for seed in seeds:
        x = fresh(3, 4, seed=seed)
        try:
            expected = fn(x.clone())
        except Exception:  # noqa: BLE001 - from_numpy of a reversed view: eager's error
            raises_same(traced, fn, x.clone())
            continue
        x_traced = x.clone()
        got = traced(x_traced)
        x_eager = x.clone()
        fn(x_eager)
        assert_same(x_traced, x_eager, "the input after the call")
        if not isinstance(expected, tuple):
            got, expected = (got,), (expected,)
        for g, w in zip(got, expected):
            if isinstance(w, torch.Tensor):
                assert_same(g, w, rtol=1e-5, atol=1e-6)
            else:
                same_numpy(g, w)


# -- memory shared across a split ------------------------------------------------------------
def views_live_across_a_split(x):
    h = x * 2
    a = h.numpy()
    b = a.T  # a view of h's memory
    c = x.numpy()  # the input's memory
    y = opaque_scale(x)  # a break: h, a, b, c handed over
    a[0, 0] = 100.0  # (natively, after the split) writes h and b
    c[1, 1] = -7.0  # writes the input
    return h, b, y


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_arrays_live_across_a_split_keep_their_memory(backend):
    traced = pyinterp.trace(views_live_across_a_split, backend=backend)
    for seed in range(3):
        x = fresh(2, 3, seed=seed)
        x_eager = x.clone()
        got, want = traced(x), views_live_across_a_split(x_eager)
        assert_same(got[0], want[0])
        same_numpy(got[1], want[1])
        assert_same(got[2], want[2])
        assert_same(x, x_eager)


# -- arrays from outside: graph inputs ---------------------------------------------------------
def array_argument(x, arr):
    w = np.clip(arr, 0, 1) * 2
    return x * torch.from_numpy(w) + torch.from_numpy(arr).sum() + float(arr.mean())


def writes_the_callers_array(x, arr):
    t = torch.from_numpy(arr)
    t.mul_(2)  # shares the caller's memory: the array is written, as in eager
    return x + t


def _array(seed, dtype=np.float32, shape=(3, 4)):
    return np.random.default_rng(seed).random(shape).astype(dtype)


@pytest.mark.parametrize("fn", [array_argument, writes_the_callers_array],
                         ids=lambda f: f.__name__)
def test_array_arguments_are_graph_inputs(fn):
    whole(fn, fresh(3, 4), _array(0))
    traced, counter = traced_counting(fn)
    for seed in range(4):
        arr, arr_eager = _array(seed), _array(seed)
        x = fresh(3, 4, seed=seed)
        assert_same(traced(x, arr), fn(x, arr_eager))
        np.testing.assert_array_equal(arr, arr_eager)  # the same writes
    assert counter.count == 1 and counter.runs == 3
    # another dtype, shape or layout misses the guard and is captured again
    for arr in (_array(5, np.float64), _array(6, shape=(1, 4)), _array(7, shape=(4, 3)).T):
        arr_eager = arr.copy()
        assert_same(traced(fresh(*arr.shape), arr), fn(fresh(*arr.shape), arr_eager))
        np.testing.assert_array_equal(arr, arr_eager)
    assert counter.count == 4


def test_arrays_torch_cannot_share_stay_breaks():
    read_only = _array(0)
    read_only.flags.writeable = False  # (from_numpy would warn on every call)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (eager's own warning)
        assert explained(array_argument, fresh(3, 4), read_only).graph_break_count >= 1
        traced = pyinterp.trace(array_argument, backend="eager")
        for seed in range(2):
            assert_same(traced(fresh(3, 4, seed=seed), read_only),
                        array_argument(fresh(3, 4, seed=seed), read_only))
    reversed_rows = _array(1)[::-1]  # (from_numpy refuses negative strides: eager's error)
    traced = pyinterp.trace(array_argument, backend="eager")
    for _ in range(2):
        raises_same(traced, array_argument, fresh(3, 4), reversed_rows)


# -- in-place operators ----------------------------------------------------------------------------
def centered_in_place(x):
    h = torch.tanh(x * 2)
    a = h.numpy()  # shares h's memory: a -= ... writes h too, as in eager
    a -= a.mean(axis=0)
    a *= 2
    b = np.exp(a)  # NumPy's own memory, mirrored by a tensor of its own
    b /= b.max()
    return h, torch.from_numpy(b), a


def in_place_on_the_callers_array(x, arr):
    arr -= 1
    arr *= np.float32(0.5)
    return x + torch.from_numpy(arr)


def in_place_numpy_refuses(x):
    a = (x * 3).numpy().astype(np.int64)
    a -= 0.5  # BREAK (NumPy's same_kind rule: UFuncTypeError, eager's)
    return torch.from_numpy(a)


def test_in_place_operators_are_in_the_graph():
    whole(centered_in_place, fresh(3, 4))
    whole(in_place_on_the_callers_array, fresh(3, 4), _array(0))
    traced, counter = traced_counting(centered_in_place)
    traced_arg = pyinterp.trace(in_place_on_the_callers_array, backend="aot_eager")
    for seed in range(4):
        x = fresh(3, 4, seed=seed)
        got, want = traced(x), centered_in_place(x.clone())
        assert_same(got[0], want[0])
        assert_same(got[1], want[1])
        same_numpy(got[2], want[2])
        arr, arr_eager = _array(seed), _array(seed)
        assert_same(traced_arg(x, arr), in_place_on_the_callers_array(x, arr_eager))
        np.testing.assert_array_equal(arr, arr_eager)
    assert counter.count == 1


def test_in_place_operator_numpy_refuses_raises_eagers_error():
    with pytest.raises(pyinterp.GraphBreakError) as info:
        pyinterp.trace(in_place_numpy_refuses, fullgraph=True, backend="eager")(fresh(3))
    assert info.value.kind == "numpy-call"
    assert info.value.lineno == line_of(in_place_numpy_refuses, "# BREAK")
    traced = pyinterp.trace(in_place_numpy_refuses, backend="eager")
    for seed in range(2):
        raises_same(traced, in_place_numpy_refuses, fresh(3, seed=seed))


# -- writes into arrays from outside, replayed after the graph ------------------------------
def write_then_read_through_a_tensor(x, arr, t):
    arr[0] = 5.0  # replayed after the graph: t (the same memory) must not be read by it
    return x + t


def read_then_write_then_read(x, arr):
    a = x.numpy()  # (an array of the graph: the split below hands it over)
    y = opaque_scale(x)
    arr[1] = -2.0  # a write into the caller's array (the resume function's argument)
    return y + torch.from_numpy(arr) + torch.from_numpy(a)


def test_writes_into_outside_arrays_keep_program_order():
    traced = pyinterp.trace(write_then_read_through_a_tensor, backend="eager")
    traced_split = pyinterp.trace(read_then_write_then_read, backend="eager")
    for seed in range(3):
        arr, arr_eager = np.zeros(3, np.float32), np.zeros(3, np.float32)
        x = fresh(3, seed=seed)
        assert_same(traced(x, arr, torch.from_numpy(arr)),
                    write_then_read_through_a_tensor(x, arr_eager, torch.from_numpy(arr_eager)))
        np.testing.assert_array_equal(arr, arr_eager)
        arr, arr_eager = np.zeros(3, np.float32), np.zeros(3, np.float32)
        assert_same(traced_split(x, arr), read_then_write_then_read(x, arr_eager))
        np.testing.assert_array_equal(arr, arr_eager)


def mixes_an_argument_array(x, weights):
    a = np.tanh(x.numpy())
    return torch.from_numpy(np.where(a > 0, 1.0, 0.5).astype(np.float32) * weights)


def test_array_argument_as_an_operand_of_a_tracked_array():
    weights = np.linspace(0.5, 1.5, 4).astype(np.float32)
    whole(mixes_an_argument_array, fresh(3, 4), weights)
    traced, counter = traced_counting(mixes_an_argument_array)
    for seed in range(3):
        x = fresh(3, 4, seed=seed)
        assert_same(traced(x, weights * seed), mixes_an_argument_array(x, weights * seed))
    assert counter.count == 1
