"""The broker side: replaying the metadata log into partitions, produce, fetch and the high watermark.

Kafka 3.9.0-rc3, ``core/src/main/scala/kafka/server/ReplicaManager.scala`` (``applyDelta``: a broker becomes
leader or follower as its metadata image says) and ``core/src/main/scala/kafka/cluster/Partition.scala``
(``makeLeader``, ``makeFollower``, ``appendRecordsToLeader``, ``updateFollowerFetchState``,
``maybeIncrementLeaderHW``, ``checkEnoughReplicasReachOffset``), with the follower's truncation of
``AbstractFetcherThread`` (a diverging epoch in a fetch response, KIP-320 / KIP-595).

Deviations:

* A fetch is one step: the follower's request reaches the leader, the leader records the follower's fetch
  offset (its log end after truncation) and broker epoch, and the response appends every record the leader has
  past it and gives the follower ``min(leader's high watermark, its log end)``. The follower truncates to the
  longest common prefix of the two logs (records carry their leader epoch): what the epoch-based truncation
  reaches when the logs match by epoch.
* The leader's high watermark is the least log end offset of the leader and the followers in its ISR (3.9 also
  counts followers caught up within ``replica.lag.time.max.ms``; with time abstracted those may be any).
* A produce request (acks=all) is acknowledged when the high watermark passes its record while the leader is
  still leader in the record's epoch, and only if the ISR then has at least ``min.insync.replicas`` members
  (``checkEnoughReplicasReachOffset``: else NOT_ENOUGH_REPLICAS_AFTER_APPEND).
"""

from __future__ import annotations

import attrs

from model.kraft.records import MetadataImage
from model.kraft.state import BrokerState, FollowerState, KraftState, LeaderState, PartitionLog


def apply_delta(image: MetadataImage, broker: BrokerState) -> BrokerState:
    """``ReplicaManager.applyDelta``: the broker leads where its image says so (``Partition.makeLeader``: a new
    leader epoch resets what it knows of its followers; the same epoch with a newer partition epoch updates the
    ISR), and follows elsewhere (``makeFollower``).

    A partition the image no longer has (its topic deleted) is stopped and its log deleted: ``applyDelta`` first
    handles ``localChanges.deletes`` (``TopicsDelta.localChanges`` adds every partition of ``deletedTopicIds()``
    the broker was a replica of) with ``stopPartitions(deleteLocalLog = true)``; a broker that was offline while
    the topic was deleted finds the log stray at its first metadata publish (``BrokerMetadataPublisher``:
    ``LogManager.startup(isStray = isStrayKraftReplica)``, the partition absent from the image) and deletes it
    (``asyncDelete(isStray = true)``). Deviation: the model replays a restarted broker's image from where it
    stopped, so both paths are the replay that passes the ``RemoveTopicRecord``; deletion is immediate (Kafka
    renames the directory and deletes it after ``file.delete.delay.ms``)."""
    leading = list(broker.leading)
    logs = broker.logs
    for index, partition in enumerate(image.partitions):
        current = leading[index]
        if partition is None:
            if current is not None or logs[index] != PartitionLog():
                leading[index] = None
                logs = (*logs[:index], PartitionLog(), *logs[index + 1:])
            continue
        if partition.leader == broker.id:
            if current is None or partition.leader_epoch > current.leader_epoch:
                leading[index] = LeaderState(leader_epoch=partition.leader_epoch,
                                             partition_epoch=partition.partition_epoch, isr=partition.isr)
            elif partition.partition_epoch > current.partition_epoch:
                leading[index] = attrs.evolve(current, partition_epoch=partition.partition_epoch, isr=partition.isr)
        elif current is not None:
            leading[index] = None
    return attrs.evolve(broker, leading=tuple(leading), logs=logs)


