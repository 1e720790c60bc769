"""The Spark BFS (engine ``"spark"``): the local BFS's search, one Spark job per level.

The search is the one :mod:`explorer.bfs` runs, with the same rules (:mod:`explorer.results`): the
same expansion function, the same parent rule, the same per-property pick of findings, the same
bounds at level boundaries. Only storage differs. Level ``d`` is one Spark job whose plan

1. reads the frontier (``fp``, ``data``) from the Parquet of level ``d`` and expands it partition by
   partition with :func:`spark_explore.level.partition_expander` (``mapInArrow`` calling
   :func:`explorer.expand.expand`); per-action counts and findings come back through an
   accumulator, successors flow on as rows;
2. groups the successors by child fingerprint, keeping the smallest
   ``(parent fingerprint, action index)`` (the parent rule);
3. removes the fingerprints already visited with an explicit ``LEFT ANTI JOIN`` against the
   ``fp`` column of the Parquet of levels ``0..d`` (the visited set is the levels themselves);
4. writes the survivors as the Parquet of level ``d+1``.

The driver then counts the new level from its files, picks per property the finding with the
smallest :meth:`~explorer.results.Candidate.key`, and rewrites the manifest
(:mod:`spark_explore.manifest`). Nothing is cached between levels: each level is read back from
its own files, which is what cuts the lineage (a level's plan never reaches further back than the
previous level's files, so a lost executor costs at most the recomputation of one level's tasks).

Measured on two cores (``bench/spark_vs_local.py``, local[*]): a level costs about 0.7 s however
small it is while the visited set is small (toy controller MC, 169K states: 8x the local BFS's
wall time); the fixed cost grows with the visited set, which every level shuffles for the
anti-join (about 2.2 s per level at 3.4M states, MC3: 1.2x the local BFS, whose own speed drops).
A bucketed visited table would avoid that shuffle; it is not done yet.

Counterexamples are rebuilt by :mod:`spark_explore.trace` from the parent pointers on disk and
their evidence recomputed on the driver. ``resume`` continues after the last level the manifest
records as complete.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import attrs

from explorer.bfs import bound_reached
from explorer.contract import Model, ModelFactory, Property
from explorer.fingerprint import fingerprint
from explorer.progress import ProgressPrinter, ProgressSnapshot
from explorer.results import (
    ActionCoverage,
    Candidate,
    ExplorationResult,
    Outcome,
    Statistics,
    pick_per_property,
)
from spark_explore.level import (
    FRONTIER_COLUMNS,
    LEVEL_SCHEMA,
    FindingRow,
    notes_accumulator,
    partition_expander,
)
from spark_explore.manifest import LevelRecord, Manifest, read_manifest, write_manifest
from spark_explore.session import DEFAULT_MASTER, build_session
from spark_explore.trace import count_by_action, level_dir, rebuild_discovery

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

ENGINE = "spark"


class _PhaseClock:
    """Wall time of the phases of one level (reported per level, so the overhead is visible)."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.phases: dict[str, float] = {}

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.phases[phase] = round(now - self.last, 4)
        self.last = now

    def total(self) -> float:
        return time.perf_counter() - self.start


class SparkExploreError(Exception):
    """A run directory that cannot be used as asked (one sentence, naming the fix)."""


