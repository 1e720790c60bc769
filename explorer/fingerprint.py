"""Stable fingerprints of canonical state bytes (64 bits, or 128 when asked), and their checksums.

Never Python's ``hash()``: it is salted per process, and Spark workers are other processes. Every
explorer and every report uses this one function, so fingerprints printed by one engine can be
looked up in the data of another.

A fingerprint is a signed integer of ``bits`` bits (64 by default, signed so that it fits Spark's
LongType). 128 bits are for runs so large that TLC's collision estimate stops being negligible
(see :func:`collision_probability`); only the local engine stores them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

#: The fingerprint widths an explorer may use.
FINGERPRINT_BITS = (64, 128)

#: Above this estimate a report warns that two distinct states may have shared a fingerprint (and
#: one of them was never explored), and suggests 128-bit fingerprints.
NEGLIGIBLE_COLLISION_PROBABILITY = 1e-6


def fingerprint(data: bytes, bits: int = 64) -> int:
    """The signed ``bits``-bit fingerprint of canonical state bytes."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=bits // 8).digest(), "little", signed=True)


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
