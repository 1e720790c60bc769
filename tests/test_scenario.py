"""Scenario files: validation of bad input (one sentence naming the key or value), defaults, the
assignment computed by Kafka's algorithm, the digest, and how the CLI reports bad scenarios."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from invariants.registry import select
from kmc.cli import main
from model.admin.assignment import BrokerMetadata, assign_replicas_to_brokers
from model.scenario import Bounds, ScenarioError, load_scenario, load_scenario_file

BROKERS = "[cluster]\nbrokers = [0, 1, 2]\n"
TOPIC = '[[topics]]\nname = "t"\nreplicas = [[0, 1]]\n'
GOOD = BROKERS + TOPIC

# (id, TOML text, fragments the message must contain: the offending key or value, or Kafka's message)
BAD_SCENARIOS = [
    ("unknown-top-level-key", "colour = 'red'\n" + GOOD, ["'colour'", "top level"]),
    ("unknown-cluster-key", "[cluster]\nbrokers = [0, 1]\nzookeeper = 'zk:2181'\n" + TOPIC,
     ["'zookeeper'", "[cluster]"]),
    ("unknown-kafka-key", GOOD + "[kafka]\nlog_retention_hours = 1\n",
     ["'log_retention_hours'", "[kafka]"]),
    ("unknown-bounds-key", GOOD + "[bounds]\ncontroller_failures = 1\n", ["'controller_failures'", "[bounds]"]),
    ("unknown-check-key", GOOD + "[check]\ninvariants = ['leader_in_isr']\n", ["'invariants'", "[check]"]),
    ("unknown-topic-key", BROKERS + '[[topics]]\nname = "t"\nreplicas = [[0, 1]]\nretention_ms = 1\n',
     ["'retention_ms'", "[[topics]]"]),
    ("unknown-bug", GOOD + "[bugs]\nKAFKA_9999 = true\n", ["KAFKA_9999", "[bugs]"]),
    ("non-bool-bug", GOOD + "[bugs]\nKAFKA_6650 = 'yes'\n", ["KAFKA_6650", "'yes'", "true or false"]),
    ("rf-above-brokers", BROKERS + '[[topics]]\nname = "t"\npartitions = 1\nreplication_factor = 4\n',
     ["'t'", "InvalidReplicationFactorException", "Replication factor: 4 larger than available brokers: 3."]),
    ("rf-above-brokers-before-size-bound", BROKERS + '[[topics]]\nname = "t"\npartitions = 20\n'
     'replication_factor = 5\n',
     ["'t'", "InvalidReplicationFactorException", "Replication factor: 5 larger than available brokers: 3."]),
    ("zero-partitions", BROKERS + '[[topics]]\nname = "t"\npartitions = 0\nreplication_factor = 1\n',
     ["'t'", "InvalidPartitionsException", "Number of partitions must be larger than 0."]),
    ("partial-racks", '[cluster]\nbrokers = [{ id = 0, rack = "r1" }, { id = 1 }]\n'
     '[[topics]]\nname = "t"\npartitions = 1\nreplication_factor = 1\n',
     ["brokers 1 ", "AdminOperationException",
      "Not all brokers have rack information for replica rack aware assignment."]),
    ("duplicate-broker-id", "[cluster]\nbrokers = [0, 1, 0]\n" + TOPIC, ["broker id 0", "twice"]),
    ("duplicate-topic", GOOD + TOPIC, ["'t'", "twice"]),
    ("replicas-duplicate-broker", BROKERS + '[[topics]]\nname = "t"\nreplicas = [[0, 0]]\n',
     ["'t'", "InvalidReplicaAssignmentException", "Duplicate replica assignment found"]),
    ("replicas-unknown-broker", BROKERS + '[[topics]]\nname = "t"\nreplicas = [[0, 7]]\n',
     ["'t'", "BrokerNotAvailableException", "Specified brokers: 0, 7"]),
    ("replicas-inconsistent-rf", BROKERS + '[[topics]]\nname = "t"\nreplicas = [[0, 1], [2]]\n',
     ["'t'", "InvalidReplicaAssignmentException", "same number of replicas"]),
    ("replicas-and-partitions", BROKERS + '[[topics]]\nname = "t"\nreplicas = [[0, 1]]\npartitions = 1\n',
     ["'t'", "both replicas and partitions"]),
    ("version-4.0", GOOD + '[kafka]\nversion = "4.0"\n', ["version", "'4.0'", "1.1, 2.0, 2.1", "3.8, 3.9"]),
    ("version-2.9", GOOD + '[kafka]\nversion = "2.9"\n', ["version", "'2.9'"]),
    ("protocol-above-version", GOOD + '[kafka]\nversion = "2.5"\ninter_broker_protocol_version = "2.6"\n',
     ["inter_broker_protocol_version", "'2.6'", "2.5"]),
    ("api-reassignment-before-2.4",
     GOOD + '[[reassignments]]\ntopic = "t"\npartitions = { 0 = [1, 2] }\nthrough_api = true\n[kafka]\n'
     'version = "2.3"\n', ["[[reassignments]] entry 1", "through_api", "KIP-455", "\"2.4\""]),
    ("invalid-toml", "name = \n", ["not valid TOML", "line 1"]),
    ("bad-created", BROKERS + '[[topics]]\nname = "t"\nreplicas = [[0]]\ncreated = "later"\n',
     ["'t'", "created", "'later'"]),
    ("negative-broker-failures", GOOD + "[bounds]\nbroker_failures = -1\n", ["[bounds]", "broker_failures = -1"]),
    ("negative-stop-replica-errors", GOOD + "[bounds]\nstop_replica_errors = -2\n",
     ["[bounds]", "stop_replica_errors = -2"]),
    ("no-topics", BROKERS, ["[[topics]]"]),
    # Kafka's Topic.validate: the name reaches reports and file names only once Kafka would accept it.
    ("topic-name-script", BROKERS + '[[topics]]\nname = "<script>alert(1)</script>"\nreplicas = [[0]]\n',
     ["'<script>alert(1)</script>'", "InvalidTopicException", "contains a character other than ASCII alphanumerics"]),
    ("topic-name-space", BROKERS + '[[topics]]\nname = "bad topic name!"\nreplicas = [[0]]\n',
     ["'bad topic name!'", "InvalidTopicException", "is illegal"]),
    ("topic-name-newline", BROKERS + '[[topics]]\nname = "t\\nNo error has been found."\nreplicas = [[0]]\n',
     ["'t\\nNo error has been found.'", "InvalidTopicException"]),
    ("topic-name-empty", BROKERS + '[[topics]]\nname = ""\nreplicas = [[0]]\n',
     ["InvalidTopicException", "it can't be empty"]),
    ("topic-name-dot", BROKERS + '[[topics]]\nname = "."\nreplicas = [[0]]\n',
     ["'.'", 'Topic name cannot be "." or ".."']),
    ("topic-name-dotdot", BROKERS + '[[topics]]\nname = ".."\nreplicas = [[0]]\n',
     ["'..'", 'Topic name cannot be "." or ".."']),
    ("topic-name-250", BROKERS + f'[[topics]]\nname = "{"x" * 250}"\nreplicas = [[0]]\n',
     ["InvalidTopicException", "it can't be longer than 249 characters"]),
    ("negative-isr-changes", GOOD + "[bounds]\nisr_changes = -1\n", ["[bounds]", "isr_changes = -1"]),
    ("reassignment-unknown-topic", GOOD + '[[reassignments]]\ntopic = "u"\npartitions = { 0 = [1] }\n',
     ["[[reassignments]] entry 1", "'u'"]),
    ("reassignment-topic-not-a-string", GOOD + '[[reassignments]]\ntopic = []\npartitions = { 0 = [1] }\n',
     ["[[reassignments]] entry 1", "topic = []", "quoted string"]),
    ("reassignment-partition-not-ascii", GOOD + '[[reassignments]]\ntopic = "t"\npartitions = { "²" = [1] }\n',
     ["[[reassignments]] entry 1", "'²'"]),
    ("reassignment-unknown-partition", GOOD + '[[reassignments]]\ntopic = "t"\npartitions = { 3 = [1] }\n',
     ["[[reassignments]] entry 1", "'3'", "0 to 0"]),
    ("reassignment-empty-replicas", GOOD + '[[reassignments]]\ntopic = "t"\npartitions = { 0 = [] }\n',
     ["partition 0", "Partition replica list cannot be empty"]),
    ("reassignment-duplicate-broker", GOOD + '[[reassignments]]\ntopic = "t"\npartitions = { 0 = [1, 1] }\n',
     ["partition 0", "may not contain duplicate entries"]),
    ("reassignment-unknown-broker", GOOD + '[[reassignments]]\ntopic = "t"\npartitions = { 0 = [1, 9] }\n',
     ["partition 0", "[9]", "non-existent brokerIDs"]),
    ("add-partitions-not-an-increase", BROKERS + '[[topics]]\nname = "t"\nreplicas = [[0, 1]]\nadd_partitions = 1\n',
     ["'t'", "add_partitions = 1", "can only be increased"]),
    ("recreated-without-deletion", BROKERS + '[[topics]]\nname = "t"\nreplicas = [[0, 1]]\nrecreated_by_admin = true\n',
     ["'t'", "deleted_by_admin = true"]),
    ("reassignment-unknown-key", GOOD + '[[reassignments]]\ntopic = "t"\npartitions = { 0 = [1] }\nthrottle = 1\n',
     ["'throttle'", "[[reassignments]] entry 1"]),
]


@pytest.mark.parametrize(("toml", "fragments"), [pytest.param(t, f, id=i) for i, t, f in BAD_SCENARIOS])
def test_bad_scenario_raises_one_sentence_naming_the_problem(toml: str, fragments: list[str]) -> None:
    """Every bad scenario raises ScenarioError with one line that names the offending key or value."""
    with pytest.raises(ScenarioError) as caught:
        load_scenario(toml)
    message = str(caught.value)
    assert "\n" not in message
    assert message.endswith(".")
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize("names", [None, ["leader_in_isr", "no_such_property"]])
def test_unknown_property_name_is_rejected_by_select(names: list[str] | None) -> None:
    """An unknown property name, in [check] or given directly, raises ScenarioError naming it."""
    scenario = load_scenario(GOOD + "[check]\nproperties = ['leader_in_isr', 'no_such_property']\n")
    with pytest.raises(ScenarioError, match="'no_such_property'"):
        select(scenario, names)


def test_missing_file_raises_scenario_error(tmp_path: Path) -> None:
    """A scenario path that does not exist raises ScenarioError naming the path."""
    missing = tmp_path / "missing.toml"
    with pytest.raises(ScenarioError, match=r"missing\.toml"):
        load_scenario_file(missing)


# ---- defaults -------------------------------------------------------------------------------------


#: The bugs no release up to 2.3 fixed: on by default for every modelled version up to 2.3 (KAFKA_14808 and
#: KAFKA_13972 are in code of 2.4 and 2.6, on from there).
UNFIXED_IN_2_3 = {"KAFKA_9212", "KAFKA_8286", "KAFKA_9866", "KAFKA_9672", "KAFKA_13225", "KAFKA_10314",
                  "KAFKA_14140", "DELETION_DURING_REASSIGNMENT"}


def test_defaults_of_a_minimal_scenario() -> None:
    """Without [kafka], [bounds], [check] and [bugs]: Kafka 2.3, deletion on, unclean off, 1 failure, and only
    the bugs Kafka 2.3 still had."""
    scenario = load_scenario(GOOD, default_name="minimal")
    assert scenario.name == "minimal"
    assert scenario.version == (2, 3)
    assert scenario.delete_topic_enable is True
    assert scenario.unclean_leader_election_enable is False
    assert scenario.bounds == Bounds(broker_failures=1, stop_replica_errors=0)
    assert scenario.properties is None
    assert scenario.bugs == frozenset(UNFIXED_IN_2_3)
    assert scenario.auto_leader_rebalance_enable is True
    assert scenario.leader_imbalance_per_broker_percentage == 10
    [topic] = scenario.topics
    assert topic.replicas == ((0, 1),)
    assert topic.created_initially is True
    assert topic.deleted_by_admin is False
    assert topic.auto_assigned is False


@pytest.mark.parametrize(
    ("version", "bugs"),
    [
        ("2.3", set()),
        ("2.2", {"KAFKA_3143", "KAFKA_3096"}),
        ("2.1", {"KAFKA_7235", "KAFKA_3143", "KAFKA_3096"}),
        ("2.0", {"KAFKA_7235", "KAFKA_3143", "KAFKA_3096", "KAFKA_6082", "KAFKA_7482"}),
        ("1.1", {"KAFKA_6650", "KAFKA_7235", "KAFKA_3143", "KAFKA_3096", "KAFKA_6082", "KAFKA_7482", "KAFKA_6612"}),
    ],
)
def test_historical_bugs_default_by_version(version: str, bugs: set[str]) -> None:
    """A bug switch is on by default for the versions before its fix (KAFKA-6650 and KAFKA-6612: 2.0, KAFKA-6082
    and KAFKA-7482: 2.1, KAFKA-7235: 2.2, KAFKA-3143 and KAFKA-3096: 2.3; 2.4+ fixes on for every version)."""
    scenario = load_scenario(GOOD + f'[kafka]\nversion = "{version}"\n')
    assert scenario.version == tuple(int(x) for x in version.split("."))
    assert scenario.bugs == frozenset(bugs | UNFIXED_IN_2_3)


@pytest.mark.parametrize(
    ("version", "bugs_table", "bugs"),
    [
        ("2.3", "KAFKA_6650 = true", {"KAFKA_6650"} | UNFIXED_IN_2_3),
        ("2.3", "KAFKA_9212 = false\nKAFKA_8286 = false", UNFIXED_IN_2_3 - {"KAFKA_9212", "KAFKA_8286"}),
        ("2.2", "KAFKA_3143 = false\nPLANTED_COMPLETE_DELETION_ON_FIRST_SUCCESS = true",
         {"KAFKA_3096", "PLANTED_COMPLETE_DELETION_ON_FIRST_SUCCESS"} | UNFIXED_IN_2_3),
    ],
)
def test_explicit_bugs_override_the_version_defaults(version: str, bugs_table: str, bugs: set[str]) -> None:
    """[bugs] switches turn bugs on or off whatever the version's default."""
    scenario = load_scenario(GOOD + f'[kafka]\nversion = "{version}"\n[bugs]\n{bugs_table}\n')
    assert scenario.bugs == frozenset(bugs)


