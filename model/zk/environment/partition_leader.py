"""A partition leader's own ISR changes: ``cluster/Partition.scala`` (Kafka 2.0 – 2.3, before AlterIsr).

The leader of a partition shrinks the ISR when a follower stops keeping up (``maybeShrinkIsr``, run
every ``replica.lag.time.max.ms / 2``) and expands it when a follower has caught up in the current
leader epoch (``maybeExpandIsr``, on the follower's fetch). Either way ``updateIsr`` writes the
partition-state znode itself, ``ReplicationUtils.updateLeaderAndIsr``: leader, leader epoch and
controller epoch unchanged, the new ISR, conditional on the znode version the leader cached from
its last LeaderAndIsr. On success the leader keeps the new ISR and version and records the change
(``ReplicaManager.recordIsrChange``); ``maybePropagateIsrChanges`` later writes the
``/isr_change_notification`` sequence node that fires the controller's IsrChangeNotification
(:func:`maybe_propagate_isr_changes`, an environment step of its own per broker, batching every change the
broker recorded since its last propagation; a broker that dies first loses them). A
stale version fails the write ("Cached zkVersion … not equal to that in zookeeper, skip updating
ISR") and changes nothing: the leader keeps failing until a LeaderAndIsr gives it the current
version.

In the model an ISR change is an environment step, bounded by ``[bounds] isr_changes``: one
follower leaves or joins per step. A shrink may drop any follower in the leader's ISR (it lags or
is gone); an expansion needs the follower alive, assigned in the leader's view, and following this
leader at this leader epoch with its fetcher running (its log end offset reaching the high
watermark is assumed, as it eventually does). Only writes that would succeed are offered: a failing
write is a no-op.

Deviations: Kafka may drop several lagging followers in one write; the model drops one per step. The
partition's data watch of a reassignment (``PartitionReassignmentIsrChange``) fires with the ISR write.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from model.zk.environment.environment import broker_apply_request
from model.zk.state.step import Step
from model.zk.state.values import BrokerState, ClusterState, EventKind, LeaderAndIsr, RequestKind, TopicPartition

SHRINK = "LeaderShrinksIsr"
EXPAND = "LeaderExpandsIsr"

#: (leader broker, partition, follower, SHRINK or EXPAND)
IsrChange = tuple[int, TopicPartition, int, str]


def isr_change_candidates(brokers: Mapping[int, BrokerState],
                          zk_partitions: Mapping[TopicPartition, LeaderAndIsr]) -> list[IsrChange]:
    """Every ISR change a live leader could write now, in a fixed order (leader, partition, kind,
    follower)."""
    found: list[IsrChange] = []
    for leader_id in sorted(brokers):
        b = brokers[leader_id]
        if not b.alive:
            continue
        for h in b.partitions:
            if h.leader != leader_id:
                continue
            znode = zk_partitions.get(h.partition)
            if znode is None or znode.zk_version != h.zk_version:
                continue
            for f in h.isr:
                if f != leader_id:
                    found.append((leader_id, h.partition, f, SHRINK))
            for f in h.replicas:
                if f not in h.isr and _caught_up(brokers.get(f), h.partition, leader_id, h.leader_epoch):
                    found.append((leader_id, h.partition, f, EXPAND))
    return found


def candidates_of(state: ClusterState) -> list[IsrChange]:
    return isr_change_candidates({b.id: b for b in state.brokers}, dict(state.zk.partitions))


def shrinks_after_leader_and_isr(state: ClusterState) -> list[IsrChange]:
    """The shrinks that may land inside a controller step after the leader applied that step's LeaderAndIsr
    (:func:`maybe_race`), in a fixed order (partition, leader, follower): of a partition named in
    ``/admin/reassign_partitions`` (the end of its reassignment is the one event that writes the znode after
    sending its LeaderAndIsr), by a live target replica (the leader the reassignment leaves), of any other
    replica, old or new. Those the step does not make possible have no successor."""
    found: list[IsrChange] = []
    alive = {b.id for b in state.brokers if b.alive}
    for tp, target in state.zk.reassign_partitions:
        replicas = sorted({*target, *(state.zk.replicas(tp) or ())})
        for leader in sorted(set(target) & alive):
            found.extend((leader, tp, f, SHRINK) for f in replicas if f != leader)
    return found


def _caught_up(follower: BrokerState | None, tp: TopicPartition, leader: int, leader_epoch: int) -> bool:
    if follower is None or not follower.alive:
        return False
    h = follower.hosted(tp)
    return h is not None and h.fetching and h.leader == leader and h.leader_epoch == leader_epoch


def update_isr(step: Step, change: IsrChange) -> bool:
    """The leader's ``maybeShrinkIsr`` / ``maybeExpandIsr`` and ``updateIsr`` for ``change``, if it is
    still possible in ``step``; returns whether it was written."""
    if change not in isr_change_candidates(step.brokers, step.zk_partitions):
        return False
    leader_id, tp, follower, kind = change
    b = step.brokers[leader_id]
    h = b.hosted(tp)
    assert h is not None
    # Scala's small immutable sets keep insertion order: a follower joins at the end.
    new_isr = (*h.isr, follower) if kind == EXPAND else tuple(r for r in h.isr if r != follower)
    znode = step.zk_partitions[tp]
    written = LeaderAndIsr(leader=leader_id, leader_epoch=h.leader_epoch, isr=new_isr, zk_version=znode.zk_version + 1,
                           controller_epoch=h.controller_epoch)
    step.zk_partitions[tp] = written
    hosted = attrs.evolve(h, isr=new_isr, zk_version=written.zk_version)
    step.brokers[leader_id] = attrs.evolve(b, partitions=tuple(hosted if x.partition == tp else x
                                                                for x in b.partitions))
    step.isr_updates.append((tp, leader_id, h.isr, new_isr))
    step.partition_state_written(tp)
    leader = step.brokers[leader_id]  # ReplicaManager.recordIsrChange
    step.brokers[leader_id] = attrs.evolve(leader, pending_isr_changes=tuple(sorted({*leader.pending_isr_changes,
                                                                                      tp})))
    step.budget = attrs.evolve(step.budget, isr_changes=step.budget.isr_changes + 1)
    return True


def maybe_propagate_isr_changes(step: Step, broker: int) -> None:
    """``ReplicaManager.maybePropagateIsrChanges`` (the ``isr-change-propagation`` task, every 2.5 s): once no
    ISR change was recorded for 5 s, or 60 s after the last propagation, the broker writes one
    ``/isr_change_notification/isr_change_<seq>`` naming every partition in its ``isrChangeSet`` and clears the
    set; the sequence node fires the controller's IsrChangeNotification. The step is enabled while the set is
    not empty: at most one per recorded ISR change, so ``[bounds] isr_changes`` bounds it too."""
    b = step.brokers[broker]
    step.zk_isr_change_notifications.update(b.pending_isr_changes)
    step.brokers[broker] = attrs.evolve(b, pending_isr_changes=())
    step.enqueue_once(EventKind.IsrChangeNotification)


def maybe_race(step: Step, tp: TopicPartition) -> None:
    """The explorer's chosen leader write for ``tp`` (once per step), landing just before a conditional write of
    that znode by the controller, between its read and its write (BADVERSION, then the retry re-reads).

    Without ``step.isr_race_after_leader_and_isr`` it lands at the controller's first write of ``tp`` in the
    step: the leader writes with the znode version of its last LeaderAndIsr, which any earlier write of the
    controller would have made stale.

    With it the write lands at a later conditional write of ``tp`` in the same event, after the leader applied
    the LeaderAndIsr the controller sent for its earlier write: in Kafka the ``RequestSendThread`` of
    ``ControllerChannelManager`` sends a batch as soon as ``sendRequestsToBrokers`` hands it over, while the
    event thread goes on. In 2.3 the one event that writes a partition-state znode, sends its LeaderAndIsr and
    writes the znode again is the end of a reassignment (``KafkaController.onPartitionReassignment`` steps 6 – 8:
    ``moveReassignedPartitionLeaderIfRequired``'s election or ``updateLeaderEpochAndSendRequest``, then
    ``stopOldReplicasOfReassignedPartition``'s ``removeReplicasFromIsr``). The leader applies every request of
    its channel up to that LeaderAndIsr (its channel is FIFO) and then writes; only a shrink can land there (an
    expansion needs a follower fetching at the new leader epoch, which no follower has yet within the step)."""
    race = step.isr_race
    if race is None or step.isr_race_fired or race[1] != tp:
        return
    if step.isr_race_after_leader_and_isr and not _leader_applies_leader_and_isr(step, race[0], tp):
        return
    step.isr_race_fired = update_isr(step, race)


def _leader_applies_leader_and_isr(step: Step, leader: int, tp: TopicPartition) -> bool:
    """Whether the controller sent ``leader``, earlier in this step, a LeaderAndIsr naming it the leader of ``tp``
    with the znode's current version; if so the leader applies its channel up to and including the last such
    request (``ReplicaManager.becomeLeaderOrFollower``, its response joining the controller's queue)."""
    znode = step.zk_partitions.get(tp)
    queue = step.channels.get(leader)
    b = step.brokers.get(leader)
    if znode is None or not queue or b is None or not b.alive:
        return False
    sent_before = len(step.source.channel(leader))
    last = -1
    for i in range(sent_before, len(queue)):
        r = queue[i]
        if r.kind is RequestKind.LeaderAndIsr and any(
                s.partition == tp and s.leader == leader and s.zk_version == znode.zk_version for s in r.leader_states):
            last = i
    if last < 0:
        return False
    for _ in range(last + 1):
        broker_apply_request(step, leader)
    return True
