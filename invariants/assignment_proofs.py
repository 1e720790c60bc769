"""Claims about Kafka's replica assignment (``AdminUtils.assignReplicasToBrokers``, :mod:`model.admin.assignment`),
proved with z3 or by exhaustive enumeration, and the imbalances it produces, measured.

* ``rack_unaware_distinct_brokers`` — for every cluster size n >= RF, start index, replica shift and
  partition id, the replicas are distinct brokers. Proved by z3 symbolically over unbounded n on
  Kafka's index formula (``replicaIndex``: ``(first + 1 + (shift + j) mod (n - 1)) mod n``; the shift
  Kafka bumps every n partitions is any shift >= 0, and the leader index ``(p + start) mod n`` any
  index below n). The formula is the code only if the code uses it as written: the implementation
  is also run exhaustively for n up to a bound, which is the bound that replaces the symbolic proof
  should z3 answer "unknown".
* ``rack_aware_distinct_brokers`` and ``rack_aware_rack_spread`` — checked on every cluster up to a
  bound: every ordered tuple of rack sizes (uneven racks included; broker ids and rack names only
  relabel the rack-alternated list), every RF, every leader index and every replica shift modulo
  n - 1 (the only values the rack-aware walk can tell apart), by running the implementation.
* measurements: the worst replica and leader imbalance the algorithm produces on uneven racks, next
  to the best balance z3 finds on the same cluster under strict rack spread; and KAFKA-13226
  (topic creation uses the alive brokers in the metadata cache's order, adding partitions uses them
  sorted by id, ``AdminZkClient.addPartitions``): the worst imbalance of a create-then-add sequence.

A claim is "proved" or carries a concrete counterexample; a measurement carries the cluster that
attains it. Results are data (:class:`Claim`, :class:`Measurement`); ``kmc prove`` renders them.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs
import z3

from model.admin.assignment import (
    BrokerMetadata,
    _assign_rack_aware,
    add_partitions_assignment,
    all_random_draws,
    assign_replicas_to_brokers,
    get_rack_alternated_broker_list,
)


@attrs.frozen
class Claim:
    name: str
    statement: str
    bound: str
    method: str
    proved: bool
    counterexample: Mapping[str, Any] | None = None
    cases: int = 0
    seconds: float = 0.0


@attrs.frozen
class Measurement:
    name: str
    statement: str
    cluster: Mapping[str, Any]
    figures: Mapping[str, Any]
    seconds: float = 0.0


# ---------------------------------------------------------------------------------------------------
# Rack-unaware: symbolic


def prove_rack_unaware_distinct(max_brokers_checked: int = 8, timeout_ms: int = 60_000) -> Claim:
    """z3 over unbounded n, then the implementation exhaustively for n <= ``max_brokers_checked``."""
    started = time.monotonic()
    n, rf, first, shift, j, k = z3.Ints("n rf first shift j k")

    def follower(t: z3.ArithRef) -> z3.ArithRef:  # Kafka: AdminUtils.replicaIndex
        return (first + 1 + (shift + t) % (n - 1)) % n

    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(n >= 2, rf >= 2, rf <= n, first >= 0, first < n, shift >= 0)
    solver.add(j >= 0, j <= rf - 2, k >= 0, k <= rf - 2)  # followers j and k (0-based)
    solver.add(z3.Or(z3.And(j < k, follower(j) == follower(k)), follower(j) == first))
    answer = solver.check()
    counterexample: dict[str, Any] | None = None
    if answer == z3.sat:
        m = solver.model()
        counterexample = {v: m.eval(z3.Int(v), model_completion=True).as_long()
                          for v in ("n", "rf", "first", "shift", "j", "k")}
    cases, code_counterexample = _rack_unaware_exhaustive(max_brokers_checked)
    symbolic = "z3: unsat for every n >= 2 (symbolic, nonlinear integer arithmetic)"
    if answer == z3.unknown:
        symbolic = f"z3 answered unknown ({solver.reason_unknown()}); the bound n <= {max_brokers_checked} replaces it"
    return Claim(
        name="rack_unaware_distinct_brokers",
        statement="rack-unaware assignment never puts two replicas of a partition on one broker, for every "
                  "n >= RF, start index, replica shift and partition id",
        bound="unbounded n (symbolic)" if answer == z3.unsat else f"n <= {max_brokers_checked}",
        method=f"{symbolic}; implementation run on every n <= {max_brokers_checked}, RF <= n, start index, "
               "initial shift and 2n(n-1) partitions",
        proved=answer == z3.unsat and code_counterexample is None,
        counterexample=counterexample or code_counterexample,
        cases=cases,
        seconds=time.monotonic() - started,
    )


def _rack_unaware_exhaustive(max_brokers: int) -> tuple[int, dict[str, Any] | None]:
    cases = 0
    for n in range(1, max_brokers + 1):
        brokers = [BrokerMetadata(b) for b in range(n)]
        partitions = max(1, 2 * n * (n - 1))  # the shift wraps modulo n - 1 after n(n - 1) partitions
        for rf in range(1, n + 1):
            for start, shift, assignment in all_random_draws(brokers, partitions, rf):
                cases += len(assignment)
                for p, replicas in assignment.items():
                    if len(set(replicas)) != len(replicas):
                        return cases, {"brokers": n, "rf": rf, "start_index": start, "shift": shift,
                                       "partition": p, "replicas": list(replicas)}
    return cases, None


# ---------------------------------------------------------------------------------------------------
# Rack-aware: exhaustive up to a bound


def rack_size_tuples(max_brokers: int, max_racks: int) -> Iterator[tuple[int, ...]]:
    """Every ordered tuple of rack sizes (racks sorted by name) with at most ``max_brokers`` brokers."""
    for n in range(1, max_brokers + 1):
        for racks in range(1, min(n, max_racks) + 1):
            for cuts in itertools.combinations(range(1, n), racks - 1):
                bounds = (0, *cuts, n)
                yield tuple(bounds[i + 1] - bounds[i] for i in range(racks))


def cluster_of(sizes: Sequence[int]) -> dict[int, str]:
    """Broker id -> rack name for rack sizes in rack-name order (ids consecutive per rack)."""
    rack_of: dict[int, str] = {}
    for r, size in enumerate(sizes):
        for _ in range(size):
            rack_of[len(rack_of)] = f"r{r}"
    return rack_of


def check_rack_aware(max_brokers: int = 8, max_racks: int = 4) -> tuple[Claim, Claim]:
    started = time.monotonic()
    cases = 0
    distinct_cex: dict[str, Any] | None = None
    spread_cex: dict[str, Any] | None = None
    for sizes in rack_size_tuples(max_brokers, max_racks):
        rack_of = cluster_of(sizes)
        n, n_racks = len(rack_of), len(sizes)
        array = get_rack_alternated_broker_list(rack_of)
        for rf in range(1, n + 1):
            for first in range(n):
                for shift in range(max(1, n - 1)):
                    replicas = _assign_rack_aware(1, rf, array, rack_of, first, shift, 0)[0]
                    cases += 1
                    where = {"rack_sizes": list(sizes), "racks": {str(b): r for b, r in rack_of.items()},
                             "rf": rf, "leader_index": first, "shift": shift, "replicas": list(replicas)}
                    if distinct_cex is None and len(set(replicas)) != rf:
                        distinct_cex = where
                    if spread_cex is None and len({rack_of[b] for b in replicas}) < min(rf, n_racks):
                        spread_cex = where
    bound = f"clusters of 1..{max_brokers} brokers on 1..{max_racks} racks, every rack-size tuple (uneven included)"
    method = ("implementation run on every cluster, RF <= brokers, leader index and replica shift modulo n - 1 "
              "(exhaustive, so a proof for the bound)")
    seconds = time.monotonic() - started
    return (
        Claim("rack_aware_distinct_brokers", "rack-aware assignment never puts two replicas of a partition on one "
              "broker", bound, method, distinct_cex is None, distinct_cex, cases, seconds),
        Claim("rack_aware_rack_spread", "rack-aware assignment spreads every partition over min(RF, racks) racks",
              bound, method, spread_cex is None, spread_cex, cases, seconds),
    )


# ---------------------------------------------------------------------------------------------------
# Imbalance on uneven racks: Kafka's worst draw next to z3's best


def _spread(counts: Mapping[int, int], brokers: Sequence[int]) -> int:
    values = [counts.get(b, 0) for b in brokers]
    return max(values) - min(values)


def _loads(assignment: Mapping[Any, Sequence[int]]) -> tuple[Counter[int], Counter[int]]:
    replicas: Counter[int] = Counter(b for reps in assignment.values() for b in reps)
    leaders: Counter[int] = Counter(reps[0] for reps in assignment.values())
    return replicas, leaders


def best_balance(rack_of: Mapping[int, str], n_partitions: int, rf: int, timeout_ms: int = 30_000) -> dict[str, Any]:
    """The fewest replicas the busiest broker can hold for ``n_partitions`` partitions of RF ``rf`` under
    strict rack spread, then the fewest leaders the busiest leader can have with that: each found by z3
    as the smallest bound that is sat with the next one down unsat (so proved, unless z3 times out)."""
    brokers = sorted(rack_of)
    racks = sorted(set(rack_of.values()))
    x = {(p, b): z3.Bool(f"x{p}_{b}") for p in range(n_partitions) for b in brokers}
    y = {(p, b): z3.Bool(f"y{p}_{b}") for p in range(n_partitions) for b in brokers}
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.set("random_seed", 0)
    for p in range(n_partitions):
        solver.add(z3.PbEq([(x[p, b], 1) for b in brokers], rf))
        solver.add(z3.PbEq([(y[p, b], 1) for b in brokers], 1))
        for b in brokers:
            solver.add(z3.Implies(y[p, b], x[p, b]))
        for r in racks:
            solver.add(z3.AtMost(*[x[p, b] for b in brokers if rack_of[b] == r], 1))

    def smallest(lits: Mapping[tuple[int, int], z3.BoolRef], fixed: Sequence[z3.BoolRef]) -> tuple[int | None, bool]:
        proved = True
        for bound in range(n_partitions + 1):
            caps = [z3.PbLe([(lits[p, b], 1) for p in range(n_partitions)], bound) for b in brokers]
            answer = solver.check(*fixed, *caps)
            if answer == z3.sat:
                return bound, proved
            proved = proved and answer == z3.unsat
        return None, proved

    replicas, replicas_proved = smallest(x, [])
    if replicas is None:
        return {"max_replicas": None, "max_leaders": None, "proved": replicas_proved}
    fixed = [z3.PbLe([(x[p, b], 1) for p in range(n_partitions)], replicas) for b in brokers]
    leaders, leaders_proved = smallest(y, fixed)
    return {"max_replicas": replicas, "max_leaders": leaders, "proved": replicas_proved and leaders_proved}


def worst_uneven_imbalance(max_brokers: int = 7, max_racks: int = 3) -> Measurement:
    """Over uneven-rack clusters (2..``max_racks`` racks, RF = racks, 2 partitions per broker, every
    draw), the draw whose busiest broker holds the most replicas beyond the best balance the racks
    allow (:func:`model.admin.reassignment_plan.balance_bounds`; ties: leaders), next to the busiest
    broker's replicas and leaders in z3's best placement of the same cluster."""
    from model.admin.placement import Cluster
    from model.admin.reassignment_plan import balance_bounds

    started = time.monotonic()
    worst: tuple[int, int] | None = None
    found: dict[str, Any] = {}
    for sizes in rack_size_tuples(max_brokers, max_racks):
        if len(sizes) < 2 or len(set(sizes)) == 1:
            continue
        rack_of = cluster_of(sizes)
        metadata = [BrokerMetadata(b, r) for b, r in rack_of.items()]
        rf, partitions = len(sizes), 2 * len(rack_of)
        bounds, leader_bounds = balance_bounds([rf] * partitions, Cluster(sorted(rack_of), rack_of))
        best_max = max(hi for _, hi in bounds.values())
        best_leaders = max(hi for _, hi in leader_bounds.values())
        for start, shift, assignment in all_random_draws(metadata, partitions, rf):
            replicas, leaders = _loads(assignment)
            key = (max(replicas.values()) - best_max, max(leaders.values()) - best_leaders)
            if worst is None or key > worst:
                worst = key
                found = {"rack_sizes": list(sizes), "racks": {str(b): r for b, r in rack_of.items()},
                         "rf": rf, "partitions": partitions, "start_index": start, "shift": shift,
                         "replicas_per_broker": {str(b): replicas[b] for b in sorted(rack_of)},
                         "leaders_per_broker": {str(b): leaders[b] for b in sorted(rack_of)}}
    assert worst is not None
    rack_of = {int(b): r for b, r in found["racks"].items()}
    best = best_balance(rack_of, found["partitions"], found["rf"])
    return Measurement(
        "uneven_racks_imbalance",
        f"worst imbalance of Kafka's rack-aware assignment on uneven racks (2..{max_racks} racks, up to "
        f"{max_brokers} brokers, RF = racks, 2 partitions per broker, every draw): the busiest broker's "
        "replicas and leaders, next to z3's best placement of the same cluster under strict rack spread",
        found,
        {"kafka_max_replicas": max(found["replicas_per_broker"].values()),
         "kafka_max_leaders": max(found["leaders_per_broker"].values()),
         "z3_best_max_replicas": best["max_replicas"], "z3_best_max_leaders": best["max_leaders"],
         "z3_proved_best": best["proved"]},
        time.monotonic() - started,
    )


# ---------------------------------------------------------------------------------------------------
# KAFKA-13226: create with the unsorted alive-broker list, add partitions with the sorted one


def kafka_13226(max_brokers: int = 4) -> Measurement:
    """The worst replica spread after creating a topic from the alive brokers in some order and then
    adding partitions (sorted order), over every broker order, draw, partition counts up to n each and
    RF 2..3; beside it, the worst spread when creation also sees the sorted order."""
    started = time.monotonic()
    worst: tuple[int, int] | None = None
    worst_sorted: tuple[int, int] | None = None
    found: dict[str, Any] = {}
    for n in range(3, max_brokers + 1):
        ids = list(range(n))
        sorted_brokers = [BrokerMetadata(b) for b in ids]
        for rf in (2, 3):
            if rf > n:
                continue
            for order in itertools.permutations(ids):
                brokers = [BrokerMetadata(b) for b in order]
                for created in range(1, n + 1):
                    for start, shift in itertools.product(range(n), range(n)):
                        initial = assign_replicas_to_brokers(brokers, created, rf, fixed_start_index=start,
                                                             replica_shift=shift)
                        for added in range(1, n + 1):
                            more = add_partitions_assignment(initial, sorted_brokers, created + added)
                            replicas, leaders = _loads({**initial, **more})
                            key = (_spread(replicas, ids), _spread(leaders, ids))
                            if list(order) == ids:
                                worst_sorted = key if worst_sorted is None else max(worst_sorted, key)
                            if worst is None or key > worst:
                                worst = key
                                found = {"brokers": n, "alive_broker_order_at_creation": list(order), "rf": rf,
                                         "partitions_created": created, "partitions_added": added,
                                         "start_index": start, "shift": shift,
                                         "created": {str(p): list(r) for p, r in initial.items()},
                                         "added": {str(p): list(r) for p, r in more.items()},
                                         "replicas_per_broker": {str(b): replicas[b] for b in ids},
                                         "leaders_per_broker": {str(b): leaders[b] for b in ids}}
    assert worst is not None and worst_sorted is not None
    return Measurement(
        "kafka_13226_create_then_add",
        f"KAFKA-13226: worst imbalance of topic creation (alive brokers in any order) followed by adding "
        f"partitions (brokers sorted), over 3..{max_brokers} brokers, RF 2..3, every order, draw and "
        "partition counts up to the broker count",
        found,
        {"replica_spread": worst[0], "leader_spread": worst[1],
         "replica_spread_when_creation_sees_sorted_brokers": worst_sorted[0],
         "leader_spread_when_creation_sees_sorted_brokers": worst_sorted[1]},
        time.monotonic() - started,
    )


def prove_assignment(max_brokers: int = 8, max_racks: int = 4) -> tuple[list[Claim], list[Measurement]]:
    claims = [prove_rack_unaware_distinct(), *check_rack_aware(max_brokers, max_racks)]
    measurements = [worst_uneven_imbalance(), kafka_13226()]
    return claims, measurements
