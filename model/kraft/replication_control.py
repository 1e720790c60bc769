"""``ReplicationControlManager``: the records the controller writes when brokers change and leaders ask.

``metadata/src/main/java/org/apache/kafka/controller/ReplicationControlManager.java`` at 3.9.0-rc3: the methods
``generateLeaderAndIsrUpdates``, ``handleBrokerFenced``, ``handleBrokerUnfenced``,
``handleBrokerInControlledShutdown``, ``handleBrokerUncleanShutdown`` and ``alterPartition`` (with
``validateAlterPartitionData`` and ``ineligibleReplicasForIsr``), each returning the records it would append.
The partitions a handler visits are those ``BrokersToIsrs`` / ``BrokersToElrs`` index
(``partitionsWithBrokerInIsr``, ``partitionsWithNoLeader``, ``partitionsWithBrokerInElr``), in partition order.

``isElrEnabled`` is the scenario's ``eligible_leader_replicas_enable``: in Kafka, the controller's
``eligible.leader.replicas.enable`` and a metadata version with ``isElrSupported`` (4.0-IV1). A partition's minimum
ISR is ``getTopicEffectiveMinIsr``: its topic's ``min.insync.replicas`` (the topic's ConfigRecord, else the
scenario's ``[kafka] min_insync_replicas``) capped at the replication factor.

The admin's requests: ``createTopics`` / ``createTopic`` (:func:`create_topic`), ``deleteTopics`` /
``deleteTopic`` (:func:`delete_topic`) and ``ConfigurationControlManager.incrementalAlterConfigs`` of a topic's
``min.insync.replicas`` (:func:`incremental_alter_min_isr`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

import attrs

from model.admin.assignment import InvalidReplicationFactorException
from model.admin.striped_replica_placer import JavaRandom, UsableBroker, striped_place
from model.kraft.partition_change_builder import build
from model.kraft.records import (
    FENCE,
    NO_LEADER,
    RECOVERED,
    UNFENCE,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    MetadataImage,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RemoveTopicRecord,
    TopicRecord,
)
from model.scenario.kraft import KraftSettings, KraftTopic

#: AlterPartition errors (``validateAlterPartitionData``), or NONE.
NONE = "NONE"


def partitions_with_broker_in_isr(image: MetadataImage, broker: int) -> list[int]:
    return [i for i, p in image.existing() if broker in p.isr]


def partitions_with_broker_in_elr(image: MetadataImage, broker: int) -> list[int]:
    return [i for i, p in image.existing() if broker in p.elr]


def partitions_with_no_leader(image: MetadataImage) -> list[int]:
    return [i for i, p in image.existing() if p.leader == NO_LEADER]


def has_leaderships(image: MetadataImage, broker: int) -> bool:
    """``BrokersToIsrs.hasLeaderships``."""
    return any(p.leader == broker for _, p in image.existing())


def min_isr(image: MetadataImage, settings: KraftSettings, index: int) -> int:
    """``getTopicEffectiveMinIsr`` of partition ``index``'s topic, as ``image`` has its configuration."""
    return image.effective_min_isr(index, settings.partition_topics[index], settings.min_insync_replicas)


def is_acceptable_leader(image: MetadataImage, settings: KraftSettings, broker: int) -> bool:
    """``clusterControl::active``, the acceptable-leader test of every election: registered, unfenced and not in
    controlled shutdown.

    Bug switch ``KAFKA_13916_LEADER_ELECTION``: ``clusterControl.unfenced(r)``, 3.2.0's test, which takes a broker
    in controlled shutdown; 151ca12a56c (KAFKA-13916's first commit, 3.3.0) replaced it with ``active`` in
    ``generateLeaderAndIsrUpdates``, ``alterPartition`` and the elections the model leaves out. Deviation: with the
    switch on the controller still writes ``InControlledShutdown`` (151ca12a56c added the field; 3.2.0 kept the
    state in ``BrokerHeartbeatManager`` only); the switch changes which brokers an election accepts, nothing else."""
    if settings.bug("KAFKA_13916_LEADER_ELECTION"):
        return not image.is_fenced(broker)
    return image.is_active(broker)


