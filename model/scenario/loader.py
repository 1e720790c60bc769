"""Scenario files: the bounded cluster a run explores, loaded from TOML and validated.

A scenario names the brokers (with racks), the topics (assignment by Kafka's algorithm or given
explicitly, present from the start or created by an admin during the run, deleted by an admin or
not), the Kafka version and configuration, the environment's budget (how many broker failures,
StopReplica errors and leader ISR changes the explorer may inject, like the bounds of a TLA+
config), the properties to check and the historical bugs to re-introduce.

Bad input raises :class:`ScenarioError` with one sentence naming the offending key or value and
the fix; the CLI turns it into exit status 2. This module is the one validation layer for scenario
files: Kafka's own rules where Kafka has them (topic names, broker ids in an ``Int``, replication
factor at most the brokers), and the limits of the model around them, all checked *before* any
work whose cost depends on the input (the file is read up to :data:`MAX_FILE_BYTES`, sizes are
refused before Kafka's assignment is computed, explicit replica lists count against the same cap,
every ``[bounds]`` key is checked by one helper against what the state encoding can hold).
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from model.admin import assignment as kafka_assignment
from model.scenario.bugs import BUGS, renamed_switch_hint
from model.scenario.kraft import KraftSettings
from model.scenario.kraft_bugs import KRAFT_BUGS
from model.scenario.versions import DEFAULT_VERSION, GATES, SUPPORTED_VERSIONS, parse_version, refusal

#: A scenario file larger than this is not a scenario (the shipped ones are under 2 KB).
MAX_FILE_BYTES = 1 << 20
#: Kafka's broker ids are an ``Int`` (``KafkaConfig.BrokerIdProp``).
BROKER_ID_MAX = 2**31 - 1
MAX_BROKERS = 8
#: Replicas per topic, and over all topics, that an exhaustive search can cover.
MAX_TOPIC_REPLICAS = 12
MAX_TOTAL_REPLICAS = 48
MAX_TOPICS = 16
#: The state encoding stores every counter and epoch as a signed 32-bit integer
#: (``model.zk.state.codec.Codec``). A budget counter reaches its bound; an epoch grows by at most one per
#: election, a few per failure or restart of each of at most 48 partitions; so bounds are capped
#: at 2^31 / 128, where no epoch can overflow.
BOUND_MAX = 2**31 // 128 - 1
NAME_MAX = 200


class ScenarioError(ValueError):
    """A scenario that cannot be explored; the message is one sentence naming the fix."""


#: ``Topic.MAX_NAME_LENGTH`` (clients/src/main/java/org/apache/kafka/common/internals/Topic.java, 2.3.0).
TOPIC_NAME_MAX_LENGTH = 249
_LEGAL_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]+")
_PROPERTY_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,99}")


def shown(text: str, limit: int = 60) -> str:
    """``text`` as it can be printed on one line of a message: control characters escaped, long text cut."""
    escaped = text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text
    return escaped if len(escaped) <= limit else f"{escaped[:limit]}…"


def validate_topic_name(name: str) -> None:
    """Kafka's ``Topic.validate`` (clients …/common/internals/Topic.java, 2.3.0), with Kafka's sentences.

    Kafka refuses an empty name, ``.`` and ``..``, names over 249 characters and any character other
    than ASCII letters, digits, ``.``, ``_`` and ``-``; so does a scenario, before a name can reach a
    report or a file name.
    """
    if not name:
        problem = "Topic name is illegal, it can't be empty"
    elif name in (".", ".."):
        problem = 'Topic name cannot be "." or ".."'
    elif len(name) > TOPIC_NAME_MAX_LENGTH:
        problem = (f"Topic name is illegal, it can't be longer than {TOPIC_NAME_MAX_LENGTH} characters, "
                   f"topic name: {shown(name)}")
    elif not _LEGAL_TOPIC_NAME.fullmatch(name):
        problem = (f'Topic name "{shown(name)}" is illegal, it contains a character other than ASCII '
                   "alphanumerics, '.', '_' and '-'")
    else:
        return
    raise ScenarioError(f"Kafka refuses the topic name '{shown(name)}' (InvalidTopicException: {problem}); "
                        "use only ASCII letters, digits, '.', '_' and '-', at most 249 characters.")


@attrs.frozen
class Broker:
    id: int
    rack: str | None


@attrs.frozen
class Topic:
    name: str
    replicas: tuple[tuple[int, ...], ...]  # by partition id; head = preferred replica
    auto_assigned: bool  # computed by Kafka's assignReplicasToBrokers (rack_spread applies)
    created_initially: bool
    deleted_by_admin: bool
    add_partitions: int = 0  # kafka-topics --alter --partitions N, run once by an admin (0: never)
    recreated_by_admin: bool = False  # an admin creates it again, once, after its deletion
    recreated_replicas: tuple[tuple[int, ...], ...] = ()  # the re-created topic's assignment (default: replicas)
    preferred_replica_election: bool = False  # an admin runs kafka-preferred-replica-election for its partitions, once
    # instead, an admin sends an ElectLeaders request (KIP-460, 2.4+: kafka-leader-election --election-type) for its
    # partitions, once: "preferred" or "unclean" ("" : none)
    elect_leaders: str = ""
    # an admin sets the topic's unclean.leader.election.enable=true (kafka-configs), once, within [bounds]
    # unclean_config_changes
    unclean_leader_election_enable_by_admin: bool = False
    partially_deleted: tuple[int, ...] = ()  # partitions whose state znode a crashed controller deleted (see
    #                                          model.zk.kafka_model.initial_state)

    @property
    def partitions(self) -> int:
        return len(self.replicas)


@attrs.frozen
class Bounds:
    broker_failures: int = 1
    stop_replica_errors: int = 0
    isr_changes: int = 0  # ISR shrinks and expansions partition leaders may write
    controller_failovers: int = 0  # the controller's host dies or its ZooKeeper session expires
    controller_moves: int = 0  # /controller is deleted under the running controller (an admin forcing a re-election)
    controlled_shutdowns: int = 0  # ControlledShutdownRequests brokers send (retries included)
    auto_rebalance_checks: int = 0  # firings of the auto leader rebalance timer
    log_dir_failures: int = 0  # a broker's log directory holding one partition fails
    unclean_config_changes: int = 0  # an admin flips unclean.leader.election.enable (cluster default or a topic's)
    # answers to AlterIsr requests (KIP-497, 2.7+) the controller processed that never reach the leader, which sends
    # the request again
    alter_isr_answers_lost: int = 0
    # controllers that resigned on an exception out of onControllerFailover (elect's triggerControllerMove) after
    # which the search still expands states: each resignation elects a successor with the next controller epoch
    controller_resignations: int = 0


@attrs.frozen
class Reassignment:
    """One run of ``kafka-reassign-partitions.sh --execute``: the target replicas (RAR) by partition."""

    topic: str
    targets: tuple[tuple[int, tuple[int, ...]], ...]  # (partition, target replicas), by partition
    cancelled_by_admin: bool = False  # the admin deletes /admin/reassign_partitions while it is there (once)
    # sent as an AlterPartitionReassignments request (KIP-455, 2.4+) instead of written to /admin/reassign_partitions
    through_api: bool = False
    # once submitted, the admin cancels it with AlterPartitionReassignments, no target for its partitions (2.4+)
    cancelled_through_api: bool = False


@attrs.frozen
class Scenario:
    name: str
    description: str
    brokers: tuple[Broker, ...]
    topics: tuple[Topic, ...]
    version: tuple[int, int]
    delete_topic_enable: bool
    unclean_leader_election_enable: bool
    bounds: Bounds
    properties: tuple[str, ...] | None  # None: every registered property
    bugs: frozenset[str]
    reassignments: tuple[Reassignment, ...]  # admin commands, each run at most once
    source: str = attrs.field(eq=False, repr=False)  # the TOML text, shipped to Spark workers
    auto_leader_rebalance_enable: bool = True  # Kafka's default; the timer fires [bounds] auto_rebalance_checks times
    leader_imbalance_per_broker_percentage: int = 10
    inter_broker_protocol: tuple[int, int] = (2, 3)  # inter.broker.protocol.version, at most ``version``
    kraft: KraftSettings | None = None  # ``[kafka] controller = "kraft"``: the KRaft controller's settings and bounds

    @property
    def controller(self) -> str:
        """Which controller the scenario runs: ``"zk"`` or ``"kraft"`` (``[kafka] controller``)."""
        return "zk" if self.kraft is None else "kraft"

    # every gate of :data:`model.scenario.versions.GATES` and whether it is in force, computed once (the handlers
    # ask on their hot paths)
    _gates: Mapping[str, bool] = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_gates", {name: g.in_force(self) for name, g in GATES.items()})

    def since(self, gate: str) -> bool:
        """Whether the behaviour that changed with ``gate`` (:data:`model.scenario.versions.GATES`) is in force."""
        return self._gates[gate]

    def earlier_reassignments_of(self, index: int) -> list[int]:
        """The ``[[reassignments]]`` entries before ``index`` that name one of its partitions."""
        mine = {(self.reassignments[index].topic, p) for p, _ in self.reassignments[index].targets}
        return [j for j, r in enumerate(self.reassignments[:index]) if mine & {(r.topic, p) for p, _ in r.targets}]

    def bug_any(self, *names: str) -> bool:
        return any(n in self.bugs for n in names)

    @property
    def broker_ids(self) -> tuple[int, ...]:
        return tuple(b.id for b in self.brokers)

    @property
    def racks(self) -> Mapping[int, str | None]:
        return {b.id: b.rack for b in self.brokers}

    def bug(self, name: str) -> bool:
        return name in self.bugs

    def topic(self, name: str) -> Topic:
        for t in self.topics:
            if t.name == name:
                return t
        raise KeyError(name)

    @property
    def digest(self) -> str:
        """A hash of what the scenario means (not of its formatting), for run manifests."""
        # sets (the bug switches) are hashed sorted: their iteration order varies between processes
        data = attrs.asdict(self, filter=lambda a, _v: a.eq is True,
                            value_serializer=lambda _i, _a, v: sorted(v) if isinstance(v, frozenset) else v)
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


_TOP_KEYS = {"name", "description", "cluster", "topics", "reassignments", "kafka", "bounds", "check", "bugs"}
_REASSIGNMENT_KEYS = {"topic", "partitions", "cancelled_by_admin", "through_api", "cancelled_through_api"}
_CLUSTER_KEYS = {"brokers"}
_BROKER_KEYS = {"id", "rack"}
_TOPIC_KEYS = {
    "name", "partitions", "replication_factor", "replicas", "start_index", "replica_shift",
    "created", "deleted_by_admin", "add_partitions", "recreated_by_admin", "recreated_replicas",
    "preferred_replica_election", "partially_deleted", "unclean_leader_election_enable_by_admin", "elect_leaders",
}
_KAFKA_KEYS = {"controller", "version", "inter_broker_protocol_version", "delete_topic_enable",
               "unclean_leader_election_enable", "auto_leader_rebalance_enable",
               "leader_imbalance_per_broker_percentage"}
_BOUNDS_KEYS = {field.name for field in attrs.fields(Bounds)}
_CHECK_KEYS = {"properties"}


def load_scenario_file(path: str | Path) -> Scenario:
    """Read and validate a scenario file (at most :data:`MAX_FILE_BYTES` of UTF-8 TOML)."""
    p = Path(path)
    where = shown(str(p), 120)
    try:
        if not p.is_file():
            if p.exists():
                raise ScenarioError(f"scenario file '{where}' is not a regular file; give a TOML file.")
            raise ScenarioError(f"scenario file '{where}' does not exist; give a path or a shipped "
                                "scenario name (see `kmc scenarios`).")
        with p.open("rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)
    except ValueError:  # a NUL byte in the path
        raise ScenarioError(f"scenario file '{where}' is not a valid path; give a path or a shipped scenario "
                            "name.") from None
    except OSError as e:
        raise ScenarioError(f"scenario file '{where}' cannot be read ({e.strerror or e}); "
                            "give a readable UTF-8 TOML file.") from None
    if len(data) > MAX_FILE_BYTES:
        raise ScenarioError(f"scenario file '{where}' is larger than {MAX_FILE_BYTES // 1024} KiB; a scenario is "
                            "a short TOML file, give one.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError(f"scenario file '{where}' is not UTF-8 (byte {e.start}); save it as UTF-8.") from None
    return load_scenario(text, default_name=p.stem)


def load_scenario(text: str, default_name: str = "scenario") -> Scenario:
    """Parse and validate a scenario from TOML text."""
    if len(text) > MAX_FILE_BYTES:
        raise ScenarioError(f"the scenario is larger than {MAX_FILE_BYTES // 1024} KiB; a scenario is a short "
                            "TOML file, give one.")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"the scenario is not valid TOML ({shown(str(e), 160)}); fix the syntax.") from None
    except RecursionError:
        raise ScenarioError("the scenario nests arrays or tables too deeply to be read; a scenario needs two "
                            "levels at most.") from None
    _check_keys(doc, _TOP_KEYS, "the scenario's top level")

    kafka = _table(doc, "kafka")
    if _controller(kafka) == "kraft":
        from model.scenario.kraft import load_kraft_scenario

        return load_kraft_scenario(doc, text, default_name)
    _check_keys(kafka, _KAFKA_KEYS, "[kafka]")
    version = _version(kafka)
    inter_broker_protocol = _inter_broker_protocol(kafka, version)

    brokers = _brokers(doc)
    topics = _topics(doc, brokers)

    bounds_t = _table(doc, "bounds")
    _check_keys(bounds_t, _BOUNDS_KEYS, "[bounds]")
    bounds = Bounds(**{field.name: _bound(bounds_t, field.name, field.default) for field in attrs.fields(Bounds)})

    check = _table(doc, "check")
    _check_keys(check, _CHECK_KEYS, "[check]")
    properties = _properties(check)

    bugs = _bugs(doc, version)

    name, description = _name_and_description(doc, default_name)
    scenario = Scenario(
        name=name,
        description=description,
        brokers=brokers,
        topics=topics,
        version=version,
        delete_topic_enable=_bool(kafka, "delete_topic_enable", "[kafka]", default=True),
        unclean_leader_election_enable=_bool(kafka, "unclean_leader_election_enable", "[kafka]", default=False),
        bounds=bounds,
        properties=properties,
        bugs=bugs,
        reassignments=tuple(_reassignment(r, i, topics, brokers)
                            for i, r in enumerate(_array_of_tables(doc, "reassignments"))),
        source=text,
        auto_leader_rebalance_enable=_bool(kafka, "auto_leader_rebalance_enable", "[kafka]", default=True),
        leader_imbalance_per_broker_percentage=_percentage(kafka),
        inter_broker_protocol=inter_broker_protocol,
    )
    refused = refusal(scenario)
    if refused is not None:
        raise ScenarioError(refused)
    elect = [t.name for t in scenario.topics if t.elect_leaders]
    if elect and not scenario.since("KIP_460"):
        raise ScenarioError(f"topic {elect[0]!r} sets elect_leaders, the ElectLeaders request Kafka has from 2.4 "
                            f"(KIP-460); set [kafka] version to \"2.4\" or later, or use preferred_replica_election.")
    api = [i + 1 for i, r in enumerate(scenario.reassignments) if r.through_api or r.cancelled_through_api]
    if api and not scenario.since("KIP_455"):
        raise ScenarioError(f"[[reassignments]] entry {api[0]} uses AlterPartitionReassignments (through_api or "
                            f"cancelled_through_api), which Kafka has from 2.4 (KIP-455); set [kafka] version to "
                            f"\"2.4\" or later, or drop those keys.")
    return scenario



def _controller(kafka: Mapping[str, Any]) -> str:
    """``[kafka] controller``: ``"zk"`` (the default, the ZooKeeper-era controller) or ``"kraft"``."""
    controller = kafka.get("controller", "zk")
    if controller not in ("zk", "kraft"):
        raise ScenarioError(f"[kafka] controller = {shown(repr(controller))} is not a controller kmc models; use "
                            "\"zk\" (the default) or \"kraft\".")
    return str(controller)


def _name_and_description(doc: Mapping[str, Any], default_name: str) -> tuple[str, str]:
    """The scenario's ``name`` (``default_name`` when absent) and ``description``, checked."""
    name = doc.get("name", default_name)
    description = doc.get("description", "")
    if not isinstance(name, str) or not isinstance(description, str):
        raise ScenarioError("the scenario's name and description must be strings.")
    if not name or len(name) > NAME_MAX or not name.isprintable():
        raise ScenarioError(f"the scenario's name '{shown(name)}' must be 1 to {NAME_MAX} printable characters "
                            "(no newline or control character); give a short name.")
    description = description.replace("\r\n", "\n")  # a file saved with Windows line ends
    control = next((c for c in description if not (c.isprintable() or c in "\n\t")), None)
    if control is not None:
        # Printed on terminals and in reports: an escape sequence could clear the screen or forge a verdict line.
        raise ScenarioError(f"the scenario's description holds the control character {shown(control)!r}; "
                            "write it as plain text (lines, tabs and printable characters only).")
    return name, description


