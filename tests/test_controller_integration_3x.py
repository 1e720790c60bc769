"""Kafka 3.9's ``ControllerIntegrationTest`` (core/src/test/scala/unit/kafka/controller/ControllerIntegrationTest.scala
at 3.9.0-rc3): its AlterPartition and topic-ID cases that no other module expresses, stepped by hand against the
model. Where Kafka's test reads the AlterPartition response, the test records the controller's answer
(``partition_leader.handle_alter_isr_error`` for a top-level error, ``handle_alter_isr_response`` per partition),
the request planted in the controller's queue as Kafka's test sends it through the broker-to-controller channel.

The model's controller is not one of the modelled brokers: the partition Kafka's test places on the controller's
broker is placed on broker 0. Kafka's ``partitionEpoch`` is the model's ``zk_version``.

Expressed elsewhere: testIdempotentAlterPartition's lost answer (tests/test_alter_isr.py), testAlterPartitionErrors'
leader-recovery cases after an unclean election's write (tests/test_leader_recovery.py), the stale leader epoch and
partition epoch of a leader's own request (tests/test_alter_isr.py).

Not expressed, one line each:
- testAlterPartition's request versions 0 - 3: the model's AlterIsr request has no version and names its topic.
- testAlterPartitionVersion2KeepWorkingWhenControllerDowngradeToPre28IBP: a run's protocol version is fixed.
- testAlterPartitionErrors' UNKNOWN_TOPIC_ID: the model's request names the topic, never its ID.
- testAlterPartitionErrors' UNKNOWN_SERVER_ERROR (leader recovery state 25): the model's state has two values.
- testTopicIdCreatedOnUpgrade, testTopicIdCreatedOnUpgradeMultiBrokerScenario: a run's protocol version is fixed.
- testTopicIdUpgradeAfterReassigningPartitions: a run's protocol version is fixed (no upgrade nor downgrade).
- testControllerFeatureZNodeSetup*: the /feature znode (KIP-584) is not modelled.
- testPreemptionOnControllerShutdown, testPreemptionWithCallbacks: the event queue's preemption is not modelled.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from kafka_steps import initial, model_of, process, settle, take, zk_lai

from model.zk.environment import partition_leader
from model.zk.kafka_model import KafkaControllerModel
from model.zk.state.values import ClusterState, ControllerEvent, EventKind, LeaderAndIsr, LeaderRecoveryState

RECOVERED, RECOVERING = LeaderRecoveryState.RECOVERED, LeaderRecoveryState.RECOVERING
TP = ("t", 0)


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The controller's AlterPartition answers, in order: a top-level error as a string, a partition's as
    (partition, error or LeaderAndIsr). The leader does not handle them."""
    got: list[Any] = []
    monkeypatch.setattr(partition_leader, "handle_alter_isr_error", lambda step, event, error: got.append(error))
    monkeypatch.setattr(partition_leader, "handle_alter_isr_response",
                        lambda step, event, tp, result: got.append((tp, result)))
    return got


def plant(s: ClusterState, request: LeaderAndIsr, tp: tuple[str, int] = TP, broker_epoch: int | None = None,
          pending: bool = False) -> ClusterState:
    """Broker ``request.leader`` sends AlterPartition(``request``) for ``tp`` with ``broker_epoch`` (its own by
    default); with ``pending`` its partition proposes the request's ISR, as ``Partition.sendAlterPartitionRequest``
    leaves it."""
    broker = request.leader
    if broker_epoch is None:
        broker_epoch = s.broker(broker).epoch
    brokers = s.brokers
    if pending:
        b = s.broker(broker)
        hosted = tuple(attrs.evolve(h, pending_isr=request.isr) if h.partition == tp else h for h in b.partitions)
        brokers = tuple(attrs.evolve(x, partitions=hosted) if x.id == broker else x for x in s.brokers)
    event = ControllerEvent(EventKind.AlterIsrReceived, broker=broker, request_epoch=broker_epoch,
                            isrs_to_alter=((tp, request),))
    return attrs.evolve(s, brokers=brokers,
                        controller=attrs.evolve(s.controller, events=(*s.controller.events, event)))


def answer(model: KafkaControllerModel, s: ClusterState, answers: list[Any], request: LeaderAndIsr,
           **kwargs: Any) -> tuple[Any, ClusterState]:
    """The controller's answer to ``request`` (planted with ``kwargs``) and the state after it."""
    assert not s.controller.events
    after = process(model, plant(s, request, **kwargs))
    return answers.pop(), after


