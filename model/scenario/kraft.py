"""Scenario input for the KRaft controller: ``[kafka] controller = "kraft"``.

A KRaft scenario names the brokers, the topics with their replica lists, Kafka's configuration
(``min.insync.replicas``, ``unclean.leader.election.enable``, and whether eligible leader replicas, KIP-966,
are on) and the environment's budget in ``[bounds]``: how many unclean shutdowns, restarts, controlled
shutdowns, session expiries of running brokers, produce requests and AlterPartition requests the explorer may
inject. :func:`load_kraft_scenario` reads them into the same :class:`~model.scenario.loader.Scenario` the
ZooKeeper model reads, with its ``kraft`` settings set; the keys of the ZooKeeper controller that have no
KRaft meaning yet (reassignments, topic deletion, bug switches) are refused in one sentence.

The KRaft model follows Kafka 3.9.0-rc3 (``metadata/src/main/java/org/apache/kafka/controller/``);
``[kafka] version`` takes ``"3.9"`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from model.scenario.kraft_bugs import KRAFT_BUGS

if TYPE_CHECKING:
    from model.scenario.loader import Scenario

#: The release the KRaft model reads (``git show 3.9.0-rc3:metadata/...``).
KRAFT_VERSION = "3.9"


@attrs.frozen
class KraftBounds:
    """How often the environment may act, like the limits of the KIP-966 TLA+ specification's config."""

    unclean_shutdowns: int = 0  # a broker stops without flushing: its log loses its unflushed tail
    restarts: int = 0  # an offline broker starts again and registers a new incarnation
    controlled_shutdowns: int = 0  # a running broker asks to shut down through its heartbeats
    session_expiries: int = 0  # a running broker misses heartbeats until its session expires and it is fenced
    produces: int = 0  # produce requests (acks=all) a client sends to a partition leader
    alter_partitions: int = 0  # AlterPartition requests (ISR shrinks and expansions) leaders send


@attrs.frozen
class KraftSettings:
    """The KRaft controller's configuration in a scenario (``[kafka]``) and its bounds (``[bounds]``)."""

    min_insync_replicas: int
    eligible_leader_replicas_enable: bool
    unclean_leader_election_enable: bool
    bounds: KraftBounds
    #: ``[bounds] stale_metadata_brokers``: the brokers whose metadata images may lag the log; every other broker
    #: replays the log to its end within each step (``model.kraft.reduction``). None: every broker may lag.
    stale_metadata_brokers: tuple[int, ...] | None = None
    #: the KRaft bug switches on (``[bugs]``, :data:`~model.scenario.kraft_bugs.KRAFT_BUGS`)
    bugs: frozenset[str] = frozenset()

    def bug(self, name: str) -> bool:
        return name in self.bugs


_KAFKA_KEYS = {"controller", "version", "min_insync_replicas", "eligible_leader_replicas_enable",
               "unclean_leader_election_enable"}
_TOP_KEYS = {"name", "description", "cluster", "topics", "kafka", "bounds", "check", "bugs"}
_TOPIC_KEYS = {"name", "replicas"}
_BOUNDS_KEYS = {field.name for field in attrs.fields(KraftBounds)}
_STALE = "stale_metadata_brokers"


def load_kraft_scenario(doc: Mapping[str, Any], text: str, default_name: str) -> Scenario:
    """A KRaft scenario from its parsed TOML ``doc`` (``text`` is kept for Spark workers)."""
    from model.scenario import loader

    for key in doc:
        if key not in _TOP_KEYS:
            raise loader.ScenarioError(f"'{loader.shown(key)}' is not modelled for the KRaft controller; a KRaft "
                                       f"scenario takes {', '.join(sorted(_TOP_KEYS))}.")
    kafka = loader._table(doc, "kafka")
    loader._check_keys(kafka, _KAFKA_KEYS, "[kafka] of a KRaft scenario")
    version = kafka.get("version", KRAFT_VERSION)
    if version != KRAFT_VERSION:
        raise loader.ScenarioError(f"[kafka] version = {loader.shown(repr(version))} is not modelled for the KRaft "
                                   f"controller; use \"{KRAFT_VERSION}\" (the model reads Kafka 3.9.0-rc3).")
    brokers = loader._brokers(doc)
    topics = _topics(doc, brokers)
    min_isr = loader._int(kafka, "min_insync_replicas", "[kafka]", default=1, minimum=1)
    bounds_t = loader._table(doc, "bounds")
    loader._check_keys(bounds_t, _BOUNDS_KEYS | {_STALE}, "[bounds] of a KRaft scenario")
    stale = _stale_metadata_brokers(bounds_t, {b.id for b in brokers})
    bounds = KraftBounds(**{f.name: loader._bound(bounds_t, f.name, f.default) for f in attrs.fields(KraftBounds)})
    check = loader._table(doc, "check")
    loader._check_keys(check, {"properties"}, "[check]")
    name, description = loader._name_and_description(doc, default_name)
    bugs = _bugs(doc)
    settings = KraftSettings(
        min_insync_replicas=min_isr,
        eligible_leader_replicas_enable=loader._bool(kafka, "eligible_leader_replicas_enable", "[kafka]",
                                                     default=False),
        unclean_leader_election_enable=loader._bool(kafka, "unclean_leader_election_enable", "[kafka]",
                                                    default=False),
        bounds=bounds, stale_metadata_brokers=stale, bugs=bugs)
    return loader.Scenario(
        name=name, description=description, brokers=brokers, topics=topics, version=(3, 9),
        delete_topic_enable=True, unclean_leader_election_enable=settings.unclean_leader_election_enable,
        bounds=loader.Bounds(broker_failures=0), properties=loader._properties(check), bugs=bugs,
        reassignments=(), source=text, inter_broker_protocol=(3, 9), kraft=settings)


