"""The Kafka controller model stepped by hand on small scenarios, asserting on the frozen states.

Each test builds a scenario inline, takes actions by kind (and broker or topic) through the model
contract (``actions`` / ``next_state``) and checks ZooKeeper, the controller's context, the brokers
and the channels against what Kafka's controller code does (shared/spec/kafka-controller-2x.md).
"""

from __future__ import annotations

import attrs
import pytest
from kafka_steps import (
    apply_all,
    initial,
    leader_and_isr_sent,
    model_of,
    partition_state,
    process,
    replica_state,
    settle,
    take,
    with_leadership,
    zk_lai,
)

from explorer.bfs import run_bfs
from explorer.results import Outcome
from kmc.compose import model_for, resolve_scenario
from model.scenario import with_bug
from model.zk.kafka_model import KafkaControllerModel
from model.zk.state.states import PartitionState, ReplicaState
from model.zk.state.step import Step
from model.zk.state.values import (
    NO_LEADER,
    ClusterState,
    ControllerEvent,
    EventKind,
    HostedPartition,
    LeaderAndIsr,
    Request,
    RequestKind,
)

R = ReplicaState
P = PartitionState
BROKER_CHANGE = ControllerEvent(EventKind.BrokerChange)


# ---- the initial state -----------------------------------------------------------------------------

INITIAL = """
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "a"
replicas = [[0, 1], [1, 2], [2, 0]]
[[topics]]
name = "b"
partitions = 2
replication_factor = 3
start_index = 1
[[topics]]
name = "c"
replicas = [[2, 1]]
created = "by_admin"
"""


def test_initial_state_is_a_running_cluster() -> None:
    """Every initial partition is Online, led by its first replica with ISR = assignment at epoch 0, and
    hosted by its replicas (the leader with the ISR and znode version, the followers fetching); nothing is
    queued and the topic created later does not exist yet."""
    model = model_of(INITIAL)
    state = initial(model)
    expected = {t.name: t.replicas for t in model.scenario.topics if t.created_initially}
    assert dict(state.zk.topics) == expected
    assert state.zk.brokers == ((0, 1), (1, 1), (2, 1))
    assert state.zk.delete_topics == ()
    assert state.controller.live_brokers == state.zk.brokers
    assert state.controller.events == ()
    assert state.channels == ()
    partitions = {(t, p): reps for t, parts in expected.items() for p, reps in enumerate(parts)}
    assert dict(state.controller.assignments) == partitions
    for tp, reps in partitions.items():
        lai = LeaderAndIsr(leader=reps[0], leader_epoch=0, isr=reps, zk_version=0, controller_epoch=1)
        assert state.zk.partition_state(tp) == lai
        assert dict(state.controller.leadership)[tp] == lai
        assert partition_state(state, *tp) is P.OnlinePartition
        for b in reps:
            assert replica_state(state, tp[0], tp[1], b) is R.OnlineReplica
    assert len(state.controller.replica_states) == sum(len(r) for r in partitions.values())
    for broker in state.brokers:
        hosted = {tp: HostedPartition(tp, 0, reps[0], isr=reps, zk_version=0, replicas=reps, controller_epoch=1)
                  if broker.id == reps[0] else HostedPartition(tp, 0, reps[0], fetching=True)
                  for tp, reps in partitions.items() if broker.id in reps}
        assert broker.alive and broker.epoch == 1
        assert {h.partition: h for h in broker.partitions} == hosted
        assert set(broker.logs) == set(hosted)


# ---- codec ---------------------------------------------------------------------------------------------

CODEC = """
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "old"
replicas = [[0, 1]]
deleted_by_admin = true
[[topics]]
name = "new"
replicas = [[1, 2]]
created = "by_admin"
[bounds]
broker_failures = 1
stop_replica_errors = 1
"""


def _reachable(model: KafkaControllerModel, limit: int) -> tuple[list[ClusterState], int]:
    """Up to ``limit`` distinct reachable states, breadth first, and how many successors were equal to a
    state already seen (paths that converge)."""
    seen: dict[ClusterState, bytes] = {}
    frontier = list(model.init_states())
    converged = 0
    for s in frontier:
        seen[s] = model.encode(s)
    while frontier and len(seen) < limit:
        next_frontier = []
        for s in frontier:
            for action in model.actions(s):
                child = model.next_state(s, action)
                assert child is not None
                data = model.encode(child)
                if child in seen:
                    converged += 1
                    assert seen[child] == data, "equal states must encode to equal bytes"
                else:
                    seen[child] = data
                    next_frontier.append(child)
        frontier = next_frontier
    return list(seen), converged


