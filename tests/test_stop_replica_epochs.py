"""KIP-570 (Kafka 2.6, inter.broker.protocol.version 2.6-IV0): the leader epoch per partition in the StopReplica
requests the controller queues (``ControllerChannelManager.addStopReplicaRequestForBrokers`` /
``sendStopReplicaRequests`` 2.6.0) and the broker's fencing of them (``ReplicaManager.stopReplicas`` 2.6.0, the
equal epoch accepted from 3.5 by KAFKA-13972, the switch ``KAFKA_13972`` before), stepped by hand."""

from __future__ import annotations

import attrs
import pytest
from kafka_steps import initial, model_of, process, replica_state, settle, take

from model.zk.environment import environment
from model.zk.state.states import ReplicaState
from model.zk.state.values import (
    EPOCH_DURING_DELETE,
    NO_EPOCH,
    BrokerState,
    ClusterState,
    ControllerEvent,
    EventKind,
    HostedPartition,
    Request,
    RequestKind,
    StopReplicaPartitionState,
)

DELETION = """
[cluster]
brokers = [0, 1]
[[topics]]
name = "t"
replicas = [[0, 1]]
deleted_by_admin = true
[kafka]
version = "{version}"
inter_broker_protocol_version = "{protocol}"
"""

SHUTDOWN = """
[cluster]
brokers = [0, 1]
[[topics]]
name = "t"
replicas = [[0, 1]]
[kafka]
version = "{version}"
[bounds]
controlled_shutdowns = 1
"""


def _stop_replicas(state: ClusterState, broker: int) -> list[Request]:
    return [r for r in state.channel(broker) if r.kind is RequestKind.StopReplica]


def test_deletion_sends_epoch_during_delete_with_v3() -> None:
    """At protocol 2.6 every StopReplica of a topic queued for deletion carries EpochDuringDelete (-2) per
    partition, with the delete flag of the transition that queued it (OfflineReplica: false,
    ReplicaDeletionStarted: true), and the deletion completes."""
    model = model_of(DELETION.format(version="2.6", protocol="2.6"))
    s = process(model, take(model, initial(model), "AdminDeleteTopic", topic="t"))
    for broker in (0, 1):
        requests = _stop_replicas(s, broker)
        assert [r.partition_states for r in requests] == [
            (StopReplicaPartitionState(partition=("t", 0), leader_epoch=EPOCH_DURING_DELETE, delete_partition=False),),
            (StopReplicaPartitionState(partition=("t", 0), leader_epoch=EPOCH_DURING_DELETE, delete_partition=True),)]
        assert all(not r.partitions and not r.delete_partitions for r in requests)
    done = settle(model, s)
    assert done.zk.topics == () and not any(b.logs for b in done.brokers)


def test_older_protocol_sends_no_epochs() -> None:
    """Kafka 2.6 with inter.broker.protocol.version 2.5 sends StopReplica v2 (OfflineReplica's, then
    ReplicaDeletionStarted's): no epoch, the request-wide delete flag, and the broker reads NoEpoch for every
    partition (StopReplicaRequest.partitionStates)."""
    model = model_of(DELETION.format(version="2.6", protocol="2.5"))
    s = process(model, take(model, initial(model), "AdminDeleteTopic", topic="t"))
    requests = _stop_replicas(s, 0)
    assert [(r.delete_partitions, r.partitions, r.partition_states) for r in requests] == [
        (False, (("t", 0),), ()), (True, (("t", 0),), ())]
    assert requests[1].stop_replica_states() == (
        StopReplicaPartitionState(partition=("t", 0), leader_epoch=NO_EPOCH, delete_partition=True),)


@pytest.mark.parametrize(("version", "still_fetching"), [("2.3", False), ("2.6", True), ("3.4", True),
                                                         ("3.5", False)])
