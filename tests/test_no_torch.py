"""Without torch, ``trace`` and ``explain`` fail at once with an error that
names the extra to install; ``interpret`` still works."""
import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

import pyinterp
from pyinterp.versions import DISTRIBUTION, torch_requirement

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(pyinterp.__file__)))

PROGRAM = textwrap.dedent("""\
    import pyinterp

    def f(x):
        return x + 1

    assert pyinterp.interpret(f)(1) == 2
    for call in (lambda: pyinterp.trace(f), lambda: pyinterp.trace(backend="eager"),
                 lambda: pyinterp.explain(f, 1)):
        try:
            call()
        except ModuleNotFoundError as exc:
            print(exc.name, "|", exc)
        else:
            print("no error")
""")


def _hidden_site(tmp_path):
    """A folder with pyinterp's own dependencies and nothing else, for a
    ``python -S`` that has no site-packages (so no torch)."""
    folder = tmp_path / "site"
    folder.mkdir()
    for name in ("bytecode", "attr", "attrs"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            os.symlink(list(spec.submodule_search_locations)[0], folder / name)
    return folder


@pytest.mark.parametrize("how", ["not installed", "import blocked"])
def test_trace_without_torch_names_the_extra(tmp_path, how):
    if how == "not installed":
        args = ["-S", "-c", PROGRAM]
        path = os.pathsep.join([ROOT, str(_hidden_site(tmp_path))])
    else:
        args = ["-c", "import sys; sys.modules['torch'] = None\n" + PROGRAM]
        path = ROOT
    proc = subprocess.run([sys.executable, *args], env=dict(os.environ, PYTHONPATH=path),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 3, proc.stdout
    install = "pip install '%s[torch]' (torch%s" % (DISTRIBUTION, torch_requirement())
    for line, api in zip(lines, ["trace", "trace", "explain"]):
        name, message = line.split(" | ")
        assert name == "torch"
        assert message.startswith("pyinterp.%s needs PyTorch, which is not installed" % api)
        assert install in message
