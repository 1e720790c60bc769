"""KIP-516 topic IDs in the ZooKeeper controller (Kafka 2.8, inter.broker.protocol.version 2.8): the controller's
``processTopicIds`` writes them into the topic znode and its context, LeaderAndIsr v5 carries them, and the broker
checks them against its log's partition.metadata (``Partition.checkOrSetTopicId`` 2.8.0; from 3.0, KAFKA-12426,
also for a log loaded from disk), stepped by hand."""

from __future__ import annotations

import pytest
from kafka_steps import initial, model_of, process, settle, take

from explorer.bfs import run_bfs
from explorer.results import Outcome
from kmc.compose import model_for, resolve_scenario
from model.scenario import with_version
from model.zk.environment import environment
from model.zk.state.values import BrokerState, HostedPartition, PartitionLeaderState, Request, RequestKind

RECREATION = """
[cluster]
brokers = [0, 1]
[[topics]]
name = "t"
replicas = [[0, 1]]
deleted_by_admin = true
recreated_by_admin = true
[kafka]
version = "{version}"
inter_broker_protocol_version = "{protocol}"
"""

T0 = ("t", 0)


@pytest.mark.parametrize(("version", "protocol", "zk_ids", "log_ids"), [
    ("2.7", "2.7", (), ()),
    ("2.8", "2.7", (), ()),
    ("2.8", "2.8", (("t", 1),), ()),
    ("3.9", "2.7", (), ()),
    ("3.9", "3.9", (("t", 1),), ((T0, 1),)),
])
def test_initial_topic_ids(version: str, protocol: str, zk_ids: tuple, log_ids: tuple) -> None:  # type: ignore[type-arg]
    """With protocol 2.8+ the created topic has ID 1 in its znode and the controller's context, and its
    LeaderAndIsr carried it; 2.8.0's broker creates the log without partition.metadata (createLogIfNotExists
    takes no ID), 3.0+'s writes it (KAFKA-12426); below protocol 2.8 there are no IDs."""
    state = initial(model_of(RECREATION.format(version=version, protocol=protocol)))
    assert state.zk.topic_ids == zk_ids and state.controller.topic_ids == zk_ids
    assert all(b.log_topic_ids == log_ids for b in state.brokers)


@pytest.mark.parametrize(("version", "log_ids_after"), [("2.8", ((T0, 2),)), ("3.9", ((T0, 2),))])
def test_recreated_topic_gets_a_new_id(version: str, log_ids_after: tuple) -> None:  # type: ignore[type-arg]
    """The deletion removes the topic's ID from ZooKeeper and the context and its logs with their
    partition.metadata; the re-created topic gets ID 2 from the controller's processTopicIds (a write of the
    topic znode, which fires its PartitionModifications watch), and LeaderAndIsr carries ID 2 to the brokers,
    whose new logs take it: 2.8.0's at the second LeaderAndIsr only."""
    model = model_of(RECREATION.format(version=version, protocol=version))
    deleted = settle(model, process(model, take(model, initial(model), "AdminDeleteTopic", topic="t")))
    assert deleted.zk.topic_ids == () and deleted.controller.topic_ids == ()
    assert all(not b.logs and not b.log_topic_ids for b in deleted.brokers)
    recreated = process(model, take(model, deleted, "AdminRecreateTopic", topic="t"))
    assert recreated.zk.topic_ids == (("t", 2),) and recreated.controller.topic_ids == (("t", 2),)
    assert [e.describe() for e in recreated.controller.events] == ["PartitionModifications(t)"]
    requests = [r for r in recreated.channel(0) if r.kind is RequestKind.LeaderAndIsr]
    assert [r.topic_ids for r in requests] == [(("t", 2),)]
    done = settle(model, recreated)
    assert all(b.log_topic_ids == (() if version == "2.8" else log_ids_after) for b in done.brokers)


def _broker(*, hosted: bool, log_id: int | None) -> BrokerState:
    return BrokerState(id=1, alive=True, epoch=1, controller_epoch=1,
                       partitions=(HostedPartition(partition=T0, leader_epoch=3, leader=0),) if hosted else (),
                       logs=(T0,), metadata_live_brokers=(0, 1),
                       log_topic_ids=() if log_id is None else ((T0, log_id),))


def _leader_and_isr(topic_id: int) -> Request:
    state = PartitionLeaderState(partition=T0, leader=0, leader_epoch=4, isr=(0, 1), replicas=(0, 1), is_new=False,
                                 zk_version=4, controller_epoch=1)
    return Request(kind=RequestKind.LeaderAndIsr, controller_epoch=1, broker_epoch=1, leader_states=(state,),
                   topic_ids=(("t", topic_id),))