def test_controlled_shutdown_stop_replica_is_fenced_by_an_equal_epoch(version: str, still_fetching: bool) -> None:
    """doControlledShutdown queues StopReplica(delete=false) for the partitions the broker follows with the
    controller's cached leader epoch, which the follower holds too: 2.6 - 3.4 answer FENCED_LEADER_EPOCH and the
    follower keeps fetching; 3.5 (KAFKA-13972) and the epoch-less requests before 2.6 stop its fetcher."""
    model = model_of(SHUTDOWN.format(version=version))
    s = take(model, initial(model), "BrokerControlledShutdown", 1)
    s = process(model, s)
    assert s.broker(1).hosted(("t", 0)).fetching  # type: ignore[union-attr]
    requests = _stop_replicas(s, 1)
    assert requests
    if version != "2.3":
        assert {ps.leader_epoch for r in requests for ps in r.partition_states} == {0}
    while s.channel(1):
        s = take(model, s, "BrokerApplyRequest", 1)
    assert s.broker(1).hosted(("t", 0)).fetching is still_fetching  # type: ignore[union-attr]


def _broker(epoch: int) -> BrokerState:
    return BrokerState(id=1, alive=True, epoch=1, controller_epoch=1,
                       partitions=(HostedPartition(partition=("t", 0), leader_epoch=epoch, leader=0, fetching=True),),
                       logs=(("t", 0), ("u", 0)))


def _request(*states: StopReplicaPartitionState) -> Request:
    return Request(kind=RequestKind.StopReplica, controller_epoch=1, broker_epoch=1, partition_states=states)


@pytest.mark.parametrize(("request_epoch", "stopped"), [(EPOCH_DURING_DELETE, True), (NO_EPOCH, True), (4, True),
                                                        (3, False), (2, False)])
def test_stop_replicas_fences_epochs_not_newer(request_epoch: int, stopped: bool) -> None:
    """ReplicaManager.stopReplicas (2.6.0) deletes a hosted partition whose request epoch is -2, -1 or newer than
    its own (3) and answers FENCED_LEADER_EPOCH otherwise, the equal epoch included; a partition it does not host
    (u-0, only a log) is deleted whatever its epoch."""
    request = _request(StopReplicaPartitionState(("t", 0), request_epoch, True),
                       StopReplicaPartitionState(("u", 0), 0, True))
    after, not_stopped = environment._stop_replicas(_broker(3), request, None, accept_equal_epoch=False)
    assert not_stopped == (set() if stopped else {("t", 0)})
    assert after.logs == (() if stopped else (("t", 0),))
    assert (after.hosted(("t", 0)) is None) is stopped


def test_equal_epoch_is_stopped_from_kafka_3_5() -> None:
    """KAFKA-13972 (3.5.0): a StopReplica carrying the partition's own leader epoch stops it."""
    request = _request(StopReplicaPartitionState(("t", 0), 3, False))
    after, not_stopped = environment._stop_replicas(_broker(3), request, None, accept_equal_epoch=True)
    assert not not_stopped
    assert after.hosted(("t", 0)) == attrs.evolve(_broker(3).partitions[0], fetching=False)


TWO_TOPICS = """
[cluster]
brokers = [0, 1]
[[topics]]
name = "t"
replicas = [[0, 1]]
[[topics]]
name = "u"
replicas = [[1, 0]]
[kafka]
version = "{version}"
"""


