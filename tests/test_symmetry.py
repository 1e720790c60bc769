"""Symmetry reduction (``--symmetry``): the broker classes a scenario allows, renaming that commutes with
the model's steps, and reduced searches that find what plain BFS finds, as traces of the unreduced model.

No shipped scenario leaves two brokers interchangeable (each names every broker in a placement), so
the Kafka tests use ``tests/scenarios/spare-brokers.toml`` and shipped scenarios with two spare
brokers (ids 8 and 9, no rack, named by nothing) added to their cluster.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner
from spark_fixtures import spark  # noqa: F401  (the session fixture)
from toy_models.two_phase_commit import TwoPhaseCommit, TwoPhaseState

from explorer.bfs import run_bfs
from explorer.contract import ModelFactory, Property, PropertyKind
from explorer.replay import ReplayError, replay, replay_states
from explorer.results import ExplorationResult, Outcome
from explorer.symmetry import Reduced, concrete_discovery, concrete_result, reduced_factory
from invariants.registry import all_specs, select
from kmc import compose
from kmc.cli import main
from model.scenario import load_scenario
from model.zk.kafka_model import Action, KafkaControllerModel
from model.zk.symmetry import interchangeable_classes, pinned_brokers, rename_state

SPARE_BROKERS = Path(__file__).parent / "scenarios" / "spare-brokers.toml"


def with_spare_brokers(name: str) -> str:
    """A shipped scenario's TOML text with brokers 8 and 9 added to its cluster."""
    text = compose.scenario_file(name).read_text(encoding="utf-8")
    return re.sub(r"brokers = \[(.*)\]", lambda m: f"brokers = [{m.group(1)}, {{ id = 8 }}, {{ id = 9 }}]", text,
                  count=1)


def spare_model(name: str) -> KafkaControllerModel:
    return compose.build_kafka_model(with_spare_brokers(name))


def rename_action(action: Action, m: dict[int, int]) -> Action:
    return attrs.evolve(action, broker=m.get(action.broker, action.broker),
                        replica=m.get(action.replica, action.replica))


def test_classes_follow_racks_and_placements() -> None:
    """Unpinned brokers of one rack form a class; a placement, a reassignment target or a topic gaining
    partitions pins brokers; shipped scenarios pin every broker."""
    assert interchangeable_classes(compose.resolve_scenario(str(SPARE_BROKERS))) == ((2, 3),)
    assert interchangeable_classes(load_scenario(with_spare_brokers("delete-disabled"))) == ((2, 8, 9),)
    racks = SPARE_BROKERS.read_text(encoding="utf-8").replace('{ id = 3, rack = "r2" }', '{ id = 3, rack = "r3" }')
    assert interchangeable_classes(load_scenario(racks)) == ()
    reassigned = load_scenario(with_spare_brokers("reassignment"))
    assert pinned_brokers(reassigned) == {0, 1} and interchangeable_classes(reassigned) == ((8, 9),)
    assert interchangeable_classes(load_scenario(with_spare_brokers("add-partitions"))) == ()
    assert all(interchangeable_classes(compose.resolve_scenario(name)) == () for name in ("default", "racks"))


@pytest.mark.parametrize("name", [pytest.param("delete-disabled", marks=pytest.mark.slow),  # a class of three
                                  pytest.param("kafka-6650", marks=pytest.mark.slow),
                                  "controlled-shutdown", "kafka-9866", "reassignment-isr-shrink-race"])
def test_renaming_commutes_with_steps_and_verdicts(name: str) -> None:
    """Over every reachable state, renaming by each permutation of the group commutes with the enabled
    actions and with next_state, fixes the initial state, leaves the verdict of every registered property
    as it is and the canonical encoding too."""
    scenario = load_scenario(with_spare_brokers(name))
    model = KafkaControllerModel(scenario, select(scenario, [spec.name for spec in all_specs()]))
    group = model.symmetry.permutations
    assert group, "the scenario must have interchangeable brokers"
    encode = model.encode
    state_props = [p for p in model.properties() if not p.kind.on_transition]
    step_props = [p for p in model.properties() if p.kind.on_transition]
    (initial,) = model.init_states()
    assert all(encode(rename_state(initial, m)) == encode(initial) for m in group)
    seen = {encode(initial)}
    frontier = [initial]
    while frontier:
        reached = []
        for state in frontier:
            actions = model.actions(state)
            for m in group:
                renamed = rename_state(state, m)
                assert sorted(map(repr, model.actions(renamed))) == sorted(repr(rename_action(a, m)) for a in actions)
                assert [p.check(state) is None for p in state_props] == [p.check(renamed) is None for p in state_props]
                assert model.canonical_encode(renamed) == model.canonical_encode(state)
            for action in actions:
                child = model.next_state(state, action)
                for m in group:
                    renamed_step = model.next_state(rename_state(state, m), rename_action(action, m))
                    assert (child is None) == (renamed_step is None)
                    if child is not None and renamed_step is not None:
                        assert encode(rename_state(child, m)) == encode(renamed_step), model.describe_action(action)
                        assert ([p.check(state, action, child) is None for p in step_props]
                                == [p.check(rename_state(state, m), rename_action(action, m), renamed_step) is None
                                    for p in step_props])
                if child is not None and encode(child) not in seen:
                    seen.add(encode(child))
                    reached.append(child)
        frontier = reached
    assert len(seen) < 2_000  # the walk was complete, not cut short


