"""UpdateMetadata and the brokers' metadata caches, stepped by hand: who gets which UpdateMetadata when, what
a broker's MetadataCache then holds, and the version differences (KAFKA-7537 in 2.2, the 2.3 OfflineReplica
branch). Kafka's own tests are named in the docstrings."""

from __future__ import annotations

import pytest
from kafka_steps import initial, model_of, process, settle, take

from model.zk.controller import controller
from model.zk.kafka_model import KafkaControllerModel
from model.zk.state.step import Step
from model.zk.state.values import NO_LEADER, ClusterState, MetadataPartitionState, RequestKind

THREE = """
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "t"
replicas = {replicas}
deleted_by_admin = true
[kafka]
version = "{version}"
[bounds]
broker_failures = 3
"""


def three(replicas: str = "[[0, 1, 2]]", version: str = "2.3") -> KafkaControllerModel:
    return model_of(THREE.format(replicas=replicas, version=version))


def caches(s: ClusterState) -> dict[int, tuple[tuple[int, ...], tuple[MetadataPartitionState, ...]]]:
    """Each live broker's metadata cache: (live brokers, partition states)."""
    return {b.id: (b.metadata_live_brokers, b.metadata_partitions) for b in s.brokers if b.alive}


def test_initial_caches_know_every_broker_and_partition() -> None:
    """After the cluster starts, every broker's metadata cache lists all brokers and each partition's leader
    and leader epoch."""
    s = initial(three())
    t0 = (MetadataPartitionState(("t", 0), 0, 0),)
    assert caches(s) == {0: ((0, 1, 2), t0), 1: ((0, 1, 2), t0), 2: ((0, 1, 2), t0)}


def test_update_metadata_never_waits_at_the_head_of_a_live_brokers_channel() -> None:
    """A live broker applies an UpdateMetadata as soon as it reaches the head of its channel (the model's
    stated reduction): after every step no live broker's channel starts with one."""
    model = three()
    s = process(model, take(model, initial(model), "BrokerFailure", 2))
    for b, queue in s.channels:
        if s.broker(b).alive:
            assert queue[0].kind is not RequestKind.UpdateMetadata
    assert any(rq.kind is RequestKind.UpdateMetadata for _, q in s.channels for rq in q)  # behind a LeaderAndIsr


def test_metadata_propagation_on_broker_change() -> None:
    """ControllerIntegrationTest.testMetadataPropagationOnBrokerChange: after a broker dies, and again after it
    restarts, every live broker's cache lists exactly the live brokers."""
    model = three()
    s = settle(model, process(model, take(model, initial(model), "BrokerFailure", 1)))
    assert {b: live for b, (live, _) in caches(s).items()} == {0: (0, 2), 2: (0, 2)}
    s = settle(model, process(model, take(model, s, "BrokerStartup", 1)))
    assert {b: live for b, (live, _) in caches(s).items()} == {0: (0, 1, 2), 1: (0, 1, 2), 2: (0, 1, 2)}
    lai = s.zk.partition_state(("t", 0))
    assert lai is not None
    for _, parts in caches(s).values():
        assert parts == (MetadataPartitionState(("t", 0), lai.leader, lai.leader_epoch),)


def test_metadata_propagation_for_offline_replicas() -> None:
    """ControllerIntegrationTest.testMetadataPropagationForOfflineReplicas: a partition whose only replica is
    down is in a restarting broker's cache with leader -1 (the full UpdateMetadata of onBrokerStartup)."""
    model = three(replicas="[[1]]")
    s = settle(model, process(model, take(model, initial(model), "BrokerFailure", 1)))
    s = settle(model, process(model, take(model, s, "BrokerFailure", 2)))
    s = settle(model, process(model, take(model, s, "BrokerStartup", 2)))
    cached = s.broker(2).cached(("t", 0))
    assert cached is not None and cached.leader == NO_LEADER


@pytest.mark.parametrize(("version", "existing_get_partitions"), [("2.3", False), ("2.2", False), ("2.1", True)])
def test_broker_startup_update_metadata_by_version(version: str, existing_get_partitions: bool) -> None:
    """onBrokerStartup: from 2.2 (KAFKA-7537) the existing brokers get an UpdateMetadata with the live brokers
    only and the new broker one with every partition; in 2.0 - 2.1 every live broker gets every partition."""
    model = three(version=version)
    s = settle(model, process(model, take(model, initial(model), "BrokerFailure", 2)))
    s = take(model, s, "BrokerStartup", 2)
    step = Step(model.scenario, s)
    controller.process_next_event(step)  # without the brokers applying anything
    updates = {b: [rq for rq in q if rq.kind is RequestKind.UpdateMetadata] for b, q in step.channels.items()}
    assert updates[0][0].live_brokers == (0, 1, 2)
    assert bool(updates[0][0].metadata_states) is existing_get_partitions
    assert [m.partition for m in updates[2][0].metadata_states] == [("t", 0)]


def test_topic_deletion_removes_the_partitions_from_every_cache() -> None:
    """onTopicDeletion sends UpdateMetadata with LeaderDuringDelete (-2), and MetadataCache.updateMetadata drops
    the partitions (2.3 removePartitionInfo)."""
    model = three()
    s = process(model, take(model, initial(model), "AdminDeleteTopic", topic="t"))
    assert all(parts == () for _, parts in caches(s).values())
