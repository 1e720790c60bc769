"""kmc validate (kmc/commands/validate.py, model/admin/reassignment_json.py): Kafka 2.3.0's rules with Kafka's
sentences, RF consistency, placement properties; exit 0 for a good plan, 1 naming each violation, 2 for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kmc.cli import main
from model.admin.reassignment_json import render_reassignment_json

CURRENT = {("t", 0): (0, 1, 2), ("t", 1): (1, 2, 3), ("t", 2): (2, 3, 0), ("t", 3): (3, 0, 1)}
RACKS = "0:a,1:b,2:c,3:a"


def validate(tmp_path: Path, plan_text: str, *args: str):
    plan = tmp_path / "plan.json"
    plan.write_text(plan_text, encoding="utf-8")
    current = tmp_path / "current.json"
    current.write_text(render_reassignment_json(CURRENT), encoding="utf-8")
    return CliRunner().invoke(main, ["validate", str(plan), "--current", str(current), *args])


def entry(partition, replicas, **extra):
    return {"topic": "t", "partition": partition, "replicas": replicas, **extra}


def doc(*entries):
    return json.dumps({"version": 1, "partitions": list(entries)})


def test_a_good_plan_passes_with_balance_deltas(tmp_path):
    """A plan keeping RF, listed brokers and rack spread exits 0 and reports balance before -> after."""
    result = validate(tmp_path, doc(entry(0, [0, 1, 2])), "--broker-list", "0,1,2,3", "--racks", RACKS)
    assert result.exit_code == 0, result.stdout
    assert "Balance deltas" in result.stdout
    assert result.stdout.endswith("The plan satisfies every check.\n")


KAFKA_RULES = [
    pytest.param('{"version":2,"partitions":[]}',
                 "kafka.admin.AdminOperationException: Not supported version field value 2", id="version"),
    pytest.param(doc({"partition": 0, "replicas": [1]}),
                 "com.fasterxml.jackson.databind.JsonMappingException: No such field exists: `topic`", id="topic"),
    pytest.param(doc(entry("0", [1])),
                 'com.fasterxml.jackson.databind.JsonMappingException: Expected `Int` value, received "0"',
                 id="partition type"),
    pytest.param(doc(entry(0, [0, 1], log_dirs=["any"])),
                 "kafka.common.AdminCommandFailedException: Size of replicas list List(0, 1) is different from "
                 "size of log dirs list List(any) for partition t-0", id="log_dirs length"),
    pytest.param('{"version":1}', "kafka.common.AdminCommandFailedException: Partition reassignment data file is "
                 "empty", id="empty"),
    pytest.param(doc(entry(0, [])), "kafka.common.AdminCommandFailedException: Partition replica list cannot be "
                 "empty", id="empty replicas"),
    pytest.param(doc(entry(0, [0, 1, 2]), entry(0, [1, 2, 3])), "Partition reassignment contains duplicate topic "
                 "partitions: t-0", id="duplicate partition"),
    pytest.param(doc(entry(1, [1, 1, 2])), "Partition replica lists may not contain duplicate entries: t-1 "
                 "contains multiple entries for 1", id="duplicate replica"),
    pytest.param(doc(entry(7, [0, 1, 2])), "The proposed assignment contains non-existent partitions: "
                 "ListBuffer(t-7)", id="unknown partition"),
    pytest.param(doc(entry(0, [0, 1, 9])), "The proposed assignment contains non-existent brokerIDs: 9",
                 id="unknown broker"),
]


@pytest.mark.parametrize(("plan", "sentence"), KAFKA_RULES)
def test_kafka_rules_are_violations_with_kafkas_sentence(tmp_path, plan, sentence):
    """Each of Kafka's syntactic and consistency rules is a violation (exit 1) quoting Kafka's sentence."""
    result = validate(tmp_path, plan, "--broker-list", "0,1,2,3")
    assert result.exit_code == 1
    assert any(line.startswith("VIOLATION kafka_reassignment_rules") and sentence in line
               for line in result.stdout.splitlines()), result.stdout


def test_placement_and_rf_violations_are_each_named(tmp_path):
    """A plan with an RF change, two replicas on rack a and an unlisted broker names each property."""
    plan = doc(entry(0, [0, 3, 1]), entry(1, [1, 2]), entry(2, [2, 3, 7]))
    result = validate(tmp_path, plan, "--broker-list", "0,1,2,3,7", "--racks", RACKS + ",7:b")
    assert result.exit_code == 1
    named = {line.split()[1] + " " + line.split()[2].rstrip(":") for line in result.stdout.splitlines()
             if line.startswith("VIOLATION")}
    assert named == {"rack_spread t-0", "replication_factor_unchanged t", "replication_factor_unchanged t-1"}
    result = validate(tmp_path, plan, "--broker-list", "0,1,2,3", "--racks", RACKS)
    assert "VIOLATION only_listed_brokers t-2: t-2 has replica(s) on unlisted broker(s) 7" in result.stdout


def test_kmc_plan_output_validates(tmp_path):
    """What kmc plan proposes for a decommission passes kmc validate."""
    current = tmp_path / "current.json"
    current.write_text(render_reassignment_json(CURRENT), encoding="utf-8")
    planned = CliRunner().invoke(main, ["plan", "--current", str(current), "--broker-list", "0,1,2",
                                        "--out", str(tmp_path / "runs")])
    assert planned.exit_code == 0, planned.stderr
    [run_dir] = (tmp_path / "runs").iterdir()
    result = CliRunner().invoke(main, ["validate", str(run_dir / "reassignment.json"), "--current", str(current),
                                       "--broker-list", "0,1,2"])
    assert result.exit_code == 0, result.stdout


def test_missing_plan_file_is_bad_input(tmp_path):
    """An unreadable PLAN.json exits 2 with one line naming it."""
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "absent.json")])
    assert result.exit_code == 2
    assert "absent.json" in result.stderr and result.stderr.count("\n") == 1


@pytest.mark.parametrize(("text", "what"), [("not json", "not JSON"), ("[cluster]\nbrokers = [0, 1]\n", "not JSON"),
                                           ("", "not JSON"), ("[1, 2]", "JSON array"), ('"plan"', "JSON string")],
                         ids=["text", "a TOML file", "empty", "an array", "a string"])
def test_a_file_that_is_not_a_plan_is_bad_input(tmp_path, text, what):
    """A file that is no plan at all (not JSON, or JSON that is not an object) is bad input, exit 2 in one
    sentence, as other unreadable inputs are (it was a violation of Kafka's rules, exit 1)."""
    result = validate(tmp_path, text)
    assert result.exit_code == 2, result.output
    assert f"is not a reassignment plan ({what})" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("topic", ["<script>x</script>", "a\x1b[2Jb", "No error has been found.\n"])
def test_a_topic_name_kafka_refuses_is_a_violation_for_validate_and_a_refusal_for_plan(tmp_path, topic):
    """A plan naming a topic Kafka refuses is a violation of Kafka's rules with its sentence, the name
    escaped (it passed every check before); as kmc plan's --current it is refused (exit 2)."""
    plan = json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [0, 1]}]})
    result = validate(tmp_path, plan)
    assert result.exit_code == 1, result.output
    [line, total] = result.stdout.splitlines()
    assert line.startswith("VIOLATION kafka_reassignment_rules topic ") and "InvalidTopicException" in line
    assert line.isprintable() and total == "1 violation(s)."
    current = tmp_path / "current.json"
    current.write_text(plan, encoding="utf-8")
    refused = CliRunner().invoke(main, ["plan", "--current", str(current), "--broker-list", "0,1,2",
                                        "--out", str(tmp_path / "out")])
    assert refused.exit_code == 2, refused.output
    assert "InvalidTopicException" in refused.stderr and refused.stderr.strip().isprintable()
    assert refused.stdout == ""


def test_plan_says_a_json_array_is_not_a_reassignment_json(tmp_path):
    """kmc plan on a JSON array says it is not a reassignment JSON (it said no partition line was found)."""
    current = tmp_path / "current.json"
    current.write_text("[1, 2]", encoding="utf-8")
    result = CliRunner().invoke(main, ["plan", "--current", str(current), "--broker-list", "0,1,2",
                                       "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "is a JSON array, not a reassignment JSON" in result.stderr
