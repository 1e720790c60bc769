"""``report.html``: one self-contained page (inline CSS and SVG, no script, nothing fetched).

For each counterexample: the step table (changed cells highlighted, the violating step marked), a
sequence diagram drawn as SVG (the model's lanes, e.g. admin, controller, ZooKeeper and the
brokers, with the requests, responses, ZooKeeper writes and watches of each step as arrows and the
violating step shaded), the narrative (what the system's own logs would have said, step by step),
the whole state after each step (folded), and the violated property with its evidence. Then the
properties checked, the examples of sometimes properties, the states-per-level chart (SVG drawn
from the level statistics) and per-action coverage.

The page is rendered by jinja2 with autoescape on, so every string from a scenario or a model
(topic names, descriptions, file names) is escaped; the geometry of the diagrams is computed here
and only numbers and escaped text reach the SVG.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import jinja2

from explorer.replay import Trace
from explorer.results import Discovery, ExplorationResult, LevelStats
from reports.common import (
    KIND_WORDS,
    RunFacts,
    SequenceStep,
    code_spans,
    deliveries,
    evidence_items,
    format_value,
    ordered_discoveries,
    sequence,
    sometimes_summary,
    step_notes,
    step_table,
    step_title,
    view_tables,
)

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("reports", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)

# Sequence diagram geometry (pixels); label widths assume ~6.3 px per character at 11 px.
_LANE_GAP = 190
_LEFT = 70
_TOP = 58
_ROW = 20
_LINE = 13
_CHAR = 6.3


def split_items(text: str) -> list[str]:
    """A cell's text cut where a line may break: between the items of a mapping (``0: X, 1: Y``) or
    of a ``; ``-joined list, never inside an item such as ``[0, 1]``."""
    return re.split(r"(?<=,) (?=[^\s,\[\]]+: )|(?<=;) ", text)


_ENV.globals["split_items"] = split_items


def render_html(result: ExplorationResult, traces: Mapping[str, Trace], facts: RunFacts | None = None) -> str:
    facts = facts or RunFacts()
    discoveries = ordered_discoveries(result)
    context = {
        "result": result,
        "facts": facts,
        "kind_words": KIND_WORDS,
        "properties": _properties(result, facts),
        "sometimes_summary": sometimes_summary(result, facts),
        "counterexamples": [_counterexample(d, traces.get(d.property), facts) for d in result.violations],
        "examples": [_counterexample(d, traces.get(d.property), facts) for d in discoveries if not d.is_violation],
        "chart": level_chart(result.stats.levels),
        "coverage": result.stats.actions,
        "levels": result.stats.levels,
    }
    return _ENV.get_template("report.html.j2").render(**context)


def sequence_svg(trace: Trace, *, violating: bool = False) -> str:
    """The trace's sequence diagram as one ``<svg>`` element (empty when the model declares no lanes), the
    last step shaded as violating when ``violating``; its CSS is :func:`diagram_css`."""
    diagram = sequence_diagram(trace, violating=violating)
    if diagram is None:
        return ""
    return str(_ENV.get_template("diagrams.j2").module.sequence_svg(diagram))  # type: ignore[attr-defined]


def diagram_css() -> str:
    """The CSS of the diagrams' SVG (report.html.j2 inlines the same)."""
    return str(_ENV.get_template("diagrams.j2").module.diagram_css())  # type: ignore[attr-defined]


def _properties(result: ExplorationResult, facts: RunFacts) -> list[dict[str, str]]:
    found = {d.property: d for d in result.discoveries}
    names = [p.name for p in facts.properties] or list(found)
    rows = []
    for name in names:
        p = facts.property(name)
        d = found.get(name)
        kind = KIND_WORDS.get(p.kind, p.kind) if p else (d.kind.value if d else "")
        if d is not None and d.is_violation:
            verdict, css = f"violated ({d.trace_length} steps)", "bad"
        elif d is not None:
            verdict, css = f"example found ({d.trace_length} steps)", "good"
        elif name in facts.not_applicable:
            verdict, css = f"not applicable: the scenario enables {facts.not_applicable[name]}", "na"
        elif name in result.never_found:
            verdict, css = ("never satisfied: the scenario may be vacuous for it" if result.exhaustive
                            else "no example in the states visited"), "warn"
        elif kind.endswith("always"):
            complete = result.outcome.value == "ok" and result.exhaustive
            verdict, css = ("holds" if complete else "not violated in the states explored"), "good"
        else:
            verdict, css = "no example in the states explored", "warn"
        rows.append({"name": name, "kind": kind, "description": p.description if p else "", "verdict": verdict,
                     "css": css})
    return rows


