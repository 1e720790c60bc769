"""The named properties: registered with their metadata, each catching a hand-made violation (with
evidence) and silent on a real initial state, quiescence properties only judged when the controller
is idle, and a planted bug caught with a shortest counterexample."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import pytest

from explorer.bfs import run_bfs
from explorer.contract import PropertyKind
from explorer.results import Outcome
from invariants.registry import GROUPS, all_specs, select
from kmc.compose import model_for, shipped_scenarios
from model.scenario import Scenario, load_scenario
from model.zk.kafka_model import Action, KafkaControllerModel
from model.zk.state.states import ReplicaState
from model.zk.state.values import (
    BrokerState,
    ClusterState,
    ControllerEvent,
    EventKind,
    History,
    HostedPartition,
    LeaderAndIsr,
    LeaderRecoveryState,
    MetadataPartitionState,
    Request,
    RequestKind,
    StepLog,
)

R = ReplicaState

SCENARIO = """
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "t"
replicas = [[0, 1]]
deleted_by_admin = true
"""

RACKS = """
[cluster]
brokers = [{ id = 0, rack = "r1" }, { id = 1, rack = "r1" }, { id = 2, rack = "r2" }, { id = 3, rack = "r2" }]
[[topics]]
name = "p"
partitions = 2
replication_factor = 2
"""


def scenario_of(text: str) -> Scenario:
    return load_scenario(text)


def initial_of(scenario: Scenario) -> ClusterState:
    [state] = KafkaControllerModel(scenario).init_states()
    return state


def check_of(name: str, scenario: Scenario) -> Callable[..., Any]:
    [prop] = select(scenario, [name])
    return prop.check


# ---- state editing ---------------------------------------------------------------------------------


def set_lai(s: ClusterState, lai: LeaderAndIsr, *, zk: bool = True, cache: bool = True) -> ClusterState:
    """t-0's leader/ISR replaced in ZooKeeper and/or the controller's cache."""
    tp = ("t", 0)
    if zk:
        s = attrs.evolve(s, zk=attrs.evolve(s.zk, partitions=tuple(
            (k, lai if k == tp else v) for k, v in s.zk.partitions)))
    if cache:
        s = attrs.evolve(s, controller=attrs.evolve(s.controller, leadership=tuple(
            (k, lai if k == tp else v) for k, v in s.controller.leadership)))
    return s


def set_replica_state(s: ClusterState, replica: tuple[str, int, int], state: ReplicaState) -> ClusterState:
    states = dict(s.controller.replica_states)
    states[replica] = state
    return attrs.evolve(s, controller=attrs.evolve(s.controller, replica_states=tuple(sorted(states.items()))))


def set_broker(s: ClusterState, broker: BrokerState) -> ClusterState:
    return attrs.evolve(s, brokers=tuple(broker if b.id == broker.id else b for b in s.brokers))


def set_controller(s: ClusterState, **changes: Any) -> ClusterState:
    return attrs.evolve(s, controller=attrs.evolve(s.controller, **changes))


def set_zk(s: ClusterState, **changes: Any) -> ClusterState:
    return attrs.evolve(s, zk=attrs.evolve(s.zk, **changes))


LAI = LeaderAndIsr  # LeaderAndIsr(leader, leader_epoch, isr, zk_version, controller_epoch)
T0_0, T0_1 = ("t", 0, 0), ("t", 0, 1)
STRAY_T0_ON_0 = History(((0, ("t", 0)),))  # t-0's log on broker 0 predates the topic's re-creation


# ---- one hand-made violation (or more) per property ---------------------------------------------------
# Each case: (property, case id, scenario text, builder from the initial state to the check's arguments,
# evidence items the finding must contain).

Builder = Callable[[ClusterState], tuple[Any, ...]]

VIOLATIONS: list[tuple[str, str, str, Builder, dict[str, Any]]] = [
    ("isr_subset_of_assignment", "unassigned-isr-member", SCENARIO,
     lambda s: (set_lai(s, LAI(0, 1, (0, 1, 2), 1, 1)),),
     {"partition": "t-0", "not_assigned": [2]}),
    ("leader_in_isr", "zookeeper", SCENARIO,
     lambda s: (set_lai(s, LAI(1, 1, (0,), 1, 1)),),
     {"partition": "t-0", "leader": 1, "isr": [0], "where": "zookeeper"}),
    ("leader_in_isr", "controller-cache-only", SCENARIO,
     lambda s: (set_lai(s, LAI(1, 1, (0,), 1, 1), zk=False),),
     {"partition": "t-0", "leader": 1, "where": "controller"}),
    ("recreated_topic_never_adopts_stray_log", "leader-on-an-old-log", SCENARIO,
     lambda s: (attrs.evolve(set_broker(s, attrs.evolve(s.broker(0), partitions=())), history=STRAY_T0_ON_0),
                None, attrs.evolve(s, history=STRAY_T0_ON_0)),
     {"broker": 0, "partition": "t-0", "leader": 0, "leader_epoch": 0}),
    ("leader_in_assignment", "leader-outside-the-assignment", SCENARIO,
     lambda s: (set_lai(s, LAI(2, 1, (0, 1, 2), 1, 1)),),
     {"partition": "t-0", "leader": 2, "assignment": [0, 1]}),
    ("recovering_partition_isr_is_its_leader", "isr-beyond-the-leader", SCENARIO,
     lambda s: (set_lai(s, LAI(0, 1, (0, 1), 1, 1, leader_recovery_state=LeaderRecoveryState.RECOVERING)),),
     {"partition": "t-0", "leader": 0, "isr": [0, 1], "leader_recovery_state": "RECOVERING"}),
    ("recovering_partition_isr_is_its_leader", "isr-without-the-leader", SCENARIO,
     lambda s: (set_lai(s, LAI(1, 1, (0,), 1, 1, leader_recovery_state=LeaderRecoveryState.RECOVERING)),),
     {"partition": "t-0", "leader": 1, "isr": [0]}),
    ("isr_never_empty", "empty-isr", SCENARIO,
     lambda s: (set_lai(s, LAI(-1, 1, (), 1, 1)),),
     {"partition": "t-0", "leader": -1}),
    ("distinct_brokers_per_partition", "zookeeper", SCENARIO,
     lambda s: (set_zk(s, topics=(("t", ((0, 0),)),)),),
     {"partition": "t-0", "replicas": [0, 0], "where": "zookeeper"}),
    ("distinct_brokers_per_partition", "controller", SCENARIO,
     lambda s: (set_controller(s, assignments=((("t", 0), (1, 1)),)),),
     {"partition": "t-0", "replicas": [1, 1], "where": "controller"}),
    ("rack_spread", "both-replicas-in-r1", RACKS,
     lambda s: (set_zk(s, topics=(("p", ((0, 1), (2, 1))),)),),
     {"partition": "p-0", "racks": ["r1", "r1"], "expected_racks": 2}),
    ("leader_epoch_monotonic", "zookeeper-epoch-decreases", SCENARIO,
     lambda s: (set_lai(s, LAI(0, 3, (0, 1), 3, 1)), None, s),
     {"partition": "t-0", "where": "zookeeper", "leader_epoch": [3, 0]}),
    ("leader_epoch_monotonic", "cache-zk-version-decreases", SCENARIO,
     lambda s: (set_lai(s, LAI(0, 0, (0, 1), 2, 1), zk=False), None, s),
     {"partition": "t-0", "where": "controller", "zk_version": [2, 0]}),
    ("leader_epoch_monotonic", "broker-view-decreases", SCENARIO,
     lambda s: (set_broker(s, attrs.evolve(s.broker(1), partitions=(HostedPartition(("t", 0), 4, 0),))), None, s),
     {"partition": "t-0", "where": "broker 1", "leader_epoch": [4, 0]}),
    ("controller_cache_matches_zk", "stale-leadership", SCENARIO,
     lambda s: (set_lai(s, LAI(1, 1, (1,), 1, 1), zk=False),),
     {"partition": "t-0"}),
    ("controller_cache_matches_zk", "stale-assignment", SCENARIO,
     lambda s: (set_controller(s, assignments=((("t", 0), (1, 0)),)),),
     {"partition": "t-0", "controller_assignment": [1, 0], "zookeeper_assignment": [0, 1]}),
    ("no_replica_state_for_deleted_topic", "replica-state-outlives-topic", SCENARIO,
     lambda s: (set_controller(s, assignments=(), leadership=(), partition_states=()),),
     {"topic": "t", "state": "OnlineReplica"}),
    ("no_replica_state_for_deleted_topic", "partition-state-outlives-topic", SCENARIO,
     lambda s: (set_controller(s, assignments=(), leadership=(), replica_states=()),),
     {"partition": "t-0", "state": "OnlinePartition"}),
    ("replica_transitions_follow_kafka_table", "unrecorded-change", SCENARIO,
     lambda s: (s, None, set_replica_state(s, T0_0, R.OfflineReplica)),
     {"replica": "t-0@0", "unrecorded_change": ["OnlineReplica", "OfflineReplica"]}),
    ("replica_transitions_follow_kafka_table", "outside-the-table", SCENARIO,
     lambda s: (s, None, attrs.evolve(set_replica_state(s, T0_0, R.ReplicaDeletionSuccessful), log=StepLog(
         replica_transitions=((T0_0, R.OnlineReplica, R.ReplicaDeletionSuccessful),)))),
     {"replica": "t-0@0", "from": "OnlineReplica", "to": "ReplicaDeletionSuccessful",
      "valid_previous_states": ["ReplicaDeletionStarted"]}),
    ("replica_transitions_follow_kafka_table", "recorded-from-the-wrong-state", SCENARIO,
     lambda s: (s, None, attrs.evolve(set_replica_state(s, T0_1, R.ReplicaDeletionStarted), log=StepLog(
         replica_transitions=((T0_1, R.OfflineReplica, R.ReplicaDeletionStarted),)))),
     {"replica": "t-0@1", "recorded_from": "OfflineReplica", "actual_state": "OnlineReplica"}),
    ("deletion_completes_only_when_all_replicas_succeeded", "topic-gone-logs-remain", SCENARIO,
     lambda s: (s, None, set_zk(s, topics=(), partitions=())),
     {"topic": "t"}),
    ("leader_isr_within_assigned_replicas", "leader-keeps-a-removed-replica", SCENARIO,
     lambda s: (set_broker(s, attrs.evolve(s.broker(0), partitions=(
         HostedPartition(("t", 0), 1, 0, isr=(0, 1, 2), replicas=(0, 1)),))),),
     {"broker": 0, "partition": "t-0", "not_assigned": [2], "replicas": [0, 1]}),
    ("zk_written_only_by_active_controller", "former-controller-writes-a-partition-state", SCENARIO,
     lambda s: (set_zk(attrs.evolve(s, zombie=s.controller), controller_epoch=2), None,
                attrs.evolve(set_zk(set_lai(s, LAI(1, 1, (1,), 1, 1), cache=False), controller_epoch=2),
                             log=StepLog(zombie_step=True))),
     {"writer_controller_epoch": 1, "zookeeper_controller_epoch": 2,
      "written": ["/brokers/topics/t/partitions/0/state"]}),
    ("failover_context_from_zookeeper", "reassignment-not-in-the-znode", SCENARIO,
     lambda s: (s, None, attrs.evolve(set_controller(s, partitions_being_reassigned=((("t", 0), (1, 2)),)),
                                      log=StepLog(controller_initialized=True))),
     {"partition": "t-0", "context_target": [1, 2], "znode_target": None}),
    ("elected_controller_completes_failover", "resigns-in-onControllerFailover", SCENARIO,
     lambda s: (s, None, attrs.evolve(set_zk(set_controller(s, epoch=3), controller_epoch=3), log=StepLog(
         controller_resignations=((2, "NoSuchElementException: key not found: t-0"),)))),
     {"controller_epoch": 2, "error": "NoSuchElementException: key not found: t-0", "successor_epoch": 3,
      "partitions_without_state_znode": []}),
    ("election_bumps_epoch_once", "elected-twice-in-one-call", SCENARIO,
     lambda s: (s, None, attrs.evolve(set_lai(s, LAI(1, 2, (0, 1), 2, 1)), log=StepLog(
         elections=((("t", 0), 0, 1), (("t", 0), 1, 1)), repeated_elections=(("t", 0),)))),
     {"partition": "t-0", "leader_epoch": [0, 2], "elections_in_step": [["t-0", 0, 1], ["t-0", 1, 1]]}),
    ("auto_rebalance_elections_feasible", "preferred-replica-out-of-the-isr", SCENARIO,
     lambda s: (set_controller(set_lai(s, LAI(1, 1, (1,), 1, 1)), events=(
         ControllerEvent(EventKind.AutoPreferredReplicaLeaderElection),)),
                Action("ControllerProcessEvent"), attrs.evolve(s, log=StepLog(
                    failed_elections=((("t", 0), "PreferredReplicaPartitionLeaderElectionStrategy"),)))),
     {"partition": "t-0", "preferred_replica": 0, "isr": [1]}),
]

REASSIGNING = SCENARIO + """
[[reassignments]]
topic = "t"
partitions = { 0 = [1, 2] }
"""

# Quiescence properties: a violating idle state (the stimulus-free states where they are judged), of SCENARIO
# unless QUIESCENCE_SCENARIOS names another.
QUIESCENCE: list[tuple[str, str, Builder, dict[str, Any]]] = [
    ("queued_deletion_finishes_when_brokers_alive", "queued-with-all-brokers-alive",
     lambda s: (set_controller(s, topics_to_be_deleted=("t",)),),
     {"topic": "t", "replica_states": {"t-0@0": "OnlineReplica", "t-0@1": "OnlineReplica"}}),
    ("queued_deletion_finishes_when_brokers_alive", "znode-never-processed",
     lambda s: (set_zk(s, delete_topics=("t",)),),
     {"topic": "t"}),
    ("leader_elected_when_isr_member_alive", "dead-leader-live-isr-member",
     lambda s: (set_broker(s, attrs.evolve(s.broker(0), alive=False)),),
     {"partition": "t-0", "leader": 0, "isr": [0, 1], "live": [1, 2]}),
    ("live_brokers_host_their_replicas", "restarted-broker-hosts-nothing",
     lambda s: (set_broker(s, attrs.evolve(s.broker(1), epoch=2, partitions=())),),
     {"partition": "t-0", "broker": 1, "broker_epoch": 2, "broker_view": "not hosted"}),
    ("live_brokers_host_their_replicas", "stale-leader-epoch",
     lambda s: (set_zk(s, partitions=tuple((tp, attrs.evolve(lai, leader_epoch=1)) for tp, lai in s.zk.partitions)),),
     {"partition": "t-0", "broker": 0, "broker_view": "leader=0 leaderEpoch=0"}),
    ("no_stray_logs_when_idle", "log-of-a-deleted-topic",
     lambda s: (set_zk(s, topics=(), partitions=()),),
     {"broker": 0, "log": "t-0"}),
    ("metadata_caches_current_when_idle", "stale-cached-leader-epoch",
     lambda s: (set_broker(s, attrs.evolve(s.broker(1), metadata_partitions=(
         MetadataPartitionState(("t", 0), 0, -1),))),),
     {"broker": 1, "partition": "t-0", "metadata_cache": "leader=0 leaderEpoch=-1"}),
    ("metadata_caches_current_when_idle", "partition-missing-from-a-cache",
     lambda s: (set_broker(s, attrs.evolve(s.broker(2), metadata_partitions=())),),
     {"broker": 2, "partition": "t-0", "metadata_cache": "absent"}),
    ("metadata_live_brokers_current_when_idle", "dead-broker-left-in-the-caches",
     lambda s: (set_broker(s, attrs.evolve(s.broker(2), alive=False, partitions=(), metadata_live_brokers=())),),
     {"broker": 0, "metadata_cache_live_brokers": [0, 1, 2], "live_brokers": [0, 1], "dead_listed": [2],
      "live_missing": []}),
    ("reassignment_finishes_when_targets_alive", "reassignment-left-behind",
     lambda s: (set_zk(s, reassign_partitions=((("t", 0), (1, 2)),)),),
     {"partition": "t-0", "target_replicas": [1, 2], "in_reassign_partitions_znode": True,
      "in_controller_context": False}),
    ("leader_elected_when_isr_member_alive", "never-initialised",
     lambda s: (set_zk(s, partitions=()),),
     {"partition": "t-0", "problem": "no leader and ISR were ever initialised"}),
    ("no_dead_replica_in_isr_when_idle", "dead-follower-left-in-the-isr",
     lambda s: (set_broker(s, attrs.evolve(s.broker(1), alive=False, partitions=())),),
     {"partition": "t-0", "isr": [0, 1], "dead_in_isr": [1]}),
    ("leader_not_on_dead_broker_when_idle", "dead-leader-named",
     lambda s: (set_lai(set_broker(s, attrs.evolve(s.broker(0), alive=False, partitions=())),
                        LAI(0, 1, (0,), 1, 1)),),
     {"partition": "t-0", "leader": 0, "live_brokers": [1, 2]}),
    ("single_acting_leader_when_idle", "two-acting-leaders",
     lambda s: (set_broker(s, attrs.evolve(s.broker(1), partitions=(
         HostedPartition(("t", 0), 0, 1, isr=(0, 1), replicas=(0, 1)),))),),
     {"partition": "t-0", "acting_leaders": {"0": 0, "1": 0}}),
    ("controller_knows_every_partition_when_idle", "partition-only-in-zookeeper",
     lambda s: (set_zk(s, topics=(("t", ((0, 1), (1, 2))),)),),
     {"topic": "t", "partitions_in_zookeeper": 2, "partitions_known": 1}),
    ("preferred_election_znode_removed_when_idle", "znode-left-by-a-failed-election",
     lambda s: (set_zk(s, preferred_replica_election=(("t", 0),)),),
     {"preferred_replica_election": ["t-0"], "without_leadership": []}),
    ("isr_members_eligible_when_idle", "shutting-down-follower-in-the-isr",
     lambda s: (set_controller(s, shutting_down_brokers=(1,)),),
     {"partition": "t-0", "isr": [0, 1], "ineligible_in_isr": [1], "shutting_down": [1]}),
    ("no_pending_isr_change_when_idle", "leader-left-with-its-alter-isr-pending",
     lambda s: (set_broker(s, attrs.evolve(s.broker(0), partitions=tuple(
         attrs.evolve(h, pending_isr=(0,)) for h in s.broker(0).partitions))),),
     {"broker": 0, "partition": "t-0", "isr": [0, 1], "pending_isr": [0]}),
    ("reassignment_intent_survives", "reassignment-dropped",
     lambda s: (attrs.evolve(s, budget=attrs.evolve(s.budget, reassignments_submitted=(0,))),),
     {"partition": "t-0", "target_replicas": [1, 2], "assignment": [0, 1]}),
]


QUIESCENCE_SCENARIOS = {"reassignment_intent_survives": REASSIGNING}


def _cases() -> list[Any]:
    return [pytest.param(name, text, build, evidence, id=f"{name}-{case}")
            for name, case, text, build, evidence in VIOLATIONS]


def _quiescence_cases() -> list[Any]:
    return [pytest.param(name, build, evidence, id=f"{name}-{case}") for name, case, build, evidence in QUIESCENCE]


# ---- the registry ---------------------------------------------------------------------------------------


def test_every_registered_property_has_metadata() -> None:
    """all_specs() lists every registered property, sorted by name, each with a kind, a known group and a
    description."""
    specs = all_specs()
    names = [s.name for s in specs]
    assert names == sorted(set(names))
    for spec in specs:
        assert isinstance(spec.kind, PropertyKind)
        assert spec.group in GROUPS
        assert spec.description.strip()
        assert spec.name == spec.name.lower() and " " not in spec.name
    assert {s.group for s in specs} == set(GROUPS)


def test_every_property_is_exercised_here() -> None:
    """Each protocol and sanity property has a hand-made violation below, and each quiescence property an idle
    violating state: a new property must come with its planted bug."""
    by_group: dict[str, set[str]] = {}
    for spec in all_specs():
        by_group.setdefault(spec.group, set()).add(spec.name)
    assert by_group["protocol"] | by_group["sanity"] == {name for name, *_ in VIOLATIONS}
    assert by_group["quiescence"] == {name for name, *_ in QUIESCENCE}


def test_sometimes_properties_are_examples_not_violations() -> None:
    """Properties of the sometimes group are SOMETIMES or ACTION_SOMETIMES, the others ALWAYS or ACTION_ALWAYS."""
    for spec in all_specs():
        assert spec.kind.is_violation == (spec.group != "sometimes")


# ---- violations and silence -------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "text", "build", "evidence"), _cases())
def test_property_reports_evidence_on_a_violating_state(name: str, text: str, build: Builder,
                                                       evidence: dict[str, Any]) -> None:
    """The property returns evidence naming the partition, brokers and states involved."""
    scenario = scenario_of(text)
    found = check_of(name, scenario)(*build(initial_of(scenario)))
    assert found is not None
    for key, value in evidence.items():
        assert found[key] == value


@pytest.mark.parametrize("text", [SCENARIO, RACKS])
def test_no_property_fires_on_the_initial_state(text: str) -> None:
    """Every violation property is silent on a real initial state and on every transition out of it."""
    scenario = scenario_of(text)
    model = model_for(scenario)
    s0 = initial_of(scenario)
    successors = [(a, model.next_state(s0, a)) for a in model.actions(s0)]
    assert successors
    for prop in model.properties():
        if not prop.kind.is_violation:
            continue
        if prop.kind.on_transition:
            assert [prop.check(s0, a, nxt) for a, nxt in successors] == [None] * len(successors), prop.name
        else:
            assert prop.check(s0) is None, prop.name


def test_recovering_partition_with_its_leader_alone_or_no_leader_is_not_reported() -> None:
    """KIP-704's states the controller writes: RECOVERING with ISR [leader] (Election.leaderForOffline, 3.2.0), and
    RECOVERING with NoLeader and the last ISR member kept (ReplicaStateMachine.doRemoveReplicasFromIsr); a
    RECOVERED partition with a larger ISR is not judged."""
    scenario = scenario_of(SCENARIO)
    check = check_of("recovering_partition_isr_is_its_leader", scenario)
    s = initial_of(scenario)
    recovering = LeaderRecoveryState.RECOVERING
    assert check(set_lai(s, LAI(1, 1, (1,), 1, 1, leader_recovery_state=recovering))) is None
    assert check(set_lai(s, LAI(-1, 2, (1,), 2, 1, leader_recovery_state=recovering))) is None
    assert check(set_lai(s, LAI(0, 1, (0, 1), 1, 1))) is None


def test_deletion_completion_evidence_lists_every_remaining_log() -> None:
    """A topic that leaves ZooKeeper while its replicas' logs remain is reported with each such replica."""
    scenario = scenario_of(SCENARIO)
    s = initial_of(scenario)
    s1 = set_broker(s, attrs.evolve(s.broker(0), logs=()))
    found = check_of("deletion_completes_only_when_all_replicas_succeeded", scenario)(
        s, None, set_zk(s1, topics=(), partitions=()))
    assert found == {"topic": "t", "replicas_whose_log_remains": [
        {"replica": "t-0@1", "broker_alive": True, "replica_state_before": "OnlineReplica"}]}


