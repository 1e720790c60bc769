"""Counterexamples rebuilt by replay: from fingerprints and action indices back to readable steps.

Explorers keep no full states for traces (TLC's design): a :class:`~explorer.results.Discovery`
holds the fingerprint path and the index of the action taken at each step. :func:`replay` starts
from the initial state with the first fingerprint, applies the actions by index and checks that
every successor has the recorded fingerprint, then describes each step in the model's vocabulary.
A replay that does not reproduce the fingerprints means the model is not deterministic, and fails
loudly with :class:`ReplayError`.

:func:`run_actions` and :func:`describe_trace` serve explorers that record a walk as an initial
state index and action indices (simulation, Hypothesis) rather than a fingerprint path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from explorer.contract import Model
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


@attrs.frozen
class Trace:
    """A replayed path: the initial state described line by line, then each step."""

    initial: tuple[str, ...]
    initial_fingerprint: int
    steps: tuple[TraceStep, ...]

    @property
    def fingerprints(self) -> tuple[int, ...]:
        return (self.initial_fingerprint, *(step.fingerprint for step in self.steps))


def replay(model: Model[Any, Any], discovery: Discovery) -> Trace:
    """The trace of ``discovery``, rebuilt on ``model`` and checked fingerprint by fingerprint."""
    states = replay_states(model, discovery.path, discovery.action_indices)
    return describe_trace(model, states, discovery.action_indices)


def replay_states(model: Model[Any, Any], path: Sequence[int], action_indices: Sequence[int]) -> list[Any]:
    """The states along ``path`` (fingerprints, initial state first), reached by taking the action
    with each index of ``action_indices`` in turn; raises :class:`ReplayError` on any mismatch."""
    if len(path) != len(action_indices) + 1:
        raise ReplayError(
            f"A path of {len(path)} fingerprints needs {len(path) - 1} action indices, got {len(action_indices)}."
        )
    state = _initial_state_with(model, path[0])
    states = [state]
    for step, (action_index, expected) in enumerate(zip(action_indices, path[1:], strict=True), 1):
        state, action = _take(model, state, action_index, step)
        actual = fingerprint(model.encode(state))
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


def describe_trace(model: Model[Any, Any], states: Sequence[Any], action_indices: Sequence[int]) -> Trace:
    """Describe a walk (``states[i+1]`` reached from ``states[i]`` by action ``action_indices[i]``)."""
    steps = []
    for prev, next_, action_index in zip(states[:-1], states[1:], action_indices, strict=True):
        action = model.actions(prev)[action_index]
        steps.append(
            TraceStep(
                action=model.describe_action(action),
                action_name=model.action_name(action),
                changes=tuple(model.describe_changes(prev, next_)),
                fingerprint=fingerprint(model.encode(next_)),
            )
        )
    return Trace(
        initial=tuple(describe_state(model, states[0])),
        initial_fingerprint=fingerprint(model.encode(states[0])),
        steps=tuple(steps),
    )


def describe_state(model: Model[Any, Any], state: Any) -> Sequence[str]:
    """Lines describing a whole state: the model's ``describe_state`` when it has one (it is not
    part of the contract), otherwise the state's ``repr``."""
    describe = getattr(model, "describe_state", None)
    return describe(state) if describe is not None else [repr(state)]


def _initial_state_with(model: Model[Any, Any], fp: int) -> Any:
    for state in model.init_states():
        if fingerprint(model.encode(state)) == fp:
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
