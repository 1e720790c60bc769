"""The Spark BFS (engine ``"spark"``): the local BFS's search, large levels as Spark jobs.

The search is the one :mod:`explorer.bfs` runs, with the same rules (:mod:`explorer.results`): the
same expansion function, the same parent rule, the same per-property pick of findings, the same
bounds at level boundaries. Only storage differs: every level is written as Parquet in the run
directory (``levels/level=NNNN``: the states first reached at that depth, each with its chosen
parent transition) and counted in the manifest (:mod:`spark_explore.manifest`), whichever way it
was computed. The driver also keeps every visited fingerprint in one sorted array (8 bytes a
state, 16 at 128 bits; the parent pointers stay on disk).

Fingerprints are 64 bits, or 128 when ``fingerprint_bits`` asks (for runs so large that the 64-bit
collision estimate is not negligible): the same search with wider fingerprints. Spark has no
128-bit integer, so a 128-bit level stores each fingerprint as two longs whose signed order is the
integer order (:mod:`spark_explore.columns`), and every ordering below (the parent rule, the
truncation) orders them as the integers they stand for, as the local engine's 128-bit arrays do.
The width is recorded in the manifest; a resumed run keeps it.

A level is expanded in one of two ways:

* **on the driver**, when it is small: its frontier is read from its Parquet with pyarrow and expanded batch
  by batch with :func:`explorer.expand.expand_batch` (the states it holds grouped by the parts they share, as the
  local BFS expands them: :func:`explorer.expand.grouped_order`), de-duplicated by sorting
  (:class:`explorer.visited.NextLevel`, the local BFS's own code) and written as the next level's Parquet. A
  level is small when the driver's best measured time per state on earlier levels, times the frontier, is
  below ``driver_seconds`` (and the frontier below ``driver_max_states``): a Spark job has a fixed cost of
  about a second per level (measured in ``bench/``), which a small level cannot win back. The run's first Spark
  job must also win back :data:`FIRST_JOB_SECONDS`, the cost of workers that begin with empty memos: it is made
  only when the time Spark is estimated to save on its level, times :data:`LEVELS_AHEAD`, covers that. Spark's
  time for a state is estimated from the driver's (:data:`WORKER_FACTOR`, :data:`SPARK_SECONDS_PER_STATE`)
  shared among the master's task slots (``local[N]``'s N; on a cluster, the cores its executors have registered
  once the session runs, and two before), so a model whose step is cheap, or a master with one core, keeps its
  levels on the driver, where Spark would not win the first job's cost back. A model that offers ``intern_state``
  has the new states of a driver level kept beside their bytes (up to :data:`explorer.bfs.KEEP_STATES`), so that
  the next level, when the driver expands it too, takes them as they are instead of decoding the rows it reads back
  (whose fingerprints must be those kept, in the same order), and reads the level's bytes only when some of its
  states were not kept; the bytes are dropped once the level's table is built. The model then forgets what
  none of those states holds (``retain_parts``) and the memory freed goes back to the system, as in the local
  BFS (the driver's Arrow buffers come from ``malloc`` for that: :mod:`spark_explore`). The driver's search runs
  with the cyclic garbage collector's youngest generation collected less often, as the local BFS does;
* **as one Spark job**, when it is large. The driver writes the sorted visited fingerprints to the
  run directory (``visited/fingerprints-NNNN.npy``); the plan

  1. reads the frontier (``fp``, ``data``) from the Parquet of level ``d`` and expands it partition by
     partition with :func:`spark_explore.level.partition_expander` (``mapInArrow`` calling
     ``expand_batch``), which drops the successors found in the visited fingerprints by binary
     search, the anti-join, before they are shuffled; per-action counts and findings come back
     through an accumulator;
  2. groups the remaining successors by child fingerprint, keeping the smallest
     ``(parent fingerprint, action index)`` (the parent rule; at 128 bits the struct
     ``(parent_fp_hi, parent_fp_lo, action_index)``, whose order is the same);
  3. writes them as the Parquet of level ``d+1``, a file per shuffle partition, which the next level's job reads
     a task per file: twice the task slots (:attr:`_Search.level_files`), the number the driver writes its levels
     in too.

  So a level's de-duplication costs the same however many levels came before it (an anti-join
  against every earlier level would read all their Parquet and shuffle it again).

The Spark session is started in a background thread (:class:`spark_explore.session.SessionStart`) while the
driver expands the first levels, as soon as the levels grow so that one of the next ones is likely to be a
Spark job (the level after the next, its size projected by the last level's growth, would be one by the rule
above: levels grow up to twofold per step early in a search, and a session takes several seconds to start); a
search whose levels all stay on the driver never starts one, and never waits for it (a JVM starting for nothing
would also take a core from the driver). Nothing is cached between levels: each level is read back from its own
files, which cuts the lineage.

The driver then picks per property the finding with the smallest
:meth:`~explorer.results.Candidate.key` and rewrites the manifest. Counterexamples are rebuilt by
:mod:`spark_explore.trace` from the parent pointers on disk and their evidence recomputed on the
driver. ``resume`` continues after the last level the manifest records as complete, once every
level's row count and checksums match the manifest and every stored state's bytes its fingerprint
(the visited fingerprints are read back from the levels).

``max_states`` holds within a level as in the local BFS: a level whose new states would exceed it
keeps only the new states of smallest fingerprint that fit. A time limit or a stop request
(:class:`explorer.stopping.Limits`) cancels the running job from another thread, or stops a driver
level between two batches; the level in progress is abandoned and the run directory keeps the
complete levels, to resume from.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from explorer.bfs import KEEP_STATES, bound_reached
from explorer.checkpoint import ResumeError, finished_run
from explorer.contract import Model, ModelFactory, Property
from explorer.expand import ActionNames, PropertySet, expand_batch, in_grouped_order, rarer_young_collections
from explorer.fingerprint import (
    FINGERPRINT_BITS,
    array_checksum,
    as_int,
    checksum,
    fingerprint,
    fingerprint_dtype,
    fingerprints_of,
)
from explorer.integrity import check_same_search, links_checksum
from explorer.progress import ProgressSnapshot
from explorer.results import (
    ActionCoverage,
    Candidate,
    ExplorationResult,
    Outcome,
    Statistics,
    StopCause,
    never_found,
    pick_per_property,
)
from explorer.stopping import Limits, release_free_memory, resident_memory
from explorer.visited import NO_ACTION, FingerprintSet, NextLevel
from spark_explore.columns import (
    column_fingerprints,
    fingerprint_arrays,
    fp_columns,
    frontier_columns,
    kth_smallest,
    level_arrow_schema,
    level_schema,
    parent_columns,
    stored_words,
)
from spark_explore.level import (
    FindingRow,
    new_states_table,
    notes_accumulator,
    partition_expander,
    worker_model,
)
from spark_explore.manifest import MANIFEST_NAME, LevelRecord, Manifest, read_manifest, write_manifest
from spark_explore.session import DEFAULT_MASTER, SessionStart, is_local_master, master_cores
from spark_explore.trace import (
    LevelSummary,
    level_dir,
    level_fingerprints,
    level_summary,
    rebuild_discovery,
    verify_level,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

ENGINE = "spark"

#: A level is expanded on the driver when its estimated time there is below this many seconds (see the module
#: docstring). Measured with ``bench/spark_costs.py kafka-large`` (2026-11-28, the model compiled, each task's
#: survivors frozen): on Python workers already started, a Spark level took 61-74 µs a frontier state on two cores
#: against the driver's 93-121 µs, and a level the driver expands in about 1.1 s took 1.1-1.35 s as a Spark job.
DEFAULT_DRIVER_SECONDS = 2.0
#: The first Spark job of a run costs this many seconds more than later ones, over its level and the next: its
#: Python workers begin with empty memos (``bench/spark_costs.py kafka-large``, 2026-11-28: its level of 44,880
#: states took 8.2-9.0 s, 180-200 µs a state, where the next level took 83 µs a state). Later jobs, on workers
#: already started, do not pay it.
FIRST_JOB_SECONDS = 5.0
#: A Spark task's time for a frontier state is about this many times the driver's, plus
#: :data:`SPARK_SECONDS_PER_STATE` (toy-MC3 and kafka-large, ``bench/spark_costs.py``, 2026-11-28: 26 µs of two
#: cores' time a state where the driver takes 15 µs, and 132 µs where it takes 100 µs, the JVM's share included).
#: The model's work in a Python worker whose memos are warm is the driver's (``bench/spark_worker.py``); the rest is
#: Spark's: the JVM's Parquet, shuffle and Arrow transfer, and the tasks' collections.
WORKER_FACTOR = 1.25
SPARK_SECONDS_PER_STATE = 7.5e-6
#: The first Spark job is judged on the time Spark saves on its level and on as much work again twice after it: a
#: search that reaches a level of that size has at least that much ahead (its levels shrink about as they grew;
#: after the level of their first Spark job, toy-MC3 had 6.4 times its frontier ahead and kafka-large 25 times).
LEVELS_AHEAD = 3.0
#: ... and its frontier holds at most this many states (the driver holds a driver level's bytes).
DEFAULT_DRIVER_MAX_STATES = 500_000
#: States the driver expands in one batch; between batches it looks at the clock and the stop request.
_DRIVER_BATCH = 512
#: The fewest rows a file of a level the driver writes holds (:func:`_write_level_files`): a small level is one file.
_MIN_FILE_ROWS = 1024
VISITED_DIR = "visited"


class _Stopped(Exception):
    """A driver level abandoned because a budget ran out or a stop was requested."""


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


def _fingerprint_width(_instance: Any, _attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value not in FINGERPRINT_BITS:
        raise ValueError(f"fingerprint_bits must be one of {FINGERPRINT_BITS}, got {value}")


@attrs.frozen
class SparkBfsOptions:
    """Where and how a Spark BFS runs.

    ``run_dir`` receives the level Parquet and the manifest; it must be reachable under the same
    path from the driver and every executor (local disk for ``local[*]`` and a loopback cluster,
    a shared volume otherwise). ``master`` None keeps the master ``spark-submit`` chose. ``conf``
    entries override kmc's session defaults. ``max_depth`` and ``max_states`` mean what they mean
    for :class:`explorer.bfs.BfsOptions`. ``progress`` is called with a snapshot of the search after each
    level, as the local engine's is, and ``on_level`` with the level's record (what it expanded,
    generated and found, and how long it took): the engine prints nothing itself. The scenario
    hash and kmc version are recorded in the manifest; ``resume`` refuses a run directory whose
    manifest names another scenario or version. ``keep_session`` leaves a session this run
    started running (one started by the caller is never stopped). ``limits`` gives the time limit
    and the stop request (its memory budget is the local engine's: a Spark driver holds little, and
    Spark's own memory is set by its configuration). ``driver_seconds`` and ``driver_max_states``
    decide which levels the driver expands itself (see the module docstring; 0 makes every level a
    Spark job). ``keep_going`` searches on after a violation, as :class:`explorer.bfs.BfsOptions`'s.
    Within a level, ``progress`` gets a snapshot at most every ``progress_interval_seconds``: the
    states a driver level has expanded, the finished tasks of a level's Spark job, or what the
    search waits for (``"starting Spark"`` while the session's JVM and workers start).
    ``fingerprint_bits`` is the fingerprints' width: None is 64 for a new run and, on ``resume``, the
    width the run was started with; a resume asking for another width is refused.
    """

    run_dir: Path = attrs.field(converter=Path)
    master: str | None = DEFAULT_MASTER
    conf: Mapping[str, str] = attrs.field(factory=dict)
    resume: bool = False
    max_depth: int | None = attrs.field(default=None, validator=_non_negative)
    max_states: int | None = attrs.field(default=None, validator=_non_negative)
    progress: Callable[[ProgressSnapshot], None] | None = attrs.field(default=None, eq=False)
    on_level: Callable[[LevelRecord], None] | None = attrs.field(default=None, eq=False)
    scenario_hash: str = ""
    kmc_version: str = ""
    keep_session: bool = False
    ui: bool = False
    limits: Limits = attrs.field(factory=Limits)
    driver_seconds: float = DEFAULT_DRIVER_SECONDS
    driver_max_states: int = DEFAULT_DRIVER_MAX_STATES
    keep_going: bool = False
    progress_interval_seconds: float = 10.0
    fingerprint_bits: int | None = attrs.field(default=None, validator=_fingerprint_width)


def run_spark_bfs(factory: ModelFactory[Any, Any], options: SparkBfsOptions) -> ExplorationResult:
    """Explore every state of the model built by ``factory`` within the bounds of ``options``,
    breadth first on Spark; the result matches :func:`explorer.bfs.run_bfs` on the same model.

    Raises :class:`SparkExploreError` (a :class:`~explorer.checkpoint.ResumeError`) when the run
    directory cannot be used as asked; everything is checked before a session is started.
    """
    run_dir = options.run_dir
    model = factory()
    manifest = _prepare_run_dir(run_dir, options, model)
    search = _Search(None, factory, model, options, manifest)
    try:
        with rarer_young_collections():  # as the local BFS: the driver's levels are its hot loop
            return search.run()
    finally:
        if search.session is not None:
            search.session.release(stop=not options.keep_session)


def _warm_up(factory: ModelFactory[Any, Any], spark: SparkSession) -> None:
    """A first job, run while the session starts: it starts the Python workers and builds the model
    in them, so that the first Spark level does not pay for that."""
    tasks = int(spark.sparkContext.defaultParallelism)
    spark.sparkContext.parallelize(range(tasks), tasks).foreach(partial(_build_model, factory))


def _build_model(factory: ModelFactory[Any, Any], _task: int) -> None:
    worker_model(factory)


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
    check_same_search(run_dir, (manifest.scenario_hash, manifest.kmc_version),
                      (options.scenario_hash, options.kmc_version), SparkExploreError)
    bits = manifest.fingerprint_bits
    if options.fingerprint_bits not in (None, bits):
        raise SparkExploreError(
            f"{run_dir} was explored with {bits}-bit fingerprints; resume it with --fingerprint-bits {bits} "
            "(or without --fingerprint-bits)"
        )
    if manifest.completed and manifest.outcome != Outcome.INCONCLUSIVE.value:
        # As the local engine answers, and before the levels are read: a finished run has nothing to verify.
        raise finished_run(run_dir, manifest.outcome)
    names = {p.name for p in model.properties()}
    for candidate in manifest.recorded:
        if candidate.property not in names or not 0 <= candidate.depth <= len(manifest.levels):
            raise SparkExploreError(
                f"{run_dir / MANIFEST_NAME} records a finding of {candidate.property!r} at depth {candidate.depth} "
                "that this run cannot have made; the manifest is corrupt, start a new run"
            )
    verify_level(run_dir, 0, manifest.initial_states, manifest.initial_checksum, manifest.initial_links, bits)
    for record in manifest.levels:
        if record.expanded:
            verify_level(run_dir, record.depth + 1, record.new, record.checksum, record.links, bits)
    return manifest


class _Search:
    """One run: :meth:`run` is the level loop, :meth:`_expand_level` one level, on the driver
    (:meth:`_expand_on_driver`) or as a Spark job (:meth:`_expand_on_spark`)."""

    def __init__(
        self,
        session: SessionStart | None,
        factory: ModelFactory[Any, Any],
        model: Model[Any, Any],
        options: SparkBfsOptions,
        manifest: Manifest | None,
    ) -> None:
        self.session = session
        self.bits = manifest.fingerprint_bits if manifest is not None else options.fingerprint_bits or 64
        self.fingerprints = FingerprintSet(self.bits)
        self.driver_seconds_per_state: float | None = None
        self.spark_jobs = 0  # the levels expanded as Spark jobs by this process
        # The new states of the last level the driver wrote, as the model's intern_state made them: (depth, their
        # fingerprints, the states, None where beyond KEEP_STATES), for the driver's next level.
        self.held: tuple[int, np.ndarray, list[Any]] | None = None
        self.property_set = PropertySet.of(model.properties())
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
        self.next_report = self.started + options.progress_interval_seconds  # of a snapshot within a level

    @property
    def spark(self) -> SparkSession:
        """The session (started now if it was not, and waited for the first time a level needs it)."""
        return self._start_session().get()

    def _start_session(self) -> SessionStart:
        if self.session is None:
            options = self.options
            self.session = SessionStart(options.master, options.conf, checkpoint_dir=self.run_dir, ui=options.ui,
                                        warm_up=partial(_warm_up, self.factory))
        return self.session

    @property
    def task_slots(self) -> int:
        """The tasks Spark runs at once: a local master's cores; a cluster's, the cores of the executors registered
        with the running session (Spark's default parallelism, which kmc leaves to Spark on a cluster:
        :func:`spark_explore.session.default_conf`), and two before it runs."""
        master = self.options.master
        if master is not None and not is_local_master(master) and self.session is not None and self.session.ready:
            with contextlib.suppress(Exception):  # a session that failed to start has no executors
                return max(1, int(self.session.get().sparkContext.defaultParallelism))
        return master_cores(master)

    @property
    def level_files(self) -> int:
        """The files a level is written as: a Spark job's shuffle partitions, unless the caller or ``spark-submit``
        gave a number (:meth:`_set_shuffle_partitions`), and the files a driver level is written as, so that a Spark
        job expanding either has a task for each: twice the task slots."""
        return max(2, 2 * self.task_slots)

    def _set_shuffle_partitions(self, spark: SparkSession) -> None:
        """Have the level's shuffle write :attr:`level_files` partitions, as many as the cores registered now, unless
        the session was started with a number (kmc's for a local master, or the caller's)."""
        if not spark.sparkContext.getConf().contains("spark.sql.shuffle.partitions"):
            spark.conf.set("spark.sql.shuffle.partitions", str(self.level_files))

    @property
    def master(self) -> str:
        if self.session is not None and self.session.ready:
            with contextlib.suppress(Exception):  # a session that failed to start names no master
                return str(self.session.get().sparkContext.master)
        with contextlib.suppress(Exception):  # under spark-submit, the session it started names the master
            from pyspark.sql import SparkSession

            active = SparkSession.getActiveSession()
            if active is not None:
                return str(active.sparkContext.master)
        if self.options.master is not None:
            return self.options.master
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
                except _Stopped:
                    stopped = limits.exceeded(self.started)
                    assert stopped is not None
                    return self._stopped(manifest, *stopped)
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
                if any(c.kind.is_violation for c in recorded) and not self.options.keep_going:
                    manifest = self._finish(manifest, Outcome.VIOLATION, queue)
                elif stop_reason is not None:
                    cause = StopCause.DEPTH_BOUND if stop_reason.startswith("depth") else StopCause.STATE_BOUND
                    manifest = self._finish(manifest, Outcome.INCONCLUSIVE, queue, stop_reason, cause)
                elif record.new == 0:
                    manifest = self._finish(manifest, Outcome.VIOLATION if manifest.violated else Outcome.OK, 0)
                self._save(manifest)
                self._report_level(record, manifest)
                if manifest.completed:
                    return self.result()

    @contextmanager
    def _cancelled_when_stopped(self) -> Iterator[None]:
        """Cancel the running Spark job, from another thread, when a stop is requested or the time
        limit passes (a request may come from a signal handler, which must not call the JVM itself:
        the main thread is inside a call to it). The thread goes on cancelling every half second
        until the search returns: a job submitted after the first cancel (the session was still
        starting, or the level had looked at the clock just before) is cancelled too, so a level
        never runs to its end past the limit."""
        limits = self.options.limits
        finished = threading.Event()
        cancelling = threading.Lock()

        def keep_cancelling() -> None:
            while not finished.is_set():
                self._cancel_jobs()
                finished.wait(0.5)

        def cancel() -> None:
            if cancelling.acquire(blocking=False):  # one cancelling thread is enough
                threading.Thread(target=keep_cancelling, name="kmc-cancel", daemon=True).start()

        def at_deadline(seconds: float) -> None:
            if not finished.wait(seconds):
                cancel()

        deadline = limits.deadline(self.started)
        if deadline is not None:
            remaining = max(0.0, deadline - time.monotonic())
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
        if self.session is not None and self.session.ready:
            # A session that is stopping (or never started) has nothing left to cancel.
            with contextlib.suppress(Exception):
                self.session.get().sparkContext.cancelAllJobs()

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
        """Level 0: the initial states, de-duplicated, in fingerprint order; each counts as generated
        (TLC). Written by the driver, with null parent transitions."""
        bits = self.bits
        rows: dict[int, bytes] = {}
        generated = 0
        self.run_dir.mkdir(parents=True, exist_ok=True)
        for state in self.model.init_states():
            generated += 1
            data = self.model.encode(state)
            rows.setdefault(fingerprint(data, bits), data)
        fps = sorted(rows)
        keys = fingerprints_of(fps, bits)
        no_parents = [pa.nulls(len(fps), pa.int64()) for _ in parent_columns(bits)]
        table = pa.Table.from_arrays(
            [*fingerprint_arrays(keys, bits), *no_parents, pa.nulls(len(fps), pa.int32()),
             pa.nulls(len(fps), pa.string()), pa.array([rows[fp] for fp in fps], pa.binary())],
            schema=level_arrow_schema(bits),
        )
        _write_level_files(level_dir(self.run_dir, 0), table, 1)
        self.fingerprints.add(keys)
        manifest = Manifest(
            scenario_hash=self.options.scenario_hash,
            kmc_version=self.options.kmc_version,
            master=self.master,
            initial_states=len(rows),
            initial_generated=generated,
            initial_checksum=checksum(rows, bits),
            initial_links=links_checksum(keys, np.zeros(len(keys), fingerprint_dtype(bits)),
                                         np.full(len(keys), NO_ACTION, np.int32), bits),
            fingerprint_bits=bits,
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
        # The visited fingerprints: those of the levels the manifest counts (their files were verified).
        self.fingerprints = FingerprintSet(self.bits, np.sort(np.concatenate(
            [level_fingerprints(self.run_dir, depth, self.bits) for depth in range(len(levels) + 1)])))
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
        """Expand level ``depth`` on the driver or as a Spark job; it writes level ``depth + 1``
        when ``generate``. The new level's fingerprints join the visited set."""
        frontier_size = manifest.initial_states if depth == 0 else manifest.levels[depth - 1].new
        room = None if self.options.max_states is None else self.options.max_states - manifest.distinct
        if self._on_driver(frontier_size):
            record, candidates, new_fps = self._expand_on_driver(depth, frontier_size, room, manifest,
                                                                 generate=generate)
            # The best rate measured so far: a level expanded while the session's JVM starts, or
            # while other work loads the machine, would otherwise send the next ones to Spark early.
            rate = record.seconds / max(frontier_size, 1)
            if self.driver_seconds_per_state is None or rate < self.driver_seconds_per_state:
                self.driver_seconds_per_state = rate
            if self._next_levels_may_need_spark(frontier_size, len(new_fps)):
                self._start_session()
        else:
            self.held = None
            record, candidates, new_fps = self._expand_on_spark(depth, frontier_size, room, manifest,
                                                                generate=generate)
            self.spark_jobs += 1
        self.fingerprints.add(np.sort(new_fps))
        return record, pick_per_property(candidates)

    def _next_levels_may_need_spark(self, frontier_size: int, new: int) -> bool:
        """Whether a driver level of ``frontier_size`` states that made ``new`` new ones is a reason to start the
        session: the level after the next, its size projected by this level's growth (``new / frontier_size``, at
        least 1), would be a Spark job (:meth:`_spark_pays`). A session takes several seconds to start, about a
        level of that size, so it is ready when one is a Spark job; a search at its widest level (growth near 1)
        whose levels stay on the driver never starts one."""
        growth = max(1.0, new / max(frontier_size, 1))
        return self._spark_pays(new * growth)

    def _on_driver(self, frontier_size: int) -> bool:
        """Whether the driver expands a level of ``frontier_size`` states itself (module docstring)."""
        options = self.options
        if frontier_size > options.driver_max_states or options.driver_seconds <= 0:
            return False
        return not self._spark_pays(frontier_size)

    def _spark_pays(self, frontier_size: float) -> bool:
        """Whether a Spark job is estimated to expand a level of ``frontier_size`` states sooner than the driver, by
        the driver's best measured rate (False before one is measured): the level takes the driver
        ``driver_seconds`` or more, and, before the run's first Spark job, the time Spark saves on it, times
        :data:`LEVELS_AHEAD`, is at least :data:`FIRST_JOB_SECONDS` (module docstring)."""
        rate = self.driver_seconds_per_state
        if rate is None or frontier_size * rate < self.options.driver_seconds:
            return False
        if self.spark_jobs:
            return True
        spark_rate = (WORKER_FACTOR * rate + SPARK_SECONDS_PER_STATE) / self.task_slots
        return frontier_size * (rate - spark_rate) * LEVELS_AHEAD >= FIRST_JOB_SECONDS

    def _expand_on_driver(
        self, depth: int, frontier_size: int, room: int | None, manifest: Manifest, *, generate: bool
    ) -> tuple[LevelRecord, list[Candidate], np.ndarray]:
        """One level expanded by the driver, batch by batch, as the local BFS does."""
        clock = _PhaseClock()
        model = self.model
        bits = self.bits
        decode, keep = model.decode, getattr(model, "intern_state", None)
        held, self.held = self.held, None

        def held_states(fps: np.ndarray) -> list[Any] | None:
            return (held[2] if held is not None and held[0] == depth and len(held[1]) == len(fps)
                    and bool(np.all(held[1] == fps)) else None)

        # A level whose states are all held is read without its bytes; the bytes are read, with the fingerprints of
        # their rows, when some states are not held (decoded).
        every_state_held = held is not None and held[0] == depth and all(state is not None for state in held[2])
        columns = fp_columns(bits) if every_state_held else frontier_columns(bits)
        frontier = level_table(self.run_dir, depth, columns)
        fps = column_fingerprints(frontier, fp_columns(bits), bits)
        states = held_states(fps)
        data: list[bytes] | None = None
        if states is None or not all(state is not None for state in states):
            if "data" not in columns:
                frontier = level_table(self.run_dir, depth, frontier_columns(bits))
                fps = column_fingerprints(frontier, fp_columns(bits), bits)
                states = held_states(fps)
            data = frontier.column("data").to_pylist()
        del frontier
        shared_parts = getattr(model, "shared_parts", None)
        if data is None and states is not None and shared_parts is not None:  # expanded as the local BFS does
            fps, states = in_grouped_order(fps, states, shared_parts)
        names = ActionNames()
        next_level = NextLevel(self.fingerprints, room, keep=keep, keep_states=KEEP_STATES)
        candidates: list[Candidate] = []
        generated_codes: list[np.ndarray] = []
        skip = manifest.reported
        generated = 0
        for start in range(0, len(fps), _DRIVER_BATCH):
            parents = fps[start : start + _DRIVER_BATCH]
            held_run = None if states is None else states[start : start + _DRIVER_BATCH]
            if data is None:  # every state held
                assert held_run is not None
                expanded: Iterable[Any] = held_run
            else:
                run = data[start : start + _DRIVER_BATCH]
                expanded = (map(decode, run) if held_run is None else
                            [decode(d) if s is None else s for d, s in zip(run, held_run, strict=True)])
            batch = expand_batch(model, expanded, self.property_set, names, generate=generate, skip=skip,
                                 fingerprint_bits=bits, keep_children=keep is not None)
            candidates.extend(
                self._candidate(FindingRow(f.property, as_int(parents[position], bits), f.action_index,
                                           f.child_fingerprint), depth)
                for position, f in batch.findings
            )
            generated_codes.append(batch.action_codes)
            next_level.add(batch.child_fingerprints, parents[batch.parents], batch.action_indices,
                           batch.action_codes, batch.data, batch.children)
            self._stop_if_exceeded()
            generated += len(batch)
            done = min(start + _DRIVER_BATCH, len(fps))
            self._maybe_report_within(manifest, done, len(fps), "states", generated=generated,
                                      distinct=next_level.approximate_size, queue=len(fps) - done)
        clock.lap("expand (driver)")
        generated_by_action = names.counts(np.concatenate(generated_codes)) if generated_codes else {}
        new_fps = np.zeros(0, fingerprint_dtype(bits))
        new_by_action: dict[str, int] = {}
        level_checksum: int | None = None
        level_links: int | None = None
        truncated = False
        if generate:
            new = next_level.finish()
            del next_level  # its rows hold the level's bytes too
            table = new_states_table(new, names, bits)
            new = attrs.evolve(new, data=[])  # the bytes are the table's now, and freed before it is written
            _write_level_files(level_dir(self.run_dir, depth + 1), table, self.level_files)
            del table
            clock.lap("write (driver)")
            new_fps, truncated = new.fps, new.truncated
            if new.states is not None:
                self.held = (depth + 1, new.fps, new.states)
                retain = getattr(model, "retain_parts", None)
                if retain is not None and all(state is not None for state in new.states):
                    retain(new.states)  # what none of them holds is forgotten, as the local BFS does
            release_free_memory()
            new_by_action = names.counts(new.action_codes)
            level_checksum = array_checksum(new.fps, bits)
            level_links = links_checksum(new.fps, new.parent_fps, new.action_indices, bits)
        record = self._record(depth, frontier_size, manifest, clock, generate, generated_by_action, new_by_action,
                              len(new_fps), level_checksum, level_links, truncated)
        return record, candidates, new_fps

    def _expand_on_spark(
        self, depth: int, frontier_size: int, room: int | None, manifest: Manifest, *, generate: bool
    ) -> tuple[LevelRecord, list[Candidate], np.ndarray]:
        """One level as one Spark job (see the module docstring)."""
        if not self._start_session().ready:
            with self._watching(manifest, phase="starting Spark"):
                self._start_session().wait()
        spark = self.spark
        self._stop_if_exceeded()  # waiting for the session may have taken the rest of the time
        self._set_shuffle_partitions(spark)
        group = f"kmc-level-{depth}"
        # Interrupted tasks end at once when the job is cancelled (a stop, the time limit).
        spark.sparkContext.setJobGroup(group, f"kmc: level {depth}", interruptOnCancel=True)
        clock = _PhaseClock()
        visited = self._write_visited(depth) if generate else None
        clock.lap("visited")
        self._stop_if_exceeded()
        bits = self.bits
        frontier = self._read_levels(depth, depth).select(*frontier_columns(bits))
        notes = notes_accumulator(spark.sparkContext)
        expander = partition_expander(self.factory, notes, generate=generate, skip=manifest.reported,
                                      visited=None if visited is None else str(visited), bits=bits)
        successors = frontier.mapInArrow(expander, level_schema(bits))
        new_by_action: dict[str, int] = {}
        level_checksum: int | None = None
        level_links: int | None = None
        truncated = False
        new_fps = np.zeros(0, fingerprint_dtype(bits))
        if generate:
            with self._watching(manifest, group=group):
                self._write_next_level(successors, depth)
            clock.lap("expand+deduplicate+write")
            summary = level_summary(level_dir(self.run_dir, depth + 1), bits)
            clock.lap("count")
            if room is not None and summary.rows > room:
                summary = self._truncate_level(depth + 1, room, summary.fps)
                truncated = True
                clock.lap("truncate")
            new_by_action, new_fps = summary.by_action, summary.fps
            level_checksum, level_links = summary.checksum, summary.links
            _remove_visited_files(self.run_dir)
        else:
            # Checked, not expanded: run the expander for its findings only.
            with self._watching(manifest, group=group):
                successors.write.format("noop").mode("overwrite").save()
            clock.lap("check")
        generated_by_action: dict[str, int] = {}
        candidates: list[Candidate] = []
        for partition in notes.value.values():
            for name, count in partition.generated:
                generated_by_action[name] = generated_by_action.get(name, 0) + count
            candidates.extend(self._candidate(finding, depth) for finding in partition.findings)
        record = self._record(depth, frontier_size, manifest, clock, generate, generated_by_action, new_by_action,
                              len(new_fps), level_checksum, level_links, truncated)
        return record, candidates, new_fps

    def _stop_if_exceeded(self) -> None:
        """Abandon the level (a safe point: nothing of it is recorded yet) when a budget ran out."""
        if self.options.limits.exceeded(self.started) is not None:
            raise _Stopped

    def _record(self, depth: int, frontier_size: int, manifest: Manifest, clock: _PhaseClock, generate: bool,
                generated_by_action: dict[str, int], new_by_action: dict[str, int], new: int,
                level_checksum: int | None, level_links: int | None, truncated: bool) -> LevelRecord:
        return LevelRecord(
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
            links=level_links,
            truncated=truncated,
        )

    def _write_visited(self, depth: int) -> Path:
        """Write the visited fingerprints (levels ``0..depth``) where the workers read them."""
        directory = self.run_dir / VISITED_DIR
        directory.mkdir(exist_ok=True)
        path = directory / f"fingerprints-{depth:04d}.npy"
        partial_path = directory / f".fingerprints-{depth:04d}.npy.partial"
        partial_path.unlink(missing_ok=True)  # a killed run's leftover (a link is removed, never followed)
        fd = os.open(partial_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        with os.fdopen(fd, "wb") as stream:
            np.save(stream, self.fingerprints.fps)
        os.replace(partial_path, path)
        return path

    def _truncate_level(self, depth: int, room: int, fps: np.ndarray) -> LevelSummary:
        """Keep, of the states written as level ``depth`` (whose distinct fingerprints are ``fps``), the ``room``
        with the smallest fingerprints (the local BFS keeps the same ones when max_states is reached within a
        level). The largest fingerprint kept is found on the driver, in the integers' order, and the level's
        files are filtered on it, each task streaming its own file: a sort of the whole rows
        (``orderBy(...).limit(room)``) keeps ``room`` rows in a task's memory, which ran the JVM's 4 GiB heap out
        on a level of 4.5 M states (2.5 GB of Parquet), and would leave the level one file, the next level one task."""
        from pyspark.sql import Column
        from pyspark.sql import functions as F

        target = level_dir(self.run_dir, depth)
        kept = target.with_name(f"{target.name}.truncated")
        shutil.rmtree(kept, ignore_errors=True)
        words = stored_words(kth_smallest(fps, room), self.bits)
        columns = fp_columns(self.bits)
        # (a, b) <= (x, y) as Spark compares longs: a < x, or a = x and b <= y.
        at_most: Column = F.col(columns[-1]) <= F.lit(words[-1])
        for name, word in zip(columns[-2::-1], words[-2::-1], strict=True):
            at_most = (F.col(name) < F.lit(word)) | ((F.col(name) == F.lit(word)) & at_most)
        self._read_levels(depth, depth).where(at_most).write.parquet(str(kept))
        shutil.rmtree(target)
        kept.rename(target)
        return level_summary(target, self.bits)

    def _read_levels(self, first: int, last: int) -> DataFrame:
        """The states of levels ``first..last`` (the schema is given, so no file footer is read
        while planning; a level directory the manifest does not count is never read)."""
        paths = [str(level_dir(self.run_dir, k)) for k in range(first, last + 1)]
        return self.spark.read.schema(level_schema(self.bits)).parquet(*paths)

    def _write_next_level(self, successors: DataFrame, depth: int) -> None:
        """De-duplicate the successors of level ``depth`` (the expander left out the visited ones)
        against themselves (parent rule), and write them as level ``depth + 1``."""
        from pyspark.sql import functions as F

        # The parent rule of explorer.results: the smallest (parent fp, action index) wins (a struct
        # compares field by field, and a 128-bit parent's two columns compare as its integer does);
        # the action name rides along (it is a function of the transition). All successors with one
        # fingerprint carry the same canonical bytes, so any of them will do.
        fps, parents = fp_columns(self.bits), parent_columns(self.bits)
        new_states = successors.groupBy(*fps).agg(
            F.min(F.struct(*parents, "action_index", "action_name")).alias("via"),
            F.any_value("data").alias("data"),
        ).select(*fps, *(f"via.{name}" for name in parents), "via.action_index", "via.action_name", "data")
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

    def _maybe_report_within(self, manifest: Manifest, done: int, size: int, unit: str, *, generated: int = 0,
                             distinct: int = 0, queue: int | None = None, phase: str = "") -> None:
        """A snapshot of the level in progress (``done`` of ``size`` ``unit``), at most every
        progress interval; ``generated`` and ``distinct`` are what the level added so far (known on
        the driver only)."""
        progress = self.options.progress
        now = time.monotonic()
        if progress is None or now < self.next_report:
            return
        self.next_report = now + self.options.progress_interval_seconds
        frontier = manifest.levels[-1].new if manifest.levels else manifest.initial_states
        progress(ProgressSnapshot(
            self._elapsed(), len(manifest.levels) + 1, manifest.generated + generated, manifest.distinct + distinct,
            frontier if queue is None else queue, level_done=None if phase else done,
            level_size=None if phase else size, level_unit=unit, memory=resident_memory(), phase=phase))

    @contextmanager
    def _watching(self, manifest: Manifest, *, group: str | None = None, phase: str = "") -> Iterator[None]:
        """While the main thread waits on the JVM (a Spark job of job group ``group``, or the ``phase``
        it waits for), report from a thread: the job's finished tasks, or the phase and the time."""
        if self.options.progress is None:
            yield
            return
        finished = threading.Event()
        tick = min(self.options.progress_interval_seconds, 1.0)
        if phase:
            self.next_report = 0.0  # a phase is shown as it begins

        def watch() -> None:
            while True:
                if phase:
                    self._maybe_report_within(manifest, 0, 0, "", phase=phase)
                elif group is not None:
                    tasks = self._job_tasks(group)
                    if tasks is not None:
                        self._maybe_report_within(manifest, *tasks, "tasks")
                if finished.wait(tick):
                    return

        watcher = threading.Thread(target=watch, name="kmc-progress", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            finished.set()
            watcher.join()

    def _job_tasks(self, group: str) -> tuple[int, int] | None:
        """The finished and total tasks of the stages of the jobs of ``group`` so far (Spark's
        status tracker), None before the first job of the group starts."""
        with contextlib.suppress(Exception):  # a session stopping under us: nothing to show
            tracker = self.spark.sparkContext.statusTracker()
            done = total = 0
            for job in tracker.getJobIdsForGroup(group):
                info = tracker.getJobInfo(job)
                for stage in info.stageIds if info is not None else ():
                    stage_info = tracker.getStageInfo(stage)
                    if stage_info is not None:
                        done += stage_info.numCompletedTasks
                        total += stage_info.numTasks
            return (done, total) if total else None
        return None

    def _report_level(self, record: LevelRecord, manifest: Manifest) -> None:
        if self.options.on_level is not None:
            self.options.on_level(record)
        if self.options.progress is not None:
            queue = manifest.queue if manifest.completed else record.new
            self.options.progress(
                ProgressSnapshot(self._elapsed(), len(manifest.levels), manifest.generated, manifest.distinct, queue,
                                 memory=resident_memory()))
            self.next_report = time.monotonic() + self.options.progress_interval_seconds

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
            fingerprint_bits=self.bits,
        )
        outcome = Outcome(manifest.outcome)
        complete = outcome is Outcome.OK or (self.options.keep_going and manifest.completed
                                             and manifest.stopped_by is None)
        if manifest.violated and outcome is not Outcome.VIOLATION:  # keep_going, stopped early: a verdict all the same
            outcome = Outcome.VIOLATION
        unsatisfied = never_found(self.kinds.items(), manifest.examples_found) if complete else ()
        discoveries = tuple(
            rebuild_discovery(self.run_dir, self.model, self.properties, candidate, self.bits)
            for candidate in manifest.recorded
        )
        options = self.options
        return ExplorationResult(
            outcome=outcome,
            engine=ENGINE,
            stats=stats,
            discoveries=discoveries,
            never_found=unsatisfied,
            reason=manifest.reason,
            details={"master": self.master, "run_dir": str(self.run_dir)},
            properties=tuple((p.name, p.kind) for p in self.properties),
            stopped_by=None if manifest.stopped_by is None else StopCause(manifest.stopped_by),
            bounds={
                "max_depth": options.max_depth,
                "max_states": options.max_states,
                "time_limit": options.limits.time_limit,
                "max_memory": None,
                "fingerprint_bits": self.bits,
            },
        )


def level_table(run_dir: Path, depth: int, columns: Sequence[str]) -> pa.Table:
    """Columns of the states stored in level ``depth``, read by the driver with pyarrow."""
    return ds.dataset(level_dir(run_dir, depth), format="parquet").to_table(columns=list(columns))


def _write_level_files(directory: Path, table: pa.Table, files: int) -> None:
    """Write a level computed on the driver as ``files`` Parquet files of consecutive rows (fewer when a file would
    hold fewer than :data:`_MIN_FILE_ROWS`), named in their rows' order, which is the order the driver reads them
    back in (what a killed driver left there is replaced: only the manifest says which levels are complete).

    A Spark job reading the level gives each file a task of its own (a file under
    ``spark.sql.files.maxPartitionBytes`` is not split, and files smaller than ``spark.sql.files.openCostInBytes``
    are not packed together when the level has as many files as the session's default parallelism). Spark reads a
    file of one row group in one task, whatever the cores: written as one file, the level a run's first Spark job
    expands would be expanded on one core."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    files = max(1, min(files, table.num_rows // _MIN_FILE_ROWS))
    rows = -(-table.num_rows // files)
    for index in range(files):
        pq.write_table(table.slice(index * rows, rows), directory / f"part-{index:05d}-driver.parquet")


def _remove_visited_files(run_dir: Path) -> None:
    """The visited fingerprints a level's job read are not needed after it (they are rebuilt from
    the levels on resume)."""
    shutil.rmtree(run_dir / VISITED_DIR, ignore_errors=True)
