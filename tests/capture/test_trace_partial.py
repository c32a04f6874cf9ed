"""Graph breaks that keep the rest compiled (partial graphs + resume functions).

Each test runs the traced function and eager on fresh inputs several times
and compares results, printed output and side effects; nothing may run
twice.  Breaks at a call in the traced function's own frame, and breaks
inside a callee (split at the caller's call site, the callee then traced on
its own), produce graphs on hits; breaks inside a loop, a ``try`` or a
``with`` fall back to running that call without a graph, and stay correct,
with the functions and modules it calls still traced (``hybrid.py``).
"""
import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

from trace_support import assert_same, fresh  # noqa: E402

LOG = []


class Counting:
    """A backend that counts compiled graphs and graph runs."""

    def __init__(self):
        self.compiled = 0
        self.runs = 0

    def __call__(self, gm, example_inputs):
        self.compiled += 1

        def run(*args):
            self.runs += 1
            return gm.forward(*args)

        return run


def _x(seed, n=4):
    return torch.randn(n, generator=torch.Generator().manual_seed(seed))


def _check(fn, calls=4, **expect):
    backend = Counting()
    traced = pyinterp.trace(fn, backend=backend)
    for seed in range(calls):
        del LOG[:]
        expected = fn(_x(seed))
        eager_log = list(LOG)
        del LOG[:]
        actual = traced(_x(seed))
        assert LOG == eager_log, "side effects differ on call %d" % seed
        torch.testing.assert_close(actual, expected)
    return backend


def break_at_top(x):
    y = x * 2 + 1
    LOG.append("before")
    n = int(y.abs().argmax())  # BREAK: a Python int from tensor data
    LOG.append("after")
    return y[n] + y.sum()


def _helper_item(t):
    return t * round(t.abs().max().item(), 4)  # BREAK inside the callee


def break_in_callee(x):
    h = x + 1
    z = _helper_item(h)
    return z * 3


def break_in_loop(x):
    total = x * 0
    for i in range(3):
        total = total + x * round(float(x[i]), 4)  # BREAK inside a for loop
    return total


def break_in_try(x):
    try:
        s = round(x.sum().item(), 4)  # BREAK inside try
    except ValueError:
        s = 0.0
    return x * s


def break_in_with(x):
    with torch.no_grad():
        s = round(x.sum().item(), 4)  # BREAK inside with
    return x * s


def test_break_at_top_keeps_graphs_on_hits():
    backend = _check(break_at_top)
    assert backend.runs >= 3, "hits must run compiled graphs (before and after the break)"


def test_break_in_callee_keeps_graphs_on_hits():
    backend = _check(break_in_callee)
    assert backend.runs >= 3


@pytest.mark.parametrize("fn", [break_in_loop, break_in_try, break_in_with],
                         ids=lambda f: f.__name__)
def test_break_in_loop_try_with_stays_correct(fn):
    _check(fn)


def test_first_call_runs_once():
    """The capturing call returns the real result and runs each side effect once."""
    del LOG[:]
    traced = pyinterp.trace(break_at_top, backend="eager")
    traced(_x(0))
    assert LOG == ["before", "after"]


def test_resume_function_is_cached_and_reused():
    backend = Counting()
    traced = pyinterp.trace(break_in_callee, backend=backend)
    x = _x(1)
    for _ in range(4):
        torch.testing.assert_close(traced(x), break_in_callee(x))
    compiled = backend.compiled
    torch.testing.assert_close(traced(x), break_in_callee(x))
    assert backend.compiled == compiled, "same inputs: every part is a cache hit"


def test_two_traced_callables_of_one_function_keep_their_own_backends():
    """The resume function after a split belongs to its traced callable:
    a second ``trace`` of the same function (another model's ``generate``)
    compiles its own resume graphs with its own backend.  (A process-wide
    cache once handed the second the first one's wrapper: its graphs were
    compiled and counted by the first backend.)"""
    first, second = Counting(), Counting()
    traced_first = pyinterp.trace(break_in_callee, backend=first)
    traced_second = pyinterp.trace(break_in_callee, backend=second)
    x = _x(1)
    for _ in range(3):
        torch.testing.assert_close(traced_first(x), break_in_callee(x))
    runs_of_first = first.runs
    for _ in range(3):
        torch.testing.assert_close(traced_second(x), break_in_callee(x))
    assert first.runs == runs_of_first, "the second callable ran the first's graphs"
    assert second.compiled == first.compiled >= 2  # (before the split, and the resume function)
    assert second.runs == runs_of_first


