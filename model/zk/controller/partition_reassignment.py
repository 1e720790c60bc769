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

From Kafka 2.4 (KIP-455, gate ``KIP_455``) the functions of the section "KIP-455" below take over: the
controller's own reassignment state, the AlterPartitionReassignments request beside the znode, cancellation
and replacement.

Deviation: Kafka builds OAR ∪ RAR and RAR − OAR as Scala sets; the model keeps their insertion
order (RAR first), which is Scala's order for sets of up to four brokers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

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
    if step.scenario.since("KIP_455"):
        process_zk_partition_reassignment(step)
        return
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
        update_leader_epoch_and_send_request(step, tp, step.assignment[tp], new_and_old, new_replicas)  # 2
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
    every target replica. From 2.4 (KIP-455): :func:`process_partition_reassignment_isr_change_kip_455`."""
    if step.scenario.since("KIP_455"):
        process_partition_reassignment_isr_change_kip_455(step, tp)
        return
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
    """The part of ``onBrokerStartup`` that restarts reassignments whose target names a new broker (from 2.4,
    ``maybeResumeReassignments`` with the targets of the context's ``ReplicaAssignment``)."""
    if step.scenario.since("KIP_455"):
        started = set(new)
        maybe_resume_reassignments(step, lambda tp, ra: any(r in started for r in ra.target_replicas))
        return
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
                                         new_assigned: tuple[int, ...], adding: Sequence[int] = ()) -> None:
    """``updateLeaderEpochAndSendRequest``: LeaderAndIsr with the bumped epoch and ``new_assigned``
    (its UpdateMetadata is built from the controller's cache, which still has the older epoch), ``isNew`` false
    for every recipient (1.1 - 2.6).

    Switch ``KAFKA_10314`` off (its fix, 2.7.0, commit 23cade85067): ``isNew`` false for the recipients but the
    ``adding`` replicas, true for those, so that a broker with an offline log directory creates their log in a
    good one (with false it refuses, KafkaStorageException, and marks the partition offline). Kafka's fix is in
    KIP-455's ``updateLeaderEpochAndSendRequest`` (origin replicas, then adding replicas); with the switch off
    before 2.4 the model applies it to 2.3's step 2 alike (RAR - OAR adding), which no release did."""
    lai = update_leader_epoch(step, tp)
    if step.scenario.bug("KAFKA_10314"):
        step.add_leader_and_isr_request(recipients, tp, lai, new_assigned, is_new=False)
    else:
        step.add_leader_and_isr_request([r for r in recipients if r not in adding], tp, lai, new_assigned,
                                        is_new=False)
        step.add_leader_and_isr_request([r for r in recipients if r in adding], tp, lai, new_assigned, is_new=True)
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



