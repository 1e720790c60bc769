"""Kafka's valid-previous-state tables (model/zk/state/states.py) and the state machines that enforce them.

The tables are checked twice, from two independent sources: against the spec's tables (§a, §b of
shared/spec/kafka-controller-2x.md), written out below as literals, and against the behaviour of
``handle_state_changes`` for every (target, previous) pair, parametrised from the table data.
"""

from __future__ import annotations

import itertools

import pytest

from model.scenario import load_scenario
from model.zk.controller import partition_state_machine, replica_state_machine
from model.zk.kafka_model import initial_state
from model.zk.state.states import (
    PARTITION_TABLE,
    REPLICA_TABLE_2_3,
    REPLICA_TABLE_PRE_2_3,
    PartitionState,
    ReplicaState,
    replica_table,
)
from model.zk.state.step import Step

R = ReplicaState
P = PartitionState

# ---- the spec's tables, copied by hand from §a and §b (names as the spec writes them) ----------

SPEC_REPLICA_BYTES = {
    "NewReplica": 1, "OnlineReplica": 2, "OfflineReplica": 3, "ReplicaDeletionStarted": 4,
    "ReplicaDeletionSuccessful": 5, "ReplicaDeletionIneligible": 6, "NonExistentReplica": 7,
}
SPEC_PARTITION_BYTES = {"NewPartition": 0, "OnlinePartition": 1, "OfflinePartition": 2, "NonExistentPartition": 3}

# §a, column "valid previous states (2.3 – 2.8)", short names expanded.
SPEC_REPLICA_2_3 = {
    "NewReplica": {"NonExistentReplica"},
    "OnlineReplica": {"NewReplica", "OnlineReplica", "OfflineReplica", "ReplicaDeletionIneligible"},
    "OfflineReplica": {"NewReplica", "OnlineReplica", "OfflineReplica", "ReplicaDeletionIneligible"},
    "ReplicaDeletionStarted": {"OfflineReplica"},
    "ReplicaDeletionSuccessful": {"ReplicaDeletionStarted"},
    "ReplicaDeletionIneligible": {"OfflineReplica", "ReplicaDeletionStarted"},
    "NonExistentReplica": {"ReplicaDeletionSuccessful"},
}
# §a, column "valid previous states (1.0 – 2.2)".
SPEC_REPLICA_PRE_2_3 = {
    "NewReplica": {"NonExistentReplica"},
    "OnlineReplica": {"NewReplica", "OnlineReplica", "OfflineReplica", "ReplicaDeletionIneligible"},
    "OfflineReplica": {"NewReplica", "OnlineReplica", "OfflineReplica", "ReplicaDeletionIneligible"},
    "ReplicaDeletionStarted": {"OfflineReplica"},
    "ReplicaDeletionSuccessful": {"ReplicaDeletionStarted"},
    "ReplicaDeletionIneligible": {"ReplicaDeletionStarted"},
    "NonExistentReplica": {"ReplicaDeletionSuccessful"},
}
# §b, "valid previous (unchanged 1.0–2.8)".
SPEC_PARTITION = {
    "NewPartition": {"NonExistentPartition"},
    "OnlinePartition": {"NewPartition", "OnlinePartition", "OfflinePartition"},
    "OfflinePartition": {"NewPartition", "OnlinePartition", "OfflinePartition"},
    "NonExistentPartition": {"OfflinePartition"},
}


def _by_name(table: dict) -> dict[str, set[str]]:
    return {target.name: {s.name for s in previous} for target, previous in table.items()}


def test_state_byte_values_are_kafkas() -> None:
    """Replica and partition states carry the byte values Kafka gives them."""
    assert {s.name: int(s) for s in ReplicaState} == SPEC_REPLICA_BYTES
    assert {s.name: int(s) for s in PartitionState} == SPEC_PARTITION_BYTES


def test_replica_table_2_3_matches_the_spec() -> None:
    """REPLICA_TABLE_2_3 is the spec's 2.3 – 2.8 column."""
    assert _by_name(dict(REPLICA_TABLE_2_3)) == SPEC_REPLICA_2_3


def test_replica_table_pre_2_3_matches_the_spec() -> None:
    """REPLICA_TABLE_PRE_2_3 is the spec's 1.0 – 2.2 column."""
    assert _by_name(dict(REPLICA_TABLE_PRE_2_3)) == SPEC_REPLICA_PRE_2_3


def test_partition_table_matches_the_spec() -> None:
    """PARTITION_TABLE is the spec's partition table."""
    assert _by_name(dict(PARTITION_TABLE)) == SPEC_PARTITION


def test_the_two_replica_tables_differ_only_by_kafka_8237() -> None:
    """The only pair valid in 2.3 but not before is OfflineReplica -> ReplicaDeletionIneligible."""
    pairs_2_3 = {(t, p) for t, ps in REPLICA_TABLE_2_3.items() for p in ps}
    pairs_pre = {(t, p) for t, ps in REPLICA_TABLE_PRE_2_3.items() for p in ps}
    assert pairs_pre < pairs_2_3
    assert pairs_2_3 - pairs_pre == {(R.ReplicaDeletionIneligible, R.OfflineReplica)}


