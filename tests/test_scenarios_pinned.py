"""Pinned results of the local BFS on every shipped scenario (Stateright-style: any change of the model's
behaviour shows as a changed number), replay determinism of every discovery, and the sometimes
properties each scenario is expected to satisfy or to report as never found.

The numbers were measured once by running the search and written down here; when a change to the
model moves them on purpose, re-measure and update them in the same commit, saying why.
"""

from __future__ import annotations

import functools

import attrs
import pytest

from explorer.bfs import run_bfs
from explorer.replay import replay
from explorer.results import ExplorationResult, Outcome
from kmc.compose import model_for, resolve_scenario, shipped_scenarios
from model.scenario import with_bug


@attrs.frozen
class Pinned:
    outcome: Outcome
    distinct: int
    generated: int
    depth: int
    queue: int
    discoveries: dict[str, int]  # property -> trace length, in report order
    never_found: tuple[str, ...] = ()


#: One scenario per bug switch of the controller's failover, controlled shutdown, election, ISR, reassignment and
#: topic-change handling, named for its JIRA (election-retry: KAFKA-8286), its switch on; 5 to 904 states each but
#: kafka-14808 (30,757: a reassignment replaced after an ISR expansion and an ElectLeaders).
BUG_SWITCH_SCENARIOS = ("election-retry", "kafka-3083", "kafka-3096", "kafka-3143", "kafka-3175", "kafka-4214",
                        "kafka-5083", "kafka-5310", "kafka-6082", "kafka-6193", "kafka-6612", "kafka-7482",
                        "kafka-9212", "kafka-9672", "kafka-9866", "kafka-13225", "kafka-14808",
                        "kafka-13972", "kafka-10314", "kafka-14140", "kafka-14144", "kafka-9946")


#: Sometimes properties a scenario without a [check] list reports as never found when it has no reassignment,
#: added partition or re-created topic, no controller failover, controlled shutdown, preferred election or log
#: directory failure, and no ISR changes either.
NO_FAILOVER_SHUTDOWN_LOG_DIR_OR_PREFERRED_ELECTION = (
    "sometimes_controlled_shutdown_succeeds", "sometimes_controller_failover_completes",
    "sometimes_log_dir_replica_offline", "sometimes_preferred_leader_elected", "sometimes_zombie_write_fenced")
NO_REASSIGNMENT = ("sometimes_partition_addition_reverted", "sometimes_partitions_added",
                   "sometimes_reassignment_completes", "sometimes_topic_recreated",
                   *NO_FAILOVER_SHUTDOWN_LOG_DIR_OR_PREFERRED_ELECTION)
NO_ISR_CHANGES = ("sometimes_isr_reexpanded", "sometimes_isr_write_conflict", *NO_REASSIGNMENT)

