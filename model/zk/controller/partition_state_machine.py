"""The partition state machine: ``controller/PartitionStateMachine.scala`` (Kafka 2.0 – 2.3).

``handle_state_changes`` mirrors ``PartitionStateMachine.handleStateChanges``. OnlinePartition from
NewPartition initialises leader and ISR (``initializeLeaderAndIsrForPartitions``); from Online or
Offline it runs an election (``electLeaderForPartitions``) with the given strategy:
``OfflinePartitionLeaderElectionStrategy``, ``ReassignPartitionLeaderElectionStrategy``,
``PreferredReplicaPartitionLeaderElectionStrategy`` or ``ControlledShutdownPartitionLeaderElectionStrategy``
(2.3 ``Election.leaderForOffline`` / ``leaderForReassign`` / ``leaderForPreferredReplica`` /
``leaderForControlledShutdown``, whose algorithms are :mod:`model.zk.controller.election`).

Elections retry after BADVERSION as Kafka 1.1 – 2.3 do, with their bug (KAFKA_8286): every partition of
the call is elected again, not only the one that met the conflict (see ``_elect_leader_for_partitions``).
"""

from __future__ import annotations

from collections.abc import Iterable

from model.zk.controller.election import (
    controlled_shutdown_partition_leader_election,
    offline_partition_leader_election,
    preferred_replica_partition_leader_election,
    reassign_partition_leader_election,
)
from model.zk.controller.kafka_zk_client import update_leader_and_isr
from model.zk.state.states import PARTITION_TABLE, PartitionState
from model.zk.state.step import Step
from model.zk.state.values import LeaderAndIsr, TopicPartition

P = PartitionState

OFFLINE = "OfflinePartitionLeaderElectionStrategy"
REASSIGN = "ReassignPartitionLeaderElectionStrategy"
PREFERRED = "PreferredReplicaPartitionLeaderElectionStrategy"
CONTROLLED_SHUTDOWN = "ControlledShutdownPartitionLeaderElectionStrategy"
#: ``OfflinePartitionLeaderElectionStrategy(allowUnclean = true)`` (2.4, KIP-460): an ElectLeaders(UNCLEAN) request
#: elects outside the ISR without reading the topic's config (``collectUncleanLeaderElectionState``)
OFFLINE_ALLOW_UNCLEAN = "OfflinePartitionLeaderElectionStrategy(allowUnclean = true)"


def handle_state_changes(step: Step, partitions: Iterable[TopicPartition], target: PartitionState,
                         strategy: str = OFFLINE) -> None:
    parts = sorted(set(partitions))
    if not parts:
        return
    allowed = PARTITION_TABLE[target]
    valid: list[TopicPartition] = []
    for tp in parts:
        current = step.partition_state.setdefault(tp, P.NonExistentPartition)
        if current in allowed:
            valid.append(tp)
        else:
            step.messages.append(
                f"IllegalStateException: partition {tp[0]}-{tp[1]} should be in the "
                f"{','.join(s.name for s in sorted(allowed))} states before moving to {target.name} state. "
                f"Instead it is in {current.name} state")
    if target is P.OnlinePartition:
        uninitialized = [tp for tp in valid if step.partition_state[tp] is P.NewPartition]
        to_elect = [tp for tp in valid if step.partition_state[tp] in (P.OnlinePartition, P.OfflinePartition)]
        for tp in _initialize_leader_and_isr(step, uninitialized):
            step.partition_state[tp] = P.OnlinePartition
        for tp in _elect_leader_for_partitions(step, to_elect, strategy):
            step.partition_state[tp] = P.OnlinePartition
    else:
        for tp in valid:
            step.partition_state[tp] = target
    step.send_requests_to_brokers()


def trigger_online_partition_state_change(step: Step, topic: str | None = None) -> None:
    """``triggerOnlinePartitionStateChange``: every New or Offline partition (of ``topic``, if given) of a
    topic not queued for deletion goes Online under the offline election strategy."""
    handle_state_changes(step, online_state_change_candidates(step, topic), P.OnlinePartition)


