"""The plain-text report, in TLC's console vocabulary (``report.txt`` and what ``kmc explore`` prints).

It renders an :class:`~explorer.results.ExplorationResult` and the replayed traces of its
discoveries: the outcome, the scenario and the properties checked, then each discovery, violations
first (a headline, the evidence, the trace step by step, each step headed by what it did: the
event processed or the request applied, with broker epochs), the warnings for sometimes properties
never satisfied, the closing statistics, per-action coverage and the per-level table. A step lists
the fields it changed and, unless ``difftrace``, the summary tables of the state it reached (TLC
prints whole states; ``-difftrace`` only what changed). Nothing is recomputed here.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Mapping
from typing import Any

from explorer.contract import PropertyKind
from explorer.progress import final_statistics_lines
from explorer.replay import Trace
from explorer.results import Discovery, ExplorationResult, Outcome
from reports.common import (
    KIND_WORDS,
    RunFacts,
    format_value,
    ordered_discoveries,
    sometimes_summary,
    step_notes,
    step_title,
    view_tables,
)

_HEADLINES = {
    PropertyKind.ALWAYS: "Error: Invariant {name} is violated.",
    PropertyKind.ACTION_ALWAYS: "Error: Action property {name} is violated.",
    PropertyKind.SOMETIMES: "Example found for sometimes property {name}.",
    PropertyKind.ACTION_SOMETIMES: "Example found for action sometimes property {name}.",
}


def render_text(result: ExplorationResult, traces: Mapping[str, Trace], facts: RunFacts | None = None, *,
                difftrace: bool = False, brief: bool = False) -> str:
    """The report of ``result``; ``traces`` maps a property name to the replayed trace of its
    discovery; ``facts`` names the scenario and the properties checked. ``brief`` (the terminal):
    the verdict, the violations and the statistics, the sometimes properties in one line; the
    examples, coverage and level tables stay in the report files."""
    facts = facts or RunFacts()
    lines = [f"Outcome: {result.outcome.value} (exit code {result.exit_code}), engine {result.engine}."]
    lines += _facts_lines(facts, brief=brief)
    lines += _bounds_lines(result)
    lines += ["", *_outcome_lines(result, facts)]
    shown = result.violations if brief else ordered_discoveries(result)
    for discovery in shown:
        lines += ["", *_discovery_lines(discovery, traces.get(discovery.property), difftrace,
                                        facts.known_bugs.get(discovery.property))]
    summary = sometimes_summary(result, facts)
    if summary:
        lines += ["", *textwrap.wrap(summary, _PROPERTIES_LINE, subsequent_indent="  ", break_on_hyphens=False)]
    if not brief:
        lines += _sometimes_notes(result, facts)
    if not result.stats.collision_negligible:
        lines += ["", f"Warning: the fingerprint collision estimate {result.stats.collision_probability:.1E} is not "
                      f"negligible with {result.stats.fingerprint_bits}-bit fingerprints: a state may have been "
                      "skipped; run again with --fingerprint-bits 128."]
    lines += ["", *final_statistics_lines(result.stats, complete=not result.stopped_early,
                                          exhaustive=result.exhaustive)]
    if not brief:
        lines += ["", *_coverage_lines(result)]
        if result.stats.levels:
            lines += ["", *_level_lines(result)]
    if brief:
        # On the terminal kmc.outputs.finish_run ends with the line of an early stop (and the command
        # that resumes the run) or of a sample: printed once, not here as well.
        pass
    elif result.stopped_early:  # the last line of an early stop says so
        lines += ["", f"Stopped before the search was complete: {result.reason}; "
                      f"{result.stats.queue:,} states left on queue."]
    elif result.outcome is Outcome.NONE_IN_SAMPLE:  # and so does the last line of a sample
        lines += ["", sample_sentence(result)]
    return "\n".join(lines) + "\n"


def _sometimes_notes(result: ExplorationResult, facts: RunFacts) -> list[str]:
    """Per sometimes property without an example: not applicable (why), vacuous, or not yet found."""
    if result.never_found:
        notes = [
            f"Note: sometimes property {name} is not applicable: the scenario enables {facts.not_applicable[name]}."
            if name in facts.not_applicable else
            f"Warning: sometimes property {name} was never satisfied: the scenario may be vacuous for it."
            if result.exhaustive else
            f"Note: sometimes property {name} was not satisfied in the states the walks visited."
            for name in result.never_found
        ]
    elif result.outcome is Outcome.INCONCLUSIVE and result.examples_missing:
        notes = [
            f"Note: sometimes property {name} has no example so far (the search is incomplete)."
            for name in result.examples_missing
        ]
    else:
        return []
    return ["", *notes]


#: The longest "Properties checked" line the terminal prints; a longer list is counted by kind there.
_PROPERTIES_LINE = 100


def _facts_lines(facts: RunFacts, *, brief: bool = False) -> list[str]:
    lines = []
    if facts.scenario_name:
        version = f" (Kafka {facts.kafka_version})" if facts.kafka_version else ""
        bugs = f", bug switches: {', '.join(facts.bugs)}" if facts.bugs else ""
        lines += textwrap.wrap(f"Scenario: {facts.scenario_name}{version}{bugs}.", _PROPERTIES_LINE,
                               subsequent_indent="  ", break_on_hyphens=False)
        if facts.scenario_description:
            lines += textwrap.wrap(" ".join(facts.scenario_description.split()), 100, initial_indent="  ",
                                   subsequent_indent="  ")
    if facts.properties:
        listed = "Properties checked: " + ", ".join(f"{p.name} ({KIND_WORDS.get(p.kind, p.kind)})"
                                                    for p in facts.properties) + "."
        if len(listed) <= _PROPERTIES_LINE:
            lines.append(listed)
        elif brief:
            kinds = Counter(KIND_WORDS.get(p.kind, p.kind) for p in facts.properties)
            lines.append(f"Properties checked: {len(facts.properties)} ("
                         + ", ".join(f"{n} {kind}" for kind, n in kinds.items()) + "); report.txt lists them.")
        else:
            lines += textwrap.wrap(listed, _PROPERTIES_LINE, subsequent_indent="  ", break_on_hyphens=False)
    return lines


def _outcome_lines(result: ExplorationResult, facts: RunFacts) -> list[str]:
    if result.outcome is Outcome.NONE_IN_SAMPLE:
        return [sample_sentence(result)]
    if result.outcome is Outcome.OK and not result.properties:
        return ["Model checking completed, but no property was checked: nothing has been verified."]
    if result.outcome is Outcome.OK and set(result.never_found) == {name for name, _ in result.properties}:
        # Only sometimes properties, none satisfied: the search found neither an error nor an example.
        names = ", ".join(result.never_found)
        return [f"Model checking completed: sometimes property {names} was never satisfied, and no invariant "
                "was checked, so nothing has been verified."]
    if result.outcome is Outcome.OK:
        return ["Model checking completed. No error has been found."]
    if result.outcome is Outcome.VIOLATION:
        names = ", ".join(d.property + (" (a known bug, see below)" if d.property in facts.known_bugs else "")
                          for d in result.violations)
        return [f"Model checking found a violation of {names}."]
    if result.outcome is Outcome.INCONCLUSIVE:
        return [f"Model checking stopped before the search was complete: {result.reason}."]
    return [f"Bad input: {result.reason}"]


def sample_sentence(result: ExplorationResult) -> str:
    """What a sampling run without a violation did, and that it is not a verdict: "no violation in
    200 walks of at most 100 steps; 4,212 distinct states visited; not exhaustive"."""
    d = result.details
    if result.engine == "hypothesis":
        ran, limit = d.get("examples"), d.get("max_steps_per_example")
        sample = (f"{ran:,} Hypothesis examples of at most {limit} steps" if isinstance(ran, int)
                  and isinstance(limit, int) else "the Hypothesis examples run")
    else:
        ran, limit = d.get("walks"), d.get("max_steps_per_walk")
        sample = (f"{ran:,} walks of at most {limit} steps" if isinstance(ran, int) and isinstance(limit, int)
                  else "the walks run")
    unsatisfied = (f"; sometimes property {', '.join(result.never_found)} not satisfied in them"
                   if result.never_found else "")
    return (f"No violation in {sample}; {result.stats.distinct:,} distinct states visited{unsatisfied}; "
            "not exhaustive: this is no verdict on the states not visited (kmc explore searches them all).")


