"""The public API: what `interpret` accepts, and how pyinterp refuses bad setups."""
import functools
import os
import shutil
import subprocess
import sys

import pytest

import pyinterp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_unsupported_versions_get_a_clear_message():
    message = pyinterp._unsupported_python_message((3, 10, 4))
    assert "3.10.4" in message and "3.11" in message
    message = pyinterp._unsupported_python_message((3, 14, 0))
    assert "3.14.0" in message and "supports CPython 3.11" in message
    assert pyinterp._unsupported_python_message(sys.version_info) is None
    assert "pypy" in pyinterp._unsupported_python_message(sys.version_info, "pypy")


_PYENV_PINNED = {"3.10": "3.10.13", "3.11": "3.11.7", "3.12": "3.12.1", "3.13": "3.13.0"}


def _import_with(version, code):
    """Run ``code`` under pyenv's Python ``version`` with this checkout on the path."""
    if version == "%d.%d" % sys.version_info[:2]:
        python = sys.executable
    else:
        python = shutil.which("python" + version)
    if python is None:
        pytest.skip("python%s is not installed on this machine" % version)
    env = dict(os.environ, PYENV_VERSION=_PYENV_PINNED[version], PYTHONPATH=ROOT)
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120, cwd=ROOT)
    if "command not found" in proc.stderr or "not installed" in proc.stderr:
        pytest.skip("python%s is not usable here: %s" % (version, proc.stderr.strip()))
    return proc


@pytest.mark.parametrize("version", ["%d.%d" % v for v in pyinterp.SUPPORTED_VERSIONS])
def test_import_on_every_supported_installed_python(version):
    """Where pyenv has a supported Python, pyinterp imports and runs there."""
    proc = _import_with(version, "import pyinterp\n"
                                 "print(pyinterp.interpret(lambda x: [x + i for i in (1, 2)])(40))")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[41, 42]"


def test_import_on_an_unsupported_installed_python_fails_clearly():
    """Where pyenv has an older Python, importing there names the supported range."""
    proc = _import_with("3.10", "import pyinterp")
    assert proc.returncode != 0
    assert ("ImportError: pyinterp supports CPython 3.11, 3.12, 3.13; this is Python 3.10"
            in proc.stderr), proc.stderr


def test_interpret_works_without_torch():
    code = (
        "import sys\n"
        "sys.modules['torch'] = None  # any 'import torch' now fails\n"
        "import pyinterp\n"
        "print(pyinterp.interpret(lambda xs: sorted(xs, key=lambda v: -v))([3, 1, 2]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[3, 2, 1]"


def _add(a, b=10):
    return a + b


class _Counter:
    def __init__(self, start):
        self.value = start

    def bump(self, by=1):
        self.value += by
        return self.value

    def __call__(self, x):
        return x * self.value


@pytest.mark.parametrize("make, args, expected", [
    (lambda: _add, (1,), 11),
    (lambda: (lambda x: x * 3), (4,), 12),
    (lambda: _Counter(5).bump, (2,), 7),
    (lambda: _Counter(3), (4,), 12),
    (lambda: functools.partial(_add, b=100), (1,), 101),
    (lambda: dict, ((("a", 1),),), {"a": 1}),
])
def test_interpret_accepts_every_kind_of_callable(make, args, expected):
    assert pyinterp.interpret(make())(*args) == expected


def test_interpret_constructs_classes():
    counter = pyinterp.interpret(_Counter)(7)
    assert type(counter) is _Counter and counter.value == 7


def test_interpret_keeps_identity_of_the_original():
    wrapped = pyinterp.interpret(_add)
    assert wrapped.__wrapped__ is _add
    assert wrapped.__name__ == "_add"
    assert "interpret" in repr(wrapped)


def test_interpret_as_a_method_decorator():
    class Box:
        def __init__(self, v):
            self.v = v

        @pyinterp.interpret
        def doubled(self):
            return self.v * 2

    assert Box(21).doubled() == 42


def test_non_callable_gives_cpythons_type_error():
    not_callable = 5
    with pytest.raises(TypeError) as native:
        not_callable()
    with pytest.raises(TypeError) as interpreted:
        pyinterp.interpret(not_callable)()
    assert str(interpreted.value) == str(native.value)


def test_each_call_interprets_afresh():
    calls = []

    def f(x):
        calls.append(x)
        return len(calls)

    g = pyinterp.interpret(f)
    assert [g(1), g(2), g(3)] == [1, 2, 3]


def test_nested_interpret_runs_a_nested_interpreter():
    def inner(x):
        return x * 2

    def outer(x):
        return pyinterp.interpret(inner)(x) + 1

    limit = sys.getrecursionlimit()
    assert pyinterp.interpret(outer)(5) == 11
    assert sys.getrecursionlimit() == limit  # restored after the outermost run


def test_recursion_limit_is_restored_after_a_recursion_error():
    def runaway(n):
        return runaway(n + 1)

    limit = sys.getrecursionlimit()
    with pytest.raises(RecursionError):
        pyinterp.interpret(runaway)(0)
    assert sys.getrecursionlimit() == limit
    assert pyinterp.interpret(_add)(1, 2) == 3
