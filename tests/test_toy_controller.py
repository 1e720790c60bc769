"""The port of the TLA+ toy controller does exactly TLC's work (the benchmark's "same work, same numbers")."""

from __future__ import annotations

import pytest
from toy_models.kafka_controller_toy import (
    MC,
    MC_STUCK,
    NONE,
    KafkaControllerToy,
    OfflinePartition,
    OnlinePartition,
    ToyConfig,
    ToyState,
)

from explorer.bfs import run_bfs
from explorer.replay import replay_states
from explorer.results import ExplorationResult, Outcome

#: TLC on MC.cfg (bench/controller-toy/README.md): successors generated per action (-coverage).
TLC_GENERATED_PER_ACTION = {
    "CreateTopic": 210,
    "InitialElection": 8_758,
    "BrokerFailure": 112_456,
    "BrokerStartup": 87_235,
    "ElectLeader": 9_947,
    "IsrShrink": 8_829,
    "IsrExpand": 12_578,
    "StartDeleteTopic": 15_501,
    "DeletionSucceeded": 257_808,
    "RetryIneligible": 98_586,
    "CompleteDeletion": 2_107,
}


@pytest.fixture(scope="module")
def mc_result() -> ExplorationResult:
    return run_bfs(KafkaControllerToy(MC))


def test_mc_matches_tlc_counts(mc_result: ExplorationResult) -> None:
    """MC.cfg: 168,927 distinct states, 614,016 generated (incl. the initial state), depth 28, as TLC."""
    stats = mc_result.stats
    assert (stats.distinct, stats.generated, stats.depth) == (168_927, 614_016, 28)
    assert stats.queue == 0


def test_mc_matches_tlc_coverage(mc_result: ExplorationResult) -> None:
    """MC.cfg: successors generated per action are TLC's -coverage numbers."""
    assert {a.name: a.generated for a in mc_result.stats.actions} == TLC_GENERATED_PER_ACTION
    assert sum(a.distinct for a in mc_result.stats.actions) == mc_result.stats.distinct - 1


def test_mc_invariants_and_epoch_monotonic_hold(mc_result: ExplorationResult) -> None:
    """The five invariants and EpochMonotonic hold on MC.cfg."""
    assert mc_result.outcome is Outcome.OK
    assert mc_result.discoveries == ()
    assert mc_result.never_found == ()


def test_stuck_offline_has_a_four_step_counterexample(mc_result: ExplorationResult) -> None:
    """MC_stuck.cfg: NeverStuckOffline fails with a shortest trace of 4 steps, after the level is finished."""
    result = run_bfs(KafkaControllerToy(MC_STUCK))
    assert result.outcome is Outcome.VIOLATION
    [violation] = result.violations
    assert violation.property == "NeverStuckOffline"
    assert violation.trace_length == 4
    # The search stops after finishing depth 4, with depth 5 generated: the distinct states known
    # after level 4 of the complete MC search (TLC stops at once and reports 87).
    assert result.stats.distinct == mc_result.stats.levels[4].distinct_total == 452
    assert result.stats.depth == 5


def take(model: KafkaControllerToy, state: ToyState, action: str) -> ToyState:
    """The successor of ``state`` by the enabled action described as ``action`` (``BrokerFailure(b1)``)."""
    [chosen] = [a for a in model.actions(state) if model.describe_action(a) == action]
    successor = model.next_state(state, chosen)
    assert successor is not None
    return successor


def walk(model: KafkaControllerToy, *actions: str) -> ToyState:
    [state] = model.init_states()
    for action in actions:
        state = take(model, state, action)
    return state


def test_initial_election_chooses_the_first_live_replica() -> None:
    """InitialElection(p1) with b1 down makes b2 (the next in p1's assignment) leader, ISR = live replicas."""
    model = KafkaControllerToy(MC)
    state = walk(model, "BrokerFailure(b1)", "CreateTopic", "InitialElection(p1)")
    assert state.leader[0] == 2
    assert model.broker_names(state.isr[0]) == ["b2", "b3"]
    assert state.pstate[0] == OnlinePartition


def test_elect_leader_has_one_successor_per_isr_choice() -> None:
    """ElectLeader(p1) offers one action per live, online ISR member, as TLC's \\E b \\in isr[p]."""
    model = KafkaControllerToy(MC)
    state = walk(model, "CreateTopic", "InitialElection(p1)", "BrokerFailure(b1)")
    assert state.pstate[0] == OfflinePartition and state.leader[0] == NONE
    elections = [model.describe_action(a) for a in model.actions(state) if a.name == "ElectLeader"]
    assert elections == ["ElectLeader(p1, b2)", "ElectLeader(p1, b3)"]


def test_broker_failure_keeps_the_last_isr_member() -> None:
    """The controller removes a dead broker from the ISR unless it is the last member."""
    model = KafkaControllerToy(MC)
    state = walk(model, "CreateTopic", "InitialElection(p2)", "IsrShrink(p2, b3)", "BrokerFailure(b2)")
    assert model.broker_names(state.isr[1]) == ["b2"]
    assert state.pstate[1] == OfflinePartition


def test_states_survive_encode_and_decode() -> None:
    """decode(encode(s)) == s along a counterexample, so Spark workers can ship toy states."""
    model = KafkaControllerToy(MC_STUCK)
    [violation] = run_bfs(model).violations
    for state in replay_states(model, violation.path, violation.action_indices):
        assert model.decode(model.encode(state)) == state


def test_unknown_invariant_is_rejected() -> None:
    """A config naming an invariant the toy does not have is refused, listing the known ones."""
    with pytest.raises(ValueError, match="unknown invariants \\['Typo'\\]"):
        ToyConfig(assignment=((1,),), invariants=("Typo",))
