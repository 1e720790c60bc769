"""Stable fingerprints of canonical state bytes (64 bits, or 128 when asked), and their checksums.

Never Python's ``hash()``: it is salted per process, and Spark workers are other processes. Every
explorer and every report uses this one function, so fingerprints printed by one engine can be
looked up in the data of another.

A fingerprint is a signed integer of ``bits`` bits (64 by default, signed so that it fits Spark's
LongType). 128 bits are for runs so large that TLC's collision estimate stops being negligible
(see :func:`collision_probability`); both engines store them (the Spark engine as two longs per
fingerprint whose signed order is the integers' order: :mod:`spark_explore.columns`).

The breadth-first engines keep fingerprints in numpy arrays rather than as Python ints
(:func:`fingerprint_array`): ``int64`` for 64 bits, read straight from the concatenated BLAKE2b
digests (whose little-endian bytes are the integer), and for 128 bits a 16-byte record whose
fields ``hi`` (signed, the upper eight bytes) and ``lo`` (unsigned) are compared in that order, so
that sorting either kind of array orders fingerprints as the integers they stand for.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

#: The fingerprint widths an explorer may use.
FINGERPRINT_BITS = (64, 128)

#: Above this estimate a report warns that two distinct states may have shared a fingerprint (and
#: one of them was never explored), and suggests 128-bit fingerprints.
NEGLIGIBLE_COLLISION_PROBABILITY = 1e-6

#: 128-bit fingerprints in an array: the high half (signed) and the low half, compared in that order.
FINGERPRINT_128 = np.dtype([("hi", "<i8"), ("lo", "<u8")])
#: The layout of a 16-byte digest: the integer's low half first (little-endian).
_DIGEST_128 = np.dtype([("lo", "<u8"), ("hi", "<i8")])


def fingerprint(data: bytes, bits: int = 64) -> int:
    """The signed ``bits``-bit fingerprint of canonical state bytes."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=bits // 8).digest(), "little", signed=True)


def fingerprint_dtype(bits: int) -> np.dtype[Any]:
    """The numpy type of an array of ``bits``-bit fingerprints."""
    return np.dtype("<i8") if bits == 64 else FINGERPRINT_128


def fingerprint_array(digests: bytes | Sequence[bytes], bits: int = 64) -> np.ndarray:
    """The fingerprints whose BLAKE2b digests (``digest_size = bits // 8``) are ``digests``, given one
    after the other in one byte string or as a sequence of digests, as an array."""
    joined = digests if isinstance(digests, bytes) else b"".join(digests)
    if bits == 64:
        return np.frombuffer(joined, dtype=np.int64).copy()
    raw = np.frombuffer(joined, dtype=_DIGEST_128)
    values = np.empty(len(raw), FINGERPRINT_128)
    values["hi"], values["lo"] = raw["hi"], raw["lo"]
    return values


def digest_bytes(fingerprints: np.ndarray, bits: int = 64) -> bytes:
    """A fingerprint array as its digests, one after the other (the inverse of :func:`fingerprint_array`)."""
    if bits == 64:
        return np.ascontiguousarray(fingerprints, dtype=np.int64).tobytes()
    raw = np.empty(len(fingerprints), _DIGEST_128)
    raw["hi"], raw["lo"] = fingerprints["hi"], fingerprints["lo"]
    return raw.tobytes()


def fingerprints_of(values: Iterable[int], bits: int = 64) -> np.ndarray:
    """An array of the fingerprints ``values`` (Python ints)."""
    width = bits // 8
    return fingerprint_array(b"".join(v.to_bytes(width, "little", signed=True) for v in values), bits)


def as_int(value: Any, bits: int = 64) -> int:
    """One element of a fingerprint array as the Python int it stands for."""
    if bits == 64:
        return int(value)
    return (int(value["hi"]) << 64) + int(value["lo"])


def as_ints(values: np.ndarray, bits: int = 64) -> list[int]:
    """A fingerprint array as Python ints."""
    if bits == 64:
        return [int(v) for v in values.tolist()]
    return [(hi << 64) + lo for hi, lo in zip(values["hi"].tolist(), values["lo"].tolist(), strict=True)]


def collision_probability(distinct: int, generated: int, bits: int = 64) -> float:
    """TLC's optimistic estimate of the chance that two distinct states shared a fingerprint.

    TLC prints n·(g−n)/2^64 for n distinct states among g generated ones: each of the g−n
    duplicate look-ups could have hit one of the n stored fingerprints by accident.
    """
    return distinct * max(generated - distinct, 0) / 2.0**bits


def checksum(fingerprints: Iterable[int], bits: int = 64) -> int:
    """An order-independent checksum of a set of fingerprints: their sum modulo 2^bits, unsigned.

    Recorded next to the row count of every stored level or checkpoint and compared before a run
    is resumed, so that a missing, duplicated or altered row is noticed rather than recounted.
    """
    return sum(fingerprints) % (1 << bits)


def array_checksum(fingerprints: np.ndarray, bits: int = 64) -> int:
    """:func:`checksum` of a fingerprint array, without a Python loop (sums wrap around in uint64)."""
    if bits == 64:
        return int(np.asarray(fingerprints, dtype=np.int64).view(np.uint64).sum(dtype=np.uint64))
    # value = hi·2^64 + lo: the sum is 2^64·Σhi + Σlo, where Σhi only matters modulo 2^64 and Σlo is
    # summed exactly as its two 32-bit halves (each sum fits uint64 for fewer than 2^32 rows).
    hi = np.ascontiguousarray(fingerprints["hi"]).view(np.uint64).sum(dtype=np.uint64)
    lo = np.ascontiguousarray(fingerprints["lo"])
    lo_sum = int((lo & 0xFFFFFFFF).sum(dtype=np.uint64)) + (int((lo >> np.uint64(32)).sum(dtype=np.uint64)) << 32)
    return (lo_sum + (int(hi) << 64)) % (1 << 128)
