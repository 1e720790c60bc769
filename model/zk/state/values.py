"""The model's state: ZooKeeper, the active controller, the brokers, and the requests between them.

Everything here is an attrs frozen value whose containers are tuples sorted by key, so that equal
states are equal values and encode to equal bytes. The four parts follow DESIGN.md:

* :class:`ZkState` is what survives a controller failover: registered brokers with their broker
  epochs (``/brokers/ids``), topic assignments (``/brokers/topics/<t>``), partition-state znodes
  (``/brokers/topics/<t>/partitions/<p>/state``), ``/admin/delete_topics``,
  ``/admin/reassign_partitions``, the partitions named under ``/isr_change_notification`` and
  ``/controller_epoch``.
* :class:`ControllerState` is the active controller's ``ControllerContext`` (its cache, with the
  partitions being reassigned), the deletion manager's sets and the ``ControllerEventManager``
  queue.
* :class:`BrokerState` is what each broker believes: its ``ReplicaManager`` partitions (leader
  epoch and leader it last accepted; as leader, the ISR it maintains and the znode version it
  writes against; as follower, whether it fetches), its ``MetadataCache`` (live brokers, and the leader and leader
  epoch of each partition, as UpdateMetadata requests told it) and the logs on its disks.
* ``channels`` are the ``ControllerChannelManager`` per-broker request queues: requests sent and
  not yet applied by the broker.
* :class:`Budget` counts the environment's steps against the scenario's bounds, and
  :class:`History` keeps what properties must know of the past (kmc's, not Kafka's).

Deviations, on purpose: a broker epoch is the count of the broker's registrations, not the czxid
of its znode (the controller only compares epochs of one broker id, so a per-broker counter orders
them the same way); an UpdateMetadata request and a broker's metadata cache carry, of each
partition's ``UpdateMetadataRequest.PartitionState``, only the leader and the leader epoch (the
ISR, zkVersion, replicas and offline replicas, and from 2.8 the topic IDs, are not modelled: nothing in
the model reads them from a cache). A topic ID (KIP-516, 2.8) is the topic's incarnation, 1 for its
first creation and one more for each re-creation under its name, where Kafka draws a random UUID
(``Uuid.randomUuid``): the model's incarnations of a topic never share an ID, as Kafka's in practice do
not; a topic or log without an ID (Kafka's ``ZERO_UUID``) has no entry.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from typing import Any

import attrs

from model.zk.state.schema import MAP, MAP_BY_ID, SET, BrokerId
from model.zk.state.states import PartitionState, ReplicaState

TopicPartition = tuple[str, int]
Replica = tuple[str, int, BrokerId]  # (topic, partition, broker): Kafka's PartitionAndReplica

NO_LEADER = -1  # LeaderAndIsr.NoLeader
LEADER_DURING_DELETE = -2  # LeaderAndIsr.LeaderDuringDelete: UpdateMetadata for a topic being deleted
NO_EPOCH = -1  # LeaderAndIsr.NoEpoch: a StopReplica partition without leadership info, or of a request before v3
EPOCH_DURING_DELETE = -2  # LeaderAndIsr.EpochDuringDelete: a StopReplica partition of a topic queued for deletion


class LeaderRecoveryState(enum.IntEnum):
    """``org.apache.kafka.metadata.LeaderRecoveryState`` (KIP-704, Kafka 3.2.0), with Kafka's values: RECOVERING
    marks a partition whose leader was elected from outside the ISR (an unclean election) until the leader says it
    recovered, through AlterPartition."""

    RECOVERED = 0
    RECOVERING = 1


@attrs.frozen
class LeaderAndIsr:
    """A partition-state znode's content: Kafka's ``LeaderIsrAndControllerEpoch``. ``leader_recovery_state``
    (KIP-704, 3.2.0) is RECOVERED but after an unclean election with ``inter.broker.protocol.version`` 3.2 and
    later (``zk/ZkData.scala`` ``TopicPartitionStateZNode.encode`` writes ``leader_recovery_state`` only when it
    is not RECOVERED); in an AlterIsr request, the state the leader sends."""

    leader: BrokerId
    leader_epoch: int
    isr: tuple[BrokerId, ...]
    zk_version: int
    controller_epoch: int
    leader_recovery_state: LeaderRecoveryState = LeaderRecoveryState.RECOVERED

    def describe(self) -> str:
        return (f"leader={self.leader} leaderEpoch={self.leader_epoch} isr={list(self.isr)} "
                f"zkVersion={self.zk_version}{recovery_text(self.leader_recovery_state)}")


def recovery_text(state: LeaderRecoveryState) -> str:
    """`` leaderRecoveryState=RECOVERING`` for a partition marked RECOVERING, nothing otherwise (as the znode
    names the field only then)."""
    return "" if state is LeaderRecoveryState.RECOVERED else f" leaderRecoveryState={state.name}"


class EventKind(enum.IntEnum):
    """Controller events of ``KafkaController`` (``ControllerEvent`` subclasses)."""

    BrokerChange = 1
    TopicChange = 2
    TopicDeletion = 3
    TopicDeletionStopReplicaResponseReceived = 4
    IsrChangeNotification = 5
    PartitionModifications = 6
    PartitionReassignment = 7
    PartitionReassignmentIsrChange = 8
    Reelect = 9  # the new controller's election: onControllerFailover
    ControlledShutdown = 10
    PreferredReplicaLeaderElection = 11
    AutoPreferredReplicaLeaderElection = 12
    LogDirEventNotification = 13
    LeaderAndIsrResponseReceived = 14
    UncleanLeaderElectionEnable = 15
    TopicUncleanLeaderElectionEnable = 16
    ApiPartitionReassignment = 17  # an AlterPartitionReassignments request (KIP-455, 2.4)
    # an ElectLeaders request (KIP-460, 2.4): Kafka's ReplicaLeaderElection(Some(partitions), PREFERRED or UNCLEAN,
    # AdminClientTriggered); ``partitions`` are the request's
    ElectPreferredLeaders = 18
    ElectUncleanLeaders = 19
    # an AlterIsr request from a partition leader (KIP-497, 2.7, inter.broker.protocol.version 2.7-IV2):
    # ``broker`` and ``request_epoch`` are the request's brokerId and brokerEpoch, ``isrs_to_alter`` its partitions
    AlterIsrReceived = 20


@attrs.frozen
class ControllerEvent:
    kind: EventKind
    broker: BrokerId = -1  # StopReplica and LeaderAndIsr responses: the responding broker; ControlledShutdown: the
    #                   broker shutting down
    partitions: tuple[TopicPartition, ...] = ()  # StopReplica responses: the partitions answered;
    #                                              PartitionReassignmentIsrChange: its partition;
    #                                              LeaderAndIsrResponseReceived: those in KAFKA_STORAGE_ERROR
    error: bool = False  # for StopReplica responses: KAFKA_STORAGE_ERROR for every partition answered
    # For StopReplica responses, the epoch of the broker incarnation that answered: a report's
    # annotation (Kafka's response carries none), not part of the state (not encoded or compared).
    broker_epoch: int = attrs.field(default=-1, eq=False)
    topic: str = ""  # PartitionModifications
    request_epoch: int = -1  # ControlledShutdown: the broker epoch the request carries (KIP-380, 2.2+)
    # LeaderAndIsrResponseReceived: the partitions answered NONE that the controller may hold in replicasOnOfflineDirs
    # when it processes the event (the others change nothing)
    online_partitions: tuple[TopicPartition, ...] = ()
    # ApiPartitionReassignment: the request's target replicas by partition (Kafka's Option[Seq[Int]]); an empty
    # target stands for None, a cancellation (Kafka answers an empty list INVALID_REPLICA_ASSIGNMENT, which no
    # request of the model carries)
    reassignments: tuple[tuple[TopicPartition, tuple[BrokerId, ...]], ...] = ()
    # AlterIsrReceived: Kafka's isrsToAlter, each partition's LeaderAndIsr(brokerId, leaderEpoch, newIsr,
    # currentIsrVersion) (``controller_epoch`` unused: -1)
    isrs_to_alter: tuple[tuple[TopicPartition, LeaderAndIsr], ...] = ()

    def describe(self) -> str:
        if self.kind is EventKind.AlterIsrReceived:
            parts = ", ".join(f"{partition_name(tp)}: leaderEpoch={lai.leader_epoch} newIsr={list(lai.isr)} "
                              f"currentIsrVersion={lai.zk_version}" for tp, lai in self.isrs_to_alter)
            return f"AlterIsrReceived(broker={self.broker}, brokerEpoch={self.request_epoch}, [{parts}])"
        if self.kind is EventKind.ApiPartitionReassignment:
            parts = ", ".join(f"{partition_name(tp)} -> {list(reps) if reps else 'None'}"
                              for tp, reps in self.reassignments)
            return f"ApiPartitionReassignment({parts})"
        if self.kind is EventKind.TopicDeletionStopReplicaResponseReceived:
            parts = ", ".join(partition_name(tp) for tp in self.partitions)
            return (f"TopicDeletionStopReplicaResponseReceived(broker={self.broker}, [{parts}], "
                    f"error={'KAFKA_STORAGE_ERROR' if self.error else 'NONE'})")
        if self.kind in (EventKind.ElectPreferredLeaders, EventKind.ElectUncleanLeaders):
            kind = "PREFERRED" if self.kind is EventKind.ElectPreferredLeaders else "UNCLEAN"
            parts = ", ".join(partition_name(tp) for tp in self.partitions)
            return f"ReplicaLeaderElection([{parts}], {kind}, AdminClientTriggered)"
        if self.kind is EventKind.PartitionReassignmentIsrChange:
            return f"PartitionReassignmentIsrChange({partition_name(self.partitions[0])})"
        if self.kind in (EventKind.PartitionModifications, EventKind.TopicUncleanLeaderElectionEnable):
            return f"{self.kind.name}({self.topic})"
        if self.kind is EventKind.ControlledShutdown:
            return f"ControlledShutdown(id={self.broker}, brokerEpoch={self.request_epoch})"
        if self.kind is EventKind.LeaderAndIsrResponseReceived:
            parts = ", ".join(partition_name(tp) for tp in self.partitions)
            online = ", ".join(partition_name(tp) for tp in self.online_partitions)
            return (f"LeaderAndIsrResponseReceived(broker={self.broker}, KAFKA_STORAGE_ERROR: [{parts}]"
                    + (f", NONE: [{online}])" if online else ")"))
        return self.kind.name


class RequestKind(enum.IntEnum):
    LeaderAndIsr = 1
    StopReplica = 2
    UpdateMetadata = 3


@attrs.frozen
class PartitionLeaderState:
    """One partition of a LeaderAndIsr request (``LeaderAndIsrRequest.PartitionState``)."""

    partition: TopicPartition
    leader: BrokerId
    leader_epoch: int
    isr: tuple[BrokerId, ...]
    replicas: tuple[BrokerId, ...]
    is_new: bool
    zk_version: int  # the partition-state znode version the controller wrote or read
    controller_epoch: int  # of the controller that made the leadership decision
    # KIP-704 (3.2.0): the znode's leaderRecoveryState (ControllerChannelManager.addLeaderAndIsrRequestForBrokers)
    leader_recovery_state: LeaderRecoveryState = LeaderRecoveryState.RECOVERED


@attrs.frozen
class MetadataPartitionState:
    """A partition's leader and leader epoch, as an UpdateMetadata request carries them and a
    broker's ``MetadataCache`` keeps them (``UpdateMetadataRequest.PartitionState``, in part)."""

    partition: TopicPartition
    leader: BrokerId  # LEADER_DURING_DELETE in a request: remove the partition from the cache
    leader_epoch: int


