"""Kafka's replica assignment: which brokers hold the replicas of each partition of a new topic.

This is ``AdminUtils.assignReplicasToBrokers`` (``admin/AdminUtils.scala``, identical from 2.0 to 2.8)
with its rack-unaware and rack-aware branches and ``getRackAlternatedBrokerList``, the assignment of
added partitions (``AdminZkClient.addPartitions`` 2.0, ``createNewPartitionsAssignment`` 2.8, in
``zk/AdminZkClient.scala``), and the checks Kafka makes on a manual assignment
(``AdminZkClient.validateTopicCreate``, and ``validateReplicaAssignment`` for added partitions). The
scenario loader uses it to compute or check the assignment a scenario starts from; ``kmc assign``
shows it to operators, one draw at a time or summarised over every possible random draw.

Kafka's own exceptions are Python exceptions here (subclasses of :class:`KafkaAdminError`), with the
same messages and a ``kafka_class`` attribute naming the Kafka class. Plain ``ValueError`` is used
only for kmc's own preconditions (duplicate broker ids, a negative replica shift), which Kafka's
callers guarantee by construction.

Where Kafka draws at random (``rand.nextInt``), two draws are made: the start index, then the
initial replica shift. ``fixed_start_index >= 0`` replaces both, as in Kafka; kmc's
``replica_shift`` replaces the second one alone, so that every draw can be reproduced.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import ClassVar

import attrs

# ---------------------------------------------------------------------------------------------------
# Kafka's exceptions


class KafkaAdminError(Exception):
    """An exception Kafka's admin code throws; ``str(e)`` is Kafka's message."""

    kafka_class: ClassVar[str] = "java.lang.RuntimeException"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def describe(self) -> str:
        """``<fully qualified Kafka class>: <message>``, as a Java stack trace's first line reads."""
        return f"{self.kafka_class}: {self.message}"


class InvalidPartitionsException(KafkaAdminError):
    kafka_class = "org.apache.kafka.common.errors.InvalidPartitionsException"


class InvalidReplicationFactorException(KafkaAdminError):
    kafka_class = "org.apache.kafka.common.errors.InvalidReplicationFactorException"


class InvalidReplicaAssignmentException(KafkaAdminError):
    kafka_class = "org.apache.kafka.common.errors.InvalidReplicaAssignmentException"


class BrokerNotAvailableException(KafkaAdminError):
    kafka_class = "org.apache.kafka.common.errors.BrokerNotAvailableException"


class AdminOperationException(KafkaAdminError):
    kafka_class = "kafka.admin.AdminOperationException"


# ---------------------------------------------------------------------------------------------------
# assignReplicasToBrokers


@attrs.frozen
class BrokerMetadata:
    """A broker as the assignment sees it (Kafka: ``kafka.admin.BrokerMetadata(id, rack: Option[String])``).

    ``rack`` is ``None`` for a broker without ``broker.rack``.
    """

    id: int
    rack: str | None = None


Assignment = dict[int, tuple[int, ...]]


def replica_index(first: int, shift: int, j: int, n: int) -> int:
    """Index in the broker array of follower ``j`` (0-based) of a partition whose leader is at ``first``.

    Kafka: ``AdminUtils.replicaIndex``: ``(first + 1 + (shift + j) mod (n - 1)) mod n``. It never
    equals ``first``, and for ``j`` in ``0 .. n-2`` it visits every other index once.
    """
    return (first + 1 + (shift + j) % (n - 1)) % n


def get_rack_alternated_broker_list(broker_rack: Mapping[int, str]) -> tuple[int, ...]:
    """The brokers ordered by taking, round-robin over the racks sorted by name, each rack's next broker
    in id order (Kafka: ``AdminUtils.getRackAlternatedBrokerList``).

    ``{0: "r1", 1: "r3", 2: "r3", 3: "r2", 4: "r2", 5: "r1"}`` gives ``(0, 3, 1, 5, 4, 2)``.
    """
    by_rack: dict[str, list[int]] = {}
    for broker, rack in broker_rack.items():
        by_rack.setdefault(rack, []).append(broker)
    racks = sorted(by_rack)  # Scala sorts by UTF-16 code units; equal to this for non-astral names
    remaining = {rack: iter(sorted(ids)) for rack, ids in by_rack.items()}
    result: list[int] = []
    rack_index = 0
    while len(result) < len(broker_rack):
        next_broker = next(remaining[racks[rack_index]], None)
        if next_broker is not None:
            result.append(next_broker)
        rack_index = (rack_index + 1) % len(racks)
    return tuple(result)


