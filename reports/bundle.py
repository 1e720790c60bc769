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
    """The bundle's files by format (``summary.json`` under ``json``)."""
    violations = [d["property"] for d in document.get("discoveries", ()) if d.get("violation") and d.get("trace")]
    facts = document.get("model_factory")
    return {
        "json": ["summary.json"],
        "text": ["report.txt"],
        "md": ["report.md"],
        "html": ["report.html"],
        "itf": [itf_file_name(name) for name in violations],
        "replay": [replay_file_name(name) for name in violations] if facts else [],
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


def load_document(document: Mapping[str, Any]) -> tuple[ExplorationResult, dict[str, Trace], RunFacts]:
    """The result, traces and facts a ``summary.json`` document holds."""
    version = document.get("schema_version")
    if version != SCHEMA_VERSION:
        raise BundleError(f"summary.json has schema version {version!r}, this kmc reads version {SCHEMA_VERSION}; "
                          "re-run the exploration with this kmc to get a bundle it can render.")
    try:
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
        )
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise BundleError(f"summary.json lacks or garbles a field the reports need ({e!r}); re-run the exploration "
                          "to write a complete bundle.") from None
    return result, traces, RunFacts.from_document(document)
