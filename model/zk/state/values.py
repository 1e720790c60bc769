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
ISR, zkVersion, replicas and offline replicas are not modelled: nothing in the model reads them
from a cache); the controller runs on a host that does not fail (failover comes with the
controller-failover issue).
"""

from __future__ import annotations

import enum
from array import array
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from model.zk.state.states import PartitionState, ReplicaState

TopicPartition = tuple[str, int]
Replica = tuple[str, int, int]  # (topic, partition, broker): Kafka's PartitionAndReplica

NO_LEADER = -1  # LeaderAndIsr.NoLeader
LEADER_DURING_DELETE = -2  # LeaderAndIsr.LeaderDuringDelete: UpdateMetadata for a topic being deleted


@attrs.frozen
class LeaderAndIsr:
    """A partition-state znode's content: Kafka's ``LeaderIsrAndControllerEpoch``."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    controller_epoch: int

    def describe(self) -> str:
        return (f"leader={self.leader} leaderEpoch={self.leader_epoch} isr={list(self.isr)} "
                f"zkVersion={self.zk_version}")


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


@attrs.frozen
class ControllerEvent:
    kind: EventKind
    broker: int = -1  # StopReplica and LeaderAndIsr responses: the responding broker; ControlledShutdown: the
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

    def describe(self) -> str:
        if self.kind is EventKind.TopicDeletionStopReplicaResponseReceived:
            parts = ", ".join(partition_name(tp) for tp in self.partitions)
            return (f"TopicDeletionStopReplicaResponseReceived(broker={self.broker}, [{parts}], "
                    f"error={'KAFKA_STORAGE_ERROR' if self.error else 'NONE'})")
        if self.kind is EventKind.PartitionReassignmentIsrChange:
            return f"PartitionReassignmentIsrChange({partition_name(self.partitions[0])})"
        if self.kind is EventKind.PartitionModifications:
            return f"PartitionModifications({self.topic})"
        if self.kind is EventKind.ControlledShutdown:
            return f"ControlledShutdown(id={self.broker}, brokerEpoch={self.request_epoch})"
        if self.kind is EventKind.LeaderAndIsrResponseReceived:
            parts = ", ".join(partition_name(tp) for tp in self.partitions)
            return f"LeaderAndIsrResponseReceived(broker={self.broker}, KAFKA_STORAGE_ERROR: [{parts}])"
        return self.kind.name


class RequestKind(enum.IntEnum):
    LeaderAndIsr = 1
    StopReplica = 2
    UpdateMetadata = 3


@attrs.frozen
class PartitionLeaderState:
    """One partition of a LeaderAndIsr request (``LeaderAndIsrRequest.PartitionState``)."""

    partition: TopicPartition
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    is_new: bool
    zk_version: int  # the partition-state znode version the controller wrote or read
    controller_epoch: int  # of the controller that made the leadership decision


@attrs.frozen
class MetadataPartitionState:
    """A partition's leader and leader epoch, as an UpdateMetadata request carries them and a
    broker's ``MetadataCache`` keeps them (``UpdateMetadataRequest.PartitionState``, in part)."""

    partition: TopicPartition
    leader: int  # LEADER_DURING_DELETE in a request: remove the partition from the cache
    leader_epoch: int


