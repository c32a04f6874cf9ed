"""``python -m pyinterp explain MODULE:FUNCTION [--inputs NAME] [--details]``:
print ``pyinterp.explain`` of one call of a script's function (its summary;
with ``--details``, its details after it).

MODULE:FUNCTION is read as ``python -m pyinterp steps`` reads it
(:mod:`.clitarget`); FUNCTION may name a function, a method or an
``nn.Module`` instance.  The script provides the call's example inputs:
``example_inputs`` in the module, or the name given with ``--inputs``, is a
function of no arguments (or a plain value) giving a tuple or list of
positional arguments, or a dict of keyword arguments.  See the README's
"Command line".
"""
import argparse
import sys

from .clitarget import attribute, load

DEFAULT_INPUTS = "example_inputs"


def parser():
    p = argparse.ArgumentParser(
        prog="python -m pyinterp explain",
        description="Trace one call of MODULE:FUNCTION afresh and print what pyinterp "
                    "captured: a summary of the graphs, breaks with their reasons, "
                    "specializations and guards (pyinterp.explain).",
        epilog="The module provides the inputs: a function %s() (or the one --inputs "
               "names) returning a tuple of positional arguments or a dict of keyword "
               "arguments." % DEFAULT_INPUTS)
    p.add_argument("target", metavar="MODULE:FUNCTION",
                   help="a dotted module name or a path to a .py file, and a function "
                        "(or nn.Module instance) in it")
    p.add_argument("--inputs", metavar="NAME", default=DEFAULT_INPUTS,
                   help="the function in MODULE that returns the example inputs "
                        "(default: %(default)s)")
    p.add_argument("--details", action="store_true",
                   help="then print the details: every guard, the guard code, the mock "
                        "and each graph")
    return p


def main(argv):
    args = parser().parse_args(argv)
    from .capture.torchversion import require_torch

    try:
        require_torch("python -m pyinterp explain")
    except ModuleNotFoundError as exc:
        raise SystemExit("explain: %s" % exc) from None
    module, fn = load(args.target, "explain")
    call_args, call_kwargs = example_inputs(module, args.inputs, args.target)
    from . import explain

    explanation = explain(fn, *call_args, **call_kwargs)
    print(explanation)
    if args.details:
        print(explanation.details())
    sys.stdout.flush()
    return 0


def example_inputs(module, name, target):
    """``(args, kwargs)`` from the module's inputs provider ``name``."""
    module_name = target.rpartition(":")[0]
    if not hasattr(module, name.split(".")[0]):
        raise SystemExit(
            "explain: %s defines no %s: define %s() returning the call's arguments as a "
            "tuple (or a dict of keyword arguments), or name another function with "
            "--inputs NAME" % (module_name, name, name))
    provider = attribute(module, name, module_name, "explain")
    inputs = provider() if callable(provider) else provider
    if isinstance(inputs, (tuple, list)):
        return tuple(inputs), {}
    if isinstance(inputs, dict):
        return (), inputs
    raise SystemExit("explain: %s.%s must give a tuple or list of positional arguments "
                     "or a dict of keyword arguments, not %s"
                     % (module_name, name, type(inputs).__name__))
