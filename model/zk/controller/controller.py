"""The controller's event processing: ``controller/KafkaController.scala`` (Kafka 2.0 – 2.3).

One controller step takes the event at the head of the ``ControllerEventManager`` queue and runs
its ``process()``: BrokerChange (``onBrokerStartup`` / ``onBrokerFailure``), TopicChange
(``onNewPartitionCreation``), TopicDeletion (``enqueueTopicsForDeletion``),
TopicDeletionStopReplicaResponseReceived, IsrChangeNotification, PartitionModifications, and the
reassignment events of :mod:`model.zk.controller.partition_reassignment`. Each handler reads ZooKeeper when it
runs, as Kafka's do, so changes made while the event waited are seen.

Deviation: ``ControllerContext.allTopics`` is derived from the assignments the controller knows.
Kafka keeps it as its own set, written only by TopicChange (and ``removeTopic``); the two differ
when a PartitionModifications event queued before a topic's deletion runs after the topic was
re-created and creates its partitions before TopicChange sees the topic: Kafka's TopicChange then
runs ``onNewPartitionCreation`` for them a second time (invalid transitions logged, one more
election), the model's does not.
"""

from __future__ import annotations

from model.zk.controller import (
    controlled_shutdown,
    controller_failover,
    kafka_zk_client,
    partition_reassignment,
    partition_state_machine,
    preferred_replica_election,
    replica_state_machine,
    topic_deletion_manager,
)
from model.zk.environment import partition_leader
from model.zk.state.states import PartitionState, ReplicaState
from model.zk.state.step import Step
from model.zk.state.values import ControllerEvent, EventKind, LeaderAndIsr, LeaderRecoveryState, Replica, TopicPartition


def process_next_event(step: Step) -> ControllerEvent:
    """``ControllerEventManager``'s thread: take the head event and process it. An exception out of the
    handler is logged ("Uncaught error processing event") and ends the event; what it changed before
    stays changed."""
    event = step.events.pop(0)
    try:
        dispatch(step, event)
    except partition_reassignment.ControllerError as e:
        step.messages.append(f"Uncaught error processing event {event.describe()}: {e}")
    return event


def dispatch(step: Step, event: ControllerEvent) -> None:
    """``KafkaController.process``: the handler of each event."""
    if event.kind is EventKind.BrokerChange:
        process_broker_change(step)
    elif event.kind is EventKind.TopicChange:
        process_topic_change(step)
    elif event.kind is EventKind.TopicDeletion:
        process_topic_deletion(step)
    elif event.kind is EventKind.TopicDeletionStopReplicaResponseReceived:
        process_topic_deletion_stop_replica_response(step, event)
    elif event.kind is EventKind.IsrChangeNotification:
        process_isr_change_notification(step)
    elif event.kind is EventKind.PartitionModifications:
        process_partition_modifications(step, event.topic)
    elif event.kind is EventKind.PartitionReassignment:
        partition_reassignment.process_partition_reassignment(step)
    elif event.kind is EventKind.ApiPartitionReassignment:
        if step.is_active():
            partition_reassignment.process_api_partition_reassignment(step, event.reassignments)
        else:
            step.messages.append("AlterPartitionReassignments response: NOT_CONTROLLER")
    elif event.kind is EventKind.PartitionReassignmentIsrChange:
        partition_reassignment.process_partition_reassignment_isr_change(step, event.partitions[0])
    elif event.kind is EventKind.Reelect:
        controller_failover.elect(step)
    elif event.kind is EventKind.ControlledShutdown:
        controlled_shutdown.process_controlled_shutdown(step, event)
    elif event.kind is EventKind.PreferredReplicaLeaderElection:
        preferred_replica_election.process_preferred_replica_leader_election(step)
    elif event.kind in (EventKind.ElectPreferredLeaders, EventKind.ElectUncleanLeaders):
        preferred_replica_election.process_replica_leader_election_api(
            step, event.partitions, unclean=event.kind is EventKind.ElectUncleanLeaders)
    elif event.kind is EventKind.AutoPreferredReplicaLeaderElection:
        preferred_replica_election.process_auto_preferred_replica_leader_election(step)
    elif event.kind is EventKind.LogDirEventNotification:
        process_log_dir_event_notification(step)
    elif event.kind is EventKind.LeaderAndIsrResponseReceived:
        process_leader_and_isr_response_received(step, event)
    elif event.kind is EventKind.UncleanLeaderElectionEnable:
        step.messages.append("Unclean leader election has been enabled by default")
        partition_state_machine.trigger_online_partition_state_change(step)
    elif event.kind is EventKind.AlterIsrReceived:
        process_alter_isr(step, event)
    elif event.kind is EventKind.TopicUncleanLeaderElectionEnable:
        # processTopicUncleanLeaderElectionEnable (2.1+, KAFKA-6835)
        step.messages.append(f"Unclean leader election has been enabled for topic {event.topic}")
        partition_state_machine.trigger_online_partition_state_change(step, event.topic)


