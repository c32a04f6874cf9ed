"""The generated opcode reference matches the handlers' docstrings."""
from pyinterp import docgen


def test_opcode_reference_is_up_to_date():
    assert docgen.main(["--check"]) == 0, "run: python -m pyinterp.docgen"


def test_opcode_reference_lists_every_handler():
    from pyinterp.opcodes.registry import HANDLERS

    text = docgen.render()
    for name in HANDLERS:
        assert "\n### %s\n" % name in text
