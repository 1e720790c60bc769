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
records as complete, once every level's row count and fingerprint checksum match the manifest.

``max_states`` holds within a level as in the local BFS: a level whose new states would exceed it
is rewritten with only the new states of smallest fingerprint that fit. A time limit or a stop
request (:class:`explorer.stopping.Limits`) cancels the running job from another thread; the
level in progress is abandoned and the run directory keeps the complete levels, to resume from.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import attrs

from explorer.bfs import bound_reached
from explorer.checkpoint import ResumeError
from explorer.contract import Model, ModelFactory, Property
from explorer.fingerprint import checksum, fingerprint
from explorer.progress import ProgressPrinter, ProgressSnapshot
from explorer.results import (
    ActionCoverage,
    Candidate,
    ExplorationResult,
    Outcome,
    Statistics,
    StopCause,
    pick_per_property,
)
from explorer.stopping import Limits
from spark_explore.level import (
    FRONTIER_COLUMNS,
    LEVEL_SCHEMA,
    FindingRow,
    notes_accumulator,
    partition_expander,
)
from spark_explore.manifest import MANIFEST_NAME, LevelRecord, Manifest, read_manifest, write_manifest
from spark_explore.session import DEFAULT_MASTER, build_session
from spark_explore.trace import LevelSummary, level_dir, level_summary, rebuild_discovery, verify_level

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