# ---- assignment by Kafka's algorithm --------------------------------------------------------------


@pytest.mark.parametrize(
    ("brokers", "topic", "start_index", "replica_shift"),
    [
        ("[0, 1, 2]", "partitions = 3\nreplication_factor = 2", 0, None),
        ("[0, 1, 2, 3, 4]", "partitions = 4\nreplication_factor = 3\nstart_index = 2", 2, None),
        ("[0, 1, 2, 3]", "partitions = 4\nreplication_factor = 2\nstart_index = 1\nreplica_shift = 3", 1, 3),
        ('[{ id = 0, rack = "r1" }, { id = 1, rack = "r3" }, { id = 2, rack = "r3" }, '
         '{ id = 3, rack = "r2" }, { id = 4, rack = "r2" }, { id = 5, rack = "r1" }]',
         "partitions = 4\nreplication_factor = 3", 0, None),
    ],
)
def test_auto_assignment_is_kafkas_algorithm(brokers: str, topic: str, start_index: int,
                                            replica_shift: int | None) -> None:
    """A topic without explicit replicas gets assignReplicasToBrokers' result with the given start index."""
    scenario = load_scenario(f"[cluster]\nbrokers = {brokers}\n[[topics]]\nname = \"t\"\n{topic}\n")
    [t] = scenario.topics
    metadata = [BrokerMetadata(b.id, b.rack) for b in scenario.brokers]
    expected = assign_replicas_to_brokers(metadata, t.partitions, len(t.replicas[0]),
                                          fixed_start_index=start_index, replica_shift=replica_shift)
    assert t.auto_assigned is True
    assert dict(enumerate(t.replicas)) == expected


