"""Topic deletion: ``controller/TopicDeletionManager.scala`` (Kafka 2.0 – 3.9; from 2.5, KAFKA-9499, the deletion
of several topics is batched: one state change, and one StopReplica per broker, for all of them).

The manager keeps ``topicsToBeDeleted``, ``topicsIneligibleForDeletion`` and (2.1+)
``topicsWithDeletionStarted``. Deletion of a topic moves its replicas Offline, then
ReplicaDeletionStarted (StopReplica with deletePartition=true); each broker's response makes a
replica ReplicaDeletionSuccessful or ReplicaDeletionIneligible; a dead broker's replicas go
ineligible and are retried when it restarts; the topic is removed from ZooKeeper and the
controller's context once every replica succeeded (``completeDeleteTopic``).

With ``delete.topic.enable=false`` the manager's predicates are constant (nothing is queued,
everything is ineligible) and enqueue / resume / fail do nothing, as in Kafka.

Topics are visited in name order where Kafka iterates a hash set (an order Kafka does not define).
"""

from __future__ import annotations

from collections.abc import Iterable

from model.zk.controller import partition_state_machine, replica_state_machine
from model.zk.state.states import PartitionState, ReplicaState
from model.zk.state.step import Step
from model.zk.state.values import EventKind, Replica

R = ReplicaState


def _enabled(step: Step) -> bool:
    return step.scenario.delete_topic_enable


def init(step: Step, to_delete: set[str], ineligible: set[str]) -> None:
    """``TopicDeletionManager.init`` (on controller failover): queue the topics of /admin/delete_topics, those
    ineligible for now marked; with ``delete.topic.enable=false``, delete their znodes instead (0.10.2, the
    fix of KAFKA-3175; before it, KAFKA_3175, the manager queued them whatever the setting, which made
    ``isTopicQueuedUpForDeletion`` true and kept their partitions out of every election)."""
    if _enabled(step) or step.scenario.bug("KAFKA_3175"):
        step.topics_to_be_deleted |= to_delete
        step.topics_ineligible_for_deletion |= ineligible & step.topics_to_be_deleted
    elif to_delete:
        step.messages.append(f"Removing {sorted(to_delete)} since delete topic is disabled")
        step.controller_writes_zk("the deletion of /admin/delete_topics children")
        step.zk_delete_topics -= to_delete


def enqueue_topics_for_deletion(step: Step, topics: Iterable[str]) -> None:
    if _enabled(step):
        step.topics_to_be_deleted.update(topics)
        resume_deletions(step)


def resume_deletion_for_topics(step: Step, topics: Iterable[str]) -> None:
    if _enabled(step):
        queued = set(topics) & step.topics_to_be_deleted
        if queued:
            step.topics_ineligible_for_deletion.difference_update(queued)
            resume_deletions(step)


def mark_topic_ineligible_for_deletion(step: Step, topics: Iterable[str]) -> None:
    if _enabled(step):
        step.topics_ineligible_for_deletion.update(set(topics) & step.topics_to_be_deleted)


def is_topic_ineligible_for_deletion(step: Step, topic: str) -> bool:
    return topic in step.topics_ineligible_for_deletion if _enabled(step) else True


def fail_replica_deletion(step: Step, replicas: Iterable[Replica]) -> None:
    """``failReplicaDeletion``: replicas of queued topics become ReplicaDeletionIneligible."""
    if not _enabled(step):
        return
    failed = [r for r in replicas if step.is_topic_queued_up_for_deletion(r[0])]
    replica_state_machine.handle_state_changes(step, failed, R.ReplicaDeletionIneligible)
    mark_topic_ineligible_for_deletion(step, {r[0] for r in failed})
    resume_deletions(step)


def complete_replica_deletion(step: Step, replicas: Iterable[Replica]) -> None:
    """``completeReplicaDeletion``: replicas of queued topics become ReplicaDeletionSuccessful."""
    if not _enabled(step):
        return
    deleted = [r for r in replicas if step.is_topic_queued_up_for_deletion(r[0])]
    replica_state_machine.handle_state_changes(step, deleted, R.ReplicaDeletionSuccessful)
    resume_deletions(step)


