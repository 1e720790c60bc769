"""Checkpoints of the local BFS: what ``--resume`` continues from, verified before it is trusted.

A local run directory holds ``manifest.json`` (rewritten atomically, the only record of which
checkpoint is current) and at most one complete ``checkpoint-NNNN-XXXXXX/`` directory with the
search as it stood at the *start* of level NNNN: every visited fingerprint with its parent
transition (``visited.arrow``) and the level's states as canonical bytes (``frontier.arrow``),
both Arrow IPC files. The counters, the level statistics and the discoveries so far are in the
manifest, which also records each file's row count, fingerprint checksum
(:func:`explorer.fingerprint.checksum`) and the checksum of the visited states' parent transitions
(:func:`explorer.integrity.links_checksum`), and is sealed with a digest of its own content.

A checkpoint is written into a temporary directory, renamed, and only then named by the
manifest; older checkpoints are removed after that. So a process killed at any moment leaves
either the previous checkpoint or the new one in force, never half of one. On resume every
count and checksum is compared with the files and every frontier state's fingerprint is recomputed
from its bytes (:class:`explorer.integrity.StoredRows`); a missing, unreadable or altered file, or a
manifest that cannot be read, is refused with one sentence naming it (:class:`ResumeError`) —
never recounted silently, never explored on.

Nothing here is pickled: states are stored as the model's canonical bytes and decoded by the
model, so a run directory is data only.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from explorer.contract import PropertyKind
from explorer.fingerprint import FINGERPRINT_BITS, array_checksum, digest_bytes, fingerprint_array, fingerprint_dtype
from explorer.integrity import ResumeError, StoredRows, links_checksum
from explorer.results import LevelStats, Outcome
from explorer.visited import NO_ACTION, Frontier, Visited

if TYPE_CHECKING:
    import pyarrow as pa

# pyarrow is imported by the functions that read and write checkpoint files, not here: a search that
# takes no checkpoint does not pay its import (a tenth of a second, 2% of a toy-controller run).

MANIFEST_NAME = "manifest.json"
FORMAT_VERSION = 2
ENGINE = "local"
_VISITED = "visited.arrow"
_FRONTIER = "frontier.arrow"

_LEVEL_FIELDS = {"depth", "frontier", "generated", "new", "distinct_total", "seconds"}


@attrs.frozen
class StoredDiscovery:
    """A discovery as a checkpoint keeps it: where it is, not what it says (evidence is recomputed)."""

    property: str
    kind: PropertyKind
    path: tuple[int, ...]
    action_indices: tuple[int, ...]


@attrs.frozen
class Checkpoint:
    """The search at the start of level ``depth``: ``visited`` holds every state of levels
    ``0..depth``, ``frontier`` the states of level ``depth`` (fingerprint, canonical bytes); the
    counters cover levels ``0..depth-1``."""

    depth: int
    visited: Visited = attrs.field(eq=False, repr=False)
    frontier: Frontier = attrs.field(eq=False, repr=False)
    generated: int
    generated_by_action: Mapping[str, int]
    distinct_by_action: Mapping[str, int]
    levels: tuple[LevelStats, ...]
    discoveries: tuple[StoredDiscovery, ...]
    examples_found: frozenset[str]
    seconds: float


@attrs.frozen
class LocalManifest:
    """What ``manifest.json`` of a local run says."""

    scenario_hash: str
    kmc_version: str
    fingerprint_bits: int = 64
    completed: bool = False
    outcome: str | None = None
    reason: str = ""
    seconds: float = 0.0
    checkpoint: Mapping[str, Any] | None = None  # see write_checkpoint


def manifest_path(run_dir: Path) -> Path:
    return run_dir / MANIFEST_NAME


def read_manifest(run_dir: Path) -> LocalManifest | None:
    """The manifest of a local run in ``run_dir``, None if there is none; a manifest that cannot be
    read, or that belongs to another engine, raises :class:`ResumeError`."""
    path = manifest_path(run_dir)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise ResumeError(f"{path} cannot be read ({_short(e)}); the run cannot be resumed, start a new one") from None
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise TypeError("not a JSON object")
        if data.get("engine") != ENGINE:
            raise ResumeError(
                f"{path} is the manifest of a {data.get('engine')!r} run, not of a local one; resume it with "
                f"--engine {data.get('engine')}"
                if isinstance(data.get("engine"), str)
                else f"{path} names no engine; the run cannot be resumed, start a new one"
            )
        if data.get("format") != FORMAT_VERSION:
            raise ResumeError(
                f"{path} has format {data.get('format')!r}, this kmc reads format {FORMAT_VERSION}; "
                "start a new run"
            )
        check_seal(data, path)
        manifest = LocalManifest(
            scenario_hash=_typed(data, "scenario_hash", str),
            kmc_version=_typed(data, "kmc_version", str),
            fingerprint_bits=_typed(data, "fingerprint_bits", int),
            completed=_typed(data, "completed", bool),
            outcome=data.get("outcome") if isinstance(data.get("outcome"), str) else None,
            reason=_typed(data, "reason", str),
            seconds=float(_typed(data, "seconds", (int, float))),
            checkpoint=data.get("checkpoint"),
        )
        if manifest.fingerprint_bits not in FINGERPRINT_BITS:
            raise ValueError(f"fingerprint_bits {manifest.fingerprint_bits}")
        if manifest.checkpoint is not None:
            _checkpoint_fields(manifest.checkpoint)
        return manifest
    except ResumeError:
        raise
    except (ValueError, TypeError, KeyError, RecursionError) as e:  # RecursionError: nested thousands deep
        raise ResumeError(
            f"{path} is corrupt ({_short(e)}); the run cannot be resumed, start a new one"
        ) from None


def write_manifest(run_dir: Path, manifest: LocalManifest) -> None:
    """Replace the manifest atomically (temporary file, fsync, rename), sealed with its digest."""
    data = {"format": FORMAT_VERSION, "engine": ENGINE, **attrs.asdict(manifest)}
    _write_json_atomically(manifest_path(run_dir), sealed(data))


def sealed(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with a ``digest`` of its own content, so that an edit to any count is noticed."""
    return {**data, "digest": content_digest(data)}


