"""The catalogue of Kafka controller bugs a scenario can re-introduce (``[bugs]`` in a scenario file,
``kmc bugs``): each switch's JIRA, title, the release that fixed it, the property it breaks and the
shipped scenario that reproduces it; and the known controller bugs the model cannot express, with
the reason. The handlers read a switch with ``Scenario.bug(name)``."""

from __future__ import annotations

from collections.abc import Mapping

import attrs


@attrs.frozen
class BugSwitch:
    """A historical Kafka bug (or a planted one) the model can re-introduce.

    ``fixed_in`` is the first (major, minor) release without it: the switch is on by default for earlier
    ``[kafka] version`` values (:data:`NEVER_FIXED` for a bug no 2.x release fixed, None for a planted bug,
    never on by default), from ``introduced_in`` on (the release whose code has the bug, for a bug in code a
    later release wrote: KIP-455's reassignment of 2.4, KIP-570's StopReplica of 2.6). ``jira``, ``title``,
    ``fixed_release``, ``breaks`` (the property it violates) and ``scenario`` (the shipped scenario that
    reproduces it) are what ``kmc bugs`` lists.
    """

    name: str
    summary: str
    fixed_in: tuple[int, int] | None  # None: a planted bug, never part of Kafka
    jira: str = ""
    title: str = ""
    fixed_release: str = ""
    breaks: str = ""
    scenario: str = ""
    introduced_in: tuple[int, int] = (0, 0)

    def default_for(self, version: tuple[int, int]) -> bool:
        return self.fixed_in is not None and self.introduced_in <= version < self.fixed_in


#: ``fixed_in`` of a bug that no release of the modelled line fixed.
NEVER_FIXED = (99, 0)


def _bug(name: str, jira: str, title: str, fixed_release: str, fixed_in: tuple[int, int] | None, breaks: str,
         scenario: str, summary: str, introduced_in: tuple[int, int] = (0, 0)) -> BugSwitch:
    return BugSwitch(name, summary, fixed_in, jira, title, fixed_release, breaks, scenario, introduced_in)


