"""Generate ``docs/opcodes.md``, the opcode reference, from handler docstrings.

The page covers every supported Python at once: each opcode lists the
versions its handler serves (an opcode whose meaning changed has one entry
per handler), so it is the same whichever Python renders it.

Each entry also lists the capture rules that apply to the opcode (from
:mod:`pyinterp.capture.rules`, which needs no torch): the ones registered
for the opcode, and the ``data_model`` rules of the ``vm.<operation>``
entry points its handler calls (read from the handler's code); an index of
every rule closes the page.

``python -m pyinterp.docgen`` rewrites the file; ``python -m pyinterp.docgen
--check`` exits non-zero if it is out of date (the test suite runs that, on
every supported version).
"""
import inspect
import pathlib
import sys

from . import SUPPORTED_VERSIONS
from .capture import rules as capture_rules
from .opcodes import registry

HEADER = """# Opcode reference (Python %s)

Generated from the handlers' docstrings by `python -m pyinterp.docgen`; do not
edit by hand.  Each entry gives the Python versions it applies to, the stack
effect in CPython's notation (`(inputs -- outputs)`, top of stack last), what
the instruction does, and its **RefGraph rule**: what graph capture records
when it executes, naming the capture rules that do it.  Below it, **Capture
rules** lists each rule that applies and where its code is; the index at the
end lists every rule (`pyinterp/capture/rules.py` registers them).

Handlers are grouped by family, one module of `opcodes/` each; `v311` and
`v313` hold the opcodes that exist in only one supported version.
"""


def _version_text(version):
    return "%d.%d" % version


def versions_of(since, until):
    """The supported versions a registration with these bounds covers."""
    return [v for v in SUPPORTED_VERSIONS if since <= v and (until is None or v < until)]


def _covered_text(versions):
    if list(versions) == list(SUPPORTED_VERSIONS):
        return "all supported versions (%s)" % ", ".join(map(_version_text, versions))
    return ("Python " if len(versions) == 1 else "Pythons ") + \
        ", ".join(map(_version_text, versions))


def _registrations():
    """(family, name) -> [(versions, handler)], for the handlers of ``opcodes/``."""
    package = registry.__name__.rsplit(".", 1)[0]
    entries = {}
    for name, since, until, fn in registry.REGISTRATIONS:
        if not fn.__module__.startswith(package + "."):
            continue  # registered by a test, not part of the interpreter
        versions = versions_of(since, until)
        if not versions:
            continue
        family = fn.__module__.rsplit(".", 1)[-1]
        entries.setdefault((family, name), []).append((versions, fn))
    return entries


def applicable_rules(name, versions, fn):
    """The capture rules of opcode ``name`` on ``versions``, whose handler
    is ``fn``: registered for the opcode, or reached through ``vm``."""
    found = capture_rules.opcode_rules(name, versions) + capture_rules.data_model_rules(fn)
    order = list(capture_rules.KINDS)
    return sorted(found, key=lambda r: (order.index(r.kind), r.name, r.key))


def _rule_line(rule, versions):
    notes = []
    if rule.kind == "data_model":
        notes.append("`vm.%s`" % rule.key)
    if rule.arg is not None:
        notes.append("top %d" % rule.arg)
    covered = [v for v in versions if rule.covers(v)]
    if covered != list(versions):
        notes.append(_covered_text(covered))
    return "- %s `%s`%s: `%s`" % (capture_rules.KINDS[rule.kind], rule.name,
                                  " (%s)" % ", ".join(notes) if notes else "", rule.location)


def _capture_text(name, versions, fn):
    found = applicable_rules(name, versions, fn)
    if not found:
        return "\n**Capture rules:** none.\n"
    return "\n**Capture rules:**\n\n%s\n" % "\n".join(_rule_line(r, versions) for r in found)


INDEX_HEADER = """
## Capture rules

Every rule that capture applies, registered once in
`pyinterp/capture/rules.py`, by kind:

- **capture variant**: runs in place of the opcode's handler while capturing,
  calling the handler itself (`pyinterp/capture/variants.py` puts them in
  the frame's instructions);
- **tracked ints**: how an int the graph computes (`.item()` of an integer
  tensor) follows the instruction; any other instruction that reads one
  breaks the graph first (`pyinterp/capture/values/tracked_ints.py: step`);
- **tracked floats**: what a float the graph computes may do in the
  instruction: only move (`float_move`), or be read only below the top
  values (`float_reads_top`); any other instruction that consumes one
  breaks the graph first (`pyinterp/capture/values/scalars.py:
  check_instruction`);
- **data model**: the capture interpreter's wrapper of a `vm.<operation>`
  entry point, which every handler that calls that operation reaches;
- **torch calls**: every torch function, Tensor method and tensor property
  the program calls, whichever instruction calls it (`RecordingMode`).

Besides its rules, every instruction that does not run inline records where
it is (the site of a guard or a break) and, in the traced function's own
frame, its state before it runs (for a split at a break):
`pyinterp/capture/variants.py: _run_variant`.

| rule | kind | applies to | code |
|---|---|---|---|
"""


def _index(entries):
    reached = {}  # data-model rule name -> opcodes whose handler calls it
    for (family, name), handlers in entries.items():
        for versions, fn in handlers:
            for rule in capture_rules.data_model_rules(fn):
                reached.setdefault(rule.name, set()).add(name)
    rows = []
    order = list(capture_rules.KINDS)
    for rule_name, group in sorted(capture_rules.names().items(),
                                   key=lambda item: (order.index(item[1][0].kind), item[0])):
        first = group[0]
        if first.kind == "data_model":
            applies = "`vm.%s`: %s" % (first.key, ", ".join(sorted(reached.get(rule_name, ()))))
        elif first.kind == "protocol":
            applies = "every torch call (`%s`)" % first.key
        else:
            applies = ", ".join(_key_text(r) for r in sorted(group, key=lambda r: r.key))
        rows.append("| `%s` | %s | %s | `%s` |\n" % (rule_name, capture_rules.KINDS[first.kind],
                                                   applies, first.location))
    return INDEX_HEADER + "".join(rows)


def _key_text(rule):
    versions = versions_of(rule.since, rule.until)
    notes = [] if rule.arg is None else ["top %d" % rule.arg]
    if versions != list(SUPPORTED_VERSIONS):
        notes.append(", ".join(map(_version_text, versions)))
    return rule.key + (" (%s)" % "; ".join(notes) if notes else "")


def render():
    entries = _registrations()
    parts = [HEADER % ", ".join(map(_version_text, SUPPORTED_VERSIONS))]
    current = None
    for family, name in sorted(entries):
        if family != current:
            current = family
            module = sys.modules[entries[family, name][0][1].__module__]
            module_doc = inspect.getdoc(module) or ""
            parts.append("\n## `%s`: %s\n" % (family, module_doc.split("\n")[0]))
        parts.append("\n### %s\n" % name)
        for versions, fn in sorted(entries[family, name], key=lambda e: e[0]):
            doc = inspect.cleandoc(fn.__doc__ or "(undocumented)")
            parts.append("\n*%s*\n\n%s\n" % (_covered_text(versions), doc))
            parts.append(_capture_text(name, versions, fn))
    parts.append(_index(entries))
    return "".join(parts)


def target_path():
    return pathlib.Path(__file__).resolve().parents[1] / "docs" / "opcodes.md"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    text = render()
    path = target_path()
    if "--check" in argv:
        if not path.exists() or path.read_text() != text:
            print("%s is out of date: run python -m pyinterp.docgen" % path)
            return 1
        return 0
    path.write_text(text)
    print("wrote %s" % path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
