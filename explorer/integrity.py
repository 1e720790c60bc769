"""What a resumed search checks before it trusts a stored state: one helper for both engines.

The local BFS's checkpoints (:mod:`explorer.checkpoint`) and the Spark BFS's levels
(:mod:`spark_explore.trace`) store the same three things: fingerprints, the parent transition of
each (``parent_fp``, ``action_index``), and states as canonical bytes. When a level or checkpoint is
written, its row count, the checksum of its fingerprints (:func:`explorer.fingerprint.checksum`)
and the checksum of its parent transitions (:func:`links_checksum`) are recorded in the run's
sealed manifest. On resume :class:`StoredRows` reads the files back batch by batch and checks:

* the row count and both checksums against the manifest (a missing, added or edited row, an
  edited parent pointer or action index);
* every stored state's fingerprint, recomputed from its bytes (a state whose bytes were altered
  or replaced by another state's, which no checksum over the fingerprints can see).

A mismatch raises :class:`ResumeError`, one sentence naming the file: a damaged run directory is
refused, never explored on (a wrong count or verdict), and never reported as a model that is not
deterministic (what a replay of an altered path would otherwise conclude).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import attrs
import numpy as np

from explorer.fingerprint import array_checksum, fingerprint_array

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


class ResumeError(Exception):
    """A run directory that cannot be continued as asked: one sentence naming the file and the fix."""


def check_same_search(where: Path, recorded: tuple[str, str], current: tuple[str, str],
                      error: type[ResumeError] = ResumeError) -> None:
    """Refuse to resume the run in ``where`` unless it was started with the same scenario and the same kmc:
    ``recorded`` and ``current`` are each (scenario hash, kmc version). Both engines check this first."""
    (recorded_hash, recorded_version), (scenario_hash, kmc_version) = recorded, current
    if recorded_hash != scenario_hash:
        raise error(f"{where} was explored with another scenario (hash {recorded_hash}, this one is {scenario_hash}); "
                    "resume it with the scenario it started with, or start a new run")
    if recorded_version != kmc_version:
        raise error(f"{where} was written by kmc {recorded_version}, this is kmc {kmc_version}; states may be "
                    "encoded differently, so start a new run")


def _mix(values: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on every element (uint64 arithmetic wraps around, as intended)."""
    z = values + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _words(fps: np.ndarray, bits: int) -> list[np.ndarray]:
    """A fingerprint array as uint64 columns (one for 64 bits, two for 128)."""
    if bits == 64:
        return [np.ascontiguousarray(fps, dtype=np.int64).view(np.uint64)]
    return [np.ascontiguousarray(fps["hi"]).view(np.uint64), np.ascontiguousarray(fps["lo"])]


def links_checksum(fps: np.ndarray, parent_fps: np.ndarray, action_indices: np.ndarray, bits: int = 64) -> int:
    """An order-independent checksum of the rows ``(fp, parent_fp, action_index)``: the sum modulo
    2^64 of a 64-bit hash of each row (initial states: parent 0, action
    :data:`explorer.visited.NO_ACTION`).

    Unlike a checksum per column, it changes when one row's parent or action is edited, or when
    two rows swap them."""
    if not len(fps):
        return 0
    row = np.zeros(len(fps), np.uint64)
    actions = np.asarray(action_indices, dtype=np.int64).view(np.uint64)
    with np.errstate(over="ignore"):
        for word in (*_words(fps, bits), *_words(parent_fps, bits), actions):
            row = _mix(row ^ word)
        return int(row.sum(dtype=np.uint64))


def recomputed_fingerprints(data: Sequence[bytes], bits: int = 64) -> np.ndarray:
    """The fingerprints of canonical state bytes, as :func:`explorer.fingerprint.fingerprint` computes them."""
    hasher = hashlib.blake2b(digest_size=bits // 8).copy
    digests = []
    for state in data:
        h = hasher()
        h.update(state)
        digests.append(h.digest())
    return fingerprint_array(digests, bits)


@attrs.define
class StoredRows:
    """What one stored file (or level directory) holds, accumulated batch by batch, then compared
    with what the manifest recorded when it was written (:meth:`check`)."""

    path: Path
    bits: int = 64
    rows: int = 0
    checksum: int = 0
    links: int = 0
    altered_states: int = 0

    def add(self, fps: np.ndarray, parent_fps: np.ndarray | None = None, action_indices: np.ndarray | None = None,
            data: Sequence[bytes] | None = None) -> None:
        """Count a batch of rows; ``data``, when given, is checked against ``fps`` state by state."""
        modulus = 1 << self.bits
        self.rows += len(fps)
        self.checksum = (self.checksum + array_checksum(fps, self.bits)) % modulus
        if parent_fps is not None and action_indices is not None:
            self.links = (self.links + links_checksum(fps, parent_fps, action_indices, self.bits)) % (1 << 64)
        if data is not None:
            self.altered_states += int(np.count_nonzero(recomputed_fingerprints(data, self.bits) != fps))

    def check(self, rows: object, checksum: object, links: object = None) -> None:
        """Raise :class:`ResumeError` naming the file unless it holds ``rows`` rows whose checksums are
        ``checksum`` (fingerprints) and ``links`` (parent transitions; None: not recorded), and every
        state's bytes match its fingerprint."""
        damaged = "the run directory is damaged, so it cannot be resumed: start a new run"
        if self.rows != rows:
            raise ResumeError(f"{self.path} holds {self.rows:,} rows where the manifest recorded {rows}; {damaged}")
        if checksum is not None and self.checksum != checksum:
            raise ResumeError(f"{self.path} does not match the fingerprint checksum the manifest recorded; {damaged}")
        if links is not None and self.links != links:
            raise ResumeError(f"{self.path} does not match the checksum of parent transitions the manifest "
                              f"recorded (a parent or an action index was altered); {damaged}")
        if self.altered_states:
            raise ResumeError(f"{self.path} holds {self.altered_states:,} state(s) whose bytes do not match their "
                              f"fingerprint; {damaged}")
