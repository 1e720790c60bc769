"""Partition reassignment before KIP-455: ``controller/KafkaController.scala`` 2.3.0 (same steps 2.0 – 2.3).

An admin writes ``/admin/reassign_partitions`` (``kafka-reassign-partitions.sh --execute``); its
creation fires the ``PartitionReassignment`` event, which records each target replica list (RAR)
in ``partitionsBeingReassigned`` and runs ``maybeTriggerPartitionReassignment``. For each partition
``onPartitionReassignment`` then takes the steps of Kafka's comment (OAR = original assignment,
AR = current assignment):

* RAR not all in the ISR (ZooKeeper's): 1. AR := OAR ∪ RAR in the context and ZooKeeper;
  2. bump the leader epoch in ZooKeeper and send LeaderAndIsr (with AR) to every replica of AR;
  3. RAR − OAR → NewReplica. Then wait: every write of the partition-state znode fires
  ``PartitionReassignmentIsrChange``, which resumes when RAR ⊆ ISR.
* RAR all in the ISR: 5. RAR → OnlineReplica; 6. AR := RAR in memory; 7. elect a leader in RAR if
  the leader is not in RAR or dead (``ReassignPartitionLeaderElectionStrategy``), else bump the
  epoch and send LeaderAndIsr with AR = RAR; 8. OAR − RAR → OfflineReplica (out of the ISR);
  9. → ReplicaDeletionStarted → ReplicaDeletionSuccessful → NonExistentReplica (success assumed,
  StopReplica(delete=true) sent); 10. AR := RAR in ZooKeeper; 11. remove the partition from
  ``/admin/reassign_partitions`` (delete the znode when none is left); 12. UpdateMetadata; then
  ``resumeDeletionForTopics``.

A reassignment waits while a target replica's broker is down (it cannot join the ISR) and
``onBrokerStartup`` runs ``onPartitionReassignment`` again for the partitions whose RAR names a
starting broker.

Kafka 2.3.0's behaviour is modelled as it is, including what later releases fixed:
``updateLeaderEpochAndSendRequest`` does not put the bumped leader epoch into the controller's
cache, so the UpdateMetadata of the same batch and later requests built from the cache carry the
older epoch (KAFKA-9212, fixed in 2.4.0); a request to delete a topic being reassigned marks it
ineligible only if it is already queued, so the deletion of a topic with a reassignment in flight
starts at once (``TopicDeletion.process`` calls ``markTopicIneligibleForDeletion`` before
``enqueueTopicsForDeletion``); ``ControllerContext.removeTopic`` leaves ``partitionsBeingReassigned``
alone, so a reassignment of a deleted topic stays in the context and in the znode.

Errors: ``onPartitionReassignment`` throws where Kafka does (``IllegalStateException`` when the
topic znode or the partition-state znode is gone, ``StateChangeFailedException`` for a newer
controller epoch in the znode, ``NoSuchElementException`` without leadership information):
:class:`ControllerError`. ``maybeTriggerPartitionReassignment`` catches it and drops the partition
from the reassignment; anywhere else it ends the event ("Uncaught error processing event"), and
what the event changed before stays changed.

Deviation: Kafka builds OAR ∪ RAR and RAR − OAR as Scala sets; the model keeps their insertion
order (RAR first), which is Scala's order for sets of up to four brokers.
"""

from __future__ import annotations

from collections.abc import Sequence

from model.zk.controller import partition_state_machine, replica_state_machine, topic_deletion_manager
from model.zk.controller.kafka_zk_client import update_leader_and_isr
from model.zk.state.states import PartitionState, ReplicaState
from model.zk.state.step import ControllerError, ControllerMovedException, Step
from model.zk.state.values import ControllerEvent, EventKind, LeaderAndIsr, TopicPartition

R = ReplicaState


