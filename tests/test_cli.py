"""The ``kmc`` command line (kmc.cli.main) driven through click's test runner: exit statuses,
the JSON document on stdout, the run directory's files, and the listings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from invariants.registry import all_specs
from kmc.cli import main
from kmc.compose import shipped_scenarios


def kmc(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_explore_planted_bug_as_json(tmp_path: Path) -> None:
    """A violation exits 1 and prints one JSON document with the outcome, statistics and the 5-step discovery,
    and the run directory holds summary.json and report.txt."""
    result = kmc("explore", "planted-complete-on-first-success", "--engine", "local", "--format", "json",
                 "--out", str(tmp_path))
    assert result.exit_code == 1, result.stderr
    document = json.loads(result.stdout)  # the whole of stdout is one JSON document
    assert isinstance(document["schema_version"], int)
    assert document["engine"] == "local"
    assert document["outcome"] == "violation"
    assert document["exit_code"] == 1
    assert document["statistics"]["distinct"] == 152
    discovery = document["discoveries"][0]
    assert discovery["property"] == "deletion_completes_only_when_all_replicas_succeeded"
    assert discovery["trace_length"] == 5
    [run_dir] = tmp_path.iterdir()
    assert run_dir.name.endswith("planted-complete-on-first-success")
    assert {p.name for p in run_dir.iterdir()} >= {"summary.json", "report.txt"}
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["outcome"] == "violation"
    assert summary["discoveries"][0]["trace_length"] == 5
    assert (run_dir / "report.txt").read_text(encoding="utf-8").strip()


def test_explore_without_violation_exits_0(tmp_path: Path) -> None:
    """A complete search with no violation exits 0 and writes its reports."""
    result = kmc("explore", "deletion-3brokers", "--engine", "local", "--out", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    [run_dir] = tmp_path.iterdir()
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["outcome"] == "ok"
    assert summary["statistics"]["distinct"] == 7259


def test_explore_with_a_state_bound_is_inconclusive(tmp_path: Path) -> None:
    """A search stopped by --max-states before it is complete exits 3."""
    result = kmc("explore", "deletion-3brokers", "--engine", "local", "--max-states", "10", "--format", "json",
                 "--out", str(tmp_path))
    assert result.exit_code == 3, result.stderr
    document = json.loads(result.stdout)
    assert document["outcome"] == "inconclusive"
    assert document["exit_code"] == 3
    assert document["reason"]


def test_properties_lists_every_registered_property() -> None:
    """`kmc properties` prints one line per registered property, starting with its name."""
    result = kmc("properties")
    assert result.exit_code == 0
    listed = [line.split()[0] for line in result.stdout.splitlines() if line.strip()]
    assert listed == [spec.name for spec in all_specs()]


def test_scenarios_lists_every_shipped_scenario() -> None:
    """`kmc scenarios` prints one line per shipped scenario, starting with its name."""
    result = kmc("scenarios")
    assert result.exit_code == 0
    listed = [line.split()[0] for line in result.stdout.splitlines() if line.strip()]
    assert listed == sorted(shipped_scenarios())


def test_explore_help() -> None:
    """`kmc explore --help` exits 0 and documents the engine and bounds options."""
    result = kmc("explore", "--help")
    assert result.exit_code == 0
    for option in ("--engine", "--max-states", "--max-depth", "--format", "--out"):
        assert option in result.stdout


def test_spark_level_lines_tell_a_checked_level_and_a_cut_one(capsys: pytest.CaptureFixture[str]) -> None:
    """A level at a bound is checked, not expanded, and a level cut to --max-states says its new states are the part
    that fits; the line of a level expanded whole is as it was."""
    from kmc.commands.explore import _print_level
    from spark_explore.manifest import LevelRecord

    _print_level(LevelRecord(depth=12, frontier=1_127_996, generated=4_493_741, new=484_644, distinct_total=3_000_000,
                             seconds=334.66, expanded=True, truncated=True))
    _print_level(LevelRecord(depth=13, frontier=484_644, generated=0, new=0, distinct_total=3_000_000, seconds=28.55,
                             expanded=False))
    _print_level(LevelRecord(depth=3, frontier=10, generated=40, new=7, distinct_total=30, seconds=0.5, expanded=True))
    cut, checked, plain = capsys.readouterr().err.splitlines()
    assert cut.startswith("Level 12: 1,127,996 states expanded, 4,493,741 states generated, 484,644 new (the part of "
                          "the level within --max-states), 3,000,000 distinct states found")
    assert checked.startswith("Level 13: 484,644 states checked, not expanded (a bound), 3,000,000 distinct states")
    assert "expanded," not in checked and "generated" not in checked
    assert plain == ("Level 3: 10 states expanded, 40 states generated, 7 new, 30 distinct states found, 0.50s "
                     "(20 states/s).")
