"""The one expansion function: what every breadth-first explorer does to the states of a level.

Both the in-process BFS (:mod:`explorer.bfs`) and the Spark BFS (:mod:`spark_explore`) hand a batch
of frontier states to :func:`expand_batch`, so successors, fingerprints and property findings are
computed by the same code in both engines. Engines differ only in how they store the frontier,
de-duplicate fingerprints and keep parent pointers.

A batch's successors come back as columns (numpy arrays of fingerprints, parent positions, action
indices and action-name codes, and a list of the successors' canonical bytes) rather than one
object per successor: that is what both engines store, and building an object per transition
cost more than the transition itself on small models. :func:`expand` is the one-state view of
the same function, with the successor states themselves, for the explorers that walk
(simulation, the Hypothesis machine).
"""

from __future__ import annotations

import gc
import hashlib
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import attrs
import numpy as np

from explorer.contract import Evidence, Model, Property, PropertyKind
from explorer.fingerprint import as_ints, fingerprint_array


@attrs.frozen
class Successor:
    """One generated transition ``parent --action_index--> child`` (duplicates included)."""

    fingerprint: int
    data: bytes
    action_index: int
    action_name: str
    state: Any = attrs.field(eq=False, repr=False)


@attrs.frozen
class Finding:
    """A property finding. ``action_index`` is None for state properties (found on the state
    itself) and the index of the action for transition properties (found on a successor)."""

    property: str
    evidence: Evidence = attrs.field(eq=False)
    action_index: int | None = None
    child_fingerprint: int | None = None


@attrs.frozen
class Expansion:
    findings: tuple[Finding, ...]
    successors: tuple[Successor, ...]


@attrs.frozen
class PropertySet:
    """A model's properties split by when they are checked."""

    on_state: tuple[Property, ...]
    on_transition: tuple[Property, ...]

    @classmethod
    def of(cls, properties: Sequence[Property]) -> PropertySet:
        return cls(
            on_state=tuple(p for p in properties if not p.kind.on_transition),
            on_transition=tuple(p for p in properties if p.kind.on_transition),
        )


