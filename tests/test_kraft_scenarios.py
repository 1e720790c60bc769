"""Complete searches of the KRaft scenarios that finish, pinned (every shipped KRaft scenario, among them one per KRaft
bug switch with its switch on); each switch breaks its property with the switch on and nothing with it off; the
images the KRaft state carries equal the replay of the metadata log on every state of a search; the Spark BFS agrees
with the local one on a KRaft scenario."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_scenarios_pinned import Pinned

from explorer.bfs import BfsOptions, run_bfs
from explorer.results import Outcome
from invariants.kraft_properties import KRAFT_REGISTRY
from kmc.compose import factory_for, model_for, resolve_scenario, shipped_scenarios
from model.kraft.actions import KINDS, Action, ActionKind
from model.kraft.kraft_model import KraftControllerModel
from model.kraft.records import replay
from model.scenario import BUGS, KRAFT_BUGS, ScenarioError, load_scenario, load_scenario_file, with_bug

SCENARIOS = Path(__file__).resolve().parent.parent / "model" / "scenario" / "scenarios" / "kraft"


def _model(name: str) -> Any:
    return model_for(load_scenario_file(SCENARIOS / f"{name}.toml"))


def _every_state(model: Any) -> list[Any]:
    """Every reachable state (a plain breadth-first walk over the model contract, through the codec)."""
    init = model.init_states()[0]
    seen = {model.encode(init): init}
    frontier = [init]
    while frontier:
        successors = []
        for state in frontier:
            for action in model.actions(state):
                after = model.next_state(state, action)
                if after is not None and (data := model.encode(after)) not in seen:
                    seen[data] = after
                    successors.append(after)
        frontier = successors
    return list(seen.values())


@pytest.mark.parametrize("name", ["kraft-session-expiry", "kraft-last-replica-standing-rf2-elr",
                                  "kraft-topic-deletion"])
def test_the_images_carried_in_the_state_are_the_replay_of_the_log(name: str) -> None:
    """On every state of a complete search the controller's image is the replay of the whole metadata log and each
    broker's the replay of the prefix it has replayed; decoding rebuilds them and the state."""
    model = _model(name)
    states = _every_state(model)
    assert len(states) > 800
    for state in states:
        assert state.image == replay(state.metadata_log)
        for broker in state.brokers:
            assert broker.image == replay(state.metadata_log[:broker.metadata_offset])
        decoded = model.decode(model.encode(state))
        assert decoded == state
        assert decoded.image == state.image
        assert [b.image for b in decoded.brokers] == [b.image for b in state.brokers]


def _bounded(stale: str) -> Any:
    """kraft-session-expiry (three brokers, the leader's session may expire) with the bound stale_metadata_brokers."""
    text = (SCENARIOS / "kraft-session-expiry.toml").read_text(encoding="utf-8")
    return model_for(load_scenario(text + f"stale_metadata_brokers = {stale}\n"))


@pytest.mark.parametrize("stale", ["[]", "[2]"])
def test_a_broker_the_bound_keeps_caught_up_is_where_its_replay_step_would_take_it(stale: str) -> None:
    """Under [bounds] stale_metadata_brokers, every running broker the bound does not name is, on every state of a
    complete search, what a ReplayMetadataRecord step to the log's end leaves unchanged: the bound's replay is that
    step, ReplicaManager.applyDelta included (a broker the controller elects leads in its replica state)."""
    model = _bounded(stale)
    lagging = set(model.scenario.kraft.stale_metadata_brokers)
    states = _every_state(model)
    assert len(states) > 100
    replay_step = KINDS[ActionKind.ReplayMetadataRecord].handler
    for state in states:
        for broker in state.brokers:
            if broker.alive and broker.id not in lagging:
                assert broker.metadata_offset == len(state.metadata_log)
                assert replay_step(model.scenario, state, Action(ActionKind.ReplayMetadataRecord, broker.id)) == state


