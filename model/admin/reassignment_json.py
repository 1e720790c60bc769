"""Kafka's reassignment files: reading them with Kafka's own rules, writing them as Kafka does.

What ``kafka-reassign-partitions.sh`` (``admin/ReassignPartitionsCommand.scala``, Kafka 2.3.0) reads
and writes, for ``kmc plan`` and ``kmc validate``:

* the reassignment JSON (``--reassignment-json-file``): :func:`parse_reassignment_json` follows
  ``parsePartitionReassignmentData`` (syntax: version, partitions, topic, partition, replicas,
  optional log_dirs of the same length) and :func:`check_reassignment` the checks of
  ``parseAndValidate`` (empty file, empty replica list, duplicate partitions, duplicate replicas,
  partitions and brokers that do not exist), each with Kafka's sentence;
* the topics-to-move JSON (``--topics-to-move-json-file``, ``parseTopicsData``);
* the output of ``kafka-topics.sh --describe`` (``TopicCommand.describeTopic`` / ``printPartition``),
  as a current placement;
* :func:`render_reassignment_json`: ``formatAsReassignmentJson``'s document (version 1; keys topic,
  partition, replicas, log_dirs), in kmc's deterministic order (topic, then partition).

Kafka's JSON reader (``kafka.utils.json``, Jackson underneath) reports a wrong type as "Expected
`Int` value, received <node>" and a missing field as "No such field exists: `topic`"; these are
reproduced, with the node printed as compact JSON like Jackson's ``toString``. kmc stops at the
first syntax error, as Kafka does, but :func:`check_reassignment` returns every failed check.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import attrs

from model.admin.assignment import AdminOperationException, KafkaAdminError

TopicPartition = tuple[str, int]
Placement = dict[TopicPartition, tuple[int, ...]]

ANY_LOG_DIR = "any"  # Kafka: ReassignPartitionsCommand.AnyLogDir
EARLIEST_VERSION = 1  # Kafka: ReassignPartitionsCommand.EarliestVersion


class AdminCommandFailedException(KafkaAdminError):
    kafka_class = "kafka.common.AdminCommandFailedException"


class JsonMappingException(KafkaAdminError):
    kafka_class = "com.fasterxml.jackson.databind.JsonMappingException"


class DescribeOutputError(ValueError):
    """A ``kafka-topics --describe`` text kmc cannot read (not a Kafka error: Kafka never reads it)."""


def tp_name(tp: TopicPartition) -> str:
    """Kafka's ``TopicPartition.toString``: ``topic-partition``."""
    return f"{tp[0]}-{tp[1]}"


@attrs.frozen
class ReassignmentEntry:
    """One element of the ``partitions`` array, as written (duplicates are kept for the checks)."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    log_dirs: tuple[str, ...]

    @property
    def tp(self) -> TopicPartition:
        return (self.topic, self.partition)


# ---------------------------------------------------------------------------------------------------
# Reading


def _node(value: Any) -> str:
    """A JSON node as Jackson's ``JsonNode.toString`` prints it (compact), as one line of a message:
    characters that are not printable (line separators included) escaped, and cut after 200."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    text = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
    return text if len(text) <= 200 else f"{text[:200]}…"


