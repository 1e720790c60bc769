"""Complete searches of the KRaft scenarios that finish, pinned; the images the KRaft state carries equal the replay
of the metadata log on every state of a search; the Spark BFS agrees with the local one on a KRaft scenario."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from explorer.bfs import BfsOptions, run_bfs
from explorer.results import Outcome
from kmc.compose import factory_for, model_for
from model.kraft.records import replay
from model.scenario import load_scenario_file

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


@pytest.mark.parametrize("name", ["kraft-session-expiry", "kraft-last-replica-standing-rf2-elr"])
def test_the_images_carried_in_the_state_are_the_replay_of_the_log(name: str) -> None:
    """On every state of a complete search the controller's image is the replay of the whole metadata log and each
    broker's the replay of the prefix it has replayed; decoding rebuilds them and the state."""
    model = _model(name)
    states = _every_state(model)
    assert len(states) > 1000
    for state in states:
        assert state.image == replay(state.metadata_log)
        for broker in state.brokers:
            assert broker.image == replay(state.metadata_log[:broker.metadata_offset])
        decoded = model.decode(model.encode(state))
        assert decoded == state
        assert decoded.image == state.image
        assert [b.image for b in decoded.brokers] == [b.image for b in state.brokers]


#: name -> (outcome, distinct, generated, depth, queue, {property: trace length}), the local BFS's complete search.
PINNED = {
    "kraft-session-expiry": (Outcome.OK, 2838, 9705, 13, 0, {
        "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1, "sometimes_kraft_SessionExpiry": 1,
        "sometimes_kraft_ReplayMetadataRecord": 2, "sometimes_kraft_UnfenceBroker": 2,
        "sometimes_kraft_record_acknowledged": 5}),
    "kraft-last-replica-standing-rf2": (Outcome.VIOLATION, 5691, 10771, 10, 1356, {
        "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1, "sometimes_kraft_SessionExpiry": 1,
        "sometimes_kraft_UncleanShutdown": 1, "sometimes_kraft_ReplayMetadataRecord": 2,
        "sometimes_kraft_UnfenceBroker": 2, "sometimes_kraft_BrokerRegistration": 3,
        "sometimes_kraft_record_acknowledged": 3, "kraft_no_acknowledged_record_lost": 9}),
    "kraft-last-replica-standing-rf2-elr": (Outcome.OK, 8213, 18494, 16, 0, {
        "sometimes_kraft_Fetch": 1, "sometimes_kraft_Produce": 1, "sometimes_kraft_SessionExpiry": 1,
        "sometimes_kraft_UncleanShutdown": 1, "sometimes_kraft_ReplayMetadataRecord": 2,
        "sometimes_kraft_UnfenceBroker": 2, "sometimes_kraft_BrokerRegistration": 3,
        "sometimes_kraft_record_acknowledged": 3}),
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_pinned_complete_search(name: str) -> None:
    outcome, distinct, generated, depth, queue, discoveries = PINNED[name]
    result = run_bfs(_model(name))
    stats = result.stats
    assert (result.outcome, stats.distinct, stats.generated, stats.depth, stats.queue) == (
        outcome, distinct, generated, depth, queue)
    assert {d.property: d.trace_length for d in result.discoveries} == discoveries


def test_last_replica_standing_rf2_trace() -> None:
    """The shortest violation: KIP-966's last replica standing, the restarted last ISR member elected without the
    acknowledged record (ELR off). The follower fetches the record and the high watermark past it (the record is
    acknowledged); the leader shuts down uncleanly, losing its log; the follower's session expires and the
    controller shrinks the ISR to the dead leader, whose session then expires too (the ISR keeps its last
    member); the leader restarts and, as the only ISR member, is elected with an empty log while the follower
    holding the record is fenced. (BFS breaks ties among equal-length traces by the encoding: other 9-step
    orders are equally short.)"""
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
def test_spark_bfs_agrees_with_the_local_bfs_on_a_kraft_scenario(tmp_path: Path) -> None:
    """The Spark BFS, its workers rebuilding the KRaft model from the scenario's text, gives the local BFS's counts
    and violation trace."""
    from spark_explore.bfs import SparkBfsOptions, run_spark_bfs

    scenario = load_scenario_file(SCENARIOS / "kraft-last-replica-standing-rf2.toml")
    local = run_bfs(model_for(scenario), BfsOptions())
    on_spark = run_spark_bfs(factory_for(scenario), SparkBfsOptions(tmp_path / "run", master="local[2]",
                                                                    driver_seconds=0))
    assert on_spark.outcome is local.outcome is Outcome.VIOLATION
    assert (on_spark.stats.distinct, on_spark.stats.generated, on_spark.stats.depth, on_spark.stats.queue) == (
        local.stats.distinct, local.stats.generated, local.stats.depth, local.stats.queue)
    assert [(d.property, d.path, d.action_indices) for d in on_spark.discoveries] == [
        (d.property, d.path, d.action_indices) for d in local.discoveries]
