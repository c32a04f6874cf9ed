"""Shared helpers for the ``pyinterp.trace`` tests.

Everything here uses only the public API: ``pyinterp.trace``,
``pyinterp.explain`` and the torch.compile backend signature.  Hits and
misses are told apart with :class:`CountingBackend`: a capture that produced
a graph calls the backend once, a cache hit calls nothing.

* ``CountingBackend`` -- a backend ``(gm, example_inputs) -> callable`` that
  records every graph it is given (``.count``, ``.graphs``, ``.inputs``) and
  counts the calls of the compiled callables (``.runs``: a cache hit that is
  served by the mock runs a compiled graph; a native fallback runs none).
* ``traced_counting(fn, **kw)`` -- ``(pyinterp.trace(fn, backend=counter,
  **kw), counter)``.
* ``count_captures(counter)`` -- the number of compilations so far.
* ``assert_same(actual, expected)`` -- structural comparison: same types
  everywhere, tensors with ``torch.testing.assert_close`` plus dtype, shape
  and ``requires_grad``; lists/tuples/dicts element by element (dict key
  order too); dataclasses and plain user objects attribute by attribute.
* ``run_both(traced, eager_fn, *args, **kwargs)`` -- calls the eager
  function on a deep copy of the arguments and the traced one on the
  originals; compares the results *and* the arguments afterwards (so
  in-place mutations of arguments are compared too).  Returns the traced
  result.
* ``line_of(fn, marker)`` -- the absolute line number of the line of ``fn``'s
  source that contains ``marker`` (for break-reason line checks).
* ``fresh(*shape, ...)`` -- a small deterministic float tensor.
* ``benchmark_child_results(code, timeout)`` -- runs ``code`` in a child
  Python with ``benchmarks/`` importable; returns the JSON of its
  ``RESULTS`` line (the benchmark tests run their cases there).
"""
import copy
import dataclasses
import inspect
import json
import math
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402


class CountingBackend:
    """A torch.compile-style backend that counts compilations, and the runs
    of its graphs that returned (a graph that raises on a hit falls back to
    a native run, which must not count as the graph having run)."""

    def __init__(self, inner="eager"):
        self.graphs = []
        self.inputs = []
        self.runs = 0
        self.inner = inner  # the backend that compiles (by name, as trace's)

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        self.inputs.append(list(example_inputs))
        if self.inner == "eager":
            forward = gm.forward
        else:
            from pyinterp.codegen import backends

            forward = backends.resolve(self.inner)(gm, example_inputs)

        def compiled(*args):
            result = forward(*args)
            self.runs += 1
            return result

        return compiled

    @property
    def count(self):
        return len(self.graphs)

    compiles = count


def count_captures(counter):
    """Number of graphs compiled so far through ``counter``."""
    return counter.count


def assert_hits_ran_graph(counter, hits):
    """At least ``hits`` calls were served by a compiled graph (the mock)."""
    assert counter.runs >= hits, (
        "only %d of the expected %d hits ran a compiled graph (native fallback?)"
        % (counter.runs, hits))


def traced_counting(fn, **kwargs):
    """``pyinterp.trace(fn, backend=<counter>, **kwargs)`` and the counter."""
    counter = CountingBackend()
    return pyinterp.trace(fn, backend=counter, **kwargs), counter


