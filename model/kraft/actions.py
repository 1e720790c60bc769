"""The KRaft model's steps: one table from kind to who acts, when it is enabled, what it does and its words.

Each kind is named after the Kafka request or method it mirrors; its handler returns the successor state, or
None when the step would change nothing (a rejected request). The bounded kinds spend ``[bounds]``
(:class:`model.scenario.kraft.KraftBounds`): ``UncleanShutdown`` unclean_shutdowns, ``BrokerCrash`` crashes,
``BrokerRegistration``
restarts, ``BeginControlledShutdown`` controlled_shutdowns, ``SessionExpiry`` of a running broker
session_expiries (an offline broker's session expires for free: it sends no heartbeats), ``Produce`` produces,
``AlterPartition`` alter_partitions, and the admin's requests ``CreateTopics`` topic_creations, ``DeleteTopics``
topic_deletions, ``IncrementalAlterConfigs`` min_insync_replicas_changes (each offered for the topics the scenario
names for it: ``created = "by_admin"``, ``deleted_by_admin``, ``min_insync_replicas_by_admin``). Replaying the
metadata log, heartbeats and fetches are bounded by the log and the records: they are offered only where they change
something.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import attrs

from model.kraft import cluster_control as cc
from model.kraft import replica_manager as rm
from model.kraft import replication_control as rc
from model.kraft.records import MetadataImage, RegisterBrokerRecord, RemoveTopicRecord
from model.kraft.state import (
    OFFLINE_CLEAN,
    OFFLINE_UNCLEAN,
    RUNNING,
    SHUTTING_DOWN,
    BrokerState,
    KraftState,
    PartitionLog,
    append,
)
from model.scenario import Scenario
from model.scenario.kraft import KraftSettings


class ActionKind(enum.Enum):
    ReplayMetadataRecord = "ReplayMetadataRecord"
    BrokerRegistration = "BrokerRegistration"
    UnfenceBroker = "UnfenceBroker"
    BeginControlledShutdown = "BeginControlledShutdown"
    ControlledShutdownHeartbeat = "ControlledShutdownHeartbeat"
    SessionExpiry = "SessionExpiry"
    MaybeFenceStaleBrokers = "MaybeFenceStaleBrokers"
    UncleanShutdown = "UncleanShutdown"
    BrokerCrash = "BrokerCrash"
    Produce = "Produce"
    Fetch = "Fetch"
    AlterPartition = "AlterPartition"
    CreateTopics = "CreateTopics"
    DeleteTopics = "DeleteTopics"
    IncrementalAlterConfigs = "IncrementalAlterConfigs"


#: The admin's requests reach the controller from no broker.
NO_BROKER = -1


@attrs.frozen
class Action:
    kind: ActionKind
    broker: int
    partition: int = -1
    isr: tuple[int, ...] = ()  # AlterPartition's new ISR
    stale: tuple[int, ...] = ()  # MaybeFenceStaleBrokers' brokers, in findStaleBrokers' order
    topic: str = ""  # the admin's requests: the topic
    value: int = 0  # IncrementalAlterConfigs: the new min.insync.replicas


@attrs.frozen
class Kind:
    actor: str  # "controller", "broker" or "failures"
    handler: Callable[[Scenario, KraftState, Action], KraftState | None]
    describe: Callable[[Action, Scenario], str]


def _settings(scenario: Scenario) -> KraftSettings:
    assert scenario.kraft is not None
    return scenario.kraft


def _index(state: KraftState, broker: int) -> int:
    return next(i for i, b in enumerate(state.brokers) if b.id == broker)


def _spend(state: KraftState, bound: str) -> KraftState:
    return attrs.evolve(state, budget=attrs.evolve(state.budget, **{bound: getattr(state.budget, bound) + 1}))


def _append(state: KraftState, records: list[Any]) -> KraftState:
    return append(state, records)


def _controller_image(state: KraftState) -> MetadataImage:
    return state.image


# ---- the handlers ----

def replay_metadata_record(scenario: Scenario, state: KraftState, action: Action) -> KraftState | None:
    """A broker replays the metadata log up to its end (``BrokerMetadataListener`` publishes the delta, then
    ``ReplicaManager.applyDelta``: :func:`model.kraft.replica_manager.replay_metadata`). Deviation: one step
    replays every record it lacks, not one record: an image is stale by whatever the controller wrote since the
    broker's last replay."""
    return rm.replace_broker(state, rm.replay_metadata(state, state.brokers[_index(state, action.broker)]))


