"""Controller failover: a new controller is elected and rebuilds its context from ZooKeeper alone.

Kafka 2.3.0 (``controller/KafkaController.scala``; 2.0 – 2.2 where they differ): the active controller
loses controllership when its host dies or its ZooKeeper session expires (the ephemeral ``/controller``
goes), or when ``/controller`` is deleted under it (operators do this to force a re-election; it is
also what ``ControllerIntegrationTest.testControllerMove*`` emulates). Another broker's ``Reelect``
event then runs ``elect``: ``registerControllerAndIncrementControllerEpoch`` (controller epoch + 1 and a
new ``/controller_epoch`` zkVersion) and ``onControllerFailover``:

1. delete the ``/log_dir_event_notification`` and ``/isr_change_notification`` children;
2. ``initializeControllerContext``: live brokers with their epochs, every topic's assignment, the
   leadership of every partition with a state znode, no shutting-down broker, and the partitions of
   ``/admin/reassign_partitions`` (``initializePartitionReassignment``, which adds to what the context
   holds: an empty context since KAFKA-5310);
3. ``fetchTopicDeletionsInProgress`` and ``TopicDeletionManager.init``: the topics of
   ``/admin/delete_topics`` are queued, those with an offline replica or a partition being reassigned
   ineligible; with ``delete.topic.enable=false`` the znodes are deleted instead (KAFKA-3175's fix);
4. an UpdateMetadata to every live broker (2.0 – 2.1 with every partition, 2.2+ without, KAFKA-7537);
5. ``ReplicaStateMachine.startup``: ``initializeReplicaState`` puts every replica in OnlineReplica or, if
   offline, ReplicaDeletionIneligible, then online replicas go to OnlineReplica (LeaderAndIsr) and, from
   2.3 (KAFKA-8152, closing KAFKA-3143 and KAFKA-3096), offline ones to OfflineReplica (out of the ISR);
6. ``PartitionStateMachine.startup``: New, Online or Offline by the leader's liveness, then
   ``triggerOnlinePartitionStateChange``;
7. ``maybeTriggerPartitionReassignment`` for every partition being reassigned, ``tryTopicDeletion``, and
   the preferred replica elections still named in ``/admin/preferred_replica_election``.

The old controller's in-memory state dies with it: its event queue and its request channels. A
controller that has not noticed it lost controllership keeps processing events, as a *zombie*
(:attr:`~model.zk.state.values.ClusterState.zombie`): after ``/controller`` was deleted under it, every event
already in its queue (the ``ControllerChange`` that tells it comes last); after its session expired,
only the event it was in the middle of, and only before Kafka 1.1 (KAFKA-3083: 1.1's ``Expire`` event
waits for it, and its writes fail on the expired session). Its ZooKeeper writes land before Kafka 2.1
and are fenced by the ``/controller_epoch`` zkVersion from 2.1 (KAFKA-6082:
:meth:`~model.zk.state.step.Step.controller_writes_zk`); brokers reject its requests once they have seen the
new controller epoch.

Deviations: the controller's host is not one of the modelled brokers (a failure of the controller's
broker is a BrokerFailure and a ControllerFailover in either order; a session expiry also re-registers
that broker, which is not modelled); the election happens with the failover step, and the new
controller's ``onControllerFailover`` is the first event of its queue (``Reelect``), so that other steps
interleave with it; events a zombie processes do not queue further events for itself (it would process
them after resigning, as no-ops).
"""

from __future__ import annotations

import attrs

from model.zk.controller import (
    partition_reassignment,
    partition_state_machine,
    preferred_replica_election,
    replica_state_machine,
    topic_deletion_manager,
)
from model.zk.state.states import PartitionState, ReplicaState
from model.zk.state.step import ControllerError, ControllerMovedException, Step
from model.zk.state.values import (
    SHUTDOWN_REQUESTED,
    SHUTDOWN_RETRY,
    ControllerEvent,
    EventKind,
    Replica,
)

FAILOVER = "ControllerFailover"
MOVE = "ControllerMove"
RESIGN = "triggerControllerMove"