def _version(kafka: Mapping[str, Any]) -> tuple[int, int]:
    """``[kafka] version`` as (major, minor): one of the modelled versions."""
    version_text = kafka.get("version", DEFAULT_VERSION)
    if not isinstance(version_text, str):
        raise ScenarioError(f"[kafka] version = {shown(repr(version_text))} must be a quoted string such as "
                            f"\"{DEFAULT_VERSION}\".")
    if version_text not in SUPPORTED_VERSIONS:
        raise ScenarioError(
            f"[kafka] version = {shown(repr(version_text))} is not modelled; use one of "
            f"{', '.join(SUPPORTED_VERSIONS)} (the minor releases with a ZooKeeper controller from 1.1 on)."
        )
    return parse_version(version_text)


def _inter_broker_protocol(kafka: Mapping[str, Any], version: tuple[int, int]) -> tuple[int, int]:
    """``[kafka] inter_broker_protocol_version`` as (major, minor): a modelled version no newer than ``version``
    (a minor version stands for its last IV: "2.7" is 2.7-IV2); by default ``version`` itself."""
    text = kafka.get("inter_broker_protocol_version")
    if text is None:
        return version
    if not isinstance(text, str) or text not in SUPPORTED_VERSIONS or parse_version(text) > version:
        allowed = [v for v in SUPPORTED_VERSIONS if parse_version(v) <= version]
        raise ScenarioError(
            f"[kafka] inter_broker_protocol_version = {shown(repr(text))} is not a protocol version of Kafka "
            f"{version[0]}.{version[1]}; use a quoted one of {', '.join(allowed)}.")
    return parse_version(text)


