"""The core of ``benchmarks/generation.py`` (issue 20) on one tiny case:
``generate()`` with ``torch.compile``'s and with ``pyinterp.trace``'s
forward (backend eager, through the benchmark's counting backend) gives
eager's tokens on the first and on the warm calls, and the counts the
table reports are real: the static cache compiles the prefill and the
decode step, and every step of a warm ``generate`` calls a graph."""
import os
import sys

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")
pytest.importorskip("transformers", reason="generate() needs transformers")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "benchmarks"))
import generation  # noqa: E402

NEW_TOKENS = 3


def test_both_systems_generate_eagers_tokens_through_graphs():
    eager_s, runs = generation.run_row("llama", "static", 1, NEW_TOKENS, "eager", repeats=1)
    assert eager_s > 0
    assert set(runs) == {"dynamo", "pyinterp"}
    for system, run in runs.items():
        assert run.error is None, (system, run.error)
        assert run.equal == [True, True, True], system  # first, untimed warm, timed warm
        assert run.compiles == 2, system  # prefill and decode step
        assert run.warm_calls == NEW_TOKENS, system
        assert run.warm_s > 0 and run.first_s > 0


def test_the_whole_generate_row_reports_real_counts():
    """``benchmarks/generation_whole.py``: ``trace(model.generate)`` on one
    tiny case gives eager's tokens on every call, settles, and its counts
    are the table's."""
    import generation_whole

    row = generation_whole.run_row("llama", "dynamic", 1, NEW_TOKENS, calls=8, repeats=1,
                                   backend="eager")
    cells = dict(zip(generation_whole.HEADERS, row))
    assert cells["tokens = eager"] == "yes", cells
    settled = int(cells["settled after"].split()[0])
    assert settled <= 7, cells  # (3.11: 5; 3.12+: 6)
    assert int(cells["graph calls (last)"].split()[0]) >= NEW_TOKENS, cells
    breaks, sites = cells["breaks (sites)"].replace("(", "").replace(")", "").split()
    assert int(breaks) == NEW_TOKENS + 1 and int(sites) == 2, cells  # a step's stop test, and one more
