"""``python -m pyinterp steps MODULE:FUNCTION [ARG ...]``: print a step table.

MODULE is a dotted module name (importable from the current directory) or
the path of a ``.py`` file; FUNCTION a name in it (``Class.method`` reaches
further); each ARG a Python literal (``ast.literal_eval``; anything else is
passed as a string).  Prints the table of ``pyinterp.steps`` and then what
the call returned or raised; the exit status is 1 if it raised.
"""
import argparse
import ast
import os
import sys

from .clitarget import load
from .stepping import steps
from .steptable import DEFAULT_LIMIT, parse_lines


def parser():
    p = argparse.ArgumentParser(
        prog="python -m pyinterp steps",
        description="Run MODULE:FUNCTION(ARG...) inside pyinterp and print every "
                    "instruction it executed, with the value stack after it.")
    p.add_argument("target", metavar="MODULE:FUNCTION",
                   help="a dotted module name or a path to a .py file, and a function in it")
    p.add_argument("args", nargs="*", metavar="ARG",
                   help="arguments, as Python literals (ast.literal_eval)")
    p.add_argument("--capture", action="store_true",
                   help="run the call as pyinterp.trace's capture, showing what each "
                        "instruction recorded (guards, writes, FX nodes)")
    p.add_argument("--function", metavar="NAME", help="show only this function's steps")
    p.add_argument("--lines", metavar="A-B", type=parse_lines,
                   help="show only steps on these source lines")
    p.add_argument("--limit", metavar="N", type=int, default=DEFAULT_LIMIT,
                   help="show at most N steps (0: all; default %(default)s)")
    p.add_argument("--color", dest="color", action="store_true", default=None,
                   help="colour the table (default: when stdout is a terminal)")
    p.add_argument("--no-color", dest="color", action="store_false")
    return p


def main(argv):
    args = parser().parse_args(argv)
    _, fn = load(args.target, "steps")
    call_args = [literal(a) for a in args.args]
    color = args.color if args.color is not None else _color_terminal(sys.stdout)
    result = steps(fn, *call_args, capture=args.capture)
    table = result.format(color=color, function=args.function, lines=args.lines,
                          limit=args.limit or None)
    if result.error is not None:
        outcome, status = "raised %s: %s" % (type(result.error).__name__, result.error), 1
    else:
        outcome, status = "returned %s" % _short(result._result), 0
    try:
        print(table)
        print(outcome)
        sys.stdout.flush()
    except BrokenPipeError:  # (| head)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return status


def literal(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _short(value):
    from .interp.steps import _short as short
    return short(value, 0)


def _color_terminal(stream):
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
