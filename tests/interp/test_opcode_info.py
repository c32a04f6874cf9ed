"""Opcode facts (pyinterp.opcodes.info) checked against dis on the running Python."""
import dis
import re
import sys
import types

import pytest

from pyinterp.interp import vm
from pyinterp.interp.decode import decode
from pyinterp.opcodes import info
from pyinterp.opcodes.registry import HANDLERS, real_opcodes

RUNNING = sys.version_info[:2]
REAL = frozenset(real_opcodes())
NAME_SETS = {
    name: value for name, value in vars(info).items()
    if name.isupper() and isinstance(value, frozenset)
}
JUMPS = frozenset(dis.opname[op] for op in set(dis.hasjrel) | set(dis.hasjabs)) & REAL
ARGS = list(range(256)) + [300, 1000, 0x1234]


def _args(name):
    return ARGS if dis.opmap[name] >= dis.HAVE_ARGUMENT else [None]


def _runtime_effect(name, arg, jumped):
    """What the interpreter's debug mode expects the stack to change by."""
    override = vm._STACK_EFFECT_OVERRIDES.get(name)
    if override is not None:
        return override(types.SimpleNamespace(arg=arg), jumped)
    return dis.stack_effect(dis.opmap[name], arg, jump=jumped)


@pytest.mark.parametrize("set_name", sorted(NAME_SETS))
def test_every_name_is_a_real_opcode_here(set_name):
    assert NAME_SETS[set_name] <= REAL


def test_no_pseudo_ops():
    pseudo = {"JUMP", "JUMP_NO_INTERRUPT", "SETUP_FINALLY", "SETUP_CLEANUP", "SETUP_WITH",
              "POP_BLOCK", "LOAD_ZERO_SUPER_ATTR", "STORE_FAST_MAYBE_NULL"}
    named = set().union(*NAME_SETS.values()) | info.stack_names()
    assert not named & pseudo


def test_unreal_and_repeated_names_are_refused():
    with pytest.raises(RuntimeError, match="not a real opcode"):
        info.for_running({info.ALL: ("NOT_AN_OPCODE",)})
    with pytest.raises(RuntimeError, match="listed twice"):
        info.for_running({info.ALL: ("NOP",), info.SINCE_312 if RUNNING >= (3, 12)
                          else info.V311: ("NOP",)})
    # A name outside its bounds is left out unchecked: it may not exist here.
    future = ((RUNNING[0], RUNNING[1] + 1), None)
    assert info.for_running({future: ("NOT_AN_OPCODE",)}) == frozenset()


# -- branches -----------------------------------------------------------------
def test_every_jump_is_classified():
    """dis's jumps are the conditional and unconditional ones, plus the loop
    and ``yield from`` exits."""
    assert JUMPS == info.CONDITIONAL_JUMPS | info.UNCONDITIONAL_JUMPS | {"FOR_ITER", "SEND"}
    assert not info.CONDITIONAL_JUMPS & info.UNCONDITIONAL_JUMPS


def test_backward_jumps_as_dis_decodes_them():
    backward = {name for name in JUMPS if dis._is_backward_jump(dis.opmap[name])}
    assert info.BACKWARD_JUMPS == backward


def test_jump_conditions_match_their_names():
    groups = {"IF_TRUE": info.JUMPS_IF_TRUE, "IF_FALSE": info.JUMPS_IF_FALSE,
              "IF_NONE": info.JUMPS_IF_NONE, "IF_NOT_NONE": info.JUMPS_IF_NOT_NONE}
    assert info.CONDITIONAL_JUMPS == frozenset().union(*groups.values())
    for part, names in groups.items():
        assert names, part
        assert all(re.search(part + r"(_OR_POP)?$", name) for name in names), (part, names)
    assert info.KEEPS_ON_JUMP == {name for name in REAL if name.endswith("_OR_POP")}
    assert info.TRUTH_TESTS == (info.JUMPS_IF_TRUE | info.JUMPS_IF_FALSE) - info.KEEPS_ON_JUMP