def errors_scenario() -> str:
    return """
[kafka]
version = "3.9"
[cluster]
brokers = [0, 1]
[[topics]]
name = "t"
replicas = [[0, 1]]
"""


def _e(current: LeaderAndIsr, **changes: Any) -> LeaderAndIsr:
    """The request of Kafka's ``assertAlterPartition``: the current leader, leader epoch and partition epoch, the
    current ISR, RECOVERED, with ``changes`` (the leader epoch's and partition epoch's added to the current)."""
    base = LeaderAndIsr(current.leader, current.leader_epoch, current.isr, current.zk_version, -1, RECOVERED)
    relative = {k: getattr(current, k) + v for k, v in changes.items() if k in ("leader_epoch", "zk_version")}
    return attrs.evolve(base, **{**changes, **relative})


#: testAlterPartitionErrors' per-partition cases, in its order: (changes to the request, error); epochs relative.
ERRORS: list[tuple[dict[str, Any], str]] = [
    ({"isr": (0,), "zk_version": -1}, "INVALID_UPDATE_VERSION"),
    ({"zk_version": 1}, "NOT_CONTROLLER"),
    ({"leader_epoch": -1}, "FENCED_LEADER_EPOCH"),
    ({"leader_epoch": 1}, "NOT_CONTROLLER"),
    ({"leader_recovery_state": RECOVERING}, "INVALID_REQUEST"),
    ({"leader_recovery_state": RECOVERING, "isr": (0,)}, "INVALID_REQUEST"),
    ({"leader_recovery_state": RECOVERING, "zk_version": -1}, "INVALID_UPDATE_VERSION"),
    ({"leader_recovery_state": RECOVERING, "zk_version": 1}, "NOT_CONTROLLER"),
    ({"leader_recovery_state": RECOVERING, "leader_epoch": -1}, "FENCED_LEADER_EPOCH"),
    ({"leader_recovery_state": RECOVERING, "leader_epoch": 1}, "NOT_CONTROLLER"),
]


@pytest.mark.parametrize(("changes", "error"), ERRORS, ids=[f"{i}-{e}" for i, (_, e) in enumerate(ERRORS)])
def test_alter_partition_errors(answers: list[Any], changes: dict[str, Any], error: str) -> None:
    """ControllerIntegrationTest.testAlterPartitionErrors (3.9, @Test): t-0 on [0, 1] led by 0 at leader epoch 0
    and partition epoch 0; tryProcessAlterPartition answers each request with the partition error, version and
    epoch errors before the leader-recovery checks, and writes nothing."""
    model = model_of(errors_scenario())
    s = initial(model)
    current = zk_lai(s, "t", 0)
    assert current is not None and (current.leader, current.leader_epoch, current.isr, current.zk_version) == (
        0, 0, (0, 1), 0)
    got, after = answer(model, s, answers, _e(current, **changes))
    assert got == (TP, error) and zk_lai(after, "t", 0) == current


@pytest.mark.parametrize("stale", ["broker epoch - 1", "broker 99"])
def test_alter_partition_errors_stale_broker_epoch(answers: list[Any], stale: str) -> None:
    """ControllerIntegrationTest.testAlterPartitionErrors (3.9, @Test): a broker epoch the controller does not hold
    for the sender, an older one or that of an unknown broker 99, is the top-level STALE_BROKER_EPOCH."""
    model = model_of(errors_scenario())
    s = initial(model)
    current = zk_lai(s, "t", 0)
    assert current is not None
    epoch = dict(s.controller.live_brokers)[0]
    request = _e(current) if stale == "broker epoch - 1" else _e(current, leader=99)
    got, after = answer(model, s, answers, request, broker_epoch=epoch - 1 if stale == "broker epoch - 1" else epoch)
    assert got == "STALE_BROKER_EPOCH" and zk_lai(after, "t", 0) == current


@pytest.mark.parametrize("tp", [("unknown", 0), ("t", 1)])
def test_alter_partition_errors_unknown_partition(answers: list[Any], tp: tuple[str, int]) -> None:
    """ControllerIntegrationTest.testAlterPartitionErrors (3.9, @Test): a topic or a partition the controller does
    not know (AlterPartition v1, by name) is UNKNOWN_TOPIC_OR_PARTITION."""
    model = model_of(errors_scenario())
    s = initial(model)
    current = zk_lai(s, "t", 0)
    assert current is not None
    got, after = answer(model, s, answers, _e(current), tp=tp)
    assert got == (tp, "UNKNOWN_TOPIC_OR_PARTITION") and after.zk.partitions == s.zk.partitions


