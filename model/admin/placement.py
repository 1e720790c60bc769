"""The placement properties: where a partition's replicas may live, as plain checks and as z3 constraints.

One name per property, shared by ``kmc plan`` (z3 constraints), ``kmc validate`` (the plain checks of
a concrete placement) and the controller properties of :mod:`invariants.kafka_properties`
(``distinct_brokers_per_partition``, ``rack_spread``):

* ``distinct_brokers_per_partition`` — no broker holds two replicas of a partition;
* ``replication_factor_unchanged`` — every partition keeps its number of replicas (or, when the
  operator sets one, ``replication_factor_as_requested``);
* ``only_listed_brokers`` — every replica is on a broker of ``--broker-list``;
* ``rack_spread`` (``--rack-mode strict``, Cruise Control's RackAwareGoal) — every replica of a
  partition on its own rack; with RF <= racks this is the controller property ``rack_spread``
  (the partition spans min(RF, racks) racks);
* ``rack_distribution`` (``--rack-mode distribution``, Cruise Control's RackAwareDistributionGoal) —
  every rack holds floor(RF/R) or ceil(RF/R) replicas of each partition (R racks with listed brokers),
  which allows RF > R and still spans min(RF, R) racks;
* ``replica_balance_per_broker`` / ``leader_balance_per_broker`` — each broker's replica (leader)
  count lies within bounds the planner computes (:mod:`model.admin.reassignment_plan`); the per-rack
  counts are reported beside them (:func:`load_counts`).

The z3 constraints are pseudo-Boolean over literals "broker b holds a replica of partition p"
(measured here: Bool/PB encodings are fast, Int slots are not). :func:`explain_infeasible` builds
one partition's constraints with ``assert_and_track`` under the properties' names, so an unsat core
names the properties that cannot hold together and :func:`core_sentence` turns it into one sentence.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import attrs
import z3

TopicPartition = tuple[str, int]
Placement = Mapping[TopicPartition, Sequence[int]]

RACK_MODES = ("strict", "distribution")

DISTINCT = "distinct_brokers_per_partition"
RF_UNCHANGED = "replication_factor_unchanged"
RF_AS_REQUESTED = "replication_factor_as_requested"
ONLY_LISTED = "only_listed_brokers"
RACK_SPREAD = "rack_spread"
RACK_DISTRIBUTION = "rack_distribution"
REPLICA_BALANCE = "replica_balance_per_broker"
LEADER_BALANCE = "leader_balance_per_broker"

DESCRIPTIONS = {
    DISTINCT: "no broker holds two replicas of a partition",
    RF_UNCHANGED: "every partition keeps its number of replicas",
    RF_AS_REQUESTED: "every partition has the requested number of replicas",
    ONLY_LISTED: "every replica is on a listed broker",
    RACK_SPREAD: "every replica of a partition is on its own rack (strict)",
    RACK_DISTRIBUTION: "every rack holds floor(RF/racks) or ceil(RF/racks) replicas of each partition",
    REPLICA_BALANCE: "every broker's replica count lies within the balance bounds",
    LEADER_BALANCE: "every broker's leader count lies within the balance bounds",
}


def tp_name(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def _sorted_ids(brokers: Iterable[int]) -> tuple[int, ...]:
    return tuple(sorted(brokers))


def _rack_map(racks: Mapping[int, str]) -> dict[int, str]:
    return dict(racks)


@attrs.frozen
class Cluster:
    """The brokers a placement may use: ``brokers`` (``--broker-list``, sorted) and their racks.

    ``racks`` is empty for a rack-unaware cluster, else names the rack of every listed broker.
    """

    brokers: tuple[int, ...] = attrs.field(converter=_sorted_ids)
    racks: Mapping[int, str] = attrs.field(factory=dict, converter=_rack_map)
    rack_mode: str = "strict"

    @property
    def rack_names(self) -> tuple[str, ...]:
        return tuple(sorted({self.racks[b] for b in self.brokers if b in self.racks}))

    def brokers_in(self, rack: str) -> tuple[int, ...]:
        return tuple(b for b in self.brokers if self.racks.get(b) == rack)

    def rack_bounds(self, rf: int) -> tuple[int, int]:
        """Fewest and most replicas of one partition with ``rf`` replicas a rack may hold in this mode."""
        n_racks = len(self.rack_names)
        if self.rack_mode == "strict":
            return (1 if rf >= n_racks else 0), 1
        return rf // n_racks, -(-rf // n_racks)


@attrs.frozen
class Violation:
    """A property a placement breaks, where (a partition or a broker), and one sentence saying how."""

    property: str
    where: str
    message: str


# ---------------------------------------------------------------------------------------------------
# Plain checks of a concrete placement (kmc validate, and the planner's statuses)


def check_distinct_brokers(placement: Placement) -> list[Violation]:
    out = []
    for tp in sorted(placement):
        twice = sorted(b for b, n in Counter(placement[tp]).items() if n > 1)
        if twice:
            out.append(Violation(DISTINCT, tp_name(tp), f"{tp_name(tp)} lists broker(s) {_ids(twice)} twice"))
    return out


def check_replication_factor(
    placement: Placement, expected: Mapping[TopicPartition, int], requested: bool = False
) -> list[Violation]:
    """Each partition has ``expected[tp]`` replicas (its current RF, or the one requested)."""
    name = RF_AS_REQUESTED if requested else RF_UNCHANGED
    out = []
    for tp in sorted(placement):
        if tp in expected and len(placement[tp]) != expected[tp]:
            out.append(Violation(name, tp_name(tp), f"{tp_name(tp)} has {len(placement[tp])} replicas, "
                                                    f"expected {expected[tp]}"))
    return out


def check_topic_replication_factor(placement: Placement) -> list[Violation]:
    """Every partition of a topic has the same number of replicas (Kafka topics have one RF)."""
    by_topic: dict[str, Counter[int]] = {}
    for tp in sorted(placement):
        by_topic.setdefault(tp[0], Counter())[len(placement[tp])] += 1
    out = []
    for topic, counts in sorted(by_topic.items()):
        if len(counts) > 1:
            sizes = ", ".join(f"{n} partition(s) with {rf}" for rf, n in sorted(counts.items()))
            out.append(Violation(RF_UNCHANGED, topic, f"topic {topic} mixes replication factors: {sizes}"))
    return out


def check_only_listed(placement: Placement, cluster: Cluster) -> list[Violation]:
    listed = set(cluster.brokers)
    out = []
    for tp in sorted(placement):
        other = sorted(set(placement[tp]) - listed)
        if other:
            out.append(Violation(ONLY_LISTED, tp_name(tp), f"{tp_name(tp)} has replica(s) on unlisted broker(s) "
                                                           f"{_ids(other)}"))
    return out


def check_racks(placement: Placement, cluster: Cluster) -> list[Violation]:
    """``rack_spread`` (strict) or ``rack_distribution`` over the replicas on brokers with a known rack."""
    if not cluster.racks:
        return []
    rack_names = cluster.rack_names
    out = []
    for tp in sorted(placement):
        replicas = placement[tp]
        per_rack = Counter(cluster.racks[b] for b in replicas if b in cluster.racks)
        low, high = cluster.rack_bounds(len(replicas))
        name = RACK_SPREAD if cluster.rack_mode == "strict" else RACK_DISTRIBUTION
        crowded = sorted(r for r in rack_names if per_rack[r] > high)
        empty = sorted(r for r in rack_names if per_rack[r] < low)
        if crowded:
            out.append(Violation(name, tp_name(tp), f"{tp_name(tp)} has {max(per_rack[r] for r in crowded)} "
                                                    f"replicas on rack {crowded[0]} (at most {high} allowed)"))
        elif empty:
            out.append(Violation(name, tp_name(tp), f"{tp_name(tp)} has {per_rack[empty[0]]} replicas on rack "
                                                    f"{empty[0]} (at least {low} needed)"))
    return out


def check_partition(replicas: Sequence[int], cluster: Cluster, rf: int) -> bool:
    """Whether one partition's replicas satisfy every per-partition hard property (RF ``rf``)."""
    placement = {("", 0): tuple(replicas)}
    return len(replicas) == rf and not (
        check_distinct_brokers(placement) or check_only_listed(placement, cluster) or check_racks(placement, cluster)
    )