@attrs.frozen
class StopReplicaPartitionState:
    """One partition of a StopReplica request as the broker reads it (``StopReplicaRequestData.
    StopReplicaPartitionState``, KIP-570, Kafka 2.6): its leader epoch and whether to delete it. A request of
    version 3 (``inter.broker.protocol.version`` 2.6-IV0 and later) carries one per partition; for an older
    request ``StopReplicaRequest.partitionStates`` (2.6) gives every partition ``NoEpoch`` and the request's
    ``deletePartitions`` (:meth:`Request.stop_replica_states`)."""

    partition: TopicPartition
    leader_epoch: int  # EPOCH_DURING_DELETE, NO_EPOCH or the controller's cached leader epoch
    delete_partition: bool


@attrs.frozen
class Request:
    """A controller-to-broker request waiting in the broker's channel. (The StopReplica flags come before
    the partition lists: the canonical encoding writes fields in declaration order.)"""

    kind: RequestKind
    controller_epoch: int
    broker_epoch: int  # the epoch of the broker the controller meant (KIP-380, Kafka 2.2+)
    delete_partitions: bool = False  # StopReplica
    deletion_callback: bool = False  # StopReplica(delete=true): its response feeds the TopicDeletionManager
    leader_states: tuple[PartitionLeaderState, ...] = ()  # LeaderAndIsr
    partitions: tuple[TopicPartition, ...] = ()  # StopReplica before v3
    # StopReplica v3 (KIP-570): its partitions with their leader epochs and delete flags (``partitions`` and
    # ``delete_partitions`` stay empty and false, as v3's top-level deletePartitions is false)
    partition_states: tuple[StopReplicaPartitionState, ...] = ()
    live_brokers: tuple[BrokerId, ...] = attrs.field(default=(), metadata=SET)  # UpdateMetadata: the controller's
    #                                                              live-or-shutting-down brokers
    metadata_states: tuple[MetadataPartitionState, ...] = ()  # UpdateMetadata
    # LeaderAndIsr v5 (KIP-516, inter.broker.protocol.version 2.8+): the topic ID of each topic of its partitions
    # that the controller's context has (``LeaderAndIsrRequest.topicIds``; a topic without one is Kafka's
    # ZERO_UUID, which the broker takes as no ID); empty below 2.8
    topic_ids: tuple[tuple[str, int], ...] = attrs.field(default=(), metadata=MAP)

    def describe(self) -> str:
        if self.kind is RequestKind.LeaderAndIsr:
            parts = ", ".join(
                f"{s.partition[0]}-{s.partition[1]}: leader={s.leader} epoch={s.leader_epoch} "
                f"isr={list(s.isr)}{' isNew' if s.is_new else ''}{recovery_text(s.leader_recovery_state)}"
                for s in self.leader_states)
            return f"LeaderAndIsr[{parts}]"
        if self.kind is RequestKind.UpdateMetadata:
            parts = ", ".join(f"{partition_name(m.partition)}: leader={m.leader} epoch={m.leader_epoch}"
                              for m in self.metadata_states)
            return f"UpdateMetadata(liveBrokers={list(self.live_brokers)})[{parts}]"
        if self.partition_states:
            parts = ", ".join(f"{partition_name(ps.partition)}: leaderEpoch={ps.leader_epoch}"
                              f"{' delete' if ps.delete_partition else ''}" for ps in self.partition_states)
            return f"StopReplica[{parts}]"
        parts = ", ".join(f"{t}-{p}" for t, p in self.partitions)
        return f"StopReplica(deletePartitions={str(self.delete_partitions).lower()})[{parts}]"

    def stop_replica_states(self) -> tuple[StopReplicaPartitionState, ...]:
        """``StopReplicaRequest.partitionStates`` (2.6): a v3 request's own states; for an older request, each
        partition with ``NoEpoch`` and the request's ``deletePartitions``."""
        if self.partition_states:
            return self.partition_states
        return tuple(StopReplicaPartitionState(partition=tp, leader_epoch=NO_EPOCH,
                                               delete_partition=self.delete_partitions) for tp in self.partitions)

    @property
    def deletes_partitions(self) -> bool:
        """Whether the StopReplica deletes any partition (its deletion callback may fire)."""
        return self.delete_partitions or any(ps.delete_partition for ps in self.partition_states)

    def deleted_partitions(self) -> tuple[TopicPartition, ...]:
        """The partitions the StopReplica asks the broker to delete."""
        if self.partition_states:
            return tuple(ps.partition for ps in self.partition_states if ps.delete_partition)
        return self.partitions if self.delete_partitions else ()


