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

    return session("import pyinterp\n"
                   "area(3, 4)\n"
                   "pyinterp.interpret(area)(3, 4)\n"
                   "pyinterp.interpret(safe_ratio)(1, 0)\n",
                   {"pyinterp": pyinterp, "area": _tut().area, "safe_ratio": _tut().safe_ratio})


@listing("vm-loop", "python")
def vm_loop():
    return source_excerpt("pyinterp/interp/vm.py", "    def loop(self, frame, exc):",
                          "                exc = e")


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
    return (source_excerpt("opcodes/calls.py", "    fn, args = pop_call(stack, ins.arg)",
                           "        stack.append(vm.call(fn, args, kwargs))")
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


@listing("explain-scale")
def explain_scale():
    import pyinterp

    t = _tut()
    text = str(pyinterp.explain(t.Scale(), t.example_input(3, 4)))
    return _sections(text, ("Graph count", "Graph break count", "Ops per graph", "Guards",
                            "Mock", "Graph 0"))


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
    text = "printed by the run: %s%s" % (shown, explanation[0])
    return _sections(text, ("printed", "Graph count", "Graph break count", "Ops per graph",
                            "Break reasons", "Graph 0", "Graph 1"))


def _split_entry():
    import pyinterp

    t = _tut()
    fast = pyinterp.trace(t.with_break, backend="eager")
    x = t.example_input(3)
    printed(fast, x)
    printed(fast, x)
    (entry,) = list(fast._entries)
    return fast, entry


@listing("split-mock")
def split_mock():
    fast, entry = _split_entry()
    return entry.trace.mock_text + "\n" + entry.trace.graphs[0].code.strip()


@listing("resume-dis")
def resume_dis():
    import dis

    fast, entry = _split_entry()
    resume = entry.mock.__globals__["resume_with_break"]
    (resumed,) = list(resume._entries)
    from pyinterp.capture.traced import describe_guard

    trace = resumed.trace
    guards = [describe_guard(g, trace.param_names) for g in trace.guards]
    return "%s\n\n# its entry's guards, mock and graph:\n%s\n%s\n%s" % (
        printed(dis.dis, resume.__wrapped__).rstrip(), "\n".join(guards),
        trace.mock_text.rstrip(), trace.graphs[0].code.strip())


@listing("explain-graphmend")
def explain_graphmend():
    import pyinterp

    t = _tut()
    text = str(pyinterp.explain(t.clip_if_large, t.example_input(3)))
    return _sections(text, ("Graph count", "Graph break count", "Ops per graph", "Mock",
                            "Graph 0"))


# --- `pyinterp.steps` tables --------------------------------------------------

def steps_table(fn, *args, capture=False, **options):
    """The table ``print(pyinterp.steps(fn, *args))`` shows (what the
    program prints is left out)."""
    import pyinterp

    found = []
    printed(lambda: found.append(pyinterp.steps(fn, *args, capture=capture)))
    return found[0].format(**options)


listing("steps-area")(lambda: steps_table(_tut().area, 3, 4))
listing("steps-safe_ratio")(lambda: steps_table(_tut().safe_ratio, 1, 0))
listing("steps-sum_of_squares")(lambda: steps_table(_tut().sum_of_squares, 2, 3))
listing("steps-capture-scale")(
    lambda: steps_table(_tut().Scale(), _tut().example_input(3, 4), capture=True))
listing("steps-capture-graphmend")(
    lambda: steps_table(_tut().clip_if_large, _tut().example_input(3), capture=True))
