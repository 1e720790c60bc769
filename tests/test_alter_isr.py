"""AlterIsr (KIP-497, Kafka 2.7 with ``inter.broker.protocol.version`` >= 2.7-IV2), stepped by hand: the leader's
pending ISR and its request, ``KafkaController.processAlterIsr``'s checks, write and answer, the leader's
handling of the answer, the re-sends after a failover, and KAFKA-14140's checks from 3.3. Kafka's own tests are
named in the docstrings."""

from __future__ import annotations

import attrs
import pytest
from kafka_steps import initial, model_of, process, take, zk_lai

from explorer.bfs import run_bfs
from kmc.compose import model_for, resolve_scenario
from model.scenario import with_version
from model.zk.actions import enabled_actions
from model.zk.controller import controller
from model.zk.environment import partition_leader
from model.zk.kafka_model import KafkaControllerModel
from model.zk.state.step import Step
from model.zk.state.values import ClusterState, EventKind, LeaderAndIsr, RequestKind

SHRINK, EXPAND = partition_leader.SHRINK, partition_leader.EXPAND
TP = ("t", 0)


def scenario(version: str = "2.7", protocol: str | None = None, isr_changes: int = 4) -> str:
    kafka = f'version = "{version}"' + (f'\ninter_broker_protocol_version = "{protocol}"' if protocol else "")
    return f"""
[kafka]
{kafka}
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "t"
replicas = [[0, 1, 2]]
[bounds]
broker_failures = 1
isr_changes = {isr_changes}
controller_failovers = 1
controlled_shutdowns = 1
"""


def shrink(model: KafkaControllerModel, s: ClusterState, follower: int = 1) -> ClusterState:
    return take(model, s, SHRINK, 0, "t", partition=0, replica=follower)


def pending(s: ClusterState, broker: int = 0) -> tuple[int, ...]:
    hosted = s.broker(broker).hosted(TP)
    assert hosted is not None
    return hosted.pending_isr


def test_leader_sends_alter_isr_and_keeps_a_pending_isr() -> None:
    """PartitionTest.testShrinkIsrWithAlterIsr-style (2.7.0 Partition.shrinkIsrWithAlterIsr): the leader proposes
    [0, 2] (PendingShrinkIsr), writes nothing to ZooKeeper and no /isr_change_notification, and the controller
    receives AlterIsr with its leader epoch and znode version; no controller step is raced by a leader write."""
    model = model_of(scenario())
    s = shrink(model, initial(model))
    assert zk_lai(s, "t", 0) == LeaderAndIsr(0, 0, (0, 1, 2), 0, 1)
    assert pending(s) == (0, 2) and s.broker(0).hosted(TP).isr == (0, 1, 2)  # type: ignore[union-attr]
    assert s.broker(0).pending_isr_changes == () and s.zk.isr_change_notifications == ()
    [event] = s.controller.events
    assert event.kind is EventKind.AlterIsrReceived and event.broker == 0 and event.request_epoch == s.broker(0).epoch
    assert event.isrs_to_alter == ((TP, LeaderAndIsr(0, 0, (0, 2), 0, -1)),)
    assert s.budget.isr_changes == 1
    actions = enabled_actions(model.scenario, s)
    assert all(a.isr_race is None for a in actions)
    # isrState.isInflight: no other change of the partition until the answer
    assert not [a for a in actions if a.kind in (SHRINK, EXPAND)]


def test_controller_writes_the_isr_and_answers_the_leader() -> None:
    """processAlterIsr (2.7.0): the znode gets the leader's LeaderAndIsr with the controller's epoch and version + 1,
    the cache follows, every live broker gets UpdateMetadata and none a LeaderAndIsr; the leader commits the
    answer's ISR and version (handleAlterIsrResponse)."""
    model = model_of(scenario())
    s = process(model, shrink(model, initial(model)))
    written = LeaderAndIsr(0, 0, (0, 2), 1, 1)
    assert zk_lai(s, "t", 0) == written and dict(s.controller.leadership)[TP] == written
    hosted = s.broker(0).hosted(TP)
    assert hosted is not None and (hosted.isr, hosted.zk_version, hosted.pending_isr) == ((0, 2), 1, ())
    assert s.log.isr_updates == ((TP, 0, (0, 1, 2), (0, 2)),)
    assert s.controller.events == ()
    assert sent_by_controller(model, shrink(model, initial(model))) == {b: [RequestKind.UpdateMetadata]
                                                                         for b in (0, 1, 2)}


def sent_by_controller(model: KafkaControllerModel, s: ClusterState) -> dict[int, list[RequestKind]]:
    """The requests the controller's next event sends, by broker (before the brokers apply the UpdateMetadata
    requests at their channels' heads, as the model's step does)."""
    step = Step(model.scenario, s)
    controller.process_next_event(step)
    return {b: [r.kind for r in q] for b, q in step.channels.items()}


