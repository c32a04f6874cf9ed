#!/usr/bin/env python3
"""CPython's own language tests, run natively and through ``pyinterp.interpret``.

For each module of CPython's ``test`` package named below (the one installed
with the Python that runs it), and for each Python version asked for, this
script runs the module's unittest suite twice, each time in a fresh
subprocess:

* **native**: the suite as ``python -m unittest`` would run it;
* **interpreted**: the same suite, with every test's Python code run by
  ``pyinterp.interpret``: a ``TestCase``'s ``setUp``, test method and
  ``tearDown`` (and everything they call, ``unittest``'s assertion helpers
  included); a doctest (``DocTestCase``, as ``test_generators`` has) runs
  its whole ``runTest``, so doctest's runner and every example it executes
  are interpreted.  Class and module fixtures (``setUpClass``...) and
  cleanups run natively.

A test *passes under interpret* when its interpreted outcome equals its
native one.  The table counts the tests whose native outcome is a pass (or
an expected failure) and how many of those pass under interpret.

Usage::

    python benchmarks/cpython_suites.py                        # every version found, every module
    python benchmarks/cpython_suites.py --versions 3.11 --modules test_patma
    python benchmarks/cpython_suites.py --failures             # list each failing test and why
    python benchmarks/cpython_suites.py --json out.json

The Python of each version is looked up as ``.venv`` (3.11), ``.venv312``,
``.venv313`` in this checkout (or, in a ``git worktree``, in the main
checkout), then ``pythonX.Y`` on the PATH; ``--python
X.Y=/path/to/python`` overrides.  The repository root goes first on the
child's ``PYTHONPATH`` (this checkout's pyinterp is the one measured).  Each
test has ``--timeout`` seconds (default 120) before it counts as failed.

Exit status: 0 when every asked-for suite ran natively (whatever the
rates), 1 when one did not.  An interpreted suite that stops early (a
crash) is reported, and the tests it did not reach count as failing.
"""
import argparse
import doctest
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import traceback
import unittest
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

MODULES = ("test_exceptions", "test_generators", "test_raise", "test_iter",
           "test_patma", "test_contextlib", "test_class")
VERSIONS = ("3.11", "3.12", "3.13")
_VENVS = {"3.11": ".venv", "3.12": ".venv312", "3.13": ".venv313"}
OK = ("pass", "xfail")
"""Native outcomes counted as passing (unittest's own "OK")."""


# ---------------------------------------------------------------------------
# The child: run one module in one mode, write each test's outcome as JSON.
# ---------------------------------------------------------------------------

def _child(module_name, mode, out_path, timeout):
    module = importlib.import_module("test." + module_name)
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    if mode == "interpret":
        import pyinterp

        for test in _flatten(suite):
            _interpret_test(pyinterp.interpret, test)
    saved_stdout, saved_stderr = sys.stdout, sys.stderr
    with open(out_path, "w", buffering=1) as out, open(os.devnull, "w") as sink:
        result = _Recorder(timeout, out)
        sys.stdout = sys.stderr = sink  # tests print; the parent reads the file
        try:
            suite.run(result)
        finally:
            sys.stdout, sys.stderr = saved_stdout, saved_stderr
        result.write_all()
        out.write(json.dumps([_DONE]) + "\n")


_DONE = "<suite finished>"
"""The child's last line: without it the suite did not finish."""