def _bounds_lines(result: ExplorationResult) -> list[str]:
    """The bounds of the search, so that a verdict says what it covers."""
    given = [f"{key}={_value(value)}" for key, value in result.bounds.items() if value is not None]
    return textwrap.wrap("Bounds: " + ", ".join(given) + ".", _PROPERTIES_LINE, subsequent_indent="  ",
                         break_on_hyphens=False) if given else []


def _discovery_lines(discovery: Discovery, trace: Trace | None, difftrace: bool,
                     known_bug: str | None = None) -> list[str]:
    steps = "step" if discovery.trace_length == 1 else "steps"
    lines = [
        _HEADLINES[discovery.kind].format(name=discovery.property),
        *(_known_bug_lines(known_bug) if known_bug and discovery.is_violation else []),
        f"Kind: {discovery.kind.value}; trace of {discovery.trace_length} {steps}.",
        "Evidence:",
        *(f"  {key}: {_value(value)}" for key, value in discovery.evidence.items()),
    ]
    if trace is None:
        return [*lines, "(no trace: the discovery was not replayed)"]
    lines.append("State 0 (initial):")
    lines += [f"  {line}" for line in trace.initial]
    if not difftrace:
        lines += _state_lines(trace.initial_view, summary_only=False)
    for number, step in enumerate(trace.steps, 1):
        title = step_title(step.action, step.view)
        lines.append(f"Step {number}: {step.action}" + (f": {title}" if title != step.action else ""))
        if step.view.get("phase"):
            lines.append(f"  phase: {step.view['phase']}")
        lines += [f"  note: {note}" for note in step_notes(step.view)]
        lines += [f"  {change}" for change in step.changes] or ["  (no field changed)"]
        if not difftrace:
            lines += _state_lines(step.view)
    return lines