def _with_controller_view(s: ClusterState, lai: LeaderAndIsr) -> ClusterState:
    zk = tuple((k, lai if k == TP else v) for k, v in s.zk.partitions)
    leadership = tuple((k, lai if k == TP else v) for k, v in s.controller.leadership)
    return attrs.evolve(s, zk=attrs.evolve(s.zk, partitions=zk),
                        controller=attrs.evolve(s.controller, leadership=leadership))


@pytest.mark.parametrize("version", ["2.7", "3.9"])
@pytest.mark.parametrize(("changed", "error"), [
    (LeaderAndIsr(1, 1, (1, 2), 1, 1), "FENCED_LEADER_EPOCH"),
    (LeaderAndIsr(0, 0, (0, 1), 1, 1), "INVALID_UPDATE_VERSION"),
])
def test_a_stale_request_is_refused_and_the_leader_gives_up(version: str, changed: LeaderAndIsr, error: str) -> None:
    """processAlterIsr: an older leader epoch is FENCED_LEADER_EPOCH; a stale znode version is BADVERSION at the
    write (2.7) or refused before it (3.3+), INVALID_UPDATE_VERSION either way. Nothing is written, the brokers
    still get UpdateMetadata, and the leader keeps its pending ISR until a LeaderAndIsr (it gives up)."""
    model = model_of(scenario(version))
    before = _with_controller_view(shrink(model, initial(model)), changed)
    s = process(model, before)
    assert zk_lai(s, "t", 0) == changed and pending(s) == (0, 2)
    assert any(error in m for m in s.log.messages) and s.controller.events == ()
    assert sent_by_controller(model, before) == {b: [RequestKind.UpdateMetadata] for b in (0, 1, 2)}


def test_stale_broker_epoch_makes_the_leader_send_again() -> None:
    """processAlterIsr: a broker epoch the controller does not hold is STALE_BROKER_EPOCH, a top-level error after
    which AlterIsrManager sends the item again (to the tail of the controller's queue)."""
    model = model_of(scenario())
    s = shrink(model, initial(model))
    live = tuple((b, e + 1 if b == 0 else e) for b, e in s.controller.live_brokers)
    s = process(model, attrs.evolve(s, controller=attrs.evolve(s.controller, live_brokers=live)))
    [event] = s.controller.events
    assert event.kind is EventKind.AlterIsrReceived and pending(s) == (0, 2)
    assert zk_lai(s, "t", 0) == LeaderAndIsr(0, 0, (0, 1, 2), 0, 1)


def test_failover_sends_the_request_to_the_new_controller() -> None:
    """A request the failed controller did not answer reaches the new one after its election (Reelect), which
    writes it (the leader epoch and version still match)."""
    model = model_of(scenario())
    s = take(model, shrink(model, initial(model)), "ControllerFailover")
    assert [e.kind for e in s.controller.events] == [EventKind.Reelect, EventKind.AlterIsrReceived]
    s = process(model, process(model, s))
    assert zk_lai(s, "t", 0) == LeaderAndIsr(0, 0, (0, 2), 1, 2) and pending(s) == ()


def test_older_protocol_keeps_the_leader_write() -> None:
    """At 2.7 with inter.broker.protocol.version 2.6 the leader writes the znode itself (Partition.shrinkIsrWithZk)."""
    model = model_of(scenario(protocol="2.6"))
    s = shrink(model, initial(model))
    assert zk_lai(s, "t", 0) == LeaderAndIsr(0, 0, (0, 2), 1, 1) and s.controller.events == ()
    assert s.broker(0).pending_isr_changes == (TP,)


def test_kip_841_refuses_a_shutting_down_replica_and_the_leader_resets() -> None:
    """3.3 (KAFKA-14140): tryProcessAlterPartition answers INELIGIBLE_REPLICA for a new ISR naming a broker in
    controlled shutdown; the leader returns to its committed ISR (handleAlterPartitionError) and may propose again."""
    model = model_of(scenario("3.9"))
    s = initial(model)
    s = shrink(model, s, follower=1)
    s = process(model, s)  # ISR [0, 2]; follower 1 still fetches
    s = take(model, s, EXPAND, 0, "t", partition=0, replica=1)
    assert pending(s) == (0, 2, 1)
    s = attrs.evolve(s, controller=attrs.evolve(s.controller, shutting_down_brokers=(1,)))
    s = process(model, s)
    assert any("INELIGIBLE_REPLICA" in m for m in s.log.messages)
    assert pending(s) == () and zk_lai(s, "t", 0) == LeaderAndIsr(0, 0, (0, 2), 1, 1)


def test_kip_841_leader_adds_only_followers_its_metadata_cache_holds_alive() -> None:
    """3.3 (KAFKA-14140, Partition.isReplicaIsrEligible: ZkMetadataCache.hasAliveBroker): a caught-up follower the
    leader's metadata cache does not hold alive is not added; 3.2 adds it."""
    for version, offered in (("3.2", True), ("3.3", False)):
        model = model_of(scenario(version))
        s = process(model, shrink(model, initial(model)))
        s = attrs.evolve(s, brokers=tuple(attrs.evolve(b, metadata_live_brokers=(0, 2)) if b.id == 0 else b
                                          for b in s.brokers))
        expansions = [c for c in partition_leader.candidates_of(s, partition_leader.IsrPath.of(model.scenario))
                      if c[3] == EXPAND]
        assert bool(expansions) == offered, version


