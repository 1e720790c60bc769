"""Added partitions (PartitionModifications) and topics re-created under the name of a deleted one, stepped
by hand. Kafka's own tests are named in the docstrings."""

from __future__ import annotations

from kafka_steps import apply_all, initial, model_of, process, replica_state, settle, take, zk_lai

from model.admin import assignment as kafka_assignment
from model.zk.kafka_model import KafkaControllerModel
from model.zk.state.states import ReplicaState
from model.zk.state.step import Step
from model.zk.state.values import EventKind, LeaderAndIsr

R = ReplicaState

GROW = """
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "t"
replicas = [[1, 2]]
add_partitions = 3
deleted_by_admin = true
recreated_by_admin = true
[bounds]
broker_failures = 2
"""


def grow() -> KafkaControllerModel:
    return model_of(GROW)


def test_added_partitions_follow_kafkas_add_partitions_placement() -> None:
    """AddPartitionsTest.testIncrementPartitions (2.3): kafka-topics --alter --partitions 3 writes the topic znode
    with the existing partition and the new ones placed by AdminZkClient.addPartitions (start index of partition
    0's leader over the registered brokers, sorted), and the controller creates them online."""
    model = grow()
    s = take(model, initial(model), "AdminAddPartitions", topic="t")
    expected = kafka_assignment.add_partitions_assignment(
        {0: (1, 2)}, [kafka_assignment.BrokerMetadata(b, None) for b in (0, 1, 2)], 3)
    assert s.zk.topic_assignment("t") == ((1, 2), expected[1], expected[2])
    assert s.controller.events[-1].kind is EventKind.PartitionModifications
    s = process(model, s)
    assert s.log.partitions_added == (("t", 1), ("t", 2))
    s = settle(model, s)
    for p in (1, 2):
        lai = zk_lai(s, "t", p)
        assert lai is not None and lai.leader == expected[p][0] and lai.leader_epoch == 0
        assert all(("t", p) in s.broker(b).logs for b in expected[p])


def test_topic_partition_expansion() -> None:
    """ControllerIntegrationTest.testTopicPartitionExpansion (2.3): a partition added to the topic znode gets a
    leader and ISR at the initial leader epoch, and every broker's metadata cache learns it."""
    model = grow()
    s = settle(model, process(model, take(model, initial(model), "AdminAddPartitions", topic="t")))
    for p in (1, 2):
        lai = zk_lai(s, "t", p)
        assert lai is not None and lai.leader_epoch == 0
        assert all(b.cached(("t", p)) is not None for b in s.brokers)


def test_topic_partition_expansion_with_offline_replica() -> None:
    """ControllerIntegrationTest.testTopicPartitionExpansionWithOfflineReplica (2.3): a partition added (by a
    direct znode write, as the test does) with one replica on a dead broker is led by the live one at the initial
    leader epoch."""
    model = grow()
    s = settle(model, process(model, take(model, initial(model), "BrokerFailure", 1)))
    step = Step(model.scenario, s)
    step.zk_topics["t"] = ((1, 2), (1, 2))
    step.topic_znode_written("t")
    s = settle(model, process(model, step.freeze()))
    assert zk_lai(s, "t", 1) == LeaderAndIsr(2, 0, (2,), 0, 1)


def test_add_partition_during_delete_topic() -> None:
    """DeleteTopicTest.testAddPartitionDuringDeleteTopic (2.3, KAFKA-6612): partitions added while the topic is
    queued for deletion are written out of its znode again (restorePartitionReplicaAssignment), the deletion
    completes, and no broker keeps a log of the added partitions."""
    model = grow()
    s = process(model, take(model, initial(model), "AdminDeleteTopic", topic="t"))
    s = take(model, s, "AdminAddPartitions", topic="t")
    assert len(s.zk.topic_assignment("t") or ()) == 3
    s = process(model, s)
    assert s.zk.topic_assignment("t") == ((1, 2),)
    assert s.log.additions_reverted == ("t",)
    s = settle(model, s)
    assert s.zk.topic_assignment("t") is None
    assert all(b.logs == () for b in s.brokers)


def test_delete_topic_during_add_partition() -> None:
    """DeleteTopicTest.testDeleteTopicDuringAddPartition (2.3): a topic whose added partition has a replica on a
    dead broker is deleted once that broker restarts, with the added partition's logs gone everywhere."""
    model = grow()
    s = settle(model, process(model, take(model, initial(model), "AdminAddPartitions", topic="t")))
    s = settle(model, process(model, take(model, s, "BrokerFailure", 2)))
    s = settle(model, take(model, s, "AdminDeleteTopic", topic="t"))
    assert s.zk.topic_assignment("t") is not None
    s = settle(model, process(model, take(model, s, "BrokerStartup", 2)))
    assert s.zk.topic_assignment("t") is None
    assert all(b.logs == () for b in s.brokers)


def test_recreate_topic_after_deletion() -> None:
    """DeleteTopicTest.testRecreateTopicAfterDeletion (2.3): after the deletion completes the topic can be created
    again on the same replicas, and every replica's log is created again."""
    model = grow()
    s = settle(model, take(model, initial(model), "AdminDeleteTopic", topic="t"))
    assert s.zk.topic_assignment("t") is None
    assert [a.kind for a in model.actions(s) if a.topic == "t"] == ["AdminRecreateTopic"]
    s = settle(model, take(model, s, "AdminRecreateTopic", topic="t"))
    assert s.zk.topic_assignment("t") == ((1, 2),)
    assert all(("t", 0) in s.broker(b).logs for b in (1, 2))
    assert s.history.stray_logs == ()


def test_recreated_topic_inherits_a_stale_ineligible_mark() -> None:
    """The consequence of TopicDeletionManager.completeDeleteTopic keeping topicsIneligibleForDeletion (2.x): a
    topic re-created under the name of one whose deletion completed while marked ineligible is queued when
    deleted again but its deletion never starts, until a broker hosting one of its replicas restarts."""
    model = grow()
    s = process(model, take(model, initial(model), "AdminDeleteTopic", topic="t"))
    s = process(model, apply_all(model, s, 1))  # broker 1's replica deleted successfully
    s = process(model, take(model, s, "BrokerFailure", 1))  # failReplicaDeletion marks t, the transition is invalid
    s = settle(model, s)
    assert s.zk.topic_assignment("t") is None and s.controller.topics_ineligible_for_deletion == ("t",)
    s = settle(model, process(model, take(model, s, "BrokerStartup", 1)))
    assert s.controller.topics_ineligible_for_deletion == ("t",)  # t is not queued: the startup keeps the mark
    s = settle(model, take(model, s, "AdminRecreateTopic", topic="t"))
    s = settle(model, take(model, s, "AdminDeleteTopic", topic="t"))
    assert s.controller.topics_to_be_deleted == ("t",)
    assert replica_state(s, "t", 0, 1) is R.OnlineReplica and replica_state(s, "t", 0, 2) is R.OnlineReplica
    assert s.zk.topic_assignment("t") is not None  # queued, every broker alive, and nothing happens
    s = settle(model, process(model, take(model, take(model, s, "BrokerFailure", 2), "BrokerStartup", 2)))
    assert s.zk.topic_assignment("t") is None  # the restart of a broker hosting a replica resumes it
