"""Leader-driven ISR changes (Kafka 2.x, before AlterIsr), stepped by hand: the leader's conditional write of
the partition-state znode, the IsrChangeNotification that refreshes the controller, and the controller's own
conditional writes meeting BADVERSION and retrying (with the 1.1 - 2.3 election retry bug). Kafka's own tests
are named in the docstrings."""

from __future__ import annotations

import attrs
from kafka_steps import apply_all, initial, model_of, process, settle, take, zk_lai

from model.zk.controller import partition_state_machine
from model.zk.environment import partition_leader
from model.zk.kafka_model import KafkaControllerModel
from model.zk.state.states import PartitionState
from model.zk.state.step import Step
from model.zk.state.values import ClusterState, ControllerEvent, EventKind, HostedPartition, LeaderAndIsr, RequestKind

SHRINK, EXPAND = partition_leader.SHRINK, partition_leader.EXPAND

ONE = """
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "t"
replicas = [[0, 1, 2]]
[bounds]
broker_failures = 1
isr_changes = 4
"""

TWO = """
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "t"
replicas = [[0, 1, 2], [1, 0, 2]]
[bounds]
broker_failures = 1
isr_changes = 4
"""


def isr_change(model: KafkaControllerModel, s: ClusterState, kind: str, leader: int, follower: int,
               partition: int = 0) -> ClusterState:
    return take(model, s, kind, leader, "t", partition=partition, replica=follower)


def candidates(s: ClusterState) -> list[partition_leader.IsrChange]:
    return partition_leader.candidates_of(s)


def test_leader_shrink_is_a_conditional_write_of_the_znode() -> None:
    """ISRExpirationTest.testIsrExpirationForStuckFollowers / Partition.updateIsr (2.3): the leader writes
    leader, leader epoch and controller epoch unchanged with the new ISR and zkVersion + 1 (ReplicationUtils
    .updateLeaderAndIsr), keeps the new ISR and version, and records the change (ReplicaManager.recordIsrChange:
    isrChangeSet) for a later /isr_change_notification; the controller's cache is unchanged meanwhile."""
    model = model_of(ONE)
    start = initial(model)
    assert [c for c in candidates(start) if c[3] == SHRINK] == [(0, ("t", 0), 1, SHRINK), (0, ("t", 0), 2, SHRINK)]
    s = isr_change(model, start, SHRINK, 0, 1)
    assert zk_lai(s, "t", 0) == LeaderAndIsr(0, 0, (0, 2), 1, 1)
    assert s.broker(0).hosted(("t", 0)) == HostedPartition(("t", 0), 0, 0, isr=(0, 2), zk_version=1,
                                                           replicas=(0, 1, 2), controller_epoch=1)
    assert s.zk.isr_change_notifications == () and s.broker(0).pending_isr_changes == (("t", 0),)
    assert s.controller.events == ()
    assert dict(s.controller.leadership)[("t", 0)] == LeaderAndIsr(0, 0, (0, 1, 2), 0, 1)
    assert s.budget.isr_changes == 1
    assert s.log.isr_updates == ((("t", 0), 0, (0, 1, 2), (0, 2)),)


def test_isr_change_notification_refreshes_the_cache_and_sends_update_metadata() -> None:
    """KafkaController.processIsrChangeNotification (2.3): the controller reads the notified partitions'
    znodes into its cache (updateLeaderAndIsrCache), sends UpdateMetadata for them to every live broker and
    deletes the notifications."""
    model = model_of(ONE)
    s = isr_change(model, initial(model), SHRINK, 0, 1)
    s = take(model, s, "BrokerPropagatesIsrChanges", 0)
    assert s.zk.isr_change_notifications == (("t", 0),) and s.broker(0).pending_isr_changes == ()
    assert s.controller.events == (ControllerEvent(EventKind.IsrChangeNotification),)
    s = process(model, s)
    assert dict(s.controller.leadership)[("t", 0)] == zk_lai(s, "t", 0)
    assert s.zk.isr_change_notifications == ()
    assert s.channels == ()  # the UpdateMetadata went straight into the caches (head of each channel)
    assert s.controller.events == ()


def test_follower_joins_the_isr_only_when_it_follows_the_current_leader_epoch() -> None:
    """PartitionTest.testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch (2.3): a restarted
    follower can be added to the ISR only once it applied the LeaderAndIsr of the current leader epoch and
    fetches from that leader."""
    model = model_of(ONE)
    s = settle(model, process(model, take(model, initial(model), "BrokerFailure", 2)))
    assert zk_lai(s, "t", 0) == LeaderAndIsr(0, 1, (0, 1), 1, 1)
    s = process(model, take(model, s, "BrokerStartup", 2))
    assert not [c for c in candidates(s) if c[3] == EXPAND]  # broker 2 has not applied its LeaderAndIsr yet
    s = apply_all(model, s, 2)
    assert s.broker(2).hosted(("t", 0)) == HostedPartition(("t", 0), 1, 0, fetching=True)
    assert (0, ("t", 0), 2, EXPAND) in candidates(s)
    s = isr_change(model, s, EXPAND, 0, 2)
    assert zk_lai(s, "t", 0) == LeaderAndIsr(0, 1, (0, 1, 2), 2, 1)