@pytest.mark.parametrize("protocol", ["2.7", "3.9"])
def test_alter_partition_of_the_current_state(answers: list[Any], protocol: str) -> None:
    """ControllerIntegrationTest.testAlterPartition (3.9, @ParameterizedTest over IBP 2.7 and the latest): a request
    naming the partition's current leader, epochs and ISR is answered with that state, nothing written. The request
    version follows the protocol in the model (Kafka's test also sends each version at each IBP)."""
    model = model_of(errors_scenario().replace('"3.9"', f'"3.9"\ninter_broker_protocol_version = "{protocol}"'))
    s = initial(model)
    current = zk_lai(s, "t", 0)
    assert current is not None
    got, after = answer(model, s, answers, _e(current))
    assert got == (TP, current) and zk_lai(after, "t", 0) == current


def test_idempotent_alter_partition(answers: list[Any]) -> None:
    """ControllerIntegrationTest.testIdempotentAlterPartition (3.9, @Test): leader 1 of t-0 on [1, 0] shrinks the
    ISR to [1] at partition epoch 0, which the controller writes (partition epoch 1); the same request sent again
    with partition epoch 0 and then 1 is answered with ISR [1] at partition epoch 1 (equalsAllowStalePartitionEpoch,
    KAFKA-14144), and nothing more is written."""
    model = model_of(errors_scenario().replace("[[0, 1]]", "[[1, 0]]"))
    s = initial(model)
    old = zk_lai(s, "t", 0)
    assert old is not None and (old.leader, old.isr, old.zk_version) == (1, (1, 0), 0)
    request = _e(old, isr=(1,))
    expected = (1, old.leader_epoch, (1,), 1, RECOVERED)
    for partition_epoch in (0, 0, 1):
        got, s = answer(model, s, answers, attrs.evolve(request, zk_version=partition_epoch))
        tp, result = got
        assert tp == TP and (result.leader, result.leader_epoch, result.isr, result.zk_version,
                             result.leader_recovery_state) == expected
        written = zk_lai(s, "t", 0)
        assert written is not None and (written.isr, written.zk_version) == ((1,), 1)


def shutdown_scenario(protocol: str) -> str:
    return f"""
[kafka]
version = "3.9"
inter_broker_protocol_version = "{protocol}"
[cluster]
brokers = [0, 1]
[[topics]]
name = "t"
replicas = [[0, 1]]
[bounds]
broker_failures = 1
isr_changes = 1
"""


@pytest.mark.parametrize(("protocol", "error"), [
    ("2.7", "OPERATION_NOT_ATTEMPTED"),
    ("3.9", "INELIGIBLE_REPLICA"),
    # 3.9's AlterPartitionManager.buildRequest sends version 2+ whenever the protocol has topic IDs (2.8+)
    ("2.8", "INELIGIBLE_REPLICA"),
    ("3.2", "INELIGIBLE_REPLICA"),
])
def test_shutdown_broker_not_added_to_isr(protocol: str, error: str) -> None:
    """ControllerIntegrationTest.testShutdownBrokerNotAddedToIsr (3.9, @ParameterizedTest over AlterPartition
    versions): follower 1 stops and leaves the ISR; leader 0's request for ISR [0, 1] is answered INELIGIBLE_REPLICA
    (version 2+, which names topics by ID) or OPERATION_NOT_ATTEMPTED (below 2: protocol 2.7, no topic IDs), the ISR
    stays [0] and the leader returns to it (handleAlterPartitionError); once 1 is back, the leader adds it.
    Kafka's broker stops by a controlled shutdown, the model's by a failure: the znode is the same."""
    model = model_of(shutdown_scenario(protocol))
    s = settle(model, take(model, initial(model), "BrokerFailure", 1))
    current = zk_lai(s, "t", 0)
    assert current is not None and (current.leader, current.isr) == (0, (0,))
    s = process(model, plant(s, _e(current, isr=(0, 1)), pending=True))
    assert any(f"failed with {error}" in m for m in s.log.messages)
    hosted = s.broker(0).hosted(TP)
    assert zk_lai(s, "t", 0) == current and hosted is not None and hosted.pending_isr == ()
    s = settle(model, take(model, s, "BrokerStartup", 1))
    s = settle(model, take(model, s, partition_leader.EXPAND, 0, "t", partition=0, replica=1))
    rejoined = zk_lai(s, "t", 0)
    assert rejoined is not None and rejoined.isr == (0, 1)