def content_digest(data: Mapping[str, Any]) -> str:
    """The SHA-256 of ``data`` (without its ``digest``) as canonical JSON."""
    content = {key: value for key, value in data.items() if key != "digest"}
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def check_seal(data: Mapping[str, Any], path: Path) -> None:
    """Refuse a manifest whose content does not match its digest (edited, or written by a bug)."""
    if data.get("digest") != content_digest(data):
        raise ResumeError(f"{path} does not match its own digest: it was edited or damaged after it was written, "
                          "so the run cannot be resumed; start a new one")


def write_checkpoint(run_dir: Path, manifest: LocalManifest, checkpoint: Checkpoint) -> LocalManifest:
    """Write ``checkpoint`` next to the current one, make the manifest name it, then remove the
    older ones; returns the manifest now on disk."""
    bits = manifest.fingerprint_bits
    name = f"checkpoint-{checkpoint.depth:04d}-{secrets.token_hex(3)}"
    partial = run_dir / f".{name}.partial"
    partial.mkdir(parents=True)
    visited_checksum, visited_links = _write_visited(partial / _VISITED, checkpoint.visited, bits)
    frontier_rows, frontier_checksum = _write_frontier(partial / _FRONTIER, checkpoint.frontier, bits)
    final = run_dir / name
    os.replace(partial, final)
    record = {
        "directory": name,
        "depth": checkpoint.depth,
        "visited": len(checkpoint.visited),
        "visited_checksum": visited_checksum,
        "visited_links": visited_links,
        "frontier": frontier_rows,
        "frontier_checksum": frontier_checksum,
        "generated": checkpoint.generated,
        "generated_by_action": dict(sorted(checkpoint.generated_by_action.items())),
        "distinct_by_action": dict(sorted(checkpoint.distinct_by_action.items())),
        "levels": [attrs.asdict(level) for level in checkpoint.levels],
        "discoveries": [
            {
                "property": d.property,
                "kind": d.kind.value,
                "path": [str(fp) for fp in d.path],
                "action_indices": list(d.action_indices),
            }
            for d in checkpoint.discoveries
        ],
        "examples_found": sorted(checkpoint.examples_found),
        "seconds": checkpoint.seconds,
    }
    manifest = attrs.evolve(manifest, checkpoint=record, seconds=checkpoint.seconds)
    write_manifest(run_dir, manifest)
    remove_stale_checkpoints(run_dir, keep=name)
    return manifest


