"""Smaller idioms of real code, differential against eager (issue 18 item 4).

Each idiom is either captured with no graph break (``explain`` counts none,
``fullgraph=True`` raises nothing) and gives eager's results, side effects
and outputs over several calls (a capture, then cache hits), or is a break
that says why.
"""
import random
import sys
import warnings

import pytest

from trace_support import (BENCHMARKS, CountingBackend, assert_hits_ran_graph, assert_same,
                           fresh, line_of, run_both, traced_counting)

torch = pytest.importorskip("torch")

import pyinterp  # noqa: E402


def no_breaks(fn, *args):
    """``fn`` is captured whole: explain counts no break, fullgraph runs."""
    assert pyinterp.explain(fn, *args).graph_break_count == 0, str(pyinterp.explain(fn, *args))
    pyinterp.trace(fn, fullgraph=True, backend=CountingBackend())(*args)


def one_graph_serves_every_call(fn, arguments, calls=3):
    """``fn`` on ``arguments(i)`` for each call ``i`` gives eager's results
    and side effects: one capture, and every later call a graph hit."""
    traced, counter = traced_counting(fn)
    for i in range(calls):
        run_both(traced, fn, *arguments(i))
    assert counter.count == 1
    assert_hits_ran_graph(counter, calls - 1)


def the_break(fn, *args):
    """The only break of ``fn``: its record (kind, message, line)."""
    explanation = pyinterp.explain(fn, *args)
    assert explanation.graph_break_count == 1, str(explanation)
    return explanation.break_reasons[0]


# -- t.data = v ----------------------------------------------------------------
def data_of_own_tensor(x):
    y = torch.zeros(3)
    y.data = x * 2
    return y + 1, y


def data_of_argument(w, x):
    w.data = x * 2
    return w + 1


class DataOfBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(3))

    def forward(self, x):
        self.total.data = self.total + x
        return self.total * 2


def test_data_of_own_tensor_is_the_new_value_on_every_call():
    traced, counter = traced_counting(data_of_own_tensor)
    for i in range(3):
        run_both(traced, data_of_own_tensor, fresh(3, seed=i))
    assert counter.count == 1
    assert_hits_ran_graph(counter, 2)
    no_breaks(data_of_own_tensor, fresh(3))


def test_data_of_argument_is_stored_into_the_callers_tensor():
    traced, counter = traced_counting(data_of_argument)
    for i in range(3):
        w = torch.zeros(3)
        run_both(traced, data_of_argument, w, fresh(3, seed=i))
        assert_same(w, fresh(3, seed=i) * 2)
    assert counter.count == 1
    no_breaks(data_of_argument, torch.zeros(3), fresh(3))


def test_data_of_buffer_accumulates_as_in_eager():
    module, eager = DataOfBuffer(), DataOfBuffer()
    traced, counter = traced_counting(module)
    for i in range(3):
        x = fresh(3, seed=i)
        assert_same(traced(x), eager(x))
        assert_same(module.total, eager.total)
    assert counter.count == 1
    no_breaks(DataOfBuffer(), fresh(3))


def data_of_parameter(m, x):
    m.weight.data = m.weight.data * 0.5
    return m(x)


def _train_both(fn, steps=3, backend="eager"):
    """Three optimizer steps of ``fn(m, x)`` traced and eager, from the same
    weights: losses, gradients and parameters equal."""
    torch.manual_seed(0)
    m, eager = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    eager.load_state_dict(m.state_dict())
    traced = pyinterp.trace(fn, backend=backend)
    opts = [torch.optim.SGD(net.parameters(), lr=0.3) for net in (m, eager)]
    for i in range(steps):
        x = fresh(2, seed=i)
        losses = [f(net, x).pow(2).sum() for f, net in ((traced, m), (fn, eager))]
        for opt, loss in zip(opts, losses):
            opt.zero_grad()
            loss.backward()
        assert_same(losses[0], losses[1])
        for (name, p), q in zip(m.named_parameters(), eager.parameters()):
            assert_same(p.grad, q.grad, path=name)
        for opt in opts:
            opt.step()
        assert_same(m, eager)
    return m


def weight_clipping(m, x):
    m.weight.data = m.weight.data.clamp(-0.2, 0.2)  # (WGAN's critic)
    return m(x)