def _counterexample(discovery: Discovery, trace: Trace | None, facts: RunFacts) -> dict[str, Any]:
    p = facts.property(discovery.property)
    data: dict[str, Any] = {
        "discovery": discovery,
        "kind": KIND_WORDS.get(discovery.kind.value, discovery.kind.value),
        "description": p.description if p else "",
        "known_bug": code_spans(facts.known_bugs.get(discovery.property, "")) if discovery.is_violation else [],
        "evidence": evidence_items(discovery),
        "trace": trace,
    }
    if trace is not None:
        data["table"] = step_table(trace)
        data["diagram"] = sequence_diagram(trace, violating=discovery.is_violation)
        data["steps"] = _steps(trace)
    return data


def _steps(trace: Trace) -> list[dict[str, Any]]:
    """Per step: title, phase, log lines, changes, and the full state's tables with changed cells."""
    steps = []
    views = [trace.initial_view, *(s.view for s in trace.steps)]
    for number, view in enumerate(views):
        step = trace.steps[number - 1] if number else None
        previous = views[number - 1] if number else None
        steps.append({
            "number": number,
            "action": "initial state" if step is None else step.action,
            "title": "initial state" if step is None else step_title(step.action, view),
            "phase": str(view.get("phase") or ""),
            "notes": list(step_notes(view)),
            "log": list(view.get("log", ())),
            "changes": list(trace.initial if step is None else step.changes),
            "tables": [_full_table(t, previous) for t in view_tables(view)],
        })
    return steps


def _full_table(table: Mapping[str, Any], previous: Mapping[str, Any] | None) -> dict[str, Any]:
    before: dict[tuple[str, str], str] = {}
    if previous is not None:
        for t in view_tables(previous):
            if t["id"] == table["id"]:
                for row in t.get("rows", ()):
                    for k, v in row.get("cells", {}).items():
                        before[(row["key"], k)] = format_value(v)
    columns = list(table.get("columns", ()))
    rows = []
    for row in table.get("rows", ()):
        cells = []
        for column in columns:
            text = format_value(row.get("cells", {}).get(column["id"]))
            changed = previous is not None and before.get((row["key"], column["id"])) != text
            cells.append({"text": text, "changed": changed})
        rows.append({"key": row["key"], "cells": cells})
    return {"title": table.get("title", table["id"]), "columns": [c["title"] for c in columns], "rows": rows}


# ---- the sequence diagram ----------------------------------------------------------------------


@attrs.frozen
class Lane:
    x: float
    title: str
    subtitle: str


@attrs.frozen
class Arrow:
    x1: float
    x2: float
    y: float
    kind: str
    label_x: float
    label_y: float
    lines: tuple[str, ...]
    full: str


@attrs.frozen
class NoteBox:
    x: float
    y: float
    width: float
    height: float
    lines: tuple[str, ...]
    full: str


@attrs.frozen
class Band:
    y: float
    height: float
    number: int
    title_lines: tuple[str, ...]
    violating: bool


@attrs.frozen
class Delivery:
    """A curved arrow from the head of a message that queued an item (a response, a watch's event, a
    request) to the note of the later step that takes it off the queue, beside the lane."""

    path: str
    full: str


@attrs.frozen
class SequenceDiagram:
    width: float
    height: float
    lanes: tuple[Lane, ...]
    bands: tuple[Band, ...]
    arrows: tuple[Arrow, ...]
    notes: tuple[NoteBox, ...]
    lane_top: float
    deliveries: tuple[Delivery, ...] = ()