def _topics(doc: Mapping[str, Any], brokers: tuple[Broker, ...]) -> tuple[Topic, ...]:
    """The ``[[topics]]``, each checked, their names unique and their replicas within what a search covers."""
    raw_topics = _array_of_tables(doc, "topics")
    if len(raw_topics) > MAX_TOPICS:
        raise ScenarioError(f"the scenario declares {len(raw_topics)} [[topics]], more than an exhaustive search "
                            f"can cover; use at most {MAX_TOPICS}.")
    topics = tuple(_topic(t, i, brokers) for i, t in enumerate(raw_topics))
    if not topics:
        raise ScenarioError("the scenario has no [[topics]]; add at least one topic to explore.")
    names = [t.name for t in topics]
    for n in names:
        if names.count(n) > 1:
            raise ScenarioError(f"topic {n!r} is declared twice in [[topics]]; give each topic one entry.")
    total = sum(len(r) for t in topics for r in t.replicas)
    if total > MAX_TOTAL_REPLICAS:
        raise ScenarioError(f"the topics have {total} replicas in all, more than an exhaustive search can cover; "
                            f"keep them at most {MAX_TOTAL_REPLICAS}.")
    return topics


def _properties(check: Mapping[str, Any]) -> tuple[str, ...] | None:
    """``[check] properties``: the property names to check, or None for all of them."""
    if "properties" not in check:
        return None
    props = check["properties"]
    if not isinstance(props, list) or not all(isinstance(p, str) for p in props):
        raise ScenarioError("[check] properties must be a list of property names; see `kmc properties`.")
    if not props:
        raise ScenarioError("[check] properties = [] checks nothing, so no verdict could mean anything; list "
                            "at least one property (see `kmc properties`), or drop the key to check them all.")
    for prop in props:
        if not _PROPERTY_NAME.fullmatch(prop):
            raise ScenarioError(f"[check] properties: '{shown(prop)}' is not a property name (snake_case, at most "
                                "100 characters); see `kmc properties`.")
    return tuple(props)


