"""Kafka 3.9's ``PartitionStateMachineTest`` and ``ReplicaStateMachineTest``
(core/src/test/scala/unit/kafka/controller/ at 3.9.0-rc3): the cases added or changed since 2.3.0 that the model can
express, stepped by hand at ``version = "3.9"``. Kafka's tests drive ``ZkPartitionStateMachine`` and
``ZkReplicaStateMachine`` directly against mocks; the model has no state machine apart from the controller, so each
case reaches the same transition through the controller event that makes it in Kafka (a broker failure or startup,
a controlled shutdown, a topic creation, a controller failover), and checks what Kafka's test verifies: the
partition-state znode written (Kafka's ``partitionEpoch`` is the model's ``zk_version``), the LeaderAndIsr requests
and their recipients, and the resulting partition or replica state.

Not expressed, one line each (those marked "harness" changed only in Kafka's test harness since 2.3.0: EasyMock to
Mockito, ``ReplicaAssignment``, ``OfflinePartitionLeaderElectionStrategy(false)``, ``withPartitionEpoch``):
- PartitionStateMachineTest.testInvalidNonexistentPartitionToOnlinePartitionTransition, harness: the model's
  controller never asks for an invalid transition, so no event reaches it.
- testInvalidOfflinePartitionToNewPartitionTransition, harness: as above, no controller event asks for it.
- testNewPartitionToOnlinePartitionTransitionZooKeeperClientExceptionFromCreateStates and
  testOfflinePartitionToOnlinePartitionTransitionZooKeeperClientExceptionFromStateLookup (renamed from ZkUtils...):
  the model's ZooKeeper client never throws ZooKeeperClientException.
- testNewPartitionToOnlinePartitionTransitionErrorCodeFromCreateStates, harness: the model's create of a partition
  znode never answers NODEEXISTS (a topic's znodes are created once, by its creation).
- testOfflinePartitionToOnlinePartitionTransitionErrorCodeFromStateLookup, harness: the model's read of a partition
  znode never answers NONODE while the controller holds the partition.
- testOnlinePartitionToOnlineTransition, harness: the model's preferred elections skip a partition already led by
  its preferred replica (ELECTION_NOT_NEEDED, KafkaController.onReplicaElection 3.9), so no event re-elects it.
- testUpdatingOfflinePartitionsCount, testNoOfflinePartitionsChangeForTopicsBeingDeleted,
  testUpdatingOfflinePartitionsCountDuringTopicDeletion (MockPartitionStateMachine's isLeaderRecoverySupported):
  the offlinePartitionCount metric is not modelled.
- ReplicaStateMachineTest.testNewReplicaToOnlineReplicaTransition, testNewReplicaToOfflineReplicaTransition,
  testOfflineReplicaToReplicaDeletionStartedTransition, testReplicaDeletionSuccessfulToNonexistentReplicaTransition,
  testReplicaDeletionIneligibleToOnlineReplicaTransition, testInvalidReplicaDeletionIneligibleToReplicaDeletion
  SuccessfulTransition, harness: the same transitions as at 2.3, reached in the model only inside reassignment and
  topic deletion, whose own modules (tests/test_reassignment_kip455.py, tests/test_topic_changes.py) check them.
- testOnlineReplicaToOfflineReplicaTransition, harness: its state (the leader's replica goes offline while another
  ISR member is live, leaving no leader) is unreachable through the controller's handlers:
  KafkaController.onReplicasBecomeOffline (3.9) elects the live ISR member before the OfflineReplica transition.
"""

from __future__ import annotations

import pytest
from kafka_steps import R, initial, model_of, partition_state, process, replica_state, settle, take, zk_lai

from model.zk.environment import partition_leader
from model.zk.state.states import PartitionState
from model.zk.state.values import ClusterState, LeaderAndIsr, LeaderRecoveryState, RequestKind

RECOVERED, RECOVERING = LeaderRecoveryState.RECOVERED, LeaderRecoveryState.RECOVERING
P = PartitionState


def scenario(replicas: str, brokers: str = "[0, 1]", kafka: str = "", created: str = "", bounds: str = "") -> str:
    return f"""
[kafka]
version = "3.9"
{kafka}
[cluster]
brokers = {brokers}
[[topics]]
name = "t"
replicas = {replicas}
{created}
[bounds]
{bounds}
"""


def leader_and_isr_to(s: ClusterState, broker: int) -> list[tuple[int, int, tuple[int, ...], int, bool,
                                                                 LeaderRecoveryState]]:
    """(leader, leader epoch, ISR, partition epoch, isNew, leader recovery state) of each LeaderAndIsr for t-0
    waiting in ``broker``'s channel."""
    return [(p.leader, p.leader_epoch, p.isr, p.zk_version, p.is_new, p.leader_recovery_state)
            for r in s.channel(broker) if r.kind is RequestKind.LeaderAndIsr for p in r.leader_states
            if p.partition == ("t", 0)]


