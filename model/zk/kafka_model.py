"""The Kafka controller model: a scenario's cluster behind the explorer contract.

Actions are either the controller step (process the event at the head of the queue) or
environment steps (a broker applies its next request, or fails to delete a log; a partition
leader shrinks or expands its ISR; a broker dies or restarts, shuts down in a controlled way, or
loses a log directory; the controller fails over, or a former controller that has not noticed
processes an event; an admin creates, deletes or re-creates a topic, adds partitions to one,
starts or cancels a partition reassignment, runs a preferred replica election or changes
``unclean.leader.election.enable``; the auto leader rebalance timer fires).
A controller step may also be taken with a leader's ISR write landing inside it, between the
controller's read of that partition's znode and its conditional write (BADVERSION, then the
retry): ``Action.isr_race``; such an action has no successor when the controller does not write
that znode. Environment steps are bounded by the counters in :class:`~model.zk.state.values.Budget`, whose
limits come from the scenario's ``[bounds]``. Actions are listed in a fixed order: the controller
step and its raced variants, then per broker (by id) its request steps, then ISR changes, then
failures and restarts, then admin steps by topic name (creation, partitions, deletion, re-creation,
reassignment), then controller failover and moves (or the zombie's step), controlled shutdowns, log
directory failures, preferred elections, the auto-rebalance timer, the unclean-election config and
reassignment cancellations.

The initial state is a running cluster: every broker registered and alive, the controller elected
(epoch 1), and the topics that exist from the start created by the controller's own code
(``onNewPartitionCreation``) with every resulting request applied.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import attrs

from explorer.contract import Property
from model.scenario import Scenario, Topic
from model.zk.controller import controlled_shutdown, controller, controller_failover
from model.zk.environment import environment, partition_leader
from model.zk.state.codec import Codec
from model.zk.state.step import Step
from model.zk.state.values import (
    SHUTDOWN_NONE,
    SHUTDOWN_RETRY,
    SHUTDOWN_SUCCEEDED,
    BrokerState,
    Budget,
    ClusterState,
    ControllerEvent,
    ControllerState,
    EventKind,
    RequestKind,
    StepLog,
    ZkState,
)
from model.zk.symmetry import BrokerSymmetry


@attrs.frozen
class Action:
    kind: str  # ControllerProcessEvent, BrokerApplyRequest, BrokerFailsStopReplica, LeaderShrinksIsr,
    #            LeaderExpandsIsr, BrokerFailure, BrokerStartup, AdminCreateTopic, AdminDeleteTopic, ... (see
    #            KafkaControllerModel.actions)
    broker: int = -1
    topic: str = ""
    partition: int = -1
    replica: int = -1  # the follower leaving or joining the ISR
    isr_race: str = ""  # ControllerProcessEvent: the leader ISR change (kind) landing inside the step
    command: int = -1  # AdminReassignPartitions: the index of the scenario's [[reassignments]] entry

    def isr_change(self) -> partition_leader.IsrChange:
        kind = self.isr_race or self.kind
        return (self.broker, (self.topic, self.partition), self.replica, kind)


CONTROLLER_EPOCH = 1


def resignations(state: ClusterState, initial: ClusterState) -> int:
    """How many controllers resigned on an exception out of ``onControllerFailover`` since ``initial``: the
    controller epochs that neither a failover nor a move of the budget elected."""
    budget = state.budget
    return (state.zk.controller_epoch - initial.zk.controller_epoch
            - budget.controller_failovers - budget.controller_moves)


def _incarnations(topic: Topic, budget: Budget) -> int:
    """How many times the topic has been created so far in the run (an admin deletes each at most once)."""
    return int(topic.created_initially) + budget.topics_created.count(topic.name) + budget.topics_recreated.count(
        topic.name)


class KafkaControllerModel:
    """Implements :class:`explorer.contract.Model` for one scenario and a list of properties."""

    def __init__(self, scenario: Scenario, properties: Sequence[Property] = ()):
        self.scenario = scenario
        self._properties = tuple(properties)
        self.codec = Codec(tuple(sorted(t.name for t in scenario.topics)))
        self._initial = initial_state(scenario)

    # ---- the contract ----
    def init_states(self) -> Sequence[ClusterState]:
        return (self._initial,)

    def actions(self, state: ClusterState) -> Sequence[Action]:
        sc = self.scenario
        acts: list[Action] = []
        budget = state.budget
        isr_changes = (partition_leader.candidates_of(state) if budget.isr_changes < sc.bounds.isr_changes
                       else [])
        if state.controller.events:
            acts.append(Action("ControllerProcessEvent"))
            for leader, (topic, p), follower, kind in isr_changes:
                acts.append(Action("ControllerProcessEvent", leader, topic, p, follower, isr_race=kind))
        for broker_id, queue in state.channels:
            if not state.broker(broker_id).alive:
                continue
            acts.append(Action("BrokerApplyRequest", broker_id))
            head = queue[0]
            if (head.kind is RequestKind.StopReplica and head.delete_partitions
                    and budget.stop_replica_errors < sc.bounds.stop_replica_errors):
                acts.append(Action("BrokerFailsStopReplica", broker_id))
        for leader, (topic, p), follower, kind in isr_changes:
            acts.append(Action(kind, leader, topic, p, follower))
        for b in state.brokers:
            if b.alive:
                if budget.broker_failures < sc.bounds.broker_failures:
                    acts.append(Action("BrokerFailure", b.id))
            else:
                acts.append(Action("BrokerStartup", b.id))
        for t in sc.topics:
            if not t.created_initially and t.name not in budget.topics_created:
                acts.append(Action("AdminCreateTopic", topic=t.name))
        for t in sc.topics:
            existing = state.zk.topic_assignment(t.name)
            if t.add_partitions and t.name not in budget.partitions_added and existing is not None and (
                    environment.added_partitions(sc, (b for b, _ in state.zk.brokers), existing, t.name)):
                acts.append(Action("AdminAddPartitions", topic=t.name))
        for t in sc.topics:
            if (t.deleted_by_admin and budget.deletions_requested.count(t.name) < _incarnations(t, budget)
                    and state.zk.topic_assignment(t.name) is not None):
                acts.append(Action("AdminDeleteTopic", topic=t.name))
        for t in sc.topics:
            if (t.recreated_by_admin and t.name not in budget.topics_recreated and t.name in budget.deletions_requested
                    and state.zk.topic_assignment(t.name) is None and t.name not in state.zk.delete_topics):
                acts.append(Action("AdminRecreateTopic", topic=t.name))
        if not state.zk.reassign_partitions:
            for i, command in enumerate(sc.reassignments):
                if i not in budget.reassignments_submitted and state.zk.topic_assignment(command.topic) is not None:
                    acts.append(Action("AdminReassignPartitions", topic=command.topic, command=i))
        acts += self._failover_shutdown_election_and_config_actions(state)
        return acts

    def _failover_shutdown_election_and_config_actions(self, state: ClusterState) -> list[Action]:
        """Controller failover and moves (or the zombie controller's step), controlled shutdowns, log directory
        failures, preferred elections, the auto-rebalance timer, the unclean-election config and reassignment
        cancellations, in that order."""
        sc, budget = self.scenario, state.budget
        bounds = sc.bounds
        acts: list[Action] = []
        if state.zombie is None:
            if budget.controller_failovers < bounds.controller_failovers:
                acts.append(Action(controller_failover.FAILOVER))
            if budget.controller_moves < bounds.controller_moves:
                acts.append(Action(controller_failover.MOVE))
        else:
            acts.append(Action("ZombieControllerProcessEvent"))
        requests_left = budget.controlled_shutdowns < bounds.controlled_shutdowns
        for b in state.brokers:
            if not b.alive:
                continue
            if b.controlled_shutdown in (SHUTDOWN_NONE, SHUTDOWN_RETRY) and requests_left:
                acts.append(Action("BrokerControlledShutdown", b.id))
            if b.controlled_shutdown == SHUTDOWN_SUCCEEDED or (b.controlled_shutdown == SHUTDOWN_RETRY
                                                               and not requests_left):
                acts.append(Action("BrokerShutdownCompletes", b.id))
        if budget.log_dir_failures < bounds.log_dir_failures:
            for b in state.brokers:
                if b.alive:
                    for name, p in b.logs:
                        if (name, p) not in b.offline_logs:
                            acts.append(Action("LogDirFailure", b.id, name, p))
        if not state.zk.preferred_replica_election:
            for t in sc.topics:
                if (t.preferred_replica_election and t.name not in budget.preferred_elections
                        and state.zk.topic_assignment(t.name) is not None):
                    acts.append(Action("AdminPreferredReplicaElection", topic=t.name))
        if sc.auto_leader_rebalance_enable and budget.auto_rebalance_checks < bounds.auto_rebalance_checks:
            acts.append(Action("AutoLeaderRebalanceTimer"))
        if budget.unclean_config_changes < bounds.unclean_config_changes:
            acts.append(Action("AdminAlterUncleanLeaderElection"))
        in_znode = dict(state.zk.reassign_partitions)
        for i, command in enumerate(sc.reassignments):
            if (command.cancelled_by_admin and i in budget.reassignments_submitted
                    and i not in budget.reassignments_cancelled
                    and any(in_znode.get((command.topic, p)) == reps for p, reps in command.targets)):
                acts.append(Action("AdminCancelReassignment", topic=command.topic, command=i))
        return acts

    def next_state(self, state: ClusterState, action: Action) -> ClusterState | None:
        step = Step(self.scenario, state)
        kind = action.kind
        if kind == "ControllerProcessEvent":
            if action.isr_race:
                step.isr_race = action.isr_change()
            event = controller.process_next_event(step)
            step.messages.insert(0, f"controller processes {event.describe()}")
            if action.isr_race and not step.isr_race_fired:
                return None  # the leader's write did not land inside this step: the plain step covers it
        elif kind in (partition_leader.SHRINK, partition_leader.EXPAND):
            written = partition_leader.update_isr(step, action.isr_change())
            assert written, f"{action} was offered but cannot be written"
        elif kind == "BrokerApplyRequest":
            environment.broker_apply_request(step, action.broker)
        elif kind == "BrokerFailsStopReplica":
            environment.broker_apply_request(step, action.broker, storage_error=True)
        elif kind == "BrokerFailure":
            environment.broker_failure(step, action.broker)
        elif kind == "BrokerStartup":
            environment.broker_startup(step, action.broker)
        elif kind == "AdminCreateTopic":
            environment.admin_create_topic(step, action.topic)
        elif kind == "AdminDeleteTopic":
            environment.admin_delete_topic(step, action.topic)
        elif kind == "AdminAddPartitions":
            environment.admin_add_partitions(step, action.topic)
        elif kind == "AdminRecreateTopic":
            environment.admin_recreate_topic(step, action.topic)
        elif kind == "AdminReassignPartitions":
            environment.admin_reassign_partitions(step, action.command)
        elif kind in (controller_failover.FAILOVER, controller_failover.MOVE):
            controller_failover.controller_failover(step, kind)
        elif kind == "ZombieControllerProcessEvent":
            step = Step(self.scenario, state, acting_zombie=True)
            event = controller_failover.zombie_process_event(step)
            step.messages.insert(0, f"the former controller (epoch {step.epoch}) processes {event.describe()}")
        elif kind == "BrokerControlledShutdown":
            controlled_shutdown.broker_requests_controlled_shutdown(step, action.broker)
        elif kind == "BrokerShutdownCompletes":
            environment.broker_failure(step, action.broker, controlled=True)
        elif kind == "LogDirFailure":
            environment.log_dir_failure(step, action.broker, (action.topic, action.partition))
        elif kind == "AdminPreferredReplicaElection":
            environment.admin_preferred_replica_election(step, action.topic)
        elif kind == "AutoLeaderRebalanceTimer":
            environment.auto_rebalance_timer(step)
        elif kind == "AdminAlterUncleanLeaderElection":
            environment.admin_alter_unclean_leader_election(step)
        elif kind == "AdminCancelReassignment":
            environment.admin_cancel_reassignment(step, action.command)
        else:
            raise ValueError(f"unknown action {action!r}")
        environment.apply_update_metadata_at_heads(step)
        return step.freeze()

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

    def canonical_encode(self, state: ClusterState) -> bytes:
        """The optional contract method behind ``--symmetry``: the least encoding of the state's orbit
        under the scenario's interchangeable brokers (:mod:`model.zk.symmetry`)."""
        return self.symmetry.canonical_encode(state, self.codec.encode)

    @functools.cached_property
    def symmetry(self) -> BrokerSymmetry:
        """The scenario's broker symmetry group (worked out on first use)."""
        return BrokerSymmetry.of(self.scenario)

    def action_name(self, action: Action) -> str:
        return f"{action.kind}+{action.isr_race}" if action.isr_race else action.kind

    def describe_action(self, action: Action) -> str:
        if action.replica >= 0:
            change = (f"leader={action.broker}, {action.topic}-{action.partition}, "
                      f"{'follower' if (action.isr_race or action.kind) == partition_leader.SHRINK else 'replica'}"
                      f"={action.replica}")
            if action.isr_race:
                return f"{action.kind}(with {action.isr_race}({change}) between a read and a write)"
            return f"{action.kind}({change})"
        if action.command >= 0:
            targets = ", ".join(f"{action.topic}-{p}: {list(reps)}"
                                for p, reps in self.scenario.reassignments[action.command].targets)
            return f"{action.kind}({targets})"
        if action.kind == "LogDirFailure":
            return f"{action.kind}(broker={action.broker}, {action.topic}-{action.partition})"
        if action.broker >= 0:
            return f"{action.kind}(broker={action.broker})"
        if action.topic:
            return f"{action.kind}(topic={action.topic})"
        return action.kind

    def describe_changes(self, prev: ClusterState, next_: ClusterState) -> Sequence[str]:
        from model.present.describe import describe_changes

        return describe_changes(prev, next_)

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
        controller=ControllerState(CONTROLLER_EPOCH, registered, (), (), (), (), (), (), (), ()),
        # The controller's first UpdateMetadata (onControllerFailover) has told every broker who is alive.
        brokers=tuple(BrokerState(b, True, 1, CONTROLLER_EPOCH, (), (), tuple(i for i, _ in registered))
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