def process_partition_reassignment(step: Step) -> None:
    """``PartitionReassignment.process``: if the znode exists, record every partition's target replicas
    in ``partitionsBeingReassigned`` first, then trigger them (the watch is re-armed either way).

    Before KAFKA-6193's fix (1.1.0), with KAFKA_6193, the partitions not yet in the context were recorded
    and triggered one at a time (``initiateReassignReplicasForTopicPartition``): one removed from the
    reassignment rewrote /admin/reassign_partitions from a context that held only the partitions before it.
    """
    if not step.zk_reassign_partitions:
        return
    if step.scenario.bug("KAFKA_6193"):
        for tp, target in sorted(step.zk_reassign_partitions.items()):
            if tp not in step.partitions_being_reassigned:
                _initiate_reassign_before_kafka_6193(step, tp, target)
        return
    for tp, target in sorted(step.zk_reassign_partitions.items()):
        step.partitions_being_reassigned[tp] = target
    maybe_trigger_partition_reassignment(step, sorted(step.zk_reassign_partitions))


def _initiate_reassign_before_kafka_6193(step: Step, tp: TopicPartition, target: tuple[int, ...]) -> None:
    """``initiateReassignReplicasForTopicPartition`` (1.0): the partition joins ``partitionsBeingReassigned``
    only when it is started; one that is skipped is removed from the znode at once."""
    name = f"{tp[0]}-{tp[1]}"
    assigned = step.assignment.get(tp, ())
    if step.is_topic_queued_up_for_deletion(tp[0]):
        problem = f"Skipping reassignment of {name} since the topic is currently being deleted"
    elif not assigned:
        problem = f"Attempt to reassign partition {name} that doesn't exist"
    elif assigned == target:
        problem = (f"Partition {name} to be reassigned is already assigned to replicas {list(target)}. Ignoring "
                   "request for partition reassignment")
    else:
        problem = _dead_targets(step, tp, target)
    if not problem:
        step.partitions_being_reassigned[tp] = target
        topic_deletion_manager.mark_topic_ineligible_for_deletion(step, [tp[0]])
        try:
            on_partition_reassignment(step, tp, target)
            return
        except ControllerMovedException:
            raise
        except ControllerError as e:
            problem = str(e)
    step.messages.append(f"Error completing reassignment of partition {name}: {problem}")
    remove_partitions_from_reassigned_partitions(step, [tp])


def initialize_partition_reassignment_before_kafka_6193(step: Step) -> None:
    """``initializePartitionReassignment`` before 1.1 (KAFKA_6193): partitions of /admin/reassign_partitions whose
    reassignment is done (or whose topic is gone) are removed from the znode *before* the others are recorded
    in the (empty) context, so the first removal deletes the znode with every other partition in it."""
    done = [tp for tp, target in sorted(step.zk_reassign_partitions.items())
            if step.assignment.get(tp) in (None, target)]
    for tp in done:
        remove_partitions_from_reassigned_partitions(step, [tp])
    step.partitions_being_reassigned.update(
        {tp: target for tp, target in step.zk_reassign_partitions.items() if tp not in done})


def _dead_targets(step: Step, tp: TopicPartition, target: tuple[int, ...]) -> str:
    """Before KAFKA-4214's fix (0.10.1), with KAFKA_4214: a reassignment is failed when one of its target
    replicas is not alive as the controller starts it."""
    if not step.scenario.bug("KAFKA_4214"):
        return ""
    alive = [r for r in target if step.is_replica_online(r, tp)]
    if alive == list(target):
        return ""
    return (f"KafkaException: Only {','.join(map(str, alive))} replicas out of the new set of replicas "
            f"{','.join(map(str, target))} for partition {tp[0]}-{tp[1]} to be reassigned are alive. Failing "
            "partition reassignment")