class ActionNames(dict[str, int]):
    """Action names to small codes, given in order of first appearance (one table per search or per
    worker: codes never leave the process that made them, names do)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __missing__(self, name: str) -> int:
        code = self[name] = len(self.names)
        self.names.append(name)
        return code

    def counts(self, codes: np.ndarray) -> dict[str, int]:
        """How many times each name occurs among ``codes``."""
        tally = np.bincount(codes, minlength=len(self.names)) if len(codes) else ()
        return {self.names[code]: int(count) for code, count in enumerate(tally) if count}


@attrs.frozen
class BatchExpansion:
    """What :func:`expand_batch` made of a batch of states, one row per generated transition
    (duplicates included), in the order the states and their actions were listed.

    ``parents[i]`` is the position in the batch of the state whose action ``action_indices[i]``
    generated the successor with fingerprint ``child_fingerprints[i]``, canonical bytes ``data[i]``
    and action name ``names.names[action_codes[i]]``. ``findings`` pairs each finding with the
    position of the state it was made on. ``children`` holds the successor states when asked for.
    """

    child_fingerprints: np.ndarray = attrs.field(eq=False)
    parents: np.ndarray = attrs.field(eq=False)
    action_indices: np.ndarray = attrs.field(eq=False)
    action_codes: np.ndarray = attrs.field(eq=False)
    data: list[bytes] = attrs.field(eq=False)
    findings: tuple[tuple[int, Finding], ...]
    children: list[Any] | None = attrs.field(default=None, eq=False)

    def __len__(self) -> int:
        return len(self.data)


#: The cyclic garbage collector's first threshold while an explorer expands states (CPython's default is 700).
_YOUNG_THRESHOLD = 50_000


@contextmanager
def rarer_young_collections() -> Iterator[None]:
    """Run the cyclic garbage collector's youngest generation less often while an explorer expands states.

    Expanding a state allocates a few container objects per successor (the model's states) that reference
    counting frees as soon as the successor is encoded; with the default threshold the collector walks them
    every 700 allocations, 2-3% of a toy-controller search. Fewer young collections also move fewer objects to
    the older generations: walks and Hypothesis examples keep what the model's transition memos hold, and with
    the default thresholds full collections walk that whole growing heap again and again (13% of ``kmc simulate``
    on ``large-6brokers-3racks``: docs/performance.md). Cycles are still collected, later; the thresholds are
    restored afterwards.
    """
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], _YOUNG_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def expand_batch(
    model: Model[Any, Any],
    states: Iterable[Any],
    properties: PropertySet,
    names: ActionNames,
    *,
    generate: bool = True,
    skip: frozenset[str] = frozenset(),
    fingerprint_bits: int = 64,
    keep_children: bool = False,
) -> BatchExpansion:
    """Check the state properties of each of ``states`` and, if ``generate``, compute its successors
    and check the transition properties on each generated transition.

    ``skip`` names SOMETIMES / ACTION_SOMETIMES properties already satisfied, so that examples are
    not searched for again. States outside the model's boundary are checked but not expanded.
    Successors get fingerprints of ``fingerprint_bits`` bits; action names are coded by ``names``.
    """
    on_state = tuple(p for p in properties.on_state if p.name not in skip)
    on_transition = tuple(p for p in properties.on_transition if p.name not in skip)
    # Properties with triggers are checked by groups (_by_trigger); without any, one by one as they are listed,
    # with nothing more per state or transition than the checks (the toy models' transitions cost a few µs).
    state_checks = _by_trigger(on_state) if any(p.trigger is not None for p in on_state) else None
    transition_checks = _by_trigger(on_transition) if any(p.trigger is not None for p in on_transition) else None
    # A state's or a transition's findings in the order of the properties, whatever the order of the triggers.
    rank = {p.name: i for i, p in enumerate(on_state + on_transition)}
    found: list[tuple[Property, Evidence]] = []
    # Copying a hasher made once is cheaper than making one per successor (argument parsing and
    # parameter set-up were half of BLAKE2b's cost on small states); same digests.
    new_hasher = hashlib.blake2b(digest_size=fingerprint_bits // 8).copy
    encode, next_state, actions_of = model.encode, model.next_state, model.actions
    action_name, within_boundary = model.action_name, model.within_boundary
    data: list[bytes] = []
    digests: list[bytes] = []
    add_data, add_digest = data.append, digests.append
    action_codes = array("i")
    add_code = action_codes.append
    code_of = names.__getitem__
    # Per state, how many actions it has; an action's row is its place among all the batch's actions,
    # and ``no_successor`` lists the rows whose action gave no successor. Parents and action indices
    # are rebuilt from these with numpy instead of being appended once per successor.
    actions_per_state = array("i")
    no_successor: list[int] = []
    row = 0
    findings: list[tuple[int, Finding]] = []
    children: list[Any] | None = [] if keep_children else None
    for position, state in enumerate(states):
        if state_checks is None:
            for prop in on_state:
                evidence = prop.check(state)
                if evidence is not None:
                    findings.append((position, Finding(prop.name, evidence)))
        else:
            for trigger, props in state_checks:
                if trigger is None or trigger(state):
                    for prop in props:
                        evidence = prop.check(state)
                        if evidence is not None:
                            found.append((prop, evidence))
            if found:
                found.sort(key=lambda f: rank[f[0].name])
                findings.extend((position, Finding(prop.name, evidence)) for prop, evidence in found)
                found.clear()
        if not generate or not within_boundary(state):
            actions_per_state.append(0)
            continue
        actions = actions_of(state)
        for index, action in enumerate(actions):
            child = next_state(state, action)
            if child is None:
                no_successor.append(row + index)
                continue
            encoded = encode(child)
            add_data(encoded)
            hasher = new_hasher()
            hasher.update(encoded)
            digest = hasher.digest()
            add_digest(digest)
            add_code(code_of(action_name(action)))
            if children is not None:
                children.append(child)
            if transition_checks is None:
                for prop in on_transition:
                    evidence = prop.check(state, action, child)
                    if evidence is not None:
                        child_fp = int.from_bytes(digest, "little", signed=True)
                        findings.append((position, Finding(prop.name, evidence, index, child_fp)))
                continue
            for trigger, props in transition_checks:
                if trigger is None or trigger(state, action, child):
                    for prop in props:
                        evidence = prop.check(state, action, child)
                        if evidence is not None:
                            found.append((prop, evidence))
            if found:
                child_fp = int.from_bytes(digest, "little", signed=True)
                found.sort(key=lambda f: rank[f[0].name])
                findings.extend((position, Finding(prop.name, evidence, index, child_fp)) for prop, evidence in found)
                found.clear()
        actions_per_state.append(len(actions))
        row += len(actions)
    counts = np.frombuffer(actions_per_state, dtype=np.int32)
    parents = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
    action_indices = (np.arange(row, dtype=np.int32)
                      - np.repeat(np.cumsum(counts, dtype=np.int32) - counts, counts))
    if no_successor:
        keep = np.ones(row, dtype=bool)
        keep[no_successor] = False
        parents, action_indices = parents[keep], action_indices[keep]
    return BatchExpansion(
        child_fingerprints=fingerprint_array(digests, fingerprint_bits),
        parents=parents,
        action_indices=action_indices,
        action_codes=np.frombuffer(action_codes, dtype=np.int32),
        data=data,
        findings=tuple(findings),
        children=children,
    )


def grouped_order(states: Sequence[Any], shared_parts: Callable[[Any], tuple[Any, ...]]) -> np.ndarray:
    """The positions of ``states`` in the order an engine expands them when the model names the parts its states
    share (the optional ``shared_parts``, :mod:`explorer.contract`): the states holding the same first part (the same
    object) one after the other, within them those holding the same second part, and so on; the groups of a part in
    the order the part first comes in ``states``, and the states of a group in theirs. States that share their parts are
    expanded while those parts, and what the model remembers of them, are in the processor's caches: the Kafka
    model's (ZooKeeper's part and the controller's) took its default scenario's search from 28.4-29.0 to 25.4-25.8 s.
    A level's results do not depend on the order its states are expanded in (the parent rule, the findings picked
    and a state bound's cut order them by fingerprint)."""
    ranks: list[dict[int, int]] = []
    keys = []
    for state in states:
        parts = shared_parts(state)
        while len(ranks) < len(parts):
            ranks.append({})
        keys.append(tuple(rank.setdefault(id(part), len(rank)) for rank, part in zip(ranks, parts, strict=False)))
    return np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)


