"""The metadata log's records and the image a replay of them builds.

The KRaft controller's state is the metadata log: the controller appends records, and the controller and every
broker build their view of the cluster by replaying them (``ClusterControlManager.replay``,
``ReplicationControlManager.replay``, 3.9.0-rc3; on brokers ``MetadataDelta`` into a ``MetadataImage``). The
records are those of ``metadata/src/main/resources/common/metadata/*.json`` that the model writes, with the
fields it reads:

* ``RegisterBrokerRecord`` (BrokerId, BrokerEpoch, Fenced: a registration starts fenced);
* ``BrokerRegistrationChangeRecord`` (BrokerId, BrokerEpoch, Fenced: 1 fence / -1 unfence / 0 none,
  InControlledShutdown: 1 when the broker enters controlled shutdown). Metadata version 3.9 writes it in place
  of ``FenceBrokerRecord`` / ``UnfenceBrokerRecord`` (``isBrokerRegistrationChangeRecordSupported``, 3.3-IV2 on);
* ``TopicRecord`` (Name) and ``PartitionRecord`` (PartitionId, Replicas, Isr, Leader, LeaderEpoch,
  PartitionEpoch, EligibleLeaderReplicas, LastKnownElr, LeaderRecoveryState);
* ``PartitionChangeRecord`` (Leader: -2 no change, Isr, EligibleLeaderReplicas, LastKnownElr, LeaderRecoveryState:
  -1 no change; null fields change nothing), merged by ``PartitionRegistration.merge`` (a leader change bumps the
  leader epoch, every change bumps the partition epoch);
* ``RemoveTopicRecord`` (TopicId), which ``ReplicationControlManager.replay(RemoveTopicRecord)`` answers by
  dropping the topic, its partitions and (``ConfigurationControlManager.deleteTopicConfigs``) its configuration;
* ``ConfigRecord`` (ResourceType TOPIC, ResourceName, Name, Value) of ``min.insync.replicas`` only
  (``ConfigurationControlManager.replay(ConfigRecord)``; a null value deletes the topic's setting).

Deviations: a topic is named, not identified by a Uuid (a deleted topic is never re-created, so names are
unique): ``RemoveTopicRecord`` names the topic and its partitions (Kafka's carries the TopicId, through which the
image finds the partitions); a partition is its index in the scenario's order of (topic, partition), and the
image holds None at the index of a partition whose topic does not exist (not created yet, or deleted); no
directories, listeners, features or incarnation ids are recorded, and no configuration but a topic's
``min.insync.replicas``.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

NO_LEADER = -1
NO_LEADER_CHANGE = -2
#: LeaderRecoveryState (``metadata/.../LeaderRecoveryState.java``): RECOVERED 0, RECOVERING 1; -1: no change.
RECOVERED, RECOVERING, NO_RECOVERY_CHANGE = 0, 1, -1
#: BrokerRegistrationFencingChange: FENCE 1, NONE 0, UNFENCE -1.
FENCE, UNFENCE = 1, -1


@attrs.frozen
class RegisterBrokerRecord:
    broker_id: int
    broker_epoch: int


@attrs.frozen
class BrokerRegistrationChangeRecord:
    broker_id: int
    broker_epoch: int
    fenced: int = 0
    in_controlled_shutdown: bool = False


@attrs.frozen
class TopicRecord:
    name: str


@attrs.frozen
class PartitionRecord:
    partition: int  # index in the scenario's (topic, partition) order
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int


@attrs.frozen
class RemoveTopicRecord:
    name: str  # stands for the TopicId (module docstring)
    partitions: tuple[int, ...]  # the topic's partitions, by index in the scenario


#: ``TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG``: the one configuration the model writes.
MIN_IN_SYNC_REPLICAS_CONFIG = "min.insync.replicas"


@attrs.frozen
class ConfigRecord:
    """A topic's ``min.insync.replicas`` set (``value``) or deleted (None): ResourceType TOPIC, ResourceName."""

    resource_name: str
    value: int | None
    name: str = MIN_IN_SYNC_REPLICAS_CONFIG


@attrs.frozen
class PartitionChangeRecord:
    partition: int
    leader: int = NO_LEADER_CHANGE
    isr: tuple[int, ...] | None = None
    eligible_leader_replicas: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None
    leader_recovery_state: int = NO_RECOVERY_CHANGE


Record = (RegisterBrokerRecord | BrokerRegistrationChangeRecord | TopicRecord | PartitionRecord | PartitionChangeRecord
          | RemoveTopicRecord | ConfigRecord)