@pytest.mark.parametrize("fn", [data_of_parameter, weight_clipping], ids=lambda f: f.__name__)
@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_data_of_a_parameter_is_one_graph_with_eagers_gradients(fn, backend):
    # Later uses read the new values and send their gradient to the
    # parameter itself (tensor_setters.Rebound); the mock stores the data.
    _train_both(fn, backend=backend)
    no_breaks(fn, torch.nn.Linear(2, 2), fresh(2))


def data_after_a_use(m, x):
    y = m(x)  # (saves the weight for backward: eager's backward would read the new data)
    m.weight.data = m.weight.data * 0.5  # the break
    return y + m(x)


def data_of_another_shape(m, x):
    m.weight.data = m.weight.data[:1]  # the break
    return x @ m.weight.t()


def write_after_data(m, x):
    new = m.weight.data * 0.5
    m.weight.data = new
    y = m(x)
    new.add_(1.0)  # the break (eager's weight shares this memory)
    return y + m(x)


@pytest.mark.parametrize("fn", [data_after_a_use, data_of_another_shape, write_after_data],
                         ids=lambda f: f.__name__)
def test_data_of_a_parameter_that_no_node_can_express_is_a_break(fn):
    torch.manual_seed(0)
    m, eager = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    eager.load_state_dict(m.state_dict())
    traced = pyinterp.trace(fn)
    for i in range(3):
        x = fresh(2, seed=i)
        assert_same(traced(m, x), fn(eager, x))
        assert_same(m, eager)
    record = the_break(fn, torch.nn.Linear(2, 2), fresh(2))
    assert record.kind == "tensor-attribute-write"
    assert record.lineno == line_of(fn, "# the break")


def requires_grad_of_own_tensor(x):
    y = torch.zeros(3)
    y.requires_grad = True
    return y * x


def real_of_own_tensor(x):
    y = torch.zeros(3, dtype=torch.complex64)
    y.real = x
    return y


@pytest.mark.parametrize("fn", [requires_grad_of_own_tensor, real_of_own_tensor])
def test_other_tensor_attribute_stores_are_breaks(fn):
    traced = pyinterp.trace(fn)
    for i in range(3):
        run_both(traced, fn, fresh(3, seed=i))
    assert the_break(fn, fresh(3)).kind == "tensor-attribute-write"


# -- NumPy on plain values ---------------------------------------------------------
np = pytest.importorskip("numpy")


def flatten_by_numpy(x):
    n = int(np.prod(x.shape))
    reps = np.tile([1, 2], 2)
    return x.reshape(n) * float(np.sum(reps)), int(np.sqrt(n))


def test_numpy_of_shapes_is_captured_and_follows_the_shape():
    traced, counter = traced_counting(flatten_by_numpy)
    for shape in [(2, 3), (2, 3), (4, 4), (4, 4), (2, 3)]:
        run_both(traced, flatten_by_numpy, fresh(*shape))
    assert counter.count == 2  # one graph per shape: the shape is guarded
    no_breaks(flatten_by_numpy, fresh(2, 3))


def numpy_of_a_tensor(x):
    return x + float(np.tile(x, 2).sum())


def numpy_with_a_warning(x):
    return x + float(np.mean([]))  # RuntimeWarning: Mean of empty slice


def numpy_save(x, path):
    np.save(path, [1, 2])
    return x + 1


def test_numpy_beyond_plain_values_still_breaks(tmp_path):
    assert pyinterp.explain(numpy_of_a_tensor, fresh(3)).graph_break_count >= 1
    record = the_break(numpy_with_a_warning, fresh(3))
    assert "RuntimeWarning" in record.message
    traced = pyinterp.trace(numpy_with_a_warning)
    for _ in range(2):
        with pytest.warns(RuntimeWarning):
            run_both(traced, numpy_with_a_warning, fresh(3))
    path = str(tmp_path / "saved.npy")
    assert the_break(numpy_save, fresh(3), path).kind == "native-callback"


# -- if torch.equal(a, b): ----------------------------------------------------------
def equal_branch(a, b):
    if torch.equal(a, b):
        return a + 1
    return a - 1