def test_deletion_completion_is_silent_when_every_log_is_gone() -> None:
    """A topic that leaves ZooKeeper after every replica's log was deleted is not a violation."""
    scenario = scenario_of(SCENARIO)
    s = initial_of(scenario)
    done = s
    for broker in (0, 1):
        done = set_broker(done, attrs.evolve(done.broker(broker), logs=(), partitions=()))
    check = check_of("deletion_completes_only_when_all_replicas_succeeded", scenario)
    assert check(s, None, set_zk(done, topics=(), partitions=())) is None


# ---- quiescence -----------------------------------------------------------------------------------------------

WAITING_EVENT = ControllerEvent(EventKind.TopicDeletion)
WAITING_REQUEST = Request(RequestKind.StopReplica, 1, 1, partitions=(("t", 0),), delete_partitions=False)


@pytest.mark.parametrize(("name", "build", "evidence"), _quiescence_cases())
def test_quiescence_property_fires_only_when_the_controller_is_idle(name: str, build: Builder,
                                                                    evidence: dict[str, Any]) -> None:
    """A quiescence property reports its evidence on an idle state, and nothing while an event is queued or a
    request waits in a channel."""
    scenario = scenario_of(QUIESCENCE_SCENARIOS.get(name, SCENARIO))
    check = check_of(name, scenario)
    [idle] = build(initial_of(scenario))
    assert idle.controller.events == () and idle.channels == ()
    found = check(idle)
    assert found is not None
    for key, value in evidence.items():
        assert found[key] == value
    assert check(set_controller(idle, events=(WAITING_EVENT,))) is None
    assert check(attrs.evolve(idle, channels=((2, (WAITING_REQUEST,)),))) is None