def _bugs(doc: Mapping[str, Any]) -> frozenset[str]:
    """The KRaft bug switches on: 3.9's defaults (none: every fix in the table is older), changed by ``[bugs]``."""
    from model.scenario import loader
    from model.scenario.bugs import BUGS

    table = loader._table(doc, "bugs")
    on = {name for name, b in KRAFT_BUGS.items() if b.default_for((3, 9))}
    for name, value in table.items():
        if name not in KRAFT_BUGS:
            kind = "a ZooKeeper controller switch" if name in BUGS else "not a KRaft bug switch"
            raise loader.ScenarioError(f"[bugs] {loader.shown(name)} is {kind}; a KRaft scenario takes one of "
                                       f"{', '.join(sorted(KRAFT_BUGS))} (see `kmc bugs`).")
        if not isinstance(value, bool):
            raise loader.ScenarioError(f"[bugs] {name} = {loader.shown(repr(value))} must be true or false.")
        (on.add if value else on.discard)(name)
    return frozenset(on)


def _stale_metadata_brokers(bounds: Mapping[str, Any], ids: set[int]) -> tuple[int, ...] | None:
    """``[bounds] stale_metadata_brokers``: a list of broker ids of ``[cluster]`` (absent: every broker)."""
    from model.scenario import loader

    if _STALE not in bounds:
        return None
    value = bounds[_STALE]
    if (not isinstance(value, list) or not all(isinstance(b, int) and not isinstance(b, bool) for b in value)
            or not set(value) <= ids or len(set(value)) != len(value)):
        raise loader.ScenarioError(f"[bounds] {_STALE} = {loader.shown(repr(value))} must be a list of distinct "
                                   f"broker ids of [cluster] ({sorted(ids)}), e.g. [2] or [].")
    return tuple(sorted(value))


def _topics(doc: Mapping[str, Any], brokers: tuple[Any, ...]) -> tuple[Any, ...]:
    """``[[topics]]`` with explicit ``replicas`` (one list of broker ids per partition), present from the start."""
    from model.scenario import loader

    ids = {b.id for b in brokers}
    topics = []
    for index, raw in enumerate(loader._array_of_tables(doc, "topics")):
        if not isinstance(raw, dict):
            raise loader.ScenarioError(f"[[topics]] entry {index} must be a table with name and replicas.")
        loader._check_keys(raw, _TOPIC_KEYS, f"[[topics]] entry {index} of a KRaft scenario")
        name = raw.get("name")
        if not isinstance(name, str):
            raise loader.ScenarioError(f"[[topics]] entry {index} needs name = \"<topic>\".")
        loader.validate_topic_name(name)
        replicas = raw.get("replicas")
        if (not isinstance(replicas, list) or not replicas
                or not all(isinstance(r, list) and r and all(isinstance(b, int) and not isinstance(b, bool)
                                                             for b in r) for r in replicas)):
            raise loader.ScenarioError(f"topic {name!r} needs replicas = [[0, 1, 2], ...] (one non-empty list of "
                                       "broker ids per partition; KRaft's StripedReplicaPlacer is not modelled).")
        for r in replicas:
            if len(set(r)) != len(r) or not set(r) <= ids:
                raise loader.ScenarioError(f"topic {name!r}: replicas {r} must be distinct brokers of [cluster] "
                                           f"({sorted(ids)}).")
        topics.append(loader.Topic(name=name, replicas=tuple(tuple(r) for r in replicas), auto_assigned=False,
                                   created_initially=True, deleted_by_admin=False))
    if not topics:
        raise loader.ScenarioError("the scenario has no [[topics]]; add at least one topic to explore.")
    if len({t.name for t in topics}) != len(topics):
        raise loader.ScenarioError("a topic is declared twice in [[topics]]; give each topic one entry.")
    if sum(len(r) for t in topics for r in t.replicas) > loader.MAX_TOTAL_REPLICAS:
        raise loader.ScenarioError(f"the topics have more than {loader.MAX_TOTAL_REPLICAS} replicas in all; use "
                                   "fewer.")
    return tuple(topics)