def test_the_broker_the_controller_elects_under_the_bound_leads_and_takes_produce_and_fetch() -> None:
    """kraft-session-expiry with stale_metadata_brokers = []: once the leader's session expires, handleBrokerFenced
    elects broker 1, which replays the record within the step and leads (makeLeader, epoch 1); a produce to it and
    broker 2's fetch from it are offered."""
    model = _bounded("[]")
    state = model.init_states()[0]
    expiry = Action(ActionKind.SessionExpiry, 0)
    assert expiry in model.actions(state)
    state = model.next_state(state, expiry)
    assert state.image.partitions[0].leader == 1
    lead = state.brokers[1].leading[0]
    assert lead is not None and (lead.leader_epoch, lead.isr) == (1, (1, 2))
    assert {Action(ActionKind.Produce, 1, 0), Action(ActionKind.Fetch, 2, 0)} <= set(model.actions(state))


#: name -> what the local BFS's complete search gives (discoveries: property -> trace length).
PINNED: dict[str, Pinned] = {
    "kraft-session-expiry": Pinned(Outcome.OK, distinct=842, generated=2324, depth=13,
        queue=0, discoveries={
        "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1, "sometimes_kraft_SessionExpiry": 1,
        "sometimes_kraft_ReplayMetadataRecord": 2, "sometimes_kraft_UnfenceBroker": 2,
        "sometimes_kraft_record_acknowledged": 5}),
    "kraft-last-replica-standing-rf2": Pinned(Outcome.VIOLATION, distinct=3149, generated=5855, depth=10,
        queue=610, discoveries={
        "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1, "sometimes_kraft_SessionExpiry": 1,
        "sometimes_kraft_UncleanShutdown": 1, "sometimes_kraft_ReplayMetadataRecord": 2,
        "sometimes_kraft_UnfenceBroker": 2, "sometimes_kraft_BrokerRegistration": 3,
        "sometimes_kraft_record_acknowledged": 3, "kraft_no_acknowledged_record_lost": 9}),
    "kraft-last-replica-standing-rf2-elr": Pinned(Outcome.OK, distinct=4932, generated=10414, depth=15,
        queue=0, discoveries={
        "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1, "sometimes_kraft_SessionExpiry": 1,
        "sometimes_kraft_UncleanShutdown": 1, "sometimes_kraft_ReplayMetadataRecord": 2,
        "sometimes_kraft_UnfenceBroker": 2, "sometimes_kraft_BrokerRegistration": 3,
        "sometimes_kraft_record_acknowledged": 3}),
    # a broker crash (its log kept) and restart, a controlled shutdown, an AlterPartition: complete and clean
    "kraft-default": Pinned(Outcome.OK, distinct=75091, generated=138096, depth=17, queue=0, discoveries={
        "sometimes_kraft_AlterPartition": 1, "sometimes_kraft_BeginControlledShutdown": 1,
        "sometimes_kraft_BrokerCrash": 1, "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1,
        "sometimes_kraft_ControlledShutdownHeartbeat": 2, "sometimes_kraft_SessionExpiry": 2,
        "sometimes_kraft_BrokerRegistration": 3, "sometimes_kraft_UnfenceBroker": 4,
        "sometimes_kraft_record_acknowledged": 4}),
    # the admin's requests: CreateTopics (StripedReplicaPlacer) and DeleteTopics, brokers deleting on replay
    "kraft-topic-deletion": Pinned(Outcome.OK, distinct=16877, generated=45011, depth=20, queue=0, discoveries={
        "sometimes_kraft_BeginControlledShutdown": 1, "sometimes_kraft_CreateTopics": 1,
        "sometimes_kraft_DeleteTopics": 1, "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1,
        "sometimes_kraft_ControlledShutdownHeartbeat": 2, "sometimes_kraft_ReplayMetadataRecord": 2,
        "sometimes_kraft_BrokerRegistration": 3, "sometimes_kraft_record_acknowledged": 3,
        "sometimes_kraft_UnfenceBroker": 5}),
    # KAFKA-16540: min.insync.replicas lowered under an ELR (ELR on, trunk of 2024-10-25)
    "kraft-min-isr-lowered-elr": Pinned(Outcome.VIOLATION, distinct=4715, generated=8805, depth=7, queue=2231,
        discoveries={
        "sometimes_kraft_Fetch": 1, "sometimes_kraft_IncrementalAlterConfigs": 1, "sometimes_kraft_Produce": 1,
        "sometimes_kraft_SessionExpiry": 1, "sometimes_kraft_ReplayMetadataRecord": 2,
        "sometimes_kraft_UnfenceBroker": 2, "sometimes_kraft_record_acknowledged": 3,
        "kraft_no_acknowledged_record_lost": 6}),
    # one scenario per KRaft bug switch (model/scenario/kraft_bugs.py), its switch on
    "kraft-kafka-13173": Pinned(Outcome.VIOLATION, distinct=32, generated=40, depth=2, queue=25, discoveries={
        "sometimes_kraft_Fetch": 1, "sometimes_kraft_MaybeFenceStaleBrokers": 1, "sometimes_kraft_Produce": 1,
        "sometimes_kraft_SessionExpiry": 1, "kraft_leader_in_isr": 1, "kraft_no_fenced_leader": 1,
        "sometimes_kraft_ReplayMetadataRecord": 2, "sometimes_kraft_UnfenceBroker": 2}),
    "kraft-kafka-13916": Pinned(Outcome.VIOLATION, distinct=752, generated=1424, depth=5, queue=417, discoveries={
        "sometimes_kraft_AlterPartition": 1, "sometimes_kraft_BeginControlledShutdown": 1,
        "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1, "sometimes_kraft_SessionExpiry": 1,
        "sometimes_kraft_ControlledShutdownHeartbeat": 2, "sometimes_kraft_ReplayMetadataRecord": 2,
        "sometimes_kraft_UnfenceBroker": 2, "sometimes_kraft_record_acknowledged": 2,
        "kraft_isr_members_eligible": 4}),
    "kraft-kafka-13916-leader-election": Pinned(Outcome.VIOLATION, distinct=457, generated=846, depth=5, queue=239,
        discoveries={
        "sometimes_kraft_BeginControlledShutdown": 1, "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1,
        "sometimes_kraft_SessionExpiry": 1, "sometimes_kraft_ControlledShutdownHeartbeat": 2,
        "sometimes_kraft_ReplayMetadataRecord": 2, "sometimes_kraft_UnfenceBroker": 2,
        "sometimes_kraft_record_acknowledged": 3, "kraft_no_leader_in_controlled_shutdown": 4}),
    "kraft-kafka-14617": Pinned(Outcome.VIOLATION, distinct=11795, generated=23612, depth=12, queue=1332,
        discoveries={
        "sometimes_kraft_AlterPartition": 1, "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1,
        "sometimes_kraft_SessionExpiry": 1, "sometimes_kraft_UncleanShutdown": 1,
        "sometimes_kraft_ReplayMetadataRecord": 2, "sometimes_kraft_UnfenceBroker": 2,
        "sometimes_kraft_BrokerRegistration": 3, "sometimes_kraft_record_acknowledged": 3,
        "kraft_no_acknowledged_record_lost": 11}),
    "kraft-kafka-15586": Pinned(Outcome.VIOLATION, distinct=3433, generated=6331, depth=10, queue=699, discoveries={
        "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1, "sometimes_kraft_SessionExpiry": 1,
        "sometimes_kraft_UncleanShutdown": 1, "sometimes_kraft_ReplayMetadataRecord": 2,
        "sometimes_kraft_UnfenceBroker": 2, "sometimes_kraft_BrokerRegistration": 3,
        "sometimes_kraft_record_acknowledged": 3, "kraft_no_acknowledged_record_lost": 9}),
}


