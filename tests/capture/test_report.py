"""The run log and its report (pyinterp/capture/runlog.py, runrecord.py;
pyinterp/report/; ``python -m pyinterp report``): what a capture records,
the page built from it, and the page in a real headless browser (chromium:
no console error, and the screenshot shows the graph).  Every traced call
is checked against the native call on the same inputs."""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402
from pyinterp import config  # noqa: E402
from pyinterp.capture import logreport, logs, runlog  # noqa: E402
from pyinterp.refgraph.breaks import KINDS  # noqa: E402
from pyinterp.report import graphsvg, page, readlog  # noqa: E402

import pngpixels  # noqa: E402
from trace_support import assert_same, fresh, line_of  # noqa: E402

THIS_FILE = __file__
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def model(x, cfg):
    h = torch.relu(x) * cfg["scale"]  # SCALE
    idx = h.untyped_storage()  # BREAK
    return h.sum(0) + len(idx)  # AFTER


def risky(x, tags):
    label = "<b>&amp;</b>"  # ESCAPE
    return x * tags["<i>"] + len(label)


def records(directory):
    """The records of this process's log file in ``directory``."""
    with open(runlog.log_path(directory), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def run_model(directory):
    """Three calls of the traced model: a capture, a recompile (new shape),
    a hit; each against the native call."""
    traced = pyinterp.trace(model, backend="eager")
    with pyinterp.trace_to(directory):
        for shape in ((2, 3), (3, 3), (3, 3)):
            cfg = {"scale": 2.0}
            assert_same(traced(fresh(*shape), cfg), model(fresh(*shape), cfg))
    return records(directory)


@pytest.fixture(scope="module")
def model_log(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("runlog"))
    return directory, run_model(directory)


def entries_of(recs, qualname):
    return [r for r in recs if r["event"] == "entry" and r["function"]["qualname"] == qualname]


def test_the_log_records_function_graphs_breaks_recompiles_and_guards(model_log):
    _, recs = model_log
    assert recs[0]["event"] == "run" and recs[0]["pid"] == os.getpid()
    first, second = entries_of(recs, "model")
    scale, brk = line_of(model, "# SCALE"), line_of(model, "# BREAK")
    assert first["function"]["file"] == THIS_FILE
    assert first["function"]["first"] == line_of(model, "def model")
    assert first["function"]["lines"][0] == "def model(x, cfg):"
    assert len(first["function"]["lines"]) == 4
    # the recompile: the reason the recompiles log gives
    assert first["recompile"] == []
    assert second["recompile"] == ["entry 1: x.shape[0]: expected 2, got 3"]
    assert second["cache_size"] == 2 and first["cache_size"] == 1
    assert 0 < first["time"] < second["time"] and first["seconds"] > 0
    # the graph before the break: relu then mul, from the SCALE line
    (graph,) = first["graphs"]
    nodes = {n["label"]: n for n in graph["nodes"]}
    assert [n["op"] for n in graph["nodes"]][0] == "placeholder"
    assert graph["nodes"][-1]["op"] == "output"
    assert nodes["relu"]["stack"] == [[THIS_FILE, scale]]
    assert nodes["mul"]["stack"] == [[THIS_FILE, scale]]
    assert nodes["relu"]["name"] in nodes["mul"]["args"]
    assert nodes["relu"]["meta"] == "float32[2, 3]"
    # the break, with its kind, line, source and hint
    (b,) = first["breaks"]
    assert (b["kind"], b["file"], b["line"]) == ("tensor-to-python", THIS_FILE, brk)
    assert b["source"] == "idx = h.untyped_storage()  # BREAK"
    assert b["hint"] == KINDS["tensor-to-python"].hint
    # specializations and guards name the user's line
    specs = {s["text"]: s for s in first["specializations"]}
    assert specs["cfg['scale'] == 2.0"]["line"] == scale
    assert "x: float32[2, 3] on cpu" in specs
    guards = [g for g in first["guards"] if "cfg['scale']" in g["text"]]
    assert guards and all(g["line"] == scale and g["file"] == THIS_FILE for g in guards)
    assert any("cfg['scale'] == 2.0" in g["text"] for g in guards)
    # the resume function after the break is traced, and logged, on its own
    resumed = [r for r in recs if r["event"] == "entry"
               and r["function"]["qualname"].startswith("model.<resume at line")]
    assert resumed and resumed[0]["function"]["first"] == first["function"]["first"]
    assert any(n["label"] == "sum" for g in resumed[0]["graphs"] for n in g["nodes"])


def test_off_by_default_nothing_is_written_or_opened(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(config, "trace_dir", None)
    if not any(logs.enabled(n) for n in logs.NAMES):
        assert logreport.begin(model, [], (), {}) is None
    traced = pyinterp.trace(model, backend="eager")
    for shape in ((2, 3), (3, 3)):
        assert_same(traced(fresh(*shape), {"scale": 2.0}), model(fresh(*shape), {"scale": 2.0}))
    assert os.listdir(tmp_path) == []


def test_a_failed_write_warns_and_the_call_is_unchanged(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    traced = pyinterp.trace(model, backend="eager")
    with pyinterp.trace_to(blocker / "logs"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert_same(traced(fresh(2, 3), {"scale": 2.0}), model(fresh(2, 3), {"scale": 2.0}))
    assert any(issubclass(w.category, RuntimeWarning) and "cannot write the run log" in
               str(w.message) for w in caught)


def test_a_fullgraph_break_is_logged_with_the_error(tmp_path):
    traced = pyinterp.trace(model, backend="eager", fullgraph=True)
    with pyinterp.trace_to(tmp_path):
        with pytest.raises(pyinterp.GraphBreakError):
            traced(fresh(2, 3), {"scale": 2.0})
    (entry,) = entries_of(records(str(tmp_path)), "model")
    assert entry["raised"].startswith("GraphBreakError: ")
    assert entry["breaks"][0]["line"] == line_of(model, "# BREAK")


def line_classes(text):
    """``{line number: classes}`` of the source panel's lines of this file."""
    found = {}
    for classes, loc in re.findall(r'<tr class="line ([^"]*)" data-loc="([^"]*)"', text):
        path, _, number = html.unescape(loc).rpartition(":")
        if path == THIS_FILE:
            found[int(number)] = set(classes.split())
    return found


def test_the_page_colours_lines_and_draws_each_graph(model_log):
    directory, recs = model_log
    text = page.render(readlog.read(directory))
    classes = line_classes(text)
    assert classes[line_of(model, "# SCALE")] == {"captured", "specialized"}
    assert classes[line_of(model, "# BREAK")] == {"broken"}
    assert "captured" in classes[line_of(model, "# AFTER")]  # (the resume function's graph)
    assert classes[line_of(model, "def model")] == set()
    assert "graph break [tensor-to-python]" in text
    assert html.escape(KINDS["tensor-to-python"].hint) in text
    graphs = [g for r in recs if r["event"] == "entry" for g in r["graphs"]]
    svgs = re.findall(r'<svg class="graph".*?</svg>', text, re.S)
    assert len(svgs) == len(graphs)
    for svg, graph in zip(svgs, graphs):
        drawn = re.findall(r'<g class="node (\w+)" data-node="([^"]*)"', svg)
        assert drawn == [(n["op"], n["name"]) for n in graph["nodes"]]
        edges = sum(len(n["args"]) for n in graph["nodes"])
        assert svg.count('class="edge"') == edges
        assert svg.count('fill="%s"' % graphsvg.OP_FILL) == sum(
            n["op"] not in ("placeholder", "output") for n in graph["nodes"])
    assert html.escape("entry 1: x.shape[0]: expected 2, got 3") in text
    assert len(re.findall(r'<g class="capture recompile">', text)) == 1
    assert html.escape("cfg['scale'] == 2.0") in text
    assert text.count('<details id="guards-') == len([r for r in recs if r["event"] == "entry"])


def test_user_text_is_escaped(tmp_path):
    traced = pyinterp.trace(risky, backend="eager")
    with pyinterp.trace_to(tmp_path):
        assert_same(traced(fresh(2), {"<i>": 3.0}), risky(fresh(2), {"<i>": 3.0}))
    text = page.render(readlog.read(str(tmp_path)))
    assert '<b>&amp;</b>' not in text and "<i>" not in text
    assert html.escape('label = "<b>&amp;</b>"  # ESCAPE') in text
    assert html.escape("tags['<i>'] == 3.0") in text


def test_the_command_writes_the_page_and_says_how_to_open_it(model_log, tmp_path):
    directory, _ = model_log
    out = tmp_path / "page.html"
    proc = subprocess.run([sys.executable, "-m", "pyinterp", "report", directory, "-o", str(out)],
                          env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "wrote %s" % out
    assert "file://%s" % out in proc.stdout
    assert out.read_text() == page.render(readlog.read(directory),
                                          "pyinterp report: %s" % directory)
    empty = subprocess.run([sys.executable, "-m", "pyinterp", "report", str(tmp_path)],
                           env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True,
                           text=True, timeout=120)
    assert empty.returncode == 1 and "no pyinterp_trace_*.jsonl file" in empty.stderr


def test_the_environment_variable_switches_it_on(tmp_path):
    script = ("import torch, pyinterp\n"
              "f = pyinterp.trace(lambda x: x.relu() + 1, backend='eager')\n"
              "f(torch.ones(2)); f(torch.ones(3))\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT,
                                   PYINTERP_TRACE_DIR=str(tmp_path)), timeout=300)
    assert proc.returncode == 0, proc.stderr
    (name,) = os.listdir(tmp_path)
    assert re.fullmatch(r"pyinterp_trace_\d+\.jsonl", name)
    log = readlog.read(str(tmp_path))
    assert [e["number"] for e in log.entries] == [1, 2]
    assert log.entries[1]["recompile"] == ["entry 1: x.shape[0]: expected 2, got 3"]


# -- in a real browser ----------------------------------------------------------

def chromium():
    """chromium's path; skips when it is not installed, unless
    ``PYINTERP_REQUIRE_CHROMIUM=1`` (CI) makes that a failure."""
    path = shutil.which("chromium") or shutil.which("chromium-browser") or \
        ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if path is None:
        if os.environ.get("PYINTERP_REQUIRE_CHROMIUM") == "1":
            pytest.fail("chromium is not installed and PYINTERP_REQUIRE_CHROMIUM=1")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return path


def browse(page_path, *flags):
    browser = chromium()
    profile = page_path.parent / ("profile-" + page_path.stem)
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", "--window-size=1200,1600",
                           "--user-data-dir=%s" % profile, *flags, "file://" + str(page_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_the_page_loads_without_errors_and_shows_the_graph(model_log, tmp_path):
    directory, _ = model_log
    out = tmp_path / "report.html"
    out.write_text(page.render(readlog.read(directory)))
    text = out.read_text()
    ops = text.count('class="node call_')
    assert ops >= 4 and text.count(graphsvg.OP_FILL) == ops  # (the colour is the op boxes')
    dom = browse(out, "--dump-dom")
    assert re.search(r'<html lang="en" data-errors="">', dom), dom[:300]
    assert re.search(r'<body[^>]* data-ready="1"', dom)
    shot = tmp_path / "shot.png"
    browse(out, "--screenshot=%s" % shot)
    data = shot.read_bytes()
    width, height, _, _ = pngpixels.decode(data)
    assert (width, height) == (1200, 1600)
    # an op's box is 38 px high and at least 70 wide: two at least were drawn
    assert pngpixels.count_colour(data, graphsvg.OP_FILL) > 2 * 60 * 30


def test_the_error_collector_sees_a_failing_script(model_log, tmp_path):
    directory, _ = model_log
    text = page.render(readlog.read(directory)).replace(
        "</body>", '<script>console.error("said <no>");throw new Error("boom");</script></body>')
    out = tmp_path / "broken.html"
    out.write_text(text)
    dom = browse(out, "--dump-dom")
    errors = html.unescape(re.search(r'<html lang="en" data-errors="([^"]*)"', dom).group(1))
    assert "said <no>" in errors and "boom" in errors