def process_broker_change(step: Step) -> None:
    """``BrokerChange.process``: diff /brokers/ids against the live brokers.

    Kafka 2.2+ (KIP-380, KAFKA-7235) also compares broker epochs: an id present in both with a
    larger epoch bounced and is handled as a failure followed by a startup. Without epochs
    (bug switch KAFKA_7235, the default before 2.2) a bounce goes unnoticed.
    """
    current = dict(step.zk_brokers)
    known = dict(step.live_brokers)
    new = sorted(set(current) - set(known))
    dead = sorted(set(known) - set(current))
    if step.scenario.bug("KAFKA_7235"):
        bounced: list[int] = []
    else:
        bounced = sorted(b for b in set(current) & set(known) if current[b] > known[b])
    # ControllerChannelManager.addBroker / removeBroker: a removed broker's queue is dropped.
    for b in bounced + dead:
        step.remove_broker_channel(b)
    if new:
        step.live_brokers.update({b: current[b] for b in new})
        on_broker_startup(step, new)
    if bounced:
        for b in bounced:
            del step.live_brokers[b]
        on_broker_failure(step, bounced)
        step.live_brokers.update({b: current[b] for b in bounced})
        on_broker_startup(step, bounced)
    if dead:
        for b in dead:
            del step.live_brokers[b]
        on_broker_failure(step, dead)


def on_broker_startup(step: Step, new: list[int]) -> None:
    """``onBrokerStartup``: UpdateMetadata so that every broker learns of the new ones (2.2+, KAFKA-7537:
    live brokers only to the existing brokers, every partition to the new ones; 2.0 – 2.1: every
    partition to every live broker), then the new brokers' replicas go Online (LeaderAndIsr), offline
    partitions are elected, and deletions waiting for these brokers resume. The brokers' offline log
    directories are forgotten (``replicasOnOfflineDirs.remove``)."""
    step.replicas_on_offline_dirs = {(b, tp) for b, tp in step.replicas_on_offline_dirs if b not in new}
    if step.scenario.since("KAFKA_7537"):
        existing = sorted(step.live_or_shutting_down() - set(new))
        step.send_update_metadata_request(existing, [])
        step.send_update_metadata_request(new, sorted(step.leadership))
    else:
        step.send_update_metadata_request(sorted(step.live_or_shutting_down()), None)
    replicas = step.replicas_on_brokers(set(new))
    replica_state_machine.handle_state_changes(step, replicas, ReplicaState.OnlineReplica)
    partition_state_machine.trigger_online_partition_state_change(step)
    partition_reassignment.resume_for_started_brokers(step, new)
    queued = sorted({r[0] for r in replicas if step.is_topic_queued_up_for_deletion(r[0])})
    if queued:
        topic_deletion_manager.resume_deletion_for_topics(step, queued)


def on_broker_failure(step: Step, dead: list[int]) -> None:
    """``onBrokerFailure``: forget the brokers' offline log directories and their controlled shutdown, then
    ``onReplicasBecomeOffline`` for every replica they host."""
    step.replicas_on_offline_dirs = {(b, tp) for b, tp in step.replicas_on_offline_dirs if b not in dead}
    step.shutting_down_brokers -= set(dead)
    on_replicas_become_offline(step, step.replicas_on_brokers(set(dead)))


