"""``python -m pyinterp steps MODULE:FUNCTION [ARG ...]``, run as a user would."""
import os
import subprocess
import sys
import textwrap

import pytest

import pyinterp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(pyinterp.__file__)))

SOURCE = textwrap.dedent("""\
    def double(x):
        return x * 2

    def total(n, extra=0):
        t = 0
        for i in range(n):
            t += double(i)
        return t + extra

    def fails(x):
        return 1 / x
""")


@pytest.fixture
def module(tmp_path):
    path = tmp_path / "stepdemo.py"
    path.write_text(SOURCE)
    namespace = {}
    exec(compile(SOURCE, str(path), "exec"), namespace)
    return path, namespace


def _run(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("NO_COLOR", None)
    return subprocess.run([sys.executable, "-m", "pyinterp", "steps", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_a_file_module_prints_the_table_and_the_result(module):
    path, ns = module
    proc = _run("%s:total" % path, "3", "10", "--limit", "0")
    assert proc.returncode == 0, proc.stderr
    expected = pyinterp.steps(ns["total"], 3, 10)
    assert proc.stdout.splitlines()[-1] == "returned %d" % ns["total"](3, 10)
    table = proc.stdout.rsplit("\n", 2)[0]
    rows = [r for r in table.splitlines()[1:] if r.split()[0].isdigit()]
    assert len(rows) == len(expected)
    assert [int(r.split()[1]) for r in rows] == [s.offset for s in expected]
    assert "\x1b[" not in proc.stdout  # (not a terminal: no colour)


def test_a_dotted_module_and_the_filters(module):
    path, ns = module
    proc = _run("stepdemo:total", "2", "--function", "double", cwd=str(path.parent))
    assert proc.returncode == 0, proc.stderr
    assert "LOAD_FAST x" in proc.stdout and "LOAD_FAST n" not in proc.stdout
    proc = _run("stepdemo:total", "2", "--lines", "7-7", cwd=str(path.parent))
    rows = [r for r in proc.stdout.splitlines() if r.split() and r.split()[0].isdigit()]
    assert rows and {r.split()[0] for r in rows} == {"7"}
    proc = _run("stepdemo:total", "5", "--limit", "4", "--color", cwd=str(path.parent))
    steps = pyinterp.steps(ns["total"], 5)
    assert "... %d more steps" % (len(steps) - 4) in proc.stdout
    assert "\x1b[" in proc.stdout


def test_a_raising_call_exits_1_after_its_steps(module):
    path, ns = module
    proc = _run("%s:fails" % path, "0")
    assert proc.returncode == 1
    assert "raised ZeroDivisionError: division by zero" in proc.stdout.splitlines()[-2]
    assert proc.stdout.splitlines()[-1] == "raised ZeroDivisionError: division by zero"


def test_bad_targets_say_why(module):
    path, _ = module
    proc = _run("%s:nothere" % path)
    assert proc.returncode != 0 and "no attribute 'nothere'" in proc.stderr
    proc = _run("no_colon_here")
    assert proc.returncode != 0 and "MODULE:FUNCTION" in proc.stderr
    proc = _run("no_such_module_here:f")
    assert proc.returncode != 0 and "no module named 'no_such_module_here'" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = _run("%s:f" % path.with_name("missing.py"))
    assert proc.returncode != 0 and "no such file" in proc.stderr


def test_an_import_error_inside_the_module_keeps_its_traceback(tmp_path):
    (tmp_path / "needs_missing.py").write_text("import no_such_dependency_here\n")
    proc = _run("needs_missing:f", cwd=tmp_path)
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr and "no_such_dependency_here" in proc.stderr


def test_the_bare_command_is_still_the_demo():
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-m", "pyinterp", "--help"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "--no-listing" in proc.stdout


EXAMPLES = textwrap.dedent("""\
    def double(x):
        return x * 2

    def total(n):
        t = 0
        for i in range(n):
            t += double(i)
        return t
""")


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the README shows 3.11's bytecode")
def test_the_readme_listing_is_real_output(tmp_path):
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    command = "$ python -m pyinterp steps examples.py:total 2 --limit 6\n"
    listing = readme[readme.index(command) + len(command):]
    listing = listing[:listing.index("```")]
    (tmp_path / "examples.py").write_text(EXAMPLES)
    proc = _run("examples.py:total", "2", "--limit", "6", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == listing


def test_capture_from_the_command_line(module):
    pytest.importorskip("torch")
    path, ns = module
    proc = _run("%s:total" % path, "2", "--capture", "--function", "total")
    assert proc.returncode == 0, proc.stderr
    assert "read builtins.__dict__['range']: Identity(obj=range)" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "returned %d" % ns["total"](2)