def test_auto_assignment_matches_kafkas_seed_example() -> None:
    """Brokers 0..4, RF 3, start index 0 gives the first partitions of Kafka's testReplicaAssignment."""
    scenario = load_scenario('[cluster]\nbrokers = [0, 1, 2, 3, 4]\n[[topics]]\nname = "t"\n'
                             "partitions = 4\nreplication_factor = 3\n")
    assert scenario.topics[0].replicas == ((0, 1, 2), (1, 2, 3), (2, 3, 4), (3, 4, 0))


# ---- digest -----------------------------------------------------------------------------------------


def test_digest_ignores_formatting() -> None:
    """The same scenario written differently (comments, broker tables vs ids) has the same digest."""
    a = load_scenario(GOOD, default_name="s")
    b = load_scenario("# a comment\n[cluster]\nbrokers = [{ id = 0 }, { id = 1 }, { id = 2 }]\n\n"
                      '[[topics]]\nname = "t"   # the topic\nreplicas = [ [0, 1] ]\n', default_name="s")
    assert a.source != b.source
    assert a == b
    assert a.digest == b.digest


@pytest.mark.parametrize(
    "change",
    ["[bounds]\nbroker_failures = 2\n", '[kafka]\nversion = "2.2"\n', "[kafka]\ndelete_topic_enable = false\n",
     "[bugs]\nKAFKA_6650 = true\n", "[check]\nproperties = ['leader_in_isr']\n"],
)
def test_digest_changes_with_content(change: str) -> None:
    """Any change of meaning (bounds, version, configuration, bugs, properties) changes the digest."""
    assert load_scenario(GOOD).digest != load_scenario(GOOD + change).digest


