"""The controller's conditional writes of partition-state znodes: ``KafkaZkClient.updateLeaderAndIsr``
(``zk/KafkaZkClient.scala``, Kafka 2.0 – 2.3).

Every write is a ``setData`` conditional on the znode version the controller read. OK stores the
new leader and ISR with version + 1 and the controller's epoch; BADVERSION (someone wrote since the
read: in 2.x, the partition's leader changing its ISR) puts the partition on the caller's retry
list, and the caller reads it again and recomputes (``ReplicaStateMachine.removeReplicasFromIsr``,
``PartitionStateMachine.electLeaderForPartitions``, ``KafkaController.updateLeaderEpoch``).

A controller step is atomic in the model, so the only write that can land between the
controller's read and its write is the one the explorer chose for the step
(:func:`model.zk.environment.partition_leader.maybe_race`): at the controller's first write of that znode, or
at a later one once the leader applied the LeaderAndIsr the step sent for the earlier write.
"""

from __future__ import annotations

from model.zk.environment.partition_leader import maybe_race
from model.zk.state.step import Step
from model.zk.state.values import LeaderAndIsr, LeaderRecoveryState, TopicPartition


def update_leader_and_isr(step: Step, tp: TopicPartition, read: LeaderAndIsr, leader: int,
                          isr: tuple[int, ...], recovering: bool = False) -> LeaderAndIsr | None:
    """``LeaderAndIsr.newLeaderAndIsr`` (leader epoch + 1, the leader recovery state kept: 3.2.0 – 3.9) or, with
    ``recovering``, ``newRecoveringLeaderAndIsr`` (RECOVERING: KIP-704's unclean election, 3.2.0), written
    conditionally on ``read``'s version; None on BADVERSION (the caller retries)."""
    maybe_race(step, tp)
    step.controller_writes_zk(f"the write of the partition state of {tp[0]}-{tp[1]}")
    current = step.zk_partitions.get(tp)
    assert current is not None, "no partition-state znode is deleted between a read and a write"
    if current.zk_version != read.zk_version:
        step.zk_conflicts.append(tp)
        step.messages.append(f"BADVERSION writing the partition state of {tp[0]}-{tp[1]} (read zkVersion "
                             f"{read.zk_version}); retrying")
        return None
    written = LeaderAndIsr(leader=leader, leader_epoch=read.leader_epoch + 1, isr=isr, zk_version=read.zk_version + 1,
                           controller_epoch=step.epoch,
                           leader_recovery_state=LeaderRecoveryState.RECOVERING if recovering
                           else read.leader_recovery_state)
    step.zk_partitions[tp] = written
    step.partition_state_written(tp)
    return written


def update_isr(step: Step, tp: TopicPartition, proposed: LeaderAndIsr) -> LeaderAndIsr | None:
    """The write of ``processAlterIsr`` (2.7.0): the leader's LeaderAndIsr as it sent it (leader and leader epoch
    unchanged, its new ISR, from 3.2.0 its leader recovery state) with the controller's epoch, conditional on the
    version it sent (``currentIsrVersion``); None on BADVERSION (answered INVALID_UPDATE_VERSION, no retry)."""
    maybe_race(step, tp)
    step.controller_writes_zk(f"the write of the partition state of {tp[0]}-{tp[1]}")
    current = step.zk_partitions.get(tp)
    if current is None or current.zk_version != proposed.zk_version:
        return None
    written = LeaderAndIsr(leader=proposed.leader, leader_epoch=proposed.leader_epoch, isr=proposed.isr,
                           zk_version=current.zk_version + 1, controller_epoch=step.epoch,
                           leader_recovery_state=proposed.leader_recovery_state)
    step.zk_partitions[tp] = written
    step.partition_state_written(tp)
    return written