def test_codec_round_trips_every_reachable_state() -> None:
    """decode(encode(s)) == s and re-encoding gives the same bytes, for every state reachable in a small scenario."""
    model = model_of(CODEC)
    states, _ = _reachable(model, limit=3000)
    assert len(states) > 500
    for s in states:
        data = model.encode(s)
        back = model.decode(data)
        assert back == s
        assert model.encode(back) == data


def test_codec_is_canonical() -> None:
    """Equal states reached by different paths, or thawed and frozen again, encode to equal bytes."""
    model = model_of(CODEC)
    states, converged = _reachable(model, limit=1000)
    assert converged > 100  # many paths met a state already seen, each checked inside _reachable
    for s in states[:200]:
        again = Step(model.scenario, s).freeze()
        assert again == s
        assert model.encode(again) == model.encode(s)


def test_step_log_is_not_part_of_a_states_identity() -> None:
    """Two states that differ only in the step log are equal and encode equally."""
    model = model_of(CODEC)
    s = take(model, initial(model), "AdminDeleteTopic", topic="old")
    s = process(model, s)
    assert s.log.replica_transitions
    bare = attrs.evolve(s, log=type(s.log)())
    assert bare == s
    assert model.encode(bare) == model.encode(s)


# ---- broker failure --------------------------------------------------------------------------------------

THREE_REPLICAS = """
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "t"
replicas = [[0, 1, 2]]
[kafka]
version = "{version}"
unclean_leader_election_enable = {unclean}
[bounds]
broker_failures = 2
"""


def three_replicas(version: str = "2.3", unclean: bool = False) -> KafkaControllerModel:
    return model_of(THREE_REPLICAS.format(version=version, unclean=str(unclean).lower()))


def test_broker_change_is_queued_once_while_unprocessed() -> None:
    """Two broker failures before the controller runs queue one BrokerChange (ZooKeeper watches are one-shot)."""
    model = three_replicas()
    s = take(model, initial(model), "BrokerFailure", 0)
    assert s.controller.events == (BROKER_CHANGE,)
    s = take(model, s, "BrokerFailure", 1)
    assert s.controller.events == (BROKER_CHANGE,)
    assert s.zk.brokers == ((2, 1),)
    assert s.controller.live_brokers == ((0, 1), (1, 1), (2, 1))  # the controller has not looked yet


def test_leader_failure_elects_first_live_isr_member_in_assignment_order() -> None:
    """With ISR [2, 1, 0] and leader 0 dead, OfflinePartitionLeaderElectionStrategy picks 1 (AR order, not ISR
    order), writes ISR = live ISR in ISR order with epoch + 1, and tells the live replicas."""
    model = three_replicas()
    s = with_leadership(initial(model), "t", 0, LeaderAndIsr(0, 0, (2, 1, 0), 0, 1))
    s = take(model, s, "BrokerFailure", 0)
    s = process(model, s)
    expected = LeaderAndIsr(leader=1, leader_epoch=1, isr=(2, 1), zk_version=1, controller_epoch=1)
    assert zk_lai(s, "t", 0) == expected
    assert dict(s.controller.leadership)[("t", 0)] == expected
    assert s.log.elections == ((("t", 0), 0, 1),)
    assert partition_state(s, "t", 0) is P.OnlinePartition
    assert replica_state(s, "t", 0, 0) is R.OfflineReplica
    assert replica_state(s, "t", 0, 1) is R.OnlineReplica
    assert replica_state(s, "t", 0, 2) is R.OnlineReplica
    assert s.controller.live_brokers == ((1, 1), (2, 1))
    # LeaderAndIsr to the live replicas (the election's, then the OfflineReplica transition's); none to 0.
    assert leader_and_isr_sent(s, 1, "t", 0) == [(1, 1), (1, 1)]
    assert leader_and_isr_sent(s, 2, "t", 0) == [(1, 1), (1, 1)]
    assert s.channel(0) == ()
    assert s.controller.events == ()