PINNED: dict[str, Pinned] = {
    "default": Pinned(Outcome.OK, distinct=326744, generated=898708, depth=27, queue=0, discoveries={
        "sometimes_isr_write_conflict": 2, "sometimes_leader_reelected": 2, "sometimes_isr_reexpanded": 6,
        "sometimes_deletion_retried": 10, "sometimes_deletion_completes": 11}, never_found=NO_REASSIGNMENT),
    "delete-disabled": Pinned(Outcome.OK, distinct=144, generated=267, depth=10, queue=0,
                              discoveries={"sometimes_leader_reelected": 2},
                              never_found=("sometimes_deletion_completes", "sometimes_deletion_retried",
                                           *NO_ISR_CHANGES)),
    "deletion-3brokers": Pinned(Outcome.OK, distinct=7259, generated=16250, depth=23, queue=0, discoveries={
        "sometimes_leader_reelected": 2, "sometimes_deletion_retried": 10, "sometimes_deletion_completes": 11},
        never_found=NO_ISR_CHANGES),
    "isr-changes": Pinned(Outcome.OK, distinct=2776, generated=6925, depth=15, queue=0, discoveries={
        "sometimes_isr_reexpanded": 2, "sometimes_isr_write_conflict": 2, "sometimes_leader_reelected": 2}),
    "planted-complete-on-first-success": Pinned(
        Outcome.VIOLATION, distinct=152, generated=233, depth=5, queue=67,
        discoveries={"deletion_completes_only_when_all_replicas_succeeded": 5}),
    "add-partitions": Pinned(Outcome.OK, distinct=9327, generated=21864, depth=22, queue=0, discoveries={
        "sometimes_partitions_added": 2, "sometimes_partition_addition_reverted": 4,
        "sometimes_deletion_completes": 8}),
    "stray-log-adopted-on-recreation": Pinned(Outcome.VIOLATION, distinct=6696, generated=14818, depth=22, queue=195,
                                              discoveries={"sometimes_topic_recreated": 7,
                                                           "recreated_topic_never_adopts_stray_log": 22}),
    "topic-recreation": Pinned(Outcome.VIOLATION, distinct=2303, generated=4725, depth=19, queue=222, discoveries={
        "sometimes_deletion_completes": 8, "sometimes_topic_recreated": 10,
        "queued_deletion_finishes_when_brokers_alive": 18}),
    "reassignment": Pinned(Outcome.OK, distinct=2588, generated=6832, depth=23, queue=0, discoveries={
        "sometimes_leader_reelected": 3, "sometimes_isr_reexpanded": 5, "sometimes_reassignment_completes": 7}),
    "reassignment-isr-shrink-race": Pinned(Outcome.VIOLATION, distinct=23, generated=24, depth=3, queue=15,
                                           discoveries={"sometimes_reassignment_completes": 2,
                                                        "isr_subset_of_assignment": 2}),
    "reassignment-during-deletion": Pinned(Outcome.VIOLATION, distinct=3661, generated=8578, depth=18, queue=42,
                                           discoveries={"sometimes_deletion_completes": 5,
                                                        "reassignment_finishes_when_targets_alive": 17}),
    # Kafka 2.4 (KIP-455): AlterPartitionReassignments with cancellation and replacement
    "reassignment-api": Pinned(Outcome.OK, distinct=23914, generated=82205, depth=29, queue=0, discoveries={
        "sometimes_reassignment_completes": 4, "sometimes_isr_reexpanded": 5, "sometimes_leader_reelected": 7}),
    "racks": Pinned(Outcome.OK, distinct=8764, generated=22954, depth=23, queue=0, discoveries={
        "sometimes_leader_reelected": 4, "sometimes_deletion_retried": 14, "sometimes_deletion_completes": 16},
        never_found=NO_ISR_CHANGES),
    "stale-deletion-response": Pinned(Outcome.VIOLATION, distinct=9472, generated=21534, depth=13, queue=742,
                                      discoveries={"deletion_completes_only_when_all_replicas_succeeded": 13}),
    # finding 6 (docs/findings.md), at 3.9: the re-created topic's only replica refuses it (INCONSISTENT_TOPIC_ID)
    "stray-log-refused-on-recreation": Pinned(Outcome.VIOLATION, distinct=9581, generated=20363, depth=25, queue=78,
        discoveries={"sometimes_topic_recreated": 7, "live_brokers_host_their_replicas": 24}),
    "stray-log-after-deletion": Pinned(Outcome.VIOLATION, distinct=27088, generated=65724, depth=20, queue=140,
                                       discoveries={"no_stray_logs_when_idle": 19}),
    # controller failover and moves, controlled shutdown, elections, log directories: the events' scenarios,
    # then one per bug switch (its switch on, see BUG_SWITCH_SCENARIOS)
    "controller-failover": Pinned(Outcome.OK, distinct=5228, generated=12231, depth=19, queue=0,
        discoveries={"sometimes_controller_failover_completes": 2, "sometimes_deletion_completes": 8}),
    "controller-move": Pinned(Outcome.OK, distinct=674, generated=1697, depth=21, queue=0,
        discoveries={"sometimes_controller_failover_completes": 2, "sometimes_zombie_write_fenced": 3,
            "sometimes_deletion_completes": 8}),
    "controlled-shutdown": Pinned(Outcome.OK, distinct=208, generated=496, depth=11, queue=0,
        discoveries={"sometimes_controlled_shutdown_succeeds": 2, "sometimes_leader_reelected": 2}),
    "preferred-election": Pinned(Outcome.OK, distinct=2407, generated=5595, depth=17, queue=0,
        discoveries={"sometimes_leader_reelected": 2, "sometimes_isr_reexpanded": 6,
            "sometimes_preferred_leader_elected": 8}),
    "preferred-election-without-leader": Pinned(Outcome.VIOLATION, distinct=427, generated=596, depth=5, queue=231,
        discoveries={"sometimes_controller_failover_completes": 2, "elected_controller_completes_failover": 5}),
    # finding 5 (docs/findings.md): the offline election leaves the shutting-down leader untold
    "offline-election-during-controlled-shutdown": Pinned(Outcome.VIOLATION, distinct=1729, generated=3032, depth=6,
        queue=812, discoveries={"sometimes_controlled_shutdown_succeeds": 2, "single_acting_leader_when_idle": 5}),
    "log-dir-failure": Pinned(Outcome.OK, distinct=2682, generated=6000, depth=16, queue=0,
        discoveries={"sometimes_leader_reelected": 2, "sometimes_log_dir_replica_offline": 4}),
    "kafka-3083": Pinned(Outcome.VIOLATION, distinct=50, generated=53, depth=3, queue=32,
        discoveries={"sometimes_controller_failover_completes": 2, "zk_written_only_by_active_controller": 3}),
    "kafka-6082": Pinned(Outcome.VIOLATION, distinct=14, generated=15, depth=3, queue=7,
        discoveries={"sometimes_controller_failover_completes": 2, "zk_written_only_by_active_controller": 3}),
    "kafka-7235": Pinned(Outcome.VIOLATION, distinct=18, generated=20, depth=4, queue=5,
        discoveries={"live_brokers_host_their_replicas": 3}),
    "kafka-3143": Pinned(Outcome.VIOLATION, distinct=208, generated=316, depth=6, queue=69,
        discoveries={"sometimes_controller_failover_completes": 2, "no_dead_replica_in_isr_when_idle": 5}),
    "kafka-3096": Pinned(Outcome.VIOLATION, distinct=662, generated=1026, depth=6, queue=345,
        discoveries={"sometimes_controller_failover_completes": 2, "leader_not_on_dead_broker_when_idle": 5}),
    "kafka-5083": Pinned(Outcome.VIOLATION, distinct=65, generated=101, depth=4, queue=36,
        discoveries={"sometimes_leader_reelected": 2, "isr_never_empty": 3}),
    "kafka-6650": Pinned(Outcome.VIOLATION, distinct=228, generated=557, depth=18, queue=0,
        discoveries={"queued_deletion_finishes_when_brokers_alive": 17}),
    "kafka-3175": Pinned(Outcome.VIOLATION, distinct=904, generated=1662, depth=7, queue=281,
        discoveries={"sometimes_controller_failover_completes": 2, "leader_elected_when_isr_member_alive": 6}),
    "kafka-6612": Pinned(Outcome.VIOLATION, distinct=501, generated=835, depth=7, queue=143,
        discoveries={"sometimes_deletion_completes": 5, "controller_knows_every_partition_when_idle": 6}),
    "kafka-6193": Pinned(Outcome.VIOLATION, distinct=82, generated=154, depth=7, queue=15,
        discoveries={"sometimes_controller_failover_completes": 2, "reassignment_intent_survives": 6}),
    "kafka-5310": Pinned(Outcome.VIOLATION, distinct=368, generated=661, depth=6, queue=174,
        discoveries={"sometimes_controller_failover_completes": 2, "failover_context_from_zookeeper": 6,
            "sometimes_reassignment_completes": 6}),
    "kafka-9212": Pinned(Outcome.VIOLATION, distinct=20, generated=36, depth=8, queue=0,
        discoveries={"metadata_caches_current_when_idle": 7}),
    "kafka-7482": Pinned(Outcome.VIOLATION, distinct=19, generated=22, depth=4, queue=9,
        discoveries={"sometimes_controlled_shutdown_succeeds": 2, "single_acting_leader_when_idle": 3}),
    "election-retry": Pinned(Outcome.VIOLATION, distinct=39, generated=51, depth=2, queue=31,
        discoveries={"election_bumps_epoch_once": 2, "sometimes_isr_write_conflict": 2,
            "sometimes_controlled_shutdown_succeeds": 2}),
    "kafka-4214": Pinned(Outcome.VIOLATION, distinct=660, generated=1060, depth=6, queue=297,
        discoveries={"sometimes_controller_failover_completes": 2, "reassignment_intent_survives": 5}),
    "kafka-9866": Pinned(Outcome.VIOLATION, distinct=65, generated=105, depth=5, queue=19,
        discoveries={"sometimes_leader_reelected": 2, "auto_rebalance_elections_feasible": 5}),
    "kafka-9672": Pinned(Outcome.VIOLATION, distinct=22, generated=33, depth=5, queue=10,
        discoveries={"sometimes_reassignment_completes": 2, "leader_isr_within_assigned_replicas": 4}),
    "kafka-13225": Pinned(Outcome.VIOLATION, distinct=143, generated=197, depth=5, queue=58,
        discoveries={"metadata_live_brokers_current_when_idle": 4}),
    # a reassignment's adding replica on a broker with a failed log directory, at 2.6
    "kafka-10314": Pinned(Outcome.VIOLATION, distinct=3827, generated=9348, depth=17, queue=390,
        discoveries={"reassignment_finishes_when_targets_alive": 16}),
    # KIP-455's cancellation at 2.6 (KIP-570's StopReplica epochs), then the topic's deletion
    "kafka-13972": Pinned(Outcome.VIOLATION, distinct=752, generated=1820, depth=21, queue=1,
        discoveries={"no_stray_logs_when_idle": 20}),
    # KIP-455's replacement with KIP-460's ElectLeaders: three brokers, one ISR expansion
    "kafka-14808": Pinned(Outcome.VIOLATION, distinct=30757, generated=112442, depth=24, queue=252,
        discoveries={"leader_elected_when_isr_member_alive": 23}),
    # KAFKA-14140 at 3.2 (AlterIsr): a broker in controlled shutdown follows the new leader and rejoins the ISR
    "kafka-14140": Pinned(Outcome.VIOLATION, distinct=184, generated=319, depth=7, queue=52,
        discoveries={"isr_members_eligible_when_idle": 6}),
    # KAFKA-14144 at 3.3: one ISR shrink whose AlterPartition answer is lost, and its re-send
    "kafka-14144": Pinned(Outcome.VIOLATION, distinct=5, generated=5, depth=4, queue=0,
        discoveries={"no_pending_isr_change_when_idle": 3}),
    # KAFKA-9946 at 2.6 (KIP-570's StopReplica v3): one replica's topic deleted, the answer to its OfflineReplica
    # StopReplica taken for the deletion's (with the switch off: ok, 8 states, test_bug_switches)
    "kafka-9946": Pinned(Outcome.VIOLATION, distinct=6, generated=6, depth=4, queue=2,
        discoveries={"deletion_completes_only_when_all_replicas_succeeded": 4}),
    "unclean-election": Pinned(Outcome.OK, distinct=1515, generated=3598, depth=13, queue=0,
                               discoveries={"sometimes_leader_reelected": 2}),
}

