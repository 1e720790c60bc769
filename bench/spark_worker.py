"""A Spark run's levels expanded as its Python workers expand them, in this one process, beside the driver's way.

    python bench/spark_worker.py RUN_DIR --levels 9 10 11            # the workers' way, then the driver's
    py-spy record --native -o worker.raw -f raw -- python bench/spark_worker.py RUN_DIR --levels 11 --worker-only

A Spark level's model work runs in PySpark's reused Python workers, which a sampling profiler does not follow
(py-spy stops after a second or so on them). This script reads the Parquet of each level named in RUN_DIR (a
Spark run's directory, which holds its scenario) and hands each of its files, in 4,096-row batches as Spark's
Arrow batches are, to the function the workers run (:func:`spark_explore.level.partition_expander`), with the
visited fingerprints the driver would have written, one level after the other in one process, as one reused
worker would take every task. Then, unless ``--worker-only``, the local BFS explores to the last of those depths
and the same levels are timed in it: the driver's way, which expands states it keeps as objects.

Per level: the frontier, the CPU a state, and for the Kafka models how many steps the transition memos took in
full (their misses) and how often the codec emptied one of its memos. What the workers' way does not have:
Spark's own work (the JVM's Parquet, shuffle and Arrow transfer) and its collections after each task, which
``bench/spark_costs.py`` measures on a real run.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import numpy as np
import pyarrow.dataset as ds
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from explorer.bfs import BfsOptions, run_bfs
from kmc import compose
from spark_explore.columns import column_fingerprints, fp_columns
from spark_explore.level import partition_expander
from spark_explore.manifest import read_manifest
from spark_explore.trace import level_dir

#: Rows per batch handed to the workers' function: ``spark.sql.execution.arrow.maxRecordsPerBatch`` as kmc sets it.
ARROW_BATCH = 4096


class _Notes:
    """The accumulator the workers' function adds its per-partition notes to (ignored here)."""

    def add(self, _notes: Any) -> None:
        pass


def count_full_steps() -> collections.Counter[str]:
    """Counts, from now on in this process, the steps the Kafka model's transition memos take in full and the times
    its codec empties a memo of parts."""
    from model.zk import transition_memo
    from model.zk.state import codec

    counts: collections.Counter[str] = collections.Counter()
    for memo in (transition_memo.BrokerStepMemo, transition_memo.ControllerStepMemo,
                 transition_memo.EnvironmentStepMemo):
        for name in ("_step", "_watched_step"):
            setattr(memo, name, _counted(vars(memo)[name], counts, "full steps"))
    codec.Codec._empty = _counted(codec.Codec._empty, counts, "codec memos emptied")  # type: ignore[method-assign]
    return counts


def _counted(method: Callable[..., Any], counts: collections.Counter[str], name: str) -> Callable[..., Any]:
    def counted(*args: Any) -> Any:
        counts[name] += 1
        return method(*args)

    return counted


def visited_file(run_dir: Path, depth: int, bits: int, scratch: Path) -> str:
    """The sorted fingerprints of levels 0..``depth``, saved as the driver saves them for a Spark level."""
    columns = fp_columns(bits)
    fps = np.sort(np.concatenate([
        column_fingerprints(ds.dataset(level_dir(run_dir, k), format="parquet").to_table(columns=list(columns)),
                            columns, bits)
        for k in range(depth + 1)]))
    path = scratch / f"visited-{depth}.npy"
    np.save(path, fps)
    return str(path)


def worker_levels(run_dir: Path, depths: list[int], bits: int, counts: collections.Counter[str]) -> None:
    factory = compose.factory_for(compose.resolve_scenario(str(run_dir / "scenario.toml")))
    with tempfile.TemporaryDirectory(prefix="kmc-spark-worker-") as scratch:
        for depth in depths:
            worker_level(run_dir, depth, bits, counts, factory, Path(scratch))


def worker_level(run_dir: Path, depth: int, bits: int, counts: collections.Counter[str], factory: Any,
                 scratch: Path) -> None:
    """Level ``depth``'s files expanded one after the other by the workers' function, as tasks of one worker."""
    visited = visited_file(run_dir, depth, bits, scratch)
    before, start, states = dict(counts), time.process_time(), 0
    for part in sorted(level_dir(run_dir, depth).glob("part-*.parquet")):
        expand = partition_expander(factory, cast(Any, _Notes()), generate=True, skip=frozenset(), visited=visited,
                                    bits=bits)
        batches: Iterator[Any] = pq.ParquetFile(part).iter_batches(batch_size=ARROW_BATCH,
                                                                   columns=[*fp_columns(bits), "data"])
        for _ in expand(batches):
            pass
        states += pq.ParquetFile(part).metadata.num_rows
    _report("workers'", depth, states, time.process_time() - start, counts, before)


def driver_levels(run_dir: Path, depths: list[int], counts: collections.Counter[str]) -> None:
    import explorer.bfs as local_bfs

    expand_level = local_bfs._Search._expand_level

    def timed(search: Any, frontier: Any, depth: int, **options: Any) -> Any:
        before, start = dict(counts), time.process_time()
        level = expand_level(search, frontier, depth, **options)
        if depth in depths:
            _report("driver's", depth, len(frontier), time.process_time() - start, counts, before)
        return level

    local_bfs._Search._expand_level = timed  # type: ignore[method-assign,assignment]
    model = compose.model_for(compose.resolve_scenario(str(run_dir / "scenario.toml")))
    run_bfs(model, BfsOptions(max_depth=max(depths) + 1))


def _report(way: str, depth: int, states: int, seconds: float, counts: collections.Counter[str],
            before: dict[str, int]) -> None:
    change = ", ".join(f"{name} {counts[name] - before.get(name, 0):,}" for name in sorted(counts))
    print(f"{way:9} level {depth:3}: {states:9,} states, {1e6 * seconds / max(states, 1):7.1f} µs of CPU a state"
          + (f", {change}" if change else ""), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="a Spark run's directory (kmc explore --engine spark --out ...)")
    parser.add_argument("--levels", type=int, nargs="+", required=True, help="the depths to expand, in order")
    parser.add_argument("--worker-only", action="store_true", help="the workers' way only")
    args = parser.parse_args()
    manifest = read_manifest(args.run_dir)
    if manifest is None:
        parser.error(f"{args.run_dir} holds no Spark run (no manifest.json); give a kmc explore --engine spark run")
    recorded = len(manifest.levels)
    if any(depth < 0 or depth >= recorded for depth in args.levels):
        parser.error(f"{args.run_dir} records levels 0-{recorded - 1}; give --levels among them")
    counts = count_full_steps()
    worker_levels(args.run_dir, args.levels, manifest.fingerprint_bits, counts)
    if not args.worker_only:
        driver_levels(args.run_dir, args.levels, counts)


if __name__ == "__main__":
    main()
