"""Replica and partition states and their valid-previous-state tables, as data.

Mirrors ``kafka.controller.ReplicaState`` (``controller/ReplicaStateMachine.scala``) and
``kafka.controller.PartitionState`` (``controller/PartitionStateMachine.scala``). Each target
state carries the set of states it may be entered from; the tables are written once here and used
by the state machines, by the property ``replica_transitions_follow_kafka_table`` and by the tests.

The replica table changed in Kafka 2.3 (KAFKA-8237, commit 17c80166461): OfflineReplica became a
valid previous state of ReplicaDeletionIneligible. Before 2.3, moving an already-offline replica
of a topic being deleted to ReplicaDeletionIneligible was an invalid transition that Kafka only
logged.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping


class ReplicaState(enum.IntEnum):
    """Kafka's replica states, with Kafka's byte values."""

    NewReplica = 1
    OnlineReplica = 2
    OfflineReplica = 3
    ReplicaDeletionStarted = 4
    ReplicaDeletionSuccessful = 5
    ReplicaDeletionIneligible = 6
    NonExistentReplica = 7


class PartitionState(enum.IntEnum):
    """Kafka's partition states, with Kafka's byte values."""

    NewPartition = 0
    OnlinePartition = 1
    OfflinePartition = 2
    NonExistentPartition = 3


R = ReplicaState
P = PartitionState

#: ``ReplicaState.validPreviousStates`` in Kafka 2.3 – 2.8.
REPLICA_TABLE_2_3: Mapping[ReplicaState, frozenset[ReplicaState]] = {
    R.NewReplica: frozenset({R.NonExistentReplica}),
    R.OnlineReplica: frozenset({R.NewReplica, R.OnlineReplica, R.OfflineReplica, R.ReplicaDeletionIneligible}),
    R.OfflineReplica: frozenset({R.NewReplica, R.OnlineReplica, R.OfflineReplica, R.ReplicaDeletionIneligible}),
    R.ReplicaDeletionStarted: frozenset({R.OfflineReplica}),
    R.ReplicaDeletionSuccessful: frozenset({R.ReplicaDeletionStarted}),
    R.ReplicaDeletionIneligible: frozenset({R.OfflineReplica, R.ReplicaDeletionStarted}),
    R.NonExistentReplica: frozenset({R.ReplicaDeletionSuccessful}),
}

#: ``ReplicaState.validPreviousStates`` in Kafka 1.0 – 2.2 (before KAFKA-8237).
REPLICA_TABLE_PRE_2_3: Mapping[ReplicaState, frozenset[ReplicaState]] = {
    **REPLICA_TABLE_2_3,
    R.ReplicaDeletionIneligible: frozenset({R.ReplicaDeletionStarted}),
}

#: ``PartitionState.validPreviousStates``, unchanged from 1.0 to 2.8.
PARTITION_TABLE: Mapping[PartitionState, frozenset[PartitionState]] = {
    P.NewPartition: frozenset({P.NonExistentPartition}),
    P.OnlinePartition: frozenset({P.NewPartition, P.OnlinePartition, P.OfflinePartition}),
    P.OfflinePartition: frozenset({P.NewPartition, P.OnlinePartition, P.OfflinePartition}),
    P.NonExistentPartition: frozenset({P.OfflinePartition}),
}


def replica_table(kafka_8237: bool) -> Mapping[ReplicaState, frozenset[ReplicaState]]:
    """The replica table Kafka enforces: 2.3's (KAFKA-8237, the gate of that name) or the earlier one."""
    return REPLICA_TABLE_2_3 if kafka_8237 else REPLICA_TABLE_PRE_2_3
