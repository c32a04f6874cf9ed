"""The generated opcode reference matches the handlers' docstrings, and
each docstring's "RefGraph:" line names the capture rules that apply."""
import re

from pyinterp import docgen
from pyinterp.capture import rules as capture_rules


def test_opcode_reference_is_up_to_date():
    assert docgen.main(["--check"]) == 0, "run: python -m pyinterp.docgen"


def test_opcode_reference_lists_every_handler():
    from pyinterp.opcodes.registry import HANDLERS

    text = docgen.render()
    for name in HANDLERS:
        assert "\n### %s\n" % name in text


_RULE_NAME = re.compile(r"(?<!`)`([^`\s]+)`(?!`)")
"""A rule named in a docstring: one backtick each side (RST code has two)."""


def _refgraph_paragraph(doc):
    """The docstring's "RefGraph:" paragraph (up to a blank line)."""
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        if "RefGraph:" in line:
            paragraph = [line[line.index("RefGraph:"):]]
            for more in lines[i + 1:]:
                if not more.strip():
                    break
                paragraph.append(more.strip())
            return " ".join(paragraph)
    return None


def _handlers():
    """handler -> [(opname, versions)] for the handlers of ``opcodes/``."""
    out = {}
    for (family, name), entries in docgen._registrations().items():
        for versions, fn in entries:
            out.setdefault(fn, []).append((name, versions))
    return out


def test_refgraph_lines_name_the_rules_that_apply():
    """Each "RefGraph:" line names (in single backticks) every capture rule
    that applies to its opcodes, and no rule that does not exist or does
    not apply (``torch_function``, which applies to every torch call, may
    be named anywhere); it says "RefGraph: none" where no rule applies."""
    import inspect

    known = set(capture_rules.names())
    problems = []
    for fn, registrations in _handlers().items():
        paragraph = _refgraph_paragraph(inspect.cleandoc(fn.__doc__ or ""))
        where = "%s (%s)" % (fn.__qualname__, ", ".join(n for n, _ in registrations))
        if paragraph is None:
            problems.append("%s: no RefGraph line" % where)
            continue
        applicable = {rule.name for name, versions in registrations
                      for rule in docgen.applicable_rules(name, versions, fn)}
        named = set(_RULE_NAME.findall(paragraph))
        for rule in sorted(named - known):
            problems.append("%s: names %r, which is not a capture rule" % (where, rule))
        for rule in sorted((named & known) - applicable - {"torch_function"}):
            problems.append("%s: names %r, which does not apply to it" % (where, rule))
        for rule in sorted(applicable - named):
            problems.append("%s: does not name rule %r" % (where, rule))
        says_none = paragraph.startswith("RefGraph: none")
        if says_none != (not applicable):
            problems.append("%s: says %r" % (where, paragraph[:40]))
    assert not problems, "\n".join(problems)


def test_source_links_point_at_definitions():
    """Each link of the reference to a handler or a rule (``../file.py#L7``)
    lands on that file's decorator, ``def`` or ``class`` line."""
    text = docgen.render(docgen.target_path().read_text())
    links = re.findall(r"\]\(\.\./([\w/]+\.py)#L(\d+)\)", text)
    assert len(links) > 200
    for path, line in set(links):
        source = (docgen.ROOT / path).read_text().splitlines()[int(line) - 1].strip()
        assert source.startswith(("@", "def ", "class ")), (path, line, source)


def test_learning_path_names_every_family():
    families = {family for family, _ in docgen._registrations()}
    assert families == {family for family, _ in docgen.FAMILY_ORDER}
