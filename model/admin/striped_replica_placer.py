"""The KRaft controller's replica placement: Kafka 3.9.0-rc3's ``StripedReplicaPlacer``
(``metadata/src/main/java/org/apache/kafka/metadata/placement/StripedReplicaPlacer.java``), which
``ReplicationControlManager`` calls for a CreateTopics or CreatePartitions request without an explicit assignment.

It stripes across racks: the racks sorted by name (no rack first, ``OptionalStringComparator``), each rack's brokers
sorted by id, each list starting at a random offset; partition after partition the starting rack moves on by one,
and each broker list's offset moves on by one every time a new "epoch" reaches it. A partition's leader is an
unfenced broker; its other replicas take an unfenced broker of each rack in turn, then a fenced one where a rack has
no unfenced broker left (fenced brokers last). Once it has placed as many partitions as there are unfenced brokers
it shuffles the rack order and every broker list (``Collections.shuffle``) and starts a new round.

The random draws are Kafka's: the controller builds its placer with ``new Random()`` (``QuorumController``,
``ClusterControlManager``), an unseeded ``java.util.Random``. :class:`JavaRandom` is that generator (its
48-bit linear congruence, ``nextInt(bound)``, ``Collections.shuffle``), so ``seed`` gives the placement
Kafka's class gives with ``new Random(seed)``; which seed a running controller drew cannot be known. The order in
which ``RackList`` draws each rack's starting offsets, and shuffles the racks, is that of a ``java.util.HashMap``
keyed by ``Optional<String>`` (:func:`_hash_map_order`); brokers are taken in the order given (Kafka:
``ClusterControlManager.usableBrokers``), which matters only for rack names whose hashes share a bucket.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import attrs

from model.admin.assignment import InvalidReplicationFactorException

T = TypeVar("T")

_MULTIPLIER = 0x5DEECE66D
_MASK = (1 << 48) - 1


class JavaRandom:
    """``java.util.Random``: ``next(bits)`` and what the placer calls of it (``nextInt(bound)``, and
    ``Collections.shuffle(list, random)``). A subclass may replace :meth:`next` (Kafka's tests' ``MockRandom``)."""

    def __init__(self, seed: int) -> None:
        self._seed = (seed ^ _MULTIPLIER) & _MASK  # Random.initialScramble

    def next(self, bits: int) -> int:
        self._seed = (self._seed * _MULTIPLIER + 0xB) & _MASK
        return _int32(self._seed >> (48 - bits))

    def next_int(self, bound: int) -> int:
        """``Random.nextInt(int bound)``: rejection sampling against the bias of ``r % bound``."""
        r = self.next(31)
        m = bound - 1
        if bound & m == 0:  # a power of two
            return (bound * r) >> 31
        u = r
        r = u % bound
        while u - r + m >= 2**31:  # Java's int overflow: u - r + m < 0
            u = self.next(31)
            r = u % bound
        return r

    def shuffle(self, items: list[T]) -> None:
        """``Collections.shuffle(list, rnd)`` on an ArrayList: swap ``i - 1`` with ``nextInt(i)``, from the end."""
        for i in range(len(items), 1, -1):
            j = self.next_int(i)
            items[i - 1], items[j] = items[j], items[i - 1]


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - 2**32 if value >= 2**31 else value


@attrs.frozen
class UsableBroker:
    """A registered broker the placer may use (Kafka: ``UsableBroker(id, Optional<String> rack, fenced)``)."""

    id: int
    rack: str | None = None
    fenced: bool = False


class _BrokerList:
    """``StripedReplicaPlacer.BrokerList``: brokers sorted by id, read from a moving offset once per epoch."""

    def __init__(self) -> None:
        self.brokers: list[int] = []
        self.index = 0
        self.offset = 0
        self.epoch = 0

    def initialize(self, random: JavaRandom) -> None:
        if self.brokers:
            self.brokers.sort()
            self.offset = random.next_int(len(self.brokers))

    def next(self, epoch: int) -> int:
        if not self.brokers:
            return -1
        if self.epoch != epoch:
            self.epoch = epoch
            self.index = 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return -1
        broker = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return broker


class _Rack:
    """``StripedReplicaPlacer.Rack``: its fenced and unfenced brokers; ``next`` prefers the unfenced."""

    def __init__(self) -> None:
        self.fenced = _BrokerList()
        self.unfenced = _BrokerList()

    def next(self, epoch: int) -> int:
        result = self.unfenced.next(epoch)
        return result if result >= 0 else self.fenced.next(epoch)


def _java_string_hash(text: str) -> int:
    """``String.hashCode``: ``s[0]*31^(n-1) + … + s[n-1]`` over UTF-16 code units, in 32-bit arithmetic."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i:i + 2], "big")) & 0xFFFFFFFF
    return h