def assert_same_findings(plain: ExplorationResult, reduced: ExplorationResult, model: Any) -> None:
    """The reduced search ends as the plain one, with the same properties found at the same depths,
    each finding a trace of the unreduced model that shows it again."""
    assert reduced.outcome is plain.outcome
    assert [(d.property, d.trace_length) for d in reduced.discoveries] == \
        [(d.property, d.trace_length) for d in plain.discoveries]
    props = {p.name: p for p in model.properties()}
    for d in reduced.discoveries:
        states = replay_states(model, d.path, d.action_indices, d.fingerprint_bits)
        prop = props[d.property]
        if prop.kind.on_transition:
            action = model.actions(states[-2])[d.action_indices[-1]]
            assert prop.check(states[-2], action, states[-1]) == d.evidence
        else:
            assert prop.check(states[-1]) == d.evidence
        replay(model, d)  # and renders


@pytest.mark.parametrize("name", ["kafka-3096", "kafka-3143", "kafka-7235", "kafka-6082", "controlled-shutdown"])
def test_reduced_search_finds_what_plain_bfs_finds(name: str) -> None:
    """With spare brokers, the reduced BFS finds the plain BFS's violations and examples (traces replayed
    on the unreduced model) with fewer or equal distinct states."""
    model = spare_model(name)
    plain = run_bfs(model)
    reduced = concrete_result(model, run_bfs(Reduced(model)))
    assert_same_findings(plain, reduced, model)
    assert reduced.stats.distinct <= plain.stats.distinct
    assert reduced.stats.depth == plain.stats.depth


@pytest.mark.slow
def test_spare_brokers_scenario_counts() -> None:
    """The spare-brokers scenario: 3,874 distinct states plain, 2,452 orbits with its class {2, 3}."""
    model = compose.build_kafka_model(SPARE_BROKERS.read_text(encoding="utf-8"))
    plain = run_bfs(model)
    reduced = concrete_result(model, run_bfs(Reduced(model)))
    assert (plain.stats.distinct, reduced.stats.distinct) == (3_874, 2_452)
    assert_same_findings(plain, reduced, model)


def test_no_class_gives_plain_bfs_exactly() -> None:
    """A scenario with every broker pinned explores the same states, levels and traces with or without symmetry."""
    model = compose.model_for(compose.resolve_scenario("kafka-3143"))
    assert model.symmetry.classes == ()
    plain = run_bfs(model)
    reduced = run_bfs(Reduced(model))
    assert attrs.evolve(reduced.stats, seconds=0, levels=()) == attrs.evolve(plain.stats, seconds=0, levels=())
    assert [attrs.evolve(level, seconds=0) for level in reduced.stats.levels] == \
        [attrs.evolve(level, seconds=0) for level in plain.stats.levels]
    assert concrete_result(model, reduced).discoveries == plain.discoveries
    assert plain.outcome is Outcome.VIOLATION


# ---- the explorer half, Kafka-free: two-phase commit, whose resource managers are interchangeable ----


def _rename_rms(s: TwoPhaseState, image: tuple[int, ...]) -> TwoPhaseState:
    rm_state = [""] * len(s.rm_state)
    for rm, st in enumerate(s.rm_state):
        rm_state[image[rm]] = st
    return TwoPhaseState(tuple(rm_state), s.tm_state, frozenset(image[rm] for rm in s.tm_prepared),
                         frozenset((kind, image[rm] if rm >= 0 else rm) for kind, rm in s.msgs))


def _not_all_aborted(s: TwoPhaseState) -> dict[str, Any] | None:
    aborted = [rm for rm, st in enumerate(s.rm_state) if st == "aborted"]
    return {"aborted": aborted} if len(aborted) == len(s.rm_state) else None