#: Scenarios whose exhaustive search takes well over 20 s on a 2-core machine (about 30K states per 10 s).
SLOW = {"default"}


def _param(name: str) -> object:
    return pytest.param(name, id=name, marks=[pytest.mark.slow] if name in SLOW else [])


NAMES = [_param(name) for name in sorted(PINNED)]


@functools.cache
def explored(name: str) -> tuple[object, ExplorationResult]:
    """The model of a shipped scenario and its local BFS result, computed once per test session."""
    model = model_for(resolve_scenario(name))
    return model, run_bfs(model)


def test_every_shipped_scenario_is_pinned() -> None:
    """The pinned table covers exactly the ZooKeeper scenarios that ship in model/scenario/scenarios, and
    test_kraft_scenarios's the KRaft ones (model/scenario/scenarios/kraft), which it pins with their traces."""
    from test_kraft_scenarios import KRAFT_PINNED

    assert not set(PINNED) & set(KRAFT_PINNED)
    assert set(PINNED) | set(KRAFT_PINNED) == set(shipped_scenarios())


@pytest.mark.parametrize("name", NAMES)
def test_pinned_exploration(name: str) -> None:
    """The BFS of the scenario gives the pinned outcome, state counts, depth, queue and discoveries."""
    _, result = explored(name)
    pinned = PINNED[name]
    stats = result.stats
    assert (result.outcome, stats.distinct, stats.generated, stats.depth, stats.queue) == (
        pinned.outcome, pinned.distinct, pinned.generated, pinned.depth, pinned.queue)
    assert {d.property: d.trace_length for d in result.discoveries} == pinned.discoveries
    assert [d.property for d in result.discoveries] == list(pinned.discoveries)
    assert sorted(result.never_found) == sorted(pinned.never_found)
    assert result.exit_code == (1 if pinned.outcome is Outcome.VIOLATION else 0)
    assert stats.levels[-1].distinct_total == stats.distinct
    assert sum(level.generated for level in stats.levels) + 1 == stats.generated


