"""Where a Spark BFS's time goes: the figures behind ``docs/scaling.md``.

    python bench/spark_costs.py toy-MC3                      # kmc's own choice of driver and Spark levels
    python bench/spark_costs.py kafka-default --driver-seconds 0   # every level a Spark job

One search on the Spark engine (``local[*]``), with Spark's event log written to a scratch directory,
then one JSON document on stdout:

* ``session_seconds``: building a session alone (a JVM and its context), timed in this process
  before the search, which then starts its own;
* ``levels``: per level the frontier, the generated and new states, wall seconds and the driver's
  phases as the manifest records them, and whether Spark or the driver expanded it;
* ``spark``: summed over the tasks of the event log, the executors' run time (the Python workers'
  expansion included), the JVM's CPU time, GC time, shuffle bytes and records written, and
  Parquet bytes and records written;
* ``cpu``: the user + system seconds of the search in this process (the driver) and in every
  process below it (the JVM and Spark's Python workers, read from /proc before the session stops);
* ``load``: the machine's one-minute load average before and after (wall figures mean little when
  it exceeds the cores).

Workload names are ``bench/run.py``'s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import WORKLOADS, _factory

_TASK_FIGURES = {
    "executor_run_seconds": ("Executor Run Time", 1e-3),
    "executor_jvm_cpu_seconds": ("Executor CPU Time", 1e-9),
    "executor_deserialize_seconds": ("Executor Deserialize Time", 1e-3),
    "jvm_gc_seconds": ("JVM GC Time", 1e-3),
}


def task_totals(event_dir: Path) -> dict[str, float]:
    """The task metrics of every event log in ``event_dir``, summed."""
    totals = dict.fromkeys([*_TASK_FIGURES, "shuffle_bytes_written", "shuffle_records_written",
                            "output_bytes_written", "output_records_written", "tasks", "jobs"], 0.0)
    for log in sorted(event_dir.rglob("events_*")):
        for line in _event_lines(log):
            event = json.loads(line)
            kind = event.get("Event")
            if kind == "SparkListenerJobStart":
                totals["jobs"] += 1
            if kind != "SparkListenerTaskEnd" or "Task Metrics" not in event:
                continue
            metrics = event["Task Metrics"]
            totals["tasks"] += 1
            for name, (key, scale) in _TASK_FIGURES.items():
                totals[name] += metrics.get(key, 0) * scale
            shuffle = metrics.get("Shuffle Write Metrics", {})
            totals["shuffle_bytes_written"] += shuffle.get("Shuffle Bytes Written", 0)
            totals["shuffle_records_written"] += shuffle.get("Shuffle Records Written", 0)
            output = metrics.get("Output Metrics", {})
            totals["output_bytes_written"] += output.get("Bytes Written", 0)
            totals["output_records_written"] += output.get("Records Written", 0)
    return {name: round(value, 3) for name, value in totals.items()}


def _event_lines(log: Path) -> list[str]:
    """The lines of one event log file, compressed with zstd (Spark 4's default) or not."""
    if log.suffix != ".zstd":
        return log.read_text().splitlines()
    import pyarrow as pa

    with pa.CompressedInputStream(pa.OSFile(str(log)), "zstd") as stream:
        return bytes(stream.read()).decode().splitlines()


def _descendants_cpu_seconds() -> float:
    """User + system seconds of every process below this one, and of the children they reaped."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = sum(int(f) for f in fields[11:15]) / tick  # utime stime cutime cstime
    below, frontier = set(), [os.getpid()]
    while frontier:
        pid = frontier.pop()
        children = [p for p, parent in parents.items() if parent == pid and p not in below]
        below.update(children)
        frontier.extend(children)
    return sum(times[pid] for pid in below)


def session_seconds() -> float:
    """How long building and stopping a bare session takes here."""
    from spark_explore.session import build_session

    started = time.perf_counter()
    session = build_session("local[*]", ui=False)
    session.range(1).count()  # the first job starts the Python-free part of the executors
    seconds = time.perf_counter() - started
    session.stop()
    return round(seconds, 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", choices=WORKLOADS)
    parser.add_argument("--driver-seconds", type=float, help="SparkBfsOptions.driver_seconds (default: kmc's)")
    args = parser.parse_args(argv)
    from spark_explore.bfs import SparkBfsOptions, run_spark_bfs
    from spark_explore.manifest import read_manifest

    if args.workload.startswith("toy-"):
        # Spark's Python workers import the toy model by name: they need tests/ on their path too.
        tests = str(Path(__file__).resolve().parent.parent / "tests")
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (os.environ.get("PYTHONPATH"), tests)))
    session = session_seconds()
    scratch = Path(tempfile.mkdtemp(prefix="kmc-spark-costs-"))
    events = scratch / "events"
    events.mkdir()
    conf = {"spark.eventLog.enabled": "true", "spark.eventLog.dir": events.as_uri()}
    extra = {} if args.driver_seconds is None else {"driver_seconds": args.driver_seconds}
    options = SparkBfsOptions(scratch / "run", master="local[*]", conf=conf, keep_session=True, **extra)
    load_before = os.getloadavg()[0]
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    result = run_spark_bfs(_factory(args.workload), options)
    seconds = time.perf_counter() - started
    own, below = resource.getrusage(resource.RUSAGE_SELF), _descendants_cpu_seconds()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
    manifest = read_manifest(scratch / "run")
    assert manifest is not None
    report: dict[str, Any] = {
        "workload": args.workload,
        "distinct": result.stats.distinct,
        "generated": result.stats.generated,
        "seconds": round(seconds, 2),
        "session_seconds": session,
        "cpu": {"driver": round(own.ru_utime + own.ru_stime - cpu_before.ru_utime - cpu_before.ru_stime, 2),
                "below": round(below, 2)},
        "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "levels": [{"depth": r.depth, "frontier": r.frontier, "generated": r.generated, "new": r.new,
                    "seconds": round(r.seconds, 3), "phases": dict(r.phases),
                    "on": "driver" if any("driver" in p for p in r.phases) else "spark"}
                   for r in manifest.levels],
        "spark": task_totals(events),
        "run_dir_bytes": sum(f.stat().st_size for f in (scratch / "run").rglob("*") if f.is_file()),
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
