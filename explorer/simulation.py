"""Seeded random simulation (engine ``"simulation"``): uniform random walks over any contract model.

For scenarios too large to exhaust, a walk goes deep where breadth-first search cannot: from an
initial state it takes, at each step, one successor chosen uniformly among those the state has,
for at most ``depth`` steps. Every state on a walk is expanded by :func:`explorer.expand.expand`,
the function both BFS engines use, so a walk checks the same properties the same way: state
properties on the state (quiescence properties decide for themselves whether the state is idle),
transition properties on *every* transition out of it, the one taken and the others. A walk ends
at its depth bound, in a state with no successor (or outside the model's boundary), or at its
first violation.

Randomness is reproducible and independent of where a walk runs: walk ``i`` draws from its own
``random.Random`` seeded by :func:`walk_seed` from the run's seed and ``i``. Walks are run in
rounds of growing size (:func:`rounds`); a violation stops the simulation at the end of the round
in which it was found. So the local engine (:func:`run_simulation`) and the Spark engine
(:mod:`spark_explore.simulation`), which runs a round's walks as Spark tasks, do the same walks
and report the same result for the same seed.

What a walk tells the driver is a :class:`WalkSummary`: its findings (located by step, not by
path), its length, why it ended, and what it generated per action. The fingerprints it visited
are counted apart (:class:`Visited`), so that an engine can count distinct states where they are
(a Python set here, a Spark ``distinct`` there). A reported finding's path is rebuilt by running
its walk again from its seed (:func:`walk_discovery`), and checked fingerprint by fingerprint.

Per property the reported finding is the one with the shortest trace over all walks, ties broken
by :meth:`~explorer.results.Candidate.key` and then by walk number.
"""

from __future__ import annotations

import hashlib
import random
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TextIO

import attrs

from explorer.contract import Model
from explorer.expand import PropertySet, Successor, expand, rarer_young_collections
from explorer.fingerprint import fingerprint
from explorer.replay import ReplayError
from explorer.results import (
    ActionCoverage,
    Candidate,
    Discovery,
    ExplorationResult,
    Outcome,
    Statistics,
    never_found,
)

ENGINE = "simulation"

#: The first round runs this many walks; each next round twice as many as the one before, up to
#: LARGEST_ROUND: a shallow bug stops the run early, a long run spends its time in large rounds
#: (one Spark job each), and a run stops at most LARGEST_ROUND walks after its first violation.
FIRST_ROUND = 16
LARGEST_ROUND = 1024

#: Why a walk ended.
END_DEPTH = "depth"  # it took ``depth`` steps
END_DEADLOCK = "deadlock"  # its last state has no successor
END_BOUNDARY = "boundary"  # its last state is outside the model's boundary
END_VIOLATION = "violation"  # a property was violated on its last state or one of its transitions


#: How a walk picks the next state among a state's successors.
CHOOSE_FAMILY = "family"  # uniformly an action family (``action_name``), then uniformly one of its successors
CHOOSE_SUCCESSOR = "successor"  # uniformly one successor
CHOICES = (CHOOSE_FAMILY, CHOOSE_SUCCESSOR)


def by_family(successors: Sequence[Successor]) -> list[list[Successor]]:
    """``successors`` grouped by action name, groups in the order their first member appears."""
    groups: dict[str, list[Successor]] = {}
    for successor in successors:
        groups.setdefault(successor.action_name, []).append(successor)
    return list(groups.values())


def choose(rng: random.Random, successors: Sequence[Successor], choice: str) -> Successor:
    """One of ``successors`` (not empty), drawn from ``rng`` as ``choice`` says.

    Choosing the family first keeps the many instances of one action (one ``BrokerApplyRequest``
    per broker with a request waiting) from crowding out an action that has one instance (the
    controller's next event); see the README's performance section for what it changes.
    """
    if choice == CHOOSE_SUCCESSOR:
        return rng.choice(successors)
    return rng.choice(rng.choice(by_family(successors)))


def _positive(_instance: Any, attribute: attrs.Attribute[Any], value: int) -> None:
    if value < 1:
        raise ValueError(f"{attribute.name} must be at least 1, got {value}")


def _non_negative(_instance: Any, attribute: attrs.Attribute[Any], value: int) -> None:
    if value < 0:
        raise ValueError(f"{attribute.name} must be at least 0, got {value}")


