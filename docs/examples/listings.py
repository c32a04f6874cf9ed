"""The producers of the docs' listings (see pyinterp/doclistings.py)."""
from pyinterp.doclistings import EXAMPLES, example, listing, printed, session, source_excerpt


# --- docs/fuzzing.md: the worked example ------------------------------------

@listing("fuzz-property", "python")
def fuzz_property():
    return (EXAMPLES / "fuzz_binary_ops.py").read_text()


def shrunk_divergence():
    """The report of the property run against the mutant handler: the
    shrunk failing example, then the runner's report."""
    from pyinterp.testing import mutants

    property_ = example("fuzz_binary_ops").test_binary_op_on_ints
    try:
        with mutants.floor_division_truncates():
            property_()
    except AssertionError as exc:
        # (the project's profiles add a "@reproduce_failure" note: left out)
        notes = [n for n in getattr(exc, "__notes__", []) if n.startswith("Failing test case")]
        return "\n".join(notes + [str(exc)])
    raise AssertionError("the property did not find the mutant")


@listing("fuzz-report")
def fuzz_report():
    return shrunk_divergence()


# --- docs/opcodes.md: one example per family --------------------------------

def _family_listing(family):
    def produce():
        import inspect

        families = example("opcode_families")
        fn = getattr(families, family)
        args = families.ARGUMENTS[family]
        return "%s\n\n>>> print(pyinterp.steps(%s%s))\n%s" % (
            inspect.getsource(fn).rstrip(), family,
            "".join(", %r" % (a,) for a in args), steps_table(fn, *args))
    return produce


def _register_families():
    from pyinterp.docgen import EXAMPLE_FAMILIES

    for family in EXAMPLE_FAMILIES:
        listing("family-" + family)(_family_listing(family))


_register_families()


# --- docs/tutorial.md ---------------------------------------------------------

def _tut():
    return example("tutorial_examples")


def _source_and_dis(name):
    import dis
    import inspect

    fn = getattr(_tut(), name)
    return "%s\n\n%s" % (inspect.getsource(fn).rstrip(), printed(dis.dis, fn))


for _name in ("area", "safe_ratio", "sum_of_squares"):
    listing("dis-" + _name)(lambda _name=_name: _source_and_dis(_name))


@listing("interpret-area")
def interpret_area():
    import pyinterp

    return session("area(3, 4)\n"
                   "pyinterp.interpret(area)(3, 4)\n",
                   {"pyinterp": pyinterp, "area": _tut().area})


@listing("vm-loop", "python")
def vm_loop():
    """The two loops of ``Interpreter.loop`` and the handler call: the
    inline instructions and the internal-error path are left out."""
    path = "pyinterp/interp/vm.py"
    lines = source_excerpt(path, "    def loop(self, frame, exc):",
                           "                exc = e").splitlines()[1:]
    start = next(i for i, line in enumerate(lines) if line == "        while True:")
    fetch = next(i for i, line in enumerate(lines) if "pc += 1" in line)
    call = next(i for i, line in enumerate(lines) if "result = ins.fn(" in line)
    internal = next(i for i, line in enumerate(lines) if "except PyinterpInternal" in line)
    caught = next(i for i, line in enumerate(lines) if "except BaseException" in line)
    skipped = " " * 20 + "# ... (the commonest instructions run inline here)"
    return "# %s: Interpreter.loop, shortened\n%s\n" % (path, "\n".join(
        lines[start:fetch + 1] + [skipped] + lines[call:internal] + lines[caught:]))


@listing("handler-binary-op", "python")
def handler_binary_op():
    return source_excerpt("opcodes/arith.py", '@opcode("BINARY_OP")',
                          "stack[-1] = vm.binary_op(ins.argval, lhs, rhs)")


@listing("vm-unwind", "python")
def vm_unwind():
    return source_excerpt("pyinterp/interp/vm.py", "        ins = frame.instructions[index]",
                          "        return ins.exc_target")


@listing("handler-call", "python")
def handler_call():
    header = source_excerpt("opcodes/calls.py", '@opcode("CALL")', "def call(vm, frame, ins):")
    body = source_excerpt("opcodes/calls.py", "    stack = frame.stack",
                          "        stack.append(vm.call(fn, args, kwargs))")
    return (header + '    """(docstring left out)"""\n' + body.split("\n", 1)[1]
            + "\n" + source_excerpt("pyinterp/interp/calls.py",
                                    "def call_function(vm, func, args, kwargs=None):",
                                    "    return frame.retval"))


def _sections(text, keep):
    """The sections of an ``Explanation``'s text whose heading starts with
    one of ``keep`` (a heading is a line that is not indented)."""
    out, taking = [], False
    for line in text.splitlines():
        if not line.startswith(" "):
            taking = line.startswith(keep)
        if taking:
            out.append(line)
    return "\n".join(out) + "\n"


def _steady(text):
    """``text`` with the measured seconds (which vary run to run) as N.NNN."""
    import re

    return re.sub(r"\b\d+\.\d{3} s\b", "N.NNN s", text)


def _explained(call, explanation, sections, printed_text=""):
    """The session ``explanation = pyinterp.explain(CALL)``, its summary,
    then the ``sections`` of its details."""
    return (">>> explanation = pyinterp.explain(%s)\n%s>>> print(explanation)\n%s\n"
            ">>> print(explanation.details())    # (only some sections shown)\n%s"
            % (call, printed_text, _steady(str(explanation)),
               _sections(explanation.details(), sections)))


