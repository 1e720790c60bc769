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

It records the width of the run's fingerprints (64 or 128 bits, :mod:`spark_explore.columns`;
a manifest without one is a 64-bit run's), which a resumed run keeps. It also records, for every
level written, its row count, the checksum of its fingerprints
(:func:`explorer.fingerprint.checksum`) and that of its parent transitions
(:func:`explorer.integrity.links_checksum`); ``--resume`` compares them with the files, and every
stored state's bytes with its fingerprint, before it trusts them
(:func:`spark_explore.trace.verify_level`), and the manifest is sealed with a digest of its own
content, so that an edited count is refused as well. A manifest that cannot be read is
refused with one sentence naming it (:class:`~explorer.checkpoint.ResumeError`), never guessed at.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from explorer.checkpoint import ResumeError, check_seal, sealed
from explorer.contract import PropertyKind
from explorer.fingerprint import FINGERPRINT_BITS
from explorer.results import Candidate, LevelStats

MANIFEST_NAME = "manifest.json"
FORMAT_VERSION = 3


@attrs.frozen
class LevelRecord:
    """One expanded (or, at a bound, only checked) level: ``new`` states were first reached at
    ``depth + 1`` and written to the next level's Parquet, whose fingerprints sum to ``checksum``
    and whose parent transitions to ``links`` (:func:`explorer.integrity.links_checksum`; both None
    when nothing was written). ``truncated``: ``max_states`` kept only part of them."""

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
    checksum: int | None = None
    links: int | None = None
    truncated: bool = False

    def stats(self) -> LevelStats:
        return LevelStats(self.depth, self.frontier, self.generated, self.new, self.distinct_total, self.seconds)


@attrs.frozen
class Manifest:
    scenario_hash: str
    kmc_version: str
    master: str
    initial_states: int  # distinct initial states (level 0)
    initial_generated: int  # initial states as generated, duplicates included (TLC counts them)
    initial_checksum: int = 0  # of the fingerprints of level 0
    initial_links: int = 0  # of the parent transitions of level 0 (none: parent 0, no action)
    levels: tuple[LevelRecord, ...] = ()
    recorded: tuple[Candidate, ...] = ()  # the reported finding per property, in report order
    completed: bool = False
    outcome: str | None = None
    reason: str = ""
    queue: int = 0
    seconds: float = 0.0  # wall time spent on the run so far, over every driver that worked on it
    stopped_by: str | None = None  # StopCause value of a search that stopped early
    fingerprint_bits: int = 64  # the width of every fingerprint in the run's levels and findings

    @property
    def generated(self) -> int:
        return self.initial_generated + sum(level.generated for level in self.levels)

    @property
    def distinct(self) -> int:
        return self.levels[-1].distinct_total if self.levels else self.initial_states

    @property
    def examples_found(self) -> frozenset[str]:
        return frozenset(c.property for c in self.recorded if not c.kind.is_violation)

    @property
    def reported(self) -> frozenset[str]:
        """The properties with a finding recorded: the workers no longer check them."""
        return frozenset(c.property for c in self.recorded)

    @property
    def violated(self) -> bool:
        return any(c.kind.is_violation for c in self.recorded)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT_VERSION,
            "engine": "spark",
            "scenario_hash": self.scenario_hash,
            "kmc_version": self.kmc_version,
            "master": self.master,
            "initial_states": self.initial_states,
            "initial_generated": self.initial_generated,
            "initial_checksum": self.initial_checksum,
            "initial_links": self.initial_links,
            "completed": self.completed,
            "outcome": self.outcome,
            "reason": self.reason,
            "queue": self.queue,
            "stopped_by": self.stopped_by,
            "distinct": self.distinct,
            "generated": self.generated,
            "seconds": self.seconds,
            "fingerprint_bits": self.fingerprint_bits,
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
        """The manifest in ``data``; raises ValueError, TypeError or KeyError when it is not one."""
        if data.get("format") != FORMAT_VERSION:
            raise ValueError(f"unsupported manifest format {data.get('format')!r}, expected {FORMAT_VERSION}")
        levels = tuple(LevelRecord(**_checked_level(level)) for level in data["levels"])
        bits = _of(data, "fingerprint_bits", int) if "fingerprint_bits" in data else 64
        if bits not in FINGERPRINT_BITS:
            raise ValueError(f"fingerprint_bits {bits}")
        for depth, level in enumerate(levels):
            if level.depth != depth:
                raise ValueError(f"level {depth} is recorded as depth {level.depth}")
        return cls(
            scenario_hash=_of(data, "scenario_hash", str),
            kmc_version=_of(data, "kmc_version", str),
            master=_of(data, "master", str),
            initial_states=_of(data, "initial_states", int),
            initial_generated=_of(data, "initial_generated", int),
            initial_checksum=_of(data, "initial_checksum", int),
            initial_links=_of(data, "initial_links", int),
            levels=levels,
            recorded=tuple(
                Candidate(
                    property=_of(c, "property", str),
                    kind=PropertyKind(c["kind"]),
                    evidence={},
                    depth=_of(c, "depth", int),
                    fingerprint=_of(c, "fingerprint", int),
                    action_index=None if c["action_index"] is None else _of(c, "action_index", int),
                    child_fingerprint=None if c["child_fingerprint"] is None else _of(c, "child_fingerprint", int),
                )
                for c in data["recorded"]
            ),
            completed=_of(data, "completed", bool),
            outcome=data["outcome"] if data["outcome"] is None else _of(data, "outcome", str),
            reason=_of(data, "reason", str),
            queue=_of(data, "queue", int),
            seconds=float(_of(data, "seconds", (int, float))),
            stopped_by=data.get("stopped_by"),
            fingerprint_bits=bits,
        )


