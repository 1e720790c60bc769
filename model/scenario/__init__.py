"""Scenario input: a TOML file (``scenarios/*.toml`` ship with kmc) read and validated into a
:class:`Scenario` by :mod:`model.scenario.loader`, and the catalogue of Kafka bugs a scenario can
switch on (:mod:`model.scenario.bugs`). Independent of the controller that runs it; callers import
the names below from this package."""

from model.scenario.bugs import BUGS, NEVER_FIXED, NOT_MODELLED_BUGS, RENAMED_BUGS, BugSwitch, renamed_switch_hint
from model.scenario.kraft_bugs import KRAFT_BUGS, NOT_MODELLED_KRAFT_BUGS
from model.scenario.loader import (
    SUPPORTED_VERSIONS,
    Bounds,
    Scenario,
    ScenarioError,
    Topic,
    load_scenario,
    load_scenario_file,
    with_bug,
    with_properties,
    with_version,
)
from model.scenario.versions import GATES, Gate, parse_version, version_text

__all__ = [
    "BUGS",
    "GATES",
    "KRAFT_BUGS",
    "NEVER_FIXED",
    "NOT_MODELLED_BUGS",
    "NOT_MODELLED_KRAFT_BUGS",
    "RENAMED_BUGS",
    "SUPPORTED_VERSIONS",
    "Bounds",
    "BugSwitch",
    "Gate",
    "Scenario",
    "ScenarioError",
    "Topic",
    "load_scenario",
    "load_scenario_file",
    "parse_version",
    "renamed_switch_hint",
    "version_text",
    "with_bug",
    "with_properties",
    "with_version",
]
