"""Kafka's replica assignment (model/admin/assignment.py): worked examples, properties over every draw, checks.

Expected assignments are literals: from the spec (§d), the seed article's tables
(``000_6b9e82a0ad51bf9c``), the example in ``AdminUtils``' own documentation, or computed by hand from
``replicaIndex(first, shift, j, n) = (first + 1 + (shift + j) mod (n - 1)) mod n`` (shown in comments).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from model.admin.assignment import (
    AdminOperationException,
    BrokerMetadata,
    BrokerNotAvailableException,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
    KafkaAdminError,
    add_partitions_assignment,
    all_random_draws,
    assign_replicas_to_brokers,
    draw_summary,
    get_rack_alternated_broker_list,
    replica_index,
    validate_replica_assignment,
)


def brokers(*ids: int) -> list[BrokerMetadata]:
    return [BrokerMetadata(i, None) for i in ids]


def racked(rack_of: dict[int, str]) -> list[BrokerMetadata]:
    return [BrokerMetadata(i, r) for i, r in rack_of.items()]


FIVE = brokers(0, 1, 2, 3, 4)
KAFKA_DOC_RACKS = {0: "r1", 1: "r3", 2: "r3", 3: "r2", 4: "r2", 5: "r1"}

# ---------------------------------------------------------------------------------------------------
# Worked examples


def test_spec_example_10_partitions_rf3():
    """Brokers 0..4, 10 partitions, RF 3, start index 0 gives the spec's p0..p9 (shift becomes 1 at p5)."""
    assert assign_replicas_to_brokers(FIVE, 10, 3, fixed_start_index=0) == {
        0: (0, 1, 2), 1: (1, 2, 3), 2: (2, 3, 4), 3: (3, 4, 0), 4: (4, 0, 1),
        5: (0, 2, 3), 6: (1, 3, 4), 7: (2, 4, 0), 8: (3, 0, 1), 9: (4, 1, 2),
    }  # fmt: skip


def test_seed_example_10_partitions_rf4():
    """Brokers 0..4, 10 partitions, RF 4, start index 0 gives the seed's table (the RF 3 rows plus one)."""
    assert assign_replicas_to_brokers(FIVE, 10, 4, fixed_start_index=0) == {
        0: (0, 1, 2, 3), 1: (1, 2, 3, 4), 2: (2, 3, 4, 0), 3: (3, 4, 0, 1), 4: (4, 0, 1, 2),
        5: (0, 2, 3, 4), 6: (1, 3, 4, 0), 7: (2, 4, 0, 1), 8: (3, 0, 1, 2), 9: (4, 1, 2, 3),
    }  # fmt: skip


# The seed's heading says 11 partitions but its table prints 12 rows, p-0 .. p-11. Both are checked:
# 11 partitions end with p10 = [0, 3, 4]; 12 partitions add p11 = [1, 4, 0] (shift became 2 at p10).
def test_seed_example_11_partitions_rf3():
    """With 11 partitions the first ten rows are unchanged and p10 = [0, 3, 4] (the shift is now 2)."""
    result = assign_replicas_to_brokers(FIVE, 11, 3, fixed_start_index=0)
    assert len(result) == 11
    assert result[10] == (0, 3, 4)
    assert result[5] == (0, 2, 3) and result[9] == (4, 1, 2)


def test_seed_example_12_partitions_rf3():
    """With 12 partitions (the rows the seed actually prints) p10 = [0, 3, 4] and p11 = [1, 4, 0]."""
    result = assign_replicas_to_brokers(FIVE, 12, 3, fixed_start_index=0)
    assert (result[10], result[11]) == ((0, 3, 4), (1, 4, 0))


