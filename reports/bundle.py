"""A run's bundle: the files a run writes, all rendered from its ``summary.json`` document.

:func:`bundle_files` renders every file of a bundle from the JSON document (``summary.json``,
``report.txt``, ``report.md``, ``report.html``, and per counterexample ``<property>.itf.json`` and
``replay_<property>.py``). The document is the one result structure: the renderers read the
result, traces and facts :func:`load_document` rebuilds from it, so the files written at the end of
a run and the files ``kmc report`` re-renders later from ``summary.json`` are the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from explorer.contract import PropertyKind
from explorer.replay import Trace, TraceStep
from explorer.results import (
    SCHEMA_VERSION,
    ActionCoverage,
    Discovery,
    ExplorationResult,
    LevelStats,
    Outcome,
    Statistics,
    StopCause,
)
from reports.common import RunFacts, itf_file_name, replay_file_name

FORMATS = ("text", "md", "html", "itf", "replay")


class BundleError(ValueError):
    """A summary.json that cannot be read back (one sentence naming the problem and the fix)."""


def file_names(document: Mapping[str, Any]) -> dict[str, list[str]]:
    """The bundle's files by format (``summary.json`` under ``json``); :class:`BundleError` when the
    document's discoveries are not a list of objects naming their property."""
    try:
        violations = [d["property"] for d in document.get("discoveries", ()) if d.get("violation") and d.get("trace")]
        itf = [itf_file_name(name) for name in violations]
        replay = [replay_file_name(name) for name in violations] if document.get("model_factory") else []
    except (AttributeError, KeyError, TypeError) as e:
        raise BundleError(f"summary.json lacks or garbles a field the reports need (discoveries: {e!r}); re-run the "
                          "exploration to write a complete bundle.") from None
    return {
        "json": ["summary.json"],
        "text": ["report.txt"],
        "md": ["report.md"],
        "html": ["report.html"],
        "itf": itf,
        "replay": replay,
    }


def bundle_files(document: Mapping[str, Any], formats: tuple[str, ...] = ("json", *FORMATS)) -> dict[str, str]:
    """File name -> text of every file of the bundle in ``formats``, rendered from ``document``."""
    from reports.html import render_html
    from reports.itf import render_itf
    from reports.markdown import render_markdown
    from reports.replay_script import render_replay_script
    from reports.text import render_text

    names = file_names(document)
    complete = {**document, "files": sorted(n for names_ in names.values() for n in names_)}
    result, traces, facts = load_document(complete)
    files: dict[str, str] = {}
    if "json" in formats:
        files["summary.json"] = json.dumps(complete, indent=2) + "\n"
    if "text" in formats:
        files["report.txt"] = render_text(result, traces, facts)
    if "md" in formats:
        files["report.md"] = render_markdown(result, traces, facts)
    if "html" in formats:
        files["report.html"] = render_html(result, traces, facts)
    for discovery in result.violations:
        trace = traces.get(discovery.property)
        if trace is None:
            continue
        if "itf" in formats:
            files[itf_file_name(discovery.property)] = render_itf(discovery, trace, facts, result.engine)
        if "replay" in formats and facts.model_factory:
            files[replay_file_name(discovery.property)] = render_replay_script(discovery, trace, facts)
    return files


_INT, _NUMBER, _TEXT, _LIST, _MAP = int, (int, float), str, list, dict
_STATISTICS = {"generated": _INT, "distinct": _INT, "depth": _INT, "queue": _INT, "seconds": _NUMBER,
               "levels": _LIST, "actions": _LIST}
_LEVEL = {"depth": _INT, "frontier": _INT, "generated": _INT, "new": _INT, "distinct_total": _INT,
          "seconds": _NUMBER}
_ACTION = {"name": _TEXT, "generated": _INT, "distinct": _INT}
_DISCOVERY = {"property": _TEXT, "kind": _TEXT, "evidence": _MAP, "fingerprints": _LIST, "action_indices": _LIST}
_STEP = {"action": _TEXT, "action_name": _TEXT, "changes": _LIST, "fingerprint": _INT}


def _fields(value: Any, types: Mapping[str, Any], where: str) -> None:
    """Refuse, naming the field, a ``value`` that is not an object with ``types``' fields of those types."""
    if not isinstance(value, dict):
        raise TypeError(f"{where} is not an object")
    for key, kind in types.items():
        field = value.get(key)
        if isinstance(field, bool) or not isinstance(field, kind):
            raise TypeError(f"{where}.{key} is {type(field).__name__}")