def test_follower_failure_shrinks_the_isr_with_one_epoch_bump() -> None:
    """A dead follower is removed from the ISR in one conditional write (epoch + 1, zkVersion + 1), the leader
    stays, and the other assigned replicas get the new LeaderAndIsr."""
    model = three_replicas()
    s = take(model, initial(model), "BrokerFailure", 2)
    s = process(model, s)
    assert zk_lai(s, "t", 0) == LeaderAndIsr(leader=0, leader_epoch=1, isr=(0, 1), zk_version=1, controller_epoch=1)
    assert s.log.elections == ()
    assert replica_state(s, "t", 0, 2) is R.OfflineReplica
    assert leader_and_isr_sent(s, 0, "t", 0) == [(0, 1)]
    assert leader_and_isr_sent(s, 1, "t", 0) == [(0, 1)]
    assert s.channel(2) == ()


def test_every_controller_write_bumps_the_leader_epoch_by_one() -> None:
    """Across a follower failure then a leader failure, each partition-state write raises leaderEpoch and
    zkVersion by exactly one."""
    model = three_replicas()
    s = initial(model)
    epochs = [zk_lai(s, "t", 0)]
    for broker in (2, 0):
        s = process(model, take(model, s, "BrokerFailure", broker))
        epochs.append(zk_lai(s, "t", 0))
    assert [(lai.leader, lai.leader_epoch, lai.zk_version, lai.isr) for lai in epochs if lai] == [
        (0, 0, 0, (0, 1, 2)),
        (0, 1, 1, (0, 1)),
        (1, 2, 2, (1,)),
    ]


def test_dead_brokers_channel_is_dropped() -> None:
    """Requests waiting for a broker that died are dropped when the controller processes its failure."""
    model = three_replicas()
    s = process(model, take(model, initial(model), "BrokerFailure", 2))
    assert s.channel(0)  # the ISR shrink's LeaderAndIsr waits for broker 0
    s = take(model, s, "BrokerFailure", 0)
    assert s.channel(0)  # still there: the controller has not noticed yet
    s = process(model, s)
    assert s.channel(0) == ()
    assert 0 not in dict(s.channels)


# ---- removeReplicasFromIsr and unclean election ------------------------------------------------------

TWO_REPLICAS = """
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "t"
replicas = [[0, 1]]
[kafka]
unclean_leader_election_enable = {unclean}
[bounds]
broker_failures = 2
"""


def two_replicas(unclean: bool = False) -> KafkaControllerModel:
    return model_of(TWO_REPLICAS.format(unclean=str(unclean).lower()))


def test_last_isr_member_is_never_removed() -> None:
    """When the last ISR member b (the leader) dies, the ISR stays [b] and the leader becomes NoLeader (-1)."""
    model = two_replicas()
    s = process(model, take(model, initial(model), "BrokerFailure", 1))
    assert zk_lai(s, "t", 0) == LeaderAndIsr(0, 1, (0,), 1, 1)
    s = process(model, take(model, s, "BrokerFailure", 0))
    assert zk_lai(s, "t", 0) == LeaderAndIsr(leader=NO_LEADER, leader_epoch=2, isr=(0,), zk_version=2,
                                              controller_epoch=1)
    assert partition_state(s, "t", 0) is P.OfflinePartition
    assert replica_state(s, "t", 0, 0) is R.OfflineReplica
    assert s.log.elections == ()


@pytest.mark.parametrize("unclean", [False, True])
def test_unclean_election_when_every_isr_member_is_dead(unclean: bool) -> None:
    """With ISR [1] dead and replica 0 back, only unclean.leader.election.enable elects 0 (ISR [0])."""
    model = two_replicas(unclean)
    s = take(model, initial(model), "BrokerFailure", 0)
    s = process(model, take(model, s, "BrokerFailure", 1))
    assert zk_lai(s, "t", 0) == LeaderAndIsr(NO_LEADER, 2, (1,), 2, 1)
    s = process(model, take(model, s, "BrokerStartup", 0))
    if unclean:
        assert zk_lai(s, "t", 0) == LeaderAndIsr(leader=0, leader_epoch=3, isr=(0,), zk_version=3, controller_epoch=1)
        assert partition_state(s, "t", 0) is P.OnlinePartition
        assert s.log.elections == ((("t", 0), NO_LEADER, 0),)
        assert (0, 3) in leader_and_isr_sent(s, 0, "t", 0)
    else:
        assert zk_lai(s, "t", 0) == LeaderAndIsr(NO_LEADER, 2, (1,), 2, 1)
        assert partition_state(s, "t", 0) is P.OfflinePartition
        assert s.log.elections == ()
    assert replica_state(s, "t", 0, 0) is R.OnlineReplica


