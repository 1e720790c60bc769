"""Stable 64-bit fingerprints of canonical state bytes.

Never Python's ``hash()``: it is salted per process, and Spark workers are other processes. Every
explorer and every report uses this one function, so fingerprints printed by one engine can be
looked up in the data of another.
"""

from __future__ import annotations

import hashlib


def fingerprint(data: bytes) -> int:
    """The signed 64-bit fingerprint of canonical state bytes (signed so it fits Spark's LongType)."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little", signed=True)


def collision_probability(distinct: int, generated: int) -> float:
    """TLC's optimistic estimate of the chance that two distinct states shared a fingerprint.

    TLC prints n·(g−n)/2^64 for n distinct states among g generated ones: each of the g−n
    duplicate look-ups could have hit one of the n stored fingerprints by accident.
    """
    return distinct * max(generated - distinct, 0) / 2.0**64