@attrs.frozen
class Request:
    """A controller-to-broker request waiting in the broker's channel."""

    kind: RequestKind
    controller_epoch: int
    broker_epoch: int  # the epoch of the broker the controller meant (KIP-380, Kafka 2.2+)
    leader_states: tuple[PartitionLeaderState, ...] = ()  # LeaderAndIsr
    partitions: tuple[TopicPartition, ...] = ()  # StopReplica
    delete_partitions: bool = False  # StopReplica
    deletion_callback: bool = False  # StopReplica(delete=true): its response feeds the TopicDeletionManager
    live_brokers: tuple[int, ...] = ()  # UpdateMetadata: the controller's live-or-shutting-down brokers
    metadata_states: tuple[MetadataPartitionState, ...] = ()  # UpdateMetadata

    def describe(self) -> str:
        if self.kind is RequestKind.LeaderAndIsr:
            parts = ", ".join(
                f"{s.partition[0]}-{s.partition[1]}: leader={s.leader} epoch={s.leader_epoch} "
                f"isr={list(s.isr)}{' isNew' if s.is_new else ''}" for s in self.leader_states)
            return f"LeaderAndIsr[{parts}]"
        if self.kind is RequestKind.UpdateMetadata:
            parts = ", ".join(f"{partition_name(m.partition)}: leader={m.leader} epoch={m.leader_epoch}"
                              for m in self.metadata_states)
            return f"UpdateMetadata(liveBrokers={list(self.live_brokers)})[{parts}]"
        parts = ", ".join(f"{t}-{p}" for t, p in self.partitions)
        return f"StopReplica(deletePartitions={str(self.delete_partitions).lower()})[{parts}]"


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
    leader: int
    isr: tuple[int, ...] = ()  # leader only, in Kafka's set order (insertion order for up to 4 members)
    zk_version: int = -1  # leader only
    replicas: tuple[int, ...] = ()  # leader only
    controller_epoch: int = -1  # leader only
    fetching: bool = False  # follower only: a fetcher follows ``leader`` at ``leader_epoch``


#: A broker's controlled shutdown (``KafkaServer.controlledShutdown``): not shutting down; its
#: ControlledShutdownRequest is waiting for the controller; the controller answered with no partition
#: left (the broker now shuts down); it answered with partitions left or an error (the broker retries
#: while it has retries, then shuts down anyway).
SHUTDOWN_NONE, SHUTDOWN_REQUESTED, SHUTDOWN_SUCCEEDED, SHUTDOWN_RETRY = 0, 1, 2, 3


@attrs.frozen
class BrokerState:
    id: int
    alive: bool
    epoch: int  # registrations so far (the broker epoch, see the module docstring)
    controller_epoch: int  # highest controller epoch seen in a request
    partitions: tuple[HostedPartition, ...]  # in memory: lost when the broker dies
    logs: tuple[TopicPartition, ...]  # on disk: survive restarts, removed by StopReplica(delete)
    metadata_live_brokers: tuple[int, ...] = ()  # MetadataCache: alive brokers (in memory)
    metadata_partitions: tuple[MetadataPartitionState, ...] = ()  # MetadataCache: by partition (in memory)
    offline_logs: tuple[TopicPartition, ...] = ()  # logs on a failed log directory (until the broker restarts)
    controlled_shutdown: int = 0  # KafkaServer.controlledShutdown: one of the SHUTDOWN_* values

    def hosted(self, tp: TopicPartition) -> HostedPartition | None:
        for h in self.partitions:
            if h.partition == tp:
                return h
        return None

    def cached(self, tp: TopicPartition) -> MetadataPartitionState | None:
        """The partition's entry in the broker's metadata cache."""
        for m in self.metadata_partitions:
            if m.partition == tp:
                return m
        return None


