"""The order in which Kafka's controller iterates the Scala maps it builds by ``groupBy`` over broker ids.

Kafka 1.1 – 2.3 are built with Scala 2.11 and 2.12, whose ``TraversableLike.groupBy`` collects into a
``mutable.HashMap`` and copies it, in that map's iteration order, into an immutable ``Map``. Up to four
keys that is ``Map1`` – ``Map4``, which keep insertion order, so the iteration order is the mutable
``HashTable``'s: buckets from the last to the first (``entriesIterator``), a bucket's entries newest
first; an ``Int`` key's bucket in the initial table of 16 is ``improve(key, 4) >>> 28``
(``byteswap32`` then a rotation by the table's seed, ``HashTable.index``). From five keys the copy is an
immutable ``HashTrieMap``, iterated by the 5-bit fragments of ``immutable.HashMap.improve(key)``, lowest
first. Neither order is sorted: for brokers 0, 1, 2, 3 it is 2, 1, 3, 0.

Deviation: two keys in one bucket of the mutable table come out newest first, that is in the reverse of
the order ``groupBy`` met them; the model takes ``first_seen`` as that order (broker ids 0 – 7 have
buckets of their own).
"""

from __future__ import annotations

from collections.abc import Sequence

_M = 0xFFFFFFFF


def _byteswap32(v: int) -> int:
    """``scala.util.hashing.byteswap32``."""
    hc = (v * 0x9E3775CD) & _M
    hc = int.from_bytes(hc.to_bytes(4, "big"), "little")
    return (hc * 0x9E3775CD) & _M


def _mutable_bucket(key: int) -> int:
    """``HashTable.index(key.##)`` in a table of 16 buckets (seed ``bitCount(15)`` = 4)."""
    i = _byteswap32(key & _M)
    rotated = ((i >> 4) | (i << 28)) & _M
    return rotated >> 28


def _trie_hash(key: int) -> int:
    """``immutable.HashMap.improve(key.##)``."""
    h = key & _M
    h = (h + (~(h << 9) & _M)) & _M
    h ^= h >> 14
    h = (h + (h << 4)) & _M
    return h ^ (h >> 10)


def group_by_order(first_seen: Sequence[int]) -> list[int]:
    """The iteration order of ``groupBy``'s result over these ``Int`` keys, given in the order ``groupBy`` met
    them."""
    keys = list(dict.fromkeys(first_seen))
    if len(keys) <= 4:
        position = {k: i for i, k in enumerate(keys)}
        return sorted(keys, key=lambda k: (-_mutable_bucket(k), -position[k]))
    return sorted(keys, key=lambda k: [(_trie_hash(k) >> shift) & 31 for shift in range(0, 35, 5)])