def test_ineligible_topic_whose_deletion_began_is_exempt_from_the_deletion_quiescence_property() -> None:
    """A queued topic marked ineligible after its deletion began (a failed StopReplica: Kafka waits on purpose
    for a restart) is not reported."""
    scenario = scenario_of(SCENARIO)
    s = set_controller(initial_of(scenario), topics_to_be_deleted=("t",), topics_ineligible_for_deletion=("t",))
    s = set_replica_state(set_replica_state(s, T0_0, R.OfflineReplica), T0_1, R.ReplicaDeletionSuccessful)
    assert check_of("queued_deletion_finishes_when_brokers_alive", scenario)(s) is None


def test_stale_ineligible_mark_on_a_topic_whose_deletion_never_began_is_reported() -> None:
    """A queued topic marked ineligible whose replicas are all still OnlineReplica, with every broker alive, is
    the stale mark completeDeleteTopic leaves for a re-created topic (correction 1), and is reported."""
    scenario = scenario_of(SCENARIO)
    s = set_controller(initial_of(scenario), topics_to_be_deleted=("t",), topics_ineligible_for_deletion=("t",))
    found = check_of("queued_deletion_finishes_when_brokers_alive", scenario)(s)
    assert found is not None
    assert (found["topic"], found["ineligible"], found["deletion_began"]) == ("t", True, False)