def test_jump_stack_effects():
    """A conditional jump pops its operand, except that the ``*_OR_POP``
    forms keep it when they jump; an unconditional jump changes nothing."""
    for name in info.CONDITIONAL_JUMPS:
        kept = name in info.KEEPS_ON_JUMP
        assert dis.stack_effect(dis.opmap[name], 0, jump=True) == (0 if kept else -1), name
        assert dis.stack_effect(dis.opmap[name], 0, jump=False) == -1, name
    for name in info.UNCONDITIONAL_JUMPS:
        assert dis.stack_effect(dis.opmap[name], 0, jump=True) == 0, name


def test_the_compiler_uses_the_truth_tests_as_named():
    def f(x):
        if x:
            return 1
        return 2

    ops = [i.opname for i in dis.get_instructions(f)]
    assert any(name in info.JUMPS_IF_FALSE for name in ops), ops


def test_block_ends():
    assert info.RETURNS <= info.BLOCK_ENDS
    assert info.BLOCK_ENDS - info.RETURNS == {"RAISE_VARARGS", "RERAISE"}
    assert "RETURN_VALUE" in info.RETURNS
    assert ("RETURN_CONST" in info.RETURNS) == (RUNNING >= (3, 12))


# -- stack counts -------------------------------------------------------------
def test_stack_counts_cover_every_real_opcode():
    assert info.stack_names() == REAL


@pytest.mark.parametrize("name", sorted(REAL))
def test_stack_counts_agree_with_dis(name):
    """pushes - pops is the stack effect when the instruction does not jump
    (the run-time one where dis charges differently: 3.11's PRECALL/CALL)."""
    for arg in _args(name):
        pops, pushes = info.pops(name, arg), info.pushes(name, arg)
        assert pops >= 0 and pushes >= 0, (name, arg)
        assert pushes - pops == _runtime_effect(name, arg, False), (name, arg)


# Where a handler's docstring shows another moment than the table: the
# ``*_OR_POP`` forms document the jump (the table: falling through), and
# 3.13's RETURN_GENERATOR pushes the value of the first send when the
# generator starts (dis counts it; the docstring shows the call's view).
_DOCSTRING_SHOWS_OTHER = info.KEEPS_ON_JUMP | ({"RETURN_GENERATOR"} if RUNNING >= (3, 13)
                                               else set())


def _docstring_counts(name):
    """``(inputs, outputs)`` of the handler's stack effect, when both are
    plain comma-separated items; else None."""
    match = re.search(r"``\((.*?)\)``", HANDLERS[name].__doc__, re.S)
    inputs, outputs = match.group(1).split("--")

    def count(side):
        side = side.strip()
        if re.search(r"[\[\].]|_n\b|slots|arg", side):
            return None
        return len(side.split(",")) if side else 0

    counts = count(inputs), count(outputs)
    return None if None in counts else counts


# (the docstrings whose stack effect depends on the argument are left out)
@pytest.mark.parametrize("name", sorted(name for name in REAL - _DOCSTRING_SHOWS_OTHER
                                        if _docstring_counts(name) is not None))
def test_stack_counts_agree_with_the_handler_docstring(name):
    arg = 0 if dis.opmap[name] >= dis.HAVE_ARGUMENT else None
    assert (info.pops(name, arg), info.pushes(name, arg)) == _docstring_counts(name)


def test_argument_dependent_counts():
    assert {"CALL", "BUILD_TUPLE", "BUILD_LIST", "BUILD_MAP", "UNPACK_SEQUENCE",
            "LOAD_GLOBAL", "RAISE_VARARGS"} <= info.ARG_DEPENDENT
    assert "BINARY_OP" not in info.ARG_DEPENDENT
    assert info.pops("CALL", 3) == 5
    assert info.pops("BUILD_MAP", 2) == 4
    assert info.pops("LIST_APPEND", 2) == 3 and info.pushes("LIST_APPEND", 2) == 2


