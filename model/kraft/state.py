"""The KRaft model's state: the metadata log, the controller's in-memory heartbeat state, and the brokers.

Every value is a frozen attrs class whose fields are declared once; the canonical bytes
(:func:`encode` / :func:`decode`) are derived from those declarations: a value is written as its class name and
its fields in declaration order, tuples as tuples, and read back through :data:`STATE_CLASSES`. Tuples the model
keeps as sets (the acknowledged records, the ISR as Kafka sorts it) are kept sorted by the steps that write them.

Deviation from the ZooKeeper model's state discipline: :mod:`model.zk.state.schema` is generic in what it says
(fields declared once, shapes and broker ids marked) but lives in the ZooKeeper package, and ``model.kraft`` must
not import ``model.zk`` (``[tool.importlinter]`` contract ``kraft-knows-no-zk``); its generated codec is written for
the ZooKeeper state's classes. This module derives its codec from the attrs declarations directly, as a reflective
writer and reader (the KRaft scenarios' state spaces are small), without symmetry reduction.
"""

from __future__ import annotations

import ast
from typing import Any

import attrs

from model.kraft.records import RECORD_CLASSES, Record

#: A broker's process (the TLA+ specification's broker status, in Kafka's ``BrokerLifecycleManager`` terms):
#: running, running and asking to shut down (``wantShutDown`` in its heartbeats), stopped after a clean
#: shutdown, stopped after an unclean one (its logs lost their unflushed tail).
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


@attrs.frozen
class KraftState:
    metadata_log: tuple[Record, ...]
    #: ``BrokerHeartbeatManager``'s ``controlledShutdownOffset`` by broker index (-1: not in controlled shutdown)
    controlled_shutdown_offsets: tuple[int, ...]
    brokers: tuple[BrokerState, ...]
    #: Records acknowledged to producers (acks=all): (partition, offset, leader epoch of the record), sorted
    acknowledged: tuple[tuple[int, int, int], ...]
    budget: Budget


STATE_CLASSES: dict[str, type] = {c.__name__: c for c in (*RECORD_CLASSES, PartitionLog, FollowerState, LeaderState,
                                                         BrokerState, Budget, KraftState)}


def _plain(value: Any) -> Any:
    if attrs.has(type(value)):
        return (type(value).__name__, *(_plain(getattr(value, f.name)) for f in attrs.fields(type(value))))
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value


def _value(plain: Any) -> Any:
    if isinstance(plain, tuple):
        if plain and isinstance(plain[0], str) and plain[0] in STATE_CLASSES:
            cls = STATE_CLASSES[plain[0]]
            return cls(*(_value(v) for v in plain[1:]))
        return tuple(_value(v) for v in plain)
    return plain


def encode(state: KraftState) -> bytes:
    """Canonical bytes: equal states give equal bytes in every process (no sets, dicts or hashes)."""
    return repr(_plain(state)).encode()


def decode(data: bytes) -> KraftState:
    state = _value(ast.literal_eval(data.decode()))
    assert isinstance(state, KraftState)
    return state
