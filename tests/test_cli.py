"""``python -m pyinterp``: the commands, ``--version`` and ``explain
MODULE:FUNCTION``, run as a user would (steps: tests/interp/test_steps_cli.py)."""
import os
import re
import subprocess
import sys
import tomllib

import pytest

import pyinterp
from pyinterp import clitarget

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(pyinterp.__file__)))
EXAMPLE = os.path.join(ROOT, "docs", "examples", "explain_cli.py")


def _run(*args, cwd=None, prelude=None):
    env = dict(os.environ, PYTHONPATH=ROOT)
    if prelude is None:
        command = [sys.executable, "-m", "pyinterp", *args]
    else:
        command = [sys.executable, "-c", prelude + "\nfrom pyinterp.__main__ import main\n"
                   "raise SystemExit(main(%r))" % (list(args),)]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_help_lists_the_commands_that_exist():
    proc = _run("--help")
    assert proc.returncode == 0, proc.stderr
    listed = re.findall(r"^    (\w+) ", proc.stdout, re.M)
    assert listed == ["demo", "steps", "explain", "report"]
    for command in listed:
        sub = _run(command, "--help")
        assert sub.returncode == 0 and sub.stdout.startswith(
            "usage: python -m pyinterp %s" % command), sub.stdout + sub.stderr
    unknown = _run("nosuch", "x")
    assert unknown.returncode == 2 and "invalid choice: 'nosuch'" in unknown.stderr


def test_version_is_the_package_and_project_version():
    proc = _run("--version")
    assert proc.returncode == 0, proc.stderr
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        version = tomllib.load(f)["project"]["version"]
    assert proc.stdout.startswith("pyinterp %s (pyinterp-capture; CPython %d.%d.%d; "
                                  % ((version,) + tuple(sys.version_info[:3])))
    from importlib import metadata

    try:  # (the installed distribution's version: torch.__version__ may add +cu130)
        torch_version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        assert proc.stdout.endswith("; no torch)\n")
    else:
        assert proc.stdout.endswith("; torch %s)\n" % torch_version)


def _normalized(text):
    """Bar code addresses and the seconds measured."""
    return re.sub(r"\b\d+\.\d{3} s\b", "N s", re.sub(r"0x[0-9a-f]+", "0x?", text))


@pytest.mark.parametrize("target, inputs", [("model", "example_inputs"),
                                            ("scaled", "scaled_inputs")])
def test_explain_prints_what_explain_returns_for_the_scripts_inputs(target, inputs):
    """The command's output is ``print(pyinterp.explain(f, *inputs))`` in
    the script's own process (bar code addresses)."""
    pytest.importorskip("torch")
    args = ["explain", "%s:%s" % (EXAMPLE, target)]
    if inputs != "example_inputs":
        args += ["--inputs", inputs]
    proc = _run(*args)
    assert proc.returncode == 0, proc.stderr
    module, fn = clitarget.load("%s:%s" % (EXAMPLE, target), "test")
    given = getattr(module, inputs)()
    if isinstance(given, dict):
        expected = pyinterp.explain(fn, **given)
    else:
        expected = pyinterp.explain(fn, *given)
    assert _normalized(proc.stdout) == _normalized(str(expected) + "\n")
    assert expected.graph_count >= 1


def test_explain_details_follow_the_summary():
    pytest.importorskip("torch")
    proc = _run("explain", "%s:model" % EXAMPLE, "--details")
    assert proc.returncode == 0, proc.stderr
    module, fn = clitarget.load("%s:model" % EXAMPLE, "test")
    expected = pyinterp.explain(fn, *module.example_inputs())
    assert _normalized(proc.stdout) == _normalized("%s\n%s\n" % (expected,
                                                                   expected.details()))


def test_explain_says_what_is_missing(tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "noinputs.py"
    script.write_text("def f(x):\n    return x + 1\n\ndef bad():\n    return 3\n")
    proc = _run("explain", "%s:f" % script)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "noinputs.py defines no example_inputs" in proc.stderr
    assert "--inputs NAME" in proc.stderr
    proc = _run("explain", "%s:f" % script, "--inputs", "bad")
    assert proc.returncode != 0 and "must give a tuple or list" in proc.stderr
    assert "not int" in proc.stderr
    proc = _run("explain", "%s:g" % script)
    assert proc.returncode != 0 and "has no attribute 'g'" in proc.stderr


def test_explain_without_torch_names_the_extra():
    proc = _run("explain", "%s:model" % EXAMPLE, prelude="import sys; sys.modules['torch'] = None")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("explain: python -m pyinterp explain needs PyTorch")
    assert "pip install 'pyinterp-capture[torch]'" in proc.stderr
