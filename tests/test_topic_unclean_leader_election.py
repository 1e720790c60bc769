"""Per-topic ``unclean.leader.election.enable`` (``/config/topics/<t>``): the offline election reads the topic's
config (``PartitionStateMachine.collectUncleanLeaderElectionState``), and from 2.1 (KAFKA-6835) enabling it
queues ``TopicUncleanLeaderElectionEnable``, which elects the topic's offline partitions."""

from __future__ import annotations

from kafka_steps import initial, model_of, process, settle, take

from model.zk.state.values import ClusterState

TEMPLATE = """
[cluster]
brokers = [0, 1]
[[topics]]
name = "t"
replicas = [[0, 1]]
unclean_leader_election_enable_by_admin = true
[[topics]]
name = "u"
replicas = [[0, 1]]
[kafka]
version = "{version}"
[bounds]
broker_failures = 1
isr_changes = 2
unclean_config_changes = 1
"""


def _offline_with_out_of_sync_replica(version: str) -> tuple[object, ClusterState]:
    """Leader 0 drops follower 1 from both ISRs, then dies: t-0 and u-0 are offline with broker 1 alive."""
    model = model_of(TEMPLATE.format(version=version))
    s = initial(model)
    for topic in ("t", "u"):
        s = take(model, s, "LeaderShrinksIsr", 0, topic, partition=0, replica=1)
    s = settle(model, take(model, s, "BrokerFailure", 0))
    for topic in ("t", "u"):
        lai = s.zk.partition_state((topic, 0))
        assert lai is not None and lai.leader == -1 and lai.isr == (0,)
    return model, s


def test_enabling_the_topic_config_elects_its_offline_partitions() -> None:
    """2.3: the admin's change queues TopicUncleanLeaderElectionEnable(t); broker 1 leads t-0 with an ISR of
    itself, and u-0, whose topic has no override, stays offline."""
    model, s = _offline_with_out_of_sync_replica("2.3")
    s = take(model, s, "AdminAlterTopicUncleanLeaderElection", topic="t")
    assert s.zk.topic_unclean_leader_election_enable == ("t",)
    s = process(model, s)
    assert "Unclean leader election has been enabled for topic t" in s.log.messages
    t0, u0 = s.zk.partition_state(("t", 0)), s.zk.partition_state(("u", 0))
    assert t0 is not None and (t0.leader, t0.isr) == (1, (1,))
    assert u0 is not None and u0.leader == -1
    assert model.decode(model.encode(s)) == s


def test_before_kafka_6835_the_topic_config_waits_for_the_next_election() -> None:
    """2.0: the change queues nothing and elects nothing: it takes effect at the topic's next election."""
    model, s = _offline_with_out_of_sync_replica("2.0")
    s = take(model, s, "AdminAlterTopicUncleanLeaderElection", topic="t")
    assert not s.controller.events
    t0 = s.zk.partition_state(("t", 0))
    assert t0 is not None and t0.leader == -1
