"""Differential testing of pyinterp against CPython: the one runner.

Three parts:

* :mod:`pyinterp.testing.differential` runs a function natively and through
  :func:`pyinterp.interpret`, and compares everything observable (return
  value or exception with its chain, yielded items, printed output,
  warnings, ``sys.exc_info()`` afterwards, mutated arguments and module
  globals).
* :mod:`pyinterp.testing.cases` is the form hand-written tests take:
  ``case(source, expect=..., raises=...)`` table entries, run by
  ``run_case`` / ``check``, which also pin what CPython itself does.
* :mod:`pyinterp.testing.strategies` holds Hypothesis strategies that write
  random, well-typed programs exercising one or more language families.

Typical use::

    from hypothesis import given
    from pyinterp.testing import assert_same_source, programs

    @given(programs(families=["generators"]))
    def test_generators(program):
        assert_same_source(program.source, program.entry, program.args)

See ``docs/fuzzing.md``.  The strategies need Hypothesis (a test
dependency); the runner needs only attrs.  Nothing here imports torch or
graph capture.
"""
from .cases import case, check, run_case
from .differential import (
    ActiveException,
    ExceptionRecord,
    FuzzTimeout,
    Outcome,
    assert_same,
    assert_same_source,
    canonical,
    check_same,
    check_same_source,
    diff_outcomes,
    divergence_report,
    import_file,
    load_module,
    load_source,
    raised_by,
    run,
    run_interpreted,
    run_native,
    run_source,
)

__all__ = [
    "ActiveException",
    "ExceptionRecord",
    "FuzzTimeout",
    "Outcome",
    "assert_same",
    "assert_same_source",
    "canonical",
    "case",
    "check",
    "check_same",
    "check_same_source",
    "diff_outcomes",
    "divergence_report",
    "import_file",
    "load_module",
    "load_source",
    "raised_by",
    "run",
    "run_case",
    "run_interpreted",
    "run_native",
    "run_source",
    "FAMILIES",
    "Program",
    "arguments",
    "functions",
    "programs",
]


def __getattr__(name):
    # The strategies import Hypothesis; load them only when asked for.
    if name in ("FAMILIES", "Program", "arguments", "functions", "programs", "strategies"):
        from . import strategies

        return strategies if name == "strategies" else getattr(strategies, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
