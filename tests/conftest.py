"""The project's pytest configuration: Hypothesis profiles and the ``--kmc-scenario`` option.

Hypothesis profiles (selected by the environment variable ``KMC_HYPOTHESIS_PROFILE``, ``ci`` when
unset so that the README's ``python3 -m pytest`` is deterministic; ``.ci/run`` selects ``ci`` explicitly,
and ``KMC_HYPOTHESIS_PROFILE=dev`` asks for random, longer runs):

* ``ci``: deterministic (``derandomize=True``: the examples depend only on the test, so a CI
  failure reproduces anywhere) and small, to keep the default run within its time budget;
* ``dev``: random examples, more of them, and the reproduction blob printed with a failure.

Both drop Hypothesis's deadline and its too-slow health checks: one step of the Kafka model can
take milliseconds, and stateful examples are long by design.

``pytest --kmc-scenario FILE`` runs the Hypothesis state machine on the scenario in ``FILE`` (see
``tests/test_invariant_suite.py``); a violation fails with the shrunk counterexample, step by step.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

PROFILE_VARIABLE = "KMC_HYPOTHESIS_PROFILE"
PROFILES = ("ci", "dev")

_RELAXED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile("ci", derandomize=True, max_examples=25, deadline=None,
                          suppress_health_check=_RELAXED, print_blob=False)
settings.register_profile("dev", max_examples=100, deadline=None, suppress_health_check=_RELAXED, print_blob=True)

_profile = os.environ.get(PROFILE_VARIABLE, "ci")
if _profile not in PROFILES:
    raise pytest.UsageError(f"{PROFILE_VARIABLE}={_profile!r} names no Hypothesis profile; use one of "
                            f"{', '.join(PROFILES)}.")
settings.load_profile(_profile)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--kmc-scenario", action="store", default=None, metavar="FILE",
                     help="run kmc's Hypothesis state machine on this scenario TOML file "
                          "(tests/test_invariant_suite.py::test_user_scenario)")


def pytest_report_header(config: pytest.Config) -> str:
    return f"kmc: Hypothesis profile {_profile!r} ({PROFILE_VARIABLE})"