def _known_bug_lines(sentence: str) -> list[str]:
    """The known-bug note on two lines (what it is; how to look past it), never cut inside a `[bugs]` line."""
    what, sep, look_past = sentence.partition(" To look past it: ")
    return [what, f"  To look past it: {look_past}"] if sep else [sentence]


def _state_lines(view: Mapping[str, Any], *, summary_only: bool = True) -> list[str]:
    """The (summary) tables of a state, one line per row (``| t-0: leader = 0 | leader epoch = 1 | ...``)."""
    lines = []
    for table in view_tables(view):
        if summary_only and not table.get("summary"):
            continue
        titles = {c["id"]: c["title"] for c in table.get("columns", ())}
        for row in table.get("rows", ()):
            cells = " | ".join(f"{titles.get(k, k)} = {format_value(v)}" for k, v in row.get("cells", {}).items())
            lines.append(f"  | {row['key'] or table['title']}: {cells}")
    return lines


def _coverage_lines(result: ExplorationResult) -> list[str]:
    actions = result.stats.actions
    if not actions:
        return ["Action coverage: no action was taken."]
    width = max(len(a.name) for a in actions)
    return [
        "Action coverage (distinct : generated):",
        *(f"  {a.name:<{width}}  {a.distinct:>12,} : {a.generated:,}" for a in actions),
    ]


def _level_lines(result: ExplorationResult) -> list[str]:
    header = f"  {'depth':>5}  {'frontier':>12}  {'generated':>12}  {'new':>12}  {'distinct':>12}  {'seconds':>8}"
    return [
        "Levels:",
        header,
        *(
            f"  {lv.depth:>5}  {lv.frontier:>12,}  {lv.generated:>12,}  {lv.new:>12,}  "
            f"{lv.distinct_total:>12,}  {lv.seconds:>8.2f}"
            for lv in result.stats.levels
        ),
    ]


def _value(value: Any) -> str:
    """Evidence values as a reader writes them: lists without quotes, e.g. ``[b1, b2]``."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, set | frozenset):
        return "{" + ", ".join(sorted(_value(v) for v in value)) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return str(value)