@pytest.mark.parametrize(("protocol", "recovery"), [("3.2", RECOVERING), ("3.1", RECOVERED)],
                         ids=["isLeaderRecoverySupported=true", "isLeaderRecoverySupported=false"])
def test_offline_partition_to_unclean_online_partition_transition(protocol: str,
                                                                  recovery: LeaderRecoveryState) -> None:
    """PartitionStateMachineTest.testOfflinePartitionToUncleanOnlinePartitionTransition (3.2.0 - 3.9,
    @ParameterizedTest over isLeaderRecoverySupported, IBP 3.2-IV0 or 3.1-IV0; KIP-704): from leader X, ISR [X],
    replicas [X, Y], live brokers [Y], the unclean offline election elects Y with ISR [Y], RECOVERING with IBP
    3.2 (newRecoveringLeaderAndIsr) and RECOVERED below it (newLeaderAndIsr); the znode's partition epoch goes up
    by one, the LeaderAndIsr goes to Y only, and the partition is OnlinePartition. X is broker 0 and Y broker 1;
    X shrinks the ISR to [X] through AlterPartition first, as the mocked znode says."""
    model = model_of(scenario("[[0, 1]]", kafka=f'inter_broker_protocol_version = "{protocol}"\n'
                                                 "unclean_leader_election_enable = true",
                              bounds="broker_failures = 1\nisr_changes = 1"))
    s = take(model, initial(model), partition_leader.SHRINK, 0, "t", partition=0, replica=1)
    s = settle(model, process(model, s))
    before = zk_lai(s, "t", 0)
    assert before is not None and (before.leader, before.isr) == (0, (0,))
    s = process(model, take(model, s, "BrokerFailure", 0))
    after = LeaderAndIsr(1, before.leader_epoch + 1, (1,), before.zk_version + 1, before.controller_epoch, recovery)
    assert zk_lai(s, "t", 0) == after
    # onBrokerFailure's OfflineReplica transition of X sends Y the same state again in the same batch
    assert set(leader_and_isr_to(s, 1)) == {(1, after.leader_epoch, (1,), after.zk_version, False, recovery)}
    assert leader_and_isr_to(s, 0) == []
    assert partition_state(s, "t", 0) is P.OnlinePartition


def test_offline_partition_to_online_partition_transition() -> None:
    """PartitionStateMachineTest.testOfflinePartitionToOnlinePartitionTransition (3.9, harness changed since 2.3.0):
    from no leader and ISR [b] with b live, the clean offline election elects b: leader epoch and partition epoch
    up by one, the LeaderAndIsr (isNew false) to b, OnlinePartition. b is broker 0, the only replica, which died
    (leaving t-0 leaderless with ISR [0]) and starts again."""
    model = model_of(scenario("[[0]]", brokers="[0]", bounds="broker_failures = 1"))
    s = settle(model, take(model, initial(model), "BrokerFailure", 0))
    offline = zk_lai(s, "t", 0)
    assert offline is not None and (offline.leader, offline.isr) == (-1, (0,))
    assert partition_state(s, "t", 0) is P.OfflinePartition
    s = process(model, take(model, s, "BrokerStartup", 0))
    after = LeaderAndIsr(0, offline.leader_epoch + 1, (0,), offline.zk_version + 1, offline.controller_epoch)
    assert zk_lai(s, "t", 0) == after
    # onBrokerStartup's OfflineReplica -> OnlineReplica transition first sends the leaderless state (below)
    assert leader_and_isr_to(s, 0)[-1] == (0, after.leader_epoch, (0,), after.zk_version, False, RECOVERED)
    assert partition_state(s, "t", 0) is P.OnlinePartition


def test_offline_replica_to_online_replica_transition() -> None:
    """ReplicaStateMachineTest.testOfflineReplicaToOnlineReplicaTransition (3.9, harness changed since 2.3.0): the
    OfflineReplica -> OnlineReplica transition sends the partition's current leadership (partitionLeadershipInfo)
    to the replica's broker in a LeaderAndIsr with isNew false, and the replica is OnlineReplica. The replica is
    broker 0's, restarting after t-0 went leaderless (KafkaController.onBrokerStartup moves the new broker's
    replicas online before triggerOnlinePartitionStateChange elects)."""
    model = model_of(scenario("[[0]]", brokers="[0]", bounds="broker_failures = 1"))
    s = settle(model, take(model, initial(model), "BrokerFailure", 0))
    offline = zk_lai(s, "t", 0)
    assert offline is not None and replica_state(s, "t", 0, 0) is R.OfflineReplica
    s = process(model, take(model, s, "BrokerStartup", 0))
    assert leader_and_isr_to(s, 0)[0] == (-1, offline.leader_epoch, (0,), offline.zk_version, False, RECOVERED)
    assert replica_state(s, "t", 0, 0) is R.OnlineReplica