def _bugs(doc: Mapping[str, Any], version: tuple[int, int]) -> frozenset[str]:
    """The bug switches on: the version's defaults, changed by ``[bugs]``."""
    bugs_t = _table(doc, "bugs")
    bugs = {name for name, b in BUGS.items() if b.default_for(version)}
    for name, value in bugs_t.items():
        if name in KRAFT_BUGS:
            raise ScenarioError(f"[bugs] {name} is a KRaft controller switch; add [kafka] controller = \"kraft\" "
                                f"or use one of the ZooKeeper controller's: {', '.join(sorted(BUGS))}.")
        if name not in BUGS:
            raise ScenarioError(renamed_switch_hint("[bugs]", name)
                                or f"[bugs] {shown(name)} is not a known bug switch; use one of "
                                   f"{', '.join(sorted(BUGS))}.")
        if not isinstance(value, bool):
            raise ScenarioError(f"[bugs] {name} = {shown(repr(value))} must be true or false.")
        if value:
            bugs.add(name)
        else:
            bugs.discard(name)
    return frozenset(bugs)


_BUGS_HEADER = re.compile(r"^\[bugs\][ \t]*(#.*)?$", re.MULTILINE)


def with_bug(scenario: Scenario, name: str, on: bool) -> Scenario:
    """``scenario`` with the bug switch ``name`` set to ``on`` in its TOML text (so that the source shipped to
    Spark workers says the same), re-loaded and validated: how ``kmc bugs --verify`` runs a bug's scenario
    with its switch and without."""
    if name not in BUGS and name not in KRAFT_BUGS:
        raise ScenarioError(f"[bugs] {shown(name)} is not a known bug switch; use one of "
                            f"{', '.join(sorted({*BUGS, *KRAFT_BUGS}))}.")
    value = "true" if on else "false"
    line = re.compile(rf"^[ \t]*{re.escape(name)}[ \t]*=[ \t]*(true|false)[ \t]*(#.*)?$", re.MULTILINE)
    text = scenario.source
    if line.search(text):
        text = line.sub(f"{name} = {value}", text, count=1)
    elif (header := _BUGS_HEADER.search(text)) is not None:
        text = f"{text[:header.end()]}\n{name} = {value}{text[header.end():]}"
    else:
        text = f"{text.rstrip()}\n\n[bugs]\n{name} = {value}\n"
    changed = load_scenario(text, default_name=scenario.name)
    if (name in changed.bugs) != on:
        raise ScenarioError(f"scenario '{shown(scenario.name)}' sets [bugs] {name} in a form kmc cannot rewrite; "
                            f"write it as a plain '{name} = true' line under [bugs].")
    return changed


