"""Partition reassignment as Kafka 2.4 runs it (KIP-455), stepped by hand and checked against Kafka 2.4.0's
``controller/KafkaController.scala`` (``onPartitionReassignment``'s phases U, A and B, ``updateCurrentReassignment``,
``processApiPartitionReassignment``, ``replicasAreValid``, ``maybeBuildReassignment``,
``maybeRemoveFromZkReassignment``, ``initializePartitionReassignments``), ``ControllerContext.scala``
(``ReplicaAssignment.fromOldAndNewReplicas``: RS = (TRS ++ ORS).distinct, AR = RS diff ORS, RR = RS diff TRS) and
``zk/ZkData.scala`` (``TopicZNode.encode``: the topic znode's ``partitions``, ``adding_replicas`` and
``removing_replicas``). Each expected value is the one Kafka's code yields for the step; the comments say which
line yields it."""

from __future__ import annotations

import pytest
from kafka_steps import initial, model_of, process, replica_state, settle, take, zk_lai

from explorer.bfs import run_bfs
from kmc.compose import model_for, resolve_scenario
from model.scenario import with_bug, with_version
from model.zk.environment import partition_leader
from model.zk.kafka_model import KafkaControllerModel
from model.zk.state.states import ReplicaState
from model.zk.state.values import ClusterState, EventKind, RequestKind

R = ReplicaState
EXPAND = partition_leader.EXPAND
T0 = ("t", 0)

#: t-0 on [0, 1], moved to [1, 2] through AlterPartitionReassignments (entry 0, which the admin may cancel), then
#: replaced by [1, 3] (entry 1).
API = """
[kafka]
version = "2.4"
[cluster]
brokers = [0, 1, 2, 3]
[[topics]]
name = "t"
replicas = [[0, 1]]
[[reassignments]]
topic = "t"
partitions = {{ 0 = [1, 2] }}
through_api = {first_api}
cancelled_through_api = {cancel}
[[reassignments]]
topic = "t"
partitions = {{ 0 = [1, 3] }}
through_api = true
[bounds]
isr_changes = 3
broker_failures = 1
controller_failovers = 1
"""


def api_model(*, first_api: bool = True, cancel: bool = True) -> KafkaControllerModel:
    return model_of(API.format(first_api=str(first_api).lower(), cancel=str(cancel).lower()))


def alter(model: KafkaControllerModel, s: ClusterState, command: int) -> ClusterState:
    """The admin's AlterPartitionReassignments for entry ``command``, processed by the controller."""
    s = take(model, s, "AdminAlterPartitionReassignments", topic="t", command=command)
    assert s.controller.events[-1].kind is EventKind.ApiPartitionReassignment
    return process(model, s)


def cancel(model: KafkaControllerModel, s: ClusterState, command: int = 0) -> ClusterState:
    s = take(model, s, "AdminCancelPartitionReassignments", topic="t", command=command)
    return process(model, s)


def expand(model: KafkaControllerModel, s: ClusterState, follower: int, leader: int = 0) -> ClusterState:
    """The leader adds ``follower`` to the ISR; the controller processes what that write fires."""
    return settle(model, take(model, settle(model, s), EXPAND, leader, "t", partition=0, replica=follower))


def zk_reassignment(s: ClusterState) -> tuple[object, ...]:
    """The topic znode's partitions, adding_replicas and removing_replicas for t-0 (TopicZNode.encode)."""
    return s.zk.topic_assignment("t"), dict(s.zk.adding_replicas).get(T0, ()), dict(s.zk.removing_replicas).get(T0, ())


def context_reassignment(s: ClusterState) -> tuple[object, ...]:
    """The controller's ReplicaAssignment for t-0 and whether t-0 is in partitionsBeingReassigned."""
    c = s.controller
    return (dict(c.assignments).get(T0), dict(c.adding_replicas).get(T0, ()), dict(c.removing_replicas).get(T0, ()),
            dict(c.partitions_being_reassigned).get(T0))