def in_grouped_order(fps: np.ndarray, states: Sequence[Any], shared_parts: Callable[[Any], tuple[Any, ...]]
                     ) -> tuple[np.ndarray, list[Any]]:
    """``fps`` and ``states`` (a state's fingerprint at its place) reordered by :func:`grouped_order`."""
    order = grouped_order(states, shared_parts)
    return fps[order], [states[i] for i in order.tolist()]


def _by_trigger(properties: Sequence[Property]) -> tuple[tuple[Any, tuple[Property, ...]], ...]:
    """The properties grouped by their trigger (the same object), each group once, in the order of first
    appearance: :func:`expand_batch` evaluates a group's trigger once and checks its properties only where it is
    true (the trigger's promise, :class:`~explorer.contract.Property`)."""
    groups: dict[int, tuple[Any, list[Property]]] = {}
    for prop in properties:
        groups.setdefault(id(prop.trigger), (prop.trigger, []))[1].append(prop)
    return tuple((trigger, tuple(props)) for trigger, props in groups.values())


def expand(
    model: Model[Any, Any],
    state: Any,
    properties: PropertySet,
    *,
    generate: bool = True,
    skip: frozenset[str] = frozenset(),
    fingerprint_bits: int = 64,
) -> Expansion:
    """:func:`expand_batch` of the one state ``state``, its successors as objects holding their states."""
    names = ActionNames()
    batch = expand_batch(model, (state,), properties, names, generate=generate, skip=skip,
                         fingerprint_bits=fingerprint_bits, keep_children=True)
    assert batch.children is not None
    fps = as_ints(batch.child_fingerprints, fingerprint_bits)
    successors = tuple(
        Successor(fp, data, index, names.names[code], child)
        for fp, data, index, code, child in zip(
            fps, batch.data, batch.action_indices.tolist(), batch.action_codes.tolist(), batch.children, strict=True
        )
    )
    return Expansion(tuple(finding for _, finding in batch.findings), successors)


def violation_kinds(properties: Sequence[Property]) -> dict[str, PropertyKind]:
    """Property name to kind, for engines that carry findings as plain rows."""
    return {p.name: p.kind for p in properties}
