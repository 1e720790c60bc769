"""The Spark BFS with 128-bit fingerprints is the local BFS's 128-bit search; and resume keeps the width.

A 128-bit level stores each fingerprint as two longs (:mod:`spark_explore.columns`). The local BFS
at 128 bits is the reference for counts, discoveries and traces; an independent enumeration (Python
ints, no engine code) gives every level's fingerprints and, per state, the parent transition the
rule of :mod:`explorer.results` picks (the smallest parent fingerprint as an integer, then action
index), which each stored level must hold exactly: the struct Spark takes the minimum of, or the
cutoff a truncation filters on, ordered by anything but the integer would move a parent or a kept state.
(:mod:`tests.test_spark_columns` shows the stored longs order as the integers down to the low
half's top bit, which random fingerprints would almost never exercise here.)
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest
from click.testing import CliRunner
from spark_fixtures import counter_factory, spark, toy_controller_factory, two_phase_commit_factory  # noqa: F401
from test_spark_bfs import DRIVER_LEVELS, MIXED_LEVELS, SPARK_LEVELS, TOY_SMALL, assert_same_result

from explorer.bfs import BfsOptions, run_bfs
from explorer.contract import Model, ModelFactory
from explorer.fingerprint import as_ints, fingerprint
from explorer.results import ExplorationResult, Outcome
from kmc.cli import main
from spark_explore.bfs import SparkBfsOptions, SparkExploreError, run_spark_bfs
from spark_explore.columns import column_fingerprints, fp_columns, parent_columns
from spark_explore.manifest import read_manifest
from spark_explore.trace import level_dir

pytestmark = pytest.mark.spark

#: A parent transition: (parent fingerprint, action index); an initial state's is (0, -1).
Step = tuple[int, int]


def levels_with_parents(model: Model[Any, Any], bits: int) -> list[dict[int, Step]]:
    """Per depth, the states first reached there, each with the parent transition of the parent rule."""
    first = {fingerprint(model.encode(s), bits): s for s in model.init_states()}
    levels: list[dict[int, Step]] = [dict.fromkeys(first, (0, -1))]
    seen = set(first)
    frontier = first
    while frontier:
        steps: dict[int, Step] = {}
        reached: dict[int, Any] = {}
        for parent, state in frontier.items():
            if not model.within_boundary(state):
                continue
            for index, action in enumerate(model.actions(state)):
                child = model.next_state(state, action)
                if child is None:
                    continue
                fp = fingerprint(model.encode(child), bits)
                if fp not in seen:
                    steps[fp] = min(steps.get(fp, (parent, index)), (parent, index))
                    reached.setdefault(fp, child)
        frontier = reached
        seen |= reached.keys()
        if steps:
            levels.append(steps)
    return levels


def stored_levels(run_dir: Path, count: int, bits: int = 128) -> list[dict[int, Step]]:
    """The states of the first ``count`` levels on disk, each with its stored parent transition."""
    levels = []
    for depth in range(count):
        table = ds.dataset(level_dir(run_dir, depth), format="parquet").to_table()
        assert set(fp_columns(bits)) <= set(table.column_names)
        fps = as_ints(column_fingerprints(table, fp_columns(bits), bits), bits)
        parents = as_ints(column_fingerprints(table, parent_columns(bits), bits), bits)
        actions = [-1 if a is None else a for a in table.column("action_index").to_pylist()]
        levels.append(dict(zip(fps, zip(parents, actions, strict=True), strict=True)))
    return levels


def explore_both(factory: ModelFactory[Any, Any], run_dir: Path, *, levels: dict[str, Any] = SPARK_LEVELS,
                 **bounds: Any) -> tuple[ExplorationResult, ExplorationResult]:
    local = run_bfs(factory(), BfsOptions(fingerprint_bits=128, **bounds))
    options = SparkBfsOptions(run_dir, master="local[2]", keep_session=True, fingerprint_bits=128, **levels,
                              **bounds)
    return run_spark_bfs(factory, options), local


CASES = {
    "counter_state_violation": (counter_factory(n=3, sum_limit=4), SPARK_LEVELS),
    "counter_transition_violation": (counter_factory(n=3, inc_x_y_limit=1), MIXED_LEVELS),
    "toy_controller_small": (toy_controller_factory(TOY_SMALL), SPARK_LEVELS),
    "two_phase_commit_driver": (two_phase_commit_factory(3), DRIVER_LEVELS),
}


@pytest.mark.parametrize("case", list(CASES))
def test_128_bit_search_as_local(case: str, spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """Counts, discoveries (their 128-bit paths) and evidence as the local BFS at 128 bits; every stored
    level holds exactly the states first reached there, each with the parent the rule picks."""
    factory, levels = CASES[case]
    on_spark, local = explore_both(factory, tmp_path / "run", levels=levels)
    assert local.stats.fingerprint_bits == 128
    assert_same_result(on_spark, local)
    assert on_spark.bounds["fingerprint_bits"] == 128
    assert all(d.fingerprint_bits == 128 for d in on_spark.discoveries)
    expanded = len(on_spark.stats.levels)
    assert stored_levels(tmp_path / "run", expanded) == levels_with_parents(factory(), 128)[:expanded]
    manifest = read_manifest(tmp_path / "run")
    assert manifest is not None and manifest.fingerprint_bits == 128


@pytest.mark.parametrize("levels", [SPARK_LEVELS, DRIVER_LEVELS], ids=["spark", "driver"])
def test_a_state_bound_keeps_the_smallest_128_bit_fingerprints(levels: dict[str, Any], spark: Any,  # noqa: F811
                                                               tmp_path: Path) -> None:
    """--max-states within a level keeps the new states of smallest fingerprint (as integers), as the
    local BFS does at 128 bits."""
    factory = two_phase_commit_factory(3)
    on_spark, local = explore_both(factory, tmp_path / "run", levels=levels, max_states=100)
    assert local.outcome is Outcome.INCONCLUSIVE
    assert_same_result(on_spark, local)
    assert on_spark.stats.distinct == 100
    expanded = len(on_spark.stats.levels)  # the last one truncated, then only checked
    stored = stored_levels(tmp_path / "run", expanded)
    enumerated = levels_with_parents(factory(), 128)
    assert stored[:-1] == enumerated[: expanded - 1]
    last = enumerated[expanded - 1]
    assert len(last) > len(stored[-1])  # the bound cut this level
    assert sorted(stored[-1]) == sorted(last)[: len(stored[-1])]


def test_a_stopped_128_bit_run_resumes_in_its_width(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """A 128-bit run stopped by a depth bound resumes (without naming the width) to the uninterrupted
    local 128-bit result; asking for 64 bits on resume is refused, naming the run's width."""
    factory = counter_factory(n=4, sum_limit=6)
    run_dir = tmp_path / "run"
    first = run_spark_bfs(factory, SparkBfsOptions(run_dir, master="local[2]", keep_session=True, max_depth=3,
                                                   fingerprint_bits=128, **SPARK_LEVELS))
    assert first.outcome is Outcome.INCONCLUSIVE
    shutil.copytree(level_dir(run_dir, 1), level_dir(run_dir, 4))  # a killed driver's half-written level
    with pytest.raises(SparkExploreError, match=r"was explored with 128-bit fingerprints; resume it with "
                                                r"--fingerprint-bits 128 \(or without --fingerprint-bits\)$"):
        run_spark_bfs(factory, SparkBfsOptions(run_dir, resume=True, keep_session=True, fingerprint_bits=64))
    resumed = run_spark_bfs(factory, SparkBfsOptions(run_dir, master="local[2]", resume=True, keep_session=True,
                                                     **SPARK_LEVELS))
    local = run_bfs(factory(), BfsOptions(fingerprint_bits=128))
    assert local.outcome is Outcome.VIOLATION
    assert_same_result(resumed, local)
    expanded = len(resumed.stats.levels)
    assert stored_levels(run_dir, expanded) == levels_with_parents(factory(), 128)[:expanded]


