"""The JSON report: one schema-versioned document per run (``summary.json``).

It holds what :class:`~explorer.results.ExplorationResult` holds, plus the replayed traces (each
step with the model's view of it), in plain JSON types: fingerprints are ints, sets and tuples
become lists, enums their values. Nothing is recomputed here; numbers derived from the statistics
(states per second, the collision estimate) are the ones :class:`~explorer.results.Statistics` defines.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from importlib import metadata
from typing import Any

from explorer.replay import Trace
from explorer.results import SCHEMA_VERSION, Discovery, ExplorationResult, Statistics


def render_json(
    result: ExplorationResult, traces: Mapping[str, Trace], extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The report document of ``result``; ``traces`` maps a property name to its replayed trace
    (a discovery without one gets ``"trace": null``); ``extra`` (scenario, Spark master...) is merged
    at the top level and may not replace a field of the schema."""
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kmc_version": kmc_version(),
        "engine": result.engine,
        "outcome": result.outcome.value,
        "exit_code": result.exit_code,
        "reason": result.reason,
        "statistics": _statistics(result.stats),
        "discoveries": [_discovery(d, traces.get(d.property)) for d in result.discoveries],
        "never_found": list(result.never_found),
        "details": jsonable(result.details),
        "bounds": jsonable(result.bounds),
        "stopped_by": None if result.stopped_by is None else result.stopped_by.value,
        "examples_missing": list(result.examples_missing),
        "exhaustive": result.exhaustive,
    }
    for key, value in (extra or {}).items():
        if key in document:
            raise ValueError(f"extra field {key!r} would replace the report's own {key!r}; rename it")
        document[key] = jsonable(value)
    return document


def kmc_version() -> str:
    try:
        return metadata.version("kmc")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def _statistics(stats: Statistics) -> dict[str, Any]:
    return {
        "distinct": stats.distinct,
        "generated": stats.generated,
        "depth": stats.depth,
        "queue": stats.queue,
        "seconds": stats.seconds,
        "states_per_second": _finite(stats.states_per_second),
        "collision_probability": stats.collision_probability,
        "collision_negligible": stats.collision_negligible,
        "fingerprint_bits": stats.fingerprint_bits,
        "levels": [
            {
                "depth": level.depth,
                "frontier": level.frontier,
                "generated": level.generated,
                "new": level.new,
                "distinct_total": level.distinct_total,
                "seconds": level.seconds,
            }
            for level in stats.levels
        ],
        "actions": [
            {"name": action.name, "generated": action.generated, "distinct": action.distinct}
            for action in stats.actions
        ],
    }


def _discovery(discovery: Discovery, trace: Trace | None) -> dict[str, Any]:
    return {
        "property": discovery.property,
        "kind": discovery.kind.value,
        "violation": discovery.is_violation,
        "trace_length": discovery.trace_length,
        "evidence": jsonable(discovery.evidence),
        "initial_state": None if trace is None else list(trace.initial),
        "initial_view": None if trace is None else jsonable(trace.initial_view),
        "trace": None
        if trace is None
        else [
            {
                "action": step.action,
                "action_name": step.action_name,
                "changes": list(step.changes),
                "fingerprint": step.fingerprint,
                "view": jsonable(step.view),
            }
            for step in trace.steps
        ],
        "fingerprints": list(discovery.path),
        "action_indices": list(discovery.action_indices),
    }


def jsonable(value: Any) -> Any:
    """``value`` in JSON types: mappings with string keys, lists (sets sorted by their text, as their
    order is not canonical), enum values; anything else that JSON cannot hold becomes its ``str``."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return _finite(value)
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted((jsonable(v) for v in value), key=str)
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return str(value)


def _finite(value: float) -> float | None:
    """JSON has no infinity or NaN (a run too quick to time has no meaningful rate)."""
    return value if math.isfinite(value) else None
