"""Seeded random simulation on Spark: the walks of :mod:`explorer.simulation` as Spark tasks.

The driver runs the same rounds as the local engine (:func:`explorer.simulation.rounds`); a round
is one Spark job whose tasks run a share of the round's walks each. Every walk is seeded from the
run's seed and its own number (:func:`explorer.simulation.walk_seed`), whichever task or executor
runs it, so the walks and therefore the result are the local engine's for the same seed.

Per walk a task sends back its :class:`~explorer.simulation.WalkSummary` (findings, length, end,
per-action counts) and the ``(action name, fingerprint)`` pairs of the states it visited. The
summaries are collected after each round, so that a violation stops the run at the end of its
round; the pairs stay in Spark (persisted with the round) and are counted once, at the end, with
a ``distinct``: distinct states in total and per action, as the local engine counts them in sets.
The discoveries are rebuilt on the driver by running their walks again
(:meth:`explorer.simulation.Walker.discovery`), which also checks that the model behaves on the
driver as it did on the executors.

The model is rebuilt on each Python worker from its :class:`~explorer.contract.ModelFactory` and
cached there (:func:`spark_explore.level.worker_model`); states never leave the workers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import attrs

from explorer.contract import ModelFactory
from explorer.results import ExplorationResult
from explorer.simulation import (
    SimulationOptions,
    SimulationProgress,
    SimulationProgressPrinter,
    Tally,
    Walker,
    WalkSummary,
    rounds,
    simulation_result,
)
from spark_explore.level import spare_the_collection_after_the_task, worker_model
from spark_explore.session import DEFAULT_MASTER, build_session

if TYPE_CHECKING:
    from pyspark import RDD

ENGINE = "simulation-spark"

#: What a task sends back per walk: its summary and the (action name, fingerprint) pairs it visited.
WalkRow = tuple[WalkSummary, tuple[tuple[str, int], ...]]


@attrs.frozen
class SparkSimulationOptions:
    """Where the walks run. ``run_dir`` receives Spark's log configuration; ``master`` None keeps
    the master ``spark-submit`` chose; ``conf`` overrides kmc's session defaults; ``progress``
    receives one line per round; ``keep_session`` leaves a session this run started running."""

    run_dir: Path = attrs.field(converter=Path)
    master: str | None = DEFAULT_MASTER
    conf: Mapping[str, str] = attrs.field(factory=dict)
    progress: TextIO | None = attrs.field(default=None, eq=False)
    keep_session: bool = False
    ui: bool = False


def walk_partition(factory: ModelFactory[Any, Any], options: SimulationOptions
                   ) -> Callable[[Iterable[int]], Iterator[WalkRow]]:
    """The ``mapPartitions`` function running the walks whose numbers a partition holds."""

    def run(numbers: Iterable[int]) -> Iterator[WalkRow]:
        model, _ = worker_model(factory)
        walker = Walker(model, options)
        for number in numbers:
            record = walker.walk(number)
            yield record.summary, tuple((name, fp) for fp, name in record.visited())
        spare_the_collection_after_the_task()

    return run


def count_visited(pairs: RDD[tuple[str, int]], partitions: int) -> tuple[int, dict[str, int]]:
    """The number of distinct fingerprints among ``(action name, fingerprint)`` pairs, and per action
    name the number of distinct fingerprints it reached (one shuffle, one job)."""

    def names_of(fp_names: Iterable[tuple[int, frozenset[str]]]) -> Iterator[dict[str | None, int]]:
        counts: dict[str | None, int] = {}
        for _, names in fp_names:
            counts[None] = counts.get(None, 0) + 1  # None: the distinct fingerprints in total
            for name in names:
                if name:
                    counts[name] = counts.get(name, 0) + 1
        yield counts

    def merge(a: dict[str | None, int], b: dict[str | None, int]) -> dict[str | None, int]:
        return {key: a.get(key, 0) + b.get(key, 0) for key in a.keys() | b.keys()}

    by_fingerprint = pairs.map(lambda pair: (pair[1], frozenset((pair[0],)))).reduceByKey(
        frozenset.union, numPartitions=max(1, partitions))
    counts = by_fingerprint.mapPartitions(names_of).fold({}, merge)
    total = counts.pop(None, 0)
    return total, {str(name): count for name, count in counts.items()}


def run_spark_simulation(factory: ModelFactory[Any, Any], options: SimulationOptions,
                         spark_options: SparkSimulationOptions) -> ExplorationResult:
    """Run the walks of ``options`` on the model built by ``factory`` as Spark tasks; the result
    equals :func:`explorer.simulation.run_simulation`'s for the same seed (but for its wall times,
    its engine name and the Spark master in its details)."""
    from pyspark import StorageLevel
    from pyspark.sql import SparkSession

    walker = Walker(factory(), options)
    plain = attrs.evolve(options, progress=None)  # what the tasks need, picklable
    spark_options.run_dir.mkdir(parents=True, exist_ok=True)
    started_here = SparkSession.getActiveSession() is None
    spark = build_session(spark_options.master, spark_options.conf, checkpoint_dir=spark_options.run_dir,
                          ui=spark_options.ui)
    sc = spark.sparkContext
    printer = SimulationProgressPrinter(spark_options.progress) if spark_options.progress is not None else None
    start = time.perf_counter()
    tally = Tally()
    visited: list[RDD[tuple[str, int]]] = []
    rows: list[RDD[WalkRow]] = []
    try:
        for numbers in rounds(options.walks):
            slices = max(1, min(len(numbers), 2 * sc.defaultParallelism))
            round_rows = sc.parallelize(numbers, slices).mapPartitions(walk_partition(factory, plain))
            round_rows.persist(StorageLevel.MEMORY_AND_DISK)
            rows.append(round_rows)
            for summary in sorted(round_rows.map(lambda row: row[0]).collect(), key=lambda s: s.walk):
                tally.add(summary)
            visited.append(round_rows.flatMap(lambda row: row[1]))
            if printer is not None:
                printer(SimulationProgress(time.perf_counter() - start, tally.walks, options.walks,
                                           tally.total_generated, None))
            if tally.violated:
                break
        distinct, by_action = count_visited(sc.union(visited), sc.defaultParallelism)
        seconds = time.perf_counter() - start
        master = str(sc.master)
    finally:
        for round_rows in rows:
            round_rows.unpersist()
        if started_here and not spark_options.keep_session:
            spark.stop()
    return simulation_result(walker, options, tally, distinct, by_action, seconds, engine=ENGINE,
                             details={"master": master})
