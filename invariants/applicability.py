"""Which properties a scenario gives nothing to check, and why.

A property is *not applicable* to a scenario that never enables what it speaks about: ``rack_spread``
without racks, ``sometimes_reassignment_completes`` without a reassignment. Such an invariant holds
vacuously and such a sometimes property can never be witnessed; the reports say "not applicable: the
scenario enables no reassignment" instead of a green "holds" or a "may be vacuous" warning. One
table, by property name, of what the property needs from the scenario; a gate only ever says what
the scenario *lacks* (a feature off, a bound at 0), so a property it names cannot be witnessed or
violated in that scenario's state space (tests/test_quiet_runs.py checks this on shipped scenarios).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from model.scenario import Scenario

Gate = Callable[[Scenario], str | None]  # the reason the scenario gives the property nothing, or None


def _deletes(sc: Scenario) -> bool:
    return any(t.deleted_by_admin or t.partially_deleted or t.recreated_by_admin for t in sc.topics)


def _needs_deletion(sc: Scenario) -> str | None:
    return None if _deletes(sc) else "no topic deletion"


def _needs_reassignment(sc: Scenario) -> str | None:
    return None if sc.reassignments else "no reassignment"


def _needs_added_partitions(sc: Scenario) -> str | None:
    return None if any(t.add_partitions for t in sc.topics) else "no partitions added"


def _needs_added_partitions_and_deletion(sc: Scenario) -> str | None:
    return _needs_added_partitions(sc) or _needs_deletion(sc)


def _needs_recreation(sc: Scenario) -> str | None:
    return None if any(t.recreated_by_admin for t in sc.topics) else "no topic re-creation"


def _needs_isr_changes(sc: Scenario) -> str | None:
    return None if sc.bounds.isr_changes else "no ISR change by a leader (isr_changes = 0)"


def _needs_leader_isr_writes(sc: Scenario) -> str | None:
    if sc.since("KIP_497"):
        return ("no ISR write by a leader (AlterIsr, KIP-497: the controller writes every ISR change itself, "
                "inter_broker_protocol_version >= 2.7)")
    return _needs_isr_changes(sc)


def _needs_controller_change(sc: Scenario) -> str | None:
    return (None if sc.bounds.controller_failovers or sc.bounds.controller_moves
            else "no controller failover or move")


def _needs_controlled_shutdown(sc: Scenario) -> str | None:
    return None if sc.bounds.controlled_shutdowns else "no controlled shutdown"


def _needs_preferred_election(sc: Scenario) -> str | None:
    return (None if sc.bounds.auto_rebalance_checks or any(t.preferred_replica_election for t in sc.topics)
            else "no preferred replica election")


def _needs_auto_rebalance(sc: Scenario) -> str | None:
    return None if sc.bounds.auto_rebalance_checks else "no auto leader rebalance"


def _needs_log_dir_failure(sc: Scenario) -> str | None:
    return None if sc.bounds.log_dir_failures else "no log directory failure"


def _needs_racks(sc: Scenario) -> str | None:
    if not any(b.rack is not None for b in sc.brokers):
        return "no broker racks"
    return None if any(t.auto_assigned for t in sc.topics) else "no topic placed by Kafka's assignment"


#: Property name -> what it needs from the scenario, as what the scenario lacks ("no reassignment").
#: A property not listed applies to every scenario.
GATES: Mapping[str, Gate] = {
    "rack_spread": _needs_racks,
    "deletion_completes_only_when_all_replicas_succeeded": _needs_deletion,
    "queued_deletion_finishes_when_brokers_alive": _needs_deletion,
    "recreated_topic_never_adopts_stray_log": _needs_recreation,
    "reassignment_finishes_when_targets_alive": _needs_reassignment,
    "reassignment_intent_survives": _needs_reassignment,
    "auto_rebalance_elections_feasible": _needs_auto_rebalance,
    "sometimes_deletion_completes": _needs_deletion,
    "sometimes_deletion_retried": _needs_deletion,
    "sometimes_isr_reexpanded": _needs_isr_changes,
    "sometimes_isr_write_conflict": _needs_leader_isr_writes,
    "sometimes_reassignment_completes": _needs_reassignment,
    "sometimes_partitions_added": _needs_added_partitions,
    "sometimes_partition_addition_reverted": _needs_added_partitions_and_deletion,
    "sometimes_topic_recreated": _needs_recreation,
    "sometimes_controller_failover_completes": _needs_controller_change,
    "sometimes_zombie_write_fenced": _needs_controller_change,
    "sometimes_controlled_shutdown_succeeds": _needs_controlled_shutdown,
    "sometimes_preferred_leader_elected": _needs_preferred_election,
    "sometimes_log_dir_replica_offline": _needs_log_dir_failure,
}


def not_applicable(scenario: Scenario, names: Iterable[str]) -> dict[str, str]:
    """Property name -> what ``scenario`` lacks for it ("no reassignment"), for those of ``names`` it gives
    nothing to check; the reports say "the scenario enables no reassignment"."""
    reasons = {name: GATES[name](scenario) if name in GATES else None for name in names}
    return {name: reason for name, reason in reasons.items() if reason is not None}
