"""The in-process breadth-first search (engine ``"local"``).

A level-synchronous BFS in TLC's shape: it keeps only the visited fingerprints with a parent
pointer each (``fingerprint -> (parent fingerprint, action index)``, in sorted arrays:
:class:`explorer.visited.Visited`), the level being expanded and the level being built, both as
canonical bytes packed in compressed blocks (:class:`explorer.visited.PackedBlock`) or, for a model that
offers ``intern_state`` (:class:`explorer.contract.Model`), as the states themselves, up to
:data:`KEEP_STATES` a level (:class:`explorer.visited.StateBlock`), which are expanded without being decoded.
Before it expands a level held so, the search lets the model forget what none of its states holds (the model's
``retain_parts``), and after each level it hands the memory freed back to the system
(:func:`explorer.stopping.release_free_memory`).
Full states are not kept for traces; a discovery carries the fingerprint path and action indices, and
:mod:`explorer.replay` rebuilds the states.

A level is expanded in batches of states by :func:`explorer.expand.expand_batch`, the function the
Spark BFS uses too; its transitions are de-duplicated by sorting
(:class:`explorer.visited.NextLevel`), and the choices that could depend on iteration order follow
the rules of :mod:`explorer.results`:

* a state first reached in level d+1 gets as parent the transition with the smallest
  ``(parent fingerprint, action index)`` among all transitions of level d that reach it;
* per property, the finding of a level with the smallest :meth:`Candidate.key` is reported;
* a violation stops the search at the end of the level in which it was found.

Bounds, as the Spark BFS applies them too: a level at ``max_depth``, or reached when
``max_states`` distinct states are known, is checked but not expanded. ``max_states`` also holds
within a level: the level in which it is reached keeps only the new states with the smallest
fingerprints that fit (a deterministic choice both engines make), so a search never holds more
than ``max_states`` states. The result is then INCONCLUSIVE unless a violation was found.

Budgets (:class:`explorer.stopping.Limits`: a time limit, a memory budget, a stop requested from
outside such as Ctrl-C) are looked at every few hundred states; when one is exhausted the level in
progress is abandoned and the search returns what the complete levels found, INCONCLUSIVE.

With :class:`Checkpointing`, the search as it stood at the start of a level is saved in the run
directory (:mod:`explorer.checkpoint`) every ``every_seconds``, and whenever it stops early, so
that ``resume`` continues from there and ends with the counts of an uninterrupted run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from explorer import checkpoint as checkpoints
from explorer.checkpoint import Checkpoint, LocalManifest, ResumeError, StoredDiscovery
from explorer.contract import Model, PropertyKind
from explorer.expand import (
    ActionNames,
    Finding,
    PropertySet,
    expand_batch,
    in_grouped_order,
    rarer_young_collections,
)
from explorer.fingerprint import FINGERPRINT_BITS, as_int, fingerprint, fingerprints_of
from explorer.integrity import check_same_search
from explorer.progress import ProgressSnapshot
from explorer.replay import ReplayError, replay_states
from explorer.results import (
    ActionCoverage,
    Candidate,
    Discovery,
    ExplorationResult,
    LevelStats,
    Outcome,
    Statistics,
    StopCause,
    never_found,
    pick_per_property,
)
from explorer.stopping import Limits, release_free_memory, resident_memory
from explorer.visited import NO_ACTION, Frontier, NewStates, NextLevel, Visited

__all__ = ["BfsOptions", "Checkpointing", "ResumeError", "bound_reached", "path_to", "run_bfs"]

# States expanded in one batch; between two batches the search looks at the clock, the memory and
# the stop request, and reports progress.
_BATCH = 512

#: The new states of a level kept as the model's values (its ``intern_state``) rather than packed bytes, at most:
#: beyond it a level's states are packed (a state that shares its parts weighs about what its packed bytes do, one
#: that does not, several times that).
KEEP_STATES = 1 << 17


def _non_negative(_instance: Any, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value < 0:
        raise ValueError(f"{attribute.name} must be at least 0, got {value}")


def _fingerprint_width(_instance: Any, _attribute: attrs.Attribute[Any], value: int) -> None:
    if value not in FINGERPRINT_BITS:
        raise ValueError(f"fingerprint_bits must be one of {FINGERPRINT_BITS}, got {value}")


@attrs.frozen
class Checkpointing:
    """Where and how often a local search saves itself (see :mod:`explorer.checkpoint`).

    ``every_seconds`` is the least time between two checkpoints (taken at level boundaries; 0:
    every level). ``resume`` continues the run the directory holds; the scenario hash and kmc
    version are recorded and a run recorded with others is refused.
    """

    run_dir: Path = attrs.field(converter=Path)
    every_seconds: float = 300.0
    resume: bool = False
    scenario_hash: str = ""
    kmc_version: str = ""


@attrs.frozen
class BfsOptions:
    """Bounds, budgets and progress reporting of a local BFS.

    ``max_depth`` is the longest trace explored, in steps: states ``max_depth`` steps from an
    initial state are checked but not expanded. ``max_states`` bounds the distinct states found
    (see the module docstring). ``limits`` holds the time limit, the memory budget and the stop
    request. ``progress`` receives a :class:`ProgressSnapshot` every ``progress_interval_seconds``
    and once at the end. ``keep_going`` (TLC's ``-continue``) searches on after a violation: each
    property is reported once, with its shortest trace, and the result is a VIOLATION when any was found.
    """

    max_depth: int | None = attrs.field(default=None, validator=_non_negative)
    max_states: int | None = attrs.field(default=None, validator=_non_negative)
    progress: Callable[[ProgressSnapshot], None] | None = attrs.field(default=None, eq=False)
    progress_interval_seconds: float = 10.0
    limits: Limits = attrs.field(factory=Limits)
    fingerprint_bits: int = attrs.field(default=64, validator=_fingerprint_width)
    checkpointing: Checkpointing | None = None
    keep_going: bool = False


def run_bfs(model: Model[Any, Any], options: BfsOptions | None = None) -> ExplorationResult:
    """Explore every state of ``model`` reachable within the bounds of ``options``, breadth first.

    Raises :class:`explorer.checkpoint.ResumeError` when a run directory cannot be used as asked.
    """
    with rarer_young_collections():
        return _Search(model, options or BfsOptions()).run()


@attrs.frozen
class _Level:
    """What expanding one level produced: its best finding per property, its new states (each with
    its chosen parent transition), the successors generated per action name. ``stopped`` when a
    budget ran out and the level was abandoned."""

    best: dict[str, Candidate]
    new: NewStates | None
    generated_by_action: dict[str, int]
    stopped: tuple[StopCause, str] | None = None

    @property
    def generated(self) -> int:
        return sum(self.generated_by_action.values())

    @property
    def truncated(self) -> bool:
        return self.new is not None and self.new.truncated


@attrs.frozen
class _Snapshot:
    """The counters at the start of a level, to return to when the level is abandoned."""

    depth: int
    frontier: Frontier
    generated: int
    generated_by_action: dict[str, int]
    distinct_by_action: dict[str, int]
    levels: int
    discoveries: int
    examples_found: frozenset[str]


class _Search:
    """The state of one run; :meth:`run` is the level loop, :meth:`_expand_level` the hot loop."""

    def __init__(self, model: Model[Any, Any], options: BfsOptions) -> None:
        self.model = model
        self.options = options
        self.bits = options.fingerprint_bits
        properties = model.properties()
        self.properties = properties
        self.property_set = PropertySet.of(properties)
        self.kinds = {p.name: p.kind for p in properties}
        self.property_order = {p.name: i for i, p in enumerate(properties)}
        self.start = time.perf_counter()
        self.started = time.monotonic()
        self.seconds_before = 0.0
        self.next_report = self.start + options.progress_interval_seconds
        self.visited = Visited(self.bits)
        self.names = ActionNames()
        self.generated = 0
        self.generated_by_action: dict[str, int] = {}
        self.distinct_by_action: dict[str, int] = {}
        self.levels: list[LevelStats] = []
        self.discoveries: list[Discovery] = []
        self.examples_found: set[str] = set()
        self.violated: set[str] = set()  # with keep_going: properties already reported violated
        self.manifest: LocalManifest | None = None
        self.last_checkpoint = self.started
        self.checkpointed_depth: int | None = None  # the level start the current checkpoint holds
        self.truncated_level = False  # max_states truncated a level: the checkpoint before it stays

    # -- the level loop -------------------------------------------------------------------------

    def run(self) -> ExplorationResult:
        frontier, depth = self._start()
        while True:
            stop_reason = self._bound_reached(depth)
            snapshot = self._snapshot(frontier, depth)
            if stop_reason is not None or self._checkpoint_due():
                self._checkpoint(snapshot)
            level_start = time.perf_counter()
            stopped = self.options.limits.exceeded(self.started)
            level = (
                _Level({}, None, {}, stopped=stopped)
                if stopped is not None
                else self._expand_level(frontier, depth, generate=stop_reason is None,
                                        release=self._frontier_saved(depth))
            )
            if level.stopped is not None:
                self._restore(snapshot)
                self._checkpoint(snapshot)
                cause, reason = level.stopped
                return self._result(Outcome.INCONCLUSIVE, queue=len(frontier), reason=reason, cause=cause)
            if level.truncated:
                self._checkpoint(snapshot)
                self.truncated_level = True
            new = level.new
            self._adopt(level)
            self.levels.append(
                LevelStats(
                    depth=depth,
                    frontier=len(frontier),
                    generated=level.generated,
                    new=0 if new is None else len(new),
                    distinct_total=len(self.visited),
                    seconds=time.perf_counter() - level_start,
                )
            )
            next_frontier = (Frontier(np.zeros(0, self.visited.fps.dtype), []) if new is None
                             else new.frontier(self.model.encode))
            best = level.best
            del level, new  # the next frontier alone holds the new states' blocks, to free each once it is expanded
            self._retain(next_frontier)
            # States of an unexpanded level stay on the queue: their successors were not computed.
            queue = len(next_frontier) if stop_reason is None else len(frontier)
            if self._record(best) and not self.options.keep_going:
                return self._result(Outcome.VIOLATION, queue=queue)
            if stop_reason is not None:
                cause = StopCause.DEPTH_BOUND if stop_reason.startswith("depth") else StopCause.STATE_BOUND
                return self._result(Outcome.INCONCLUSIVE, queue=queue, reason=stop_reason, cause=cause)
            if not next_frontier:
                return self._result(Outcome.OK, queue=0)
            frontier = next_frontier
            depth += 1

    def _start(self) -> tuple[Frontier, int]:
        """The first level to expand: level 0, or the level a checkpoint was taken at."""
        setup = self.options.checkpointing
        if setup is None:
            return self._initial_level(), 0
        manifest = checkpoints.read_manifest(setup.run_dir)
        if not setup.resume:
            if manifest is not None:
                raise ResumeError(
                    f"{setup.run_dir} already holds a local run; pass --resume {setup.run_dir} to continue it, "
                    "or choose another output directory"
                )
        elif manifest is not None:
            self._check_resumable(setup, manifest)
        if manifest is None or manifest.checkpoint is None:
            setup.run_dir.mkdir(parents=True, exist_ok=True)
            self.manifest = LocalManifest(setup.scenario_hash, setup.kmc_version, self.bits)
            checkpoints.write_manifest(setup.run_dir, self.manifest)
            return self._initial_level(), 0
        self.manifest = attrs.evolve(manifest, completed=False, outcome=None, reason="")
        return self._restore_checkpoint(checkpoints.read_checkpoint(setup.run_dir, manifest))

    def _check_resumable(self, setup: Checkpointing, manifest: LocalManifest) -> None:
        where = setup.run_dir
        check_same_search(where, (manifest.scenario_hash, manifest.kmc_version),
                          (setup.scenario_hash, setup.kmc_version))
        if manifest.fingerprint_bits != self.bits:
            raise ResumeError(
                f"{where} was explored with {manifest.fingerprint_bits}-bit fingerprints; resume it with "
                f"--fingerprint-bits {manifest.fingerprint_bits}"
            )
        if manifest.completed:
            raise checkpoints.finished_run(where, manifest.outcome)

    def _initial_level(self) -> Frontier:
        """Level 0: the initial states, de-duplicated, in fingerprint order; each counts as
        generated, as in TLC."""
        states: dict[int, bytes] = {}
        for state in self.model.init_states():
            self.generated += 1
            data = self.model.encode(state)
            states.setdefault(fingerprint(data, self.bits), data)
        fps = sorted(states)
        keys = fingerprints_of(fps, self.bits)
        self.visited.add(keys, np.zeros(len(fps), keys.dtype), np.full(len(fps), NO_ACTION, np.int32))
        return Frontier(keys, [states[fp] for fp in fps])

    def _bound_reached(self, depth: int) -> str | None:
        """Why the level at ``depth`` must not be expanded, or None."""
        return bound_reached(depth, len(self.visited), self.options.max_depth, self.options.max_states,
                             truncated=self.truncated_level)

    # -- one level ------------------------------------------------------------------------------

    def _frontier_saved(self, depth: int) -> bool:
        """Whether no checkpoint can need the frontier of the level at ``depth`` any more: none are
        taken, or this level's is written already."""
        return self.options.checkpointing is None or self.checkpointed_depth == depth

    def _expand_level(self, frontier: Frontier, depth: int, *, generate: bool, release: bool) -> _Level:
        """Expand every state of ``frontier``, batch by batch (the hot loop). ``release``: drop each
        batch's bytes once it is expanded (:meth:`Frontier.batches`), so that the frontier and the level
        being built are not both held whole at the end of the level. The new states are kept packed
        (:class:`explorer.visited.PackedBlock`) until their level is expanded."""
        model, property_set, kinds, bits, names = self.model, self.property_set, self.kinds, self.bits, self.names
        skip = frozenset(self.examples_found | self.violated)
        visited = self.visited
        progress = self.options.progress
        limits = self.options.limits
        max_states = self.options.max_states
        # A model that can make a successor into the state its bytes decode to has its new states kept so
        # (NextLevel's keep), up to KEEP_STATES a level.
        keep = getattr(model, "intern_state", None)
        next_level = NextLevel(visited, None if max_states is None else max_states - len(visited), pack=True,
                               keep=keep, keep_states=KEEP_STATES)
        best: dict[str, Candidate] = {}
        generated_by_action: dict[str, int] = {}
        generated = 0
        size = len(frontier)
        fps_in_order, runs = _in_expansion_order(model, frontier, release)
        for start, stop, states in runs:
            fps = fps_in_order[start:stop]
            batch = expand_batch(model, states, property_set, names,
                                 generate=generate, skip=skip, fingerprint_bits=bits, keep_children=keep is not None)
            if batch.findings:
                best = pick_per_property([
                    *best.values(),
                    *(_candidate(f, kinds, depth, as_int(fps[position], bits)) for position, f in batch.findings),
                ])
            if len(batch):
                generated += len(batch)
                for name, count in names.counts(batch.action_codes).items():
                    generated_by_action[name] = generated_by_action.get(name, 0) + count
                next_level.add(batch.child_fingerprints, fps[batch.parents], batch.action_indices,
                               batch.action_codes, batch.data, batch.children)
            stopped = limits.exceeded(self.started)
            if stopped is not None:
                return _Level({}, None, {}, stopped=stopped)
            if progress is not None:
                self._maybe_report(depth, self.generated + generated, len(visited) + next_level.approximate_size,
                                   queue=size - stop + next_level.approximate_size, level_done=stop,
                                   level_size=size)
        self.generated += generated
        return _Level(best, next_level.finish() if generate else None, generated_by_action)

    def _retain(self, frontier: Frontier) -> None:
        """Let the model forget what none of the states to expand next holds (its ``retain_parts``), when the frontier
        holds them all as states, then hand the memory freed with the expanded level back to the system."""
        retain = getattr(self.model, "retain_parts", None)
        states = frontier.kept_states()
        if retain is not None and states is not None:
            retain(states)
        release_free_memory()

    def _adopt(self, level: _Level) -> None:
        """Make the new states of a level visited, with their chosen parent transition."""
        for name, count in level.generated_by_action.items():
            self.generated_by_action[name] = self.generated_by_action.get(name, 0) + count
        new = level.new
        if new is None:
            return
        self.visited.add(new.fps, new.parent_fps, new.action_indices)
        for name, count in self.names.counts(new.action_codes).items():
            self.distinct_by_action[name] = self.distinct_by_action.get(name, 0) + count

    def _record(self, best: dict[str, Candidate]) -> bool:
        """Turn a level's findings into discoveries; True when one of them is a violation."""
        violated = False
        for name in sorted(best, key=self.property_order.__getitem__):
            candidate = best[name]
            self.discoveries.append(self._discovery(candidate))
            if candidate.kind.is_violation:
                violated = True
                self.violated.add(name)
            else:
                self.examples_found.add(name)
        return violated

    def _discovery(self, candidate: Candidate) -> Discovery:
        path, action_indices = path_to(self.visited, candidate.fingerprint)
        if candidate.action_index is not None:
            assert candidate.child_fingerprint is not None
            path = (*path, candidate.child_fingerprint)
            action_indices = (*action_indices, candidate.action_index)
        return Discovery(candidate.property, candidate.kind, candidate.evidence, path, action_indices, self.bits)

    def _maybe_report(self, depth: int, generated: int, distinct: int, *, queue: int, level_done: int,
                      level_size: int) -> None:
        """A snapshot within the level at ``depth`` (``level_done`` of its ``level_size`` states
        expanded), with this process's memory against the budget; at most every progress interval."""
        progress = self.options.progress
        now = time.perf_counter()
        if progress is None or now < self.next_report:
            return
        self.next_report = now + self.options.progress_interval_seconds
        progress(ProgressSnapshot(self._elapsed(), depth + 1, generated, distinct, queue, level_done=level_done,
                                  level_size=level_size, memory=resident_memory(),
                                  max_memory=self.options.limits.max_memory))

    # -- checkpoints ----------------------------------------------------------------------------

    def _snapshot(self, frontier: Frontier, depth: int) -> _Snapshot:
        return _Snapshot(
            depth=depth,
            frontier=frontier,
            generated=self.generated,
            generated_by_action=dict(self.generated_by_action),
            distinct_by_action=dict(self.distinct_by_action),
            levels=len(self.levels),
            discoveries=len(self.discoveries),
            examples_found=frozenset(self.examples_found),
        )

    def _restore(self, snapshot: _Snapshot) -> None:
        """Back to the start of the level of ``snapshot`` (only the counters moved since)."""
        self.generated = snapshot.generated
        self.generated_by_action = dict(snapshot.generated_by_action)
        self.distinct_by_action = dict(snapshot.distinct_by_action)
        del self.levels[snapshot.levels :]
        del self.discoveries[snapshot.discoveries :]
        self.examples_found = set(snapshot.examples_found)
        self.violated = {d.property for d in self.discoveries if d.is_violation}

    def _checkpoint_due(self) -> bool:
        setup = self.options.checkpointing
        return setup is not None and time.monotonic() - self.last_checkpoint >= setup.every_seconds

    def _checkpoint(self, snapshot: _Snapshot) -> None:
        """Save the search as it stood at the start of the snapshot's level (once per level)."""
        setup = self.options.checkpointing
        if setup is None or self.manifest is None or self.truncated_level:
            return
        if self.checkpointed_depth == snapshot.depth:
            return
        saved = Checkpoint(
            depth=snapshot.depth,
            visited=self.visited,
            frontier=snapshot.frontier,
            generated=snapshot.generated,
            generated_by_action=snapshot.generated_by_action,
            distinct_by_action=snapshot.distinct_by_action,
            levels=tuple(self.levels[: snapshot.levels]),
            discoveries=tuple(
                StoredDiscovery(d.property, d.kind, d.path, d.action_indices)
                for d in self.discoveries[: snapshot.discoveries]
            ),
            examples_found=snapshot.examples_found,
            seconds=self._elapsed(),
        )
        self.manifest = checkpoints.write_checkpoint(setup.run_dir, self.manifest, saved)
        self.checkpointed_depth = snapshot.depth
        self.last_checkpoint = time.monotonic()

    def _restore_checkpoint(self, saved: Checkpoint) -> tuple[Frontier, int]:
        """Continue from a checkpoint read back from disk: the counters, the visited states, the
        discoveries (their evidence recomputed on the model) and the level to expand next."""
        self.visited = saved.visited
        self.generated = saved.generated
        self.generated_by_action = dict(saved.generated_by_action)
        self.distinct_by_action = dict(saved.distinct_by_action)
        self.levels = list(saved.levels)
        self.examples_found = set(saved.examples_found)
        self.seconds_before = saved.seconds
        self.discoveries = [self._rebuilt(d) for d in saved.discoveries]
        self.violated = {d.property for d in self.discoveries if d.is_violation}
        self.checkpointed_depth = saved.depth
        return saved.frontier, saved.depth

    def _rebuilt(self, stored: StoredDiscovery) -> Discovery:
        prop = next((p for p in self.properties if p.name == stored.property), None)
        try:
            if prop is None:
                raise ReplayError(f"the model has no property {stored.property!r}")
            states = replay_states(self.model, stored.path, stored.action_indices, self.bits)
            if stored.kind.on_transition:
                before = states[-2]
                action = self.model.actions(before)[stored.action_indices[-1]]
                evidence = prop.check(before, action, states[-1])
            else:
                evidence = prop.check(states[-1])
        except ReplayError as e:
            raise ResumeError(f"the checkpoint's discovery of {stored.property} does not replay ({e})") from None
        if evidence is None:
            raise ResumeError(
                f"the checkpoint's discovery of {stored.property} is not found again on its state; "
                "the model is not deterministic or the run directory was altered"
            )
        return Discovery(stored.property, stored.kind, evidence, stored.path, stored.action_indices, self.bits)

    # -- the result -----------------------------------------------------------------------------

    def _elapsed(self) -> float:
        return self.seconds_before + time.perf_counter() - self.start

    def _result(
        self, outcome: Outcome, *, queue: int, reason: str = "", cause: StopCause | None = None
    ) -> ExplorationResult:
        seconds = self._elapsed()
        stats = Statistics(
            generated=self.generated,
            distinct=len(self.visited),
            depth=len(self.levels),
            queue=queue,
            seconds=seconds,
            levels=tuple(self.levels),
            actions=tuple(
                ActionCoverage(name, generated, self.distinct_by_action.get(name, 0))
                for name, generated in sorted(self.generated_by_action.items())
            ),
            fingerprint_bits=self.bits,
        )
        if self.options.progress is not None:
            self.options.progress(ProgressSnapshot(seconds, stats.depth, stats.generated, stats.distinct, queue,
                                                   memory=resident_memory(),
                                                   max_memory=self.options.limits.max_memory))
        unsatisfied = never_found(self.kinds.items(), self.examples_found) if outcome is Outcome.OK else ()
        if self.violated and outcome is Outcome.OK:  # keep_going: a complete search that found violations
            outcome = Outcome.VIOLATION
        self._close_manifest(outcome, reason, seconds)
        if self.violated:  # keep_going, stopped early: what it found is a verdict, the rest can be resumed
            outcome = Outcome.VIOLATION
        options = self.options
        bounds: dict[str, Any] = {
            "max_depth": options.max_depth,
            "max_states": options.max_states,
            "time_limit": options.limits.time_limit,
            "max_memory": options.limits.max_memory,
            "fingerprint_bits": self.bits,
        }
        return ExplorationResult(
            outcome=outcome,
            engine="local",
            stats=stats,
            discoveries=tuple(self.discoveries),
            never_found=unsatisfied,
            reason=reason,
            properties=tuple((p.name, p.kind) for p in self.properties),
            stopped_by=cause,
            bounds=bounds,
        )

    def _close_manifest(self, outcome: Outcome, reason: str, seconds: float) -> None:
        """Record how the run ended: a finished run is not resumed; a stopped one keeps its checkpoint."""
        setup = self.options.checkpointing
        if setup is None or self.manifest is None:
            return
        if outcome is Outcome.INCONCLUSIVE:
            self.manifest = attrs.evolve(self.manifest, outcome=outcome.value, reason=reason)
        else:
            self.manifest = checkpoints.finished(self.manifest, outcome, reason, seconds)
            checkpoints.remove_stale_checkpoints(setup.run_dir, keep=None)
            self.manifest = attrs.evolve(self.manifest, checkpoint=None)
        checkpoints.write_manifest(setup.run_dir, self.manifest)


def bound_reached(
    depth: int, distinct: int, max_depth: int | None, max_states: int | None, *, truncated: bool = False
) -> str | None:
    """Why a breadth-first engine must not expand the level at ``depth`` after finding ``distinct``
    states, or None. Shared by every BFS engine so that their INCONCLUSIVE reasons agree.
    ``truncated``: the level holds only the part of its new states that ``max_states`` left room for."""
    if max_depth is not None and depth >= max_depth:
        return (
            f"depth bound reached: states {depth} steps from an initial state were checked "
            f"but not expanded (max_depth={max_depth})"
        )
    if max_states is not None and distinct >= max_states:
        part = " (only the part of it that fits the bound was kept)" if truncated else ""
        return (
            f"state bound reached: {distinct} distinct states found, the last level{part} "
            f"was checked but not expanded (max_states={max_states})"
        )
    return None


def _in_expansion_order(model: Model[Any, Any], frontier: Frontier, release: bool
                        ) -> tuple[np.ndarray, Iterator[tuple[int, int, list[Any]]]]:
    """The frontier's fingerprints and its states in runs of :data:`_BATCH` (``(start, stop, states)``), in the order
    they are expanded: fingerprint order, or, when the model names the parts its states share (``shared_parts``) and
    the frontier holds every state as a state, :func:`~explorer.expand.grouped_order`'s. ``release``: the states of a
    run are dropped once the next run is asked for (:meth:`Frontier.states`)."""
    shared_parts = getattr(model, "shared_parts", None)
    held = frontier.held_states() if shared_parts is not None else None
    if held is None or shared_parts is None:
        return frontier.fps, frontier.states(_BATCH, model.decode, release=release)
    fps, states = in_grouped_order(frontier.fps, held, shared_parts)
    del held
    if release:
        frontier.release()
    return fps, _runs(states, release)


def _runs(states: list[Any], release: bool) -> Iterator[tuple[int, int, list[Any]]]:
    """``states`` in runs of :data:`_BATCH`, each dropped from the list once the next is asked for (``release``)."""
    for start in range(0, len(states), _BATCH):
        run = states[start : start + _BATCH]
        yield start, start + len(run), run
        if release:
            states[start : start + len(run)] = [None] * len(run)


def _candidate(finding: Finding, kinds: dict[str, PropertyKind], depth: int, fp: int) -> Candidate:
    return Candidate(
        property=finding.property,
        kind=kinds[finding.property],
        evidence=finding.evidence,
        depth=depth,
        fingerprint=fp,
        action_index=finding.action_index,
        child_fingerprint=finding.child_fingerprint,
    )


def path_to(visited: Visited, fp: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The fingerprints from an initial state to ``fp`` and the action index of each step,
    followed back through the parent pointers."""
    path = [fp]
    action_indices: list[int] = []
    step = visited.step(fp)
    while step is not None:
        parent, action_index = step
        path.append(parent)
        action_indices.append(action_index)
        step = visited.step(parent)
    path.reverse()
    action_indices.reverse()
    return tuple(path), tuple(action_indices)
