"""The reassignment planner: a placement that keeps every hard property with the fewest replica moves,
then the fewest leader changes, within the best balance the racks allow.

Where ``kafka-reassign-partitions --generate`` (``ReassignPartitionsCommand.generateAssignment``,
2.3.0) re-runs ``AdminUtils.assignReplicasToBrokers`` from a random start and ignores the current
placement, this planner starts from it. The objective, in order:

1. hard constraints (:mod:`model.admin.placement`): distinct brokers, replication factor kept (or
   set), only listed brokers, ``rack_spread`` (strict) or ``rack_distribution``, and each broker's
   replica and leader counts within balance bounds — the best balance the racks allow
   (:func:`balance_bounds`, widened by ``balance_slack``);
2. fewest replica movements: a replica on a broker that did not hold the partition before;
3. fewest leader changes: a partition whose first replica (preferred leader) changes.

Balance is a hard constraint rather than a last objective because, ranked after movements, it would
never move anything: adding brokers would leave them empty. ``balance_slack`` trades balance for
movements.

How. z3 first checks that one partition of each replication factor can be placed at all; if not,
its unsat core, under the properties' names, becomes the one-sentence refusal. z3's search over one
Boolean per (partition, broker) did not scale here (24 brokers / 800 partitions: no answer in 60 s;
tight balance bounds are pigeonhole-hard for it), so the optimisation is a minimum-cost flow
(partition -> its rack's share -> broker, :func:`_replica_flow`): its constraint matrix is a network
matrix, so the optimum is integral and exact, and the plan's movements are optimal for the bounds
(50 brokers / 6 racks / 2,000 partitions in 6-15 s on this machine). Leaders are then a second flow
over the chosen replicas (:func:`_leader_flow`); leader changes are optimal for those replicas, not
necessarily over every movement-optimal replica choice, so a counting lower bound
(:func:`leader_changes_lower_bound`) and the gap are reported. No time limit is needed: the flows
finish in polynomial time.

Determinism: the networks are built in sorted order and network simplex is deterministic, so the
same input gives the same plan, byte for byte.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction

import attrs
import networkx as nx

from model.admin.placement import (
    DESCRIPTIONS,
    DISTINCT,
    RF_AS_REQUESTED,
    RF_UNCHANGED,
    Cluster,
    Placement,
    TopicPartition,
    core_sentence,
    explain_infeasible,
)


class PlanInfeasible(Exception):
    """No placement satisfies the hard properties; ``str(e)`` is one sentence, ``core`` the properties."""

    def __init__(self, sentence: str, core: Sequence[str]) -> None:
        super().__init__(sentence)
        self.core = tuple(core)


@attrs.frozen
class PlanRequest:
    current: Mapping[TopicPartition, tuple[int, ...]]
    cluster: Cluster
    replication_factor: int | None = None
    balance_slack: int = 0


@attrs.frozen
class Plan:
    """The planner's answer: the new placement of every partition of the request, and its figures."""

    proposed: Mapping[TopicPartition, tuple[int, ...]]
    moves: int
    moves_lower_bound: int
    leader_changes: int
    leader_changes_lower_bound: int
    replica_bounds: Mapping[int, tuple[int, int]]
    leader_bounds: Mapping[int, tuple[int, int]]
    balance_slack: int
    leader_slack: int
    moves_optimal: bool
    solve_seconds: float

    @property
    def moves_gap(self) -> int:
        return self.moves - self.moves_lower_bound

    @property
    def leader_changes_gap(self) -> int:
        return self.leader_changes - self.leader_changes_lower_bound


def target_rf(request: PlanRequest) -> dict[TopicPartition, int]:
    rf = request.replication_factor
    return {tp: rf if rf is not None else len(reps) for tp, reps in request.current.items()}


# ---------------------------------------------------------------------------------------------------
# Balance bounds


