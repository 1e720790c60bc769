"""A partition leader's own ISR changes: ``cluster/Partition.scala``, through ZooKeeper (Kafka 1.1 – 2.6, and
later releases under ``inter.broker.protocol.version`` < 2.7-IV2) or through the controller (AlterIsr, KIP-497:
2.7+ with ``inter.broker.protocol.version`` ≥ 2.7-IV2).

The leader of a partition shrinks the ISR when a follower stops keeping up (``maybeShrinkIsr``, run
every ``replica.lag.time.max.ms / 2``) and expands it when a follower has caught up in the current
leader epoch (``maybeExpandIsr``, on the follower's fetch).

**Through ZooKeeper** (``expandIsrWithZk`` / ``shrinkIsrWithZk`` at 2.7.0; ``updateIsr`` before): the leader
writes the partition-state znode itself, ``ReplicationUtils.updateLeaderAndIsr``: leader, leader epoch and
controller epoch unchanged, the new ISR, conditional on the znode version the leader cached from
its last LeaderAndIsr. On success the leader keeps the new ISR and version and records the change
(``ReplicaManager.recordIsrChange``); ``maybePropagateIsrChanges`` later writes the
``/isr_change_notification`` sequence node that fires the controller's IsrChangeNotification
(:func:`maybe_propagate_isr_changes`, an environment step of its own per broker, batching every change the
broker recorded since its last propagation; a broker that dies first loses them). A
stale version fails the write ("Cached zkVersion … not equal to that in zookeeper, skip updating
ISR") and changes nothing: the leader keeps failing until a LeaderAndIsr gives it the current
version. Only writes that would succeed are offered: a failing write is a no-op.

**Through the controller** (AlterIsr, ``expandIsrWithAlterIsr`` / ``shrinkIsrWithAlterIsr`` and
``sendAlterIsrRequest``, 2.7.0): the leader proposes the new ISR (``PendingExpandIsr`` / ``PendingShrinkIsr``, kept
in :attr:`HostedPartition.pending_isr` until the answer, during which it proposes no other change) and
``AlterIsrManager`` sends an AlterIsr request with its leader epoch and the znode version it holds
(``currentIsrVersion``) to the controller, where it waits as an ``AlterIsrReceived`` event
(:func:`send_alter_isr`); the controller checks and writes (``KafkaController.processAlterIsr``,
:func:`model.zk.controller.controller.process_alter_isr`) and answers (:func:`handle_alter_isr_response`).
The leader writes nothing to ZooKeeper and no ``/isr_change_notification``.

From 3.3 (KAFKA-14140, KIP-841's ZooKeeper port, commit af40e119784) a leader adds a follower only if its metadata
cache holds the follower's broker alive (``Partition.isReplicaIsrEligible``: ``ZkMetadataCache.hasAliveBroker``), on
either path; before 3.3 any caught-up follower joins: the switch ``KAFKA_14140``, on before 3.3 (a broker in
controlled shutdown stays in the metadata cache's live brokers, so only the controller's check of the same commit
keeps it out: :func:`model.zk.controller.controller.process_alter_isr`).

Leader recovery (KIP-704, KAFKA-13587, 3.2.0 – 3.9, with ``inter.broker.protocol.version`` 3.2-IV0 and later): a
partition whose leader an unclean election chose is RECOVERING in its znode; ``Partition.makeLeader`` logs "The topic
partition ... was marked as RECOVERING" and marks it RECOVERED at once (3.2.0: "Leader log recovery is not
implemented"), so the leader's next AlterIsr carries RECOVERED and the controller's write of it ends the recovery
(:func:`model.zk.controller.controller.process_alter_isr`). Deviation: the broker's ``Partition`` keeps the leader
recovery state of its last LeaderAndIsr or AlterIsr answer (``partitionState.leaderRecoveryState``); the model keeps
none, as a leader's is RECOVERED from ``makeLeader`` on, only a leader sends AlterIsr, and nothing reads a
follower's.

In the model an ISR change is an environment step, bounded by ``[bounds] isr_changes``: one
follower leaves or joins per step. A shrink may drop any follower in the leader's ISR (it lags or
is gone); an expansion needs the follower alive, assigned in the leader's view, and following this
leader at this leader epoch with its fetcher running (its log end offset reaching the high
watermark is assumed, as it eventually does).

Deviations: Kafka may drop several lagging followers in one write; the model drops one per step. The
partition's data watch of a reassignment (``PartitionReassignmentIsrChange``) fires with the ISR write (not
registered with AlterIsr: ``KafkaController.onPartitionReassignment`` at 2.7.0, KAFKA-10521). ``AlterIsrManager``
batches the unsent items of a broker into one request every 50 ms with at most one request in flight per
broker; the model sends each partition's request at once, on its own, so a broker may have requests for several
partitions in flight.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from model.scenario import Scenario
from model.zk.environment.environment import broker_apply_request
from model.zk.state.step import Step
from model.zk.state.values import (
    BrokerState,
    ClusterState,
    ControllerEvent,
    EventKind,
    HostedPartition,
    LeaderAndIsr,
    LeaderRecoveryState,
    RequestKind,
    TopicPartition,
)

SHRINK = "LeaderShrinksIsr"
EXPAND = "LeaderExpandsIsr"

#: (leader broker, partition, follower, SHRINK or EXPAND)
IsrChange = tuple[int, TopicPartition, int, str]


@attrs.frozen
class IsrPath:
    """How the scenario's leaders change the ISR: through the controller (``alter_isr``, KIP-497) or the znode,
    and whether a follower must be alive in the leader's metadata cache to join (``eligible_only``: KAFKA-14140's
    fix, the switch ``KAFKA_14140`` off)."""

    alter_isr: bool = False
    eligible_only: bool = False

    @classmethod
    def of(cls, scenario: Scenario) -> IsrPath:
        return cls(alter_isr=scenario.since("KIP_497"), eligible_only=not scenario.bug("KAFKA_14140"))


ZK_PATH = IsrPath()


def isr_change_candidates(brokers: Mapping[int, BrokerState], zk_partitions: Mapping[TopicPartition, LeaderAndIsr],
                          path: IsrPath = ZK_PATH) -> list[IsrChange]:
    """Every ISR change a live leader could make now, in a fixed order (leader, partition, kind, follower): through
    ZooKeeper, the writes that would succeed; through the controller, those of partitions with no AlterIsr in
    flight (``isrState.isInflight`` false), whatever the controller will answer."""
    found: list[IsrChange] = []
    for leader_id in sorted(brokers):
        b = brokers[leader_id]
        if not b.alive:
            continue
        for h in b.partitions:
            if h.leader != leader_id:
                continue
            if path.alter_isr:
                if h.pending_isr:
                    continue
            else:
                znode = zk_partitions.get(h.partition)
                if znode is None or znode.zk_version != h.zk_version:
                    continue
            for f in h.isr:
                if f != leader_id:
                    found.append((leader_id, h.partition, f, SHRINK))
            for f in h.replicas:
                if (f not in h.isr and _caught_up(brokers.get(f), h.partition, leader_id, h.leader_epoch)
                        and (not path.eligible_only or f in b.metadata_live_brokers)):
                    found.append((leader_id, h.partition, f, EXPAND))
    return found


def candidates_of(state: ClusterState, path: IsrPath = ZK_PATH) -> list[IsrChange]:
    return isr_change_candidates({b.id: b for b in state.brokers}, dict(state.zk.partitions), path)


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
    still possible in ``step``; returns whether it was written (or, with AlterIsr, sent)."""
    path = IsrPath.of(step.scenario)
    if change not in isr_change_candidates(step.brokers, step.zk_partitions, path):
        return False
    if path.alter_isr:
        send_alter_isr(step, change)
        return True
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