_KAFKA_HEADER = re.compile(r"^\[kafka\][ \t]*(#.*)?$", re.MULTILINE)
_VERSION_LINE = re.compile(r"^[ \t]*version[ \t]*=.*$", re.MULTILINE)


def with_version(scenario: Scenario, version: str) -> Scenario:
    """``scenario`` at ``[kafka] version = version`` (its TOML text rewritten, as :func:`with_bug` does), re-loaded
    and validated: the version's bug defaults and gates apply, and a scenario reaching a change the model does not
    have at that version is refused (:class:`ScenarioError`)."""
    text = scenario.source
    line = f'version = "{version}"'
    if _VERSION_LINE.search(text):
        text = _VERSION_LINE.sub(line, text, count=1)
    elif (header := _KAFKA_HEADER.search(text)) is not None:
        text = f"{text[:header.end()]}\n{line}{text[header.end():]}"
    else:
        text = f"{text.rstrip()}\n\n[kafka]\n{line}\n"
    return load_scenario(text, default_name=scenario.name)


_CHECK_SECTION = re.compile(r"^\[check\][ \t]*(#.*)?$.*?(?=^[ \t]*\[|\Z)", re.MULTILINE | re.DOTALL)


def with_properties(scenario: Scenario, names: Sequence[str]) -> Scenario:
    """``scenario`` checking ``names`` (in that order): its ``[check]`` table rewritten in its TOML text, so that
    the source a run keeps, ships to Spark workers and replays from says what was checked; re-loaded and
    validated. How ``kmc explore --property / --skip-property`` narrow a scenario's selection."""
    if not names:
        raise ScenarioError("the selection leaves no property to check; keep at least one (see `kmc properties`).")
    table = "[check]\nproperties = [" + ", ".join(json.dumps(n) for n in names) + "]\n"
    text = scenario.source
    if (section := _CHECK_SECTION.search(text)) is not None:
        text = f"{text[:section.start()]}{table}\n{text[section.end():]}"
    else:
        text = f"{text.rstrip()}\n\n{table}"
    try:
        changed = load_scenario(text, default_name=scenario.name)
    except ScenarioError:
        changed = None
    if changed is None or changed.properties != tuple(names) or attrs.evolve(
            changed, properties=scenario.properties).digest != scenario.digest:
        raise ScenarioError(f"scenario '{shown(scenario.name)}' writes [check] in a form kmc cannot rewrite; write it "
                            "as a [check] table with one 'properties = [...]' line.")
    return changed