def remove_stale_checkpoints(run_dir: Path, keep: str | None) -> None:
    """Remove every checkpoint directory (and leftover of a killed write) but ``keep``."""
    for entry in run_dir.iterdir():
        stale = entry.name.startswith("checkpoint-") or (
            entry.name.startswith(".checkpoint-") and entry.name.endswith(".partial")
        )
        if stale and entry.name != keep and entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)


def read_checkpoint(run_dir: Path, manifest: LocalManifest) -> Checkpoint:
    """The checkpoint the manifest names, after checking each file's row count and checksums and
    every frontier state's bytes against its fingerprint."""
    import pyarrow as pa
    import pyarrow.compute as pc
    record = manifest.checkpoint
    assert record is not None
    bits = manifest.fingerprint_bits
    directory = run_dir / str(record["directory"])
    visited = _read_table(directory / _VISITED, ("fp", "parent_fp", "action_index"))
    frontier = _read_table(directory / _FRONTIER, ("fp", "data"))
    fps = _values(visited.column("fp"), bits, directory / _VISITED)
    parent_fps = _values(visited.column("parent_fp"), bits, directory / _VISITED)
    if visited.column("action_index").type != pa.int32():
        raise ResumeError(f"{directory / _VISITED} stores action indices as {visited.column('action_index').type}, "
                          "expected int32; the run directory is damaged, so it cannot be resumed: start a new run")
    action_indices = pc.fill_null(visited.column("action_index"), NO_ACTION).to_numpy().astype(np.int32)
    stored = StoredRows(directory / _VISITED, bits)
    stored.add(fps, parent_fps, action_indices)
    stored.check(record["visited"], record["visited_checksum"], record["visited_links"])
    frontier_fps = _values(frontier.column("fp"), bits, directory / _FRONTIER)
    data = _binary_values(frontier.column("data"), directory / _FRONTIER)
    stored = StoredRows(directory / _FRONTIER, bits)
    stored.add(frontier_fps, data=data)
    stored.check(record["frontier"], record["frontier_checksum"])
    try:
        visited_set = Visited.unsorted(bits, fps, parent_fps, action_indices)
    except ValueError:
        visited_set = None
    if visited_set is None or not bool(np.all(visited_set.contains(frontier_fps))):
        raise ResumeError(f"{directory} holds duplicate or unknown fingerprints; the run cannot be resumed, "
                          "start a new one")
    try:
        return Checkpoint(
            depth=int(record["depth"]),
            visited=visited_set,
            frontier=Frontier(frontier_fps, data),
            generated=int(record["generated"]),
            generated_by_action={str(k): int(v) for k, v in record["generated_by_action"].items()},
            distinct_by_action={str(k): int(v) for k, v in record["distinct_by_action"].items()},
            levels=tuple(LevelStats(**level) for level in record["levels"]),
            discoveries=tuple(
                StoredDiscovery(
                    property=str(d["property"]),
                    kind=PropertyKind(d["kind"]),
                    path=tuple(int(fp) for fp in d["path"]),
                    action_indices=tuple(int(i) for i in d["action_indices"]),
                )
                for d in record["discoveries"]
            ),
            examples_found=frozenset(str(name) for name in record["examples_found"]),
            seconds=float(record["seconds"]),
        )
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise ResumeError(
            f"{manifest_path(run_dir)} is corrupt ({_short(e)}); the run cannot be resumed, start a new one"
        ) from None


