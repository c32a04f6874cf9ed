"""Shared pytest configuration: Hypothesis profiles for the fuzz tests.

Select a profile with the environment variable ``HYPOTHESIS_PROFILE``:

* ``ci`` (default): reproducible (derandomized) and bounded: 200 examples
  for the mixed fuzz test, a quarter of that for each family test.  It does
  not shrink failing examples: shrinking a generated program can take
  Hypothesis's full five minutes per failing test, too long for CI.
* ``ci-shrink``: ``ci`` with shrinking, to get the minimal form of a CI
  failure (the same examples are drawn).
* ``slow``: 20,000 examples for the mixed fuzz test (2,500 per family),
  random each run, with the example database on; run it as
  ``HYPOTHESIS_PROFILE=slow pytest tests/fuzz/test_fuzz.py``.
* ``dev``: a quick random smoke run (40 / 10 examples) while editing.

Fuzz examples are slow to generate and may take seconds to interpret, so
every profile disables the deadline and the too-slow health checks.
"""
import os

from hypothesis import HealthCheck, Phase, settings

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]

settings.register_profile(
    "ci-shrink", max_examples=200, deadline=None, derandomize=True, database=None,
    suppress_health_check=_QUIET, print_blob=True,
)
settings.register_profile(
    "ci", settings.get_profile("ci-shrink"),
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target],
)
settings.register_profile(
    # PYINTERP_SLOW_EXAMPLES runs the slow profile with fewer examples (a
    # partial run; say so when you report it).
    "slow", max_examples=int(os.environ.get("PYINTERP_SLOW_EXAMPLES", "20000")),
    deadline=None, suppress_health_check=_QUIET, print_blob=True,
)
settings.register_profile(
    "dev", max_examples=40, deadline=None, suppress_health_check=_QUIET, print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    # Declared in pyproject.toml too; repeated so that the marker is known
    # when pytest runs with another configuration file.
    config.addinivalue_line("markers", "slow: long-running tests (large Hypothesis profile)")