def stop_replicas(s: ClusterState, broker: int) -> list[bool]:
    """The delete flag of every StopReplica for t-0 waiting in the broker's channel, in order."""
    return [rq.delete_partitions for rq in s.channel(broker)
            if rq.kind is RequestKind.StopReplica and T0 in rq.partitions]


def leader_and_isr(s: ClusterState, broker: int) -> list[tuple[int, int, tuple[int, ...], tuple[int, ...], bool]]:
    """(leader, leader epoch, ISR, replicas, isNew) of every LeaderAndIsr for t-0 waiting in the broker's channel."""
    return [(st.leader, st.leader_epoch, st.isr, st.replicas, st.is_new) for rq in s.channel(broker)
            if rq.kind is RequestKind.LeaderAndIsr for st in rq.leader_states if st.partition == T0]


def lai_of(s: ClusterState) -> tuple[int, int, tuple[int, ...]]:
    lai = zk_lai(s, "t", 0)
    assert lai is not None
    return lai.leader, lai.leader_epoch, lai.isr


def response(s: ClusterState) -> str:
    [line] = [m for m in s.log.messages if m.startswith("AlterPartitionReassignments response")]
    return line


def phase_a(model: KafkaControllerModel) -> ClusterState:
    """[0, 1] -> [1, 2] through the API, through phase A (waiting for replica 2)."""
    return alter(model, initial(model), 0)


def test_phase_u_and_a_write_the_full_replica_set_and_start_the_adding_replica() -> None:
    """ORS [0, 1], TRS [1, 2]: fromOldAndNewReplicas gives RS [1, 2, 0], AR [2], RR [0]. U1 writes them to the topic
    znode, U2 to the context (nothing to stop: the partition was not being reassigned); the ISR [0, 1] lacks 2, so
    A1 bumps the leader epoch 0 -> 1 and sends LeaderAndIsr with RS to every replica of RS, and A2 moves 2 to
    NewReplica (a LeaderAndIsr with isNew). /admin/reassign_partitions is not involved; the response is NONE."""
    model = api_model()
    s = phase_a(model)
    assert zk_reassignment(s) == (((1, 2, 0),), (2,), (0,))
    assert context_reassignment(s) == ((1, 2, 0), (2,), (0,), (1, 2))
    assert lai_of(s) == (0, 1, (0, 1))
    for b in (0, 1):
        assert leader_and_isr(s, b) == [(0, 1, (0, 1), (1, 2, 0), False)]
    assert leader_and_isr(s, 2) == [(0, 1, (0, 1), (1, 2, 0), False), (0, 1, (0, 1), (1, 2, 0), True)]
    assert leader_and_isr(s, 3) == []
    assert [replica_state(s, "t", 0, b) for b in (0, 1, 2)] == [R.OnlineReplica, R.OnlineReplica, R.NewReplica]
    assert s.zk.reassign_partitions == ()
    assert response(s) == "AlterPartitionReassignments response: t-0: NONE"


def test_phase_b_completes_once_the_target_is_in_the_isr() -> None:
    """Leader 0 takes 2 into the ISR [0, 1, 2]: the partition-state znode's watch fires
    PartitionReassignmentIsrChange, TRS [1, 2] is in the ISR, so phase B: B1 2 -> OnlineReplica, B2 the context's
    RS := [1, 2] with no AR or RR, B3 leader 0 is not in TRS: ReassignPartitionLeaderElectionStrategy elects 1 (the
    first of TRS alive and in the ISR; epoch 2), B4 0 -> OfflineReplica takes it out of the ISR (epoch 3), B5 its
    deletion, B6 the topic znode := [1, 2] without adding_replicas or removing_replicas, B7 the partition leaves
    partitionsBeingReassigned."""
    model = api_model()
    s = expand(model, phase_a(model), 2)
    assert zk_reassignment(s) == (((1, 2),), (), ())
    assert context_reassignment(s) == ((1, 2), (), (), None)
    assert lai_of(s) == (1, 3, (1, 2))
    assert [replica_state(s, "t", 0, b) for b in (0, 1, 2)] == [R.NonExistentReplica, R.OnlineReplica,
                                                               R.OnlineReplica]
    assert s.broker(0).logs == ()