def on_replicas_become_offline(step: Step, replicas: list[Replica]) -> None:
    """``onReplicasBecomeOffline`` (2.3; 3.1+ with KAFKA-13225's condition for the explicit UpdateMetadata, whose
    results of ``triggerOnlinePartitionStateChange`` the model reads as the partitions it left Online; the switch
    KAFKA_13225, on before 3.1, keeps 2.3's condition)."""
    for_deletion = [r for r in replicas if step.is_topic_queued_up_for_deletion(r[0])]
    rest = [r for r in replicas if not step.is_topic_queued_up_for_deletion(r[0])]
    without_leader = [tp for tp, lai in step.leadership.items()
                      if not step.is_replica_online(lai.leader, tp) and not step.is_topic_queued_up_for_deletion(tp[0])]
    partition_state_machine.handle_state_changes(step, without_leader, PartitionState.OfflinePartition)
    electing = partition_state_machine.online_state_change_candidates(step)  # triggerOnlinePartitionStateChange's
    partition_state_machine.trigger_online_partition_state_change(step)
    replica_state_machine.handle_state_changes(step, rest, ReplicaState.OfflineReplica)
    if for_deletion:
        topic_deletion_manager.fail_replica_deletion(step, for_deletion)
    if not step.scenario.bug("KAFKA_13225"):
        # 3.1+ (KAFKA-13225, commit 3c0b89d9, KafkaController.onReplicasBecomeOffline 3.1.0): when no replica went
        # offline and no election succeeded, nothing else told the brokers of the dead ones.
        explicit = not rest and not any(step.partition_state.get(tp) is PartitionState.OnlinePartition
                                        for tp in electing)
    else:
        # 1.1 - 3.0: only when no partition had an offline leader (an election that fails sends nothing).
        explicit = not without_leader
    if explicit:
        # An UpdateMetadata tells the brokers of the dead ones (2.2+: live brokers only, KAFKA-7537;
        # 2.0 – 2.1: with every partition).
        step.send_update_metadata_request(sorted(step.live_or_shutting_down()),
                                          [] if step.scenario.since("KAFKA_7537") else None)


def process_topic_change(step: Step) -> None:
    """``TopicChange.process``: topics in ZooKeeper the controller does not know yet are created; from 2.8
    (KIP-516) ``processTopicIds`` gives them their IDs first."""
    in_zk = set(step.zk_topics)
    known = step.all_topics()
    for topic in sorted(known - in_zk):
        topic_deletion_manager.remove_topic(step, topic)
    process_topic_ids(step, sorted(in_zk - known))
    new_partitions: list[TopicPartition] = []
    for topic in sorted(in_zk - known):
        step.topics_created.append(topic)
        for p, replicas in enumerate(step.zk_topics[topic]):
            step.assignment[(topic, p)] = replicas
            new_partitions.append((topic, p))
    if new_partitions:
        on_new_partition_creation(step, new_partitions)


def process_topic_ids(step: Step, topics: list[str]) -> None:
    """``KafkaController.processTopicIds`` (KIP-516, 2.8.0; 3.9.0-rc3), for the topics TopicChange found new or,
    in ``initializeControllerContext``, every topic: with ``inter.broker.protocol.version`` 2.8 or later
    (``config.usesTopicId``) the topics whose znode has no ID get one (``zkClient.setTopicIds``, a conditional
    write of each topic znode), and every ID goes into ``ControllerContext.topicIds``.

    The model's admin writes the topic znode as ``kafka-topics.sh --zookeeper`` does
    (``AdminZkClient.createTopicWithAssignment`` with ``usesTopicId`` false, 2.8's TopicCommand), so every ID is
    written here. The write fires the topic's PartitionModifications watch, which ``processTopicChange`` and
    ``initializeControllerContext`` register first (``registerPartitionModificationsHandlers``); its
    processing finds no partition to add.

    Deviations: the ID is the topic's incarnation (see :mod:`model.zk.state.values`), not a random UUID. From
    3.0 ``kafka-topics.sh`` creates topics only through a broker (CreateTopics: ``ZkAdminManager.createTopics``
    writes the ID with the assignment); the model's admin step leaves the ID to this write, so the znode gets
    it one step later and the PartitionModifications no-op is queued, with the same ID in the context and the
    requests. Below protocol 2.8, 3.0+'s controller keeps the IDs a znode has (KAFKA-12835), which no model
    state reaches: every znode of a scenario below 2.8 has none."""
    if not step.scenario.since("KIP_516"):
        return
    for topic in topics:
        topic_id = step.zk_topic_ids.get(topic)
        if topic_id is None:
            step.controller_writes_zk(f"the write of the topic ID into /brokers/topics/{topic}")
            topic_id = 1 + step.budget.topics_recreated.count(topic)
            step.zk_topic_ids[topic] = topic_id
            step.enqueue_once(EventKind.PartitionModifications, topic=topic)
        step.topic_ids[topic] = topic_id


