"""kmc plan (model/admin/reassignment_plan.py, kmc/commands/plan.py): the operator's use cases give valid,
minimal, deterministic plans; an impossible request is one sentence from the unsat core."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kmc.cli import main
from model.admin.assignment import BrokerMetadata, assign_replicas_to_brokers
from model.admin.placement import Cluster, check_balance, check_hard, load_counts
from model.admin.reassignment_json import render_reassignment_json
from model.admin.reassignment_plan import PlanRequest, moves_lower_bound, plan_reassignment

RACKS = {0: "a", 1: "b", 2: "c", 3: "a", 4: "b", 5: "c", 6: "a", 7: "b", 8: "c"}


def kafka_placement(brokers, partitions, rf, racks=None, topic="orders"):
    """Kafka's own assignment of a topic (start index 0), as a placement."""
    metadata = [BrokerMetadata(b, racks[b] if racks else None) for b in brokers]
    return {(topic, p): r for p, r in assign_replicas_to_brokers(metadata, partitions, rf, fixed_start_index=0).items()}


def assert_valid(plan, current, cluster, rf=None):
    rfs = {tp: rf or len(reps) for tp, reps in current.items()}
    assert all(not vs for vs in check_hard(plan.proposed, cluster, rfs, rf is not None).values())
    loads = load_counts(plan.proposed, cluster)
    assert not check_balance(loads.replicas, plan.replica_bounds, "r", "replicas")
    assert not check_balance(loads.leaders, plan.leader_bounds, "l", "leaders")
    moved = sum(1 for tp in current for b in plan.proposed[tp] if b not in current[tp])
    assert moved == plan.moves >= moves_lower_bound(current, rfs, cluster, plan.replica_bounds)


def test_decommission_moves_only_the_removed_brokers_replicas():
    """Removing broker 5 of six (two per rack): every replica it held moves, to its rack-mate 2, and nothing
    else moves (the counting lower bound is met)."""
    current = kafka_placement(range(6), 12, 3, RACKS)
    cluster = Cluster((0, 1, 2, 3, 4), {b: RACKS[b] for b in range(5)})
    plan = plan_reassignment(PlanRequest(current, cluster))
    assert_valid(plan, current, cluster)
    on_5 = sum(5 in reps for reps in current.values())
    assert plan.moves == plan.moves_lower_bound == on_5 == 6
    assert all(5 not in reps for reps in plan.proposed.values())


def test_adding_brokers_fills_them_to_the_balance_floor():
    """Adding brokers 6, 7, 8 (one per rack) to six: each new broker reaches its floor and the moves equal
    the counting lower bound (what the new brokers must receive)."""
    current = kafka_placement(range(6), 18, 3, RACKS)
    cluster = Cluster(range(9), RACKS)
    plan = plan_reassignment(PlanRequest(current, cluster))
    assert_valid(plan, current, cluster)
    loads = load_counts(plan.proposed, cluster)
    assert [loads.replicas[b] for b in (6, 7, 8)] == [6, 6, 6]
    assert plan.moves == plan.moves_lower_bound == 18


def test_raising_the_replication_factor_adds_one_replica_per_partition():
    """RF 2 -> 3 on three racks: each partition gains exactly one replica, on the rack it lacked."""
    current = kafka_placement(range(6), 6, 2, RACKS)
    cluster = Cluster(range(6), {b: RACKS[b] for b in range(6)})
    plan = plan_reassignment(PlanRequest(current, cluster, replication_factor=3))
    assert_valid(plan, current, cluster, rf=3)
    assert plan.moves == 6
    assert all(set(current[tp]) < set(plan.proposed[tp]) for tp in current)


def test_rack_violations_are_fixed_with_one_move_each():
    """Two partitions with two replicas on rack a are fixed by moving one replica each; a partition that
    already spans three racks keeps its replicas and leader."""
    cluster = Cluster(range(6), {b: RACKS[b] for b in range(6)})
    current = {("t", 0): (0, 3, 1), ("t", 1): (3, 0, 2), ("t", 2): (1, 2, 0), ("t", 3): (4, 5, 3),
               ("t", 4): (5, 0, 4), ("t", 5): (2, 4, 3)}
    plan = plan_reassignment(PlanRequest(current, cluster, balance_slack=1))
    assert_valid(plan, current, cluster)
    assert plan.moves == 2
    assert plan.proposed[("t", 2)] == (1, 2, 0)