def maybe_trigger_partition_reassignment(step: Step, partitions: Sequence[TopicPartition]) -> None:
    """``maybeTriggerPartitionReassignment``: skip (and drop from the znode) partitions of topics
    queued for deletion, partitions that do not exist and those already on their target; start the
    others, marking their topic ineligible for deletion (a no-op unless it is already queued)."""
    removed: list[TopicPartition] = []
    for tp in partitions:
        name = f"{tp[0]}-{tp[1]}"
        if step.is_topic_queued_up_for_deletion(tp[0]):
            step.messages.append(f"Skipping reassignment of {name} since the topic is currently being deleted")
            removed.append(tp)
            continue
        target = step.partitions_being_reassigned[tp]
        assigned = step.assignment.get(tp, ())
        if not assigned:
            step.messages.append(f"Ignoring request to reassign partition {name} that doesn't exist.")
            removed.append(tp)
        elif assigned == target:
            step.messages.append(f"Partition {name} to be reassigned is already assigned to replicas "
                                 f"{list(target)}. Ignoring request for partition reassignment.")
            removed.append(tp)
        elif _dead_targets(step, tp, target):
            step.messages.append(f"Error completing reassignment of partition {name}: "
                                 f"{_dead_targets(step, tp, target)}")
            removed.append(tp)
        else:
            topic_deletion_manager.mark_topic_ineligible_for_deletion(step, [tp[0]])
            try:
                on_partition_reassignment(step, tp, target)
            except ControllerMovedException:
                raise
            except ControllerError as e:
                step.messages.append(f"Error completing reassignment of partition {name}: {e}")
                removed.append(tp)
    remove_partitions_from_reassigned_partitions(step, removed)


def on_partition_reassignment(step: Step, tp: TopicPartition, target: tuple[int, ...]) -> None:
    """``onPartitionReassignment`` (steps 1–3, or 4–12 once every target replica is in the ISR)."""
    if not are_replicas_in_isr(step, tp, target):
        assigned = step.assignment.get(tp, ())
        new_replicas = [r for r in target if r not in assigned]  # RAR -- OAR
        new_and_old = tuple(dict.fromkeys((*target, *assigned)))  # (RAR ++ OAR).toSet
        update_assigned_replicas_for_partition(step, tp, new_and_old)  # 1
        update_leader_epoch_and_send_request(step, tp, step.assignment[tp], new_and_old)  # 2
        for r in new_replicas:  # 3
            replica_state_machine.handle_state_changes(step, [(tp[0], tp[1], r)], R.NewReplica)
        step.messages.append(f"Waiting for new replicas {list(target)} for partition {tp[0]}-{tp[1]} being "
                             "reassigned to catch up with the leader")
        return
    old = [r for r in step.assignment.get(tp, ()) if r not in target]  # OAR -- RAR
    for r in target:  # 5
        replica_state_machine.handle_state_changes(step, [(tp[0], tp[1], r)], R.OnlineReplica)
    move_reassigned_partition_leader_if_required(step, tp, target)  # 6, 7
    stop_old_replicas_of_reassigned_partition(step, tp, old)  # 8, 9
    update_assigned_replicas_for_partition(step, tp, target)  # 10
    remove_partitions_from_reassigned_partitions(step, [tp])  # 11
    step.send_update_metadata_request(sorted(step.live_or_shutting_down()), [tp])  # 12
    step.reassignments_completed.append(tp)
    topic_deletion_manager.resume_deletion_for_topics(step, [tp[0]])


def process_partition_reassignment_isr_change(step: Step, tp: TopicPartition) -> None:
    """``PartitionReassignmentIsrChange.process``: resume the reassignment once ZooKeeper's ISR holds
    every target replica."""
    target = step.partitions_being_reassigned.get(tp)
    if target is None:
        return
    znode = step.zk_partitions.get(tp)
    if znode is None:
        step.messages.append(f"Error handling reassignment of partition {tp[0]}-{tp[1]} to replicas "
                             f"{list(target)} as it was never created")
        return
    if set(target) <= set(znode.isr):
        on_partition_reassignment(step, tp, target)
    else:
        step.messages.append(f"Replica(s) {sorted(set(target) - set(znode.isr))} of {tp[0]}-{tp[1]} still need "
                             "to catch up")


def resume_for_started_brokers(step: Step, new: Sequence[int]) -> None:
    """The part of ``onBrokerStartup`` that restarts reassignments whose target names a new broker."""
    for tp, target in sorted(step.partitions_being_reassigned.items()):
        if any(r in new for r in target) and tp in step.partitions_being_reassigned:
            on_partition_reassignment(step, tp, target)


def are_replicas_in_isr(step: Step, tp: TopicPartition, replicas: Sequence[int]) -> bool:
    znode = step.zk_partitions.get(tp)
    return znode is not None and all(r in znode.isr for r in replicas)


