"""``sys.settrace``/``sys.setprofile`` see interpreted frames as CPython's
(issue 14, item 7).

Each program runs natively and through ``interpret`` under the same trace
(or profile) function, set before the call or by the program itself; the
events of the program's own frames must be the same: event, function, line
(relative to the function's first line) and argument (``return`` values,
``exception`` types, the C function of ``c_call``...).
"""
import functools
import sys
import textwrap
import types

import pytest

import pyinterp
from pyinterp.testing import load_module

FILENAME = "<settrace-test>"


def _summary(event, arg):
    if isinstance(arg, BaseException):
        return type(arg).__name__
    if event == "exception":
        return arg[0].__name__
    if event.startswith("c_"):
        return getattr(arg, "__qualname__", type(arg).__name__)
    if event == "return":
        return repr(arg) if type(arg) in (int, str, bool, type(None), tuple, list) else type(arg).__name__
    return arg


def _record(kind, run, module, entry, args, local=True, c_level=False):
    events = []

    def tracer(frame, event, arg):
        code = frame.f_code
        if code.co_filename == FILENAME:
            events.append((event, code.co_name, frame.f_lineno - code.co_firstlineno
                           if frame.f_lineno is not None else None, _summary(event, arg)))
            if c_level:  # what a C tracer reads: a real frame, its code at f_lasti
                events.append((type(frame) is types.FrameType, code.co_code[frame.f_lasti + 1]
                               if event == "call" else None))
        return (traced if c_level else tracer) if local else None

    # A trace function that is not a Python function (coverage's C tracer):
    # it gets real frames.
    traced = functools.partial(tracer) if c_level else tracer

    fn = getattr(module, entry)
    setter = sys.settrace if kind == "trace" else sys.setprofile
    setter(traced)
    try:
        try:
            run(fn)(*args)
        except Exception as e:  # noqa: BLE001 - recorded
            events.append(("raised", type(e).__name__))
    finally:
        setter(None)
    return events


def check(source, entry="f", args=(), kind="trace", local=True, c_level=False):
    source = textwrap.dedent(source)
    native = _record(kind, lambda fn: fn, load_module(source, "tracetest", FILENAME),
                     entry, args, local, c_level)
    interpreted = _record(kind, pyinterp.interpret, load_module(source, "tracetest", FILENAME),
                          entry, args, local, c_level)
    assert interpreted == native
    assert native, "no event recorded"
    return native


PROGRAMS = {
    "loops": '''
        def f(n):
            total = 0
            for i in range(n):
                if i % 2:
                    continue
                total += i
            while n > 0:
                n -= 1
                if n == 1:
                    break
            return total
    ''',
    "calls_and_returns": '''
        def g(x):
            return x * 2
        def f(n):
            a = g(n)
            b = g(
                a
            )
            return a + b
    ''',
    "exceptions": '''
        def g():
            raise KeyError("k")
        def f():
            try:
                g()
            except KeyError:
                x = 1
            finally:
                y = 2
            try:
                try:
                    1 / 0
                finally:
                    z = 3
            except ZeroDivisionError as e:
                w = 4
            return x + y
    ''',
    "exception_leaves": '''
        def g(n):
            if n == 0:
                raise ValueError(n)
            return g(n - 1)
        def f():
            return g(2)
    ''',
    "generators": '''
        def gen(n):
            for i in range(n):
                got = yield i
                if got:
                    yield got
            return n
        def sub():
            r = yield from gen(2)
            return r
        def f():
            out = list(gen(3))
            g = gen(3)
            next(g)
            out.append(g.send(5))
            g.close()
            out.extend(sub())
            h = gen(2)
            next(h)
            try:
                h.throw(ValueError("x"))
            except ValueError:
                out.append(-1)
            return out
    ''',
    "comprehensions_and_lambdas": '''
        def f(xs):
            ys = [x * 2 for x in xs if x]
            key = lambda v: -v
            zs = sorted(ys, key=key)
            d = {k: v for k, v in zip(xs, ys)}
            return zs, d
    ''',
    "with_and_class": '''
        class CM:
            def __enter__(self):
                return self
            def __exit__(self, *exc):
                return True
        def f():
            with CM() as cm:
                raise RuntimeError
            class C:
                a = 1
                def m(self):
                    return self.a
            return C().m()
    ''',
    "match": '''
        def f(values):
            out = []
            for value in values:
                match value:
                    case [x, y]:
                        out.append(x + y)
                    case {"k": v}:
                        out.append(v)
                    case int(n) if n > 2:
                        out.append(n)
                    case _:
                        out.append(None)
            return out
    ''',
    "multiline_expression": '''
        def g(*a):
            return sum(a)
        def f(a, b):
            return g(
                a,
                b,
            ) + (a
                 * b)
    ''',
    "dunders_and_properties": '''
        class V:
            def __init__(self, v):
                self.v = v
            def __add__(self, other):
                return V(self.v + other.v)
            @property
            def double(self):
                return self.v * 2
        def f():
            return (V(1) + V(2)).double
    ''',
}

ARGS = {"loops": (5,), "calls_and_returns": (3,), "comprehensions_and_lambdas": ([1, 0, 3],),
        "match": ([[1, 2], {"k": 3}, 5, "s"],), "multiline_expression": (2, 3)}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_trace_events(name):
    check(PROGRAMS[name], args=ARGS.get(name, ()))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_trace_events_of_a_c_level_tracer(name):
    check(PROGRAMS[name], args=ARGS.get(name, ()), c_level=True)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_profile_events(name):
    check(PROGRAMS[name], args=ARGS.get(name, ()), kind="profile")