def equal_method_negated(a, b):
    y = a * 2
    if not y.equal(b):
        y = y - 1
    return y


def equal_branch_printing(a, b):
    if torch.equal(a, b):
        print("same")
    return a + 1


def equal_value(a, b):
    return torch.equal(a, b)


_EQUAL_PAIRS = [(torch.ones(3), torch.ones(3)), (torch.ones(3), torch.zeros(3)),
                (torch.ones(3), torch.ones(3) * 2), (torch.full((3,), float("nan")), torch.full((3,), float("nan"))),
                (torch.ones(3), torch.ones(3, dtype=torch.float64)),
                (torch.ones(3), torch.ones(4))]


@pytest.mark.parametrize("fn", [equal_branch, equal_method_negated])
def test_equal_in_a_branch_is_a_tensor_branch(fn):
    traced, counter = traced_counting(fn)
    for a, b in _EQUAL_PAIRS:
        run_both(traced, fn, a, b)
    assert counter.count == 3  # float32 pairs of one shape share a graph; float64; (3,) vs (4,)
    no_breaks(fn, torch.ones(3), torch.zeros(3))
    assert "eq" in str(pyinterp.explain(fn, torch.ones(3), torch.zeros(3)))


def test_equal_as_a_value_is_a_break_and_before_a_print_is_assumed(capsys):
    assert the_break(equal_value, torch.ones(3), torch.ones(3)).kind == "data-dependent-value"
    eager_out = []
    traced = pyinterp.trace(equal_branch_printing)
    for a, b in _EQUAL_PAIRS[:3]:
        equal_branch_printing(a, b)
        eager_out.append(capsys.readouterr().out)
        traced(a, b)
        assert capsys.readouterr().out == eager_out[-1]
    explanation = pyinterp.explain(equal_branch_printing, torch.ones(3), torch.ones(3))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert len(explanation.assumptions) == 1  # (the print stops the merge: one graph per path)


# -- random ints, drawn again by the mock ------------------------------------------
def add_random_bits(x):
    return x + random.getrandbits(8)


def scale_by_random_ints(x):
    a = random.randint(0, 10)
    b = random.randrange(5)
    return x * a + b + random.random()


def branch_on_random_int(x):
    if random.randint(0, 1) == 1:
        return x + 1
    return x - 1


def index_by_random_int(x):
    return x[random.randint(0, 2)]


def _same_stream(fn, x, calls=5):
    """Eager and traced calls from the same seed give the same values, and
    leave the random module in the same state."""
    traced = pyinterp.trace(fn)
    random.seed(7)
    eager = [fn(x) for _ in range(calls)]
    after_eager = random.random()
    random.seed(7)
    got = [traced(x) for _ in range(calls)]
    assert_same(got, eager)
    assert random.random() == after_eager


@pytest.mark.parametrize("fn", [add_random_bits, scale_by_random_ints, branch_on_random_int])
def test_random_ints_are_drawn_again_by_the_mock(fn):
    _same_stream(fn, torch.arange(3.0))
    _same_stream(fn, torch.arange(3))  # (an int64 tensor: the same promotion as eager)
    no_breaks(fn, torch.arange(3.0))
    traced, counter = traced_counting(fn)
    for _ in range(4):
        traced(torch.arange(3.0))
    assert counter.count == 1
    assert_hits_ran_graph(counter, 3)


def test_a_random_int_used_as_an_index_stays_a_break():
    _same_stream(index_by_random_int, torch.arange(3.0))
    assert pyinterp.explain(index_by_random_int, torch.arange(3.0)).graph_break_count == 1


# -- warnings.warn(..., stacklevel=n) -----------------------------------------------
def _warning_helper(x):
    warnings.warn("from the helper", stacklevel=2)
    return x * 2


def warns_through_a_helper(x):
    y = _warning_helper(x)  # the helper's warning names this line
    return y + 1


def warns_about_its_caller(x):
    warnings.warn("about the caller", stacklevel=2)
    return x + 1


def warns_two_levels_out(x):
    warnings.warn("two levels out", DeprecationWarning, stacklevel=3)
    return x + 1


def _call(fn, x):
    return fn(x)  # the caller of the traced function