def on_new_partition_creation(step: Step, partitions: list[TopicPartition]) -> None:
    replicas = [(t, p, b) for (t, p) in partitions for b in step.assignment[(t, p)]]
    partition_state_machine.handle_state_changes(step, partitions, PartitionState.NewPartition)
    replica_state_machine.handle_state_changes(step, replicas, ReplicaState.NewReplica)
    partition_state_machine.handle_state_changes(step, partitions, PartitionState.OnlinePartition)
    replica_state_machine.handle_state_changes(step, replicas, ReplicaState.OnlineReplica)


def process_topic_deletion(step: Step) -> None:
    """``TopicDeletion.process``: topics named under /admin/delete_topics are queued for deletion.

    Requests for topics the controller does not know are dropped (their znodes deleted); with
    ``delete.topic.enable=false`` every request is dropped (KAFKA-3175's fix, 0.10.2; before it, with
    KAFKA_3175, the controller did not watch /admin/delete_topics at all, and the requests stayed).

    A topic with a partition being reassigned is marked ineligible before it is queued, which does nothing
    (2.0 – 2.3): its deletion starts with the reassignment in flight.
    """
    if not step.scenario.delete_topic_enable and step.scenario.bug("KAFKA_3175"):
        return
    requested = set(step.zk_delete_topics)
    non_existent = requested - step.all_topics()
    if non_existent:
        step.messages.append(f"Ignoring request to delete non-existing topics {sorted(non_existent)}")
        step.controller_writes_zk("the deletion of /admin/delete_topics children")
        step.zk_delete_topics -= non_existent
        step.enqueue_once(EventKind.TopicDeletion)
    requested -= non_existent
    if step.scenario.delete_topic_enable:
        if requested:
            # A topic with a partition being reassigned is marked ineligible, which only takes effect
            # for a topic already queued: marking comes before enqueueing (2.0 – 2.3).
            reassigning = {tp[0] for tp in step.partitions_being_reassigned}
            topic_deletion_manager.mark_topic_ineligible_for_deletion(step, sorted(requested & reassigning))
            topic_deletion_manager.enqueue_topics_for_deletion(step, sorted(requested))
    elif requested:
        step.messages.append(f"Removing {sorted(requested)} since delete topic is disabled")
        step.controller_writes_zk("the deletion of /admin/delete_topics children")
        step.zk_delete_topics -= requested
        step.enqueue_once(EventKind.TopicDeletion)


def process_topic_deletion_stop_replica_response(step: Step, event: ControllerEvent) -> None:
    """``TopicDeletionStopReplicaResponseReceived.process`` (2.3: one event per response, for every
    partition it answered): replicas in error fail their deletion, then the others complete."""
    replicas = [(t, p, event.broker) for t, p in event.partitions]
    if event.error:
        topic_deletion_manager.fail_replica_deletion(step, replicas)
    else:
        topic_deletion_manager.complete_replica_deletion(step, replicas)


def process_isr_change_notification(step: Step) -> None:
    """``IsrChangeNotification.process`` (2.3): read the partitions named under /isr_change_notification,
    refresh the controller's cached leader/ISR from their znodes (``updateLeaderAndIsrCache``, which
    takes whatever ZooKeeper holds, controller epoch included), send UpdateMetadata for them to every
    live broker, and delete the notifications read."""
    partitions = sorted(step.zk_isr_change_notifications)
    if not partitions:
        return
    step.controller_writes_zk("the deletion of /isr_change_notification children")
    step.zk_isr_change_notifications.clear()
    for tp in partitions:
        znode = step.zk_partitions.get(tp)
        if znode is not None:
            step.leadership[tp] = znode
    step.send_update_metadata_request(sorted(step.live_or_shutting_down()), partitions)