@attrs.frozen
class HostedPartition:
    """A partition in a broker's ReplicaManager (``cluster.Partition``): the leader epoch and leader it
    last accepted. A leader also keeps the ISR it maintains, the partition-state znode version its
    next ISR write is conditional on, the assigned replicas and the epoch of the controller that made
    it leader (written into the znode with the ISR); a follower keeps whether its fetcher runs.

    Abstraction: Kafka's Partition keeps these fields in both roles, but a follower never reads the
    leader ones before a LeaderAndIsr overwrites them (``makeFollower`` empties the ISR), so the model
    keeps them at their defaults on followers, and ``fetching`` is False on leaders.
    """

    partition: TopicPartition
    leader_epoch: int
    leader: BrokerId
    isr: tuple[BrokerId, ...] = ()  # leader only, in Kafka's set order (insertion order for up to 4 members)
    zk_version: int = -1  # leader only
    replicas: tuple[BrokerId, ...] = ()  # leader only
    controller_epoch: int = -1  # leader only
    fetching: bool = False  # follower only: a fetcher follows ``leader`` at ``leader_epoch``
    # leader only, with AlterIsr (KIP-497, 2.7): Partition.isrState's proposed ISR while an AlterIsr is in flight
    # (PendingExpandIsr: the ISR and the joining replica; PendingShrinkIsr: the ISR without the leaving ones); empty
    # for CommittedIsr
    pending_isr: tuple[BrokerId, ...] = ()


