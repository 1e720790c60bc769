"""The KRaft model's state: the metadata log, the images its replay builds, the controller's in-memory heartbeat
state, and the brokers.

The metadata log is the source of truth; the controller's image (:attr:`KraftState.image`) and each broker's
(:attr:`BrokerState.image`) are derived from it and carried beside it, so that no step replays the log:
:func:`append` applies each record it appends to the controller's image (``QuorumController`` replays the
records it writes as it commits them), and a broker that replays the log to its end takes the controller's image
(a broker's image is the replay of the prefix of the log it has replayed: the controller's image at that offset).
The derived fields take no part in equality, hashing or the encoding; :meth:`Codec.decode` rebuilds them by one
replay of the log. ``tests/test_kraft_scenarios.py`` checks, on every state of a search, that each image equals
the replay of its prefix.

The canonical bytes (:class:`Codec`) are compact JSON (``json``'s C encoder and decoder; not ``marshal``, whose
reader is not meant for damaged input) of a tree of ints, bools, ``None`` and tuples written field by field by
hand, so equal values give equal bytes in every process: records as a tag
and their fields, topics by their index in the scenario, and the metadata log without the prefix every state
shares (the initial registrations, unfencings and topic creations). Tuples the model keeps as sets (the
acknowledged records, the ISR as Kafka sorts it) are kept sorted by the steps that write them.

Deviation from the ZooKeeper model's state discipline: :mod:`model.zk.state.schema` is generic in what it says
(fields declared once, shapes and broker ids marked) but lives in the ZooKeeper package, and ``model.kraft`` must
not import ``model.zk`` (``[tool.importlinter]`` contract ``kraft-knows-no-zk``); its generated codec is written for
the ZooKeeper state's classes. This module writes its codec by hand, without symmetry reduction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import attrs

from model.kraft.records import (
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    MetadataImage,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    apply,
)

#: A broker's process (the TLA+ specification's broker status, in Kafka's ``BrokerLifecycleManager`` terms):
#: running, running and asking to shut down (``wantShutDown`` in its heartbeats), stopped after a clean
#: shutdown, stopped without one (no clean shutdown marker, ``LogManager``'s ``hadCleanShutdown`` false at its next
#: start: its logs lost their unflushed tail after an ``UncleanShutdown``, kept them after a ``BrokerCrash``).
RUNNING, SHUTTING_DOWN, OFFLINE_CLEAN, OFFLINE_UNCLEAN = 0, 1, 2, 3
PROCESS_NAMES = {RUNNING: "running", SHUTTING_DOWN: "shutting down", OFFLINE_CLEAN: "offline (clean)",
                 OFFLINE_UNCLEAN: "offline (unclean)"}


@attrs.frozen
class PartitionLog:
    """A replica's log (``UnifiedLog``), abstracted: the leader epoch of each record (what the leader epoch cache
    says of it), so that diverging logs differ, and the high watermark. The log end offset is its length."""

    records: tuple[int, ...] = ()
    high_watermark: int = 0


@attrs.frozen
class FollowerState:
    """What a leader knows of a follower (``Replica.stateSnapshot`` in ``Partition.scala``): the log end offset
    and broker epoch of its last fetch (KIP-903)."""

    broker: int
    log_end_offset: int
    broker_epoch: int


@attrs.frozen
class LeaderState:
    """A leader's ``Partition.partitionState`` (``CommittedPartitionState``): the leader epoch, the partition epoch
    and the ISR it last learnt (from the metadata image or an AlterPartition response), and its followers."""

    leader_epoch: int
    partition_epoch: int
    isr: tuple[int, ...]
    followers: tuple[FollowerState, ...] = ()


@attrs.frozen
class BrokerState:
    id: int
    process: int
    broker_epoch: int
    metadata_offset: int  # how many records of the metadata log the broker has replayed
    logs: tuple[PartitionLog, ...]  # by partition index (empty where the broker holds no replica)
    leading: tuple[LeaderState | None, ...]  # by partition index
    #: The broker's metadata image: the replay of the first ``metadata_offset`` records (derived, not compared)
    image: MetadataImage = attrs.field(eq=False, repr=False, default=MetadataImage())

    @property
    def alive(self) -> bool:
        return self.process in (RUNNING, SHUTTING_DOWN)


@attrs.frozen
class Budget:
    """What the environment has spent of ``[bounds]`` (:class:`model.scenario.kraft.KraftBounds`)."""

    unclean_shutdowns: int = 0
    restarts: int = 0
    controlled_shutdowns: int = 0
    session_expiries: int = 0
    produces: int = 0
    alter_partitions: int = 0
    topic_creations: int = 0
    topic_deletions: int = 0
    min_insync_replicas_changes: int = 0
    crashes: int = 0


@attrs.frozen
class KraftState:
    metadata_log: tuple[Record, ...]
    #: ``BrokerHeartbeatManager``'s ``controlledShutdownOffset`` by broker index (-1: not in controlled shutdown)
    controlled_shutdown_offsets: tuple[int, ...]
    brokers: tuple[BrokerState, ...]
    #: Records acknowledged to producers (acks=all): (partition, offset, leader epoch of the record), sorted
    acknowledged: tuple[tuple[int, int, int], ...]
    budget: Budget
    #: The controller's image: the replay of the whole metadata log (derived, not compared)
    image: MetadataImage = attrs.field(eq=False, repr=False, default=MetadataImage())


def append(state: KraftState, records: Sequence[Record]) -> KraftState:
    """``state`` with ``records`` appended to the metadata log and replayed into the controller's image."""
    if not records:
        return state
    image, offset = state.image, len(state.metadata_log)
    for record in records:
        image = apply(image, offset, record)
        offset += 1
    return attrs.evolve(state, metadata_log=(*state.metadata_log, *records), image=image)