# ---- topic deletion ---------------------------------------------------------------------------------------

DELETION = """
[cluster]
brokers = [0, 1]
[[topics]]
name = "t"
replicas = {replicas}
deleted_by_admin = true
[kafka]
version = "{version}"
delete_topic_enable = {enabled}
[bounds]
broker_failures = 1
stop_replica_errors = 1
"""


def deletion(replicas: str = "[[0, 1]]", version: str = "2.3", enabled: bool = True) -> KafkaControllerModel:
    return model_of(DELETION.format(replicas=replicas, version=version, enabled=str(enabled).lower()))


@pytest.mark.parametrize("version", ["2.3", "2.2"])
def test_deletion_happy_path(version: str) -> None:
    """AdminDeleteTopic -> TopicDeletion moves each replica Offline then ReplicaDeletionStarted and queues
    StopReplica(delete=false) then StopReplica(delete=true): one per broker answered by one event in 2.3
    (KAFKA-8294), one per partition in 2.2; the last successful response removes the topic from ZooKeeper, the
    controller and the brokers' disks."""
    model = deletion(replicas="[[0, 1], [1, 0]]", version=version)
    s = take(model, initial(model), "AdminDeleteTopic", topic="t")
    assert s.zk.delete_topics == ("t",)
    assert s.controller.events == (ControllerEvent(EventKind.TopicDeletion),)
    s = process(model, s)
    replicas = [("t", p, b) for p in (0, 1) for b in (0, 1)]
    for r in replicas:
        assert [(src, dst) for x, src, dst in s.log.replica_transitions if x == r] == [
            (R.OnlineReplica, R.OfflineReplica), (R.OfflineReplica, R.ReplicaDeletionStarted)]
        assert replica_state(s, *r) is R.ReplicaDeletionStarted
    assert s.controller.topics_to_be_deleted == ("t",)
    both = (("t", 0), ("t", 1))
    per_response = [both] if version == "2.3" else [(("t", 0),), (("t", 1),)]
    for broker in (0, 1):
        assert [(rq.kind, rq.delete_partitions, rq.partitions) for rq in s.channel(broker)] == [
            (RequestKind.StopReplica, False, both),
            *((RequestKind.StopReplica, True, parts) for parts in per_response),
        ]
    s = apply_all(model, apply_all(model, s, 0), 1)
    assert [b.logs for b in s.brokers] == [(), ()]
    assert s.controller.events == tuple(
        ControllerEvent(EventKind.TopicDeletionStopReplicaResponseReceived, b, parts, False)
        for b in (0, 1) for parts in per_response)
    responses = s.controller.events
    for i, response in enumerate(responses):
        s = process(model, s)
        last = i == len(responses) - 1
        for t, p in response.partitions:
            assert replica_state(s, t, p, response.broker) is (
                R.NonExistentReplica if last else R.ReplicaDeletionSuccessful)
        assert (s.zk.topic_assignment("t") is None) == last
    assert s.log.completed_deletions == ("t",)
    assert s.zk.topics == () and s.zk.partitions == () and s.zk.delete_topics == ()
    c = s.controller
    assert (c.assignments, c.leadership, c.partition_states, c.replica_states) == ((), (), (), ())
    assert (c.topics_to_be_deleted, c.topics_ineligible_for_deletion, c.topics_with_deletion_started) == ((), (), ())
    assert {(x, src, dst) for x, src, dst in s.log.replica_transitions if dst is R.NonExistentReplica} == {
        (r, R.ReplicaDeletionSuccessful, R.NonExistentReplica) for r in replicas}
    s = settle(model, s)  # the TopicChange and TopicDeletion the znode deletions fired change nothing
    assert s.zk.topics == () and s.controller.assignments == ()


