"""The KRaft controller's bug switches (``[bugs]`` in a KRaft scenario, ``kmc bugs``): the table of
:mod:`model.scenario.bugs` for ``model/kraft``.

Each switch puts back the code a fix in ``metadata/src/main/java/org/apache/kafka/controller/`` (and, where the
fix spans both, the broker's ``Partition.scala``) removed. The model reads Kafka 3.9.0-rc3, the only
``[kafka] version`` a KRaft scenario takes, so every switch here is off by default: each was fixed before 3.9,
and its ``fixed_in`` says in which release (``kmc bugs`` lists the versions that had it). A switch turned on is
3.9.0-rc3 with that one fix reverted; the rest of the controller stays 3.9's (each entry says what that means).
The handlers read a switch with ``KraftSettings.bug(name)``.
"""

from __future__ import annotations

from collections.abc import Mapping

from model.scenario.bugs import BugSwitch, _bug

KRAFT_BUGS: Mapping[str, BugSwitch] = {
    b.name: b
    for b in (
        _bug("KAFKA_13173", "KAFKA-13173", "Ensure KRaft controller handles concurrent broker expirations "
             "correctly", "3.0.0", (3, 0), "kraft_leader_in_isr", "kraft-kafka-13173",
             "maybeFenceStaleBrokers fences every broker whose session expired in one controller event, each "
             "handleBrokerFenced built against the partitions as they were before the event: the later "
             "PartitionChangeRecord keeps the leader the earlier one elected and overwrites its ISR, leaving a "
             "fenced leader outside the ISR (2.8.0's maybeFenceStaleBrokers; 3.0.0's fe7bced3f69, b1b872bd4ea on "
             "trunk, fences one stale broker per event)"),
        _bug("KAFKA_13916", "KAFKA-13916", "Fenced replicas should not be allowed to join the ISR in KRaft "
             "(KIP-841, Part 2)", "3.3.0", (3, 3), "kraft_isr_members_eligible", "kraft-kafka-13916",
             "AlterPartition takes fenced and shutting-down replicas into the ISR: the controller's "
             "validateAlterPartitionData has no ineligibleReplicasForIsr check (INELIGIBLE_REPLICA) and the "
             "leader's Partition.maybeExpandIsr no isReplicaIsrEligible (commit f83d95d9a28; 3.2.0's "
             "alterPartition)"),
        _bug("KAFKA_13916_LEADER_ELECTION", "KAFKA-13916", "Fenced replicas should not be allowed to join the ISR "
             "in KRaft", "3.3.0", (3, 3), "kraft_no_leader_in_controlled_shutdown",
             "kraft-kafka-13916-leader-election",
             "the same JIRA's other fix (KIP-841's first commit, 151ca12a56c): every election takes a broker in "
             "controlled shutdown as an acceptable leader (isAcceptableLeader is clusterControl.unfenced, not "
             "active), so a partition whose only ISR member is shutting down, left leaderless by its controlled "
             "shutdown, elects it again when another broker is unfenced (3.2.0's generateLeaderAndIsrUpdates)"),
        _bug("KAFKA_14617", "KAFKA-14617", "Update AlterPartitionRequest and enable Kraft controller to reject "
             "stale request (KIP-903)", "3.5.0", (3, 5), "kraft_no_acknowledged_record_lost",
             "kraft-kafka-14617",
             "AlterPartition names ISR members without broker epochs (request version 2): the controller takes "
             "a replica whose leader-side fetch state is from its previous incarnation, which restarted with an "
             "empty log, into the ISR (commit 8c88cdb7186; 3.4.0's validateAlterPartitionData)"),
        _bug("KAFKA_15586", "KAFKA-15586", "Clean shutdown detection - server side (KIP-966)", "3.8.0", (3, 8),
             "kraft_no_acknowledged_record_lost", "kraft-kafka-15586",
             "ClusterControlManager.registerBroker does not call handleBrokerUncleanShutdown: a broker that lost "
             "its log in an unclean shutdown stays in the ELR and is elected from it (commit 376e9e20dbf; "
             "3.7.0's registerBroker)"),
    )
}


#: KRaft controller fixes considered for a switch and left out: JIRA -> (title, why), as ``kmc bugs`` lists them.
NOT_MODELLED_KRAFT_BUGS: Mapping[str, tuple[str, str]] = {
    "KAFKA-14292": ("Fix KRaft controlled shutdown delay",
                    "every heartbeat moved controlledShutdownOffset to the log's end, delaying the shutdown while "
                    "the log is busy: a liveness bug, and the model's metadata log is bounded"),
    "KAFKA-13959": ("Controller should unfence Broker with busy metadata log",
                    "unfencing waited for the log's end, not the RegisterBrokerRecord: liveness only, and a broker "
                    "replays to the log's end in one step in the model"),
    "KAFKA-14154": ("Kraft controller should return NOT_CONTROLLER if request epoch is ahead",
                    "needs a leader whose epochs are ahead of the active controller (a controller failover); the "
                    "model has one controller"),
    "KAFKA-16624": ("Don't generate useless PartitionChangeRecord on older MV",
                    "needs metadata versions before 3.6-IV0 (leader epoch bump on ISR shrink); the model writes "
                    "3.9's records, and the record changed nothing a property reads"),
    "KAFKA-16952": ("Do not bump broker epoch when re-registering the same incarnation",
                    "needs a re-registration of the same incarnation; every model registration is a new one"),
    "KAFKA-15583": ("Enforce HWM advance only if partition is not under-min-ISR",
                    "the broker's maybeIncrementLeaderHW: the model moves the high watermark under min ISR and "
                    "withholds only the acknowledgement (docs/kraft.md); no property reads unacknowledged records"),
}
