"""The three explorers side by side: BFS (local), seeded simulation and Hypothesis.

    python bench/explorers.py                        # the bug scenarios, then the large scenario
    python bench/explorers.py --only large --large-walks 500 --large-examples 100
    python bench/explorers.py --bfs-minutes 10       # also show BFS not finishing the large scenario

Per shipped bug scenario, with ``kmc simulate``'s default budgets and seed 0: the wall time until the
violation is reported and the length of its trace, for BFS (shortest by construction), simulation
(walks run in rounds; the run stops at the end of the round that found it) and Hypothesis (time to
its first failing example, then the total with shrinking). A violation not found within the
default budget is printed as such, with the time spent.

On the large scenario (``bench/scenarios/large-6brokers-3racks.toml``: six brokers in three racks,
three topics, more than BFS finishes in ten minutes on two cores), the distinct states simulation
and Hypothesis reach per second, and the steps they take per second. ``--bfs-minutes`` runs
``kmc explore --engine local`` on it for that long and prints how far it got.

Prints Markdown tables (the README's performance section shows them).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

from explorer.bfs import run_bfs
from explorer.hypothesis_machine import HypothesisOptions, run_hypothesis
from explorer.results import ExplorationResult
from explorer.simulation import SimulationOptions, run_simulation
from kmc.commands.simulate import DEFAULT_EXAMPLE_DEPTH, DEFAULT_MAX_EXAMPLES, DEFAULT_WALK_DEPTH, DEFAULT_WALKS
from kmc.compose import model_for, resolve_scenario

ROOT = Path(__file__).resolve().parent.parent
BUG_SCENARIOS = ("kafka-7235", "planted-complete-on-first-success", "kafka-6650", "stale-deletion-response",
                 "stray-log-after-deletion")
LARGE = ROOT / "bench" / "scenarios" / "large-6brokers-3racks.toml"


def _violation(result: ExplorationResult) -> str:
    if not result.violations:
        return "not found"
    return f"{min(d.trace_length for d in result.violations)} steps"


def bug_table(names: tuple[str, ...]) -> None:
    print("| scenario | BFS: time, trace | simulation: time, walks, trace | Hypothesis: first failure, "
          "with shrinking, examples, trace |")
    print("|---|---|---|---|")
    for name in names:
        model = model_for(resolve_scenario(name))
        started = time.perf_counter()
        bfs = run_bfs(model)
        bfs_seconds = time.perf_counter() - started
        bfs_cell = f"{bfs_seconds:.1f} s, {_violation(bfs)} ({bfs.stats.distinct:,} states)"

        sim = run_simulation(model, SimulationOptions(walks=DEFAULT_WALKS, depth=DEFAULT_WALK_DEPTH, seed=0))
        first = sim.details.get("first_violating_walk")
        walks = f"{sim.details['walks']:,} walks" + ("" if first is None else f" (first violating: #{first:,})")
        sim_cell = f"{sim.stats.seconds:.1f} s, {walks}, {_violation(sim)}"

        hyp = run_hypothesis(model, HypothesisOptions(max_examples=DEFAULT_MAX_EXAMPLES, depth=DEFAULT_EXAMPLE_DEPTH,
                                                      seed=0))
        if hyp.violations:
            hyp_cell = (f"{hyp.details['first_violation_after_seconds']:.1f} s "
                        f"(example {hyp.details['first_violation_after_examples']:,}), {hyp.stats.seconds:.1f} s, "
                        f"{hyp.details['examples']:,} examples, {_violation(hyp)}")
        else:
            hyp_cell = f"not found in {hyp.details['examples']:,} examples ({hyp.stats.seconds:.1f} s)"
        print(f"| `{name}` | {bfs_cell} | {sim_cell} | {hyp_cell} |", flush=True)


def large_table(walks: int, examples: int) -> None:
    model = model_for(resolve_scenario(str(LARGE)))
    sim = run_simulation(model, SimulationOptions(walks=walks, depth=DEFAULT_WALK_DEPTH, seed=0))
    hyp = run_hypothesis(model, HypothesisOptions(max_examples=examples, depth=DEFAULT_EXAMPLE_DEPTH, seed=0))
    print(f"Large scenario `{LARGE.stem}`:")
    print()
    print("| explorer | budget | seconds | distinct states | distinct states/s | steps/s | successors generated |")
    print("|---|---|---|---|---|---|---|")
    for label, result, budget, steps in (
        ("simulation", sim, f"{walks:,} walks of ≤ {DEFAULT_WALK_DEPTH} steps", sim.details["steps"]),
        ("Hypothesis", hyp, f"{examples:,} examples of ≤ {DEFAULT_EXAMPLE_DEPTH} steps", hyp.details["steps"]),
    ):
        s = result.stats
        print(f"| {label} | {budget} | {s.seconds:.1f} | {s.distinct:,} | {s.distinct / s.seconds:,.0f} | "
              f"{steps / s.seconds:,.0f} | {s.generated:,} |", flush=True)


def bfs_on_large(minutes: float) -> None:
    """``kmc explore --engine local`` on the large scenario for ``minutes``, and how far it got."""
    command = [sys.executable, "-m", "kmc", "explore", str(LARGE), "--engine", "local", "--out",
               str(Path("/tmp") / "kmc-bench-runs")]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=minutes * 60)
        print(f"BFS finished in {time.perf_counter() - started:.0f} s (exit {done.returncode}).")
    except subprocess.TimeoutExpired as e:
        stderr = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        progress = [line for line in stderr.splitlines() if line.startswith("Progress(")]
        last = progress[-1] if progress else "(no progress line)"
        match = re.search(r"Progress\((\d+)\)", last)
        print(f"BFS did not finish in {minutes:g} minutes; last progress, at depth {match.group(1) if match else '?'}:")
        print(f"    {last}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("bugs", "large"), default=None)
    parser.add_argument("--scenario", action="append", help="bug scenarios to run (default: all five)")
    parser.add_argument("--large-walks", type=int, default=2000)
    parser.add_argument("--large-examples", type=int, default=300)
    parser.add_argument("--bfs-minutes", type=float, default=0.0)
    args = parser.parse_args()
    if args.only in (None, "bugs"):
        bug_table(tuple(args.scenario) if args.scenario else BUG_SCENARIOS)
        print()
    if args.only in (None, "large"):
        large_table(args.large_walks, args.large_examples)
        print()
    if args.bfs_minutes > 0:
        bfs_on_large(args.bfs_minutes)


if __name__ == "__main__":
    main()