def test_log_breaks_switch_logs_each_break_with_its_line(caplog):
    pyinterp.log_breaks(True)
    try:
        pyinterp.trace(break_in_try, backend="eager")(_x(0))  # (INFO: caplog's root handler)
    finally:
        pyinterp.log_breaks(False)
    messages = [r.getMessage() for r in caplog.records if r.name == "pyinterp.breaks"]
    assert len(messages) == 1
    assert "data-dependent-value" in messages[0] and "test_trace_partial.py" in messages[0]
    caplog.clear()
    pyinterp.trace(break_in_try, backend="eager")(_x(0))
    assert not [r for r in caplog.records if r.name == "pyinterp.breaks"]


# -- native entries with their callees still traced (pyinterp/capture/partial/hybrid.py) -------
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x).tanh() * 2


def scaled(t):
    return t * 3 - 1


class LoopNet(torch.nn.Module):
    """Breaks inside its loop (an int from tensor data): the loop runs
    without a graph, its blocks each through their own traced wrapper."""

    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block() for _ in range(3))

    def forward(self, x):
        for block in self.blocks:
            x = block(x) + x[0, int(x.abs().argmax())]
        LOG.append("done")
        return scaled(x)


class TryNet(LoopNet):
    def forward(self, x):
        try:
            k = int(x.abs().argmax())
        except ValueError:
            k = 0
        return scaled(self.blocks[0](x) + x[0, k])


class WithNet(LoopNet):
    def forward(self, x):
        with torch.no_grad():
            k = int(x.abs().argmax())
        return self.blocks[k % 3](x) + super().forward(x)  # super() in the interpreted frame


@pytest.mark.parametrize("cls", ["LoopNet", "TryNet", "WithNet", "DecoratingNet"])
def test_native_entry_still_traces_its_callees(cls):
    torch.manual_seed(0)
    net = globals()[cls]()
    backend = Counting()
    traced = pyinterp.trace(net, backend=backend)
    for seed in range(5):
        x = _x(seed).reshape(1, 4)
        del LOG[:]
        expected = net(x)
        eager_log = list(LOG)
        del LOG[:]
        torch.testing.assert_close(traced(x), expected)
        assert LOG == eager_log
    assert backend.compiled >= 2, "the blocks and scaled() got graphs of their own"
    assert backend.runs >= 4, "and later calls ran them"


class LongLoopNet(torch.nn.Module):
    """Its frame runs far more than 2,000 instructions (hybrid.MAX_FRAME_STEPS):
    natively, its calls diverted, the block still gets its graph."""

    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        total = 0
        for i in range(3000):
            total += i % 7
        for _ in range(3):
            x = self.block(x) + x[0, int(x.abs().argmax())]
        return scaled(x) + total


def test_native_entry_of_a_long_frame_still_traces_its_callees():
    torch.manual_seed(0)
    net = LongLoopNet()
    backend = Counting()
    traced = pyinterp.trace(net, backend=backend)
    for seed in range(4):
        x = _x(seed).reshape(1, 4)
        torch.testing.assert_close(traced(x), net(x))
    (entry,) = traced.cache_entries()
    assert entry.kind == "native"
    assert backend.compiled >= 2 and backend.runs >= 6


def add_ints(a, b):
    return a + b


class HelperLoopNet(LongLoopNet):
    """Calls a helper of Python ints in its loop: the helper's wrapper
    compiles nothing, so the native entry calls the helper itself."""

    def forward(self, x):
        total = 0
        for i in range(50):
            total = add_ints(total, i)
        for _ in range(2):
            x = self.block(x) + x[0, int(x.abs().argmax())]
        return x + total


