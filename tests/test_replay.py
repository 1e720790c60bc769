"""Counterexamples rebuilt by replay, and replays that fail loudly."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from toy_models.counter import Counter
from toy_models.kafka_controller_toy import MC_STUCK, KafkaControllerToy
from toy_models.two_phase_commit import TwoPhaseCommit

from explorer.bfs import run_bfs
from explorer.fingerprint import fingerprint
from explorer.replay import ReplayError, describe_trace, replay, replay_states, run_actions


def test_replay_reproduces_the_discovery_path() -> None:
    """Replaying a counter violation visits exactly the discovery's fingerprints and names each step."""
    model = Counter(3, sum_limit=3)
    [violation] = run_bfs(model).violations
    trace = replay(model, violation)
    assert trace.fingerprints == violation.path
    assert trace.initial == ("x = 0", "y = 0")
    assert len(trace.steps) == 3
    assert {step.action_name for step in trace.steps} <= {"IncX", "IncY"}
    assert all(len(step.changes) == 1 for step in trace.steps)


def test_replay_is_deterministic() -> None:
    """Replaying the same discoveries twice gives equal traces."""
    model = TwoPhaseCommit(3)
    discoveries = run_bfs(model).discoveries
    assert [replay(model, d) for d in discoveries] == [replay(model, d) for d in discoveries]


def test_replay_of_a_transition_finding_ends_with_the_offending_step() -> None:
    """The replayed trace of an action property violation ends with the IncX taken at y = 2."""
    model = Counter(3, inc_x_y_limit=2)
    [violation] = run_bfs(model).violations
    trace = replay(model, violation)
    assert trace.steps[-1].action == "IncX"
    assert trace.steps[-1].changes == ("x: 0 -> 1",)


class ActionOrderOfTheProcess(Counter):
    """A counter whose action order depends on something outside the state, as the iteration order of
    a set of strings depends on the process (hash randomisation): a deliberately broken model."""

    def __init__(self, n: int, *, reverse: bool, inc_x_y_limit: int | None = None) -> None:
        super().__init__(n, inc_x_y_limit=inc_x_y_limit)
        self.reverse = reverse

    def actions(self, state: tuple[int, int]) -> Sequence[str]:
        actions = super().actions(state)
        return list(reversed(actions)) if self.reverse else actions


def test_replay_error_names_the_step_and_the_usual_causes() -> None:
    """A path explored in one 'process' and replayed in another fails at its first step, naming the causes."""
    [violation] = run_bfs(ActionOrderOfTheProcess(3, reverse=False, inc_x_y_limit=1)).violations
    other_process = ActionOrderOfTheProcess(3, reverse=True, inc_x_y_limit=1)
    with pytest.raises(ReplayError) as error:
        replay(other_process, violation)
    message = str(error.value)
    assert "step 1" in message
    assert str(violation.path[1]) in message
    assert "set or dict" in message
    assert "randomness" in message
    assert "wall clock" in message


def test_replay_error_on_an_unknown_initial_state() -> None:
    """A path whose first fingerprint is no initial state is refused."""
    model = Counter(2)
    with pytest.raises(ReplayError, match="No initial state has fingerprint 42"):
        replay_states(model, [42], [])


def test_replay_error_on_a_missing_action() -> None:
    """An action index beyond the enabled actions is refused with the step number."""
    model = Counter(2)
    start = fingerprint(model.encode((0, 0)))
    with pytest.raises(ReplayError, match="step 1: the state has 2 enabled actions"):
        replay_states(model, [start, 0], [5])


def test_run_actions_and_describe_trace_serve_walks() -> None:
    """A walk given as an initial index and action indices is replayed and described step by step."""
    model = Counter(2)
    states = run_actions(model, 0, [0, 1, 1])
    assert states == [(0, 0), (1, 0), (1, 1), (1, 2)]
    trace = describe_trace(model, states, [0, 1, 1])
    assert [step.action for step in trace.steps] == ["IncX", "IncY", "IncY"]
    assert trace.steps[-1].fingerprint == fingerprint(model.encode((1, 2)))
    with pytest.raises(ReplayError, match="initial state 3 does not exist"):
        run_actions(model, 3, [])


def test_replay_of_the_stuck_offline_counterexample() -> None:
    """The toy controller's NeverStuckOffline counterexample replays to a state where the evidence holds."""
    model = KafkaControllerToy(MC_STUCK)
    [violation] = run_bfs(model).violations
    states = replay_states(model, violation.path, violation.action_indices)
    assert model.never_stuck_offline(states[-1]) == violation.evidence
    assert all(model.never_stuck_offline(s) is None for s in states[:-1])
