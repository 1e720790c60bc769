"""Time the local BFS on the TLA+ toy controller, next to TLC's numbers for the same work.

    python bench/toy_controller_local.py                 # MC.cfg, a few seconds
    python bench/toy_controller_local.py --config MC3    # MC3.cfg, 3.4M states: minutes, ~1 GB

TLC's counts come from bench/tla/README.md (TLC with one worker on bench/tla's specification), its
times from a run on a quiet 2-core machine. The counts must match exactly: a difference means the
port of the TLA+ module in tests/toy_models/kafka_controller_toy.py does not do TLC's work, and the
times are not comparable.
Progress goes to stderr in TLC's vocabulary; the comparison table to stdout. Exit status 0 when the
counts match TLC's, 1 when they do not.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# The toy models live with the tests (they test the explorers), not in an installed package; the
# checkout's own explorer comes first, as under pytest, so that a worktree times its own code.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toy_models.kafka_controller_toy import CONFIGS, KafkaControllerToy

from explorer.bfs import BfsOptions, run_bfs
from explorer.progress import ProgressPrinter, final_statistics_lines

#: TLC on this machine, one worker: distinct states, states generated (incl. initial), depth, seconds.
TLC = {
    "MC": {"distinct": 168_927, "generated": 614_016, "depth": 28, "seconds": "10-15"},
    "MC3": {"distinct": 3_395_707, "generated": 14_683_144, "depth": 39, "seconds": "~190"},
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", choices=sorted(TLC), default="MC", help="the TLC config to reproduce")
    parser.add_argument("--progress-seconds", type=float, default=10.0, help="seconds between progress lines")
    args = parser.parse_args(argv)

    model = KafkaControllerToy(CONFIGS[args.config])
    options = BfsOptions(progress=ProgressPrinter(), progress_interval_seconds=args.progress_seconds)
    result = run_bfs(model, options)
    stats = result.stats
    for line in final_statistics_lines(stats):
        print(line, file=sys.stderr)

    expected = TLC[args.config]
    measured = {"distinct": stats.distinct, "generated": stats.generated, "depth": stats.depth}
    print(f"toy controller, {args.config}.cfg: kmc local BFS vs TLC (1 worker)")
    print(f"  {'':<22}{'kmc local':>14}{'TLC':>14}")
    for key in ("distinct", "generated", "depth"):
        mark = "" if measured[key] == expected[key] else "   <-- differs"
        print(f"  {key:<22}{measured[key]:>14,}{expected[key]:>14,}{mark}")
    print(f"  {'seconds':<22}{stats.seconds:>14.1f}{expected['seconds']:>14}")
    print(f"  {'distinct states/s':<22}{stats.states_per_second:>14,.0f}{'~18,000':>14}")
    print(f"  {'generated states/s':<22}{stats.generated / stats.seconds:>14,.0f}")
    print(f"  outcome: {result.outcome.value}")
    same_work = all(measured[key] == expected[key] for key in measured)
    return 0 if same_work else 1


if __name__ == "__main__":
    sys.exit(main())
