"""The manifest of a Spark run directory: what is on disk, and what ``--resume`` continues from.

A Spark run directory holds one Parquet dataset per BFS level (``levels/level=NNNN``: the states
first reached at that depth with their chosen parent transition) and ``manifest.json``, rewritten
atomically (temporary file + ``os.replace``) after every level. The manifest is the only record of
which levels are complete: a level directory that the manifest does not count is the leftover of
a killed driver and is written again.

Per level it keeps the numbers the final statistics need (frontier, generated per action, new per
action, distinct total), and for the run the findings recorded so far (as located candidates;
evidence is recomputed from the states on disk when the result is built), the SOMETIMES properties
already satisfied, and, once the search stops, the outcome.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from explorer.contract import PropertyKind
from explorer.results import Candidate, LevelStats

MANIFEST_NAME = "manifest.json"
FORMAT_VERSION = 1


@attrs.frozen
class LevelRecord:
    """One expanded (or, at a bound, only checked) level: ``new`` states were first reached at
    ``depth + 1`` and written to the next level's Parquet."""

    depth: int
    frontier: int
    generated: int
    new: int
    distinct_total: int
    seconds: float
    expanded: bool
    generated_by_action: Mapping[str, int] = attrs.field(factory=dict)
    new_by_action: Mapping[str, int] = attrs.field(factory=dict)
    phases: Mapping[str, float] = attrs.field(factory=dict)  # seconds per phase of the level

    def stats(self) -> LevelStats:
        return LevelStats(self.depth, self.frontier, self.generated, self.new, self.distinct_total, self.seconds)


@attrs.frozen
class Manifest:
    scenario_hash: str
    kmc_version: str
    master: str
    initial_states: int  # distinct initial states (level 0)
    initial_generated: int  # initial states as generated, duplicates included (TLC counts them)
    levels: tuple[LevelRecord, ...] = ()
    recorded: tuple[Candidate, ...] = ()  # the reported finding per property, in report order
    completed: bool = False
    outcome: str | None = None
    reason: str = ""
    queue: int = 0
    seconds: float = 0.0  # wall time spent on the run so far, over every driver that worked on it

    @property
    def generated(self) -> int:
        return self.initial_generated + sum(level.generated for level in self.levels)

    @property
    def distinct(self) -> int:
        return self.levels[-1].distinct_total if self.levels else self.initial_states

    @property
    def examples_found(self) -> frozenset[str]:
        return frozenset(c.property for c in self.recorded if not c.kind.is_violation)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT_VERSION,
            "engine": "spark",
            "scenario_hash": self.scenario_hash,
            "kmc_version": self.kmc_version,
            "master": self.master,
            "initial_states": self.initial_states,
            "initial_generated": self.initial_generated,
            "completed": self.completed,
            "outcome": self.outcome,
            "reason": self.reason,
            "queue": self.queue,
            "distinct": self.distinct,
            "generated": self.generated,
            "seconds": self.seconds,
            "levels": [attrs.asdict(level) for level in self.levels],
            "recorded": [
                {
                    "property": c.property,
                    "kind": c.kind.value,
                    "depth": c.depth,
                    "fingerprint": c.fingerprint,
                    "action_index": c.action_index,
                    "child_fingerprint": c.child_fingerprint,
                }
                for c in self.recorded
            ],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Manifest:
        if data.get("format") != FORMAT_VERSION:
            raise ValueError(f"unsupported manifest format {data.get('format')!r}, expected {FORMAT_VERSION}")
        return cls(
            scenario_hash=data["scenario_hash"],
            kmc_version=data["kmc_version"],
            master=data["master"],
            initial_states=data["initial_states"],
            initial_generated=data["initial_generated"],
            levels=tuple(LevelRecord(**level) for level in data["levels"]),
            recorded=tuple(
                Candidate(
                    property=c["property"],
                    kind=PropertyKind(c["kind"]),
                    evidence={},
                    depth=c["depth"],
                    fingerprint=c["fingerprint"],
                    action_index=c["action_index"],
                    child_fingerprint=c["child_fingerprint"],
                )
                for c in data["recorded"]
            ),
            completed=data["completed"],
            outcome=data["outcome"],
            reason=data["reason"],
            queue=data["queue"],
            seconds=data["seconds"],
        )


def manifest_path(run_dir: Path) -> Path:
    return run_dir / MANIFEST_NAME


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    """Replace the manifest atomically: a reader sees the previous one or this one, never a mix."""
    path = manifest_path(run_dir)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w") as stream:
        json.dump(manifest.to_json(), stream, indent=2)
        stream.write("\n")
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(tmp, path)


def read_manifest(run_dir: Path) -> Manifest | None:
    """The manifest of ``run_dir``, or None if it has none."""
    path = manifest_path(run_dir)
    if not path.exists():
        return None
    return Manifest.from_json(json.loads(path.read_text()))