@pytest.mark.parametrize("version", ["2.3", "2.2"])
def test_deletion_waits_for_a_dead_broker_and_completes_after_its_restart(version: str) -> None:
    """A dead broker's replica goes ReplicaDeletionIneligible (2.3) or stays OfflineReplica with an illegal
    transition logged (2.2, before KAFKA-8237); the topic is ineligible until the broker restarts, and then
    the deletion is retried and completes."""
    model = deletion(version=version)
    s = process(model, take(model, initial(model), "BrokerFailure", 1))
    assert replica_state(s, "t", 0, 1) is R.OfflineReplica
    s = process(model, take(model, s, "AdminDeleteTopic", topic="t"))
    dead = ("t", 0, 1)
    if version == "2.3":
        assert replica_state(s, *dead) is R.ReplicaDeletionIneligible
        assert s.log.illegal_transitions == ()
    else:
        assert replica_state(s, *dead) is R.OfflineReplica
        assert s.log.illegal_transitions == ((dead, R.OfflineReplica, R.ReplicaDeletionIneligible),)
    assert s.controller.topics_ineligible_for_deletion == ("t",)
    assert replica_state(s, "t", 0, 0) is R.ReplicaDeletionStarted
    s = settle(model, s)
    assert replica_state(s, "t", 0, 0) is R.ReplicaDeletionSuccessful
    assert replica_state(s, *dead) is R.OfflineReplica  # 2.3: retried (Ineligible -> Offline); 2.2: never moved
    assert s.zk.topic_assignment("t") is not None
    assert s.controller.topics_ineligible_for_deletion == ("t",)
    assert s.broker(1).logs == (("t", 0),)
    s = process(model, take(model, s, "BrokerStartup", 1))  # onBrokerStartup -> resumeDeletionForTopics
    assert s.controller.topics_ineligible_for_deletion == ()
    assert replica_state(s, *dead) is R.ReplicaDeletionStarted
    assert [(rq.delete_partitions, rq.partitions) for rq in s.channel(1) if rq.kind is RequestKind.StopReplica] == [
        (False, (("t", 0),)), (True, (("t", 0),))]
    s = settle(model, s)
    assert s.zk.topic_assignment("t") is None
    assert s.controller.replica_states == ()
    assert [b.logs for b in s.brokers] == [(), ()]


def test_storage_error_fails_one_partition_of_a_batched_stop_replica() -> None:
    """ReplicaManager.stopReplicas (2.3) answers per partition: of broker 0's one StopReplica(delete=true) for
    t-0 and t-1 (KAFKA-8294's batch), the deletion of t-1 fails with KAFKA_STORAGE_ERROR and t-0's succeeds;
    the response is a failure event for t-1, then a success event for t-0."""
    model = deletion(replicas="[[0, 1], [1, 0]]")
    s = process(model, take(model, initial(model), "AdminDeleteTopic", topic="t"))
    s = take(model, s, "BrokerApplyRequest", 0)  # StopReplica(delete=false) for t-0 and t-1
    failing = [a for a in model.actions(s) if a.kind == "BrokerFailsStopReplica" and a.broker == 0]
    assert [(a.topic, a.partition) for a in failing] == [("t", 0), ("t", 1)]
    s = take(model, s, "BrokerFailsStopReplica", 0, "t", partition=1)
    assert s.broker(0).logs == (("t", 1),)
    assert s.controller.events[-2:] == (
        ControllerEvent(EventKind.TopicDeletionStopReplicaResponseReceived, 0, (("t", 1),), True),
        ControllerEvent(EventKind.TopicDeletionStopReplicaResponseReceived, 0, (("t", 0),), False))


def test_broker_that_dies_before_answering_stop_replica_is_retried_after_its_restart() -> None:
    """A broker that deletes its log for StopReplica(delete=true) and dies before the response leaves sends the
    controller nothing: onBrokerFailure makes its replica ReplicaDeletionIneligible, and the deletion completes
    after its restart, which the retried StopReplica answers (deleting a deleted log changes nothing)."""
    model = deletion()
    s = process(model, take(model, initial(model), "AdminDeleteTopic", topic="t"))
    s = take(model, s, "BrokerApplyRequest", 0)  # StopReplica(delete=false)
    s = take(model, s, "BrokerAppliesRequestAndDies", 0)
    assert s.broker(0).logs == () and not s.broker(0).alive
    assert s.controller.events == (ControllerEvent(EventKind.BrokerChange),)
    s = process(model, s)
    assert replica_state(s, "t", 0, 0) is R.ReplicaDeletionIneligible
    s = settle(model, process(model, take(model, settle(model, s), "BrokerStartup", 0)))
    assert s.zk.topic_assignment("t") is None
    assert [b.logs for b in s.brokers] == [(), ()]