def finished_run(run_dir: Path, outcome: str | None) -> ResumeError:
    """The refusal to resume a run that finished (a violation or a complete search), on either engine."""
    return ResumeError(f"{run_dir} holds a finished run (outcome {outcome}); its reports are in that directory "
                       f"(kmc report {run_dir} renders them again), and a new run needs no --resume")


def finished(manifest: LocalManifest, outcome: Outcome, reason: str, seconds: float) -> LocalManifest:
    """The manifest of a run that ended with ``outcome`` (a violation or a complete search)."""
    return attrs.evolve(manifest, completed=True, outcome=outcome.value, reason=reason, seconds=seconds)


# -- helpers ----------------------------------------------------------------------------------------

#: Rows per Arrow record batch: a checkpoint is written batch by batch, so that writing one costs
#: little memory beyond the search's own (the memory guard may have just stopped the search).
_BATCH_ROWS = 1 << 16


def _write_visited(path: Path, visited: Visited, bits: int) -> tuple[int, int]:
    """Write the visited states with their parent transitions as Arrow IPC batches (initial states
    have null parents); return the checksums of their fingerprints and of their parent transitions."""
    import pyarrow as pa
    schema = pa.schema([("fp", _fingerprint_type(bits)), ("parent_fp", _fingerprint_type(bits)),
                        ("action_index", pa.int32())])
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
        for start in range(0, len(visited), _BATCH_ROWS):
            rows = slice(start, start + _BATCH_ROWS)
            actions = visited.action_indices[rows]
            no_parent = actions == NO_ACTION
            writer.write_batch(pa.record_batch([
                _fingerprints(visited.fps[rows], bits),
                _fingerprints(visited.parent_fps[rows], bits, null=no_parent),
                pa.array(actions, pa.int32(), mask=no_parent),
            ], schema=schema))
    _fsync(path)
    # An initial state's parent is 0 in memory and null on disk, which reads back as 0.
    return array_checksum(visited.fps, bits), links_checksum(visited.fps, visited.parent_fps, visited.action_indices,
                                                             bits)


def _write_frontier(path: Path, frontier: Frontier, bits: int) -> tuple[int, int]:
    """Write a level's states as Arrow IPC batches; return the row count and the checksum of their
    fingerprints."""
    import pyarrow as pa
    schema = pa.schema([("fp", _fingerprint_type(bits)), ("data", pa.binary())])
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
        for start, stop, data in frontier.batches(_BATCH_ROWS):
            writer.write_batch(pa.record_batch([_fingerprints(frontier.fps[start:stop], bits),
                                                pa.array(data, pa.binary())], schema=schema))
    _fsync(path)
    return len(frontier), array_checksum(frontier.fps, bits)