#: Compact, canonical JSON: tuples as arrays, no spaces, ASCII only.
_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True, check_circular=False, allow_nan=False)


def _tuple(values: list[int] | None) -> tuple[int, ...] | None:
    return None if values is None else tuple(values)


def _ints(values: Sequence[int] | None) -> tuple[int, ...] | None:
    return None if values is None else tuple(int(v) for v in values)


class Codec:
    """The canonical bytes of the KRaft states of one scenario (the module docstring says how)."""

    def __init__(self, topics: Sequence[str], initial: KraftState):
        self.topics = tuple(topics)
        self._topic_index = {name: i for i, name in enumerate(self.topics)}
        self.prefix = initial.metadata_log
        self._prefix_image = initial.image

    # ---- writing ----

    def _record(self, r: Record) -> tuple[Any, ...]:
        if isinstance(r, PartitionChangeRecord):
            return (4, r.partition, r.leader, _ints(r.isr), _ints(r.eligible_leader_replicas),
                    _ints(r.last_known_elr), r.leader_recovery_state)
        if isinstance(r, BrokerRegistrationChangeRecord):
            return (1, r.broker_id, r.broker_epoch, r.fenced, int(r.in_controlled_shutdown))
        if isinstance(r, RegisterBrokerRecord):
            return (0, r.broker_id, r.broker_epoch)
        if isinstance(r, TopicRecord):
            return (2, self._topic_index[r.name])
        if isinstance(r, RemoveTopicRecord):
            return (5, self._topic_index[r.name], _ints(r.partitions))
        if isinstance(r, ConfigRecord):
            return (6, self._topic_index[r.resource_name], r.value)
        return (3, r.partition, _ints(r.replicas), _ints(r.isr), r.leader)

    @staticmethod
    def _broker(b: BrokerState) -> tuple[Any, ...]:
        return (b.id, b.process, b.broker_epoch, b.metadata_offset,
                tuple((tuple(log.records), log.high_watermark) for log in b.logs),
                tuple(None if lead is None else
                      (lead.leader_epoch, lead.partition_epoch, tuple(lead.isr),
                       tuple((f.broker, f.log_end_offset, f.broker_epoch) for f in lead.followers))
                      for lead in b.leading))

    def encode(self, state: KraftState) -> bytes:
        assert state.metadata_log[:len(self.prefix)] == self.prefix
        budget = state.budget
        spent: tuple[int, ...] = (budget.unclean_shutdowns, budget.restarts, budget.controlled_shutdowns,
                                  budget.session_expiries, budget.produces, budget.alter_partitions)
        admin = (budget.topic_creations, budget.topic_deletions, budget.min_insync_replicas_changes)
        # the admin's budget and the crashes only once spent: the bytes of scenarios without them stay as they were
        if budget.crashes:
            spent += (*admin, budget.crashes)
        elif any(admin):
            spent += admin
        tree = (tuple(self._record(r) for r in state.metadata_log[len(self.prefix):]),
                tuple(state.controlled_shutdown_offsets), tuple(self._broker(b) for b in state.brokers),
                tuple(state.acknowledged), spent)
        return _JSON.encode(tree).encode("ascii")

    # ---- reading ----

    def _read_record(self, t: list[Any]) -> Record:
        tag = t[0]
        if tag == 4:
            return PartitionChangeRecord(partition=t[1], leader=t[2], isr=_tuple(t[3]),
                                         eligible_leader_replicas=_tuple(t[4]), last_known_elr=_tuple(t[5]),
                                         leader_recovery_state=t[6])
        if tag == 1:
            return BrokerRegistrationChangeRecord(broker_id=t[1], broker_epoch=t[2], fenced=t[3],
                                                  in_controlled_shutdown=bool(t[4]))
        if tag == 0:
            return RegisterBrokerRecord(broker_id=t[1], broker_epoch=t[2])
        if tag == 2:
            return TopicRecord(name=self.topics[t[1]])
        if tag == 5:
            return RemoveTopicRecord(name=self.topics[t[1]], partitions=tuple(t[2]))
        if tag == 6:
            return ConfigRecord(resource_name=self.topics[t[1]], value=t[2])
        return PartitionRecord(partition=t[1], replicas=tuple(t[2]), isr=tuple(t[3]), leader=t[4])

    def decode(self, data: bytes) -> KraftState:
        """The state of ``data``; ``ValueError`` for bytes :meth:`encode` did not write."""
        try:
            return self._decode(json.loads(data))
        except (ValueError, TypeError, IndexError, KeyError, RecursionError) as e:
            raise ValueError(f"damaged KRaft state bytes: {type(e).__name__}") from None

    def _decode(self, tree: list[Any]) -> KraftState:
        suffix, offsets, brokers, acknowledged, budget = tree
        log = (*self.prefix, *(self._read_record(t) for t in suffix))
        # one replay of the suffix gives the controller's image and every broker's (at its offset)
        wanted = {b[3] for b in brokers}
        images: dict[int, MetadataImage] = {}
        image = self._prefix_image
        for offset in range(len(self.prefix), len(log) + 1):
            if offset in wanted:
                images[offset] = image
            if offset < len(log):
                image = apply(image, offset, log[offset])
        for offset in wanted - images.keys():  # a broker behind the shared prefix (not reached by the model)
            images[offset] = replay_prefix(log, offset)
        return KraftState(
            metadata_log=log, controlled_shutdown_offsets=tuple(offsets),
            brokers=tuple(BrokerState(id=b[0], process=b[1], broker_epoch=b[2], metadata_offset=b[3],
                                      logs=tuple(PartitionLog(records=tuple(r), high_watermark=hw) for r, hw in b[4]),
                                      leading=tuple(None if lead is None else
                                                    LeaderState(leader_epoch=lead[0], partition_epoch=lead[1],
                                                                isr=tuple(lead[2]),
                                                                followers=tuple(FollowerState(*f) for f in lead[3]))
                                                    for lead in b[5]),
                                      image=images[b[3]])
                          for b in brokers),
            acknowledged=tuple(tuple(a) for a in acknowledged), budget=Budget(*budget), image=image)


def replay_prefix(log: Sequence[Record], offset: int) -> MetadataImage:
    """The image of the first ``offset`` records of ``log``, replayed from nothing."""
    image = MetadataImage()
    for i in range(offset):
        image = apply(image, i, log[i])
    return image
