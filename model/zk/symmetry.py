"""Broker symmetry of a scenario: which broker ids are interchangeable, and a state's canonical bytes.

``kmc explore --symmetry`` explores one state per orbit of the scenario's broker symmetry group:
the explorers fingerprint :meth:`BrokerSymmetry.canonical_encode` (the same bytes for every state
of an orbit: the least encoding of the state renamed by the permutations that order each class by
an id-free signature of its brokers) instead of the plain encoding (:mod:`explorer.symmetry`). This module
is the Kafka half: the group, and a state with its broker ids renamed.

The group. A permutation of broker ids is a symmetry of a scenario when renaming the ids of a
state and then stepping gives the same states as stepping by the renamed action and then
renaming, and the initial state maps to itself. It is if every scenario parameter maps to itself:

* racks: a broker keeps its rack (``AdminUtils`` places replicas by rack, and the ``rack_spread``
  property counts racks);
* topic placements: every topic's replicas, and a re-created topic's, are *ordered* lists per
  partition (the head is the preferred replica, ``PartitionLeaderElectionAlgorithms`` walks them in
  order), so a list maps to itself only if each broker in it stays where it is: a broker named in
  a placement is pinned. That holds for topics Kafka's own assignment placed too: the scenario
  resolves ``assignReplicasToBrokers`` when it is loaded, and its result names brokers;
* reassignments: the target replica lists of ``[[reassignments]]`` are ordered lists: pinned too;
* added partitions: ``kafka-topics --alter --partitions`` runs ``AdminZkClient.addPartitions`` over
  the registered brokers *sorted by id* (``getBrokerMetadatas``, 2.3) while the model runs, so
  which broker gets a new replica depends on the ids' order: a scenario with a topic that gains
  partitions pins every broker;
* roles: in Kafka the controller is one of the brokers (``KafkaController.elect``), which would make
  it a role of its own; in the model the controller's host is none of the modelled brokers (a
  deviation listed in :mod:`model.zk.controller.controller_failover`), and bounds and budgets are cluster-wide
  counters, never per broker, so brokers have no other role to tell them apart.

So the interchangeable classes are the brokers that no placement, reassignment or added partition
pins, grouped by rack; the group is the product of the symmetric groups of the classes. Every
scenario shipped today names all its brokers in a placement (two to four brokers, replication
factor two or three over a few partitions: 37 scenarios, and the two of ``bench/scenarios``), so the
reduction saves nothing on them; it does on clusters with spare brokers, such as
``tests/scenarios/spare-brokers.toml`` (``python bench/symmetry.py`` prints the figures).

Renaming a state. A broker id occurs in ZooKeeper (registrations, assignments, partition-state
znodes, the reassignment znode, log-dir notifications), in the controller's context and its
events (of the active controller and of a former one still processing events), in each broker's
view (its id, partitions, metadata cache), in the channels (keyed by broker, and in the requests),
and in kmc's history; every one is renamed. Containers that the model keeps sorted by broker id
(the brokers, the channels, live-broker sets, replica states keyed by replica...) are sorted again,
so the renamed state is the value the renamed run would have built; ordered lists (replicas,
ISRs, event and request queues) keep their order. The step's log is not part of a state's
identity and is left as it is. ``tests/test_symmetry.py`` checks that renaming commutes with
``next_state`` over every reachable state of small scenarios.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from model.scenario import Scenario
from model.zk.state.schema import (
    Shape,
    is_broker_id,
    mentions,
    optional_of,
    record_of,
    sequence_of,
    state_fields,
    strip,
)
from model.zk.state.values import ClusterState

Renaming = Mapping[int, int]


def pinned_brokers(scenario: Scenario) -> frozenset[int]:
    """The brokers a scenario tells apart by id (see the module docstring)."""
    every = frozenset(b.id for b in scenario.brokers)
    if any(t.add_partitions for t in scenario.topics):
        return every
    named: set[int] = set()
    for t in scenario.topics:
        for reps in (*t.replicas, *t.recreated_replicas):
            named.update(reps)
    for command in scenario.reassignments:
        for _, reps in command.targets:
            named.update(reps)
    return frozenset(named & every)


def interchangeable_classes(scenario: Scenario) -> tuple[tuple[int, ...], ...]:
    """The classes of two or more interchangeable brokers: unpinned brokers grouped by rack, by least id."""
    pinned = pinned_brokers(scenario)
    by_rack: dict[str | None, list[int]] = {}
    for b in sorted(scenario.brokers, key=lambda b: b.id):
        if b.id not in pinned:
            by_rack.setdefault(b.rack, []).append(b.id)
    return tuple(sorted(tuple(ids) for ids in by_rack.values() if len(ids) > 1))


def renamings(classes: Sequence[Sequence[int]]) -> tuple[dict[int, int], ...]:
    """Every permutation of the group the classes generate but the identity, as ``{id: new id}``."""
    per_class = [[dict(zip(ids, image, strict=True)) for image in itertools.permutations(ids)] for ids in classes]
    out: list[dict[int, int]] = []
    for parts in itertools.product(*per_class):
        mapping = {b: image for part in parts for b, image in part.items() if b != image}
        if mapping:
            out.append(mapping)
    return tuple(out)


@attrs.frozen
class BrokerSymmetry:
    """A scenario's broker symmetry group and the canonical encoding under it."""

    classes: tuple[tuple[int, ...], ...]
    permutations: tuple[dict[int, int], ...] = attrs.field(eq=False, repr=False)

    @classmethod
    def of(cls, scenario: Scenario) -> BrokerSymmetry:
        classes = interchangeable_classes(scenario)
        return cls(classes, renamings(classes))

    @property
    def order(self) -> int:
        """How many permutations the group has (the identity included)."""
        return len(self.permutations) + 1

    def canonical_encode(self, state: ClusterState, encode: Callable[[ClusterState], bytes]) -> bytes:
        """The orbit's canonical bytes: equal for two states iff a permutation of the group renames one to
        the other. The least ``encode`` of the state renamed by each permutation that lists the class's
        brokers in the order of their :func:`broker_signature` (all orders of brokers whose signatures tie).

        That set of renamed states is the same for every state of an orbit (a signature does not change
        when ids are renamed), so its least encoding is canonical; it spares the renamings that would
        order brokers against their signatures, most of them when the brokers of a class differ."""
        if not self.classes:
            return encode(state)
        best: bytes | None = None
        for mapping in self._candidates(state):
            data = encode(rename_state(state, mapping) if mapping else state)
            if best is None or data < best:
                best = data
        assert best is not None
        return best

    def _candidates(self, state: ClusterState) -> Iterator[dict[int, int]]:
        """The renamings :meth:`canonical_encode` compares (the empty one: the identity)."""
        per_class = []
        for ids in self.classes:
            signatures = {b: broker_signature(state, b) for b in ids}
            ranked = sorted(ids, key=signatures.__getitem__)
            choices: list[list[dict[int, int]]] = []
            start = 0
            while start < len(ranked):
                end = start + 1
                while end < len(ranked) and signatures[ranked[end]] == signatures[ranked[start]]:
                    end += 1
                tied, targets = ranked[start:end], ids[start:end]  # ids are sorted
                choices.append([dict(zip(tied, image, strict=True)) for image in itertools.permutations(targets)])
                start = end
            per_class.extend(choices)
        for parts in itertools.product(*per_class):
            yield {b: image for part in parts for b, image in part.items() if b != image}

    def orbit(self, state: ClusterState) -> Iterator[ClusterState]:
        """The state renamed by every permutation of the group but the identity."""
        for mapping in self.permutations:
            yield rename_state(state, mapping)


