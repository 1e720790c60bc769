"""How many states ``kmc explore --symmetry`` saves: the local BFS with and without it, side by side.

    python bench/symmetry.py                          # the default workloads
    python bench/symmetry.py kafka-3096 --spares 3    # a shipped scenario with 3 spare brokers added
    python bench/symmetry.py tests/scenarios/spare-brokers.toml --format json

No shipped scenario leaves two brokers interchangeable (each names every broker in a topic
placement; the first line printed lists the shipped scenarios with a class, to show it), so the
workloads are ``tests/scenarios/spare-brokers.toml`` and shipped scenarios with spare brokers
added: ``--spares N`` brokers with ids from 100 up, no rack, named by no placement (the scenario's
own brokers keep their racks; a scenario whose brokers all have racks gets none). For each: the
interchangeable classes, then distinct and generated states, depth and wall seconds of the plain
and the reduced search (both in this process, one after the other), the states saved, and whether
both found the same properties at the same depths (the reduced findings replayed on the unreduced
model, as ``kmc explore`` does).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from explorer.bfs import run_bfs  # noqa: E402
from explorer.symmetry import Reduced, concrete_result  # noqa: E402
from kmc import compose  # noqa: E402
from model.zk.symmetry import interchangeable_classes  # noqa: E402

DEFAULT_WORKLOADS = ("tests/scenarios/spare-brokers.toml", "kafka-3096", "controlled-shutdown", "delete-disabled",
                     "log-dir-failure")


def scenario_text(name: str, spares: int) -> str:
    """The scenario's TOML text; a shipped scenario (by name) with ``spares`` brokers added."""
    path = compose.scenario_file(name)
    text = path.read_text(encoding="utf-8")
    if name not in compose.shipped_scenarios() or spares == 0:
        return text
    extra = "".join(f", {{ id = {100 + i} }}" for i in range(spares))
    return re.sub(r"brokers = \[(.*)\]", lambda m: f"brokers = [{m.group(1)}{extra}]", text, count=1)


def measure(name: str, spares: int) -> dict[str, Any]:
    model = compose.build_kafka_model(scenario_text(name, spares))
    record: dict[str, Any] = {"workload": name if name not in compose.shipped_scenarios() or not spares
                              else f"{name}+{spares} spares",
                              "brokers": len(model.scenario.brokers),
                              "classes": [list(c) for c in model.symmetry.classes]}
    started = time.perf_counter()
    plain = run_bfs(model)
    record["plain"] = _figures(plain, time.perf_counter() - started)
    started = time.perf_counter()
    reduced = concrete_result(model, run_bfs(Reduced(model)))
    record["symmetry"] = _figures(reduced, time.perf_counter() - started)
    record["saved"] = 1 - reduced.stats.distinct / plain.stats.distinct
    record["same_findings"] = ([(d.property, d.trace_length) for d in plain.discoveries]
                               == [(d.property, d.trace_length) for d in reduced.discoveries])
    return record


def _figures(result: Any, seconds: float) -> dict[str, Any]:
    return {"outcome": result.outcome.value, "distinct": result.stats.distinct, "generated": result.stats.generated,
            "depth": result.stats.depth, "seconds": round(seconds, 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", default=list(DEFAULT_WORKLOADS),
                        help="shipped scenario names (spare brokers added) or TOML paths (as they are)")
    parser.add_argument("--spares", type=int, default=2, help="spare brokers added to a shipped scenario (default 2)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    args = parser.parse_args(argv)
    with_class = [n for n in sorted(compose.shipped_scenarios())
                  if interchangeable_classes(compose.resolve_scenario(n))]
    records = [measure(name, args.spares) for name in args.scenarios]
    if args.format == "json":
        print(json.dumps(records, indent=2))
        return 0
    print(f"shipped scenarios with interchangeable brokers: {', '.join(with_class) or 'none'}")
    header = (f"{'workload':<34} {'classes':<16} {'plain':>9} {'reduced':>9} {'saved':>6} "
              f"{'plain s':>8} {'reduced s':>9}  same findings")
    print(header)
    print("-" * len(header))
    for r in records:
        classes = " ".join("{" + ",".join(map(str, c)) + "}" for c in r["classes"]) or "-"
        print(f"{r['workload']:<34} {classes:<16} {r['plain']['distinct']:>9,} {r['symmetry']['distinct']:>9,} "
              f"{r['saved']:>6.1%} {r['plain']['seconds']:>8.2f} {r['symmetry']['seconds']:>9.2f}  "
              f"{'yes' if r['same_findings'] else 'NO'} ({r['plain']['outcome']})")
    return 0 if all(r["same_findings"] for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
