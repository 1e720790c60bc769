"""Counterexample recovery for the Spark BFS: parent pointers read back from the level Parquet.

The Spark BFS keeps no parent map in memory. Each level's Parquet holds, for every state first
reached at that depth, its chosen parent transition ``(parent_fp, action_index)`` (the rule of
:mod:`explorer.results`). A finding located at depth ``d`` on fingerprint ``fp`` is turned into a
:class:`~explorer.results.Discovery` by following those pointers back to level 0, one look-up per
level, on the driver with pyarrow (a few rows per level, no Spark job). Fingerprints are stored in
the run's width (:mod:`spark_explore.columns`); the discovery's path holds them as Python ints.

Evidence does not travel from the workers: it is recomputed here by running the property again on
the state decoded from disk (and, for a transition property, on the transition replayed from it),
so the discovery carries the very evidence object the local BFS would report. A property that
finds nothing on the replayed state means the model is not deterministic, and says so.

:func:`level_summary` reads a written level's row count and checksums (recorded in the manifest),
and :func:`verify_level` compares them with the files again, and every state's bytes with its
fingerprint (:class:`explorer.integrity.StoredRows`, the local checkpoints' check), before a resumed
run trusts a level.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from explorer.checkpoint import ResumeError
from explorer.contract import Model, Property
from explorer.fingerprint import array_checksum, as_int, fingerprint, fingerprint_dtype, fingerprints_of
from explorer.integrity import StoredRows, links_checksum
from explorer.results import Candidate, Discovery
from explorer.visited import NO_ACTION
from spark_explore.columns import column_fingerprints, fp_columns, parent_columns

LEVELS_DIR = "levels"


class ReplayMismatch(RuntimeError):
    """The states on disk do not reproduce a finding: the model is not deterministic."""


def level_dir(run_dir: Path, depth: int) -> Path:
    """Where the states first reached at ``depth`` are stored (``levels/level=NNNN``)."""
    return run_dir / LEVELS_DIR / f"level={depth:04d}"


#: Rows decoded at a time when :func:`read_level_row` reads the columns of the row group holding a state.
_ROW_BATCH = 1024


def read_level_row(run_dir: Path, depth: int, fp: int, columns: Sequence[str], bits: int = 64) -> pa.Table:
    """The stored row of the state ``fp`` (of ``bits`` bits) in level ``depth``: its ``columns``, as a
    table of one row.

    The row is found by the fingerprint columns alone (8 or 16 bytes a row), one Parquet row group at a
    time; of the row group holding it, ``columns`` are decoded a batch at a time up to the row. A level
    of a large run is gigabytes of state bytes, and a dataset scan filtered on the fingerprint decodes
    every row group of the columns asked for, several at once: rebuilding the 7 findings of a run of
    13.4 million states that way took the driver to 2.6 GB and 22 s of CPU, against 0.38 GB and 1 s."""
    key = fingerprints_of((fp,), bits)[0]
    names = list(fp_columns(bits))
    for path in sorted(ds.dataset(level_dir(run_dir, depth), format="parquet").files):
        with pq.ParquetFile(path) as parquet:
            for group in range(parquet.num_row_groups):
                found = np.flatnonzero(column_fingerprints(parquet.read_row_group(group, columns=names), names,
                                                           bits) == key)
                if not len(found):
                    continue
                row = int(found[0])
                for batch in parquet.iter_batches(batch_size=_ROW_BATCH, row_groups=[group], columns=list(columns)):
                    if row < batch.num_rows:
                        return pa.Table.from_batches([batch.slice(row, 1)])
                    row -= batch.num_rows
    raise ReplayMismatch(
        f"state {fp:#x} is not stored in level {depth} of {run_dir}: the run directory is "
        "incomplete or was written by another scenario"
    )


@attrs.frozen
class LevelSummary:
    """What the files of a written level hold: states per action name of their parent transition,
    the row count, the checksums of the fingerprints and of the parent transitions, and the
    fingerprints themselves."""

    by_action: dict[str, int]
    rows: int
    checksum: int
    links: int
    fps: np.ndarray = attrs.field(eq=False, repr=False)


#: Rows read at a time when a written level is summed up.
_SUMMARY_BATCH = 65536


def level_summary(directory: Path, bits: int = 64) -> LevelSummary:
    """Count a written level from its committed files rather than by Spark metrics, which a retried
    task could count twice. ``bits``: the fingerprints' width. The fingerprints, the parent transitions
    and the action names are read a batch at a time (both checksums are sums, so they add up batch by
    batch), one file after the other: the driver holds the level's fingerprints and one batch. A level of
    3,713,840 states read whole took the driver from 118 MB to 605 MB, against 277 MB so."""
    columns = [*fp_columns(bits), *parent_columns(bits), "action_index", "action_name"]
    by_action: dict[str, int] = {}
    chunks: list[np.ndarray] = []
    rows = fp_sum = links_sum = 0
    for batch in ds.dataset(directory, format="parquet").to_batches(
            columns=columns, batch_size=_SUMMARY_BATCH, batch_readahead=1, fragment_readahead=1):
        if not batch.num_rows:
            continue
        for entry in batch.column("action_name").value_counts().to_pylist():
            name = str(entry["values"])
            by_action[name] = by_action.get(name, 0) + int(entry["counts"])
        fps = column_fingerprints(batch, fp_columns(bits), bits)
        parents, actions = parent_transitions(batch, bits)
        fp_sum += array_checksum(fps, bits)
        links_sum += links_checksum(fps, parents, actions, bits)
        chunks.append(fps)
        rows += batch.num_rows
    fps = np.concatenate(chunks) if chunks else np.zeros(0, fingerprint_dtype(bits))
    return LevelSummary(by_action, rows, fp_sum % (1 << bits), links_sum % (1 << 64), fps)


def parent_transitions(table: pa.Table | pa.RecordBatch, bits: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """The parent fingerprints and ``action_index`` columns as arrays (an initial state's nulls read
    as 0 and :data:`explorer.visited.NO_ACTION`, as the local BFS keeps them)."""
    parents = column_fingerprints(table, parent_columns(bits), bits)
    actions = pc.fill_null(table.column("action_index"), NO_ACTION)
    return parents, (np.asarray(actions.to_numpy(), dtype=np.int32) if len(actions) else np.zeros(0, np.int32))


def level_fingerprints(run_dir: Path, depth: int, bits: int = 64) -> np.ndarray:
    """The fingerprints stored in level ``depth`` (of ``bits`` bits)."""
    columns = fp_columns(bits)
    table = ds.dataset(level_dir(run_dir, depth), format="parquet").to_table(columns=list(columns))
    return column_fingerprints(table, columns, bits)


def verify_level(run_dir: Path, depth: int, rows: int, checksum: int | None, links: int | None,
                 bits: int = 64) -> None:
    """Check that level ``depth`` on disk holds ``rows`` rows whose fingerprints and parent transitions
    have the checksums the manifest recorded, and that every state's bytes match its fingerprint;
    raise :class:`~explorer.checkpoint.ResumeError` naming the level otherwise. The level is read a file at a
    time, each in batches streamed from its pages: a dataset scan decodes whole row groups (233,000 states,
    410 MB of state bytes in a Spark level of 128-bit kafka-wide) and reads ahead several of them, which took
    the driver to 3.7 GB checking a level of 4.2 M states, against 0.5 GB so."""
    directory = level_dir(run_dir, depth)
    if not directory.is_dir():
        raise ResumeError(f"{directory} is missing; the run directory is incomplete, so it cannot be resumed: "
                          "start a new run")
    _verify_file_checksums(directory)
    stored = StoredRows(directory, bits)
    expected = _stored_types(bits)
    try:
        for part in sorted(directory.glob("part-*")):
            reader = pq.ParquetFile(part, pre_buffer=False)
            types = {field.name: field.type for field in reader.schema_arrow}
            for name, kind in expected.items():
                if types.get(name) != kind:
                    raise ResumeError(f"{directory} stores {name} as {types.get(name)}, expected {kind}; the run "
                                      "directory is damaged, so it cannot be resumed: start a new run")
            for batch in reader.iter_batches(batch_size=_VERIFY_BATCH, columns=list(expected)):
                data = batch.column("data")
                if data.null_count:
                    raise ResumeError(f"{directory} holds states without bytes; the run directory is damaged, so "
                                      "it cannot be resumed: start a new run")
                parents, actions = parent_transitions(batch, bits)
                stored.add(column_fingerprints(batch, fp_columns(bits), bits), parents, actions, data.to_pylist())
    except (OSError, pa.ArrowException, ValueError) as e:  # ValueError: a column name that is not UTF-8, …
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ResumeError(f"{directory} cannot be read ({first[:160]}); the run directory is damaged, so it "
                          "cannot be resumed: start a new run") from None
    stored.check(rows, checksum, links)


def _verify_file_checksums(directory: Path) -> None:
    """Check each part file's Parquet magic and, where Spark's file system wrote one, its Hadoop
    checksum file (``.NAME.crc``: ``crc`` and a NUL, the chunk size, then the CRC-32 of each chunk),
    which Spark checks when it reads the level again: damage it would fail on is refused here first.
    Files are read a chunk at a time."""
    damaged = "the run directory is damaged, so it cannot be resumed: start a new run"
    for part in sorted(directory.glob("part-*")):
        sidecar = part.with_name(f".{part.name}.crc")
        try:
            with part.open("rb") as stream:
                head = stream.read(4)
                stream.seek(max(part.stat().st_size - 4, 0))
                tail = stream.read(4)
                if head != b"PAR1" or tail != b"PAR1":
                    raise ResumeError(f"{part} is not a Parquet file (its magic bytes are altered); {damaged}")
                if not sidecar.exists():
                    continue
                sums = sidecar.read_bytes()
                chunk = int.from_bytes(sums[4:8], "big")
                if sums[:4] != b"crc\0" or len(sums) < 8 or (len(sums) - 8) % 4 or chunk <= 0:
                    raise ResumeError(f"{sidecar} is not a checksum file; {damaged}")
                stream.seek(0)
                for offset in range(8, len(sums), 4):
                    if zlib.crc32(stream.read(chunk)) != int.from_bytes(sums[offset : offset + 4], "big"):
                        raise ResumeError(f"{part} does not match its checksum file {sidecar.name}; {damaged}")
                if stream.read(1):
                    raise ResumeError(f"{part} is longer than its checksum file {sidecar.name} covers; {damaged}")
        except OSError as e:
            raise ResumeError(f"{part} cannot be read ({e.strerror}); {damaged}") from None


def _stored_types(bits: int) -> dict[str, pa.DataType]:
    """The columns a resumed run reads back from a level, with the types they were written with."""
    return {**{name: pa.int64() for name in (*fp_columns(bits), *parent_columns(bits))},
            "action_index": pa.int32(), "data": pa.binary()}


#: States checked per batch when a level is verified.
_VERIFY_BATCH = 8192


def path_to(run_dir: Path, depth: int, fp: int, bits: int = 64) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The fingerprints from an initial state to ``fp`` (at ``depth``) and the action index of each
    step, followed back through the parent pointers on disk (fingerprints of ``bits`` bits)."""
    path = [fp]
    action_indices: list[int] = []
    parents = parent_columns(bits)
    for level in range(depth, 0, -1):
        row = read_level_row(run_dir, level, path[-1], (*parents, "action_index"), bits)
        path.append(as_int(column_fingerprints(row, parents, bits)[0], bits))
        action_indices.append(row.column("action_index")[0].as_py())
    path.reverse()
    action_indices.reverse()
    return tuple(path), tuple(action_indices)


def rebuild_discovery(
    run_dir: Path, model: Model[Any, Any], properties: Sequence[Property], candidate: Candidate, bits: int = 64
) -> Discovery:
    """The discovery of ``candidate``: its path from disk, its evidence recomputed on the driver
    (fingerprints of ``bits`` bits)."""
    path, action_indices = path_to(run_dir, candidate.depth, candidate.fingerprint, bits)
    data = read_level_row(run_dir, candidate.depth, candidate.fingerprint, ("data",), bits).column("data")[0].as_py()
    state = model.decode(data)
    prop = next((p for p in properties if p.name == candidate.property), None)
    if prop is None:
        raise ReplayMismatch(f"the run recorded a finding of {candidate.property!r}, a property this model lacks")
    if candidate.action_index is None:
        evidence = prop.check(state)
    else:
        action = model.actions(state)[candidate.action_index]
        child = model.next_state(state, action)
        if child is None or fingerprint(model.encode(child), bits) != candidate.child_fingerprint:
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
    return Discovery(candidate.property, candidate.kind, evidence, path, action_indices, bits)


def child_fingerprint(candidate: Candidate) -> int:
    assert candidate.child_fingerprint is not None, "a transition finding names its successor"
    return candidate.child_fingerprint