#: The three-broker KIP-966 scenarios (stale_metadata_brokers = []): 12-36 CPU s each.
PINNED_SLOW: dict[str, Pinned] = {
    # the KIP-966 TLA+ specification's bounds (docs/kraft.md, bench/kip966.py)
    "kraft-kip-966-spec": Pinned(Outcome.OK, distinct=58313, generated=128387, depth=17, queue=0, discoveries={
        "sometimes_kraft_AlterPartition": 1, "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1,
        "sometimes_kraft_SessionExpiry": 1, "sometimes_kraft_UncleanShutdown": 1, "sometimes_kraft_UnfenceBroker": 2,
        "sometimes_kraft_BrokerRegistration": 3, "sometimes_kraft_record_acknowledged": 4}),
    "kraft-last-replica-standing": Pinned(Outcome.VIOLATION, distinct=79632, generated=138963, depth=10,
        queue=26518, discoveries={
        "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1, "sometimes_kraft_SessionExpiry": 1,
        "sometimes_kraft_UncleanShutdown": 1, "sometimes_kraft_UnfenceBroker": 2,
        "sometimes_kraft_BrokerRegistration": 3, "sometimes_kraft_record_acknowledged": 4,
        "kraft_no_acknowledged_record_lost": 9}),
    "kraft-last-replica-standing-elr": Pinned(Outcome.OK, distinct=167297, generated=370173, depth=17,
        queue=0, discoveries={
        "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1, "sometimes_kraft_SessionExpiry": 1,
        "sometimes_kraft_UncleanShutdown": 1, "sometimes_kraft_UnfenceBroker": 2,
        "sometimes_kraft_BrokerRegistration": 3, "sometimes_kraft_record_acknowledged": 4}),
}