def test_storage_error_makes_the_topic_wait_for_the_brokers_restart() -> None:
    """A StopReplica(delete) failing with KAFKA_STORAGE_ERROR makes the replica ReplicaDeletionIneligible; the
    retry moves it back to OfflineReplica but the topic stays ineligible (Kafka waits on purpose) until the
    broker restarts, after which the deletion completes."""
    model = deletion()
    s = process(model, take(model, initial(model), "AdminDeleteTopic", topic="t"))
    s = take(model, s, "BrokerApplyRequest", 0)  # StopReplica(delete=false)
    s = take(model, s, "BrokerFailsStopReplica", 0, "t", partition=0)
    assert s.controller.events == (
        ControllerEvent(EventKind.TopicDeletionStopReplicaResponseReceived, 0, (("t", 0),), True),)
    assert s.broker(0).logs == (("t", 0),)
    s = process(model, s)
    assert replica_state(s, "t", 0, 0) is R.ReplicaDeletionIneligible
    assert s.controller.topics_ineligible_for_deletion == ("t",)
    s = settle(model, s)  # broker 1 succeeds
    assert replica_state(s, "t", 0, 1) is R.ReplicaDeletionSuccessful
    assert replica_state(s, "t", 0, 0) is R.OfflineReplica
    assert s.controller.topics_ineligible_for_deletion == ("t",)
    assert s.zk.topic_assignment("t") is not None
    assert s.controller.events == () and s.channels == ()  # quiescent: nothing happens without a new stimulus
    s = settle(model, take(model, s, "BrokerFailure", 0))
    assert s.zk.topic_assignment("t") is not None
    s = settle(model, take(model, s, "BrokerStartup", 0))
    assert s.zk.topic_assignment("t") is None
    assert [b.logs for b in s.brokers] == [(), ()]


def test_delete_topic_disabled_removes_the_request_and_keeps_the_topic() -> None:
    """With delete.topic.enable=false the controller deletes /admin/delete_topics/t and the topic stays online."""
    model = deletion(enabled=False)
    start = initial(model)
    s = process(model, take(model, start, "AdminDeleteTopic", topic="t"))
    assert s.zk.delete_topics == ()
    assert s.zk.topics == start.zk.topics
    assert s.zk.partitions == start.zk.partitions
    assert s.controller.topics_to_be_deleted == ()
    assert s.controller.replica_states == start.controller.replica_states
    assert s.controller.partition_states == start.controller.partition_states
    s = settle(model, s)
    assert s.zk == start.zk
    assert s.controller == start.controller
    assert s.brokers == start.brokers


# ---- KAFKA-7235: bounced brokers and broker epochs -----------------------------------------------------------


def _bounce_with_request_pending(model: KafkaControllerModel) -> ClusterState:
    """Broker 2 dies and is processed (a LeaderAndIsr waits for broker 1); then broker 1 dies and restarts
    before the controller processes the BrokerChange."""
    s = process(model, take(model, initial(model), "BrokerFailure", 2))
    assert leader_and_isr_sent(s, 1, "t", 0) == [(0, 1)]
    s = take(model, s, "BrokerFailure", 1)
    s = take(model, s, "BrokerStartup", 1)
    assert s.controller.events == (BROKER_CHANGE,)
    assert s.zk.brokers == ((0, 1), (1, 2))
    return s


def test_bounced_broker_is_detected_with_broker_epochs() -> None:
    """Kafka 2.3: a broker that restarted before BrokerChange was processed is handled as a failure then a
    startup: its old channel is dropped, its replica goes Offline then Online, and new requests carry epoch 2."""
    model = three_replicas("2.3")
    s = process(model, _bounce_with_request_pending(model))
    assert s.controller.live_brokers == ((0, 1), (1, 2))
    assert [(src, dst) for r, src, dst in s.log.replica_transitions if r == ("t", 0, 1)] == [
        (R.OnlineReplica, R.OfflineReplica), (R.OfflineReplica, R.OnlineReplica)]
    assert s.channel(1)
    assert {rq.broker_epoch for rq in s.channel(1)} == {2}
    assert zk_lai(s, "t", 0).isr == (0,)  # removed from the ISR while handled as failed


