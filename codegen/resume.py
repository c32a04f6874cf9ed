"""Resume-function bytecode: a code object entered after one of its instructions.

When a capture splits the traced function at a graph break (the capture
side, ``pyinterp.capture.partial.resume``, decides where, and what is live),
the split entry needs two pieces of bytecode, both built here:

* the **resume function** (:func:`resume_code`): the original code object
  whose arguments are the stack left by the broken instruction and the
  bound locals; a prologue right after ``RESUME`` pushes the stack
  arguments and jumps to the instruction after the broken one;
* the **tail of the split entry's mock** (:func:`call_then_resume`): run the
  broken call natively on the rebuilt stack, keep what it left, and return
  ``resume(stack after the call..., locals...)``.
"""
import dis

from bytecode import Bytecode, CompilerFlags, Instr, Label

from ..refgraph.expr import Call, Local, Obj
from .emit import assemble, editable

_PSEUDO = ("Label", "TryBegin", "TryEnd", "SetLineno")
_VARARGS_FLAGS = 0x04 | 0x08  # CO_VARARGS | CO_VARKEYWORDS


class CannotResume(Exception):
    """``bytecode``'s view of a code object does not map one to one onto
    ``dis``'s instructions, so no resume point can be placed."""


def resume_code(code, index, lineno, n_stack, local_names):
    """``code`` entered after its decoded instruction ``index`` (``dis``'s
    order, ``EXTENDED_ARG`` dropped), with arguments ``__stack0...`` (the
    ``n_stack`` stack items, bottom first) then ``local_names``; ``lineno``
    is the broken instruction's line (the new qualname names it)."""
    bc = editable(code)
    real = [i for i, x in enumerate(bc) if type(x).__name__ not in _PSEUDO]
    decoded = [x for x in dis.get_instructions(code) if x.opname != "EXTENDED_ARG"]
    if len(real) != len(decoded) or any(bc[i].name != d.opname for i, d in zip(real, decoded)):
        raise CannotResume("cannot map the code's instructions")
    target = Label()
    entry = real[_decoded_position(code, index + 1)]
    entry_line = bc[entry].lineno
    stack_names = _fresh_names(n_stack, set(code.co_varnames) | set(local_names))
    body = list(bc)
    body.insert(entry, target)
    resume_at = next(i for i, x in enumerate(body) if isinstance(x, Instr) and x.name == "RESUME")
    prologue = [Instr("LOAD_FAST", n, lineno=entry_line) for n in stack_names]
    prologue.append(Instr("JUMP_FORWARD", target, lineno=entry_line))
    body[resume_at + 1:resume_at + 1] = prologue
    new = Bytecode(body)
    new.name = code.co_name
    new.qualname = "%s.<resume at line %s>" % (code.co_qualname, lineno)
    new.filename = code.co_filename
    new.first_lineno = code.co_firstlineno
    new.argnames = stack_names + list(local_names)
    new.argcount = len(new.argnames)
    new.kwonlyargcount = 0
    new.posonlyargcount = 0
    new.flags = CompilerFlags(int(bc.flags) & ~_VARARGS_FLAGS)
    new.docstring = None
    return assemble(new)


def _fresh_names(n, taken):
    """``__stack0...`` for ``n`` stack items, none of them in ``taken``: a
    resume function of a resume function has its parent's ``__stack0``
    among its live locals (one name for two arguments would shift every
    argument after it)."""
    names = []
    for i in range(n):
        name = "__stack%d" % i
        while name in taken:
            name = "_" + name
        taken.add(name)
        names.append(name)
    return names


def _decoded_position(code, index):
    """Position among the code's real instructions (EXTENDED_ARG dropped) of
    the decoded instruction ``index``."""
    all_ins = list(dis.get_instructions(code))
    return sum(1 for x in all_ins[:index] if x.opname != "EXTENDED_ARG")


def call_then_resume(builder, stack_exprs, argc, kwnames, n_after, resume, resume_name,
                     local_exprs, note):
    """Finish the mock that ``builder`` (a :class:`~.mockgen.MockBuilder`)
    has built up to the broken call: a listing line ``note``; push
    ``stack_exprs`` (None stands for a NULL); the call of ``argc`` arguments
    (``kwnames``: its keyword names); store the ``n_after`` items it leaves
    in ``p0...``; return ``resume(p0..., *local_exprs)``, ``resume`` shown as
    ``resume_name``.  Returns ``(mock, listing)``."""
    g = builder.g
    g.line(note)
    for expr in stack_exprs:
        if expr is None:
            g.e.emit("PUSH_NULL")
        else:
            g.c.emit(expr)
    g.e.call(argc, kwnames=tuple(kwnames))
    after = ["p%d" % i for i in range(n_after)]
    for name in reversed(after):
        g.e.store_fast(name)
    g.line("%s = <stack after the call>" % ", ".join(after))
    call = Call(Obj(resume, resume_name), tuple(Local(n) for n in after) + tuple(local_exprs))
    g.line(lambda: "return %s" % g.c.render(call))
    g.c.emit(call)
    g.e.return_value()
    g.c.max_depth = max(g.c.max_depth, len(stack_exprs) + 2)
    return builder.build()
