"""Regenerate the listings of the hand-written docs from real runs.

A listing in ``docs/*.md`` sits between two markers::

    <!-- listing: NAME -->
    ```text
    ...generated...
    ```
    <!-- /listing -->

and ``NAME`` is a producer registered with :func:`listing` (in
``docs/examples/listings.py``): a function
that returns the text (it runs the example code in ``docs/examples/`` and
prints what ``dis``, ``pyinterp.explain``... print).  ``python -m
pyinterp.doclistings`` rewrites every listing; ``--check`` exits non-zero
when one has drifted (``tests/test_tutorial.py`` runs it).  Bytecode and
reprs differ between Pythons: the listings are those of Python
:data:`LISTING_VERSION`, and the check runs only there.
"""
import contextlib
import difflib
import importlib.util
import io
import pathlib
import re
import sys

LISTING_VERSION = (3, 11)
ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXAMPLES = DOCS / "examples"

PRODUCERS = {}
"""listing name -> (function returning the text, fence language)."""

_BLOCK = re.compile(r"(<!-- listing: (?P<name>[\w.-]+) -->\n)(?P<body>.*?)(<!-- /listing -->)",
                    re.S)


def listing(name, lang="text"):
    def register(fn):
        PRODUCERS[name] = (fn, lang)
        return fn
    return register


def example(name):
    """Import ``docs/examples/<name>.py`` (once) as module ``name``."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / (name + ".py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def printed(fn, *args, **kwargs):
    """What ``fn(*args, **kwargs)`` prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn(*args, **kwargs)
    return out.getvalue()


def session(code, namespace):
    """``code`` run as at the interactive prompt: each statement echoed
    after ``>>>``, then what it prints and the repr of an expression's value."""
    import ast

    out = []
    lines = code.splitlines()
    for node in ast.parse(code).body:
        text = lines[node.lineno - 1:node.end_lineno]
        out.append(">>> " + text[0])
        out += ["... " + line for line in text[1:]]
        result = []
        if isinstance(node, ast.Expr):
            expression = compile(ast.Expression(node.value), "<doc>", "eval")
            shown = printed(lambda: result.append(eval(expression, namespace)))
        else:
            shown = printed(exec, compile(ast.Module([node], []), "<doc>", "exec"), namespace)
        if shown:
            out.append(shown.rstrip("\n"))
        if result and result[0] is not None:
            out.append(repr(result[0]))
    return "\n".join(out) + "\n"


def source_excerpt(path, first, last):
    """Lines of ``path`` (from the checkout's root) from the first line that
    contains ``first`` to the next that contains ``last``, headed by where
    they are (the file, not the line numbers: an edit above the excerpt
    leaves it up to date)."""
    lines = (ROOT / path).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if first in line)
    end = next(i for i in range(start, len(lines)) if last in lines[i])
    return "# %s\n%s\n" % (path, "\n".join(lines[start:end + 1]))


def normalise(text):
    """Stable text: no absolute paths of this checkout, no trailing blanks."""
    # torch's files, wherever the environment is (inside the checkout or not)
    text = re.sub(r"[^\s()'\"]*/site-packages/", "site-packages/", text)
    text = text.replace(str(ROOT) + "/", "")
    text = re.sub(r"0x[0-9a-f]{6,}", "0x...", text)  # addresses (also in generated names)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()) + "\n"


def render_file(text, producers=None):
    """``text`` with every listing regenerated."""
    producers = PRODUCERS if producers is None else producers

    def fill(match):
        name = match.group("name")
        if name not in producers:
            raise KeyError("no producer for listing %r" % name)
        fn, lang = producers[name]
        body = normalise(fn())
        return "%s```%s\n%s```\n%s" % (match.group(1), lang, body, match.group(4))

    return _BLOCK.sub(fill, text)


def documents():
    """The docs that hold listings."""
    return sorted(p for p in DOCS.glob("*.md") if "<!-- listing: " in p.read_text())


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    example("listings")  # docs/examples/listings.py registers the producers
    # ... in pyinterp.doclistings, which is not this module under ``-m``
    producers = sys.modules["pyinterp.doclistings"].PRODUCERS

    stale = []
    for path in documents():
        old = path.read_text()
        new = render_file(old, producers)
        if new != old:
            stale.append((path, old, new))
            if "--check" not in argv:
                path.write_text(new)
                print("wrote %s" % path.relative_to(ROOT))
    if "--check" in argv and stale:
        for path, old, new in stale:
            name = str(path.relative_to(ROOT))
            print("%s is out of date: run python -m pyinterp.doclistings" % name)
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True), name, name + " (now)"))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