def broker_registration(scenario: Scenario, state: KraftState, action: Action) -> KraftState | None:
    """An offline broker starts and registers a new incarnation (``BrokerLifecycleManager`` sends a
    ``BrokerRegistrationRequest``; ``ClusterControlManager.registerBroker``); it starts fenced."""
    image = _controller_image(state)
    records = cc.register_broker(image, _settings(scenario), action.broker, len(state.metadata_log))
    broker = state.brokers[_index(state, action.broker)]
    registration = records[-1]
    assert isinstance(registration, RegisterBrokerRecord)
    broker = attrs.evolve(broker, process=RUNNING, broker_epoch=registration.broker_epoch,
                          leading=tuple(None for _ in broker.leading))
    return _spend(rm.replace_broker(_append(state, records), broker), "restarts")


def unfence_broker(scenario: Scenario, state: KraftState, action: Action) -> KraftState | None:
    """A fenced broker caught up with its ``RegisterBrokerRecord`` heartbeats and is unfenced
    (``calculateNextBrokerState``: FENCED -> UNFENCED; ``handleBrokerUnfenced``)."""
    broker = state.brokers[_index(state, action.broker)]
    records = rc.handle_broker_unfenced(_controller_image(state), _settings(scenario), broker.id, broker.broker_epoch)
    return _append(state, records)


def begin_controlled_shutdown(scenario: Scenario, state: KraftState, action: Action) -> KraftState | None:
    """A running broker is asked to stop (SIGTERM): its heartbeats now carry ``wantShutDown``
    (``BrokerLifecycleManager.beginControlledShutdown``)."""
    i = _index(state, action.broker)
    broker = attrs.evolve(state.brokers[i], process=SHUTTING_DOWN)
    return _spend(rm.replace_broker(state, broker), "controlled_shutdowns")


def controlled_shutdown_heartbeat(scenario: Scenario, state: KraftState, action: Action) -> KraftState | None:
    """A heartbeat with ``wantShutDown`` (``processBrokerHeartbeat``): into ``CONTROLLED_SHUTDOWN``
    (``handleBrokerInControlledShutdown``), or ``SHUTDOWN_NOW`` (``handleBrokerFenced``) after which the broker,
    told ``shouldShutDown``, stops cleanly."""
    i = _index(state, action.broker)
    image = _controller_image(state)
    current = cc.current_state(state, image, i, action.broker)
    nxt = cc.next_state_on_shutdown_request(state, image, i, action.broker)
    broker = state.brokers[i]
    if nxt == cc.CONTROLLED_SHUTDOWN:
        if current == cc.CONTROLLED_SHUTDOWN:
            return None
        records = rc.handle_broker_in_controlled_shutdown(image, _settings(scenario), broker.id, broker.broker_epoch)
        state = _append(state, records)
        offsets = list(state.controlled_shutdown_offsets)
        offsets[i] = len(state.metadata_log) - 1  # maybeUpdateControlledShutdownOffset: the batch's last offset
        return attrs.evolve(state, controlled_shutdown_offsets=tuple(offsets))
    state = _append(state, rc.handle_broker_fenced(image, _settings(scenario), broker.id))
    offsets = list(state.controlled_shutdown_offsets)
    offsets[i] = -1
    stopped = attrs.evolve(broker, process=OFFLINE_CLEAN, leading=tuple(None for _ in broker.leading))
    return rm.replace_broker(attrs.evolve(state, controlled_shutdown_offsets=tuple(offsets)), stopped)