# -- operands -------------------------------------------------------------------
def test_operator_symbols_come_from_dis():
    assert info.NB_SYMBOLS == tuple(symbol for _, symbol in dis._nb_ops)
    assert info.COMPARISON_OPERATORS == tuple(dis.cmp_op)

    def f(a, b):
        return a - b, a < b

    for ins in dis.get_instructions(f):
        if ins.opname == "BINARY_OP":
            assert info.NB_SYMBOL[ins.arg] == ins.argrepr == "-"
        elif ins.opname == "COMPARE_OP":
            assert ins.argval in info.COMPARISON_OPERATORS


def test_slot_operands_name_a_variable():
    def f(a, b):
        c = a + b

        def g():
            return c
        del a
        return g, b

    seen = set()
    codes = [f.__code__] + [c for c in f.__code__.co_consts if isinstance(c, types.CodeType)]
    for code in codes:
        for ins in decode(code).instructions:
            if ins.opname in info.SLOT_OPERANDS:
                assert isinstance(ins.argval, int) and isinstance(ins.varname, str)
                seen.add(ins.opname)
            elif ins.opname in info.SLOT_PAIR_OPERANDS:
                assert len(ins.argval) == 2 and len(ins.varnames) == 2
                seen.add(ins.opname)
    assert {"STORE_DEREF", "MAKE_CELL", "DELETE_FAST", "LOAD_DEREF"} <= seen


def test_slot_pair_halves_spell_their_names():
    assert set(info.SLOT_PAIR_HALVES) == info.SLOT_PAIR_OPERANDS
    for name, (first, second) in info.SLOT_PAIR_HALVES.items():
        assert name == first + "_" + second
        assert {first, second} <= {"LOAD_FAST", "STORE_FAST"}


# -- decoded instruction fields ---------------------------------------------------
def _decoded(fn, opname):
    return [ins for ins in decode(fn.__code__).instructions if ins.opname == opname]


def test_instruction_fields_for_calls_and_loads():
    def f(x):
        return len(x), x.count(1), x.real, x < 1 if x else 0

    glob = _decoded(f, "LOAD_GLOBAL")
    assert [ins.push_null for ins in glob] == [True]
    attrs = _decoded(f, "LOAD_ATTR") + _decoded(f, "LOAD_METHOD")
    methods = {ins.argval: ins.method or ins.opname == "LOAD_METHOD" for ins in attrs}
    assert methods == {"count": True, "real": False}
    for ins in decode(f.__code__).instructions:
        assert ins.to_bool in (False, True) and ins.after_yield_from is False


def test_instruction_fields_for_yield_from():
    def gen(it):
        yield 1
        yield from it

    resumes = _decoded(gen, "RESUME")
    after = [ins.after_yield_from for ins in resumes]
    assert after.count(True) == 1 and after[0] is False


def test_conversions_before_a_truth_test_are_folded_into_it():
    def f(x, y):
        if x and y < 1:
            return not x
        return x < y

    instructions = decode(f.__code__).instructions
    converting = [ins for ins in instructions
                  if ins.opname in info.CONVERTS_TO_BOOL or ins.opname == "COMPARE_OP"]
    folded = [ins.to_bool is False for ins in converting
              if instructions[ins.index + 1].opname in info.TRUTH_TESTS]
    # (``x``'s TO_BOOL on 3.13 only; ``y < 1``'s COMPARE_OP everywhere)
    assert all(folded) and len(folded) == (2 if RUNNING >= (3, 13) else 1)
    if RUNNING >= (3, 13):  # (the TO_BOOL before ``not``, ``x < y``'s plain COMPARE_OP)
        kept = [ins.to_bool for ins in converting
                if instructions[ins.index + 1].opname not in info.TRUTH_TESTS]
        assert kept == [True, False]
