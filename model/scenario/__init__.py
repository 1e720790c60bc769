"""Scenario input: a TOML file (``scenarios/*.toml`` ship with kmc) read and validated into a
:class:`Scenario` by :mod:`model.scenario.loader`, and the catalogue of Kafka bugs a scenario can
switch on. Both controllers read the same scenarios; callers import from this package."""

from model.scenario.loader import (
    BUGS,
    NOT_MODELLED_BUGS,
    SUPPORTED_VERSIONS,
    Bounds,
    BugSwitch,
    Scenario,
    ScenarioError,
    Topic,
    load_scenario,
    load_scenario_file,
    with_bug,
)

__all__ = [
    "BUGS",
    "NOT_MODELLED_BUGS",
    "SUPPORTED_VERSIONS",
    "Bounds",
    "BugSwitch",
    "Scenario",
    "ScenarioError",
    "Topic",
    "load_scenario",
    "load_scenario_file",
    "with_bug",
]
