"""Cross-checks between the explorers on the shipped bug scenarios.

Every violation BFS finds on a shipped scenario, simulation and Hypothesis find too, within the
default budgets of ``kmc simulate`` (seed 0), with a trace that replays and is never shorter than
BFS's (BFS finds shortest traces); and a violation Hypothesis finds, BFS finds as well. BFS's
results are the pinned ones of ``tests/test_scenarios_pinned.py`` (each bug scenario selects the
properties it is about, so BFS reports exactly its violation there).

The scenarios whose violation needs thousands of walks or examples run in the slow set, and two
violations Hypothesis finds within its default budget only after minutes (``LONG_FOR_HYPOTHESIS``, run
with ``KMC_LONG_CROSS_CHECKS=1``): see the README's performance section for how many walks and examples
each needs. One violation Hypothesis does not find within its default budget at all (``BEYOND_HYPOTHESIS``)
is skipped with the reason.
"""

from __future__ import annotations

import functools
import os

import pytest
from test_scenarios_pinned import BUG_SWITCH_SCENARIOS, PINNED

from explorer.bfs import run_bfs
from explorer.contract import Model
from explorer.hypothesis_machine import HypothesisOptions, run_hypothesis
from explorer.replay import replay
from explorer.results import Discovery, ExplorationResult, Outcome
from explorer.simulation import SimulationOptions, run_simulation
from kmc.commands.simulate import DEFAULT_EXAMPLE_DEPTH, DEFAULT_MAX_EXAMPLES, DEFAULT_WALK_DEPTH, DEFAULT_WALKS
from kmc.compose import model_for, resolve_scenario
from model.zk.kafka_model import KafkaControllerModel

BUG_SCENARIOS = ("kafka-6650", "kafka-7235", "planted-complete-on-first-success", "reassignment-during-deletion",
                 "stale-deletion-response", "stray-log-adopted-on-recreation", "stray-log-after-deletion",
                 "topic-recreation", "reassignment-isr-shrink-race", "preferred-election-without-leader",
                 "offline-election-during-controlled-shutdown", "stray-log-refused-on-recreation",
                 *BUG_SWITCH_SCENARIOS)

#: Scenarios whose violation takes the explorer more than a few seconds to find (measured on a
#: loaded 2-core machine; see the README's performance section).
SLOW_FOR_SIMULATION = {"stray-log-after-deletion", "stray-log-adopted-on-recreation", "stray-log-refused-on-recreation",
                       "topic-recreation"}
SLOW_FOR_HYPOTHESIS = {"kafka-6650", "stale-deletion-response", "reassignment-during-deletion", "topic-recreation",
                       "election-retry", "kafka-6082", "kafka-7482", "kafka-9212",
                       # BUG_SWITCH_SCENARIOS: 2 to 29 s each to the violation on a loaded machine (seed 0)
                       "kafka-3083", "kafka-3096", "kafka-3143", "kafka-3175", "kafka-4214", "kafka-5083",
                       "kafka-5310", "kafka-6193", "kafka-6612", "kafka-9672", "kafka-9866", "kafka-14808",
                       "kafka-10314"}

#: Violations Hypothesis finds within its default budget only after minutes: their cross-checks run when
#: KMC_LONG_CROSS_CHECKS=1 (they would take the slow set past its budget). One walk choosing an action family
#: first finds them with probability 3.5e-4 and 2.1e-4 (exact, over the 23,140 and 7,858 states a walk can
#: reach; ``bench/explorers.py --only odds``); an example that restarts its walk when it ends ran 1.5 to 2.4
#: walks, about 35 walks a second here, so the first failure took 367 to 4,415 examples, and shrinking
#: (which has to drop the walks before the violating one) 60 s to 310 s more. Measured
#: on a loaded 2-core machine (load 5), default budget: stray-log-after-deletion, seed 0: first failure at
#: example 1,961 (126 s), 210 s with shrinking, trace 21 steps; seed 1: example 2,109 (169 s), 480 s, 20
#: steps. stray-log-adopted-on-recreation, seed 0: example 367 (34 s), 141 s, 26 steps; seed 1: example
#: 2,462 (149 s), 237 s, 23 steps; seed 2: example 4,415 (355 s), 418 s, 27 steps; these tests: 120 s and
#: 88 s. Reweighting the draw does not close the gap: the violations are 4 of 23,140 states, and no action
#: family's weight (x0.25 to x4) nor a walk-history bias (least-taken family, not the last family) moves a
#: walk's odds by more than 3x; swarm testing lowers them (9.1e-5: the trace needs all five families).
LONG_FOR_HYPOTHESIS = {
    "stray-log-after-deletion": "found at seed 0 after 1,961 examples, 210 s with shrinking on a loaded machine",
    "stray-log-adopted-on-recreation": "found at seed 0 after 367 examples, 141 s with shrinking on a loaded machine",
}