@attrs.frozen
class SimulationOptions:
    """How many walks, how deep, from which seed.

    ``depth`` is the most steps a walk takes (its last state is checked, not expanded).
    ``progress`` receives a :class:`SimulationProgress` after every round and, within a round of
    the local engine, every ``progress_interval_seconds``.
    """

    walks: int = attrs.field(default=1000, validator=_positive)
    depth: int = attrs.field(default=100, validator=_non_negative)
    seed: int = 0
    choice: str = attrs.field(default=CHOOSE_FAMILY, validator=attrs.validators.in_(CHOICES))
    progress: Callable[[SimulationProgress], None] | None = attrs.field(default=None, eq=False)
    progress_interval_seconds: float = 10.0


@attrs.frozen
class SimulationProgress:
    """Where a running simulation is; ``distinct`` is None where counting it would cost a job of
    its own (the Spark engine counts distinct states once, at the end)."""

    seconds: float
    walks_done: int
    walks: int
    generated: int
    distinct: int | None


class SimulationProgressPrinter:
    """Writes ``Simulation at 12.3s: 496 of 1,000 walks, 53,210 states generated, 8,112 distinct
    states found.`` for each snapshot (stderr by default)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def __call__(self, p: SimulationProgress) -> None:
        distinct = "" if p.distinct is None else f", {p.distinct:,} distinct states found"
        print(
            f"Simulation at {p.seconds:.1f}s: {p.walks_done:,} of {p.walks:,} walks, "
            f"{p.generated:,} states generated{distinct}.",
            file=self._stream if self._stream is not None else sys.stderr,
            flush=True,
        )


def walk_seed(seed: int, walk: int) -> int:
    """The seed of walk number ``walk`` in a run seeded with ``seed``: a fixed hash of both (never
    Python's ``hash()``), so that every process derives the same one."""
    digest = hashlib.blake2b(f"kmc-walk:{seed}:{walk}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def rounds(walks: int) -> Iterator[range]:
    """The walk numbers of each round: 16, 32, 64, … then 1024 walks a round, the last one cut at ``walks``."""
    start, size = 0, FIRST_ROUND
    while start < walks:
        end = min(start + size, walks)
        yield range(start, end)
        start, size = end, min(size * 2, LARGEST_ROUND)


@attrs.frozen
class WalkFinding:
    """A finding on walk ``walk``: ``candidate.depth`` is the step of the walk at which it was made
    (the state's index on the walk), ``candidate.fingerprint`` that state's fingerprint."""

    walk: int
    candidate: Candidate

    def key(self) -> tuple[int, int, int, int]:
        return (*self.candidate.key(), self.walk)


@attrs.frozen
class WalkSummary:
    """What one walk reports to the driver (its visited fingerprints travel apart, see :class:`Visited`).

    ``generated`` counts the successors computed per action name (duplicates included, as TLC
    counts "states generated"); ``taken`` the steps the walk took per action name.
    """

    walk: int
    steps: int
    end: str
    findings: tuple[WalkFinding, ...]
    generated: tuple[tuple[str, int], ...]
    taken: tuple[tuple[str, int], ...]


@attrs.frozen
class WalkRecord:
    """A walk in full: its summary, the initial state it started from (index into
    ``init_states()``), the fingerprint of each state it visited, the action index of each step
    and the action name of each step (which reached ``path[i + 1]``)."""

    summary: WalkSummary
    initial: int
    path: tuple[int, ...]
    action_indices: tuple[int, ...]
    action_names: tuple[str, ...]

    def visited(self) -> Iterator[tuple[int, str]]:
        """``(fingerprint, action name)`` per state of the walk; the initial state's name is ``""``."""
        yield self.path[0], ""
        yield from zip(self.path[1:], self.action_names, strict=True)


class Walker:
    """Runs the walks of one simulation on one model (in this process, or in a Spark worker).

    ``options`` travel to Spark workers, so only their plain fields matter here (not ``progress``).
    """

    def __init__(self, model: Model[Any, Any], options: SimulationOptions) -> None:
        self.model = model
        self.seed, self.depth, self.choice = options.seed, options.depth, options.choice
        properties = model.properties()
        self.properties = PropertySet.of(properties)
        self.kinds = {p.name: p.kind for p in properties}

    def walk(self, number: int) -> WalkRecord:
        """Walk number ``number``: at most ``depth`` steps, each chosen at random as ``choice`` says."""
        model, kinds = self.model, self.kinds
        rng = random.Random(walk_seed(self.seed, number))
        initial_states = model.init_states()
        initial = rng.randrange(len(initial_states))
        state = initial_states[initial]
        fp = fingerprint(model.encode(state))
        path, action_indices, action_names = [fp], [], []
        first: dict[str, WalkFinding] = {}
        examples_found: set[str] = set()
        generated: dict[str, int] = {}
        taken: dict[str, int] = {}
        end = END_DEPTH
        for step in range(self.depth + 1):
            expansion = expand(model, state, self.properties, generate=step < self.depth,
                               skip=frozenset(examples_found))
            violated = False
            for finding in expansion.findings:
                kind = kinds[finding.property]
                found = WalkFinding(number, Candidate(finding.property, kind, finding.evidence, step, fp,
                                                      finding.action_index, finding.child_fingerprint))
                current = first.get(finding.property)
                if current is None or found.key() < current.key():
                    first[finding.property] = found
                if kind.is_violation:
                    violated = True
                else:
                    examples_found.add(finding.property)
            for successor in expansion.successors:
                generated[successor.action_name] = generated.get(successor.action_name, 0) + 1
            if violated:
                end = END_VIOLATION
                break
            if step == self.depth:
                break
            if not expansion.successors:
                end = END_DEADLOCK if model.within_boundary(state) else END_BOUNDARY
                break
            chosen = choose(rng, expansion.successors, self.choice)
            state, fp = chosen.state, chosen.fingerprint
            path.append(fp)
            action_indices.append(chosen.action_index)
            action_names.append(chosen.action_name)
            taken[chosen.action_name] = taken.get(chosen.action_name, 0) + 1
        summary = WalkSummary(
            walk=number,
            steps=len(action_indices),
            end=end,
            findings=tuple(first.values()),
            generated=tuple(sorted(generated.items())),
            taken=tuple(sorted(taken.items())),
        )
        return WalkRecord(summary, initial, tuple(path), tuple(action_indices), tuple(action_names))

    def discovery(self, found: WalkFinding) -> Discovery:
        """The discovery of ``found``, its walk run again from its seed to rebuild the path; raises
        :class:`~explorer.replay.ReplayError` when the walk does not make the same finding again."""
        record = self.walk(found.walk)
        again = {f.candidate.property: f for f in record.summary.findings}.get(found.candidate.property)
        if again != found:
            raise ReplayError(
                f"Walk {found.walk} (seed {self.seed}) did not find {found.candidate.property} at step "
                f"{found.candidate.depth} when run again: the model is not deterministic (look for iteration "
                "over a set or dict whose order changes between processes, randomness or the wall clock)."
            )
        c = found.candidate
        path = record.path[: c.depth + 1]
        action_indices = record.action_indices[: c.depth]
        if c.action_index is not None:
            assert c.child_fingerprint is not None
            path = (*path, c.child_fingerprint)
            action_indices = (*action_indices, c.action_index)
        return Discovery(c.property, c.kind, c.evidence, path, action_indices)


class Tally:
    """Everything a run adds up over its walks but the visited fingerprints (engine-independent)."""

    def __init__(self) -> None:
        self.walks = 0
        self.steps = 0
        self.longest = 0
        self.ends: dict[str, int] = {}
        self.generated: dict[str, int] = {}
        self.taken: dict[str, int] = {}
        self.best: dict[str, WalkFinding] = {}
        self.first_violating_walk: int | None = None

    def add(self, summary: WalkSummary) -> None:
        self.walks += 1
        self.steps += summary.steps
        self.longest = max(self.longest, summary.steps)
        self.ends[summary.end] = self.ends.get(summary.end, 0) + 1
        for name, count in summary.generated:
            self.generated[name] = self.generated.get(name, 0) + count
        for name, count in summary.taken:
            self.taken[name] = self.taken.get(name, 0) + count
        if summary.end == END_VIOLATION and (self.first_violating_walk is None
                                             or summary.walk < self.first_violating_walk):
            self.first_violating_walk = summary.walk
        for found in summary.findings:
            current = self.best.get(found.candidate.property)
            if current is None or found.key() < current.key():
                self.best[found.candidate.property] = found

    @property
    def violated(self) -> bool:
        return any(f.candidate.kind.is_violation for f in self.best.values())

    @property
    def total_generated(self) -> int:
        """TLC's "states generated": each walk's initial state plus every successor computed."""
        return self.walks + sum(self.generated.values())


class Visited:
    """The distinct states the walks visited, in total and per action name of the step that
    reached them (the local engine's counter; the Spark engine counts the same in Spark)."""

    def __init__(self) -> None:
        self.fingerprints: set[int] = set()
        self.by_action: set[tuple[str, int]] = set()

    def add(self, record: WalkRecord) -> None:
        for fp, name in record.visited():
            self.fingerprints.add(fp)
            if name:
                self.by_action.add((name, fp))

    def distinct_by_action(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for name, _ in self.by_action:
            counts[name] = counts.get(name, 0) + 1
        return counts


def run_simulation(model: Model[Any, Any], options: SimulationOptions | None = None) -> ExplorationResult:
    """Run the seeded random walks of ``options`` on ``model`` in this process."""
    options = options or SimulationOptions()
    walker = Walker(model, options)
    start = time.perf_counter()
    next_report = start + options.progress_interval_seconds
    tally, visited = Tally(), Visited()
    reason = ""
    try:
        with rarer_young_collections():
            for walk_numbers in rounds(options.walks):
                for number in walk_numbers:
                    record = walker.walk(number)
                    tally.add(record.summary)
                    visited.add(record)
                    if options.progress is not None and time.perf_counter() >= next_report:
                        next_report = time.perf_counter() + options.progress_interval_seconds
                        options.progress(_snapshot(start, tally, len(visited.fingerprints), options.walks))
                if options.progress is not None:
                    options.progress(_snapshot(start, tally, len(visited.fingerprints), options.walks))
                if tally.violated:
                    break
    except KeyboardInterrupt:
        reason = interrupted_reason(tally.walks, options.walks)
    return simulation_result(walker, options, tally, len(visited.fingerprints), visited.distinct_by_action(),
                             time.perf_counter() - start, reason=reason)


def interrupted_reason(done: int, walks: int) -> str:
    return (f"interrupted after {done:,} of {walks:,} walks; the walks are reproducible, so run again with "
            "the same seed (and as many walks) to continue where it stopped")


def _snapshot(start: float, tally: Tally, distinct: int, walks: int) -> SimulationProgress:
    return SimulationProgress(time.perf_counter() - start, tally.walks, walks, tally.total_generated, distinct)


def simulation_result(walker: Walker, options: SimulationOptions, tally: Tally, distinct: int,
                      distinct_by_action: Mapping[str, int], seconds: float, *, engine: str = ENGINE,
                      details: Mapping[str, Any] | None = None, reason: str = "") -> ExplorationResult:
    """The result of a simulation, its discoveries rebuilt by running their walks again (shared by
    both engines, so that they report alike). ``reason`` says why it stopped early, if it did:
    without a violation the outcome is then INCONCLUSIVE, and NONE_IN_SAMPLE after every walk (a
    sample is never a complete search)."""
    properties = walker.model.properties()
    order = {p.name: i for i, p in enumerate(properties)}
    discoveries = tuple(walker.discovery(tally.best[name]) for name in sorted(tally.best, key=order.__getitem__))
    violated = tally.violated
    outcome = Outcome.VIOLATION if violated else Outcome.INCONCLUSIVE if reason else Outcome.NONE_IN_SAMPLE
    unsatisfied = (never_found([(p.name, p.kind) for p in properties], tally.best)
                   if outcome is Outcome.NONE_IN_SAMPLE else ())
    names = sorted(set(tally.generated) | set(distinct_by_action))
    stats = Statistics(
        generated=tally.total_generated,
        distinct=distinct,
        depth=tally.longest + 1,  # TLC's convention: the initial state is depth 1
        queue=0,
        seconds=seconds,
        actions=tuple(ActionCoverage(n, tally.generated.get(n, 0), distinct_by_action.get(n, 0)) for n in names),
    )
    facts: dict[str, Any] = {
        "seed": options.seed,
        "choice": options.choice,
        "walks_requested": options.walks,
        "walks": tally.walks,
        "max_steps_per_walk": options.depth,
        "steps": tally.steps,
        "longest_walk": tally.longest,
        "walk_ends": dict(sorted(tally.ends.items())),
        "steps_by_action": dict(sorted(tally.taken.items())),
    }
    if violated:
        facts["shortest_violating_prefix"] = min(d.trace_length for d in discoveries if d.is_violation)
        facts["first_violating_walk"] = tally.first_violating_walk
    facts.update(details or {})
    return ExplorationResult(outcome=outcome, engine=engine, stats=stats, discoveries=discoveries,
                             never_found=unsatisfied, reason=reason if outcome is Outcome.INCONCLUSIVE else "",
                             details=facts, exhaustive=False)