def process_partition_modifications(step: Step, topic: str) -> None:
    """``PartitionModifications.process``: /brokers/topics/<topic> changed. Partitions ZooKeeper lists
    and the controller does not know are created (``onNewPartitionCreation``), unless the topic is
    queued for deletion: then 2.0+ (KAFKA-6612) rewrite the znode without them
    (``restorePartitionReplicaAssignment``), and 1.1 (KAFKA_6612) only logs and skips them.

    Deviation: Kafka's restore keeps the partitions that have a ``/partitions/<p>`` znode, which the
    controller creates with their first leader; the model keeps the partitions the controller knows.
    They differ only for a partition that never had a live replica, which the model could not write
    as a gap in the assignment.
    """
    in_zk = step.zk_topics.get(topic, ())
    to_add = {(topic, p): reps for p, reps in enumerate(in_zk) if not step.assignment.get((topic, p))}
    if step.is_topic_queued_up_for_deletion(topic):
        if not to_add:
            step.messages.append("Ignoring partition change during topic deletion as no new partitions are added")
            return
        step.messages.append(f"Skipping adding partitions {sorted(p for _, p in to_add)} for topic {topic} since "
                             "it is currently being deleted")
        if not step.scenario.bug("KAFKA_6612"):
            known = step.partitions_for_topic(topic)
            step.controller_writes_zk(f"the write of /brokers/topics/{topic}")
            step.zk_topics[topic] = tuple(in_zk[p] for _, p in known)
            step.additions_reverted.append(topic)
            step.topic_znode_written(topic)
        return
    if to_add:
        step.assignment.update(to_add)
        step.partitions_added.extend(sorted(to_add))
        on_new_partition_creation(step, sorted(to_add))


def process_log_dir_event_notification(step: Step) -> None:
    """``LogDirEventNotification.process`` and ``onBrokerLogDirFailure`` (2.3): read the brokers named under
    /log_dir_event_notification, delete the notifications, and move every replica on those brokers to
    OnlineReplica, whose LeaderAndIsr requests the brokers answer with KAFKA_STORAGE_ERROR for the
    partitions on a failed directory (``LeaderAndIsrResponseReceived``)."""
    brokers = sorted(step.zk_log_dir_event_notifications)
    if not brokers:
        return
    step.controller_writes_zk("the deletion of /log_dir_event_notification children")
    step.zk_log_dir_event_notifications.clear()
    step.messages.append(f"Handling log directory failure for brokers {','.join(map(str, brokers))}")
    replica_state_machine.handle_state_changes(step, step.replicas_on_brokers(set(brokers)),
                                               ReplicaState.OnlineReplica)


def process_leader_and_isr_response_received(step: Step, event: ControllerEvent) -> None:
    """``processLeaderAndIsrResponseReceived`` (2.3): the broker's ``replicasOnOfflineDirs`` becomes
    ``previous -- onlineReplicas ++ offlineReplicas`` (answered NONE, answered KAFKA_STORAGE_ERROR); the replicas
    new there go through ``onReplicasBecomeOffline``."""
    previous = {tp for b, tp in step.replicas_on_offline_dirs if b == event.broker}
    current = (previous - set(event.online_partitions)) | set(event.partitions)
    new = [tp for tp in event.partitions if tp not in previous]
    step.replicas_on_offline_dirs = ({(b, tp) for b, tp in step.replicas_on_offline_dirs if b != event.broker}
                                     | {(event.broker, tp) for tp in current})
    if new:
        step.messages.append(f"Mark replicas {', '.join(f'{t}-{p}' for t, p in new)} on broker {event.broker} "
                             "as offline")
        on_replicas_become_offline(step, [(t, p, event.broker) for t, p in sorted(new)])