@attrs.frozen
class ZkState:
    brokers: tuple[tuple[int, int], ...]  # (broker id, broker epoch) of registered brokers
    topics: tuple[tuple[str, tuple[tuple[int, ...], ...]], ...]  # topic -> replicas by partition
    partitions: tuple[tuple[TopicPartition, LeaderAndIsr], ...]  # partition-state znodes
    delete_topics: tuple[str, ...]  # children of /admin/delete_topics
    controller_epoch: int
    isr_change_notifications: tuple[TopicPartition, ...] = ()  # named by /isr_change_notification children
    reassign_partitions: tuple[tuple[TopicPartition, tuple[int, ...]], ...] = ()  # /admin/reassign_partitions
    #                                                                     (empty: the znode does not exist)
    preferred_replica_election: tuple[TopicPartition, ...] = ()  # /admin/preferred_replica_election (empty: absent)
    log_dir_event_notifications: tuple[int, ...] = ()  # brokers named by /log_dir_event_notification children
    unclean_leader_election_enable: bool = False  # the cluster-wide dynamic config (/config/brokers/<default>)

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
    live_brokers: tuple[tuple[int, int], ...]  # liveBrokerIdAndEpochs
    assignments: tuple[tuple[TopicPartition, tuple[int, ...]], ...]  # partitionReplicaAssignment
    leadership: tuple[tuple[TopicPartition, LeaderAndIsr], ...]  # partitionLeadershipInfo
    partition_states: tuple[tuple[TopicPartition, PartitionState], ...]
    replica_states: tuple[tuple[Replica, ReplicaState], ...]
    topics_to_be_deleted: tuple[str, ...]
    topics_ineligible_for_deletion: tuple[str, ...]
    topics_with_deletion_started: tuple[str, ...]
    events: tuple[ControllerEvent, ...]  # the ControllerEventManager queue, head first
    partitions_being_reassigned: tuple[tuple[TopicPartition, tuple[int, ...]], ...] = ()  # RAR by partition
    shutting_down_brokers: tuple[int, ...] = ()  # shuttingDownBrokerIds
    replicas_on_offline_dirs: tuple[tuple[int, TopicPartition], ...] = ()  # replicasOnOfflineDirs, (broker, partition)


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
    preferred_elections: tuple[str, ...] = ()  # topics an admin ran kafka-preferred-replica-election for
    auto_rebalance_checks: int = 0  # firings of the auto-leader-rebalance-task timer
    log_dir_failures: int = 0
    unclean_config_changes: int = 0
    reassignments_cancelled: tuple[int, ...] = ()  # indexes of [[reassignments]] an admin cancelled


@attrs.frozen
class History:
    """kmc's history variables: not Kafka state, but what properties need to know of the past.

    ``stray_logs``: the logs (broker, partition) that were on a broker's disk when an admin re-created
    their topic, i.e. logs of the earlier topic of that name, until a StopReplica(delete) removes them.
    Kafka 2.x has no topic IDs: a broker asked to host the partition again uses such a log as it is.
    """

    stray_logs: tuple[tuple[int, TopicPartition], ...] = ()


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


@attrs.frozen
class ClusterState:
    zk: ZkState
    controller: ControllerState
    brokers: tuple[BrokerState, ...]  # sorted by id
    channels: tuple[tuple[int, tuple[Request, ...]], ...]  # broker id -> queued requests
    budget: Budget
    history: History = History()
    log: StepLog = attrs.field(factory=StepLog, eq=False, repr=False)
    zombie: ControllerState | None = None  # a former controller still processing events (see the module docstring)
    # the partitionsBeingReassigned a former controller's JVM kept after resigning, before KAFKA-5310 (empty
    # otherwise): its context when it is elected again
    standby_reassignments: tuple[tuple[TopicPartition, tuple[int, ...]], ...] = ()

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


# --------------------------------------------------------------------------------------------
# Canonical encoding: a flat sequence of 32-bit ints, written field by field in declaration
# order, with lengths before sequences and topic names replaced by their index in the scenario.
# Compact (a few hundred bytes), fast (array.tobytes), and canonical because every container is a
# sorted tuple. decode() reads the same layout back.
#
# The state is written as a sequence of parts (ZooKeeper, each controller, each broker, each queued
# request, the budget, the history), each part's ints right after the previous part's: a part's bytes
# depend on its value alone. Successors share most parts with the state they were made from (a step
# reuses the objects it did not change), so the codec remembers the bytes of the parts it read, by
# object identity, and writes an unchanged part by copying them; decode() remembers each
# part's bytes -> its object, and reads a part it has met before by looking its bytes up instead of
# rebuilding it (the states decoded share their equal parts). Only the parts decode() met are remembered:
# the parts a step made new are written once and dropped with the successor. Both memos are per process
# and bounded (emptied when full): they change the speed, never the bytes.
# --------------------------------------------------------------------------------------------