#: The parts of a state's view (:func:`explorer.contract` ``state_view``) the renderers read: each
#: optional; the items of each list with every field given here.
_VIEW_TEXT = ("title", "phase", "actor")
#: Optional text fields of a message: the queue item it puts on a queue, or takes off one.
_MESSAGE_ITEMS = ("queued", "dequeued")
_VIEW_LISTS: dict[str, dict[str, Any]] = {
    "lanes": {"id": _TEXT, "title": _TEXT, "subtitle": _TEXT},
    "messages": {"from": _TEXT, "to": _TEXT, "label": _TEXT, "kind": _TEXT},
    "log": {"logger": _TEXT, "line": _TEXT},
    "tables": {"id": _TEXT, "title": _TEXT, "columns": _LIST, "rows": _LIST},
}


def _is_cell(value: Any, depth: int = 0) -> bool:
    """A table cell: null (an empty cell), a boolean, a whole number, text, or a list or object of
    these but null (no floats: ITF has none, nor a null inside a value, and no view writes one)."""
    if isinstance(value, bool | int | str) or (value is None and depth == 0):
        return True
    if depth > 8:
        return False
    if isinstance(value, list):
        return all(_is_cell(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return all(_is_cell(item, depth + 1) for item in value.values())
    return False


def check_view(view: Any, where: str) -> None:
    """Refuse, naming the field, a view the renderers cannot read (raises TypeError)."""
    if view is None or view == {}:
        return
    if not isinstance(view, dict):
        raise TypeError(f"{where} is not an object")
    for key in _VIEW_TEXT:
        if not isinstance(view.get(key, ""), str):
            raise TypeError(f"{where}.{key} is not text")
    for key, item_fields in _VIEW_LISTS.items():
        items = view.get(key, [])
        if not isinstance(items, list):
            raise TypeError(f"{where}.{key} is not a list")
        for i, item in enumerate(items):
            _fields(item, item_fields, f"{where}.{key}[{i}]")
    for i, message in enumerate(view.get("messages", [])):
        for key in _MESSAGE_ITEMS:
            if not isinstance(message.get(key, ""), str):
                raise TypeError(f"{where}.messages[{i}].{key} is not text")
    notes = view.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(note, str) for note in notes):
        raise TypeError(f"{where}.notes is not a list of text")
    for t, table in enumerate(view.get("tables", [])):
        if not isinstance(table.get("summary", False), bool):
            raise TypeError(f"{where}.tables[{t}].summary is not true or false")
        for c, column in enumerate(table["columns"]):
            _fields(column, {"id": _TEXT, "title": _TEXT}, f"{where}.tables[{t}].columns[{c}]")
        for r, row in enumerate(table["rows"]):
            _fields(row, {"key": _TEXT, "cells": _MAP}, f"{where}.tables[{t}].rows[{r}]")
            if not all(_is_cell(cell) for cell in row["cells"].values()):
                raise TypeError(f"{where}.tables[{t}].rows[{r}] has a cell that is not a view's value")


def check_document(document: Mapping[str, Any]) -> None:
    """Check the types of every field the renderers read (a summary.json edited or damaged by hand
    is refused here rather than crashing a renderer); raises TypeError naming the field."""
    _fields(document, {"engine": _TEXT, "outcome": _TEXT, "reason": _TEXT, "statistics": _MAP,
                       "discoveries": _LIST, "never_found": _LIST}, "summary")
    stats = document["statistics"]
    _fields(stats, _STATISTICS, "statistics")
    for i, level in enumerate(stats["levels"]):
        _fields(level, _LEVEL, f"statistics.levels[{i}]")
    for i, action in enumerate(stats["actions"]):
        _fields(action, _ACTION, f"statistics.actions[{i}]")
    if stats.get("fingerprint_bits", 64) not in (64, 128):
        raise TypeError("statistics.fingerprint_bits is not 64 or 128")
    for i, d in enumerate(document["discoveries"]):
        _fields(d, _DISCOVERY, f"discoveries[{i}]")
        numbers = [*d["fingerprints"], *d["action_indices"]]
        if any(isinstance(n, bool) or not isinstance(n, int) for n in numbers):
            raise TypeError(f"discoveries[{i}] has a fingerprint or action index that is not a whole number")
        if len(d["fingerprints"]) != len(d["action_indices"]) + 1:
            raise TypeError(f"discoveries[{i}] has {len(d['fingerprints'])} fingerprints for "
                            f"{len(d['action_indices'])} steps")
        if d.get("trace") is not None:
            trace = d["trace"]
            if not isinstance(trace, list) or len(trace) != len(d["action_indices"]):
                raise TypeError(f"discoveries[{i}].trace does not have one step per action")
            if not isinstance(d.get("initial_state"), list) or not all(isinstance(x, str) for x in d["initial_state"]):
                raise TypeError(f"discoveries[{i}].initial_state is not a list of lines")
            for j, step in enumerate(trace):
                _fields(step, _STEP, f"discoveries[{i}].trace[{j}]")
                if not all(isinstance(c, str) for c in step["changes"]):
                    raise TypeError(f"discoveries[{i}].trace[{j}] has a change that is not text")
                check_view(step.get("view"), f"discoveries[{i}].trace[{j}].view")
            check_view(d.get("initial_view"), f"discoveries[{i}].initial_view")
    if not all(isinstance(n, str) for n in document["never_found"]):
        raise TypeError("never_found holds a name that is not text")
    for i, prop in enumerate(document.get("properties") or ()):
        _fields(prop, {"name": _TEXT, "kind": _TEXT}, f"properties[{i}]")
    for key, kind in (("scenario", (dict, str)), ("bounds", dict), ("details", dict), ("model_factory", dict),
                      ("stopped_by", str), ("run_dir", str), ("known_bugs", dict),
                      ("not_applicable", dict)):
        value = document.get(key)
        if value is not None and not isinstance(value, kind):
            raise TypeError(f"{key} is {type(value).__name__}")
    if document.get("model_factory"):
        from reports.replay_script import check_model_factory

        try:
            check_model_factory(document["model_factory"])
        except ValueError as e:
            raise TypeError(str(e)) from None
    scenario = document.get("scenario")
    if isinstance(scenario, dict):
        for key in ("name", "description", "kafka_version"):
            if not isinstance(scenario.get(key, ""), str):
                raise TypeError(f"scenario.{key} is not text")
        if not isinstance(scenario.get("bugs", []), list) or not all(isinstance(b, str) for b in scenario["bugs"]):
            raise TypeError("scenario.bugs is not a list of names")


def load_document(document: Mapping[str, Any]) -> tuple[ExplorationResult, dict[str, Trace], RunFacts]:
    """The result, traces and facts a ``summary.json`` document holds."""
    version = document.get("schema_version")
    if version != SCHEMA_VERSION:
        raise BundleError(f"summary.json has schema version {version!r}, this kmc reads version {SCHEMA_VERSION}; "
                          "re-run the exploration with this kmc to get a bundle it can render.")
    try:
        check_document(document)
        stats = document["statistics"]
        statistics = Statistics(
            generated=stats["generated"], distinct=stats["distinct"], depth=stats["depth"], queue=stats["queue"],
            seconds=stats["seconds"],
            levels=tuple(LevelStats(lv["depth"], lv["frontier"], lv["generated"], lv["new"], lv["distinct_total"],
                                    lv["seconds"]) for lv in stats["levels"]),
            actions=tuple(ActionCoverage(a["name"], a["generated"], a["distinct"]) for a in stats["actions"]),
            fingerprint_bits=stats.get("fingerprint_bits", 64),
        )
        discoveries = []
        traces: dict[str, Trace] = {}
        for d in document["discoveries"]:
            discoveries.append(Discovery(d["property"], PropertyKind(d["kind"]), d["evidence"],
                                         tuple(d["fingerprints"]), tuple(d["action_indices"]),
                                         statistics.fingerprint_bits))
            if d.get("trace") is not None:
                traces[d["property"]] = Trace(
                    initial=tuple(d["initial_state"]),
                    initial_fingerprint=d["fingerprints"][0],
                    steps=tuple(TraceStep(s["action"], s["action_name"], tuple(s["changes"]), s["fingerprint"],
                                          s.get("view") or {}) for s in d["trace"]),
                    initial_view=d.get("initial_view") or {},
                )
        result = ExplorationResult(
            outcome=Outcome(document["outcome"]), engine=document["engine"], stats=statistics,
            discoveries=tuple(discoveries), never_found=tuple(document["never_found"]), reason=document["reason"],
            details=document.get("details") or {},
            properties=tuple((p["name"], PropertyKind(p["kind"])) for p in document.get("properties") or ()),
            stopped_by=StopCause(document["stopped_by"]) if document.get("stopped_by") else None,
            bounds=document.get("bounds") or {},
            exhaustive=bool(document.get("exhaustive", True)),
        )
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise BundleError(f"summary.json lacks or garbles a field the reports need ({e!r}); re-run the exploration "
                          "to write a complete bundle.") from None
    return result, traces, RunFacts.from_document(document)
