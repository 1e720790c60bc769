"""Scenario input for the KRaft controller: ``[kafka] controller = "kraft"``.

A KRaft scenario names the brokers, the topics with their replica lists, Kafka's configuration
(``min.insync.replicas``, ``unclean.leader.election.enable``, and whether eligible leader replicas, KIP-966,
are on) and the environment's budget in ``[bounds]``: how many unclean shutdowns, broker crashes, restarts, controlled
shutdowns, session expiries of running brokers, produce requests and AlterPartition requests the explorer may
inject. :func:`load_kraft_scenario` reads them into the same :class:`~model.scenario.loader.Scenario` the
ZooKeeper model reads, with its ``kraft`` settings set; the keys of the ZooKeeper controller that have no
KRaft meaning yet (reassignments, bug switches of the ZooKeeper controller) are refused in one sentence.

Admin actions, in the way the ZooKeeper scenarios write them, each bounded in ``[bounds]``: a topic with
``created = "by_admin"`` is created during the run by a CreateTopics request (``replicas``: a manual assignment;
``partitions`` and ``replication_factor``: placed by KRaft's ``StripedReplicaPlacer`` when the request arrives,
drawing from ``new Random([kafka] striped_replica_placer_seed)``), within ``topic_creations``; a topic with
``deleted_by_admin = true`` is deleted by a DeleteTopics request, within ``topic_deletions``; a topic's
``min_insync_replicas_by_admin = [values]`` are the values an IncrementalAlterConfigs request may set its
``min.insync.replicas`` to, within ``min_insync_replicas_changes``.

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
    topic_creations: int = 0  # CreateTopics requests (of the topics created = "by_admin") the controller accepts
    topic_deletions: int = 0  # DeleteTopics requests (of the topics deleted_by_admin = true) the controller accepts
    # IncrementalAlterConfigs requests setting a topic's min.insync.replicas (to one of min_insync_replicas_by_admin)
    min_insync_replicas_changes: int = 0
    # a running broker's process stops (kill -9, OOM, a JVM exit) without a clean shutdown; its log survives
    crashes: int = 0


@attrs.frozen
class KraftTopic:
    """What a KRaft scenario says of one topic beyond its replicas: how it is placed, and the admin's requests."""

    name: str
    partitions: int
    replication_factor: int
    #: a manual assignment (one replica list per partition), or () for StripedReplicaPlacer's at creation
    replicas: tuple[tuple[int, ...], ...]
    created_by_admin: bool = False
    deleted_by_admin: bool = False
    min_insync_replicas_by_admin: tuple[int, ...] = ()


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
    #: ``[[topics]]`` in the scenario's order, and the topic of each partition index (the model's partitions are
    #: the scenario's (topic, partition) pairs in that order)
    topics: tuple[KraftTopic, ...] = ()
    partition_topics: tuple[str, ...] = ()
    #: the seed of the ``java.util.Random`` each CreateTopics' ``StripedReplicaPlacer`` draws from
    striped_replica_placer_seed: int = 0

    def bug(self, name: str) -> bool:
        return name in self.bugs

    def topic(self, name: str) -> KraftTopic:
        return next(t for t in self.topics if t.name == name)

    def partitions_of(self, name: str) -> tuple[int, ...]:
        return tuple(i for i, t in enumerate(self.partition_topics) if t == name)


_KAFKA_KEYS = {"controller", "version", "min_insync_replicas", "eligible_leader_replicas_enable",
               "unclean_leader_election_enable", "striped_replica_placer_seed"}
_TOP_KEYS = {"name", "description", "cluster", "topics", "kafka", "bounds", "check", "bugs"}
_TOPIC_KEYS = {"name", "replicas", "partitions", "replication_factor", "created", "deleted_by_admin",
               "min_insync_replicas_by_admin"}
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
    topics, kraft_topics = _topics(doc, brokers)
    min_isr = loader._int(kafka, "min_insync_replicas", "[kafka]", default=1, minimum=1)
    bounds_t = loader._table(doc, "bounds")
    loader._check_keys(bounds_t, _BOUNDS_KEYS | {_STALE}, "[bounds] of a KRaft scenario")
    stale = _stale_metadata_brokers(bounds_t, {b.id for b in brokers})
    bounds = KraftBounds(**{f.name: loader._bound(bounds_t, f.name, f.default) for f in attrs.fields(KraftBounds)})
    _check_admin_bounds(bounds, kraft_topics)
    seed = loader._int(kafka, "striped_replica_placer_seed", "[kafka]", default=0, minimum=None)
    if not -2**63 <= seed < 2**63:
        raise loader.ScenarioError(f"[kafka] striped_replica_placer_seed = {seed} is not a Java long; use a seed "
                                   "from -2^63 to 2^63 - 1.")
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
        bounds=bounds, stale_metadata_brokers=stale, bugs=bugs, topics=kraft_topics,
        partition_topics=tuple(t.name for t in kraft_topics for _ in range(t.partitions)),
        striped_replica_placer_seed=seed)
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