def test_call_events_only_when_the_tracer_returns_none():
    events = check(PROGRAMS["calls_and_returns"], args=(3,), local=False)
    assert {e[0] for e in events} == {"call"}


SETTRACE_INSIDE = '''
import sys
log = []
def tracer(frame, event, arg):
    if frame.f_code.co_name == "g":
        log.append((event, frame.f_lineno - frame.f_code.co_firstlineno))
    return tracer
def g(x):
    y = x + 1
    return y
def f():
    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        g(1)
    finally:
        sys.settrace(old)
    return log, sys.gettrace() is old
'''


def test_settrace_and_gettrace_inside_the_program():
    native = load_module(SETTRACE_INSIDE, "inside", "<inside>").f()
    interpreted = pyinterp.interpret(load_module(SETTRACE_INSIDE, "inside", "<inside>").f)()
    assert interpreted == native
    assert native[0] and native[1] is True


def test_trace_function_set_by_the_program_stays_after_the_call():
    module = load_module('''
import sys
def tracer(frame, event, arg):
    return None
def f():
    sys.settrace(tracer)
''', "stays", "<stays>")
    try:
        pyinterp.interpret(module.f)()
        assert sys.gettrace() is module.tracer
    finally:
        sys.settrace(None)


def test_f_trace_opcodes():
    source = '''
        def f(n):
            return n + 1
    '''

    def count(run):
        events = []

        def tracer(frame, event, arg):
            if frame.f_code.co_filename == FILENAME:
                frame.f_trace_opcodes = True
                events.append(event)
            return tracer

        module = load_module(textwrap.dedent(source), "ops", FILENAME)
        sys.settrace(tracer)
        try:
            run(module.f)(1)
        finally:
            sys.settrace(None)
        return events

    count(lambda fn: fn)  # (3.12: a frame asked for opcodes; the next settrace sees them)
    count(pyinterp.interpret)
    native = count(lambda fn: fn)
    assert count(pyinterp.interpret) == native
    assert "opcode" in native


def test_no_tracing_costs_nothing():
    """Without a trace or profile function an interpreter keeps its class's
    loop and instructions."""
    from pyinterp.interp.vm import Interpreter

    seen = []

    def f():
        import sys as _sys
        seen.append(_sys.gettrace())

    vm = Interpreter()
    pyinterp.api.run(f, (), {}, vm=vm)
    assert seen == [None]
    assert "loop" not in vm.__dict__ and "variant" not in vm.__dict__


def test_cprofile_is_left_on_the_host():
    """cProfile hooks the host from C with an object that is not callable:
    it stays there (it profiles the interpreter) and the call works."""
    import cProfile
    import pstats

    module = load_module(textwrap.dedent(PROGRAMS["loops"]), "cprof", FILENAME)
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        result = pyinterp.interpret(module.f)(5)
    finally:
        profiler.disable()
    assert result == module.f(5)
    assert sys.getprofile() is None
    assert pstats.Stats(profiler).total_calls > 0


RUNNING_FRAMES = '''
import sys
log = []
def tracer(frame, event, arg):
    if frame.f_code.co_name in ("f", "g", "h"):
        log.append((event, frame.f_code.co_name, frame.f_lineno - frame.f_code.co_firstlineno))
    return tracer
def set_trace():
    # what a debugger's set_trace does: f_trace up the stack, then settrace
    frame = sys._getframe(1)
    while frame is not None:
        frame.f_trace = tracer
        frame = frame.f_back
    sys.settrace(tracer)
def h(x):
    return x * 2
def g():
    a = 1
    set_trace()
    b = h(a)
    c = b + 1
    return c
def f():
    try:
        r = g()
        r += 1
    finally:
        sys.settrace(None)
    return r, log
'''


def test_frames_already_running_when_tracing_starts():
    native = load_module(RUNNING_FRAMES, "running", "<running>").f()
    interpreted = pyinterp.interpret(load_module(RUNNING_FRAMES, "running", "<running>").f)()
    assert interpreted == native
    assert ("line", "g", 3) in native[1] and ("line", "f", 3) in native[1]


PDB_SESSION = '''
import io, pdb, sys
def f(out):
    a = 1
    pdb.Pdb(stdin=io.StringIO("p a\\nn\\np b\\nc\\n"), stdout=out).set_trace()
    b = a + 1
    c = b * 2
    return c, sys.gettrace()
'''


def test_pdb_set_trace_inside_interpreted_code():
    """A debugger session (pdb's set_trace, commands from a script) goes
    as natively: it stops at the next line, steps, prints variables."""
    import io

    def session(run):
        out = io.StringIO()
        module = load_module(PDB_SESSION, "pdbsession", "<pdbsession>")
        result = run(module.f)(out)
        return result, [line for line in out.getvalue().splitlines()
                        if "pyinterp" not in line and "test_settrace" not in line]

    native = session(lambda fn: fn)
    assert session(pyinterp.interpret) == native
    assert "(Pdb) 1" in native[1] and len(native[1]) >= 4  # (stopped, printed, stepped)


def test_pdb_continue_ends_tracing():
    """pdb's ``continue`` (no breakpoint) clears the trace function from
    inside its dispatch: afterwards nothing is traced, as natively."""
    import io

    module = load_module(PDB_SESSION, "pdbsession", "<pdbsession>")
    pyinterp.interpret(module.f)(io.StringIO())
    assert sys.gettrace() is None