def _alter_partition_refused(step: Step, tp: TopicPartition, proposed: LeaderAndIsr) -> LeaderAndIsr | str | None:
    """The per-partition checks of :func:`process_alter_isr`, in the order of the scenario's version: the answer
    without a write (an error, or the current state when it is already the desired one), or None to write."""
    v3_3 = step.scenario.since("TRY_PROCESS_ALTER_PARTITION")
    leader_recovery = step.scenario.since("KIP_704")
    current = step.leadership.get(tp)
    if current is None:
        return "UNKNOWN_TOPIC_OR_PARTITION"
    if leader_recovery and not v3_3 and _invalid_leader_recovery(current, proposed):
        return "INVALID_REQUEST"  # 3.2.0's processAlterPartition checks it first
    if v3_3 and (proposed.zk_version > current.zk_version or proposed.leader_epoch > current.leader_epoch):
        return "NOT_CONTROLLER"
    if proposed.leader_epoch < current.leader_epoch:
        return "FENCED_LEADER_EPOCH"
    if step.scenario.bug("KAFKA_14144") and proposed.zk_version < current.zk_version:
        return "INVALID_UPDATE_VERSION"  # #12032's order (KAFKA_14144)
    if ((proposed.leader, proposed.leader_epoch, proposed.isr, proposed.leader_recovery_state)
            == (current.leader, current.leader_epoch, current.isr, current.leader_recovery_state)):
        return current  # equalsIgnoreZk: already in the desired state
    if v3_3 and proposed.zk_version != current.zk_version:
        return "INVALID_UPDATE_VERSION"
    if leader_recovery and v3_3 and _invalid_leader_recovery(current, proposed):
        return "INVALID_REQUEST"
    if (not step.scenario.bug("KAFKA_14140")
            and set(proposed.isr) - (set(step.live_brokers) - step.shutting_down_brokers)):
        # AlterPartition version 2+ (topic IDs: inter.broker.protocol.version >= 2.8) from a 3.3+ broker
        return "INELIGIBLE_REPLICA" if v3_3 and step.scenario.since("KIP_516") else "OPERATION_NOT_ATTEMPTED"
    return None


def _invalid_leader_recovery(current: LeaderAndIsr, proposed: LeaderAndIsr) -> bool:
    """KIP-704's checks of an AlterPartition (``KafkaController.processAlterPartition`` 3.2.0,
    ``tryProcessAlterPartition`` 3.3.0 – 3.9): a leader still RECOVERING cannot add a replica to the ISR, and a
    RECOVERED partition cannot become RECOVERING again."""
    recovering = proposed.leader_recovery_state is LeaderRecoveryState.RECOVERING
    return (recovering and len(proposed.isr) > 1) or (
        recovering and current.leader_recovery_state is LeaderRecoveryState.RECOVERED)


