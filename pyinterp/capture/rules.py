"""Every capture rule, registered once: what an opcode or a data-model
operation does while a function is traced (records in the RefGraph or the
FX graph, or follows a value the graph computes).

A rule has a *kind*, a *key* and a *name* (the name the handlers'
"RefGraph:" docstring lines and ``docs/opcodes.md`` use):

``variant`` (key: an opcode)
    The capture variant of the opcode's handler, ``fn(vm, frame, ins,
    base)``, which runs ``base`` (the handler) with capture's work around
    it; :func:`.variants.captured_instructions` puts it in the frame's
    instructions.
``int_model`` (key: an opcode)
    How an int the graph computes follows the instruction, ``fn(vm, frame,
    ins, run, shadow)`` (:func:`.values.tracked_ints.step`).  An opcode
    without one breaks the graph when it reads a tracked int.
``float_flow`` (key: an opcode)
    What a float the graph computes may do there
    (:func:`.values.scalars.check_instruction`): ``float_move`` (it only
    moves), or ``float_reads_top`` (only the top ``n`` values may not be
    tracked floats: a container below that holds one is read, not
    consumed).  An opcode without one breaks when any value on the stack
    carries a tracked float.
``data_model`` (key: an entry point of the core ``Interpreter``)
    :class:`.interpreter.CaptureInterpreter`'s wrapper of ``vm.<key>``,
    which a handler reaches by calling ``vm.<key>(...)``; for ``call``,
    the core's call ladder with ``CaptureInterpreter``'s hooks bound in
    (``divert_call``, ``call_native``, ``construct``, ``call_object``).
``protocol`` (key: ``__torch_function__``)
    Every torch function, Tensor method and tensor property the program
    calls, whichever opcode runs it (:class:`.state.RecordingMode`).

Rules are registered by dotted name (``"variants:load_global"``, relative
to ``pyinterp.capture``) so that this module needs no torch: the opcode
reference lists each opcode's rules on every Python.  The modules that
apply the rules read them from here (:func:`functions`, :func:`keys`,
:func:`arguments`), once, at import.

Registering checks, at import time, that the kind is known, that each
(kind, key) is registered once, that an opcode exists in the running Python
when the rule's bounds (``since``/``until``, as in
:mod:`pyinterp.opcodes.registry`) include it, that a data-model key is an
entry point of :class:`~pyinterp.interp.vm.Interpreter`, and that a name
always names the same function.
"""
import dis
import importlib
import sys
import types
from typing import NamedTuple

from ..interp.calls import LADDER_HOOKS
from ..interp.vm import Interpreter
from ..opcodes.registry import real_opcodes

_RUNNING = tuple(sys.version_info[:2])
_PACKAGE = __name__.rsplit(".", 1)[0]
_V312, _V313 = (3, 12), (3, 13)

KINDS = {
    "variant": "capture variant",
    "int_model": "tracked ints",
    "float_flow": "tracked floats",
    "data_model": "data model",
    "protocol": "torch calls",
}
"""kind -> how the opcode reference labels it, in the order it lists them."""
_KEYED_BY_OPCODE = frozenset({"variant", "int_model", "float_flow"})
PROTOCOLS = frozenset({"__torch_function__"})


def _data_model_operations():
    """The entry points handlers call as ``vm.<name>(...)``: the class
    attributes of the core Interpreter bound to functions of the data model
    (defined outside vm.py, which holds the run loop), less the hooks that
    only the call ladder calls (capture's overrides of them are the code of
    its ``call`` rule; ``vm.call`` itself is the ladder with them bound in)."""
    operations = set()
    for name, value in vars(Interpreter).items():
        fn = value.__func__ if isinstance(value, staticmethod) else value
        if isinstance(fn, types.FunctionType) and fn.__module__ != Interpreter.__module__ \
                and name not in LADDER_HOOKS:
            operations.add(name)
    return frozenset(operations)


DATA_MODEL_OPERATIONS = _data_model_operations()
_REAL_OPCODES = frozenset(real_opcodes())


class Rule(NamedTuple):
    """One registered rule (see the module docstring)."""

    kind: str
    key: str
    name: str
    target: str  # "module:qualname", the module relative to pyinterp.capture
    since: tuple
    until: tuple
    arg: object  # kind-specific (float_reads_top: how many values)

    def covers(self, version):
        return self.since <= version and (self.until is None or version < self.until)

    @property
    def module(self):
        return "%s.%s" % (_PACKAGE, self.target.split(":")[0])

    @property
    def qualname(self):
        return self.target.split(":")[1]

    @property
    def location(self):
        """Where the rule's code is: ``pyinterp/capture/variants.py: load_global``."""
        return "%s.py: %s" % (self.module.replace(".", "/"), self.qualname)

    def resolve(self):
        """The rule's function (imports its module, which may import torch)."""
        obj = importlib.import_module(self.module)
        for part in self.qualname.split("."):
            obj = getattr(obj, part)
        return obj