def test_online_partition_to_online_transition_for_controlled_shutdown() -> None:
    """PartitionStateMachineTest.testOnlinePartitionToOnlineTransitionForControlledShutdown (3.9, harness changed
    since 2.3.0): leader b shutting down, ISR [b, other]; the controlled-shutdown election elects other with ISR
    [other], partition epoch up by one, and the LeaderAndIsr goes to both brokers, the shutting-down one
    included. b is broker 0, other broker 1."""
    model = model_of(scenario("[[0, 1]]", bounds="broker_failures = 0\ncontrolled_shutdowns = 1"))
    s = initial(model)
    before = zk_lai(s, "t", 0)
    assert before is not None and (before.leader, before.isr) == (0, (0, 1))
    s = process(model, take(model, s, "BrokerControlledShutdown", 0))
    after = zk_lai(s, "t", 0)
    assert after is not None
    assert (after.leader, after.leader_epoch, after.isr, after.zk_version) == (
        1, before.leader_epoch + 1, (1,), before.zk_version + 1)
    sent = (1, after.leader_epoch, (1,), after.zk_version, False, RECOVERED)
    assert sent in leader_and_isr_to(s, 0) and sent in leader_and_isr_to(s, 1)
    assert partition_state(s, "t", 0) is P.OnlinePartition


def test_new_partition_to_online_partition_transition() -> None:
    """PartitionStateMachineTest.testNewPartitionToOnlinePartitionTransition (3.9, harness changed since 2.3.0):
    a new partition on the live broker b gets leader b, ISR [b], leader epoch 0, its znode created
    (createTopicPartitionStatesRaw), a LeaderAndIsr with isNew true to b, and OnlinePartition."""
    model = model_of(scenario("[[0]]", brokers="[0]", created='created = "by_admin"', bounds="broker_failures = 0"))
    s = take(model, initial(model), "AdminCreateTopic", topic="t")
    assert zk_lai(s, "t", 0) is None
    s = process(model, s)
    lai = zk_lai(s, "t", 0)
    assert lai is not None and (lai.leader, lai.leader_epoch, lai.isr) == (0, 0, (0,))
    assert leader_and_isr_to(s, 0) == [(0, 0, (0,), lai.zk_version, True, RECOVERED)]
    assert partition_state(s, "t", 0) is P.OnlinePartition


FAILOVER = scenario("[[0, 1]]", bounds="broker_failures = 1\ncontroller_failovers = 1")


def test_startup_online_and_offline_replicas() -> None:
    """ReplicaStateMachineTest.testStartupOnlinePartition, testStartupOfflinePartition and
    testStartupWithReplicaWithoutLeader (3.9, harness changed since 2.3.0): ZkReplicaStateMachine.startup puts the
    replica of a live broker in OnlineReplica and that of a dead broker in OfflineReplica. A new controller starts
    while broker 1 is dead."""
    model = model_of(FAILOVER)
    s = settle(model, take(model, initial(model), "BrokerFailure", 1))
    s = settle(model, take(model, s, "ControllerFailover"))
    assert replica_state(s, "t", 0, 0) is R.OnlineReplica
    assert replica_state(s, "t", 0, 1) is R.OfflineReplica


def test_online_replica_to_online_replica_transition() -> None:
    """ReplicaStateMachineTest.testOnlineReplicaToOnlineReplicaTransition (3.9, harness changed since 2.3.0): the
    OnlineReplica -> OnlineReplica transition sends the partition's current leadership to the replica's broker in
    a LeaderAndIsr with isNew false. ZkReplicaStateMachine.startup makes it for every live replica, after
    initializeReplicaState puts them in OnlineReplica: a new controller starts with both brokers live."""
    model = model_of(FAILOVER)
    s = initial(model)
    lai = zk_lai(s, "t", 0)
    assert lai is not None
    s = process(model, take(model, s, "ControllerFailover"))
    for broker in (0, 1):
        assert (lai.leader, lai.leader_epoch, lai.isr, lai.zk_version, False, RECOVERED) in leader_and_isr_to(s, broker)
        assert replica_state(s, "t", 0, broker) is R.OnlineReplica
