"""The KRaft model (model/kraft): scenario input, PartitionChangeBuilder's elections and KIP-966's last replica
standing, replayed step by step through the model contract."""

from __future__ import annotations

from pathlib import Path

import pytest

from invariants.kraft_properties import no_acknowledged_record_lost
from kmc.compose import model_for
from model.kraft.actions import Action, ActionKind
from model.kraft.kraft_model import KraftControllerModel
from model.kraft.partition_change_builder import build
from model.kraft.records import NO_LEADER, PartitionRegistration, replay
from model.scenario import ScenarioError, load_scenario

SCENARIOS = Path(__file__).resolve().parent.parent / "model" / "scenario" / "scenarios" / "kraft"


def _scenario(name: str, elr: bool | None = None):
    text = (SCENARIOS / f"{name}.toml").read_text()
    if elr is not None:
        text = text.replace("eligible_leader_replicas_enable = false",
                            f"eligible_leader_replicas_enable = {str(elr).lower()}")
    return load_scenario(text)


def test_a_controller_kmc_does_not_model_is_refused_in_one_sentence() -> None:
    """[kafka] controller takes "zk" or "kraft" only."""
    text = (SCENARIOS / "kraft-default.toml").read_text().replace('controller = "kraft"', 'controller = "raft"')
    with pytest.raises(ScenarioError, match=r"\[kafka\] controller = 'raft' is not a controller kmc models"):
        load_scenario(text)


def test_a_kraft_scenario_at_another_version_is_refused() -> None:
    """The KRaft model reads Kafka 3.9.0-rc3 and refuses other versions."""
    text = (SCENARIOS / "kraft-default.toml").read_text().replace('version = "3.9"', 'version = "3.7"')
    with pytest.raises(ScenarioError, match="not modelled for the KRaft controller"):
        load_scenario(text)


def test_shrinking_the_last_isr_member_keeps_it_without_elr_and_moves_it_to_the_elr_with_it() -> None:
    """PartitionChangeBuilder: without ELR the ISR never becomes empty; with ELR (KIP-966) it does, and the
    replicas removed below min.insync.replicas become eligible leader replicas."""
    partition = PartitionRegistration(replicas=(0, 1, 2), isr=(0, 2), leader=0)
    for elr, isr, record_elr in ((False, None, None), (True, (), (0, 2))):
        record = build(0, partition, is_acceptable_leader=lambda r: False, min_isr=2,
                       eligible_leader_replicas_enabled=elr, unclean=False, target_isr=[])
        assert record is not None
        assert record.leader == NO_LEADER
        assert record.isr == isr
        assert record.eligible_leader_replicas == record_elr


def _take(model, state, kind: ActionKind, broker: int, partition: int = -1):
    action = Action(kind, broker, partition)
    assert action in model.actions(state), (action, [model.describe_action(a) for a in model.actions(state)])
    after = model.next_state(state, action)
    assert after is not None
    assert model.decode(model.encode(after)) == after
    return after


def _unreduced(scenario):
    """The model with every replay a step of its own (no model.kraft.reduction, no stale_metadata_brokers bound),
    so that a trace can name each broker's replay."""
    return KraftControllerModel(scenario, merge_replays=False)


LAST_REPLICA_STANDING = [
    (ActionKind.Produce, 0, 0),  # broker 0 leads orders-0; one record, epoch 0
    (ActionKind.Fetch, 1, 0), (ActionKind.Fetch, 2, 0),  # the followers copy it
    (ActionKind.Fetch, 1, 0), (ActionKind.Fetch, 2, 0),  # and tell the leader: the high watermark passes it, acked
    (ActionKind.SessionExpiry, 1, -1), (ActionKind.SessionExpiry, 2, -1),  # the ISR shrinks to [0]
    (ActionKind.UncleanShutdown, 0, -1),  # the leader loses its unflushed log
    (ActionKind.SessionExpiry, 0, -1),  # fenced: no leader
    (ActionKind.BrokerRegistration, 0, -1), (ActionKind.ReplayMetadataRecord, 0, -1),
    (ActionKind.UnfenceBroker, 0, -1),  # unfenced: elected again if it is still the ISR
]


