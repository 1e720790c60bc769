"""``kmc validate --model-check``: a plan executed on the controller model (Kafka 2.3 reassignment)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from explorer.progress import ProgressSnapshot
from kmc.cli import main
from kmc.common import UsageProblem
from kmc.plan_check import check_plan_execution, plan_scenario
from model.scenario import load_scenario


def _file(path: Path, partitions: list[tuple[str, int, list[int]]]) -> str:
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r} for t, p, r in partitions]}))
    return str(path)


def validate(tmp_path: Path, current: list[tuple[str, int, list[int]]], plan: list[tuple[str, int, list[int]]],
             *options: str) -> Result:
    return CliRunner().invoke(main, ["validate", _file(tmp_path / "plan.json", plan), "--current",
                                     _file(tmp_path / "current.json", current), "--model-check", *options])


def test_a_plan_is_executed_on_the_model_and_every_interleaving_passes(tmp_path: Path) -> None:
    """Moving t-0 from [0, 1] to [2, 1] completes in the model and breaks no property: exit 0, states reported."""
    result = validate(tmp_path, [("t", 0, [0, 1])], [("t", 0, [2, 1])], "--broker-failures", "0")
    assert result.exit_code == 0, result.output
    assert "Model check: the plan executed on the Kafka 2.3 controller model" in result.output
    assert "1,025 distinct states" in result.output
    assert "never satisfied" not in result.output


def test_the_model_check_shows_what_runs_and_its_progress(tmp_path: Path) -> None:
    """The model check, up to a minute long, is not silent: it says what it executes and reports the
    search's progress on stderr (TLC's Progress line here, the live display on a terminal)."""
    result = validate(tmp_path, [("t", 0, [0, 1])], [("t", 0, [2, 1])], "--broker-failures", "0")
    assert result.exit_code == 0, result.output
    assert "Model check: executing the plan" in result.stderr
    assert "1,025 distinct states found" in result.stderr and "Progress(" in result.stderr
    snapshots: list[ProgressSnapshot] = []
    current, plan = {("t", 0): (0, 1)}, {("t", 0): (2, 1)}
    check_plan_execution(current, plan, {}, 0, progress=snapshots.append, progress_interval_seconds=0)
    assert snapshots[-1].distinct == 1025
    assert any(s.level_size for s in snapshots)  # progress within a level, not only at its end


def test_a_search_cut_short_is_inconclusive(tmp_path: Path) -> None:
    """A model check stopped by --max-states exits 3 and says the check is incomplete."""
    result = validate(tmp_path, [("t", 0, [0, 1])], [("t", 0, [2, 1])], "--max-states", "50")
    assert result.exit_code == 3, result.output
    assert "model check is incomplete" in result.output


def test_a_plan_breaking_kafkas_rules_is_not_model_checked(tmp_path: Path) -> None:
    """A duplicate replica is a violation (exit 1) and the model check is skipped, saying why."""
    result = validate(tmp_path, [("t", 0, [0, 1])], [("t", 0, [2, 2])])
    assert result.exit_code == 1, result.output
    assert "Model check skipped" in result.output


@pytest.mark.parametrize(
    ("current", "plan", "words"),
    [
        ([("t", 0, [0]), ("u", 0, [1])], [("t", 0, [1]), ("u", 0, [0])], "one file per topic"),
        ([("t", 1, [0])], [("t", 1, [1])], "whole current assignment"),
        ([("t", 0, [0])], [("t", 0, [0])], "moves no replica"),
    ],
)
def test_plans_the_model_cannot_execute_are_refused_in_one_sentence(
    tmp_path: Path, current: list[tuple[str, int, list[int]]], plan: list[tuple[str, int, list[int]]], words: str
) -> None:
    """Several topics, a topic without its partition 0, or a plan that moves nothing: exit 2 with one sentence."""
    result = validate(tmp_path, current, plan)
    assert result.exit_code == 2, result.output
    assert words in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_scenario_holds_the_plan_and_its_bounds() -> None:
    """The generated scenario loads, with one reassignment command and one ISR change per new replica."""
    scenario = load_scenario(plan_scenario({("t", 0): (0, 1), ("t", 1): (1, 2)}, {("t", 1): (0, 3)}, {}, 2))
    assert [b.id for b in scenario.brokers] == [0, 1, 2, 3]
    (command,) = scenario.reassignments
    assert (command.topic, command.targets) == ("t", ((1, (0, 3)),))
    assert (scenario.bounds.broker_failures, scenario.bounds.isr_changes) == (2, 2)
    with pytest.raises(UsageProblem):
        plan_scenario({("t", 0): (0,)}, {("u", 0): (1,)}, {}, 1)