#: A broker's controlled shutdown (``KafkaServer.controlledShutdown``): not shutting down; its
#: ControlledShutdownRequest is waiting for the controller; the controller answered with no partition
#: left (the broker now shuts down); it answered with partitions left or an error (the broker retries
#: while it has retries, then shuts down anyway).
SHUTDOWN_NONE, SHUTDOWN_REQUESTED, SHUTDOWN_SUCCEEDED, SHUTDOWN_RETRY = 0, 1, 2, 3


@attrs.frozen
class BrokerState:
    id: BrokerId
    alive: bool
    epoch: int  # registrations so far (the broker epoch, see the module docstring)
    controller_epoch: int  # highest controller epoch seen in a request
    partitions: tuple[HostedPartition, ...]  # in memory: lost when the broker dies
    logs: tuple[TopicPartition, ...]  # on disk: survive restarts, removed by StopReplica(delete)
    # MetadataCache: alive brokers (in memory)
    metadata_live_brokers: tuple[BrokerId, ...] = attrs.field(default=(), metadata=SET)
    metadata_partitions: tuple[MetadataPartitionState, ...] = ()  # MetadataCache: by partition (in memory)
    offline_logs: tuple[TopicPartition, ...] = ()  # logs on a failed log directory (until the broker restarts)
    controlled_shutdown: int = 0  # KafkaServer.controlledShutdown: one of the SHUTDOWN_* values
    # ReplicaManager.isrChangeSet (in memory): partitions whose ISR this broker changed as leader and has not yet
    # named under /isr_change_notification (maybePropagateIsrChanges)
    pending_isr_changes: tuple[TopicPartition, ...] = ()
    # partition.metadata (KIP-516, 2.8): the topic ID written next to each log that has one (on disk: survives
    # restarts, removed with the log); a log created before the broker met a topic ID has none
    log_topic_ids: tuple[tuple[TopicPartition, int], ...] = attrs.field(default=(), metadata=MAP)

    def hosted(self, tp: TopicPartition) -> HostedPartition | None:
        for h in self.partitions:
            if h.partition == tp:
                return h
        return None

    def log_topic_id(self, tp: TopicPartition) -> int | None:
        """The topic ID in the partition.metadata of the broker's log of ``tp``, or None."""
        for key, topic_id in self.log_topic_ids:
            if key == tp:
                return topic_id
        return None

    def cached(self, tp: TopicPartition) -> MetadataPartitionState | None:
        """The partition's entry in the broker's metadata cache."""
        for m in self.metadata_partitions:
            if m.partition == tp:
                return m
        return None