def _topics(doc: Mapping[str, Any], brokers: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[KraftTopic, ...]]:
    """``[[topics]]``: explicit ``replicas`` (one list of broker ids per partition), or (created by an admin)
    ``partitions`` and ``replication_factor`` for ``StripedReplicaPlacer``; present from the start unless
    ``created = "by_admin"``."""
    from model.scenario import loader

    ids = {b.id for b in brokers}
    topics, kraft = [], []
    for index, raw in enumerate(loader._array_of_tables(doc, "topics")):
        if not isinstance(raw, dict):
            raise loader.ScenarioError(f"[[topics]] entry {index} must be a table with name and replicas.")
        loader._check_keys(raw, _TOPIC_KEYS, f"[[topics]] entry {index} of a KRaft scenario")
        name = raw.get("name")
        if not isinstance(name, str):
            raise loader.ScenarioError(f"[[topics]] entry {index} needs name = \"<topic>\".")
        loader.validate_topic_name(name)
        where = f"topic {name!r}"
        created = raw.get("created", "initially")
        if created not in ("initially", "by_admin"):
            raise loader.ScenarioError(f"{where}: created = {loader.shown(repr(created))} must be \"initially\" or "
                                       "\"by_admin\" (a CreateTopics request during the run).")
        by_admin = created == "by_admin"
        if "replicas" in raw:
            replicas = _manual_replicas(raw, where, ids)
            placed: tuple[tuple[int, ...], ...] = replicas
        else:
            placed = ()
            replicas = _striped_shape(raw, where, ids, by_admin)
        rf = len(replicas[0])
        deleted = loader._bool(raw, "deleted_by_admin", where, default=False)
        min_isr_values = _min_isr_values(raw, where)
        topics.append(loader.Topic(name=name, replicas=replicas, auto_assigned=not placed,
                                   created_initially=not by_admin, deleted_by_admin=deleted))
        kraft.append(KraftTopic(name=name, partitions=len(replicas), replication_factor=rf, replicas=placed,
                                created_by_admin=by_admin, deleted_by_admin=deleted,
                                min_insync_replicas_by_admin=min_isr_values))
    if not topics:
        raise loader.ScenarioError("the scenario has no [[topics]]; add at least one topic to explore.")
    if len({t.name for t in topics}) != len(topics):
        raise loader.ScenarioError("a topic is declared twice in [[topics]]; give each topic one entry.")
    if sum(len(r) for t in topics for r in t.replicas) > loader.MAX_TOTAL_REPLICAS:
        raise loader.ScenarioError(f"the topics have more than {loader.MAX_TOTAL_REPLICAS} replicas in all; use "
                                   "fewer.")
    return tuple(topics), tuple(kraft)


def _manual_replicas(raw: Mapping[str, Any], where: str, ids: set[int]) -> tuple[tuple[int, ...], ...]:
    """``replicas``: a manual assignment (``ReplicationControlManager.validateManualPartitionAssignment``: non-empty,
    registered, distinct brokers, one replication factor)."""
    from model.scenario import loader

    for key in ("partitions", "replication_factor"):
        if key in raw:
            raise loader.ScenarioError(f"{where} gives both replicas and {key}; give a manual assignment or let "
                                       "StripedReplicaPlacer place partitions and replication_factor, not both.")
    replicas = raw["replicas"]
    if (not isinstance(replicas, list) or not replicas
            or not all(isinstance(r, list) and r and all(isinstance(b, int) and not isinstance(b, bool)
                                                         for b in r) for r in replicas)):
        raise loader.ScenarioError(f"{where} needs replicas = [[0, 1, 2], ...] (one non-empty list of broker ids "
                                   "per partition), or partitions and replication_factor with created = \"by_admin\".")
    for r in replicas:
        if len(set(r)) != len(r) or not set(r) <= ids:
            raise loader.ScenarioError(f"{where}: replicas {r} must be distinct brokers of [cluster] "
                                       f"({sorted(ids)}).")
        if len(r) != len(replicas[0]):
            raise loader.ScenarioError(f"{where}: replicas {r} has {len(r)} replica(s) and partition 0 has "
                                       f"{len(replicas[0])} (Kafka: INVALID_REPLICA_ASSIGNMENT); give every "
                                       "partition one replication factor.")
    return tuple(tuple(r) for r in replicas)


