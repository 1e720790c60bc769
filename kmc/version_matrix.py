"""The version matrix: for each kmc finding and each bug switch, the Kafka versions where it reproduces.

Computed by running the searches, not written by hand: every ``[kafka] version`` the model takes falls in a
class of versions the model cannot tell apart (the same gates in force and the same bug switches on by default,
:func:`version_classes`), and the local BFS runs each row's scenario once per class, at the class's first
version, with that version's defaults, checking the row's property alone (the search stops at its first
violation, which another property's must not pre-empt). A row reproduces at a class when the search violates
the row's property.
A class whose version the loader refuses for the scenario (a change it reaches is not modelled yet,
``docs/versions.md``) is shown as such, never as "holds".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs

from explorer.bfs import run_bfs
from explorer.results import Outcome
from kmc.compose import model_for, resolve_scenario
from model.scenario import (
    BUGS,
    GATES,
    SUPPORTED_VERSIONS,
    Scenario,
    ScenarioError,
    parse_version,
    with_bug,
    with_properties,
    with_version,
)


@attrs.frozen
class Row:
    label: str  # the switch or finding
    scenario: str
    breaks: str  # the property whose violation is the reproduction
    switch: str = ""  # a switch's row: its explicit setting in the scenario is replaced by the version's default


#: kmc's findings (docs/findings.md): number, scenario and the property each breaks.
FINDINGS: tuple[Row, ...] = (
    Row("finding 1", "stale-deletion-response", "deletion_completes_only_when_all_replicas_succeeded"),
    Row("finding 2", "stray-log-after-deletion", "no_stray_logs_when_idle"),
    Row("finding 2b", "stray-log-adopted-on-recreation", "recreated_topic_never_adopts_stray_log"),
    Row("finding 3", "reassignment-isr-shrink-race", "leader_elected_when_isr_member_alive"),
    Row("finding 4", "preferred-election-without-leader", "elected_controller_completes_failover"),
    Row("finding 5", "offline-election-during-controlled-shutdown", "single_acting_leader_when_idle"),
    Row("finding 6", "stray-log-refused-on-recreation", "live_brokers_host_their_replicas"),
)


def switch_rows() -> tuple[Row, ...]:
    return tuple(Row(b.name, b.scenario, b.breaks, b.name) for b in BUGS.values() if b.fixed_in is not None)


def version_classes() -> list[list[str]]:
    """The modelled versions, grouped in runs the model cannot tell apart (same gates in force, same defaults)."""
    def key(v: str) -> tuple[frozenset[str], frozenset[str]]:
        t = parse_version(v)
        return (frozenset(n for n, g in GATES.items() if t >= g.since),
                frozenset(n for n, b in BUGS.items() if b.default_for(t)))
    classes: list[list[str]] = []
    for v in SUPPORTED_VERSIONS:
        if classes and key(classes[-1][0]) == key(v):
            classes[-1].append(v)
        else:
            classes.append([v])
    return classes


def span(versions: list[str]) -> str:
    return versions[0] if len(versions) == 1 else f"{versions[0]}–{versions[-1]}"


def cell(row: Row, version: str) -> str:
    """"yes" (reproduces), "no", or "refused (GATE)" for a version the scenario cannot run at yet."""
    try:
        scenario: Scenario = with_version(resolve_scenario(row.scenario), version)
        if row.switch:
            scenario = with_bug(scenario, row.switch, BUGS[row.switch].default_for(parse_version(version)))
        # the row's property alone: the search stops at its first violation, which must not be another property's
        scenario = with_properties(scenario, [row.breaks])
    except ScenarioError as e:
        gate = next((g for g in GATES if g.replace("_", "-", 1) in str(e)), "?")
        return f"not modelled ({gate.replace('_', '-', 1)})"
    result = run_bfs(model_for(scenario))
    violated = {v.property for v in result.violations}
    if result.outcome is Outcome.VIOLATION and row.breaks in violated:
        return "yes"
    return "no" if result.outcome in (Outcome.OK, Outcome.VIOLATION) else result.outcome.value


def matrix(rows: Iterable[Row], progress: Callable[[str], None] = lambda _: None) -> str:
    """The matrix as a Markdown table: a row per finding or switch, a column per class of versions."""
    classes = version_classes()
    lines = ["| | " + " | ".join(span(c) for c in classes) + " |",
             "| --- |" + " --- |" * len(classes)]
    for row in rows:
        progress(row.label)
        lines.append(f"| {row.label} (`{row.scenario}`) | " + " | ".join(cell(row, c[0]) for c in classes) + " |")
    return "\n".join(lines)
