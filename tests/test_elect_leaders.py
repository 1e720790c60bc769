"""KIP-460's ElectLeaders request (Kafka 2.4), stepped by hand against 2.4.0's ``KafkaController.scala``
(``processReplicaLeaderElection``, ``onReplicaElection`` with ``AdminClientTriggered``) and
``PartitionStateMachine.scala`` (``OfflinePartitionLeaderElectionStrategy(allowUnclean = true)``,
``collectUncleanLeaderElectionState``), and finding 4 (``preferred-election-without-leader``) through it."""

from __future__ import annotations

import pytest
from kafka_steps import initial, model_of, partition_state, process, settle, take, zk_lai

from explorer.bfs import run_bfs
from explorer.results import Outcome
from kmc.compose import model_for, resolve_scenario
from model.scenario import ScenarioError, load_scenario, with_version
from model.zk.environment import partition_leader
from model.zk.kafka_model import KafkaControllerModel
from model.zk.state.states import PartitionState
from model.zk.state.values import ClusterState, EventKind

SCENARIO = """
[kafka]
version = "{version}"
[cluster]
brokers = [0, 1]
[[topics]]
name = "t"
replicas = [{replicas}]
elect_leaders = "{kind}"
{created}
[bounds]
broker_failures = 2
isr_changes = 1
controller_failovers = 1
"""


def model(kind: str, replicas: str = "[1, 0]", created: str = "", version: str = "2.4") -> KafkaControllerModel:
    return model_of(SCENARIO.format(kind=kind, replicas=replicas, created=created, version=version))


def elect(m: KafkaControllerModel, s: ClusterState) -> ClusterState:
    kind = "AdminElectUncleanLeaders" if m.scenario.topic("t").elect_leaders == "unclean" else \
        "AdminElectPreferredLeaders"
    s = take(m, s, kind, topic="t")
    assert s.controller.events[-1].kind in (EventKind.ElectPreferredLeaders, EventKind.ElectUncleanLeaders)
    assert s.zk.preferred_replica_election == ()  # the request writes no znode
    return process(m, s)


def response(s: ClusterState) -> str:
    [line] = [msg for msg in s.log.messages if msg.startswith("ElectLeaders response")]
    return line


def lai_of(s: ClusterState) -> tuple[int, int, tuple[int, ...]]:
    lai = zk_lai(s, "t", 0)
    assert lai is not None
    return lai.leader, lai.leader_epoch, lai.isr


def test_preferred_election_not_needed_when_the_preferred_replica_leads() -> None:
    """PREFERRED: a partition whose leader is the first assigned replica is ELECTION_NOT_NEEDED, nothing written."""
    m = model("preferred")
    s0 = initial(m)
    s = elect(m, s0)
    assert response(s) == "ElectLeaders response: t-0: ELECTION_NOT_NEEDED"
    assert s.zk == s0.zk


def test_preferred_election_fails_while_the_preferred_replica_is_down_and_succeeds_once_in_the_isr() -> None:
    """Broker 1 (preferred) dies: leader 0 at epoch 1. ElectLeaders(PREFERRED) then fails
    (PreferredReplicaPartitionLeaderElectionStrategy finds 1 dead: PREFERRED_LEADER_NOT_AVAILABLE); from the state
    where 1 restarted and 0 took it back into the ISR it elects 1 (epoch 2), with no znode written or deleted."""
    m = model("preferred")
    down = settle(m, process(m, take(m, initial(m), "BrokerFailure", 1)))
    assert lai_of(down) == (0, 1, (0,))
    s = elect(m, down)
    assert response(s) == "ElectLeaders response: t-0: PREFERRED_LEADER_NOT_AVAILABLE"
    assert lai_of(s) == (0, 1, (0,))
    up = settle(m, process(m, take(m, down, "BrokerStartup", 1)))
    up = settle(m, take(m, up, partition_leader.EXPAND, 0, "t", partition=0, replica=1))
    assert lai_of(up) == (0, 1, (0, 1))
    s = elect(m, up)
    assert response(s) == "ElectLeaders response: t-0: leader 1"
    assert lai_of(s) == (1, 2, (0, 1))
    assert s.log.preferred_elections_completed == (("t", 0),)