@pytest.mark.parametrize(("elr", "lost"), [(False, True), (True, False)])
def test_last_replica_standing_loses_an_acknowledged_record_without_eligible_leader_replicas(
        elr: bool, lost: bool) -> None:
    """KIP-966's scenario: without ELR the restarted last ISR member is elected without the acknowledged record;
    with ELR it is removed from the ISR and ELR on registration and the partition waits for a follower."""
    model = _unreduced(_scenario("kraft-last-replica-standing", elr))
    state = model.init_states()[0]
    for kind, broker, partition in LAST_REPLICA_STANDING:
        state = _take(model, state, kind, broker, partition)
    assert state.acknowledged == ((0, 0, 0),)
    leader = replay(state.metadata_log).partitions[0].leader
    assert (no_acknowledged_record_lost(state) is not None) is lost
    assert leader == (0 if not elr else NO_LEADER)
    if elr:  # broker 2, an eligible leader replica with the record, is elected once unfenced
        state = _take(model, state, ActionKind.ReplayMetadataRecord, 2)
        state = _take(model, state, ActionKind.UnfenceBroker, 2)
        assert replay(state.metadata_log).partitions[0].leader == 2
        assert no_acknowledged_record_lost(state) is None


#: kraft-default with the broker failure an unclean shutdown (the host stops: the log loses its unflushed tail) rather
#: than a process crash; docs/kraft.md's "last replica standing through a controlled shutdown" reads its violation.
DEFAULT_UNCLEAN_SHUTDOWN = '''\
name = "kraft-default-unclean-shutdown"
description = """
The KRaft controller of Kafka 3.9: three brokers, topic "orders" with one partition on all three (min.insync.replicas
2, eligible leader replicas off as in 3.9's default). A producer writes one record with acks=all; one broker may stop
uncleanly (losing its unflushed log) and restart, another may shut down through its heartbeats, and a leader may
send one AlterPartition. Exercises registration and unfencing, session expiry and fencing with the elections
handleBrokerFenced triggers, controlled shutdown, stale metadata images, fetching and the high watermark."""

[cluster]
brokers = [{ id = 0 }, { id = 1 }, { id = 2 }]

[[topics]]
name = "orders"
replicas = [[0, 1, 2]]

[kafka]
controller = "kraft"
version = "3.9"
min_insync_replicas = 2
eligible_leader_replicas_enable = false

[bounds]
unclean_shutdowns = 1
restarts = 1
controlled_shutdowns = 1
produces = 1
alter_partitions = 1
stale_metadata_brokers = []  # every broker replays within each step: docs/kraft.md says what this hides
'''

#: DEFAULT_UNCLEAN_SHUTDOWN's shortest violation (10 steps, found by the local BFS at depth 11: 52,876 distinct
#: states, 96,810 generated): KIP-966's last replica standing reached through a follower's lost acknowledgement, an
#: ISR shrink and the leader's controlled shutdown. The scenario's bound (stale_metadata_brokers = []) replays every
#: running broker within each step.
DEFAULT_VIOLATION = [
    Action(ActionKind.Produce, 0, 0),  # broker 0 leads orders-0, ISR [0, 1, 2]: one record in epoch 0
    Action(ActionKind.Fetch, 2, 0),  # broker 2 copies it; broker 1 does not fetch
    Action(ActionKind.Fetch, 2, 0),  # broker 2's fetch offset passes it; broker 1 (ISR, offset 0) holds the HW at 0
    Action(ActionKind.UncleanShutdown, 2),  # broker 2 loses its unflushed log; its session has not expired
    Action(ActionKind.AlterPartition, 0, 0, (0, 2)),  # maybeShrinkIsr drops broker 1: ISR [0, 2], HW 1, acked
    Action(ActionKind.BeginControlledShutdown, 0),  # SIGTERM: broker 0's heartbeats carry wantShutDown
    Action(ActionKind.ControlledShutdownHeartbeat, 0),  # leads: CONTROLLED_SHUTDOWN, leader 2 with ISR [2]
    Action(ActionKind.SessionExpiry, 2),  # fenced: leader -1, the ISR stays [2] (it cannot become empty)
    Action(ActionKind.BrokerRegistration, 2),  # a new incarnation, fenced, with an empty log
    Action(ActionKind.UnfenceBroker, 2),  # handleBrokerUnfenced: elected from the ISR [2], without the record
]