def test_deletion_quiescence_property_ignores_topics_with_a_dead_replica() -> None:
    """A queued topic with a replica on a dead broker may wait; it is not reported."""
    scenario = scenario_of(SCENARIO)
    s = set_controller(initial_of(scenario), topics_to_be_deleted=("t",))
    s = set_broker(s, attrs.evolve(s.broker(1), alive=False))
    assert check_of("queued_deletion_finishes_when_brokers_alive", scenario)(s) is None


# ---- sometimes -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "log", "evidence"),
    [
        ("sometimes_deletion_completes", StepLog(completed_deletions=("t",)), {"topic": "t"}),
        ("sometimes_deletion_retried", StepLog(deletion_retries=("t",)), {"topic": "t"}),
        ("sometimes_leader_reelected", StepLog(elections=((("t", 0), 0, 1),)),
         {"partition": "t-0", "old_leader": 0, "new_leader": 1}),
        ("sometimes_isr_reexpanded", StepLog(isr_updates=((("t", 0), 0, (0,), (0, 1)),)),
         {"partition": "t-0", "leader": 0, "isr": [[0], [0, 1]]}),
        ("sometimes_isr_write_conflict", StepLog(zk_conflicts=(("t", 0),)), {"partition": "t-0"}),
        ("sometimes_reassignment_completes", StepLog(reassignments_completed=(("t", 0),)),
         {"partition": "t-0", "assignment": [0, 1]}),
        ("sometimes_partitions_added", StepLog(partitions_added=(("t", 0),)), {"partition": "t-0"}),
        ("sometimes_partition_addition_reverted", StepLog(additions_reverted=("t",)), {"topic": "t"}),
    ],
)
def test_sometimes_property_finds_its_example_in_the_step_log(name: str, log: StepLog,
                                                             evidence: dict[str, Any]) -> None:
    """A sometimes property reports an example when the step did what it looks for, and nothing otherwise."""
    scenario = scenario_of(SCENARIO)
    s = initial_of(scenario)
    check = check_of(name, scenario)
    assert check(s, None, attrs.evolve(s, log=log)) == evidence
    assert check(s, None, s) is None