RECORD_CLASSES = (RegisterBrokerRecord, BrokerRegistrationChangeRecord, TopicRecord, PartitionRecord,
                  PartitionChangeRecord, RemoveTopicRecord, ConfigRecord)


@attrs.frozen
class BrokerRegistration:
    """``metadata/.../BrokerRegistration.java``: what the image knows of a broker."""

    id: int
    epoch: int
    register_offset: int  # the offset of its RegisterBrokerRecord (``registerBrokerRecordOffset``)
    fenced: bool = True
    in_controlled_shutdown: bool = False

    @property
    def active(self) -> bool:
        """``ClusterControlManager.isActive``: registered, unfenced and not in controlled shutdown."""
        return not self.fenced and not self.in_controlled_shutdown


@attrs.frozen
class PartitionRegistration:
    """``metadata/.../PartitionRegistration.java`` (no directories, adding or removing replicas)."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()
    leader_recovery_state: int = RECOVERED

    def merge(self, r: PartitionChangeRecord) -> PartitionRegistration:
        """``PartitionRegistration.merge`` (3.9.0-rc3)."""
        leader, leader_epoch = ((self.leader, self.leader_epoch) if r.leader == NO_LEADER_CHANGE
                                else (r.leader, self.leader_epoch + 1))
        return PartitionRegistration(
            replicas=self.replicas, isr=self.isr if r.isr is None else r.isr, leader=leader,
            leader_epoch=leader_epoch, partition_epoch=self.partition_epoch + 1,
            elr=self.elr if r.eligible_leader_replicas is None else r.eligible_leader_replicas,
            last_known_elr=self.last_known_elr if r.last_known_elr is None else r.last_known_elr,
            leader_recovery_state=(self.leader_recovery_state if r.leader_recovery_state == NO_RECOVERY_CHANGE
                                   else r.leader_recovery_state))


@attrs.frozen
class MetadataImage:
    """What a replay of a prefix of the metadata log builds: brokers by id, the topics that exist, partitions by
    index (None where its topic does not exist) and the topics' ``min.insync.replicas`` settings."""

    brokers: tuple[BrokerRegistration, ...] = ()
    topics: tuple[str, ...] = ()
    partitions: tuple[PartitionRegistration | None, ...] = ()
    #: (topic, min.insync.replicas) for every topic with the setting (``ConfigurationControlManager.configData``),
    #: sorted by topic
    min_insync_replicas: tuple[tuple[str, int], ...] = ()

    def broker(self, broker_id: int) -> BrokerRegistration | None:
        return next((b for b in self.brokers if b.id == broker_id), None)

    def is_active(self, broker_id: int) -> bool:
        b = self.broker(broker_id)
        return b is not None and b.active

    def is_fenced(self, broker_id: int) -> bool:
        b = self.broker(broker_id)
        return b is None or b.fenced

    def partition(self, index: int) -> PartitionRegistration | None:
        return self.partitions[index] if index < len(self.partitions) else None

    def existing(self) -> list[tuple[int, PartitionRegistration]]:
        """The partitions of the topics that exist, with their indices."""
        return [(i, p) for i, p in enumerate(self.partitions) if p is not None]

    def topic_min_insync_replicas(self, topic: str, default: int) -> int:
        """The topic's ``min.insync.replicas``: its own setting, else ``default`` (the brokers' and controller's
        ``min.insync.replicas``, the scenario's ``[kafka] min_insync_replicas``)."""
        return next((v for name, v in self.min_insync_replicas if name == topic), default)

    def effective_min_isr(self, index: int, topic: str, default: int) -> int:
        """The minimum ISR of partition ``index`` of ``topic``: the controller's
        ``ReplicationControlManager.getTopicEffectiveMinIsr`` and the leader's ``Partition.effectiveMinIsr`` (3.9.0-rc3)
        both take the topic's ``min.insync.replicas`` and cap it at the replication factor."""
        partition = self.partitions[index]
        assert partition is not None
        return min(self.topic_min_insync_replicas(topic, default), len(partition.replicas))