RULES = []
"""Every registered :class:`Rule`, for every supported version."""
_by_kind_key = {}
_targets = {}  # name -> target


def _register(kind, key, target, name=None, since=(3, 11), until=None, arg=None):
    """Register one rule (the checks of the module docstring); the name
    defaults to the function's."""
    if kind not in KINDS:
        raise RuntimeError("unknown kind of capture rule %r" % kind)
    if (kind, key) in _by_kind_key:
        raise RuntimeError("%s rule for %s registered twice" % (kind, key))
    name = name or target.split(":")[1].rsplit(".", 1)[-1].lstrip("_")
    if _targets.get(name, target) != target:
        raise RuntimeError("rule name %r names both %s and %s" % (name, _targets[name], target))
    rule = Rule(kind, key, name, target, since, until, arg)
    if kind in _KEYED_BY_OPCODE:
        if rule.covers(_RUNNING) and key not in _REAL_OPCODES:
            raise RuntimeError("%s rule for opcode %s, which Python %d.%d does not execute"
                               % ((kind, key) + _RUNNING))
    elif kind == "data_model":
        if key not in DATA_MODEL_OPERATIONS:
            raise RuntimeError("data_model rule for %r, not an entry point of the core "
                               "Interpreter" % key)
    elif key not in PROTOCOLS:
        raise RuntimeError("protocol rule for unknown protocol %r" % key)
    _by_kind_key[kind, key] = rule
    _targets[name] = target
    RULES.append(rule)
    return rule


def variant(opname, target, name=None, since=(3, 11), until=None):
    """Register ``target`` as the capture variant of ``opname``'s handler."""
    return _register("variant", opname, target, name, since, until)


def int_model(opname, target, since=(3, 11), until=None):
    """Register how a tracked int follows ``opname`` (named ``int_<function>``)."""
    name = "int_" + target.split(":")[1].lstrip("_")
    return _register("int_model", opname, target, name, since, until)


_FLOAT_CHECK = "values.scalars:check_instruction"


def float_move(opname, since=(3, 11), until=None):
    """A tracked float only moves through ``opname``."""
    return _register("float_flow", opname, _FLOAT_CHECK, "float_move", since, until)


def float_reads_top(opname, n, since=(3, 11), until=None):
    """``opname`` consumes only its top ``n`` values (the others are read)."""
    return _register("float_flow", opname, _FLOAT_CHECK, "float_reads_top", since, until, n)


def data_model(operation):
    """CaptureInterpreter wraps ``vm.<operation>``."""
    return _register("data_model", operation,
                     "interpreter:CaptureInterpreter.%s" % operation, operation)


def protocol(key, target, name):
    """``target`` sees every call made through the protocol ``key``."""
    return _register("protocol", key, target, name)


# -- the rules ------------------------------------------------------------------
# Capture variants of handlers (variants.py; values/scalars.py for floats the
# graph computes).
variant("LOAD_GLOBAL", "variants:load_global")
variant("STORE_GLOBAL", "variants:store_global")
variant("DELETE_GLOBAL", "variants:delete_global")
variant("LOAD_DEREF", "variants:load_deref")
variant("STORE_DEREF", "variants:store_deref")
variant("DELETE_DEREF", "variants:delete_deref")
variant("MAKE_FUNCTION", "variants:make_function", until=_V313)
variant("SET_FUNCTION_ATTRIBUTE", "variants:make_function", since=_V313)
for _opname in ("LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE", "UNPACK_SEQUENCE",
                "UNPACK_EX"):
    variant(_opname, "variants:reads_container")
variant("CALL_FUNCTION_EX", "variants:call_function_ex")
for _opname in ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE"):
    variant(_opname, "variants:jump_if_tensor", since=_V312)
for _opname in ("POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_FALSE", "JUMP_IF_TRUE_OR_POP",
                "JUMP_IF_FALSE_OR_POP", "POP_JUMP_BACKWARD_IF_TRUE",
                "POP_JUMP_BACKWARD_IF_FALSE"):  # (backward: a while loop's bottom test)
    variant(_opname, "variants:jump_if_tensor", until=_V312)