@attrs.frozen
class ZkState:
    # (broker id, broker epoch) of registered brokers
    brokers: tuple[tuple[BrokerId, int], ...] = attrs.field(metadata=MAP)
    # topic -> replicas by partition
    topics: tuple[tuple[str, tuple[tuple[BrokerId, ...], ...]], ...] = attrs.field(metadata=MAP)
    partitions: tuple[tuple[TopicPartition, LeaderAndIsr], ...] = attrs.field(metadata=MAP)  # partition-state znodes
    delete_topics: tuple[str, ...] = attrs.field(metadata=SET)  # children of /admin/delete_topics
    controller_epoch: int
    # named by /isr_change_notification children
    isr_change_notifications: tuple[TopicPartition, ...] = attrs.field(default=(), metadata=SET)
    # /admin/reassign_partitions (empty: the znode does not exist)
    reassign_partitions: tuple[tuple[TopicPartition, tuple[BrokerId, ...]], ...] = attrs.field(default=(), metadata=MAP)
    # /admin/preferred_replica_election (empty: absent)
    preferred_replica_election: tuple[TopicPartition, ...] = attrs.field(default=(), metadata=SET)
    # brokers named by /log_dir_event_notification children
    log_dir_event_notifications: tuple[BrokerId, ...] = attrs.field(default=(), metadata=SET)
    unclean_leader_election_enable: bool = False  # the cluster-wide dynamic config (/config/brokers/<default>)
    # topics whose config (/config/topics/<t>) sets unclean.leader.election.enable=true
    topic_unclean_leader_election_enable: tuple[str, ...] = attrs.field(default=(), metadata=SET)
    # the topic znode's "adding_replicas" and "removing_replicas" (TopicZNode version 2, KIP-455, 2.4): by partition,
    # only partitions with a non-empty list (empty before 2.4)
    adding_replicas: tuple[tuple[TopicPartition, tuple[BrokerId, ...]], ...] = attrs.field(default=(), metadata=MAP)
    removing_replicas: tuple[tuple[TopicPartition, tuple[BrokerId, ...]], ...] = attrs.field(default=(), metadata=MAP)
    # the topic znode's "topic_id" (KIP-516, 2.8), for the topics that have one
    topic_ids: tuple[tuple[str, int], ...] = attrs.field(default=(), metadata=MAP)

    def topic_assignment(self, topic: str) -> tuple[tuple[int, ...], ...] | None:
        for name, reps in self.topics:
            if name == topic:
                return reps
        return None

    def replicas(self, tp: TopicPartition) -> tuple[int, ...] | None:
        """The partition's assigned replicas in /brokers/topics, or None when it has none there."""
        parts = self.topic_assignment(tp[0])
        return parts[tp[1]] if parts is not None and 0 <= tp[1] < len(parts) else None

    def partition_state(self, tp: TopicPartition) -> LeaderAndIsr | None:
        for key, lai in self.partitions:
            if key == tp:
                return lai
        return None