#: Violations Hypothesis does not find at seed 0 within its default budget at all: no cross-check can pass, so
#: it is skipped with the reason, and the simulation cross-check stands for the sampling explorers.
#: stray-log-refused-on-recreation takes stray-log-adopted-on-recreation's walk to 24 steps and is judged at its
#: end by a quiescence property (live_brokers_host_their_replicas): 5,000 examples at seed 0 ran 187 s on a loaded
#: machine without it; simulation's default budget finds it (77 s).
BEYOND_HYPOTHESIS = {
    "stray-log-refused-on-recreation": "not found by Hypothesis at seed 0 within its default budget of 5,000 "
                                       "examples (187 s on a loaded machine); simulation finds it",
}
LONG_CROSS_CHECKS = os.environ.get("KMC_LONG_CROSS_CHECKS") == "1"


def _params(slow: set[str], long: dict[str, str] | None = None,
            beyond: dict[str, str] | None = None) -> list[object]:
    def marks(name: str) -> list[pytest.MarkDecorator]:
        if beyond and name in beyond:
            return [pytest.mark.slow, pytest.mark.skip(reason=beyond[name])]
        if long and name in long:
            return [pytest.mark.slow, pytest.mark.skipif(not LONG_CROSS_CHECKS,
                                                         reason=f"{long[name]}; KMC_LONG_CROSS_CHECKS=1 runs it")]
        return [pytest.mark.slow] if name in slow else []

    return [pytest.param(name, id=name, marks=marks(name)) for name in BUG_SCENARIOS]


@functools.cache
def _model(name: str) -> KafkaControllerModel:
    return model_for(resolve_scenario(name))


def bfs_violations(name: str) -> dict[str, int]:
    """The properties BFS finds violated on a shipped scenario, with its (shortest) trace lengths."""
    pinned = PINNED[name]
    properties = {p.name: p for p in _model(name).properties()}
    return {prop: length for prop, length in pinned.discoveries.items() if properties[prop].kind.is_violation}


def test_the_bug_scenarios_are_the_shipped_violations() -> None:
    """The scenarios checked here are exactly the shipped ones whose BFS outcome is a violation."""
    assert {name for name, pinned in PINNED.items() if pinned.outcome is Outcome.VIOLATION} == set(BUG_SCENARIOS)


def check_agrees_with_bfs(name: str, result: ExplorationResult) -> None:
    """``result`` violates what BFS violates, each trace replays and none is shorter than BFS's."""
    model = _model(name)
    expected = bfs_violations(name)
    assert result.outcome is Outcome.VIOLATION
    found = {d.property: d for d in result.violations}
    assert set(expected) <= set(found), f"{name}: BFS violates {sorted(expected)}, {result.engine}: {sorted(found)}"
    for discovery in result.violations:
        assert replay(model, discovery).fingerprints == discovery.path
        assert discovery.trace_length >= bfs_shortest(model, name, discovery)


def bfs_shortest(model: Model[object, object], name: str, discovery: Discovery) -> int:
    """BFS's shortest trace to a violation of ``discovery``'s property: pinned when BFS reports it on the
    scenario, else found by a BFS that checks that property alone (which then must find it)."""
    pinned = bfs_violations(name)
    if discovery.property in pinned:
        return pinned[discovery.property]
    assert isinstance(model, KafkaControllerModel)
    alone = KafkaControllerModel(model.scenario, [p for p in model.properties() if p.name == discovery.property])
    [violation] = run_bfs(alone).violations
    return violation.trace_length


@pytest.mark.parametrize("name", _params(SLOW_FOR_SIMULATION))
def test_simulation_finds_what_bfs_finds(name: str) -> None:
    """Random walks with kmc simulate's default budget and seed find the scenario's BFS violation, with
    a trace that replays and is no shorter than BFS's."""
    result = run_simulation(_model(name), SimulationOptions(walks=DEFAULT_WALKS, depth=DEFAULT_WALK_DEPTH, seed=0))
    check_agrees_with_bfs(name, result)


@pytest.mark.parametrize("name", _params(SLOW_FOR_HYPOTHESIS, LONG_FOR_HYPOTHESIS, BEYOND_HYPOTHESIS))
def test_hypothesis_finds_what_bfs_finds(name: str) -> None:
    """Hypothesis with kmc simulate's default budget and seed finds the scenario's BFS violation, shrunk
    to a trace that replays, is no shorter than BFS's, and violates a property BFS finds violated too."""
    options = HypothesisOptions(max_examples=DEFAULT_MAX_EXAMPLES, depth=DEFAULT_EXAMPLE_DEPTH, seed=0)
    result = run_hypothesis(_model(name), options)
    check_agrees_with_bfs(name, result)