def fresh(*shape, seed=0, dtype=None, requires_grad=False, offset=0.0):
    """A small deterministic tensor (values depend on ``seed``)."""
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(*shape, generator=g) + offset
    if dtype is not None:
        t = t.to(dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _is_user_object(value):
    tp = type(value)
    return (
        hasattr(value, "__dict__")
        and not isinstance(value, type)
        and not callable(value)
        and tp.__module__ not in ("builtins", "torch")
    )


def assert_same(actual, expected, path="result", rtol=None, atol=None):
    """Assert ``actual`` and ``expected`` are structurally the same."""
    assert type(actual) is type(expected), (
        "%s: type %r != expected %r (%r vs %r)"
        % (path, type(actual), type(expected), actual, expected)
    )
    if isinstance(expected, torch.Tensor):
        assert actual.dtype == expected.dtype, "%s: dtype %s != %s" % (path, actual.dtype, expected.dtype)
        assert actual.shape == expected.shape, "%s: shape %s != %s" % (path, actual.shape, expected.shape)
        assert actual.requires_grad == expected.requires_grad, (
            "%s: requires_grad %s != %s" % (path, actual.requires_grad, expected.requires_grad)
        )
        torch.testing.assert_close(
            actual.detach(), expected.detach(), rtol=rtol, atol=atol, equal_nan=True,
            msg=lambda m: "%s: %s" % (path, m),
        )
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected), "%s: length %d != %d" % (path, len(actual), len(expected))
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, "%s[%d]" % (path, i), rtol, atol)
    elif isinstance(expected, dict):
        assert list(actual) == list(expected), "%s: keys %r != %r" % (path, list(actual), list(expected))
        for k in expected:
            assert_same(actual[k], expected[k], "%s[%r]" % (path, k), rtol, atol)
    elif isinstance(expected, torch.nn.Module):
        sa, se = actual.state_dict(), expected.state_dict()
        assert_same(dict(sa), dict(se), path + ".state_dict()", rtol, atol)
        assert actual.training == expected.training, path + ".training"
    elif dataclasses.is_dataclass(expected) and not isinstance(expected, type):
        for f in dataclasses.fields(expected):
            assert_same(getattr(actual, f.name), getattr(expected, f.name), "%s.%s" % (path, f.name), rtol, atol)
    elif isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(actual), path
    elif _is_user_object(expected):
        assert sorted(vars(actual)) == sorted(vars(expected)), (
            "%s: attributes %r != %r" % (path, sorted(vars(actual)), sorted(vars(expected)))
        )
        for k in vars(expected):
            assert_same(getattr(actual, k), getattr(expected, k), "%s.%s" % (path, k), rtol, atol)
    else:
        assert actual == expected, "%s: %r != expected %r" % (path, actual, expected)


def run_both(traced, eager_fn, *args, **kwargs):
    """Call eager on a deep copy of the arguments, traced on the originals.

    Compares the results and the arguments afterwards; returns the traced
    result.  Aliasing between arguments is kept in the copy (one deepcopy).
    """
    e_args, e_kwargs = copy.deepcopy((args, kwargs))
    expected = eager_fn(*e_args, **e_kwargs)
    actual = traced(*args, **kwargs)
    assert_same(actual, expected)
    assert_same(list(args), list(e_args), "args")
    assert_same(dict(kwargs), dict(e_kwargs), "kwargs")
    return actual


def line_of(fn, marker):
    """Absolute line number of the (only) line of ``fn`` containing ``marker``."""
    lines, start = inspect.getsourcelines(fn)
    hits = [start + i for i, line in enumerate(lines) if marker in line]
    assert len(hits) == 1, "marker %r found %d times" % (marker, len(hits))
    return hits[0]


def raises_same(fn_a, fn_b, *args, **kwargs):
    """Both calls raise the same exception type with the same message."""
    with pytest.raises(Exception) as eager_info:
        fn_b(*args, **kwargs)
    with pytest.raises(Exception) as traced_info:
        fn_a(*args, **kwargs)
    assert type(traced_info.value) is type(eager_info.value), (traced_info.value, eager_info.value)
    assert str(traced_info.value) == str(eager_info.value)
    return traced_info.value


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCHMARKS = os.path.join(ROOT, "benchmarks")


def benchmark_child_results(code, timeout):
    """Run ``code`` in a child Python, in the repository root with
    ``benchmarks/`` and the root first on its path; return the JSON that
    its last line starting ``RESULTS `` carries.  (A benchmark's cases
    reset Dynamo, compile many graphs, or leave a failed ``torch.compile``'s
    state behind, which this process's later tests need not see.)"""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [BENCHMARKS, ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULTS ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    return json.loads(lines[-1][len("RESULTS "):])
