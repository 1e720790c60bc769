"""Which levels the Spark engine expands on its driver and which as Spark jobs (``spark_explore.bfs``'s module
docstring): the rule alone, on the driver's measured rate, without a session."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pyarrow as pa
import pytest
from toy_models.kafka_controller_toy import CONFIGS, KafkaControllerToy

from explorer.bfs import BfsOptions, run_bfs
from explorer.contract import ModelFactory
from kmc.compose import factory_for, resolve_scenario
from model.zk.kafka_model import KafkaControllerModel
from spark_explore import bfs as spark_bfs
from spark_explore import level as spark_level
from spark_explore.bfs import (
    DEFAULT_DRIVER_MAX_STATES,
    FIRST_JOB_SECONDS,
    LEVELS_AHEAD,
    SparkBfsOptions,
    _Search,
    run_spark_bfs,
)
from spark_explore.session import SessionStart, default_conf


def _search(tmp_path: Path, **options: Any) -> _Search:
    factory: ModelFactory[Any, Any] = ModelFactory(KafkaControllerToy, CONFIGS["MC"])
    options.setdefault("master", "local[2]")
    return _Search(None, factory, factory(), SparkBfsOptions(tmp_path / "run", **options), None)


def test_the_first_spark_job_waits_until_spark_is_estimated_to_win_back_its_cost(tmp_path: Path) -> None:
    search = _search(tmp_path)
    assert (search.options.driver_seconds, FIRST_JOB_SECONDS, LEVELS_AHEAD, search.task_slots) == (2.0, 5.0, 3.0, 2)
    assert search._on_driver(400_000)  # no rate measured yet: the driver measures one
    # 100 µs a state on the driver; a Spark job (1.25 × 100 + 7.5 µs) / 2 = 66.25 µs, saving 33.75 µs a state:
    # three levels' saving covers the first job's 5 s from 49,383 states on.
    search.driver_seconds_per_state = 1e-4
    assert search._on_driver(10_000)  # 1 s
    assert search._on_driver(30_000)  # 3 s: past the budget, but 3 × 1.0 s saved does not cover the first job
    assert search._on_driver(49_000)
    assert not search._on_driver(50_000)  # 3 × 1.69 s saved
    search.spark_jobs = 1  # the workers are started: past the budget a level is a Spark job
    assert search._on_driver(19_000)
    assert not search._on_driver(21_000)


def test_a_cheap_step_or_a_single_core_keeps_the_levels_on_the_driver(tmp_path: Path) -> None:
    """A model whose step costs 15 µs on the driver saves 1.9 µs a state on two cores: no level under the driver's
    state bound wins the first job's cost back. One core saves nothing; four save more, and sooner."""
    cheap = _search(tmp_path)
    cheap.driver_seconds_per_state = 1.5e-5
    assert cheap._on_driver(DEFAULT_DRIVER_MAX_STATES)  # 7.5 s on the driver, 2.8 s saved over three levels
    assert not cheap._on_driver(DEFAULT_DRIVER_MAX_STATES + 1)  # the driver would hold too many states
    one_core = _search(tmp_path, master="local[1]")
    one_core.driver_seconds_per_state = 1e-4
    assert one_core.task_slots == 1 and one_core._on_driver(DEFAULT_DRIVER_MAX_STATES)
    four_cores = _search(tmp_path, master="local[4]")
    four_cores.driver_seconds_per_state = 1e-4  # 66.9 µs saved a state: the first job from 24,923 states on
    assert four_cores._on_driver(24_000) and not four_cores._on_driver(25_000)
    assert _search(tmp_path, master="spark://kafka-ci:7077").task_slots == 2  # executors not known yet


class _RunningSession:
    """A :class:`~spark_explore.session.SessionStart` whose session is up, with ``cores`` registered by its
    executors (its context's default parallelism)."""

    ready = True

    def __init__(self, cores: int) -> None:
        self.session = SimpleNamespace(sparkContext=SimpleNamespace(defaultParallelism=cores))

    def get(self) -> Any:
        return self.session


