"""The Kafka model's view of a trace (model/present/view.py), as the reports receive it: step titles that name the
event or request with broker epochs, controller phases, sequence-diagram messages and log lines."""

from __future__ import annotations

import json
import re
from collections import deque
from typing import Any

import pytest

from explorer.bfs import run_bfs
from explorer.replay import Trace, replay
from kmc import compose
from model.zk.actions import ActionKind
from reports.common import deliveries, sequence
from reports.html import sequence_diagram, sequence_svg


@pytest.fixture(scope="module")
def stale() -> Trace:
    model = compose.model_for(compose.resolve_scenario("stale-deletion-response"))
    [violation] = run_bfs(model).violations
    return replay(model, violation)


def test_the_stale_response_is_visible_in_the_steps(stale: Trace) -> None:
    """Broker 1 answers StopReplica as broker epoch 1 (step 7), restarts as epoch 2 (step 9), and the
    controller's handling of the old answer (step 13) is titled as stale, with the deletion it completes."""
    titles = [s.view["title"] for s in stale.steps]
    assert titles[8] == "Broker 1 restarts and registers /brokers/ids/1 with broker epoch 2"
    assert titles[12].startswith("Controller processes TopicDeletionStopReplicaResponseReceived(broker 1, t-0, NONE, "
                                 "answered by broker epoch 1)")
    assert titles[12].endswith("broker 1 has restarted since (broker epoch 2): the response is stale")
    assert stale.steps[12].view["phase"] == ("TopicDeletionManager.completeReplicaDeletion(t-0@1); "
                                            "completeDeleteTopic(t)")
    response = {"from": "broker 1", "to": "controller", "label": "StopReplica response t-0: NONE (sent by broker "
                "epoch 1)", "kind": "response"}
    assert response in [{k: m[k] for k in response} for m in stale.steps[6].view["messages"]]


def test_broker_change_phase_and_log_follow_kafka(stale: Trace) -> None:
    """Handling the BrokerChange that sees broker 1 bounced and broker 2 gone names Kafka's callbacks in
    processBrokerChange's order and logs Kafka's controller.log and state-change.log lines."""
    step = stale.steps[9].view
    assert step["phase"] == "BrokerChange: onBrokerFailure(1); onBrokerStartup(1); onBrokerFailure(2)"
    lines = [entry["line"] for entry in step["log"]]
    assert "Newly added brokers: , deleted brokers: 2, bounced brokers: 1, all live brokers: 0,1" in lines
    assert ("[Controller epoch=1] Changed state of replica 1 for partition t-0 from ReplicaDeletionStarted to "
            "ReplicaDeletionIneligible") in lines
    sent = [m["label"] for m in step["messages"] if m["kind"] == "request" and m["label"].startswith("LeaderAndIsr")]
    assert sent[0] == "LeaderAndIsr(controllerEpoch=1, brokerEpoch=2) [t-0 leader=-1 leaderEpoch=2 isr=[1]]"


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


def test_each_queued_response_is_joined_to_the_step_that_processes_it(stale: Trace) -> None:
    """Broker 1's StopReplica response of step 7 is the item the controller takes off its queue in
    step 13: the view names the item on both messages, the reports join them, and the sequence
    diagram draws an arrow from the response to step 13; each request is joined to the step its broker
    handles it in."""
    queued = next(m for m in stale.steps[6].view["messages"] if m["kind"] == "response")
    processing = stale.steps[12].view["messages"][0]
    assert queued["queued"] == processing["dequeued"] == (
        "controller event queue: TopicDeletionStopReplicaResponseReceived(broker 1, t-0, NONE, answered by broker "
        "epoch 1)")
    joined = deliveries(sequence(stale)[1])
    assert joined[(7, stale.steps[6].view["messages"].index(queued))] == (13, 0)
    for (sent, _), (handled, index) in joined.items():
        assert sent < handled and "dequeued" in stale.steps[handled - 1].view["messages"][index]
    diagram = sequence_diagram(stale)
    assert diagram is not None
    assert any(d.full.startswith("queued in step 7, processed in step 13: ") for d in diagram.deliveries)
    assert 'class="delivery"' in sequence_svg(stale)