def _parse_json(text: str) -> Any:
    """Kafka: ``Json.parseFull``; None (Kafka's ``None``) when the text is not JSON."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: arrays or objects nested thousands deep
        return None


def _as_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise JsonMappingException(f"Expected JSON object, received {_node(value)}")
    return value


def _as_array(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise JsonMappingException(f"Expected JSON array, received {_node(value)}")
    return value


def _field(obj: Mapping[str, Any], name: str) -> Any:
    if name not in obj:
        raise JsonMappingException(f"No such field exists: `{name}`")
    return obj[name]


def _to_int(value: Any) -> int:
    # Jackson's isInt: an integral JSON number in Java int range (not a boolean, not 1.0).
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**31) <= value < 2**31:
        raise JsonMappingException(f"Expected `Int` value, received {_node(value)}")
    return value


def _to_str(value: Any) -> str:
    if not isinstance(value, str):
        raise JsonMappingException(f"Expected `String` value, received {_node(value)}")
    return value


def _version(doc: Any) -> int:
    obj = _as_object(doc)
    return _to_int(obj["version"]) if "version" in obj else EARLIEST_VERSION


def _scala_list(items: Sequence[Any]) -> str:
    return f"List({', '.join(map(str, items))})"


def parse_reassignment_json(text: str) -> tuple[ReassignmentEntry, ...]:
    """The entries of a reassignment JSON, in file order; Kafka's exception for the first syntax error.

    Kafka: ``ReassignPartitionsCommand.parsePartitionReassignmentData`` (2.3.0). A missing
    ``partitions`` key gives no entries (the emptiness check is :func:`check_reassignment`'s).
    """
    doc = _parse_json(text)
    if doc is None:
        raise AdminOperationException("The input string is not a valid JSON")
    version = _version(doc)
    if version != 1:
        raise AdminOperationException(f"Not supported version field value {version}")
    entries: list[ReassignmentEntry] = []
    obj = _as_object(doc)
    for item in _as_array(obj["partitions"]) if "partitions" in obj else []:
        fields = _as_object(item)
        topic = _to_str(_field(fields, "topic"))
        partition = _to_int(_field(fields, "partition"))
        replicas = tuple(_to_int(r) for r in _as_array(_field(fields, "replicas")))
        if "log_dirs" in fields:
            log_dirs = tuple(_to_str(d) for d in _as_array(fields["log_dirs"]))
        else:
            log_dirs = (ANY_LOG_DIR,) * len(replicas)
        if len(replicas) != len(log_dirs):
            raise AdminCommandFailedException(
                f"Size of replicas list {_scala_list(replicas)} is different from size of log dirs list "
                f"{_scala_list(log_dirs)} for partition {tp_name((topic, partition))}"
            )
        entries.append(ReassignmentEntry(topic, partition, replicas, log_dirs))
    return tuple(entries)


def check_reassignment(
    entries: Sequence[ReassignmentEntry],
    existing_partitions: Collection[TopicPartition] | None = None,
    existing_brokers: Collection[int] | None = None,
) -> list[AdminCommandFailedException]:
    """Every check of Kafka's ``parseAndValidate`` (2.3.0) the entries fail, with Kafka's sentences.

    Kafka throws the first; kmc returns all, in Kafka's order. The existence checks run only when
    the partitions (``existing_partitions``) or brokers (``existing_brokers``) of the cluster are known.
    """
    if not entries:
        return [AdminCommandFailedException("Partition reassignment data file is empty")]
    problems: list[AdminCommandFailedException] = []
    if any(not e.replicas for e in entries):
        problems.append(AdminCommandFailedException("Partition replica list cannot be empty"))
    counts = Counter(e.tp for e in entries)
    duplicate_tps = sorted(tp for tp, n in counts.items() if n > 1)
    if duplicate_tps:
        problems.append(AdminCommandFailedException(
            "Partition reassignment contains duplicate topic partitions: "
            + ",".join(tp_name(tp) for tp in duplicate_tps)
        ))
    duplicate_replicas = []
    for e in entries:
        twice = sorted(b for b, n in Counter(e.replicas).items() if n > 1)
        if twice:
            duplicate_replicas.append(f"{tp_name(e.tp)} contains multiple entries for {','.join(map(str, twice))}")
    if duplicate_replicas:
        problems.append(AdminCommandFailedException(
            "Partition replica lists may not contain duplicate entries: " + ". ".join(duplicate_replicas)
        ))
    if existing_partitions is not None:
        missing = [e.tp for e in entries if e.tp not in existing_partitions]
        if missing:
            problems.append(AdminCommandFailedException(
                "The proposed assignment contains non-existent partitions: "
                f"ListBuffer({', '.join(tp_name(tp) for tp in missing)})"
            ))
    if existing_brokers is not None:
        unknown = sorted({b for e in entries for b in e.replicas} - set(existing_brokers))
        if unknown:
            problems.append(AdminCommandFailedException(
                "The proposed assignment contains non-existent brokerIDs: " + ",".join(map(str, unknown))
            ))
    return problems


def placement_of(entries: Sequence[ReassignmentEntry]) -> Placement:
    """The entries as a placement (partition -> replicas), sorted by topic and partition; last entry wins."""
    placement = {e.tp: e.replicas for e in entries}
    return {tp: placement[tp] for tp in sorted(placement)}


def parse_topics_to_move(text: str) -> tuple[str, ...]:
    """The topics of a topics-to-move JSON (``{"topics": [{"topic": "foo"}], "version": 1}``).

    Kafka: ``ReassignPartitionsCommand.parseTopicsData`` and the duplicate check of
    ``generateAssignment`` (2.3.0).
    """
    doc = _parse_json(text)
    if doc is None:
        raise AdminOperationException("The input string is not a valid JSON")
    version = _version(doc)
    if version != 1:
        raise AdminOperationException(f"Not supported version field value {version}")
    obj = _as_object(doc)
    topics = [
        _to_str(_field(_as_object(item), "topic")) for item in (_as_array(obj["topics"]) if "topics" in obj else [])
    ]
    twice = sorted(t for t, n in Counter(topics).items() if n > 1)
    if twice:
        raise AdminCommandFailedException(
            f"List of topics to reassign contains duplicate entries: {','.join(twice)}"
        )
    return tuple(topics)


# One partition line of `kafka-topics --describe` (2.3: "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1";
# later versions drop the leading tab and may add fields after Isr).
_DESCRIBE_PARTITION = re.compile(
    r"^\s*Topic:\s*(?P<topic>\S+)\s+Partition:\s*(?P<partition>\d+)\s+Leader:\s*(?P<leader>\S+)\s+"
    r"Replicas:\s*(?P<replicas>[\d,]*)\s+Isr:\s*(?P<isr>[\d,]*)",
    re.ASCII,  # Kafka prints ASCII digits; \d would also take other scripts' digits
)


def parse_describe_output(text: str) -> Placement:
    """The placement in ``kafka-topics.sh --describe`` output (Kafka: ``TopicCommand.printPartition``).

    Topic header lines (``Topic:t\\tPartitionCount:…``) and anything else without ``Partition:`` are
    skipped; a partition line kmc cannot read, a partition listed twice, or no partition at all is a
    :class:`DescribeOutputError`.
    """
    placement: Placement = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if "Partition:" not in line:
            continue
        match = _DESCRIBE_PARTITION.match(line)
        if match is None or not match["replicas"]:
            raise DescribeOutputError(
                f"line {number} ({line.strip()[:120]!r}) is not a kafka-topics --describe partition line "
                "'Topic: T Partition: P Leader: L Replicas: R1,R2 Isr: …'"
            )
        tp = (match["topic"], int(match["partition"]))
        if tp in placement:
            raise DescribeOutputError(f"line {number} describes partition {tp_name(tp)} a second time")
        placement[tp] = tuple(int(b) for b in match["replicas"].split(","))
    if not placement:
        raise DescribeOutputError("no partition line ('Topic: T Partition: P … Replicas: …') was found")
    return {tp: placement[tp] for tp in sorted(placement)}


def parse_current_placement(text: str) -> Placement:
    """A current placement from reassignment JSON (text starting with ``{``) or ``kafka-topics --describe``.

    JSON must pass Kafka's syntax and its own consistency checks (no duplicate partition or replica,
    no empty replica list): the first failure is raised as Kafka's exception.
    """
    if text.lstrip().startswith("{"):
        entries = parse_reassignment_json(text)
        problems = check_reassignment(entries)
        if problems:
            raise problems[0]
        return placement_of(entries)
    return parse_describe_output(text)


def _listed(value: Any, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise DescribeOutputError(f"log-dirs field \"{field}\" is {_node(value)}, not a list")
    return value


def parse_log_dirs_sizes(text: str) -> dict[TopicPartition, int]:
    """Partition sizes in bytes from ``kafka-log-dirs.sh --describe`` output (Kafka: ``LogDirsCommand``):
    the JSON line after its two progress lines, ``{"brokers": [{"broker": 0, "logDirs": [{"partitions":
    [{"partition": "t-0", "size": 123, …}]}]}]}``. A partition's size is its largest replica's.
    Raises :class:`DescribeOutputError` naming what is missing."""
    line = next((ln for ln in text.splitlines() if ln.lstrip().startswith("{")), None)
    doc = _parse_json(line) if line is not None else None
    if not isinstance(doc, dict) or not isinstance(doc.get("brokers"), list):
        raise DescribeOutputError("no kafka-log-dirs --describe JSON line "
                                  "('{\"version\":1,\"brokers\":[…]}') was found")
    sizes: dict[TopicPartition, int] = {}
    for broker in doc["brokers"]:
        log_dirs = broker.get("logDirs", []) if isinstance(broker, dict) else []
        for log_dir in _listed(log_dirs, "logDirs"):
            partitions = log_dir.get("partitions", []) if isinstance(log_dir, dict) else []
            for entry in _listed(partitions, "partitions"):
                name, size = (entry.get("partition"), entry.get("size")) if isinstance(entry, dict) else (None, None)
                topic, sep, number = str(name).rpartition("-")
                # ASCII digits only: str.isdigit() also accepts "²", which int() then refuses.
                digits = number.isascii() and number.isdigit()
                if not sep or not digits or not isinstance(size, int) or isinstance(size, bool):
                    raise DescribeOutputError(f"log-dirs entry {_node(entry)} needs \"partition\": \"topic-N\" "
                                              "and an integer \"size\"")
                tp = (topic, int(number))
                sizes[tp] = max(size, sizes.get(tp, 0))
    return sizes


# ---------------------------------------------------------------------------------------------------
# Writing


def render_reassignment_json(placement: Mapping[TopicPartition, Sequence[int]]) -> str:
    """The one-line reassignment JSON Kafka writes (``formatAsReassignmentJson``): version 1, then the
    partitions sorted by topic and partition, each with topic, partition, replicas and log dirs "any"."""
    doc = {
        "version": 1,
        "partitions": [
            {
                "topic": tp[0],
                "partition": tp[1],
                "replicas": list(placement[tp]),
                "log_dirs": [ANY_LOG_DIR] * len(placement[tp]),
            }
            for tp in sorted(placement)
        ],
    }
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