@pytest.mark.parametrize(("elr", "lost"), [(False, True), (True, False)])
def test_an_unclean_shutdown_in_kraft_default_is_the_last_replica_standing_through_a_controlled_shutdown(
        elr: bool, lost: bool) -> None:
    """kraft-default with an unclean shutdown for its failure, its violation step by step through the scenario's
    model: with ELR off (Kafka 3.9's default) a follower's fetch offset acknowledges a record it then loses uncleanly,
    the leader's ISR shrink and its controlled shutdown (neither looks at min.insync.replicas) leave that follower the
    ISR's only member and its leader, and its new incarnation, still the ISR, is elected again without the record,
    which only broker 0 (in controlled shutdown, now a follower) holds. With ELR (KIP-966) the controlled shutdown
    puts broker 0 in the ELR and broker 2's registration takes it out of the ISR and ELR: no leader, nothing lost."""
    model = model_for(load_scenario(DEFAULT_UNCLEAN_SHUTDOWN.replace(
        "eligible_leader_replicas_enable = false", f"eligible_leader_replicas_enable = {str(elr).lower()}")))
    state = model.init_states()[0]
    for action in DEFAULT_VIOLATION:
        assert action in model.actions(state), model.describe_action(action)
        after = model.next_state(state, action)
        assert after is not None
        state = after
    assert state.acknowledged == ((0, 0, 0),)
    partition = replay(state.metadata_log).partitions[0]
    assert (no_acknowledged_record_lost(state) is not None) is lost
    broker0, broker2 = state.brokers[0], state.brokers[2]
    assert broker0.logs[0].records == (0,) and broker0.leading[0] is None  # deposed by applyDelta, record kept
    if elr:
        assert (partition.leader, partition.isr, partition.elr) == (NO_LEADER, (), (0,))
        assert broker2.leading[0] is None
    else:
        assert (partition.leader, partition.isr) == (2, (2,))
        assert broker2.leading[0] is not None and broker2.logs[0].records == ()  # leads, by applyDelta, empty


#: DEFAULT_VIOLATION with broker 2's process crashing (kraft-default's failure) where its host failed
CRASH_INSTEAD = [Action(ActionKind.BrokerCrash, 2) if a.kind is ActionKind.UncleanShutdown else a
                 for a in DEFAULT_VIOLATION]


@pytest.mark.parametrize("elr", [False, True])
def test_a_broker_crash_keeps_the_log_and_registers_as_an_unclean_shutdown(elr: bool) -> None:
    """kraft-default's BrokerCrash in place of the unclean shutdown: broker 2's log keeps the record through its crash
    and restart, so with ELR off its new incarnation, elected from the ISR [2], leads with the record and nothing is
    lost; with ELR on registerBroker's handleBrokerUncleanShutdown takes it out of the ISR and ELR all the same (the
    controller cannot tell a crash that kept the log from one that lost it), leaving broker 0 the ELR and no leader."""
    model = model_for(_scenario("kraft-default", elr))
    state = model.init_states()[0]
    for action in CRASH_INSTEAD:
        assert action in model.actions(state), model.describe_action(action)
        after = model.next_state(state, action)
        assert after is not None
        state = after
        if action.kind is ActionKind.BrokerCrash:
            assert state.brokers[2].logs[0].records == (0,) and not state.brokers[2].alive
            assert state.budget.crashes == 1 and state.budget.unclean_shutdowns == 0
    assert state.acknowledged == ((0, 0, 0),)
    assert no_acknowledged_record_lost(state) is None
    partition = replay(state.metadata_log).partitions[0]
    broker2 = state.brokers[2]
    assert broker2.logs[0].records == (0,)
    if elr:
        assert (partition.leader, partition.isr, partition.elr) == (NO_LEADER, (), (0,))
    else:
        assert (partition.leader, partition.isr) == (2, (2,))
        assert broker2.leading[0] is not None


@pytest.mark.parametrize("value", ["-1", '"one"', "1.5"])
def test_a_bad_crashes_bound_is_refused_in_one_sentence(value: str) -> None:
    """[bounds] crashes takes a whole number from 0."""
    text = (SCENARIOS / "kraft-default.toml").read_text().replace("crashes = 1", f"crashes = {value}")
    with pytest.raises(ScenarioError, match=r"crashes"):
        load_scenario(text)


def test_damaged_state_bytes_are_refused_with_value_error() -> None:
    """The KRaft codec answers bytes it did not write (truncated, padded, another shape, too deeply nested) with
    ValueError, never with a state or another exception."""
    model = model_for(load_scenario((SCENARIOS / "kraft-last-replica-standing-rf2.toml").read_text()))
    data = model.encode(model.init_states()[0])
    assert model.encode(model.decode(data)) == data
    for damaged in (data[:-1], data + b"]", b"[1,2]", b"[[],[],[[1]],[],[]]", b"[" * 100_000, b"", b"\xff"):
        with pytest.raises(ValueError):
            model.decode(damaged)


