"""Generate ``docs/opcodes.md``, the opcode reference, from handler docstrings.

The page covers every supported Python at once: each opcode lists the
versions its handler serves (an opcode whose meaning changed has one entry
per handler), so it is the same whichever Python renders it.

``python -m pyinterp.docgen`` rewrites the file; ``python -m pyinterp.docgen
--check`` exits non-zero if it is out of date (the test suite runs that, on
every supported version).
"""
import inspect
import pathlib
import sys

from . import SUPPORTED_VERSIONS
from .opcodes import registry

HEADER = """# Opcode reference (Python %s)

Generated from the handlers' docstrings by `python -m pyinterp.docgen`; do not
edit by hand.  Each entry gives the Python versions it applies to, the stack
effect in CPython's notation (`(inputs -- outputs)`, top of stack last), what
the instruction does, and its **RefGraph rule**: what graph capture records
when it executes.

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