# ---- AlterIsr (KIP-497, 2.7) -------------------------------------------------------------------

#: The errors after which the leader gives up and keeps its pending ISR until a LeaderAndIsr
#: (``Partition.handleAlterIsrResponse``, 2.7.0; INVALID_REQUEST from 3.2.0, KIP-704's answer,
#: ``handleAlterPartitionError``); it re-sends after any other.
GIVE_UP_ERRORS = ("UNKNOWN_TOPIC_OR_PARTITION", "FENCED_LEADER_EPOCH", "INVALID_UPDATE_VERSION", "INVALID_REQUEST")
#: The errors after which the leader returns to its last committed ISR and does not re-send
#: (``Partition.handleAlterPartitionError``, 3.3.0: the controller tells it the request was not applied).
RESET_ERRORS = ("INELIGIBLE_REPLICA", "OPERATION_NOT_ATTEMPTED")


def send_alter_isr(step: Step, change: IsrChange) -> None:
    """``Partition.sendAlterIsrRequest`` (2.7.0) from ``expandIsrWithAlterIsr`` / ``shrinkIsrWithAlterIsr``: the
    proposed ISR becomes the partition's ``isrState`` (``PendingExpandIsr`` / ``PendingShrinkIsr``) and
    ``AlterIsrManager`` sends ``AlterIsr(brokerId, brokerEpoch, [LeaderAndIsr(brokerId, leaderEpoch, newIsr,
    zkVersion)])`` to the controller: an ``AlterIsrReceived`` event in the active controller's queue."""
    leader_id, tp, follower, kind = change
    b = step.brokers[leader_id]
    h = b.hosted(tp)
    assert h is not None
    # Scala's small immutable sets keep insertion order: a follower joins at the end.
    proposed = (*h.isr, follower) if kind == EXPAND else tuple(r for r in h.isr if r != follower)
    step.brokers[leader_id] = _with_hosted(b, attrs.evolve(h, pending_isr=proposed))
    _send(step, leader_id, b.epoch, tp, h.leader_epoch, proposed, h.zk_version)
    step.budget = attrs.evolve(step.budget, isr_changes=step.budget.isr_changes + 1)


