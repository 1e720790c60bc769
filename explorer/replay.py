"""Counterexamples rebuilt by replay: from fingerprints and action indices back to readable steps.

Explorers keep no full states for traces (TLC's design): a :class:`~explorer.results.Discovery`
holds the fingerprint path and the index of the action taken at each step. :func:`replay` starts
from the initial state with the first fingerprint, applies the actions by index and checks that
every successor has the recorded fingerprint, then describes each step in the model's vocabulary.
A replay that does not reproduce the fingerprints means the model is not deterministic, and fails
loudly with :class:`ReplayError`.

:func:`run_actions` and :func:`describe_trace` serve explorers that record a walk as an initial
state index and action indices (simulation, Hypothesis) rather than a fingerprint path.

Each step also carries the model's structured view of it (:data:`~explorer.contract.StateView`,
see :func:`view_of`), which the Markdown, HTML and ITF reports draw. :class:`Walk` is what a replay
script (``replay_<property>.py`` in a run's bundle) drives: actions named as the report names them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from explorer.contract import Evidence, Model, StateView
from explorer.fingerprint import fingerprint
from explorer.results import Discovery

_USUAL_CAUSES = (
    "the model is not deterministic: look for iteration over a set or dict whose order changes "
    "between runs or processes, randomness, the wall clock, or state that encode() does not capture"
)


class ReplayError(Exception):
    """A recorded path cannot be replayed on the model (one sentence naming the step and the cause)."""


@attrs.frozen
class TraceStep:
    """One step of a trace: the action taken, the fields it changed, and the fingerprint reached."""

    action: str  # the model's description, e.g. "BrokerFailure(b2)"
    action_name: str  # the action's family, e.g. "BrokerFailure"
    changes: tuple[str, ...]
    fingerprint: int
    view: StateView = attrs.field(factory=dict, hash=False)  # the model's view of the step (view_of)


@attrs.frozen
class Trace:
    """A replayed path: the initial state described line by line, then each step."""

    initial: tuple[str, ...]
    initial_fingerprint: int
    steps: tuple[TraceStep, ...]
    initial_view: StateView = attrs.field(factory=dict, hash=False)

    @property
    def fingerprints(self) -> tuple[int, ...]:
        return (self.initial_fingerprint, *(step.fingerprint for step in self.steps))


def replay(model: Model[Any, Any], discovery: Discovery) -> Trace:
    """The trace of ``discovery``, rebuilt on ``model`` and checked fingerprint by fingerprint."""
    bits = discovery.fingerprint_bits
    states = replay_states(model, discovery.path, discovery.action_indices, bits)
    return describe_trace(model, states, discovery.action_indices, bits)


def replay_states(
    model: Model[Any, Any], path: Sequence[int], action_indices: Sequence[int], fingerprint_bits: int = 64
) -> list[Any]:
    """The states along ``path`` (fingerprints of ``fingerprint_bits`` bits, initial state first),
    reached by taking the action with each index of ``action_indices`` in turn; raises
    :class:`ReplayError` on any mismatch."""
    if len(path) != len(action_indices) + 1:
        raise ReplayError(
            f"A path of {len(path)} fingerprints needs {len(path) - 1} action indices, got {len(action_indices)}."
        )
    state = _initial_state_with(model, path[0], fingerprint_bits)
    states = [state]
    for step, (action_index, expected) in enumerate(zip(action_indices, path[1:], strict=True), 1):
        state, action = _take(model, state, action_index, step)
        actual = fingerprint(model.encode(state), fingerprint_bits)
        if actual != expected:
            raise ReplayError(
                f"Replay diverged at step {step} ({model.describe_action(action)}): expected "
                f"fingerprint {expected}, got {actual}; {_USUAL_CAUSES}."
            )
        states.append(state)
    return states


def run_actions(model: Model[Any, Any], initial_index: int, action_indices: Sequence[int]) -> list[Any]:
    """The states of the walk from ``model.init_states()[initial_index]`` taking the action with each
    of ``action_indices`` in turn (no fingerprints to check); raises :class:`ReplayError` when an
    index does not exist or an action yields no successor."""
    initial = model.init_states()
    if not 0 <= initial_index < len(initial):
        raise ReplayError(f"The model has {len(initial)} initial states; initial state {initial_index} does not exist.")
    state = initial[initial_index]
    states = [state]
    for step, action_index in enumerate(action_indices, 1):
        state, _ = _take(model, state, action_index, step)
        states.append(state)
    return states


def describe_trace(
    model: Model[Any, Any], states: Sequence[Any], action_indices: Sequence[int], fingerprint_bits: int = 64
) -> Trace:
    """Describe a walk (``states[i+1]`` reached from ``states[i]`` by action ``action_indices[i]``)."""
    steps = []
    for prev, next_, action_index in zip(states[:-1], states[1:], action_indices, strict=True):
        action = model.actions(prev)[action_index]
        steps.append(
            TraceStep(
                action=model.describe_action(action),
                action_name=model.action_name(action),
                changes=tuple(model.describe_changes(prev, next_)),
                fingerprint=fingerprint(model.encode(next_), fingerprint_bits),
                view=view_of(model, next_, prev, action),
            )
        )
    return Trace(
        initial=tuple(describe_state(model, states[0])),
        initial_fingerprint=fingerprint(model.encode(states[0]), fingerprint_bits),
        steps=tuple(steps),
        initial_view=view_of(model, states[0]),
    )


def view_of(model: Model[Any, Any], state: Any, prev: Any = None, action: Any = None) -> StateView:
    """The model's ``state_view`` of ``state`` (reached from ``prev`` by ``action`` when given) when it
    has one (it is optional), otherwise the default: a step's title is the action's description."""
    view = getattr(model, "state_view", None)
    if view is not None:
        return dict(view(state, prev, action))
    return {} if action is None else {"title": model.describe_action(action)}


def describe_state(model: Model[Any, Any], state: Any) -> Sequence[str]:
    """Lines describing a whole state: the model's ``describe_state`` when it has one (it is not
    part of the contract), otherwise the state's ``repr``."""
    describe = getattr(model, "describe_state", None)
    return describe(state) if describe is not None else [repr(state)]