UNCLEAN = """
[kafka]
version = "3.9"
unclean_leader_election_enable = true
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "t"
replicas = [[1, 2]]
[bounds]
broker_failures = 2
"""

#: testAlterPartitionErrorsAfterUncleanElection's cases, in its order: (changes to the request, error); epochs
#: relative.
UNCLEAN_ERRORS: list[tuple[dict[str, Any], str]] = [
    ({"zk_version": -1}, "INVALID_UPDATE_VERSION"),
    ({"zk_version": 1}, "NOT_CONTROLLER"),
    ({"leader_epoch": -1}, "FENCED_LEADER_EPOCH"),
    ({"leader_epoch": 1}, "NOT_CONTROLLER"),
    ({"leader_recovery_state": RECOVERING}, "INVALID_REQUEST"),
    ({"leader_recovery_state": RECOVERING, "zk_version": -1}, "INVALID_UPDATE_VERSION"),
    ({"leader_recovery_state": RECOVERING, "zk_version": 1}, "NOT_CONTROLLER"),
    ({"leader_recovery_state": RECOVERING, "leader_epoch": -1}, "FENCED_LEADER_EPOCH"),
    ({"leader_recovery_state": RECOVERING, "leader_epoch": 1}, "NOT_CONTROLLER"),
]


def after_unclean_election(model: KafkaControllerModel) -> ClusterState:
    """Replica 1 of t-0 on [1, 2] stops (ISR [2]), then 2 (offline, ISR [2]), then 1 restarts and is elected
    uncleanly: leader 1, ISR [1], RECOVERING."""
    s = settle(model, take(model, initial(model), "BrokerFailure", 1))
    lai = zk_lai(s, "t", 0)
    assert lai is not None and (lai.leader, lai.isr) == (2, (2,))
    s = settle(model, take(model, s, "BrokerFailure", 2))
    lai = zk_lai(s, "t", 0)
    assert lai is not None and (lai.leader, lai.isr) == (-1, (2,))
    s = settle(model, take(model, s, "BrokerStartup", 1))
    lai = zk_lai(s, "t", 0)
    assert lai is not None and (lai.leader, lai.isr, lai.leader_recovery_state) == (1, (1,), RECOVERING)
    return s


@pytest.mark.parametrize(("changes", "error"), UNCLEAN_ERRORS,
                         ids=[f"{i}-{e}" for i, (_, e) in enumerate(UNCLEAN_ERRORS)])
def test_alter_partition_errors_after_unclean_election(answers: list[Any], changes: dict[str, Any],
                                                       error: str) -> None:
    """ControllerIntegrationTest.testAlterPartitionErrorsAfterUncleanElection (3.9, @Test): requests of leader 1
    for ISR [1, 2] against the RECOVERING partition, each with one stale or future epoch or RECOVERING; the
    version and epoch errors come before the leader-recovery check. Kafka's brokers stop by controlled shutdowns,
    the model's by failures: the znodes are the same."""
    model = model_of(UNCLEAN)
    s = after_unclean_election(model)
    current = zk_lai(s, "t", 0)
    assert current is not None
    got, after = answer(model, s, answers, _e(current, isr=(1, 2), **changes))
    assert got == (TP, error) and zk_lai(after, "t", 0) == current


@pytest.mark.parametrize("stale", ["broker epoch - 1", "broker 99"])
def test_alter_partition_errors_after_unclean_election_stale_broker_epoch(answers: list[Any], stale: str) -> None:
    """ControllerIntegrationTest.testAlterPartitionErrorsAfterUncleanElection (3.9, @Test): STALE_BROKER_EPOCH."""
    model = model_of(UNCLEAN)
    s = after_unclean_election(model)
    current = zk_lai(s, "t", 0)
    assert current is not None
    epoch = dict(s.controller.live_brokers)[1]
    request = _e(current, isr=(1, 2)) if stale == "broker epoch - 1" else _e(current, leader=99, isr=(1, 2))
    got, _ = answer(model, s, answers, request, broker_epoch=epoch - 1 if stale == "broker epoch - 1" else epoch)
    assert got == "STALE_BROKER_EPOCH"


def topics_scenario(protocol: str, extra: str = "", brokers: str = "[0]") -> str:
    return f"""
[kafka]
version = "3.9"
inter_broker_protocol_version = "{protocol}"
[cluster]
brokers = {brokers}
[[topics]]
name = "t1"
replicas = [[0]]
created = "by_admin"
{extra}
[[topics]]
name = "t2"
replicas = [[0]]
created = "by_admin"
[bounds]
broker_failures = 1
controller_failovers = 1
"""


