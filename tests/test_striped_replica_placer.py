"""The KRaft controller's StripedReplicaPlacer (model/admin/striped_replica_placer.py) against Kafka 3.9.0-rc3: its
java.util.Random against values Java 17 printed, Kafka's own StripedReplicaPlacerTest expectations (with a port of
its MockRandom), a placement worked out by hand from StripedReplicaPlacer.java, and `kmc assign --placer striped`."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from explorer.results import Outcome
from kmc.commands.assign import assign
from model.admin.assignment import InvalidReplicationFactorException
from model.admin.striped_replica_placer import JavaRandom, UsableBroker, _hash_map_order, _RackList, striped_place


class MockRandom(JavaRandom):
    """Kafka's ``server-common/src/test/java/org/apache/kafka/server/util/MockRandom.java``: a 64-bit LCG from 17."""

    def __init__(self) -> None:
        self.state = 17

    def next(self, bits: int) -> int:
        self.state = (self.state * 2862933555777941757 + 3037000493) & (2**64 - 1)
        value = (self.state >> (64 - bits)) & 0xFFFFFFFF
        return value - 2**32 if value >= 2**31 else value


def U(broker: int, rack: str | None = None, fenced: bool = False) -> UsableBroker:
    return UsableBroker(broker, rack, fenced)


def test_java_random_draws_what_java_util_random_draws() -> None:
    """nextInt (a power of two and not), Collections.shuffle and a negative seed give what Java 17 printed for
    new Random(42) and new Random(-7)."""
    random = JavaRandom(42)
    assert [random.next_int(10) for _ in range(5)] + [random.next_int(7) for _ in range(5)] == [
        0, 3, 8, 4, 0, 4, 1, 3, 6, 3]
    items = list(range(8))
    random.shuffle(items)
    assert items == [3, 5, 6, 1, 2, 0, 4, 7]
    other = JavaRandom(-7)
    assert (other.next_int(1000000007), other.next_int(3), other.next_int(64)) == (577934662, 0, 43)


def test_racks_are_visited_in_java_hash_map_order() -> None:
    """The order RackList draws offsets and shuffles in is HashMap<Optional<String>, Rack>'s, as Java 17 printed it."""
    assert _hash_map_order(["r1", "r2"]) == ["r2", "r1"]
    assert _hash_map_order(["rack-b", "rack-a", "zone1", "eu-west-1c", "eu-west-1a", "x", None]) == [
        None, "rack-b", "rack-a", "x", "eu-west-1c", "zone1", "eu-west-1a"]


@pytest.mark.parametrize(("brokers", "rf", "expected"), [
    # testAvoidFencedReplicaIfPossibleOnSingleRack
    ([U(3), U(1, fenced=True), U(0), U(4), U(2)], 4,
     [(3, 4, 0, 2), (4, 0, 2, 3), (0, 2, 3, 4), (2, 3, 4, 0), (0, 4, 3, 2)]),
    # testPlacementOnFencedReplicaOnSingleRack
    ([U(3), U(1, fenced=True), U(2)], 3, [(3, 2, 1), (2, 3, 1), (3, 2, 1), (2, 3, 1)]),
    # testRackListWithMultipleRacks
    ([U(11, "1"), U(10, "1"), U(30, "3"), U(31, "3"), U(21, "2"), U(20, "2", True)], 4,
     [(11, 21, 31, 10), (21, 30, 10, 20), (31, 11, 21, 30)]),
    # testRackListWithInvalidRacks
    ([U(11, "1"), U(10, "1"), U(30, "3", True), U(31, "3", True), U(20, "2", True), U(21, "2", True), U(41, "4"),
      U(40, "4", True)], 4, [(41, 11, 21, 30), (10, 20, 31, 41), (41, 21, 30, 11)]),
])
def test_rack_list_places_as_kafkas_tests_expect(brokers: list[UsableBroker], rf: int, expected: list) -> None:
    """RackList.place, call after call, gives StripedReplicaPlacerTest's expected replicas (MockRandom)."""
    rack_list = _RackList(MockRandom(), brokers)
    assert [rack_list.place(rf) for _ in expected] == expected


def test_placer_places_as_kafkas_tests_expect() -> None:
    """testSuccessfulPlacement, testMultiPartitionTopicPlacementOnSingleUnfencedBroker and testEvenDistribution (200
    partitions over four brokers: two new rounds a partition, each shuffling with the MockRandom)."""
    four = [U(0), U(3), U(2), U(1)]
    assert striped_place(four, 5, 3, MockRandom()) == ((2, 3, 0), (3, 0, 1), (0, 1, 2), (1, 2, 3), (1, 0, 2))
    assert striped_place([U(0), U(1, fenced=True)], 3, 1, MockRandom()) == ((0,), (0,), (0,))
    counts = Counter(striped_place([U(0), U(1), U(2), U(3)], 200, 2, MockRandom()))
    assert counts == {(0, 1): 14, (0, 2): 22, (0, 3): 14, (1, 0): 17, (1, 2): 17, (1, 3): 16, (2, 0): 13,
                      (2, 1): 17, (2, 3): 20, (3, 0): 20, (3, 1): 19, (3, 2): 11}


