"""``kmc assign`` (kmc/commands/assign.py): output shapes, and bad input refused with exit status 2."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from explorer.results import Outcome
from kmc.commands.assign import assign


def run(*args: str):
    return CliRunner().invoke(assign, list(args))


FIVE_BROKERS = ("--broker-list", "0,1,2,3,4", "--partitions", "10", "--replication-factor", "3")


def test_fixed_draw_prints_kafka_reassignment_json():
    """With --start-index the output is reassignment JSON: version 1, partitions by id, log dirs "any"."""
    result = run(*FIVE_BROKERS, "--start-index", "0", "--topic", "orders")
    assert result.exit_code == Outcome.OK.exit_code
    doc = json.loads(result.stdout)
    assert set(doc) == {"version", "partitions"}
    assert doc["version"] == 1
    assert [p["partition"] for p in doc["partitions"]] == list(range(10))
    assert doc["partitions"][0] == {
        "topic": "orders",
        "partition": 0,
        "replicas": [0, 1, 2],
        "log_dirs": ["any"] * 3,
    }
    assert doc["partitions"][5]["replicas"] == [0, 2, 3]
    assert all(list(p) == ["topic", "partition", "replicas", "log_dirs"] for p in doc["partitions"])


def test_fixed_draw_topic_defaults_to_topic():
    """Without --topic the reassignment JSON names the topic "topic"."""
    doc = json.loads(run(*FIVE_BROKERS, "--start-index", "0").stdout)
    assert {p["topic"] for p in doc["partitions"]} == {"topic"}


def test_replica_shift_and_start_partition_id_reach_the_assignment():
    """--replica-shift and --start-partition-id reach Kafka's algorithm (seed's [1,2,0,4,3], shift 3)."""
    result = run(
        "--broker-list", "1,2,0,4,3", "--partitions", "2", "--replication-factor", "3",
        "--start-index", "0", "--replica-shift", "3", "--start-partition-id", "5",
    )  # fmt: skip
    doc = json.loads(result.stdout)
    # p5 starts a new round: shift 3 + 1 = 4, offsets 1 and 2 -> [1, 2, 0]; p6 -> [2, 0, 4].
    assert [(p["partition"], p["replicas"]) for p in doc["partitions"]] == [(5, [1, 2, 0]), (6, [2, 0, 4])]


def test_fixed_draw_table_shows_leader_and_racks():
    """--format table lists partition, replicas, leader and, with racks, the replicas' racks."""
    result = run(
        "--broker-list", "0,1,2,3,4,5", "--racks", "0:r1,1:r3,2:r3,3:r2,4:r2,5:r1",
        "--partitions", "7", "--replication-factor", "3", "--start-index", "0", "--format", "table",
    )  # fmt: skip
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["partition", "replicas", "leader", "racks"]
    assert lines[1].split() == ["0", "0,3,1", "0", "r1,r2,r3"]
    assert lines[7].split() == ["6", "0,4,2", "0", "r1,r2,r3"]


def test_without_start_index_summarises_every_draw_as_json():
    """Without --start-index the JSON summary covers n × n draws: per broker min/max replicas and leaders."""
    result = run(*FIVE_BROKERS)
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["draws"] == 25
    assert doc["racks"] == []
    assert doc["brokers"][0] == {
        "broker": 0, "replicas_min": 6, "replicas_max": 6, "leaders_min": 2, "leaders_max": 2,
    }  # fmt: skip
    assert (doc["num_partitions"], doc["replication_factor"], doc["broker_list"]) == (10, 3, [0, 1, 2, 3, 4])


def test_summary_reports_racks_when_given():
    """With racks the summary has per-rack entries; a broker alone on its rack holds every partition."""
    result = run(
        "--broker-list", "0,1,2,3,4", "--racks", "0:a,1:a,2:b,3:b,4:c", "--partitions", "10",
        "--replication-factor", "3",
    )  # fmt: skip
    doc = json.loads(result.stdout)
    assert [r["rack"] for r in doc["racks"]] == ["a", "b", "c"]
    assert doc["brokers"][4]["replicas_min"] == doc["brokers"][4]["replicas_max"] == 10


def test_summary_table_names_the_draw_count():
    """The summary table starts with the number of draws and has a broker table."""
    result = run(*FIVE_BROKERS, "--format", "table")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("25 equally likely draws")
    assert lines[2].split()[0] == "broker"