def controller_failover(step: Step, kind: str) -> None:
    """The active controller loses controllership and another is elected.

    ``FAILOVER`` (an environment step): its host dies or its ZooKeeper session expires; with KAFKA_3083
    (before 1.1) the event at the head of its queue is still processed by it, through a new session.
    ``MOVE`` (an environment step): ``/controller`` is deleted under it; it works through its whole queue
    before its ``ControllerChange`` event. ``RESIGN`` (within the controller's own step, see :func:`elect`):
    it resigned and deleted ``/controller`` itself (``triggerControllerMove``: ``onControllerResignation``,
    whose ``ControllerChannelManager.shutdown`` drops the requests it had not sent; the events left in its
    queue are no-ops once it is not active).
    """
    if kind == MOVE:
        zombie_events = tuple(step.events)
        step.budget = attrs.evolve(step.budget, controller_moves=step.budget.controller_moves + 1)
    elif kind == FAILOVER:
        zombie_events = tuple(step.events[:1]) if step.scenario.bug("KAFKA_3083") else ()
        step.budget = attrs.evolve(step.budget, controller_failovers=step.budget.controller_failovers + 1)
    else:
        zombie_events = ()
    if zombie_events:
        step.other_controller = attrs.evolve(step.controller_state(), events=zombie_events)
    elif kind == RESIGN:
        step.remove_channels_of(step.epoch)
    else:
        # The old ControllerChannelManager is gone with what it had not sent.
        step.channels.clear()
    # A broker waiting for the answer to its ControlledShutdownRequest gets ControllerMovedException
    # (ControllerEventManager's preempt) and retries, unless the old controller will still answer it.
    waiting = {e.broker for e in zombie_events if e.kind is EventKind.ControlledShutdown}
    for b, broker in list(step.brokers.items()):
        if broker.controlled_shutdown == SHUTDOWN_REQUESTED and b not in waiting:
            step.brokers[b] = attrs.evolve(broker, controlled_shutdown=SHUTDOWN_RETRY)
    # KAFKA-5310: a resigned controller's JVM kept its partitionsBeingReassigned. Controllership alternates
    # between two hosts here, so the new controller is the one that resigned before (if any).
    stale = dict(step.standby_reassignments) if step.scenario.bug("KAFKA_5310") else {}
    step.standby_reassignments = (tuple(sorted(step.partitions_being_reassigned.items()))
                                  if step.scenario.bug("KAFKA_5310") else ())
    # registerControllerAndIncrementControllerEpoch
    step.zk_controller_epoch += 1
    step.epoch = step.zk_controller_epoch
    step.live_brokers = {}
    step.assignment = {}
    step.leadership = {}
    step.partition_state = {}
    step.replica_state = {}
    step.topics_to_be_deleted = set()
    step.topics_ineligible_for_deletion = set()
    step.topics_with_deletion_started = set()
    step.partitions_being_reassigned = stale
    step.shutting_down_brokers = set()
    step.replicas_on_offline_dirs = set()
    if step.scenario.since("KIP_455"):
        step.adding_replicas = {}
        step.removing_replicas = {}
    if step.scenario.since("KIP_516"):
        step.topic_ids = {}
    # AlterIsr requests the old controller will not answer (it died, or resigned: NOT_CONTROLLER) go again to the new
    # one (BrokerToControllerChannelManager re-sends on a disconnection or NOT_CONTROLLER); a former controller still
    # at work answers its own NOT_CONTROLLER (process_alter_isr)
    resent = [e for e in step.events if e.kind is EventKind.AlterIsrReceived and e not in zombie_events]
    step.events.clear()
    step.events.append(ControllerEvent(EventKind.Reelect))
    step.events.extend(resent)
    how = {MOVE: "deleted", FAILOVER: "expired", RESIGN: "deleted by the controller that resigned"}[kind]
    step.messages.append(f"/controller {how}; a new controller is elected with controller epoch {step.epoch}")


def elect(step: Step) -> None:
    """``KafkaController.elect`` after ``registerControllerAndIncrementControllerEpoch`` (done by the step that
    elected this controller): ``onControllerFailover``. An exception escaping it is caught there: "Error while
    electing or becoming controller ... Trigger controller movement immediately", and ``triggerControllerMove``
    resigns (``onControllerResignation``) and deletes ``/controller``; every broker's ``ControllerChange``
    handler queues ``Reelect``, and the broker that wins elects itself and runs ``onControllerFailover``
    against the same ZooKeeper. What the failing controller wrote before the exception stays written.

    Deviation: the successor's election is part of this step (Kafka's brokers race for ``/controller`` a few
    milliseconds later; the model's other steps interleave with the successor's ``Reelect`` instead). A search
    expands the states after at most ``[bounds] controller_resignations`` such resignations
    (:meth:`~model.zk.kafka_model.KafkaControllerModel.within_boundary`): each one adds a controller epoch.
    """
    try:
        on_controller_failover(step)
    except ControllerMovedException:
        raise
    except ControllerError as e:
        step.messages.append(f"Error while electing or becoming controller (controller epoch {step.epoch}). "
                             f"Trigger controller movement immediately: {e}")
        if not step.is_active():
            # triggerControllerMove: "Controller has already moved when trying to trigger controller movement"
            step.resigned = True
            return
        step.controller_resignations.append((step.epoch, str(e)))
        step.controller_initialized = False  # the context it built is gone with it
        controller_failover(step, RESIGN)


def zombie_process_event(step: Step) -> ControllerEvent:
    """The old controller processes the head of its queue; a fenced write (2.1+) makes it resign, and so does
    the end of its queue (the ``ControllerChange`` or ``Expire`` it reaches next: ``onControllerResignation``)."""
    from model.zk.controller import controller

    event = step.events.pop(0)
    remaining = list(step.events)
    try:
        controller.dispatch(step, event)
    except ControllerMovedException as e:
        step.messages.append(f"Controller moved to another broker when processing {event.describe()}: {e}")
        step.zk_write_fenced = True
        step.resigned = True
    except partition_reassignment.ControllerError as e:
        step.messages.append(f"Uncaught error processing event {event.describe()}: {e}")
    step.events[:] = remaining  # what it queued for itself comes after its resignation: no-ops
    if step.resigned or not step.events:
        step.resigned = True
        # the AlterIsr requests left would be answered NOT_CONTROLLER: their leaders send them to the active controller
        step.watch_events.extend(e for e in step.events if e.kind is EventKind.AlterIsrReceived)
        step.events.clear()
        step.messages.append(f"the controller of epoch {step.epoch} resigns (onControllerResignation)")
    return event