#: Every shipped KRaft scenario's pinned search (test_scenarios_pinned and test_versions read it).
KRAFT_PINNED: dict[str, Pinned] = {**PINNED, **PINNED_SLOW}

#: Each KRaft switch's scenario with the switch off: complete and clean (the switch's violation is its alone).
PINNED_SWITCH_OFF: dict[str, Pinned] = {
    "KAFKA_13173": Pinned(Outcome.OK, distinct=1700, generated=3978, depth=12, queue=0, discoveries={
        "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1, "sometimes_kraft_SessionExpiry": 1,
        "sometimes_kraft_ReplayMetadataRecord": 2, "sometimes_kraft_UnfenceBroker": 2,
        "sometimes_kraft_record_acknowledged": 3}),
    "KAFKA_13916": Pinned(Outcome.OK, distinct=3552, generated=7610, depth=16, queue=0, discoveries={
        "sometimes_kraft_AlterPartition": 1, "sometimes_kraft_BeginControlledShutdown": 1,
        "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1, "sometimes_kraft_SessionExpiry": 1,
        "sometimes_kraft_ControlledShutdownHeartbeat": 2, "sometimes_kraft_ReplayMetadataRecord": 2,
        "sometimes_kraft_UnfenceBroker": 2, "sometimes_kraft_record_acknowledged": 2}),
    "KAFKA_13916_LEADER_ELECTION": Pinned(Outcome.OK, distinct=1827, generated=3750, depth=13, queue=0, discoveries={
        "sometimes_kraft_BeginControlledShutdown": 1, "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1,
        "sometimes_kraft_SessionExpiry": 1, "sometimes_kraft_ControlledShutdownHeartbeat": 2,
        "sometimes_kraft_ReplayMetadataRecord": 2, "sometimes_kraft_UnfenceBroker": 2,
        "sometimes_kraft_record_acknowledged": 3}),
    "KAFKA_14617": Pinned(Outcome.OK, distinct=13274, generated=27974, depth=18, queue=0, discoveries={
        "sometimes_kraft_AlterPartition": 1, "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1,
        "sometimes_kraft_SessionExpiry": 1, "sometimes_kraft_UncleanShutdown": 1,
        "sometimes_kraft_ReplayMetadataRecord": 2, "sometimes_kraft_UnfenceBroker": 2,
        "sometimes_kraft_BrokerRegistration": 3, "sometimes_kraft_record_acknowledged": 3}),
    # kraft-last-replica-standing-rf2-elr's search: the same cluster and bounds
    "KAFKA_15586": PINNED["kraft-last-replica-standing-rf2-elr"],
}