def test_stale_metadata_brokers_naming_an_unknown_broker_is_refused_in_one_sentence() -> None:
    """[bounds] stale_metadata_brokers takes distinct broker ids of [cluster]."""
    text = (SCENARIOS / "kraft-default.toml").read_text().replace("stale_metadata_brokers = []",
                                                                  "stale_metadata_brokers = [7]")
    with pytest.raises(ScenarioError, match=r"stale_metadata_brokers = \[7\] must be a list of distinct broker ids"):
        load_scenario(text)


def test_the_sequence_diagram_has_a_lane_for_the_controller_the_metadata_log_and_each_broker() -> None:
    """The KRaft view's lanes are the producer (the scenario sends produce requests), the controller, the metadata
    log and one per broker; an unfencing heartbeat is drawn as the broker's BrokerHeartbeatRequest, the records the
    controller appends, and its response."""
    from explorer.replay import view_of
    from kmc.compose import model_for, resolve_scenario

    model = model_for(resolve_scenario("kraft-kafka-13916-leader-election"))
    state = model.init_states()[0]
    assert [lane["id"] for lane in view_of(model, state)["lanes"]] == [
        "producer", "controller", "metadata log", "broker 0", "broker 1"]
    for name in ("SessionExpiry(broker=1)", "BeginControlledShutdown(broker=0)",
                 "ControlledShutdownHeartbeat(broker=0)", "UnfenceBroker(broker=1)"):
        action = next(a for a in model.actions(state) if model.describe_action(a) == name)
        prev, state = state, model.next_state(state, action)
    step = view_of(model, state, prev, action)
    assert step["actor"] == "broker 1"
    assert [(m["from"], m["to"], m["label"]) for m in step["messages"]] == [
        ("broker 1", "controller", "BrokerHeartbeatRequest(brokerEpoch=1, currentMetadataOffset=8, wantFence=false)"),
        ("controller", "metadata log", "BrokerRegistrationChangeRecord(brokerId=1, brokerEpoch=1, fenced=-1)"),
        ("controller", "metadata log", "PartitionChangeRecord(orders-0, leader=0)"),
        ("controller", "broker 1", "BrokerHeartbeatResponse(isFenced=false)")]


def test_a_leaderless_partition_with_an_active_isr_member_violates_live_isr_member_leads() -> None:
    """kraft_live_isr_member_leads fires on a controller image whose partition has no leader while its ISR names
    an active broker, and not once that broker is fenced (no election can pick it then)."""
    import attrs

    from invariants.kraft_properties import live_isr_member_leads

    state = model_for(_scenario("kraft-session-expiry")).init_states()[0]
    assert live_isr_member_leads(state) is None
    image = state.image
    [(index, partition)] = image.existing()[:1]
    member = partition.isr[0]
    leaderless = attrs.evolve(partition, leader=NO_LEADER)
    partitions = tuple(leaderless if i == index else p for i, p in enumerate(image.partitions))
    planted = attrs.evolve(state, image=attrs.evolve(image, partitions=partitions))
    evidence = live_isr_member_leads(planted)
    assert evidence is not None and member in evidence["active"]
    fenced = tuple(attrs.evolve(b, fenced=True) for b in image.brokers)
    assert live_isr_member_leads(attrs.evolve(planted, image=attrs.evolve(planted.image, brokers=fenced))) is None


def test_a_replay_without_apply_delta_violates_caught_up_broker_acts_on_image(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """kraft_caught_up_broker_acts_on_image holds on kraft-session-expiry, and catches a broker that replays the
    metadata log without ReplicaManager.applyDelta (its image the controller's, its replicas never leading): the
    replay the model's [bounds] stale_metadata_brokers once took."""
    import attrs

    from explorer.bfs import BfsOptions, run_bfs
    from explorer.results import Outcome
    from model.kraft import replica_manager

    scenario = attrs.evolve(_scenario("kraft-session-expiry"), properties=["kraft_caught_up_broker_acts_on_image"])
    assert run_bfs(model_for(scenario), BfsOptions()).outcome is Outcome.OK
    monkeypatch.setattr(replica_manager, "apply_delta", lambda image, broker: broker)
    result = run_bfs(model_for(scenario), BfsOptions())
    assert result.outcome is Outcome.VIOLATION
    assert [d.property for d in result.violations] == ["kraft_caught_up_broker_acts_on_image"]