def is_topic_eligible_for_deletion(step: Step, topic: str) -> bool:
    return (topic in step.topics_to_be_deleted
            and not step.replicas_in_state(topic, R.ReplicaDeletionStarted)
            and not is_topic_ineligible_for_deletion(step, topic))


def resume_deletions(step: Step) -> None:
    """``resumeDeletions``: per topic (2.0 – 2.4), or batched across topics (2.5+, KAFKA-9499)."""
    if not _enabled(step):
        return
    if step.scenario.since("KAFKA_9499"):
        _resume_deletions_batched(step)
        return
    for topic in sorted(step.topics_to_be_deleted):
        if topic not in step.topics_to_be_deleted:
            continue  # completed earlier in this pass by a nested call
        if _all_replicas_deleted(step, topic):
            complete_delete_topic(step, topic)
            continue
        if _to_retry(step, topic):
            retry_deletion_for_ineligible_replicas(step, topic)
        if is_topic_eligible_for_deletion(step, topic):
            on_topic_deletion(step, [topic])


def _all_replicas_deleted(step: Step, topic: str) -> bool:
    """``areAllReplicasInState(topic, ReplicaDeletionSuccessful)`` (with the planted bug: any one replica)."""
    succeeded = step.replicas_in_state(topic, R.ReplicaDeletionSuccessful)
    if step.scenario.bug("PLANTED_COMPLETE_DELETION_ON_FIRST_SUCCESS"):
        return bool(succeeded)
    return len(succeeded) == len(step.replicas_for_topic(topic))


def _to_retry(step: Step, topic: str) -> bool:
    """No replica in ReplicaDeletionStarted and one in ReplicaDeletionIneligible: the deletion is retried."""
    return (not step.replicas_in_state(topic, R.ReplicaDeletionStarted)
            and bool(step.replicas_in_state(topic, R.ReplicaDeletionIneligible)))


def _resume_deletions_batched(step: Step) -> None:
    """``resumeDeletions`` of Kafka 2.5+ (KAFKA-9499, ``TopicDeletionManager.resumeDeletions`` 2.5.0): one pass over
    the queued topics completes those whose replicas all succeeded and collects those to retry (no replica in
    ReplicaDeletionStarted, one in ReplicaDeletionIneligible) and those eligible to (re)start; then one
    ``retryDeletionForIneligibleReplicas`` for all the topics to retry and one ``onTopicDeletion`` for all the
    eligible ones, so their replicas change state, and their StopReplica requests go out, in one batch."""
    retry: list[str] = []
    eligible: list[str] = []
    for topic in sorted(step.topics_to_be_deleted):
        if _all_replicas_deleted(step, topic):
            complete_delete_topic(step, topic)
        elif _to_retry(step, topic):
            retry.append(topic)
        if is_topic_eligible_for_deletion(step, topic):
            eligible.append(topic)
    if retry:
        retry_deletion_for_ineligible_replicas(step, *retry)
    if eligible:
        on_topic_deletion(step, eligible)


def retry_deletion_for_ineligible_replicas(step: Step, *topics: str) -> None:
    """``retryDeletionForIneligibleReplicas``: ReplicaDeletionIneligible -> OfflineReplica, for one topic (2.0 –
    2.4) or for every topic to retry in one state change (2.5+, KAFKA-9499)."""
    step.deletion_retries.extend(topics)
    failed = [r for topic in topics for r in step.replicas_in_state(topic, R.ReplicaDeletionIneligible)]
    replica_state_machine.handle_state_changes(step, failed, R.OfflineReplica)


