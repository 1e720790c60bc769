"""The Hypothesis state machine on the toy models: shrunk violations that replay and render like BFS
discoveries, sometimes properties found or reported missing, seeds, the example database, model
crashes, and machines that draw their model."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test
from toy_models.counter import Counter
from toy_models.kafka_controller_toy import MC_STUCK, KafkaControllerToy
from toy_models.two_phase_commit import TwoPhaseCommit

from explorer.bfs import run_bfs
from explorer.hypothesis_machine import (
    HypothesisOptions,
    ModelCrash,
    PropertyViolation,
    machine_for,
    machine_over,
    run_hypothesis,
)
from explorer.replay import replay
from explorer.results import Outcome
from explorer.simulation import CHOOSE_SUCCESSOR
from reports.json_report import render_json
from reports.text import render_text

#: Settings for machines run directly in these tests: a fixed seed's worth of determinism comes
#: from the profile (derandomized in CI); these keep them short.
QUICK = settings(max_examples=50, stateful_step_count=12, deadline=None, suppress_health_check=list(HealthCheck))


def test_state_violation_is_shrunk_to_the_shortest_trace_and_replays() -> None:
    """On the counter with x + y < 4, the violation comes back shrunk to 4 steps, and replays to its fingerprints."""
    model = Counter(3, sum_limit=4)
    result = run_hypothesis(model, HypothesisOptions(max_examples=100, depth=10))
    assert result.outcome is Outcome.VIOLATION
    assert result.exit_code == 1
    [violation] = result.violations
    assert violation.property == "sum_below_limit"
    assert violation.trace_length == 4
    assert replay(model, violation).fingerprints == violation.path
    assert result.details["shortest_violating_prefix"] == 4


def test_transition_violation_ends_with_the_offending_step() -> None:
    """An action property violation's trace ends with the IncX taken at y = 2, shrunk to 3 steps as BFS finds it."""
    model = Counter(3, inc_x_y_limit=2)
    result = run_hypothesis(model, HypothesisOptions(max_examples=100, depth=10))
    [violation] = result.violations
    assert violation.property == "inc_x_while_y_below_limit"
    trace = replay(model, violation)
    assert [step.action for step in trace.steps] == ["IncY", "IncY", "IncX"]
    assert violation.trace_length == run_bfs(model).violations[0].trace_length


def test_a_discovery_renders_with_the_explore_reports() -> None:
    """A Hypothesis result renders with the text and JSON reports of `kmc explore`, its trace included."""
    model = Counter(3, sum_limit=4)
    result = run_hypothesis(model, HypothesisOptions(max_examples=100, depth=10))
    traces = {d.property: replay(model, d) for d in result.discoveries}
    text = render_text(result, traces)
    assert "Error: Invariant sum_below_limit is violated." in text
    assert "engine hypothesis" in text
    document = render_json(result, traces)
    [violation] = [d for d in document["discoveries"] if d["violation"]]
    assert violation["trace_length"] == 4 and len(violation["trace"]) == 4
    assert document["details"]["examples"] == result.details["examples"]


def test_sometimes_properties_found_and_never_found() -> None:
    """Without a violation, the counter's reachable sometimes properties are examples and y_exceeds_n is
    reported missing."""
    model = Counter(3)
    result = run_hypothesis(model, HypothesisOptions(max_examples=100, depth=10))
    assert result.outcome is Outcome.NONE_IN_SAMPLE
    assert {d.property for d in result.discoveries} == {"x_reaches_n", "corner_by_inc_y"}
    assert result.never_found == ("y_exceeds_n",)
    for discovery in result.discoveries:
        assert replay(model, discovery).fingerprints == discovery.path
    assert result.stats.distinct == 16  # every state of the 4 x 4 grid was visited


def test_two_phase_commit_holds_and_commits() -> None:
    """Two-phase commit has no violation and, drawing any successor, its sometimes properties are found
    (none reported missing)."""
    model = TwoPhaseCommit(2)
    # With three resource managers, seed 0 drawing a family first does not reach commit_agreement
    # within 1,000 examples (a commit needs nine steps free of TmAbort and RmChooseToAbort), while
    # drawing any successor does within 300; with two, 100 examples suffice.
    result = run_hypothesis(model, HypothesisOptions(max_examples=100, depth=14, choice=CHOOSE_SUCCESSOR))
    assert result.outcome is Outcome.NONE_IN_SAMPLE
    assert result.never_found == ()
    assert result.discoveries


def test_stuck_toy_controller_violation_is_found_by_bfs_too() -> None:
    """The toy controller's NeverStuckOffline violation that Hypothesis finds, BFS finds as well, never longer."""
    model = KafkaControllerToy(MC_STUCK)
    result = run_hypothesis(model, HypothesisOptions(max_examples=300, depth=20))
    [violation] = result.violations
    assert violation.property == "NeverStuckOffline"
    assert replay(model, violation).fingerprints == violation.path
    [bfs_violation] = run_bfs(model).violations
    assert bfs_violation.property == violation.property
    assert bfs_violation.trace_length <= violation.trace_length


