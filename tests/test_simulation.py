"""Seeded random simulation: walks on the toy models, reproducibility, rounds, discoveries that
replay, interrupts, the Spark engine's agreement with the local one, and ``kmc simulate``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner, Result
from spark_fixtures import counter_factory, spark  # noqa: F401  (the session fixture)
from toy_models.counter import Counter
from toy_models.kafka_controller_toy import MC_STUCK, KafkaControllerToy
from toy_models.two_phase_commit import TwoPhaseCommit

from explorer.bfs import run_bfs
from explorer.replay import replay
from explorer.results import ExplorationResult, Outcome
from explorer.simulation import (
    CHOOSE_SUCCESSOR,
    FIRST_ROUND,
    SimulationOptions,
    SimulationProgress,
    Walker,
    rounds,
    run_simulation,
    walk_seed,
)
from kmc.cli import main


def kmc(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_walk_seeds_are_fixed_numbers() -> None:
    """Walk seeds are a fixed function of the run's seed and the walk number (the same in every process)."""
    assert walk_seed(0, 0) == 9951093549367768889
    assert walk_seed(0, 1) != walk_seed(0, 0) != walk_seed(1, 0)


def test_rounds_double_up_to_the_largest_and_cover_every_walk() -> None:
    """Rounds run 16, 32, 64 ... walks, 1024 at most, and cover the walk numbers once, in order."""
    sizes = [len(r) for r in rounds(5000)]
    assert sizes == [16, 32, 64, 128, 256, 512, 1024, 1024, 1024, 920]
    assert [n for r in rounds(5000) for n in r] == list(range(5000))
    assert [len(r) for r in rounds(10)] == [10]


def test_walks_cover_the_counter_and_report_its_sometimes_properties() -> None:
    """On the 4 x 4 counter every walk ends in the corner after 6 steps; the walks see every state,
    find the reachable sometimes properties and report y_exceeds_n as never found."""
    model = Counter(3)
    result = run_simulation(model, SimulationOptions(walks=100, depth=20))
    assert result.outcome is Outcome.NONE_IN_SAMPLE
    assert result.details["walk_ends"] == {"deadlock": 100}
    assert result.details["steps"] == 600
    assert result.stats.distinct == 16
    assert result.stats.depth == 7
    assert {d.property for d in result.discoveries} == {"x_reaches_n", "corner_by_inc_y"}
    assert result.never_found == ("y_exceeds_n",)
    # successors generated: each state of a walk but the corner has its enabled actions expanded
    assert result.stats.generated == result.details["walks"] + sum(a.generated for a in result.stats.actions)


def test_depth_bound_ends_walks() -> None:
    """Walks of at most 2 steps on the counter end at their depth bound and never reach x = 3."""
    result = run_simulation(Counter(3), SimulationOptions(walks=20, depth=2))
    assert result.details["walk_ends"] == {"depth": 20}
    assert result.details["longest_walk"] == 2
    assert "x_reaches_n" in result.never_found


def test_violation_replays_and_is_never_shorter_than_bfs() -> None:
    """The toy controller's NeverStuckOffline violation found by walks replays to its fingerprints and is
    at least as long as BFS's shortest."""
    model = KafkaControllerToy(MC_STUCK)
    result = run_simulation(model, SimulationOptions(walks=2000, depth=40))
    assert result.outcome is Outcome.VIOLATION
    [violation] = result.violations
    assert replay(model, violation).fingerprints == violation.path
    [bfs_violation] = run_bfs(model).violations
    assert violation.property == bfs_violation.property
    assert violation.trace_length >= bfs_violation.trace_length
    assert result.details["shortest_violating_prefix"] == violation.trace_length


def test_transition_violation_ends_with_the_offending_step() -> None:
    """An action property violation found from a walk's state ends with the offending IncX, which the walk
    need not take."""
    model = Counter(3, inc_x_y_limit=2)
    result = run_simulation(model, SimulationOptions(walks=50, depth=10))
    [violation] = result.violations
    trace = replay(model, violation)
    assert trace.steps[-1].action == "IncX"
    assert violation.trace_length >= 3