def _fingerprint_type(bits: int) -> pa.DataType:
    import pyarrow as pa
    return pa.int64() if bits == 64 else pa.binary(bits // 8)


def _fingerprints(values: np.ndarray, bits: int, null: np.ndarray | None = None) -> pa.Array:
    """A fingerprint array as an Arrow column (``null``: where the value is missing)."""
    import pyarrow as pa
    if bits == 64:
        return pa.array(values, pa.int64(), mask=null)
    width = bits // 8
    validity = None if null is None or not null.any() else pa.array(~null).buffers()[1]
    return pa.Array.from_buffers(pa.binary(width), len(values), [validity, pa.py_buffer(digest_bytes(values, bits))])


def _values(column: pa.ChunkedArray, bits: int, path: Path) -> np.ndarray:
    """A stored fingerprint column as an array (a null, an initial state's parent, reads as 0)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    expected = pa.int64() if bits == 64 else pa.binary(bits // 8)
    if column.type != expected:
        raise ResumeError(f"{path} stores fingerprints as {column.type}, expected {expected}; "
                          "the run cannot be resumed, start a new one")
    if bits == 64:
        return np.asarray(pc.fill_null(column, 0).to_numpy(), dtype=np.int64)
    width = bits // 8
    values = column.combine_chunks()
    data = values.buffers()[1]
    if not len(values) or data is None:
        return np.zeros(0, fingerprint_dtype(bits))
    start = values.offset * width
    return fingerprint_array(data.to_pybytes()[start : start + len(values) * width], bits)


def _binary_values(column: pa.ChunkedArray, path: Path) -> list[bytes]:
    """A stored column of state bytes (a null or another type is damage, refused naming the file)."""
    import pyarrow as pa
    if column.type != pa.binary() or column.null_count:
        raise ResumeError(f"{path} stores states as {column.type} with {column.null_count} null(s), expected binary "
                          "without nulls; the run directory is damaged, so it cannot be resumed: start a new run")
    return column.to_pylist()


def _read_table(path: Path, columns: Sequence[str]) -> pa.Table:
    import pyarrow as pa
    import pyarrow.feather as feather
    try:
        table = feather.read_table(str(path), memory_map=False)
        table.validate(full=True)  # offsets and lengths within their buffers, before any value is read
        names = table.column_names
    except FileNotFoundError:
        raise ResumeError(f"{path} is missing; the checkpoint is incomplete, so the run cannot be resumed: "
                          "start a new one") from None
    except (OSError, pa.ArrowException, ValueError) as e:  # ValueError: a name that is not UTF-8, among others
        raise ResumeError(f"{path} cannot be read ({_short(e)}); the checkpoint is damaged, so the run cannot "
                          "be resumed: start a new one") from None
    missing = [c for c in columns if c not in names]
    if missing:
        raise ResumeError(f"{path} has no column {missing[0]!r}; the checkpoint is damaged, so the run cannot "
                          "be resumed: start a new one")
    return table.select(list(columns))


def _checkpoint_fields(record: Any) -> None:
    if not isinstance(record, dict):
        raise TypeError("checkpoint is not a JSON object")
    for key, kind in (("directory", str), ("depth", int), ("visited", int), ("visited_checksum", int),
                      ("visited_links", int),
                      ("frontier", int), ("frontier_checksum", int), ("generated", int),
                      ("generated_by_action", dict), ("distinct_by_action", dict), ("levels", list),
                      ("discoveries", list), ("examples_found", list)):
        _typed(record, key, kind)
    directory = record["directory"]
    if "/" in directory or directory in (".", "..") or not directory.startswith("checkpoint-"):
        raise ValueError(f"checkpoint directory {directory!r}")
    for key in ("generated_by_action", "distinct_by_action"):
        for name, count in record[key].items():
            _typed({name: count}, name, int)
    for level in record["levels"]:
        if not isinstance(level, dict) or set(level) != _LEVEL_FIELDS:
            raise ValueError("a level record has other fields")
        for key in _LEVEL_FIELDS - {"seconds"}:
            _typed(level, key, int)
        _typed(level, "seconds", (int, float))
    for depth, level in enumerate(record["levels"]):
        if level["depth"] != depth:
            raise ValueError(f"level {depth} is recorded as depth {level['depth']}")
    for found in record["discoveries"]:
        if not isinstance(found, dict):
            raise TypeError("a discovery is not a JSON object")
        _typed(found, "property", str)
        PropertyKind(_typed(found, "kind", str))
        path, indices = _typed(found, "path", list), _typed(found, "action_indices", list)
        if len(path) != len(indices) + 1 or not all(isinstance(i, int) and not isinstance(i, bool) for i in indices):
            raise ValueError("a discovery's path does not match its actions")
        for fp in path:
            int(_typed({"fp": fp}, "fp", str))
    if not all(isinstance(name, str) for name in record["examples_found"]):
        raise TypeError("examples_found holds a non-string")
    if record["depth"] != len(record["levels"]):
        raise ValueError(f"checkpoint depth {record['depth']} with {len(record['levels'])} levels")


def _typed(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = data[key]
    if isinstance(value, bool) and kind is not bool:
        raise TypeError(f"{key} is {value!r}")
    if not isinstance(value, kind):
        raise TypeError(f"{key} is {type(value).__name__}")
    return value


def _short(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text if len(text) <= 120 else f"{text[:120]}…"


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_json_atomically(path: Path, data: Mapping[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        # A new file of its own (O_EXCL, never through a link), then renamed over the manifest.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            json.dump(data, stream, indent=2)
            stream.write("\n")
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