def session_expiry(scenario: Scenario, state: KraftState, action: Action) -> KraftState | None:
    """The broker's session expired (``maybeFenceOneStaleBroker``): ``handleBrokerFenced``."""
    i = _index(state, action.broker)
    state2 = _append(state, rc.handle_broker_fenced(_controller_image(state), _settings(scenario), action.broker))
    offsets = list(state2.controlled_shutdown_offsets)
    offsets[i] = -1
    state2 = attrs.evolve(state2, controlled_shutdown_offsets=tuple(offsets))
    return _spend(state2, "session_expiries") if state.brokers[i].alive else state2


def maybe_fence_stale_brokers(scenario: Scenario, state: KraftState, action: Action) -> KraftState | None:
    """Bug switch ``KAFKA_13173``: two brokers' sessions expired before one check, and 2.8's
    ``ReplicationControlManager.maybeFenceStaleBrokers`` fences both in one controller event: for each broker
    ``findStaleBrokers`` returns (the unfenced brokers by last contact, any order), ``handleBrokerFenced`` appends
    its records to one list, every call reading the partitions and registrations as they were before the event
    (``QuorumController`` replays a write event's records once it has generated them all). Its
    PartitionChangeRecords are each built against the same image; replayed in turn, the later ones keep the
    leader the earlier ones moved (``NO_LEADER_CHANGE``) and overwrite their ISR. 3.0.0 (fe7bced3f69; b1b872bd4ea,
    3.1.0, on trunk) fences one stale broker per event (``maybeFenceOneStaleBroker``): the model's
    ``SessionExpiry``. Deviation: the records are 3.9.0-rc3's (``BrokerRegistrationChangeRecord``, not
    ``FenceBrokerRecord``; ELR where enabled), each call 3.9's ``handleBrokerFenced``."""
    image = _controller_image(state)
    records: list[Any] = []
    for broker in action.stale:
        records += rc.handle_broker_fenced(image, _settings(scenario), broker)
    after = _append(state, records)
    offsets = list(after.controlled_shutdown_offsets)
    for broker in action.stale:
        offsets[_index(state, broker)] = -1
        if state.brokers[_index(state, broker)].alive:
            after = _spend(after, "session_expiries")
    return attrs.evolve(after, controlled_shutdown_offsets=tuple(offsets))


def unclean_shutdown(scenario: Scenario, state: KraftState, action: Action) -> KraftState | None:
    """The broker's host stops without flushing (a power loss, a kernel crash): every log loses its unflushed tail.
    Kafka leaves flushing to the OS (``log.flush.interval.messages`` unbounded), so the tail may be anything; the
    model takes the worst case, as the KIP-966 TLA+ specification's ``DataLossShutdown`` does: nothing survives. The
    metadata log (KRaft fsyncs it) survives."""
    return _stop_without_clean_shutdown(state, action, log_kept=False, bound="unclean_shutdowns")


def broker_crash(scenario: Scenario, state: KraftState, action: Action) -> KraftState | None:
    """The broker's process stops (kill -9, ``-XX:+ExitOnOutOfMemoryError``, ``Exit.halt`` on a fatal error: no
    shutdown hook runs) without a controlled shutdown and without flushing; the host stays up, so what the process
    wrote is in the OS page cache and its logs survive whole.

    Kafka 3.9.0-rc3: no ``BrokerLifecycleManager.beginControlledShutdown`` (no heartbeat with ``wantShutDown``), and
    ``LogManager.shutdown`` does not run, so no clean shutdown marker (``CleanShutdownFileHandler``, written with the
    broker epoch) is left: at the next start ``LogManager.loadLogs`` finds ``hadCleanShutdown`` false and recovers
    the logs from their recovery points (``LogLoader.recoverLog``: the records are all there),
    ``readBrokerEpochFromCleanShutdownFiles`` is empty and the ``BrokerRegistrationRequest``'s
    ``PreviousBrokerEpoch`` is -1. The controller learns of the crash only when the session expires
    (``SessionExpiry``, free for a stopped broker); the restart is ``BrokerRegistration``, whose
    ``ClusterControlManager.registerBroker`` calls ``ReplicationControlManager.handleBrokerUncleanShutdown`` for
    the new incarnation (with ELR off it returns at once: ``isElrSupported``; with ELR on it takes the broker out
    of every ISR and ELR, although its log is whole: 3.9.0-rc3's controller does not read ``PreviousBrokerEpoch``).

    Deviations: the log recovery's truncation of a torn last batch is not modelled (a step appends whole records);
    the high watermark is kept as it was (Kafka restarts from the ``replication-offset-checkpoint`` written every
    ``replica.high.watermark.checkpoint.interval.ms``, which may be lower)."""
    return _stop_without_clean_shutdown(state, action, log_kept=True, bound="crashes")


