"""Every shipped scenario at Kafka 3.9 with its default protocol (``[kafka] version = "3.9"``, the last release with a
ZooKeeper controller): the local BFS's pinned result (every change of 2.4 - 3.9 a scenario can reach is modelled),
and the one-sentence refusal, naming the change not modelled, of a scenario reaching a planted one
(model/scenario/versions.py). As in tests/test_scenarios_pinned.py, the numbers were measured by running the search;
a change of the model that moves them re-measures them in the same commit and says why."""

from __future__ import annotations

import functools

import pytest
from click.testing import CliRunner
from test_scenarios_pinned import Pinned

from explorer.bfs import run_bfs
from explorer.results import ExplorationResult, Outcome
from kmc.cli import main
from kmc.compose import model_for, resolve_scenario, shipped_scenarios
from kmc.version_matrix import FINDINGS, cell, switch_rows
from model.scenario import Scenario, ScenarioError, with_version
from model.scenario.versions import GATES, Gate, refusal

VERSION = "3.9"

#: The shipped scenarios that explore at 3.9 (none reaches a change the model does not have). The reassignment
#: switches' scenarios run here since KIP-455 is modelled (2.4), each clean: its bug was fixed by 3.9. The failover
#: scenarios have fewer states than at 2.3: from 2.4 the failover's initializePartitionReassignments rewrites
#: /admin/reassign_partitions (and queues the event re-arming its watch) only when the znode exists. With AlterIsr
#: (KIP-497, protocol 2.7-IV2) the controller registers no partition watch for a reassigning partition (KAFKA-10521):
#: its own writes of the znode queue no PartitionReassignmentIsrChange; the reassignment scenarios have fewer states.
#: The scenarios with ISR changes run with AlterIsr, and KAFKA-14140's checks (3.3): no leader write lands inside a
#: controller step, so sometimes_isr_write_conflict is never found (not applicable there).
#: The default scenario at 3.9 (484,747 distinct states, about 3 CPU minutes): pinned by a slow test.
DEFAULT_3_9 = Pinned(Outcome.OK, distinct=484747, generated=1354174, depth=29, queue=0,
    discoveries={"sometimes_leader_reelected": 2, "sometimes_isr_reexpanded": 7, "sometimes_deletion_retried": 10,
                 "sometimes_deletion_completes": 11},
    never_found=("sometimes_controlled_shutdown_succeeds", "sometimes_controller_failover_completes",
                 "sometimes_isr_write_conflict", "sometimes_log_dir_replica_offline",
                 "sometimes_partition_addition_reverted", "sometimes_partitions_added",
                 "sometimes_preferred_leader_elected", "sometimes_reassignment_completes", "sometimes_topic_recreated",
                 "sometimes_zombie_write_fenced"))

