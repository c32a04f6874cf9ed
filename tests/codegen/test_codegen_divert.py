"""Diverted calls (codegen/divert.py): a function whose calls pass their
callable through ``divert`` first behaves exactly as the original.

Differential: every hand-written case of the interpreter's tables
(``tests/interp``) runs natively and from its diverted copy, and the two
outcomes (result or exception with its frames, output, warnings, globals
afterwards) must be equal; then the same with a ``divert`` that replaces
every Python function by a proxy calling it, which would change results if
the rewrite handed ``divert`` anything but the callable (a ``self``, an
argument).  Hand-written tests pin which callables ``divert`` sees.
"""
import glob
import importlib
import os
import sys
import types

import pytest

from pyinterp.codegen.divert import CannotDivert, divert_calls
from pyinterp.testing import differential as D

HERE = os.path.dirname(os.path.abspath(__file__))
INTERP_TESTS = os.path.join(os.path.dirname(HERE), "interp")
# Cases that change the process's builtins for good (their own tests restore them).
_NOT_REPLAYED = {"deleted_builtins"}
# Sources that use process-wide registries: their loggers would outlive
# these runs and change what the case's own test later sees.
_PROCESS_STATE = ("logging",)


def diverted(fn, divert):
    """A copy of ``fn`` whose calls are diverted."""
    copy = types.FunctionType(divert_calls(fn.__code__, divert), fn.__globals__, fn.__name__,
                              fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    return copy


def _case_tables():
    if INTERP_TESTS not in sys.path:
        sys.path.insert(0, INTERP_TESTS)
    out = []
    for path in sorted(glob.glob(os.path.join(INTERP_TESTS, "test_*.py"))):
        module = importlib.import_module(os.path.basename(path)[:-3])
        for table_name, table in sorted(vars(module).items()):
            if not (table_name.isupper() and isinstance(table, dict)):
                continue
            for name, entry in sorted(table.items()):
                if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], str) \
                        and name not in _NOT_REPLAYED \
                        and not any(word in entry[0] for word in _PROCESS_STATE):
                    out.append(("%s.%s" % (module.__name__, name), entry))
    return out


def _outcome(source, options, divert):
    if options.get("setup"):
        options["setup"]()
    module = D.load_module(source, "difftest")
    fn = getattr(module, options.get("entry", "f"))
    if divert is not None:
        fn = diverted(fn, divert)
    args = options.get("args", ())
    kwargs = options.get("kwargs") or {}
    # (each run starts with a full collection: the heap from before is frozen)
    with D._frozen_heap(), D._registered(module):
        return D.run(fn, args() if callable(args) else args,
                     kwargs() if callable(kwargs) else kwargs, namespace=module.__dict__,
                     under_exception=options.get("under_exception", False),
                     consume_generators=options.get("consume", True), record_interrupts=True,
                     ignore_globals=options.get("ignore_globals", ()))


def _replayable(source, options):
    try:
        fn = getattr(D.load_module(source, "difftest"), options.get("entry", "f"))
    except SyntaxError:
        return None  # (a construct of a later Python)
    if type(fn) is not types.FunctionType:
        return None
    try:
        divert_calls(fn.__code__, lambda c: c)
    except CannotDivert:
        return None  # (a generator function: its frame is not entered by a call)
    return fn


def test_every_interpreter_case_runs_the_same_diverted():
    seen = []

    def identity(c, _append=seen.append, _type=type):
        _append(_type(c).__name__)  # (not the callable: some cases watch it die)
        return c

    compared, failures = 0, []
    for name, (source, options) in _case_tables():
        if _replayable(source, options) is None:
            continue
        compared += 1
        lines = D.diff_outcomes(_outcome(source, options, None),
                                _outcome(source, options, identity))
        if lines:
            failures.append("%s: %s" % (name, "\n".join(lines[:6])))
    assert not failures, "\n\n".join(failures)
    assert compared > 400 and len(seen) > 1500, (compared, len(seen))


def test_divert_gets_the_callable_not_a_neighbour():
    """A proxy for every Python function: if ``divert`` were handed a
    ``self`` or an argument, the program would see the proxy there."""
    _plain = (types.FunctionType, types.MethodType)

    def proxying(c, _type=type):
        if _type(c) in _plain:
            def proxy(*args, **kwargs):
                return c(*args, **kwargs)
            return proxy
        return c

    compared, failures = 0, []
    for name, (source, options) in _case_tables():
        if _replayable(source, options) is None or any(
                word in source for word in ("frame", "builtins", "traceback")):
            continue  # (the proxy is one more frame, and calls builtins)
        native = _outcome(source, options, None)
        proxied = _outcome(source, options, proxying)
        if native.exception is not None or proxied.exception is not None:
            # (the proxy's frame is in the traceback: compare the exception only)
            same = type(native.exception) is type(proxied.exception)
        else:
            same = native.returned == proxied.returned and native.stdout == proxied.stdout
        compared += 1
        if not same:
            failures.append(name)
    assert not failures, failures
    assert compared > 300, compared


class Base:
    def twice(self, v):
        return v * 2


class Child(Base):
    def twice(self, v):
        return super().twice(v) + 1  # zero-argument super() in a diverted frame


def helper(a, b=0, *, c=0):
    return a + b + c


def calls_of_every_shape(obj, items):
    out = [helper(1), helper(1, b=2), helper(*(1, 2)), helper(**{"a": 1, "c": 3})]
    out.append(obj.twice(3))
    out.append(Base.twice(obj, 4))
    with open(os.devnull) as handle:
        out.append(handle.closed)
    out.append(sum(i * 2 for i in items))
    out.append([helper(i) for i in items])
    out.append(sorted(items, key=lambda v: -v))
    return out


def test_divert_sees_each_callable_once_per_call():
    seen = []

    def record(c):
        seen.append(c)
        return c

    obj, items = Child(), [3, 1, 2]
    expected = calls_of_every_shape(obj, items)
    assert diverted(calls_of_every_shape, record)(obj, items) == expected
    names = [getattr(c, "__name__", type(c).__name__) for c in seen]
    inlined = sys.version_info >= (3, 12)  # (PEP 709: the comprehension's calls are f's)
    assert names.count("helper") == 4 + (3 if inlined else 0)
    assert seen.count(Base.twice) == 1
    twice = [c for c in seen if type(c) is types.MethodType]
    assert len(twice) == 1 and twice[0].__self__ is obj and twice[0].__func__ is Child.twice
    for builtin in (open, sum, sorted):
        assert seen.count(builtin) == 1
    assert all(c is not obj and c is not items for c in seen)


def test_a_diverted_callee_runs_in_the_callers_frame_place():
    calls = []

    def wrap(c):
        if c is helper:
            def traced(*args, **kwargs):
                calls.append((args, kwargs))
                return helper(*args, **kwargs) * 10
            return traced
        return c

    obj, items = Child(), [3, 1, 2]
    out = diverted(calls_of_every_shape, wrap)(obj, items)
    assert out[:4] == [10, 30, 30, 40]
    assert calls[:4] == [((1,), {}), ((1,), {"b": 2}), ((1, 2), {}), ((), {"a": 1, "c": 3})]
    # (inside the list comprehension: inlined on 3.12+, its own frame on 3.11)
    assert out[8] == ([30, 10, 20] if sys.version_info >= (3, 12) else [3, 1, 2])


def test_generators_are_refused():
    def gen():
        yield 1

    with pytest.raises(CannotDivert):
        divert_calls(gen.__code__, lambda c: c)