@pytest.mark.parametrize(("version", "requests_per_broker"), [("2.4", 4), ("2.5", 2), ("2.6", 2)])
def test_deletion_of_two_topics_is_batched_from_kafka_2_5(version: str, requests_per_broker: int) -> None:
    """KAFKA-9499 (TopicDeletionManager.resumeDeletions / onPartitionDeletion 2.5.0): two topics queued together
    start their deletion in one OfflineReplica and one ReplicaDeletionStarted state change, so each broker gets
    two StopReplica requests naming both topics' partitions; 2.4 starts each topic on its own (four). Both
    deletions complete either way."""
    model = model_of(TWO_TOPICS.format(version=version))
    s = initial(model)
    # an admin deleted both topics before the controller processed the TopicDeletion their znodes fired
    deletion = ControllerEvent(EventKind.TopicDeletion)
    s = attrs.evolve(s, zk=attrs.evolve(s.zk, delete_topics=("t", "u")),
                     controller=attrs.evolve(s.controller, events=(*s.controller.events, deletion)))
    s = process(model, s)
    for broker in (0, 1):
        requests = _stop_replicas(s, broker)
        assert len(requests) == requests_per_broker
        named = [{ps.partition[0] for ps in r.stop_replica_states()} for r in requests]
        assert all(topics == {"t", "u"} for topics in named) is (requests_per_broker == 2)
    done = settle(model, s)
    assert done.zk.topics == () and not any(b.logs for b in done.brokers)


#: t-0 on [0, 1], moved to [1, 2] through AlterPartitionReassignments and cancelled (KIP-455, 2.4).
CANCELLATION = """
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "t"
replicas = [[0, 1]]
[[reassignments]]
topic = "t"
partitions = {{ 0 = [1, 2] }}
through_api = true
cancelled_through_api = true
[kafka]
version = "{version}"
{bugs}"""


@pytest.mark.parametrize(("version", "kept"), [("2.5", False), ("2.6", True), ("3.4", True), ("3.5", False),
                                               ("3.9", False)])
def test_cancelled_adding_replica_is_kept_at_2_6_to_3_4(version: str, kept: bool) -> None:
    """KAFKA-13972's trigger: A1 bumps t-0's leader epoch to 1 and sends it to the adding replica 2; the
    cancellation's U3 (updateCurrentReassignment, 2.4.0) stops 2 with StopReplica carrying the cached epoch, 1,
    unchanged since. With KIP-570 (2.6, default protocol) broker 2 fences the equal epoch (FENCED_LEADER_EPOCH)
    and keeps the partition and its log until 3.5 (ReplicaManager.stopReplicas >=); before 2.6 the request has no
    epoch and stops it. The controller forgets the replica either way (U3 moves it to NonExistentReplica)."""
    assert _cancelled_adding_replica_kept(version, "") is kept


@pytest.mark.parametrize(("version", "switch", "kept"), [("3.4", False, False), ("3.9", True, True),
                                                         ("2.5", True, False)])
def test_switch_kafka_13972_sets_the_equal_epoch_check(version: str, switch: bool, kept: bool) -> None:
    """`[bugs] KAFKA_13972` decides the equal epoch whatever the version: off at 3.4 the cancelled replica is
    stopped (3.5's >=), on at 3.9 it is kept (2.6 - 3.4's >); at 2.5 the request carries no epoch (KIP-570 is
    2.6's), so the switch changes nothing."""
    assert _cancelled_adding_replica_kept(version, f"[bugs]\nKAFKA_13972 = {str(switch).lower()}\n") is kept


def _cancelled_adding_replica_kept(version: str, bugs: str) -> bool:
    """[0, 1] -> [1, 2] through the API, applied, then cancelled: whether broker 2 keeps t-0 (hosted and its log);
    the controller forgets the replica either way."""
    model = model_of(CANCELLATION.format(version=version, bugs=bugs))
    s = take(model, initial(model), "AdminAlterPartitionReassignments", topic="t", command=0)
    s = settle(model, process(model, s))
    hosted = s.broker(2).hosted(("t", 0))
    assert hosted is not None and hosted.leader_epoch == 1
    s = settle(model, process(model, take(model, s, "AdminCancelPartitionReassignments", topic="t", command=0)))
    assert replica_state(s, "t", 0, 2) is ReplicaState.NonExistentReplica
    kept = s.broker(2).hosted(("t", 0)) is not None
    assert (("t", 0) in s.broker(2).logs) is kept
    return kept