def _warnings_of(fn, x, calls=3, action="always"):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter(action)
        results = [_call(fn, x) for _ in range(calls)]
    return results, [(str(w.message), w.category, w.filename, w.lineno) for w in seen
                     if not str(w.message).startswith("`torch.jit")]


@pytest.mark.parametrize("fn", [warns_through_a_helper, warns_about_its_caller,
                                warns_two_levels_out])
def test_stacklevel_warnings_name_eagers_file_and_line(fn):
    traced, counter = traced_counting(fn)
    for action in ("always", "default"):  # (default: once per location, by its registry)
        expected, eager_warnings = _warnings_of(fn, fresh(3), action=action)
        got, traced_warnings = _warnings_of(traced, fresh(3), action=action)
        assert_same(got, expected)
        assert traced_warnings == eager_warnings and eager_warnings
    assert counter.count == 1
    assert_hits_ran_graph(counter, 4)
    no_breaks(fn, fresh(3))


def test_stacklevel_lines():
    _, seen = _warnings_of(warns_through_a_helper, fresh(3), calls=1)
    assert seen[0][3] == line_of(warns_through_a_helper, "the helper's warning")
    _, seen = _warnings_of(warns_about_its_caller, fresh(3), calls=1)
    assert seen[0][3] == line_of(_call, "the caller of the traced")


# -- torch.result_type ---------------------------------------------------------------
def zeros_of_the_result_type(a, b):
    dtype = torch.result_type(a, b)
    return torch.zeros(a.shape, dtype=dtype) + a, dtype


def test_result_type_is_a_constant_of_the_guarded_dtypes():
    traced, counter = traced_counting(zeros_of_the_result_type)
    pairs = [(fresh(3), fresh(3, dtype=torch.float64)), (fresh(3, seed=1), fresh(3, seed=2).double()),
             (fresh(3).to(torch.int32), torch.ones(3, dtype=torch.int64)),
             (fresh(3), fresh(3, dtype=torch.float64))]
    for a, b in pairs:
        run_both(traced, zeros_of_the_result_type, a, b)
    assert counter.count == 2  # one graph per dtype pair
    no_breaks(zeros_of_the_result_type, fresh(3), fresh(3))


def tensors_from_numpy_constants(x):
    a = torch.tensor(np.tile([1.5, 2.0], 2))  # float64, as the array
    b = torch.tensor(np.arange(4, dtype=np.float32).reshape(2, 2).T)
    c = torch.tensor(np.prod(x.shape) * np.ones(2, dtype=np.int32))
    d = torch.tensor(np.sum([0.25, 0.5]), dtype=torch.float32)  # (a NumPy scalar: the usual rule)
    e = torch.tensor(np.repeat([True, False], 2))
    return x.reshape(-1)[:4] * a + b.sum(), c, e, d if isinstance(d, torch.Tensor) else d


def test_tensor_of_a_numpy_array_the_run_made_is_a_constant():
    traced, counter = traced_counting(tensors_from_numpy_constants)
    for seed in range(3):
        run_both(traced, tensors_from_numpy_constants, fresh(2, 3, seed=seed))
    assert counter.count == 1
    assert_hits_ran_graph(counter, 2)


def numpy_scalar_operands(x):
    flat = x.reshape(x.shape[0], int(np.prod(x.shape[1:])))
    return flat / np.prod(x.shape), x * np.float32(0.5) + np.int8(3), x.gt(np.bool_(False))


def test_numpy_scalars_are_graph_constants_of_their_own_type():
    # (NumPy scalars as op arguments: a node remakes each from its Python
    # value, so the op sees eager's type and the graph's code runs on hits)
    traced, counter = traced_counting(numpy_scalar_operands, dynamic=False)
    for seed in range(3):
        run_both(traced, numpy_scalar_operands, fresh(2, 3, seed=seed))
    assert counter.count == 1
    assert_hits_ran_graph(counter, 2)
    constants = [n.target for n in counter.graphs[0].graph.nodes
                 if n.op == "call_function" and getattr(n.target, "__module__", "") == "numpy"]
    assert {np.int64, np.float32, np.int8, np.bool_} <= set(constants)


_OUTSIDE_ARRAY = np.array([1.0, 2.0])


def tensor_of_an_outside_array(x):
    return x + torch.tensor(_OUTSIDE_ARRAY)