def test_first_leader_of_a_new_partition_is_not_a_reelection() -> None:
    """sometimes_leader_reelected ignores a partition that had no leadership before the step."""
    scenario = scenario_of(SCENARIO)
    s = initial_of(scenario)
    before = set_controller(s, leadership=())
    log = StepLog(elections=((("t", 0), -1, 0),))
    assert check_of("sometimes_leader_reelected", scenario)(before, None, attrs.evolve(s, log=log)) is None


# ---- a planted bug ---------------------------------------------------------------------------------------------

PLANTED = "planted-complete-on-first-success"


def _planted(bug: bool) -> Scenario:
    text = shipped_scenarios()[PLANTED].read_text(encoding="utf-8")
    switch = "PLANTED_COMPLETE_DELETION_ON_FIRST_SUCCESS = true"
    assert switch in text
    return load_scenario(text.replace(switch, f"PLANTED_COMPLETE_DELETION_ON_FIRST_SUCCESS = {str(bug).lower()}"))


def test_planted_bug_is_caught_with_a_shortest_trace() -> None:
    """Completing a deletion on the first successful replica violates
    deletion_completes_only_when_all_replicas_succeeded in 5 steps."""
    result = run_bfs(model_for(_planted(bug=True)))
    assert result.outcome is Outcome.VIOLATION
    [violation] = result.violations
    assert violation.property == "deletion_completes_only_when_all_replicas_succeeded"
    assert violation.trace_length == 5
    assert violation.evidence["topic"] == "t"
    assert [r["replica_state_before"] for r in violation.evidence["replicas_whose_log_remains"]] == [
        "ReplicaDeletionStarted"]


