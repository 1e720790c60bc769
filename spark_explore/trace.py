"""Counterexample recovery for the Spark BFS: parent pointers read back from the level Parquet.

The Spark BFS keeps no parent map in memory. Each level's Parquet holds, for every state first
reached at that depth, its chosen parent transition ``(parent_fp, action_index)`` (the rule of
:mod:`explorer.results`). A finding located at depth ``d`` on fingerprint ``fp`` is turned into a
:class:`~explorer.results.Discovery` by following those pointers back to level 0, one look-up per
level, on the driver with pyarrow (a few rows per level, no Spark job).

Evidence does not travel from the workers: it is recomputed here by running the property again on
the state decoded from disk (and, for a transition property, on the transition replayed from it),
so the discovery carries the very evidence object the local BFS would report. A property that
finds nothing on the replayed state means the model is not deterministic, and says so.

:func:`level_summary` reads a written level's row count and fingerprint checksum (recorded in the
manifest), and :func:`verify_level` compares them with the files again before a resumed run
trusts a level.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from explorer.checkpoint import ResumeError
from explorer.contract import Model, Property
from explorer.fingerprint import array_checksum, fingerprint
from explorer.results import Candidate, Discovery

LEVELS_DIR = "levels"


class ReplayMismatch(RuntimeError):
    """The states on disk do not reproduce a finding: the model is not deterministic."""


def level_dir(run_dir: Path, depth: int) -> Path:
    """Where the states first reached at ``depth`` are stored (``levels/level=NNNN``)."""
    return run_dir / LEVELS_DIR / f"level={depth:04d}"


def read_level_row(run_dir: Path, depth: int, fp: int, columns: Sequence[str]) -> dict[str, Any]:
    """The stored row of the state ``fp`` in level ``depth``."""
    dataset = ds.dataset(level_dir(run_dir, depth), format="parquet")
    table = dataset.to_table(columns=list(columns), filter=pc.field("fp") == fp)
    if table.num_rows == 0:
        raise ReplayMismatch(
            f"state {fp:#x} is not stored in level {depth} of {run_dir}: the run directory is "
            "incomplete or was written by another scenario"
        )
    return {name: table.column(name)[0].as_py() for name in columns}


@attrs.frozen
class LevelSummary:
    """What the files of a written level hold: states per action name of their parent transition,
    the row count, the checksum of the fingerprints and the fingerprints themselves."""

    by_action: dict[str, int]
    rows: int
    checksum: int
    fps: np.ndarray = attrs.field(eq=False, repr=False)


def level_summary(directory: Path) -> LevelSummary:
    """Count a written level from its committed files rather than by Spark metrics, which a retried
    task could count twice; reading the fingerprints and one dictionary-encoded column is cheap."""
    table = ds.dataset(directory, format="parquet").to_table(columns=["fp", "action_name"])
    by_action: dict[str, int] = {}
    if table.num_rows:
        counts = table.column("action_name").value_counts()
        by_action = {str(entry["values"]): int(entry["counts"]) for entry in counts.to_pylist()}
    return LevelSummary(by_action, table.num_rows, fingerprint_checksum(table.column("fp")),
                        fingerprints(table.column("fp")))


def fingerprints(fps: pa.ChunkedArray) -> np.ndarray:
    """A column of 64-bit fingerprints as an int64 array."""
    return np.asarray(fps.to_numpy(), dtype=np.int64) if fps.num_chunks else np.zeros(0, dtype=np.int64)


def level_fingerprints(run_dir: Path, depth: int) -> np.ndarray:
    """The fingerprints stored in level ``depth``."""
    return fingerprints(ds.dataset(level_dir(run_dir, depth), format="parquet").to_table(columns=["fp"]).column("fp"))


def fingerprint_checksum(fps: pa.ChunkedArray) -> int:
    """:func:`explorer.fingerprint.checksum` of a column of 64-bit fingerprints (summed modulo 2^64
    by numpy's unsigned wrap-around, without a Python loop)."""
    return array_checksum(fingerprints(fps))


def verify_level(run_dir: Path, depth: int, rows: int, checksum: int | None) -> None:
    """Check that level ``depth`` on disk holds ``rows`` rows whose fingerprints sum to ``checksum``;
    raise :class:`~explorer.checkpoint.ResumeError` naming the level otherwise."""
    directory = level_dir(run_dir, depth)
    if not directory.is_dir():
        raise ResumeError(f"{directory} is missing; the run directory is incomplete, so it cannot be resumed: "
                          "start a new run")
    try:
        table = ds.dataset(directory, format="parquet").to_table(columns=["fp"])
    except (OSError, pa.ArrowException) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ResumeError(f"{directory} cannot be read ({first[:160]}); the run directory is damaged, so it "
                          "cannot be resumed: start a new run") from None
    if table.num_rows != rows:
        raise ResumeError(f"{directory} holds {table.num_rows:,} states where the manifest recorded {rows:,}; the "
                          "run directory is damaged (a file is missing or was added), so it cannot be resumed: "
                          "start a new run")
    if checksum is not None and fingerprint_checksum(table.column("fp")) != checksum:
        raise ResumeError(f"{directory} does not match the fingerprint checksum the manifest recorded; the run "
                          "directory is damaged, so it cannot be resumed: start a new run")


def path_to(run_dir: Path, depth: int, fp: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The fingerprints from an initial state to ``fp`` (at ``depth``) and the action index of each
    step, followed back through the parent pointers on disk."""
    path = [fp]
    action_indices: list[int] = []
    for level in range(depth, 0, -1):
        row = read_level_row(run_dir, level, path[-1], ("parent_fp", "action_index"))
        path.append(row["parent_fp"])
        action_indices.append(row["action_index"])
    path.reverse()
    action_indices.reverse()
    return tuple(path), tuple(action_indices)


def rebuild_discovery(
    run_dir: Path, model: Model[Any, Any], properties: Sequence[Property], candidate: Candidate
) -> Discovery:
    """The discovery of ``candidate``: its path from disk, its evidence recomputed on the driver."""
    path, action_indices = path_to(run_dir, candidate.depth, candidate.fingerprint)
    data = read_level_row(run_dir, candidate.depth, candidate.fingerprint, ("data",))["data"]
    state = model.decode(data)
    prop = next((p for p in properties if p.name == candidate.property), None)
    if prop is None:
        raise ReplayMismatch(f"the run recorded a finding of {candidate.property!r}, a property this model lacks")
    if candidate.action_index is None:
        evidence = prop.check(state)
    else:
        action = model.actions(state)[candidate.action_index]
        child = model.next_state(state, action)
        if child is None or fingerprint(model.encode(child)) != candidate.child_fingerprint:
            raise ReplayMismatch(
                f"replaying action {candidate.action_index} from state {candidate.fingerprint:#x} does not "
                f"reach {candidate.child_fingerprint:#x} again; check the model for set or dict iteration "
                "order, randomness or the wall clock"
            )
        evidence = prop.check(state, action, child)
        path = (*path, child_fingerprint(candidate))
        action_indices = (*action_indices, candidate.action_index)
    if evidence is None:
        raise ReplayMismatch(
            f"property {candidate.property!r} found something on state {candidate.fingerprint:#x} in a "
            "worker but not on the driver; check the model for set or dict iteration order, randomness "
            "or the wall clock"
        )
    return Discovery(candidate.property, candidate.kind, evidence, path, action_indices)


def child_fingerprint(candidate: Candidate) -> int:
    assert candidate.child_fingerprint is not None, "a transition finding names its successor"
    return candidate.child_fingerprint
