"""The KRaft model's view of a trace (model/kraft/view.py) as the reports render it: a step table of the
controller's partition registrations, the metadata log and the brokers, and a sequence diagram in which a produce
request is the producer's."""

from __future__ import annotations

import pytest
from reports_fixtures import shipped_document

from explorer.bfs import run_bfs
from explorer.replay import Trace, replay
from kmc import compose
from model.kraft.records import RECOVERING, PartitionChangeRecord
from model.kraft.state import append
from model.kraft.view import state_view
from reports.bundle import bundle_files
from reports.common import step_table

SCENARIO = "kraft-min-isr-lowered-elr"


@pytest.fixture(scope="module")
def trace() -> Trace:
    model = compose.model_for(compose.resolve_scenario(SCENARIO))
    [violation] = run_bfs(model).violations
    return replay(model, violation)


def test_the_step_table_has_a_row_per_step_naming_the_partitions_isr_and_elr(trace: Trace) -> None:
    """One row per state (the initial state, then each step); the last step, broker 0's session expiry, elects
    broker 1 from the ELR: the controller's ISR becomes [1] and the ELR [0], cells the step changed."""
    table = step_table(trace)
    assert [row.number for row in table.rows] == list(range(len(trace.steps) + 1))
    titles = [column.title for column in table.columns]
    isr, elr = titles.index("orders-0 isr"), titles.index("orders-0 elr")
    last = table.rows[-1]
    assert (last.cells[isr], last.cells[elr]) == ("[1]", "[0]")
    assert last.changed[isr] and last.changed[elr]
    assert {"metadata log end offset", "acknowledged (acks=all)", "broker 0 registration",
            "broker 0 image replayed to offset", "broker 0 orders-0 log end offset",
            "broker 0 orders-0 high watermark", "broker 1 orders-0 role"} <= set(titles)
    assert last.cells[titles.index("broker 0 registration")] == "fenced"


def test_the_html_and_markdown_reports_fill_the_step_table() -> None:
    """Both reports show the step table's ISR and ELR columns, with a row for each of the trace's 6 steps."""
    files = bundle_files(shipped_document(SCENARIO), ("json", "html", "md"))
    html = files["report.html"]
    steps = html[html.index("<h3>Step table</h3>"):html.index("Sequence diagram")]
    assert "<th>isr</th>" in steps and "<th>elr</th>" in steps
    assert "SessionExpiry(broker=0)" in steps
    markdown = files["report.md"]
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| \\# | action |"))
    assert "| orders-0 isr | orders-0 elr |" in lines[start]
    end = lines.index("", start)
    assert [line.split(" | ")[0] for line in lines[start + 2:end]] == [f"| {n}" for n in range(7)]


def test_a_produce_is_drawn_from_the_producer_to_the_leader_and_acknowledged(trace: Trace) -> None:
    """Step 5, broker 0 leading with ISR [0] and min.insync.replicas 1, takes the producer's request and its high
    watermark passes the record at once: the ProduceResponse goes back within the step."""
    produce = trace.steps[4].view
    assert produce["actor"] == "producer"
    assert [(m["from"], m["to"], m["label"]) for m in produce["messages"]] == [
        ("producer", "broker 0", "Produce(orders-0, acks=all)"),
        ("broker 0", "producer", "ProduceResponse(orders-0, error=NONE, baseOffset=0)")]


def test_the_leader_recovery_state_shows_only_while_a_partition_is_recovering() -> None:
    """KIP-704: an unclean election leaves the partition RECOVERING; the column appears with it, and a state with
    every partition RECOVERED has no such column."""
    scenario = compose.resolve_scenario(SCENARIO)
    state = compose.model_for(scenario).init_states()[0]
    [partitions, *_] = state_view(scenario, state)["tables"]
    assert "leader_recovery_state" not in [c["id"] for c in partitions["columns"]]
    recovering = append(state, [PartitionChangeRecord(partition=0, leader=1, isr=(1,),
                                                      leader_recovery_state=RECOVERING)])
    [partitions, *_] = state_view(scenario, recovering)["tables"]
    assert partitions["columns"][-1] == {"id": "leader_recovery_state", "title": "leaderRecoveryState"}
    assert partitions["rows"][0]["cells"]["leader_recovery_state"] == "RECOVERING"