def test_without_the_planted_bug_there_is_no_violation() -> None:
    """The same scenario without the bug switch explores completely with no violation."""
    result = run_bfs(model_for(_planted(bug=False)))
    assert result.outcome is Outcome.OK
    assert result.violations == ()


def test_bounced_broker_is_missed_before_2_2_and_detected_from_2_2() -> None:
    """kafka-7235 on Kafka 2.1 leaves a bounced broker hosting nothing in 3 steps; on 2.2 (KIP-380 broker epochs)
    the bounce is handled as a failure and a startup and every live broker hosts its replicas."""
    text = shipped_scenarios()["kafka-7235"].read_text(encoding="utf-8")
    assert 'version = "2.1"' in text
    before = run_bfs(model_for(load_scenario(text)))
    assert before.outcome is Outcome.VIOLATION
    [violation] = before.violations
    assert (violation.property, violation.trace_length) == ("live_brokers_host_their_replicas", 3)
    assert violation.evidence["broker_view"] == "not hosted"
    after = run_bfs(model_for(load_scenario(text.replace('version = "2.1"', 'version = "2.2"'))))
    assert after.outcome is Outcome.OK


def test_reassignment_property_waits_for_followers_that_can_still_catch_up() -> None:
    """reassignment_finishes_when_targets_alive judges nothing while a leader could still add a caught-up follower
    to its ISR (the follower catching up is assumed to happen), nor a partition whose leader is down."""
    scenario = scenario_of(SCENARIO)
    check = check_of("reassignment_finishes_when_targets_alive", scenario)
    s = set_zk(initial_of(scenario), reassign_partitions=((("t", 0), (0, 1)),))
    assert check(s) is not None
    leader = s.broker(0)
    shrunk = tuple(attrs.evolve(h, isr=(0,)) for h in leader.partitions)
    s_lagging = set_broker(s, attrs.evolve(leader, partitions=shrunk))
    assert check(s_lagging) is None  # broker 1 follows at the leader's epoch: it can join the ISR
    no_leader = set_lai(s, LAI(-1, 1, (0,), 1, 1))
    assert check(no_leader) is None