def _send(step: Step, broker: int, broker_epoch: int, tp: TopicPartition, leader_epoch: int, isr: tuple[int, ...],
          zk_version: int) -> None:
    # KIP-704 (3.2.0 - 3.9): the leader's partitionState.leaderRecoveryState, which Partition.makeLeader set to
    # RECOVERED whatever the LeaderAndIsr said; below 3.2-IV0 the request has no such field (Kafka's default,
    # RECOVERED)
    request = LeaderAndIsr(leader=broker, leader_epoch=leader_epoch, isr=isr, zk_version=zk_version,
                           controller_epoch=-1, leader_recovery_state=LeaderRecoveryState.RECOVERED)
    # the active controller's queue, also when a former controller's step answers NOT_CONTROLLER
    step.watch_events.append(ControllerEvent(EventKind.AlterIsrReceived, broker=broker, request_epoch=broker_epoch,
                                             isrs_to_alter=((tp, request),)))


def _with_hosted(b: BrokerState, hosted: HostedPartition) -> BrokerState:
    return attrs.evolve(b, partitions=tuple(hosted if x.partition == hosted.partition else x for x in b.partitions))


def _proposer(step: Step, event: ControllerEvent, tp: TopicPartition,
              sent: LeaderAndIsr) -> tuple[BrokerState, HostedPartition] | None:
    """The leader whose ``isrState`` is still the one the request proposed (``isrState != proposedIsrState``
    otherwise: a LeaderAndIsr replaced it, and the answer is ignored), with its partition; None when the
    incarnation that sent the request is gone (its ``Partition`` with it)."""
    b = step.brokers.get(event.broker)
    if b is None or not b.alive or b.epoch != event.request_epoch:
        return None
    h = b.hosted(tp)
    if (h is None or h.leader != b.id or h.pending_isr != sent.isr or h.leader_epoch != sent.leader_epoch
            or h.zk_version != sent.zk_version):
        return None
    return b, h


