"""Symmetry reduction: a search over one state per orbit, and its findings as traces of the real model.

A model that offers the optional contract method ``canonical_encode(state)`` (the bytes of the
state's orbit under the model's symmetry group, see :mod:`explorer.contract`) can be explored
reduced: :class:`Reduced` is the same model whose ``encode`` is ``canonical_encode``, so every
breadth-first engine (the local BFS, the Spark BFS, and the driver-side levels of the latter, all
through :func:`explorer.expand.expand_batch`) fingerprints, de-duplicates and stores the orbit's
canonical representative and nothing else changes in them: the plain search pays nothing for the
option. The frontier holds canonical representatives (decoded from the canonical bytes), so the
successors of a state are computed from the representative of its orbit.

The findings of a reduced search are paths of canonical fingerprints, with action indices of the
representatives' actions: they are not traces of the model. :func:`concrete_discovery` rebuilds
each one on the unreduced model by replay from the initial state, at each step taking the first
action (in the model's order) whose successor's canonical fingerprint is the next one on the path
and carrying the concrete successor; at the last step of a transition property it takes the first
such action whose transition shows the finding again. The result is a discovery of the model
itself (plain fingerprints, its own action indices, evidence recomputed on the concrete states),
which replays and renders like any other. That is sound when the group is: every permutation maps
transitions to transitions and leaves the initial states and the properties' verdicts unchanged
(the model's side of the contract).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from explorer.contract import Model, ModelFactory, Property
from explorer.fingerprint import fingerprint
from explorer.replay import ReplayError
from explorer.results import Discovery, ExplorationResult


def supports_symmetry(model: Any) -> bool:
    """True when the model offers ``canonical_encode``."""
    return callable(getattr(model, "canonical_encode", None))


class Reduced:
    """``model`` with ``encode`` replaced by its ``canonical_encode`` (implements the contract)."""

    def __init__(self, model: Model[Any, Any]) -> None:
        if not supports_symmetry(model):
            raise TypeError(f"{type(model).__name__} has no canonical_encode; it cannot be explored reduced")
        self.model = model
        # Bound methods as attributes: the engines call them with no extra layer.
        self.encode = model.canonical_encode  # type: ignore[attr-defined]
        self.decode = model.decode
        self.init_states = model.init_states
        self.actions = model.actions
        self.next_state = model.next_state
        self.properties = model.properties
        self.within_boundary = model.within_boundary
        self.action_name = model.action_name
        self.describe_action = model.describe_action
        self.describe_changes = model.describe_changes
        self.describe_state = model.describe_state


def build_reduced(factory: ModelFactory[Any, Any]) -> Reduced:
    """:class:`Reduced` over the model ``factory`` builds (a :class:`ModelFactory` build callable)."""
    return Reduced(factory())


def reduced_factory(factory: ModelFactory[Any, Any]) -> ModelFactory[Any, Any]:
    """A factory that rebuilds the reduced model in another process (a Spark worker)."""
    return ModelFactory(build_reduced, factory)


def concrete_discovery(model: Model[Any, Any], discovery: Discovery) -> Discovery:
    """``discovery`` of a reduced search as a discovery of ``model`` itself (see the module docstring);
    raises :class:`explorer.replay.ReplayError` when no concrete trace follows the canonical path."""
    bits = discovery.fingerprint_bits
    canonical = model.canonical_encode  # type: ignore[attr-defined]
    prop = _property(model, discovery.property)

    def canonical_fp(state: Any) -> int:
        return fingerprint(canonical(state), bits)

    state = next((s for s in model.init_states() if canonical_fp(s) == discovery.path[0]), None)
    if state is None:
        raise ReplayError(f"no initial state has the canonical fingerprint {discovery.path[0]}")
    states, indices = [state], []
    last = len(discovery.path) - 1
    for step, expected in enumerate(discovery.path[1:], 1):
        chosen = None
        for index, action in enumerate(model.actions(state)):
            child = model.next_state(state, action)
            if child is None or canonical_fp(child) != expected:
                continue
            if step == last and prop.kind.on_transition and prop.check(state, action, child) is None:
                continue
            chosen = index, child
            break
        if chosen is None:
            raise ReplayError(f"at step {step} no action of the model reaches the orbit with canonical "
                              f"fingerprint {expected}; the model's symmetry group is not sound")
        indices.append(chosen[0])
        state = chosen[1]
        states.append(state)
    if prop.kind.on_transition:
        if not indices:
            raise ReplayError(f"{prop.name} is found on a step, and the path has none")
        evidence = prop.check(states[-2], model.actions(states[-2])[indices[-1]], states[-1])
    else:
        evidence = prop.check(states[-1])
    if evidence is None:
        raise ReplayError(f"the concrete trace does not show {prop.name} on its last state; the model's symmetry "
                          "group does not preserve the property")
    path = tuple(fingerprint(model.encode(s), bits) for s in states)
    return attrs.evolve(discovery, evidence=evidence, path=path, action_indices=tuple(indices))


def concrete_result(model: Model[Any, Any], result: ExplorationResult) -> ExplorationResult:
    """``result`` of a reduced search with each discovery rebuilt on ``model`` (:func:`concrete_discovery`)."""
    return attrs.evolve(result, discoveries=tuple(concrete_discovery(model, d) for d in result.discoveries))


def _property(model: Model[Any, Any], name: str) -> Property:
    properties: Sequence[Property] = model.properties()
    for p in properties:
        if p.name == name:
            return p
    raise ReplayError(f"the model has no property {name!r}")


__all__ = ["Reduced", "build_reduced", "concrete_discovery", "concrete_result", "reduced_factory",
           "supports_symmetry"]