def _hash_map_order(keys: Sequence[str | None]) -> list[str | None]:
    """The iteration order of a ``java.util.HashMap`` holding ``keys`` (``Optional<String>``, inserted in this
    order): by bucket, ``(h ^ (h >>> 16)) & (capacity - 1)`` with the capacity 16 doubled while the map is over
    three quarters full, and within a bucket by insertion. Deviation: a bucket of eight or more colliding names
    (which Java turns into a tree, or answers by resizing) is not modelled."""
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: str | None) -> int:
        h = 0 if key is None else _java_string_hash(key)  # Optional.hashCode: the value's, 0 when empty
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(keys, key=lambda k: (bucket(k), keys.index(k)))


def _rack_sort_key(rack: str | None) -> tuple[int, bytes]:
    """``OptionalStringComparator``: no rack first, then ``String.compareTo`` (UTF-16 code units)."""
    return (0, b"") if rack is None else (1, rack.encode("utf-16-be"))


class _RackList:
    """``StripedReplicaPlacer.RackList``."""

    def __init__(self, random: JavaRandom, brokers: Sequence[UsableBroker]) -> None:
        self.random = random
        self.racks: dict[str | None, _Rack] = {}
        for broker in brokers:
            rack = self.racks.setdefault(broker.rack, _Rack())
            (rack.fenced if broker.fenced else rack.unfenced).brokers.append(broker.id)
        self.hash_order = _hash_map_order(list(self.racks))
        for name in self.hash_order:  # for (Rack rack : racks.values()) rack.initialize(random)
            self.racks[name].fenced.initialize(random)
            self.racks[name].unfenced.initialize(random)
        self.rack_names: list[str | None] = sorted(self.racks, key=_rack_sort_key)
        self.total = len(brokers)
        self.unfenced = sum(not b.fenced for b in brokers)
        self.epoch = 0
        self.offset = random.next_int(len(self.rack_names)) if self.rack_names else 0

    def place(self, replication_factor: int) -> tuple[int, ...]:
        _check(replication_factor, self.total, self.unfenced, fenced_first=False)
        # a new round once every unfenced broker has led one partition (never with one: it would loop forever)
        if self.epoch == self.unfenced and self.unfenced > 1:
            self.shuffle()
            self.epoch = 0
        if self.offset == len(self.rack_names):
            self.offset = 0
        first_rack_index = self.offset
        while True:  # the leader: the first unfenced broker from the starting rack on
            result = self.racks[self.rack_names[first_rack_index]].unfenced.next(self.epoch)
            if result >= 0:
                brokers = [result]
                break
            first_rack_index = (first_rack_index + 1) % len(self.rack_names)
        rack_index = self.offset
        for _ in range(1, replication_factor):
            result = -1
            while result < 0:
                if rack_index == first_rack_index:
                    first_rack_index = -1  # the leader's rack is skipped once
                else:
                    result = self.racks[self.rack_names[rack_index]].next(self.epoch)
                rack_index = (rack_index + 1) % len(self.rack_names)
            brokers.append(result)
        self.epoch += 1
        self.offset += 1
        return tuple(brokers)

    def shuffle(self) -> None:
        self.random.shuffle(self.rack_names)
        for name in self.hash_order:
            self.random.shuffle(self.racks[name].fenced.brokers)
            self.random.shuffle(self.racks[name].unfenced.brokers)


def _check(replication_factor: int, total: int, unfenced: int, fenced_first: bool) -> None:
    """``throwInvalidReplicationFactorIfNonPositive``, then ``…IfZero`` and ``…IfTooFewBrokers`` in that order
    (``StripedReplicaPlacer.place``, ``fenced_first``) or the other (``RackList.place``). A replication factor
    above the unfenced brokers is not refused: fenced brokers take the remaining replicas."""
    if replication_factor <= 0:
        raise InvalidReplicationFactorException(
            f"Invalid replication factor {replication_factor}: the replication factor must be positive.")
    if fenced_first and unfenced == 0:
        raise InvalidReplicationFactorException("All brokers are currently fenced.")
    if replication_factor > total:
        raise InvalidReplicationFactorException(
            f"The target replication factor of {replication_factor} cannot be reached because only "
            f"{total} broker(s) are registered.")
    if unfenced == 0:
        raise InvalidReplicationFactorException("All brokers are currently fenced.")


def striped_place(brokers: Sequence[UsableBroker], partitions: int, replication_factor: int,
                  random: JavaRandom) -> tuple[tuple[int, ...], ...]:
    """``StripedReplicaPlacer.place``: each partition's replicas, leader first. The ``RackList`` is built (and
    its random offsets drawn) before the arguments are checked, as in Kafka."""
    rack_list = _RackList(random, brokers)
    _check(replication_factor, rack_list.total, rack_list.unfenced, fenced_first=True)
    return tuple(rack_list.place(replication_factor) for _ in range(partitions))


__all__ = ["JavaRandom", "UsableBroker", "striped_place"]