def sequence_diagram(trace: Trace, *, violating: bool = True) -> SequenceDiagram | None:
    """The geometry of the trace's sequence diagram, or None when the model declares no lanes."""
    lane_data, steps = sequence(trace)
    if not lane_data:
        return None
    xs = {lane["id"]: _LEFT + 80 + i * _LANE_GAP for i, lane in enumerate(lane_data)}
    width = _LEFT + 80 + (len(lane_data) - 1) * _LANE_GAP + 260
    lanes = tuple(Lane(xs[lane["id"]], lane.get("title", lane["id"]), lane.get("subtitle", ""))
                  for lane in lane_data)
    y = _TOP + 10
    bands, arrows, notes = [], [], []
    heads: dict[tuple[int, int], tuple[float, float]] = {}  # (step, message) -> where it ends (x, y)
    for step in steps:
        top = y
        title_lines = tuple(_wrap(f"{step.number}. {step.title}", width - _LEFT - 20))
        y += _LINE * len(title_lines) + 8
        for index, m in enumerate(step.messages):
            source, target = xs[m["from"]], xs[m["to"]]
            if source == target:
                lines = tuple(_wrap(m["label"], min(2 * _LANE_GAP - 20, width - source - 10)))
                height = _LINE * len(lines) + 6
                notes.append(NoteBox(source - 6, y, _text_width(lines) + 12, height, lines, m["label"]))
                heads[(step.number, index)] = (source - 6, y + 9)
                y += height + 6
            else:
                start = min(source, target) + 6
                lines = tuple(_wrap(m["label"], width - start - 10))
                y += _LINE * len(lines)
                arrows.append(Arrow(source, target, y + 4, m.get("kind", "request"), start, y - _LINE * len(lines) + 9,
                                    lines, m["label"]))
                heads[(step.number, index)] = (target, y + 4)
                y += _ROW - 6
        y += 10
        bands.append(Band(top, y - top, step.number, title_lines, violating and step.number == len(steps)))
    return SequenceDiagram(width, y + 10, lanes, tuple(bands), tuple(arrows), tuple(notes), _TOP,
                           _deliveries(steps, heads))


def _deliveries(steps: Sequence[SequenceStep], heads: Mapping[tuple[int, int], tuple[float, float]]
                ) -> tuple[Delivery, ...]:
    """The curves from each queued message to the note of the step that processes it (left of the
    lane, each a little further out than the one before, so that neighbours stay apart)."""
    curves = []
    for n, (queued, dequeued) in enumerate(sorted(deliveries(steps).items())):
        (x1, y1), (x2, y2) = heads[queued], heads[dequeued]
        bulge = 26 + 9 * (n % 4) + min((y2 - y1) / 12, 40)
        left = min(x1, x2 + 6) - bulge
        path = f"M{x1 - 2:.1f},{y1:.1f} C{left:.1f},{y1:.1f} {left:.1f},{y2:.1f} {x2 - 1:.1f},{y2:.1f}"
        message = steps[queued[0] - 1].messages[queued[1]]
        curves.append(Delivery(path, f"queued in step {queued[0]}, processed in step {dequeued[0]}: "
                                     f"{message.get('queued', '')}"))
    return tuple(curves)


def _wrap(text: str, pixels: float) -> list[str]:
    return textwrap.wrap(text, max(20, int(pixels / _CHAR)), break_on_hyphens=False) or [""]


def _text_width(lines: Sequence[str]) -> float:
    return max(len(line) for line in lines) * _CHAR


# ---- the states-per-level chart ----------------------------------------------------------------


@attrs.frozen
class Bar:
    x: float
    y: float
    width: float
    height: float
    depth: int
    value: int
    show_label: bool


@attrs.frozen
class LevelChart:
    width: float
    height: float
    plot_left: float
    plot_bottom: float
    plot_top: float
    bars: tuple[Bar, ...]
    ticks: tuple[tuple[float, str], ...]  # (y, label) of the value axis


def level_chart(levels: Sequence[LevelStats]) -> LevelChart | None:
    """Distinct states first found at each depth (depth 0: the initial states), as bars."""
    if not levels:
        return None
    counts = [levels[0].distinct_total - levels[0].new, *(lv.new for lv in levels)]
    width, height, left, bottom, top = 760.0, 280.0, 70.0, 240.0, 20.0
    slot = (width - left - 20) / len(counts)
    peak = max(max(counts), 1)
    scale = (bottom - top) / peak
    bars = tuple(Bar(left + i * slot + slot * 0.15, bottom - c * scale, slot * 0.7, c * scale, i, c,
                     len(counts) <= 30) for i, c in enumerate(counts))
    ticks = tuple((bottom - peak * f * scale, f"{round(peak * f):,}") for f in (0, 0.25, 0.5, 0.75, 1.0))
    return LevelChart(width, height, left, bottom, top, bars, ticks)