def generate_leader_and_isr_updates(image: MetadataImage, settings: KraftSettings, partitions: Iterable[int], *,
                                    broker_to_remove: int = NO_LEADER, broker_to_add: int = NO_LEADER,
                                    broker_with_unclean_shutdown: int = NO_LEADER) -> list[PartitionChangeRecord]:
    """``generateLeaderAndIsrUpdates``: one ``PartitionChangeBuilder`` per partition, the broker to remove left out
    of the target ISR and of the acceptable leaders, the broker to add acceptable even while still fenced."""

    def acceptable(r: int) -> bool:
        return (r != broker_to_remove and r != broker_with_unclean_shutdown
                and (r == broker_to_add or is_acceptable_leader(image, settings, r)))

    records = []
    for index in partitions:
        partition = image.partitions[index]
        assert partition is not None
        target = [r for r in partition.isr if r not in (broker_to_remove, broker_with_unclean_shutdown)]
        record = build(index, partition, is_acceptable_leader=acceptable, min_isr=min_isr(image, settings, index),
                       eligible_leader_replicas_enabled=settings.eligible_leader_replicas_enable,
                       unclean=settings.unclean_leader_election_enable, target_isr=target,
                       unclean_shutdown_replicas=(() if broker_with_unclean_shutdown == NO_LEADER
                                                  else (broker_with_unclean_shutdown,)))
        if record is not None:
            records.append(record)
            image = _merged(image, record)
    return records


def _merged(image: MetadataImage, record: PartitionChangeRecord) -> MetadataImage:
    parts = list(image.partitions)
    current = parts[record.partition]
    assert current is not None
    parts[record.partition] = current.merge(record)
    return attrs.evolve(image, partitions=tuple(parts))


def handle_broker_fenced(image: MetadataImage, settings: KraftSettings, broker: int) -> list[Record]:
    """``handleBrokerFenced``: out of every ISR (new leaders where it led), then the fencing record."""
    registration = image.broker(broker)
    assert registration is not None
    records: list[Record] = list(generate_leader_and_isr_updates(
        image, settings, partitions_with_broker_in_isr(image, broker), broker_to_remove=broker))
    records.append(BrokerRegistrationChangeRecord(broker_id=broker, broker_epoch=registration.epoch, fenced=FENCE))
    return records


def handle_broker_unfenced(image: MetadataImage, settings: KraftSettings, broker: int, epoch: int) -> list[Record]:
    """``handleBrokerUnfenced``: the unfencing record, then leaders for the partitions without one."""
    records: list[Record] = [BrokerRegistrationChangeRecord(broker_id=broker, broker_epoch=epoch, fenced=UNFENCE)]
    records += generate_leader_and_isr_updates(image, settings, partitions_with_no_leader(image),
                                               broker_to_add=broker)
    return records


def handle_broker_in_controlled_shutdown(image: MetadataImage, settings: KraftSettings, broker: int,
                                         epoch: int) -> list[Record]:
    """``handleBrokerInControlledShutdown``: the registration change (once), then out of every ISR."""
    registration = image.broker(broker)
    records: list[Record] = []
    if registration is not None and not registration.in_controlled_shutdown:
        records.append(BrokerRegistrationChangeRecord(broker_id=broker, broker_epoch=epoch,
                                                      in_controlled_shutdown=True))
    records += generate_leader_and_isr_updates(image, settings, partitions_with_broker_in_isr(image, broker),
                                               broker_to_remove=broker)
    return records


def handle_broker_unclean_shutdown(image: MetadataImage, settings: KraftSettings, broker: int) -> list[Record]:
    """``handleBrokerUncleanShutdown``: with ELR supported, out of every ISR and then every ELR."""
    if not settings.eligible_leader_replicas_enable:
        return []
    records: list[Record] = list(generate_leader_and_isr_updates(
        image, settings, partitions_with_broker_in_isr(image, broker), broker_with_unclean_shutdown=broker))
    for record in records:
        image = _merged(image, record)  # type: ignore[arg-type]
    records += generate_leader_and_isr_updates(image, settings, partitions_with_broker_in_elr(image, broker),
                                               broker_with_unclean_shutdown=broker)
    return records