def process_alter_isr(step: Step, event: ControllerEvent) -> None:
    """``KafkaController.processAlterIsr`` (2.7.0 – 3.2; ``tryProcessAlterPartition`` from 3.3, KIP-497 with
    ``inter.broker.protocol.version`` ≥ 2.7-IV2): a leader's AlterIsr.

    A controller that is not active answers NOT_CONTROLLER, a broker the controller does not know live with this
    epoch STALE_BROKER_EPOCH (both top-level: the leader re-sends, :func:`partition_leader.handle_alter_isr_error`).
    Per partition, against the controller's ``partitionLeadershipInfo``: none, UNKNOWN_TOPIC_OR_PARTITION; an older
    leader epoch, FENCED_LEADER_EPOCH; the same leader, leader epoch and ISR, the current state as the answer (no
    write). Otherwise ``KafkaZkClient.updateLeaderAndIsr`` writes the request's LeaderAndIsr conditional on its
    ``currentIsrVersion`` (BADVERSION: INVALID_UPDATE_VERSION), the controller's cache takes what was written
    (``updateLeaderAndIsrCache``), and every live or shutting-down broker gets an UpdateMetadata for every
    partition of the request; no LeaderAndIsr is sent, the leader learns the new version from the answer
    (:func:`partition_leader.handle_alter_isr_response`). After answering, a successful partition under
    reassignment may complete it (``maybeCompleteReassignment``).

    From 3.3 (``tryProcessAlterPartition``, gate ``TRY_PROCESS_ALTER_PARTITION``): a leader epoch or partition epoch
    ahead of the controller's is answered NOT_CONTROLLER (the leader re-sends; KAFKA-14154, commit 36ff5d5c98f), a
    differing partition epoch INVALID_UPDATE_VERSION before any write, after the check for the desired state
    (KAFKA-14144, commit 9fda5fcac6b, 3.3.0: a re-sent request the controller applied is answered with the current
    state). With the switch ``KAFKA_14144`` an older partition epoch is answered INVALID_UPDATE_VERSION before that
    check (the order of #12032, commit 25ee7f147c8, on trunk and the 3.3 branch from April to August 2022, in no
    release tag): a leader re-sending a request whose answer it lost gives up and keeps its pending ISR until a
    LeaderAndIsr. The switch applies at every version.

    KAFKA-14140 (3.3.0, commit af40e119784, KIP-841's ZooKeeper port): a new ISR naming a broker that is not live or
    is shutting down (``liveBrokerIds``) is answered INELIGIBLE_REPLICA (OPERATION_NOT_ATTEMPTED for an
    AlterPartition before version 2), after the checks above. 3.3's ``AlterPartitionManager.buildRequest`` sends
    version 2 or later whenever ``inter.broker.protocol.version`` has topic IDs (2.8 and later, ``canUseTopicIds``)
    and every partition of the request has one; the model's leader always has its topic's ID at those protocols
    (it leads through a LeaderAndIsr v5, which carries it), so the version follows from the protocol. Before 3.3
    the switch ``KAFKA_14140`` is on and the controller writes such an ISR; with it off before 3.3 the model checks
    in 2.7's ``processAlterIsr`` before its write (no release did) and answers OPERATION_NOT_ATTEMPTED, after which
    the leader returns to its committed ISR (3.3's ``handleAlterPartitionError``).

    With ``step.alter_isr_answer_lost`` (the explorer's choice, ``[bounds] alter_isr_answers_lost``) the answer to the
    per-partition checks never reaches the leader, which sends the same request again
    (:func:`partition_leader.alter_isr_answer_lost`); what the controller wrote and sent stays.

    KIP-704 (3.2.0, commit 52621613fd3, gate ``KIP_704``: ``inter.broker.protocol.version`` 3.2-IV0 and later): the
    request carries the leader's recovery state, which the controller writes with the ISR (a RECOVERED request
    ends the RECOVERING an unclean election wrote), and compares in the check for the desired state
    (``equalsIgnoreZk``, ``equalsAllowStalePartitionEpoch`` from 3.3); it answers INVALID_REQUEST to a RECOVERING
    request whose ISR names more than the leader and to a RECOVERING request for a RECOVERED partition
    (:func:`_invalid_leader_recovery`): in 3.2's ``processAlterPartition`` before every other per-partition check, in
    3.3's ``tryProcessAlterPartition`` after INVALID_UPDATE_VERSION and before KAFKA-14140's. The leader gives up
    on INVALID_REQUEST (``Partition.handleAlterPartitionError``). No modelled leader sends RECOVERING
    (``Partition.makeLeader`` marks the partition RECOVERED, :mod:`model.zk.environment.partition_leader`), so these
    answers are Kafka's guard, never given in the model's runs. Below 3.2-IV0 a request and every znode are
    RECOVERED, and the checks change nothing.

    Deviations: a request carries one partition (AlterIsrManager's batching is not modelled); the answer reaches
    the leader within the controller's step. A partition-state znode gone while the controller still caches it is
    answered INVALID_UPDATE_VERSION (Kafka: the NONODE error, UNKNOWN_SERVER_ERROR, and a re-send).
    """
    if not step.is_active():
        partition_leader.handle_alter_isr_error(step, event, "NOT_CONTROLLER")
        return
    if step.live_brokers.get(event.broker) != event.request_epoch:
        partition_leader.handle_alter_isr_error(step, event, "STALE_BROKER_EPOCH")
        return
    results: dict[TopicPartition, LeaderAndIsr | str] = {}
    for tp, proposed in event.isrs_to_alter:
        refused = _alter_partition_refused(step, tp, proposed)
        if refused is not None:
            results[tp] = refused
        else:
            old = step.zk_partitions.get(tp)
            written = kafka_zk_client.update_isr(step, tp, proposed)
            if written is None:
                results[tp] = "INVALID_UPDATE_VERSION"
            else:
                assert old is not None
                results[tp] = written
                step.leadership[tp] = written
                step.isr_updates.append((tp, proposed.leader, old.isr, written.isr))
    step.send_update_metadata_request(sorted(step.live_or_shutting_down()), [tp for tp, _ in event.isrs_to_alter])
    if step.alter_isr_answer_lost:
        partition_leader.alter_isr_answer_lost(step, event)
    else:
        for tp, result in results.items():
            partition_leader.handle_alter_isr_response(step, event, tp, result)
    for tp, result in results.items():
        if not isinstance(result, str) and tp in step.partitions_being_reassigned:
            partition_reassignment.process_partition_reassignment_isr_change_kip_455(step, tp)