@attrs.frozen
class ControllerState:
    epoch: int
    live_brokers: tuple[tuple[BrokerId, int], ...] = attrs.field(metadata=MAP)  # liveBrokerIdAndEpochs
    # partitionReplicaAssignment
    assignments: tuple[tuple[TopicPartition, tuple[BrokerId, ...]], ...] = attrs.field(metadata=MAP)
    leadership: tuple[tuple[TopicPartition, LeaderAndIsr], ...] = attrs.field(metadata=MAP)  # partitionLeadershipInfo
    partition_states: tuple[tuple[TopicPartition, PartitionState], ...] = attrs.field(metadata=MAP)
    replica_states: tuple[tuple[Replica, ReplicaState], ...] = attrs.field(metadata=MAP)
    topics_to_be_deleted: tuple[str, ...] = attrs.field(metadata=SET)
    topics_ineligible_for_deletion: tuple[str, ...] = attrs.field(metadata=SET)
    topics_with_deletion_started: tuple[str, ...] = attrs.field(metadata=SET)
    events: tuple[ControllerEvent, ...]  # the ControllerEventManager queue, head first
    partitions_being_reassigned: tuple[tuple[TopicPartition, tuple[BrokerId, ...]], ...] = attrs.field(
        default=(), metadata=MAP)  # RAR by partition
    shutting_down_brokers: tuple[BrokerId, ...] = attrs.field(default=(), metadata=SET)  # shuttingDownBrokerIds
    # replicasOnOfflineDirs, (broker, partition)
    replicas_on_offline_dirs: tuple[tuple[BrokerId, TopicPartition], ...] = attrs.field(default=(), metadata=SET)
    # ReplicaAssignment.addingReplicas and removingReplicas of partitionAssignments (KIP-455, 2.4; empty before): by
    # partition, only partitions with a non-empty list; ``assignments`` holds the full replica set
    adding_replicas: tuple[tuple[TopicPartition, tuple[BrokerId, ...]], ...] = attrs.field(default=(), metadata=MAP)
    removing_replicas: tuple[tuple[TopicPartition, tuple[BrokerId, ...]], ...] = attrs.field(default=(), metadata=MAP)
    # ControllerContext.topicIds (KIP-516, 2.8): the topic IDs read from or written to the topic znodes
    topic_ids: tuple[tuple[str, int], ...] = attrs.field(default=(), metadata=MAP)