def test_reassignment_property_waits_for_a_target_log_on_a_failed_directory_only() -> None:
    """A target replica whose log is on a failed log directory waits for its broker's restart (not judged); one the
    broker marked offline without having its log (KAFKA-10314: it could not create it) is judged."""
    scenario = scenario_of(SCENARIO)
    check = check_of("reassignment_finishes_when_targets_alive", scenario)
    s = set_zk(initial_of(scenario), reassign_partitions=((("t", 0), (0, 1)),))
    target = s.broker(1)
    assert ("t", 0) in target.logs
    failed_disk = set_broker(s, attrs.evolve(target, offline_logs=(("t", 0),)))
    assert check(failed_disk) is None
    never_created = set_broker(s, attrs.evolve(target, offline_logs=(("t", 0),), logs=()))
    assert check(never_created) is not None


def test_sometimes_topic_recreated_needs_the_admin_recreation() -> None:
    """sometimes_topic_recreated reports a topic created by TopicChange only when an admin re-created it."""
    scenario = scenario_of(SCENARIO)
    s = initial_of(scenario)
    check = check_of("sometimes_topic_recreated", scenario)
    created = attrs.evolve(s, log=StepLog(topics_created=("t",)))
    assert check(s, None, created) is None
    recreated = attrs.evolve(created, budget=attrs.evolve(s.budget, topics_recreated=("t",)))
    assert check(s, None, recreated) == {"topic": "t"}