@listing("explain-scale")
def explain_scale():
    import pyinterp

    t = _tut()
    explanation = pyinterp.explain(t.Scale(), t.example_input(3, 4))
    return _few_guards(_explained("Scale(), example_input(3, 4)", explanation,
                                  ("Guards", "Mock", "Graph 0")))


SHOWN_GUARDS = ("type(x) is torch.Tensor", "type(Scale.calls) is list",
                "type(Scale.factor) is float", "tutorial_examples.__dict__['torch'] is torch",
                "'linear' not in Scale.__dict__", "no_module_hooks(Scale.__dict__)",
                "torch.nn.modules.linear.__dict__['F'].linear is",
                "tutorial_examples.Scale.__dict__['forward'].__code__ is")
"""The guards of ``explain-scale`` shown (the whole list is long)."""


def _few_guards(text):
    """``text`` with only the guards that start with one of
    :data:`SHOWN_GUARDS` (in the order of the report), and a line saying
    how many are left out."""
    out, guards, shown = [], False, 0
    for line in text.splitlines():
        if line.startswith("Guards ("):
            guards, total = True, int(line[len("Guards ("):line.index(")")])
        elif guards and not line.startswith(" "):
            out.append("  ... (%d more guards)" % (total - shown))
            guards = False
        elif guards:
            if not line.strip().startswith(SHOWN_GUARDS):
                continue
            shown += 1
        out.append(line)
    return "\n".join(out) + "\n"


@listing("trace-scale")
def trace_scale():
    import pyinterp
    import torch

    t = _tut()
    return session("model = Scale()\n"
                   "fast = pyinterp.trace(model, backend=\"eager\")\n"
                   "x = example_input(3, 4)\n"
                   "torch.equal(fast(x), model(x))\n"
                   "model.calls\n"
                   "fast(example_input(3, 4)).shape\n"
                   "model.calls\n"
                   "len(fast._entries)\n",
                   {"pyinterp": pyinterp, "torch": torch, "Scale": t.Scale,
                    "example_input": t.example_input})


@listing("explain-break")
def explain_break():
    import pyinterp

    t = _tut()
    explanation = []
    shown = printed(lambda: explanation.append(pyinterp.explain(t.with_break,
                                                                t.example_input(3))))
    return _explained("with_break, example_input(3)", explanation[0], ("Graph 0", "Graph 1"),
                      shown)


SPLIT = ("fast = pyinterp.trace(with_break, backend=\"eager\")\n"
         "x = example_input(3)\n"
         "_ = fast(x)\n"
         "_ = fast(x)\n"
         "(entry,) = fast._entries        # the cache (private): its one entry\n"
         "print(entry.trace.mock_text)\n"
         "print(entry.trace.graphs[0].code.strip())\n")
"""The session of ``split-mock`` (``resume-dis`` goes on from it)."""

RESUME = ("resume = entry.mock.__globals__[\"resume_with_break\"]\n"
          "dis.dis(resume.__wrapped__)    # the resume function's bytecode\n"
          "(resumed,) = resume._entries   # its own cache entry\n"
          "from pyinterp.capture.traced import describe_guard\n"
          "for g in resumed.trace.guards:\n"
          "    print(describe_guard(g, resumed.trace.param_names))\n"
          "print(resumed.trace.mock_text)\n"
          "print(resumed.trace.graphs[0].code.strip())\n")
"""The session of ``resume-dis``."""


def _split_namespace():
    import dis

    import pyinterp

    t = _tut()
    return {"pyinterp": pyinterp, "dis": dis, "with_break": t.with_break,
            "example_input": t.example_input}


@listing("split-mock")
def split_mock():
    return session(SPLIT, _split_namespace())


@listing("resume-dis")
def resume_dis():
    namespace = _split_namespace()
    printed(session, SPLIT, namespace)
    return session(RESUME, namespace)


@listing("explain-graphmend")
def explain_graphmend():
    import pyinterp

    t = _tut()
    explanation = pyinterp.explain(t.clip_if_large, t.example_input(3))
    return _explained("clip_if_large, example_input(3)", explanation, ("Mock", "Graph 0"))


# --- `pyinterp.steps` tables --------------------------------------------------

def steps_table(fn, *args, capture=False, **options):
    """The table ``print(pyinterp.steps(fn, *args))`` shows (what the
    program prints is left out)."""
    import pyinterp

    found = []
    printed(lambda: found.append(pyinterp.steps(fn, *args, capture=capture)))
    return found[0].format(**options)


def _steps_listing(call, fn, *args, capture=False):
    """The ``>>> print(pyinterp.steps(CALL))`` line, then its table."""
    return ">>> print(pyinterp.steps(%s))\n%s" % (call, steps_table(fn, *args, capture=capture))


listing("steps-area")(lambda: _steps_listing("area, 3, 4", _tut().area, 3, 4))
listing("steps-safe_ratio")(lambda: _steps_listing("safe_ratio, 1, 0", _tut().safe_ratio, 1, 0))
listing("steps-sum_of_squares")(
    lambda: _steps_listing("sum_of_squares, 2, 3", _tut().sum_of_squares, 2, 3))
listing("steps-capture-scale")(
    lambda: _steps_listing("Scale(), example_input(3, 4), capture=True", _tut().Scale(),
                           _tut().example_input(3, 4), capture=True))
listing("steps-capture-graphmend")(
    lambda: _steps_listing("clip_if_large, example_input(3), capture=True",
                           _tut().clip_if_large, _tut().example_input(3), capture=True))