#: The shortest violations (BFS's tie-break among equal-length traces); kraft-kafka-13173's one step breaks two
#: properties.
TRACES = {
    # broker 0's session expires and broker 1, elected, leads at once (the bound's replay runs applyDelta); its
    # ISR shrinks to itself, it loses its log and, still the ISR, is elected again
    "kraft-last-replica-standing": [
        "SessionExpiry(broker=0)", "Produce(broker=1, orders-0)", "Fetch(broker=2, orders-0)",
        "Fetch(broker=2, orders-0)", "SessionExpiry(broker=2)", "UncleanShutdown(broker=1)",
        "SessionExpiry(broker=1)", "BrokerRegistration(broker=1)", "UnfenceBroker(broker=1)"],
    # both sessions expire before one check: the second fencing's record, built against the image before the first,
    # keeps the leader the first elected (broker 1) and writes ISR [0]
    "kraft-kafka-13173": ["MaybeFenceStaleBrokers(brokers=[0, 1])"],
    # the follower, fenced, still fetches; its fetch state takes it back into the ISR
    "kraft-kafka-13916": [
        "SessionExpiry(broker=1)", "Fetch(broker=1, orders-0)", "ReplayMetadataRecord(broker=0)",
        "AlterPartition(broker=0, orders-0, newIsr=[0, 1])"],
    # the ISR's last member, in controlled shutdown and leaderless, is elected again when broker 1 is unfenced
    "kraft-kafka-13916-leader-election": [
        "SessionExpiry(broker=1)", "BeginControlledShutdown(broker=0)", "ControlledShutdownHeartbeat(broker=0)",
        "UnfenceBroker(broker=1)"],
    # the fetch state of broker 1's first incarnation takes its second, with an empty log, into the ISR
    "kraft-kafka-14617": [
        "Produce(broker=0, orders-0)", "Fetch(broker=1, orders-0)", "Fetch(broker=1, orders-0)",
        "UncleanShutdown(broker=1)", "SessionExpiry(broker=1)", "BrokerRegistration(broker=1)",
        "ReplayMetadataRecord(broker=1)", "UnfenceBroker(broker=1)", "ReplayMetadataRecord(broker=0)",
        "AlterPartition(broker=0, orders-0, newIsr=[0, 1])", "SessionExpiry(broker=0)"],
    # broker 1 joins the ELR below min ISR 2; min ISR lowered to 1 leaves it there; broker 0 acknowledges a record
    # alone and, fenced, hands leadership to broker 1 from the ELR
    "kraft-min-isr-lowered-elr": [
        "SessionExpiry(broker=1)", "IncrementalAlterConfigs(topic=orders, min.insync.replicas=1)",
        "UnfenceBroker(broker=1)", "ReplayMetadataRecord(broker=0)", "Produce(broker=0, orders-0)",
        "SessionExpiry(broker=0)"],
    # broker 0 joins the ELR, broker 1 (leader, the ISR's last member) loses its log and is elected from the ELR
    "kraft-kafka-15586": [
        "Produce(broker=0, orders-0)", "Fetch(broker=1, orders-0)", "SessionExpiry(broker=0)",
        "Fetch(broker=1, orders-0)", "UncleanShutdown(broker=1)", "SessionExpiry(broker=1)",
        "BrokerRegistration(broker=1)", "ReplayMetadataRecord(broker=1)", "UnfenceBroker(broker=1)"],
}


def _check_pinned(name: str, pinned: dict[str, Pinned]) -> None:
    want = pinned[name]
    model = _model(name)
    result = run_bfs(model)
    stats = result.stats
    assert (result.outcome, stats.distinct, stats.generated, stats.depth, stats.queue) == (
        want.outcome, want.distinct, want.generated, want.depth, want.queue)
    assert {d.property: d.trace_length for d in result.discoveries} == want.discoveries
    if name in TRACES:  # every property the search stops on, reached by one trace
        assert result.violations
        assert all(_steps(model, violation) == TRACES[name] for violation in result.violations)


@pytest.mark.parametrize("name", sorted(PINNED))
def test_pinned_complete_search(name: str) -> None:
    _check_pinned(name, PINNED)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PINNED_SLOW))
def test_pinned_three_broker_kip_966_search(name: str) -> None:
    """KIP-966's verdicts on three brokers: ELR off loses an acknowledged record, ELR on does not."""
    _check_pinned(name, PINNED_SLOW)


def test_every_shipped_kraft_scenario_is_pinned_and_runs_by_name() -> None:
    """The pinned tables cover exactly the KRaft scenarios that ship (model/scenario/scenarios/kraft), each resolved
    by its name as `kmc explore NAME` resolves it."""
    kraft = {name for name in shipped_scenarios() if resolve_scenario(name).kraft is not None}
    assert kraft == set(KRAFT_PINNED) == {p.stem for p in SCENARIOS.glob("*.toml")}