class SparkExploreError(ResumeError):
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
    started running (one started by the caller is never stopped). ``limits`` gives the time limit
    and the stop request (its memory budget is the local engine's: a Spark driver holds little, and
    Spark's own memory is set by its configuration).
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
    limits: Limits = attrs.field(factory=Limits)


def run_spark_bfs(factory: ModelFactory[Any, Any], options: SparkBfsOptions) -> ExplorationResult:
    """Explore every state of the model built by ``factory`` within the bounds of ``options``,
    breadth first on Spark; the result matches :func:`explorer.bfs.run_bfs` on the same model.

    Raises :class:`SparkExploreError` (a :class:`~explorer.checkpoint.ResumeError`) when the run
    directory cannot be used as asked; everything is checked before a session is started.
    """
    from pyspark.sql import SparkSession

    run_dir = options.run_dir
    model = factory()
    manifest = _prepare_run_dir(run_dir, options, model)
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


def _prepare_run_dir(run_dir: Path, options: SparkBfsOptions, model: Model[Any, Any]) -> Manifest | None:
    """The manifest to continue from (None for a new run), after checking it may be continued:
    same scenario and kmc version, every recorded level's files as the manifest counted them."""
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
    names = {p.name for p in model.properties()}
    for candidate in manifest.recorded:
        if candidate.property not in names or not 0 <= candidate.depth <= len(manifest.levels):
            raise SparkExploreError(
                f"{run_dir / MANIFEST_NAME} records a finding of {candidate.property!r} at depth {candidate.depth} "
                "that this run cannot have made; the manifest is corrupt, start a new run"
            )
    verify_level(run_dir, 0, manifest.initial_states, manifest.initial_checksum)
    for record in manifest.levels:
        if record.expanded:
            verify_level(run_dir, record.depth + 1, record.new, record.checksum)
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
        self.started = time.monotonic()
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
        limits = self.options.limits
        with self._cancelled_when_stopped():
            while True:
                depth = len(manifest.levels)
                stopped = limits.exceeded(self.started)
                if stopped is not None:
                    return self._stopped(manifest, *stopped)
                stop_reason = self._bound_reached(depth, manifest)
                try:
                    record, best = self._expand_level(manifest, depth, generate=stop_reason is None)
                except Exception:
                    stopped = limits.exceeded(self.started)
                    if stopped is None:
                        raise
                    return self._stopped(manifest, *stopped)  # the job was cancelled to stop
                manifest = attrs.evolve(manifest, levels=(*manifest.levels, record))
                recorded = [best[name] for name in sorted(best, key=self.property_order.__getitem__)]
                manifest = attrs.evolve(manifest, recorded=(*manifest.recorded, *recorded))
                # States of an unexpanded level stay on the queue: their successors were not computed.
                queue = record.new if stop_reason is None else record.frontier
                if any(c.kind.is_violation for c in recorded):
                    manifest = self._finish(manifest, Outcome.VIOLATION, queue)
                elif stop_reason is not None:
                    cause = StopCause.DEPTH_BOUND if stop_reason.startswith("depth") else StopCause.STATE_BOUND
                    manifest = self._finish(manifest, Outcome.INCONCLUSIVE, queue, stop_reason, cause)
                elif record.new == 0:
                    manifest = self._finish(manifest, Outcome.OK, 0)
                self._save(manifest)
                self._report_level(record, manifest)
                if manifest.completed:
                    return self.result()

    @contextmanager
    def _cancelled_when_stopped(self) -> Iterator[None]:
        """Cancel the running Spark job, from another thread, when a stop is requested or the time
        limit passes (a request may come from a signal handler, which must not call the JVM itself:
        the main thread is inside a call to it)."""
        limits = self.options.limits
        finished = threading.Event()

        def cancel() -> None:
            threading.Thread(target=self._cancel_jobs, name="kmc-cancel", daemon=True).start()

        def at_deadline(seconds: float) -> None:
            if not finished.wait(seconds):
                self._cancel_jobs()

        if limits.time_limit is not None:
            remaining = max(0.0, limits.time_limit - (time.monotonic() - self.started))
            threading.Thread(target=at_deadline, args=(remaining,), name="kmc-deadline", daemon=True).start()
        try:
            if limits.stop is not None:
                with limits.stop.listening(cancel):
                    yield
            else:
                yield
        finally:
            finished.set()

    def _cancel_jobs(self) -> None:
        if self.spark is not None:
            # A session that is stopping has nothing left to cancel.
            with contextlib.suppress(Exception):
                self.spark.sparkContext.cancelAllJobs()

    def _stopped(self, manifest: Manifest, cause: StopCause, reason: str) -> ExplorationResult:
        """The result of a search stopped by a budget or a request: the complete levels stay on disk
        (the level in progress is abandoned) and the manifest says why, so that --resume continues."""
        queue = manifest.levels[-1].new if manifest.levels else manifest.initial_states
        manifest = attrs.evolve(
            manifest, completed=False, outcome=Outcome.INCONCLUSIVE.value, reason=reason, queue=queue,
            stopped_by=cause.value,
        )
        self._save(manifest)
        return self.result()

    def _initial_level(self) -> Manifest:
        """Level 0: the initial states, de-duplicated in order; each counts as generated (TLC)."""
        assert self.spark is not None
        rows: dict[int, bytes] = {}
        generated = 0
        self.run_dir.mkdir(parents=True, exist_ok=True)
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
            initial_checksum=checksum(rows),
        )
        self._save(manifest)
        return manifest

    def _continue_from(self) -> Manifest:
        """The manifest to resume with: a level that was only checked (a bound stopped the search
        there) is expanded again, with the findings recorded on it; so is a level whose new states
        ``max_states`` truncated."""
        manifest = self.manifest
        assert manifest is not None
        levels = manifest.levels
        if levels and not levels[-1].expanded:
            levels = levels[:-1]
        if levels and levels[-1].truncated:
            levels = levels[:-1]
        manifest = attrs.evolve(
            manifest, levels=levels, recorded=tuple(c for c in manifest.recorded if c.depth < len(levels))
        )
        return attrs.evolve(
            manifest, completed=False, outcome=None, reason="", queue=0, master=self.master, stopped_by=None
        )

    def _bound_reached(self, depth: int, manifest: Manifest) -> str | None:
        """Why the level at ``depth`` must not be expanded, or None (the local BFS's rule)."""
        truncated = bool(manifest.levels) and manifest.levels[-1].truncated
        return bound_reached(
            depth, manifest.distinct, self.options.max_depth, self.options.max_states, truncated=truncated
        )

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
        level_checksum: int | None = None
        truncated = False
        if generate:
            self._write_next_level(successors, depth)
            clock.lap("expand+deduplicate+write")
            summary = level_summary(level_dir(self.run_dir, depth + 1))
            clock.lap("count")
            room = None if self.options.max_states is None else self.options.max_states - manifest.distinct
            if room is not None and summary.rows > room:
                summary = self._truncate_level(depth + 1, room)
                truncated = True
                clock.lap("truncate")
            new_by_action, level_checksum = summary.by_action, summary.checksum
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
            checksum=level_checksum,
            truncated=truncated,
        )
        return record, pick_per_property(candidates)

    def _truncate_level(self, depth: int, room: int) -> LevelSummary:
        """Keep, of the states written as level ``depth``, the ``room`` with the smallest fingerprints
        (the local BFS keeps the same ones when max_states is reached within a level)."""
        assert self.spark is not None
        target = level_dir(self.run_dir, depth)
        kept = target.with_name(f"{target.name}.truncated")
        shutil.rmtree(kept, ignore_errors=True)
        self._read_levels(depth, depth).orderBy("fp").limit(room).write.parquet(str(kept))
        shutil.rmtree(target)
        kept.rename(target)
        return level_summary(target)

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

    def _finish(
        self, manifest: Manifest, outcome: Outcome, queue: int, reason: str = "", cause: StopCause | None = None
    ) -> Manifest:
        return attrs.evolve(
            manifest, completed=True, outcome=outcome.value, reason=reason, queue=queue,
            stopped_by=None if cause is None else cause.value,
        )

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
        assert manifest is not None and manifest.outcome is not None
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
        options = self.options
        return ExplorationResult(
            outcome=outcome,
            engine=ENGINE,
            stats=stats,
            discoveries=discoveries,
            never_found=never_found,
            reason=manifest.reason,
            details={"master": self.master, "run_dir": str(self.run_dir)},
            properties=tuple((p.name, p.kind) for p in self.properties),
            stopped_by=None if manifest.stopped_by is None else StopCause(manifest.stopped_by),
            bounds={
                "max_depth": options.max_depth,
                "max_states": options.max_states,
                "time_limit": options.limits.time_limit,
                "max_memory": None,
                "fingerprint_bits": 64,
            },
        )