def test_bounced_broker_goes_unnoticed_with_kafka_7235() -> None:
    """Kafka 2.1 (KAFKA_7235 on): the controller sees the same broker ids and does nothing, and the new
    incarnation applies the request queued for the old one; its metadata cache is empty (no UpdateMetadata since
    the restart), so makeFollowers finds the leader unavailable and only creates the log (leader epoch -1)."""
    model = three_replicas("2.1")
    assert model.scenario.bug("KAFKA_7235")
    bounced = _bounce_with_request_pending(model)
    s = process(model, bounced)
    assert s.controller == attrs.evolve(bounced.controller, events=())
    assert s.log.replica_transitions == ()
    assert s.channels == bounced.channels
    assert s.broker(1).partitions == ()  # the restarted broker hosts nothing
    assert s.broker(1).metadata_live_brokers == ()
    s = take(model, s, "BrokerApplyRequest", 1)
    assert s.broker(1).partitions == (HostedPartition(("t", 0), -1, NO_LEADER),)  # the old incarnation's request
    assert s.broker(1).logs == (("t", 0),)


def test_request_for_an_earlier_incarnation_is_rejected() -> None:
    """Kafka 2.2+: a request carrying an older broker epoch is rejected (STALE_BROKER_EPOCH) and changes nothing."""
    model = three_replicas("2.3")
    s = _bounce_with_request_pending(model)
    before = s.broker(1)
    s = take(model, s, "BrokerApplyRequest", 1)
    assert s.broker(1) == before
    assert s.broker(1).partitions == ()
    assert s.channel(1) == ()


def test_rejected_stop_replica_delete_produces_no_deletion_event() -> None:
    """Kafka 2.2+: a StopReplica(delete=true) rejected for a stale broker epoch is answered with an empty error
    map, so no TopicDeletionStopReplicaResponseReceived follows (2.3 ControllerChannelManager
    stopReplicaPartitionDeleteResponseCallback), and the log stays."""
    model = deletion()
    s = process(model, take(model, initial(model), "AdminDeleteTopic", topic="t"))
    s = take(model, take(model, s, "BrokerFailure", 1), "BrokerStartup", 1)
    s = apply_all(model, s, 1)
    assert s.broker(1).logs == (("t", 0),)
    assert s.controller.events == (BROKER_CHANGE,)
    assert replica_state(s, "t", 0, 1) is R.ReplicaDeletionStarted


# ---- KAFKA-6650 ------------------------------------------------------------------------------------------------


def test_kafka_6650_hangs_the_deletion_of_a_topic_without_leadership() -> None:
    """With KAFKA_6650 on, the shipped scenario violates queued_deletion_finishes_when_brokers_alive (the switch
    off: tests/test_bug_switches.py)."""
    result = run_bfs(model_for(with_bug(resolve_scenario("kafka-6650"), "KAFKA_6650", on=True)))
    assert result.outcome is Outcome.VIOLATION
    assert [d.property for d in result.violations] == ["queued_deletion_finishes_when_brokers_alive"]


# ---- a topic created while its brokers are down ------------------------------------------------------------------

CREATED_WHILE_DOWN = """
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "t"
replicas = [[0, 1]]
created = "by_admin"
[bounds]
broker_failures = 2
"""


def test_topic_created_while_its_brokers_are_down_waits_for_one_to_return() -> None:
    """A topic created while every replica's broker is dead stays NewPartition with no znode; onBrokerStartup's
    triggerOnlinePartitionStateChange initialises it with the returning broker as leader and sole ISR member."""
    model = model_of(CREATED_WHILE_DOWN)
    s = take(model, take(model, initial(model), "BrokerFailure", 0), "BrokerFailure", 1)
    s = process(model, s)
    s = process(model, take(model, s, "AdminCreateTopic", topic="t"))
    assert s.zk.topic_assignment("t") == ((0, 1),)
    assert partition_state(s, "t", 0) is P.NewPartition
    assert zk_lai(s, "t", 0) is None
    assert ("t", 0) not in dict(s.controller.leadership)
    assert s.channels == ()
    s = process(model, take(model, s, "BrokerStartup", 1))
    lai = LeaderAndIsr(leader=1, leader_epoch=0, isr=(1,), zk_version=0, controller_epoch=1)
    assert zk_lai(s, "t", 0) == lai
    assert dict(s.controller.leadership)[("t", 0)] == lai
    assert partition_state(s, "t", 0) is P.OnlinePartition
    assert s.log.elections == ((("t", 0), NO_LEADER, 1),)
    [request] = [rq for rq in s.channel(1) if rq.kind is RequestKind.LeaderAndIsr and
                 any(ls.is_new for ls in rq.leader_states)]
    assert isinstance(request, Request)
    s = settle(model, s)
    assert s.broker(1).partitions == (HostedPartition(("t", 0), 0, 1, isr=(1,), zk_version=0, replicas=(0, 1),
                                                      controller_epoch=1),)