def test_values_a_kafka_engineer_stops_at_are_explained(stale: Trace) -> None:
    """One line each: leader -1 (a topic being deleted), a leader epoch that jumps by two, leader -2 in
    an UpdateMetadata (LeaderDuringDelete: the partition leaves the metadata cache), and a partition of
    a LeaderAndIsr that broker 1 does not take (no leader to follow)."""
    notes = {n: s.view.get("notes", []) for n, s in enumerate(stale.steps, 1)}
    assert ("t-0: leader -1 is LeaderAndIsr.NoLeader, no leader: its topic is being deleted, and taking its "
            "replicas offline (OfflineReplica) removed the leader.") in notes[2]
    assert any(note.startswith("t-0: the leader epoch jumps from 0 to 2: ") for note in notes[2])
    assert any("leader -2 in an UpdateMetadata is LeaderAndIsr.LeaderDuringDelete" in note and "removes the "
               "partition from its metadata cache" in note for note in notes[10])
    assert ("t-0: broker 1 did not take leader epoch 2 from this LeaderAndIsr: the request names no leader (-1), "
            "so it only creates its replica and log.") in notes[11]
    assert not any("LeaderDuringDelete" in note for note in notes[11])  # said where the request was sent
    assert all(isinstance(note, str) for step in notes.values() for note in step)


def _first_refusal(scenario: str, kind: ActionKind) -> tuple[Any, tuple[Any, Any, Any]]:
    """The first step, breadth first, of an action of ``kind`` in which a broker refuses a request."""
    model = compose.model_for(compose.resolve_scenario(scenario))
    queue = deque(model.init_states())
    for _ in range(20_000):
        state = queue.popleft()
        for action in model.actions(state):
            after = model.next_state(state, action)
            if after is not None and after.log.rejection and action.kind is kind:
                return model, (state, action, after)
            if after is not None:
                queue.append(after)
    raise AssertionError(f"no refusal in {scenario}")


@pytest.mark.parametrize(("scenario", "kind", "note"), [
    ("controlled-shutdown", ActionKind.BrokerApplyRequest,
     "Broker 0 did not accept this LeaderAndIsr: it was sent for broker epoch 1, an earlier incarnation of the "
     "broker, which has restarted since (broker epoch 2; STALE_BROKER_EPOCH, KIP-380)."),
    ("controller-failover", ActionKind.BrokerStartup,
     "Broker 0 did not accept the UpdateMetadata at the head of its channel: it was sent for broker epoch 1, an "
     "earlier incarnation of the broker, which has restarted since (broker epoch 2; STALE_BROKER_EPOCH, KIP-380)."),
], ids=["LeaderAndIsr", "UpdateMetadata applied with a restart"])
def test_why_a_broker_refused_a_request_is_explained(scenario: str, kind: ActionKind, note: str) -> None:
    """A request meant for an earlier incarnation of a broker (broker 0 bounced) is refused, and the step's
    note says why in Kafka's terms (STALE_BROKER_EPOCH, KIP-380) with both epochs, also when the refused
    UpdateMetadata is applied within the broker's restart."""
    model, (before, action, after) = _first_refusal(scenario, kind)
    assert model.state_view(after, before, action)["notes"] == [note]


def test_versions_before_2_2_show_no_broker_epochs() -> None:
    """Kafka 2.1 has no broker epochs (KIP-380 came with 2.2): kafka-7235's trace names none, in titles,
    messages, queued requests or tables; the cluster table lists broker ids."""
    model = compose.model_for(compose.resolve_scenario("kafka-7235"))
    [violation] = run_bfs(model).violations
    trace = replay(model, violation)
    views = [trace.initial_view, *(s.view for s in trace.steps)]
    text = json.dumps(views)
    assert "brokerEpoch" not in text and not re.search(r"broker epoch \d", text)
    assert "registered in ZooKeeper (broker: epoch)" not in text and '"broker_epoch"' not in text
    cluster = {t["id"]: t for t in trace.initial_view["tables"]}["cluster"]
    assert cluster["rows"][0]["cells"]["registered"] == [0, 1]


def test_changes_name_no_broker_epoch_before_kafka_2_2() -> None:
    """A 2.1 trace (kafka-7235: a bounce the controller cannot notice) names no broker epoch in what each step
    changed, as its views do not: broker epochs came with KIP-380 in 2.2."""
    model = compose.model_for(compose.resolve_scenario("kafka-7235"))
    assert model.scenario.version < (2, 2)
    [violation] = run_bfs(model).violations
    changes = [change for step in replay(model, violation).steps for change in step.changes]
    assert any("registered" in change for change in changes)
    assert not [change for change in changes if ("epoch" in change and "brokers/ids" in change) or "alive (" in change]
