"""The producers of the docs' listings (see pyinterp/doclistings.py)."""
from pyinterp.doclistings import EXAMPLES, example, listing, printed


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
        import dis
        import inspect

        fn = getattr(example("opcode_families"), family)
        return "%s\n\n%s" % (inspect.getsource(fn).rstrip(), printed(dis.dis, fn))
    return produce


def _register_families():
    from pyinterp.docgen import EXAMPLE_FAMILIES

    for family in EXAMPLE_FAMILIES:
        listing("family-" + family)(_family_listing(family))


_register_families()