#: Parts each memo of a :class:`Codec` keeps before it is emptied (a bound on its memory).
MEMO_PARTS = 1 << 12
class _PartMemo:
    """decode()'s memo for one kind of part: the bytes of the parts read so far -> the part, and an index to
    find them without knowing where a part ends: the lengths of the parts known, by their first ``head``
    bytes (the length of the shortest part known, so every known part has such a head)."""

    def __init__(self) -> None:
        self.parts: dict[bytes, Any] = {}
        self.head = 0
        self.lengths: dict[bytes, list[int]] = {}  # first ``head`` bytes -> lengths of the known parts

    def find(self, data: bytes, start: int) -> tuple[Any, int] | None:
        """The known part whose bytes are at ``start`` in ``data``, with its length in bytes. A part's layout is
        self-delimiting (lengths before sequences), so a known part's complete bytes found there are the bytes
        of the part there and of no longer one."""
        lengths = self.lengths.get(data[start:start + self.head])
        if lengths is not None:
            parts = self.parts
            for n in lengths:
                known = parts.get(data[start:start + n])
                if known is not None:
                    return known, n
        return None

    def add(self, key: bytes, part: Any) -> None:
        self.parts[key] = part
        n = len(key)
        if not self.head or n < self.head:
            self.head = n
            self.lengths = {}
            for known in self.parts:
                self._index(known)
        else:
            self._index(key)

    def _index(self, key: bytes) -> None:
        lengths = self.lengths.setdefault(key[:self.head], [])
        if len(key) not in lengths:
            lengths.append(len(key))

    def clear(self) -> None:
        self.parts.clear()
        self.lengths.clear()