def _stop_without_clean_shutdown(state: KraftState, action: Action, *, log_kept: bool, bound: str) -> KraftState:
    """The broker stops with no controlled shutdown and no clean shutdown marker, leading nothing; its partition
    logs are kept (a process crash) or lost (a host failure); ``bound`` is spent."""
    broker = state.brokers[_index(state, action.broker)]
    logs = broker.logs if log_kept else tuple(PartitionLog() for _ in broker.logs)
    broker = attrs.evolve(broker, process=OFFLINE_UNCLEAN, logs=logs, leading=tuple(None for _ in broker.leading))
    return _spend(rm.replace_broker(state, broker), bound)


def leader_min_isr(scenario: Scenario, leader: BrokerState, index: int) -> int:
    """The minimum ISR a leader applies to a partition: ``Partition.effectiveMinIsr`` (3.9.0-rc3), the topic's
    ``min.insync.replicas`` as the leader's metadata image has it (``DynamicConfigPublisher`` updates the log's
    ``LogConfig`` from the image's ConfigRecords), capped at the replication factor."""
    return rc.min_isr(leader.image, _settings(scenario), index)


def produce(scenario: Scenario, state: KraftState, action: Action) -> KraftState | None:
    """A producer's request (acks=all) for one record reaches the partition's leader."""
    leader = state.brokers[_index(state, action.broker)]
    after = rm.append_records_to_leader(state, leader, action.partition,
                                        leader_min_isr(scenario, leader, action.partition))
    return None if after is None else _spend(after, "produces")


def fetch(scenario: Scenario, state: KraftState, action: Action) -> KraftState | None:
    """A follower fetches from the leader its metadata image names, in that leader epoch."""
    follower = state.brokers[_index(state, action.broker)]
    partition = follower.image.partitions[action.partition]
    assert partition is not None
    leader = state.brokers[_index(state, partition.leader)]
    return rm.fetch(state, follower, leader, action.partition, leader_min_isr(scenario, leader, action.partition))


def alter_partition(scenario: Scenario, state: KraftState, action: Action) -> KraftState | None:
    """The leader asks the controller for a new ISR (``Partition.maybeShrinkIsr`` / ``maybeExpandIsr``,
    ``AlterPartitionManager``), handled by ``ReplicationControlManager.alterPartition``; on success the leader
    takes the response's ISR and partition epoch. A rejected request changes nothing."""
    leader = state.brokers[_index(state, action.broker)]
    lead = leader.leading[action.partition]
    assert lead is not None
    epochs = {f.broker: f.broker_epoch for f in lead.followers}
    new_isr = tuple((b, leader.broker_epoch if b == leader.id else epochs.get(b, -1)) for b in action.isr)
    settings = _settings(scenario)
    error, record = rc.alter_partition(_controller_image(state), settings, leader.id, action.partition,
                                       lead.leader_epoch, lead.partition_epoch, new_isr)
    if error != rc.NONE:
        return None
    state = _spend(_append(state, [] if record is None else [record]), "alter_partitions")
    partition = _controller_image(state).partitions[action.partition]
    assert partition is not None
    leading = list(leader.leading)
    leading[action.partition] = attrs.evolve(lead, isr=partition.isr, partition_epoch=partition.partition_epoch)
    leader = attrs.evolve(leader, leading=tuple(leading))
    state = rm.replace_broker(state, leader)
    return rm.maybe_increment_leader_hw(state, leader, action.partition,
                                        leader_min_isr(scenario, leader, action.partition))


