"""The one expansion function: what every breadth-first explorer does to one state.

Both the in-process BFS (:mod:`explorer.bfs`) and the Spark BFS (:mod:`spark_explore`) call
:func:`expand` on each frontier state, so successors, fingerprints and property findings are
computed by the same code in both engines. Engines differ only in how they store the frontier,
de-duplicate fingerprints and keep parent pointers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from explorer.contract import Evidence, Model, Property, PropertyKind
from explorer.fingerprint import fingerprint


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


def expand(
    model: Model[Any, Any],
    state: Any,
    properties: PropertySet,
    *,
    generate: bool = True,
    skip: frozenset[str] = frozenset(),
    fingerprint_bits: int = 64,
) -> Expansion:
    """Check the state properties of ``state`` and, if ``generate``, compute its successors and
    check the transition properties on each generated transition.

    ``skip`` names SOMETIMES / ACTION_SOMETIMES properties already satisfied, so that examples are
    not searched for again. States outside the model's boundary are checked but not expanded.
    Successors get fingerprints of ``fingerprint_bits`` bits.
    """
    findings: list[Finding] = []
    for prop in properties.on_state:
        if prop.name in skip:
            continue
        evidence = prop.check(state)
        if evidence is not None:
            findings.append(Finding(prop.name, evidence))
    successors: list[Successor] = []
    if generate and model.within_boundary(state):
        for index, action in enumerate(model.actions(state)):
            child = model.next_state(state, action)
            if child is None:
                continue
            data = model.encode(child)
            fp = fingerprint(data, fingerprint_bits)
            successors.append(Successor(fp, data, index, model.action_name(action), child))
            for prop in properties.on_transition:
                if prop.name in skip:
                    continue
                evidence = prop.check(state, action, child)
                if evidence is not None:
                    findings.append(Finding(prop.name, evidence, index, fp))
    return Expansion(tuple(findings), tuple(successors))


def violation_kinds(properties: Sequence[Property]) -> dict[str, PropertyKind]:
    """Property name to kind, for engines that carry findings as plain rows."""
    return {p.name: p.kind for p in properties}
