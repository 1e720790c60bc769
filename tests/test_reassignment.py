"""Partition reassignment as Kafka 2.3 runs it (before KIP-455), stepped by hand: the two phases of
onPartitionReassignment, the stall while a target broker is down and the resumption on its startup, the
leader-epoch accounting Kafka's own tests assert, and the interplay with topic deletion. Kafka's tests are named
in the docstrings."""

from __future__ import annotations

from kafka_steps import initial, model_of, process, replica_state, settle, take, zk_lai

from explorer.bfs import run_bfs
from invariants.registry import select
from kmc.compose import shipped_scenarios
from model.scenario import load_scenario
from model.zk.environment import partition_leader
from model.zk.kafka_model import KafkaControllerModel
from model.zk.state.states import ReplicaState
from model.zk.state.values import ClusterState, EventKind

R = ReplicaState
EXPAND = partition_leader.EXPAND

MOVE = """
[cluster]
brokers = [0, 1]
[[topics]]
name = "t"
replicas = [[0]]
deleted_by_admin = true
[[reassignments]]
topic = "t"
partitions = {{ 0 = {target} }}
[bounds]
broker_failures = 2
isr_changes = 4
"""


def move(target: str = "[1]") -> KafkaControllerModel:
    return model_of(MOVE.format(target=target))


def reassign(model: KafkaControllerModel, s: ClusterState, command: int = 0) -> ClusterState:
    return take(model, s, "AdminReassignPartitions", topic=model.scenario.reassignments[command].topic,
                command=command)


def catch_up(model: KafkaControllerModel, s: ClusterState) -> ClusterState:
    """Settle, letting every leader add every caught-up follower to its ISR."""
    s = settle(model, s)
    while True:
        expansions = [c for c in partition_leader.candidates_of(s) if c[3] == EXPAND]
        if not expansions:
            return s
        leader, (topic, p), follower, _ = expansions[0]
        s = settle(model, take(model, s, EXPAND, leader, topic, partition=p, replica=follower))


def test_partition_reassignment() -> None:
    """ControllerIntegrationTest.testPartitionReassignment (2.3): [0] -> [1] ends with leader 1 at leader epoch
    initial + 3 (step 2, the reassign election, the old replica's removal from the ISR), the assignment [1] in
    ZooKeeper, and /admin/reassign_partitions removed."""
    model = move()
    s = catch_up(model, reassign(model, initial(model)))
    lai = zk_lai(s, "t", 0)
    assert lai is not None and (lai.leader, lai.leader_epoch, lai.isr) == (1, 3, (1,))
    assert s.zk.topic_assignment("t") == ((1,),)
    assert s.zk.reassign_partitions == () and s.controller.partitions_being_reassigned == ()
    assert replica_state(s, "t", 0, 0) is R.NonExistentReplica
    assert s.broker(0).logs == () and s.broker(1).logs == (("t", 0),)


def test_reassignment_steps_follow_kafkas_example() -> None:
    """KafkaController.onPartitionReassignment's worked example (OAR {1,2,3} -> RAR {4,5,6}, scaled to
    [0, 1] -> [2, 3]): AR becomes OAR + RAR with the ISR unchanged, then the ISR grows to all of them, the leader
    moves into RAR, the ISR shrinks to RAR and last AR becomes RAR."""
    model = model_of("""
[cluster]
brokers = [0, 1, 2, 3]
[[topics]]
name = "t"
replicas = [[0, 1]]
[[reassignments]]
topic = "t"
partitions = { 0 = [2, 3] }
[bounds]
isr_changes = 2
""")
    s = process(model, reassign(model, initial(model)))
    lai = zk_lai(s, "t", 0)
    assert s.zk.topic_assignment("t") == ((2, 3, 0, 1),)  # (RAR ++ OAR).toSet
    assert lai is not None and (lai.leader, lai.isr) == (0, (0, 1))
    s = settle(model, s)
    for follower in (2, 3):
        s = take(model, s, EXPAND, 0, "t", partition=0, replica=follower)
    lai = zk_lai(s, "t", 0)
    assert lai is not None and (lai.leader, lai.isr) == (0, (0, 1, 2, 3))
    s = settle(model, s)
    lai = zk_lai(s, "t", 0)
    assert lai is not None and (lai.leader, lai.isr) == (2, (2, 3))
    assert s.zk.topic_assignment("t") == ((2, 3),)
    assert [tp for tp in s.log.reassignments_completed] == [] and s.zk.reassign_partitions == ()


def test_partition_reassignment_with_offline_replica_halting_progress() -> None:
    """ControllerIntegrationTest.testPartitionReassignmentWithOfflineReplicaHaltingProgress (2.3): with the
    target broker down the reassignment does steps 1-3 (leader epoch initial + 1) and waits, the znode stays."""
    model = move()
    s = settle(model, process(model, take(model, initial(model), "BrokerFailure", 1)))
    s = catch_up(model, reassign(model, s))
    lai = zk_lai(s, "t", 0)
    assert lai is not None and (lai.leader, lai.leader_epoch) == (0, 1)
    assert s.zk.reassign_partitions == ((("t", 0), (1,)),)
    assert s.zk.topic_assignment("t") == ((1, 0),)
    assert replica_state(s, "t", 0, 1) is R.NewReplica


