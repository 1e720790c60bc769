"""The in-process breadth-first search (engine ``"local"``).

A level-synchronous BFS in TLC's shape: it keeps only the visited fingerprints with a parent
pointer each (``fingerprint -> (parent fingerprint, action index)``), the level being expanded and
the level being built. Full states are not kept for traces; a discovery carries the fingerprint
path and action indices, and :mod:`explorer.replay` rebuilds the states.

Every state is expanded by :func:`explorer.expand.expand`, the function the Spark BFS uses too, and
the choices that could depend on iteration order follow the rules of :mod:`explorer.results`:

* a state first reached in level d+1 gets as parent the transition with the smallest
  ``(parent fingerprint, action index)`` among all transitions of level d that reach it;
* per property, the finding of a level with the smallest :meth:`Candidate.key` is reported;
* a violation stops the search at the end of the level in which it was found.

Bounds are applied at level boundaries, as the Spark BFS can only apply them: a level at
``max_depth``, or reached when ``max_states`` distinct states are known, is checked but not
expanded, and the result is INCONCLUSIVE unless a violation was found.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import attrs

from explorer.contract import Model, PropertyKind
from explorer.expand import Finding, PropertySet, expand
from explorer.fingerprint import fingerprint
from explorer.progress import ProgressSnapshot
from explorer.results import (
    ActionCoverage,
    Candidate,
    Discovery,
    ExplorationResult,
    LevelStats,
    Outcome,
    Statistics,
    pick_per_property,
)

#: Parent pointers: fingerprint -> (parent fingerprint, action index); None for initial states.
ParentMap = dict[int, tuple[int, int] | None]

# How many expanded states between two looks at the clock for progress reports.
_CLOCK_EVERY = 512


def _non_negative(_instance: Any, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value < 0:
        raise ValueError(f"{attribute.name} must be at least 0, got {value}")


@attrs.frozen
class BfsOptions:
    """Bounds and progress reporting of a local BFS.

    ``max_depth`` is the longest trace explored, in steps: states ``max_depth`` steps from an
    initial state are checked but not expanded. ``max_states`` stops the search at the end of the
    level in which the number of distinct states reaches it (the last level is checked, not
    expanded). ``progress`` receives a :class:`ProgressSnapshot` every ``progress_interval_seconds``
    and once at the end.
    """

    max_depth: int | None = attrs.field(default=None, validator=_non_negative)
    max_states: int | None = attrs.field(default=None, validator=_non_negative)
    progress: Callable[[ProgressSnapshot], None] | None = attrs.field(default=None, eq=False)
    progress_interval_seconds: float = 10.0


def run_bfs(model: Model[Any, Any], options: BfsOptions | None = None) -> ExplorationResult:
    """Explore every state of ``model`` reachable within the bounds of ``options``, breadth first."""
    return _Search(model, options or BfsOptions()).run()


@attrs.frozen
class _Level:
    """What expanding one level produced: its best finding per property, the next level in the
    order it was reached, the chosen parent transition of each new state (with the action's name,
    for coverage), and the number of successors generated."""

    best: dict[str, Candidate]
    frontier: list[tuple[int, Any]]
    parents: dict[int, tuple[int, int, str]]
    generated: int


class _Search:
    """The state of one run; :meth:`run` is the level loop, :meth:`_expand_level` the hot loop."""

    def __init__(self, model: Model[Any, Any], options: BfsOptions) -> None:
        self.model = model
        self.options = options
        properties = model.properties()
        self.property_set = PropertySet.of(properties)
        self.kinds = {p.name: p.kind for p in properties}
        self.property_order = {p.name: i for i, p in enumerate(properties)}
        self.start = time.perf_counter()
        self.next_report = self.start + options.progress_interval_seconds
        self.parents: ParentMap = {}
        self.generated = 0
        self.generated_by_action: dict[str, int] = {}
        self.distinct_by_action: dict[str, int] = {}
        self.levels: list[LevelStats] = []
        self.discoveries: list[Discovery] = []
        self.examples_found: set[str] = set()

    def run(self) -> ExplorationResult:
        frontier = self._initial_level()
        depth = 0
        while True:
            stop_reason = self._bound_reached(depth)
            level_start = time.perf_counter()
            level = self._expand_level(frontier, depth, generate=stop_reason is None)
            self._adopt(level.parents)
            self.levels.append(
                LevelStats(
                    depth=depth,
                    frontier=len(frontier),
                    generated=level.generated,
                    new=len(level.frontier),
                    distinct_total=len(self.parents),
                    seconds=time.perf_counter() - level_start,
                )
            )
            next_frontier = level.frontier
            # States of an unexpanded level stay on the queue: their successors were not computed.
            queue = len(next_frontier) if stop_reason is None else len(frontier)
            if self._record(level.best):
                return self._result(Outcome.VIOLATION, queue=queue)
            if stop_reason is not None:
                return self._result(Outcome.INCONCLUSIVE, queue=queue, reason=stop_reason)
            if not next_frontier:
                return self._result(Outcome.OK, queue=0)
            frontier = next_frontier
            depth += 1

    def _initial_level(self) -> list[tuple[int, Any]]:
        """Level 0: the initial states, de-duplicated; each counts as generated, as in TLC."""
        frontier: list[tuple[int, Any]] = []
        for state in self.model.init_states():
            self.generated += 1
            fp = fingerprint(self.model.encode(state))
            if fp not in self.parents:
                self.parents[fp] = None
                frontier.append((fp, state))
        return frontier

    def _bound_reached(self, depth: int) -> str | None:
        """Why the level at ``depth`` must not be expanded, or None."""
        return bound_reached(depth, len(self.parents), self.options.max_depth, self.options.max_states)

    def _expand_level(self, frontier: list[tuple[int, Any]], depth: int, *, generate: bool) -> _Level:
        """Expand every state of ``frontier`` (the hot loop)."""
        model, property_set, kinds = self.model, self.property_set, self.kinds
        skip = frozenset(self.examples_found)
        parents = self.parents
        generated_by_action = self.generated_by_action
        progress = self.options.progress
        best: dict[str, Candidate] = {}
        next_frontier: list[tuple[int, Any]] = []
        next_parents: dict[int, tuple[int, int, str]] = {}
        generated = 0
        for expanded, (fp, state) in enumerate(frontier, 1):
            expansion = expand(model, state, property_set, generate=generate, skip=skip)
            if expansion.findings:
                best = pick_per_property(
                    [*best.values(), *(_candidate(f, kinds, depth, fp) for f in expansion.findings)]
                )
            successors = expansion.successors
            generated += len(successors)
            for successor in successors:
                name = successor.action_name
                generated_by_action[name] = generated_by_action.get(name, 0) + 1
                child = successor.fingerprint
                chosen = next_parents.get(child)
                if chosen is None:
                    if child not in parents:
                        next_parents[child] = (fp, successor.action_index, name)
                        next_frontier.append((child, successor.state))
                elif fp < chosen[0] or (fp == chosen[0] and successor.action_index < chosen[1]):
                    next_parents[child] = (fp, successor.action_index, name)
            if progress is not None and (expanded % _CLOCK_EVERY == 0 or expanded == len(frontier)):
                self._maybe_report(
                    depth,
                    self.generated + generated,
                    len(parents) + len(next_parents),
                    queue=len(frontier) - expanded + len(next_frontier),
                )
        self.generated += generated
        return _Level(best, next_frontier, next_parents, generated)

    def _adopt(self, next_parents: dict[int, tuple[int, int, str]]) -> None:
        """Make the new states of a level visited, with their chosen parent transition."""
        parents, distinct_by_action = self.parents, self.distinct_by_action
        for child, (parent, action_index, name) in next_parents.items():
            parents[child] = (parent, action_index)
            distinct_by_action[name] = distinct_by_action.get(name, 0) + 1

    def _record(self, best: dict[str, Candidate]) -> bool:
        """Turn a level's findings into discoveries; True when one of them is a violation."""
        violated = False
        for name in sorted(best, key=self.property_order.__getitem__):
            candidate = best[name]
            self.discoveries.append(self._discovery(candidate))
            if candidate.kind.is_violation:
                violated = True
            else:
                self.examples_found.add(name)
        return violated

    def _discovery(self, candidate: Candidate) -> Discovery:
        path, action_indices = path_to(self.parents, candidate.fingerprint)
        if candidate.action_index is not None:
            assert candidate.child_fingerprint is not None
            path = (*path, candidate.child_fingerprint)
            action_indices = (*action_indices, candidate.action_index)
        return Discovery(candidate.property, candidate.kind, candidate.evidence, path, action_indices)

    def _maybe_report(self, depth: int, generated: int, distinct: int, *, queue: int) -> None:
        progress = self.options.progress
        now = time.perf_counter()
        if progress is None or now < self.next_report:
            return
        self.next_report = now + self.options.progress_interval_seconds
        progress(ProgressSnapshot(now - self.start, depth + 1, generated, distinct, queue))

    def _result(self, outcome: Outcome, *, queue: int, reason: str = "") -> ExplorationResult:
        seconds = time.perf_counter() - self.start
        stats = Statistics(
            generated=self.generated,
            distinct=len(self.parents),
            depth=len(self.levels),
            queue=queue,
            seconds=seconds,
            levels=tuple(self.levels),
            actions=tuple(
                ActionCoverage(name, generated, self.distinct_by_action.get(name, 0))
                for name, generated in sorted(self.generated_by_action.items())
            ),
        )
        if self.options.progress is not None:
            self.options.progress(ProgressSnapshot(seconds, stats.depth, stats.generated, stats.distinct, queue))
        never_found: tuple[str, ...] = ()
        if outcome is Outcome.OK:
            never_found = tuple(
                name for name, kind in self.kinds.items() if not kind.is_violation and name not in self.examples_found
            )
        return ExplorationResult(
            outcome=outcome,
            engine="local",
            stats=stats,
            discoveries=tuple(self.discoveries),
            never_found=never_found,
            reason=reason,
        )


def bound_reached(depth: int, distinct: int, max_depth: int | None, max_states: int | None) -> str | None:
    """Why a breadth-first engine must not expand the level at ``depth`` after finding ``distinct``
    states, or None. Shared by every BFS engine so that their INCONCLUSIVE reasons agree."""
    if max_depth is not None and depth >= max_depth:
        return (
            f"depth bound reached: states {depth} steps from an initial state were checked "
            f"but not expanded (max_depth={max_depth})"
        )
    if max_states is not None and distinct >= max_states:
        return (
            f"state bound reached: {distinct} distinct states found, the last level "
            f"was checked but not expanded (max_states={max_states})"
        )
    return None


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


def path_to(parents: ParentMap, fp: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The fingerprints from an initial state to ``fp`` and the action index of each step,
    followed back through the parent map."""
    path = [fp]
    action_indices: list[int] = []
    step = parents[fp]
    while step is not None:
        parent, action_index = step
        path.append(parent)
        action_indices.append(action_index)
        step = parents[parent]
    path.reverse()
    action_indices.reverse()
    return tuple(path), tuple(action_indices)
