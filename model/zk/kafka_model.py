"""The Kafka controller model: a scenario's cluster behind the explorer contract.

The actions, their enabling conditions, effects and descriptions are the tables of
:mod:`model.zk.actions`; this module dispatches through them.

The initial state is a running cluster: every broker registered and alive, the controller elected
(epoch 1), and the topics that exist from the start created by the controller's own code
(``onNewPartitionCreation``) with every resulting request applied.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

import attrs

from explorer.contract import Property
from model.scenario import Scenario, Topic
from model.zk.actions import ACTIONS, Action, Actor, enabled_actions
from model.zk.controller import controller
from model.zk.environment import environment
from model.zk.state.codec import Codec
from model.zk.state.step import Step
from model.zk.state.values import (
    BrokerState,
    Budget,
    ClusterState,
    ControllerEvent,
    ControllerState,
    EventKind,
    StepLog,
    ZkState,
)
from model.zk.symmetry import BrokerSymmetry
from model.zk.transition_memo import (
    MEMO_ENTRIES,
    BrokerStepMemo,
    ControllerStepMemo,
    EnvironmentStepMemo,
    LastState,
)

CONTROLLER_EPOCH = 1


def resignations(state: ClusterState, initial: ClusterState) -> int:
    """How many controllers resigned on an exception out of ``onControllerFailover`` since ``initial``: the
    controller epochs that neither a failover nor a move of the budget elected."""
    budget = state.budget
    return (state.zk.controller_epoch - initial.zk.controller_epoch
            - budget.controller_failovers - budget.controller_moves)


class KafkaControllerModel:
    """Implements :class:`explorer.contract.Model` for one scenario and a list of properties."""

    def __init__(self, scenario: Scenario, properties: Sequence[Property] = (), *,
                 memo_entries: int = MEMO_ENTRIES):
        """``memo_entries``: the bound of each transition memo (:mod:`model.zk.transition_memo`); 0 takes every
        step in full."""
        self.scenario = scenario
        self._properties = tuple(properties)
        self.codec = Codec(tuple(sorted(t.name for t in scenario.topics)))
        self._initial = initial_state(scenario)
        last = LastState()  # the memos work out what they key on of a state once for all three
        self._broker_steps = BrokerStepMemo(scenario, self._take, entries=memo_entries, intern=self.codec.intern,
                                            last=last)
        self._controller_steps = ControllerStepMemo(scenario, self._take, entries=memo_entries,
                                                    intern=self.codec.intern, last=last)
        self._environment_steps = EnvironmentStepMemo(scenario, self._take, entries=memo_entries,
                                                      intern=self.codec.intern, last=last)

    # ---- the contract ----
    def init_states(self) -> Sequence[ClusterState]:
        return (self._initial,)

    def actions(self, state: ClusterState) -> Sequence[Action]:
        return enabled_actions(self.scenario, state)

    def next_state(self, state: ClusterState, action: Action) -> ClusterState | None:
        if action.kind in BrokerStepMemo.kinds:
            return self._broker_steps.successor(state, action)
        if action.kind in ControllerStepMemo.kinds:
            return self._controller_steps.successor(state, action)
        if action.kind in EnvironmentStepMemo.kinds:
            return self._environment_steps.successor(state, action)
        step = Step(self.scenario, state, acting_zombie=ACTIONS[action.kind].actor is Actor.FORMER_CONTROLLER)
        return step.freeze() if self._take(step, action) else None

    def _take(self, step: Step, action: Action, *, settle: bool = True) -> bool:
        """The action on ``step``, then (``settle``) the UpdateMetadata requests at the channels' heads; False when
        the action has no successor."""
        ACTIONS[action.kind].handler(step, action)
        if action.isr_race and not step.isr_race_fired:
            return False  # the leader's write did not land inside this step: the plain step covers it
        if settle:
            environment.apply_update_metadata_at_heads(step)
        return True

    def properties(self) -> Sequence[Property]:
        return self._properties

    def within_boundary(self, state: ClusterState) -> bool:
        """Whether the search expands the state: not after more than ``[bounds] controller_resignations``
        controllers resigned on an exception out of ``onControllerFailover``
        (:func:`~model.zk.controller.controller_failover.elect`). Each such resignation elects a successor, the
        only controller epochs not counted by the failover and move budgets."""
        return resignations(state, self._initial) <= self.scenario.bounds.controller_resignations

    def encode(self, state: ClusterState) -> bytes:
        return self.codec.encode(state)

    def decode(self, data: bytes) -> ClusterState:
        return self.codec.decode(data)

    def intern_state(self, state: ClusterState) -> ClusterState:
        """The optional contract method: the state ``decode(encode(state))`` gives, made from the state
        (:meth:`~model.zk.state.codec.Codec.intern_state`)."""
        return self.codec.intern_state(state)

    def retain_parts(self, states: Iterable[ClusterState]) -> None:
        """The optional contract method: the codec forgets the parts none of ``states`` holds
        (:meth:`~model.zk.state.codec.Codec.retain`), and the transition memos the situations keyed on them
        (:meth:`~model.zk.transition_memo.BrokerStepMemo.keep`)."""
        live = self.codec.retain(states)
        for memo in (self._broker_steps, self._controller_steps, self._environment_steps):
            memo.keep(live)

    def shared_parts(self, state: ClusterState) -> tuple[object, ...]:
        """The optional contract method: ZooKeeper's part and the controller's, which the states of a level share
        most (a broker's step leaves both, a controller's event leaves ZooKeeper), so that the engines expand the
        states holding the same ones one after the other (:func:`explorer.expand.grouped_order`)."""
        return (state.zk, state.controller)

    def canonical_encode(self, state: ClusterState) -> bytes:
        """The optional contract method behind ``--symmetry``: the least encoding of the state's orbit
        under the scenario's interchangeable brokers (:mod:`model.zk.symmetry`)."""
        return self.symmetry.canonical_encode(state, self.codec.encode)

    @functools.cached_property
    def symmetry(self) -> BrokerSymmetry:
        """The scenario's broker symmetry group (worked out on first use)."""
        return BrokerSymmetry.of(self.scenario)

    def action_name(self, action: Action) -> str:
        return action.name()

    def describe_action(self, action: Action) -> str:
        return ACTIONS[action.kind].describe(action, self.scenario)

    def action_actor(self, action: Action) -> str:
        """The optional contract method by which ``kmc ui`` groups the enabled actions: who takes the
        action (:class:`~model.zk.actions.Actor`), each broker on its own (``broker 1``)."""
        actor = ACTIONS[action.kind].actor
        if actor is Actor.BROKER:
            return f"broker {action.broker}"
        return "failures" if actor is Actor.FAILURE else actor.value

    def describe_changes(self, prev: ClusterState, next_: ClusterState) -> Sequence[str]:
        from model.present.describe import describe_changes
        from model.present.view import has_broker_epochs

        return describe_changes(prev, next_, broker_epochs=has_broker_epochs(self.scenario))

    def describe_state(self, state: ClusterState) -> Sequence[str]:
        from model.present.describe import describe_state

        return describe_state(state)

    def state_view(self, state: ClusterState, prev: ClusterState | None = None, action: Action | None = None) -> dict:
        """The optional contract method: the state (and the step) as data for the reports (model/present/view.py)."""
        from model.present.view import state_view

        return state_view(self.scenario, state, prev, action)