@pytest.mark.parametrize("name", NAMES)
def test_every_discovery_replays_to_its_fingerprints_twice(name: str) -> None:
    """Replaying each discovery from the initial state reproduces its fingerprint path, the same way twice."""
    model, result = explored(name)
    assert result.discoveries
    for discovery in result.discoveries:
        first = replay(model, discovery)
        second = replay(model, discovery)
        assert first.fingerprints == discovery.path
        assert first == second
        assert len(first.steps) == discovery.trace_length


@pytest.mark.slow
def test_default_finds_every_sometimes_property_of_its_events() -> None:
    """The default scenario is not vacuous: it re-elects a leader, retries a deletion and completes one, a
    leader re-expands its ISR, and a controller write meets BADVERSION."""
    _, result = explored("default")
    assert sorted(result.never_found) == sorted(NO_REASSIGNMENT)
    assert {d.property for d in result.discoveries} == {
        "sometimes_leader_reelected", "sometimes_deletion_retried", "sometimes_deletion_completes",
        "sometimes_isr_reexpanded", "sometimes_isr_write_conflict"}


def test_delete_disabled_never_deletes() -> None:
    """With delete.topic.enable=false no deletion completes or is retried, and the search says so."""
    _, result = explored("delete-disabled")
    assert result.outcome is Outcome.OK
    assert {"sometimes_deletion_completes", "sometimes_deletion_retried"} <= set(result.never_found)


def test_kafka_9946_off_deletes_the_log_before_the_topic_leaves_zookeeper() -> None:
    """kafka-9946 with its switch off (2.6.0's callback, commit 3b6bf805309: only the partitions the StopReplica
    asked to delete): the answer to the OfflineReplica StopReplica is ignored, the deletion completes only after
    broker 0 applied the StopReplica(delete); the search is clean in 8 states, 8 generated, depth 8."""
    off = with_bug(resolve_scenario("kafka-9946"), "KAFKA_9946", on=False)
    result = run_bfs(model_for(off))
    stats = result.stats
    assert (result.outcome, stats.distinct, stats.generated, stats.depth, stats.queue) == (Outcome.OK, 8, 8, 8, 0)
