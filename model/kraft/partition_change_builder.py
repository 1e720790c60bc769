"""``PartitionChangeBuilder``: the one place a partition's leader, ISR and ELR change.

``metadata/src/main/java/org/apache/kafka/controller/PartitionChangeBuilder.java``, method ``build`` and the
methods it calls, at 3.9.0-rc3, with metadata version 3.9 (leader recovery supported, no leader-epoch bump on
an ISR shrink: ``isLeaderEpochBumpRequiredOnIsrShrink`` is false from 3.6-IV0) and
``useLastKnownLeaderInBalancedRecovery = true`` (its default: the last known ELR holds the last known leader).

Deviations: no reassignment (``completeReassignmentIfNeeded``, ``triggerLeaderEpochBumpForReplicaReassignment
IfNeeded``), no preferred election, no directories, no ZooKeeper migration. The ELR, built from Java hash sets,
is kept sorted (the order Java's ``HashSet`` of small ``Integer`` s iterates in).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from model.kraft.records import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    NO_RECOVERY_CHANGE,
    RECOVERED,
    RECOVERING,
    PartitionChangeRecord,
    PartitionRegistration,
)


def build(
    index: int,
    partition: PartitionRegistration,
    *,
    is_acceptable_leader: Callable[[int], bool],
    min_isr: int,
    eligible_leader_replicas_enabled: bool,
    unclean: bool,
    target_isr: Sequence[int] | None = None,
    unclean_shutdown_replicas: Sequence[int] = (),
    target_leader_recovery_state: int | None = None,
) -> PartitionChangeRecord | None:
    """``PartitionChangeBuilder.build``: the ``PartitionChangeRecord`` that takes ``partition`` to the target
    ISR and elects a leader (``Election.ONLINE``, ``UNCLEAN`` when ``unclean``), or None when nothing changes
    (``changeRecordIsNoOp``)."""
    isr = list(partition.isr if target_isr is None else target_isr)
    elr = list(partition.elr)
    elr_enabled = eligible_leader_replicas_enabled
    leader: int = NO_LEADER_CHANGE
    record_isr: list[int] | None = None
    record_lrs = NO_RECOVERY_CHANGE

    if elr_enabled:
        elr = _target_elr(partition, isr, elr, min_isr, unclean_shutdown_replicas)
    node, was_unclean = _elect_any_leader(partition, isr, elr, is_acceptable_leader, elr_enabled, unclean)
    if node != partition.leader:
        if node in elr:
            isr = [node]
            elr = [r for r in elr if r != node]
        leader = node
        if was_unclean:
            record_isr = [node]
            if partition.leader_recovery_state != RECOVERING:
                record_lrs = RECOVERING

    # maybeUpdateRecordElr
    record_elr: list[int] | None = None
    if record_isr is not None or not elr_enabled:
        elr = []
    if elr != list(partition.elr):
        record_elr = elr

    # the ISR: "If ELR is enabled, the ISR is allowed to be empty."
    if record_isr is None and (isr or elr_enabled) and isr != list(partition.isr):
        record_isr = isr

    record_lke = _last_known_leader(partition, record_isr, leader) if elr_enabled else None
    if target_leader_recovery_state is not None and target_leader_recovery_state != partition.leader_recovery_state:
        record_lrs = target_leader_recovery_state
    record = PartitionChangeRecord(
        partition=index, leader=leader, isr=None if record_isr is None else tuple(record_isr),
        eligible_leader_replicas=None if record_elr is None else tuple(record_elr),
        last_known_elr=None if record_lke is None else tuple(record_lke), leader_recovery_state=record_lrs)
    if record == PartitionChangeRecord(partition=index):
        return None
    return record


def _target_elr(partition: PartitionRegistration, isr: Sequence[int], elr: Sequence[int], min_isr: int,
                unclean_shutdown_replicas: Sequence[int]) -> list[int]:
    """``maybePopulateTargetElr``: empty when the target ISR holds ``min.insync.replicas``, else the ELR and the
    replicas leaving the ISR, less the target ISR and the replicas that shut down uncleanly."""
    if len(isr) >= min_isr:
        return []
    candidates = set(elr) | set(partition.isr)
    return sorted(r for r in candidates if r not in isr and r not in unclean_shutdown_replicas)


def _elect_any_leader(partition: PartitionRegistration, isr: Sequence[int], elr: Sequence[int],
                      is_acceptable_leader: Callable[[int], bool], elr_enabled: bool,
                      unclean: bool) -> tuple[int, bool]:
    """``tryElection`` / ``electAnyLeader``: the new leader and whether the election was unclean. The current
    leader if still valid, else the first valid replica (ISR, or the ELR when the ISR is empty), else the last
    known leader, else (unclean) any acceptable replica; ``NO_LEADER`` when none."""
    def valid(r: int) -> bool:  # isValidNewLeader
        return (r in isr or (not isr and r in elr)) and is_acceptable_leader(r)

    if valid(partition.leader):
        return partition.leader, False
    if (online := next((r for r in partition.replicas if valid(r)), None)) is not None:
        return online, False
    if elr_enabled and not elr and not isr and len(partition.last_known_elr) == 1:
        # canElectLastKnownLeader: 3.9.0-rc3 logs, and does not refuse, a last known leader that is not acceptable
        return partition.last_known_elr[0], True
    if unclean and (any_leader := next((r for r in partition.replicas if is_acceptable_leader(r)), None)) is not None:
        return any_leader, True
    return NO_LEADER, False


def _last_known_leader(partition: PartitionRegistration, record_isr: Sequence[int] | None,
                       leader: int) -> list[int] | None:
    """``maybeUpdateLastKnownLeader``: the last known ELR to write, or None to leave it."""
    if record_isr is not None and not record_isr and (
            len(partition.last_known_elr) != 1 or partition.last_known_elr[0] != partition.leader):
        return [partition.leader]
    if (leader >= 0 or (partition.leader != NO_LEADER and leader != NO_LEADER)) and partition.last_known_elr:
        return []
    return None


__all__ = ["RECOVERED", "build"]