def test_cancellation_reverts_to_the_original_replicas() -> None:
    """A cancellation (target None) of [1, 2, 0] AR [2] RR [0]: maybeBuildReassignment reassigns to originReplicas
    = RS diff AR = [1, 0] (Kafka's comment: the original order [0, 1] cannot be restored); U1 writes RS [1, 0] with
    no AR or RR, U2, U3 stops the unneeded replica [1, 2, 0] diff [1, 0] = [2] (StopReplica delete=false, then
    delete=true); nothing is being reassigned any more, so phase B at once: B3 leader 0 is in [1, 0] and alive,
    so its epoch is bumped (1 -> 2) and LeaderAndIsr with RS [1, 0] goes to 1 and 0; B6 the znode := [1, 0]."""
    model = api_model()
    s = cancel(model, settle(model, phase_a(model)))
    assert zk_reassignment(s) == (((1, 0),), (), ())
    assert context_reassignment(s) == ((1, 0), (), (), None)
    assert stop_replicas(s, 2) == [False, True]
    assert replica_state(s, "t", 0, 2) is R.NonExistentReplica
    assert lai_of(s) == (0, 2, (0, 1))
    # U3's OfflineReplica of 2 (not in the ISR: leadership unchanged, sent to RS without 2), then B3's bump
    assert leader_and_isr(s, 0) == [(0, 1, (0, 1), (1, 0), False), (0, 2, (0, 1), (1, 0), False)]
    assert leader_and_isr(s, 1) == leader_and_isr(s, 0)
    assert response(s) == "AlterPartitionReassignments response: t-0: NONE"


def test_cancellation_of_a_finished_reassignment_is_no_reassignment_in_progress() -> None:
    """maybeBuildReassignment with None for a partition not being reassigned is None: NO_REASSIGNMENT_IN_PROGRESS,
    and nothing is written."""
    model = api_model()
    done = expand(model, phase_a(model), 2)
    s = cancel(model, done)
    assert response(s) == "AlterPartitionReassignments response: t-0: NO_REASSIGNMENT_IN_PROGRESS"
    assert s.zk == done.zk and s.controller.assignments == done.controller.assignments


def test_replacement_stops_only_the_adding_replicas_the_new_target_leaves_out() -> None:
    """[1, 2] replaced by [1, 3] while 2 is still adding: originReplicas [1, 0] reassigned to [1, 3] gives RS
    [1, 3, 0], AR [3], RR [0]; U3 stops [1, 2, 0] diff [1, 3, 0] = [2] (and only 2: 0 stays until phase B); A1
    bumps the epoch (1 -> 2) and sends LeaderAndIsr with RS [1, 3, 0] to 1, 3 and 0, A2 starts 3. Completion
    elects 1 and writes [1, 3]."""
    model = api_model()
    s = alter(model, settle(model, phase_a(model)), 1)
    assert zk_reassignment(s) == (((1, 3, 0),), (3,), (0,))
    assert context_reassignment(s) == ((1, 3, 0), (3,), (0,), (1, 3))
    assert stop_replicas(s, 2) == [False, True] and leader_and_isr(s, 2) == []
    assert [stop_replicas(s, b) for b in (0, 1, 3)] == [[], [], []]
    assert [replica_state(s, "t", 0, b) for b in (0, 1, 2, 3)] == [R.OnlineReplica, R.OnlineReplica,
                                                                  R.NonExistentReplica, R.NewReplica]
    assert lai_of(s) == (0, 2, (0, 1))
    assert leader_and_isr(s, 3)[-2:] == [(0, 2, (0, 1), (1, 3, 0), False), (0, 2, (0, 1), (1, 3, 0), True)]
    s = expand(model, s, 3)
    assert zk_reassignment(s) == (((1, 3),), (), ())
    assert lai_of(s) == (1, 4, (1, 3))
    assert [replica_state(s, "t", 0, b) for b in (0, 2)] == [R.NonExistentReplica, R.NonExistentReplica]