def initial_state(scenario: Scenario) -> ClusterState:
    registered = tuple((b.id, 1) for b in sorted(scenario.brokers, key=lambda b: b.id))
    blank = ClusterState(
        zk=ZkState(brokers=registered, topics=(), partitions=(), delete_topics=(), controller_epoch=CONTROLLER_EPOCH,
                   unclean_leader_election_enable=scenario.unclean_leader_election_enable),
        controller=ControllerState(epoch=CONTROLLER_EPOCH, live_brokers=registered, assignments=(), leadership=(),
                                   partition_states=(), replica_states=(), topics_to_be_deleted=(),
                                   topics_ineligible_for_deletion=(), topics_with_deletion_started=(), events=()),
        # The controller's first UpdateMetadata (onControllerFailover) has told every broker who is alive.
        brokers=tuple(BrokerState(id=b, alive=True, epoch=1, controller_epoch=CONTROLLER_EPOCH, partitions=(), logs=(),
                                  metadata_live_brokers=tuple(i for i, _ in registered))
                      for b, _ in registered),
        channels=(),
        budget=Budget(),
    )
    step = Step(scenario, blank)
    for t in scenario.topics:
        if t.created_initially:
            step.zk_topics[t.name] = t.replicas
    controller.process_topic_change(step)
    while step.channels:
        broker = min(step.channels)
        environment.broker_apply_request(step, broker)
    environment.apply_update_metadata_at_heads(step)
    step.events.clear()  # the deletion callbacks of a fresh cluster: none expected
    partial = [t for t in scenario.topics if t.partially_deleted]
    if partial:
        _crash_in_the_middle_of_deletion(step, partial)
    return attrs.evolve(step.freeze(), log=StepLog())


def _crash_in_the_middle_of_deletion(step: Step, topics: list[Topic]) -> None:
    """The state ``DeleteTopicTest.testDeletingPartiallyDeletedTopic`` (2.0.0, KAFKA-6650) starts from: an admin
    asked to delete the topics, and a controller crashed after deleting some of their partition-state znodes
    (``deleteTopicZNode`` deletes recursively, children first). A new controller has been elected and its
    ``onControllerFailover`` is the first thing to happen."""
    for t in topics:
        step.zk_delete_topics.add(t.name)
        step.budget = attrs.evolve(step.budget,
                                   deletions_requested=tuple(sorted((*step.budget.deletions_requested, t.name))))
        for p in t.partially_deleted:
            step.zk_partitions.pop((t.name, p), None)
    step.zk_controller_epoch += 1
    step.epoch = step.zk_controller_epoch
    for name in ("live_brokers", "assignment", "leadership", "partition_state", "replica_state"):
        getattr(step, name).clear()
    step.events[:] = [ControllerEvent(EventKind.Reelect)]




def build_model(scenario: Scenario, properties: Sequence[Property] = ()) -> KafkaControllerModel:
    return KafkaControllerModel(scenario, properties)


__all__ = ["Action", "EventKind", "KafkaControllerModel", "build_model", "initial_state"]