def test_a_violation_stops_the_run_at_the_end_of_its_round() -> None:
    """When the first round finds a violation, exactly its 16 walks are run."""
    result = run_simulation(Counter(3, sum_limit=2), SimulationOptions(walks=1000, depth=10))
    assert result.outcome is Outcome.VIOLATION
    assert result.details["walks"] == FIRST_ROUND
    assert result.details["walk_ends"] == {"violation": FIRST_ROUND}


def test_same_seed_same_result_other_seed_other_walks() -> None:
    """A seed fixes the result; another seed walks elsewhere (two-phase commit, 30 walks)."""
    model = TwoPhaseCommit(3)

    def run(seed: int) -> ExplorationResult:
        return run_simulation(model, SimulationOptions(walks=30, depth=20, seed=seed))

    first, again, other = run(5), run(5), run(6)
    assert comparable(first) == comparable(again)
    assert first.details["steps_by_action"] != other.details["steps_by_action"]


def test_walks_can_choose_any_successor() -> None:
    """Choosing any successor rather than a family first is reproducible and finds the counter's violation too."""
    options = SimulationOptions(walks=50, depth=10, choice=CHOOSE_SUCCESSOR)
    first = run_simulation(Counter(3, sum_limit=3), options)
    assert first.outcome is Outcome.VIOLATION
    assert comparable(first) == comparable(run_simulation(Counter(3, sum_limit=3), options))
    assert first.details["choice"] == CHOOSE_SUCCESSOR


def test_a_walk_is_the_same_wherever_it_runs() -> None:
    """Walk 7 taken alone equals walk 7 taken after walks 0 to 6 (a walk's randomness is its own)."""
    walker = Walker(TwoPhaseCommit(3), SimulationOptions(seed=11, depth=20))
    alone = walker.walk(7)
    for number in range(7):
        walker.walk(number)
    assert walker.walk(7) == alone


def test_interrupt_is_inconclusive_with_the_walks_done() -> None:
    """An interrupt after the first round ends the run INCONCLUSIVE (exit 3) with the walks done so far."""

    def interrupt(progress: SimulationProgress) -> None:
        raise KeyboardInterrupt

    result = run_simulation(TwoPhaseCommit(3), SimulationOptions(walks=100, depth=20, progress=interrupt))
    assert result.outcome is Outcome.INCONCLUSIVE
    assert result.exit_code == 3
    assert result.details["walks"] == FIRST_ROUND
    assert "interrupted after 16 of 100 walks" in result.reason
    assert result.never_found == ()


def comparable(result: ExplorationResult) -> tuple[Any, ...]:
    """What two runs with one seed must share (everything but wall times, the engine and the master)."""
    details = {k: v for k, v in result.details.items() if k != "master"}
    stats = attrs.evolve(result.stats, seconds=0.0)
    return (result.outcome, attrs.astuple(stats), result.discoveries, result.never_found, details)