KAFKA_REFUSALS = [
    pytest.param(
        ["--broker-list", "0,1,2", "--partitions", "3", "--replication-factor", "4"],
        "org.apache.kafka.common.errors.InvalidReplicationFactorException: "
        "Replication factor: 4 larger than available brokers: 3.",
        id="rf > brokers",
    ),
    pytest.param(
        ["--broker-list", "0,1,2", "--partitions", "1", "--replication-factor", "40000", "--start-index", "0"],
        "org.apache.kafka.common.errors.InvalidReplicationFactorException: "
        "Replication factor: 40000 larger than available brokers: 3.",
        id="rf beyond a Short: Kafka's check comes first",
    ),
    pytest.param(
        ["--broker-list", "0,1,2", "--partitions", "400000", "--replication-factor", "4", "--start-index", "0"],
        "org.apache.kafka.common.errors.InvalidReplicationFactorException: "
        "Replication factor: 4 larger than available brokers: 3.",
        id="rf > brokers before kmc's size bound",
    ),
    pytest.param(
        ["--broker-list", "0,1,2", "--partitions", "0", "--replication-factor", "1", "--start-index", "0"],
        "org.apache.kafka.common.errors.InvalidPartitionsException: "
        "Number of partitions must be larger than 0.",
        id="0 partitions",
    ),
    pytest.param(
        ["--broker-list", "0,1,2", "--partitions", "3", "--replication-factor", "0"],
        "org.apache.kafka.common.errors.InvalidReplicationFactorException: "
        "Replication factor must be larger than 0.",
        id="rf 0",
    ),
    pytest.param(
        ["--broker-list", "0,1,2", "--racks", "0:r1,1:r2", "--partitions", "3", "--replication-factor", "2"],
        "kafka.admin.AdminOperationException: Not all brokers have rack information for replica rack aware "
        "assignment.",
        id="partial racks",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("args", "line"), KAFKA_REFUSALS)
def test_kafka_refusals_exit_2_with_kafka_class_and_message(args, line):
    """Arguments Kafka refuses exit with status 2 and one stderr line naming Kafka's class and message."""
    result = run(*args)
    assert result.exit_code == Outcome.BAD_INPUT.exit_code == 2
    assert result.stderr == f"kmc assign: {line}\n"
    assert result.stdout == ""


BROKERS_012 = ["--broker-list", "0,1,2"]
MALFORMED = [
    pytest.param(["--broker-list", "0,,x"], "'' is not a broker id", id="empty id"),
    pytest.param(["--broker-list", "0,1,x"], "'x' is not a broker id", id="non-numeric id"),
    pytest.param(["--broker-list", "0,-1"], "'-1' is not a broker id", id="negative id"),
    pytest.param(["--broker-list", "0,1,1"], "broker 1 is listed twice", id="duplicate id"),
    pytest.param([*BROKERS_012, "--racks", "0:r1,7:r2"], "broker 7 is not in --broker-list", id="unknown"),
    pytest.param([*BROKERS_012, "--racks", "0:r1,1"], "'1' is not BROKER:RACK", id="rack missing"),
    pytest.param([*BROKERS_012, "--racks", "0:r1,0:r2"], "broker 0 is given a rack twice", id="rack twice"),
    pytest.param([*BROKERS_012, "--start-index", "-1"], "--start-index -1 must be >= 0", id="negative start"),
    pytest.param([*BROKERS_012, "--replica-shift", "1"], "--replica-shift 1 needs --start-index", id="shift"),
    pytest.param(
        [*BROKERS_012, "--start-index", "0", "--replica-shift", "-2"], "--replica-shift -2 must be >= 0",
        id="negative shift",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("args", "fragment"), MALFORMED)
def test_malformed_input_exits_2_naming_the_value(args, fragment):
    """Malformed input exits with status 2 and one stderr line naming the offending value, no traceback."""
    defaults = {"--partitions": "3", "--replication-factor": "2"}
    given = dict(zip(args[::2], args[1::2], strict=True))
    result = run(*args, *[x for k, v in defaults.items() if k not in given for x in (k, v)])
    assert result.exit_code == 2
    assert fragment in result.stderr
    assert result.stderr.startswith("kmc assign: ") and result.stderr.count("\n") == 1
    assert result.stdout == ""
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(
            ["--broker-list", "0,1", "--partitions", "abc", "--replication-factor", "1"], id="not an integer"
        ),
        pytest.param(["--broker-list", "0,1", "--replication-factor", "1"], id="missing option"),
        pytest.param(
            ["--broker-list", "0,1", "--partitions", "1", "--replication-factor", "1", "--format", "xml"],
            id="unknown format",
        ),
    ],
)
def test_usage_errors_are_one_line_with_exit_2(args):
    """Click's own usage errors also exit 2 with a single stderr line."""
    result = run(*args)
    assert result.exit_code == 2
    assert result.stderr.startswith("kmc assign: ") and result.stderr.count("\n") == 1
