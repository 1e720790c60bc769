"""How a level's Parquet stores fingerprints of either width, and the arrays they are read back as.

A Spark level (``levels/level=NNNN``) holds, per state, its fingerprint, its parent's fingerprint,
the action index and name of the parent transition, and the state's canonical bytes. Spark has
no 128-bit integer type, so the width decides the columns:

* **64 bits**: ``fp long, parent_fp long`` (the fingerprint as it is, a signed integer);
* **128 bits**: ``fp_hi long, fp_lo long, parent_fp_hi long, parent_fp_lo long``. ``*_hi`` is the
  integer's upper 64 bits, signed (it carries the integer's sign); ``*_lo`` is its lower 64 bits,
  unsigned in the integer, stored with their top bit flipped (``lo - 2^63`` as a signed long).
  Flipping makes the signed order of ``*_lo`` the unsigned order of the low half, so Spark's
  lexicographic order of ``(fp_hi, fp_lo)`` (a ``min`` over a struct, a filter comparing with a cutoff) is the order
  of the integers the fingerprints stand for, which the parent rule (the smallest parent
  fingerprint wins, :mod:`explorer.results`) and a truncation at ``max_states`` (the smallest
  fingerprints are kept) both need. A low half stored as it is would sort ``2^63..2^64-1`` before
  ``0..2^63-1``.

The parent columns are null for an initial state (it has no parent); read back, they are
fingerprint 0 with :data:`explorer.visited.NO_ACTION`, as the local BFS keeps them. On the driver
and in the workers, fingerprints are the arrays of :mod:`explorer.fingerprint`
(:func:`~explorer.fingerprint.fingerprint_dtype`): ``int64``, or records ``hi`` (signed) and ``lo``
(unsigned); :func:`fingerprint_arrays` and :func:`column_fingerprints` convert between the two.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from explorer.fingerprint import fingerprint_dtype

#: The top bit of a 64-bit word, flipped in a stored low half (see the module docstring).
_SIGN = np.uint64(1 << 63)


def fp_columns(bits: int) -> tuple[str, ...]:
    """The columns of a state's fingerprint, most significant first."""
    return ("fp",) if bits == 64 else ("fp_hi", "fp_lo")


def parent_columns(bits: int) -> tuple[str, ...]:
    """The columns of the parent's fingerprint, most significant first."""
    return ("parent_fp",) if bits == 64 else ("parent_fp_hi", "parent_fp_lo")


def frontier_columns(bits: int) -> tuple[str, ...]:
    """The columns of a level the expander reads: the fingerprint, then the state's bytes."""
    return (*fp_columns(bits), "data")


def level_schema(bits: int) -> str:
    """The columns of a level's Parquet as a Spark DDL string."""
    longs = ", ".join(f"{name} long" for name in (*fp_columns(bits), *parent_columns(bits)))
    return f"{longs}, action_index int, action_name string, data binary"


@cache
def level_arrow_schema(bits: int) -> pa.Schema:
    """:func:`level_schema` as Arrow writes it."""
    return pa.schema([
        *((name, pa.int64()) for name in (*fp_columns(bits), *parent_columns(bits))),
        ("action_index", pa.int32()),
        ("action_name", pa.string()),
        ("data", pa.binary()),
    ])


def fingerprint_arrays(fps: np.ndarray, bits: int) -> list[pa.Array]:
    """A fingerprint array as the Arrow columns that store it (:func:`fp_columns`' order)."""
    if bits == 64:
        return [pa.array(np.asarray(fps, dtype=np.int64), pa.int64())]
    low = np.ascontiguousarray(fps["lo"]) ^ _SIGN
    return [pa.array(np.ascontiguousarray(fps["hi"]), pa.int64()), pa.array(low.view(np.int64), pa.int64())]


def kth_smallest(fps: np.ndarray, k: int) -> np.ndarray:
    """The ``k``-th smallest (from 1) of the fingerprints ``fps``, in the integers' order, as a one-element array of
    their dtype (a 128-bit record orders by its signed upper, then its unsigned lower half)."""
    if fps.dtype.names is None:
        return np.partition(fps, k - 1)[k - 1 : k]
    order = np.lexsort((fps["lo"], fps["hi"]))
    return fps[order[k - 1 : k]]


def stored_words(fp: np.ndarray, bits: int) -> tuple[int, ...]:
    """The values the columns of :func:`fp_columns` store for the one fingerprint in ``fp`` (a one-element array):
    what a Spark filter on those columns compares with."""
    return tuple(int(column[0].as_py()) for column in fingerprint_arrays(fp, bits))


def column_fingerprints(table: pa.Table | pa.RecordBatch, names: Sequence[str], bits: int) -> np.ndarray:
    """The fingerprints stored in the columns ``names`` of ``table`` (:func:`fp_columns` or
    :func:`parent_columns`), as an array; a null (an initial state's parent) reads as 0."""
    words = [_longs(table.column(name)) for name in names]
    if bits == 64:
        return words[0]
    fps = np.empty(len(words[0]), fingerprint_dtype(bits))
    fps["hi"] = words[0]
    fps["lo"] = words[1].view(np.uint64) ^ _SIGN
    nulls = _nulls(table.column(names[0]))
    if nulls is not None:
        fps["lo"][nulls] = 0
    return fps


def _longs(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A long column as an int64 array, nulls as 0."""
    if not len(column):
        return np.zeros(0, np.int64)
    if column.null_count:
        column = pc.fill_null(column, 0)
    return np.asarray(column.to_numpy(), dtype=np.int64)


def _nulls(column: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """Where ``column`` is null (None when nowhere)."""
    if not column.null_count:
        return None
    return np.asarray(pc.is_null(column).to_numpy(zero_copy_only=False), dtype=bool)