def test_unclean_election_elects_outside_the_isr_without_the_topic_config() -> None:
    """UNCLEAN: leader 0 shrinks the ISR to [0] and dies; the offline election fails (unclean.leader.election.enable
    is false): leader -1, ISR [0]. ElectLeaders(UNCLEAN) runs OfflinePartitionLeaderElectionStrategy(allowUnclean =
    true), which does not read the config: leader 1, ISR [1] (offlinePartitionLeaderElection's unclean branch)."""
    m = model("unclean", replicas="[0, 1]")
    s = take(m, initial(m), partition_leader.SHRINK, 0, "t", partition=0, replica=1)
    s = settle(m, process(m, take(m, settle(m, s), "BrokerFailure", 0)))
    assert lai_of(s) == (-1, 1, (0,))
    s = elect(m, s)
    assert response(s) == "ElectLeaders response: t-0: leader 1"
    assert lai_of(s) == (1, 2, (1,))
    assert any("Unclean leader election: 1 becomes leader of t-0" in msg for msg in s.log.messages)


def test_unclean_election_not_needed_while_the_leader_is_live() -> None:
    m = model("unclean", replicas="[0, 1]")
    s0 = initial(m)
    s = elect(m, s0)
    assert response(s) == "ElectLeaders response: t-0: ELECTION_NOT_NEEDED"
    assert s.zk == s0.zk


@pytest.mark.parametrize("kind", ["preferred", "unclean"])
def test_finding_4_through_elect_leaders_throws_but_leaves_nothing_behind(kind: str) -> None:
    """Finding 4 at 2.4 through ElectLeaders: t-0 on [1] is created while 1 is down (NewPartition, no leadership
    info). processReplicaLeaderElection reads partitionLeadershipInfo(t-0) for either election type and throws
    NoSuchElementException out of the event, before onReplicaElection; the request is never answered. No znode
    names the partition, so the next controller's failover completes (the znode path loops instead)."""
    m = model(kind, replicas="[1]", created='created = "by_admin"')
    s = settle(m, process(m, take(m, initial(m), "BrokerFailure", 1)))
    s = settle(m, take(m, s, "AdminCreateTopic", topic="t"))
    assert partition_state(s, "t", 0) is PartitionState.NewPartition and zk_lai(s, "t", 0) is None
    s = elect(m, s)
    assert [msg for msg in s.log.messages if "NoSuchElementException" in msg] == [
        f"Uncaught error processing event ReplicaLeaderElection([t-0], {kind.upper()}, AdminClientTriggered): "
        "NoSuchElementException: key not found: t-0"]
    assert not [msg for msg in s.log.messages if msg.startswith("ElectLeaders response")]
    s = settle(m, take(m, s, "ControllerFailover"))
    assert s.controller.epoch == 2 and s.controller.events == ()  # completed, no resignation
    assert partition_state(s, "t", 0) is PartitionState.NewPartition


def test_finding_4_holds_at_2_4_through_the_znode_not_through_elect_leaders() -> None:
    """The shipped scenario at 2.4: through /admin/preferred_replica_election (processReplicaLeaderElection with
    ZkTriggered, fetchPendingPreferredReplicaElections) the failover still resigns (5 steps, as on 2.3); with the
    ElectLeaders request instead, the search completes with no violation."""
    scenario = with_version(resolve_scenario("preferred-election-without-leader"), "2.4")
    result = run_bfs(model_for(scenario))
    assert result.outcome is Outcome.VIOLATION
    assert {d.property: d.trace_length for d in result.discoveries}["elected_controller_completes_failover"] == 5
    for kind in ("preferred", "unclean"):
        api = load_scenario(scenario.source.replace("preferred_replica_election = true", f'elect_leaders = "{kind}"'))
        result = run_bfs(model_for(api))
        assert (result.outcome, result.stats.distinct, result.stats.generated) == (Outcome.OK, 981, 2068)


def test_elect_leaders_is_refused_below_2_4() -> None:
    with pytest.raises(ScenarioError, match=r"^topic 't' sets elect_leaders, the ElectLeaders request Kafka has "
                                            r"from 2\.4 \(KIP-460\); set \[kafka\] version to \"2\.4\" or later"):
        model("preferred", version="2.3")


def test_elect_leaders_takes_an_election_type() -> None:
    with pytest.raises(ScenarioError, match="elect_leaders = 'both' is not an election type"):
        model("both")