def test_replacement_keeping_every_current_replica_stops_none() -> None:
    """Replacing [1, 2] (RS [1, 2, 0]) by [2, 3]: RS [2, 3, 1, 0], AR [2, 3], RR [1, 0]; every current replica is
    in the new RS, so U3 stops nothing."""
    model = model_of(API.format(first_api="true", cancel="false").replace("0 = [1, 3]", "0 = [2, 3]"))
    s = alter(model, settle(model, phase_a(model)), 1)
    assert zk_reassignment(s) == (((2, 3, 1, 0),), (2, 3), (1, 0))
    assert [stop_replicas(s, b) for b in range(4)] == [[], [], [], []]


def test_api_reassignment_removes_the_partition_from_the_zk_reassignment() -> None:
    """KAFKA-9089's fix (2.4.0): a zk reassignment [1, 2] in flight (/admin/reassign_partitions names t-0), then
    AlterPartitionReassignments [1, 3]: maybeRemoveFromZkReassignment drops t-0 before the trigger; with nothing
    left it deletes the znode and queues ZkPartitionReassignment (the watch). The API target takes over: U3 stops 2.
    On completion B7's maybeRemoveFromZkReassignment finds no znode, and the queued event finds none either."""
    model = api_model(first_api=False, cancel=False)
    s = process(model, take(model, initial(model), "AdminReassignPartitions", topic="t", command=0))
    assert s.zk.reassign_partitions == ((T0, (1, 2)),)
    assert zk_reassignment(s) == (((1, 2, 0),), (2,), (0,))  # the zk path writes the same topic znode
    s = alter(model, settle(model, s), 1)
    assert s.zk.reassign_partitions == ()
    assert s.controller.events[0].kind is EventKind.PartitionReassignment  # queued before the reassignment's watch
    assert zk_reassignment(s) == (((1, 3, 0),), (3,), (0,))
    assert stop_replicas(s, 2) == [False, True]
    s = expand(model, s, 3)
    assert zk_reassignment(s) == (((1, 3),), (), ())
    assert s.zk.reassign_partitions == () and context_reassignment(s) == ((1, 3), (), (), None)


def test_api_reassignment_refuses_a_dead_adding_replica_the_zk_path_does_not() -> None:
    """replicasAreValid: the adding replicas must be live brokers, else INVALID_REPLICA_ASSIGNMENT and nothing is
    written; processZkPartitionReassignment does not call it, so the same target through the znode starts (phase A,
    waiting for the dead replica)."""
    model = api_model(cancel=False)
    down = settle(model, process(model, take(model, initial(model), "BrokerFailure", 2)))
    s = alter(model, down, 0)
    assert response(s) == ("AlterPartitionReassignments response: t-0: INVALID_REPLICA_ASSIGNMENT: Replica assignment "
                           "has brokers that are not alive. Replica list: [2], live broker list: [0, 1, 3]")
    assert s.zk == down.zk and context_reassignment(s) == ((0, 1), (), (), None)
    zk_model = api_model(first_api=False, cancel=False)
    down = settle(zk_model, process(zk_model, take(zk_model, initial(zk_model), "BrokerFailure", 2)))
    s = process(zk_model, take(zk_model, down, "AdminReassignPartitions", topic="t", command=0))
    assert zk_reassignment(s) == (((1, 2, 0),), (2,), (0,))
    assert context_reassignment(s) == ((1, 2, 0), (2,), (0,), (1, 2))


def test_failover_resumes_the_reassignment_from_the_topic_znode() -> None:
    """A new controller in phase A: initializeControllerContext reads RS [1, 2, 0], AR [2], RR [0] from the topic
    znode and puts t-0 in partitionsBeingReassigned; initializePartitionReassignments (no znode) resumes it with
    maybeResumeReassignments: U writes nothing (same assignment), A1 bumps the epoch (1 -> 2) under controller
    epoch 2, A2's NewReplica is an invalid transition for 2, which replicaStateMachine.startup made OnlineReplica.
    Completion then goes as without the failover."""
    model = api_model()
    before = settle(model, phase_a(model))
    s = settle(model, take(model, before, "ControllerFailover"))
    assert zk_reassignment(s) == (((1, 2, 0),), (2,), (0,))
    assert context_reassignment(s) == ((1, 2, 0), (2,), (0,), (1, 2))
    lai = zk_lai(s, "t", 0)
    assert lai is not None and (lai.leader, lai.leader_epoch, lai.isr, lai.controller_epoch) == (0, 2, (0, 1), 2)
    assert replica_state(s, "t", 0, 2) is R.OnlineReplica
    s = expand(model, s, 2)
    assert zk_reassignment(s) == (((1, 2),), (), ())
    assert context_reassignment(s) == ((1, 2), (), (), None)
    assert lai_of(s) == (1, 4, (1, 2))