@pytest.mark.parametrize(("hosted", "log_id", "kafka_12426", "refused", "log_id_after"), [
    (True, 1, False, True, 1),  # 2.8.0: the attached log's ID differs
    (True, 1, True, True, 1),
    (False, 1, False, False, 1),  # 2.8.0: no log attached yet, makeFollower takes the one on disk
    (False, 1, True, True, 1),  # 3.0+: Partition.topicId reads the log LogManager loaded
    (True, None, False, False, 2),  # 2.8.0: checkOrSetTopicId writes partition.metadata
    (False, None, False, False, None),  # 2.8.0: createLogIfNotExists takes no ID
    (False, None, True, False, 2),  # 3.0+: getOrCreateLog assigns it
    (True, 2, False, False, 2),
])
def test_become_leader_or_follower_checks_the_topic_id(hosted: bool, log_id: int | None, kafka_12426: bool,
                                                       refused: bool, log_id_after: int | None) -> None:
    """A LeaderAndIsr for topic ID 2 reaching a broker whose log of t-0 holds ID ``log_id``: a differing ID of a
    log the check sees is INCONSISTENT_TOPIC_ID and the partition is left as it was; otherwise the broker
    follows leader 0 at epoch 4, with the partition.metadata the version writes."""
    broker, request = _broker(hosted=hosted, log_id=log_id), _leader_and_isr(2)
    after = environment._become_leader_or_follower(broker, request, kafka_12426=kafka_12426)
    assert environment.inconsistent_topic_ids(broker, request, kafka_12426) == ({T0} if refused else set())
    if refused:
        assert after.partitions == broker.partitions
    else:
        assert after.hosted(T0) == HostedPartition(partition=T0, leader_epoch=4, leader=0, fetching=True)
    assert after.log_topic_id(T0) == log_id_after


def test_request_without_ids_is_not_checked() -> None:
    """A LeaderAndIsr below protocol 2.8 carries no topic ID: the broker takes it whatever its log holds."""
    broker = _broker(hosted=True, log_id=1)
    request = Request(kind=RequestKind.LeaderAndIsr, controller_epoch=1, broker_epoch=1,
                      leader_states=_leader_and_isr(2).leader_states)
    after = environment._become_leader_or_follower(broker, request, kafka_12426=True)
    assert after.hosted(T0).leader_epoch == 4 and after.log_topic_id(T0) == 1  # type: ignore[union-attr]
    assert environment.inconsistent_topic_ids(broker, request, True) == set()


def test_finding_2b_at_2_8_adopts_a_log_without_an_id() -> None:
    """stray-log-adopted-on-recreation at 2.8: the stray log was re-created, after broker 1's restart, by a
    LeaderAndIsr of the old topic that 2.8.0's broker checked before any log was attached and whose log it then
    created without partition.metadata; the re-created topic's LeaderAndIsr writes its own ID into it and broker 1
    leads on the old log (21 steps). At 3.9 the log holds the old ID and is refused (tests/test_versions.py)."""
    result = run_bfs(model_for(with_version(resolve_scenario("stray-log-adopted-on-recreation"), "2.8")))
    stats = result.stats
    assert (result.outcome, stats.distinct, stats.generated, stats.depth, stats.queue) == (
        Outcome.VIOLATION, 9355, 19761, 21, 247)
    assert {d.property: d.trace_length for d in result.discoveries} == {
        "sometimes_topic_recreated": 7, "recreated_topic_never_adopts_stray_log": 21}


def test_finding_6_the_refusal_lasts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """stray-log-refused-on-recreation (finding 6, 3.9): from the violating state, where ZooKeeper names broker 1
    leader of the re-created t-0 and broker 1 refused its LeaderAndIsr (INCONSISTENT_TOPIC_ID), no state reachable
    with a second broker failure and a controller failover has t-0 hosted by a live leader when the controller is
    idle: broker 1's restart loads the old log with its partition.metadata and refuses the LeaderAndIsr of
    onBrokerStartup again, and so does the LeaderAndIsr of a new controller's failover (3.9.0-rc3)."""
    from collections import deque

    from explorer.replay import replay_states
    from invariants.kafka_properties import quiescent

    scenario = resolve_scenario("stray-log-refused-on-recreation")
    model = model_for(scenario)
    result = run_bfs(model)
    found = next(d for d in result.discoveries if d.property == "live_brokers_host_their_replicas")
    violating = replay_states(model, found.path, found.action_indices, found.fingerprint_bits)[-1]
    path = tmp_path / "more-failures.toml"
    path.write_text(scenario.source.replace("broker_failures = 1", "broker_failures = 2\ncontroller_failovers = 1"))
    wider = model_for(resolve_scenario(str(path)))
    hosts = next(p for p in wider.properties() if p.name == "live_brokers_host_their_replicas")
    seen, queue, led = {wider.encode(violating)}, deque([violating]), []
    while queue:
        state = queue.popleft()
        lai = dict(state.zk.partitions).get(T0)
        if (quiescent(state) and lai is not None and lai.leader in {b.id for b in state.brokers if b.alive}
                and hosts.check(state) is None):
            led.append(state)
        for action in wider.actions(state):
            after = wider.next_state(state, action)
            if after is not None and wider.within_boundary(after) and (key := wider.encode(after)) not in seen:
                seen.add(key)
                queue.append(after)
    assert (len(seen), led) == (1295, [])