def online_state_change_candidates(step: Step, topic: str | None = None) -> list[TopicPartition]:
    """The partitions ``triggerOnlinePartitionStateChange`` tries to bring online."""
    return [tp for tp, s in step.partition_state.items()
            if s in (P.NewPartition, P.OfflinePartition) and not step.is_topic_queued_up_for_deletion(tp[0])
            and (topic is None or tp[0] == topic)]


def _initialize_leader_and_isr(step: Step, partitions: list[TopicPartition]) -> list[TopicPartition]:
    done: list[TopicPartition] = []
    for tp in partitions:
        assigned = step.assignment.get(tp, ())
        live = tuple(b for b in assigned if step.is_replica_online(b, tp))
        if not live:
            step.messages.append(
                f"StateChangeFailedException: encountered error during state change of partition "
                f"{tp[0]}-{tp[1]} from New to Online, assigned replicas are {list(assigned)}, live brokers are "
                f"{sorted(step.live_brokers)}. No assigned replica is alive.")
            continue
        if tp in step.zk_partitions:
            step.messages.append(f"NodeExistsException: partition-state znode of {tp[0]}-{tp[1]} already exists")
            continue
        lai = LeaderAndIsr(leader=live[0], leader_epoch=0, isr=live, zk_version=0, controller_epoch=step.epoch)
        step.controller_writes_zk(f"the creation of the partition state of {tp[0]}-{tp[1]}")
        step.zk_partitions[tp] = lai
        step.leadership[tp] = lai
        step.add_leader_and_isr_request(live, tp, lai, assigned, is_new=True)
        step.elections.append((tp, -1, lai.leader))
        done.append(tp)
    return done


def _elect_leader_for_partitions(step: Step, partitions: list[TopicPartition], strategy: str) -> list[TopicPartition]:
    """``electLeaderForPartitions``: ``doElectLeaderForPartitions`` again while some write met BADVERSION.

    Kafka 1.1 – 2.3 pass the whole ``partitions`` to every retry, not the ``remaining`` ones (fixed in
    2.4 within KAFKA-8286, commit 121308cc7a2): one conflict re-runs the election of every partition
    of the call, so those already elected get a second leader-epoch bump, and their LeaderAndIsr in
    the batch is replaced by the later one. Without the switch KAFKA_8286 (2.4+) the retry takes the
    remaining partitions only.
    """
    elected: list[TopicPartition] = []
    remaining = partitions
    while remaining:
        retry_all = step.scenario.bug("KAFKA_8286")
        done, remaining = _do_elect_leader_for_partitions(step, partitions if retry_all else remaining, strategy)
        step.repeated_elections += [tp for tp in done if tp in elected and tp not in step.repeated_elections]
        elected += [tp for tp in done if tp not in elected]
    return elected


