"""Tracebacks of ``pyinterp.trace`` name the user's code (issue 14, item 6).

The first call (a capture), a cache hit whose graph raises, and a
``fullgraph`` break each give a traceback whose entries in the user's file
are those of eager execution: file, line, function, source line and
positions.  FX nodes carry the user's ``stack_trace``.  An exception of the
mock itself shows the mock's line, which names the user's line it replays.
"""
import traceback

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from pyinterp.interp.tracebacks import is_host_file  # noqa: E402
from pyinterp.testing import import_file, raised_by  # noqa: E402

SOURCE = '''
import random
import torch

def pick(x, i):
    return x[i] * 2

def f(x, i):
    y = x + 1
    return pick(y, i) + y.sum()

def bump(x, i):
    x.add_(1)
    return pick(x, i)

def noisy(y):
    return y[random.randint(0, 1)]

def broken(x):
    y = x + 1
    return noisy(y)

class Strict:
    def __init__(self):
        object.__setattr__(self, "writes", 0)
    def __setattr__(self, name, value):
        if self.writes:
            raise RuntimeError("written twice")
        object.__setattr__(self, "writes", 1)
        object.__setattr__(self, name, value)

def store(x, box):
    box.value = x * 2
    return x + 1
'''


@pytest.fixture
def module(tmp_path):
    return import_file(tmp_path, "user_module_trace_tb", SOURCE)



def _user_entries(exc, module):
    return [(e.filename, e.lineno, e.name, e.line, e.end_lineno, e.colno, e.end_colno)
            for e in traceback.extract_tb(exc.__traceback__) if e.filename == module.__file__]


def _no_pyinterp_frames(exc):
    files = [e.filename for e in traceback.extract_tb(exc.__traceback__)]
    assert not any(is_host_file(name) for name in files), files


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_first_call_names_the_users_lines(module, backend):
    x = torch.ones(3)
    eager = raised_by(lambda: module.f(x, torch.tensor(7)))
    traced = raised_by(lambda: pyinterp.trace(module.f, backend=backend)(x, torch.tensor(7)))
    assert type(traced) is type(eager) and str(traced) == str(eager)
    assert _user_entries(traced, module) == _user_entries(eager, module)
    _no_pyinterp_frames(traced)


def test_hit_whose_graph_raises_names_the_users_line(module):
    fast = pyinterp.trace(module.f, backend="eager")
    fast(torch.ones(3), torch.tensor(1))  # captured
    eager = raised_by(lambda: module.f(torch.ones(3), torch.tensor(7)))
    hit = raised_by(lambda: fast(torch.ones(3), torch.tensor(7)))
    assert len(fast._entries) == 1  # (the same entry: a hit, not a new capture)
    assert type(hit) is type(eager) and str(hit) == str(eager)
    assert _user_entries(hit, module) == _user_entries(eager, module)
    _no_pyinterp_frames(hit)


def test_hit_whose_graph_raises_after_writing_an_input_names_the_users_line(module):
    """A graph that wrote an input cannot give way to a native run: its
    own exception propagates, with the user's frames of the node that
    raised in place of the mock's and the graph's."""
    fast = pyinterp.trace(module.bump, backend="eager")
    fast(torch.ones(3), torch.tensor(1))  # captured
    eager = raised_by(lambda: module.bump(torch.ones(3), torch.tensor(7)))
    hit = raised_by(lambda: fast(torch.ones(3), torch.tensor(7)))
    assert len(fast._entries) == 1
    assert type(hit) is type(eager) and str(hit) == str(eager)
    assert _user_entries(hit, module) == _user_entries(eager, module)
    _no_pyinterp_frames(hit)
    assert not any(e.filename.startswith(("<pyinterp-mock", "<eval_with_key"))
                   for e in traceback.extract_tb(hit.__traceback__))


def test_nodes_carry_the_users_stack_trace(module):
    fast = pyinterp.trace(module.f, backend="eager")
    fast(torch.ones(3), torch.tensor(1))
    gm = fast._entries.snapshot[0].trace.graphs[0]
    traces = {n.name: n.stack_trace for n in gm.graph.nodes if n.op == "call_method"}
    assert traces, gm.graph
    for text in traces.values():
        assert module.__file__ in text
    mul = next(text for name, text in traces.items() if name.startswith("mul"))
    assert "in pick" in mul and "return x[i] * 2" in mul and "in f" in mul


def test_fullgraph_break_points_at_the_users_line(module):
    error = raised_by(lambda: pyinterp.trace(module.broken, backend="eager",
                                           fullgraph=True)(torch.ones(2)))
    assert isinstance(error, pyinterp.GraphBreakError)
    names = [(e.name, e.line) for e in traceback.extract_tb(error.__traceback__)
             if e.filename == module.__file__]
    assert names == [("broken", "return noisy(y)"),
                     ("noisy", "return y[random.randint(0, 1)]")]
    _no_pyinterp_frames(error)


def test_mock_error_shows_the_mock_line_naming_the_users_line(module):
    fast = pyinterp.trace(module.store, backend="eager")
    box = module.Strict()
    fast(torch.ones(2), box)  # captured: the write is replayed on hits
    box2 = module.Strict()
    object.__setattr__(box2, "writes", 1)
    error = raised_by(lambda: fast(torch.ones(2), box2))
    assert str(error) == "written twice"
    text = "".join(traceback.format_exception(error))
    mock = [e for e in traceback.extract_tb(error.__traceback__)
            if e.filename.startswith("<pyinterp-mock")]
    assert mock and mock[0].line, text
    assert "user_module_trace_tb.py:%d" % _line(module, "box.value = x * 2") in mock[0].line


def _line(module, text):
    with open(module.__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)