def handle_alter_isr_error(step: Step, event: ControllerEvent, error: str) -> None:
    """``AlterIsrManager.handleAlterIsrResponse`` (2.7.0) for a top-level error (NOT_CONTROLLER,
    STALE_BROKER_EPOCH): the items stay unsent and go again in the next request, to the controller the broker
    knows then (``BrokerToControllerChannelManager``), with the broker's current epoch."""
    for tp, sent in event.isrs_to_alter:
        found = _proposer(step, event, tp, sent)
        if found is not None:
            step.messages.append(f"broker {event.broker}: AlterIsr for {tp[0]}-{tp[1]} answered {error}; re-sent")
            _send(step, event.broker, found[0].epoch, tp, sent.leader_epoch, sent.isr, sent.zk_version)


def alter_isr_answer_lost(step: Step, event: ControllerEvent) -> None:
    """The controller's answer to ``event`` never reaches the leader: the request times out
    (``request.timeout.ms``), ``NetworkClient`` reports it disconnected, and ``BrokerToControllerRequestThread``
    (2.7.0 - 3.9; ``handleResponse``: ``response.wasDisconnected()``, ``requestQueue.putFirst``) sends the same
    request again, with the leader epoch and partition epoch (``currentIsrVersion``) it carried: the leader's
    ``isrState`` is still the pending one, as no answer and no LeaderAndIsr changed it. An incarnation that is gone
    sends nothing. Bounded by ``[bounds] alter_isr_answers_lost``.

    Deviations: Kafka re-sends after the timeout and with the broker's epoch of that time; the model re-sends within
    the controller's step, to the end of the active controller's queue."""
    step.budget = attrs.evolve(step.budget, alter_isr_answers_lost=step.budget.alter_isr_answers_lost + 1)
    for tp, sent in event.isrs_to_alter:
        found = _proposer(step, event, tp, sent)
        if found is not None:
            step.messages.append(f"broker {event.broker}: the answer to AlterIsr for {tp[0]}-{tp[1]} is lost; "
                                 "re-sent")
            _send(step, event.broker, found[0].epoch, tp, sent.leader_epoch, sent.isr, sent.zk_version)


def handle_alter_isr_response(step: Step, event: ControllerEvent, tp: TopicPartition,
                              result: LeaderAndIsr | str) -> None:
    """``Partition.handleAlterIsrResponse`` (2.7.0) for one partition, ``result`` the controller's
    LeaderAndIsr or its error: ignored unless the partition still proposes what the request did; on an error the
    leader gives up (:data:`GIVE_UP_ERRORS`: it stays pending until a LeaderAndIsr), returns to its committed ISR
    (:data:`RESET_ERRORS`, 3.3) or re-sends; on success it takes the answer's ISR and version unless the leader
    epoch differs or the version is not newer than its own (then it stays pending)."""
    sent = dict(event.isrs_to_alter)[tp]
    found = _proposer(step, event, tp, sent)
    if found is None:
        return
    b, h = found
    if isinstance(result, str):
        if result in RESET_ERRORS:
            step.brokers[b.id] = _with_hosted(b, attrs.evolve(h, pending_isr=()))
        elif result not in GIVE_UP_ERRORS:
            _send(step, b.id, b.epoch, tp, sent.leader_epoch, sent.isr, sent.zk_version)
        step.messages.append(f"broker {b.id}: AlterIsr for {tp[0]}-{tp[1]} failed with {result}"
                             + ("" if result in GIVE_UP_ERRORS + RESET_ERRORS else "; re-sent"))
        return
    if result.leader_epoch != h.leader_epoch or result.zk_version <= h.zk_version:
        step.messages.append(f"broker {b.id}: ignoring ISR from AlterIsr for {tp[0]}-{tp[1]} ({result.describe()})")
        return
    step.brokers[b.id] = _with_hosted(b, attrs.evolve(h, isr=result.isr, zk_version=result.zk_version, pending_isr=()))
