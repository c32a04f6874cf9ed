"""Bad input and failure hygiene: what happens when things go wrong."""
import sys
import textwrap
import types

import pytest

import pyinterp
from pyinterp.opcodes import registry
from pyinterp.testing import check, load_module


def _native_error(fn, *args, **kwargs):
    with pytest.raises(BaseException) as info:
        fn(*args, **kwargs)
    return info.value


@pytest.mark.parametrize("obj", [5, None, "text", [1, 2], object()],
                         ids=["int", "None", "str", "list", "object"])
def test_non_callable_gives_cpythons_type_error(obj):
    expected = _native_error(obj)
    with pytest.raises(TypeError) as info:
        pyinterp.interpret(obj, debug=True)()
    assert type(info.value) is type(expected)
    assert str(info.value) == str(expected)
    assert sys.exc_info() == (None, None, None)


def test_non_callable_with_arguments():
    expected = _native_error(3, 1, k=2)
    with pytest.raises(TypeError, match=str(expected).replace("(", r"\(").replace(")", r"\)")):
        pyinterp.interpret(3, debug=True)(1, k=2)


def test_interpreted_call_of_non_callable_inside_code():
    check(textwrap.dedent("""
        def f():
            things = [1, "s", None]
            out = []
            for t in things:
                try:
                    t()
                except TypeError as e:
                    out.append(str(e))
            return out
    """), expect=["'int' object is not callable", "'str' object is not callable",
                  "'NoneType' object is not callable"])


RUNAWAY = textwrap.dedent("""
    def down(n):
        return down(n + 1)
    def f():
        return down(0)
    def ok(x):
        return x * 2
""")


def test_runaway_recursion_raises_recursion_error_and_recovers():
    module = load_module(RUNAWAY)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)  # keep the test fast; the interpreter scales its own room
    try:
        with pytest.raises(RecursionError):
            pyinterp.interpret(module.f, debug=True)()
        assert sys.exc_info() == (None, None, None)
        assert pyinterp.interpret(module.ok, debug=True)(21) == 42
        with pytest.raises(RecursionError):
            pyinterp.interpret(module.f, debug=True)()
    finally:
        sys.setrecursionlimit(limit)
    assert sys.getrecursionlimit() == limit
    assert pyinterp.interpret(module.ok, debug=True)(1) == 2


def test_recursion_error_can_be_caught_inside_interpreted_code():
    module = load_module(RUNAWAY + textwrap.dedent("""
        def guarded():
            try:
                return down(0)
            except RecursionError as e:
                return "caught: " + type(e).__name__
    """))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)
    try:
        assert pyinterp.interpret(module.guarded, debug=True)() == "caught: RecursionError"
        assert pyinterp.interpret(module.ok, debug=True)(5) == 10
    finally:
        sys.setrecursionlimit(limit)


INTERRUPTED = textwrap.dedent("""
    log = []
    def interrupted():
        try:
            raise KeyboardInterrupt("stop")
        except Exception:
            log.append("Exception must not catch KeyboardInterrupt")
        finally:
            log.append("finally ran")
    def interrupted_in_callback():
        def cb(x):
            if x == 2:
                raise KeyboardInterrupt
            return x
        try:
            return list(map(cb, [1, 2, 3]))
        except Exception:
            return "swallowed"
""")


@pytest.mark.parametrize("entry", ["interrupted", "interrupted_in_callback"])
def test_keyboard_interrupt_propagates(entry):
    check(INTERRUPTED, entry=entry, raises=KeyboardInterrupt)
    module = load_module(INTERRUPTED)
    with pytest.raises(KeyboardInterrupt):
        pyinterp.interpret(getattr(module, entry), debug=True)()
    assert "Exception must not catch KeyboardInterrupt" not in module.log
    assert sys.exc_info() == (None, None, None)


def test_system_exit_propagates():
    check(textwrap.dedent("""
        import sys
        def f():
            try:
                sys.exit(3)
            except Exception:
                return "caught by Exception"
    """), raises=SystemExit)