@pytest.mark.parametrize(("protocol", "ids"), [("3.9", (("t1", 1), ("t2", 1))), ("2.7", ())])
def test_topic_ids_are_added(protocol: str, ids: tuple[tuple[str, int], ...]) -> None:
    """ControllerIntegrationTest.testTopicIdsAreAdded / testTopicIdsAreNotAdded (3.9, @Test): no ID before t1 is
    created; each created topic gets its own ID in the controller's context (processTopicIds), t1's unchanged by
    t2's creation; with IBP 2.7 neither gets one. The model's ID is the topic's incarnation (process_topic_ids'
    stated deviation), so Kafka's two distinct UUIDs are two distinct (topic, incarnation) pairs."""
    model = model_of(topics_scenario(protocol))
    s = initial(model)
    assert s.controller.topic_ids == ()
    s = settle(model, take(model, s, "AdminCreateTopic", topic="t1"))
    assert s.controller.topic_ids == ids[:1]
    s = settle(model, take(model, s, "AdminCreateTopic", topic="t2"))
    assert s.controller.topic_ids == ids == s.zk.topic_ids


@pytest.mark.parametrize(("protocol", "ids"), [("3.9", (("t1", 1),)), ("2.7", ())])
def test_topic_id_migration_and_handling(protocol: str, ids: tuple[tuple[str, int], ...]) -> None:
    """ControllerIntegrationTest.testTopicIdMigrationAndHandling / ...WithOlderVersion (3.9, @Test): the created
    topic's ID (none with IBP 2.7) is in ZooKeeper and the controller's context, stays through the addition of a
    partition, and leaves the context with the topic's deletion."""
    model = model_of(topics_scenario(protocol, "add_partitions = 2\ndeleted_by_admin = true", brokers="[0, 1]"))
    s = settle(model, take(model, initial(model), "AdminCreateTopic", topic="t1"))
    assert s.zk.topic_ids == ids == s.controller.topic_ids
    s = settle(model, take(model, s, "AdminAddPartitions", topic="t1"))
    assert zk_lai(s, "t1", 1) is not None
    assert s.zk.topic_ids == ids == s.controller.topic_ids
    s = settle(model, take(model, s, "AdminDeleteTopic", topic="t1"))
    assert s.controller.topic_ids == () == s.zk.topic_ids


@pytest.mark.parametrize(("protocol", "ids"), [("3.9", (("t1", 1),)), ("2.7", ())])
def test_topic_id_persists_through_controller_reelection(protocol: str, ids: tuple[tuple[str, int], ...]) -> None:
    """ControllerIntegrationTest.testTopicIdPersistsThroughControllerReelection /
    testNoTopicIdPersistsThroughControllerReelection (3.9, @Test): the new controller's context, rebuilt from
    ZooKeeper (onControllerFailover's processTopicIds), holds the ID the first controller assigned (none with IBP
    2.7)."""
    model = model_of(topics_scenario(protocol, brokers="[0, 1]"))
    s = settle(model, take(model, initial(model), "AdminCreateTopic", topic="t1"))
    assert s.controller.topic_ids == ids
    s = take(model, s, "ControllerFailover")
    assert s.controller.topic_ids == ()  # the new controller's empty context
    s = settle(model, s)
    assert s.controller.topic_ids == ids == s.zk.topic_ids


def test_topic_id_persists_through_controller_restart() -> None:
    """ControllerIntegrationTest.testTopicIdPersistsThroughControllerRestart (3.9, @Test): the single broker, which
    hosts t1-0 and the controller, restarts; the re-elected controller holds t1's ID and the broker's log keeps it.
    The model's controller host is not a broker: the restart is the broker's failure, a failover and its startup."""
    model = model_of(topics_scenario("3.9"))
    s = settle(model, take(model, initial(model), "AdminCreateTopic", topic="t1"))
    assert s.controller.topic_ids == (("t1", 1),) and s.broker(0).log_topic_id(("t1", 0)) == 1
    s = settle(model, take(model, s, "BrokerFailure", 0))
    s = settle(model, take(model, s, "ControllerFailover"))
    s = settle(model, take(model, s, "BrokerStartup", 0))
    assert s.controller.topic_ids == (("t1", 1),) and s.broker(0).log_topic_id(("t1", 0)) == 1
