"""Hypothesis stateful testing of any contract model (engine ``"hypothesis"``).

:func:`machine_for` turns a model into a :class:`hypothesis.stateful.RuleBasedStateMachine`: the
current frozen state sits in one attribute; an ``initialize`` rule picks an initial state by
index; one rule, ``step``, draws the index of one of the state's successors and moves there, so
the very transitions BFS explores are taken. Each state the machine reaches is expanded by
:func:`explorer.expand.expand`, as in BFS and simulation: state properties are checked on it
(quiescence properties decide for themselves whether the state is idle), transition properties
on every transition out of it; the invariant ``properties_hold`` then fails on a violation. A
state without successors (or outside the boundary) ends a walk, but a stateful test cannot end an
example early: with ``restart`` (the explorer's default) ``step`` starts the next walk from an
initial state within the same example, otherwise it stutters. An example is then worth several
walks instead of one walk and a tail of stutters (the discovery's path starts at the last restart,
and shrinking removes the walks before it). The explorer also keeps the expansions of the states
its examples reach by fingerprint (:class:`ExpansionCache`): examples go through the same states
again and again, and a model is deterministic.

A violation raises :class:`PropertyViolation`, one subclass per property, so Hypothesis shrinks
each violated property to its own minimal example. The exception carries the
:class:`~explorer.results.Discovery` (fingerprint path and action indices) of the example it was
raised on, which replays through :mod:`explorer.replay` and renders like a BFS discovery; its
message tells the counterexample step by step, so that a pytest failure shows it.
:func:`machine_over` draws the model itself too (from scenario text, say), so that Hypothesis
shrinks the model along with the path; an exception inside the model is reported with the path
that provoked it (:class:`ModelCrash`).

:func:`run_hypothesis` is the explorer: it runs the machine with the options' budget and seed,
keeps count of what every example visited (distinct states by fingerprint, successors
generated), records the shortest example of each ``sometimes`` property, and returns an
:class:`~explorer.results.ExplorationResult`. Its example database is namespaced by a key naming
the model, so that one directory can serve several scenarios and a failure replays first on the
next run.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from hypothesis import HealthCheck, Phase, Verbosity, note, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.control import should_note
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase
from hypothesis.errors import Flaky
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from explorer.contract import Model, Property, PropertyKind
from explorer.expand import Expansion, PropertySet, Successor, expand, rarer_young_collections
from explorer.fingerprint import fingerprint
from explorer.replay import describe_trace, run_actions
from explorer.results import ActionCoverage, Discovery, ExplorationResult, Outcome, Statistics, never_found
from explorer.simulation import CHOOSE_FAMILY, by_family

ENGINE = "hypothesis"


class PropertyViolation(AssertionError):
    """A property violated on a state the machine reached; ``discovery`` is its path. Raised as
    the subclass :func:`violation_class` makes for the property."""

    def __init__(self, message: str, discovery: Discovery) -> None:
        super().__init__(message)
        self.discovery = discovery


@functools.cache
def violation_class(property_name: str) -> type[PropertyViolation]:
    """One exception class per property: Hypothesis tells bugs apart by exception type and place,
    and shrinks each one separately."""
    return type(f"Violation_{property_name}", (PropertyViolation,), {"__module__": __name__})


class ModelCrash(Exception):
    """The model raised an exception computing the successors of a state the machine reached."""


@attrs.frozen
class _Found:
    """A sometimes example seen during the run, with the key that picks the shortest."""

    discovery: Discovery
    key: tuple[int, int, int]


class Collector:
    """What every example of a run visited, added up across examples (shrinking included)."""

    def __init__(self) -> None:
        self.examples = 0
        self.walks = 0
        self.steps = 0
        self.longest = 0
        self.initial_states = 0
        self.fingerprints: set[int] = set()
        self.by_action: set[tuple[str, int]] = set()
        self.generated: dict[str, int] = {}
        self.examples_found: dict[str, _Found] = {}
        self.started = time.perf_counter()
        #: Examples run and seconds spent when the first violation was raised (before shrinking).
        self.first_violation: tuple[int, float] | None = None

    def record_example(self, discovery: Discovery, key: tuple[int, int, int]) -> None:
        current = self.examples_found.get(discovery.property)
        if current is None or key < current.key:
            self.examples_found[discovery.property] = _Found(discovery, key)


class ModelMachine(RuleBasedStateMachine):
    """The machine's rules and invariant; :func:`machine_for` and :func:`machine_over` add the
    ``initialize`` rule that sets the model and the initial state."""

    collector: Collector | None = None
    choice: str = CHOOSE_FAMILY
    restart: bool = False
    #: Expansions by fingerprint, shared by the examples of one run (None: expand every state reached).
    expansions: ExpansionCache | None = None

    def __init__(self) -> None:
        super().__init__()
        self.model: Model[Any, Any] | None = None
        self.properties: PropertySet = PropertySet((), ())
        self.kinds: dict[str, PropertyKind] = {}
        self.order: dict[str, int] = {}
        self.state: Any = None
        self.initial = 0
        self.path: list[int] = []
        self.action_indices: list[int] = []
        self.expansion = Expansion((), ())
        self.examples_found: set[str] = set()

    # -- rules -------------------------------------------------------------------------------------

    def _start(self, model: Model[Any, Any], initial: int) -> None:
        self.model = model
        properties = model.properties()
        self.properties = PropertySet.of(properties)
        self.kinds = {p.name: p.kind for p in properties}
        self.order = {p.name: i for i, p in enumerate(properties)}
        if self.collector is not None:
            self.collector.examples += 1
        self._begin_walk(initial)

    def _begin_walk(self, initial: int) -> None:
        """Stand on initial state ``initial`` with an empty path (an example's first walk, or a restart)."""
        assert self.model is not None
        self.path, self.action_indices = [], []
        self.initial = initial
        state = self.model.init_states()[initial]
        if self.collector is not None:
            self.collector.walks += 1
            self.collector.initial_states += 1
        self._arrive(state, fingerprint(self.model.encode(state)), None)

    @rule(data=st.data())
    def step(self, data: st.DataObject) -> None:
        """Take one successor of the current state, drawn by index; when there is none, start a new walk
        (with ``restart``) or stutter."""
        successors: Sequence[Successor] = self.expansion.successors
        if not successors:
            if self.restart:
                self._restart(data)
            return
        if self.choice == CHOOSE_FAMILY:
            families = by_family(successors)
            successors = families[_draw_index(data, len(families), "action family")]
        successor = successors[_draw_index(data, len(successors), "successor")]
        assert self.model is not None
        if should_note():  # only the final (reported) run keeps notes: describing every step is costly
            note(f"step {len(self.action_indices) + 1}: "
                 f"{self.model.describe_action(self.model.actions(self.state)[successor.action_index])}")
        self.action_indices.append(successor.action_index)
        self._arrive(successor.state, successor.fingerprint, successor)

    def _restart(self, data: st.DataObject) -> None:
        """Begin a new walk from an initial state: the one before ended (no successor is left)."""
        assert self.model is not None
        count = len(self.model.init_states())
        initial = _draw_index(data, count, "initial state")
        note(f"restart from initial state {initial}")
        self._begin_walk(initial)

    @invariant()
    def properties_hold(self) -> None:
        """No property is violated on the current state or on a transition out of it."""
        violated = [f for f in self.expansion.findings if self.kinds[f.property].is_violation]
        if not violated:
            return
        first = min(violated, key=lambda f: (self.order[f.property], -1 if f.action_index is None else f.action_index))
        discovery = self._discovery(first.property, first.evidence, first.action_index, first.child_fingerprint)
        collector = self.collector
        if collector is not None and collector.first_violation is None:
            collector.first_violation = (collector.examples, time.perf_counter() - collector.started)
        raise violation_class(first.property)(self._message(discovery), discovery)

    # -- bookkeeping ---------------------------------------------------------------------------------

    def _arrive(self, state: Any, fp: int, via: Successor | None) -> None:
        """Make ``state`` current: expand it (check its properties, compute its successors) and count it."""
        assert self.model is not None
        self.state = state
        self.path.append(fp)
        cache = self.expansions
        expansion = None if cache is None else cache.get(fp)
        if expansion is None:
            try:
                # A cached expansion serves every example, so it checks every property.
                skip = frozenset() if cache is not None else frozenset(self.examples_found)
                expansion = expand(self.model, state, self.properties, skip=skip)
            except Exception as e:
                raise ModelCrash(self._crash_message(e)) from e
            if cache is not None:
                cache.put(fp, expansion)
        self.expansion = expansion
        collector = self.collector
        if collector is not None:
            collector.longest = max(collector.longest, len(self.action_indices))
            collector.fingerprints.add(fp)
            if via is not None:
                collector.steps += 1
                collector.by_action.add((via.action_name, fp))
            for successor in self.expansion.successors:
                collector.generated[successor.action_name] = collector.generated.get(successor.action_name, 0) + 1
        for finding in self.expansion.findings:
            kind = self.kinds[finding.property]
            if kind.is_violation:
                continue
            self.examples_found.add(finding.property)
            if collector is not None:
                discovery = self._discovery(finding.property, finding.evidence, finding.action_index,
                                            finding.child_fingerprint)
                action = -1 if finding.action_index is None else finding.action_index
                collector.record_example(discovery, (discovery.trace_length, fp, action))

    def _discovery(self, name: str, evidence: Any, action_index: int | None, child: int | None) -> Discovery:
        path, actions = tuple(self.path), tuple(self.action_indices)
        if action_index is not None:
            assert child is not None
            path, actions = (*path, child), (*actions, action_index)
        return Discovery(name, self.kinds[name], evidence, path, actions)

    def _message(self, discovery: Discovery) -> str:
        assert self.model is not None
        return counterexample_text(self.model, self.initial, discovery)

    def _crash_message(self, error: Exception) -> str:
        assert self.model is not None
        states = run_actions(self.model, self.initial, self.action_indices)
        steps = [self.model.describe_action(self.model.actions(prev)[i])
                 for prev, i in zip(states[:-1], self.action_indices, strict=True)]
        path = "; ".join(f"{n}. {s}" for n, s in enumerate(steps, 1)) or "the initial state"
        return (f"The model raised {type(error).__name__}: {error} computing the successors of the state "
                f"reached by: {path}.")


class ExpansionCache:
    """The expansions of the states a run's examples reached, by fingerprint, the least recently
    used dropped beyond ``size``: a model is deterministic, and the examples of a run go through the
    same states again and again. An entry holds every successor of its state (about 40 KiB on six
    brokers and three topics, bench/scenarios/large-6brokers-3racks.toml), hence the bound."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.entries: dict[int, Expansion] = {}
        self.hits = 0
        self.misses = 0

    def get(self, fp: int) -> Expansion | None:
        expansion = self.entries.pop(fp, None)
        if expansion is None:
            self.misses += 1
        else:
            self.hits += 1
            self.entries[fp] = expansion  # the most recently used last
        return expansion

    def put(self, fp: int, expansion: Expansion) -> None:
        if len(self.entries) >= self.size:
            del self.entries[next(iter(self.entries))]
        self.entries[fp] = expansion


#: A step's index is drawn as one value below this, scaled down to the choices there are (see
#: :func:`_draw_index`).
INDEX_RANGE = 256


def _draw_index(data: st.DataObject, count: int, label: str) -> int:
    """An index below ``count``, drawn only when there is a choice (a forced draw only lengthens
    what Hypothesis has to shrink).

    The value is drawn from the same range at every step and scaled to ``count``: Hypothesis replays
    choices of one example in another (its generation mutates the previous example by copying one
    step's choices over another's, and shrinking moves them), and a value drawn as
    ``integers(0, count - 1)`` replayed where ``count`` is smaller is not allowed there, so Hypothesis
    puts its simplest choice, 0, in its place: the first action family was drawn for 63 % of the
    two-way choices on stale-deletion-response. Scaled, a replayed value stays valid and keeps its
    place in proportion (that scenario's violation at example 2,568 instead of 5,119, seed 0; one
    seed only). Smaller values are still smaller indices, so shrinking still moves to the first.
    """
    if count <= 1:
        return 0
    span = max(INDEX_RANGE, count)
    return data.draw(st.integers(0, span - 1), label=label) * count // span


def counterexample_text(model: Model[Any, Any], initial: int, discovery: Discovery) -> str:
    """The counterexample of ``discovery`` told step by step, in the model's vocabulary."""
    states = run_actions(model, initial, discovery.action_indices)
    trace = describe_trace(model, states, discovery.action_indices)
    what = "Invariant" if discovery.kind is PropertyKind.ALWAYS else "Action property"
    lines = [f"{what} {discovery.property} is violated after {discovery.trace_length} steps.", "Evidence:"]
    lines += [f"  {key}: {value}" for key, value in discovery.evidence.items()]
    lines += ["State 0 (initial):", *(f"  {line}" for line in trace.initial)]
    for number, step in enumerate(trace.steps, 1):
        lines.append(f"Step {number}: {step.action}")
        lines += [f"  {change}" for change in step.changes]
    return "\n".join(lines)


def machine_for(model: Model[Any, Any], collector: Collector | None = None,
                choice: str = CHOOSE_FAMILY, restart: bool = False, cache_size: int = 0) -> type[ModelMachine]:
    """A state machine class exploring ``model`` (counting into ``collector`` when given); ``choice``
    is how ``step`` draws a successor, as for simulation (:data:`explorer.simulation.CHOICES`);
    ``restart`` and ``cache_size`` as in :class:`HypothesisOptions`."""
    count = len(model.init_states())

    class Machine(ModelMachine):
        @initialize(initial=st.integers(0, count - 1))
        def start(self, initial: int) -> None:
            self._start(model, initial)

    Machine.collector = collector
    Machine.choice = choice
    Machine.restart = restart
    Machine.expansions = ExpansionCache(cache_size) if cache_size > 0 else None
    Machine.__name__ = Machine.__qualname__ = f"{type(model).__name__}Machine"
    return Machine


def machine_over(sources: st.SearchStrategy[Any], build: Callable[[Any], Model[Any, Any]]) -> type[ModelMachine]:
    """A state machine class that first draws a model source (scenario text, say) and builds the
    model from it with ``build``; Hypothesis then shrinks the source along with the path, and a
    failure prints the source it was found on."""

    class Machine(ModelMachine):
        @initialize(source=sources, data=st.data())
        def start(self, source: Any, data: st.DataObject) -> None:
            model = build(source)
            count = len(model.init_states())
            self._start(model, data.draw(st.integers(0, count - 1), label="initial state") if count > 1 else 0)

    Machine.__name__ = Machine.__qualname__ = "DrawnModelMachine"
    return Machine


# -- the explorer ----------------------------------------------------------------------------------


@attrs.frozen
class HypothesisOptions:
    """The budget and reproducibility of a Hypothesis run.

    ``max_examples`` and ``depth`` (steps per example) are Hypothesis's ``max_examples`` and
    ``stateful_step_count`` (plus one: the initialize rule counts as a step). ``restart``: a walk
    that ends (no successor) starts again from an initial state within its example, instead of
    stuttering to the example's end. ``cache_size``: the most expansions kept by fingerprint (0: none).
    ``seed`` is given to Hypothesis's ``@seed``; ``derandomize`` instead makes the run depend on
    nothing but the model.
    ``database`` is a directory for Hypothesis's example database (None: none), shared by runs
    with the same ``database_key`` so that a failure found once is replayed first next time.
    """

    max_examples: int = 200
    depth: int = 50
    seed: int | None = 0
    choice: str = CHOOSE_FAMILY
    restart: bool = True
    cache_size: int = 5_000
    derandomize: bool = False
    database: Path | None = None
    database_key: bytes = b""


class _Namespaced(ExampleDatabase):
    """An example database under a prefix of its keys: one directory serves several models."""

    def __init__(self, inner: ExampleDatabase, prefix: bytes) -> None:
        super().__init__()
        self.inner, self.prefix = inner, prefix

    def save(self, key: bytes, value: bytes) -> None:
        self.inner.save(self.prefix + key, value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self.inner.fetch(self.prefix + key)

    def delete(self, key: bytes, value: bytes) -> None:
        self.inner.delete(self.prefix + key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self.inner.move(self.prefix + src, self.prefix + dest, value)


def default_database_key(model: Model[Any, Any]) -> bytes:
    """A key naming a model by what a contract shows: its initial states and its property names."""
    parts = [model.encode(s) for s in model.init_states()] + [p.name.encode() for p in model.properties()]
    return fingerprint(b"\0".join(parts)).to_bytes(8, "little", signed=True)


def hypothesis_settings(options: HypothesisOptions, model: Model[Any, Any]) -> settings:
    """Hypothesis's settings for a run of ``options``: no deadline or health check (a model step
    may be slow, and the machine does all its drawing in one rule), quiet (kmc renders the result)."""
    database: ExampleDatabase | None = None
    if options.database is not None and not options.derandomize:
        key = options.database_key or default_database_key(model)
        database = _Namespaced(DirectoryBasedExampleDatabase(str(options.database)), key + b":")
    return settings(
        # Phase.explain is left out: it re-runs variants of the shrunk example to comment on it,
        # and a model's steps are too costly for that to be worth it.
        phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink),
        max_examples=options.max_examples,
        stateful_step_count=options.depth + 1,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=options.derandomize,
        database=database,
        verbosity=Verbosity.quiet,
        report_multiple_bugs=True,
        print_blob=False,
    )


def run_hypothesis(model: Model[Any, Any], options: HypothesisOptions | None = None) -> ExplorationResult:
    """Explore ``model`` with Hypothesis's stateful testing; violations come back shrunk."""
    options = options or HypothesisOptions()
    collector = Collector()
    machine = machine_for(model, collector, options.choice, options.restart, options.cache_size)
    if options.seed is not None and not options.derandomize:
        machine = hypothesis_seed(options.seed)(machine)
    start = time.perf_counter()
    violations: list[Discovery] = []
    reason = ""
    try:
        with rarer_young_collections():
            run_state_machine_as_test(machine, settings=hypothesis_settings(options, model))
    except KeyboardInterrupt:
        reason = (f"interrupted after {collector.examples:,} examples; run again with the same seed "
                  "(a violation found before the interrupt was not yet saved)")
    except PropertyViolation as e:
        violations.append(e.discovery)
    except BaseExceptionGroup as group:
        matched, rest = group.split(PropertyViolation)
        if rest is not None:
            raise
        assert matched is not None
        violations += [e.discovery for e in _leaves(matched) if isinstance(e, PropertyViolation)]
    except Flaky as e:
        raise ModelCrash(f"Hypothesis saw the same steps behave differently ({e}); the model is not "
                         "deterministic (look for set or dict iteration order, randomness or the wall clock).") from e
    seconds = time.perf_counter() - start
    return _result(model, options, collector, violations, seconds, reason)


def _leaves(group: BaseExceptionGroup[Any]) -> Iterable[BaseException]:
    for e in group.exceptions:
        if isinstance(e, BaseExceptionGroup):
            yield from _leaves(e)
        else:
            yield e


def _result(model: Model[Any, Any], options: HypothesisOptions, collector: Collector, violations: Sequence[Discovery],
            seconds: float, reason: str) -> ExplorationResult:
    properties: Sequence[Property] = model.properties()
    order = {p.name: i for i, p in enumerate(properties)}
    found = {name: f.discovery for name, f in collector.examples_found.items()}
    discoveries = sorted([*violations, *found.values()], key=lambda d: order[d.property])
    outcome = Outcome.VIOLATION if violations else Outcome.INCONCLUSIVE if reason else Outcome.NONE_IN_SAMPLE
    unsatisfied = (never_found([(p.name, p.kind) for p in properties], found)
                   if outcome is Outcome.NONE_IN_SAMPLE else ())
    by_action: dict[str, int] = {}
    for name, _ in collector.by_action:
        by_action[name] = by_action.get(name, 0) + 1
    names = sorted(set(collector.generated) | set(by_action))
    stats = Statistics(
        generated=collector.initial_states + sum(collector.generated.values()),
        distinct=len(collector.fingerprints),
        depth=collector.longest + 1,
        queue=0,
        seconds=seconds,
        actions=tuple(ActionCoverage(n, collector.generated.get(n, 0), by_action.get(n, 0)) for n in names),
    )
    details: Mapping[str, Any] = {
        "seed": options.seed,
        "derandomize": options.derandomize,
        "max_examples": options.max_examples,
        "max_steps_per_example": options.depth,
        "choice": options.choice,
        "restart": options.restart,
        "examples": collector.examples,
        "walks": collector.walks,
        "steps": collector.steps,
        "longest_example": collector.longest,
        "database": None if options.database is None or options.derandomize else str(options.database),
        **({"shortest_violating_prefix": min(d.trace_length for d in violations)} if violations else {}),
        **({"first_violation_after_examples": collector.first_violation[0],
            "first_violation_after_seconds": collector.first_violation[1]} if collector.first_violation else {}),
    }
    return ExplorationResult(outcome=outcome, engine=ENGINE, stats=stats, discoveries=tuple(discoveries),
                             never_found=unsatisfied, reason=reason, details=details, exhaustive=False)
