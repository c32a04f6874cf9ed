"""Hand-written differential cases: pin what CPython does, compare pyinterp.

A test module keeps a table of small programs, each with what CPython
returns, raises or prints::

    CASES = {
        "add": case('''
            def f(x):
                return x + 1
        ''', args=(1,), expect=2),
        "bad_add": case('''
            def f():
                return 1 + "a"
        ''', raises=TypeError),
    }

    @pytest.mark.parametrize("name", sorted(CASES))
    def test_cases(name):
        run_case(CASES[name])

:func:`check` loads the source into two fresh modules
(:func:`~pyinterp.testing.differential.compare_source`), calls ``entry``
natively in one and through ``pyinterp.interpret(..., debug=True)`` in the
other, and fails on any difference between the two
:class:`~pyinterp.testing.differential.Outcome` records (return value or
exception with its chain, generator items, stdout and stderr, warnings,
unraisable reports, ``sys.exc_info()`` after the call, arguments and module
globals afterwards, a module's ``log`` list among them).  ``expect``,
``raises`` and ``output`` then pin what CPython itself does, so that a case
cannot pass by exercising something other than what it claims.
"""
import textwrap

from .differential import canonical, compare_source, diff_outcomes, divergence_report

__all__ = ["case", "check", "run_case"]

_NOTHING = object()


def check(source, entry="f", args=(), kwargs=None, *, module_name="difftest",
          expect=_NOTHING, raises=None, output=None, consume=True,
          under_exception=False, setup=None, debug=True, ignore_globals=()):
    """Run ``entry`` of ``source`` natively and interpreted; assert identical outcomes.

    ``args``/``kwargs`` may be callables of no argument, called to get the
    arguments; each run gets its own deep copy.  ``consume`` drains a
    returned generator and compares its items.  ``under_exception=True``
    makes the call from inside an ``except`` block (implicit chaining,
    ``sys.exc_info()``).  ``setup`` (no arguments) runs before each of the
    two runs, to reset outside state such as ``sys.modules``.  ``debug``
    runs the interpreter in debug mode (stack effects checked).
    ``ignore_globals`` names module globals whose values differ by design
    (they are left out of the comparison; check them in the test).

    ``expect`` (the return value, compared through ``canonical``),
    ``raises`` (an exception type) and ``output`` (printed text) assert what
    CPython itself does.  Returns the native
    :class:`~pyinterp.testing.differential.Outcome`.
    """
    args = args() if callable(args) else args
    kwargs = kwargs() if callable(kwargs) else kwargs
    native, interpreted = compare_source(
        source, entry, args, kwargs, setup=setup, module_name=module_name,
        under_exception=under_exception, consume_generators=consume, debug=debug,
        record_interrupts=True, ignore_globals=ignore_globals)
    lines = diff_outcomes(native, interpreted)
    if lines:
        raise AssertionError(divergence_report(lines, native, interpreted, source, args))
    _pin(native, expect, raises, output)
    return native


def _pin(native, expect, raises, output):
    """Assert what CPython did: ``expect``, ``raises``, ``output``."""
    if raises is not None:
        assert isinstance(native.exception, raises), (
            "CPython did not raise %r: %r" % (raises, native))
    elif native.exception is not None and expect is not _NOTHING:
        raise AssertionError("CPython raised unexpectedly:\n" + native.traceback)
    if expect is not _NOTHING:
        assert native.returned == canonical(expect), (
            "CPython returned %s, expected %s" % (native.returned, canonical(expect)))
    if output is not None:
        assert native.stdout == output, "CPython printed %r" % (native.stdout,)


def case(source, **options):
    """A table entry for :func:`run_case`: dedented source plus :func:`check` options."""
    return (textwrap.dedent(source), options)


def run_case(entry):
    """Run one :func:`case` entry through :func:`check`; return the native outcome."""
    source, options = entry
    return check(source, **options)