def test_replica_table_walk_of_a_failover_run_by_a_former_controller() -> None:
    """A controller elected by a failover whose ``/controller`` is deleted before it processes its ``Reelect``
    runs ``onControllerFailover`` as a former controller (2.4: nothing it writes there is fenced); its
    OnlineReplica -> OnlineReplica transitions start from ``initializeReplicaState``'s puts, not from the
    context the failover reset (found by the drawn-scenario machine at 2.4, 14 steps)."""
    scenario = scenario_of(SCENARIO + '[kafka]\nversion = "2.4"\n[bounds]\nbroker_failures = 1\n'
                           'controller_failovers = 1\ncontroller_moves = 1\n')
    model = model_for(scenario)
    check = check_of("replica_transitions_follow_kafka_table", scenario)
    s = model.init_states()[0]
    for label in ("BrokerFailure(broker=1)", "ControllerFailover", "BrokerStartup(broker=1)", "ControllerMove",
                  "ZombieControllerProcessEvent"):
        [action] = [a for a in model.actions(s) if model.describe_action(a) == label]
        prev, s = s, model.next_state(s, action)
        assert s is not None and check(prev, action, s) is None, label
    assert s.log.zombie_step and s.log.controller_initialized and s.zombie is not None
    assert s.log.replica_transitions and not prev.zombie.replica_states