def on_topic_deletion(step: Step, topics: list[str]) -> None:
    if step.scenario.since("TOPICS_WITH_DELETION_STARTED"):
        unseen = [t for t in topics if t not in step.topics_with_deletion_started]
        if unseen:
            partitions = [tp for t in unseen for tp in step.partitions_for_topic(t)]
            partition_state_machine.handle_state_changes(step, partitions, PartitionState.OfflinePartition)
            partition_state_machine.handle_state_changes(step, partitions, PartitionState.NonExistentPartition)
            step.topics_with_deletion_started.update(unseen)
    # UpdateMetadata with LeaderDuringDelete (-2): the brokers drop the partitions from their caches.
    partitions = [tp for t in topics for tp in step.partitions_for_topic(t)]
    step.send_update_metadata_request(sorted(step.live_or_shutting_down()), partitions)
    if step.scenario.since("KAFKA_9499"):
        on_partition_deletion(step, topics)
        return
    for topic in topics:
        start_replica_deletion(step, step.replicas_for_topic(topic))


def on_partition_deletion(step: Step, topics: list[str]) -> None:
    """``onPartitionDeletion`` of Kafka 2.5+ (KAFKA-9499, ``TopicDeletionManager.onPartitionDeletion`` 2.5.0), for
    every topic at once: the dead replicas of all the topics go to ReplicaDeletionIneligible, all the others
    (but those already deleted) to OfflineReplica, then to ReplicaDeletionStarted, each in one state change;
    then the topics with dead replicas are marked ineligible."""
    dead: list[Replica] = []
    retry: list[Replica] = []
    ineligible: list[str] = []
    for topic in topics:
        of_topic = step.replicas_for_topic(topic)
        alive = [r for r in of_topic if step.is_replica_online(r[2], (r[0], r[1]))]
        dead_of_topic = [r for r in of_topic if not step.is_replica_online(r[2], (r[0], r[1]))]
        succeeded = set(step.replicas_in_state(topic, R.ReplicaDeletionSuccessful))
        dead += dead_of_topic
        retry += [r for r in alive if r not in succeeded]
        if dead_of_topic:
            ineligible.append(topic)
    replica_state_machine.handle_state_changes(step, dead, R.ReplicaDeletionIneligible)
    replica_state_machine.handle_state_changes(step, retry, R.OfflineReplica)
    replica_state_machine.handle_state_changes(step, retry, R.ReplicaDeletionStarted, deletion_callback=True)
    if ineligible:
        mark_topic_ineligible_for_deletion(step, ineligible)


def start_replica_deletion(step: Step, replicas: list[Replica]) -> None:
    """``startReplicaDeletion`` (reached through ``onPartitionDeletion``, 2.0 – 2.4)."""
    for topic in sorted({r[0] for r in replicas}):
        of_topic = [r for r in replicas if r[0] == topic]
        alive = [r for r in of_topic if step.is_replica_online(r[2], (r[0], r[1]))]
        dead = [r for r in of_topic if not step.is_replica_online(r[2], (r[0], r[1]))]
        succeeded = set(step.replicas_in_state(topic, R.ReplicaDeletionSuccessful))
        retry = [r for r in alive if r not in succeeded]
        replica_state_machine.handle_state_changes(step, dead, R.ReplicaDeletionIneligible)
        replica_state_machine.handle_state_changes(step, retry, R.OfflineReplica)
        replica_state_machine.handle_state_changes(step, retry, R.ReplicaDeletionStarted, deletion_callback=True)
        if dead:
            mark_topic_ineligible_for_deletion(step, [topic])


