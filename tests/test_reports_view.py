"""The Kafka model's view of a trace (model/present/view.py), as the reports receive it: step titles that name the
event or request with broker epochs, controller phases, sequence-diagram messages and log lines."""

from __future__ import annotations

import json

import pytest

from explorer.bfs import run_bfs
from explorer.replay import Trace, replay
from kmc import compose


@pytest.fixture(scope="module")
def stale() -> Trace:
    model = compose.model_for(compose.resolve_scenario("stale-deletion-response"))
    [violation] = run_bfs(model).violations
    return replay(model, violation)


def test_the_stale_response_is_visible_in_the_steps(stale: Trace) -> None:
    """Broker 1 answers StopReplica as broker epoch 1 (step 7), restarts as epoch 2 (step 10), and the
    controller's handling of the old answer (step 13) is titled as stale, with the deletion it completes."""
    titles = [s.view["title"] for s in stale.steps]
    assert titles[9] == "Broker 1 restarts and registers /brokers/ids/1 with broker epoch 2"
    assert titles[12].startswith("Controller processes TopicDeletionStopReplicaResponseReceived(broker 1, t-0, NONE, "
                                 "answered by broker epoch 1)")
    assert titles[12].endswith("broker 1 has restarted since (broker epoch 2): the response is stale")
    assert stale.steps[12].view["phase"] == ("TopicDeletionManager.completeReplicaDeletion(t-0@1); "
                                            "completeDeleteTopic(t)")
    response = {"from": "broker 1", "to": "controller", "label": "StopReplica response t-0: NONE (sent by broker "
                "epoch 1)", "kind": "response"}
    assert response in stale.steps[6].view["messages"]


def test_broker_change_phase_and_log_follow_kafka(stale: Trace) -> None:
    """Handling the BrokerChange that sees broker 1 bounced and broker 2 gone names Kafka's callbacks in
    processBrokerChange's order and logs Kafka's controller.log and state-change.log lines."""
    step = stale.steps[10].view
    assert step["phase"] == "BrokerChange: onBrokerFailure(1); onBrokerStartup(1); onBrokerFailure(2)"
    lines = [entry["line"] for entry in step["log"]]
    assert "Newly added brokers: , deleted brokers: 2, bounced brokers: 1, all live brokers: 0,1" in lines
    assert ("[Controller epoch=1] Changed state of replica 1 for partition t-0 from ReplicaDeletionStarted to "
            "ReplicaDeletionIneligible") in lines
    sent = [m["label"] for m in step["messages"] if m["kind"] == "request"]
    assert sent[0] == "LeaderAndIsr(controllerEpoch=1, brokerEpoch=2) [t-0 leader=-1 leaderEpoch=3 isr=[1]]"


def test_views_are_plain_json_with_summary_tables(stale: Trace) -> None:
    """Every view survives JSON unchanged; the partition and cluster tables are the summary ones, with broker
    ids as numbers."""
    for view in [stale.initial_view, *(s.view for s in stale.steps)]:
        assert json.loads(json.dumps(view)) == view
    tables = {t["id"]: t for t in stale.initial_view["tables"]}
    assert [t for t, table in tables.items() if table["summary"]] == ["partitions", "cluster"]
    [row] = tables["partitions"]["rows"]
    assert (row["key"], row["cells"]["replicas"], row["cells"]["isr"]) == ("t-0", [0, 1], [0, 1])
    assert [lane["id"] for lane in stale.initial_view["lanes"]] == ["admin", "controller", "ZooKeeper", "broker 0",
                                                                   "broker 1", "broker 2"]


def test_the_former_controllers_state_changes_carry_its_own_epoch() -> None:
    """In kafka-6082 the former controller (epoch 1) creates t-0's replicas after a controller of epoch 2 was
    elected: the step's state-change.log lines carry epoch 1, the epoch of the controller that made them."""
    model = compose.model_for(compose.resolve_scenario("kafka-6082"))
    [violation] = run_bfs(model).violations
    last = replay(model, violation).steps[-1].view
    assert last["actor"] == "former controller"
    changes = [entry["line"] for entry in last["log"] if entry["logger"] == "state-change.log"]
    assert changes and all(line.startswith("[Controller epoch=1] ") for line in changes)