def create_topics(scenario: Scenario, state: KraftState, action: Action) -> KraftState | None:
    """An admin's CreateTopics request for one topic (``kafka-topics --create``), handled by
    ``ReplicationControlManager.createTopics`` (:func:`model.kraft.replication_control.create_topic`). A refused
    request (INVALID_REPLICATION_FACTOR while every broker is fenced or shutting down, ...) changes nothing."""
    settings = _settings(scenario)
    shutting_down = {b.id for b, offset in zip(state.brokers, state.controlled_shutdown_offsets, strict=True)
                     if offset >= 0}
    error, records = rc.create_topic(_controller_image(state), settings, settings.topic(action.topic), shutting_down,
                                     scenario.racks)
    if error != rc.NONE:
        return None
    return _spend(_append(state, records), "topic_creations")


def delete_topics(scenario: Scenario, state: KraftState, action: Action) -> KraftState | None:
    """An admin's DeleteTopics request for one topic, handled by ``ReplicationControlManager.deleteTopics``."""
    error, records = rc.delete_topic(_controller_image(state), _settings(scenario), action.topic)
    if error != rc.NONE:
        return None
    return _spend(_append(state, records), "topic_deletions")


def incremental_alter_configs(scenario: Scenario, state: KraftState, action: Action) -> KraftState | None:
    """An admin's IncrementalAlterConfigs request (``kafka-configs --alter --add-config min.insync.replicas=N``)
    for one topic, handled by ``ConfigurationControlManager.incrementalAlterConfigs``: a ConfigRecord and nothing
    else (:func:`model.kraft.replication_control.incremental_alter_min_isr`). The controller's elections and ELR
    read the new value from the next partition change on; each leader's produce and high watermark once it has
    replayed the record."""
    error, records = rc.incremental_alter_min_isr(_controller_image(state), action.topic, action.value)
    if error != rc.NONE or not records:
        return None
    return _spend(_append(state, records), "min_insync_replicas_changes")


# ---- enabled actions ----

def enabled_actions(scenario: Scenario, state: KraftState) -> list[Action]:
    """The actions of ``state``, in a fixed order: by kind (the order of :class:`ActionKind`), then broker,
    partition and ISR."""
    settings = _settings(scenario)
    image = _controller_image(state)
    return [*_lifecycle_actions(settings, state, image), *_failure_actions(settings, state, image),
            *_produce_actions(scenario, state), *_fetch_actions(state), *_alter_partition_actions(settings, state),
            *_admin_actions(settings, state, image)]


def _lifecycle_actions(settings: KraftSettings, state: KraftState, image: MetadataImage) -> list[Action]:
    """Replaying the metadata log, registration of a restarted broker, unfencing, controlled shutdown."""
    bounds, budget, brokers = settings.bounds, state.budget, state.brokers
    actions = [Action(ActionKind.ReplayMetadataRecord, b.id) for b in brokers
               if b.alive and b.metadata_offset < len(state.metadata_log)]
    if budget.restarts < bounds.restarts:
        actions += [Action(ActionKind.BrokerRegistration, b.id) for b in brokers
                    if not b.alive and image.is_fenced(b.id)]
    for b in brokers:
        reg = image.broker(b.id)
        if (b.process == RUNNING and reg is not None and reg.fenced and reg.epoch == b.broker_epoch
                and b.metadata_offset > reg.register_offset):
            actions.append(Action(ActionKind.UnfenceBroker, b.id))
    if budget.controlled_shutdowns < bounds.controlled_shutdowns:
        actions += [Action(ActionKind.BeginControlledShutdown, b.id) for b in brokers if b.process == RUNNING]
    actions += [Action(ActionKind.ControlledShutdownHeartbeat, b.id) for b in brokers
                if b.process == SHUTTING_DOWN and image.broker(b.id) is not None]
    return actions