def test_before_2_4_the_topic_znode_has_no_adding_or_removing_replicas() -> None:
    """Kafka 2.3's onPartitionReassignment writes AR = RAR ++ OAR alone (TopicZNode version 1)."""
    model = model_of(API.format(first_api="false", cancel="false").replace('version = "2.4"', 'version = "2.3"')
                     .replace("through_api = true", ""))
    s = process(model, take(model, initial(model), "AdminReassignPartitions", topic="t", command=0))
    assert zk_reassignment(s) == (((1, 2, 0),), (), ())
    assert context_reassignment(s)[1:] == ((), (), (1, 2))


def test_replacement_racing_the_leaders_expansion_leaves_an_unassigned_replica_in_the_isr() -> None:
    """[0] -> [1] through the API (phase A), 1 fetches; the replacement [2] is processed while leader 0 takes 1 into
    the ISR between a read and a write of the controller: U3's OfflineReplica of 1 reads the ISR [0]
    (doRemoveReplicasFromIsr: 1 not in it, nothing written), the leader's write lands, and A1's updateLeaderEpoch
    meets BADVERSION, re-reads the ISR [0, 1] and writes it back with epoch 2. The topic znode says [2, 0] and the
    ISR [0, 1]: replica 1 is stopped, deleted, unassigned and in the ISR (why reassignment-api leaves out
    isr_subset_of_assignment). Kafka 2.4's code takes the same steps."""
    m = model_of("""
[kafka]
version = "2.4"
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "t"
replicas = [[0]]
[[reassignments]]
topic = "t"
partitions = { 0 = [1] }
through_api = true
[[reassignments]]
topic = "t"
partitions = { 0 = [2] }
through_api = true
[bounds]
isr_changes = 1
broker_failures = 0
controller_failovers = 0
""")
    s = take(m, initial(m), "AdminAlterPartitionReassignments", topic="t", command=0)
    s = take(m, s, "AdminAlterPartitionReassignments", topic="t", command=1)
    s = process(m, s)
    s = take(m, take(m, s, "BrokerApplyRequest", 1), "BrokerApplyRequest", 0)
    s = take(m, s, "ControllerProcessEvent", 0, "t", partition=0, replica=1, isr_race=EXPAND)
    assert zk_reassignment(s) == (((2, 0),), (2,), (0,))
    assert lai_of(s) == (0, 2, (0, 1))
    assert replica_state(s, "t", 0, 1) is R.NonExistentReplica and stop_replicas(s, 1) == [False, True]


#: The reassignment scenarios at Kafka 2.4 (their own files say 2.3): outcome, distinct, generated, depth, queue.
#: reassignment: 2,588 at 2.3; 2.4 fixes KAFKA-9212 (the bumped epoch kept in the cache: fewer stale states) and
#: B3 sends LeaderAndIsr to TRS rather than to OAR + RAR. reassignment-isr-shrink-race (finding 3): the same at 2.4.
PINNED_2_4 = {
    "reassignment": ("OK", 2444, 6454, 23, 0),
    "reassignment-isr-shrink-race": ("VIOLATION", 23, 24, 3, 15),
    "reassignment-during-deletion": ("VIOLATION", 3435, 8036, 18, 34),
}


@pytest.mark.parametrize("name", sorted(PINNED_2_4))
def test_reassignment_scenarios_at_2_4(name: str) -> None:
    result = run_bfs(model_for(with_version(resolve_scenario(name), "2.4")))
    s = result.stats
    assert (result.outcome.name, s.distinct, s.generated, s.depth, s.queue) == PINNED_2_4[name]