@attrs.frozen
class Budget:
    """Environment counters bounded by the scenario's [bounds] (exploration bounds, as in TLA+)."""

    broker_failures: int = 0
    stop_replica_errors: int = 0
    isr_changes: int = 0  # ISR shrinks and expansions written by partition leaders
    reassignments_submitted: tuple[int, ...] = ()  # indexes of the scenario's [[reassignments]] run
    topics_created: tuple[str, ...] = ()  # topics an admin created during the run
    deletions_requested: tuple[str, ...] = ()  # topics an admin asked to delete, once per incarnation
    partitions_added: tuple[str, ...] = ()  # topics an admin gave more partitions
    topics_recreated: tuple[str, ...] = ()  # topics an admin created again after their deletion
    controller_failovers: int = 0  # the controller's host died or its ZooKeeper session expired
    controller_moves: int = 0  # /controller deleted under a running controller
    controlled_shutdowns: int = 0  # ControlledShutdownRequests sent by brokers
    preferred_elections: tuple[str, ...] = ()  # topics an admin ran an election for (the znode or ElectLeaders)
    auto_rebalance_checks: int = 0  # firings of the auto-leader-rebalance-task timer
    log_dir_failures: int = 0
    unclean_config_changes: int = 0
    reassignments_cancelled: tuple[int, ...] = ()  # indexes of [[reassignments]] an admin cancelled
    alter_isr_answers_lost: int = 0  # AlterIsr answers that did not reach the leader (it re-sent the request)


@attrs.frozen
class History:
    """kmc's history variables: not Kafka state, but what properties need to know of the past.

    ``stray_logs``: the logs (broker, partition) that were on a broker's disk when an admin re-created
    their topic, i.e. logs of the earlier topic of that name, until a StopReplica(delete) removes them.
    Kafka 2.x has no topic IDs: a broker asked to host the partition again uses such a log as it is.
    """

    stray_logs: tuple[tuple[BrokerId, TopicPartition], ...] = attrs.field(default=(), metadata=SET)


