"""kmc plan at operator scale: time, replica moves, leader changes, the lower bound, and what
``kafka-reassign-partitions --generate`` would move.

For each cluster (brokers, racks, partitions of one RF-3 topic placed by Kafka's own algorithm), the
change is: broker 0 is decommissioned and one new broker joins on its rack. The planner's moves are
optimal for its balance bounds (minimum-cost flow); "counting LB" is the simple counting lower bound
of :func:`model.admin.reassignment_plan.moves_lower_bound`. ``--generate`` re-runs
``AdminUtils.assignReplicasToBrokers`` from a random draw and ignores the current placement: its
moves are shown for 5 seeded draws (min / mean / max).

Run from the project root: ``python3 bench/plan.py [--sizes 6:3:100,50:6:2000]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.admin.assignment import BrokerMetadata, assign_replicas_to_brokers
from model.admin.placement import Cluster
from model.admin.reassignment_plan import PlanRequest, plan_reassignment

SIZES = "6:3:100,12:3:300,24:4:800,50:6:2000"


def moves_between(current: dict[int, tuple[int, ...]], proposed: dict[int, tuple[int, ...]]) -> int:
    return sum(1 for p, reps in proposed.items() for b in reps if b not in current[p])


def leader_changes(current: dict[int, tuple[int, ...]], proposed: dict[int, tuple[int, ...]]) -> int:
    return sum(1 for p in proposed if proposed[p][0] != current[p][0])


def row(n_brokers: int, n_racks: int, partitions: int) -> list[str]:
    rack = {b: f"r{b % n_racks}" for b in range(n_brokers + 1)}
    rack[n_brokers] = rack[0]
    old = [BrokerMetadata(b, rack[b]) for b in range(n_brokers)]
    current = assign_replicas_to_brokers(old, partitions, 3, fixed_start_index=0)
    listed = list(range(1, n_brokers + 1))
    cluster = Cluster(listed, {b: rack[b] for b in listed})
    started = time.monotonic()
    plan = plan_reassignment(PlanRequest({("t", p): r for p, r in current.items()}, cluster))
    seconds = time.monotonic() - started
    new = [BrokerMetadata(b, rack[b]) for b in listed]
    generate = [moves_between(current, assign_replicas_to_brokers(new, partitions, 3, rng=random.Random(seed)))
                for seed in range(5)]
    return [f"{n_brokers}/{n_racks}/{partitions}", f"{seconds:.2f}", str(plan.moves), str(plan.moves_lower_bound),
            str(plan.leader_changes), str(plan.leader_changes_lower_bound),
            f"{min(generate)} / {statistics.mean(generate):.0f} / {max(generate)}", str(3 * partitions)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=SIZES, help="brokers:racks:partitions, comma-separated")
    args = parser.parse_args()
    headers = ["brokers/racks/partitions", "time s", "moves", "counting LB", "leader changes", "leader LB",
               "--generate moves (min/mean/max)", "replicas"]
    rows = [row(*map(int, size.split(":"))) for size in args.sizes.split(",")]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    for line in [headers, *rows]:
        print("  ".join(cell.rjust(w) for cell, w in zip(line, widths, strict=True)))


if __name__ == "__main__":
    main()