def test_a_cluster_is_planned_for_the_cores_its_executors_registered(tmp_path: Path) -> None:
    """A cluster's master is planned for two tasks at once until its session runs, then for the cores its executors
    registered (Spark's default parallelism, which kmc leaves to Spark there), and a level for twice as many
    files and shuffle partitions. A local master's cores are its own, and kmc sets its partitions itself."""
    cluster = _search(tmp_path, master="spark://kafka-ci:7077")
    assert (cluster.task_slots, cluster.level_files) == (2, 4)
    cluster.session = cast(SessionStart, _RunningSession(12))
    assert (cluster.task_slots, cluster.level_files) == (12, 24)
    local = _search(tmp_path, master="local[3]")
    local.session = cast(SessionStart, _RunningSession(12))
    assert (local.task_slots, local.level_files) == (3, 6)
    on_cluster = default_conf("spark://kafka-ci:7077", ui=False, log4j_file=None)
    assert not {"spark.sql.shuffle.partitions", "spark.default.parallelism"} & on_cluster.keys()
    on_three_cores = default_conf("local[3]", ui=False, log4j_file=None)
    assert on_three_cores["spark.sql.shuffle.partitions"] == on_three_cores["spark.default.parallelism"] == "6"


def test_the_session_starts_when_the_level_after_the_next_is_projected_to_be_a_spark_job(tmp_path: Path) -> None:
    search = _search(tmp_path)
    assert not search._next_levels_may_need_spark(20_000, 40_000)  # no rate measured yet
    search.driver_seconds_per_state = 1e-4  # the first job from 49,383 states on (the test above)
    assert search._next_levels_may_need_spark(20_000, 40_000)  # growing twofold: 80,000 states after the next
    assert not search._next_levels_may_need_spark(30_000, 35_000)  # growing by a sixth: 40,833 states
    assert not search._next_levels_may_need_spark(50_000, 45_000)  # past the widest level: 45,000 states
    assert search._next_levels_may_need_spark(70_000, 50_000)  # shrinking, but the next level is a Spark job
    search.spark_jobs = 1  # the bound is the budget, 2 s
    assert search._next_levels_may_need_spark(30_000, 21_000)


def test_the_state_bound_and_a_zero_budget_send_every_level_to_spark(tmp_path: Path) -> None:
    search = _search(tmp_path, driver_seconds=8.0, driver_max_states=1_000)
    search.driver_seconds_per_state = 1e-9
    assert search._on_driver(1_000)
    assert not search._on_driver(1_001)  # the driver would hold too many states, however fast
    every_level = _search(tmp_path, driver_seconds=0)
    assert not every_level._on_driver(1)
    every_level.driver_seconds_per_state = 1e-9
    assert not every_level._on_driver(1)


