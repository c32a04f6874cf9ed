"""Generate ``docs/opcodes.md``, the opcode reference, from handler docstrings.

``python -m pyinterp.docgen`` rewrites the file; ``python -m pyinterp.docgen
--check`` exits non-zero if it is out of date (the test suite runs that).
"""
import inspect
import pathlib
import sys

from .opcodes import registry

HEADER = """# Opcode reference (Python %d.%d)

Generated from the handlers' docstrings by `python -m pyinterp.docgen`; do not
edit by hand.  Each entry gives the stack effect in CPython's notation
(`(inputs -- outputs)`, top of stack last), what the instruction does, and
its **RefGraph rule**: what graph capture records when it executes.

Handlers are grouped by family, one module of `opcodes/` each.
"""


def render():
    by_family = {}
    for name, fn in sorted(registry.HANDLERS.items()):
        family = fn.__module__.rsplit(".", 1)[-1]
        by_family.setdefault(family, []).append((name, fn))
    parts = [HEADER % sys.version_info[:2]]
    for family in sorted(by_family):
        module_doc = inspect.getdoc(sys.modules[by_family[family][0][1].__module__]) or ""
        parts.append("\n## `%s`: %s\n" % (family, module_doc.split("\n")[0]))
        for name, fn in by_family[family]:
            doc = inspect.cleandoc(fn.__doc__ or "(undocumented)")
            parts.append("\n### %s\n\n%s\n" % (name, doc))
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