def complete_delete_topic(step: Step, topic: str) -> None:
    """``completeDeleteTopic``: forget the topic in the controller and remove it from ZooKeeper.

    Kafka (``TopicDeletionManager.completeDeleteTopic``, 2.0 – 2.3, and ``ControllerContext.removeTopic``
    2.3) removes the topic from ``topicsToBeDeleted`` and (2.1+) ``topicsWithDeletionStarted`` but never
    from ``topicsIneligibleForDeletion``: a mark set while the deletion was under way (for instance by
    ``failReplicaDeletion`` on a broker failure, whose transition of an already successful replica is
    invalid but whose mark is not) outlives the topic. Only ``resumeDeletionForTopics`` clears marks,
    and it ignores topics that are not queued, so a topic re-created under the same name and then
    deleted stays ineligible until a broker hosting one of its replicas starts (or a controller
    failover rebuilds the set).
    """
    succeeded = step.replicas_in_state(topic, R.ReplicaDeletionSuccessful)
    replica_state_machine.handle_state_changes(step, succeeded, R.NonExistentReplica)
    partitions = step.partitions_for_topic(topic)
    if not step.scenario.since("TOPICS_WITH_DELETION_STARTED"):
        partition_state_machine.handle_state_changes(step, partitions, PartitionState.OfflinePartition)
        partition_state_machine.handle_state_changes(step, partitions, PartitionState.NonExistentPartition)
    step.topics_to_be_deleted.discard(topic)
    step.topics_with_deletion_started.discard(topic)
    step.completed_deletions.append(topic)
    # zkClient.deleteTopicZNode / deleteTopicConfigs / deleteTopicDeletions: the topic's znodes
    # (with its partition-state znodes) go; both deletions fire the controller's child watches.
    step.controller_writes_zk(f"the deletion of /brokers/topics/{topic}")
    step.zk_topics.pop(topic, None)
    if step.scenario.since("KIP_516"):
        step.zk_topic_ids.pop(topic, None)
    step.zk_topic_unclean_leader_election_enable.discard(topic)
    for tp in [tp for tp in step.zk_partitions if tp[0] == topic]:
        del step.zk_partitions[tp]
    step.zk_delete_topics.discard(topic)
    step.enqueue_once(EventKind.TopicChange)
    step.enqueue_once(EventKind.TopicDeletion)
    remove_topic(step, topic)
    if step.scenario.since("KIP_455"):
        from model.zk.controller import partition_reassignment

        partition_reassignment.forget_topic_reassignment_state(step, topic)
    if not step.scenario.bug("DELETION_DURING_REASSIGNMENT"):
        abort_partition_reassignment_for_topic(step, topic)


def abort_partition_reassignment_for_topic(step: Step, topic: str) -> None:
    """LinkedIn's hotfix (linkedin/kafka#14, ``abortPartitionReassignmentForTopic``, not in Apache Kafka): a
    deleted topic's partitions still being reassigned are dropped from ``partitionsBeingReassigned`` and from
    /admin/reassign_partitions. Without it (DELETION_DURING_REASSIGNMENT, every Apache 2.x release) the
    reassignment of a deleted topic stays in both for good."""
    from model.zk.controller import partition_reassignment

    pending = [tp for tp in step.partitions_being_reassigned if tp[0] == topic]
    if pending:
        step.messages.append(f"Aborting the reassignment of {', '.join(f'{t}-{p}' for t, p in sorted(pending))} "
                             f"since topic {topic} is deleted")
        partition_reassignment.remove_partitions_from_reassigned_partitions(step, sorted(pending))


def remove_topic(step: Step, topic: str) -> None:
    """``ControllerContext.removeTopic``: the topic's assignment and leadership go.

    Replica states are left alone, as in Kafka: only the NonExistentReplica transition removes
    them, so a replica that never reached ReplicaDeletionSuccessful outlives its topic (the
    property ``no_replica_state_for_deleted_topic`` watches for that). The partitions' entries,
    all NonExistentPartition by now, are dropped; Kafka 2.0 keeps them in its map, which changes
    no behaviour.
    """
    for tp in [tp for tp in step.assignment if tp[0] == topic]:
        del step.assignment[tp]
    for tp in [tp for tp in step.leadership if tp[0] == topic]:
        del step.leadership[tp]
    for tp in [tp for tp in step.partition_state if tp[0] == topic]:
        del step.partition_state[tp]
    if step.scenario.since("KIP_516"):
        step.topic_ids.pop(topic, None)  # topicIds.remove(topic) (2.8)
