"""Kafka 2.3.0's exception paths in the controller, stepped by hand: ``partitionLeadershipInfo(tp)`` throwing
``NoSuchElementException`` for a partition that never had a leader, in ``processPreferredReplicaLeaderElection``
(``KafkaController.process`` logs it and goes on) and in ``fetchPendingPreferredReplicaElections`` inside
``onControllerFailover`` (``elect()`` resigns: ``triggerControllerMove``)."""

from __future__ import annotations

from kafka_steps import initial, model_of, process, settle, take

from invariants.registry import select
from model.zk.kafka_model import resignations
from model.zk.state.values import ClusterState

NEVER_LED = """
[cluster]
brokers = [0, 1]
[[topics]]
name = "t"
replicas = [[1]]
created = "by_admin"
preferred_replica_election = true
[bounds]
broker_failures = 1
controller_failovers = 1
controller_resignations = 3
"""


def _never_led_election_pending() -> tuple[object, ClusterState]:
    """Broker 1 dies; an admin creates t with t-0 on [1], then runs the preferred election for t's partitions."""
    model = model_of(NEVER_LED)
    s = take(model, initial(model), "BrokerFailure", 1)
    s = settle(model, s)
    s = settle(model, take(model, s, "AdminCreateTopic", topic="t"))
    assert ("t", 0) not in dict(s.controller.leadership)  # NewPartition: no live replica to lead
    s = take(model, s, "AdminPreferredReplicaElection", topic="t")
    return model, s


def test_preferred_election_of_a_never_led_partition_leaves_the_znode() -> None:
    """processPreferredReplicaLeaderElection throws NoSuchElementException before onPreferredReplicaElection, so
    /admin/preferred_replica_election stays and the tool refuses the next election."""
    model, s = _never_led_election_pending()
    s = process(model, s)
    assert any("Uncaught error processing event PreferredReplicaLeaderElection: NoSuchElementException" in m
               for m in s.log.messages)
    assert s.zk.preferred_replica_election == (("t", 0),)
    assert not s.controller.events and not s.channels  # idle
    assert all(a.kind != "AdminPreferredReplicaElection" for a in model.actions(s))
    [check] = [p.check for p in select(model.scenario, ["preferred_election_znode_removed_when_idle"])]
    assert check(s) == {"preferred_replica_election": ["t-0"], "without_leadership": ["t-0"]}


def test_every_elected_controller_resigns_until_a_replica_returns() -> None:
    """After a failover, fetchPendingPreferredReplicaElections throws in onControllerFailover; elect() resigns and
    the successor meets the same exception, until broker 1 registers again and t-0 gets a leader first."""
    model, s = _never_led_election_pending()
    s = process(model, s)
    s = take(model, s, "ControllerFailover")
    epochs = []
    for _ in range(3):
        s = process(model, s)  # Reelect
        assert [e for e, _ in s.log.controller_resignations] == [s.controller.epoch - 1]
        epochs.append(s.controller.epoch)
    assert epochs == [3, 4, 5] and resignations(s, initial(model)) == 3
    assert not model.within_boundary(take(model, s, "ControllerProcessEvent"))  # the fourth is past the bound
    s = take(model, s, "BrokerStartup", 1)
    s = process(model, s)  # Reelect: t-0 is initialized before the pending elections are read
    assert not s.log.controller_resignations and s.log.controller_initialized
    s = settle(model, s)
    assert s.zk.preferred_replica_election == ()
    lai = s.zk.partition_state(("t", 0))
    assert lai is not None and lai.leader == 1