@pytest.mark.parametrize("bug_on", [True, False], ids=["KAFKA_14808-on", "KAFKA_14808-off"])
def test_kafka_14808_replacement_stops_the_leading_adding_replica(bug_on: bool) -> None:
    """KAFKA-14808's trigger (kafka-14808): [0] -> [1, 2] through the API (RS [1, 2, 0], AR [1, 2], RR [0]); leader
    0 takes 1 into the ISR, 2 lags; ElectLeaders(PREFERRED) elects 1, the first of RS (epoch 2). The replacement
    [2] leaves 1 out: with the bug (2.4 - 3.9) U3 stops 1, whose OfflineReplica transition takes the leader out of
    the ISR: leader -1 with 0 alive in the ISR [0]. PR #13451's replicasAreValid (switch off) refuses it: 1 is the
    current leader and among the unneeded replicas [1, 2, 0] diff [2, 0]; nothing is written."""
    m = KafkaControllerModel(with_bug(resolve_scenario("kafka-14808"), "KAFKA_14808", on=bug_on))
    s = settle(m, alter(m, initial(m), 0))
    assert zk_reassignment(s) == (((1, 2, 0),), (1, 2), (0,))
    s = expand(m, s, 1)
    s = settle(m, process(m, take(m, s, "AdminElectPreferredLeaders", topic="t")))
    assert lai_of(s) == (1, 2, (0, 1))
    replaced = alter(m, s, 1)
    if bug_on:
        assert response(replaced) == "AlterPartitionReassignments response: t-0: NONE"
        assert zk_reassignment(replaced) == (((2, 0),), (2,), (0,))
        assert lai_of(replaced)[0] == -1 and lai_of(replaced)[2] == (0,)
        assert replica_state(replaced, "t", 0, 1) is R.NonExistentReplica
    else:
        assert response(replaced) == (
            "AlterPartitionReassignments response: t-0: INVALID_REPLICA_ASSIGNMENT: Current leader is inside "
            "unneeded adding replicas. Current leader: 1, unneeded adding replica list: [1]")
        assert replaced.zk == s.zk and lai_of(replaced) == (1, 2, (0, 1))


@pytest.mark.parametrize("bug_on", [True, False], ids=["KAFKA_10314-on", "KAFKA_10314-off"])
def test_kafka_10314_adding_replica_on_a_broker_with_an_offline_log_directory(bug_on: bool) -> None:
    """KAFKA-10314's trigger (kafka-10314, 2.6): broker 1's directory of u-0 fails, then t-0 [0] -> [1]. With the bug
    A1's LeaderAndIsr says isNew=false to the adding replica 1: LogManager.getOrCreateLog refuses to create the log
    (a directory is offline), broker 1 marks t-0 offline and answers KAFKA_STORAGE_ERROR, also to A2's isNew=true
    request, and the controller takes replica 1 offline: the reassignment waits with both brokers alive. 2.7's fix
    (switch off) sends isNew=true to the adding replica: broker 1 creates the log and follows leader 0."""
    m = KafkaControllerModel(with_bug(resolve_scenario("kafka-10314"), "KAFKA_10314", on=bug_on))
    s = take(m, initial(m), "LogDirFailure", 1, "u", partition=0)
    s = settle(m, process(m, take(m, s, "AdminReassignPartitions", topic="t", command=0)))
    assert leader_and_isr(s, 1) == []
    broker_1 = s.broker(1)
    if bug_on:
        assert ("t", 0) in broker_1.offline_logs and ("t", 0) not in broker_1.logs
        assert replica_state(s, "t", 0, 1) is R.OfflineReplica
    else:
        hosted = broker_1.hosted(("t", 0))
        assert hosted is not None and hosted.fetching and ("t", 0) in broker_1.logs
        assert replica_state(s, "t", 0, 1) is R.NewReplica
    assert dict(s.controller.partitions_being_reassigned) == {T0: (1,)}