def test_seed_example_unordered_broker_list_start_0_shift_3():
    """Broker list [1, 2, 0, 4, 3], start index 0, initial shift 3: positions in the list, not ids, rotate."""
    # n = 5, array = [1, 2, 0, 4, 3]. Follower offsets from the leader's position: 1 + (shift + j) mod 4.
    # p0..p4, shift 3: offsets 4, 1.   p5..p9, shift 4: offsets 1, 2.
    #   p0: pos 0 -> 1; pos 4 -> 3; pos 1 -> 2        p5: pos 0 -> 1; pos 1 -> 2; pos 2 -> 0
    #   p1: pos 1 -> 2; pos 0 -> 1; pos 2 -> 0        p6: pos 1 -> 2; pos 2 -> 0; pos 3 -> 4
    #   p2: pos 2 -> 0; pos 1 -> 2; pos 3 -> 4        p7: pos 2 -> 0; pos 3 -> 4; pos 4 -> 3
    #   p3: pos 3 -> 4; pos 2 -> 0; pos 4 -> 3        p8: pos 3 -> 4; pos 4 -> 3; pos 0 -> 1
    #   p4: pos 4 -> 3; pos 3 -> 4; pos 0 -> 1        p9: pos 4 -> 3; pos 0 -> 1; pos 1 -> 2
    result = assign_replicas_to_brokers(brokers(1, 2, 0, 4, 3), 10, 3, fixed_start_index=0, replica_shift=3)
    assert result == {
        0: (1, 3, 2), 1: (2, 1, 0), 2: (0, 2, 4), 3: (4, 0, 3), 4: (3, 4, 1),
        5: (1, 2, 0), 6: (2, 0, 4), 7: (0, 4, 3), 8: (4, 3, 1), 9: (3, 1, 2),
    }  # fmt: skip


def test_start_partition_id_continues_the_rounds():
    """Starting at partition 5 of brokers 0..4 shifts at once and reproduces p5..p9 of the spec example."""
    assert assign_replicas_to_brokers(FIVE, 5, 3, fixed_start_index=0, start_partition_id=5) == {
        5: (0, 2, 3), 6: (1, 3, 4), 7: (2, 4, 0), 8: (3, 0, 1), 9: (4, 1, 2),
    }  # fmt: skip


def test_rack_alternated_broker_list_example():
    """{0:r1, 1:r3, 2:r3, 3:r2, 4:r2, 5:r1} alternates to [0, 3, 1, 5, 4, 2] (racks by name, then ids)."""
    assert get_rack_alternated_broker_list(KAFKA_DOC_RACKS) == (0, 3, 1, 5, 4, 2)


def test_rack_alternated_broker_list_uneven_racks():
    """Exhausted racks are skipped: racks a:{5, 1}, b:{2}, c:{9, 3, 7} give [1, 2, 3, 5, 7, 9]."""
    rack_of = {5: "a", 1: "a", 2: "b", 9: "c", 3: "c", 7: "c"}
    assert get_rack_alternated_broker_list(rack_of) == (1, 2, 3, 5, 7, 9)


def test_rack_aware_example_from_kafka_documentation():
    """AdminUtils' documented example: 6 brokers, 3 racks, RF 3, start 0; partition 6 shifts to [0, 4, 2]."""
    # Alternated list [0, 3, 1, 5, 4, 2]; p0..p5 take consecutive positions (every 3 in a row span 3 racks);
    # p6 has shift 1, scaled by 3 racks: offsets 1 + 3 mod 5 = 4 -> broker 4 (r2), then 5 -> broker 2 (r3).
    assert assign_replicas_to_brokers(racked(KAFKA_DOC_RACKS), 7, 3, fixed_start_index=0) == {
        0: (0, 3, 1),
        1: (3, 1, 5),
        2: (1, 5, 4),
        3: (5, 4, 2),
        4: (4, 2, 0),
        5: (2, 0, 3),
        6: (0, 4, 2),
    }


def test_rack_aware_skips_brokers_on_racks_that_already_have_a_replica():
    """Racks a:{0,1}, b:{2,3}, c:{4}, RF 3: followers skip used racks, so broker 4 is in every partition."""
    # Alternated list [0, 2, 4, 1, 3]. p0: leader 0 (a); offsets 1, 2 -> 2 (b), 4 (c).
    # p1: leader 2 (b); offset 1 -> 4 (c); offset 2 -> 1 (a).  p3: leader 1 (a); offset 1 -> 3 (b);
    # offset 2 -> 0 (a, skipped: rack a has a replica and c has none); offset 3 -> 2 (b, skipped);
    # offset 4 -> 4 (c).
    rack_of = {0: "a", 1: "a", 2: "b", 3: "b", 4: "c"}
    result = assign_replicas_to_brokers(racked(rack_of), 5, 3, fixed_start_index=0)
    assert result[0] == (0, 2, 4)
    assert result[1] == (2, 4, 1)
    assert result[3] == (1, 3, 4)
    assert all(4 in replicas for replicas in result.values())