def _flatten(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _flatten(item)
        else:
            yield item


def _interpret_test(interpret, test):
    """Make ``test`` run its Python code through ``interpret``.

    The wrappers are instance attributes, so unittest's own ``run`` (native)
    finds them where it looks the methods up; the test method's wrapper
    carries the function's unittest marks (``__unittest_skip__``,
    ``__unittest_expecting_failure__``)."""
    if isinstance(test, doctest.DocTestCase):
        test.runTest = interpret(test.runTest)
        return
    name = getattr(test, "_testMethodName", None)
    if name is None:
        return
    method = getattr(test, name)
    wrapper = interpret(method)
    marks = getattr(getattr(method, "__func__", method), "__dict__", {})
    # unittest's marks only: a decorated test's __wrapped__ (the undecorated,
    # unbound function) must not replace the wrapper's own
    wrapper.__dict__.update({key: value for key, value in marks.items()
                             if key.startswith("__unittest")})
    setattr(test, name, wrapper)
    test.setUp = interpret(test.setUp)
    test.tearDown = interpret(test.tearDown)


class _Timeout(BaseException):
    """A test ran past ``--timeout`` seconds (SIGALRM)."""


class _Recorder(unittest.TestResult):
    """Each test's outcome: pass, fail, error, skip, xfail or xpass, with
    the last line of the first failure's traceback (and the sub-test),
    written to ``out`` as one JSON line per test as it finishes (so that a
    crash loses only the tests after it)."""

    def __init__(self, timeout, out):
        super().__init__()
        self.outcomes = {}
        self._timeout = timeout
        self._out = out

    def _on_alarm(self, signum, frame):
        raise _Timeout("timed out after %ss" % self._timeout)

    def startTest(self, test):
        super().startTest(test)
        self.outcomes[test.id()] = ["pass", ""]
        if self._timeout:
            signal.signal(signal.SIGALRM, self._on_alarm)
            signal.alarm(self._timeout)

    def stopTest(self, test):
        if self._timeout:
            signal.alarm(0)
        super().stopTest(test)
        self._write(test.id())

    def _write(self, test_id):
        self._out.write(json.dumps([test_id] + self.outcomes[test_id]) + "\n")

    def write_all(self):
        """Write every outcome again (fixture errors have no stopTest)."""
        for test_id in self.outcomes:
            self._write(test_id)

    def _set(self, test, outcome, err=None, where=""):
        record = self.outcomes.setdefault(test.id(), ["pass", ""])
        if record[0] in ("fail", "error"):
            return  # the first failure stays
        record[0] = outcome
        if err is not None:
            record[1] = where + _last_line(err)

    def addError(self, test, err):
        self._set(test, "error", err)

    def addFailure(self, test, err):
        self._set(test, "fail", err)

    def addSubTest(self, test, subtest, err):
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self._set(test, "fail" if failed else "error", err, subtest._subDescription() + " ")

    def addSkip(self, test, reason):
        self._set(test, "skip")

    def addExpectedFailure(self, test, err):
        self._set(test, "xfail")

    def addUnexpectedSuccess(self, test):
        self._set(test, "xpass")


def _last_line(err):
    exc_type, exc, _ = err
    lines = traceback.format_exception_only(exc_type, exc)
    text = "".join(lines).strip().splitlines()
    return " | ".join(text)[:300] if text else exc_type.__name__


# ---------------------------------------------------------------------------
# The parent: one subprocess per (version, module, mode); the table.
# ---------------------------------------------------------------------------

def _python_for(version, overrides):
    if version in overrides:
        return overrides[version]
    for checkout in _checkouts():
        venv = checkout / _VENVS.get(version, "-") / "bin" / "python"
        if venv.exists():
            return str(venv)
    return shutil.which("python" + version)


def _checkouts():
    """This checkout, then the main one when this is a ``git worktree``
    (the virtual environments usually live only there)."""
    yield REPO_ROOT
    try:
        common = subprocess.run(["git", "rev-parse", "--path-format=absolute",
                                 "--git-common-dir"], cwd=REPO_ROOT, capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return
    if common and Path(common).parent != REPO_ROOT:
        yield Path(common).parent


def run_suite(python, module, mode, timeout):
    """``(outcomes, problem)``: ``{test id: [outcome, detail]}`` of one
    module in one mode, and None, or a string saying why the suite did not
    finish (the tests it did not reach are missing from ``outcomes``)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "outcomes.jsonl")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env.pop("PYENV_VERSION", None)
        cmd = [python, os.path.abspath(__file__), "--child", module, mode, out, str(timeout)]
        proc = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True)
        outcomes, finished = {}, False
        if os.path.exists(out):
            with open(out) as f:
                for line in f:
                    record = json.loads(line)
                    if record == [_DONE]:
                        finished = True
                    else:
                        outcomes[record[0]] = record[1:]
        if finished:
            return outcomes, None
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return outcomes, "%s run stopped (exit %s) after %d tests: %s" % (
            mode, proc.returncode, len(outcomes), " / ".join(tail))


def compare(native, interpreted):
    """``(passing natively, passing under interpret, failures)``: failures are
    ``(test id, native outcome, interpreted outcome, detail)``."""
    passing = [t for t, (outcome, _) in native.items() if outcome in OK]
    failures = []
    for test in passing:
        got = interpreted.get(test, ["missing", ""])
        if got[0] != native[test][0]:
            failures.append((test, native[test][0], got[0], got[1]))
    return len(passing), len(passing) - len(failures), failures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", nargs="*", default=list(VERSIONS))
    parser.add_argument("--modules", nargs="*", default=list(MODULES))
    parser.add_argument("--python", action="append", default=[], metavar="X.Y=PATH")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per test")
    parser.add_argument("--failures", action="store_true", help="list failing tests")
    parser.add_argument("--json", help="write every outcome to this file")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        module, mode, out, timeout = args.child
        _child(module, mode, out, int(timeout))
        return 0
    overrides = dict(item.split("=", 1) for item in args.python)
    rows, notes, report = [], [], {}
    for version in args.versions:
        python = _python_for(version, overrides)
        if python is None:
            notes.append("Python %s: not found, skipped" % version)
            continue
        totals = [0, 0]
        for module in args.modules:
            native, problem = run_suite(python, module, "native", args.timeout)
            report.setdefault(version, {})[module] = entry = {"native": native}
            if problem is not None:
                notes.append("%s %s: the native suite did not finish: %s"
                             % (version, module, problem))
                rows.append((version, module, None, None))
                continue
            interpreted, problem = run_suite(python, module, "interpret", args.timeout)
            entry["interpreted"] = interpreted
            if problem is not None:
                notes.append("%s %s: %s (the rest count as failing)" % (version, module, problem))
            passing, ok, failures = compare(native, interpreted)
            totals[0] += passing
            totals[1] += ok
            rows.append((version, module, passing, ok))
            print("%s %-16s %4d / %4d  %6.2f%%" % (version, module, ok, passing,
                                                  _percent(ok, passing)), flush=True)
            if args.failures:
                notes.extend("%s %s: native %s, interpreted %s: %s" % (version, *failure)
                             for failure in failures)
        rows.append((version, "total", totals[0], totals[1]))
    print()
    print(_table(rows))
    if notes:
        print()
        print("\n".join(notes))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, sort_keys=True)
    return 1 if any(passing is None for _, _, passing, _ in rows) else 0


def _percent(ok, passing):
    return 100.0 * ok / passing if passing else 100.0


def _table(rows):
    lines = ["| Python | module | pass natively | pass under interpret | rate |",
             "|---|---|---:|---:|---:|"]
    for version, module, passing, ok in rows:
        if passing is None:
            lines.append("| %s | %s | - | - | did not run |" % (version, module))
            continue
        name = "**total**" if module == "total" else module
        lines.append("| %s | %s | %d | %d | %.2f%% |" % (version, name, passing, ok,
                                                          _percent(ok, passing)))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