variant("BINARY_OP", "values.scalars:binary_op", "float_binary_op")
variant("UNARY_NEGATIVE", "values.scalars:unary_negative", "float_unary_negative")
variant("COMPARE_OP", "values.scalars:compare_op", "float_compare_op")
variant("BUILD_STRING", "values.float_text:build_string", "text_build_string")

# How tracked ints follow an instruction (values/tracked_ints.py).
_INTS = "values.tracked_ints:"
int_model("LOAD_FAST", _INTS + "_load_fast")
int_model("LOAD_FAST_CHECK", _INTS + "_load_fast", since=_V312)
int_model("LOAD_FAST_AND_CLEAR", _INTS + "_load_fast", since=_V312)
int_model("STORE_FAST", _INTS + "_store_fast")
int_model("DELETE_FAST", _INTS + "_delete_fast")
int_model("POP_TOP", _INTS + "_pop_top")
int_model("COPY", _INTS + "_copy")
int_model("SWAP", _INTS + "_swap")
int_model("BINARY_OP", _INTS + "_binary_op")
int_model("CALL", _INTS + "_call")
int_model("COMPARE_OP", _INTS + "_compare_op")
int_model("TO_BOOL", _INTS + "_to_bool", since=_V313)
for _opname in ("LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST"):
    int_model(_opname, _INTS + "_slot_pair", since=_V313)
for _opname in ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE"):
    int_model(_opname, _INTS + "_jump", since=_V312)
for _opname in ("POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_FALSE",
                "POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_FALSE",
                "JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"):
    int_model(_opname, _INTS + "_jump", until=_V312)

# Where tracked floats may go (values/scalars.py).  BINARY_OP and
# UNARY_NEGATIVE are vetted by their variants; a call by scalars.check_call.
for _opname in ("LOAD_FAST", "STORE_FAST", "LOAD_CONST", "LOAD_GLOBAL", "LOAD_DEREF",
                "LOAD_NAME", "COPY", "SWAP", "PUSH_NULL", "POP_TOP", "BUILD_TUPLE",
                "BUILD_LIST", "LIST_APPEND", "NOP", "RESUME", "EXTENDED_ARG", "JUMP_FORWARD",
                "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "FOR_ITER", "CALL",
                "CALL_FUNCTION_EX", "BINARY_OP", "UNARY_NEGATIVE",
                # back into the interpreted caller, or the result (the mock
                # reads it from a graph output)
                "RETURN_VALUE"):
    float_move(_opname)