@pytest.mark.parametrize(
    ("version", "expected"),
    [("1.1", "pre"), ("2.0", "pre"), ("2.2", "pre"), ("2.3", "2.3"), ("3.9", "2.3")],
)
def test_replica_table_is_chosen_by_version(version: str, expected: str) -> None:
    """Kafka 2.3 and later enforce the KAFKA-8237 table, earlier versions the old one."""
    scenario = load_scenario(f'[cluster]\nbrokers = [0]\n[[topics]]\nname = "t"\nreplicas = [[0]]\n'
                             f'[kafka]\nversion = "{version}"\n')
    table = replica_table(scenario.since("KAFKA_8237"))
    assert table is (REPLICA_TABLE_2_3 if expected == "2.3" else REPLICA_TABLE_PRE_2_3)


# ---- the state machines enforce the tables --------------------------------------------------------

SCENARIO = """
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "t"
replicas = [[0, 1]]
[kafka]
version = "{version}"
"""

VERSIONS = {"2.3": REPLICA_TABLE_2_3, "2.2": REPLICA_TABLE_PRE_2_3}
# The follower replica of t-0: its broker is not the leader, so a valid NewReplica transition is performed.
FOLLOWER = ("t", 0, 1)


def _step(version: str) -> Step:
    scenario = load_scenario(SCENARIO.format(version=version))
    return Step(scenario, initial_state(scenario))


def _replica_pairs(valid: bool) -> list:
    return [
        pytest.param(version, target, previous, id=f"{version}-{previous.name}->{target.name}")
        for version, table in VERSIONS.items()
        for target, previous in itertools.product(ReplicaState, ReplicaState)
        if (previous in table[target]) == valid
    ]


def _put_replica_in(step: Step, previous: ReplicaState) -> None:
    if previous is R.NonExistentReplica:
        step.replica_state.pop(FOLLOWER)
    else:
        step.replica_state[FOLLOWER] = previous


@pytest.mark.parametrize(("version", "target", "previous"), _replica_pairs(valid=False))
def test_invalid_replica_transition_is_recorded_and_leaves_the_state(
    version: str, target: ReplicaState, previous: ReplicaState
) -> None:
    """An invalid replica transition is logged in illegal_transitions, not raised, and changes nothing."""
    step = _step(version)
    _put_replica_in(step, previous)
    assignment_before = dict(step.assignment)
    zk_before = dict(step.zk_partitions)
    replica_state_machine.handle_state_changes(step, [FOLLOWER], target)
    assert step.replica_state.get(FOLLOWER, R.NonExistentReplica) is previous
    assert step.illegal_transitions == [(FOLLOWER, previous, target)]
    assert step.replica_transitions == []
    assert step.channels == {}  # no request is sent for an invalid transition
    assert step.assignment == assignment_before
    assert step.zk_partitions == zk_before


@pytest.mark.parametrize(("version", "target", "previous"), _replica_pairs(valid=True))
def test_valid_replica_transition_is_performed(version: str, target: ReplicaState, previous: ReplicaState) -> None:
    """A valid replica transition of a follower is performed and recorded in replica_transitions."""
    step = _step(version)
    _put_replica_in(step, previous)
    replica_state_machine.handle_state_changes(step, [FOLLOWER], target)
    assert step.illegal_transitions == []
    assert step.replica_transitions == [(FOLLOWER, previous, target)]
    assert step.replica_state.get(FOLLOWER, R.NonExistentReplica) is target


def _partition_pairs(valid: bool) -> list:
    return [
        pytest.param(target, previous, id=f"{previous.name}->{target.name}")
        for target, previous in itertools.product(PartitionState, PartitionState)
        if (previous in PARTITION_TABLE[target]) == valid
    ]


@pytest.mark.parametrize(("target", "previous"), _partition_pairs(valid=False))
def test_invalid_partition_transition_leaves_the_state(target: PartitionState, previous: PartitionState) -> None:
    """An invalid partition transition is not raised and changes neither the state, ZooKeeper nor the channels."""
    step = _step("2.3")
    tp = ("t", 0)
    step.partition_state[tp] = previous
    zk_before = dict(step.zk_partitions)
    leadership_before = dict(step.leadership)
    partition_state_machine.handle_state_changes(step, [tp], target)
    assert step.partition_state[tp] is previous
    assert step.zk_partitions == zk_before
    assert step.leadership == leadership_before
    assert step.channels == {}
    assert step.elections == []


@pytest.mark.parametrize(("target", "previous"), _partition_pairs(valid=True))
def test_valid_partition_transition_is_performed(target: PartitionState, previous: PartitionState) -> None:
    """A valid partition transition ends in the target state (t-0 has live replicas and a znode)."""
    step = _step("2.3")
    tp = ("t", 0)
    step.partition_state[tp] = previous
    if previous is P.NewPartition:
        # A New partition has no partition-state znode yet (initializeLeaderAndIsrForPartitions creates it).
        del step.zk_partitions[tp]
        del step.leadership[tp]
    partition_state_machine.handle_state_changes(step, [tp], target)
    assert step.partition_state[tp] is target