def test_leader_with_a_stale_zk_version_cannot_write() -> None:
    """ReplicationUtilsTest.testUpdateLeaderAndIsr (2.3): a write conditional on a zkVersion the znode no longer
    has fails (and the leader keeps its ISR); once the leader applies the LeaderAndIsr carrying the controller's
    write, its writes succeed again."""
    model = model_of(ONE)
    s = process(model, take(model, initial(model), "BrokerFailure", 2))  # the controller shrinks the ISR
    assert zk_lai(s, "t", 0) == LeaderAndIsr(0, 1, (0, 1), 1, 1)
    leader_view = s.broker(0).hosted(("t", 0))
    assert leader_view is not None and leader_view.zk_version == 0
    assert candidates(s) == []
    s = apply_all(model, s, 0)
    assert candidates(s) == [(0, ("t", 0), 1, SHRINK)]


def test_follower_stopped_by_stop_replica_cannot_rejoin() -> None:
    """ReplicaManager.stopReplicas without delete removes the follower's fetcher: it stays hosted but can no
    longer catch up, so no expansion is offered for it."""
    model = model_of(ONE)
    s = isr_change(model, initial(model), SHRINK, 0, 2)
    b2 = s.broker(2)
    stopped = attrs.evolve(b2, partitions=tuple(attrs.evolve(h, fetching=False) for h in b2.partitions))
    s = attrs.evolve(s, brokers=tuple(stopped if b.id == 2 else b for b in s.brokers))
    assert (0, ("t", 0), 2, EXPAND) not in candidates(s)


def test_controller_write_meets_badversion_and_retries() -> None:
    """ReplicaStateMachine.removeReplicasFromIsr (2.3): the leader's ISR write landing between the controller's
    read and its conditional write makes the write fail with BADVERSION; the controller reads again and
    removes the dead replica from the ISR the leader wrote."""
    model = model_of(ONE)
    s = take(model, initial(model), "BrokerFailure", 2)
    s = take(model, s, "ControllerProcessEvent", 0, "t", partition=0, replica=1, isr_race=SHRINK)
    assert s.log.zk_conflicts == (("t", 0),)
    assert s.log.isr_updates == ((("t", 0), 0, (0, 1, 2), (0, 2)),)
    assert zk_lai(s, "t", 0) == LeaderAndIsr(0, 1, (0,), 2, 1)
    assert dict(s.controller.leadership)[("t", 0)] == zk_lai(s, "t", 0)
    assert s.broker(0).pending_isr_changes == (("t", 0),)


def test_raced_step_without_a_write_of_that_partition_has_no_successor() -> None:
    """A controller step offered with a leader's write inside it is no transition when the controller does not
    write that znode during the step (the plain step covers that interleaving)."""
    model = model_of(ONE)
    s = take(model, isr_change(model, initial(model), SHRINK, 0, 1), "BrokerPropagatesIsrChanges", 0)
    # IsrChangeNotification, queued, writes no partition state
    raced = [a for a in model.actions(s) if a.isr_race]
    assert raced
    assert all(model.next_state(s, a) is None for a in raced)


def test_leader_that_dies_before_propagating_leaves_the_cache_stale() -> None:
    """ReplicaManager.isrChangeSet is in memory: a leader that dies between its ISR write and
    maybePropagateIsrChanges never names the partition under /isr_change_notification; the controller's cached
    ISR stays the older one until the election its death causes reads the znode."""
    model = model_of(ONE)
    s = isr_change(model, initial(model), SHRINK, 0, 1)
    s = take(model, s, "BrokerFailure", 0)
    assert s.broker(0).pending_isr_changes == () and s.zk.isr_change_notifications == ()
    assert dict(s.controller.leadership)[("t", 0)].isr == (0, 1, 2)
    s = process(model, s)  # BrokerChange: the OfflinePartition election reads ISR [0, 2] and elects 2
    assert zk_lai(s, "t", 0) == LeaderAndIsr(2, 1, (2,), 2, 1)
    assert dict(s.controller.leadership)[("t", 0)] == zk_lai(s, "t", 0)


def test_election_retry_reelects_every_partition_of_the_call() -> None:
    """PartitionStateMachine.electLeaderForPartitions (1.1 - 2.3): after one partition's write meets BADVERSION
    the retry re-elects every partition of the call (doElectLeaderForPartitions(partitions), fixed in 2.4 by
    KAFKA-8286), so a partition already elected gets a second leader-epoch bump and a LeaderAndIsr for it."""
    model = model_of(TWO)
    s = initial(model)
    step = Step(model.scenario, s)
    for tp in (("t", 0), ("t", 1)):
        step.partition_state[tp] = PartitionState.OfflinePartition
    step.isr_race = (1, ("t", 1), 0, SHRINK)
    partition_state_machine.handle_state_changes(step, [("t", 0), ("t", 1)], PartitionState.OnlinePartition)
    assert step.isr_race_fired
    assert step.zk_conflicts == [("t", 1)]
    assert step.zk_partitions[("t", 0)].leader_epoch == 2  # elected twice: epoch 0 -> 1 -> 2
    assert step.zk_partitions[("t", 1)].leader_epoch == 1  # conflict first, then one election
    assert [tp for tp, _, _ in step.elections] == [("t", 0), ("t", 0), ("t", 1)]
    sent = [ls for rq in step.channels[0] if rq.kind is RequestKind.LeaderAndIsr for ls in rq.leader_states]
    assert [(ls.partition, ls.leader_epoch) for ls in sent] == [(("t", 0), 2), (("t", 1), 1)]