def alter_partition(image: MetadataImage, settings: KraftSettings, broker: int, index: int, leader_epoch: int,
                    partition_epoch: int, new_isr: tuple[tuple[int, int], ...]
                    ) -> tuple[str, PartitionChangeRecord | None]:
    """``alterPartition`` for one partition: ``validateAlterPartitionData``'s error, or NONE and the record
    ``PartitionChangeBuilder`` builds for the target ISR (``new_isr``: (broker, broker epoch) pairs, KIP-903).

    Bug switches: ``KAFKA_13916`` drops KIP-841's check that every new ISR member is registered, unfenced and not
    in controlled shutdown (3.2.0's ``alterPartition`` has none; f83d95d9a28 added ``INELIGIBLE_REPLICA``, 3.3.0);
    an unregistered replica is still refused (the model's only replicas are registered brokers).
    ``KAFKA_14617`` drops KIP-903's broker epoch comparison (``AlterPartitionRequest`` version 2 has no
    ``NewIsrWithEpochs``: 3.4.0; 8c88cdb7186 and d5e216d6183, 3.5.0)."""
    partition = image.partitions[index]
    if partition is None:  # the topic was deleted (or its TopicId is unknown)
        return "UNKNOWN_TOPIC_ID", None
    if leader_epoch > partition.leader_epoch or partition_epoch > partition.partition_epoch:
        return "NOT_CONTROLLER", None
    if leader_epoch < partition.leader_epoch:
        return "FENCED_LEADER_EPOCH", None
    if broker != partition.leader:
        return "INVALID_REQUEST", None
    if partition_epoch < partition.partition_epoch:
        return "INVALID_UPDATE_VERSION", None
    isr = [b for b, _ in new_isr]
    if not set(isr) <= set(partition.replicas) or broker not in isr:
        return "INVALID_REQUEST", None
    for b, epoch in new_isr:  # ineligibleReplicasForIsr (KIP-841, KIP-903)
        registration = image.broker(b)
        # [bugs] KAFKA_13916: before 3.3.0 (f83d95d9a28) no eligibility check; KAFKA_14617: before 3.5.0
        # (8c88cdb7186) the request carries no broker epochs, so none is compared
        ineligible = registration is None or (not settings.bug("KAFKA_13916") and (
            registration.in_controlled_shutdown or registration.fenced))
        stale = (not settings.bug("KAFKA_14617") and epoch != -1 and registration is not None
                 and registration.epoch != epoch)
        if ineligible or stale:
            return "INELIGIBLE_REPLICA", None
    record = build(index, partition, is_acceptable_leader=lambda r: is_acceptable_leader(image, settings, r),
                   min_isr=min_isr(image, settings, index),
                   eligible_leader_replicas_enabled=settings.eligible_leader_replicas_enable,
                   unclean=settings.unclean_leader_election_enable, target_isr=isr,
                   target_leader_recovery_state=RECOVERED)
    return NONE, record


