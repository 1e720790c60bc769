"""The three explorers side by side: BFS (local), seeded simulation and Hypothesis.

    python bench/explorers.py                        # the bug scenarios, then the large scenario
    python bench/explorers.py --only large --large-walks 500 --large-examples 100
    python bench/explorers.py --bfs-minutes 10       # also show BFS not finishing the large scenario

Per shipped bug scenario, with ``kmc simulate``'s default budgets and seed 0: the wall time until the
violation is reported and the length of its trace, for BFS (shortest by construction), simulation
(walks run in rounds; the run stops at the end of the round that found it) and Hypothesis (time to
its first failing example, then the total with shrinking, and the walks its examples ran: an
example starts a new walk when the one before ends). A violation not found within the default budget
is printed as such, with the time spent.

On the large scenario (``bench/scenarios/large-6brokers-3racks.toml``: six brokers in three racks,
three topics, more than BFS finishes in ten minutes on two cores), the distinct states simulation
and Hypothesis reach per second, and the steps they take per second. ``--bfs-minutes`` runs
``kmc explore --engine local`` on it for that long and prints how far it got.

``--odds`` prints, per bug scenario, the exact probability that one random walk finds its violation,
for both ways of choosing a step (``--choose family`` and ``successor``), computed over the whole
reachable state graph (the walks' semantics: a state is a hit when a violation is found on it or on
a transition out of it; a state without successors ends the walk); its inverse is the mean number
of walks needed.

Prints Markdown tables (the README's performance section shows them).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout's own code, as under pytest

from explorer.bfs import run_bfs
from explorer.contract import Model
from explorer.expand import PropertySet, expand
from explorer.fingerprint import fingerprint
from explorer.hypothesis_machine import HypothesisOptions, run_hypothesis
from explorer.results import ExplorationResult
from explorer.simulation import SimulationOptions, run_simulation
from kmc.commands.simulate import DEFAULT_EXAMPLE_DEPTH, DEFAULT_MAX_EXAMPLES, DEFAULT_WALK_DEPTH, DEFAULT_WALKS
from kmc.compose import model_for, resolve_scenario

ROOT = Path(__file__).resolve().parent.parent
BUG_SCENARIOS = ("kafka-7235", "planted-complete-on-first-success", "kafka-6650", "stale-deletion-response",
                 "stray-log-after-deletion", "reassignment-during-deletion", "topic-recreation",
                 "stray-log-adopted-on-recreation")
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
                        f"{hyp.details['examples']:,} examples ({hyp.details['walks']:,} walks), {_violation(hyp)}")
        else:
            hyp_cell = (f"not found in {hyp.details['examples']:,} examples ({hyp.details['walks']:,} walks, "
                        f"{hyp.stats.seconds:.1f} s)")
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


def walk_odds(model: Model[object, object]) -> tuple[int, dict[str, float]]:
    """The number of reachable states and, per way of choosing a step, the probability that a walk from
    the (first) initial state finds a violation (assuming walks end before their depth bound)."""
    properties = PropertySet.of(model.properties())
    violation = {p.name for p in model.properties() if p.kind.is_violation}
    # fingerprint -> (hit, [(child fingerprint, action name)])
    graph: dict[int, tuple[bool, list[tuple[int, str]]]] = {}
    initial = model.init_states()[0]
    start = fingerprint(model.encode(initial))
    stack = [(start, initial)]
    while stack:
        fp, state = stack.pop()
        if fp in graph:
            continue
        expansion = expand(model, state, properties)
        hit = any(f.property in violation for f in expansion.findings)
        graph[fp] = (hit, [(c.fingerprint, c.action_name) for c in expansion.successors])
        if not hit:
            stack.extend((c.fingerprint, c.state) for c in expansion.successors if c.fingerprint not in graph)

    def probability(weight_of: str) -> float:
        memo: dict[int, float] = {}
        order: list[int] = []  # post-order by an explicit stack: the graphs are deeper than Python's recursion
        seen: set[int] = set()
        todo = [(start, False)]
        while todo:
            fp, children_done = todo.pop()
            if children_done:
                order.append(fp)
                continue
            if fp in seen:
                continue
            seen.add(fp)
            todo.append((fp, True))
            hit, successors = graph[fp]
            if not hit:  # a walk stops at a hit: what lies beyond was not expanded
                todo.extend((child, False) for child, _ in successors if child not in seen)
        for fp in order:
            hit, successors = graph[fp]
            if hit or not successors:
                memo[fp] = 1.0 if hit else 0.0
                continue
            families: dict[str, int] = {}
            for _, name in successors:
                families[name] = families.get(name, 0) + 1
            total = 0.0
            for child, name in successors:
                weight = 1 / len(successors) if weight_of == "successor" else 1 / (len(families) * families[name])
                total += weight * memo.get(child, 0.0)  # a child not yet valued closes a cycle: counted as a miss
            memo[fp] = total
        return memo[start]

    return len(graph), {choice: probability(choice) for choice in ("family", "successor")}


def odds_table(names: tuple[str, ...]) -> None:
    print("| scenario | states a walk can reach | P(walk finds it), family first | mean walks | "
          "P(walk finds it), any successor | mean walks |")
    print("|---|---|---|---|---|---|")
    for name in names:
        states, odds = walk_odds(model_for(resolve_scenario(name)))
        cells = " | ".join(f"{odds[c]:.2e} | {1 / odds[c]:,.0f}" for c in ("family", "successor"))
        print(f"| `{name}` | {states:,} | {cells} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("bugs", "large", "odds"), default=None)
    parser.add_argument("--scenario", action="append", help="bug scenarios to run (default: every shipped one)")
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
    if args.only == "odds":
        odds_table(tuple(args.scenario) if args.scenario else BUG_SCENARIOS)
    if args.bfs_minutes > 0:
        bfs_on_large(args.bfs_minutes)


if __name__ == "__main__":
    main()