# ---------------------------------------------------------------------------------------------
# KIP-455 (KAFKA-8345), Kafka 2.4 – 3.9: controller/KafkaController.scala and ControllerContext.scala 2.4.0, with
# KAFKA-9089's fix (in 2.4.0). The methods below are unchanged at 3.9.0-rc3 but for KAFKA-10149 (the auto
# rebalance, preferred_replica_election.py), KIP-497's AlterIsr (refused: versions.py) and KAFKA-10314 (2.7, the
# broker's placement of a new replica's log, which the model does not represent: it has one log per partition).
#
# The controller keeps a ``ReplicaAssignment`` per partition: the full replica set RS (``assignment``, target
# replicas first, then the original ones not in the target), addingReplicas AR = TRS − ORS and removingReplicas
# RR = ORS − TRS (``adding_replicas``, ``removing_replicas``, non-empty lists only), and writes all three to the
# topic znode (TopicZNode version 2) before its memory. ``partitionsBeingReassigned`` is a set of partitions in
# Kafka; the model keeps, as its value, the partition's targetReplicas when it joined (its views and properties
# read it) and reads the targets from the ReplicaAssignment, as Kafka does.
#
# Deviations: Kafka's ``Map`` and ``Set`` iterations (the partitions of a request, of partitionsBeingReassigned)
# are in an order of Scala's hashing; the model takes them sorted. The LeaderAndIsr request (v3) also carries
# addingReplicas and removingReplicas, which 2.4's brokers use for metrics and throttles only: the model's request
# carries the full replica set alone. The AlterPartitionReassignments response is not modelled (no property reads
# it): its errors are the step's messages.
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class ReplicaAssignment:
    """``ControllerContext.ReplicaAssignment`` (2.4): ``replicas`` is the full set RS during a reassignment."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    @property
    def origin_replicas(self) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in self.adding_replicas)

    @property
    def target_replicas(self) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in self.removing_replicas)

    @property
    def is_being_reassigned(self) -> bool:
        return bool(self.adding_replicas or self.removing_replicas)

    def reassign_to(self, target: Sequence[int]) -> ReplicaAssignment:
        """``reassignTo``: ``fromOldAndNewReplicas(originReplicas, target)``: RS = (TRS ++ ORS).distinct,
        AR = RS diff ORS, RR = RS diff TRS."""
        origin = self.origin_replicas
        full = tuple(dict.fromkeys((*target, *origin)))
        return ReplicaAssignment(full, tuple(r for r in full if r not in origin),
                                 tuple(r for r in full if r not in target))

    def describe(self) -> str:
        return (f"ReplicaAssignment(replicas={','.join(map(str, self.replicas))}, addingReplicas="
                f"{','.join(map(str, self.adding_replicas))}, removingReplicas="
                f"{','.join(map(str, self.removing_replicas))})")


def partition_full_replica_assignment(step: Step, tp: TopicPartition) -> ReplicaAssignment:
    """``ControllerContext.partitionFullReplicaAssignment``: empty for a partition the context does not know."""
    return ReplicaAssignment(step.assignment.get(tp, ()), step.adding_replicas.get(tp, ()),
                             step.removing_replicas.get(tp, ()))


def update_partition_full_replica_assignment(step: Step, tp: TopicPartition, ra: ReplicaAssignment) -> None:
    """``ControllerContext.updatePartitionFullReplicaAssignment``."""
    step.assignment[tp] = ra.replicas
    _put_or_drop(step.adding_replicas, tp, ra.adding_replicas)
    _put_or_drop(step.removing_replicas, tp, ra.removing_replicas)


def _put_or_drop(table: dict[TopicPartition, tuple[int, ...]], tp: TopicPartition, replicas: tuple[int, ...]) -> None:
    if replicas:
        table[tp] = replicas
    else:
        table.pop(tp, None)


def update_replica_assignment_for_partition(step: Step, tp: TopicPartition, ra: ReplicaAssignment) -> None:
    """``updateReplicaAssignmentForPartition`` (2.4): ``setTopicAssignmentRaw`` of the topic znode with every
    partition's ReplicaAssignment as the context knows it, ``tp``'s replaced by ``ra``; NONODE is an
    IllegalStateException. The context is not changed here (its caller updates it after)."""
    topic = tp[0]
    if topic not in step.zk_topics:
        raise ControllerError(f"IllegalStateException: Failed to update assignment for {tp[0]}-{tp[1]} since the "
                              "topic has no current assignment")
    known = sorted({*step.partitions_for_topic(topic), tp})
    step.controller_writes_zk(f"the write of /brokers/topics/{topic}")
    full = {p: (ra if p == tp else partition_full_replica_assignment(step, p)) for p in known}
    step.zk_topics[topic] = tuple(full[p].replicas for p in known)
    for p in known:
        _put_or_drop(step.zk_adding_replicas, p, full[p].adding_replicas)
        _put_or_drop(step.zk_removing_replicas, p, full[p].removing_replicas)
    step.topic_znode_written(topic)


def forget_topic_reassignment_state(step: Step, topic: str) -> None:
    """The topic znode's and the context's adding and removing replicas go with the topic
    (``KafkaZkClient.deleteTopicZNode``, ``ControllerContext.removeTopic``'s ``partitionAssignments.remove``)."""
    for table in (step.zk_adding_replicas, step.zk_removing_replicas, step.adding_replicas, step.removing_replicas):
        for tp in [tp for tp in table if tp[0] == topic]:
            del table[tp]


def process_zk_partition_reassignment(step: Step) -> list[TopicPartition]:
    """``processZkPartitionReassignment`` (2.4): every partition of /admin/reassign_partitions gets
    ``maybeBuildReassignment`` with its target and is triggered; the partitions that fail are removed from the
    znode (``maybeRemoveFromZkReassignment``). Returns the partitions triggered without error."""
    if not step.zk_reassign_partitions:
        return []
    requested = {tp: maybe_build_reassignment(step, tp, target)
                 for tp, target in sorted(step.zk_reassign_partitions.items())}
    results = maybe_trigger_partition_reassignment_kip_455(
        step, {tp: ra for tp, ra in requested.items() if ra is not None})
    failed = {tp for tp, error in results.items() if error != "NONE"}
    if failed:
        step.messages.append("Failed reassignment through zk with the following errors: "
                             + ", ".join(f"{t}-{p}: {results[(t, p)]}" for t, p in sorted(failed)))
        maybe_remove_from_zk_reassignment(step, lambda tp, _: tp in failed)
    return sorted(tp for tp, error in results.items() if error == "NONE")


def process_api_partition_reassignment(step: Step, reassignments: Sequence[tuple[TopicPartition, tuple[int, ...]]]) \
        -> dict[TopicPartition, str]:
    """``processApiPartitionReassignment`` (2.4): an AlterPartitionReassignments request (an empty target: None, a
    cancellation). Each partition whose replicas are valid gets ``maybeBuildReassignment`` (a cancellation of a
    partition not being reassigned: NO_REASSIGNMENT_IN_PROGRESS); then, KAFKA-9089's fix, the partitions to
    reassign are removed from /admin/reassign_partitions ("The latest reassignment (whether by API or through zk)
    always takes precedence") before they are triggered. Returns the error by partition (the response)."""
    results: dict[TopicPartition, str] = {}
    to_reassign: dict[TopicPartition, ReplicaAssignment] = {}
    for tp, target in reassignments:
        invalid = replicas_are_valid(step, tp, target or None)
        if invalid:
            results[tp] = f"INVALID_REPLICA_ASSIGNMENT: {invalid}"
            continue
        ra = maybe_build_reassignment(step, tp, target or None)
        if ra is None:
            results[tp] = "NO_REASSIGNMENT_IN_PROGRESS"
        else:
            to_reassign[tp] = ra
    maybe_remove_from_zk_reassignment(step, lambda tp, _: tp in to_reassign)
    results.update(maybe_trigger_partition_reassignment_kip_455(step, to_reassign))
    step.messages.append("AlterPartitionReassignments response: "
                         + ", ".join(f"{t}-{p}: {e}" for (t, p), e in sorted(results.items())))
    return results


def replicas_are_valid(step: Step, tp: TopicPartition, target: Sequence[int] | None) -> str:
    """``replicasAreValid`` (2.4; ``validateReplicas`` from 2.5, KAFKA-9329's messages, same checks): "" when
    valid. A target is non-empty, without duplicates or negative ids, and its adding replicas
    are live brokers (``liveBrokerIds``: registered, not shutting down). A cancellation (None) is not validated.

    Switch ``KAFKA_14808`` off: PR #13451's check (commit bcca816cebe, on 3.6-era trunk; never merged, so no
    release has it and the switch is on for every version): a target whose unneeded replicas (the current full
    replica set minus the new one) include the current leader is refused, INVALID_REPLICA_ASSIGNMENT. The PR
    reads the leader with ``partitionLeadershipInfo(tp).get`` (NoSuchElementException without leadership, which
    ends the event). It guards the API path only: a cancellation and a reassignment through
    /admin/reassign_partitions still stop a leading adding replica."""
    if target is None:
        return ""
    if not target or len(set(target)) != len(target) or any(r < 0 for r in target):
        return f"Invalid replica list {list(target)}"
    current = partition_full_replica_assignment(step, tp)
    new = current.reassign_to(target)
    live = set(step.live_brokers) - step.shutting_down_brokers
    current_leader = None if step.scenario.bug("KAFKA_14808") else step.partition_leadership_info(tp).leader
    unneeded = [r for r in current.replicas if r not in new.replicas]
    if not set(new.adding_replicas) <= live:
        return (f"Replica assignment has brokers that are not alive. Replica list: {list(new.adding_replicas)}, "
                f"live broker list: {sorted(live)}")
    if current_leader is not None and current_leader in unneeded:
        return (f"Current leader is inside unneeded adding replicas. Current leader: {current_leader}, unneeded "
                f"adding replica list: {unneeded}")
    return ""


def maybe_build_reassignment(step: Step, tp: TopicPartition, target: Sequence[int] | None) \
        -> ReplicaAssignment | None:
    """``maybeBuildReassignment``: a partition being reassigned goes to ``target`` or, with None, back to its
    original replicas (a cancellation); one not being reassigned goes to ``target``, or nowhere with None."""
    current = partition_full_replica_assignment(step, tp)
    if current.is_being_reassigned:
        return current.reassign_to(current.origin_replicas if target is None else target)
    return None if target is None else current.reassign_to(target)


def maybe_trigger_partition_reassignment_kip_455(step: Step, reassignments: dict[TopicPartition, ReplicaAssignment]) \
        -> dict[TopicPartition, str]:
    """``maybeTriggerPartitionReassignment`` (2.4): a partition of a topic queued for deletion, or one the context
    does not know, gets UNKNOWN_TOPIC_OR_PARTITION; the others ``onPartitionReassignment``, an exception out of it
    (but ControllerMovedException, which ends the event) UNKNOWN_SERVER_ERROR."""
    results: dict[TopicPartition, str] = {}
    for tp, ra in sorted(reassignments.items()):
        name = f"{tp[0]}-{tp[1]}"
        if step.is_topic_queued_up_for_deletion(tp[0]):
            step.messages.append(f"Skipping reassignment of {name} since the topic is currently being deleted")
            results[tp] = "UNKNOWN_TOPIC_OR_PARTITION"
        elif not step.assignment.get(tp):
            results[tp] = "UNKNOWN_TOPIC_OR_PARTITION"
        else:
            try:
                on_partition_reassignment_kip_455(step, tp, ra)
                results[tp] = "NONE"
            except ControllerMovedException:
                raise
            except ControllerError as e:
                step.messages.append(f"Error completing reassignment of partition {name}: {e}")
                results[tp] = "UNKNOWN_SERVER_ERROR"
    return results


def on_partition_reassignment_kip_455(step: Step, tp: TopicPartition, reassignment: ReplicaAssignment) -> None:
    """``onPartitionReassignment`` (2.4): phase U (:func:`update_current_reassignment`), then phase A while the
    target replicas are not all in ZooKeeper's ISR (A1 leader-epoch bump and LeaderAndIsr to RS, A2 AR →
    NewReplica), or phase B (B1 AR → OnlineReplica, B2 the context's assignment := TRS, B3 leader moved if
    needed, B4 – B5 RR offline and deleted, B6 the topic znode := TRS, B7 the partition leaves the reassignment
    (and /admin/reassign_partitions when it names this target), B8 UpdateMetadata, then deletions resume)."""
    topic_deletion_manager.mark_topic_ineligible_for_deletion(step, [tp[0]])
    update_current_reassignment(step, tp, reassignment)
    adding, removing = reassignment.adding_replicas, reassignment.removing_replicas
    if not is_reassignment_complete(step, tp, reassignment):
        update_leader_epoch_and_send_request(step, tp, reassignment.replicas, reassignment.replicas, adding)  # A1
        for r in adding:  # A2
            replica_state_machine.handle_state_changes(step, [(tp[0], tp[1], r)], R.NewReplica)
        step.messages.append(f"Waiting for new replicas {list(reassignment.target_replicas)} for partition "
                             f"{tp[0]}-{tp[1]} being reassigned to catch up with the leader")
        return
    replica_state_machine.handle_state_changes(step, [(tp[0], tp[1], r) for r in adding], R.OnlineReplica)  # B1
    completed = ReplicaAssignment(reassignment.target_replicas)
    update_partition_full_replica_assignment(step, tp, completed)  # B2
    _move_reassigned_partition_leader_if_required_kip_455(step, tp, completed)  # B3
    stop_old_replicas_of_reassigned_partition(step, tp, removing)  # B4, B5
    update_replica_assignment_for_partition(step, tp, completed)  # B6
    remove_partition_from_reassigning_partitions(step, tp, completed)  # B7
    step.send_update_metadata_request(sorted(step.live_or_shutting_down()), [tp])  # B8
    step.reassignments_completed.append(tp)
    topic_deletion_manager.resume_deletion_for_topics(step, [tp[0]])


def update_current_reassignment(step: Step, tp: TopicPartition, reassignment: ReplicaAssignment) -> None:
    """``updateCurrentReassignment``: a ReplicaAssignment that differs from the context's is written to the topic
    znode (U1), then to the context (U2), and the replicas of the current full set that the new one leaves out
    are stopped at once (U3: an ongoing reassignment replaced or cancelled). The partition then joins
    ``partitionsBeingReassigned`` (its ISR-change watch registered).

    U3 stops a replica whatever it is: KAFKA-14808 (switch ``KAFKA_14808``, no release fixed it) is an adding
    replica that became the leader (a preferred election) and is stopped by a replacing reassignment: its
    OfflineReplica transition leaves the partition without a leader (:mod:`.replica_state_machine`'s
    ``removeReplicasFromIsr``). PR #13451's fix does not change U3: it refuses such a replacement earlier, in
    :func:`replicas_are_valid`."""
    current = partition_full_replica_assignment(step, tp)
    if current != reassignment:
        update_replica_assignment_for_partition(step, tp, reassignment)  # U1
        update_partition_full_replica_assignment(step, tp, reassignment)  # U2
        unneeded = [r for r in current.replicas if r not in reassignment.replicas]
        if unneeded:  # U3
            stop_old_replicas_of_reassigned_partition(step, tp, unneeded)
    step.partitions_being_reassigned[tp] = reassignment.target_replicas


def is_reassignment_complete(step: Step, tp: TopicPartition, ra: ReplicaAssignment) -> bool:
    """``isReassignmentComplete``: not being reassigned, or ZooKeeper's ISR holds every target replica."""
    if not ra.is_being_reassigned:
        return True
    znode = step.zk_partitions.get(tp)
    return znode is not None and set(ra.target_replicas) <= set(znode.isr)


def _move_reassigned_partition_leader_if_required_kip_455(step: Step, tp: TopicPartition,
                                                         new_assignment: ReplicaAssignment) -> None:
    """``moveReassignedPartitionLeaderIfRequired`` (2.4; the context already holds ``new_assignment``): elect in
    the target when the leader is not in it or dead, else bump the epoch and send LeaderAndIsr to the target."""
    leader = step.partition_leadership_info(tp).leader
    if leader in new_assignment.replicas and step.is_replica_online(leader, tp):
        update_leader_epoch_and_send_request(step, tp, new_assignment.replicas, new_assignment.replicas)
    else:
        partition_state_machine.handle_state_changes(step, [tp], PartitionState.OnlinePartition,
                                                     partition_state_machine.REASSIGN)


def remove_partition_from_reassigning_partitions(step: Step, tp: TopicPartition, ra: ReplicaAssignment) -> None:
    """``removePartitionFromReassigningPartitions``: the ISR-change watch goes, /admin/reassign_partitions loses
    the partition if it names this very target (KAFKA-9089's fix: whichever path started it), and the partition
    leaves ``partitionsBeingReassigned``; an IllegalStateException when it is not there."""
    if tp not in step.partitions_being_reassigned:
        raise ControllerError("IllegalStateException: Cannot remove a reassigning partition because it is not "
                              "present in memory")
    maybe_remove_from_zk_reassignment(step, lambda p, replicas: p == tp and replicas == ra.replicas)
    del step.partitions_being_reassigned[tp]


def maybe_remove_from_zk_reassignment(step: Step, should_remove: Callable[[TopicPartition, tuple[int, ...]], bool]) \
        -> None:
    """``maybeRemoveFromZkReassignment``: when /admin/reassign_partitions exists, drop the partitions
    ``should_remove`` picks; with none left delete the znode and queue ``ZkPartitionReassignment`` (to re-arm the
    creation watch), else rewrite it (also when it picked none)."""
    if not step.zk_reassign_partitions:
        return
    remaining = {tp: reps for tp, reps in step.zk_reassign_partitions.items() if not should_remove(tp, reps)}
    step.controller_writes_zk("the write of /admin/reassign_partitions")
    if not remaining:
        step.zk_reassign_partitions.clear()
        step.events.append(ControllerEvent(EventKind.PartitionReassignment))
    else:
        step.zk_reassign_partitions = remaining


def process_partition_reassignment_isr_change_kip_455(step: Step, tp: TopicPartition) -> None:
    """``processPartitionReassignmentIsrChange`` (2.4): resume when the partition's reassignment is complete."""
    if tp not in step.partitions_being_reassigned:
        return
    ra = partition_full_replica_assignment(step, tp)
    if is_reassignment_complete(step, tp, ra):
        step.messages.append(f"Target replicas {list(ra.target_replicas)} have all caught up with the leader for "
                             f"reassigning partition {tp[0]}-{tp[1]}")
        on_partition_reassignment_kip_455(step, tp, ra)


def maybe_resume_reassignments(step: Step, should_resume: Callable[[TopicPartition, ReplicaAssignment], bool]) -> None:
    """``maybeResumeReassignments``: ``onPartitionReassignment`` with the context's ReplicaAssignment for each
    partition being reassigned that ``should_resume`` picks (an exception ends the event)."""
    for tp in sorted(step.partitions_being_reassigned):
        ra = partition_full_replica_assignment(step, tp)
        if tp in step.partitions_being_reassigned and should_resume(tp, ra):
            on_partition_reassignment_kip_455(step, tp, ra)


def initialize_partition_reassignments(step: Step) -> None:
    """``initializePartitionReassignments`` (onControllerFailover, 2.4): /admin/reassign_partitions first (it
    supplants an API reassignment of the same partition), then every other partition the topic znodes show
    being reassigned is resumed."""
    resumed = set(process_zk_partition_reassignment(step))
    maybe_resume_reassignments(step, lambda tp, _: tp not in resumed)


def initialize_controller_context_assignments(step: Step) -> None:
    """``initializeControllerContext``'s ``getFullReplicaAssignmentForTopics`` (2.4): each partition's
    ReplicaAssignment from its topic znode, and a partition that is being reassigned joins
    ``partitionsBeingReassigned``."""
    step.adding_replicas = {tp: reps for tp, reps in step.zk_adding_replicas.items() if tp in step.assignment}
    step.removing_replicas = {tp: reps for tp, reps in step.zk_removing_replicas.items() if tp in step.assignment}
    for tp in sorted(set(step.adding_replicas) | set(step.removing_replicas)):
        step.partitions_being_reassigned[tp] = partition_full_replica_assignment(step, tp).target_replicas
