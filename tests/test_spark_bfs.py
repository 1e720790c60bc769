"""The Spark BFS is the local BFS's search: same counts, levels, fingerprints, traces; and resume.

Every test here shares one ``local[2]`` SparkSession (``spark_fixtures.spark``). The local BFS is
the reference: each model runs on both engines and the results are compared field by field
(statistics compare without wall times), plus the fingerprint set of every level, which the Spark
run leaves on disk and an independent level-by-level enumeration computes here.

The Spark engine expands small levels on its driver and large ones as Spark jobs; these models are
all small, so the tests choose: ``SPARK_LEVELS`` makes every level a Spark job, ``DRIVER_LEVELS``
keeps every level on the driver, ``MIXED_LEVELS`` sends the levels of more than a few states to Spark.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pytest
from spark_fixtures import (
    counter_factory,
    spark,  # noqa: F401  (the session fixture)
    toy_controller_factory,
    two_phase_commit_factory,
)
from toy_models.kafka_controller_toy import ToyConfig

from explorer.bfs import BfsOptions, Checkpointing, run_bfs
from explorer.checkpoint import ResumeError
from explorer.contract import Model, ModelFactory
from explorer.fingerprint import fingerprint
from explorer.results import ExplorationResult, Outcome
from spark_explore import bfs as spark_bfs
from spark_explore.bfs import SparkBfsOptions, SparkExploreError, run_spark_bfs
from spark_explore.columns import level_arrow_schema, level_schema
from spark_explore.manifest import read_manifest
from spark_explore.trace import level_dir

pytestmark = pytest.mark.spark

SPARK_LEVELS: dict[str, Any] = {"driver_seconds": 0}
DRIVER_LEVELS: dict[str, Any] = {"driver_seconds": 1e9}
MIXED_LEVELS: dict[str, Any] = {"driver_seconds": 1e9, "driver_max_states": 6}

#: A two-broker, one-partition toy controller: 160 states over 12 levels (the MC config takes 28
#: levels and about a minute on Spark; it runs in the slow tests).
TOY_SMALL = ToyConfig(assignment=((1, 2),), brokers=2, max_crashes=1, max_shrinks=1, max_epoch=2)


def kafka_factory(name: str) -> ModelFactory[Any, Any]:
    """The Kafka model of a shipped scenario, as the CLI builds it for Spark."""
    from kmc import compose as kafka_compose

    return kafka_compose.factory_for(kafka_compose.resolve_scenario(name))


def resolve(case: ModelFactory[Any, Any] | str) -> ModelFactory[Any, Any]:
    """A toy model's factory as it is, a shipped Kafka scenario (by name) through the CLI's factory."""
    return kafka_factory(case) if isinstance(case, str) else case


def levels_by_enumeration(model: Model[Any, Any]) -> list[set[int]]:
    """The fingerprints first reached at each depth, by plain set arithmetic (no parent rule)."""
    states = {fingerprint(model.encode(s)): s for s in model.init_states()}
    seen = set(states)
    levels = [set(states)]
    frontier = states
    while frontier:
        reached: dict[int, Any] = {}
        for state in frontier.values():
            if not model.within_boundary(state):
                continue
            for action in model.actions(state):
                child = model.next_state(state, action)
                if child is not None:
                    reached.setdefault(fingerprint(model.encode(child)), child)
        frontier = {fp: s for fp, s in reached.items() if fp not in seen}
        seen |= frontier.keys()
        if frontier:
            levels.append(set(frontier))
    return levels


def levels_on_disk(run_dir: Path, count: int) -> list[set[int]]:
    """The fingerprints stored in the first ``count`` level directories of a Spark run."""
    return [
        set(ds.dataset(level_dir(run_dir, depth), format="parquet").to_table(columns=["fp"]).column("fp").to_pylist())
        for depth in range(count)
    ]


def assert_same_result(spark_result: ExplorationResult, local: ExplorationResult) -> None:
    assert spark_result.engine == "spark"
    assert spark_result.outcome is local.outcome
    assert spark_result.reason == local.reason
    assert spark_result.stats == local.stats  # counts, queue, per-level and per-action numbers
    assert spark_result.discoveries == local.discoveries  # property, kind, path, action indices
    assert [d.evidence for d in spark_result.discoveries] == [d.evidence for d in local.discoveries]
    assert spark_result.never_found == local.never_found


def explore_both(
    factory: ModelFactory[Any, Any], run_dir: Path, *, max_depth: int | None = None, max_states: int | None = None,
    levels: dict[str, Any] = SPARK_LEVELS,
) -> tuple[ExplorationResult, ExplorationResult]:
    local = run_bfs(factory(), BfsOptions(max_depth=max_depth, max_states=max_states))
    options = SparkBfsOptions(run_dir, master="local[2]", keep_session=True, max_depth=max_depth, max_states=max_states,
                              **levels)
    return run_spark_bfs(factory, options), local


def assert_same_levels_on_disk(run_dir: Path, result: ExplorationResult, factory: ModelFactory[Any, Any]) -> None:
    """Each level the Spark run expanded holds exactly the states first reached at that depth."""
    expanded = len(result.stats.levels)
    assert levels_on_disk(run_dir, expanded) == levels_by_enumeration(factory())[:expanded]


#: Models both engines explore completely (OK) or until a violation: counts, levels, examples and
#: counterexamples must agree.
CASES: dict[str, tuple[ModelFactory[Any, Any] | str, Outcome]] = {
    "counter": (counter_factory(n=3), Outcome.OK),
    "two_phase_commit": (two_phase_commit_factory(3), Outcome.OK),
    "toy_controller_small": (toy_controller_factory(TOY_SMALL), Outcome.OK),
    "kafka_delete_disabled": ("delete-disabled", Outcome.OK),
    "counter_state_violation": (counter_factory(n=3, sum_limit=4), Outcome.VIOLATION),
    "counter_transition_violation": (counter_factory(n=3, inc_x_y_limit=1), Outcome.VIOLATION),
    "toy_controller_stuck": (toy_controller_factory("MC_stuck"), Outcome.VIOLATION),
    "kafka_planted_bug": ("planted-complete-on-first-success", Outcome.VIOLATION),
}


@pytest.mark.parametrize("case", list(CASES))
def test_same_search_as_local(case: str, spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """Both engines agree on every count, every level's fingerprints, the examples and the shortest counterexample."""
    model, outcome = CASES[case]
    factory = resolve(model)
    on_spark, local = explore_both(factory, tmp_path / "run")
    assert local.outcome is outcome
    assert_same_result(on_spark, local)
    assert_same_levels_on_disk(tmp_path / "run", on_spark, factory)