def balance_bounds(
    rfs: Sequence[int], cluster: Cluster, slack: int = 0
) -> tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]]:
    """Per listed broker, the (fewest, most) replicas and leaders of the best balance the racks allow.

    Replicas are water-filled: every broker rises to a common level, except that a rack's total is
    held within what the rack rule allows it (strict: at least the partitions needing every rack, at
    most one replica per partition; distribution: floor/ceil(RF/racks) per partition). A broker's
    bounds are the floor and ceil of its rack's level, widened by ``slack``. Leaders are water-filled
    the same way, one per partition, a broker never leading more partitions than it may hold.
    """
    n_partitions = len(rfs)
    total = sum(rfs)
    if cluster.racks:
        groups = {r: cluster.brokers_in(r) for r in cluster.rack_names}
        caps = {}
        for r in groups:
            bounds = [cluster.rack_bounds(rf) for rf in rfs]
            caps[r] = (sum(lo for lo, _ in bounds), sum(min(hi, len(groups[r])) for _, hi in bounds))
    else:
        groups = {"": cluster.brokers}
        caps = {"": (total, total)}
    levels = _water_fill({r: len(bs) for r, bs in groups.items()}, caps, total)
    replica_bounds: dict[int, tuple[int, int]] = {}
    for r, brokers in groups.items():
        level = levels[r]
        lo, hi = _floor(level) - slack, _ceil(level) + slack
        for b in brokers:
            replica_bounds[b] = (max(0, lo), min(n_partitions, hi))
    leader_levels = _water_fill({str(b): 1 for b in cluster.brokers},
                                {str(b): (0, replica_bounds[b][1]) for b in cluster.brokers}, n_partitions)
    leader_bounds = {}
    for b in cluster.brokers:
        level = leader_levels[str(b)]
        leader_bounds[b] = (max(0, _floor(level) - slack), min(replica_bounds[b][1], _ceil(level) + slack))
    return dict(sorted(replica_bounds.items())), dict(sorted(leader_bounds.items()))


def _floor(x: Fraction) -> int:
    return x.numerator // x.denominator


