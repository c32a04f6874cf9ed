"""pyinterp's logs (pyinterp/capture/logs.py, logreport.py, guardfail.py):
``pyinterp.*`` loggers switched by ``PYINTERP_LOGS`` and ``set_logs``; each
kind's content; unknown names; off by default.  Every traced call is
checked against the native call on the same inputs."""
import logging
import os
import re
import subprocess
import sys
import time
import warnings

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from pyinterp.capture import logreport, logs  # noqa: E402

from trace_support import assert_same, fresh, line_of  # noqa: E402

THIS_FILE = __file__
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def logs_restored():
    """Each test leaves the loggers as it found them."""
    levels = {name: logger.level for name, logger in logs.loggers.items()}
    handlers = list(logging.getLogger("pyinterp").handlers)
    yield
    for name, level in levels.items():
        logs.loggers[name].setLevel(level)
    logging.getLogger("pyinterp").handlers[:] = handlers


def scaled(x, cfg):
    y = x * cfg["scale"]  # SCALE
    return y.sum(0)


def with_break(x):
    idx = x.untyped_storage()  # BREAK
    return x * 2 + len(idx)


def run(traced, fn, *args):
    assert_same(traced(*args), fn(*args))


def messages(caplog, name):
    return [r.getMessage() for r in caplog.records if r.name == "pyinterp." + name]


def test_off_by_default_even_with_root_at_info(caplog):
    caplog.set_level(logging.INFO)  # the root logger: logging.basicConfig(level=INFO)
    traced = pyinterp.trace(scaled, backend="eager")
    run(traced, scaled, fresh(2, 3), {"scale": 2.0})
    run(traced, scaled, fresh(3, 3), {"scale": 2.0})
    assert not [r for r in caplog.records if r.name.startswith("pyinterp")]


def test_recompile_names_the_guard_expected_actual_and_line(caplog):
    pyinterp.set_logs(recompiles=True)
    traced = pyinterp.trace(scaled, backend="eager")
    with caplog.at_level(logging.INFO, logger="pyinterp.recompiles"):
        run(traced, scaled, fresh(2, 3), {"scale": 2.0})
        assert messages(caplog, "recompiles") == [], "a first capture is no recompile"
        run(traced, scaled, fresh(3, 3), {"scale": 2.0})
        run(traced, scaled, fresh(3, 3), {"scale": 2.0})  # a hit: nothing logged
        run(traced, scaled, fresh(3, 3), {"scale": 3.0})
    first, second = messages(caplog, "recompiles")
    assert "recompiling scaled (%s:%d)" % (THIS_FILE, scaled.__code__.co_firstlineno) in first
    assert "x.shape[0]: expected 2, got 3" in first
    assert "cfg['scale']: expected 2.0, got 3.0" in second
    assert "%s:%d: y = x * cfg[\"scale\"]" % (THIS_FILE, line_of(scaled, "# SCALE")) in second
    assert "x.shape[0]: expected 2, got 3" in second  # the older entry's reason


def test_recompile_reasons_of_other_guard_kinds(caplog):
    def f(x, n, *, k=1):
        return x * n + k

    traced = pyinterp.trace(f, backend="eager")
    with caplog.at_level(logging.INFO, logger="pyinterp.recompiles"):
        run(traced, f, fresh(2), 2)
        run(traced, f, fresh(2), True)
        run(traced, f, fresh(2, dtype=torch.float64), 2)
        assert_same(traced(fresh(2), 2, k=3), f(fresh(2), 2, k=3))
    type_change, dtype_change, keywords = messages(caplog, "recompiles")
    assert "type(n): expected int, got bool" in type_change
    assert "x.dtype: expected torch.float32, got torch.float64" in dtype_change
    assert "keyword arguments: expected (), got ('k',)" in keywords


def test_perf_times_each_entry_and_watches_a_long_compile(caplog, monkeypatch):
    monkeypatch.setattr(logreport, "LONG_COMPILE_S", 0.05)

    def slow_backend(gm, example_inputs):
        time.sleep(0.4)
        return gm.forward

    traced = pyinterp.trace(scaled, backend=slow_backend)
    with caplog.at_level(logging.INFO, logger="pyinterp.perf"):
        run(traced, scaled, fresh(2, 3), {"scale": 2.0})
    started, finished, entry = messages(caplog, "perf")
    assert "backend compile of scaled's graph" in started and "still running after" in started
    assert "backend slow_backend" in started
    assert float(re.search(r"finished after ([\d.]+) s$", finished).group(1)) >= 0.4
    assert "scaled (%s:%d), cache entry 1: captured in" % (
        THIS_FILE, scaled.__code__.co_firstlineno) in entry
    compile_ms = float(re.search(r"backend compile ([\d.]+) ms \(1 graph, slow_backend\)",
                                 entry).group(1))
    assert compile_ms >= 400 and "guard build" in entry