def test_a_64_bit_run_refuses_a_128_bit_resume(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    run_dir = tmp_path / "run"
    run_spark_bfs(counter_factory(n=3), SparkBfsOptions(run_dir, master="local[2]", keep_session=True, max_depth=1))
    with pytest.raises(SparkExploreError, match="was explored with 64-bit fingerprints"):
        run_spark_bfs(counter_factory(n=3), SparkBfsOptions(run_dir, resume=True, keep_session=True,
                                                            fingerprint_bits=128))


def _kmc(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def test_the_command_line_explores_and_resumes_at_128_bits(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """kmc explore --engine spark --fingerprint-bits 128 reports the local engine's 128-bit result; a stopped run
    resumes in its width, and a resume asking for the other width is refused in one sentence (exit 2)."""
    scenario = "planted-complete-on-first-success"
    local = _kmc("explore", scenario, "--engine", "local", "--fingerprint-bits", "128", "--format", "json",
                 "--out", str(tmp_path / "local"))
    stopped = _kmc("explore", scenario, "--engine", "spark", "--fingerprint-bits", "128", "--max-depth", "3",
                   "--out", str(tmp_path / "spark"))
    assert stopped.exit_code == 3, stopped.stderr
    [run_dir] = (tmp_path / "spark").iterdir()
    refused = _kmc("explore", "--resume", str(run_dir), "--fingerprint-bits", "64")
    assert refused.exit_code == 2
    assert refused.stderr.strip().splitlines() == [
        f"kmc: {run_dir} was explored with 128-bit fingerprints; resume it with --fingerprint-bits 128 (or without "
        "--fingerprint-bits)"]
    resumed = _kmc("explore", "--resume", str(run_dir), "--format", "json")
    assert (local.exit_code, resumed.exit_code) == (1, 1), resumed.stderr
    on_local, on_spark = json.loads(local.stdout), json.loads(resumed.stdout)
    assert on_spark["statistics"]["fingerprint_bits"] == 128
    assert on_spark["statistics"]["collision_probability"] < 1e-30
    for key in ("distinct", "generated", "depth", "collision_probability"):
        assert on_spark["statistics"][key] == on_local["statistics"][key]
    assert on_spark["discoveries"] == on_local["discoveries"]