def _do_elect_leader_for_partitions(step: Step, partitions: list[TopicPartition], strategy: str
                                    ) -> tuple[list[TopicPartition], list[TopicPartition]]:
    """``doElectLeaderForPartitions``: the elected partitions and those to retry after BADVERSION.

    Offline (``leaderForOffline``): the first live ISR member in AR order, else (unclean election
    enabled, read from ZooKeeper's dynamic config) the first live replica, with the live part of the ISR
    (or just the new leader); the live assigned replicas get LeaderAndIsr. A leader from outside the ISR marks
    the partition RECOVERING from 3.2 with ``inter.broker.protocol.version`` 3.2-IV0 and later (KIP-704, gate
    ``KIP_704``: ``Election.leaderForOffline``'s ``newRecoveringLeaderAndIsr`` when ``isLeaderRecoverySupported``,
    3.2.0 – 3.9); every other election keeps the partition's leader recovery state (``newLeaderAndIsr``).
    Reassign (``leaderForReassign``): the first replica of the reassignment target (RAR) that is live and in
    the ISR, ISR unchanged; every RAR replica is a recipient (the batch drops the dead ones). Preferred
    (``leaderForPreferredReplica``): the first assigned replica if live and in the ISR, ISR unchanged; every
    assigned replica is a recipient. Controlled shutdown (``leaderForControlledShutdown``): the first assigned
    replica live, in the ISR and not shutting down, ISR without the shutting-down brokers; the live-or-shutting-down
    replicas are the recipients from 2.1 (KAFKA-7482), the live ones only before (KAFKA_7482).

    One branch per strategy: it mirrors Kafka's ``partitionLeaderElectionStrategy match`` in
    ``PartitionStateMachine.doElectLeaderForPartitions`` (2.3).
    """
    done: list[TopicPartition] = []
    retry: list[TopicPartition] = []
    for tp in partitions:
        read = step.zk_partitions.get(tp)
        if read is None:
            step.messages.append(f"StateChangeFailedException: LeaderAndIsr information doesn't exist for "
                                 f"partition {tp[0]}-{tp[1]} in OnlinePartition state")
            continue
        if read.controller_epoch > step.epoch:
            step.messages.append(f"StateChangeFailedException: leader and isr path of {tp[0]}-{tp[1]} written "
                                 f"by another controller (epoch {read.controller_epoch})")
            continue
        assigned = step.assignment[tp]
        leader: int | None
        new_isr = read.isr
        recovering = False
        if strategy == REASSIGN:
            target = step.partitions_being_reassigned[tp]
            recipients = list(target)
            leader = reassign_partition_leader_election(
                target, read.isr, [b for b in target if step.is_replica_online(b, tp)])
        elif strategy == PREFERRED:
            recipients = list(assigned)
            leader = preferred_replica_partition_leader_election(
                assigned, read.isr, [b for b in assigned if step.is_replica_online(b, tp)])
        elif strategy == CONTROLLED_SHUTDOWN:
            live_or_shutting_down = [b for b in assigned if step.is_replica_online(b, tp, include_shutting_down=True)]
            leader = controlled_shutdown_partition_leader_election(
                assigned, read.isr, live_or_shutting_down, step.shutting_down_brokers)
            new_isr = tuple(b for b in read.isr if b not in step.shutting_down_brokers)
            recipients = ([b for b in assigned if step.is_replica_online(b, tp)] if step.scenario.bug("KAFKA_7482")
                          else live_or_shutting_down)
        else:
            recipients = [b for b in assigned if step.is_replica_online(b, tp)]
            any_isr_live = any(step.is_replica_online(b, tp) for b in read.isr)
            unclean = (not any_isr_live) and (strategy == OFFLINE_ALLOW_UNCLEAN
                                              or step.unclean_leader_election_enable(tp[0]))
            leader = offline_partition_leader_election(assigned, read.isr, recipients, unclean)
            if leader is not None and leader in read.isr:
                new_isr = tuple(b for b in read.isr if step.is_replica_online(b, tp))
            elif leader is not None:
                new_isr = (leader,)
                recovering = step.scenario.since("KIP_704")
                step.messages.append(f"Unclean leader election: {leader} becomes leader of {tp[0]}-{tp[1]} "
                                     "from outside the ISR (data loss possible)"
                                     + ("; the partition is marked RECOVERING" if recovering else ""))
        if leader is None:
            step.messages.append(f"StateChangeFailedException: Failed to elect leader for partition "
                                 f"{tp[0]}-{tp[1]} under strategy {strategy}")
            step.failed_elections.append((tp, strategy))
            continue
        written = update_leader_and_isr(step, tp, read, leader, new_isr, recovering)
        if written is None:
            retry.append(tp)
            continue
        step.leadership[tp] = written
        step.add_leader_and_isr_request(recipients, tp, written, assigned, is_new=False)
        step.elections.append((tp, read.leader, leader))
        done.append(tp)
    return done, retry
