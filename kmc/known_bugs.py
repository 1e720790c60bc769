"""Known bugs named: a violated property joined to the enabled bug switches that break it.

A scenario for an old Kafka version switches on, by default, the historical bugs that version had
(:data:`model.scenario.BUGS`); a violation of a property one of them breaks is that bug, not a new
finding. The composition root joins the bug catalogue to a result here, so that the explorers stay
Kafka-free, and hands the renderers data (``summary.json``'s ``known_bugs``): per violated property,
the switches and one sentence a reader can act on, e.g. "This is KAFKA-9212 (fixed in 2.4.0; on
because `[kafka] version = "2.3"`). To look past it: `[bugs] KAFKA_9212 = false`."
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from typing import Any

from model.scenario import BUGS, KRAFT_BUGS, NEVER_FIXED, BugSwitch, Scenario


def known_bugs(scenario: Scenario, violated: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Violated property -> ``{"switches": [...], "sentence": ...}`` for each one an enabled switch breaks."""
    explicit = _explicit_switches(scenario.source)
    version = f"{scenario.version[0]}.{scenario.version[1]}"
    notes: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(violated):
        table = BUGS if scenario.kraft is None else KRAFT_BUGS
        switches = [b for b in table.values() if b.breaks == name and scenario.bug(b.name)]
        if not switches:
            continue
        facts = [_switch_facts(b, explicit, version) for b in switches]
        verb = "This is" if len(facts) == 1 else "This may be"
        what = " or ".join(f"{f['label']} ({f['why']})" for f in facts)
        look_past = ", ".join(f"`[bugs] {f['switch']} = false`" for f in facts)
        notes[name] = {"switches": facts, "sentence": f"{verb} {what}. To look past it: {look_past}."}
    return notes


def _switch_facts(bug: BugSwitch, explicit: dict[str, bool], version: str) -> dict[str, str]:
    on_because = (f"`[bugs] {bug.name} = true`" if explicit.get(bug.name)
                  else f'`[kafka] version = "{version}"`')
    if bug.fixed_in is None:
        label, parts = f"the planted bug {bug.name}", []
    elif bug.jira.startswith("KAFKA-"):
        label = bug.jira
        parts = ([] if bug.jira.replace("-", "_") == bug.name else [f"switch {bug.name}"]) + [
            bug.fixed_release if bug.fixed_in == NEVER_FIXED else f"fixed in {bug.fixed_release}"]
    else:
        label, parts = bug.name, [p for p in (bug.jira.strip("()"), bug.fixed_release) if p]
    return {"switch": bug.name, "jira": bug.jira, "fixed_release": bug.fixed_release, "label": label,
            "on_because": on_because, "why": "; ".join([*parts, f"on because {on_because}"])}

def _explicit_switches(source: str) -> dict[str, bool]:
    """The ``[bugs]`` entries the scenario's text sets (the rest follow ``[kafka] version``)."""
    try:
        table = tomllib.loads(source).get("bugs", {})
    except tomllib.TOMLDecodeError:  # a Scenario's source was validated when it was loaded
        return {}
    return {k: v for k, v in table.items() if isinstance(v, bool)} if isinstance(table, dict) else {}