PINNED_3_9: dict[str, Pinned] = {
    "election-retry": Pinned(Outcome.OK, distinct=3531, generated=9438, depth=13, queue=0,
        discoveries={"sometimes_controlled_shutdown_succeeds": 2}, never_found=("sometimes_isr_write_conflict",)),
    "isr-changes": Pinned(Outcome.OK, distinct=1331, generated=2955, depth=14, queue=0,
        discoveries={"sometimes_leader_reelected": 2, "sometimes_isr_reexpanded": 4},
        never_found=("sometimes_isr_write_conflict",)),
    "preferred-election": Pinned(Outcome.OK, distinct=1966, generated=4338, depth=16, queue=0,
        discoveries={"sometimes_leader_reelected": 2, "sometimes_isr_reexpanded": 7,
                     "sometimes_preferred_leader_elected": 10}),
    "reassignment": Pinned(Outcome.OK, distinct=781, generated=1787, depth=20, queue=0,
        discoveries={"sometimes_leader_reelected": 3, "sometimes_reassignment_completes": 7,
                     "sometimes_isr_reexpanded": 7}),
    "reassignment-api": Pinned(Outcome.OK, distinct=4979, generated=15621, depth=25, queue=0,
        discoveries={"sometimes_reassignment_completes": 4, "sometimes_isr_reexpanded": 7,
                     "sometimes_leader_reelected": 7}),
    # finding 3 (docs/findings.md) does not survive AlterIsr: the controller serialises the leader's shrink
    "reassignment-isr-shrink-race": Pinned(Outcome.OK, distinct=105, generated=233, depth=11, queue=0,
        discoveries={"sometimes_reassignment_completes": 2}),
    "controlled-shutdown": Pinned(Outcome.OK, distinct=208, generated=496, depth=11, queue=0,
        discoveries={"sometimes_controlled_shutdown_succeeds": 2, "sometimes_leader_reelected": 2}),
    "kafka-13225": Pinned(Outcome.OK, distinct=184, generated=325, depth=9, queue=0, discoveries={}),
    "kafka-3083": Pinned(Outcome.OK, distinct=375, generated=744, depth=10, queue=0,
        discoveries={"sometimes_controller_failover_completes": 2}),
    "kafka-3096": Pinned(Outcome.OK, distinct=2020, generated=4352, depth=14, queue=0,
        discoveries={"sometimes_controller_failover_completes": 2}),
    "kafka-3143": Pinned(Outcome.OK, distinct=215, generated=378, depth=10, queue=0,
        discoveries={"sometimes_controller_failover_completes": 2}),
    # KAFKA-14808 is fixed in no release: its switch is on at 3.9, and AlterIsr (KIP-497) leaves it reachable
    "kafka-14808": Pinned(Outcome.VIOLATION, distinct=5794, generated=19418, depth=25, queue=1,
        discoveries={"leader_elected_when_isr_member_alive": 24}),
    # the scenario turns KAFKA_10314 on itself: the pre-2.7 isNew=false reaches the same wait under AlterIsr
    "kafka-10314": Pinned(Outcome.VIOLATION, distinct=990, generated=2193, depth=16, queue=53,
        discoveries={"reassignment_finishes_when_targets_alive": 15}),
    # the scenario turns KAFKA_13972 on itself: with topic IDs the cancelled replica's log still outlives the deletion
    "kafka-13972": Pinned(Outcome.VIOLATION, distinct=550, generated=1271, depth=20, queue=1,
        discoveries={"no_stray_logs_when_idle": 19}),
    # both turn their switch on themselves: 3.9 has the same code paths as 3.2 and 3.3 there, so the same counts
    "kafka-14140": Pinned(Outcome.VIOLATION, distinct=184, generated=319, depth=7, queue=52,
        discoveries={"isr_members_eligible_when_idle": 6}),
    "kafka-14144": Pinned(Outcome.VIOLATION, distinct=5, generated=5, depth=4, queue=0,
        discoveries={"no_pending_isr_change_when_idle": 3}),
    # turns KAFKA_9946 on itself: 3.9 sends the same StopReplica v3 batches as 2.6, so the same counts
    "kafka-9946": Pinned(Outcome.VIOLATION, distinct=6, generated=6, depth=4, queue=2,
        discoveries={"deletion_completes_only_when_all_replicas_succeeded": 4}),
    "kafka-4214": Pinned(Outcome.OK, distinct=2375, generated=5374, depth=16, queue=0,
        discoveries={"sometimes_controller_failover_completes": 2}),
    "kafka-5310": Pinned(Outcome.OK, distinct=3481, generated=9159, depth=21, queue=0,
        discoveries={"sometimes_controller_failover_completes": 2, "sometimes_reassignment_completes": 2}),
    # 37 distinct before KIP-516 was modelled: the admin's topic gets its ID from the active controller's
    # processTopicIds, whose write of the topic znode queues a PartitionModifications (a moved controller's is fenced)
    "kafka-6082": Pinned(Outcome.OK, distinct=67, generated=130, depth=9, queue=0,
        discoveries={"sometimes_controller_failover_completes": 2, "sometimes_zombie_write_fenced": 3}),
    "kafka-6193": Pinned(Outcome.OK, distinct=129, generated=260, depth=13, queue=0,
        discoveries={"sometimes_controller_failover_completes": 2}),
    "kafka-7235": Pinned(Outcome.OK, distinct=25, generated=36, depth=7, queue=0, discoveries={}),
    "kafka-7482": Pinned(Outcome.OK, distinct=57, generated=106, depth=9, queue=0,
        discoveries={"sometimes_controlled_shutdown_succeeds": 2}),
    "kafka-9212": Pinned(Outcome.OK, distinct=14, generated=23, depth=7, queue=0, discoveries={}),
    "kafka-9672": Pinned(Outcome.OK, distinct=29, generated=57, depth=9, queue=0,
        discoveries={"sometimes_reassignment_completes": 2}),
    "kafka-9866": Pinned(Outcome.OK, distinct=84, generated=161, depth=9, queue=0,
        discoveries={"sometimes_leader_reelected": 2}),
    # finding 4 (docs/findings.md) at 3.9; 395 distinct at 2.4, more here: the admin's topic gets its ID from the
    # controller (processTopicIds), whose write of the topic znode queues a PartitionModifications
    "preferred-election-without-leader": Pinned(Outcome.VIOLATION, distinct=456, generated=639, depth=5, queue=252,
        discoveries={"sometimes_controller_failover_completes": 2, "elected_controller_completes_failover": 5}),
    # KIP-516 (2.8): the scenarios that delete or re-create topics
    "add-partitions": Pinned(Outcome.OK, distinct=9327, generated=21864, depth=22, queue=0,
        discoveries={"sometimes_partitions_added": 2, "sometimes_partition_addition_reverted": 4,
            "sometimes_deletion_completes": 8}),
    "controller-failover": Pinned(Outcome.OK, distinct=3867, generated=8544, depth=18, queue=0,
        discoveries={"sometimes_controller_failover_completes": 2, "sometimes_deletion_completes": 8}),
    "controller-move": Pinned(Outcome.OK, distinct=428, generated=939, depth=20, queue=0,
        discoveries={"sometimes_controller_failover_completes": 2, "sometimes_zombie_write_fenced": 3,
            "sometimes_deletion_completes": 8}),
    "delete-disabled": Pinned(Outcome.OK, distinct=144, generated=267, depth=10, queue=0,
        discoveries={"sometimes_leader_reelected": 2},
        never_found=("sometimes_controlled_shutdown_succeeds", "sometimes_controller_failover_completes",
            "sometimes_deletion_completes", "sometimes_deletion_retried", "sometimes_isr_reexpanded",
            "sometimes_isr_write_conflict", "sometimes_log_dir_replica_offline",
            "sometimes_partition_addition_reverted", "sometimes_partitions_added",
            "sometimes_preferred_leader_elected", "sometimes_reassignment_completes", "sometimes_topic_recreated",
            "sometimes_zombie_write_fenced")),
    "deletion-3brokers": Pinned(Outcome.OK, distinct=7259, generated=16250, depth=23, queue=0,
        discoveries={"sometimes_leader_reelected": 2, "sometimes_deletion_retried": 10,
            "sometimes_deletion_completes": 11},
        never_found=("sometimes_controlled_shutdown_succeeds", "sometimes_controller_failover_completes",
            "sometimes_isr_reexpanded", "sometimes_isr_write_conflict", "sometimes_log_dir_replica_offline",
            "sometimes_partition_addition_reverted", "sometimes_partitions_added",
            "sometimes_preferred_leader_elected", "sometimes_reassignment_completes", "sometimes_topic_recreated",
            "sometimes_zombie_write_fenced")),
    "kafka-3175": Pinned(Outcome.VIOLATION, distinct=543, generated=867, depth=6, queue=224,
        discoveries={"sometimes_controller_failover_completes": 2, "leader_elected_when_isr_member_alive": 5}),
    "kafka-6612": Pinned(Outcome.VIOLATION, distinct=501, generated=835, depth=7, queue=143,
        discoveries={"sometimes_deletion_completes": 5, "controller_knows_every_partition_when_idle": 6}),
    "kafka-6650": Pinned(Outcome.OK, distinct=145, generated=316, depth=16, queue=0,
        discoveries={"sometimes_deletion_completes": 13}),
    "planted-complete-on-first-success": Pinned(Outcome.VIOLATION, distinct=152, generated=233, depth=5, queue=67,
        discoveries={"deletion_completes_only_when_all_replicas_succeeded": 5}),
    "racks": Pinned(Outcome.OK, distinct=14492, generated=40511, depth=24, queue=0,
        discoveries={"sometimes_leader_reelected": 4, "sometimes_deletion_retried": 15,
            "sometimes_deletion_completes": 17},
        never_found=("sometimes_controlled_shutdown_succeeds", "sometimes_controller_failover_completes",
            "sometimes_isr_reexpanded", "sometimes_isr_write_conflict", "sometimes_log_dir_replica_offline",
            "sometimes_partition_addition_reverted", "sometimes_partitions_added",
            "sometimes_preferred_leader_elected", "sometimes_reassignment_completes", "sometimes_topic_recreated",
            "sometimes_zombie_write_fenced")),
    "reassignment-during-deletion": Pinned(Outcome.VIOLATION, distinct=2511, generated=5617, depth=17, queue=27,
        discoveries={"sometimes_deletion_completes": 5, "reassignment_finishes_when_targets_alive": 16}),
    "stale-deletion-response": Pinned(Outcome.VIOLATION, distinct=9472, generated=21534, depth=13, queue=742,
        discoveries={"deletion_completes_only_when_all_replicas_succeeded": 13}),
    "stray-log-adopted-on-recreation": Pinned(Outcome.OK, distinct=9655, generated=20538, depth=30, queue=0,
        discoveries={"sometimes_topic_recreated": 7}),
    # finding 6 (docs/findings.md): the scenario's own version
    "stray-log-refused-on-recreation": Pinned(Outcome.VIOLATION, distinct=9581, generated=20363, depth=25, queue=78,
        discoveries={"sometimes_topic_recreated": 7, "live_brokers_host_their_replicas": 24}),
    "stray-log-after-deletion": Pinned(Outcome.VIOLATION, distinct=27006, generated=65514, depth=20, queue=140,
        discoveries={"no_stray_logs_when_idle": 19}),
    "topic-recreation": Pinned(Outcome.VIOLATION, distinct=3736, generated=8180, depth=20, queue=299,
        discoveries={"sometimes_deletion_completes": 8, "sometimes_topic_recreated": 10,
            "queued_deletion_finishes_when_brokers_alive": 19}),
    # The unclean-election scenarios run with KIP-704's leader recovery (3.2, protocol 3.2-IV0): an unclean election
    # marks the partition RECOVERING until the new leader's next AlterIsr, so a partition that has had an unclean
    # election is a state apart from one that has not (unclean-election 1,515 states at 3.1, log-dir-failure 2,682)
    "unclean-election": Pinned(Outcome.OK, distinct=1547, generated=3638, depth=14, queue=0,
        discoveries={"sometimes_leader_reelected": 2}),
    "log-dir-failure": Pinned(Outcome.OK, distinct=2702, generated=6026, depth=16, queue=0,
        discoveries={"sometimes_leader_reelected": 2, "sometimes_log_dir_replica_offline": 4}),
    # KAFKA-5083's switch is on in its scenario: the ISR is emptied before any unclean election
    "kafka-5083": Pinned(Outcome.VIOLATION, distinct=71, generated=105, depth=4, queue=42,
        discoveries={"sometimes_leader_reelected": 2, "isr_never_empty": 3}),
    # finding 5 (docs/findings.md) holds at 3.9: leader recovery changes what the znode says, not who leads
    "offline-election-during-controlled-shutdown": Pinned(Outcome.VIOLATION, distinct=4089, generated=8038, depth=8,
        queue=1527, discoveries={"sometimes_controlled_shutdown_succeeds": 2, "single_acting_leader_when_idle": 7}),
}