def test_seed_example_add_one_partition():
    """Existing p0=[0,2,3], p1=[1,3,0] on brokers 0..4: adding one partition gives p2=[2,3,4], not [4,0,1]."""
    assert add_partitions_assignment({0: (0, 2, 3), 1: (1, 3, 0)}, FIVE, 3) == {2: (2, 3, 4)}


def test_add_partitions_starts_at_partition0_leader_and_uses_it_as_shift_too():
    """The start index is the position of p0's leader in the sorted list, and seeds the shift as well."""
    # p0 leader 3 -> start index 3, shift 3. p1: first (1+3) mod 5 = 4 -> 4; offsets 1+3=4 -> 3, 1+0=1 -> 0.
    # p2: first 0 -> 0; offsets 4 -> 4, 1 -> 1.
    assert add_partitions_assignment({0: (3, 4, 0)}, FIVE, 3) == {1: (4, 3, 0), 2: (0, 4, 1)}


def test_add_partitions_when_partition0_leader_is_gone():
    """If p0's leader is no longer a broker, the start index is the first broker with a larger id."""
    # Brokers [0, 1, 2, 4], p0 leader 3 -> index 3 (broker 4), shift 3. p1: first 0 -> 0; offsets
    # 1 + 3 mod 3 = 1 -> 1, 1 + 4 mod 3 = 2 -> 2.
    assert add_partitions_assignment({0: (3, 4, 0)}, brokers(0, 1, 2, 4), 2) == {1: (0, 1, 2)}


def test_add_partitions_when_no_broker_id_reaches_partition0_leader():
    """If every broker id is below p0's leader, the start index (and shift) is 0."""
    # Brokers [0, 1, 2, 4], start 0, shift 0. p1: first 1 -> 1; offsets 1 -> 2, 2 -> 4.
    assert add_partitions_assignment({0: (9, 4, 0)}, brokers(0, 1, 2, 4), 2) == {1: (1, 2, 4)}


def test_add_partitions_manual_assignment_is_returned_as_given():
    """A valid manual assignment for the added partitions is returned unchanged."""
    assert add_partitions_assignment({0: (0, 1)}, FIVE, 3, manual={1: (4, 3), 2: (2, 0)}) == {
        1: (4, 3),
        2: (2, 0),
    }


# ---------------------------------------------------------------------------------------------------
# Draws


def test_replica_index_never_hits_the_leader_and_visits_every_other_position():
    """For j = 0 .. n-2 replicaIndex visits each position except the leader's exactly once, for any shift."""
    for n in range(2, 8):
        for first, shift in itertools.product(range(n), range(2 * n)):
            visited = [replica_index(first, shift, j, n) for j in range(n - 1)]
            assert sorted(visited) == [i for i in range(n) if i != first]


def test_fixed_start_index_seeds_the_shift_as_well():
    """fixed_start_index = 2 means start index 2 and initial shift 2, as in Kafka."""
    assert assign_replicas_to_brokers(FIVE, 7, 3, fixed_start_index=2) == assign_replicas_to_brokers(
        FIVE, 7, 3, fixed_start_index=2, replica_shift=2
    )


def test_random_draws_take_start_index_then_shift_from_rng():
    """Without a fixed start index, start index then shift are drawn from rng, like Kafka's two nextInt."""
    for seed in range(20):
        expected_draws = random.Random(seed)
        start, shift = expected_draws.randrange(5), expected_draws.randrange(5)
        drawn = assign_replicas_to_brokers(FIVE, 7, 3, rng=random.Random(seed))
        assert drawn == assign_replicas_to_brokers(FIVE, 7, 3, fixed_start_index=start, replica_shift=shift)


