"""Generated code written as real files (issue 17, item 5).

With ``pyinterp.dump_to(dir)`` (or ``PYINTERP_DUMP_DIR``) each new cache
entry's guard, mock, resume functions and FX graph are written to ``dir``
and their code objects point at those files: the line numbers the code
reports are lines of the file's text, so tracebacks print the right
statement and a debugger (``bdb``, pdb's engine) stops at a breakpoint set
by ``file:line``.  Results and exceptions stay eager's.  Off by default.
"""
import bdb
import os
import subprocess
import sys
import traceback

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from pyinterp import config  # noqa: E402
from pyinterp.testing import import_file, raised_by  # noqa: E402

from test_trace_tracebacks import SOURCE as TRACEBACKS_SOURCE  # noqa: E402  (f, bump, store...)

SOURCE = TRACEBACKS_SOURCE + '''
def split(x):
    y = x * 2 + 1
    n = int(y.abs().argmax())  # a graph break: a Python int from tensor data
    if n == 3:
        raise ValueError("last one is the largest")
    return y[n] + y.sum()
'''

FIRST = torch.tensor([5.0, 1.0, 1.0, 1.0])
LAST = torch.tensor([1.0, 1.0, 1.0, 5.0])


@pytest.fixture
def module(tmp_path):
    return import_file(tmp_path, "user_module_dump", SOURCE)


@pytest.fixture
def dump(tmp_path):
    before = config.dump_dir
    with pyinterp.dump_to(tmp_path / "dump") as directory:
        yield directory
    assert config.dump_dir == before


def _file_line(path, lineno):
    with open(path) as f:
        return f.read().split("\n")[lineno - 1].strip()


def _check_points_at(code, path):
    """``code`` (and what it nests) reports ``path``, and each of its line
    numbers is a non-empty line of the file."""
    with open(path) as f:
        lines = f.read().split("\n")
    assert code.co_filename == path
    for _, _, line in code.co_lines():
        if line is not None:
            assert lines[line - 1].strip(), (path, line)
    for const in code.co_consts:
        if hasattr(const, "co_lines"):
            _check_points_at(const, path)


def test_files_for_guard_mock_resume_and_graph(module, dump):
    traced = pyinterp.trace(module.split, backend="eager")
    for _ in range(3):
        torch.testing.assert_close(traced(FIRST.clone()), module.split(FIRST.clone()))
    names = set(os.listdir(dump))
    line = 1 + SOURCE.split("\n").index("    n = int(y.abs().argmax())  # a graph break: "
                                        "a Python int from tensor data")
    stem = "split.entry1."
    assert {stem + kind + ".py" for kind in ("guard", "mock", "graph0")} <= names
    resume = stem + "resume_at_line%d.py" % line
    assert resume in names
    # the resume function's own entry, captured on the second call
    assert {"split.resume_at_line%d.entry1.%s.py" % (line, kind)
            for kind in ("guard", "mock", "graph0")} <= names

    entry = traced._entries.snapshot[0]
    trace = entry.trace
    assert set(trace.dump_files) == {"guard", "mock", "graph0", "resume_at_line%d" % line}
    _check_points_at(entry.guard.__code__, trace.dump_files["guard"])
    _check_points_at(entry.mock.__code__, trace.dump_files["mock"])
    with open(trace.dump_files["guard"]) as f:
        assert f.read() == trace.guard_text + "\n"
    with open(trace.dump_files["mock"]) as f:
        assert f.read() == trace.mock_text + "\n"
    gm = trace.graphs[0]
    _check_points_at(type(gm).forward.__code__, trace.dump_files["graph0"])
    with open(trace.dump_files["graph0"]) as f:
        assert f.read().rstrip() == gm.code.rstrip()
    # the resume function: the user's lines at their own numbers
    resume_code = next(v.__wrapped__.__code__ for v in entry.mock.__globals__.values()
                       if "resumes" in getattr(v, "__dict__", {}))
    _check_points_at(resume_code, trace.dump_files["resume_at_line%d" % line])
    with open(module.__file__) as f:
        user = f.read().split("\n")
    for _, _, lineno in resume_code.co_lines():
        if lineno is not None:
            assert _file_line(resume_code.co_filename, lineno) == user[lineno - 1].strip()


def test_exception_in_a_dumped_resume_function_shows_its_line(module, dump):
    traced = pyinterp.trace(module.split, backend="eager")
    for _ in range(3):
        traced(FIRST.clone())  # captured; then the resume function too
    for _ in range(2):  # (the resume function's capture raises, then a native run)
        eager = raised_by(lambda: module.split(LAST.clone()))
        error = raised_by(lambda: traced(LAST.clone()))
        assert type(error) is type(eager) and str(error) == str(eager)
        frames = [e for e in traceback.extract_tb(error.__traceback__)
                  if e.filename.startswith(dump)]
        assert [os.path.basename(e.filename).split(".")[-2] for e in frames] == \
            ["mock", "resume_at_line%d" % (frames[-1].lineno - 2)]
        assert frames[-1].line == 'raise ValueError("last one is the largest")'
        assert _file_line(frames[-1].filename, frames[-1].lineno) == frames[-1].line
        assert _file_line(frames[0].filename, frames[0].lineno).startswith("return resume_split(")