def on_controller_failover(step: Step) -> None:
    """``onControllerFailover`` (see the module docstring for its order)."""
    step.controller_initialized = True
    if step.zk_log_dir_event_notifications:
        step.controller_writes_zk("the deletion of /log_dir_event_notification children")
        step.zk_log_dir_event_notifications.clear()
    if step.zk_isr_change_notifications:
        step.controller_writes_zk("the deletion of /isr_change_notification children")
        step.zk_isr_change_notifications.clear()
    initialize_controller_context(step)
    to_delete, ineligible = fetch_topic_deletions_in_progress(step)
    topic_deletion_manager.init(step, to_delete, ineligible)
    step.send_update_metadata_request(sorted(step.live_or_shutting_down()),
                                      [] if step.scenario.since("KAFKA_7537") else None)
    replica_state_machine_startup(step)
    partition_state_machine_startup(step)
    if step.scenario.since("KIP_455"):
        partition_reassignment.initialize_partition_reassignments(step)
    else:
        partition_reassignment.maybe_trigger_partition_reassignment(step, sorted(step.partitions_being_reassigned))
    topic_deletion_manager.resume_deletions(step)
    preferred_replica_election.resume_pending(step)


def initialize_controller_context(step: Step) -> None:
    """``initializeControllerContext`` and ``initializePartitionReassignment`` (before 2.4; from 2.4, KIP-455, the
    partitions being reassigned are those whose topic znode shows adding or removing replicas, and
    /admin/reassign_partitions is read by ``initializePartitionReassignments`` later in the failover; from 2.8,
    KIP-516, ``processTopicIds`` for every topic)."""
    from model.zk.controller import controller

    step.live_brokers = dict(step.zk_brokers)
    step.assignment = {(t, p): reps for t, parts in step.zk_topics.items() for p, reps in enumerate(parts)}
    step.leadership = {tp: lai for tp, lai in step.zk_partitions.items() if tp in step.assignment}
    step.shutting_down_brokers = set()
    controller.process_topic_ids(step, sorted(step.zk_topics))
    if step.scenario.since("KIP_455"):
        partition_reassignment.initialize_controller_context_assignments(step)
    elif step.scenario.bug("KAFKA_6193"):
        partition_reassignment.initialize_partition_reassignment_before_kafka_6193(step)
    else:
        step.partitions_being_reassigned.update(step.zk_reassign_partitions)


def fetch_topic_deletions_in_progress(step: Step) -> tuple[set[str], set[str]]:
    """``fetchTopicDeletionsInProgress``: the topics to delete, and those ineligible for now (an offline replica,
    or a partition being reassigned)."""
    to_delete = set(step.zk_delete_topics)
    with_offline = {t for (t, p), reps in step.assignment.items()
                    if any(not step.is_replica_online(b, (t, p)) for b in reps)}
    reassigning = {tp[0] for tp in step.partitions_being_reassigned}
    return to_delete, with_offline | reassigning


def replica_state_machine_startup(step: Step) -> None:
    """``ReplicaStateMachine.startup``: ``initializeReplicaState`` (put directly, no transition), then the
    online replicas to OnlineReplica and, from 2.3, the offline ones to OfflineReplica (KAFKA-8152; before,
    KAFKA_3143 / KAFKA_3096, dead replicas stay in the ISR, a dead leader stays named)."""
    online: list[Replica] = []
    offline: list[Replica] = []
    for (t, p), reps in sorted(step.assignment.items()):
        for b in reps:
            r = (t, p, b)
            if step.is_replica_online(b, (t, p)):
                online.append(r)
                state = ReplicaState.OnlineReplica
            else:
                offline.append(r)
                state = ReplicaState.ReplicaDeletionIneligible
            step.replica_state[r] = state
            step.initial_replica_states.append((r, state))
    replica_state_machine.handle_state_changes(step, online, ReplicaState.OnlineReplica)
    if not step.scenario.bug_any("KAFKA_3143", "KAFKA_3096"):
        replica_state_machine.handle_state_changes(step, offline, ReplicaState.OfflineReplica)


def partition_state_machine_startup(step: Step) -> None:
    """``PartitionStateMachine.startup``: ``initializePartitionState`` (Online if the leader is online, Offline if
    not, New without leadership), then ``triggerOnlinePartitionStateChange``."""
    for tp in sorted(step.assignment):
        lai = step.leadership.get(tp)
        if lai is None:
            step.partition_state[tp] = PartitionState.NewPartition
        elif step.is_replica_online(lai.leader, tp):
            step.partition_state[tp] = PartitionState.OnlinePartition
        else:
            step.partition_state[tp] = PartitionState.OfflinePartition
    partition_state_machine.trigger_online_partition_state_change(step)
