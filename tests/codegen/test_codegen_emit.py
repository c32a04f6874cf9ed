"""The version-aware bytecode emitter (``pyinterp.codegen.emit``).

Each test builds a function with :class:`Emitter`, runs it natively and
under ``pyinterp.interpret`` (generated guards and mocks must run in our
interpreter too), and compares it with a Python-source equivalent over
several inputs.  The instruction-shape test pins down that each version
gets its own call and jump layout.
"""
import dis
import sys
import traceback

import pytest

import pyinterp
from pyinterp.codegen.emit import Emitter, assemble, editable

# -- the objects a guard looks at ---------------------------------------------


class Cfg:
    """A configuration object: attributes, a method with a keyword argument
    and a callable attribute (not a method)."""

    def __init__(self, scale, items, mode="eval"):
        self.scale = scale
        self.items = items
        self._mode = mode
        self.hook = lambda value, *, bias=0: value + bias

    def get(self, key, default=None):
        return getattr(self, "_" + key, default)


class Weird:
    """``==`` returns a list, not a bool: a truth test on it must call
    ``list.__bool__`` (3.13 needs ``TO_BOOL`` before the jump)."""

    def __init__(self, result):
        self.result = result

    def __eq__(self, other):
        return list(self.result)

    __hash__ = None


def guard_source(x, cfg):
    """The guard, written in Python."""
    return bool(
        type(x) is int
        and cfg.scale == 2
        and len(cfg.items) == 3
        and cfg.get("mode", default="train") == "eval"
        and cfg.hook(x, bias=1) > 0
        and "b" not in cfg.items
    )


def build_guard():
    """:func:`guard_source`, emitted as a guard: one test per line, each
    jumping forward to a shared ``return False``."""
    e = Emitter(filename="<guard>")
    fail = e.label()

    def check():
        e.jump_if_false(fail)
        e.lineno += 1

    e.load_global("type", push_null=True)          # type(x) is int
    e.load_fast("x")
    e.call(1)
    e.load_global("int")
    e.is_op()
    check()
    e.load_fast("cfg")                              # cfg.scale == 2
    e.load_attr("scale")
    e.load_const(2)
    e.compare("==")
    check()
    e.load_global("len", push_null=True)           # len(cfg.items) == 3
    e.load_fast("cfg")
    e.load_attr("items")
    e.call(1)
    e.load_const(3)
    e.compare("==")
    check()
    e.load_fast("cfg")                              # cfg.get("mode", default="train") == "eval"
    e.load_method("get")
    e.load_const("mode")
    e.load_const("train")
    e.call(2, kwnames=("default",))
    e.load_const("eval")
    e.compare("==")
    check()
    with e.callable():                              # cfg.hook(x, bias=1) > 0
        e.load_fast("cfg")
        e.load_attr("hook")
    e.load_fast("x")
    e.load_const(1)
    e.call(2, kwnames=["bias"])
    e.load_const(0)
    e.compare(">")
    check()
    e.load_const("b")                               # "b" not in cfg.items
    e.load_fast("cfg")
    e.load_attr("items")
    e.contains_op(negate=True)
    check()
    e.return_const(True)
    e.place(fail)
    e.return_const(False)
    return e.build_function("guard", ["x", "cfg"], {"__builtins__": __builtins__})


GUARD_INPUTS = [
    (1, Cfg(2, ["a", "c", "d"])),
    (1, Cfg(2, ["a", "b", "c"])),              # "b" in items
    (True, Cfg(2, [1, 2, 3])),                 # type(x) is bool
    (1.0, Cfg(2, [1, 2, 3])),
    (5, Cfg(2.0, (1, 2, 3))),                  # 2.0 == 2
    (5, Cfg(3, [1, 2, 3])),
    (5, Cfg(2, [1, 2])),
    (5, Cfg(2, [1, 2, 3], mode="train")),
    (-1, Cfg(2, [1, 2, 3])),                   # hook(-1, bias=1) == 0
    (7, Cfg(Weird([1]), [1, 2, 3])),           # truthy non-bool comparison
    (7, Cfg(Weird([]), [1, 2, 3])),            # falsy non-bool comparison
]


def run_both(fn, args):
    """``fn(*args)`` natively and under the interpreter (debug mode checks
    every instruction's stack effect); both results."""
    return fn(*args), pyinterp.interpret(fn, debug=True)(*args)


@pytest.mark.parametrize("args", GUARD_INPUTS, ids=range(len(GUARD_INPUTS)))
def test_guard_agrees_with_python_source(args):
    guard = build_guard()
    native, interpreted = run_both(guard, args)
    assert native is guard_source(*args)
    assert interpreted is native


def test_guard_accepts_and_rejects():
    """The inputs above are not all rejected for one reason."""
    outcomes = [guard_source(*args) for args in GUARD_INPUTS]
    assert outcomes.count(True) == 3 and outcomes.count(False) == len(outcomes) - 3


def test_error_points_at_the_guard_line():
    """Each guard line has its own line number: an error names it."""
    guard = build_guard()
    with pytest.raises(AttributeError) as info:
        guard(1, object())                         # no .scale: line 2
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert (last.filename, last.lineno) == ("<guard>", 2)


# -- loops: conditional and unconditional jumps both ways ----------------------


def loop_source(n, shape):
    """Sum of ``0 .. n-1`` (at least the first term) and the count of loop
    tests, with the loop shaped as :func:`build_loop` emits it."""
    i = total = tests = 0
    if shape == "while":                            # test at the top
        while True:
            tests += 1
            if not i < n:
                break
            total += i
            i += 1
    else:                                           # test at the bottom
        while True:
            total += i
            i += 1
            tests += 1
            if shape == "until_true" and i < n:
                continue
            if shape == "until_false" and not i >= n:
                continue
            break
    return total, tests