def _reassignment(raw: Any, index: int, topics: Sequence[Topic], brokers: Sequence[Broker]) -> Reassignment:
    """A ``[[reassignments]]`` entry: ``topic = "t"`` and ``partitions = { 0 = [1, 2] }`` (target replicas by
    partition), checked as ``ReassignPartitionsCommand.parseAndValidate`` would."""
    where = f"[[reassignments]] entry {index + 1}"
    if not isinstance(raw, dict):
        raise ScenarioError(f"{where} must be a table.")
    _check_keys(raw, _REASSIGNMENT_KEYS, where)
    topic = raw.get("topic")
    known = {t.name: t for t in topics}
    if not isinstance(topic, str) or topic not in known:
        raise ScenarioError(f"{where}: topic = {shown(repr(topic))} is not one of the [[topics]]; name a declared "
                            "topic as a quoted string.")
    parts = raw.get("partitions")
    if not isinstance(parts, dict) or not parts:
        raise ScenarioError(f"{where} needs partitions = {{ 0 = [1, 2] }} (target replicas by partition).")
    ids = {b.id for b in brokers}
    targets: list[tuple[int, tuple[int, ...]]] = []
    for key, reps in parts.items():
        if not (key.isascii() and key.isdigit()) or int(key) >= known[topic].partitions:
            raise ScenarioError(f"{where}: partition {shown(repr(key))} is not a partition of topic {topic!r} "
                                f"(0 to {known[topic].partitions - 1}).")
        if (not isinstance(reps, list) or not reps
                or not all(isinstance(r, int) and not isinstance(r, bool) for r in reps)):
            raise ScenarioError(f"{where}: partition {key} needs a non-empty list of broker ids (Kafka: Partition "
                                "replica list cannot be empty).")
        if len(set(reps)) != len(reps):
            raise ScenarioError(f"{where}: partition {key} lists a broker twice (Kafka: Partition replica lists may "
                                "not contain duplicate entries).")
        unknown = sorted(set(reps) - ids)
        if unknown:
            raise ScenarioError(f"{where}: partition {key} names brokers {unknown} that are not in [cluster] brokers "
                                "(Kafka: The proposed assignment contains non-existent brokerIDs).")
        targets.append((int(key), tuple(reps)))
    return Reassignment(topic, tuple(sorted(targets)), _bool(raw, "cancelled_by_admin", where, default=False),
                        _bool(raw, "through_api", where, default=False),
                        _bool(raw, "cancelled_through_api", where, default=False))


def _percentage(kafka: Mapping[str, Any]) -> int:
    """``leader.imbalance.per.broker.percentage`` (KafkaConfig: an Int, default 10)."""
    value = _int(kafka, "leader_imbalance_per_broker_percentage", "[kafka]", default=10, minimum=0)
    if value > 100:
        raise ScenarioError(f"[kafka] leader_imbalance_per_broker_percentage = {value} is above 100; give a "
                            "percentage from 0 to 100.")
    return value


def _brokers(doc: Mapping[str, Any]) -> tuple[Broker, ...]:
    cluster = _table(doc, "cluster")
    _check_keys(cluster, _CLUSTER_KEYS, "[cluster]")
    raw = cluster.get("brokers")
    if not isinstance(raw, list) or not raw:
        raise ScenarioError("[cluster] brokers must be a non-empty list like [{ id = 0, rack = \"r1\" }].")
    if len(raw) > MAX_BROKERS:
        raise ScenarioError(f"{len(raw)} brokers is beyond what an exhaustive search can cover; use at most "
                            f"{MAX_BROKERS}.")
    brokers: list[Broker] = []
    for entry in raw:
        if isinstance(entry, int) and not isinstance(entry, bool):
            entry = {"id": entry}
        if not isinstance(entry, dict):
            raise ScenarioError(f"[cluster] brokers entry {shown(repr(entry))} must be a table like "
                                "{ id = 0, rack = \"r1\" }.")
        _check_keys(entry, _BROKER_KEYS, "a [cluster] brokers entry")
        bid = _int(entry, "id", "a [cluster] brokers entry", minimum=0)
        if bid > BROKER_ID_MAX:
            raise ScenarioError(f"[cluster] broker id {bid} is beyond Kafka's broker ids (an Int, at most "
                                f"{BROKER_ID_MAX}); use a smaller id.")
        rack = entry.get("rack")
        if rack is not None and (not isinstance(rack, str) or not rack or not rack.isprintable()):
            raise ScenarioError(f"broker {bid}'s rack {shown(repr(rack))} must be a non-empty string of printable "
                                "characters.")
        if any(b.id == bid for b in brokers):
            raise ScenarioError(f"broker id {bid} appears twice in [cluster] brokers; give each broker a distinct id.")
        brokers.append(Broker(bid, rack))
    with_rack = [b for b in brokers if b.rack is not None]
    if with_rack and len(with_rack) != len(brokers):
        missing = ", ".join(str(b.id) for b in brokers if b.rack is None)
        raise ScenarioError(
            f"brokers {missing} have no rack while others do (Kafka: AdminOperationException: Not all brokers "
            "have rack information for replica rack aware assignment.); give every broker a rack or none."
        )
    return tuple(brokers)