def test_tensor_of_an_outside_array_reads_its_values_on_every_call():
    # (the array is a graph input, torch.from_numpy of its path: its values
    # are read on every call, never a constant; values/arrays.py)
    assert pyinterp.explain(tensor_of_an_outside_array, fresh(2)).graph_break_count == 0
    traced, counter = traced_counting(tensor_of_an_outside_array)
    saved = _OUTSIDE_ARRAY.copy()
    try:
        for seed in range(3):
            _OUTSIDE_ARRAY[:] = saved * (seed + 1)
            run_both(traced, tensor_of_an_outside_array, fresh(2, seed=seed))
    finally:
        _OUTSIDE_ARRAY[:] = saved
    assert counter.count == 1


def add_random_int_up_to(x, n):
    return x + random.randint(0, n)


def test_random_int_arguments_are_guarded():
    traced = pyinterp.trace(add_random_int_up_to)
    for n in (1, 1000, 1000000, 1000, 2):
        random.seed(n)
        expected = add_random_int_up_to(torch.zeros(1), n)
        random.seed(n)
        assert_same(traced(torch.zeros(1), n), expected)


# -- model.device: next() of a generator over parameters ----------------------------
def test_next_of_a_generator_over_parameters_is_captured_whole():
    """``next()`` leaves ``parameters()``'s ``yield from`` chain suspended;
    closing it ran the interpreted generators through their C ``close``,
    which was taken for Python run natively (a break per read of
    ``.device``); ``named_modules``' ``module in memo`` on a set looked at
    ``nn.Sequential``'s Python ``__len__`` and ``__repr__``, which no hashed
    lookup calls (another break)."""
    sys.path.insert(0, BENCHMARKS)
    from real_world_cases import DIM, DeviceProperty  # (the benchmark's case)

    model = DeviceProperty()
    no_breaks(model, fresh(2, DIM))
    one_graph_serves_every_call(model, lambda i: (fresh(2, DIM, seed=i),))


def _inner(log):
    try:
        yield 1
        yield 2
    finally:
        log.append("inner closed")


def _outer(log):
    try:
        yield from _inner(log)
    finally:
        log.append("outer closed")


def first_of_a_delegating_generator(x, log):
    gen = _outer(log)
    first = next(gen)
    gen.close()
    log.append("after close")
    return x * first


def thrown_into_a_delegating_generator(x, log):
    gen = _outer(log)
    next(gen)
    try:
        gen.throw(KeyError("k"))
    except KeyError as e:
        log.append("caught %s" % e)
    return x + 1


@pytest.mark.parametrize("fn", [first_of_a_delegating_generator,
                                thrown_into_a_delegating_generator])
def test_close_and_throw_reach_the_delegated_generator_in_order(fn):
    """The ``finally`` blocks of the inner and outer generators run in
    eager's order, on the capture and replayed on hits, with no break."""
    no_breaks(fn, fresh(3), [])
    one_graph_serves_every_call(fn, lambda i: (fresh(3, seed=i), []))


def test_a_set_lookup_of_an_object_with_a_python_hash_is_still_a_break():
    """A hashed lookup calls only ``__hash__`` and ``__eq__``: an object
    whose ``__hash__`` is Python code run natively stays a break."""

    class Key:
        def __init__(self, n):
            self.n = n

        def __hash__(self):
            return hash(self.n)

        def __eq__(self, other):
            return isinstance(other, Key) and other.n == self.n

    def look(x, keys):
        return x + 1 if Key(1) in keys else x - 1

    reason = the_break(look, fresh(2), {Key(1)})
    assert reason.kind == "native-callback" and "Key" in reason.message


# -- dtype=int: a Python scalar type as a dtype --------------------------------------
def python_types_as_dtypes(x):
    count = torch.tensor(0, dtype=int)  # (transformers' StaticCache)
    flags = torch.zeros(2, dtype=bool)
    return x.to(float) + count, flags.to(int) + 1, torch.ones(2, dtype=complex)


def test_python_scalar_types_as_dtypes_are_captured():
    no_breaks(python_types_as_dtypes, fresh(2))
    one_graph_serves_every_call(python_types_as_dtypes, lambda i: (fresh(2, seed=i),))