def _emit_increment(e, name, by):
    """``name += by``."""
    e.load_fast(name)
    e.load_const(by)
    e.binary_op("+")
    e.store_fast(name)


def build_loop(shape):
    """The loop of :func:`loop_source`:

    * ``while``: forward conditional exit, backward unconditional jump;
    * ``until_true``: backward ``jump_if_true`` on ``i < n``;
    * ``until_false``: backward ``jump_if_false`` on ``i >= n``.
    """
    e = Emitter()
    for name in ("i", "total", "tests"):
        e.load_const(0)
        e.store_fast(name)
    head, done = e.label(), e.label()
    e.place(head)
    if shape == "while":
        _emit_increment(e, "tests", 1)
        e.load_fast("i")
        e.load_fast("n")
        e.compare("<")
        e.jump_if_false(done)
    e.load_fast("total")
    e.load_fast("i")
    e.binary_op("+")
    e.store_fast("total")
    _emit_increment(e, "i", 1)
    if shape == "while":
        e.jump(head)
    else:
        _emit_increment(e, "tests", 1)
        e.load_fast("i")
        e.load_fast("n")
        if shape == "until_true":
            e.compare("<")
            e.jump_if_true(head)
        else:
            e.compare(">=")
            e.jump_if_false(head)
        e.jump(done)                                # a forward unconditional jump
    e.place(done)
    e.load_fast("total")
    e.load_fast("tests")
    e.emit("BUILD_TUPLE", 2)
    e.return_value()
    return e.build_function("loop_" + shape, ["n"], {})


@pytest.mark.parametrize("shape", ["while", "until_true", "until_false"])
@pytest.mark.parametrize("n", [0, 1, 5, 40])
def test_loop_agrees_with_python_source(shape, n):
    native, interpreted = run_both(build_loop(shape), (n,))
    assert native == loop_source(n, shape)
    assert interpreted == native


# -- the per-version instruction shapes ----------------------------------------

EXPECTED_SHAPES = {
    (3, 11): {"PRECALL", "KW_NAMES", "LOAD_METHOD", "POP_JUMP_FORWARD_IF_FALSE",
              "POP_JUMP_BACKWARD_IF_TRUE"},
    (3, 12): {"KW_NAMES", "POP_JUMP_IF_FALSE", "JUMP_BACKWARD", "RETURN_CONST"},
    (3, 13): {"CALL_KW", "TO_BOOL", "POP_JUMP_IF_FALSE", "JUMP_BACKWARD", "RETURN_CONST"},
}
ABSENT_SHAPES = {
    (3, 11): {"TO_BOOL", "RETURN_CONST"},
    (3, 12): {"PRECALL", "LOAD_METHOD", "TO_BOOL", "CALL_KW"},
    (3, 13): {"PRECALL", "LOAD_METHOD", "KW_NAMES"},
}


def opnames(*functions):
    """The instruction names used by ``functions``."""
    return {ins.opname for fn in functions for ins in dis.get_instructions(fn)}


@pytest.mark.skipif(sys.version_info[:2] not in EXPECTED_SHAPES, reason="unknown version")
def test_each_version_gets_its_own_layout():
    used = opnames(build_guard(), build_loop("until_true"))
    version = sys.version_info[:2]
    assert EXPECTED_SHAPES[version] <= used
    assert not ABSENT_SHAPES[version] & used
    assert next(dis.get_instructions(build_guard())).opname == "RESUME"


def test_to_bool_only_where_needed():
    """3.13: an ``is`` test is already a bool; ``==`` needs ``TO_BOOL``."""
    e = Emitter()
    out = e.label()
    for compare in (e.is_op, lambda: e.compare("==")):
        e.load_fast("a")
        e.load_fast("b")
        compare()
        e.jump_if_true(out)
    e.return_const("different")
    e.place(out)
    e.return_const("same")
    fn = e.build_function("same", ["a", "b"], {})
    expected_to_bool = 1 if sys.version_info >= (3, 13) else 0
    assert [i.opname for i in dis.get_instructions(fn)].count("TO_BOOL") == expected_to_bool
    for args, result in [((1, 1), "same"), ((1, 2), "different"), ((1, 1.0), "same"),
                         ((Weird([]), 0), "different"), ((Weird([0]), 0), "same")]:
        assert run_both(fn, args) == (result, result)


def test_load_const_none_and_return_const():
    e = Emitter()
    e.load_const(None)
    e.load_fast("x")
    e.is_op()
    done = e.label()
    e.jump_if_false(done)
    e.return_const(None)
    e.place(done)
    e.return_const("set")
    fn = e.build_function("check", ["x"], {})
    assert run_both(fn, (None,)) == (None, None)
    assert run_both(fn, (0,)) == ("set", "set")


# -- rewriting existing code keeps its exception table -------------------------


def nested_reraise(log):
    """The shape DESIGN §10 warns about: a bare ``raise`` in a ``finally``
    inside a handler, in nested ``try`` statements."""
    try:
        try:
            raise ValueError("a")
        except ValueError:
            try:
                log.append(1)
            finally:
                log.append(2)
                raise
    except ValueError as e:
        return ("caught", str(e), sys.exc_info()[0], list(log))
    finally:
        log.append(3)


def test_rewrite_round_trip_keeps_exception_table():
    code = nested_reraise.__code__
    rebuilt = assemble(editable(code))
    assert rebuilt.co_exceptiontable == code.co_exceptiontable
    assert rebuilt.co_code == code.co_code
    copy = type(nested_reraise)(rebuilt, nested_reraise.__globals__)
    for fn in (copy, pyinterp.interpret(copy)):
        log = []
        assert fn(log) == ("caught", "a", ValueError, [1, 2])
        assert log == [1, 2, 3]