def _non_negative(_instance: Any, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value < 0:
        raise ValueError(f"{attribute.name} must be at least 0, got {value}")


@attrs.frozen
class SparkBfsOptions:
    """Where and how a Spark BFS runs.

    ``run_dir`` receives the level Parquet and the manifest; it must be reachable under the same
    path from the driver and every executor (local disk for ``local[*]`` and a loopback cluster,
    a shared volume otherwise). ``master`` None keeps the master ``spark-submit`` chose. ``conf``
    entries override kmc's session defaults. ``max_depth`` and ``max_states`` mean what they mean
    for :class:`explorer.bfs.BfsOptions`. ``progress`` receives one line per level. The scenario
    hash and kmc version are recorded in the manifest; ``resume`` refuses a run directory whose
    manifest names another scenario or version. ``keep_session`` leaves a session this run
    started running (one started by the caller is never stopped).
    """

    run_dir: Path = attrs.field(converter=Path)
    master: str | None = DEFAULT_MASTER
    conf: Mapping[str, str] = attrs.field(factory=dict)
    resume: bool = False
    max_depth: int | None = attrs.field(default=None, validator=_non_negative)
    max_states: int | None = attrs.field(default=None, validator=_non_negative)
    progress: TextIO | None = attrs.field(default=None, eq=False)
    scenario_hash: str = ""
    kmc_version: str = ""
    keep_session: bool = False
    ui: bool = False


def run_spark_bfs(factory: ModelFactory[Any, Any], options: SparkBfsOptions) -> ExplorationResult:
    """Explore every state of the model built by ``factory`` within the bounds of ``options``,
    breadth first on Spark; the result matches :func:`explorer.bfs.run_bfs` on the same model."""
    from pyspark.sql import SparkSession

    run_dir = options.run_dir
    model = factory()
    manifest = _prepare_run_dir(run_dir, options)
    if manifest is not None and manifest.completed and manifest.outcome != Outcome.INCONCLUSIVE.value:
        # Nothing left to explore: answer from the manifest and the Parquet on disk.
        return _Search(None, factory, model, options, manifest).result()
    started_here = SparkSession.getActiveSession() is None
    spark = build_session(options.master, options.conf, checkpoint_dir=run_dir, ui=options.ui)
    try:
        return _Search(spark, factory, model, options, manifest).run()
    finally:
        if started_here and not options.keep_session:
            spark.stop()


def _prepare_run_dir(run_dir: Path, options: SparkBfsOptions) -> Manifest | None:
    """The manifest to continue from (None for a new run), after checking it may be continued."""
    manifest = read_manifest(run_dir)
    if not options.resume:
        if manifest is not None:
            raise SparkExploreError(
                f"{run_dir} already holds a Spark run; pass --resume {run_dir} to continue it, "
                "or choose another output directory"
            )
        run_dir.mkdir(parents=True, exist_ok=True)
        return None
    if manifest is None:
        raise SparkExploreError(
            f"{run_dir} has no manifest.json, so there is no Spark run to resume there; "
            "start a new run without --resume"
        )
    if manifest.scenario_hash != options.scenario_hash:
        raise SparkExploreError(
            f"{run_dir} was explored with another scenario (hash {manifest.scenario_hash}, this one is "
            f"{options.scenario_hash}); resume it with the scenario it started with, or start a new run"
        )
    if manifest.kmc_version != options.kmc_version:
        raise SparkExploreError(
            f"{run_dir} was written by kmc {manifest.kmc_version}, this is kmc {options.kmc_version}; "
            "states may be encoded differently, so start a new run"
        )
    return manifest


class _Search:
    """One run: :meth:`run` is the level loop, :meth:`_expand_level` one level's Spark jobs."""

    def __init__(
        self,
        spark: SparkSession | None,
        factory: ModelFactory[Any, Any],
        model: Model[Any, Any],
        options: SparkBfsOptions,
        manifest: Manifest | None,
    ) -> None:
        self.spark = spark
        self.factory = factory
        self.model = model
        self.options = options
        self.run_dir = options.run_dir
        self.properties: Sequence[Property] = model.properties()
        self.kinds = {p.name: p.kind for p in self.properties}
        self.property_order = {p.name: i for i, p in enumerate(self.properties)}
        self.start = time.perf_counter()
        self.manifest = manifest
        self.seconds_before = manifest.seconds if manifest is not None else 0.0
        self.printer = ProgressPrinter(options.progress) if options.progress is not None else None

    @property
    def master(self) -> str:
        if self.spark is not None:
            return str(self.spark.sparkContext.master)
        return self.manifest.master if self.manifest is not None else ""

    # -- the level loop -------------------------------------------------------------------------

    def run(self) -> ExplorationResult:
        manifest = self._continue_from() if self.manifest is not None else self._initial_level()
        while True:
            depth = len(manifest.levels)
            stop_reason = self._bound_reached(depth, manifest.distinct)
            record, best = self._expand_level(manifest, depth, generate=stop_reason is None)
            manifest = attrs.evolve(manifest, levels=(*manifest.levels, record))
            recorded = [best[name] for name in sorted(best, key=self.property_order.__getitem__)]
            manifest = attrs.evolve(manifest, recorded=(*manifest.recorded, *recorded))
            # States of an unexpanded level stay on the queue: their successors were not computed.
            queue = record.new if stop_reason is None else record.frontier
            if any(c.kind.is_violation for c in recorded):
                manifest = self._finish(manifest, Outcome.VIOLATION, queue)
            elif stop_reason is not None:
                manifest = self._finish(manifest, Outcome.INCONCLUSIVE, queue, stop_reason)
            elif record.new == 0:
                manifest = self._finish(manifest, Outcome.OK, 0)
            self._save(manifest)
            self._report_level(record, manifest)
            if manifest.completed:
                return self.result()

    def _initial_level(self) -> Manifest:
        """Level 0: the initial states, de-duplicated in order; each counts as generated (TLC)."""
        assert self.spark is not None
        rows: dict[int, bytes] = {}
        generated = 0
        for state in self.model.init_states():
            generated += 1
            data = self.model.encode(state)
            rows.setdefault(fingerprint(data), data)
        frame = self.spark.createDataFrame(
            [(fp, None, None, None, data) for fp, data in rows.items()], schema=LEVEL_SCHEMA
        )
        frame.coalesce(1).write.mode("overwrite").parquet(str(level_dir(self.run_dir, 0)))
        manifest = Manifest(
            scenario_hash=self.options.scenario_hash,
            kmc_version=self.options.kmc_version,
            master=self.master,
            initial_states=len(rows),
            initial_generated=generated,
        )
        self._save(manifest)
        return manifest

    def _continue_from(self) -> Manifest:
        """The manifest to resume with: a level that was only checked (a bound stopped the search
        there) is expanded again, with the findings recorded on it."""
        manifest = self.manifest
        assert manifest is not None
        levels = manifest.levels
        if levels and not levels[-1].expanded:
            dropped = levels[-1].depth
            manifest = attrs.evolve(
                manifest,
                levels=levels[:-1],
                recorded=tuple(c for c in manifest.recorded if c.depth != dropped),
            )
        return attrs.evolve(manifest, completed=False, outcome=None, reason="", queue=0, master=self.master)

    def _bound_reached(self, depth: int, distinct: int) -> str | None:
        """Why the level at ``depth`` must not be expanded, or None (the local BFS's rule)."""
        return bound_reached(depth, distinct, self.options.max_depth, self.options.max_states)

    # -- one level ------------------------------------------------------------------------------

    def _expand_level(
        self, manifest: Manifest, depth: int, *, generate: bool
    ) -> tuple[LevelRecord, dict[str, Candidate]]:
        """Expand level ``depth`` in one Spark job; it writes level ``depth + 1`` when ``generate``."""
        assert self.spark is not None
        clock = _PhaseClock()
        frontier_size = manifest.initial_states if depth == 0 else manifest.levels[depth - 1].new
        frontier = self._read_levels(depth, depth).select(*FRONTIER_COLUMNS)
        notes = notes_accumulator(self.spark.sparkContext)
        expander = partition_expander(self.factory, notes, generate=generate, skip=manifest.examples_found)
        successors = frontier.mapInArrow(expander, LEVEL_SCHEMA)
        new_by_action: dict[str, int] = {}
        if generate:
            self._write_next_level(successors, depth)
            clock.lap("expand+deduplicate+write")
            new_by_action = count_by_action(level_dir(self.run_dir, depth + 1))
            clock.lap("count")
        else:
            # Checked, not expanded: run the expander for its findings only.
            successors.write.format("noop").mode("overwrite").save()
            clock.lap("check")
        generated_by_action: dict[str, int] = {}
        candidates: list[Candidate] = []
        for partition in notes.value.values():
            for name, count in partition.generated:
                generated_by_action[name] = generated_by_action.get(name, 0) + count
            candidates.extend(self._candidate(finding, depth) for finding in partition.findings)
        new = sum(new_by_action.values())
        record = LevelRecord(
            depth=depth,
            frontier=frontier_size,
            generated=sum(generated_by_action.values()),
            new=new,
            distinct_total=manifest.distinct + new,
            seconds=clock.total(),
            expanded=generate,
            generated_by_action=dict(sorted(generated_by_action.items())),
            new_by_action=dict(sorted(new_by_action.items())),
            phases=clock.phases,
        )
        return record, pick_per_property(candidates)

    def _read_levels(self, first: int, last: int) -> DataFrame:
        """The states of levels ``first..last`` (the schema is given, so no file footer is read
        while planning; a level directory the manifest does not count is never read)."""
        assert self.spark is not None
        paths = [str(level_dir(self.run_dir, k)) for k in range(first, last + 1)]
        return self.spark.read.schema(LEVEL_SCHEMA).parquet(*paths)

    def _write_next_level(self, successors: DataFrame, depth: int) -> None:
        """De-duplicate the successors of level ``depth`` against themselves (parent rule) and the
        visited set (anti-join), and write them as level ``depth + 1``."""
        from pyspark.sql import functions as F

        # The parent rule of explorer.results: the smallest (parent fp, action index) wins; the
        # action name rides along (it is a function of the transition). All successors with one
        # fingerprint carry the same canonical bytes, so any of them will do.
        candidates = successors.groupBy("fp").agg(
            F.min(F.struct("parent_fp", "action_index", "action_name")).alias("via"),
            F.any_value("data").alias("data"),
        )
        visited = self._read_levels(0, depth).select("fp")
        new_states = candidates.join(visited, on="fp", how="left_anti").select(
            "fp", "via.parent_fp", "via.action_index", "via.action_name", "data"
        )
        target = str(level_dir(self.run_dir, depth + 1))
        new_states.write.mode("overwrite").parquet(target)

    def _candidate(self, finding: FindingRow, depth: int) -> Candidate:
        return Candidate(
            property=finding.property,
            kind=self.kinds[finding.property],
            evidence={},  # recomputed on the driver if this finding is reported (spark_explore.trace)
            depth=depth,
            fingerprint=finding.fingerprint,
            action_index=finding.action_index,
            child_fingerprint=finding.child_fingerprint,
        )

    # -- bookkeeping ----------------------------------------------------------------------------

    def _elapsed(self) -> float:
        return self.seconds_before + time.perf_counter() - self.start

    def _finish(self, manifest: Manifest, outcome: Outcome, queue: int, reason: str = "") -> Manifest:
        return attrs.evolve(manifest, completed=True, outcome=outcome.value, reason=reason, queue=queue)

    def _save(self, manifest: Manifest) -> None:
        manifest = attrs.evolve(manifest, seconds=self._elapsed())
        write_manifest(self.run_dir, manifest)
        self.manifest = manifest

    def _report_level(self, record: LevelRecord, manifest: Manifest) -> None:
        stream = self.options.progress
        if stream is None:
            return
        rate = record.frontier / record.seconds if record.seconds > 0 else 0.0
        print(
            f"Level {record.depth}: {record.frontier:,} states expanded, {record.generated:,} states "
            f"generated, {record.new:,} new, {record.distinct_total:,} distinct states found, "
            f"{record.seconds:.2f}s ({rate:,.0f} states/s).",
            file=stream,
            flush=True,
        )
        if self.printer is not None:
            self.printer(
                ProgressSnapshot(
                    self._elapsed(),
                    len(manifest.levels),
                    manifest.generated,
                    manifest.distinct,
                    manifest.queue if manifest.completed else record.new,
                )
            )

    # -- the result -----------------------------------------------------------------------------

    def result(self) -> ExplorationResult:
        manifest = self.manifest
        assert manifest is not None and manifest.completed and manifest.outcome is not None
        generated_by_action: dict[str, int] = {}
        new_by_action: dict[str, int] = {}
        for level in manifest.levels:
            for name, count in level.generated_by_action.items():
                generated_by_action[name] = generated_by_action.get(name, 0) + count
            for name, count in level.new_by_action.items():
                new_by_action[name] = new_by_action.get(name, 0) + count
        stats = Statistics(
            generated=manifest.generated,
            distinct=manifest.distinct,
            depth=len(manifest.levels),
            queue=manifest.queue,
            seconds=manifest.seconds,
            levels=tuple(level.stats() for level in manifest.levels),
            actions=tuple(
                ActionCoverage(name, generated, new_by_action.get(name, 0))
                for name, generated in sorted(generated_by_action.items())
            ),
        )
        outcome = Outcome(manifest.outcome)
        never_found: tuple[str, ...] = ()
        if outcome is Outcome.OK:
            found = manifest.examples_found
            never_found = tuple(
                name for name, kind in self.kinds.items() if not kind.is_violation and name not in found
            )
        discoveries = tuple(
            rebuild_discovery(self.run_dir, self.model, self.properties, candidate) for candidate in manifest.recorded
        )
        return ExplorationResult(
            outcome=outcome,
            engine=ENGINE,
            stats=stats,
            discoveries=discoveries,
            never_found=never_found,
            reason=manifest.reason,
            details={"master": self.master, "run_dir": str(self.run_dir)},
        )