def test_partition_reassignment_resumes_after_replica_comes_online() -> None:
    """ControllerIntegrationTest.testPartitionReassignmentResumesAfterReplicaComesOnline (2.3): when the target
    broker starts, onBrokerStartup runs onPartitionReassignment again; the reassignment completes with leader 1
    at leader epoch initial + 4 and the znode removed."""
    model = move()
    s = settle(model, process(model, take(model, initial(model), "BrokerFailure", 1)))
    s = catch_up(model, reassign(model, s))
    s = catch_up(model, process(model, take(model, s, "BrokerStartup", 1)))
    lai = zk_lai(s, "t", 0)
    assert lai is not None and (lai.leader, lai.leader_epoch) == (1, 4)
    assert s.zk.topic_assignment("t") == ((1,),)
    assert s.zk.reassign_partitions == ()


def test_should_expand_cluster() -> None:
    """ReassignPartitionsClusterTest.shouldExpandCluster (2.3): a partition on brokers [0, 1] moved onto [1, 2]
    (a broker that held none of it) ends assigned to [1, 2], hosted there, and gone from broker 0."""
    model = model_of("""
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "t"
replicas = [[0, 1]]
[[reassignments]]
topic = "t"
partitions = { 0 = [1, 2] }
[bounds]
isr_changes = 1
""")
    s = catch_up(model, reassign(model, initial(model)))
    assert s.zk.topic_assignment("t") == ((1, 2),)
    lai = zk_lai(s, "t", 0)
    assert lai is not None and lai.leader == 1 and set(lai.isr) == {1, 2}
    assert [b.id for b in s.brokers if s.broker(b.id).hosted(("t", 0))] == [1, 2]
    assert s.broker(0).logs == ()


def test_reassignment_of_a_topic_being_deleted_is_skipped() -> None:
    """DeleteTopicTest.testPartitionReassignmentDuringDeleteTopic (2.3): a reassignment of a partition whose topic
    is queued for deletion is skipped and removed from /admin/reassign_partitions, the assignment is unchanged,
    and the deletion completes once the down follower restarts."""
    model = model_of("""
[cluster]
brokers = [0, 1, 2, 3]
[[topics]]
name = "t"
replicas = [[0, 1, 2]]
deleted_by_admin = true
[[reassignments]]
topic = "t"
partitions = { 0 = [1, 2, 3] }
[bounds]
broker_failures = 1
""")
    s = settle(model, process(model, take(model, initial(model), "BrokerFailure", 2)))
    s = settle(model, take(model, s, "AdminDeleteTopic", topic="t"))
    assert s.controller.topics_ineligible_for_deletion == ("t",)
    s = process(model, reassign(model, s))
    assert s.zk.reassign_partitions == () and s.controller.partitions_being_reassigned == ()
    assert s.zk.topic_assignment("t") == ((0, 1, 2),)
    assert s.controller.events[-1].kind is EventKind.PartitionReassignment  # re-arms the znode's watch
    s = settle(model, process(model, take(model, s, "BrokerStartup", 2)))
    assert s.zk.topic_assignment("t") is None


def test_deleting_a_topic_with_a_reassignment_in_flight_leaves_the_reassignment_behind() -> None:
    """TopicDeletion.process (2.3) marks a reassigning topic ineligible before queueing it, which does nothing,
    so the deletion runs at once; ControllerContext.removeTopic leaves partitionsBeingReassigned alone, so after
    the deletion /admin/reassign_partitions and the context still hold the partition, for good."""
    model = model_of("""
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "t"
replicas = [[0, 1]]
deleted_by_admin = true
[[reassignments]]
topic = "t"
partitions = { 0 = [1, 2] }
""")
    s = settle(model, process(model, reassign(model, initial(model))))
    assert s.controller.partitions_being_reassigned == ((("t", 0), (1, 2)),)
    s = process(model, take(model, s, "AdminDeleteTopic", topic="t"))
    assert s.controller.topics_ineligible_for_deletion == ()
    assert replica_state(s, "t", 0, 2) is R.ReplicaDeletionStarted
    s = settle(model, s)
    assert s.zk.topic_assignment("t") is None
    assert s.zk.reassign_partitions == ((("t", 0), (1, 2)),)
    assert s.controller.partitions_being_reassigned == ((("t", 0), (1, 2)),)
    assert all(b.logs == () for b in s.brokers)


def test_resumed_reassignment_recreates_the_log_of_a_topic_being_deleted() -> None:
    """The second finding of the reassignment-during-deletion scenario (KafkaController.onBrokerStartup and
    onPartitionReassignment, 2.3): with the zombie reassignment's property left out, the shortest violation is a
    deletion completing while a LeaderAndIsr of the reassignment resumed by broker 1's bounce re-created a log
    the deletion had already deleted."""
    text = shipped_scenarios()["reassignment-during-deletion"].read_text(encoding="utf-8")
    scenario = load_scenario(text)
    model = KafkaControllerModel(scenario, select(scenario, ["deletion_completes_only_when_all_replicas_succeeded"]))
    result = run_bfs(model)
    [violation] = result.violations
    assert violation.trace_length == 19
    [remaining] = violation.evidence["replicas_whose_log_remains"]
    # broker 0 deleted its log (StopReplica(delete=true)) and broker 1 bounced; the LeaderAndIsr of the reassignment
    # broker 1's restart resumed re-created broker 0's log before broker 0's success completed the deletion (BFS's
    # tie-break among the 19-step traces follows the encoding)
    assert remaining == {"replica": "t-0@0", "broker_alive": True,
                         "replica_state_before": "ReplicaDeletionStarted"}