def _failure_actions(settings: KraftSettings, state: KraftState, image: MetadataImage) -> list[Action]:
    """Session expiry (a dead broker's always, a live one's within the budget), two at once with ``KAFKA_13173``
    on, unclean shutdown and broker crash."""
    bounds, budget, brokers = settings.bounds, state.budget, state.brokers
    actions = [Action(ActionKind.SessionExpiry, b.id) for b in brokers
               if not image.is_fenced(b.id) and (not b.alive or budget.session_expiries < bounds.session_expiries)]
    if settings.bug("KAFKA_13173"):  # [bugs] KAFKA_13173: two sessions expire before one maybeFenceStaleBrokers
        expiring = [b for b in brokers if not image.is_fenced(b.id)]
        actions += [Action(ActionKind.MaybeFenceStaleBrokers, a.id, stale=(a.id, b.id))
                    for a in expiring for b in expiring
                    if a.id != b.id and budget.session_expiries + a.alive + b.alive <= bounds.session_expiries]
    if budget.unclean_shutdowns < bounds.unclean_shutdowns:
        actions += [Action(ActionKind.UncleanShutdown, b.id) for b in brokers if b.alive]
    if budget.crashes < bounds.crashes:
        actions += [Action(ActionKind.BrokerCrash, b.id) for b in brokers if b.alive]
    return actions


def _produce_actions(scenario: Scenario, state: KraftState) -> list[Action]:
    """A produce with acks=all at a live leader whose ISR is at least the minimum ISR it applies."""
    if state.budget.produces >= _settings(scenario).bounds.produces:
        return []
    return [Action(ActionKind.Produce, b.id, p) for b in state.brokers for p, lead in enumerate(b.leading)
            if b.alive and lead is not None and len(lead.isr) >= leader_min_isr(scenario, b, p)]


def _fetch_actions(state: KraftState) -> list[Action]:
    """A follower's fetch from the leader its own image names, when that leader leads at that epoch."""
    actions = []
    brokers = state.brokers
    for b in brokers:
        if not b.alive:
            continue
        for p, partition in b.image.existing():
            if b.id not in partition.replicas or partition.leader in (b.id, -1):
                continue
            leader = brokers[_index(state, partition.leader)]
            lead = leader.leading[p]
            if leader.alive and lead is not None and lead.leader_epoch == partition.leader_epoch:
                actions.append(Action(ActionKind.Fetch, b.id, p))
    return actions


def _alter_partition_actions(settings: KraftSettings, state: KraftState) -> list[Action]:
    """A leader's AlterPartition: a shrink for each follower in the ISR, an expansion for each caught-up one."""
    if state.budget.alter_partitions >= settings.bounds.alter_partitions:
        return []
    actions = []
    for b in state.brokers:
        if not b.alive:
            continue
        own = b.image
        for p, lead in enumerate(b.leading):
            partition = None if lead is None else own.partitions[p]
            if lead is None or partition is None:
                continue
            for r in partition.replicas:  # shrink: a follower out of the ISR (replica.lag.time.max.ms)
                if r != b.id and r in lead.isr:
                    actions.append(Action(ActionKind.AlterPartition, b.id, p, tuple(x for x in lead.isr if x != r)))
            hw = b.logs[p].high_watermark
            for f in lead.followers:  # expand: isFollowerInSync and isReplicaIsrEligible (KIP-841)
                # [bugs] KAFKA_13916: 3.2.0's maybeExpandIsr has no isReplicaIsrEligible
                eligible = settings.bug("KAFKA_13916") or own.is_active(f.broker)
                if f.broker not in lead.isr and f.log_end_offset >= hw and eligible:
                    actions.append(Action(ActionKind.AlterPartition, b.id, p, tuple(sorted((*lead.isr, f.broker)))))
    return actions