def _at_3_9(name: str) -> Scenario:
    return with_version(resolve_scenario(name), VERSION)


@functools.cache
def explored(name: str) -> ExplorationResult:
    return run_bfs(model_for(_at_3_9(name)))


def test_every_shipped_scenario_is_pinned_at_3_9() -> None:
    """Each shipped scenario is pinned at 3.9 (every change of 2.4 - 3.9 a scenario can reach is modelled); a KRaft
    scenario is at 3.9, its only version, and pinned in test_kraft_scenarios."""
    from test_kraft_scenarios import KRAFT_PINNED

    assert all(resolve_scenario(name).version == (3, 9) for name in KRAFT_PINNED)
    assert set(PINNED_3_9) | {"default"} | set(KRAFT_PINNED) == set(shipped_scenarios())
    assert not [g.name for g in GATES.values() if not g.modelled]


@pytest.mark.parametrize("name", [*sorted(PINNED_3_9), pytest.param("default", marks=pytest.mark.slow)])
def test_pinned_exploration_at_3_9(name: str) -> None:
    """The BFS of the scenario at 3.9 gives the pinned outcome, state counts, depth, queue and discoveries."""
    result, pinned = explored(name), PINNED_3_9.get(name, DEFAULT_3_9)
    stats = result.stats
    assert _at_3_9(name).version == (3, 9) and _at_3_9(name).inter_broker_protocol == (3, 9)
    assert (result.outcome, stats.distinct, stats.generated, stats.depth, stats.queue) == (
        pinned.outcome, pinned.distinct, pinned.generated, pinned.depth, pinned.queue)
    assert {d.property: d.trace_length for d in result.discoveries} == pinned.discoveries
    assert sorted(result.never_found) == sorted(pinned.never_found)


