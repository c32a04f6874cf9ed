"""Opcodes that exist only in Python 3.11 (removed or reworked in 3.12)."""

from .registry import opcode
from .signals import NULL

_V312 = (3, 12)


@opcode("PRECALL", until=_V312)
def precall(vm, frame, ins):
    """``( -- )`` 3.11 only: prepare the ``CALL`` that follows (CPython uses it
    to specialise and to unpack bound methods; semantically a no-op).

    ``dis.stack_effect`` charges PRECALL with ``-arg`` and CALL with ``-1``;
    at run time PRECALL pops nothing and CALL pops everything.
    RefGraph: none.
    """


@opcode("LOAD_METHOD", until=_V312)
def load_method(vm, frame, ins):
    """``(obj -- method, obj)`` or ``(obj -- NULL, attr)`` 3.11: look up a method
    for an immediate call.  When ``name`` is a plain function on the type
    and not shadowed, push the function and ``obj`` (so no bound method is
    created); otherwise push NULL and the attribute.

    RefGraph: as ``LOAD_ATTR``.
    """
    stack = frame.stack
    obj = stack[-1]
    frame.lasti = ins.index
    func = vm.plain_method(obj, ins.argval)
    if func is not None:
        stack[-1] = func
        stack.append(obj)
    else:
        stack[-1] = NULL
        stack.append(vm.load_attr(obj, ins.argval))


def _jump_if_true(vm, frame, ins):
    """``(cond -- )`` Pop ``cond``; jump if it is true (``__bool__``/``__len__``
    interpreted).

    3.11 has ``POP_JUMP_FORWARD_IF_TRUE`` and ``POP_JUMP_BACKWARD_IF_TRUE``;
    the decoder made both targets absolute, so one handler serves both.
    RefGraph: a condition depending on tensor data is a data-dependent
    branch (a GraphMend rewrite or a break); on guarded Python values it is
    folded.
    """
    value = frame.stack.pop()
    if value is True or (value is not False and vm.truth(value)):
        return ins.target


def _jump_if_false(vm, frame, ins):
    """``(cond -- )`` Pop ``cond``; jump if it is false.

    3.11's forward and backward forms share this handler.
    RefGraph: as the IF_TRUE jumps.
    """
    value = frame.stack.pop()
    if value is False or (value is not True and not vm.truth(value)):
        return ins.target


def _jump_if_none(vm, frame, ins):
    """``(value -- )`` Pop ``value``; jump if it is None.

    RefGraph: an identity test against None: a guard on an outside value.
    """
    if frame.stack.pop() is None:
        return ins.target


def _jump_if_not_none(vm, frame, ins):
    """``(value -- )`` Pop ``value``; jump if it is not None.

    RefGraph: as the IF_NONE jumps.
    """
    if frame.stack.pop() is not None:
        return ins.target


for _direction in ("FORWARD", "BACKWARD"):
    opcode("POP_JUMP_%s_IF_TRUE" % _direction, until=_V312)(_jump_if_true)
    opcode("POP_JUMP_%s_IF_FALSE" % _direction, until=_V312)(_jump_if_false)
    opcode("POP_JUMP_%s_IF_NONE" % _direction, until=_V312)(_jump_if_none)
    opcode("POP_JUMP_%s_IF_NOT_NONE" % _direction, until=_V312)(_jump_if_not_none)


@opcode("JUMP_IF_TRUE_OR_POP", until=_V312)
def jump_if_true_or_pop(vm, frame, ins):
    """``(cond -- cond)`` if true and jumping, else ``(cond -- )`` 3.11 ``or``:
    keep the value and jump if it is true, otherwise pop it.

    RefGraph: as the conditional jumps.
    """
    stack = frame.stack
    if vm.truth(stack[-1]):
        return ins.target
    stack.pop()