class Walk:
    """A walk through a model, one named action at a time, as a replay script reads.

    ``take("BrokerFailure(broker=1)")`` takes the enabled action whose description
    (``model.describe_action``) is that text; ``check(name)`` runs the named property on the last
    state (or, for a transition property, on the last step) and returns its evidence or None.
    """

    def __init__(self, model: Model[Any, Any], initial_index: int = 0) -> None:
        self.model = model
        self.states = run_actions(model, initial_index, ())
        self.actions: list[Any] = []

    @property
    def state(self) -> Any:
        return self.states[-1]

    @property
    def fingerprint(self) -> int:
        return fingerprint(self.model.encode(self.state))

    def take(self, description: str) -> Any:
        enabled = self.model.actions(self.state)
        for action in enabled:
            if self.model.describe_action(action) == description:
                successor = self.model.next_state(self.state, action)
                if successor is None:
                    break
                self.actions.append(action)
                self.states.append(successor)
                return successor
        named = ", ".join(self.model.describe_action(a) for a in enabled)
        raise ReplayError(f"Step {len(self.actions) + 1}: {description} is not enabled (enabled: {named}); "
                          "the model changed since the report was written, or " + _USUAL_CAUSES + ".")

    def check(self, property_name: str) -> Evidence | None:
        by_name: Mapping[str, Any] = {p.name: p for p in self.model.properties()}
        if property_name not in by_name:
            raise ReplayError(f"The model has no property {property_name!r}; it has {', '.join(sorted(by_name))}.")
        prop = by_name[property_name]
        if prop.kind.on_transition:
            if not self.actions:
                raise ReplayError(f"{property_name} is checked on a step; take an action first.")
            return prop.check(self.states[-2], self.actions[-1], self.states[-1])
        return prop.check(self.state)


def _initial_state_with(model: Model[Any, Any], fp: int, fingerprint_bits: int = 64) -> Any:
    for state in model.init_states():
        if fingerprint(model.encode(state), fingerprint_bits) == fp:
            return state
    raise ReplayError(f"No initial state has fingerprint {fp}; {_USUAL_CAUSES}.")


def _take(model: Model[Any, Any], state: Any, action_index: int, step: int) -> tuple[Any, Any]:
    """The successor of ``state`` by its action ``action_index``, and that action."""
    actions = model.actions(state)
    if not 0 <= action_index < len(actions):
        raise ReplayError(
            f"Replay diverged at step {step}: the state has {len(actions)} enabled actions, the path "
            f"takes action {action_index}; {_USUAL_CAUSES}."
        )
    action = actions[action_index]
    successor = model.next_state(state, action)
    if successor is None:
        raise ReplayError(
            f"Replay diverged at step {step}: {model.describe_action(action)} yields no successor; {_USUAL_CAUSES}."
        )
    return successor, action