# ---- correction 1: completeDeleteTopic keeps topicsIneligibleForDeletion ----------------------------------------


def test_complete_delete_topic_keeps_a_stale_ineligible_mark() -> None:
    """TopicDeletionManager.completeDeleteTopic (2.3) leaves topicsIneligibleForDeletion alone: a broker failure
    after its replica's deletion succeeded marks the topic ineligible (the Successful -> Ineligible transition is
    invalid, the mark is not), and the mark outlives the topic once the other replica succeeds."""
    model = deletion()
    s = process(model, take(model, initial(model), "AdminDeleteTopic", topic="t"))
    s = process(model, apply_all(model, s, 0))
    assert replica_state(s, "t", 0, 0) is R.ReplicaDeletionSuccessful
    s = process(model, take(model, s, "BrokerFailure", 0))
    assert s.log.illegal_transitions == ((("t", 0, 0), R.ReplicaDeletionSuccessful, R.ReplicaDeletionIneligible),)
    assert s.controller.topics_ineligible_for_deletion == ("t",)
    s = process(model, apply_all(model, s, 1))
    assert s.log.completed_deletions == ("t",)
    assert s.zk.topic_assignment("t") is None
    assert s.controller.topics_to_be_deleted == ()
    assert s.controller.topics_ineligible_for_deletion == ("t",)


# ---- correction 4: the broker side of StopReplica(delete=false) and of an unavailable leader ---------------------


def test_stop_replica_without_delete_keeps_the_partition_hosted() -> None:
    """ReplicaManager.stopReplicas (2.3) with deletePartitions=false only stops the fetchers: the partition stays
    in allPartitions with its leader epoch, and its log stays."""
    model = deletion()
    s = process(model, take(model, initial(model), "AdminDeleteTopic", topic="t"))
    assert s.broker(1).partitions == (HostedPartition(("t", 0), 0, 0, fetching=True),)
    s = take(model, s, "BrokerApplyRequest", 1)  # StopReplica(delete=false): the fetcher stops, nothing else
    assert s.broker(1).partitions == (HostedPartition(("t", 0), 0, 0, fetching=False),)
    assert s.broker(1).logs == (("t", 0),)
    s = take(model, s, "BrokerApplyRequest", 1)  # StopReplica(delete=true)
    assert s.broker(1).partitions == () and s.broker(1).logs == ()


def test_follower_keeps_its_epoch_when_the_new_leader_is_unavailable() -> None:
    """ReplicaManager.makeFollowers (2.3): a LeaderAndIsr naming NoLeader (the leader left an ISR it was the last
    member of) does not become-follower; the broker keeps leader epoch and leader, and the later election's
    LeaderAndIsr is applied."""
    model = two_replicas()
    s = settle(model, process(model, take(model, initial(model), "BrokerFailure", 1)))
    assert s.broker(0).hosted(("t", 0)) == HostedPartition(("t", 0), 1, 0, isr=(0,), zk_version=1, replicas=(0, 1),
                                                           controller_epoch=1)
    s = process(model, take(model, s, "BrokerStartup", 1))
    s = settle(model, s)
    s = process(model, take(model, s, "BrokerFailure", 0))  # leader 0, sole ISR member, dies: NoLeader, epoch 2
    assert zk_lai(s, "t", 0) == LeaderAndIsr(NO_LEADER, 2, (0,), 2, 1)
    assert leader_and_isr_sent(s, 1, "t", 0) == [(NO_LEADER, 2)]
    held = s.broker(1).hosted(("t", 0))
    assert held == HostedPartition(("t", 0), 1, 0, fetching=True)
    s = apply_all(model, s, 1)
    assert s.broker(1).hosted(("t", 0)) == held
