"""How a Spark level stores fingerprints (spark_explore.columns), without a Spark session.

64-bit levels keep today's columns; 128-bit ones store two longs per fingerprint whose signed
lexicographic order, the order Spark's ``min(struct)`` and ``orderBy`` use, is the order of the
integers. The values below straddle every boundary where a low half stored unflipped, or a high
half read unsigned, would order wrongly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from explorer.checkpoint import ResumeError
from explorer.fingerprint import as_ints, fingerprints_of
from spark_explore.columns import (
    column_fingerprints,
    fingerprint_arrays,
    fp_columns,
    kth_smallest,
    level_arrow_schema,
    level_schema,
    parent_columns,
    stored_words,
)
from spark_explore.manifest import Manifest, read_manifest, write_manifest
from spark_explore.trace import ReplayMismatch, level_dir, read_level_row

#: 128-bit fingerprints around the sign of each half: unflipped low halves would put 2^63 before 1.
EDGES_128 = [-(1 << 127), -(1 << 64) - 1, -(1 << 64), -(1 << 63) - 1, -(1 << 63), -2, -1, 0, 1, (1 << 63) - 1,
             1 << 63, (1 << 63) + 1, (1 << 64) - 1, 1 << 64, (1 << 64) + (1 << 63), (1 << 127) - 1]
EDGES_64 = [-(1 << 63), -1, 0, 1, (1 << 63) - 1]


def stored_rows(values: list[int], bits: int) -> list[tuple[int, ...]]:
    """The fingerprint columns of ``values`` as the tuples of longs Spark compares."""
    columns = fingerprint_arrays(fingerprints_of(values, bits), bits)
    return list(zip(*(column.to_pylist() for column in columns), strict=True))


@pytest.mark.parametrize(("bits", "values"), [(64, EDGES_64), (128, EDGES_128)])
def test_the_stored_columns_order_as_the_integers(bits: int, values: list[int]) -> None:
    """Sorting the stored longs (signed, column by column) sorts the fingerprints as integers, and every
    long fits a signed 64-bit column."""
    shuffled = values[::2] + values[1::2]
    rows = stored_rows(shuffled, bits)
    assert all(-(1 << 63) <= word < 1 << 63 for row in rows for word in row)
    by_columns = [value for _, value in sorted(zip(rows, shuffled, strict=True))]
    assert by_columns == sorted(values)


@pytest.mark.parametrize(("bits", "values"), [(64, EDGES_64), (128, EDGES_128)])
def test_a_truncation_cutoff_keeps_the_smallest_fingerprints(bits: int, values: list[int]) -> None:
    """The ``k`` smallest fingerprints are those whose stored columns compare at most the stored columns of the
    ``k``-th smallest, as the Spark filter of a level truncated at ``max_states`` compares them."""
    shuffled = values[1::2] + values[::2]
    fps = fingerprints_of(shuffled, bits)
    for k in range(1, len(values) + 1):
        words = stored_words(kth_smallest(fps, k), bits)
        kept = [value for row, value in zip(stored_rows(shuffled, bits), shuffled, strict=True) if row <= words]
        assert sorted(kept) == sorted(values)[:k]


@pytest.mark.parametrize(("bits", "values"), [(64, EDGES_64), (128, EDGES_128)])
def test_the_stored_columns_read_back_as_the_fingerprints(bits: int, values: list[int]) -> None:
    fps = fingerprints_of(values, bits)
    table = pa.table(dict(zip(fp_columns(bits), fingerprint_arrays(fps, bits), strict=True)))
    assert as_ints(column_fingerprints(table, fp_columns(bits), bits), bits) == values


@pytest.mark.parametrize("bits", [64, 128])
def test_a_null_parent_reads_as_zero(bits: int) -> None:
    """An initial state's parent columns are null; read back they are fingerprint 0, as the local BFS keeps it."""
    table = pa.table({name: pa.array([None, -5], pa.int64()) for name in parent_columns(bits)})
    parents = as_ints(column_fingerprints(table, parent_columns(bits), bits), bits)
    assert parents[0] == 0
    assert parents[1] == (-5 if bits == 64 else (-5 << 64) + ((-5 + (1 << 63)) % (1 << 64)))


@pytest.mark.parametrize("bits", [64, 128])
def test_a_row_is_found_by_its_fingerprint(tmp_path: Path, bits: int) -> None:
    """The trace reconstruction reads exactly the row of a fingerprint, in whichever file and row group of the
    level it is, past the first batch of its row group too, and names a fingerprint the level lacks."""
    edges = EDGES_128 if bits == 128 else EDGES_64
    spread = [(k * 0x9E3779B97F4A7C15 << (bits - 64)) % (1 << bits) - (1 << (bits - 1)) for k in range(1, 2500)]
    values = list(dict.fromkeys([*edges, *spread]))[:2500]
    directory = level_dir(tmp_path, 3)
    directory.mkdir(parents=True)
    # two files: row groups of 300 rows in the first, of 1,500 in the second (rows past a first batch of 1,024)
    for half, (start, stop, group) in enumerate([(0, 700, 300), (700, len(values), 1500)]):
        part = values[start:stop]
        table = pa.table({**dict(zip(fp_columns(bits), fingerprint_arrays(fingerprints_of(part, bits), bits),
                                     strict=True)), "n": pa.array(range(start, stop))})
        pq.write_table(table, directory / f"part-0000{half}.parquet", row_group_size=group)
    for n, value in enumerate(values):
        assert read_level_row(tmp_path, 3, value, ("n",), bits).column("n").to_pylist() == [n]
    with pytest.raises(ReplayMismatch, match="not stored in level 3"):
        read_level_row(tmp_path, 3, 12345, ("n",), bits)


def test_64_bit_levels_keep_their_schema() -> None:
    """Run directories written before 128-bit Spark runs existed have these columns, and still resume."""
    assert level_schema(64) == "fp long, parent_fp long, action_index int, action_name string, data binary"
    assert level_arrow_schema(64).names == ["fp", "parent_fp", "action_index", "action_name", "data"]
    assert level_schema(128) == ("fp_hi long, fp_lo long, parent_fp_hi long, parent_fp_lo long, action_index int, "
                                 "action_name string, data binary")


def test_the_manifest_records_the_width(tmp_path: Path) -> None:
    """The width round-trips through the manifest; a manifest without one (written before it was
    recorded) is a 64-bit run's; an unknown width is refused as corrupt."""
    manifest = Manifest("hash", "1.0", "local[2]", 1, 1, fingerprint_bits=128)
    write_manifest(tmp_path, manifest)
    assert read_manifest(tmp_path) == manifest
    data = manifest.to_json()
    del data["fingerprint_bits"]
    assert Manifest.from_json(data).fingerprint_bits == 64
    write_manifest(tmp_path, Manifest("hash", "1.0", "local[2]", 1, 1))
    path = tmp_path / "manifest.json"
    document = json.loads(path.read_text())
    assert document["fingerprint_bits"] == 64
    with pytest.raises(ValueError, match="fingerprint_bits 96"):
        Manifest.from_json({**manifest.to_json(), "fingerprint_bits": 96})
    with pytest.raises(ResumeError):  # the seal covers the width: an edited width is refused
        path.write_text(json.dumps({**document, "fingerprint_bits": 128}))
        read_manifest(tmp_path)