@opcode("JUMP_IF_FALSE_OR_POP", until=_V312)
def jump_if_false_or_pop(vm, frame, ins):
    """``(cond -- cond)`` if false and jumping, else ``(cond -- )`` 3.11 ``and``:
    keep the value and jump if it is false, otherwise pop it.

    RefGraph: as the conditional jumps.
    """
    stack = frame.stack
    if not vm.truth(stack[-1]):
        return ins.target
    stack.pop()


@opcode("LOAD_CLASSDEREF", until=_V312)
def load_classderef(vm, frame, ins):
    """``( -- value)`` 3.11: in a class body, load free variable ``name`` from
    the class namespace if it is there, else from its cell.

    RefGraph: a read of the namespace or of ``Cell(name)``.
    """
    name = ins.flag
    ns = frame.locals
    if type(ns) is dict:
        value = ns.get(name, NULL)
    else:
        try:
            value = vm.getitem(ns, name)
        except KeyError:
            value = NULL
    if value is NULL:
        try:
            value = frame.fast[ins.argval].cell_contents
        except ValueError:
            value = NULL
        if value is NULL:
            raise NameError("cannot access free variable '%s' where it is not associated "
                            "with a value in enclosing scope" % name, name=name)
    frame.stack.append(value)


@opcode("PREP_RERAISE_STAR", until=_V312)
def prep_reraise_star(vm, frame, ins):
    """``(orig, excs -- exc_or_None)`` 3.11 end of ``except*``: combine the
    exceptions raised or re-raised by the handlers (``excs``) into what
    propagates: None, a single exception, or a new group in which re-raised
    parts keep the original group's structure.

    RefGraph: none.
    """
    stack = frame.stack
    excs = stack.pop()
    stack[-1] = prep_reraise(stack[-1], excs)


def _leaf_ids(exc, ids):
    if isinstance(exc, BaseExceptionGroup):
        for e in exc.exceptions:
            _leaf_ids(e, ids)
    else:
        ids.add(id(exc))


def _same_metadata(a, b):
    return (getattr(a, "__notes__", None) is getattr(b, "__notes__", None)
            and a.__traceback__ is b.__traceback__
            and a.__cause__ is b.__cause__
            and a.__context__ is b.__context__)


def prep_reraise(orig, excs):
    """Python rendering of CPython's ``_PyExc_PrepReraiseStar``."""
    if not excs:
        return None
    if not isinstance(orig, BaseExceptionGroup):
        return excs[0]
    raised, reraised = [], []
    for e in excs:
        if e is None:
            continue
        (reraised if _same_metadata(e, orig) else raised).append(e)
    keep = set()
    for e in reraised:
        _leaf_ids(e, keep)
    reraised_eg = None
    if keep:
        reraised_eg = orig.split(lambda leaf: id(leaf) in keep)[0]
    if raised:
        if reraised_eg is not None:
            raised.append(reraised_eg)
        if len(raised) > 1:
            return BaseExceptionGroup("", raised)
        return raised[0]
    return reraised_eg


@opcode("ASYNC_GEN_WRAP", until=_V312)
def async_gen_wrap(vm, frame, ins):
    """``(value -- wrapped)`` 3.11: mark a value yielded by an async generator
    (so the driver tells it apart from values passed through by ``await``).

    RefGraph: none.
    """
    frame.stack[-1] = vm.async_gen_wrap(frame.stack[-1])


@opcode("PRINT_EXPR", until=_V312)
def print_expr(vm, frame, ins):
    """``(value -- )`` Interactive mode: pass the value to ``sys.displayhook``.

    RefGraph: an impure call (output).
    """
    import sys

    hook = getattr(sys, "displayhook", None)
    if hook is None:
        raise RuntimeError("lost sys.displayhook")
    vm.call(hook, (frame.stack.pop(),))


@opcode("IMPORT_STAR", until=_V312)
def import_star(vm, frame, ins):
    """``(module -- )`` ``from module import *``: copy the names listed in
    ``module.__all__`` (or every public name) into the locals mapping.

    RefGraph: writes to the namespace.
    """
    vm.import_star(frame.stack.pop(), frame.locals)
