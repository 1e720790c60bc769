"""Environment steps: what happens to the cluster outside the controller's thread.

Brokers die and restart (their ZooKeeper registrations come and go, firing the controller's
/brokers/ids watch), brokers apply the requests waiting in their channels (``KafkaApis`` handling
LeaderAndIsr and StopReplica, ``ReplicaManager.becomeLeaderOrFollower`` / ``stopReplicas``), a log
directory fails, an admin creates or deletes topics by writing ZooKeeper as ``kafka-topics.sh
--zookeeper`` does, runs ``kafka-preferred-replica-election.sh``, cancels a reassignment by deleting
/admin/reassign_partitions or changes ``unclean.leader.election.enable``, and the controller's auto
leader rebalance timer fires. Controller failover and controlled shutdown live in
:mod:`model.zk.controller.controller_failover` and :mod:`model.zk.controller.controlled_shutdown`.

Deviations: a broker applies a request and its response reaches the controller's queue in one
step, or applies it and dies before answering (:func:`broker_applies_and_dies`, offered where the
controller would act on the response); a response lost while both stay alive is not modelled (Kafka's
RequestSendThread re-sends the request, and applying a StopReplica or LeaderAndIsr twice changes
nothing); an injected error fails the deletion of one partition of a
StopReplica(delete=true) with KAFKA_STORAGE_ERROR (``ReplicaManager.stopReplicas`` answers per
partition), one per error of ``[bounds] stop_replica_errors``: two partitions of one request failing
together are not modelled. A broker applies an UpdateMetadata as soon as it reaches the
head of its channel (:func:`apply_update_metadata_at_heads`, run after every step): the request only
changes that broker's metadata cache, which nothing reads before the broker's next request, so
giving it a step of its own would add interleavings and no behaviour.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from model.admin import assignment as kafka_assignment
from model.scenario import Scenario
from model.zk.state.step import Step
from model.zk.state.values import (
    EPOCH_DURING_DELETE,
    LEADER_DURING_DELETE,
    NO_EPOCH,
    NO_LEADER,
    SHUTDOWN_NONE,
    BrokerState,
    ControllerEvent,
    EventKind,
    HostedPartition,
    PartitionLeaderState,
    Request,
    RequestKind,
    TopicPartition,
    partition_name,
)


def broker_failure(step: Step, broker: int, *, controlled: bool = False) -> None:
    """The broker process dies: its ZooKeeper session expires and its ephemeral /brokers/ids
    znode goes; what it held in memory is lost, its logs stay on disk. ``controlled``: the broker stops at the
    end of its controlled shutdown (not counted as a failure)."""
    b = step.brokers[broker]
    step.brokers[broker] = attrs.evolve(b, alive=False, partitions=(), controller_epoch=0,
                                        metadata_live_brokers=(), metadata_partitions=(),
                                        controlled_shutdown=SHUTDOWN_NONE, pending_isr_changes=())
    step.zk_brokers.pop(broker, None)
    step.enqueue_once(EventKind.BrokerChange)
    if not controlled:
        step.budget = attrs.evolve(step.budget, broker_failures=step.budget.broker_failures + 1)


def broker_startup(step: Step, broker: int) -> None:
    """The broker restarts and registers again, with a larger broker epoch (its failed log directory, if any,
    was repaired)."""
    b = step.brokers[broker]
    step.brokers[broker] = attrs.evolve(b, alive=True, epoch=b.epoch + 1, offline_logs=())
    step.zk_brokers[broker] = b.epoch + 1
    step.enqueue_once(EventKind.BrokerChange)


def broker_apply_request(step: Step, broker: int, *, storage_error: TopicPartition | None = None,
                         respond: bool = True) -> Request:
    """The broker handles the request at the head of its channel; ``storage_error``: the partition of a
    StopReplica(delete=true) whose deletion the explorer makes fail with a ``KafkaStorageException``
    (``ReplicaManager.stopReplicas`` 2.3 answers it KAFKA_STORAGE_ERROR and the others of the request
    NONE); ``respond`` False: the broker dies before its response leaves (:func:`broker_applies_and_dies`)."""
    queue = step.channels[broker]
    request = queue.pop(0)
    if not queue:
        del step.channels[broker]
    b = step.brokers[broker]
    if storage_error is not None:
        step.budget = attrs.evolve(step.budget, stop_replica_errors=step.budget.stop_replica_errors + 1)
    stale = _stale(step.scenario, b, request)
    if stale:
        step.messages.append(rejection_message(broker, request, stale))
        step.rejection = stale
    elif request.kind is RequestKind.LeaderAndIsr:
        kafka_12426 = step.scenario.since("KAFKA_12426")
        refused = inconsistent_topic_ids(b, request, kafka_12426)
        step.inconsistent_topic_ids.extend(sorted(refused))
        for tp in sorted(refused):
            step.messages.append(f"broker {broker} refuses {partition_name(tp)} of {request.describe()}: "
                                 f"INCONSISTENT_TOPIC_ID (its log's topic ID is {b.log_topic_id(tp)})")
        step.brokers[broker] = _become_leader_or_follower(b, request, filter_isr=not step.scenario.bug("KAFKA_9672"),
                                                          kafka_12426=kafka_12426)
        if request.controller_epoch == step.epoch and respond:
            _leader_and_isr_response(step, b, request, refused)
    elif request.kind is RequestKind.UpdateMetadata:
        step.brokers[broker] = _update_metadata(b, request)
    else:
        step.brokers[broker], not_stopped = _stop_replicas(b, request, storage_error,
                                                           not step.scenario.bug("KAFKA_13972"))
        deleted = request.deleted_partitions()
        if deleted:
            step.stray_logs -= {(broker, tp) for tp in deleted if tp not in not_stopped}
        answered = _answered_partitions(step.scenario, request)
        if answered and respond:
            failed = tuple(tp for tp in answered if tp in not_stopped)
            if failed:
                _deletion_callback(step, broker, request, failed, True)
            succeeded = tuple(tp for tp in answered if tp not in not_stopped)
            if succeeded:
                _deletion_callback(step, broker, request, succeeded, False)
    return request


def _answered_partitions(scenario: Scenario, request: Request) -> tuple[TopicPartition, ...]:
    """The partitions of a StopReplica response that reach the deletion callback: those the request asked to
    delete (``sendStopReplicaRequests`` 2.3: the callback is attached to StopReplica(delete=true) only; 2.6.0:
    ``responseCallback``'s ``isPartitionDeleted``, KAFKA-9946's fix #8609, commit 3b6bf805309). With the switch
    ``KAFKA_9946`` every partition of every StopReplica: KIP-570's patch (commit 7c7d55dbd8d, on trunk from
    March to May 2020, in no release tag) attaches ``stopReplicaPartitionDeleteResponseCallback`` to every
    request, delete=false ones included, and the callback keeps every partition whose topic's deletion has
    started (``isTopicDeletionInProgress``). The switch applies at every version from 2.3 (KAFKA-8237's
    filter on ``topicsWithDeletionStarted``; before it a request without a callback answers nothing)."""
    if scenario.bug("KAFKA_9946"):
        return tuple(ps.partition for ps in request.stop_replica_states())
    return request.deleted_partitions()


def response_observable(state_broker: BrokerState, request: Request, offline_dirs_named: bool,
                        every_stop_replica: bool = False) -> bool:
    """Whether the controller would act on the broker's response to ``request``: a StopReplica(delete=true)
    (its deletion callback; any StopReplica with ``every_stop_replica``, the switch ``KAFKA_9946``), or a
    LeaderAndIsr from a broker with a failed log directory or one the controller holds in
    ``replicasOnOfflineDirs`` (``LeaderAndIsrResponseReceived``)."""
    if request.kind is RequestKind.StopReplica:
        return every_stop_replica or request.deletes_partitions
    return request.kind is RequestKind.LeaderAndIsr and (bool(state_broker.offline_logs) or offline_dirs_named)


def broker_applies_and_dies(step: Step, broker: int) -> None:
    """The broker applies the request at the head of its channel and its process dies before the response is
    sent (``KafkaApis`` has done the work; the socket closes first). The controller gets no response: its
    ``RequestSendThread`` for the broker is stopped by ``onBrokerFailure`` (``removeBroker``), which learns of
    the death from the BrokerChange this step fires. A broker failure of ``[bounds] broker_failures``."""
    broker_apply_request(step, broker, respond=False)
    broker_failure(step, broker)


def _leader_and_isr_response(step: Step, b: BrokerState, request: Request, refused: set[TopicPartition]) -> None:
    """The LeaderAndIsr response callback (``ControllerChannelManager.sendRequestsToBrokers`` 2.3): every response
    queues LeaderAndIsrResponseReceived, whose processing (``processLeaderAndIsrResponseReceived``) sets the
    broker's ``replicasOnOfflineDirs`` to ``previous -- onlineReplicas ++ offlineReplicas``, where the broker
    answered KAFKA_STORAGE_ERROR for the partitions on a failed directory and NONE for those it applied.

    The model queues the event only when its processing can change something: a partition in
    KAFKA_STORAGE_ERROR, or a partition answered NONE that the controller holds in ``replicasOnOfflineDirs``
    for the broker, or will once the events ahead of this one are processed (only another
    LeaderAndIsrResponseReceived of the broker adds to the set); the event keeps only those NONE partitions.
    A response to a controller that is no longer active changes nothing (``if (!isActive) return``), nor
    does one with a request-level error (a stale request is answered so and sent no further here). A partition
    answered INCONSISTENT_TOPIC_ID (``refused``, KIP-516) is neither: ``processLeaderAndIsrResponseReceived``
    (2.8.0, 3.9.0-rc3) looks only for KAFKA_STORAGE_ERROR and NONE, so the controller does nothing about it."""
    hosted = {h.partition: h for h in b.partitions}
    offline, online = [], []
    for s in request.leader_states:
        if b.id not in s.replicas:
            continue  # UNKNOWN_TOPIC_OR_PARTITION
        if s.partition in b.offline_logs or _cannot_create_log(b, s):
            offline.append(s.partition)
        elif s.partition in refused:
            continue  # INCONSISTENT_TOPIC_ID
        elif (current := hosted.get(s.partition)) is None or s.leader_epoch > current.leader_epoch:
            online.append(s.partition)  # applied: NONE (a leader epoch not newer: STALE_CONTROLLER_EPOCH)
    may_be_offline = {tp for broker, tp in step.replicas_on_offline_dirs if broker == b.id}
    for event in step.events:
        if event.kind is EventKind.LeaderAndIsrResponseReceived and event.broker == b.id:
            may_be_offline.update(event.partitions)
    online = [tp for tp in online if tp in may_be_offline]
    if offline or online:
        step.events.append(ControllerEvent(EventKind.LeaderAndIsrResponseReceived, broker=b.id,
                                           partitions=tuple(offline), online_partitions=tuple(online)))


def _deletion_callback(step: Step, broker: int, request: Request, partitions: tuple[TopicPartition, ...],
                       error: bool) -> None:
    """The StopReplica(delete=true) response callback for ``partitions`` of ``request``, answered in error
    (``error``) or NONE: TopicDeletionStopReplicaResponseReceived joins the controller's queue.

    Kafka 2.3 (``stopReplicaPartitionDeleteResponseCallback``, ``ControllerChannelManager``) keeps only
    the partitions whose topic is in ``topicsWithDeletionStarted`` when the response arrives, and sends
    nothing if none is left; 2.0 – 2.2 pass every response of a deletion request to the event, whose
    processing ignores topics no longer queued. The model reads the controller's set when the broker
    answers (the response's arrival is the broker's step, see the module docstring). A response to an earlier
    controller (one that resigned, or has not noticed it lost controllership) changes nothing: its
    callback runs after its resignation (``if (!isActive) return``).

    With StopReplica v3 (KIP-570, ``sendStopReplicaRequests``' ``responseCallback`` 2.6.0) the callback takes
    only the partitions the request asked to delete (``isPartitionDeleted``), and of those the ones whose topic
    is in ``topicsWithDeletionStarted``; ``processTopicDeletionStopReplicaResponseReceived`` fails the
    replicas of every partition answered with an error, FENCED_LEADER_EPOCH as KAFKA_STORAGE_ERROR.

    Deviations: a response naming partitions in error and partitions deleted is Kafka's one event (its
    failures handled first); the model queues the two parts as two events, in that order. The event says
    KAFKA_STORAGE_ERROR for a partition answered FENCED_LEADER_EPOCH, which the controller handles alike (the
    model's deletions carry ``EpochDuringDelete``, which no broker fences: only a reassignment's deletion,
    which no scenario reaches at 2.4+, could be fenced).
    """
    if request.controller_epoch != step.epoch:
        return
    if step.scenario.since("KAFKA_8237"):
        partitions = tuple(tp for tp in partitions if tp[0] in step.topics_with_deletion_started)
    elif not request.deletion_callback:
        return  # 2.0 – 2.2: a reassignment's StopReplica(delete=true) has a callback that does nothing
    if partitions:
        step.events.append(ControllerEvent(EventKind.TopicDeletionStopReplicaResponseReceived, broker=broker,
                                           partitions=partitions, error=error,
                                           broker_epoch=step.brokers[broker].epoch))


def _stale(scenario: Scenario, b: BrokerState, request: Request) -> str:
    """Why the broker rejects the whole request, or "".

    ``KafkaApis.handleStopReplicaRequest`` (2.2+) answers a request for an earlier incarnation with
    ``StopReplicaResponse(STALE_BROKER_EPOCH, empty map)``, and ``ReplicaManager.stopReplicas`` answers
    an older controller epoch with ``(empty map, STALE_CONTROLLER_EPOCH)``. With no partition in the
    error map no deletion callback fires: 2.3's ``stopReplicaPartitionDeleteResponseCallback``
    (``ControllerChannelManager``) sends no event for an empty map, and in 2.0 – 2.2 the event it
    queues has nothing to fail or complete in ``TopicDeletionStopReplicaResponseReceived.process``
    (the model leaves that no-op event out).
    """
    if request.controller_epoch < b.controller_epoch:
        return "STALE_CONTROLLER_EPOCH"
    if not scenario.bug("KAFKA_7235") and 0 <= request.broker_epoch < b.epoch:
        return "STALE_BROKER_EPOCH (the request was meant for an earlier incarnation)"
    return ""


def _become_leader_or_follower(b: BrokerState, request: Request, filter_isr: bool = False,
                               kafka_12426: bool = False) -> BrokerState:
    """``ReplicaManager.becomeLeaderOrFollower`` (2.3) for each partition of the request.

    A partition whose leader epoch is not newer than the one the broker holds is refused
    (STALE_CONTROLLER_EPOCH for that partition), as is one that does not list the broker among its
    replicas (UNKNOWN_TOPIC_OR_PARTITION). ``makeLeaders`` takes the new leadership as it is.
    ``makeFollowers`` changes the partition only if the leader is among the alive brokers of the
    broker's metadata cache; otherwise (NoLeader, or a leader the cache does not know) it only creates
    the local replica and its log ("cannot become follower since the new leader … is unavailable"),
    and the broker keeps the leader epoch it had: -1 for a partition it did not host before.

    A partition on a failed log directory is answered with KAFKA_STORAGE_ERROR and not changed. So is a partition
    the broker has no log of, when the request's ``isNew`` is false and a log directory of the broker is offline
    (:func:`_cannot_create_log`: ``LogManager.getOrCreateLog`` throws KafkaStorageException, 1.1 - 3.9); the broker
    then marks it offline (``becomeLeaderOrFollower``'s ``markPartitionOffline`` for a partition left without a
    local log), and answers KAFKA_STORAGE_ERROR for it until it restarts. A leader keeps
    the request's ISR as it is (``Partition.makeLeader``), members the request no longer assigns included;
    ``filter_isr`` (the switch KAFKA_9672 off: KAFKA-6638's patch, as Kafka 3.0's broker after KAFKA-9672)
    keeps only the assigned ones.

    Topic IDs (KIP-516, a request of protocol 2.8 or later carries them): before its leader epoch, a
    partition's topic ID is checked (:func:`_check_or_set_topic_id`); one answered INCONSISTENT_TOPIC_ID is not
    changed. A log the broker creates or finds for a partition it takes gets the request's ID from 3.0
    (``kafka_12426``: ``Partition.createLogIfNotExists`` passes it to ``LogManager.getOrCreateLog``, which
    assigns it to a log without one); in 2.8.0 ``createLogIfNotExists`` takes no ID, so a log created for a
    partition the broker did not host has no partition.metadata until a later LeaderAndIsr's check writes it.
    From 3.0 a partition whose leader epoch equals the broker's and whose log has no ID gets the request's
    (``becomeLeaderOrFollower``'s "upgrade to using topic IDs without bumping the epoch", KAFKA-13132).

    Deviation: for a partition not listing the broker, 2.3 also leaves behind an empty Partition
    object that ``becomeLeaderOrFollower`` then marks ``OfflinePartition`` (so the broker would answer
    later LeaderAndIsr for it with KAFKA_STORAGE_ERROR until it restarts); the model creates nothing.
    """
    hosted = {h.partition: h for h in b.partitions}
    logs = set(b.logs)
    offline = set(b.offline_logs)
    request_ids = dict(request.topic_ids)
    log_ids = dict(b.log_topic_ids)
    for s in request.leader_states:
        if s.partition in b.offline_logs:
            continue  # KAFKA_STORAGE_ERROR
        current = hosted.get(s.partition)
        topic_id = request_ids.get(s.partition[0])
        if topic_id is not None and not _check_or_set_topic_id(b, s.partition, topic_id, log_ids, kafka_12426):
            continue  # INCONSISTENT_TOPIC_ID
        if b.id not in s.replicas:
            continue  # UNKNOWN_TOPIC_OR_PARTITION: not an assigned replica
        if _cannot_create_log(b, s):
            offline.add(s.partition)  # KAFKA_STORAGE_ERROR, then markPartitionOffline
            continue
        if current is not None and s.leader_epoch <= current.leader_epoch:
            if (kafka_12426 and topic_id is not None and s.leader_epoch == current.leader_epoch
                    and s.partition in logs and s.partition not in log_ids):
                log_ids[s.partition] = topic_id  # log.assignTopicId, answered NONE
            continue  # STALE_CONTROLLER_EPOCH for that partition (leader epoch not newer)
        logs.add(s.partition)  # getOrCreateReplica: the log is created if missing
        if kafka_12426 and topic_id is not None:
            log_ids.setdefault(s.partition, topic_id)  # getOrCreateLog(topicId): a log without an ID gets it
        if s.leader == b.id:  # Partition.makeLeader
            isr = tuple(r for r in s.isr if r in s.replicas) if filter_isr else s.isr
            hosted[s.partition] = HostedPartition(partition=s.partition, leader_epoch=s.leader_epoch,
                                                  leader=s.leader, isr=isr,
                                                  zk_version=s.zk_version, replicas=s.replicas,
                                                  controller_epoch=s.controller_epoch)
        elif s.leader in b.metadata_live_brokers:  # Partition.makeFollower, then a fetcher to the leader
            hosted[s.partition] = HostedPartition(partition=s.partition, leader_epoch=s.leader_epoch, leader=s.leader,
                                                  fetching=True)
        elif current is None:
            hosted[s.partition] = HostedPartition(partition=s.partition, leader_epoch=-1, leader=NO_LEADER)
    return attrs.evolve(b, controller_epoch=max(b.controller_epoch, request.controller_epoch),
                        partitions=tuple(hosted[tp] for tp in sorted(hosted)), logs=tuple(sorted(logs)),
                        offline_logs=tuple(sorted(offline)), log_topic_ids=tuple(sorted(log_ids.items())))


def _cannot_create_log(b: BrokerState, s: PartitionLeaderState) -> bool:
    """``LogManager.getOrCreateLog`` (1.1 - 3.9): a log the broker does not have is created only if the request says
    ``isNew`` or no log directory is offline ("Can not create log for ... because log directories ... are offline");
    a broker with a failed directory cannot tell whether the log was on it. The model's broker has a directory
    offline when one of its partitions' logs is on a failed one (each log in a directory of its own)."""
    return s.partition not in b.logs and not s.is_new and bool(b.offline_logs)


def _check_or_set_topic_id(b: BrokerState, tp: TopicPartition, topic_id: int, log_ids: dict[TopicPartition, int],
                           kafka_12426: bool) -> bool:
    """Whether the broker takes ``topic_id`` for ``tp``'s log: False is INCONSISTENT_TOPIC_ID, and the partition
    is left as it is. The log checked is the partition's own: in 2.8.0 (``Partition.checkOrSetTopicId``) the log
    attached to the broker's Partition, which a partition it hosts has (the model's hosted partitions are those
    ``makeLeader`` / ``makeFollower`` gave a log) and one it does not host lacks: such a partition passes, and
    its log, if one is on disk, is taken by ``makeLeader`` / ``makeFollower`` whatever its ID; from 3.0
    (KAFKA-12426, ``ReplicaManager.hasConsistentTopicId`` on ``Partition.topicId``) also the log ``LogManager``
    loaded from disk (a partition not hosted since the broker's restart). A log without an ID passes; in 2.8.0
    the check writes the request's ID into its partition.metadata (``log.partitionMetadataFile.write``), from
    3.0 ``getOrCreateLog`` does when the partition is taken."""
    if tp not in b.logs or (not kafka_12426 and b.hosted(tp) is None):
        return True
    log_id = log_ids.get(tp)
    if log_id is None:
        if not kafka_12426:
            log_ids[tp] = topic_id
        return True
    return log_id == topic_id


def inconsistent_topic_ids(b: BrokerState, request: Request, kafka_12426: bool) -> set[TopicPartition]:
    """The partitions of the LeaderAndIsr ``request`` that broker ``b`` answers INCONSISTENT_TOPIC_ID."""
    request_ids = dict(request.topic_ids)
    if not request_ids or not b.log_topic_ids:
        return set()
    log_ids = dict(b.log_topic_ids)
    return {s.partition for s in request.leader_states
            if s.partition not in b.offline_logs and s.partition[0] in request_ids
            and not _check_or_set_topic_id(b, s.partition, request_ids[s.partition[0]], log_ids, kafka_12426)}


def _update_metadata(b: BrokerState, request: Request) -> BrokerState:
    """``ReplicaManager.maybeUpdateMetadataCache`` and ``MetadataCache.updateMetadata`` (2.3): the live
    brokers are replaced by the request's; each partition state is added or overwritten, without
    comparing epochs, except ``LeaderDuringDelete``, which removes the partition."""
    cache = {m.partition: m for m in b.metadata_partitions}
    for m in request.metadata_states:
        if m.leader == LEADER_DURING_DELETE:
            cache.pop(m.partition, None)
        else:
            cache[m.partition] = m
    return attrs.evolve(b, controller_epoch=max(b.controller_epoch, request.controller_epoch),
                        metadata_live_brokers=request.live_brokers,
                        metadata_partitions=tuple(cache[tp] for tp in sorted(cache)))


def rejection_message(broker: int, request: Request, reason: str) -> str:
    """The step log's line for a request the broker rejected as a whole (``reason``: :func:`_stale`'s)."""
    return f"broker {broker} rejects {request.describe()}: {reason}"


def update_metadata_outcome(scenario: Scenario, b: BrokerState, request: Request) -> tuple[BrokerState, str]:
    """What :func:`broker_apply_request` makes of the UpdateMetadata ``request`` at the head of broker ``b``'s
    channel: the broker's part after it, and why the broker rejected the request ("" when it applied it; a
    rejection also goes into the step's log). A function of its arguments alone, which the controller-step memo
    (:mod:`model.zk.transition_memo`) applies at the heads of the channels a memoised step sent to."""
    stale = _stale(scenario, b, request)
    return (b, stale) if stale else (_update_metadata(b, request), "")


def apply_update_metadata_at_heads(step: Step) -> None:
    """Every live broker applies the UpdateMetadata requests at the head of its channel (see the module
    docstring for why this is not a step of its own)."""
    if not step.is_thawed("channels"):
        # The step sent and took nothing: the heads are as the previous step left them, settled unless a former
        # controller's resignation exposed an UpdateMetadata or this step restarted a broker with one at its head.
        alive = ({b: broker.alive for b, broker in step.brokers.items()} if step.is_thawed("brokers")
                 else {broker.id: broker.alive for broker in step.source.brokers})
        if not any(queue[0].kind is RequestKind.UpdateMetadata and alive[b] for b, queue in step.source.channels):
            return
    for broker in sorted(step.channels):
        if not step.brokers[broker].alive:
            continue
        while step.channels.get(broker) and step.channels[broker][0].kind is RequestKind.UpdateMetadata:
            broker_apply_request(step, broker)


def _stop_replicas(b: BrokerState, request: Request, storage_error: TopicPartition | None,
                   accept_equal_epoch: bool) -> tuple[BrokerState, set[TopicPartition]]:
    """``ReplicaManager.stopReplicas`` / ``stopReplica`` (2.3, 2.6.0), and the partitions the broker did not
    stop (answered with an error). Each partition stops its fetcher; one that asks to be deleted is dropped
    (``allPartitions.remove``) and its log deleted. Without deletion the partition stays hosted, with the leader
    epoch it had, and its log stays: a later LeaderAndIsr must still carry a newer leader epoch to be applied.

    A partition on a failed log directory is answered KAFKA_STORAGE_ERROR. From StopReplica v3 (KIP-570,
    ``stopReplicas`` 2.6.0) a partition the broker hosts is stopped only if the request's leader epoch is
    ``EpochDuringDelete`` (-2), ``NoEpoch`` (-1, every partition of an older request) or newer than the
    partition's own; otherwise it is answered FENCED_LEADER_EPOCH and left as it is, an equal epoch included
    while switch ``KAFKA_13972`` is on (2.6 - 3.4: ``requestLeaderEpoch > currentLeaderEpoch``; its fix, commit
    653e284f of 3.5.0, accepts an equal epoch, ``>=``: ``accept_equal_epoch``). A partition the broker does not
    host is stopped whatever its epoch (its log, if any, deleted).

    Deviation: the partition whose deletion fails (``storage_error``) is left as it was, its fetcher
    included (Kafka removes every named partition's fetcher first; the failure leaves the partition in
    an in-between state the model does not represent)."""
    hosted = {h.partition: h for h in b.partitions}
    not_stopped: set[TopicPartition] = set()
    stopped: set[TopicPartition] = set()
    deleted: set[TopicPartition] = set()
    for ps in request.stop_replica_states():
        tp = ps.partition
        current = hosted.get(tp)
        if tp in b.offline_logs or (ps.delete_partition and tp == storage_error):
            not_stopped.add(tp)  # KAFKA_STORAGE_ERROR
        elif (current is not None and ps.leader_epoch not in (EPOCH_DURING_DELETE, NO_EPOCH)
              and (ps.leader_epoch < current.leader_epoch
                   or (ps.leader_epoch == current.leader_epoch and not accept_equal_epoch))):
            not_stopped.add(tp)  # FENCED_LEADER_EPOCH
        elif ps.delete_partition:
            deleted.add(tp)
        else:
            stopped.add(tp)
    if not deleted:
        return attrs.evolve(b, controller_epoch=max(b.controller_epoch, request.controller_epoch),
                            partitions=tuple(attrs.evolve(h, fetching=False) if h.partition in stopped else h
                                             for h in b.partitions)), not_stopped
    return attrs.evolve(
        b,
        controller_epoch=max(b.controller_epoch, request.controller_epoch),
        partitions=tuple(attrs.evolve(h, fetching=False) if h.partition in stopped else h
                         for h in b.partitions if h.partition not in deleted),
        logs=tuple(sorted(set(b.logs) - deleted)),
        log_topic_ids=tuple((tp, i) for tp, i in b.log_topic_ids if tp not in deleted),  # partition.metadata too
    ), not_stopped


def admin_reassign_partitions(step: Step, index: int) -> None:
    """``kafka-reassign-partitions.sh --execute`` (``ReassignPartitionsCommand.reassignPartitions``):
    create /admin/reassign_partitions with the targets; its creation fires PartitionReassignment.

    The tool refuses while the znode exists ("There is an existing assignment running") and checks
    that the partitions exist and the target brokers are registered; the model offers the step only
    while the znode is absent and the topic exists, and leaves out the broker check: a target broker
    that dies after the check is the same situation for the controller.
    """
    command = step.scenario.reassignments[index]
    step.zk_reassign_partitions = {(command.topic, p): reps for p, reps in command.targets}
    step.enqueue_once(EventKind.PartitionReassignment)
    step.budget = attrs.evolve(step.budget,
                               reassignments_submitted=tuple(sorted((*step.budget.reassignments_submitted, index))))


def added_partitions(scenario: Scenario, zk_brokers: Iterable[int], existing: tuple[tuple[int, ...], ...],
                     topic: str) -> tuple[tuple[int, ...], ...] | None:
    """The replicas of the partitions ``kafka-topics --alter --partitions N`` (``ZookeeperTopicService
    .alterTopic`` 2.3) would add to ``existing``: ``AdminZkClient.addPartitions`` over the registered
    brokers sorted by id (``getBrokerMetadatas``), from the start index of partition 0's leader; None
    when the command would fail (an admin error such as a replication factor above the live brokers)."""
    racks = scenario.racks
    brokers = [kafka_assignment.BrokerMetadata(b, racks[b]) for b in sorted(zk_brokers)]
    try:
        added = kafka_assignment.add_partitions_assignment(
            dict(enumerate(existing)), brokers, scenario.topic(topic).add_partitions, topic=topic)
    except kafka_assignment.KafkaAdminError:
        return None
    return tuple(tuple(added[p]) for p in sorted(added))


def admin_add_partitions(step: Step, topic: str) -> None:
    """``kafka-topics --alter --partitions N``: rewrite /brokers/topics/<topic> with the added partitions
    (``writeTopicPartitionAssignment(isUpdate = true)``), which fires PartitionModifications."""
    existing = step.zk_topics[topic]
    added = added_partitions(step.scenario, step.zk_brokers, existing, topic)
    assert added is not None, "offered only when the command succeeds"
    step.zk_topics[topic] = (*existing, *added)
    step.topic_znode_written(topic)
    step.budget = attrs.evolve(step.budget, partitions_added=tuple(sorted((*step.budget.partitions_added, topic))))


def admin_recreate_topic(step: Step, topic: str) -> None:
    """``AdminZkClient.createTopicWithAssignment`` for a topic of the same name as one deleted earlier in
    the run. The logs of the earlier topic still on brokers' disks are remembered
    (:class:`~model.zk.state.values.History`): before 2.8 (or below protocol 2.8) nothing tells them apart from
    the new topic's; from 2.8 (KIP-516) the new topic gets an ID of its own from the controller, which a broker
    compares with the one in such a log's partition.metadata, when it has one (:func:`_check_or_set_topic_id`)."""
    step.stray_logs |= {(b.id, tp) for b in step.brokers.values() for tp in b.logs if tp[0] == topic}
    step.zk_topics[topic] = step.scenario.topic(topic).recreated_replicas
    step.enqueue_once(EventKind.TopicChange)
    step.budget = attrs.evolve(step.budget, topics_recreated=tuple(sorted((*step.budget.topics_recreated, topic))))


def admin_create_topic(step: Step, topic: str) -> None:
    """``AdminZkClient.createTopicWithAssignment``: write /brokers/topics/<topic>."""
    step.zk_topics[topic] = step.scenario.topic(topic).replicas
    step.enqueue_once(EventKind.TopicChange)
    step.budget = attrs.evolve(step.budget, topics_created=tuple(sorted((*step.budget.topics_created, topic))))


def admin_delete_topic(step: Step, topic: str) -> None:
    """``kafka-topics.sh --delete``: create /admin/delete_topics/<topic>."""
    step.zk_delete_topics.add(topic)
    step.enqueue_once(EventKind.TopicDeletion)
    step.budget = attrs.evolve(step.budget,  # once per incarnation of the topic: a multiset
                               deletions_requested=tuple(sorted((*step.budget.deletions_requested, topic))))


def log_dir_failure(step: Step, broker: int, tp: TopicPartition) -> None:
    """The log directory holding the broker's log of ``tp`` fails (``ReplicaManager.handleLogDirFailure``, 2.3):
    its partitions leave the broker's memory (fetchers stopped, the partition marked offline), the logs stay on
    the broken disk, and the broker writes /log_dir_event_notification (``propagateLogDirEvent``), which fires
    the controller's LogDirEventNotification.

    Deviation: each partition's log is in a directory of its own, so a failure takes one replica offline
    (Kafka takes every partition of the directory, and halts the broker when its last directory fails)."""
    b = step.brokers[broker]
    step.brokers[broker] = attrs.evolve(b, partitions=tuple(h for h in b.partitions if h.partition != tp),
                                        offline_logs=tuple(sorted({*b.offline_logs, tp})))
    step.zk_log_dir_event_notifications.add(broker)
    step.enqueue_once(EventKind.LogDirEventNotification)
    step.budget = attrs.evolve(step.budget, log_dir_failures=step.budget.log_dir_failures + 1)


def admin_preferred_replica_election(step: Step, topic: str) -> None:
    """``kafka-preferred-replica-election.sh --zookeeper`` with a JSON file naming the topic's partitions
    (``PreferredReplicaLeaderElectionCommand``): create /admin/preferred_replica_election, whose creation fires
    PreferredReplicaLeaderElection. The tool refuses while the znode exists ("Preferred replica leader election
    currently in progress"); the model offers the step only while it is absent."""
    parts = step.zk_topics[topic]
    step.zk_preferred_replica_election = {(topic, p) for p in range(len(parts))}
    step.enqueue_once(EventKind.PreferredReplicaLeaderElection)
    step.budget = attrs.evolve(step.budget,
                               preferred_elections=tuple(sorted((*step.budget.preferred_elections, topic))))


def auto_rebalance_timer(step: Step) -> None:
    """The controller's ``auto-leader-rebalance-task`` fires (``scheduleAutoLeaderRebalanceTask``): it queues
    AutoPreferredReplicaLeaderElection."""
    step.events.append(ControllerEvent(EventKind.AutoPreferredReplicaLeaderElection))
    step.budget = attrs.evolve(step.budget, auto_rebalance_checks=step.budget.auto_rebalance_checks + 1)


def admin_alter_unclean_leader_election(step: Step) -> None:
    """``kafka-configs --entity-type brokers --entity-default --alter`` flips ``unclean.leader.election.enable``
    (a dynamic cluster-wide default since 1.1, KIP-226). Enabling it makes every broker's
    ``DynamicBrokerConfig`` call ``enableDefaultUncleanLeaderElection``, whose UncleanLeaderElectionEnable event
    the active controller processes (2.0+); disabling it only takes effect at the next election."""
    step.zk_unclean_leader_election_enable = not step.zk_unclean_leader_election_enable
    if step.zk_unclean_leader_election_enable and step.scenario.since("UNCLEAN_LEADER_ELECTION_ENABLE_EVENT"):
        step.events.append(ControllerEvent(EventKind.UncleanLeaderElectionEnable))
    step.budget = attrs.evolve(step.budget, unclean_config_changes=step.budget.unclean_config_changes + 1)


def admin_alter_topic_unclean_leader_election(step: Step, topic: str) -> None:
    """``kafka-configs --entity-type topics --entity-name <t> --alter --add-config
    unclean.leader.election.enable=true`` (``AdminZkClient.changeTopicConfig``): the topic's config znode and a
    change notification. The controller's broker applies it in ``TopicConfigHandler.processConfigChanges``,
    which from 2.1 (KAFKA-6835) calls ``enableTopicUncleanLeaderElection``: a TopicUncleanLeaderElectionEnable
    event for the active controller. In 1.1 – 2.0 it takes effect at the topic's next election, which reads the
    topic's config from ZooKeeper (``zkClient.getLogConfigs``) in every version.

    Deviation: the change notification reaches the controller's broker at once (Kafka's config change listener
    processes it asynchronously, as the controller reads the config itself when it needs it)."""
    step.zk_topic_unclean_leader_election_enable.add(topic)
    if step.scenario.since("TOPIC_UNCLEAN_LEADER_ELECTION_ENABLE_EVENT"):
        step.watch_events.append(ControllerEvent(EventKind.TopicUncleanLeaderElectionEnable, topic=topic))
    step.budget = attrs.evolve(step.budget, unclean_config_changes=step.budget.unclean_config_changes + 1)


def admin_alter_partition_reassignments(step: Step, index: int) -> None:
    """``Admin.alterPartitionReassignments`` (KIP-455, 2.4; ``kafka-reassign-partitions.sh --bootstrap-server
    --execute`` from 2.5): ``KafkaApis.handleAlterPartitionReassignments`` hands the targets to the controller,
    whose ``ApiPartitionReassignment`` event carries them. The model queues it on the active controller's queue
    (a request reaching a broker that is not the controller, answered NOT_CONTROLLER and retried by the client, is
    the same event later); a request queued when the controller resigns is lost with its queue, and the admin
    does not retry it."""
    command = step.scenario.reassignments[index]
    step.events.append(ControllerEvent(EventKind.ApiPartitionReassignment,
                                       reassignments=tuple(((command.topic, p), reps) for p, reps in command.targets)))
    step.budget = attrs.evolve(step.budget,
                               reassignments_submitted=tuple(sorted((*step.budget.reassignments_submitted, index))))


def admin_cancel_partition_reassignments(step: Step, index: int) -> None:
    """``Admin.alterPartitionReassignments`` with no target (``Optional.empty()``) for the partitions of an entry
    (``kafka-reassign-partitions.sh --cancel``, 2.5): the controller reverts a partition being reassigned to its
    original replicas (``maybeBuildReassignment``)."""
    command = step.scenario.reassignments[index]
    step.events.append(ControllerEvent(EventKind.ApiPartitionReassignment,
                                       reassignments=tuple(((command.topic, p), ()) for p, _ in command.targets)))
    step.budget = attrs.evolve(step.budget,
                               reassignments_cancelled=tuple(sorted((*step.budget.reassignments_cancelled, index))))


def admin_elect_leaders(step: Step, topic: str, *, unclean: bool) -> None:
    """``Admin.electLeaders`` (KIP-460, 2.4; ``kafka-leader-election.sh --election-type preferred|unclean
    --topic``) for the partitions of the topic znode: ``KafkaApis.handleElectReplicaLeader`` hands them to the
    controller, whose ``ReplicaLeaderElection`` event (``AdminClientTriggered``) carries them. Queued on the active
    controller's queue like AlterPartitionReassignments (NOT_CONTROLLER and the client's retry are the same event
    later); lost with the queue of a controller that resigns, and not retried. No znode is written."""
    parts = step.zk_topics[topic]
    kind = EventKind.ElectUncleanLeaders if unclean else EventKind.ElectPreferredLeaders
    step.events.append(ControllerEvent(kind, partitions=tuple((topic, p) for p in range(len(parts)))))
    step.budget = attrs.evolve(step.budget,
                               preferred_elections=tuple(sorted((*step.budget.preferred_elections, topic))))


def admin_cancel_reassignment(step: Step, index: int) -> None:
    """The admin cancels a stuck reassignment the only way 2.x offers: ``rmr /admin/reassign_partitions``. The
    controller watches only the znode's creation, so the reassignment in its memory goes on until a new
    controller rebuilds its context from ZooKeeper (operators delete /controller as well for that)."""
    step.zk_reassign_partitions.clear()
    step.budget = attrs.evolve(step.budget,
                               reassignments_cancelled=tuple(sorted((*step.budget.reassignments_cancelled, index))))