@attrs.frozen
class StepLog:
    """What one step did, as Kafka's state-change log would tell it. Not part of the state's
    identity (not encoded, not compared): transition properties and reports read it."""

    replica_transitions: tuple[tuple[Replica, ReplicaState, ReplicaState], ...] = ()
    illegal_transitions: tuple[tuple[Replica, ReplicaState, ReplicaState], ...] = ()
    messages: tuple[str, ...] = ()
    completed_deletions: tuple[str, ...] = ()
    deletion_retries: tuple[str, ...] = ()
    elections: tuple[tuple[TopicPartition, int, int], ...] = ()  # (partition, old leader, new leader)
    isr_updates: tuple[tuple[TopicPartition, int, tuple[int, ...], tuple[int, ...]], ...] = ()  # by a leader:
    #                                                              (partition, leader, old ISR, new ISR)
    zk_conflicts: tuple[TopicPartition, ...] = ()  # controller writes that met BADVERSION and were retried
    reassignments_completed: tuple[TopicPartition, ...] = ()
    partitions_added: tuple[TopicPartition, ...] = ()  # created by PartitionModifications
    topics_created: tuple[str, ...] = ()  # created by TopicChange
    additions_reverted: tuple[str, ...] = ()  # topics whose added partitions were taken back (KAFKA-6612)
    failed_elections: tuple[tuple[TopicPartition, str], ...] = ()  # (partition, strategy) with no leader found
    repeated_elections: tuple[TopicPartition, ...] = ()  # elected twice within one electLeaderForPartitions call
    controller_initialized: bool = False  # onControllerFailover ran in this step (the context was rebuilt)
    initial_replica_states: tuple[tuple[Replica, ReplicaState], ...] = ()  # initializeReplicaState's direct puts
    zombie_step: bool = False  # the step was taken by a controller that lost controllership (ClusterState.zombie)
    zombie_resigned: bool = False
    controlled_shutdown_results: tuple[tuple[int, tuple[TopicPartition, ...], str], ...] = ()  # (broker, remaining,
    #                                                                                          error or "")
    preferred_elections_completed: tuple[TopicPartition, ...] = ()  # the preferred replica became leader
    zk_write_fenced: bool = False  # a former controller's ZooKeeper write was refused (ControllerMovedException)
    # (controller epoch, exception): a controller resigned on an exception out of onControllerFailover
    # (elect's triggerControllerMove)
    controller_resignations: tuple[tuple[int, str], ...] = ()
    # the event this step's controller processed (the former controller's, when zombie_step), or None
    processed_event: ControllerEvent | None = None
    rejection: str = ""  # why the broker that handled its next request in this step refused it (KafkaApis' error)
    # the partitions of the LeaderAndIsr the broker applied that it answered INCONSISTENT_TOPIC_ID (KIP-516, 2.8)
    inconsistent_topic_ids: tuple[TopicPartition, ...] = ()


@attrs.frozen
class ClusterState:
    zk: ZkState
    controller: ControllerState
    brokers: tuple[BrokerState, ...] = attrs.field(metadata=MAP_BY_ID)  # by id
    # broker id -> queued requests
    channels: tuple[tuple[BrokerId, tuple[Request, ...]], ...] = attrs.field(metadata=MAP)
    budget: Budget
    history: History = History()
    log: StepLog = attrs.field(factory=StepLog, eq=False, repr=False)
    zombie: ControllerState | None = None  # a former controller still processing events (see the module docstring)
    # the partitionsBeingReassigned a former controller's JVM kept after resigning, before KAFKA-5310 (empty
    # otherwise): its context when it is elected again
    standby_reassignments: tuple[tuple[TopicPartition, tuple[BrokerId, ...]], ...] = ()

    def broker(self, broker_id: int) -> BrokerState:
        for b in self.brokers:
            if b.id == broker_id:
                return b
        raise KeyError(broker_id)

    def channel(self, broker_id: int) -> tuple[Request, ...]:
        for b, queue in self.channels:
            if b == broker_id:
                return queue
        return ()


def partition_name(tp: TopicPartition) -> str:
    """Kafka's ``topic-partition`` spelling."""
    return f"{tp[0]}-{tp[1]}"


def replica_name(r: Replica) -> str:
    """``topic-partition@broker``, the replica's name in kmc's reports."""
    return f"{r[0]}-{r[1]}@{r[2]}"


def sorted_items(d: dict[Any, Any]) -> tuple[tuple[Any, Any], ...]:
    return tuple(sorted(d.items()))


def iter_replicas(assignments: dict[TopicPartition, tuple[int, ...]]) -> Iterator[Replica]:
    for (t, p), reps in sorted(assignments.items()):
        for b in reps:
            yield (t, p, b)