def update_assigned_replicas_for_partition(step: Step, tp: TopicPartition, replicas: tuple[int, ...]) -> None:
    """``updateAssignedReplicasForPartition``: the context first, then the topic znode, written with
    every partition of the topic as the *context* knows them (``setTopicAssignmentRaw``)."""
    step.assignment[tp] = replicas
    topic = tp[0]
    if topic not in step.zk_topics:
        raise ControllerError(f"IllegalStateException: Topic {topic} doesn't exist")
    known = step.partitions_for_topic(topic)
    step.controller_writes_zk(f"the write of /brokers/topics/{topic}")
    step.zk_topics[topic] = tuple(step.assignment[p] for p in known)
    step.topic_znode_written(topic)


def update_leader_epoch(step: Step, tp: TopicPartition) -> LeaderAndIsr:
    """``updateLeaderEpoch``: re-read the znode and write it back with leader epoch + 1, until the
    conditional write succeeds. The controller's cache is *not* updated before 2.4 (KAFKA_9212); without the
    switch it is (2.4.0, KAFKA-9212's fix)."""
    while True:
        read = step.zk_partitions.get(tp)
        if read is None:
            raise ControllerError(f"IllegalStateException: Cannot update leader epoch for partition {tp[0]}-{tp[1]} "
                                  "as leaderAndIsr path is empty.")
        if read.controller_epoch > step.epoch:
            raise ControllerError("StateChangeFailedException: Leader and isr path written by another controller.")
        written = update_leader_and_isr(step, tp, read, read.leader, read.isr)
        if written is not None:
            if not step.scenario.bug("KAFKA_9212"):
                step.leadership[tp] = written
            return written


def update_leader_epoch_and_send_request(step: Step, tp: TopicPartition, recipients: Sequence[int],
                                         new_assigned: tuple[int, ...]) -> None:
    """``updateLeaderEpochAndSendRequest``: LeaderAndIsr with the bumped epoch and ``new_assigned``
    (its UpdateMetadata is built from the controller's cache, which still has the older epoch)."""
    lai = update_leader_epoch(step, tp)
    step.add_leader_and_isr_request(recipients, tp, lai, new_assigned, is_new=False)
    step.send_requests_to_brokers()


def move_reassigned_partition_leader_if_required(step: Step, tp: TopicPartition, target: tuple[int, ...]) -> None:
    """``moveReassignedPartitionLeaderIfRequired`` (steps 6 and 7)."""
    cached = step.partition_leadership_info(tp)
    old_and_new = step.assignment[tp]
    step.assignment[tp] = target
    if cached.leader not in target or not step.is_replica_online(cached.leader, tp):
        partition_state_machine.handle_state_changes(step, [tp], PartitionState.OnlinePartition,
                                                     partition_state_machine.REASSIGN)
    else:
        update_leader_epoch_and_send_request(step, tp, old_and_new, target)


def stop_old_replicas_of_reassigned_partition(step: Step, tp: TopicPartition, old: Sequence[int]) -> None:
    """``stopOldReplicasOfReassignedPartition`` (steps 8 and 9): the removed replicas go offline (out
    of the ISR), then through the deletion states, their success assumed."""
    replicas = [(tp[0], tp[1], r) for r in old]
    for target in (R.OfflineReplica, R.ReplicaDeletionStarted, R.ReplicaDeletionSuccessful, R.NonExistentReplica):
        replica_state_machine.handle_state_changes(step, replicas, target)


def remove_partitions_from_reassigned_partitions(step: Step, removed: Sequence[TopicPartition]) -> None:
    """``removePartitionsFromReassignedPartitions``: rewrite the znode without them, or delete it (and
    queue ``PartitionReassignment`` to re-arm its watch) when nothing is left."""
    remaining = {tp: target for tp, target in step.partitions_being_reassigned.items() if tp not in removed}
    step.controller_writes_zk("the write of /admin/reassign_partitions")
    if not remaining:
        step.zk_reassign_partitions.clear()
        step.events.append(ControllerEvent(EventKind.PartitionReassignment))
    else:
        step.zk_reassign_partitions = dict(remaining)
    for tp in removed:
        step.partitions_being_reassigned.pop(tp, None)