def check_hard(
    placement: Placement, cluster: Cluster, expected_rf: Mapping[TopicPartition, int], rf_requested: bool = False
) -> dict[str, list[Violation]]:
    """Every per-partition hard property by name, with its violations (empty when it holds)."""
    rack_name = RACK_SPREAD if cluster.rack_mode == "strict" else RACK_DISTRIBUTION
    result = {
        DISTINCT: check_distinct_brokers(placement),
        RF_AS_REQUESTED if rf_requested else RF_UNCHANGED: check_replication_factor(
            placement, expected_rf, rf_requested),
        ONLY_LISTED: check_only_listed(placement, cluster),
    }
    if cluster.racks:
        result[rack_name] = check_racks(placement, cluster)
    return result


@attrs.frozen
class Loads:
    """Replica and leader (first replica) counts per listed broker and per rack."""

    replicas: Mapping[int, int]
    leaders: Mapping[int, int]
    rack_replicas: Mapping[str, int]
    rack_leaders: Mapping[str, int]


def load_counts(placement: Placement, cluster: Cluster) -> Loads:
    replicas = dict.fromkeys(cluster.brokers, 0)
    leaders = dict.fromkeys(cluster.brokers, 0)
    for reps in placement.values():
        for b in reps:
            replicas[b] = replicas.get(b, 0) + 1
        if reps:
            leaders[reps[0]] = leaders.get(reps[0], 0) + 1
    rack_replicas = dict.fromkeys(cluster.rack_names, 0)
    rack_leaders = dict.fromkeys(cluster.rack_names, 0)
    for b, rack in cluster.racks.items():
        rack_replicas[rack] = rack_replicas.get(rack, 0) + replicas.get(b, 0)
        rack_leaders[rack] = rack_leaders.get(rack, 0) + leaders.get(b, 0)
    return Loads(dict(sorted(replicas.items())), dict(sorted(leaders.items())), rack_replicas, rack_leaders)