class Codec:
    def __init__(self, topic_names: tuple[str, ...], *, memo_parts: int = MEMO_PARTS):
        self.topic_names = topic_names
        self.topics = ("", *topic_names)  # index 0 encodes the empty name
        self.topic_index = {t: i for i, t in enumerate(self.topics)}
        self.memo_parts = memo_parts
        # id(part) -> (part, its bytes): the part is held, so its id is not reused while it is here
        self._written: dict[int, tuple[Any, bytes]] = {}
        self._read: dict[str, _PartMemo] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"topic_names": self.topic_names, "memo_parts": self.memo_parts}  # memos stay in their process

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["topic_names"], memo_parts=state["memo_parts"])  # type: ignore[misc]

    def memo_size(self) -> int:
        """How many parts the memos hold now (at most ``memo_parts``)."""
        return len(self._written)

    def _remember(self, part: Any, data: bytes) -> None:
        if len(self._written) >= self.memo_parts:
            self._written.clear()
            for memo in self._read.values():
                memo.clear()
        self._written[id(part)] = (part, data)

    # ---- encoding ----
    def encode(self, s: ClusterState) -> bytes:
        part, parts = self._part, self._parts
        chunks = [part(self._zk, s.zk), part(self._controller, s.controller), parts(self._brokers, s.brokers),
                  parts(self._channels, s.channels), part(self._budget, s.budget), part(self._history, s.history)]
        if s.zombie is None:
            chunks.append(_ints(False))
        else:
            chunks.append(_ints(True))
            chunks.append(part(self._controller, s.zombie))
        out: list[int] = []
        self._replica_lists(out, s.standby_reassignments)
        chunks.append(array("i", out).tobytes())
        return b"".join(chunks)

    def encode_plain(self, s: ClusterState) -> bytes:
        """:meth:`encode` without the memo: every part written field by field (the reference)."""
        return Codec(self.topic_names, memo_parts=0).encode(s)

    def _part(self, write: Any, value: Any) -> bytes:
        """The part's bytes: remembered, or written by ``write(out, value)``."""
        known = self._written.get(id(value))
        if known is not None:
            return known[1]
        out: list[int] = []
        write(out, value)
        return array("i", out).tobytes()

    def _parts(self, join: Any, value: tuple[Any, ...]) -> bytes:
        """The bytes of a tuple of parts: remembered, or made by ``join(value)`` from its parts' bytes. (The
        empty tuple is one object for every kind: it is not looked up.)"""
        known = self._written.get(id(value)) if value else None
        if known is not None:
            return known[1]
        data: bytes = join(value)
        return data

    def _brokers(self, brokers: tuple[BrokerState, ...]) -> bytes:
        part = self._part
        return b"".join([_ints(len(brokers)), *[part(self._broker, br) for br in brokers]])

    def _channels(self, channels: tuple[tuple[int, tuple[Request, ...]], ...]) -> bytes:
        part = self._part
        chunks = [_ints(len(channels))]
        for b, queue in channels:
            chunks.append(_ints(b, len(queue)))
            chunks += [part(self._request, rq) for rq in queue]
        return b"".join(chunks)

    def _zk(self, out: list[int], zk: ZkState) -> None:
        w = out.append
        ti = self.topic_index
        w(len(zk.brokers))
        for b, e in zk.brokers:
            w(b)
            w(e)
        w(len(zk.topics))
        for name, reps in zk.topics:
            w(ti[name])
            w(len(reps))
            for r in reps:
                w(len(r))
                out.extend(r)
        w(len(zk.partitions))
        for (t, p), lai in zk.partitions:
            w(ti[t])
            w(p)
            self._lai(out, lai)
        w(len(zk.delete_topics))
        out.extend(ti[t] for t in zk.delete_topics)
        w(zk.controller_epoch)
        self._tps(out, zk.isr_change_notifications)
        self._replica_lists(out, zk.reassign_partitions)
        self._tps(out, zk.preferred_replica_election)
        w(len(zk.log_dir_event_notifications))
        out.extend(zk.log_dir_event_notifications)
        w(zk.unclean_leader_election_enable)

    def _broker(self, out: list[int], br: BrokerState) -> None:
        w = out.append
        ti = self.topic_index
        w(br.id)
        w(br.alive)
        w(br.epoch)
        w(br.controller_epoch)
        w(len(br.partitions))
        for h in br.partitions:
            w(ti[h.partition[0]])
            w(h.partition[1])
            w(h.leader_epoch)
            w(h.leader)
            w(len(h.isr))
            out.extend(h.isr)
            w(h.zk_version)
            w(len(h.replicas))
            out.extend(h.replicas)
            w(h.controller_epoch)
            w(h.fetching)
        self._tps(out, br.logs)
        w(len(br.metadata_live_brokers))
        out.extend(br.metadata_live_brokers)
        self._metadata(out, br.metadata_partitions)
        self._tps(out, br.offline_logs)
        w(br.controlled_shutdown)

    def _request(self, out: list[int], rq: Request) -> None:
        w = out.append
        ti = self.topic_index
        w(rq.kind)
        w(rq.controller_epoch)
        w(rq.broker_epoch)
        w(rq.delete_partitions)
        w(rq.deletion_callback)
        w(len(rq.leader_states))
        for ls in rq.leader_states:
            w(ti[ls.partition[0]])
            w(ls.partition[1])
            w(ls.leader)
            w(ls.leader_epoch)
            w(len(ls.isr))
            out.extend(ls.isr)
            w(len(ls.replicas))
            out.extend(ls.replicas)
            w(ls.is_new)
            w(ls.zk_version)
            w(ls.controller_epoch)
        self._tps(out, rq.partitions)
        w(len(rq.live_brokers))
        out.extend(rq.live_brokers)
        self._metadata(out, rq.metadata_states)

    def _budget(self, out: list[int], bud: Budget) -> None:
        w = out.append
        ti = self.topic_index
        w(bud.broker_failures)
        w(bud.stop_replica_errors)
        w(bud.isr_changes)
        w(len(bud.reassignments_submitted))
        out.extend(bud.reassignments_submitted)
        for names in (bud.topics_created, bud.deletions_requested, bud.partitions_added, bud.topics_recreated):
            w(len(names))
            out.extend(ti[t] for t in names)
        w(bud.controller_failovers)
        w(bud.controller_moves)
        w(bud.controlled_shutdowns)
        w(len(bud.preferred_elections))
        out.extend(ti[t] for t in bud.preferred_elections)
        w(bud.auto_rebalance_checks)
        w(bud.log_dir_failures)
        w(bud.unclean_config_changes)
        w(len(bud.reassignments_cancelled))
        out.extend(bud.reassignments_cancelled)

    def _history(self, out: list[int], history: History) -> None:
        out.append(len(history.stray_logs))
        for b, (t, p) in history.stray_logs:
            out.append(b)
            out.append(self.topic_index[t])
            out.append(p)

    def _controller(self, out: list[int], c: ControllerState) -> None:
        w = out.append
        ti = self.topic_index
        w(c.epoch)
        w(len(c.live_brokers))
        for b, e in c.live_brokers:
            w(b)
            w(e)
        w(len(c.assignments))
        for (t, p), r in c.assignments:
            w(ti[t])
            w(p)
            w(len(r))
            out.extend(r)
        w(len(c.leadership))
        for (t, p), lai in c.leadership:
            w(ti[t])
            w(p)
            self._lai(out, lai)
        w(len(c.partition_states))
        for (t, p), ps in c.partition_states:
            w(ti[t])
            w(p)
            w(ps)
        w(len(c.replica_states))
        for (t, p, b), rs in c.replica_states:
            w(ti[t])
            w(p)
            w(b)
            w(rs)
        for names in (c.topics_to_be_deleted, c.topics_ineligible_for_deletion, c.topics_with_deletion_started):
            w(len(names))
            out.extend(ti[t] for t in names)
        w(len(c.events))
        for ev in c.events:
            w(ev.kind)
            w(ev.broker)
            self._tps(out, ev.partitions)
            w(ev.error)
            w(ti[ev.topic])
            w(ev.request_epoch)
        self._replica_lists(out, c.partitions_being_reassigned)
        w(len(c.shutting_down_brokers))
        out.extend(c.shutting_down_brokers)
        w(len(c.replicas_on_offline_dirs))
        for b, (t, p) in c.replicas_on_offline_dirs:
            w(b)
            w(ti[t])
            w(p)

    def _tps(self, out: list[int], tps: tuple[TopicPartition, ...]) -> None:
        """A length-prefixed list of partitions (read back by ``_Reader.tps``)."""
        ti = self.topic_index
        out.append(len(tps))
        for t, p in tps:
            out.append(ti[t])
            out.append(p)

    def _replica_lists(self, out: list[int], lists: tuple[tuple[TopicPartition, tuple[int, ...]], ...]) -> None:
        out.append(len(lists))
        for (t, p), reps in lists:
            out.append(self.topic_index[t])
            out.append(p)
            out.append(len(reps))
            out.extend(reps)

    def _metadata(self, out: list[int], states: tuple[MetadataPartitionState, ...]) -> None:
        out.append(len(states))
        for m in states:
            out.append(self.topic_index[m.partition[0]])
            out.append(m.partition[1])
            out.append(m.leader)
            out.append(m.leader_epoch)

    @staticmethod
    def _lai(out: list[int], lai: LeaderAndIsr) -> None:
        out.append(lai.leader)
        out.append(lai.leader_epoch)
        out.append(len(lai.isr))
        out.extend(lai.isr)
        out.append(lai.zk_version)
        out.append(lai.controller_epoch)

    # ---- decoding ----
    def decode(self, data: bytes) -> ClusterState:
        rd = _Reader(data, self.topics, self.read_part)
        nxt = rd.nxt
        part = self.read_part
        zk = part(rd, rd.zk)
        controller = part(rd, rd.controller)
        brokers = self.read_parts(rd, rd.brokers)
        channels = self.read_parts(rd, rd.channels)
        budget = part(rd, rd.budget)
        history = part(rd, rd.history)
        zombie = part(rd, rd.controller) if nxt() else None
        standby = rd.replica_lists()
        return ClusterState(zk, controller, brokers, channels, budget, history, zombie=zombie,
                            standby_reassignments=standby)

    def read_part(self, rd: _Reader, read: Any) -> Any:
        """The part at the reader's position: one met before, found by its bytes, or ``read()``."""
        if not self.memo_parts:
            return read()
        memo = self._read.get(read.__name__)
        if memo is None:
            memo = self._read[read.__name__] = _PartMemo()
        start = 4 * rd.position()
        found = memo.find(rd.data, start)
        if found is not None:
            rd.seek((start + found[1]) // 4)
            return found[0]
        value = read()
        key = rd.data[start:4 * rd.position()]
        self._remember(value, key)
        memo.add(key, value)
        return value

    def read_parts(self, rd: _Reader, read: Any) -> Any:
        """The tuple of parts at the reader's position, read by ``read()`` (its parts through :meth:`read_part`),
        as the tuple met before when its bytes were: such a tuple changes with most steps, so it is not
        looked for before it is read."""
        if not self.memo_parts:
            return read()
        memo = self._read.get(read.__name__)
        if memo is None:
            memo = self._read[read.__name__] = _PartMemo()
        start = rd.position()
        value = read()
        key = rd.data[4 * start:4 * rd.position()]
        known = memo.parts.get(key)
        if known is not None:
            return known
        self._remember(value, key)
        memo.add(key, value)
        return value


def _ints(*values: int) -> bytes:
    return array("i", values).tobytes()


class _Reader:
    """Reads the parts of :meth:`Codec.encode`'s layout back, in the same order, from an int position."""

    def __init__(self, data: bytes, topics: tuple[str, ...], read_part: Callable[[_Reader, Any], Any]):
        self.data = data
        self.read_part = read_part  # Codec.read_part: a part met before, or read by the method given
        a = array("i")
        a.frombytes(data)
        self._it: Any = iter(a)  # an array iterator: __reduce__ tells its position, __setstate__ moves it
        self.nxt = self._it.__next__
        self.topics = topics

    def position(self) -> int:
        """The index of the next int to read."""
        return int(self._it.__reduce__()[2])

    def seek(self, position: int) -> None:
        self._it.__setstate__(position)

    def ints(self, n: int) -> tuple[int, ...]:
        nxt = self.nxt
        return tuple(nxt() for _ in range(n))

    def tp(self) -> TopicPartition:
        nxt = self.nxt
        t = self.topics[nxt()]
        return (t, nxt())

    def tps(self) -> tuple[TopicPartition, ...]:
        tp = self.tp
        return tuple(tp() for _ in range(self.nxt()))

    def names(self) -> tuple[str, ...]:
        nxt, topics = self.nxt, self.topics
        return tuple(topics[nxt()] for _ in range(nxt()))

    def lai(self) -> LeaderAndIsr:
        nxt = self.nxt
        leader, epoch = nxt(), nxt()
        isr = self.ints(nxt())
        return LeaderAndIsr(leader, epoch, isr, nxt(), nxt())

    def replica_lists(self) -> tuple[tuple[TopicPartition, tuple[int, ...]], ...]:
        nxt, tp, ints = self.nxt, self.tp, self.ints
        return tuple((tp(), ints(nxt())) for _ in range(nxt()))

    def metadata(self) -> tuple[MetadataPartitionState, ...]:
        nxt, tp = self.nxt, self.tp
        return tuple(MetadataPartitionState(tp(), nxt(), nxt()) for _ in range(nxt()))

    def zk(self) -> ZkState:
        nxt, tp, ints, topics = self.nxt, self.tp, self.ints, self.topics
        brokers = tuple((nxt(), nxt()) for _ in range(nxt()))
        assignments = tuple((topics[nxt()], tuple(ints(nxt()) for _ in range(nxt()))) for _ in range(nxt()))
        partitions = tuple((tp(), self.lai()) for _ in range(nxt()))
        delete = self.names()
        epoch = nxt()
        isr_changes = self.tps()
        reassign = self.replica_lists()
        preferred = self.tps()
        log_dirs = ints(nxt())
        return ZkState(brokers, assignments, partitions, delete, epoch, isr_changes, reassign, preferred, log_dirs,
                       bool(nxt()))

    def controller(self) -> ControllerState:
        nxt, tp, ints, topics = self.nxt, self.tp, self.ints, self.topics
        epoch = nxt()
        live = tuple((nxt(), nxt()) for _ in range(nxt()))
        assignments = tuple((tp(), ints(nxt())) for _ in range(nxt()))
        leadership = tuple((tp(), self.lai()) for _ in range(nxt()))
        pstates = tuple((tp(), PartitionState(nxt())) for _ in range(nxt()))
        rstates = tuple(((topics[nxt()], nxt(), nxt()), ReplicaState(nxt())) for _ in range(nxt()))
        to_be_deleted, ineligible, started = self.names(), self.names(), self.names()
        events = tuple(ControllerEvent(EventKind(nxt()), nxt(), self.tps(), bool(nxt()), topic=topics[nxt()],
                                       request_epoch=nxt())
                       for _ in range(nxt()))
        reassigning = self.replica_lists()
        shutting_down = ints(nxt())
        offline_dirs = tuple((nxt(), tp()) for _ in range(nxt()))
        return ControllerState(epoch, live, assignments, leadership, pstates, rstates, to_be_deleted, ineligible,
                               started, events, reassigning, shutting_down, offline_dirs)

    def broker(self) -> BrokerState:
        nxt, tp, ints = self.nxt, self.tp, self.ints
        bid, alive, bepoch, cepoch = nxt(), bool(nxt()), nxt(), nxt()
        hosted = tuple(HostedPartition(tp(), nxt(), nxt(), ints(nxt()), nxt(), ints(nxt()), nxt(), bool(nxt()))
                       for _ in range(nxt()))
        logs = self.tps()
        cache_live, cache = ints(nxt()), self.metadata()
        offline = self.tps()
        return BrokerState(bid, alive, bepoch, cepoch, hosted, logs, cache_live, cache, offline, nxt())

    def brokers(self) -> tuple[BrokerState, ...]:
        read_part, broker = self.read_part, self.broker
        return tuple(read_part(self, broker) for _ in range(self.nxt()))

    def channels(self) -> tuple[tuple[int, tuple[Request, ...]], ...]:
        nxt, read_part, request = self.nxt, self.read_part, self.request
        channels = []
        for _ in range(nxt()):
            bid = nxt()
            channels.append((bid, tuple(read_part(self, request) for _ in range(nxt()))))
        return tuple(channels)

    def request(self) -> Request:
        nxt, tp, ints = self.nxt, self.tp, self.ints
        kind, cepoch, bepoch, delete, callback = RequestKind(nxt()), nxt(), nxt(), bool(nxt()), bool(nxt())
        leader_states = tuple(PartitionLeaderState(tp(), nxt(), nxt(), ints(nxt()), ints(nxt()), bool(nxt()), nxt(),
                                                   nxt())
                              for _ in range(nxt()))
        parts = self.tps()
        live_brokers = ints(nxt())
        return Request(kind, cepoch, bepoch, leader_states, parts, delete, callback, live_brokers, self.metadata())

    def budget(self) -> Budget:
        nxt, ints = self.nxt, self.ints
        failures, errors, isr_changes = nxt(), nxt(), nxt()
        submitted = ints(nxt())
        created, requested, added, recreated = self.names(), self.names(), self.names(), self.names()
        failovers, moves, shutdowns = nxt(), nxt(), nxt()
        preferred = self.names()
        rebalances, dir_failures, unclean_changes = nxt(), nxt(), nxt()
        return Budget(failures, errors, isr_changes, submitted, created, requested, added, recreated, failovers,
                      moves, shutdowns, preferred, rebalances, dir_failures, unclean_changes, ints(nxt()))

    def history(self) -> History:
        nxt, tp = self.nxt, self.tp
        return History(tuple((nxt(), tp()) for _ in range(nxt())))


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
