"""The model contract: the one interface every explorer consumes.

Every checker in kmc (local BFS, Spark BFS, simulation, the Hypothesis machine) sees a model only
through :class:`Model` and its :class:`Property` list. Nothing in ``explorer/`` or
``spark_explore/`` knows about Kafka; the Kafka controller model in ``model/`` implements this
contract, and so do the toy models in ``tests/toy_models/`` that test the explorers.

The contract follows Stateright's ``Model`` trait: initial states, the enabled actions of a state in
a deterministic order, the successor of a state under an action, named properties, and a boundary.
On top of that, states must be convertible to canonical bytes (for stable fingerprints and so that
Spark workers, which are other processes, can ship them) and back.

One method is optional (explorers never call it; replay does, for the reports): ``state_view(state,
prev=None, action=None)`` returns a :data:`StateView`, the state as JSON-native data in a generic
shape that renderers draw without knowing the model (tables of cells, lanes and the messages
between them, log lines), and, given the previous state and the action, what the step did. A
model without it gets :func:`explorer.replay.view_of`'s default: the action's description only.

A second optional method serves the interactive explorer (``kmc ui``), which groups the enabled
actions of a state by who takes them: ``action_actor(action) -> str`` names the actor in the model's
vocabulary (``"controller"``, ``"broker 1"``, ``"admin"``, ``"failures"``); without it an action is
grouped under its family (``action_name``). See :func:`actor_of`.

A third optional method serves symmetry reduction (``kmc explore --symmetry``):
``canonical_encode(state) -> bytes`` returns the canonical bytes of the state's orbit under the
model's symmetry group (equal for two states exactly when a symmetry maps one to the other; the
Kafka model takes the least ``encode`` over its broker permutations), and ``decode`` of them is a
state of that orbit. The group must be sound: a symmetry maps initial states to initial states,
transitions to transitions and leaves every property's verdict unchanged. :mod:`explorer.symmetry`
wraps such a model so that the engines fingerprint orbits, and rebuilds the findings as traces of
the model itself; a model without the method is explored without reduction.

A fourth optional method serves the in-process BFS's speed: ``intern_state(state) -> state`` returns, for a state
``next_state`` made, the state ``decode(encode(state))`` gives (equal to it, with whatever the model shares between
decoded states shared), without going through the bytes. The engine then keeps a level's new states so, up to a
bound, and expands them without decoding them (:class:`explorer.visited.NextLevel`). The wrapper of symmetry
reduction does not offer it: its ``encode`` gives the bytes of another state of the orbit. A model that remembers
what its states share may offer ``retain_parts(states)`` beside it: the engine hands it the states of the level it
is about to expand (all of them, as ``intern_state`` made them), and the model may forget what none of them holds.
A model whose states share parts (objects) may also name them, ``shared_parts(state) -> tuple``: an engine that
holds a level's states as states expands those holding the same parts one after the other
(:func:`explorer.expand.grouped_order`), which changes its speed and never its results.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar

import attrs

S = TypeVar("S")
A = TypeVar("A")

#: Evidence a property returns: JSON-able data naming what failed (partition, brokers, states...).
Evidence = Mapping[str, Any]


#: A state's structured view (the optional ``Model.state_view``), JSON-native (str keys, lists, ints,
#: strings, bools, None), with these keys, each optional:
#:
#: * ``title`` (str, steps only): one sentence naming what the step did, in the model's vocabulary;
#: * ``phase`` (str, steps only): where the step is in a longer procedure of the model, or "";
#: * ``actor`` (str, steps only): the id of the lane that acts;
#: * ``tables``: a list of ``{"id", "title", "summary": bool, "columns": [{"id", "title"}],
#:   "rows": [{"key": str, "cells": {column id: value}}]}``; a cell is an int, str, bool, None, a
#:   list of those or a mapping of str to those; ``summary`` tables make a report's step table (one
#:   column per row key and column; a table whose only row has key "" gives one column per column);
#: * ``lanes``: ``[{"id", "title", "subtitle"}]``, the participants of a sequence diagram, in order;
#: * ``messages`` (steps only): ``[{"from", "to", "label", "kind"}]`` between lanes, in order; kind is
#:   ``request``, ``response``, ``write``, ``watch`` or ``note`` (``from == to``: a note on a lane);
#: * ``log`` (steps only): ``[{"logger", "line"}]``, what the system's own logs would have said.
StateView = Mapping[str, Any]


class PropertyKind(enum.Enum):
    """When a property is checked and what finding it means.

    ALWAYS: a state predicate checked on every distinct reachable state; evidence means a violation.
    SOMETIMES: a state predicate; evidence means an example was found. One that is never found in a
        complete search is reported: the scenario is vacuous for it.
    ACTION_ALWAYS: a transition predicate ``(prev, action, next)`` checked on every generated
        transition; evidence means a violation.
    ACTION_SOMETIMES: a transition predicate; evidence means an example was found.
    """

    ALWAYS = "always"
    SOMETIMES = "sometimes"
    ACTION_ALWAYS = "action_always"
    ACTION_SOMETIMES = "action_sometimes"

    @property
    def on_transition(self) -> bool:
        return self in (PropertyKind.ACTION_ALWAYS, PropertyKind.ACTION_SOMETIMES)

    @property
    def is_violation(self) -> bool:
        """True when evidence from this kind of property is a violation, not an example."""
        return self in (PropertyKind.ALWAYS, PropertyKind.ACTION_ALWAYS)


StateCheck = Callable[[Any], "Evidence | None"]
TransitionCheck = Callable[[Any, Any, Any], "Evidence | None"]


@attrs.frozen
class Property:
    """A named property. ``check`` returns evidence (a finding) or None (nothing to report).

    For state kinds ``check(state)``; for action kinds ``check(prev, action, next)``.

    ``trigger``, optional, takes the same arguments as ``check`` and says whether what the check reads may
    have anything to report: where it returns a false value, ``check`` returns None (a transition property
    that reads only what a step logged, and the step logged nothing; a state property judged only in some
    states). It is a promise about ``check``, which stays complete on its own (replay and the reports call
    it alone), and a saving for the engines: :func:`explorer.expand.expand_batch` evaluates a trigger that
    several properties share (the same object) once per state or transition, and checks those properties
    only where it is true. A trigger must be cheaper than the checks it guards and as deterministic.
    """

    name: str
    kind: PropertyKind
    description: str
    check: Callable[..., Evidence | None] = attrs.field(eq=False, repr=False)
    trigger: Callable[..., Any] | None = attrs.field(default=None, eq=False, repr=False)


class Model(Protocol, Generic[S, A]):
    """What an explorer needs from a model. Implementations must be deterministic.

    ``actions`` lists the actions of a state in a fixed order (explorers break ties by the index
    of an action in that list, so the order is part of what makes traces reproducible).
    ``next_state`` returns None when the action turns out to have no effect worth a transition.
    ``encode`` must be canonical: equal states give equal bytes in every process.
    """

    def init_states(self) -> Sequence[S]: ...

    def actions(self, state: S) -> Sequence[A]: ...

    def next_state(self, state: S, action: A) -> S | None: ...

    def properties(self) -> Sequence[Property]: ...

    def within_boundary(self, state: S) -> bool: ...

    def encode(self, state: S) -> bytes: ...

    def decode(self, data: bytes) -> S: ...

    def action_name(self, action: A) -> str:
        """The action's family, the key of per-action coverage (e.g. ``BrokerFailure``)."""
        ...

    def describe_action(self, action: A) -> str:
        """One line naming the action and its parameters (e.g. ``BrokerFailure(broker=1)``)."""
        ...

    def describe_changes(self, prev: S, next_: S) -> Sequence[str]:
        """Lines naming each field that changed between two states, in the model's vocabulary."""
        ...

    def describe_state(self, state: S) -> Sequence[str]:
        """Lines describing a whole state (the first state of a trace)."""
        ...


@attrs.frozen
class ModelFactory(Generic[S, A]):
    """A picklable recipe that rebuilds a model in another process (a Spark worker).

    ``build`` must be an importable top-level callable; ``argument`` plain data (e.g. TOML text).
    """

    build: Callable[[Any], Model[Any, Any]]
    argument: Any

    def __call__(self) -> Model[Any, Any]:
        return self.build(self.argument)


def actor_of(model: Model[Any, Any], action: Any) -> str:
    """Who takes ``action``: the model's optional ``action_actor``, else the action's family."""
    actor = getattr(model, "action_actor", None)
    return str(actor(action)) if actor is not None else model.action_name(action)