#: A change not modelled, planted for the refusal's tests (the model has none today): reached by unclean elections
#: at 3.2 and later.
PLANTED = Gate("PLANTED_CHANGE", (3, 2), "a planted change", protocol=True,
               reaches=lambda s: s.unclean_leader_election_enable, needs="unclean leader election")


@pytest.fixture
def planted_gate(monkeypatch: pytest.MonkeyPatch) -> Gate:
    monkeypatch.setitem(GATES, PLANTED.name, PLANTED)
    return PLANTED


def test_a_change_not_modelled_is_refused_in_one_sentence(planted_gate: Gate) -> None:
    """The loader refuses a scenario reaching a change not modelled at its version with the one sentence of
    versions.refusal, naming the change and the setting that runs it; below the change the scenario runs."""
    with pytest.raises(ScenarioError) as refused:
        _at_3_9("unclean-election")
    message = str(refused.value)
    assert message == ('[kafka] inter_broker_protocol_version = "3.9" reaches PLANTED-CHANGE (3.2), which the model '
                       'does not have yet, through unclean leader election; set [kafka] inter_broker_protocol_version '
                       'below 3.2 or drop unclean leader election (see docs/versions.md).')
    assert refusal(resolve_scenario("unclean-election")) is None  # the refusal is the version's, not the scenario's
    assert cell(next(r for r in FINDINGS if r.label == "finding 5"), "3.9") == "not modelled (PLANTED-CHANGE)"