def test_replica_shift_alone_replaces_only_the_second_draw():
    """With replica_shift and no fixed start index only the start index is drawn from rng."""
    start = random.Random(3).randrange(5)
    drawn = assign_replicas_to_brokers(FIVE, 7, 3, replica_shift=4, rng=random.Random(3))
    assert drawn == assign_replicas_to_brokers(FIVE, 7, 3, fixed_start_index=start, replica_shift=4)


def test_all_random_draws_enumerates_every_start_index_and_shift():
    """all_random_draws yields n × n draws, start index outer, shift inner, each with its assignment."""
    draws = list(all_random_draws(brokers(0, 1, 2), 4, 2))
    assert [(s, h) for s, h, _ in draws] == list(itertools.product(range(3), range(3)))
    for start, shift, assignment in draws:
        assert assignment == assign_replicas_to_brokers(
            brokers(0, 1, 2), 4, 2, fixed_start_index=start, replica_shift=shift
        )


def test_draw_summary_of_the_spec_example_is_perfectly_balanced():
    """Brokers 0..4, 10 partitions, RF 3: in all 25 draws every broker has 6 replicas and 2 leaders."""
    summary = draw_summary(FIVE, 10, 3)
    assert summary.draws == 25
    assert [b for b, _ in summary.per_broker] == [0, 1, 2, 3, 4]
    for _, load in summary.per_broker:
        assert (load.replicas_min, load.replicas_max, load.leaders_min, load.leaders_max) == (6, 6, 2, 2)
    assert summary.per_rack == ()


def test_draw_summary_with_rf1_depends_only_on_the_start_index():
    """With RF 1 the shift is irrelevant: 3 brokers, 4 partitions give 3 distinct draws, 1 or 2 per broker."""
    summary = draw_summary(brokers(0, 1, 2), 4, 1)
    assert (summary.draws, summary.distinct_assignments) == (9, 3)
    for _, load in summary.per_broker:
        assert (load.replicas_min, load.replicas_max, load.leaders_min, load.leaders_max) == (1, 2, 1, 2)


def test_draw_summary_per_rack_lone_broker_rack_holds_every_partition():
    """Racks a:{0,1}, b:{2,3}, c:{4}, 10 partitions, RF 3: broker 4 (alone on c) holds all 10, every draw."""
    summary = draw_summary(racked({0: "a", 1: "a", 2: "b", 3: "b", 4: "c"}), 10, 3)
    per_broker = dict(summary.per_broker)
    per_rack = dict(summary.per_rack)
    assert (per_broker[4].replicas_min, per_broker[4].replicas_max) == (10, 10)
    assert {r: (load.replicas_min, load.replicas_max) for r, load in per_rack.items()} == {
        "a": (10, 10), "b": (10, 10), "c": (10, 10),
    }  # fmt: skip
    assert {r: (load.leaders_min, load.leaders_max) for r, load in per_rack.items()} == {
        "a": (4, 4), "b": (4, 4), "c": (2, 2),
    }  # fmt: skip


# ---------------------------------------------------------------------------------------------------
# Properties over every start index and every shift

RACK_LAYOUTS = [
    {0: "a", 1: "b", 2: "c"},
    {0: "a", 1: "a", 2: "b", 3: "b"},
    {0: "a", 1: "a", 2: "b", 3: "b", 4: "c"},
    {0: "a", 1: "a", 2: "a", 3: "b"},
    KAFKA_DOC_RACKS,
    {0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "c"},
]
UNAWARE_LISTS = [(0,), (0, 1), (2, 0, 1), (1, 2, 0, 4, 3), (5, 3, 1, 0, 2, 4), (6, 0, 5, 1, 4, 2, 3)]


def _every_draw(broker_list, max_partitions):
    """Every (rf, partitions, start index, shift, assignment) for partitions 1..max_partitions."""
    n = len(broker_list)
    for rf, partitions in itertools.product(range(1, n + 1), range(1, max_partitions + 1)):
        for start, shift in itertools.product(range(n), range(n)):
            assignment = assign_replicas_to_brokers(
                broker_list, partitions, rf, fixed_start_index=start, replica_shift=shift
            )
            yield rf, partitions, start, shift, assignment