def test_native_entry_calls_helpers_that_compile_nothing_directly():
    torch.manual_seed(0)
    net = HelperLoopNet()
    traced = pyinterp.trace(net, backend=Counting())
    x = _x(0).reshape(1, 4)
    for _ in range(3):
        torch.testing.assert_close(traced(x), net(x))
    wrapper, _ = traced._callees.route(add_ints)
    assert wrapper.compiles_nothing()
    entries = len(wrapper.cache_entries())
    for _ in range(2):
        torch.testing.assert_close(traced(x), net(x))
    assert len(wrapper.cache_entries()) == entries == 2, "not traced any more"
    block_wrapper, _ = traced._callees.route(net.block)
    assert not block_wrapper.compiles_nothing()


def logged(fn):
    def wrapper(*args):
        LOG.append(fn.__name__)
        return fn(*args)
    wrapper.inner = fn
    return wrapper


class DecoratingNet(LoopNet):
    """Decorates a function and calls ``super()`` in the frame a native
    entry runs: the decorator gets the function itself."""

    def forward(self, x):
        @logged
        def double(t):
            return t * 2

        k = int(x.abs().argmax())
        assert type(double.inner) is type(scaled)  # (a plain function, not a wrapper)
        return double(self.blocks[k % 3](x)) + super().forward(x)


def test_native_entry_callee_exception_propagates():
    class Boom(torch.nn.Module):
        def forward(self, x):
            raise ValueError("boom %d" % x.numel())

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.boom = Boom()

        def forward(self, x):
            for _ in range(2):
                if int(x.abs().argmax()) > 10:
                    return x
            return self.boom(x)

    traced = pyinterp.trace(Net(), backend="eager")
    for _ in range(3):
        with pytest.raises(ValueError, match="boom 4"):
            traced(_x(0))


def test_native_entry_with_hooks_runs_plainly():
    torch.manual_seed(0)
    net = LoopNet()
    traced = pyinterp.trace(net, backend="eager")
    x = _x(0).reshape(1, 4)
    torch.testing.assert_close(traced(x), net(x))
    seen = []
    handle = net.register_forward_hook(lambda mod, inp, out: seen.append(1))
    try:
        torch.testing.assert_close(traced(x), net(x))
        assert seen == [1, 1]
    finally:
        handle.remove()


# -- the callee a split entry or a native entry calls is the one found now -----------------
class Breaking(torch.nn.Module):
    """Breaks in its forward (an int from tensor data indexes a tuple)."""

    def __init__(self, scale):
        super().__init__()
        self.w = torch.nn.Parameter(torch.full((4,), float(scale)))

    def forward(self, x):
        y = x * self.w
        k = int(y.sum() > 0)
        return (y - 1, y + 1)[k]


class Holder(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.layer = Breaking(scale)

    def forward(self, x):
        return self.layer(x + 1) * 3


def _run_holder(model, x):
    return model(x)


def _run_holder_in_a_loop(model, x):
    for _ in range(2):
        x = model.layer(x) + x[int(x.abs().argmax())]
    return x


@pytest.mark.parametrize("fn", [_run_holder, _run_holder_in_a_loop])
def test_the_broken_callee_is_the_one_the_call_finds(fn):
    traced = pyinterp.trace(fn, backend="eager")
    x = _x(0)
    first = Holder(2.0)
    torch.testing.assert_close(traced(first, x), fn(first, x))
    first.layer = Breaking(5.0)  # same type and shapes: the guards pass
    torch.testing.assert_close(traced(first, x), fn(first, x))
    for scale in (7.0, -3.0):
        other = Holder(scale)
        torch.testing.assert_close(traced(other, x), fn(other, x))


@torch.compiler.disable
def _native_scale(t):
    return t * 2


def _two_breaks(x, y):
    a = x + 1
    b = _native_scale(a)  # a break: resume function 1
    c = b * y
    d = _native_scale(c)  # a break in resume function 1: its own resume function
    return d - a + x * 3


def test_a_resume_function_of_a_resume_function_gets_its_arguments_in_order():
    # The second resume function has its parent's ``__stack0`` among its
    # live locals: one name for two arguments shifted every argument after
    # it (a wrong result from the third call on).
    traced = pyinterp.trace(_two_breaks, backend="eager")
    for seed in range(5):
        x, y = fresh(3, seed=seed), fresh(3, seed=seed + 7)
        assert_same(traced(x, y), _two_breaks(x, y))