def test_kmc_prints_the_refusal_and_exits_2(tmp_path, planted_gate: Gate) -> None:  # type: ignore[no-untyped-def]
    """kmc explore on a scenario file at 3.9 that reaches a change not modelled prints the loader's sentence as
    its one line on stderr and exits 2."""
    source = resolve_scenario("unclean-election").source
    path = tmp_path / "unclean-election-3.9.toml"
    path.write_text(source.replace("[kafka]", '[kafka]\nversion = "3.9"', 1) if "[kafka]" in source
                    else f'{source}\n[kafka]\nversion = "3.9"\n')
    with pytest.raises(ScenarioError) as refused:
        with_version(resolve_scenario("unclean-election"), VERSION)
    result = CliRunner().invoke(main, ["explore", str(path), "--engine", "local", "--out", str(tmp_path / "runs")])
    assert result.exit_code == 2
    assert str(refused.value) in result.stderr and result.stderr.count("\n") == 1


def test_version_matrix_cells_check_the_rows_property_alone() -> None:
    """kmc bugs --versions: finding 3's scenario first violates another property (isr_subset_of_assignment); its
    cell at 2.3 and 2.4 (KIP-455's reassignment) still says it reproduces, at 2.7 (AlterIsr, KIP-497) that it
    does not; KAFKA-13225's switch reproduces at 3.0 (on by default) and not at 3.1 (fixed)."""
    finding_3 = next(row for row in FINDINGS if row.scenario == "reassignment-isr-shrink-race")
    assert [cell(finding_3, v) for v in ("2.3", "2.4", "2.7")] == ["yes", "yes", "no"]
    kafka_13225 = next(row for row in switch_rows() if row.switch == "KAFKA_13225")
    assert [cell(kafka_13225, v) for v in ("3.0", "3.1")] == ["yes", "no"]