def _topic(raw: Any, index: int, brokers: Sequence[Broker]) -> Topic:
    topic = _topic_assignment(raw, index, brokers)
    where = f"topic {topic.name!r}"
    add = _int(raw, "add_partitions", where, default=0, minimum=0)
    if add and add <= topic.partitions:
        raise ScenarioError(f"{where}: add_partitions = {add} must exceed its {topic.partitions} partitions "
                            "(Kafka: The number of partitions for a topic can only be increased).")
    if add * len(topic.replicas[0]) > 12:
        raise ScenarioError(f"{where}: add_partitions = {add} makes {add * len(topic.replicas[0])} replicas; keep "
                            "partitions × replication_factor at most 12 so that the state space stays explorable.")
    recreated = _bool(raw, "recreated_by_admin", where, default=False)
    if recreated and not topic.deleted_by_admin:
        raise ScenarioError(f"{where}: recreated_by_admin = true needs deleted_by_admin = true (a topic is "
                            "re-created under the name of one deleted earlier).")
    again = topic.replicas
    if "recreated_replicas" in raw:
        if not recreated:
            raise ScenarioError(f"{where}: recreated_replicas needs recreated_by_admin = true.")
        again = _topic_assignment({"name": topic.name, "replicas": raw["recreated_replicas"]}, index, brokers).replicas
    preferred = _bool(raw, "preferred_replica_election", where, default=False)
    elect = raw.get("elect_leaders", "")
    if elect not in ("", "preferred", "unclean"):
        raise ScenarioError(f"{where}: elect_leaders = {elect!r} is not an election type; write \"preferred\" or "
                            "\"unclean\" (kafka-leader-election --election-type).")
    if elect and preferred:
        raise ScenarioError(f"{where}: the admin runs one election for the topic; keep preferred_replica_election "
                            "(the znode) or elect_leaders (the ElectLeaders request), not both.")
    unclean = _bool(raw, "unclean_leader_election_enable_by_admin", where, default=False)
    partial = raw.get("partially_deleted", [])
    if (not isinstance(partial, list) or not all(isinstance(p, int) and not isinstance(p, bool) for p in partial)
            or len(set(partial)) != len(partial)):
        raise ScenarioError(f"{where}: partially_deleted must be a list of distinct partition ids, e.g. [0].")
    for p in partial:
        if not 0 <= p < topic.partitions:
            raise ScenarioError(f"{where}: partially_deleted names partition {p}, which the topic does not have "
                                f"(0 to {topic.partitions - 1}).")
    if partial and not (topic.deleted_by_admin and topic.created_initially):
        raise ScenarioError(f"{where}: partially_deleted needs deleted_by_admin = true and a topic present from the "
                            "start (a controller crashed while deleting it).")
    return attrs.evolve(topic, add_partitions=add, recreated_by_admin=recreated, recreated_replicas=again,
                        preferred_replica_election=preferred, elect_leaders=elect,
                        partially_deleted=tuple(sorted(partial)),
                        unclean_leader_election_enable_by_admin=unclean)


def _topic_assignment(raw: Any, index: int, brokers: Sequence[Broker]) -> Topic:
    where = f"[[topics]] entry {index + 1}"
    if not isinstance(raw, dict):
        raise ScenarioError(f"{where} must be a table.")
    _check_keys(raw, _TOPIC_KEYS, where)
    name = raw.get("name")
    if not isinstance(name, str):
        raise ScenarioError(f"{where} needs a name = \"...\".")
    validate_topic_name(name)
    where = f"topic {name!r}"
    created = raw.get("created", "initially")
    if created not in ("initially", "by_admin"):
        raise ScenarioError(f"{where}: created = {shown(repr(created))} must be \"initially\" or \"by_admin\".")
    deleted = _bool(raw, "deleted_by_admin", where, default=False)
    initially = created == "initially"
    if "replicas" in raw:
        return Topic(name, _explicit_assignment(raw, where, brokers), False, initially, deleted)
    return Topic(name, _computed_assignment(raw, where, brokers), True, initially, deleted)