BUGS: Mapping[str, BugSwitch] = {
    b.name: b
    for b in (
        _bug("KAFKA_3083", "KAFKA-3083", "a soft failure in controller may leave a topic partition in an "
             "inconsistent state", "1.1.0", (1, 1), "zk_written_only_by_active_controller", "kafka-3083",
             "a controller whose ZooKeeper session expired in the middle of an event finishes it through a new "
             "session, its writes landing after another controller took over (before 1.1's controller rewrite, "
             "KAFKA-5642, ran the expiry as an event that waits for the one in progress, whose writes then fail "
             "on the expired session)"),
        _bug("KAFKA_6082", "KAFKA-6082", "Fence zookeeper updates with controller epoch zkVersion", "2.1.0", (2, 1),
             "zk_written_only_by_active_controller", "kafka-6082",
             "ZooKeeper writes are not fenced by the /controller_epoch zkVersion: a controller that lost "
             "controllership (/controller deleted under it) keeps writing while it works through its queue"),
        _bug("KAFKA_7235", "KAFKA-7235", "Detect outdated control requests and bounced brokers using broker "
             "generation", "2.2.0", (2, 2), "live_brokers_host_their_replicas", "kafka-7235",
             "no broker epochs: a broker that bounced before the controller noticed is not treated as failed and "
             "restarted, and requests of its previous incarnation are applied"),
        _bug("KAFKA_3143", "KAFKA-3143", "Controller should transition offline replicas on startup", "2.3.0",
             (2, 3), "no_dead_replica_in_isr_when_idle", "kafka-3143",
             "ReplicaStateMachine.startup marks replicas on dead brokers ReplicaDeletionIneligible and moves only "
             "the live ones to OnlineReplica: a new controller never takes dead replicas out of ISRs (KAFKA-8152 "
             "fixed it, with KAFKA-3096)"),
        _bug("KAFKA_3096", "KAFKA-3096", "Leader is not set to -1 when it is shutdown if followers are down",
             "2.3.0", (2, 3), "leader_not_on_dead_broker_when_idle", "kafka-3096",
             "the startup of KAFKA_3143 (one fix, KAFKA-8152, closed both): a new controller that finds a "
             "partition's only ISR member dead leaves it named as leader in ZooKeeper"),
        _bug("KAFKA_5083", "KAFKA-5083", "always leave the last surviving member of the ISR in ZK", "1.1.0", (1, 1),
             "isr_never_empty", "kafka-5083",
             "removeReplicaFromIsr takes the last ISR member out when unclean leader election is enabled, leaving "
             "an empty ISR from which no clean election is possible once unclean election is disabled again "
             "(1.0's KafkaController.removeReplicaFromIsr; 1.1's KAFKA-5642 keeps the last member)"),
        _bug("KAFKA_6650", "KAFKA-6650", "Allowing transition to OfflineReplica state for replicas without "
             "leadership info", "2.0.0", (2, 0), "queued_deletion_finishes_when_brokers_alive", "kafka-6650",
             "OfflineReplica transition skips replicas without leadership info (partially created or deleted "
             "topics), so their deletion can never start"),
        _bug("KAFKA_3175", "KAFKA-3175", "Topic not accessible after deletion even when delete.topic.enable is "
             "disabled", "0.10.2.0", (0, 10), "leader_elected_when_isr_member_alive", "kafka-3175",
             "with delete.topic.enable=false the controller ignores /admin/delete_topics at runtime, but a new "
             "controller's TopicDeletionManager queues the topics named there, which excludes their partitions "
             "from every election"),
        _bug("KAFKA_6612", "KAFKA-6612", "Added logic to prevent increasing partition counts during topic deletion",
             "2.0.0", (2, 0), "controller_knows_every_partition_when_idle", "kafka-6612",
             "PartitionModifications only logs partitions added to a topic queued for deletion and leaves them in "
             "its znode, where a new controller finds them without leadership"),
        _bug("KAFKA_6193", "KAFKA-6193", "Only delete reassign_partitions znode after reassignment is complete",
             "1.1.0", (1, 1), "reassignment_intent_survives", "kafka-6193",
             "reassignments are recorded and triggered one partition at a time, so removing one that needs no "
             "work rewrites /admin/reassign_partitions from a context that does not hold the others yet, and "
             "deletes it"),
        _bug("KAFKA_5310", "KAFKA-5310", "reset ControllerContext during resignation", "0.11.0.0", (0, 11),
             "failover_context_from_zookeeper", "kafka-5310",
             "a resigning controller keeps its partitionsBeingReassigned; re-elected later, it merges them into "
             "what it reads from ZooKeeper and carries out a reassignment the admin cancelled"),
        _bug("KAFKA_9212", "KAFKA-9212", "Ensure LeaderAndIsr state updated in controller context during "
             "reassignment", "2.4.0", (2, 4), "metadata_caches_current_when_idle", "kafka-9212",
             "updateLeaderEpoch bumps a reassigned partition's leader epoch in ZooKeeper but not in the "
             "controller's cache, so UpdateMetadata carries the older epoch"),
        _bug("KAFKA_7482", "KAFKA-7482", "LeaderAndIsrRequest should be sent to the shutting down broker", "2.1.0",
             (2, 1), "single_acting_leader_when_idle", "kafka-7482",
             "the controlled-shutdown election sends its LeaderAndIsr to the live replicas only, not to the "
             "shutting-down broker, which keeps acting as leader until it stops"),
        _bug("KAFKA_8286", "KAFKA-8286", "(within KIP-460's patch) electLeaderForPartitions retries every partition",
             "2.4.0", (2, 4), "election_bumps_epoch_once", "election-retry",
             "after a BADVERSION, electLeaderForPartitions retries the election of every partition of the call, "
             "not only the remaining ones: elected partitions get a second leader-epoch bump"),
        _bug("KAFKA_4214", "KAFKA-4214", "kafka-reassign-partitions fails all the time when brokers are bounced "
             "during reassignment", "0.10.1.0", (0, 10), "reassignment_intent_survives", "kafka-4214",
             "a reassignment whose target replicas are not all alive when the controller (re)starts it is failed "
             "and removed from /admin/reassign_partitions"),
        _bug("KAFKA_9866", "KAFKA-9866", "Avoid election for topics where preferred leader is not in ISR", "2.6.0",
             (2, 6), "auto_rebalance_elections_feasible", "kafka-9866",
             "the auto leader rebalance runs preferred elections for partitions whose preferred replica is not in "
             "the ISR, which fail"),
        _bug("KAFKA_9672", "KAFKA-9672", "Leader with ISR as a superset of replicas (KAFKA-6638: Leader should "
             "remove unassigned replica from ISR)", "3.0.0 (broker side)", (3, 0),
             "leader_isr_within_assigned_replicas", "kafka-9672",
             "a leader takes the ISR of a LeaderAndIsr as it is, also members the request no longer assigns (the "
             "reassignment's leader-epoch bump before the old replicas leave the ISR); KAFKA-6638's patch, never "
             "merged, filtered them out, as 3.0's broker does"),
        _bug("KAFKA_13225", "KAFKA-13225", "Controller skips sending UpdateMetadataRequest when no change in "
             "partition state", "3.1.0", (3, 1), "metadata_live_brokers_current_when_idle", "kafka-13225",
             "onReplicasBecomeOffline sends its explicit UpdateMetadata only when no partition had an offline "
             "leader: a broker hosting no replica that fails while another partition is offline (its election "
             "failing) is never reported to the other brokers, whose metadata caches keep it among the live ones"),
        _bug("KAFKA_14808", "KAFKA-14808", "fix leaderless partition issue when controller removes unneeded "
             "replicas", "not fixed upstream: PR #13451 never merged", NEVER_FIXED,
             "leader_elected_when_isr_member_alive", "kafka-14808",
             "updateCurrentReassignment stops at once the replicas a replacing reassignment leaves out (U3), the "
             "leader among them when an adding replica became leader (a preferred election): its OfflineReplica "
             "transition leaves the partition leaderless while an ISR member is alive. Switch off: PR #13451's "
             "replicasAreValid refuses such an AlterPartitionReassignments (INVALID_REPLICA_ASSIGNMENT); no "
             "release or branch merged it, so the switch is on from 2.4 (KIP-455's code) to 3.9",
             introduced_in=(2, 4)),
        _bug("KAFKA_13972", "KAFKA-13972", "Ensure replica state deleted after reassignment cancellation",
             "3.5.0", (3, 5), "no_stray_logs_when_idle", "kafka-13972",
             "ReplicaManager.stopReplicas stops a partition only if the StopReplica's leader epoch is newer than "
             "its own (>): a cancelled reassignment's adding replica, whose epoch no step bumped since phase A's "
             "LeaderAndIsr, answers FENCED_LEADER_EPOCH and keeps the partition and its log while the controller "
             "forgets the replica; a later deletion of the topic does not name it, so the log stays for good "
             "(3.5.0, commit 653e284f: >=). On from 2.6, KIP-570's StopReplica v3 with leader epochs "
             "(inter.broker.protocol.version 2.6-IV0): earlier requests carry no epoch",
             introduced_in=(2, 6)),
        _bug("KAFKA_10314", "KAFKA-10314", "KafkaStorageException on reassignment when offline log directories "
             "exist", "2.7.0", (2, 7), "reassignment_finishes_when_targets_alive", "kafka-10314",
             "the reassignment's leader-epoch bump (updateLeaderEpochAndSendRequest) sends LeaderAndIsr with isNew "
             "false to the adding replicas too: a target broker with an offline log directory cannot tell whether "
             "their log was on it, refuses to create it (LogManager.getOrCreateLog, KafkaStorageException) and "
             "marks the partition offline, so the reassignment waits for good while the broker and the leader are "
             "alive (2.7.0, commit 23cade85067: isNew true for the adding replicas)"),
        _bug("KAFKA_14140", "KAFKA-14140", "Ensure an offline or in-controlled-shutdown replica is not eligible to "
             "join ISR in ZK mode", "3.3.0", (3, 3), "isr_members_eligible_when_idle", "kafka-14140",
             "a leader adds to the ISR any caught-up follower (Partition.maybeExpandIsr, no isReplicaIsrEligible), "
             "and processAlterIsr writes whatever ISR the leader proposes: a broker in controlled shutdown that "
             "follows the leader its election moved the partition to rejoins the ISR (and may be elected again "
             "before it stops). 3.3.0, commit af40e119784 (KIP-841's ZooKeeper port): the leader adds only brokers "
             "alive in its metadata cache, the controller answers INELIGIBLE_REPLICA (OPERATION_NOT_ATTEMPTED "
             "below inter.broker.protocol.version 3.3) for a new ISR naming a broker not live or shutting down"),
        _bug("KAFKA_14144", "KAFKA-14144", "Compare AlterPartition LeaderAndIsr before fencing partition "
             "epoch", "3.3.0, before its release (regression of #12032, commit 25ee7f147c8)", (3, 3),
             "no_pending_isr_change_when_idle", "kafka-14144",
             "tryProcessAlterPartition answers an older partition epoch INVALID_UPDATE_VERSION before it checks "
             "whether the partition is already in the desired state: a leader whose AlterPartition the controller "
             "applied but whose answer it lost re-sends it with its old partition epoch, gives up on the error and "
             "keeps its pending ISR (no further ISR change) until a LeaderAndIsr. #12032 (25ee7f147c8, April 2022) "
             "and the fix #12489 (9fda5fcac6b, August 2022) both precede 3.3.0: no release tag has the bug, so no "
             "version has the switch on by default",
             introduced_in=(3, 3)),
        _bug("KAFKA_9946", "KAFKA-9946", "Partition deletion event should only be sent if deletion was requested "
             "in the StopReplica request", "2.6.0, before its release (regression of KIP-570's #8257, commit "
             "7c7d55dbd8d)", (2, 6), "deletion_completes_only_when_all_replicas_succeeded", "kafka-9946",
             "sendStopReplicaRequests attaches the deletion response callback to every StopReplica, also one that "
             "deletes nothing, and the callback reports every partition of the response whose topic's deletion has "
             "started: the answer to onPartitionDeletion's OfflineReplica StopReplica (no delete) marks the "
             "replicas ReplicaDeletionSuccessful, and the topic leaves ZooKeeper while its StopReplica(delete) is "
             "still in flight and the broker still holds the log. KIP-570's patch (7c7d55dbd8d, March 2020) and "
             "the fix (#8609, 3b6bf805309, May 2020: isPartitionDeleted) both precede 2.6.0: no release tag has "
             "the bug, so no version has the switch on by default",
             introduced_in=(2, 6)),
        _bug("DELETION_DURING_REASSIGNMENT", "(LinkedIn hotfix, linkedin/kafka#14)", "fix in parallel topic "
             "deletion and partition reassignment issue", "not fixed upstream", NEVER_FIXED,
             "reassignment_finishes_when_targets_alive", "reassignment-during-deletion",
             "TopicDeletion marks a topic with a partition being reassigned ineligible before queueing it, which "
             "does nothing, so the deletion starts with the reassignment in flight (the fix: mark it after)"),
        _bug("PLANTED_COMPLETE_DELETION_ON_FIRST_SUCCESS", "", "planted, not Kafka", "", None,
             "deletion_completes_only_when_all_replicas_succeeded", "planted-complete-on-first-success",
             "planted, not Kafka: TopicDeletionManager completes a topic deletion as soon as any one replica's "
             "deletion succeeded"),
    )
}