class SymmetricTwoPhaseCommit(TwoPhaseCommit):
    """Two-phase commit with ``canonical_encode`` over every permutation of the RMs, and a violation to find."""

    def canonical_encode(self, s: TwoPhaseState) -> bytes:
        return min(self.encode(_rename_rms(s, image)) for image in itertools.permutations(self.rms))

    def properties(self) -> list[Property]:
        return [*super().properties(),
                Property("not_all_aborted", PropertyKind.ALWAYS, "some RM has not aborted", _not_all_aborted)]


class UnsoundTwoPhaseCommit(SymmetricTwoPhaseCommit):
    """The same group (the greatest encoding of the orbit this time) with a property that tells RM 2
    apart: the group does not preserve it."""

    def canonical_encode(self, s: TwoPhaseState) -> bytes:
        return max(self.encode(_rename_rms(s, image)) for image in itertools.permutations(self.rms))

    def properties(self) -> list[Property]:
        return [Property("rm2_never_aborts", PropertyKind.ALWAYS, "RM 2 never aborts",
                         lambda s: {"rm": 2} if s.rm_state[2] == "aborted" else None)]


def test_two_phase_commit_reduced() -> None:
    """On a toy model, the reduced search finds the plain one's violation and examples in fewer states,
    each a trace of the model itself."""
    model = SymmetricTwoPhaseCommit(3)
    plain = run_bfs(model)
    reduced = concrete_result(model, run_bfs(Reduced(model)))
    assert plain.outcome is Outcome.VIOLATION
    assert_same_findings(plain, reduced, model)
    assert reduced.stats.distinct < plain.stats.distinct


def test_unsound_group_is_reported() -> None:
    """A finding that the concrete replay cannot show again is refused, not reported as a trace."""
    model = UnsoundTwoPhaseCommit(3)
    reduced = run_bfs(Reduced(model))
    # The representative of "one RM aborted" is (working, working, aborted): RM 2 aborted at depth 1;
    # replayed by the model's first action into that orbit, RmChooseToAbort(0), RM 2 works.
    assert reduced.outcome is Outcome.VIOLATION and reduced.discoveries[0].trace_length == 1
    with pytest.raises(ReplayError, match="does not preserve the property"):
        concrete_discovery(model, reduced.discoveries[0])


def test_reduced_model_refuses_a_model_without_canonical_encode() -> None:
    """Reduced needs the optional contract method."""
    with pytest.raises(TypeError, match="canonical_encode"):
        Reduced(TwoPhaseCommit(2))  # type: ignore[arg-type]


# ---- the command line ----


def test_explore_symmetry_reports_its_classes(tmp_path: Path) -> None:
    """``kmc explore --symmetry`` explores orbits, says so with its classes, and its run is not resumed,
    with or without the option."""
    result = CliRunner().invoke(main, ["explore", str(SPARE_BROKERS), "--engine", "local", "--symmetry",
                                       "--format", "json", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["symmetry"] == {"enabled": True, "classes": [[2, 3]], "group_order": 2}
    assert document["statistics"]["distinct"] == 2_452
    assert document["bounds"]["symmetry"] == "on; interchangeable brokers {2, 3}"
    run_dir = Path(document["run_dir"])
    for report in ("report.txt", "report.md", "report.html"):
        assert "interchangeable brokers {2, 3}" in (run_dir / report).read_text(), report
    resumed = CliRunner().invoke(main, ["explore", "--resume", document["run_dir"]])
    assert resumed.exit_code == 2 and "cannot be resumed" in resumed.output
    resumed = CliRunner().invoke(main, ["explore", "--resume", document["run_dir"], "--symmetry"])
    assert resumed.exit_code == 2 and "not resumable" in resumed.output


@pytest.mark.spark
@pytest.mark.slow
def test_spark_reduced_search_as_local(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """The Spark engine explores the same orbits as the local BFS, its workers rebuilding the reduced model
    (the levels of more than 5 states are Spark jobs, the first two on the driver)."""
    from spark_explore.bfs import SparkBfsOptions, run_spark_bfs

    factory = reduced_factory(ModelFactory(compose.build_kafka_model, with_spare_brokers("kafka-7235")))
    local = run_bfs(factory())
    on_spark = run_spark_bfs(factory, SparkBfsOptions(tmp_path / "run", master="local[2]", keep_session=True,
                                                      driver_seconds=1e9, driver_max_states=5))
    assert on_spark.outcome is local.outcome is Outcome.VIOLATION
    assert attrs.evolve(on_spark.stats, seconds=0, levels=()) == attrs.evolve(local.stats, seconds=0, levels=())
    assert on_spark.discoveries == local.discoveries
    model = spare_model("kafka-7235")
    assert_same_findings(run_bfs(model), concrete_result(model, on_spark), model)