for _opname in ("LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "END_FOR", "RETURN_CONST"):
    float_move(_opname, since=_V312)
for _opname in ("STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST", "LOAD_FAST_LOAD_FAST",
                "CALL_KW"):
    float_move(_opname, since=_V313)
# Formatting makes text the mock makes again (values/float_text.py: the
# capture interpreter's format hooks and the BUILD_STRING variant vet it).
for _opname in ("FORMAT_VALUE",):
    float_move(_opname, until=_V313)
for _opname in ("CONVERT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC"):
    float_move(_opname, since=_V313)
float_move("BUILD_STRING")
float_move("PRECALL", until=_V312)
float_move("KW_NAMES", until=_V313)
float_move("LOAD_CLOSURE", until=_V313)
for _opname, _n in (("LOAD_ATTR", 1), ("GET_ITER", 1), ("UNPACK_SEQUENCE", 1),
                    ("BINARY_SUBSCR", 2),
                    # a stored value only moves (a write the mock replays, or
                    # state of an object it rebuilds); the owner and key must
                    # not be tracked floats
                    ("STORE_ATTR", 1), ("STORE_SUBSCR", 2)):
    float_reads_top(_opname, _n)
float_reads_top("LOAD_METHOD", 1, until=_V312)
float_reads_top("LOAD_SUPER_ATTR", 3, since=_V312)

# The data-model entry points CaptureInterpreter wraps (interpreter.py; its
# ``call`` is the core's ladder with its hooks, see interp/calls.py).
for _operation in ("load_attr", "plain_method", "getitem", "contains", "length", "truth",
                   "get_iter", "next_value", "iterate", "unpack", "store_attr",
                   "delete_attr", "setitem", "delitem", "call", "call_function",
                   "binary_op", "unary_op", "compare", "to_str", "to_repr", "to_ascii", "format"):
    data_model(_operation)

# Every torch call, whichever opcode makes it (state.py's RecordingMode).
protocol("__torch_function__", "state:Capture.on_torch_function", "torch_function")
del _opname, _n, _operation


# -- reading the rules ----------------------------------------------------------
def rules(kind, version=_RUNNING):
    """key -> :class:`Rule` of ``kind``, for the Python ``version``."""
    return {r.key: r for r in RULES if r.kind == kind and r.covers(version)}


def functions(kind):
    """key -> the rule's function, for the running Python (imports them)."""
    return {key: rule.resolve() for key, rule in rules(kind).items()}


def keys(kind, name):
    """The keys the rule ``name`` of ``kind`` is registered for (running Python)."""
    return frozenset(key for key, rule in rules(kind).items() if rule.name == name)


def arguments(kind, name):
    """key -> the argument of rule ``name`` of ``kind`` (running Python)."""
    return {key: rule.arg for key, rule in rules(kind).items() if rule.name == name}


def names():
    """name -> the rules registered under it (one function, one or more keys)."""
    out = {}
    for rule in RULES:
        out.setdefault(rule.name, []).append(rule)
    return out


def check_overrides(cls):
    """``cls`` (CaptureInterpreter) wraps exactly the data-model entry points
    that have a ``data_model`` rule, with the registered function."""
    registered = rules("data_model")
    wrapped = {name for name in DATA_MODEL_OPERATIONS if name in vars(cls)}
    if wrapped != set(registered):
        raise RuntimeError("%s wraps %s without a data_model rule, and has no wrapper of %s"
                           % (cls.__name__, sorted(wrapped - set(registered)),
                              sorted(set(registered) - wrapped)))
    for key, rule in registered.items():
        if rule.resolve() is not vars(cls)[key]:
            raise RuntimeError("data_model rule %s names %s, not %s.%s"
                               % (key, rule.target, cls.__name__, key))


# -- which rules an opcode's handler applies ------------------------------------
def opcode_rules(opname, versions):
    """The opcode-keyed rules of ``opname`` that cover any of ``versions``."""
    return [r for r in RULES if r.kind in _KEYED_BY_OPCODE and r.key == opname
            and any(r.covers(v) for v in versions)]


def data_model_rules(handler):
    """The ``data_model`` rules a handler reaches: the ``vm.<operation>``
    its code uses (in the handler, its nested code, and the functions of
    its package it calls), and those that the entry points capture does
    not wrap use in turn (``vm.import_from`` calls ``vm.load_attr``)."""
    registered = {r.key: r for r in RULES if r.kind == "data_model"}
    operations = vm_operations(handler)
    todo = [op for op in operations if op not in registered]
    while todo:
        entry = vars(Interpreter).get(todo.pop())
        entry = entry.__func__ if isinstance(entry, staticmethod) else entry
        if isinstance(entry, types.FunctionType):
            for op in vm_operations(entry, follow=False) - operations:
                operations.add(op)
                if op not in registered:
                    todo.append(op)
    return [registered[op] for op in sorted(operations) if op in registered]


def vm_operations(handler, vm="vm", follow=True):
    """The attributes of ``vm`` that ``handler``'s code loads, and with
    ``follow`` those of the functions of its package that it calls (see
    :func:`data_model_rules`)."""
    package = handler.__module__.rsplit(".", 1)[0] + "."
    found, seen, todo = set(), set(), [handler]

    def visit(value):
        if follow and isinstance(value, types.FunctionType) \
                and value.__module__.startswith(package) and value not in seen:
            seen.add(value)
            todo.append(value)

    seen.add(handler)
    while todo:
        fn = todo.pop()
        for code in _code_objects(fn.__code__):
            top = None  # what the last instruction pushed: "vm", a module, or None
            for ins in dis.get_instructions(code):
                op = ins.opname
                if op in ("LOAD_ATTR", "LOAD_METHOD"):
                    if top == vm:
                        found.add(ins.argval)
                    elif isinstance(top, types.ModuleType):
                        visit(getattr(top, ins.argval, None))
                    top = None
                elif op.startswith("LOAD_FAST") or op.endswith("_LOAD_FAST") \
                        or op in ("LOAD_DEREF", "LOAD_CLOSURE"):
                    loaded = ins.argval[-1] if isinstance(ins.argval, tuple) else ins.argval
                    top = vm if loaded == vm else None
                elif op == "LOAD_GLOBAL":
                    value = fn.__globals__.get(ins.argval)
                    visit(value)
                    is_ours = isinstance(value, types.ModuleType) and (
                        value.__name__ + ".").startswith(package)
                    top = value if is_ours else None
                else:
                    top = None
    return found


def _code_objects(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)