def broker_signature(state: ClusterState, broker: int) -> tuple[Any, ...]:
    """What the state says of one broker, with no broker id in it: equal for ``b`` in ``s`` and for the
    renamed ``b`` in the renamed ``s``, whatever the renaming (what :meth:`BrokerSymmetry.canonical_encode`
    orders a class by). It need not tell every two brokers apart, only never tell apart renamed ones."""
    registered = next((e for b, e in state.zk.brokers if b == broker), -1)
    known = next((e for b, e in state.controller.live_brokers if b == broker), -1)
    b = state.broker(broker)
    queue = state.channel(broker)
    return (registered, known, broker in state.controller.shutting_down_brokers, b.alive, b.epoch,
            b.controller_epoch, b.controlled_shutdown, len(b.partitions), len(b.logs), len(b.offline_logs),
            len(b.metadata_live_brokers), len(b.metadata_partitions),
            tuple((r.kind, r.controller_epoch, r.broker_epoch, len(r.live_brokers)) for r in queue))


# ---- renaming a state ----------------------------------------------------------------------------
# Derived, once at import, from the state classes: every int declared a BrokerId is renamed, and every
# field declared a set or a map (metadata SET, MAP) is sorted again. Each renamer returns its argument
# itself when no id in it is renamed: most of a state (partitions on pinned brokers) does not change, and
# rebuilding it was most of the cost of a canonical encoding.