FAILING = textwrap.dedent("""
    import sys
    def fails_in_handler():
        try:
            raise KeyError("first")
        except KeyError:
            raise ValueError("second")
    def fails_in_generator():
        def gen():
            try:
                raise KeyError("in gen")
            except KeyError:
                yield 1
                raise ValueError("after yield")
        return list(gen())
    def fails_in_with():
        class CM:
            def __enter__(self): return self
            def __exit__(self, *a): return False
        with CM():
            try:
                raise IndexError
            except IndexError:
                1 / 0
    def state():
        return sys.exc_info(), "fine"
""")


@pytest.mark.parametrize("entry", ["fails_in_handler", "fails_in_generator", "fails_in_with"])
def test_exception_leaves_no_state_behind(entry):
    module = load_module(FAILING)
    interpreted = pyinterp.interpret(getattr(module, entry), debug=True)
    for _ in range(2):
        with pytest.raises(Exception) as info:
            interpreted()
        assert info.value.__context__ is not None
        assert sys.exc_info() == (None, None, None)
        assert pyinterp.interpret(module.state, debug=True)() == ((None, None, None), "fine")


def test_caller_exception_state_is_restored():
    module = load_module(FAILING)
    try:
        raise LookupError("caller's")
    except LookupError as caller_exc:
        with pytest.raises(ValueError) as info:
            pyinterp.interpret(module.fails_in_handler, debug=True)()
        assert sys.exc_info()[1] is caller_exc
        assert info.value.__context__.__context__ is caller_exc
        (info_inside, _) = pyinterp.interpret(module.state, debug=True)()
        assert info_inside[1] is caller_exc
    assert sys.exc_info() == (None, None, None)


def _fresh_function(source, name="f"):
    """A function with a brand-new code object (the decoder caches per code)."""
    namespace = {}
    exec(compile(source, "<fresh %d>" % id(namespace), "exec"), namespace)
    return namespace[name]


def test_unknown_opcode_is_reported_with_name_and_version():
    source = "def f(a, b):\n    return {a, b}\n"
    opname = "BUILD_SET"
    handlers = registry.HANDLERS
    assert opname in handlers
    saved = handlers.pop(opname)
    try:
        fn = _fresh_function(source)
        with pytest.raises(pyinterp.UnsupportedOpcodeError) as info:
            pyinterp.interpret(fn, debug=True)(1, 2)
    finally:
        handlers[opname] = saved
    error = info.value
    version = "%d.%d" % sys.version_info[:2]
    assert error.opname == opname
    assert error.version == version
    assert opname in str(error) and version in str(error)
    assert isinstance(error, pyinterp.PyinterpError)
    assert sys.exc_info() == (None, None, None)
    # The handler is back: a fresh code object runs again.
    assert pyinterp.interpret(_fresh_function(source), debug=True)(1, 2) == {1, 2}


def test_unknown_opcode_in_callee_is_not_catchable_by_the_program():
    source = textwrap.dedent("""
        def callee():
            return {1}
        def f():
            try:
                return callee()
            except BaseException:
                return "swallowed"
    """)
    handlers = registry.HANDLERS
    saved = handlers.pop("BUILD_SET")
    try:
        fn = _fresh_function(source)
        with pytest.raises(pyinterp.UnsupportedOpcodeError, match="BUILD_SET"):
            pyinterp.interpret(fn, debug=True)()
    finally:
        handlers["BUILD_SET"] = saved
    assert sys.exc_info() == (None, None, None)
    assert pyinterp.interpret(_fresh_function(source), debug=True)() == {1}


def test_interpret_accepts_every_kind_of_callable():
    module = load_module(textwrap.dedent("""
        import functools
        class K:
            def __init__(self, v): self.v = v
            def method(self, x): return self.v + x
            def __call__(self, x): return self.v * x
        def plain(a, b=1): return a - b
        part = functools.partial(plain, 10)
        lam = lambda *a: sum(a)
    """))
    k = module.K(3)
    cases = [(module.plain, (5,)), (module.part, (4,)), (module.lam, (1, 2, 3)), (k.method, (4,)),
             (k, (4,)), (module.K, (7,)), (len, ([1, 2],)), (types.SimpleNamespace, ())]
    for fn, args in cases:
        native = fn(*args)
        interpreted = pyinterp.interpret(fn, debug=True)(*args)
        if isinstance(native, module.K):
            assert type(interpreted) is module.K and interpreted.v == native.v
        else:
            assert interpreted == native, fn