def test_perf_says_nothing_of_a_short_compile_but_its_time(caplog):
    traced = pyinterp.trace(scaled, backend="eager")
    with caplog.at_level(logging.INFO, logger="pyinterp.perf"):
        run(traced, scaled, fresh(2, 3), {"scale": 2.0})
    (entry,) = messages(caplog, "perf")
    assert "captured in" in entry and "(1 graph, eager)" in entry


def test_graph_log_shows_the_code_with_the_users_lines(caplog):
    traced = pyinterp.trace(scaled, backend="eager")
    with caplog.at_level(logging.INFO, logger="pyinterp.graph"):
        run(traced, scaled, fresh(2, 3), {"scale": 2.0})
    (graph,) = messages(caplog, "graph")
    assert "graph 1 of 1, 2 ops" in graph
    assert "%s:%d" % (THIS_FILE, line_of(scaled, "# SCALE")) in graph
    assert 'y = x * cfg["scale"]' in graph and ".mul(2.0)" in graph


def test_guards_log_groups_guards_under_the_users_line(caplog):
    traced = pyinterp.trace(scaled, backend="eager")
    with caplog.at_level(logging.DEBUG, logger="pyinterp.guards"):
        run(traced, scaled, fresh(2, 3), {"scale": 2.0})
    listing, code = messages(caplog, "guards")
    lines = listing.splitlines()
    at = lines.index("  %s:%d: y = x * cfg[\"scale\"]  # SCALE"
                     % (THIS_FILE, line_of(scaled, "# SCALE")))
    assert any("cfg['scale'] == 2.0" in line for line in lines[at + 1:])
    assert "(x.dtype, x.device, x.shape, x.stride(), x.requires_grad)" in listing
    assert "guard code" in code and "return True" in code  # DEBUG: the generated guard


def test_breaks_log_each_break_with_its_source_line(caplog):
    pyinterp.set_logs("breaks")
    traced = pyinterp.trace(with_break, backend="eager")
    with caplog.at_level(logging.INFO, logger="pyinterp.breaks"):
        run(traced, with_break, fresh(4))
    (msg,) = messages(caplog, "breaks")
    assert "%s:%d: idx = x.untyped_storage()" % (THIS_FILE, line_of(with_break, "# BREAK")) in msg
    assert "[tensor-to-python]" in msg and "hint:" in msg


def test_set_logs_switches_and_resets():
    pyinterp.set_logs("graph,+perf")
    assert logs.enabled("graph") and logs.enabled("perf", logging.DEBUG)
    assert not logs.enabled("graph", logging.DEBUG) and not logs.enabled("guards")
    pyinterp.set_logs(all=True, perf=False)
    assert all(logs.enabled(n) for n in ("graph", "guards", "breaks", "recompiles"))
    assert not logs.enabled("perf")
    pyinterp.set_logs()
    assert not any(logs.enabled(n) for n in logs.NAMES)


@pytest.mark.parametrize("how", ["keyword", "string"])
def test_unknown_name_warns_once_listing_valid_names(how):
    name = "nosuchlog_" + how
    switch = (lambda: pyinterp.set_logs(**{name: True})) if how == "keyword" else \
        (lambda: pyinterp.set_logs(name + ",graph"))
    with pytest.warns(UserWarning, match="unknown log name '%s'" % name) as record:
        switch()
    assert "valid names: all, graph, guards, breaks, recompiles, perf" in str(record[0].message)
    assert record[0].filename == THIS_FILE
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        switch()  # once only
    if how == "string":
        assert logs.enabled("graph")


SCRIPT = """
import logging, sys, torch, pyinterp
if sys.argv[1:] == ["root"]:
    logging.basicConfig(format="ROOT %(name)s %(message)s")
def f(x):
    return x + 1
t = pyinterp.trace(f, backend="eager")
t(torch.ones(2)); t(torch.ones(3))
def g(x):
    return x.nonzero().tolist()
pyinterp.trace(g, backend="eager")(torch.ones(2))
"""


def _script(env_logs, *argv, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYINTERP_LOG")}
    env.update(extra, PYTHONPATH=ROOT)
    if env_logs is not None:
        env["PYINTERP_LOGS"] = env_logs
    out = subprocess.run([sys.executable, "-c", SCRIPT, *argv], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stderr


def test_env_var_switches_logs_on_stderr_and_warns_of_unknown_names():
    err = _script("recompiles,bogus,bogus")
    assert "[pyinterp.recompiles] recompiling f" in err
    assert "x.shape[0]: expected 2, got 3" in err
    assert err.count("unknown log name 'bogus' in PYINTERP_LOGS") == 1
    assert "valid names: all, graph, guards, breaks, recompiles, perf" in err
    assert "[pyinterp.breaks]" not in err
    # Logging configured by the program: its handlers print each record once.
    err = _script("recompiles", "root")
    assert err.count("recompiling f") == 1 and "ROOT pyinterp.recompiles" in err
    # The older switch still logs breaks; with nothing set, nothing is logged.
    err = _script(None, PYINTERP_LOG_BREAKS="1")
    assert "[pyinterp.breaks] graph break at" in err and "recompiling" not in err
    assert "[pyinterp." not in _script(None)
