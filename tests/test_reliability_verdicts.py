"""Verdicts say what was searched: a sample is never a complete search, and a run that checked no
invariant and found no example of its sometimes property is never a clean pass.

A model checker's one promise is its verdict: "No error has been found" only after a complete
search (DESIGN.md's exit statuses; README's exit table per command).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from kmc.cli import main

SOMETIMES_ONLY = """
name = "deletion-example-only"
description = "delete.topic.enable=false with only the deletion example to find: nothing can be verified."
[cluster]
brokers = [{ id = 0 }, { id = 1 }]
[[topics]]
name = "t"
partitions = 1
replication_factor = 2
deleted_by_admin = true
[kafka]
delete_topic_enable = false
[bounds]
broker_failures = 0
[check]
properties = ["sometimes_deletion_completes"]
"""


def kmc(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_walks_on_a_violating_scenario_do_not_claim_no_error(tmp_path: Path) -> None:
    """200 walks that miss stray-log-after-deletion's violation exit 3, outcome no_violation_in_sample,
    and say how many walks of how many steps they ran and that this is not exhaustive; they never say
    "Model checking completed" or "No error has been found" (they exited 0 saying so)."""
    # seed 1: walks that miss it (with the default seed a walk of the current model finds the violation)
    result = kmc("simulate", "stray-log-after-deletion", "--walks", "200", "--seed", "1", "--out", str(tmp_path))
    assert result.exit_code == 3, result.output
    assert "No error has been found" not in result.output
    assert "Model checking completed" not in result.output
    last = result.stdout.splitlines()[-1]
    assert last.startswith("No violation in 200 walks of at most 100 steps; ") and "not exhaustive" in last
    [run_dir] = tmp_path.iterdir()
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert (summary["outcome"], summary["exhaustive"]) == ("no_violation_in_sample", False)
    report = (run_dir / "report.txt").read_text(encoding="utf-8")
    assert "No error has been found" not in report and "not exhaustive" in report
    assert "no violation in the states sampled" in (run_dir / "report.md").read_text(encoding="utf-8")


def test_hypothesis_without_a_violation_is_no_verdict(tmp_path: Path) -> None:
    """--hypothesis without a violation exits 3 and says how many examples it ran, never "No error"."""
    result = kmc("simulate", "deletion-3brokers", "--hypothesis", "--max-examples", "5", "--depth", "5",
                 "--out", str(tmp_path))
    assert result.exit_code == 3, result.output
    assert "No error has been found" not in result.output
    assert result.stdout.splitlines()[-1].startswith("No violation in 5 Hypothesis examples of at most 5 steps; ")


@pytest.mark.parametrize("command", [["explore", "--engine", "local"], ["simulate", "--walks", "20"]])
def test_only_a_sometimes_property_never_satisfied_is_not_a_clean_pass(command: list[str], tmp_path: Path) -> None:
    """A scenario whose only property is a sometimes property that no state satisfies says that nothing
    has been verified (explore) or that the sample is not a verdict (simulate), never "No error"."""
    path = tmp_path / "sometimes-only.toml"
    path.write_text(SOMETIMES_ONLY, encoding="utf-8")
    result = kmc(command[0], str(path), *command[1:], "--out", str(tmp_path / "out"))
    assert "No error has been found" not in result.output
    assert "sometimes_deletion_completes" in result.output
    if command[0] == "explore":
        assert result.exit_code == 0, result.output
        assert "nothing has been verified" in result.output
    else:
        assert result.exit_code == 3, result.output
        assert "sometimes property sometimes_deletion_completes not satisfied in them" in result.output