@pytest.mark.parametrize("case", ["counter_state_violation", "toy_controller_small", "kafka_planted_bug"])
@pytest.mark.parametrize("levels", [DRIVER_LEVELS, MIXED_LEVELS], ids=["driver", "mixed"])
def test_driver_levels_make_the_same_search(case: str, levels: dict[str, Any], spark: Any,  # noqa: F811
                                            tmp_path: Path) -> None:
    """Levels expanded on the driver, alone or between Spark levels, give the local BFS's result and
    leave the same levels on disk as Spark levels do."""
    model, _ = CASES[case]
    factory = resolve(model)
    on_spark, local = explore_both(factory, tmp_path / "run", levels=levels)
    assert_same_result(on_spark, local)
    assert_same_levels_on_disk(tmp_path / "run", on_spark, factory)


def test_a_driver_level_is_as_many_spark_tasks_as_its_files(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """The driver writes a level as several files of consecutive rows, which it reads back in the order written,
    and a Spark job reading them runs a task for each, whatever the level's size (Spark reads a file of one row
    group in one task, which would expand the level of a run's first Spark job on one core)."""
    for rows in (4 * spark_bfs._MIN_FILE_ROWS, 200_000):
        fps = np.arange(-rows // 2, rows - rows // 2, dtype=np.int64)
        table = pa.Table.from_arrays(
            [pa.array(fps), pa.array(fps - 1), pa.array(np.zeros(rows, np.int32)), pa.array(["a"] * rows),
             pa.array([bytes(300)] * rows, pa.binary())], schema=level_arrow_schema(64))
        directory = tmp_path / f"level-{rows}"
        spark_bfs._write_level_files(directory, table, 4)
        assert len(list(directory.glob("part-*.parquet"))) == 4
        back = ds.dataset(directory, format="parquet").to_table(columns=["fp"]).column("fp").to_numpy()
        assert np.array_equal(back, fps)
        tasks = spark.read.schema(level_schema(64)).parquet(str(directory)).rdd.glom().map(len).collect()
        assert sorted(n for n in tasks if n) == [rows // 4] * 4
    small = tmp_path / "small"
    spark_bfs._write_level_files(small, table.slice(0, 3 * spark_bfs._MIN_FILE_ROWS - 1), 4)
    assert len(list(small.glob("part-*.parquet"))) == 2  # no file under _MIN_FILE_ROWS rows


@pytest.mark.parametrize("levels", [SPARK_LEVELS, DRIVER_LEVELS], ids=["spark", "driver"])
@pytest.mark.parametrize("bounds", [{"max_depth": 3}, {"max_states": 100}], ids=["max_depth", "max_states"])
def test_bounds_as_local(bounds: dict[str, int], levels: dict[str, Any], spark: Any,  # noqa: F811
                         tmp_path: Path) -> None:
    """A depth or state bound leaves both engines inconclusive at the same level with the same numbers
    (a state bound within a level keeps the same states in both, on the driver as on Spark)."""
    on_spark, local = explore_both(
        two_phase_commit_factory(3),
        tmp_path / "run",
        max_depth=bounds.get("max_depth"),
        max_states=bounds.get("max_states"),
        levels=levels,
    )
    assert local.outcome is Outcome.INCONCLUSIVE
    assert_same_result(on_spark, local)
    expanded = len(on_spark.stats.levels)
    on_disk = levels_on_disk(tmp_path / "run", expanded)
    enumerated = levels_by_enumeration(two_phase_commit_factory(3)())[:expanded]
    if "max_states" in bounds:  # the last level keeps the new states of smallest fingerprint that fit
        assert on_spark.stats.distinct == bounds["max_states"]
        kept = len(on_disk[-1])
        assert on_disk[-1] == set(sorted(enumerated[-1])[:kept])
        if levels is SPARK_LEVELS:  # filtered file by file, not sorted into one file (the next level's one task)
            assert len(list(level_dir(tmp_path / "run", expanded - 1).glob("part-*.parquet"))) > 1
        on_disk, enumerated = on_disk[:-1], enumerated[:-1]
    assert on_disk == enumerated


@pytest.fixture
def interrupted_counter(spark: Any, tmp_path: Path) -> Iterator[Path]:  # noqa: F811
    """A counter run stopped by a depth bound after 3 levels, with a half-written level 4 next to it
    (what a driver killed while writing level 4 leaves behind)."""
    run_dir = tmp_path / "run"
    first = run_spark_bfs(
        counter_factory(n=4),
        SparkBfsOptions(run_dir, master="local[2]", keep_session=True, max_depth=3, **SPARK_LEVELS),
    )
    assert first.outcome is Outcome.INCONCLUSIVE
    leftover = level_dir(run_dir, 4)
    shutil.copytree(level_dir(run_dir, 1), leftover)
    yield run_dir


@pytest.mark.slow
def test_toy_controller_mc_as_local_and_tlc(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """The toy controller's MC config gives TLC's 168,927 distinct / 614,016 generated states and the
    local BFS's levels and fingerprints."""
    factory = toy_controller_factory("MC")
    on_spark, local = explore_both(factory, tmp_path / "run")
    assert (on_spark.stats.distinct, on_spark.stats.generated, on_spark.stats.depth) == (168_927, 614_016, 28)
    assert_same_result(on_spark, local)
    assert_same_levels_on_disk(tmp_path / "run", on_spark, factory)


# One shipped scenario per family of events (deletion and its stale responses, reassignment, added partitions,
# re-creation, ISR changes, unclean election, failover with a fenced former controller, controlled shutdown,
# preferred elections, log-dir failure): each family's code runs on Spark's workers in CI. Every other shipped
# scenario (default included) is compared with `python bench/spark_vs_local.py --target kafka-<scenario>`; all
# of them on Spark would cost the slow set more than ten minutes on a 2-core machine.
SPARK_SCENARIOS = (
    "add-partitions", "controlled-shutdown", "controller-failover", "isr-changes", "kafka-6082", "log-dir-failure",
    "preferred-election", "reassignment", "stale-deletion-response", "topic-recreation", "unclean-election",
)


def _shipped_scenarios() -> list[str]:
    from kmc import compose as kafka_compose

    shipped = set(kafka_compose.shipped_scenarios())
    assert shipped >= set(SPARK_SCENARIOS), sorted(set(SPARK_SCENARIOS) - shipped)
    return list(SPARK_SCENARIOS)


@pytest.mark.slow
@pytest.mark.parametrize("scenario", _shipped_scenarios())
def test_one_scenario_per_event_family_as_local(scenario: str, spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """One shipped scenario per family of events gives the same result and level fingerprints on both engines."""
    factory = kafka_factory(scenario)
    on_spark, local = explore_both(factory, tmp_path / "run")
    assert_same_result(on_spark, local)
    assert_same_levels_on_disk(tmp_path / "run", on_spark, factory)


@pytest.mark.parametrize("levels", [SPARK_LEVELS, DRIVER_LEVELS], ids=["spark", "driver"])
def test_resume_ends_like_an_uninterrupted_run(levels: dict[str, Any], interrupted_counter: Path) -> None:
    """Resuming an interrupted run (its levels written by Spark jobs) ends with exactly the numbers,
    levels and examples of an uninterrupted one, whether it continues on Spark or on the driver."""
    factory = counter_factory(n=4)
    resumed = run_spark_bfs(
        factory, SparkBfsOptions(interrupted_counter, master="local[2]", resume=True, keep_session=True, **levels)
    )
    assert_same_result(resumed, run_bfs(factory()))
    assert_same_levels_on_disk(interrupted_counter, resumed, factory)


def test_resume_refuses_another_scenario(interrupted_counter: Path) -> None:
    """A run directory written for one scenario hash cannot be resumed with another."""
    with pytest.raises(SparkExploreError, match="another scenario"):
        run_spark_bfs(
            counter_factory(n=4),
            SparkBfsOptions(interrupted_counter, resume=True, scenario_hash="other", keep_session=True),
        )


def test_resume_needs_a_manifest(tmp_path: Path) -> None:
    """Resuming a directory without a manifest is refused, naming the fix."""
    with pytest.raises(SparkExploreError, match=r"no manifest\.json"):
        run_spark_bfs(counter_factory(n=2), SparkBfsOptions(tmp_path, resume=True))


def test_a_new_run_does_not_overwrite_an_old_one(interrupted_counter: Path) -> None:
    """Starting a new run in a directory that holds one is refused, pointing at --resume."""
    with pytest.raises(SparkExploreError, match="--resume"):
        run_spark_bfs(counter_factory(n=4), SparkBfsOptions(interrupted_counter))


def test_manifest_records_the_run(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """The manifest names the scenario and version, counts every level, and marks the run complete."""
    run_dir = tmp_path / "run"
    result = run_spark_bfs(
        counter_factory(n=2),
        SparkBfsOptions(run_dir, master="local[2]", keep_session=True, scenario_hash="abc123", kmc_version="9.9"),
    )
    document = json.loads((run_dir / "manifest.json").read_text())
    assert (document["scenario_hash"], document["kmc_version"], document["engine"]) == ("abc123", "9.9", "spark")
    assert document["completed"] is True and document["outcome"] == "ok"
    assert (document["distinct"], document["generated"]) == (result.stats.distinct, result.stats.generated)
    assert [(level["depth"], level["frontier"], level["new"]) for level in document["levels"]] == [
        (level.depth, level.frontier, level.new) for level in result.stats.levels
    ]
    assert result.details == {"master": "local[2]", "run_dir": str(run_dir)}


def test_resuming_a_finished_run_is_refused_as_on_the_local_engine(spark: Any,  # noqa: F811
                                                                     tmp_path: Path) -> None:
    """Resuming a run that already finished is refused with the local engine's sentence, and changes nothing
    (it answered from the manifest before, where the local engine refused)."""
    run_dir = tmp_path / "run"
    factory = counter_factory(n=2, sum_limit=3)
    run_spark_bfs(factory, SparkBfsOptions(run_dir, master="local[2]", keep_session=True))
    manifest = read_manifest(run_dir)
    with pytest.raises(ResumeError) as spark_refusal:
        run_spark_bfs(factory, SparkBfsOptions(run_dir, master="local[2]", resume=True, keep_session=True))
    assert read_manifest(run_dir) == manifest
    # answered from the manifest alone: a finished run's levels (gigabytes in a large run) are not read first
    shutil.rmtree(run_dir / "levels")
    with pytest.raises(ResumeError, match="finished run"):
        run_spark_bfs(factory, SparkBfsOptions(run_dir, master="local[2]", resume=True, keep_session=True))
    local_dir = tmp_path / "local"
    run_bfs(factory(), BfsOptions(checkpointing=Checkpointing(local_dir, every_seconds=0, resume=False,
                                                              scenario_hash="h", kmc_version="test")))
    with pytest.raises(ResumeError) as local_refusal:
        run_bfs(factory(), BfsOptions(checkpointing=Checkpointing(local_dir, every_seconds=0, resume=True,
                                                                  scenario_hash="h", kmc_version="test")))
    assert str(spark_refusal.value).replace(str(run_dir), "DIR") == str(local_refusal.value).replace(
        str(local_dir), "DIR")


@pytest.mark.parametrize(
    ("master", "deploy_mode"),
    [("yarn", "client"), ("k8s://https://k8s.example:6443", "cluster"), ("spark://h:7077", "client")],
)
def test_spark_submit_line(master: str, deploy_mode: str, tmp_path: Path) -> None:
    """The spark-submit line ships kmc's packages zipped and the scenario, and runs kmc/spark_main.py as main.py."""
    import zipfile

    from kmc.compose import spark_submit_arguments

    command = spark_submit_arguments(
        scenario="delete-disabled", master=master, conf={"spark.executor.cores": "2"}, max_depth=4, submit_dir=tmp_path
    )
    assert command[:3] == ["spark-submit", "--master", master]
    assert command[command.index("--deploy-mode") + 1] == deploy_mode
    assert "spark.executor.cores=2" in command
    archive = Path(command[command.index("--py-files") + 1])
    names = set(zipfile.ZipFile(archive).namelist())
    assert {"kmc/cli.py", "kmc/spark_main.py", "model/zk/kafka_model.py", "explorer/expand.py",
            "spark_explore/level.py", "reports/__init__.py"} <= names
    assert (
        Path(command[command.index("--files") + 1])
        .read_text()
        .startswith((Path(__file__).parent.parent / "model" / "scenario" / "scenarios" / "delete-disabled.toml")
                    .read_text()[:40])
    )
    entry = command.index(str(tmp_path / "main.py"))
    assert command[entry + 1 :] == ["delete-disabled.toml", "--out", "/mnt/kmc-runs", "--max-depth", "4"]
    assert ("--driver-java-options" in command) == (deploy_mode == "client")