def replay_metadata(state: KraftState, broker: BrokerState) -> BrokerState:
    """The broker replays the metadata log to its end and publishes the delta (``BrokerMetadataListener``, then
    ``BrokerMetadataPublisher.onMetadataUpdate``, which calls ``ReplicaManager.applyDelta``): its image becomes the
    controller's and it leads or follows as that image says (:func:`apply_delta`). The one replay of the model: a
    ``ReplayMetadataRecord`` step and the replays :mod:`model.kraft.reduction` takes within a step (the
    reduction's and the ``[bounds] stale_metadata_brokers`` bound's) both run it. Deviation: every record the
    broker lacks in one replay, not one record at a time."""
    replayed = attrs.evolve(broker, metadata_offset=len(state.metadata_log), image=state.image)
    return apply_delta(replayed.image, replayed)


def maybe_increment_leader_hw(state: KraftState, leader: BrokerState, index: int, min_isr: int) -> KraftState:
    """``maybeIncrementLeaderHW`` and the acknowledgements it completes (``DelayedProduce``)."""
    lead = leader.leading[index]
    assert lead is not None
    log = leader.logs[index]
    ends = [len(log.records)] + [f.log_end_offset for f in lead.followers if f.broker in lead.isr]
    ends += [0 for b in lead.isr if b != leader.id and all(f.broker != b for f in lead.followers)]
    new_hw = min(ends)
    if new_hw <= log.high_watermark:
        return state
    acked = set(state.acknowledged)
    if len(lead.isr) >= min_isr:
        acked |= {(index, offset, log.records[offset]) for offset in range(log.high_watermark, new_hw)
                  if log.records[offset] == lead.leader_epoch}
    logs = list(leader.logs)
    logs[index] = attrs.evolve(log, high_watermark=new_hw)
    return replace_broker(attrs.evolve(state, acknowledged=tuple(sorted(acked))),
                          attrs.evolve(leader, logs=tuple(logs)))


def append_records_to_leader(state: KraftState, leader: BrokerState, index: int, min_isr: int) -> KraftState | None:
    """``Partition.appendRecordsToLeader`` with acks=all: refused (NOT_ENOUGH_REPLICAS) below
    ``min.insync.replicas``; else one record in the leader's epoch."""
    lead = leader.leading[index]
    if lead is None or len(lead.isr) < min_isr:
        return None
    logs = list(leader.logs)
    logs[index] = attrs.evolve(logs[index], records=(*logs[index].records, lead.leader_epoch))
    leader = attrs.evolve(leader, logs=tuple(logs))
    return maybe_increment_leader_hw(replace_broker(state, leader), leader, index, min_isr)


def fetch(state: KraftState, follower: BrokerState, leader: BrokerState, index: int, min_isr: int
          ) -> KraftState | None:
    """A follower's fetch from the leader, answered (None when it would change nothing)."""
    lead = leader.leading[index]
    assert lead is not None
    own, theirs = follower.logs[index].records, leader.logs[index].records
    common = 0
    while common < min(len(own), len(theirs)) and own[common] == theirs[common]:
        common += 1
    fetch_offset = common
    followers = tuple(sorted((*(f for f in lead.followers if f.broker != follower.id),
                              FollowerState(broker=follower.id, log_end_offset=fetch_offset,
                                            broker_epoch=follower.broker_epoch)), key=lambda f: f.broker))
    leading = list(leader.leading)
    leading[index] = attrs.evolve(lead, followers=followers)
    leader2 = attrs.evolve(leader, leading=tuple(leading))
    after = maybe_increment_leader_hw(replace_broker(state, leader2), leader2, index, min_isr)
    leader2 = after.brokers[_position(after, leader.id)]
    hw = leader2.logs[index].high_watermark
    logs = list(follower.logs)
    logs[index] = PartitionLog(records=theirs, high_watermark=min(hw, len(theirs)))
    after = replace_broker(after, attrs.evolve(follower, logs=tuple(logs)))
    return None if after == state else after


def _position(state: KraftState, broker: int) -> int:
    return next(i for i, b in enumerate(state.brokers) if b.id == broker)


def replace_broker(state: KraftState, broker: BrokerState) -> KraftState:
    brokers = list(state.brokers)
    brokers[_position(state, broker.id)] = broker
    return attrs.evolve(state, brokers=tuple(brokers))
