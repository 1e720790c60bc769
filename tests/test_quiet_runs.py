"""A clean run is quiet on the terminal (verdict, violations, statistics, one line for the sometimes
properties) while its report files keep the examples; properties a scenario gives nothing to check are
"not applicable", never a green "holds" or a vacuity warning."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from explorer.bfs import run_bfs
from invariants.applicability import not_applicable
from invariants.registry import all_specs
from kmc.cli import main
from kmc.compose import model_for, resolve_scenario

SMALL = """
name = "small"
[cluster]
brokers = [{ id = 0 }, { id = 1 }]
[[topics]]
name = "t"
replicas = [[0, 1]]
[bounds]
broker_failures = 1
"""


def explore_small(tmp_path: Path) -> tuple[str, Path]:
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL, encoding="utf-8")
    result = CliRunner().invoke(main, ["explore", str(scenario), "--engine", "local", "--no-progress",
                                       "--out", str(tmp_path / "runs")])
    assert result.exit_code == 0, result.stderr
    [run_dir] = (tmp_path / "runs").iterdir()
    return result.stdout, run_dir


def test_a_clean_run_prints_one_line_for_the_sometimes_properties(tmp_path: Path) -> None:
    """A scenario checking all 48 properties: the terminal counts them, shows no example trace, no coverage or
    level table, and sums up the sometimes properties in one sentence; report.txt keeps the examples, the
    per-property notes and the tables."""
    out, run_dir = explore_small(tmp_path)
    assert "Model checking completed. No error has been found." in out
    assert "Example found" not in out and "Warning: sometimes property" not in out
    assert "Action coverage" not in out and "Levels:" not in out
    assert "Properties checked: 48 (9 action always, 25 always, 14 action sometimes); report.txt lists them." in out
    paragraph = out[out.index("Sometimes properties:"):].split("\n\n")[0]
    assert " ".join(paragraph.split()) == (
        "Sometimes properties: 1 witnessed; 13 not applicable: the scenario enables no controlled shutdown, no "
        "controller failover or move, no topic deletion, no ISR change by a leader (isr_changes = 0), no log "
        "directory failure, no partitions added, no preferred replica election, no reassignment, no topic "
        "re-creation.")
    assert max(len(line) for line in out.splitlines() if not line.startswith("Reports written")) <= 100
    report = (run_dir / "report.txt").read_text(encoding="utf-8")
    assert report.count("Example found for") == 1
    assert ("Note: sometimes property sometimes_reassignment_completes is not applicable: the scenario enables no "
            "reassignment.") in report
    assert "Action coverage" in report and "rack_spread (always)" in report
    assert max(len(line) for line in report.splitlines()[:12]) <= 100


def test_rack_spread_without_racks_is_not_applicable(tmp_path: Path) -> None:
    """Without racks rack_spread is "not applicable" in report.md and report.html; with racks it holds."""
    _, run_dir = explore_small(tmp_path)
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "| `rack_spread` | always | not applicable: the scenario enables no broker racks |" in md
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert '<td class="na">not applicable: the scenario enables no broker racks</td>' in html
    assert "rack_spread" not in not_applicable(resolve_scenario("racks"), ["rack_spread"])


@pytest.mark.parametrize("name", ["controller-move", "delete-disabled", "kafka-3083", "log-dir-failure",
                                  "preferred-election", "reassignment-isr-shrink-race"])
def test_a_property_called_not_applicable_is_never_found(name: str) -> None:
    """The gates only name what a scenario lacks: a search of the whole space (with every property
    checked) never witnesses or violates a property they call not applicable."""
    from explorer.bfs import BfsOptions
    from model.scenario import with_properties

    scenario = resolve_scenario(name)
    everything = with_properties(scenario, [spec.name for spec in all_specs()])
    gated = not_applicable(everything, [spec.name for spec in all_specs()])
    assert gated  # each of these scenarios leaves some feature off
    result = run_bfs(model_for(everything), BfsOptions(keep_going=True))
    assert not {d.property for d in result.discoveries} & set(gated)
