"""The project's pytest configuration: Hypothesis profiles and the ``--kmc-scenario`` option.

Hypothesis profiles (selected by the environment variable ``KMC_HYPOTHESIS_PROFILE``, ``ci`` when
unset so that the README's ``python3 -m pytest`` is deterministic; ``.ci/run`` selects ``ci`` explicitly,
and ``KMC_HYPOTHESIS_PROFILE=dev`` asks for random, longer runs):

* ``ci``: deterministic (``derandomize=True``: the examples depend only on the test, so a CI
  failure reproduces anywhere) and small, to keep the default run within its time budget;
* ``dev``: random examples, more of them, and the reproduction blob printed with a failure.

Both drop Hypothesis's deadline and its too-slow health checks: one step of the Kafka model can
take milliseconds, and stateful examples are long by design. Both leave out ``Phase.explain``, as
``kmc simulate --hypothesis`` does (``explorer.hypothesis_machine.hypothesis_settings``): it re-runs
variants of a shrunk example to comment on which draws matter, and since Hypothesis 6.166.0 it varies
every ``st.data()`` draw, which is every step of a state machine's example, so one failing test spent
Hypothesis's whole five-minute shrinking allowance there. A test's verdict must not depend on how
far shrinking got in its time: see ``tests/test_invariant_suite.py``.

``pytest --kmc-scenario FILE`` runs the Hypothesis state machine on the scenario in ``FILE`` (see
``tests/test_invariant_suite.py``); a violation fails with the shrunk counterexample, step by step.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, Phase, settings

PROFILE_VARIABLE = "KMC_HYPOTHESIS_PROFILE"
PROFILES = ("ci", "dev")

_RELAXED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
#: Every phase but ``Phase.explain`` (see the module docstring).
PHASES = tuple(phase for phase in Phase if phase is not Phase.explain)

settings.register_profile("ci", derandomize=True, max_examples=25, deadline=None, phases=PHASES,
                          suppress_health_check=_RELAXED, print_blob=False)
settings.register_profile("dev", max_examples=100, deadline=None, phases=PHASES, suppress_health_check=_RELAXED,
                          print_blob=True)

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