def check_assignment_arguments(n_partitions: int, replication_factor: int, n_brokers: int) -> None:
    """The first checks of ``AdminUtils.assignReplicasToBrokers`` (``admin/AdminUtils.scala`` 2.0 – 2.8), in
    Kafka's order and with its messages: a partition count, then a replication factor, that is not positive,
    then a replication factor above the available brokers. Kafka makes them before anything else looks at
    the numbers, so callers that bound sizes of their own (``kmc assign``, scenario loading) make them
    first too: a replication factor of 40,000 over three brokers is Kafka's "larger than available
    brokers: 3", not a bound of kmc's."""
    if n_partitions <= 0:
        raise InvalidPartitionsException("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorException("Replication factor must be larger than 0.")
    if replication_factor > n_brokers:
        raise InvalidReplicationFactorException(
            f"Replication factor: {replication_factor} larger than available brokers: {n_brokers}."
        )


def assign_replicas_to_brokers(
    brokers: Sequence[BrokerMetadata],
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    *,
    replica_shift: int | None = None,
    rng: random.Random | None = None,
) -> Assignment:
    """Kafka's assignment of ``n_partitions`` partitions of ``replication_factor`` replicas each.

    Kafka: ``AdminUtils.assignReplicasToBrokers`` (``admin/AdminUtils.scala`` 2.0–2.8). Returns
    partition id → replicas (leader first), for partition ids ``max(0, start_partition_id)`` onwards.

    * If no broker has a rack, the rack-unaware branch uses the brokers **in the given order** (so
      the result depends on it: Kafka's ``createTopics`` passes the metadata cache's unordered alive
      brokers, ``AdminZkClient.getBrokerMetadatas`` passes them sorted by id).
    * If every broker has a rack, the rack-aware branch re-orders them with
      :func:`get_rack_alternated_broker_list` (so the given order does not matter).
    * ``fixed_start_index >= 0`` is both the start index and the initial replica shift, as in Kafka.
      ``replica_shift`` (kmc) sets the initial shift alone. What is not fixed is drawn from ``rng``
      (a fresh ``random.Random`` if none), start index first, like Kafka's two ``rand.nextInt(n)``.

    Raises Kafka's ``InvalidPartitionsException`` / ``InvalidReplicationFactorException`` /
    ``AdminOperationException`` (some brokers have a rack, others not) with Kafka's messages.
    """
    _check_unique_ids(brokers)
    if replica_shift is not None and replica_shift < 0:
        raise ValueError(f"replica_shift must be >= 0 (it is the initial shift itself), got {replica_shift}.")
    check_assignment_arguments(n_partitions, replication_factor, len(brokers))
    if all(b.rack is None for b in brokers):
        broker_array = tuple(b.id for b in brokers)
        start_index, shift = _start_index_and_shift(len(broker_array), fixed_start_index, replica_shift, rng)
        return _assign_rack_unaware(
            n_partitions, replication_factor, broker_array, start_index, shift, start_partition_id
        )
    if any(b.rack is None for b in brokers):
        raise AdminOperationException(
            "Not all brokers have rack information for replica rack aware assignment."
        )
    broker_rack = {b.id: b.rack for b in brokers if b.rack is not None}
    broker_array = get_rack_alternated_broker_list(broker_rack)
    start_index, shift = _start_index_and_shift(len(broker_array), fixed_start_index, replica_shift, rng)
    return _assign_rack_aware(
        n_partitions, replication_factor, broker_array, broker_rack, start_index, shift, start_partition_id
    )


def _check_unique_ids(brokers: Sequence[BrokerMetadata]) -> None:
    seen: set[int] = set()
    for b in brokers:
        if b.id in seen:
            raise ValueError(f"broker {b.id} appears twice in the broker list; give each broker once.")
        seen.add(b.id)


def _start_index_and_shift(
    n: int, fixed_start_index: int, replica_shift: int | None, rng: random.Random | None
) -> tuple[int, int]:
    draw = rng if rng is not None else random.Random()
    start_index = fixed_start_index if fixed_start_index >= 0 else draw.randrange(n)
    if replica_shift is not None:
        return start_index, replica_shift
    return start_index, fixed_start_index if fixed_start_index >= 0 else draw.randrange(n)


def _assign_rack_unaware(
    n_partitions: int,
    replication_factor: int,
    broker_array: tuple[int, ...],
    start_index: int,
    shift: int,
    start_partition_id: int,
) -> Assignment:
    """Kafka: ``AdminUtils.assignReplicasToBrokersRackUnaware``, with the draws already made."""
    n = len(broker_array)
    result: Assignment = {}
    partition = max(0, start_partition_id)
    for _ in range(n_partitions):
        # Every time the leaders have gone once round the broker array, the followers shift by one more.
        if partition > 0 and partition % n == 0:
            shift += 1
        first = (partition + start_index) % n
        followers = (broker_array[replica_index(first, shift, j, n)] for j in range(replication_factor - 1))
        result[partition] = (broker_array[first], *followers)
        partition += 1
    return result


def _assign_rack_aware(
    n_partitions: int,
    replication_factor: int,
    broker_array: tuple[int, ...],
    broker_rack: Mapping[int, str],
    start_index: int,
    shift: int,
    start_partition_id: int,
) -> Assignment:
    """Kafka: ``AdminUtils.assignReplicasToBrokersRackAware``, with the draws already made.

    Leaders go round the rack-alternated list; each follower is the next broker along the shifted walk
    that is on a rack without a replica yet (until every rack has one) and is not already a replica
    (until every broker is one).
    """
    n = len(broker_array)
    n_racks = len(set(broker_rack.values()))
    result: Assignment = {}
    partition = max(0, start_partition_id)
    for _ in range(n_partitions):
        if partition > 0 and partition % n == 0:
            shift += 1
        first = (partition + start_index) % n
        leader = broker_array[first]
        replicas = [leader]
        racks_with_replicas = {broker_rack[leader]}
        brokers_with_replicas = {leader}
        k = 0
        for _ in range(replication_factor - 1):
            while True:
                broker = broker_array[replica_index(first, shift * n_racks, k, n)]
                rack = broker_rack[broker]
                k += 1
                if (rack not in racks_with_replicas or len(racks_with_replicas) == n_racks) and (
                    broker not in brokers_with_replicas or len(brokers_with_replicas) == n
                ):
                    replicas.append(broker)
                    racks_with_replicas.add(rack)
                    brokers_with_replicas.add(broker)
                    break
        result[partition] = tuple(replicas)
        partition += 1
    return result


# ---------------------------------------------------------------------------------------------------
# Every random draw


def all_random_draws(
    brokers: Sequence[BrokerMetadata],
    n_partitions: int,
    replication_factor: int,
    start_partition_id: int = -1,
) -> Iterator[tuple[int, int, Assignment]]:
    """``(start_index, initial_shift, assignment)`` for each of the ``n × n`` equally likely outcomes of
    Kafka's two ``rand.nextInt(n)`` draws (``n`` brokers), start index outer, shift inner.

    Kafka's checks raise on the first iteration.
    """
    n = len(brokers)
    for start_index in range(max(n, 1)):  # with no broker, the first call raises Kafka's exception
        for shift in range(max(n, 1)):
            yield (
                start_index,
                shift,
                assign_replicas_to_brokers(
                    brokers,
                    n_partitions,
                    replication_factor,
                    fixed_start_index=start_index,
                    start_partition_id=start_partition_id,
                    replica_shift=shift,
                ),
            )


@attrs.frozen
class LoadRange:
    """Over all draws, the fewest and most replicas, and leaders (first replicas), one broker or rack got."""

    replicas_min: int
    replicas_max: int
    leaders_min: int
    leaders_max: int


@attrs.frozen
class DrawSummary:
    """What every possible random draw of :func:`assign_replicas_to_brokers` gives, in aggregate.

    ``per_broker`` is ordered by broker id, ``per_rack`` by rack name and empty without racks;
    ``distinct_assignments`` counts the different assignments among the ``draws``.
    """

    draws: int
    distinct_assignments: int
    per_broker: tuple[tuple[int, LoadRange], ...]
    per_rack: tuple[tuple[str, LoadRange], ...]


def draw_summary(
    brokers: Sequence[BrokerMetadata],
    n_partitions: int,
    replication_factor: int,
    start_partition_id: int = -1,
) -> DrawSummary:
    """Summarise :func:`all_random_draws`: per broker and per rack, min and max replicas and leaders."""
    rack_of = {b.id: b.rack for b in brokers if b.rack is not None}
    broker_ids = sorted(b.id for b in brokers)
    racks = sorted(set(rack_of.values()))
    broker_counts: dict[int, list[tuple[int, int]]] = {b: [] for b in broker_ids}
    rack_counts: dict[str, list[tuple[int, int]]] = {r: [] for r in racks}
    seen: set[tuple[tuple[int, tuple[int, ...]], ...]] = set()
    draws = 0
    for _, _, assignment in all_random_draws(brokers, n_partitions, replication_factor, start_partition_id):
        draws += 1
        seen.add(tuple(sorted(assignment.items())))
        replicas = dict.fromkeys(broker_ids, 0)
        leaders = dict.fromkeys(broker_ids, 0)
        for partition_replicas in assignment.values():
            leaders[partition_replicas[0]] += 1
            for broker in partition_replicas:
                replicas[broker] += 1
        for b in broker_ids:
            broker_counts[b].append((replicas[b], leaders[b]))
        for r in racks:
            in_rack = [b for b in broker_ids if rack_of[b] == r]
            rack_counts[r].append((sum(replicas[b] for b in in_rack), sum(leaders[b] for b in in_rack)))
    return DrawSummary(
        draws=draws,
        distinct_assignments=len(seen),
        per_broker=tuple((b, _load_range(broker_counts[b])) for b in broker_ids),
        per_rack=tuple((r, _load_range(rack_counts[r])) for r in racks),
    )


def _load_range(counts: Sequence[tuple[int, int]]) -> LoadRange:
    replicas = [c[0] for c in counts]
    leaders = [c[1] for c in counts]
    return LoadRange(min(replicas), max(replicas), min(leaders), max(leaders))


# ---------------------------------------------------------------------------------------------------
# Added partitions and manual assignments


def add_partitions_assignment(
    existing: Mapping[int, Sequence[int]],
    all_brokers_sorted: Sequence[BrokerMetadata],
    num_partitions: int,
    manual: Mapping[int, Sequence[int]] | None = None,
    *,
    topic: str = "topic",
) -> Assignment:
    """The replicas of the partitions added to a topic that has the ``existing`` assignment, so that it
    has ``num_partitions`` in all. Returns the new partitions only.

    Kafka: ``AdminZkClient.addPartitions`` (2.0) / ``createNewPartitionsAssignment`` (2.8), in
    ``zk/AdminZkClient.scala``. Without a ``manual`` assignment the new partitions come from
    :func:`assign_replicas_to_brokers` with the replication factor of partition 0, partition ids from
    ``len(existing)``, and a fixed start index (hence also initial shift) = the position in
    ``all_brokers_sorted`` of the first broker whose id is >= the leader of partition 0 (0 if none).
    ``all_brokers_sorted`` is used in the order given; Kafka passes ``getBrokerMetadatas()``, sorted
    by id. A ``manual`` assignment is checked (Kafka's ``validateReplicaAssignment``) and returned;
    like ``AdminZkClient``, this does not check that it names exactly the partitions being added
    (Kafka's ``AdminManager.createPartitions`` and ``TopicCommand`` do that before calling it).
    """
    partition0 = existing.get(0)
    if partition0 is None:
        raise AdminOperationException(
            f"Unexpected existing replica assignment for topic '{topic}', partition id 0 is missing. "
            f"Assignment: {_scala_map(existing)}"
        )
    partitions_to_add = num_partitions - len(existing)
    if partitions_to_add <= 0:
        raise InvalidPartitionsException(
            "The number of partitions for a topic can only be increased. "
            f"Topic {topic} currently has {len(existing)} partitions, "
            f"{num_partitions} would not be an increase."
        )
    if manual is not None:
        _validate_added_replica_assignment(manual, len(partition0), [b.id for b in all_brokers_sorted])
        return {p: tuple(manual[p]) for p in sorted(manual)}
    start_index = next((i for i, b in enumerate(all_brokers_sorted) if b.id >= partition0[0]), 0)
    return assign_replicas_to_brokers(
        all_brokers_sorted,
        partitions_to_add,
        len(partition0),
        fixed_start_index=start_index,
        start_partition_id=len(existing),
    )


def _validate_added_replica_assignment(
    manual: Mapping[int, Sequence[int]], expected_replication_factor: int, available_broker_ids: Sequence[int]
) -> None:
    """Kafka: ``AdminZkClient.validateReplicaAssignment`` (private; the checks on added partitions)."""
    for partition in sorted(manual):
        _check_partition_replicas(partition, manual[partition], available_broker_ids)
    bad = [(p, len(manual[p])) for p in sorted(manual) if len(manual[p]) != expected_replication_factor]
    if bad:
        raise InvalidReplicaAssignmentException(
            "Inconsistent replication factor between partitions, "
            f"partition 0 has {expected_replication_factor} while partitions "
            f"[{', '.join(str(p) for p, _ in bad)}] have replication factors "
            f"[{', '.join(str(rf) for _, rf in bad)}], respectively."
        )


def _check_partition_replicas(
    partition: int, replicas: Sequence[int], available_broker_ids: Collection[int]
) -> None:
    if not replicas:
        raise InvalidReplicaAssignmentException(
            f"Cannot have replication factor of 0 for partition id {partition}."
        )
    if len(set(replicas)) != len(replicas):
        raise InvalidReplicaAssignmentException(
            "Duplicate brokers not allowed in replica assignment: "
            f"{', '.join(map(str, replicas))} for partition id {partition}."
        )
    _check_brokers_available(partition, replicas, available_broker_ids)


def _check_brokers_available(
    partition: int, replicas: Sequence[int], available_broker_ids: Collection[int]
) -> None:
    if not set(replicas) <= set(available_broker_ids):
        raise BrokerNotAvailableException(
            f"Some brokers specified for partition id {partition} are not available. "
            f"Specified brokers: {', '.join(map(str, replicas))}, "
            f"available brokers: {', '.join(map(str, sorted(set(available_broker_ids))))}."
        )


def validate_replica_assignment(
    assignment: Mapping[int, Sequence[int]], known_brokers: Collection[int]
) -> None:
    """Check a manual assignment for a new topic; raise Kafka's exception for the first problem found.

    Kafka: ``AdminZkClient.validateTopicCreate`` (2.8; ``AdminUtils.validateCreateOrUpdateTopic`` 2.0),
    in Kafka's order: every partition has the same number of replicas ("All partitions should have the
    same number of replicas"), no broker twice in a partition ("Duplicate replica assignment found:
    …"), partition ids are ``0 .. n-1`` ("partitions should be a consecutive 0-based integer
    sequence"); all ``InvalidReplicaAssignmentException``.

    kmc adds two checks that topic creation in Kafka does not make, with the messages Kafka uses for
    added partitions: no partition without replicas (``InvalidReplicaAssignmentException``), and every
    broker known (``BrokerNotAvailableException``; Kafka creates such a topic and its partitions stay
    offline). The partition-id check is exact, where Kafka's arithmetic test (``sum of ids >= 0 ==
    n(n-1)/2``) lets a few odd id sets such as {-3, 1, 2} through.
    """
    if len({len(replicas) for replicas in assignment.values()}) != 1:
        raise InvalidReplicaAssignmentException("All partitions should have the same number of replicas")
    for partition in sorted(assignment):
        if not assignment[partition]:
            raise InvalidReplicaAssignmentException(
                f"Cannot have replication factor of 0 for partition id {partition}."
            )
    for replicas in assignment.values():
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentException(
                f"Duplicate replica assignment found: {_scala_map(assignment)}"
            )
    if sorted(assignment) != list(range(len(assignment))):
        raise InvalidReplicaAssignmentException("partitions should be a consecutive 0-based integer sequence")
    for partition in sorted(assignment):
        _check_brokers_available(partition, assignment[partition], known_brokers)


def _scala_map(assignment: Mapping[int, Sequence[int]]) -> str:
    """An assignment as Scala's ``Map.toString`` prints it in Kafka's messages (ordered by partition id)."""
    entries = ", ".join(f"{p} -> List({', '.join(map(str, assignment[p]))})" for p in sorted(assignment))
    return f"Map({entries})"