_Renamer = Callable[[Any, Renaming], Any]


def _renamer(t: Any, shape: Shape = Shape.SEQUENCE, sort_key: str | None = None) -> _Renamer | None:
    """The renaming of values of type ``t``; None when no broker id occurs in the type."""
    if not mentions(t, is_broker_id):
        return None
    if is_broker_id(t):
        return lambda b, m: m.get(b, b)
    element = sequence_of(t)
    if element is not None:
        return _sequence_renamer(element, shape, sort_key)
    record = record_of(t)
    if record is not None:
        return _record_renamer(record)
    inner = optional_of(t)
    if inner is not None:
        rename = _renamer(inner)
        assert rename is not None
        return lambda x, m: None if x is None else rename(x, m)
    return _class_renamer(strip(t))


def _sequence_renamer(element: Any, shape: Shape, sort_key: str | None) -> _Renamer:
    key: Callable[[Any], Any] | None = operator.attrgetter(sort_key) if sort_key else None
    resort = shape is not Shape.SEQUENCE
    if is_broker_id(element):
        def ids(x: tuple[int, ...], m: Renaming) -> tuple[int, ...]:
            if m.keys().isdisjoint(x):
                return x
            renamed = (m.get(b, b) for b in x)
            return tuple(sorted(renamed)) if resort else tuple(renamed)
        return ids
    rename = _renamer(element)
    assert rename is not None

    def sequence(x: tuple[Any, ...], m: Renaming) -> tuple[Any, ...]:
        renamed = [rename(e, m) for e in x]
        if all(a is b for a, b in zip(renamed, x, strict=True)):
            return x
        if resort:  # a set or a map: its keys are unique, so sorting whole items orders them by key
            renamed.sort(key=key)
        return tuple(renamed)
    return sequence


def _record_renamer(record: tuple[Any, ...]) -> _Renamer:
    renames = [_renamer(a) for a in record]

    def fixed(x: tuple[Any, ...], m: Renaming) -> tuple[Any, ...]:
        renamed = tuple(x[i] if r is None else r(x[i], m) for i, r in enumerate(renames))
        return x if all(a is b for a, b in zip(renamed, x, strict=True)) else renamed
    return fixed


def _class_renamer(cls: type) -> _Renamer:
    renames = [(f.name, r) for f in state_fields(cls) if (r := _renamer(f.type, f.shape, f.sort_key)) is not None]

    def value(x: Any, m: Renaming) -> Any:
        changed = {}
        for name, rename in renames:
            before = getattr(x, name)
            after = rename(before, m)
            if after is not before:
                changed[name] = after
        return attrs.evolve(x, **changed) if changed else x
    return value


_rename_cluster_state = _class_renamer(ClusterState)


def rename_state(state: ClusterState, m: Renaming) -> ClusterState:
    """``state`` with every broker id ``b`` replaced by ``m.get(b, b)`` (a permutation of ids)."""
    renamed: ClusterState = _rename_cluster_state(state, m)
    return renamed


__all__ = ["BrokerSymmetry", "broker_signature", "interchangeable_classes", "pinned_brokers", "rename_state",
           "renamings"]
