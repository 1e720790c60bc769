"""The ZooKeeper controller model's actions: their kinds, who takes each, and one table from kind to its
effect and its description.

An action is the controller step (process the event at the head of the queue) or an environment step (a
broker applies its next request, or fails to delete a log; a partition leader shrinks or expands its ISR; a
broker dies or restarts, shuts down in a controlled way, or loses a log directory; the controller fails
over, or a former controller that has not noticed processes an event; an admin creates, deletes or
re-creates a topic, adds partitions to one, starts or cancels a partition reassignment, runs a preferred
replica election or changes ``unclean.leader.election.enable``; the auto leader rebalance timer fires).

A controller step may also be taken with a leader's ISR write landing inside it, between the controller's
read of that partition's znode and its conditional write (BADVERSION, then the retry): ``Action.isr_race``,
at the controller's first write of the znode, or with ``isr_race_after_leader_and_isr`` at a later write of it
in the same event once the leader applied the LeaderAndIsr the step sent (the end of a reassignment); such an
action has no successor when the write cannot land there. A controller step processing an AlterIsr may be taken
with its answer lost (``Action.alter_isr_answer_lost``, within ``[bounds] alter_isr_answers_lost``): the leader
sends the request again.

:data:`ACTIONS` maps each :class:`ActionKind` to its :class:`ActionSpec` (actor, handler, description);
:data:`FAMILIES` lists, in the order that defines traces, the enabling conditions of each family of kinds
(the kinds whose actions interleave, such as a broker's request step and its storage error). Environment
steps are bounded by the counters in :class:`~model.zk.state.values.Budget`, whose limits come from the
scenario's ``[bounds]``. :class:`~model.zk.kafka_model.KafkaControllerModel` and the reports
(:mod:`model.present.view`) dispatch through these tables; a new action is a new kind, one row in
:data:`ACTIONS`, its enabling condition in a family of :data:`FAMILIES`, and its view in the reports.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from model.scenario import Scenario, Topic
from model.zk.controller import controlled_shutdown, controller, controller_failover
from model.zk.environment import environment, partition_leader
from model.zk.state.step import Step
from model.zk.state.values import (
    SHUTDOWN_NONE,
    SHUTDOWN_RETRY,
    SHUTDOWN_SUCCEEDED,
    Budget,
    ClusterState,
    EventKind,
    RequestKind,
)


class ActionKind(enum.StrEnum):
    """The kinds of action, named as traces, coverage tables and replay scripts print them."""

    ControllerProcessEvent = "ControllerProcessEvent"
    BrokerApplyRequest = "BrokerApplyRequest"
    BrokerFailsStopReplica = "BrokerFailsStopReplica"
    BrokerAppliesRequestAndDies = "BrokerAppliesRequestAndDies"
    LeaderShrinksIsr = partition_leader.SHRINK
    LeaderExpandsIsr = partition_leader.EXPAND
    BrokerPropagatesIsrChanges = "BrokerPropagatesIsrChanges"
    BrokerFailure = "BrokerFailure"
    BrokerStartup = "BrokerStartup"
    AdminCreateTopic = "AdminCreateTopic"
    AdminAddPartitions = "AdminAddPartitions"
    AdminDeleteTopic = "AdminDeleteTopic"
    AdminRecreateTopic = "AdminRecreateTopic"
    AdminReassignPartitions = "AdminReassignPartitions"
    ControllerFailover = controller_failover.FAILOVER
    ControllerMove = controller_failover.MOVE
    ZombieControllerProcessEvent = "ZombieControllerProcessEvent"
    BrokerControlledShutdown = "BrokerControlledShutdown"
    BrokerShutdownCompletes = "BrokerShutdownCompletes"
    LogDirFailure = "LogDirFailure"
    AdminPreferredReplicaElection = "AdminPreferredReplicaElection"
    AutoLeaderRebalanceTimer = "AutoLeaderRebalanceTimer"
    AdminAlterUncleanLeaderElection = "AdminAlterUncleanLeaderElection"
    AdminAlterTopicUncleanLeaderElection = "AdminAlterTopicUncleanLeaderElection"
    AdminCancelReassignment = "AdminCancelReassignment"
    AdminAlterPartitionReassignments = "AdminAlterPartitionReassignments"
    AdminCancelPartitionReassignments = "AdminCancelPartitionReassignments"
    AdminElectPreferredLeaders = "AdminElectPreferredLeaders"
    AdminElectUncleanLeaders = "AdminElectUncleanLeaders"


class Actor(enum.Enum):
    """Who takes an action: the active controller, a former controller that has not noticed it lost
    controllership, a broker (``Action.broker``; a partition leader for ISR changes), an admin tool, or a
    failure the environment injects (of a broker, ``Action.broker``, or of the controller's host)."""

    CONTROLLER = "controller"
    FORMER_CONTROLLER = "former controller"
    BROKER = "broker"
    ADMIN = "admin"
    FAILURE = "failure"


@attrs.frozen(cache_hash=True)  # actions are memo keys: hashed once each
class Action:
    kind: ActionKind
    broker: int = -1
    topic: str = ""
    partition: int = -1
    replica: int = -1  # the follower leaving or joining the ISR
    isr_race: ActionKind | None = None  # ControllerProcessEvent: the leader ISR change landing inside the step
    # ControllerProcessEvent with isr_race: it lands at a later write of the znode, after the leader applied the
    # step's LeaderAndIsr (partition_leader.maybe_race)
    isr_race_after_leader_and_isr: bool = False
    command: int = -1  # AdminReassignPartitions: the index of the scenario's [[reassignments]] entry
    # ControllerProcessEvent of an AlterIsrReceived: the answer never reaches the leader, which re-sends the request
    alter_isr_answer_lost: bool = False

    def isr_change(self) -> partition_leader.IsrChange:
        kind = self.isr_race or self.kind
        return (self.broker, (self.topic, self.partition), self.replica, kind)

    def name(self) -> str:
        """The action's family as coverage tables count it (``ControllerProcessEvent+LeaderShrinksIsr``)."""
        if self.alter_isr_answer_lost:
            return f"{self.kind}+AlterIsrAnswerLost"
        if not self.isr_race:
            return str(self.kind)
        return f"{self.kind}+{self.isr_race}" + ("+AfterLeaderAndIsr" if self.isr_race_after_leader_and_isr else "")


#: The effect of an action on a thawed state (what it returns is not used).
Handler = Callable[[Step, Action], object]
#: An action as traces print it (the scenario names a reassignment's targets).
Describer = Callable[[Action, Scenario], str]


@attrs.frozen
class ActionSpec:
    actor: Actor
    handler: Handler
    describe: Describer


# ---- handlers --------------------------------------------------------------------------------


def _process_event(step: Step, action: Action) -> None:
    step.alter_isr_answer_lost = action.alter_isr_answer_lost
    if action.isr_race:
        step.isr_race = action.isr_change()
        step.isr_race_after_leader_and_isr = action.isr_race_after_leader_and_isr
    step.processed_event = controller.process_next_event(step)


def _former_controller_processes_event(step: Step, action: Action) -> None:
    step.processed_event = controller_failover.zombie_process_event(step)


def _update_isr(step: Step, action: Action) -> None:
    written = partition_leader.update_isr(step, action.isr_change())
    assert written, f"{action} was offered but cannot be written"


def _handler_of_broker(handler: Callable[[Step, int], object]) -> Handler:
    return lambda step, action: handler(step, action.broker)


def _handler_of_topic(handler: Callable[[Step, str], object]) -> Handler:
    return lambda step, action: handler(step, action.topic)


def _handler_of_command(handler: Callable[[Step, int], object]) -> Handler:
    return lambda step, action: handler(step, action.command)


# ---- descriptions ----------------------------------------------------------------------------


def _bare(action: Action, scenario: Scenario) -> str:
    return str(action.kind)


def _by_broker(action: Action, scenario: Scenario) -> str:
    return f"{action.kind}(broker={action.broker})"


def _by_topic(action: Action, scenario: Scenario) -> str:
    return f"{action.kind}(topic={action.topic})"


def _by_broker_and_partition(action: Action, scenario: Scenario) -> str:
    return f"{action.kind}(broker={action.broker}, {action.topic}-{action.partition})"


def _by_reassignment(action: Action, scenario: Scenario) -> str:
    command = scenario.reassignments[action.command]
    targets = ", ".join(f"{action.topic}-{p}: {list(reps)}" for p, reps in command.targets)
    return f"{action.kind}({targets})"


def _isr_change(action: Action) -> str:
    member = "follower" if (action.isr_race or action.kind) == partition_leader.SHRINK else "replica"
    return f"leader={action.broker}, {action.topic}-{action.partition}, {member}={action.replica}"


def _by_isr_change(action: Action, scenario: Scenario) -> str:
    return f"{action.kind}({_isr_change(action)})"


def _controller_step(action: Action, scenario: Scenario) -> str:
    if action.alter_isr_answer_lost:
        return f"{action.kind}(its AlterIsr answer lost: the leader's request times out and it sends it again)"
    if action.isr_race_after_leader_and_isr:
        return (f"{action.kind}(with {action.isr_race}({_isr_change(action)}), the leader having applied this "
                "event's LeaderAndIsr, between a later read and write)")
    if action.isr_race:
        return f"{action.kind}(with {action.isr_race}({_isr_change(action)}) between a read and a write)"
    return str(action.kind)


K = ActionKind
#: Every kind of action: who takes it, its effect and its description.
ACTIONS: Mapping[ActionKind, ActionSpec] = {
    K.ControllerProcessEvent: ActionSpec(Actor.CONTROLLER, _process_event, _controller_step),
    K.BrokerApplyRequest: ActionSpec(Actor.BROKER, _handler_of_broker(environment.broker_apply_request), _by_broker),
    K.BrokerFailsStopReplica: ActionSpec(
        Actor.FAILURE,
        lambda step, a: environment.broker_apply_request(step, a.broker, storage_error=(a.topic, a.partition)),
        _by_broker_and_partition),
    K.BrokerAppliesRequestAndDies: ActionSpec(
        Actor.FAILURE, _handler_of_broker(environment.broker_applies_and_dies), _by_broker),
    K.LeaderShrinksIsr: ActionSpec(Actor.BROKER, _update_isr, _by_isr_change),
    K.LeaderExpandsIsr: ActionSpec(Actor.BROKER, _update_isr, _by_isr_change),
    K.BrokerPropagatesIsrChanges: ActionSpec(
        Actor.BROKER, _handler_of_broker(partition_leader.maybe_propagate_isr_changes), _by_broker),
    K.BrokerFailure: ActionSpec(Actor.FAILURE, _handler_of_broker(environment.broker_failure), _by_broker),
    K.BrokerStartup: ActionSpec(Actor.BROKER, _handler_of_broker(environment.broker_startup), _by_broker),
    K.AdminCreateTopic: ActionSpec(Actor.ADMIN, _handler_of_topic(environment.admin_create_topic), _by_topic),
    K.AdminAddPartitions: ActionSpec(Actor.ADMIN, _handler_of_topic(environment.admin_add_partitions), _by_topic),
    K.AdminDeleteTopic: ActionSpec(Actor.ADMIN, _handler_of_topic(environment.admin_delete_topic), _by_topic),
    K.AdminRecreateTopic: ActionSpec(Actor.ADMIN, _handler_of_topic(environment.admin_recreate_topic), _by_topic),
    K.AdminReassignPartitions: ActionSpec(
        Actor.ADMIN, _handler_of_command(environment.admin_reassign_partitions), _by_reassignment),
    K.ControllerFailover: ActionSpec(
        Actor.FAILURE, lambda step, a: controller_failover.controller_failover(step, a.kind), _bare),
    K.ControllerMove: ActionSpec(
        Actor.FAILURE, lambda step, a: controller_failover.controller_failover(step, a.kind), _bare),
    K.ZombieControllerProcessEvent: ActionSpec(Actor.FORMER_CONTROLLER, _former_controller_processes_event, _bare),
    K.BrokerControlledShutdown: ActionSpec(
        Actor.BROKER, _handler_of_broker(controlled_shutdown.broker_requests_controlled_shutdown), _by_broker),
    K.BrokerShutdownCompletes: ActionSpec(
        Actor.BROKER, lambda step, a: environment.broker_failure(step, a.broker, controlled=True), _by_broker),
    K.LogDirFailure: ActionSpec(
        Actor.FAILURE, lambda step, a: environment.log_dir_failure(step, a.broker, (a.topic, a.partition)),
        _by_broker_and_partition),
    K.AdminPreferredReplicaElection: ActionSpec(
        Actor.ADMIN, _handler_of_topic(environment.admin_preferred_replica_election), _by_topic),
    K.AutoLeaderRebalanceTimer: ActionSpec(
        Actor.CONTROLLER, lambda step, a: environment.auto_rebalance_timer(step), _bare),
    K.AdminAlterUncleanLeaderElection: ActionSpec(
        Actor.ADMIN, lambda step, a: environment.admin_alter_unclean_leader_election(step), _bare),
    K.AdminAlterTopicUncleanLeaderElection: ActionSpec(
        Actor.ADMIN, _handler_of_topic(environment.admin_alter_topic_unclean_leader_election), _by_topic),
    K.AdminCancelReassignment: ActionSpec(
        Actor.ADMIN, _handler_of_command(environment.admin_cancel_reassignment), _by_reassignment),
    K.AdminAlterPartitionReassignments: ActionSpec(
        Actor.ADMIN, _handler_of_command(environment.admin_alter_partition_reassignments), _by_reassignment),
    K.AdminCancelPartitionReassignments: ActionSpec(
        Actor.ADMIN, _handler_of_command(environment.admin_cancel_partition_reassignments), _by_reassignment),
    K.AdminElectPreferredLeaders: ActionSpec(
        Actor.ADMIN, lambda step, a: environment.admin_elect_leaders(step, a.topic, unclean=False), _by_topic),
    K.AdminElectUncleanLeaders: ActionSpec(
        Actor.ADMIN, lambda step, a: environment.admin_elect_leaders(step, a.topic, unclean=True), _by_topic),
}


# ---- enabling conditions, family by family ---------------------------------------------------


@attrs.frozen
class Enabling:
    """What the enabling conditions read: the scenario, the state, the ISR changes a leader may write
    now (shared by the raced controller steps and the leaders' own steps), and the shrinks that may land inside
    a controller step after the leader applied that step's LeaderAndIsr."""

    scenario: Scenario
    state: ClusterState
    isr_changes: tuple[partition_leader.IsrChange, ...]
    shrinks_after_leader_and_isr: tuple[partition_leader.IsrChange, ...]
    # with AlterIsr (KIP-497) no leader writes the znode: nothing lands inside a controller step
    races: bool = True

    @classmethod
    def of(cls, scenario: Scenario, state: ClusterState, path: partition_leader.IsrPath | None = None,
           candidates: _Candidates | None = None) -> Enabling:
        """``path``: the scenario's (:meth:`~partition_leader.IsrPath.of`); ``candidates``: a memo of the ISR changes
        by the parts they are worked out from."""
        if state.budget.isr_changes >= scenario.bounds.isr_changes:
            return cls(scenario, state, (), ())
        if path is None:
            path = partition_leader.IsrPath.of(scenario)
        isr_changes = (tuple(partition_leader.candidates_of(state, path)) if candidates is None
                       else candidates.of(state, path))
        if path.alter_isr:
            return cls(scenario, state, isr_changes, (), races=False)
        return cls(scenario, state, isr_changes, tuple(partition_leader.shrinks_after_leader_and_isr(state)))


class _Candidates:
    """The ISR changes the leaders may write (:func:`partition_leader.candidates_of`), which read the brokers and
    ZooKeeper's partition states alone, remembered by the identity of those two parts (states decoded by the codec
    share their equal parts). The memo holds the parts it keys on, so that their identities are not reused while
    they are keys, and is emptied when it holds ``entries``."""

    def __init__(self, entries: int = 1 << 12) -> None:
        self.entries = entries
        self.memo: dict[tuple[int, int], tuple[Any, Any, tuple[partition_leader.IsrChange, ...]]] = {}

    def of(self, state: ClusterState, path: partition_leader.IsrPath) -> tuple[partition_leader.IsrChange, ...]:
        brokers, partitions = state.brokers, state.zk.partitions
        key = (id(brokers), id(partitions))
        hit = self.memo.get(key)
        if hit is None:
            if len(self.memo) >= self.entries:
                self.memo.clear()
            hit = self.memo[key] = (brokers, partitions, tuple(partition_leader.candidates_of(state, path)))
        return hit[2]


Enabled = Iterator[Action]

#: The actions enumerated so far, by their fields in :class:`Action`'s order: each is made once and handed out as
#: one object (the transition memos key on actions; an action met again is found by identity, not compared).
_ACTIONS_MADE: dict[tuple[Any, ...], Action] = {}


def _action(kind: ActionKind, broker: int = -1, topic: str = "", partition: int = -1, replica: int = -1,
            isr_race: ActionKind | None = None, isr_race_after_leader_and_isr: bool = False, command: int = -1,
            alter_isr_answer_lost: bool = False) -> Action:
    """The one :class:`Action` of these fields (its attributes, in their order)."""
    fields = (kind, broker, topic, partition, replica, isr_race, isr_race_after_leader_and_isr, command,
              alter_isr_answer_lost)
    action = _ACTIONS_MADE.get(fields)
    if action is None:
        if len(_ACTIONS_MADE) >= 1 << 16:
            _ACTIONS_MADE.clear()
        action = _ACTIONS_MADE[fields] = Action(*fields)
    return action


def _controller_steps(e: Enabling) -> Enabled:
    if e.state.controller.events:
        yield _action(K.ControllerProcessEvent)
        if (e.state.controller.events[0].kind is EventKind.AlterIsrReceived
                and e.state.budget.alter_isr_answers_lost < e.scenario.bounds.alter_isr_answers_lost):
            yield _action(K.ControllerProcessEvent, alter_isr_answer_lost=True)
        if not e.races:
            return
        for leader, (topic, p), follower, kind in e.isr_changes:
            yield _action(K.ControllerProcessEvent, leader, topic, p, follower, isr_race=K(kind))
        for leader, (topic, p), follower, kind in e.shrinks_after_leader_and_isr:
            yield _action(K.ControllerProcessEvent, leader, topic, p, follower, isr_race=K(kind),
                          isr_race_after_leader_and_isr=True)


def _broker_request_steps(e: Enabling) -> Enabled:
    """Per broker (by id): it applies its next request; a StopReplica that deletes may fail instead; or it
    applies the request and dies before answering, where the controller would act on the answer."""
    state, budget = e.state, e.state.budget
    failures_left = budget.broker_failures < e.scenario.bounds.broker_failures
    offline_dirs = {b for b, _ in state.controller.replicas_on_offline_dirs}
    for broker_id, queue in state.channels:
        if not state.broker(broker_id).alive:
            continue
        yield _action(K.BrokerApplyRequest, broker_id)
        head = queue[0]
        if (head.kind is RequestKind.StopReplica and head.deletes_partitions
                and budget.stop_replica_errors < e.scenario.bounds.stop_replica_errors):
            for topic, p in head.deleted_partitions():  # ReplicaManager.stopReplicas: an error per partition
                yield _action(K.BrokerFailsStopReplica, broker_id, topic, p)
        if failures_left and environment.response_observable(state.broker(broker_id), head,
                                                             broker_id in offline_dirs,
                                                             e.scenario.bug("KAFKA_9946")):
            yield _action(K.BrokerAppliesRequestAndDies, broker_id)


def _isr_changes(e: Enabling) -> Enabled:
    """The ISR changes leaders may write, then per live broker (by id) the propagation of those it recorded."""
    for leader, (topic, p), follower, kind in e.isr_changes:
        yield _action(K(kind), leader, topic, p, follower)
    for b in e.state.brokers:
        if b.alive and b.pending_isr_changes:
            yield _action(K.BrokerPropagatesIsrChanges, b.id)


def _broker_failures_and_restarts(e: Enabling) -> Enabled:
    within = e.state.budget.broker_failures < e.scenario.bounds.broker_failures
    for b in e.state.brokers:
        if not b.alive:
            yield _action(K.BrokerStartup, b.id)
        elif within:
            yield _action(K.BrokerFailure, b.id)


def _incarnations(topic: Topic, budget: Budget) -> int:
    """How many times the topic has been created so far in the run (an admin deletes each at most once)."""
    return int(topic.created_initially) + budget.topics_created.count(topic.name) + budget.topics_recreated.count(
        topic.name)


def _topic_creations(e: Enabling) -> Enabled:
    for t in e.scenario.topics:
        if not t.created_initially and t.name not in e.state.budget.topics_created:
            yield _action(K.AdminCreateTopic, topic=t.name)


def _partition_additions(e: Enabling) -> Enabled:
    zk = e.state.zk
    for t in e.scenario.topics:
        existing = zk.topic_assignment(t.name)
        if t.add_partitions and t.name not in e.state.budget.partitions_added and existing is not None and (
                environment.added_partitions(e.scenario, (b for b, _ in zk.brokers), existing, t.name)):
            yield _action(K.AdminAddPartitions, topic=t.name)


def _topic_deletions(e: Enabling) -> Enabled:
    budget = e.state.budget
    for t in e.scenario.topics:
        if (t.deleted_by_admin and budget.deletions_requested.count(t.name) < _incarnations(t, budget)
                and e.state.zk.topic_assignment(t.name) is not None):
            yield _action(K.AdminDeleteTopic, topic=t.name)


def _topic_recreations(e: Enabling) -> Enabled:
    budget, zk = e.state.budget, e.state.zk
    for t in e.scenario.topics:
        if (t.recreated_by_admin and t.name not in budget.topics_recreated and t.name in budget.deletions_requested
                and zk.topic_assignment(t.name) is None and t.name not in zk.delete_topics):
            yield _action(K.AdminRecreateTopic, topic=t.name)


def _reassignments(e: Enabling) -> Enabled:
    if e.state.zk.reassign_partitions:
        return
    for i, command in enumerate(e.scenario.reassignments):
        if (not command.through_api and i not in e.state.budget.reassignments_submitted
                and e.state.zk.topic_assignment(command.topic) is not None):
            yield _action(K.AdminReassignPartitions, topic=command.topic, command=i)


def _api_reassignments(e: Enabling) -> Enabled:
    """AlterPartitionReassignments (KIP-455, 2.4): an entry ``through_api`` is sent once its topic exists and
    every earlier entry naming one of its partitions was submitted (the scenario's order is the admin's); an
    entry ``cancelled_through_api`` is cancelled (targets None) once, after its submission."""
    budget = e.state.budget
    for i, command in enumerate(e.scenario.reassignments):
        if (command.through_api and i not in budget.reassignments_submitted
                and e.state.zk.topic_assignment(command.topic) is not None
                and all(j in budget.reassignments_submitted for j in e.scenario.earlier_reassignments_of(i))):
            yield _action(K.AdminAlterPartitionReassignments, topic=command.topic, command=i)
    for i, command in enumerate(e.scenario.reassignments):
        if (command.cancelled_through_api and i in budget.reassignments_submitted
                and i not in budget.reassignments_cancelled):
            yield _action(K.AdminCancelPartitionReassignments, topic=command.topic, command=i)


def _controller_failovers(e: Enabling) -> Enabled:
    """The controller fails over or moves; while a former controller is still at work, it takes a step instead."""
    budget, bounds = e.state.budget, e.scenario.bounds
    if e.state.zombie is not None:
        yield _action(K.ZombieControllerProcessEvent)
        return
    if budget.controller_failovers < bounds.controller_failovers:
        yield _action(K.ControllerFailover)
    if budget.controller_moves < bounds.controller_moves:
        yield _action(K.ControllerMove)


def _controlled_shutdowns(e: Enabling) -> Enabled:
    """Per live broker: it asks for (or retries) a controlled shutdown, or completes its shutdown."""
    requests_left = e.state.budget.controlled_shutdowns < e.scenario.bounds.controlled_shutdowns
    for b in e.state.brokers:
        if not b.alive:
            continue
        if b.controlled_shutdown in (SHUTDOWN_NONE, SHUTDOWN_RETRY) and requests_left:
            yield _action(K.BrokerControlledShutdown, b.id)
        if b.controlled_shutdown == SHUTDOWN_SUCCEEDED or (b.controlled_shutdown == SHUTDOWN_RETRY
                                                           and not requests_left):
            yield _action(K.BrokerShutdownCompletes, b.id)


def _log_dir_failures(e: Enabling) -> Enabled:
    if e.state.budget.log_dir_failures >= e.scenario.bounds.log_dir_failures:
        return
    for b in e.state.brokers:
        if b.alive:
            for name, p in b.logs:
                if (name, p) not in b.offline_logs:
                    yield _action(K.LogDirFailure, b.id, name, p)


def _preferred_elections(e: Enabling) -> Enabled:
    if e.state.zk.preferred_replica_election:
        return
    for t in e.scenario.topics:
        if (t.preferred_replica_election and t.name not in e.state.budget.preferred_elections
                and e.state.zk.topic_assignment(t.name) is not None):
            yield _action(K.AdminPreferredReplicaElection, topic=t.name)


def _auto_rebalance_timer(e: Enabling) -> Enabled:
    if (e.scenario.auto_leader_rebalance_enable
            and e.state.budget.auto_rebalance_checks < e.scenario.bounds.auto_rebalance_checks):
        yield _action(K.AutoLeaderRebalanceTimer)


def _unclean_config_changes(e: Enabling) -> Enabled:
    """The cluster-wide default flips; a topic whose scenario entry allows it gets its override (once)."""
    if e.state.budget.unclean_config_changes >= e.scenario.bounds.unclean_config_changes:
        return
    yield _action(K.AdminAlterUncleanLeaderElection)
    zk = e.state.zk
    for t in e.scenario.topics:
        if (t.unclean_leader_election_enable_by_admin and t.name not in zk.topic_unclean_leader_election_enable
                and zk.topic_assignment(t.name) is not None):
            yield _action(K.AdminAlterTopicUncleanLeaderElection, topic=t.name)


def _reassignment_cancellations(e: Enabling) -> Enabled:
    budget = e.state.budget
    in_znode = dict(e.state.zk.reassign_partitions)
    for i, command in enumerate(e.scenario.reassignments):
        if (command.cancelled_by_admin and i in budget.reassignments_submitted
                and i not in budget.reassignments_cancelled
                and any(in_znode.get((command.topic, p)) == reps for p, reps in command.targets)):
            yield _action(K.AdminCancelReassignment, topic=command.topic, command=i)


def _elect_leaders(e: Enabling) -> Enabled:
    """ElectLeaders (KIP-460, 2.4): a topic whose scenario entry sets ``elect_leaders`` gets one request, for the
    partitions its topic znode lists, once it exists."""
    for t in e.scenario.topics:
        if (t.elect_leaders and t.name not in e.state.budget.preferred_elections
                and e.state.zk.topic_assignment(t.name) is not None):
            kind = K.AdminElectUncleanLeaders if t.elect_leaders == "unclean" else K.AdminElectPreferredLeaders
            yield _action(kind, topic=t.name)


def _always(scenario: Scenario) -> bool:
    return True


@attrs.frozen
class Family:
    """Kinds whose actions are enumerated together (in the order ``enabled`` yields them). ``possible`` is false
    for a scenario in none of whose states the family has an action (its topics, reassignments or bounds never
    enable one): :func:`enabled_actions` leaves it out there."""

    kinds: tuple[ActionKind, ...]
    enabled: Callable[[Enabling], Enabled]
    possible: Callable[[Scenario], bool] = _always


#: The families in the order that defines the actions' order (and so the traces): the controller step and
#: its raced variants, then per broker (by id) its request steps, then ISR changes, then failures and
#: restarts, then admin steps by topic name (creation, partitions, deletion, re-creation, reassignment), then
#: controller failover and moves (or the former controller's step), controlled shutdowns, log directory
#: failures, preferred elections, the auto-rebalance timer, the unclean-election config, reassignment
#: cancellations, the AlterPartitionReassignments requests and the ElectLeaders requests (2.4+).
FAMILIES: tuple[Family, ...] = (
    Family((K.ControllerProcessEvent,), _controller_steps),
    Family((K.BrokerApplyRequest, K.BrokerFailsStopReplica, K.BrokerAppliesRequestAndDies), _broker_request_steps),
    Family((K.LeaderShrinksIsr, K.LeaderExpandsIsr, K.BrokerPropagatesIsrChanges), _isr_changes),
    Family((K.BrokerFailure, K.BrokerStartup), _broker_failures_and_restarts),
    Family((K.AdminCreateTopic,), _topic_creations,
           lambda sc: any(not t.created_initially for t in sc.topics)),
    Family((K.AdminAddPartitions,), _partition_additions, lambda sc: any(t.add_partitions for t in sc.topics)),
    Family((K.AdminDeleteTopic,), _topic_deletions, lambda sc: any(t.deleted_by_admin for t in sc.topics)),
    Family((K.AdminRecreateTopic,), _topic_recreations, lambda sc: any(t.recreated_by_admin for t in sc.topics)),
    Family((K.AdminReassignPartitions,), _reassignments,
           lambda sc: any(not c.through_api for c in sc.reassignments)),
    # a former controller is left only by a failover or a move (controller_failover.controller_failover)
    Family((K.ControllerFailover, K.ControllerMove, K.ZombieControllerProcessEvent), _controller_failovers,
           lambda sc: sc.bounds.controller_failovers > 0 or sc.bounds.controller_moves > 0),
    # a broker's shutdown completes only after it asked for it
    Family((K.BrokerControlledShutdown, K.BrokerShutdownCompletes), _controlled_shutdowns,
           lambda sc: sc.bounds.controlled_shutdowns > 0),
    Family((K.LogDirFailure,), _log_dir_failures, lambda sc: sc.bounds.log_dir_failures > 0),
    Family((K.AdminPreferredReplicaElection,), _preferred_elections,
           lambda sc: any(t.preferred_replica_election for t in sc.topics)),
    Family((K.AutoLeaderRebalanceTimer,), _auto_rebalance_timer,
           lambda sc: sc.auto_leader_rebalance_enable and sc.bounds.auto_rebalance_checks > 0),
    Family((K.AdminAlterUncleanLeaderElection, K.AdminAlterTopicUncleanLeaderElection), _unclean_config_changes,
           lambda sc: sc.bounds.unclean_config_changes > 0),
    Family((K.AdminCancelReassignment,), _reassignment_cancellations,
           lambda sc: any(c.cancelled_by_admin for c in sc.reassignments)),
    Family((K.AdminAlterPartitionReassignments, K.AdminCancelPartitionReassignments), _api_reassignments,
           lambda sc: any(c.through_api or c.cancelled_through_api for c in sc.reassignments)),
    Family((K.AdminElectPreferredLeaders, K.AdminElectUncleanLeaders), _elect_leaders,
           lambda sc: any(t.elect_leaders for t in sc.topics)),
)


@attrs.frozen
class Enumeration:
    """What :func:`enabled_actions` works out once per scenario: the families :attr:`Family.possible` in it, its
    :class:`~partition_leader.IsrPath`, and the memo of the leaders' ISR changes."""

    scenario: Scenario
    families: tuple[Callable[[Enabling], Enabled], ...]
    path: partition_leader.IsrPath
    candidates: _Candidates = attrs.field(factory=_Candidates, eq=False)

    @classmethod
    def of(cls, scenario: Scenario) -> Enumeration:
        return cls(scenario, tuple(f.enabled for f in FAMILIES if f.possible(scenario)),
                   partition_leader.IsrPath.of(scenario))

    def actions(self, state: ClusterState) -> list[Action]:
        e = Enabling.of(self.scenario, state, self.path, self.candidates)
        return [action for enabled in self.families for action in enabled(e)]


#: The enumerations of the scenarios met, by identity (each holds its scenario); emptied when it holds 64.
_ENUMERATIONS: dict[int, Enumeration] = {}


def enabled_actions(scenario: Scenario, state: ClusterState) -> list[Action]:
    """The actions enabled in ``state``, family by family in the order of :data:`FAMILIES`."""
    enumeration = _ENUMERATIONS.get(id(scenario))
    if enumeration is None or enumeration.scenario is not scenario:
        if len(_ENUMERATIONS) >= 64:
            _ENUMERATIONS.clear()
        enumeration = _ENUMERATIONS[id(scenario)] = Enumeration.of(scenario)
    return enumeration.actions(state)


__all__ = ["ACTIONS", "FAMILIES", "Action", "ActionKind", "ActionSpec", "Actor", "Family", "enabled_actions"]