def _explicit_assignment(raw: Mapping[str, Any], where: str, brokers: Sequence[Broker]
                         ) -> tuple[tuple[int, ...], ...]:
    """A topic's ``replicas``: an assignment Kafka's ``validateReplicaAssignment`` accepts."""
    for key in ("partitions", "replication_factor", "start_index", "replica_shift"):
        if key in raw:
            raise ScenarioError(f"{where} gives both replicas and {key}; give an explicit assignment "
                                "or let Kafka's algorithm compute it, not both.")
    reps = raw["replicas"]
    if not isinstance(reps, list) or not all(
        isinstance(r, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in r) for r in reps
    ):
        raise ScenarioError(f"{where}: replicas must be a list of broker-id lists, e.g. [[0, 1], [1, 2]].")
    count = sum(len(r) for r in reps)
    if count > MAX_TOPIC_REPLICAS:
        raise ScenarioError(f"{where} lists {count} replicas; keep them at most {MAX_TOPIC_REPLICAS} so that "
                            "the state space stays explorable.")
    if not reps:
        raise ScenarioError(f"{where}: replicas = [] lists no partition; give one broker-id list per "
                            "partition, e.g. [[0, 1], [1, 2]].")
    assignment = {p: tuple(r) for p, r in enumerate(reps)}
    try:
        kafka_assignment.validate_replica_assignment(assignment, [b.id for b in brokers])
    except kafka_assignment.KafkaAdminError as e:
        raise ScenarioError(f"{where}: {e.kafka_class.rsplit('.', 1)[-1]}: {str(e).rstrip('.')}; "
                            "fix its replicas.") from None
    return tuple(assignment[p] for p in range(len(assignment)))


def _computed_assignment(raw: Mapping[str, Any], where: str, brokers: Sequence[Broker]
                         ) -> tuple[tuple[int, ...], ...]:
    """A topic's assignment as Kafka's ``assignReplicasToBrokers`` computes it from ``partitions``,
    ``replication_factor``, ``start_index`` and ``replica_shift``."""
    partitions = _int(raw, "partitions", where, minimum=None)
    rf = _int(raw, "replication_factor", where, minimum=None)
    start = _int(raw, "start_index", where, default=0, minimum=0)
    shift = raw.get("replica_shift")
    if shift is not None and (not isinstance(shift, int) or isinstance(shift, bool) or shift < 0):
        raise ScenarioError(f"{where}: replica_shift = {shown(repr(shift))} must be a whole number >= 0.")
    for key, value in (("start_index", start), ("replica_shift", shift)):
        if value is not None and value > BROKER_ID_MAX:
            raise ScenarioError(f"{where}: {key} = {value} is beyond Kafka's (an Int, at most {BROKER_ID_MAX}); "
                                "use a smaller number.")
    # Kafka's argument checks first, with its messages (AdminUtils makes them before anything else), then sizes:
    # Kafka's assignment costs time and memory in proportion to them.
    try:
        kafka_assignment.check_assignment_arguments(partitions, rf, len(brokers))
    except kafka_assignment.KafkaAdminError as e:
        raise ScenarioError(f"{where}: {e.kafka_class.rsplit('.', 1)[-1]}: {e}") from None
    if partitions * rf > MAX_TOPIC_REPLICAS:
        raise ScenarioError(f"{where} has {partitions * rf} replicas; keep partitions × replication_factor "
                            f"at most {MAX_TOPIC_REPLICAS} so that the state space stays explorable.")
    try:
        computed = kafka_assignment.assign_replicas_to_brokers(
            [kafka_assignment.BrokerMetadata(b.id, b.rack) for b in brokers],
            partitions, rf, fixed_start_index=start, replica_shift=shift,
        )
    except kafka_assignment.KafkaAdminError as e:
        raise ScenarioError(f"{where}: {e.kafka_class.rsplit('.', 1)[-1]}: {e}") from None
    return tuple(computed[p] for p in sorted(computed))


def _table(doc: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise ScenarioError(f"[{key}] must be a table.")
    return value


def _array_of_tables(doc: Mapping[str, Any], key: str) -> list[Any]:
    value = doc.get(key, [])
    if not isinstance(value, list):
        raise ScenarioError(f"{key} must be written as [[{key}]] tables.")
    return value


def _check_keys(table: Mapping[str, Any], known: set[str], where: str) -> None:
    for key in table:
        if key not in known:
            raise ScenarioError(f"unknown key '{shown(key)}' in {where}; known keys are {', '.join(sorted(known))}.")


def _bound(table: Mapping[str, Any], key: str, default: Any) -> int:
    """A ``[bounds]`` value: a whole number from 0 to :data:`BOUND_MAX` (what the encoding can hold)."""
    value = _int(table, key, "[bounds]", default=default, minimum=0)
    if value > BOUND_MAX:
        raise ScenarioError(f"[bounds] {key} = {value} is beyond what the model's state encoding can represent "
                            f"(32-bit counters and epochs: at most {BOUND_MAX}); use a small bound, and "
                            "--max-states or --time-limit to limit the search.")
    return value


def _int(table: Mapping[str, Any], key: str, where: str, default: int | None = None,
         minimum: int | None = 0) -> int:
    if key not in table:
        if default is None:
            raise ScenarioError(f"{where} needs {key} = <whole number>.")
        return default
    value = table[key]
    if not isinstance(value, int) or isinstance(value, bool):
        raise ScenarioError(f"{where}: {key} = {shown(repr(value))} must be a whole number.")
    if minimum is not None and value < minimum:
        raise ScenarioError(f"{where}: {key} = {value} must be at least {minimum}.")
    return value


def _bool(table: Mapping[str, Any], key: str, where: str, default: bool) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise ScenarioError(f"{where}: {key} = {shown(repr(value))} must be true or false.")
    return value