def test_same_seed_same_result_and_choices_agree() -> None:
    """Two runs with one seed report the same discoveries and counts; drawing any successor finds the same
    shortest violation."""
    model = Counter(4, sum_limit=5)
    first = run_hypothesis(model, HypothesisOptions(max_examples=60, depth=12, seed=3))
    second = run_hypothesis(model, HypothesisOptions(max_examples=60, depth=12, seed=3))
    assert first.discoveries == second.discoveries
    assert (first.stats.distinct, first.stats.generated) == (second.stats.distinct, second.stats.generated)
    by_successor = run_hypothesis(model, HypothesisOptions(max_examples=60, depth=12, choice=CHOOSE_SUCCESSOR))
    assert [d.trace_length for d in by_successor.violations] == [d.trace_length for d in first.violations] == [5]


def test_example_database_replays_a_failure_first(tmp_path: Path) -> None:
    """A failure saved in the example database is the first example of the next run with the same key."""
    model = KafkaControllerToy(MC_STUCK)
    options = HypothesisOptions(max_examples=300, depth=20, database=tmp_path / "db", database_key=b"toy")
    first = run_hypothesis(model, options)
    assert first.outcome is Outcome.VIOLATION
    assert any((tmp_path / "db").iterdir())
    again = run_hypothesis(model, options)
    assert again.details["first_violation_after_examples"] == 1
    assert again.violations == first.violations
    other_key = run_hypothesis(model, HypothesisOptions(max_examples=300, depth=20, database=tmp_path / "db",
                                                        database_key=b"another model"))
    assert other_key.details["first_violation_after_examples"] > 1


class _Exploding(Counter):
    """The counter, except that computing the successor (2, 1) raises."""

    def next_state(self, state: tuple[int, int], action: str) -> tuple[int, int] | None:
        child = super().next_state(state, action)
        if child == (2, 1):
            raise RuntimeError("boom")
        return child


def test_an_exception_in_the_model_names_the_path() -> None:
    """An exception inside a transition fails the run with a ModelCrash naming the steps that led to the state."""
    with pytest.raises(ModelCrash) as crash:
        run_hypothesis(_Exploding(3), HypothesisOptions(max_examples=100, depth=10))
    message = str(crash.value)
    assert "RuntimeError: boom" in message
    assert "IncX" in message or "IncY" in message


def test_the_failure_message_tells_the_counterexample() -> None:
    """Run as a test, the machine fails with PropertyViolation whose message is the shrunk counterexample,
    step by step."""
    with pytest.raises(PropertyViolation) as failure:
        run_state_machine_as_test(machine_for(Counter(3, sum_limit=2)), settings=QUICK)
    message = str(failure.value)
    assert message.startswith("Invariant sum_below_limit is violated after 2 steps.")
    assert "State 0 (initial):" in message and "Step 2:" in message and "Step 3:" not in message


def _counter_of(n: int) -> Counter:
    return Counter(n, sum_limit=3)


def test_a_drawn_model_is_shrunk_with_the_path() -> None:
    """A machine drawing its model too shrinks both: among counters of size 1 to 5, x + y < 3 fails first at
    size 2, in 3 steps."""
    machine = machine_over(st.integers(1, 5), _counter_of)
    with pytest.raises(PropertyViolation) as failure:
        run_state_machine_as_test(machine, settings=QUICK)
    assert failure.value.discovery.trace_length == 3
    model = _counter_of(2)
    assert replay(model, failure.value.discovery).fingerprints == failure.value.discovery.path


def test_stutters_when_no_successor_is_left() -> None:
    """Without restart, a deadlocked state (the counter's corner) makes the step rule a stutter, not an error."""
    result = run_hypothesis(Counter(1), HypothesisOptions(max_examples=20, depth=10, restart=False))
    assert result.outcome is Outcome.NONE_IN_SAMPLE
    assert result.details["longest_example"] == 2
    assert result.details["walks"] == result.details["examples"]


def test_restarts_a_walk_that_ended_within_its_example() -> None:
    """With restart, an example whose walk reached the counter's corner goes on with walks from the initial state."""
    result = run_hypothesis(Counter(1), HypothesisOptions(max_examples=20, depth=10))
    assert result.outcome is Outcome.NONE_IN_SAMPLE
    assert result.details["longest_example"] == 2
    assert result.details["walks"] > 2 * result.details["examples"]


def test_the_expansion_cache_changes_nothing_but_time() -> None:
    """Runs with and without the expansion cache, same seed, take the same steps and find the same discoveries."""
    model = TwoPhaseCommit(3)
    cached = run_hypothesis(model, HypothesisOptions(max_examples=30, depth=14, seed=2, cache_size=50))
    uncached = run_hypothesis(model, HypothesisOptions(max_examples=30, depth=14, seed=2, cache_size=0))
    assert cached.discoveries == uncached.discoveries
    assert cached.stats.distinct == uncached.stats.distinct
    assert cached.details["steps"] == uncached.details["steps"]