def _admin_actions(settings: KraftSettings, state: KraftState, image: MetadataImage) -> list[Action]:
    """The admin's requests, each for a topic the scenario names for it and within its bound: CreateTopics of a topic
    created = "by_admin" that does not exist and was never deleted, DeleteTopics of an existing topic
    deleted_by_admin, IncrementalAlterConfigs of an existing topic's min.insync.replicas to each of its values but
    the one the topic has."""
    bounds, budget = settings.bounds, state.budget
    actions = []
    if budget.topic_creations < bounds.topic_creations:
        deleted = {r.name for r in state.metadata_log if isinstance(r, RemoveTopicRecord)}
        actions += [Action(ActionKind.CreateTopics, NO_BROKER, topic=t.name) for t in settings.topics
                    if t.created_by_admin and t.name not in image.topics and t.name not in deleted]
    if budget.topic_deletions < bounds.topic_deletions:
        actions += [Action(ActionKind.DeleteTopics, NO_BROKER, topic=t.name) for t in settings.topics
                    if t.deleted_by_admin and t.name in image.topics]
    if budget.min_insync_replicas_changes < bounds.min_insync_replicas_changes:
        for t in settings.topics:
            if t.name in image.topics:
                current = dict(image.min_insync_replicas).get(t.name)
                actions += [Action(ActionKind.IncrementalAlterConfigs, NO_BROKER, topic=t.name, value=v)
                            for v in t.min_insync_replicas_by_admin if v != current]
    return actions


def _who(a: Action) -> str:
    return f"broker={a.broker}"


def _where(a: Action, scenario: Scenario) -> str:
    return partition_name(scenario, a.partition)


def partition_name(scenario: Scenario, index: int) -> str:
    names = [f"{t.name}-{p}" for t in scenario.topics for p in range(t.partitions)]
    return names[index]


KINDS: dict[ActionKind, Kind] = {
    ActionKind.ReplayMetadataRecord: Kind("broker", replay_metadata_record,
                                          lambda a, s: f"ReplayMetadataRecord({_who(a)})"),
    ActionKind.BrokerRegistration: Kind("broker", broker_registration,
                                        lambda a, s: f"BrokerRegistration({_who(a)})"),
    ActionKind.UnfenceBroker: Kind("controller", unfence_broker, lambda a, s: f"UnfenceBroker({_who(a)})"),
    ActionKind.BeginControlledShutdown: Kind("broker", begin_controlled_shutdown,
                                             lambda a, s: f"BeginControlledShutdown({_who(a)})"),
    ActionKind.ControlledShutdownHeartbeat: Kind("controller", controlled_shutdown_heartbeat,
                                                 lambda a, s: f"ControlledShutdownHeartbeat({_who(a)})"),
    ActionKind.SessionExpiry: Kind("failures", session_expiry, lambda a, s: f"SessionExpiry({_who(a)})"),
    ActionKind.MaybeFenceStaleBrokers: Kind("failures", maybe_fence_stale_brokers,
                                            lambda a, s: f"MaybeFenceStaleBrokers(brokers={list(a.stale)})"),
    ActionKind.UncleanShutdown: Kind("failures", unclean_shutdown, lambda a, s: f"UncleanShutdown({_who(a)})"),
    ActionKind.BrokerCrash: Kind("failures", broker_crash, lambda a, s: f"BrokerCrash({_who(a)})"),
    ActionKind.Produce: Kind("client", produce, lambda a, s: f"Produce({_who(a)}, {_where(a, s)})"),
    ActionKind.Fetch: Kind("broker", fetch, lambda a, s: f"Fetch({_who(a)}, {_where(a, s)})"),
    ActionKind.AlterPartition: Kind("broker", alter_partition,
                                    lambda a, s: f"AlterPartition({_who(a)}, {_where(a, s)}, newIsr={list(a.isr)})"),
    ActionKind.CreateTopics: Kind("admin", create_topics, lambda a, s: f"CreateTopics(topic={a.topic})"),
    ActionKind.DeleteTopics: Kind("admin", delete_topics, lambda a, s: f"DeleteTopics(topic={a.topic})"),
    ActionKind.IncrementalAlterConfigs: Kind(
        "admin", incremental_alter_configs,
        lambda a, s: f"IncrementalAlterConfigs(topic={a.topic}, min.insync.replicas={a.value})"),
}