REPO = Path(__file__).resolve().parents[1]
DIGEST_PROGRAM = textwrap.dedent("""
    from model.scenario import load_scenario
    print(load_scenario({text!r}).digest)
""")


def test_digest_is_the_same_in_every_process() -> None:
    """A scenario with two bugs on has the same digest in processes with different hash seeds."""
    text = GOOD + '[kafka]\nversion = "1.1"\n'
    digests = set()
    for seed in ("0", "1", "2", "5"):
        out = subprocess.run([sys.executable, "-c", DIGEST_PROGRAM.format(text=text)], capture_output=True,
                             text=True, check=True, cwd=REPO, env={"PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)})
        digests.add(out.stdout.strip())
    assert len(digests) == 1


# ---- the CLI on bad scenarios ------------------------------------------------------------------------


def _explore(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["explore", *args])
    return result.exit_code, result.stdout, result.stderr


def _assert_one_line_error(stdout: str, stderr: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1
    assert lines[0].startswith("kmc:")
    assert "Traceback" not in stderr + stdout


@pytest.mark.parametrize(("toml", "fragments"), [pytest.param(t, f, id=i) for i, t, f in BAD_SCENARIOS[::4]])
def test_cli_reports_a_bad_scenario_in_one_line(tmp_path: Path, toml: str, fragments: list[str]) -> None:
    """`kmc explore bad.toml --engine local` exits 2 with one `kmc:` line on stderr naming the problem."""
    bad = tmp_path / "bad.toml"
    bad.write_text(toml, encoding="utf-8")
    code, stdout, stderr = _explore([str(bad), "--engine", "local", "--out", str(tmp_path / "runs")])
    assert code == 2
    _assert_one_line_error(stdout, stderr)
    assert fragments[0] in stderr
    assert not (tmp_path / "runs").exists()


def test_cli_reports_an_unknown_property_in_one_line(tmp_path: Path) -> None:
    """A scenario naming an unknown property exits 2 with one `kmc:` line naming the property."""
    bad = tmp_path / "bad.toml"
    bad.write_text(GOOD + "[check]\nproperties = ['no_such_property']\n", encoding="utf-8")
    code, stdout, stderr = _explore([str(bad), "--engine", "local", "--out", str(tmp_path / "runs")])
    assert code == 2
    _assert_one_line_error(stdout, stderr)
    assert "'no_such_property'" in stderr


@pytest.mark.parametrize("target", ["missing.toml", "no-such-scenario"])
def test_cli_rejects_a_missing_file_or_unknown_scenario(tmp_path: Path, target: str) -> None:
    """A missing scenario file or an unknown scenario name exits 2 with one `kmc:` line naming it."""
    code, stdout, stderr = _explore([str(tmp_path / target) if target.endswith(".toml") else target,
                                     "--engine", "local", "--out", str(tmp_path / "runs")])
    assert code == 2
    _assert_one_line_error(stdout, stderr)
    assert target in stderr


def test_cli_rejects_spark_options_with_the_local_engine(tmp_path: Path) -> None:
    """`--engine local --master x` exits 2 with one `kmc:` line: --master applies to Spark only."""
    code, stdout, stderr = _explore(["planted-complete-on-first-success", "--engine", "local", "--master", "x",
                                     "--out", str(tmp_path / "runs")])
    assert code == 2
    _assert_one_line_error(stdout, stderr)
    assert "--master" in stderr


def test_cli_rejects_driver_level_seconds_with_the_local_engine(tmp_path: Path) -> None:
    """`--engine local --driver-level-seconds 0` exits 2 with one `kmc:` line naming the option: it tunes the Spark
    engine's driver-side levels only."""
    code, stdout, stderr = _explore(["planted-complete-on-first-success", "--engine", "local",
                                     "--driver-level-seconds", "0", "--out", str(tmp_path / "runs")])
    assert code == 2
    _assert_one_line_error(stdout, stderr)
    assert "--driver-level-seconds" in stderr
    assert not (tmp_path / "runs").exists()


def test_versions_after_2_3_run_what_the_model_has() -> None:
    """2.4 - 3.9 load where every change the scenario reaches is modelled: a 3.9 cluster speaking protocol 2.5
    without ISR changes; its bug defaults are those of 3.9 (every 2.x fix in; the two never fixed upstream on)."""
    scenario = load_scenario(GOOD + '[kafka]\nversion = "3.9"\ninter_broker_protocol_version = "2.5"\n')
    assert (scenario.version, scenario.inter_broker_protocol) == ((3, 9), (2, 5))
    assert not scenario.bug("KAFKA_13225") and scenario.since("KAFKA_10149") and not scenario.since("KIP_570")
    assert scenario.bugs == frozenset({"DELETION_DURING_REASSIGNMENT", "KAFKA_14808"})
    assert load_scenario(GOOD).inter_broker_protocol == (2, 3)
    assert load_scenario(GOOD + '[kafka]\nversion = "3.9"\n').since("KIP_570")


@pytest.mark.parametrize(("version", "on"), [("2.3", set()), ("2.4", {"KAFKA_14808"}),
                                             ("2.6", {"KAFKA_14808", "KAFKA_13972"}),
                                             ("3.4", {"KAFKA_14808", "KAFKA_13972"}), ("3.5", {"KAFKA_14808"})])
def test_a_bug_in_later_code_is_on_from_the_release_that_wrote_it(version: str, on: set[str]) -> None:
    """KAFKA_14808 (KIP-455's code, never fixed) is on from 2.4, KAFKA_13972 (KIP-570's StopReplica epochs) from 2.6
    until its fix in 3.5; before the code existed neither is on."""
    scenario = load_scenario(GOOD + f'[kafka]\nversion = "{version}"\ninter_broker_protocol_version = "2.3"\n')
    assert scenario.bugs & {"KAFKA_14808", "KAFKA_13972"} == on


@pytest.mark.parametrize(("version", "on"), [("2.3", True), ("2.7", True), ("3.2", True), ("3.3", False),
                                             ("3.9", False)])
def test_kafka_14140_is_on_before_3_3_and_kafka_14144_at_no_version(version: str, on: bool) -> None:
    """KAFKA_14140 (fixed in 3.3.0) is on by default before 3.3; KAFKA_14144's regression and its fix both landed
    before 3.3.0, so no version has it on by default; the 3.3 validation order stays a version gate."""
    scenario = load_scenario(GOOD + f'[kafka]\nversion = "{version}"\n')
    assert scenario.bug("KAFKA_14140") is on
    assert not scenario.bug("KAFKA_14144")
    assert scenario.since("TRY_PROCESS_ALTER_PARTITION") is not on


@pytest.mark.parametrize("version", ["2.3", "2.5", "2.6", "2.7", "3.9"])
def test_kafka_9946_is_on_at_no_version(version: str) -> None:
    """KAFKA-9946's regression (KIP-570's patch, commit 7c7d55dbd8d) and its fix (commit 3b6bf805309) both landed
    before 2.6.0: no version has the switch on by default, KIP-570's StopReplica v3 stays a version gate."""
    scenario = load_scenario(GOOD + f'[kafka]\nversion = "{version}"\n')
    assert not scenario.bug("KAFKA_9946")
    assert scenario.since("KIP_570") is (version not in ("2.3", "2.5"))