def test_every_kraft_switch_names_its_property_and_a_shipped_scenario_that_has_it_on() -> None:
    """Each KRaft switch is named after its JIRA (a JIRA's second fix after the JIRA and what it changes), off by
    default at 3.9 (every fix in the table is older), breaks a KRaft property, and names a shipped KRaft scenario that
    turns it on and is pinned as violating that property."""
    for bug in KRAFT_BUGS.values():
        jira = bug.jira.replace("-", "_")
        assert bug.name == jira or (bug.name.startswith(jira + "_") and jira in KRAFT_BUGS), bug.name
        assert bug.name not in BUGS
        assert bug.fixed_in is not None and not bug.default_for((3, 9))
        assert bug.breaks in KRAFT_REGISTRY, bug.name
        scenario = resolve_scenario(bug.scenario)
        assert scenario.kraft is not None and scenario.kraft.bug(bug.name) and bug.name in scenario.bugs
        assert PINNED[bug.scenario].outcome is Outcome.VIOLATION and bug.breaks in PINNED[bug.scenario].discoveries
    assert set(PINNED_SWITCH_OFF) == set(KRAFT_BUGS)


@pytest.mark.parametrize("name", sorted(PINNED_SWITCH_OFF))
def test_kraft_switch_off_search_is_complete_and_clean(name: str) -> None:
    """With its switch off (3.9's code), the switch's scenario is searched completely and violates nothing."""
    want = PINNED_SWITCH_OFF[name]
    result = run_bfs(model_for(with_bug(resolve_scenario(KRAFT_BUGS[name].scenario), name, False)))
    stats = result.stats
    assert (result.outcome, stats.distinct, stats.generated, stats.depth, stats.queue) == (
        want.outcome, want.distinct, want.generated, want.depth, want.queue)
    assert {d.property: d.trace_length for d in result.discoveries} == want.discoveries


def test_a_kraft_scenario_refuses_a_zookeeper_switch_and_the_other_way_round() -> None:
    """[bugs] of a KRaft scenario takes the KRaft table's switches only, and a ZooKeeper scenario the ZooKeeper
    table's, each refusal one sentence naming the switch."""
    kraft = (SCENARIOS / "kraft-session-expiry.toml").read_text(encoding="utf-8")
    with pytest.raises(ScenarioError, match="KAFKA_7235 is a ZooKeeper controller switch"):
        load_scenario(kraft + "\n[bugs]\nKAFKA_7235 = true\n")
    with pytest.raises(ScenarioError, match="must be true or false"):
        load_scenario(kraft + "\n[bugs]\nKAFKA_14617 = 1\n")
    zk = '[cluster]\nbrokers = [0, 1]\n[[topics]]\nname = "t"\nreplicas = [[0, 1]]\n'
    with pytest.raises(ScenarioError, match="KAFKA_14617 is a KRaft controller switch"):
        load_scenario(zk + "[bugs]\nKAFKA_14617 = true\n")


def test_kmc_bugs_lists_the_kraft_switches_after_the_zookeeper_ones() -> None:
    """`kmc bugs` lists the KRaft table after the ZooKeeper one: each switch with its property and scenario, then
    the KRaft fixes considered and left out; `--verify --only` runs a KRaft switch's scenario on and off."""
    from click.testing import CliRunner

    from kmc.cli import main
    from model.scenario import NOT_MODELLED_KRAFT_BUGS

    listed = CliRunner().invoke(main, ["bugs"])
    assert listed.exit_code == 0
    heads = [line.split()[0].rstrip(":") for line in listed.stdout.splitlines() if line and not line.startswith(" ")]
    tail = len(KRAFT_BUGS) + 1 + len(NOT_MODELLED_KRAFT_BUGS)
    assert heads[-tail:] == [*KRAFT_BUGS, heads[-tail + len(KRAFT_BUGS)], *NOT_MODELLED_KRAFT_BUGS]
    assert "    versions: none modelled: a KRaft scenario takes 3.9 only (fixed in 3.5.0)" in listed.stdout
    verified = CliRunner().invoke(main, ["bugs", "--verify", "--only", "KAFKA_13916"])
    assert verified.exit_code == 0
    assert "switch on:  violation, 752 states" in verified.stdout and "reproduced: yes" in verified.stdout


@pytest.mark.parametrize("name", ["kraft-session-expiry", "kraft-last-replica-standing-rf2",
                                  "kraft-last-replica-standing-rf2-elr"])