#: The spec's "Known controller bugs" with no switch: JIRA -> (title, why the model cannot express it), one line
#: each (``kmc bugs`` and the README list them).
NOT_MODELLED_BUGS: Mapping[str, tuple[str, str]] = {
    "KAFKA-2937": ("Topics marked for delete in Zookeeper may become undeletable",
                   "fixed in 0.10.0 inside OfflineReplica's leaderIsr check; its 1.1+ form is KAFKA-6650, a switch"),
    "KAFKA-9089": ("Reassignment should be resilient to unexpected errors",
                   "its fix (bdf2446ccce) is in 2.4.0-rc0: no release ran the code before it, a different "
                   "reassignment state (ReassignedPartitionsContext with persistedInZk); the model has 2.4.0's"),
    "KAFKA-9478": ("Remove zombie partition reassignments from ZooKeeper",
                   "needs two reassignment tools racing on /admin/reassign_partitions; the model's admin commands "
                   "are atomic, and 2.3's tool refuses to run while the znode exists"),
    "KAFKA-13226": ("createTopic need sort brokerMetadata",
                    "lies in the broker's AdminManager (the unsorted alive-broker list of its metadata cache), not "
                    "in the controller; the model assigns from id-sorted broker lists"),
    "KAFKA-1305": ("Controller can hang on controlled shutdown with auto leader balance enabled",
                   "a deadlock on the 0.8 controller lock and a bounded request queue; the model, like 1.1+, has one "
                   "event thread and unbounded queues"),
}


#: Switch names a scenario or ``--only`` may still carry, and the name they have: refused with a hint, never
#: silently accepted (a renamed switch read as its new name would hide that the file is out of date).
RENAMED_BUGS: Mapping[str, str] = {
    # Named for KAFKA-6638's never-merged patch; the switch models KAFKA-9672's bug and 3.0's fix of it.
    "KAFKA_6638": "KAFKA_9672",
}


def renamed_switch_hint(where: str, name: str) -> str | None:
    """For a renamed switch, the one sentence refusing it (``where`` names the input: ``[bugs]``, ``--only``)
    and giving its name; None for any other name."""
    if name not in RENAMED_BUGS:
        return None
    return (f"{where} {name} is the switch {RENAMED_BUGS[name]}, named after the JIRA whose fix it models; "
            f"write {RENAMED_BUGS[name]} instead.")
