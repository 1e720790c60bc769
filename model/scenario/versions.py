"""The Kafka versions a scenario can name, and every behaviour of the ZooKeeper controller that changed
between them: one table of gates, each with the release (or inter-broker protocol version) where the
behaviour changed and its Kafka citation. The handlers ask ``scenario.since(NAME)``; nothing else
compares versions. ``docs/versions.md`` lists the changes read from Kafka's source and what the model
does with each.

A gate that is not modelled names what a scenario must have to reach it: the loader refuses a scenario
that reaches one at a version (or protocol version) where the change is in force, rather than run it
with an older release's behaviour (:func:`unmodelled_reached`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from model.scenario.loader import Scenario

#: ``[kafka] version``: every minor release with a ZooKeeper controller from 1.1 on (3.9 is the last).
SUPPORTED_VERSIONS: tuple[str, ...] = (
    "1.1", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8",
    "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9",
)
DEFAULT_VERSION = "2.3"


def parse_version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


def version_text(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


@attrs.frozen
class Gate:
    """A behaviour that changed in ``since``: of the release (``protocol`` False) or of
    ``inter.broker.protocol.version`` (``protocol`` True, which never exceeds the release).

    ``reaches`` is None for a modelled change; for one not modelled, it says whether a scenario can reach the
    changed behaviour (the loader then refuses it at such versions), and ``needs`` says in a few words what
    in the scenario reaches it."""

    name: str
    since: tuple[int, int]
    kafka: str  # the JIRA or KIP, file and method, and the release it first shipped in
    protocol: bool = False
    reaches: Callable[[Scenario], bool] | None = None
    needs: str = ""

    @property
    def modelled(self) -> bool:
        return self.reaches is None

    def in_force(self, scenario: Scenario) -> bool:
        return (scenario.inter_broker_protocol if self.protocol else scenario.version) >= self.since


GATES: dict[str, Gate] = {g.name: g for g in (
    # 1.1 - 2.3
    Gate("UNCLEAN_LEADER_ELECTION_ENABLE_EVENT", (2, 0),
         "KAFKA-6526, KafkaController.UncleanLeaderElectionEnable (2.0.0): enabling the cluster default triggers "
         "the controller's elections"),
    Gate("TOPIC_UNCLEAN_LEADER_ELECTION_ENABLE_EVENT", (2, 1),
         "KAFKA-6835, KafkaController.TopicUncleanLeaderElectionEnable (2.1.0)"),
    Gate("TOPICS_WITH_DELETION_STARTED", (2, 1),
         "ControllerContext.topicsWithDeletionStarted, TopicDeletionManager.onTopicDeletion and completeDeleteTopic "
         "(2.1.0)"),
    Gate("CONTROLLED_SHUTDOWN_SKIPS_DELETING", (2, 1),
         "KafkaController.doControlledShutdown leaves out partitions of topics queued for deletion (2.1.0)"),
    Gate("KAFKA_7537", (2, 2),
         "KAFKA-7537, KafkaController.onBrokerStartup / onReplicasBecomeOffline / onControllerFailover: UpdateMetadata "
         "with live brokers only, every partition to new brokers (2.2.0)"),
    Gate("BROKER_EPOCHS", (2, 2),
         "KIP-380 (KAFKA-7235), broker epochs in /brokers/ids and control requests (2.2.0)"),
    Gate("PREFERRED_ELECTION_SKIPS_LED", (2, 2),
         "KafkaController.processPreferredReplicaLeaderElection elects only partitions whose leader is not the "
         "preferred replica (2.2.0)"),
    Gate("KAFKA_8237", (2, 3),
         "KAFKA-8237, ReplicaStateMachine's transition table (OfflineReplica -> ReplicaDeletionIneligible) and "
         "UpdateMetadata on OfflineReplica; TopicDeletionManager's callback keyed on topicsWithDeletionStarted "
         "(2.3.0)"),
    Gate("KAFKA_8294", (2, 3),
         "KAFKA-8294, ControllerChannelManager.sendStopReplicaRequests: one StopReplica(delete=true) per broker for "
         "all partitions (2.3.0)"),
    # 2.4 - 3.9, modelled
    Gate("KIP_455", (2, 4),
         "KIP-455 (KAFKA-8345) with KAFKA-9089's fix, KafkaController.onPartitionReassignment / "
         "updateCurrentReassignment / processZkPartitionReassignment / processApiPartitionReassignment / "
         "initializePartitionReassignments, ControllerContext.ReplicaAssignment: adding and removing replicas in "
         "the topic znode, AlterPartitionReassignments with cancellation and replacement (2.4.0)"),
    Gate("KIP_460", (2, 4),
         "KIP-460 (KAFKA-8286), the ElectLeaders request: KafkaController.processReplicaLeaderElection / "
         "onReplicaElection with AdminClientTriggered, PREFERRED or UNCLEAN (OfflinePartitionLeaderElectionStrategy "
         "with allowUnclean) (2.4.0)"),
    Gate("KAFKA_9499", (2, 5),
         "KAFKA-9499, TopicDeletionManager.resumeDeletions / onTopicDeletion / onPartitionDeletion batched across "
         "topics (2.5.0)"),
    Gate("KIP_570", (2, 6),
         "KIP-570 (KAFKA-9539), ControllerChannelManager.addStopReplicaRequestForBrokers / sendStopReplicaRequests: "
         "StopReplica v3, one per broker, with a leader epoch and a delete flag per partition; "
         "ReplicaManager.stopReplicas fencing older and equal epochs (2.6.0, inter.broker.protocol.version "
         "2.6-IV0)",
         protocol=True),
    Gate("KAFKA_10149", (3, 4),
         "KAFKA-10149, KafkaController.checkAndTriggerAutoLeaderRebalance runs while reassignments are in progress "
         "(3.4.0)"),
    Gate("KIP_497", (2, 7),
         "KIP-497 (KAFKA-8836), AlterIsr: Partition.sendAlterIsrRequest / handleAlterIsrResponse with isrState "
         "PendingExpandIsr / PendingShrinkIsr, AlterIsrManager, KafkaController.processAlterIsr; no partition watch "
         "for reassigning partitions (KAFKA-10521, onPartitionReassignment) (2.7.0, inter.broker.protocol.version "
         "2.7-IV2)",
         protocol=True),
    Gate("TRY_PROCESS_ALTER_PARTITION", (3, 3),
         "KafkaController.tryProcessAlterPartition (3.3.0): NOT_CONTROLLER for a leader ahead of the controller "
         "(KAFKA-14154), a differing partition epoch answered INVALID_UPDATE_VERSION before the write, after the check "
         "for the desired state (#12032 with KAFKA-14144's order; the switch KAFKA_14144 puts it first). KAFKA-14140's "
         "eligibility checks of the same release are the switch KAFKA_14140"),
    Gate("KIP_516", (2, 8),
         "KIP-516 (KAFKA-10545, KAFKA-10869), topic IDs: KafkaController.processTopicIds writes them into the topic "
         "znodes and ControllerContext.topicIds, ControllerChannelManager.sendLeaderAndIsrRequest sends them "
         "(LeaderAndIsr v5), ReplicaManager.becomeLeaderOrFollower's Partition.checkOrSetTopicId writes "
         "partition.metadata or answers INCONSISTENT_TOPIC_ID (2.8.0, inter.broker.protocol.version 2.8)",
         protocol=True),
    Gate("KAFKA_12426", (3, 0),
         "KAFKA-12426, Partition.topicId reads the log LogManager holds when none is attached to the partition "
         "(a log loaded at startup), and LogManager.getOrCreateLog gives a log created or found without an ID "
         "the request's ID (3.0.0)"),
    Gate("KIP_704", (3, 2),
         "KIP-704 (KAFKA-13587, commit 52621613fd3), leader recovery: Election.leaderForOffline writes "
         "leader_recovery_state RECOVERING with a leader from outside the ISR (PartitionStateMachine's "
         "isLeaderRecoverySupported), LeaderAndIsr.newLeaderAndIsr keeps it, Partition.makeLeader marks the partition "
         "RECOVERED and its next AlterPartition says so; KafkaController.processAlterPartition answers INVALID_REQUEST "
         "to RECOVERING with an ISR of more than the leader and to RECOVERED -> RECOVERING (3.2.0, "
         "inter.broker.protocol.version 3.2-IV0)",
         protocol=True),
    # 2.4 - 3.9, not modelled: a scenario reaching one is refused at that version (none today)
)}


def unmodelled_reached(scenario: Scenario) -> Gate | None:
    """The first change not modelled that ``scenario`` reaches at its version, or None."""
    for gate in GATES.values():
        if gate.reaches is not None and gate.in_force(scenario) and gate.reaches(scenario):
            return gate
    return None


def refusal(scenario: Scenario) -> str | None:
    """The one sentence refusing ``scenario`` at its version, or None when every change it reaches is modelled."""
    gate = unmodelled_reached(scenario)
    if gate is None:
        return None
    before = version_text(gate.since)
    setting = "inter_broker_protocol_version" if gate.protocol else "version"
    value = version_text(scenario.inter_broker_protocol if gate.protocol else scenario.version)
    through = f" through {gate.needs}" if gate.needs else ""
    drop = f" or drop {gate.needs}" if gate.needs else ""
    return (f"[kafka] {setting} = \"{value}\" reaches {gate.name.replace('_', '-', 1)} ({before}), which the model "
            f"does not have yet,{through}; set [kafka] {setting} below {before}{drop} (see docs/versions.md).")