def _ceil(x: Fraction) -> int:
    return -(-x.numerator // x.denominator)


def _water_fill(sizes: Mapping[str, int], caps: Mapping[str, tuple[int, int]], total: int) -> dict[str, Fraction]:
    """Per group, the per-member level λ·size clamped to the group's (low, high) total, over size, where
    the common λ makes the clamped totals add up to ``total`` (exact, in fractions)."""

    def filled(lam: Fraction) -> Fraction:
        return sum((min(max(lam * sizes[g], Fraction(caps[g][0])), Fraction(caps[g][1])) for g in sizes),
                   Fraction(0))

    # filled() is piecewise linear and non-decreasing in λ: find the piece holding `total`.
    points = sorted({Fraction(0)} | {Fraction(c, sizes[g]) for g in sizes for c in caps[g] if sizes[g]})
    lam = points[-1]
    for left, right in itertools.pairwise(points):
        if filled(right) >= total:
            f_left, f_right = filled(left), filled(right)
            lam = right if f_right == f_left else left + (right - left) * (total - f_left) / (f_right - f_left)
            break
    return {g: min(max(lam * sizes[g], Fraction(caps[g][0])), Fraction(caps[g][1])) / sizes[g]
            for g in sizes if sizes[g]}


# ---------------------------------------------------------------------------------------------------
# Keepable replicas and lower bounds


def keepable(replicas: Sequence[int], rf: int, cluster: Cluster) -> tuple[int, ...]:
    """The current replicas a plan may keep, in their order: listed, once each, within the rack cap, at
    most ``rf`` (earlier replicas first, so the leader is kept when it can be)."""
    listed = set(cluster.brokers)
    kept: list[int] = []
    per_rack: Counter[str] = Counter()
    for b in replicas:
        if b not in listed or b in kept or len(kept) == rf:
            continue
        if cluster.racks:
            rack = cluster.racks[b]
            if per_rack[rack] >= cluster.rack_bounds(rf)[1]:
                continue
            per_rack[rack] += 1
        kept.append(b)
    return tuple(kept)


def moves_lower_bound(
    current: Mapping[TopicPartition, Sequence[int]],
    rfs: Mapping[TopicPartition, int],
    cluster: Cluster,
    replica_bounds: Mapping[int, tuple[int, int]],
) -> int:
    """A lower bound on replica movements: the largest of (a) the replicas each partition lacks after
    dropping those it may not keep, (b) the replicas brokers below their floor must receive, (c) the
    replicas that cannot stay because a broker keeps at most its ceiling of those it holds.

    (b) and (c) count, per broker, every partition it holds now (``held``), not one choice of which
    replicas to keep: :func:`keepable` keeps the earlier of two same-rack replicas, and a plan may keep
    the other, so a count over its choice is not a bound. (a) may use it: any greedy choice under
    per-rack caps and an RF cap keeps the most replicas a partition can keep (a matroid).
    """
    listed = set(cluster.brokers)
    held = Counter(b for reps in current.values() for b in set(reps) if b in listed)
    lacking = sum(rfs[tp] - len(keepable(current[tp], rfs[tp], cluster)) for tp in current)
    to_receive = sum(max(0, lo - held[b]) for b, (lo, _) in replica_bounds.items())
    can_stay = sum(min(hi, held[b]) for b, (_, hi) in replica_bounds.items())
    return max(lacking, to_receive, sum(rfs.values()) - can_stay)


def leader_changes_lower_bound(
    current: Mapping[TopicPartition, Sequence[int]],
    rfs: Mapping[TopicPartition, int],
    cluster: Cluster,
    leader_bounds: Mapping[int, tuple[int, int]],
) -> int:
    """A lower bound on leader changes: partitions whose leader may not stay, plus leaders above a
    broker's ceiling; or the leaders brokers below their floor must gain, whichever is larger."""
    lost = 0
    kept_leaders: Counter[int] = Counter()
    for tp, reps in current.items():
        keep = keepable(reps, rfs[tp], cluster)
        if reps and keep and keep[0] == reps[0]:
            kept_leaders[reps[0]] += 1
        else:
            lost += 1
    above = sum(max(0, kept_leaders[b] - hi) for b, (_, hi) in leader_bounds.items())
    below = sum(max(0, lo - kept_leaders[b]) for b, (lo, _) in leader_bounds.items())
    return max(lost + above, below)


# ---------------------------------------------------------------------------------------------------
# The plan


def check_feasible(request: PlanRequest) -> None:
    """Raise :class:`PlanInfeasible` with the unsat core's sentence when some partition has no valid
    placement at all (the per-partition properties, one z3 query per distinct RF)."""
    rfs = target_rf(request)
    cluster = request.cluster
    for rf in sorted(set(rfs.values())):
        if rf <= 0:
            raise PlanInfeasible(f"replication factor {rf} must be at least 1", ())
        if rf > len(cluster.brokers):
            # The core z3 would find, without the z3 variables it would build first (one per broker and
            # replica: --replication-factor 10000 took more than 30 s to be refused).
            obvious = (DISTINCT, RF_AS_REQUESTED if request.replication_factor is not None else RF_UNCHANGED)
            raise PlanInfeasible(core_sentence(obvious, rf, cluster), obvious)
        domain = {b for tp, reps in request.current.items() if rfs[tp] == rf for b in reps}
        core = explain_infeasible(rf, cluster, domain, rf_requested=request.replication_factor is not None)
        if core is not None:
            raise PlanInfeasible(core_sentence(core, rf, cluster), core)


def plan_reassignment(request: PlanRequest) -> Plan:
    """The plan for ``request`` (see the module docstring); raises :class:`PlanInfeasible`."""
    started = time.monotonic()
    check_feasible(request)
    cluster = request.cluster
    current = {tp: tuple(request.current[tp]) for tp in sorted(request.current)}
    rfs = target_rf(request)
    slack = request.balance_slack
    while True:
        replica_bounds, leader_bounds = balance_bounds([rfs[tp] for tp in current], cluster, slack)
        chosen = _replica_flow(current, rfs, cluster, replica_bounds)
        if chosen is not None:
            break
        slack += 1  # the bounds cannot all be met together: widen them (reported as the slack used)
    leader_slack = 0
    while True:
        widened = {b: (max(0, lo - leader_slack), hi + leader_slack) for b, (lo, hi) in leader_bounds.items()}
        leaders = _leader_flow(current, chosen, widened)
        if leaders is not None:
            leader_bounds = widened
            break
        leader_slack += 1  # Hall's condition fails for these replica sets: widen the leader bounds
    proposed = {tp: _replica_list(current[tp], chosen[tp], leaders[tp]) for tp in current}
    moves = sum(1 for tp in current for b in proposed[tp] if b not in current[tp])
    leader_changes = sum(1 for tp in current if not current[tp] or proposed[tp][0] != current[tp][0])
    return Plan(
        proposed=proposed,
        moves=moves,
        moves_lower_bound=moves_lower_bound(current, rfs, cluster, replica_bounds),
        leader_changes=leader_changes,
        leader_changes_lower_bound=leader_changes_lower_bound(current, rfs, cluster, leader_bounds),
        replica_bounds=replica_bounds,
        leader_bounds=leader_bounds,
        balance_slack=slack,
        leader_slack=leader_slack,
        moves_optimal=True,
        solve_seconds=time.monotonic() - started,
    )


def _replica_list(current: Sequence[int], chosen: Sequence[int], leader: int) -> tuple[int, ...]:
    """The leader first, then the kept replicas in their current order, then the new ones by broker id
    (Kafka's preferred leader is the first replica)."""
    kept = [b for b in dict.fromkeys(current) if b in chosen and b != leader]
    new = sorted(b for b in chosen if b not in current and b != leader)
    return (leader, *kept, *new)


# Costs of the replica flow: a movement costs MOVE; keeping the current leader as a replica earns 1, so
# that among the plans with fewest movements the flow keeps leaders where it can (fewer leader changes).
MOVE = 1 << 20


class _Network:
    """A min-cost flow problem with lower bounds on edges, solved by networkx's network simplex."""

    def __init__(self) -> None:
        self.graph = nx.DiGraph()
        self.demand: Counter[object] = Counter()

    def edge(self, u: object, v: object, high: int, cost: int = 0, low: int = 0) -> None:
        # A lower bound becomes demands: u sends `low` more, v receives `low` more (networkx: demand = in - out).
        if high > low:
            self.graph.add_edge(u, v, capacity=high - low, weight=cost)
        self.demand[u] += low
        self.demand[v] -= low

    def supply(self, source: object, sink: object, amount: int) -> None:
        self.demand[source] -= amount
        self.demand[sink] += amount

    def solve(self) -> dict[object, dict[object, int]] | None:
        for node, d in self.demand.items():
            self.graph.add_node(node, demand=d)
        try:
            _, flow = nx.network_simplex(self.graph)
        except (nx.NetworkXUnfeasible, nx.NetworkXError):
            return None
        return flow


def _replica_flow(
    current: Mapping[TopicPartition, tuple[int, ...]],
    rfs: Mapping[TopicPartition, int],
    cluster: Cluster,
    replica_bounds: Mapping[int, tuple[int, int]],
    exact: bool = False,
) -> dict[TopicPartition, tuple[int, ...]] | None:
    """The replica sets of a minimum-cost flow (fewest movements), or None when the bounds are infeasible.

    Network: source -> partition p (its RF) -> (p, rack) (the rack rule's floor..ceil) -> either a
    broker of that rack already holding p (cost 0), or the rack's pool (cost MOVE) -> any broker of
    the rack -> sink (the broker's balance bounds). Rack-unaware clusters are one rack. Movements are
    the units through pools; which pool unit lands on which broker is decided afterwards
    (:func:`_land_pool_units`), with the flow's per-broker counts.

    The pools drop one constraint, a partition at most once per broker, so this network is a relaxation:
    its optimum is a lower bound. When its units land without breaking that constraint (the usual case)
    the plan is optimal; when they cannot (a partition's units need more brokers with room than its rack
    has), the flow is solved again with ``exact``: an edge of capacity 1 from (p, rack) to every broker
    of the rack (cost MOVE unless it holds p), which keeps the constraint and is exact, at partitions x
    brokers edges. Either network's matrix is a network matrix, so its optimum is integral.
    """
    groups = {r: cluster.brokers_in(r) for r in cluster.rack_names} if cluster.racks else {"": cluster.brokers}
    group_of = {b: r for r, bs in groups.items() for b in bs}
    net = _flow_network(current, rfs, cluster, replica_bounds, groups, exact)
    flow = net.solve()
    if flow is None:
        return None
    kept: dict[TopicPartition, list[int]] = {}
    for i, (tp, reps) in enumerate(current.items()):
        kept[tp] = [b for b in dict.fromkeys(reps) if b in group_of and flow[("pr", i, group_of[b])].get(("b", b), 0)]
    if exact:
        return {tp: (*kept[tp], *sorted(b for r in groups for b in groups[r]
                                        if b not in reps and flow[("pr", i, r)].get(("b", b), 0)))
                for i, (tp, reps) in enumerate(current.items())}
    units: dict[str, list[tuple[int, TopicPartition]]] = {r: [] for r in groups}
    for i, tp in enumerate(current):
        for r in groups:
            units[r] += [(i, tp)] * flow[("pr", i, r)].get(("pool", r), 0)
    landing = {b: flow[("pool", group_of[b])][("b", b)] for b in cluster.brokers}
    new = _land_pool_units(units, groups, landing, kept)
    if new is None:
        return _replica_flow(current, rfs, cluster, replica_bounds, exact=True)
    return {tp: tuple(kept[tp]) + tuple(new.get(tp, ())) for tp in current}



def _flow_network(
    current: Mapping[TopicPartition, tuple[int, ...]],
    rfs: Mapping[TopicPartition, int],
    cluster: Cluster,
    replica_bounds: Mapping[int, tuple[int, int]],
    groups: Mapping[str, Sequence[int]],
    exact: bool,
) -> _Network:
    """The network of :func:`_replica_flow` (with pools, or ``exact``) over the racks' broker ``groups``."""
    group_of = {b: r for r, bs in groups.items() for b in bs}
    net = _Network()
    net.supply("source", "sink", sum(rfs.values()))
    for i, (tp, reps) in enumerate(current.items()):
        rf = rfs[tp]
        low, high = cluster.rack_bounds(rf) if cluster.racks else (rf, rf)
        net.edge("source", ("p", i), rf)
        for r, brokers in groups.items():
            node = ("pr", i, r)
            net.edge(("p", i), node, min(high, len(brokers)), low=low)
            for b in dict.fromkeys(reps):
                if group_of.get(b) == r:
                    net.edge(node, ("b", b), 1, cost=-1 if b == reps[0] else 0)
            if exact:
                for b in brokers:
                    if b not in reps:
                        net.edge(node, ("b", b), 1, cost=MOVE)
            else:
                net.edge(node, ("pool", r), high, cost=MOVE)
    if not exact:
        for r, brokers in groups.items():
            for b in brokers:
                net.edge(("pool", r), ("b", b), replica_bounds[b][1])
    for b in cluster.brokers:
        lo, hi = replica_bounds[b]
        net.edge(("b", b), "sink", hi, low=lo)
    return net

def _land_pool_units(
    units: Mapping[str, Sequence[tuple[int, TopicPartition]]],
    groups: Mapping[str, Sequence[int]],
    landing: Mapping[int, int],
    kept: Mapping[TopicPartition, Sequence[int]],
) -> dict[TopicPartition, list[int]] | None:
    """Each pool unit (a new replica of a partition in a rack) placed on a broker of the rack, each broker
    taking as many units as the flow sends it, no partition twice on a broker; None when this finds no
    such landing (there may be none: see :func:`_replica_flow`).

    Greedy, most remaining room first (ties by broker id): a unit whose partition already sits on every
    broker with room is swapped with an earlier unit, which keeps the counts and so the flow's cost.
    """
    new: dict[TopicPartition, list[int]] = {}
    for r, pool_units in units.items():
        room = {b: landing[b] for b in groups[r]}
        placed: list[tuple[TopicPartition, int]] = []
        for _, tp in pool_units:
            holding = set(kept[tp]) | set(new.get(tp, ()))
            options = sorted((b for b in room if room[b] > 0 and b not in holding), key=lambda b: (-room[b], b))
            if options:
                target = options[0]
            else:  # swap with an earlier unit (q on b2) such that q can take b and tp can take b2
                target = next(b for b in sorted(room) if room[b] > 0)
                for k, (q, b2) in enumerate(placed):
                    if b2 not in holding and target not in set(kept[q]) | set(new[q]):
                        new[q][new[q].index(b2)] = target
                        placed[k] = (q, target)
                        target = b2
                        room[target] += 1
                        room[placed[k][1]] -= 1
                        break
                else:
                    return None
            room[target] -= 1
            new.setdefault(tp, []).append(target)
            placed.append((tp, target))
    return new


def _leader_flow(
    current: Mapping[TopicPartition, tuple[int, ...]],
    chosen: Mapping[TopicPartition, Sequence[int]],
    leader_bounds: Mapping[int, tuple[int, int]],
) -> dict[TopicPartition, int] | None:
    """A leader for each partition among its chosen replicas, within the leader bounds, changing the
    fewest leaders (a minimum-cost flow: partition -> its replicas -> broker -> sink); None if none."""
    net = _Network()
    net.supply("source", "sink", len(current))
    for i, tp in enumerate(current):
        net.edge("source", ("p", i), 1)
        leader = current[tp][0] if current[tp] else None
        for b in chosen[tp]:
            net.edge(("p", i), ("b", b), 1, cost=0 if b == leader else 1)
    for b, (lo, hi) in leader_bounds.items():
        net.edge(("b", b), "sink", hi, low=lo)
    flow = net.solve()
    if flow is None:
        return None
    return {tp: next(b for b in chosen[tp] if flow[("p", i)].get(("b", b), 0)) for i, tp in enumerate(current)}

def summary_statuses(
    placement: Placement, cluster: Cluster, rfs: Mapping[TopicPartition, int], rf_requested: bool,
    replica_bounds: Mapping[int, tuple[int, int]], leader_bounds: Mapping[int, tuple[int, int]],
) -> dict[str, int]:
    """Each property's number of violations in ``placement`` (0 when it holds), by name."""
    from model.admin.placement import LEADER_BALANCE, REPLICA_BALANCE, check_balance, check_hard, load_counts

    statuses = {name: len(v) for name, v in check_hard(placement, cluster, rfs, rf_requested).items()}
    loads = load_counts(placement, cluster)
    statuses[REPLICA_BALANCE] = len(check_balance(loads.replicas, replica_bounds, REPLICA_BALANCE, "replicas"))
    statuses[LEADER_BALANCE] = len(check_balance(loads.leaders, leader_bounds, LEADER_BALANCE, "leaders"))
    assert set(statuses) <= set(DESCRIPTIONS)
    return statuses