def _striped_shape(raw: Mapping[str, Any], where: str, ids: set[int],
                   by_admin: bool) -> tuple[tuple[int, ...], ...]:
    """``partitions`` and ``replication_factor`` of a topic StripedReplicaPlacer places at its creation; the
    replica lists stand in as broker-less placeholders of that shape until then."""
    from model.scenario import loader

    if not by_admin:
        raise loader.ScenarioError(f"{where} needs replicas = [[0, 1, 2], ...] (a topic present from the start has "
                                   "a given assignment; StripedReplicaPlacer places topics created = \"by_admin\").")
    partitions = loader._int(raw, "partitions", where, minimum=1)
    rf = loader._int(raw, "replication_factor", where, minimum=1)
    if rf > len(ids):
        raise loader.ScenarioError(f"{where}: replication_factor = {rf} exceeds the {len(ids)} brokers of [cluster] "
                                   f"(Kafka: INVALID_REPLICATION_FACTOR, only {len(ids)} broker(s) are registered); "
                                   "use a smaller replication factor.")
    if partitions * rf > loader.MAX_TOPIC_REPLICAS:
        raise loader.ScenarioError(f"{where} has {partitions * rf} replicas; keep partitions × replication_factor "
                                   f"at most {loader.MAX_TOPIC_REPLICAS} so that the state space stays explorable.")
    return tuple(tuple(-1 for _ in range(rf)) for _ in range(partitions))


def _min_isr_values(raw: Mapping[str, Any], where: str) -> tuple[int, ...]:
    """``min_insync_replicas_by_admin``: distinct values ``min.insync.replicas`` accepts (``atLeast(1)``)."""
    from model.scenario import loader

    key = "min_insync_replicas_by_admin"
    values = raw.get(key, [])
    if (not isinstance(values, list) or (not values and key in raw)
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in values)
            or len(set(values)) != len(values)):
        raise loader.ScenarioError(f"{where}: {key} = {loader.shown(repr(values))} must be a non-empty list of "
                                   "distinct whole numbers, e.g. [1, 3].")
    for v in values:
        if not 1 <= v <= loader.BOUND_MAX:
            raise loader.ScenarioError(f"{where}: {key} holds {v} (Kafka: Invalid value {v} for configuration "
                                       "min.insync.replicas: Value must be at least 1); use values from 1 up.")
    return tuple(values)


def _check_admin_bounds(bounds: KraftBounds, topics: tuple[KraftTopic, ...]) -> None:
    """Each admin action's topics and its ``[bounds]`` count go together: a topic the admin acts on needs a
    count above 0, and a count needs such a topic."""
    from model.scenario import loader

    for bound, flag, what in (("topic_creations", "created = \"by_admin\"", lambda t: t.created_by_admin),
                              ("topic_deletions", "deleted_by_admin = true", lambda t: t.deleted_by_admin),
                              ("min_insync_replicas_changes", "min_insync_replicas_by_admin = [...]",
                               lambda t: bool(t.min_insync_replicas_by_admin))):
        named = [t.name for t in topics if what(t)]
        count = getattr(bounds, bound)
        if named and count == 0:
            raise loader.ScenarioError(f"topic {named[0]!r} has {flag} but [bounds] {bound} = 0; set {bound} to the "
                                       "number of requests the admin may send.")
        if count and not named:
            raise loader.ScenarioError(f"[bounds] {bound} = {count} has no topic to act on; give a topic {flag} or "
                                       f"drop {bound}.")
