"""``python -m pyinterp``: a short demonstration of the interpreter.

Runs a few functions natively and inside pyinterp, shows that results,
exceptions and printed output agree, and then lists the instructions one
small function executes, with the first line of each handler's docstring
(the teaching reference).

``python -m pyinterp --help`` lists the commands: ``demo`` (this, also what
the bare command runs), ``steps MODULE:FUNCTION [ARG ...]``, which prints
every instruction that call executes (``pyinterp.steps``; see
docs/steps.md), and ``explain MODULE:FUNCTION``, which prints
``pyinterp.explain`` of a call with the inputs the script provides
(:mod:`pyinterp.explaincli`), and ``report DIR``, which turns a run log
(``PYINTERP_TRACE_DIR=DIR``) into one HTML page (:mod:`pyinterp.reportcli`).
``--version`` prints pyinterp's version.
"""
import argparse
import dataclasses
import dis
import io
import contextlib
import sys

import pyinterp
from pyinterp.opcodes.registry import HANDLERS


@dataclasses.dataclass(order=True)
class Point:
    x: int
    y: int = 0

    def norm1(self):
        return abs(self.x) + abs(self.y)


def word_stats(text):
    counts = {}
    for word in text.split():
        counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked[:3]


def points(n):
    pts = sorted(Point(i % 3, -i) for i in range(n))
    print("closest:", min(pts, key=Point.norm1))
    return [p.norm1() for p in pts]


def fails(x):
    try:
        return 1 / x
    except ZeroDivisionError as exc:
        raise ValueError("x must not be zero") from exc


def gen_pipeline(n):
    def evens(limit):
        for i in range(limit):
            if i % 2 == 0:
                yield i
    total = yield_from_sum = 0
    for v in evens(n):
        total += v
    yield_from_sum = sum(x * x for x in evens(n))
    return total, yield_from_sum


def _outcome(fn, args):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            result = ("returned", fn(*args))
    except Exception as exc:  # noqa: BLE001 - the demo compares exceptions too
        result = ("raised", "%s: %s (cause: %r)" % (type(exc).__name__, exc, exc.__cause__))
    return result, out.getvalue()


def demo():
    cases = [
        (word_stats, ("the cat and the hat and the bat",)),
        (points, (5,)),
        (fails, (0,)),
        (gen_pipeline, (10,)),
    ]
    print("pyinterp %s: native vs interpreted\n" % pyinterp.__version__)
    all_same = True
    for fn, args in cases:
        native = _outcome(fn, args)
        interpreted = _outcome(pyinterp.interpret(fn), args)
        same = native == interpreted
        all_same &= same
        print("%-14s %s %s" % (fn.__name__, "same" if same else "DIFFERENT", interpreted[0]))
        if interpreted[1]:
            print("%14s printed %r" % ("", interpreted[1]))
    print()
    return all_same


def explain_instructions(fn):
    """Print every instruction of ``fn`` with its handler's one-line summary."""
    print("Instructions of %s, with what each does:\n" % fn.__name__)
    for ins in dis.get_instructions(fn):
        doc = (HANDLERS[ins.opname].__doc__ or "").strip().split("\n\n")[0]
        summary = " ".join(doc.split())
        print("%4d %-22s %-12s %s" % (ins.offset, ins.opname, ins.argrepr[:12], summary[:100]))


def trace_demo():
    """Capture a small module with ``pyinterp.trace`` (when torch is installed)."""
    try:
        import torch
    except ImportError:
        print("torch is not installed: skipping the pyinterp.trace demo "
              "(pip install -e '.[torch]')")
        return True

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(8, 8)
            self.scale = 0.5

        def forward(self, x):
            return torch.relu(self.fc(x)) * self.scale + x

    torch.manual_seed(0)
    block = Block().eval()
    graphs = []

    def eager_backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    traced = pyinterp.trace(block, backend=eager_backend)
    ok = True
    for call in range(3):
        x = torch.randn(2, 8)
        same = torch.allclose(traced(x), block(x))
        ok &= same
        print("trace call %d: %s eager, %s" % (call, "matches" if same else "DIFFERS FROM",
                                              "captured" if call == 0 else "cache hit"))
    print("compiled graphs: %d\n" % len(graphs))
    explanation = pyinterp.explain(block, torch.randn(2, 8))
    print(explanation)
    print()
    return ok and len(graphs) == 1


COMMANDS = {
    "demo": "compare native and interpreted runs of a few functions, trace a small "
            "module, list one function's instructions (the default)",
    "steps": "run MODULE:FUNCTION(ARG...) and print every instruction it executed",
    "explain": "print pyinterp.explain of MODULE:FUNCTION called with the example "
               "inputs the module provides",
    "report": "turn the run log in DIR (PYINTERP_TRACE_DIR=DIR) into one HTML page: "
              "source lines, graphs, recompiles, guards",
}
"""The subcommands, with their one-line help (``--help`` lists them)."""


def version_text():
    """``pyinterp 0.1.0 (pyinterp-capture; CPython 3.11.9; torch 2.13.0)``,
    without importing torch."""
    from importlib import metadata

    from pyinterp.versions import DISTRIBUTION

    try:
        torch_text = "torch " + metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch_text = "no torch"
    return "pyinterp %s (%s; %s %s; %s)" % (
        pyinterp.__version__, DISTRIBUTION, sys.implementation.name.replace("cpython", "CPython"),
        ".".join(map(str, sys.version_info[:3])), torch_text)


def parser():
    demo_options = argparse.ArgumentParser(add_help=False)
    demo_options.add_argument("--no-listing", action="store_true",
                              help="skip the instruction listing")
    p = argparse.ArgumentParser(prog="python -m pyinterp", parents=[demo_options],
                                usage="%(prog)s [-h] [--version] [--no-listing] "
                                      "[COMMAND [ARG ...]]",
                                description="pyinterp %s: a pure-Python re-interpreter of "
                                            "CPython bytecode that captures PyTorch graphs."
                                            % pyinterp.__version__,
                                epilog="Without a command, runs the demo. "
                                       "python -m pyinterp COMMAND --help: a command's options.")
    p.add_argument("--version", action="version", version=version_text())
    commands = p.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    for name, text in COMMANDS.items():
        commands.add_parser(name, help=text, description=text,
                            prog="python -m pyinterp " + name, add_help=name == "demo",
                            parents=[demo_options] if name == "demo" else [])
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["steps"]:
        from pyinterp import stepscli

        return stepscli.main(argv[1:])
    if argv[:1] == ["explain"]:
        from pyinterp import explaincli

        return explaincli.main(argv[1:])
    if argv[:1] == ["report"]:
        from pyinterp import reportcli

        return reportcli.main(argv[1:])
    args = parser().parse_args(argv)
    ok = demo()
    ok &= trace_demo()
    if not args.no_listing:
        explain_instructions(fails)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