#: Finding 3 (docs/findings.md) with AlterIsr: the controller serialises ISR changes, the shrink cannot land inside
#: the reassignment's event, and the search is complete and clean.
FINDING_3 = {"2.7": (128, 288, 11), "3.9": (105, 233, 11)}


@pytest.mark.parametrize("version", sorted(FINDING_3))
def test_finding_3_does_not_survive_alter_isr(version: str) -> None:
    """reassignment-isr-shrink-race at 2.7 and 3.9 (their default protocol): no property is violated."""
    result = run_bfs(model_for(with_version(resolve_scenario("reassignment-isr-shrink-race"), version)))
    assert result.outcome.name == "OK" and not result.violations
    assert (result.stats.distinct, result.stats.generated, result.stats.depth) == FINDING_3[version]


def lost_answer_scenario(version: str, kafka_14144: bool) -> str:
    return scenario(version) + f"alter_isr_answers_lost = 1\n[bugs]\nKAFKA_14144 = {str(kafka_14144).lower()}\n"


@pytest.mark.parametrize(("version", "kafka_14144", "answer"), [
    ("2.7", False, None), ("3.3", False, None), ("3.3", True, "INVALID_UPDATE_VERSION"),
    ("2.7", True, "INVALID_UPDATE_VERSION")])
def test_a_lost_alter_isr_answer_and_the_re_send(version: str, kafka_14144: bool, answer: str | None) -> None:
    """The controller writes ISR [0, 2] but its answer is lost: the leader keeps PendingShrinkIsr and sends the same
    request again (BrokerToControllerRequestThread re-queues a disconnected request) with znode version 0. 2.7's
    processAlterIsr and 3.3.0's tryProcessAlterPartition (KAFKA-14144's order, commit 9fda5fcac6b) find the partition
    in the desired state and answer it, and the leader takes ISR [0, 2] at version 1
    (ControllerIntegrationTest.testIdempotentAlterPartition). With KAFKA_14144 (#12032's order) the older partition
    epoch is answered INVALID_UPDATE_VERSION first: the leader gives up and stays pending."""
    model = model_of(lost_answer_scenario(version, kafka_14144))
    s = shrink(model, initial(model))
    assert all(not a.alter_isr_answer_lost or a.kind == "ControllerProcessEvent" for a in model.actions(s))
    s = take(model, s, "ControllerProcessEvent", alter_isr_answer_lost=True)
    assert zk_lai(s, "t", 0) == LeaderAndIsr(0, 0, (0, 2), 1, 1)
    assert pending(s) == (0, 2) and s.budget.alter_isr_answers_lost == 1
    [resent] = s.controller.events
    assert resent.kind is EventKind.AlterIsrReceived and resent.isrs_to_alter[0][1].zk_version == 0
    assert not any(a.alter_isr_answer_lost for a in model.actions(s))  # the bound is reached
    s = process(model, s)
    hosted = s.broker(0).hosted(TP)
    assert hosted is not None
    if answer is None:
        assert (hosted.isr, hosted.zk_version, hosted.pending_isr) == ((0, 2), 1, ())
    else:
        assert any(answer in m for m in s.log.messages)
        assert (hosted.isr, hosted.zk_version, hosted.pending_isr) == ((0, 1, 2), 0, (0, 2))
    assert zk_lai(s, "t", 0) == LeaderAndIsr(0, 0, (0, 2), 1, 1)


def test_kafka_14140_on_lets_a_shutting_down_follower_back_into_the_isr() -> None:
    """Before 3.3 (switch KAFKA_14140 on by default) processAlterIsr writes a new ISR naming a broker in controlled
    shutdown; with the switch off at 3.2 the controller refuses it with OPERATION_NOT_ATTEMPTED (AlterPartition v1,
    inter.broker.protocol.version 3.2) and the leader returns to its committed ISR."""
    for on in (True, False):
        model = model_of(scenario("3.2") + f"[bugs]\nKAFKA_14140 = {str(on).lower()}\n")
        s = process(model, shrink(model, initial(model)))
        s = take(model, s, EXPAND, 0, "t", partition=0, replica=1)
        s = attrs.evolve(s, controller=attrs.evolve(s.controller, shutting_down_brokers=(1,)))
        s = process(model, s)
        if on:
            assert zk_lai(s, "t", 0) == LeaderAndIsr(0, 0, (0, 2, 1), 2, 1) and pending(s) == ()
        else:
            assert any("OPERATION_NOT_ATTEMPTED" in m for m in s.log.messages)
            assert zk_lai(s, "t", 0) == LeaderAndIsr(0, 0, (0, 2), 1, 1) and pending(s) == ()