def test_exception_in_a_dumped_mock_shows_its_line(module, dump):
    traced = pyinterp.trace(module.store, backend="eager")
    traced(torch.ones(2), module.Strict())  # captured: the write is replayed on hits
    box, eager_box = module.Strict(), module.Strict()
    object.__setattr__(box, "writes", 1)
    object.__setattr__(eager_box, "writes", 1)
    eager = raised_by(lambda: module.store(torch.ones(2), eager_box))
    error = raised_by(lambda: traced(torch.ones(2), box))
    assert type(error) is type(eager) and str(error) == str(eager) == "written twice"
    mock = traced._entries.snapshot[0].trace.dump_files["mock"]
    frames = [e for e in traceback.extract_tb(error.__traceback__) if e.filename == mock]
    assert len(frames) == 1
    assert frames[0].line == _file_line(mock, frames[0].lineno)
    user_line = 1 + SOURCE.split("\n").index("    box.value = x * 2")
    assert frames[0].line.endswith("# user_module_dump.py:%d" % user_line)


@pytest.mark.parametrize("name", ["f", "bump"])
def test_hit_whose_dumped_graph_raises_still_names_the_users_line(module, dump, name):
    """A hit whose graph raises: the native rerun (``f``), or the graph's
    frames replaced by the user's (``bump`` wrote an input), as without
    dumping; the graph's code runs from its dumped file."""
    fn = getattr(module, name)
    traced = pyinterp.trace(fn, backend="eager")
    traced(torch.ones(3), torch.tensor(1))  # captured
    entry = traced._entries.snapshot[0]
    forward = type(entry.trace.graphs[0]).forward.__code__
    assert forward.co_filename == entry.trace.dump_files["graph0"]
    # (how the mock tells that its graph raised: the native rerun of ``f``)
    assert entry.mock.graph_code is (forward if name == "f" else None)
    eager = raised_by(lambda: fn(torch.ones(3), torch.tensor(7)))
    hit = raised_by(lambda: traced(torch.ones(3), torch.tensor(7)))
    assert len(traced._entries) == 1
    assert type(hit) is type(eager) and str(hit) == str(eager)

    def user(exc):
        return [(e.lineno, e.name, e.line) for e in traceback.extract_tb(exc.__traceback__)
                if e.filename == module.__file__]

    assert user(hit) == user(eager)
    assert not any(e.filename.startswith(dump) for e in traceback.extract_tb(hit.__traceback__))


class _Breaks(bdb.Bdb):
    """pdb's engine, without the prompt: notes where it stops, continues."""

    def __init__(self):
        super().__init__()
        self.stops = []

    def user_line(self, frame):
        self.stops.append((frame.f_code.co_filename, frame.f_lineno))
        self.set_continue()


def test_breakpoints_and_line_events_in_a_dumped_guard(module, dump):
    traced = pyinterp.trace(module.f, backend="eager")
    args = (torch.ones(3), torch.tensor(1))
    traced(*args)  # captured
    files = traced._entries.snapshot[0].trace.dump_files
    guard, mock = files["guard"], files["mock"]
    with open(guard) as f:
        guard_lines = f.read().split("\n")
    last = guard_lines.index("    return True") + 1

    events = []

    def tracer(frame, event, arg):
        if frame.f_code.co_filename == guard and event == "line":
            events.append(frame.f_lineno)
        return tracer

    sys.settrace(tracer)
    try:
        result = traced(*args)
    finally:
        sys.settrace(None)
    torch.testing.assert_close(result, module.f(*args))
    # every check, in order, then ``return True``
    assert events == list(range(2, last + 1))

    debugger = _Breaks()
    try:
        assert debugger.set_break(guard, last) is None  # (a message if the line is not there)
        assert debugger.set_break(mock, 2) is None
        result = debugger.runcall(traced, *args)
    finally:
        sys.settrace(None)
        debugger.clear_all_breaks()  # (bdb's breakpoints are process-wide)
    torch.testing.assert_close(result, module.f(*args))
    assert [stop for stop in debugger.stops if stop[0] in (guard, mock)] == \
        [(guard, last), (mock, 2)]


def test_off_by_default_writes_nothing(module, tmp_path, monkeypatch):
    monkeypatch.setattr(config, "dump_dir", None)
    monkeypatch.chdir(tmp_path)
    before = sorted(os.listdir(tmp_path))
    traced = pyinterp.trace(module.split, backend="eager")
    for _ in range(3):
        torch.testing.assert_close(traced(FIRST.clone()), module.split(FIRST.clone()))
    entry = traced._entries.snapshot[0]
    assert sorted(os.listdir(tmp_path)) == before
    assert not hasattr(entry.trace, "dump_files")
    assert entry.guard.__code__.co_filename.startswith("<pyinterp-guard")
    assert entry.mock.__code__.co_filename.startswith("<pyinterp-mock")


def test_environment_variable_switches_it_on(module, tmp_path):
    script = ("import sys, torch, pyinterp\n"
              "sys.path.insert(0, %r)\n"
              "import user_module_dump as m\n"
              "t = pyinterp.trace(m.f, backend='eager')\n"
              "t(torch.ones(3), torch.tensor(1))\n"
              "print(t._entries.snapshot[0].guard.__code__.co_filename)\n" % str(tmp_path))
    env = dict(os.environ, PYINTERP_DUMP_DIR=str(tmp_path / "env_dump"))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True, cwd=tmp_path).stdout
    assert out.strip() == str(tmp_path / "env_dump" / "f.entry1.guard.py")
    assert sorted(os.listdir(tmp_path / "env_dump")) == \
        ["f.entry1.graph0.py", "f.entry1.guard.py", "f.entry1.mock.py"]


def test_a_traced_module_is_named_by_its_class(dump):
    model = torch.nn.Linear(3, 2)
    traced = pyinterp.trace(model, backend="eager")
    x = torch.ones(1, 3)
    for _ in range(2):
        torch.testing.assert_close(traced(x), model(x))
    assert sorted(os.listdir(dump)) == \
        ["Linear.entry1.graph0.py", "Linear.entry1.guard.py", "Linear.entry1.mock.py"]