def apply(image: MetadataImage, offset: int, record: Record) -> MetadataImage:
    """``image`` after replaying ``record`` at ``offset`` (``ClusterControlManager.replay`` and
    ``ReplicationControlManager.replay``, 3.9.0-rc3)."""
    if isinstance(record, RegisterBrokerRecord):
        others = tuple(b for b in image.brokers if b.id != record.broker_id)
        reg = BrokerRegistration(id=record.broker_id, epoch=record.broker_epoch, register_offset=offset)
        return attrs.evolve(image, brokers=tuple(sorted((*others, reg), key=lambda b: b.id)))
    if isinstance(record, BrokerRegistrationChangeRecord):
        def changed(b: BrokerRegistration) -> BrokerRegistration:
            if b.id != record.broker_id or b.epoch != record.broker_epoch:
                return b
            fenced = b.fenced if record.fenced == 0 else record.fenced == FENCE
            return attrs.evolve(b, fenced=fenced, in_controlled_shutdown=b.in_controlled_shutdown
                                or record.in_controlled_shutdown)
        return attrs.evolve(image, brokers=tuple(changed(b) for b in image.brokers))
    if isinstance(record, TopicRecord):
        return attrs.evolve(image, topics=(*image.topics, record.name))
    if isinstance(record, PartitionRecord):
        part = PartitionRegistration(replicas=record.replicas, isr=record.isr, leader=record.leader)
        return attrs.evolve(image, partitions=_put(image.partitions, record.partition, part))
    if isinstance(record, RemoveTopicRecord):
        parts: tuple[PartitionRegistration | None, ...] = image.partitions
        for index in record.partitions:
            parts = _put(parts, index, None)
        return attrs.evolve(image, topics=tuple(t for t in image.topics if t != record.name), partitions=parts,
                            min_insync_replicas=tuple(c for c in image.min_insync_replicas if c[0] != record.name))
    if isinstance(record, ConfigRecord):
        configs = [c for c in image.min_insync_replicas if c[0] != record.resource_name]
        if record.value is not None:
            configs.append((record.resource_name, record.value))
        return attrs.evolve(image, min_insync_replicas=tuple(sorted(configs)))
    merged = list(image.partitions)
    current = merged[record.partition]
    assert current is not None
    merged[record.partition] = current.merge(record)
    return attrs.evolve(image, partitions=tuple(merged))


def _put(parts: tuple[PartitionRegistration | None, ...], index: int,
         part: PartitionRegistration | None) -> tuple[PartitionRegistration | None, ...]:
    """``parts`` with ``part`` at ``index``, padded with None (the partitions of topics that do not exist)."""
    padded = list(parts) + [None] * (index + 1 - len(parts))
    padded[index] = part
    return tuple(padded)


def replay(log: Sequence[Record]) -> MetadataImage:
    """The image of the whole of ``log``, replayed from nothing (a broker's image is the replay of a prefix). The
    model carries the images in its state (:mod:`model.kraft.state`); this is what they must equal."""
    image = MetadataImage()
    for offset, record in enumerate(log):
        image = apply(image, offset, record)
    return image


def describe_record(record: Record, topic_of: Sequence[str]) -> str:
    """One line naming the record as Kafka's ``MetadataShell`` would show its fields."""
    if isinstance(record, RegisterBrokerRecord):
        return f"RegisterBrokerRecord(brokerId={record.broker_id}, brokerEpoch={record.broker_epoch})"
    if isinstance(record, BrokerRegistrationChangeRecord):
        what = {FENCE: ", fenced=1", UNFENCE: ", fenced=-1"}.get(record.fenced, "")
        if record.in_controlled_shutdown:
            what += ", inControlledShutdown=1"
        return f"BrokerRegistrationChangeRecord(brokerId={record.broker_id}, brokerEpoch={record.broker_epoch}{what})"
    if isinstance(record, TopicRecord):
        return f"TopicRecord(name={record.name})"
    if isinstance(record, RemoveTopicRecord):
        return f"RemoveTopicRecord(topic={record.name})"
    if isinstance(record, ConfigRecord):
        value = "null" if record.value is None else record.value
        return (f"ConfigRecord(resourceType=TOPIC, resourceName={record.resource_name}, name={record.name}, "
                f"value={value})")
    if isinstance(record, PartitionRecord):
        return (f"PartitionRecord({topic_of[record.partition]}, replicas={list(record.replicas)}, "
                f"isr={list(record.isr)}, leader={record.leader})")
    fields = []
    if record.leader != NO_LEADER_CHANGE:
        fields.append(f"leader={record.leader}")
    if record.isr is not None:
        fields.append(f"isr={list(record.isr)}")
    if record.eligible_leader_replicas is not None:
        fields.append(f"eligibleLeaderReplicas={list(record.eligible_leader_replicas)}")
    if record.last_known_elr is not None:
        fields.append(f"lastKnownElr={list(record.last_known_elr)}")
    if record.leader_recovery_state != NO_RECOVERY_CHANGE:
        fields.append(f"leaderRecoveryState={record.leader_recovery_state}")
    return f"PartitionChangeRecord({topic_of[record.partition]}, {', '.join(fields)})"
