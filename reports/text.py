"""The plain-text report, in TLC's console vocabulary.

It renders an :class:`~explorer.results.ExplorationResult` and the replayed traces of its
discoveries: the outcome, each discovery (a headline, the evidence, the trace step by step), the
warnings for sometimes properties never satisfied, the closing statistics, per-action coverage
and the per-level table. Nothing is recomputed here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from explorer.contract import PropertyKind
from explorer.progress import final_statistics_lines
from explorer.replay import Trace
from explorer.results import Discovery, ExplorationResult, Outcome

_HEADLINES = {
    PropertyKind.ALWAYS: "Error: Invariant {name} is violated.",
    PropertyKind.ACTION_ALWAYS: "Error: Action property {name} is violated.",
    PropertyKind.SOMETIMES: "Example found for sometimes property {name}.",
    PropertyKind.ACTION_SOMETIMES: "Example found for action sometimes property {name}.",
}


def render_text(result: ExplorationResult, traces: Mapping[str, Trace]) -> str:
    """The report of ``result``; ``traces`` maps a property name to the replayed trace of its
    discovery."""
    lines = [f"Outcome: {result.outcome.value} (exit code {result.exit_code}), engine {result.engine}.", ""]
    lines += _outcome_lines(result)
    for discovery in result.discoveries:
        lines += ["", *_discovery_lines(discovery, traces.get(discovery.property))]
    if result.never_found:
        lines.append("")
        lines += [
            f"Warning: sometimes property {name} was never satisfied: the scenario may be vacuous for it."
            for name in result.never_found
        ]
    lines += ["", *final_statistics_lines(result.stats)]
    lines += ["", *_coverage_lines(result)]
    lines += ["", *_level_lines(result)]
    return "\n".join(lines) + "\n"


def _outcome_lines(result: ExplorationResult) -> list[str]:
    if result.outcome is Outcome.OK:
        return ["Model checking completed. No error has been found."]
    if result.outcome is Outcome.VIOLATION:
        names = ", ".join(d.property for d in result.violations)
        return [f"Model checking found a violation of {names}."]
    if result.outcome is Outcome.INCONCLUSIVE:
        return [f"Model checking stopped before the search was complete: {result.reason}."]
    return [f"Bad input: {result.reason}"]


def _discovery_lines(discovery: Discovery, trace: Trace | None) -> list[str]:
    steps = "step" if discovery.trace_length == 1 else "steps"
    lines = [
        _HEADLINES[discovery.kind].format(name=discovery.property),
        f"Kind: {discovery.kind.value}; trace of {discovery.trace_length} {steps}.",
        "Evidence:",
        *(f"  {key}: {_value(value)}" for key, value in discovery.evidence.items()),
    ]
    if trace is None:
        return [*lines, "(no trace: the discovery was not replayed)"]
    lines.append(f"State 0 (initial): fingerprint {trace.initial_fingerprint}")
    lines += [f"  {line}" for line in trace.initial]
    for number, step in enumerate(trace.steps, 1):
        lines.append(f"Step {number}: {step.action}  (fingerprint {step.fingerprint})")
        lines += [f"  {change}" for change in step.changes] or ["  (no field changed)"]
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
    if isinstance(value, Iterable):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return str(value)