_LEVEL_FIELDS: dict[str, type | tuple[type, ...]] = {
    "depth": int, "frontier": int, "generated": int, "new": int, "distinct_total": int,
    "seconds": (int, float), "expanded": bool, "generated_by_action": dict, "new_by_action": dict,
    "phases": dict, "truncated": bool,
}  # fmt: skip


def _checked_level(level: Any) -> dict[str, Any]:
    if not isinstance(level, dict):
        raise TypeError("a level is not a JSON object")
    for key, kind in _LEVEL_FIELDS.items():
        _of(level, key, kind)
    for key in ("checksum", "links"):
        if level.get(key) is not None:
            _of(level, key, int)
    for key, kind in (("generated_by_action", int), ("new_by_action", int), ("phases", (int, float))):
        for name, value in level[key].items():
            _of({name: value}, name, kind)
    unknown = set(level) - {*_LEVEL_FIELDS, "checksum", "links"}
    if unknown:
        raise KeyError(sorted(unknown)[0])
    return dict(level)


def _of(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = data[key]
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        raise TypeError(f"{key} is {type(value).__name__}")
    return value


def manifest_path(run_dir: Path) -> Path:
    return run_dir / MANIFEST_NAME


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    """Replace the manifest atomically: a reader sees the previous one or this one, never a mix."""
    path = manifest_path(run_dir)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    # A new file of its own (O_EXCL, never through a link), then renamed over the manifest.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    with os.fdopen(fd, "w", encoding="utf-8") as stream:
        json.dump(sealed(manifest.to_json()), stream, indent=2)
        stream.write("\n")
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(tmp, path)


def read_manifest(run_dir: Path) -> Manifest | None:
    """The manifest of ``run_dir``, or None if it has none; one that cannot be read, or that is not
    a Spark run's, raises :class:`~explorer.checkpoint.ResumeError` naming it."""
    path = manifest_path(run_dir)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise ResumeError(
            f"{path} cannot be read ({_first_line(e)}); the run cannot be resumed, start a new one"
        ) from None
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise TypeError("not a JSON object")
        engine = data.get("engine")
        if engine != "spark":
            raise ResumeError(
                f"{path} is the manifest of a {engine!r} run, not of a Spark one; resume it with --engine {engine}"
                if isinstance(engine, str) and engine.isidentifier()
                else f"{path} names no engine; the run cannot be resumed, start a new one"
            )
        if data.get("format") != FORMAT_VERSION:
            raise ResumeError(
                f"{path} has format {data.get('format')!r}, this kmc reads format {FORMAT_VERSION}; start a new run"
            )
        check_seal(data, path)
        return Manifest.from_json(data)
    except ResumeError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as e:  # Recursion: nested too deep
        raise ResumeError(f"{path} is corrupt ({_first_line(e)}); the run cannot be resumed, start a new one") from None


def _first_line(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text if len(text) <= 120 else f"{text[:120]}…"