def create_topic(image: MetadataImage, settings: KraftSettings, topic: KraftTopic, shutting_down: Collection[int],
                 racks: Mapping[int, str | None]) -> tuple[str, list[Record]]:
    """``createTopics`` and ``createTopic`` (3.9.0-rc3) for a CreateTopics request of one topic, without
    configurations: its error, or NONE and the ``TopicRecord`` followed by a ``PartitionRecord`` per partition.

    * ``TOPIC_ALREADY_EXISTS`` when the name is taken (``topicsByName``).
    * A manual assignment (the scenario's ``replicas``): ``validateManualPartitionAssignment`` (every broker
      registered, else ``INVALID_REPLICA_ASSIGNMENT``); the ISR is the active replicas (``clusterControl::isActive``),
      ``INVALID_REPLICA_ASSIGNMENT`` when none is.
    * Otherwise ``clusterControl.replicaPlacer().place``: :func:`model.admin.striped_replica_placer.striped_place`
      over ``ClusterControlManager.usableBrokers`` (``BrokerHeartbeatManager.UsableBrokerIterator``: every broker
      but those in controlled shutdown, ``shutting_down``, by id, fenced ones marked), its
      ``InvalidReplicationFactorException`` (all brokers fenced, or fewer registered than the replication factor)
      answered ``INVALID_REPLICATION_FACTOR``, as is a partition whose replicas are all inactive ("All brokers are
      currently fenced or in controlled shutdown").
    * ``buildPartitionRegistration``: leader the first ISR member, epochs 0, RECOVERED.

    Deviations: the placer draws from ``new Random(striped_replica_placer_seed)`` at every request (Kafka's
    controller keeps one unseeded ``Random`` for its lifetime, so a placement also depends on the earlier ones); no
    topic id (the name stands for it), no ``CreateTopicPolicy``, quotas or ``validateOnly``."""
    if topic.name in image.topics:
        return "TOPIC_ALREADY_EXISTS", []
    if topic.replicas:
        placement = topic.replicas
        if any(image.broker(b) is None for replicas in placement for b in replicas):
            return "INVALID_REPLICA_ASSIGNMENT", []
        error = "INVALID_REPLICA_ASSIGNMENT"
    else:
        usable = [UsableBroker(b.id, racks.get(b.id), b.fenced) for b in image.brokers if b.id not in shutting_down]
        try:
            placement = striped_place(usable, topic.partitions, topic.replication_factor,
                                      JavaRandom(settings.striped_replica_placer_seed))
        except InvalidReplicationFactorException:
            return "INVALID_REPLICATION_FACTOR", []
        error = "INVALID_REPLICATION_FACTOR"
    records: list[Record] = [TopicRecord(name=topic.name)]
    for index, replicas in zip(settings.partitions_of(topic.name), placement, strict=True):
        isr = tuple(b for b in replicas if image.is_active(b))
        if not isr:
            return error, []
        records.append(PartitionRecord(partition=index, replicas=tuple(replicas), isr=isr, leader=isr[0]))
    return NONE, records


def delete_topic(image: MetadataImage, settings: KraftSettings, name: str) -> tuple[str, list[Record]]:
    """``deleteTopics`` / ``deleteTopic`` (3.9.0-rc3) of one topic: ``UNKNOWN_TOPIC_OR_PARTITION`` when it does not
    exist (``findTopicIds``), else one ``RemoveTopicRecord``. Its replay drops the topic's partitions and
    configuration; brokers delete their replicas when they replay it (``ReplicaManager.applyDelta``)."""
    if name not in image.topics:
        return "UNKNOWN_TOPIC_OR_PARTITION", []
    return NONE, [RemoveTopicRecord(name=name, partitions=settings.partitions_of(name))]


def incremental_alter_min_isr(image: MetadataImage, name: str, value: int) -> tuple[str, list[Record]]:
    """``ConfigurationControlManager.incrementalAlterConfigs`` (3.9.0-rc3) of one topic, SET
    ``min.insync.replicas`` to ``value``: ``UNKNOWN_TOPIC_OR_PARTITION`` for a topic that does not exist
    (``existenceChecker``), else a ``ConfigRecord``, or nothing when the topic's setting already has that value
    (``incrementalAlterConfigResource`` writes a record only when the value changes).

    Nothing else: 3.9.0-rc3 and trunk of 2024-10-25 (1eb7644349c) write no PartitionChangeRecord on a
    ``min.insync.replicas`` change; ``ConfigurationControlManager.replay(ConfigRecord)`` only stores the value. A
    partition's ELR stays as it is until the next ``PartitionChangeBuilder`` run on it, which reads the new value
    (``maybePopulateTargetElr``). KAFKA-16540 ("Update partitions if min isr config is changed", pull request
    15702, e6db70067b4, not on that trunk) would rerun ``generateLeaderAndIsrUpdates`` over the partitions with an
    ELR; it is not modelled."""
    if name not in image.topics:
        return "UNKNOWN_TOPIC_OR_PARTITION", []
    if any(topic == name and v == value for topic, v in image.min_insync_replicas):
        return NONE, []
    return NONE, [ConfigRecord(resource_name=name, value=value)]
