"""The opcode registry: coverage of every real opcode, docstrings, version bounds."""
import dis
import sys

import pytest

import pyinterp
from pyinterp.opcodes import registry
from pyinterp.opcodes.registry import HANDLERS, real_opcodes

RUNNING = sys.version_info[:2]


def test_every_real_opcode_has_a_handler():
    missing = [name for name in real_opcodes() if name not in HANDLERS]
    assert missing == [], "opcodes without a handler on %d.%d: %s" % (RUNNING + (missing,))


def test_no_handler_for_an_opcode_this_python_lacks():
    assert set(HANDLERS) <= set(dis.opmap)


def test_exclusions_are_really_excluded():
    real = set(real_opcodes())
    assert "CACHE" not in real
    assert not any(name.startswith("INSTRUMENTED_") for name in real)
    assert all(dis.opmap[name] < 256 for name in real)


@pytest.mark.parametrize("name", sorted(HANDLERS))
def test_handler_docstring_teaches(name):
    """Each handler documents its stack effect, semantics and RefGraph rule."""
    doc = HANDLERS[name].__doc__ or ""
    assert doc.lstrip().startswith("``("), "%s: docstring must open with the stack effect" % name
    assert "--" in doc.split("``")[1], "%s: stack effect needs CPython's (in -- out) form" % name
    assert "RefGraph" in doc, "%s: docstring must give the RefGraph rule" % name


def test_registering_twice_is_refused():
    with pytest.raises(RuntimeError, match="registered twice"):
        registry.opcode("NOP")(lambda vm, frame, ins: None)


def test_registering_an_unknown_opcode_is_refused():
    with pytest.raises(RuntimeError, match="does not exist"):
        registry.opcode("NOT_AN_OPCODE_AT_ALL")(lambda vm, frame, ins: None)


def test_version_bounds_skip_other_versions():
    def handler(vm, frame, ins):
        """``( -- )`` test. RefGraph: none."""

    # A handler bounded to a version range that excludes this Python is not
    # installed, so it cannot collide with the real one.
    future = (RUNNING[0], RUNNING[1] + 1)
    assert registry.opcode("NOP", since=future)(handler) is handler
    assert HANDLERS["NOP"] is not handler


def test_unknown_opcode_is_a_clear_error(monkeypatch):
    source = "def f(x):\n    return -x\n"
    namespace = {}
    exec(compile(source, "<unknown-opcode>", "exec"), namespace)
    monkeypatch.delitem(HANDLERS, "UNARY_NEGATIVE")
    with pytest.raises(pyinterp.UnsupportedOpcodeError) as info:
        pyinterp.interpret(namespace["f"])(3)
    message = str(info.value)
    assert "UNARY_NEGATIVE" in message
    assert "%d.%d" % RUNNING in message
    assert info.value.opname == "UNARY_NEGATIVE"


def test_debug_mode_catches_a_wrong_stack_effect(monkeypatch):
    def broken_nop(vm, frame, ins):
        """``( -- )`` pushes a stray value. RefGraph: none."""
        frame.stack.append(None)

    source = "def f(x):\n    y = x\n    return y\n"
    namespace = {}
    exec(compile(source, "<broken-nop>", "exec"), namespace)
    monkeypatch.setitem(HANDLERS, "RESUME", broken_nop)
    with pytest.raises(pyinterp.errors.StackEffectError, match="RESUME"):
        pyinterp.interpret(namespace["f"], debug=True)(1)


def test_debug_mode_passes_on_real_code():
    def f(items):
        total = 0
        for i, x in enumerate(items):
            if x % 2:
                total += x * i
            else:
                total -= x
        return total, [y for y in items if y > 2], {k: v for k, v in zip("ab", items)}

    assert pyinterp.interpret(f, debug=True)([1, 2, 3, 4]) == f([1, 2, 3, 4])
