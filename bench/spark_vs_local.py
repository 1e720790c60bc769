"""Spark BFS against local BFS on the same models: per-level timings and the wall-time ratio.

    python bench/spark_vs_local.py                      # toy controller MC config + default scenario
    python bench/spark_vs_local.py --target toy-MC --master 'local[2]'

For each target both engines explore the same model (the toy controller of
``bench/tla`` under a TLC config, or a shipped Kafka scenario through the CLI's
model factory); the script checks that they agree (counts, levels, discoveries) and prints, level by
level, the local seconds next to the Spark seconds and the phases of the Spark level, then the
Spark/local wall-time ratio with and without the Spark session's start. On a two-core machine this
shows Spark's overhead (a fixed cost per level, the session start), not a speed-up.

Measured here with the first Spark engine (every level a Spark job, new states found by an anti-join with
every earlier level; 2 vCPU, local[*], other work on the machine; session start 5-6 s, not counted). The
current engine keeps small levels on the driver: see the README's Performance section for its figures.

    target          distinct   levels  local     spark     spark/local  spark s per small level
    toy-MC           168,927     28      5.0 s    40.6 s    8.1x         0.7-1.0
    kafka-default    191,086     32     43.5 s    68.4 s    1.6x         0.7-0.9
    toy-MC3        3,395,707     39    125.2 s   146.4 s    1.2x         2.0-2.4 (visited set shuffled)

The cheaper a state is to expand, the more the per-level cost shows: the Kafka model costs about
ten times the toy per state, and Spark's two Python workers beat the local BFS on its widest levels.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the toy models
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout's own code, as under pytest

from toy_models.kafka_controller_toy import CONFIGS, KafkaControllerToy

from explorer.bfs import run_bfs
from explorer.contract import ModelFactory
from explorer.results import ExplorationResult
from spark_explore.bfs import SparkBfsOptions, run_spark_bfs
from spark_explore.manifest import read_manifest
from spark_explore.session import build_session

DEFAULT_TARGETS = ("toy-MC", "kafka-default")


def factory_for(target: str) -> ModelFactory[Any, Any]:
    """``toy-<TLC config>`` or ``kafka-<shipped scenario>``."""
    kind, _, name = target.partition("-")
    if kind == "toy":
        # The class is an importable top-level callable and the config a frozen value: Spark
        # workers rebuild the same model from them.
        return ModelFactory(KafkaControllerToy, CONFIGS[name])
    if kind == "kafka":
        from kmc import compose as kafka_compose

        return kafka_compose.factory_for(kafka_compose.resolve_scenario(name))
    raise SystemExit(f"unknown target {target!r}: use toy-MC, toy-MC3, kafka-default, kafka-<scenario>")


def compare(target: str, master: str, run_root: Path) -> dict[str, float]:
    factory = factory_for(target)
    print(f"== {target}", flush=True)
    started = time.perf_counter()
    local = run_bfs(factory())
    local_seconds = time.perf_counter() - started

    started = time.perf_counter()
    run_dir = run_root / target
    on_spark = run_spark_bfs(factory, SparkBfsOptions(run_dir, master=master, keep_session=True))
    spark_seconds = time.perf_counter() - started
    _check_agreement(local, on_spark)
    manifest = read_manifest(run_dir)
    assert manifest is not None

    print(f"{'level':>5} {'frontier':>9} {'new':>8} {'local s':>8} {'spark s':>8}  spark phases (s)")
    for local_level, spark_level in zip(local.stats.levels, manifest.levels, strict=True):
        phases = ", ".join(f"{name} {seconds:.2f}" for name, seconds in spark_level.phases.items())
        print(
            f"{local_level.depth:>5} {local_level.frontier:>9,} {local_level.new:>8,} "
            f"{local_level.seconds:>8.3f} {spark_level.seconds:>8.3f}  {phases}"
        )
    levels = len(manifest.levels)
    spark_level_seconds = sum(level.seconds for level in manifest.levels)
    print(
        f"{local.stats.distinct:,} distinct states, {local.stats.generated:,} generated, depth {local.stats.depth}: "
        f"local {local_seconds:.1f} s ({local.stats.distinct / local_seconds:,.0f} states/s), "
        f"spark {spark_seconds:.1f} s ({on_spark.stats.distinct / spark_seconds:,.0f} states/s); "
        f"spark/local = {spark_seconds / local_seconds:.1f}x; "
        f"spark per level {spark_level_seconds / levels:.2f} s on average over {levels} levels",
        flush=True,
    )
    return {"local": local_seconds, "spark": spark_seconds}


def _check_agreement(local: ExplorationResult, on_spark: ExplorationResult) -> None:
    if (local.outcome, local.stats, local.discoveries) != (on_spark.outcome, on_spark.stats, on_spark.discoveries):
        raise SystemExit("the engines disagree: this is a bug in one of them, not a benchmark result")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", action="append", help="toy-MC, toy-MC3, kafka-default, kafka-<scenario>")
    parser.add_argument("--master", default="local[*]")
    args = parser.parse_args()
    targets = args.target or list(DEFAULT_TARGETS)

    with tempfile.TemporaryDirectory(prefix="kmc-bench-") as scratch:
        started = time.perf_counter()
        session = build_session(args.master, checkpoint_dir=Path(scratch))
        session_seconds = time.perf_counter() - started
        print(f"Spark session ({session.sparkContext.master}) started in {session_seconds:.1f} s", flush=True)
        try:
            totals = [compare(target, args.master, Path(scratch)) for target in targets]
        finally:
            session.stop()
    for target, seconds in zip(targets, totals, strict=True):
        with_start = (seconds["spark"] + session_seconds) / seconds["local"]
        print(
            f"{target}: spark/local wall time {seconds['spark'] / seconds['local']:.1f}x "
            f"({with_start:.1f}x counting the session start)"
        )


if __name__ == "__main__":
    main()