def test_merging_unobservable_replays_keeps_every_verdict_and_its_depth(name: str) -> None:
    """model.kraft.reduction on the two-broker scenarios: the reduced search reports the same properties, with
    shortest traces no longer, as the search with every replay a step of its own (fewer states: 2,838 -> 842,
    8,213 -> 4,932 complete)."""
    full = run_bfs(KraftControllerModel(_model(name).scenario, _model(name).properties(), merge_replays=False))
    reduced = run_bfs(_model(name))
    assert reduced.outcome is full.outcome
    lengths = {d.property: d.trace_length for d in full.discoveries}
    assert {d.property for d in reduced.discoveries} == set(lengths)
    assert all(d.trace_length <= lengths[d.property] for d in reduced.discoveries)
    assert reduced.stats.distinct < full.stats.distinct


def test_lowering_min_isr_loses_a_record_only_with_elr() -> None:
    """kraft-min-isr-lowered-elr with eligible leader replicas off (3.9's only production setting): the ISR never
    empties and broker 1, outside it, is never elected; complete and clean."""
    text = (SCENARIOS / "kraft-min-isr-lowered-elr.toml").read_text(encoding="utf-8")
    result = run_bfs(model_for(load_scenario(text.replace("eligible_leader_replicas_enable = true",
                                                          "eligible_leader_replicas_enable = false"))))
    stats = result.stats
    assert (result.outcome, stats.distinct, stats.generated, stats.depth, stats.queue) == (
        Outcome.OK, 9681, 23198, 13, 0)
    assert "sometimes_kraft_IncrementalAlterConfigs" in {d.property for d in result.discoveries}


def test_last_replica_standing_rf2_trace() -> None:
    """The shortest violation: KIP-966's last replica standing, the restarted last ISR member elected without the
    acknowledged record (ELR off): the follower copies the record and reports it (acked), the leader stops
    uncleanly, the follower's session expires (the ISR shrinks to the dead leader), the leader's expires (the ISR
    keeps its last member), and the leader registers and is unfenced. (BFS's tie-break among the 9-step traces
    follows the encoding.)"""
    model = _model("kraft-last-replica-standing-rf2")
    result = run_bfs(model)
    [violation] = result.violations
    steps = _steps(model, violation)
    assert steps == [
        "Produce(broker=0, orders-0)", "Fetch(broker=1, orders-0)", "Fetch(broker=1, orders-0)",
        "UncleanShutdown(broker=0)", "SessionExpiry(broker=1)", "SessionExpiry(broker=0)",
        "BrokerRegistration(broker=0)", "ReplayMetadataRecord(broker=0)", "UnfenceBroker(broker=0)"]


def _steps(model: Any, discovery: Any) -> list[str]:
    state = model.init_states()[0]
    steps = []
    for index in discovery.action_indices:
        action = model.actions(state)[index]
        steps.append(model.describe_action(action))
        state = model.next_state(state, action)
    return steps


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("name", ["kraft-last-replica-standing-rf2", "kraft-kafka-13916", "kraft-min-isr-lowered-elr"])
def test_spark_bfs_agrees_with_the_local_bfs_on_a_kraft_scenario(tmp_path: Path, name: str) -> None:
    """The Spark BFS, its workers rebuilding the KRaft model from the scenario's text (a bug switch among it), gives
    the local BFS's counts and violation trace."""
    from spark_explore.bfs import SparkBfsOptions, run_spark_bfs

    scenario = load_scenario_file(SCENARIOS / f"{name}.toml")
    local = run_bfs(model_for(scenario), BfsOptions())
    on_spark = run_spark_bfs(factory_for(scenario), SparkBfsOptions(tmp_path / "run", master="local[2]",
                                                                    driver_seconds=0))
    assert on_spark.outcome is local.outcome is Outcome.VIOLATION
    assert (on_spark.stats.distinct, on_spark.stats.generated, on_spark.stats.depth, on_spark.stats.queue) == (
        local.stats.distinct, local.stats.generated, local.stats.depth, local.stats.queue)
    assert [(d.property, d.path, d.action_indices) for d in on_spark.discoveries] == [
        (d.property, d.path, d.action_indices) for d in local.discoveries]