def test_placement_worked_out_by_hand_from_the_java_code() -> None:
    """Brokers 1, 2 on r1, 3 and fenced 4 on r2, RF 3, new Random(42), whose nextInt(1), nextInt(1), nextInt(2),
    nextInt(2), nextInt(2), nextInt(2) are 0, 0, 1, 0, 0, 1 (Java 17). HashMap order is r2, r1: offsets r2 fenced 0,
    r2 unfenced 0, r1 unfenced [1, 2] 1; the rack offset 0 over [r1, r2]. Partition 0: leader r1's (1 + 1) % 2 -> 2,
    then r2's 3, then r1's next, 1. Partition 1 (epoch 1, rack offset 1): r2's epoch moves on, 3; r1's offset
    moves to 0: 1; r2 has no unfenced broker left: fenced 4. Partition 2 (rack offset wraps to 0, epoch 2): r1's
    offset moves to 1: 2, 3, 1. Partition 3: three partitions placed over three unfenced brokers, so a shuffle:
    rack names swap (nextInt(2) = 0) to [r2, r1], r1's [1, 2] stays (nextInt(2) = 1), epoch 0; rack offset 1 is
    r1, whose offset moves to 0: 1, then r2's 3, then r1's 2."""
    brokers = [U(1, "r1"), U(2, "r1"), U(3, "r2"), U(4, "r2", fenced=True)]
    assert striped_place(brokers, 4, 3, JavaRandom(42)) == ((2, 3, 1), (3, 1, 4), (2, 3, 1), (1, 3, 2))


@pytest.mark.parametrize(("brokers", "rf", "message"), [
    ([U(11, "1", True), U(10, "1", True)], 1, "All brokers are currently fenced."),  # testAllBrokersFenced
    ([U(11, "1"), U(10, "1")], 3,
     "The target replication factor of 3 cannot be reached because only 2 broker(s) are registered."),
    ([U(11, "1"), U(10, "1")], 0, "Invalid replication factor 0: the replication factor must be positive."),
    # the fenced check comes first in StripedReplicaPlacer.place (RackList.place has it last)
    ([U(11, "1", True)], 2, "All brokers are currently fenced."),
])
def test_placer_refuses_as_kafka_does(brokers: list[UsableBroker], rf: int, message: str) -> None:
    """testAllBrokersFenced, testNotEnoughBrokers, testNonPositiveReplicationFactor: Kafka's exception and message."""
    with pytest.raises(InvalidReplicationFactorException) as raised:
        striped_place(brokers, 1, rf, MockRandom())
    assert raised.value.message == message


def test_replication_factor_above_the_unfenced_brokers_takes_fenced_ones() -> None:
    """Kafka refuses only a replication factor above the registered brokers: fenced brokers fill the rest, last."""
    placed = striped_place([U(0), U(1, fenced=True), U(2, fenced=True)], 2, 3, JavaRandom(5))
    assert all(replicas[0] == 0 and set(replicas) == {0, 1, 2} for replicas in placed)


def _run(*args: str):
    return CliRunner().invoke(assign, ["--placer", "striped", *args])


def test_kmc_assign_striped_prints_the_placement_as_reassignment_json() -> None:
    """`kmc assign --placer striped --seed 42` prints the hand-worked placement, partitions numbered from 0."""
    result = _run("--seed", "42", "--broker-list", "1,2,3,4", "--racks", "1:r1,2:r1,3:r2,4:r2", "--fenced", "4",
                  "--partitions", "4", "--replication-factor", "3", "--topic", "orders")
    assert result.exit_code == Outcome.OK.exit_code
    doc = json.loads(result.stdout)
    assert [(p["partition"], p["replicas"]) for p in doc["partitions"]] == [
        (0, [2, 3, 1]), (1, [3, 1, 4]), (2, [2, 3, 1]), (3, [1, 3, 2])]


@pytest.mark.parametrize("args", [
    ("--seed", "1", "--broker-list", "0,1", "--partitions", "2", "--replication-factor", "3"),
    ("--seed", "1", "--broker-list", "0,1", "--fenced", "0,1", "--partitions", "2", "--replication-factor", "1"),
    ("--broker-list", "0,1", "--partitions", "2", "--replication-factor", "1"),
    ("--seed", "1", "--broker-list", "0,1", "--fenced", "5", "--partitions", "2", "--replication-factor", "1"),
    ("--seed", "1", "--broker-list", "0,1", "--partitions", "0", "--replication-factor", "1"),
    ("--seed", "1", "--start-index", "0", "--broker-list", "0,1", "--partitions", "2", "--replication-factor", "1"),
])
def test_kmc_assign_striped_refuses_impossible_requests_in_one_line(args: tuple[str, ...]) -> None:
    """Too few brokers, all fenced, no seed, an unknown fenced broker, no partitions, an AdminUtils option: exit 2,
    one line."""
    result = _run(*args)
    assert result.exit_code == Outcome.BAD_INPUT.exit_code
    assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1


def test_seed_and_fenced_belong_to_the_striped_placer() -> None:
    """--seed without --placer striped is refused: AdminUtils' draws are --start-index and --replica-shift."""
    result = CliRunner().invoke(assign, ["--seed", "1", "--broker-list", "0,1", "--partitions", "2",
                                         "--replication-factor", "1"])
    assert result.exit_code == Outcome.BAD_INPUT.exit_code