def test_the_driver_hands_each_level_it_keeps_to_the_model_to_retain(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A level the driver expands keeps its new states as states, and the model is handed them to forget what
    none of them holds, as in the local BFS: the same states, transitions and findings (no Spark job, no JVM)."""
    scenario = resolve_scenario("kafka-3083")
    handed: list[int] = []
    retain = KafkaControllerModel.retain_parts

    def counting(self: KafkaControllerModel, states: Sequence[Any]) -> None:
        handed.append(len(states))
        retain(self, states)

    monkeypatch.setattr(KafkaControllerModel, "retain_parts", counting)
    on_driver = run_spark_bfs(factory_for(scenario), SparkBfsOptions(tmp_path / "run", driver_seconds=1e9,
                                                                     keep_going=True))
    assert handed == [level.new for level in on_driver.stats.levels] and sum(handed) > 400
    local = run_bfs(factory_for(scenario)(), BfsOptions(keep_going=True))
    assert (on_driver.stats.distinct, on_driver.stats.generated) == (local.stats.distinct, local.stats.generated)
    assert [(d.property, d.path, d.action_indices) for d in on_driver.discoveries] == \
        [(d.property, d.path, d.action_indices) for d in local.discoveries]


def _record_level_reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, tuple[str, ...]]]:
    """The (depth, columns) of every level the Spark BFS reads from now on, in order."""
    read: list[tuple[int, tuple[str, ...]]] = []
    level_table = spark_bfs.level_table

    def recording(run_dir: Path, depth: int, columns: Sequence[str]) -> Any:
        read.append((depth, tuple(columns)))
        return level_table(run_dir, depth, columns)

    monkeypatch.setattr(spark_bfs, "level_table", recording)
    return read


def test_the_driver_reads_a_levels_bytes_only_for_the_states_it_does_not_hold(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The level a driver level made is expanded from the states it kept, without its bytes read back (the
    initial level, written before any is kept, and a model that keeps no states, such as the toy, are decoded
    from their bytes)."""
    read = _record_level_reads(monkeypatch)
    kafka = run_spark_bfs(factory_for(resolve_scenario("kafka-3083")),
                          SparkBfsOptions(tmp_path / "kafka", driver_seconds=1e9, keep_going=True))
    expanded = len(kafka.stats.levels)
    assert expanded > 5
    assert [depth for depth, columns in read if "data" in columns] == [0]
    assert sorted({depth for depth, _ in read}) == list(range(expanded))
    read.clear()
    toy = run_spark_bfs(ModelFactory(KafkaControllerToy, CONFIGS["MC"]),
                        SparkBfsOptions(tmp_path / "toy", driver_seconds=1e9))
    assert toy.stats.distinct == 168_927
    assert [depth for depth, columns in read if "data" in columns] == list(range(len(toy.stats.levels)))


def test_a_level_with_states_not_held_is_read_once_with_its_bytes(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A driver level keeps at most KEEP_STATES of its new states; the next level, some of whose states are then not
    held, is read once, fingerprints and bytes together, and the search finds what the local BFS finds."""
    read = _record_level_reads(monkeypatch)
    monkeypatch.setattr(spark_bfs, "KEEP_STATES", 40)
    scenario = resolve_scenario("kafka-3083")
    on_driver = run_spark_bfs(factory_for(scenario), SparkBfsOptions(tmp_path / "run", driver_seconds=1e9,
                                                                     keep_going=True))
    depths = [depth for depth, _ in read]
    assert depths == sorted(set(depths)) == list(range(len(on_driver.stats.levels)))  # each level read once
    partly_held = [i + 1 for i, level in enumerate(on_driver.stats.levels[:-1]) if level.new > 40]
    assert partly_held and all("data" in columns for depth, columns in read if depth in partly_held)
    local = run_bfs(factory_for(scenario)(), BfsOptions(keep_going=True))
    assert (on_driver.stats.distinct, on_driver.stats.generated) == (local.stats.distinct, local.stats.generated)


@pytest.mark.parametrize(("asked", "backend"), [(None, "system"), ("mimalloc", "mimalloc")])
def test_the_engine_has_arrow_allocate_with_malloc_unless_told_otherwise(asked: str | None, backend: str) -> None:
    """Importing the Spark engine before pyarrow gives Arrow the C library's allocator (``spark_explore``'s
    package docstring: the driver's memory goes back to the system between levels); a pool named in
    ``ARROW_DEFAULT_MEMORY_POOL`` is kept."""
    env = {name: value for name, value in os.environ.items() if name != "ARROW_DEFAULT_MEMORY_POOL"}
    if asked is not None:
        env["ARROW_DEFAULT_MEMORY_POOL"] = asked
    probe = "import spark_explore.bfs, pyarrow; print(pyarrow.default_memory_pool().backend_name)"
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == [backend]


class _PartsModel:
    """A model whose states are ``(part, bytes)``, the part one object per first byte: what ``frontier_runs`` reads."""

    def __init__(self, shares: bool) -> None:
        self.parts: dict[bytes, object] = {}
        if shares:
            self.shared_parts = lambda state: (state[0],)

    def decode(self, data: bytes) -> tuple[object, bytes]:
        return self.parts.setdefault(data[:1], object()), data


def test_a_worker_expands_its_partition_grouped_by_the_parts_its_states_share(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A Spark worker decodes GROUP_ROWS rows of its partition, Arrow batch after batch, and expands them in runs of
    RUN_ROWS grouped by the parts their states share, as the driver expands a level; without ``shared_parts``, batch by
    batch as they come. Every state comes once, with its own fingerprint."""
    monkeypatch.setattr(spark_level, "GROUP_ROWS", 4)
    monkeypatch.setattr(spark_level, "RUN_ROWS", 3)
    data = [b"a0", b"b1", b"a2", b"c3", b"b4", b"a5", b"c6"]
    batches = [pa.RecordBatch.from_pydict({"fp": list(range(k, min(k + 2, 7))), "data": data[k:k + 2]})
               for k in range(0, 7, 2)]  # four batches: two chunks, of 4 and 3 rows

    def runs(model: _PartsModel) -> list[list[tuple[int, bytes]]]:
        return [[(int(fp), state[1]) for fp, state in zip(fps, states, strict=True)]
                for fps, states in spark_level.frontier_runs(cast(Any, model), iter(batches))]

    assert runs(_PartsModel(shares=True)) == [
        [(0, b"a0"), (2, b"a2"), (1, b"b1")], [(3, b"c3")],  # the first chunk: a, then b, then c
        [(4, b"b4"), (5, b"a5"), (6, b"c6")],  # the second: b, a, c, as its parts first come in it
    ]
    assert runs(_PartsModel(shares=False)) == [[(k, data[k]) for k in range(j, min(j + 2, 7))] for j in (0, 2, 4, 6)]