@pytest.mark.spark
def test_spark_walks_equal_local_walks(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """The Spark engine reports what the local engine reports for the same seed, here a run stopped after
    its second round (48 walks of 200) by a violation."""
    from spark_explore.simulation import SparkSimulationOptions, run_spark_simulation

    # IncX taken with y >= 7 needs 7 IncY among a walk's first 8 steps: rare enough that seed 4
    # finds it in the second round only, so two rounds run as two Spark jobs before the stop.
    factory = counter_factory(n=8, inc_x_y_limit=7)
    options = SimulationOptions(walks=200, depth=8, seed=4)
    local = run_simulation(factory(), options)
    on_spark = run_spark_simulation(factory, options, SparkSimulationOptions(run_dir=tmp_path, keep_session=True))
    assert on_spark.engine == "simulation-spark"
    assert on_spark.details["master"] == spark.sparkContext.master
    assert comparable(on_spark) == comparable(local)
    assert (local.outcome, local.details["walks"]) == (Outcome.VIOLATION, 48)


# -- kmc simulate --------------------------------------------------------------------------------------


def test_simulate_finds_the_planted_bug_as_json(tmp_path: Path) -> None:
    """`kmc simulate` on the planted bug exits 1 with one JSON document: walks, distinct states, the
    violation and its trace, and writes summary.json and report.txt."""
    result = kmc("simulate", "planted-complete-on-first-success", "--walks", "200", "--format", "json",
                 "--out", str(tmp_path))
    assert result.exit_code == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["engine"] == "simulation"
    assert document["outcome"] == "violation"
    assert document["details"]["walks"] == FIRST_ROUND
    assert document["statistics"]["distinct"] > 0
    [violation] = [d for d in document["discoveries"] if d["violation"]]
    assert violation["property"] == "deletion_completes_only_when_all_replicas_succeeded"
    assert len(violation["trace"]) == violation["trace_length"] >= 5
    [run_dir] = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert {p.name for p in run_dir.iterdir()} >= {"summary.json", "report.txt"}


def test_simulate_text_says_how_many_walks_ran(tmp_path: Path) -> None:
    """The text output starts with the walks run, the seed, the distinct states and the shortest violating prefix."""
    result = kmc("simulate", "kafka-7235", "--walks", "100", "--seed", "2", "--out", str(tmp_path))
    assert result.exit_code == 1, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("Simulation ran 16 of 100 walks (seed 2, family choice), ")
    assert first.endswith("; the shortest violating prefix is 3 steps.")


def test_simulate_without_violation_exits_3_and_says_what_it_sampled(tmp_path: Path) -> None:
    """A simulation that finds no violation is no verdict: outcome no_violation_in_sample, exit 3, and
    its last line says how many walks of how many steps it ran and that this is not exhaustive."""
    result = kmc("simulate", "deletion-3brokers", "--walks", "40", "--seed", "3", "--format", "json",
                 "--out", str(tmp_path))
    assert result.exit_code == 3, result.stderr
    assert result.stderr.splitlines()[-1].startswith("No violation in 40 walks of at most 100 steps; ")
    assert "not exhaustive" in result.stderr.splitlines()[-1]
    document = json.loads(result.stdout)
    assert (document["outcome"], document["exhaustive"]) == ("no_violation_in_sample", False)
    assert document["details"]["walks"] == 40
    assert document["details"]["seed"] == 3


def test_simulate_with_hypothesis_keeps_its_database_under_out(tmp_path: Path) -> None:
    """`kmc simulate --hypothesis` finds the planted bug, exits 1, and leaves its example database under --out."""
    result = kmc("simulate", "planted-complete-on-first-success", "--hypothesis", "--max-examples", "200",
                 "--depth", "20", "--format", "json", "--out", str(tmp_path))
    assert result.exit_code == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["engine"] == "hypothesis"
    assert document["details"]["database"] == str(tmp_path / "hypothesis-db")
    assert any((tmp_path / "hypothesis-db").iterdir())


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--hypothesis", "--engine", "spark"], "--hypothesis"),
        (["--master", "local[2]"], "--master"),
        (["--walks", "0"], "--walks"),
        (["--hypothesis", "--walks", "10"], "--walks"),
        (["--max-examples", "10"], "--max-examples"),
        (["no-such-scenario"], "no-such-scenario"),
    ],
    ids=["hypothesis-on-spark", "master-without-spark", "no-walks", "walks-with-hypothesis",
         "examples-without-hypothesis", "unknown-scenario"],
)
def test_simulate_bad_usage_exits_2(args: list[str], named: str, tmp_path: Path) -> None:
    """Bad usage is one sentence naming the offending option or value, exit status 2, no run directory."""
    result = kmc("simulate", *args, "--out", str(tmp_path))
    assert result.exit_code == 2
    assert named in result.stderr
    assert "Traceback" not in result.stderr
    assert not any(tmp_path.iterdir())


@pytest.mark.spark
@pytest.mark.slow
def test_simulate_on_spark_prints_what_local_prints(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """`kmc simulate --engine spark` and `--engine local` with one seed print the same JSON document on
    kafka-6650 (statistics, discoveries with their traces, details), but for times, engine and master."""
    documents = []
    for engine in ("local", "spark"):
        result = kmc("simulate", "kafka-6650", "--walks", "120", "--seed", "5", "--engine", engine,
                     "--format", "json", "--out", str(tmp_path / engine))
        assert result.exit_code in (0, 1), result.stderr
        documents.append(json.loads(result.stdout))
    local, on_spark = documents
    assert (local["engine"], on_spark["engine"]) == ("simulation", "simulation-spark")
    for document in documents:
        for key in ("engine", "run_dir"):
            del document[key]
        document["statistics"] = {k: v for k, v in document["statistics"].items()
                                  if k not in ("seconds", "states_per_second")}
        document["details"].pop("master", None)
    assert on_spark == local