def run_plan(tmp_path: Path, current: dict, *args: str):
    path = tmp_path / "current.json"
    path.write_text(render_reassignment_json(current), encoding="utf-8")
    return CliRunner().invoke(main, ["plan", "--current", str(path), "--out", str(tmp_path / "runs"), *args])


def test_cli_prints_kafka_headings_and_writes_proposal_and_rollback(tmp_path):
    """The output is Kafka's two headings, each followed by one line of version-1 JSON of the changed
    partitions; the run directory holds the proposal and the rollback."""
    current = kafka_placement(range(6), 12, 3, RACKS)
    result = run_plan(tmp_path, current, "--broker-list", "0,1,2,3,4", "--racks", "0:a,1:b,2:c,3:a,4:b")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Current partition replica assignment"
    assert lines[2:4] == ["", "Proposed partition reassignment configuration"]
    rollback, proposal = json.loads(lines[1]), json.loads(lines[4])
    assert proposal["version"] == 1
    assert next(list(p) for p in proposal["partitions"]) == ["topic", "partition", "replicas", "log_dirs"]
    assert {p["partition"] for p in proposal["partitions"]} == {p for (_, p), r in current.items() if 5 in r}
    assert {p["partition"] for p in rollback["partitions"]} == {p["partition"] for p in proposal["partitions"]}
    [run_dir] = (tmp_path / "runs").iterdir()
    assert json.loads((run_dir / "reassignment.json").read_text()) == proposal
    assert json.loads((run_dir / "rollback.json").read_text()) == rollback
    assert "Replica movements: 6" in result.stderr


def test_cli_same_input_same_bytes(tmp_path):
    """Two runs on the same input print the same bytes (uneven racks, 3 topics)."""
    current = {**kafka_placement(range(7), 14, 3, {**RACKS, 6: "a"}, "a"),
               **kafka_placement(range(7), 7, 2, {**RACKS, 6: "a"}, "b")}
    args = ("--broker-list", "0,1,2,3,4,6", "--racks", "0:a,1:b,2:c,3:a,4:b,6:a")
    first, second = run_plan(tmp_path, current, *args), run_plan(tmp_path, current, *args)
    assert first.exit_code == second.exit_code == 0
    assert first.stdout == second.stdout


def test_cli_unsatisfiable_request_is_one_sentence_from_the_core(tmp_path):
    """RF 4 under strict rack awareness with brokers on 3 racks exits 2 with the core's sentence."""
    current = kafka_placement(range(6), 3, 3, RACKS)
    result = run_plan(tmp_path, current, "--broker-list", "0,1,2,3,4,5",
                      "--racks", "0:a,1:b,2:c,3:a,4:b,5:c", "--replication-factor", "4")
    assert result.exit_code == 2
    assert result.stderr == ("kmc: RF 4 needs 4 racks under strict rack awareness but only 3 racks have brokers; "
                             "use --rack-mode distribution.\n")


@pytest.mark.parametrize(("args", "fragment"), [
    pytest.param(["--broker-list", "0,x"], "'x' is not a broker id", id="broker id"),
    pytest.param(["--broker-list", "0,1", "--racks", "0:a"], "no rack for broker(s) 1", id="partial racks"),
])
def test_cli_bad_input_exits_2(tmp_path, args, fragment):
    """Malformed cluster arguments exit 2 with one line naming the value."""
    result = run_plan(tmp_path, kafka_placement(range(2), 2, 2), *args)
    assert result.exit_code == 2
    assert fragment in result.stderr and result.stderr.count("\n") == 1


def test_cli_reads_kafka_topics_describe_output(tmp_path):
    """kafka-topics --describe output (2.3 layout) is read as the current placement."""
    path = tmp_path / "describe.txt"
    path.write_text("Topic:t\tPartitionCount:2\tReplicationFactor:2\tConfigs:\n"
                    "\tTopic: t\tPartition: 0\tLeader: 0\tReplicas: 0,1\tIsr: 0,1\n"
                    "\tTopic: t\tPartition: 1\tLeader: 1\tReplicas: 1,0\tIsr: 1,0\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["plan", "--current", str(path), "--broker-list", "1,2",
                                       "--out", str(tmp_path / "runs")])
    assert result.exit_code == 0, result.stderr
    proposal = json.loads(result.stdout.splitlines()[4])
    assert sorted(sorted(p["replicas"]) for p in proposal["partitions"]) == [[1, 2], [1, 2]]