def test_every_draw_puts_each_replica_on_a_distinct_broker():
    """In every draw, rack-unaware or rack-aware, a partition has RF replicas on RF distinct brokers."""
    for broker_list in [brokers(*ids) for ids in UNAWARE_LISTS] + [racked(r) for r in RACK_LAYOUTS]:
        known = {b.id for b in broker_list}
        for rf, partitions, _, _, assignment in _every_draw(broker_list, 2 * len(broker_list) + 1):
            assert sorted(assignment) == list(range(partitions))
            for replicas in assignment.values():
                assert len(replicas) == rf and len(set(replicas)) == rf and set(replicas) <= known


def test_every_rack_aware_draw_spreads_each_partition_over_min_rf_racks():
    """In every rack-aware draw each partition spans min(RF, number of racks) racks."""
    for rack_of in RACK_LAYOUTS:
        n_racks = len(set(rack_of.values()))
        for rf, _, _, _, assignment in _every_draw(racked(rack_of), 2 * len(rack_of) + 1):
            for replicas in assignment.values():
                assert len({rack_of[b] for b in replicas}) == min(rf, n_racks)


def test_every_draw_spreads_leaders_round_robin():
    """In every draw each broker leads floor(P/n) or ceil(P/n) of the P partitions."""
    for broker_list in [brokers(*ids) for ids in UNAWARE_LISTS] + [racked(r) for r in RACK_LAYOUTS]:
        n = len(broker_list)
        for _, partitions, _, _, assignment in _every_draw(broker_list, 2 * n + 1):
            leaders = Counter(replicas[0] for replicas in assignment.values())
            for b in broker_list:
                assert leaders[b.id] in (partitions // n, -(-partitions // n))


def test_every_rack_unaware_draw_balances_replicas():
    """Rack-unaware: over whole rounds (P a multiple of n) every broker holds P·RF/n replicas; otherwise
    the most and least loaded brokers differ by at most RF."""
    for ids in UNAWARE_LISTS:
        n = len(ids)
        for rf, partitions, _, _, assignment in _every_draw(brokers(*ids), 3 * n):
            counts = Counter(b for replicas in assignment.values() for b in replicas)
            load = [counts[b] for b in ids]
            if partitions % n == 0:
                assert load == [partitions * rf // n] * n
            else:
                assert max(load) - min(load) <= rf


def test_every_rack_aware_draw_with_even_racks_and_rf_equal_to_racks_balances_replicas():
    """Rack-aware, equal-size racks, RF = number of racks: over whole rounds every broker holds P·RF/n."""
    for rack_of in [{0: "a", 1: "b", 2: "c"}, {0: "a", 1: "a", 2: "b", 3: "b"}, KAFKA_DOC_RACKS]:
        n, n_racks = len(rack_of), len(set(rack_of.values()))
        for rf, partitions, _, _, assignment in _every_draw(racked(rack_of), 3 * n):
            if rf != n_racks or partitions % n:
                continue
            counts = Counter(b for replicas in assignment.values() for b in replicas)
            assert [counts[b] for b in rack_of] == [partitions * rf // n] * n


def test_rack_unaware_result_depends_on_broker_list_order():
    """The same brokers in another order give another assignment (the seed's [1,2,0,4,3] vs [0..4], p0)."""
    in_order = assign_replicas_to_brokers(FIVE, 10, 3, fixed_start_index=0, replica_shift=3)
    shuffled = assign_replicas_to_brokers(brokers(1, 2, 0, 4, 3), 10, 3, fixed_start_index=0, replica_shift=3)
    assert in_order[0] == (0, 4, 1)  # positions 0, 4, 1 of [0, 1, 2, 3, 4]
    assert shuffled[0] == (1, 3, 2)
    assert in_order != shuffled


def test_every_rack_aware_draw_ignores_broker_list_order():
    """For every draw, a rack-aware assignment is the same whatever the order of the broker list."""
    base = racked(KAFKA_DOC_RACKS)
    orders = [base, base[::-1], base[3:] + base[:3], [base[i] for i in (4, 1, 5, 0, 2, 3)]]
    for rf, partitions in [(1, 7), (2, 6), (3, 13), (4, 5), (6, 6)]:
        for start, shift in itertools.product(range(6), range(6)):
            results = {
                tuple(
                    sorted(
                        assign_replicas_to_brokers(
                            order, partitions, rf, fixed_start_index=start, replica_shift=shift
                        ).items()
                    )
                )
                for order in orders
            }
            assert len(results) == 1


# ---------------------------------------------------------------------------------------------------
# Kafka's argument checks

NO_PARTITIONS = "Number of partitions must be larger than 0."
NO_REPLICAS = "Replication factor must be larger than 0."
ASSIGN_CHECKS = [
    pytest.param(FIVE, 0, 3, InvalidPartitionsException, NO_PARTITIONS, id="0 partitions"),
    pytest.param(FIVE, -2, 3, InvalidPartitionsException, NO_PARTITIONS, id="negative partitions"),
    pytest.param(FIVE, 3, 0, InvalidReplicationFactorException, NO_REPLICAS, id="rf 0"),
    pytest.param(
        FIVE, 3, 6, InvalidReplicationFactorException,
        "Replication factor: 6 larger than available brokers: 5.", id="rf > brokers",
    ),
    pytest.param(
        [], 1, 1, InvalidReplicationFactorException,
        "Replication factor: 1 larger than available brokers: 0.",
        id="no brokers",
    ),
    pytest.param(
        [BrokerMetadata(0, "r1"), BrokerMetadata(1, None)], 2, 1, AdminOperationException,
        "Not all brokers have rack information for replica rack aware assignment.", id="partial racks",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("broker_list", "partitions", "rf", "exception", "message"), ASSIGN_CHECKS)
def test_assign_replicas_to_brokers_argument_checks(broker_list, partitions, rf, exception, message):
    """assignReplicasToBrokers refuses bad arguments with Kafka's exception class and message."""
    with pytest.raises(exception) as info:
        assign_replicas_to_brokers(broker_list, partitions, rf, fixed_start_index=0)
    assert str(info.value) == message
    assert isinstance(info.value, KafkaAdminError)


def test_partition_count_is_checked_before_replication_factor():
    """Kafka checks the partition count first: 0 partitions and RF 0 report InvalidPartitionsException."""
    with pytest.raises(InvalidPartitionsException):
        assign_replicas_to_brokers(FIVE, 0, 0)


def test_exceptions_name_their_kafka_classes():
    """Each exception carries the fully qualified name of the Kafka class it stands for."""
    errors = "org.apache.kafka.common.errors"
    assert {cls.__name__: cls.kafka_class for cls in (
        InvalidPartitionsException, InvalidReplicationFactorException, InvalidReplicaAssignmentException,
        BrokerNotAvailableException, AdminOperationException,
    )} == {
        "InvalidPartitionsException": f"{errors}.InvalidPartitionsException",
        "InvalidReplicationFactorException": f"{errors}.InvalidReplicationFactorException",
        "InvalidReplicaAssignmentException": f"{errors}.InvalidReplicaAssignmentException",
        "BrokerNotAvailableException": f"{errors}.BrokerNotAvailableException",
        "AdminOperationException": "kafka.admin.AdminOperationException",
    }  # fmt: skip
    error = InvalidReplicationFactorException("Replication factor must be larger than 0.")
    assert error.describe() == (
        f"{errors}.InvalidReplicationFactorException: Replication factor must be larger than 0."
    )


def test_kmc_preconditions_are_value_errors():
    """Duplicate broker ids and a negative replica shift are kmc's preconditions, refused with ValueError."""
    with pytest.raises(ValueError, match="broker 1 appears twice"):
        assign_replicas_to_brokers(brokers(0, 1, 1), 2, 1, fixed_start_index=0)
    with pytest.raises(ValueError, match="replica_shift must be >= 0"):
        assign_replicas_to_brokers(FIVE, 2, 1, fixed_start_index=0, replica_shift=-1)


ADD_PARTITION_CHECKS = [
    pytest.param(
        {1: (1, 2)}, 3, None, AdminOperationException,
        "Unexpected existing replica assignment for topic 'topic', partition id 0 is missing. "
        "Assignment: Map(1 -> List(1, 2))",
        id="partition 0 missing",
    ),
    pytest.param(
        {0: (0, 1), 1: (1, 2)}, 2, None, InvalidPartitionsException,
        "The number of partitions for a topic can only be increased. Topic topic currently has 2 partitions, "
        "2 would not be an increase.",
        id="not an increase",
    ),
    pytest.param(
        {0: (0, 1)}, 2, {1: ()}, InvalidReplicaAssignmentException,
        "Cannot have replication factor of 0 for partition id 1.", id="manual empty",
    ),
    pytest.param(
        {0: (0, 1)}, 2, {1: (3, 3)}, InvalidReplicaAssignmentException,
        "Duplicate brokers not allowed in replica assignment: 3, 3 for partition id 1.",
        id="manual duplicate",
    ),
    pytest.param(
        {0: (0, 1)}, 2, {1: (3, 7)}, BrokerNotAvailableException,
        "Some brokers specified for partition id 1 are not available. Specified brokers: 3, 7, "
        "available brokers: 0, 1, 2, 3, 4.",
        id="manual unknown broker",
    ),
    pytest.param(
        {0: (0, 1)}, 4, {1: (3, 4), 2: (0, 1, 2), 3: (4,)}, InvalidReplicaAssignmentException,
        "Inconsistent replication factor between partitions, partition 0 has 2 while partitions [2, 3] have "
        "replication factors [3, 1], respectively.",
        id="manual rf mismatch",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("existing", "num_partitions", "manual", "exception", "message"), ADD_PARTITION_CHECKS
)
def test_add_partitions_checks(existing, num_partitions, manual, exception, message):
    """addPartitions / createNewPartitionsAssignment refuse bad input with Kafka's exception and message."""
    with pytest.raises(exception) as info:
        add_partitions_assignment(existing, FIVE, num_partitions, manual)
    assert str(info.value) == message


def test_add_partitions_message_names_the_topic():
    """The "can only be increased" message names the topic it was given."""
    with pytest.raises(
        InvalidPartitionsException, match="Topic orders currently has 1 partitions, 1 would not"
    ):
        add_partitions_assignment({0: (0,)}, FIVE, 1, topic="orders")


def test_validate_replica_assignment_accepts_a_valid_assignment():
    """A consecutive, same-RF, duplicate-free assignment on known brokers passes."""
    validate_replica_assignment({0: (0, 1), 1: (1, 2), 2: (2, 0)}, [0, 1, 2])


TOPIC_CREATE_CHECKS = [
    pytest.param(
        {0: (0, 1), 1: (1,)}, InvalidReplicaAssignmentException,
        "All partitions should have the same number of replicas", id="different rf",
    ),
    pytest.param(
        {}, InvalidReplicaAssignmentException, "All partitions should have the same number of replicas",
        id="no partitions",
    ),
    pytest.param(
        {0: (), 1: ()}, InvalidReplicaAssignmentException,
        "Cannot have replication factor of 0 for partition id 0.", id="no replicas",
    ),
    pytest.param(
        {0: (0, 1), 1: (2, 2)}, InvalidReplicaAssignmentException,
        "Duplicate replica assignment found: Map(0 -> List(0, 1), 1 -> List(2, 2))", id="duplicate",
    ),
    pytest.param(
        {0: (0, 1), 2: (1, 2)}, InvalidReplicaAssignmentException,
        "partitions should be a consecutive 0-based integer sequence", id="gap",
    ),
    pytest.param(
        {-3: (0,), 1: (1,), 2: (2,)}, InvalidReplicaAssignmentException,
        "partitions should be a consecutive 0-based integer sequence",
        id="negative id that Kafka's sum lets through",
    ),
    pytest.param(
        {0: (0, 1), 1: (1, 9)}, BrokerNotAvailableException,
        "Some brokers specified for partition id 1 are not available. Specified brokers: 1, 9, "
        "available brokers: 0, 1, 2.",
        id="unknown broker",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("assignment", "exception", "message"), TOPIC_CREATE_CHECKS)
def test_validate_replica_assignment_checks(assignment, exception, message):
    """A bad manual topic assignment is refused with Kafka's exception class and message."""
    with pytest.raises(exception) as info:
        validate_replica_assignment(assignment, [2, 0, 1])
    assert str(info.value) == message