def check_balance(
    counts: Mapping[int, int], bounds: Mapping[int, tuple[int, int]], name: str, what: str
) -> list[Violation]:
    out = []
    for b in sorted(bounds):
        lo, hi = bounds[b]
        n = counts.get(b, 0)
        if not lo <= n <= hi:
            out.append(Violation(name, f"broker {b}", f"broker {b} has {n} {what}, bounds {lo}..{hi}"))
    return out


def _ids(brokers: Iterable[int]) -> str:
    return ",".join(map(str, brokers))


# ---------------------------------------------------------------------------------------------------
# z3 constraints. ``slots[b]`` are the literals "broker b holds (a copy of) a replica of this partition":
# one literal per broker in the planner (distinct brokers by construction), several in the explanation
# model, where distinctness is a constraint of its own so that a core can name it.


def _pb(literals: Iterable[z3.BoolRef]) -> list[tuple[z3.BoolRef, int]]:
    return [(lit, 1) for lit in literals]


def z3_replication_factor(slots: Mapping[int, Sequence[z3.BoolRef]], rf: int) -> z3.BoolRef:
    return z3.PbEq(_pb(lit for b in sorted(slots) for lit in slots[b]), rf)


def z3_distinct_brokers(slots: Mapping[int, Sequence[z3.BoolRef]]) -> z3.BoolRef:
    return z3.And([z3.AtMost(*slots[b], 1) for b in sorted(slots) if len(slots[b]) > 1])


def z3_only_listed(slots: Mapping[int, Sequence[z3.BoolRef]], cluster: Cluster) -> z3.BoolRef:
    listed = set(cluster.brokers)
    return z3.And([z3.Not(lit) for b in sorted(slots) if b not in listed for lit in slots[b]])


def z3_racks(slots: Mapping[int, Sequence[z3.BoolRef]], cluster: Cluster, rf: int) -> z3.BoolRef:
    """``rack_spread`` or ``rack_distribution`` (per ``cluster.rack_mode``) for a partition of RF ``rf``."""
    low, high = cluster.rack_bounds(rf)
    parts = []
    for rack in cluster.rack_names:
        lits = [lit for b in cluster.brokers_in(rack) if b in slots for lit in slots[b]]
        if len(lits) > high:
            parts.append(z3.PbLe(_pb(lits), high))
        if low > 0:
            parts.append(z3.PbGe(_pb(lits), low))
    return z3.And(parts)


def explain_infeasible(
    rf: int, cluster: Cluster, domain: Iterable[int], rf_requested: bool = False
) -> tuple[str, ...] | None:
    """The names in an unsat core of one partition's constraints with RF ``rf`` over the brokers
    ``domain`` (listed and currently hosting), or None when some placement satisfies them all."""
    brokers = sorted(set(domain) | set(cluster.brokers))
    slots = {b: [z3.Bool(f"copy_{b}_{k}") for k in range(rf)] for b in brokers}
    solver = z3.Solver()
    solver.set("random_seed", 0)
    solver.set("timeout", 10_000)
    solver.set("core.minimize", True)
    solver.assert_and_track(z3_replication_factor(slots, rf), RF_AS_REQUESTED if rf_requested else RF_UNCHANGED)
    solver.assert_and_track(z3_distinct_brokers(slots), DISTINCT)
    solver.assert_and_track(z3_only_listed(slots, cluster), ONLY_LISTED)
    if cluster.racks:
        solver.assert_and_track(z3_racks(slots, cluster, rf),
                                RACK_SPREAD if cluster.rack_mode == "strict" else RACK_DISTRIBUTION)
    if solver.check() != z3.unsat:
        return None
    return tuple(sorted(str(c) for c in solver.unsat_core()))


def core_sentence(core: Sequence[str], rf: int, cluster: Cluster) -> str:
    """One sentence, in the operator's terms, for an unsat core of :func:`explain_infeasible`."""
    n_racks = len(cluster.rack_names)
    if RACK_SPREAD in core:
        return (f"RF {rf} needs {rf} racks under strict rack awareness but only {n_racks} racks have brokers; "
                "use --rack-mode distribution")
    if RACK_DISTRIBUTION in core:
        low, _ = cluster.rack_bounds(rf)
        small = [r for r in cluster.rack_names if len(cluster.brokers_in(r)) < low]
        if small:
            return (f"RF {rf} spread evenly over {n_racks} racks puts at least {low} replicas on rack {small[0]}, "
                    f"which has {len(cluster.brokers_in(small[0]))} listed broker(s); list more brokers on "
                    f"{small[0]} or lower the replication factor")
        return (f"RF {rf} cannot be spread evenly over racks "
                + ", ".join(f"{r} ({len(cluster.brokers_in(r))} brokers)" for r in cluster.rack_names)
                + "; list more brokers or lower the replication factor")
    if DISTINCT in core:
        return (f"RF {rf} needs {rf} distinct brokers but --broker-list names only {len(cluster.brokers)}; "
                "list more brokers or lower the replication factor")
    return f"no placement of a partition with RF {rf} satisfies {' and '.join(core)}"
