"""Known bugs named in every output, ``kmc explore --continue`` on both engines, and the command line's
``--property`` / ``--skip-property`` selection beside the scenario's ``[check]``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from explorer.bfs import BfsOptions, run_bfs
from explorer.results import Outcome
from kmc.cli import main
from kmc.compose import factory_for, model_for, resolve_scenario, select_properties
from kmc.known_bugs import known_bugs
from model.scenario import ScenarioError, with_bug

KAFKA_9212_NOTE = ('This is KAFKA-9212 (fixed in 2.4.0; on because `[kafka] version = "2.3"`). '
                   "To look past it: `[bugs] KAFKA_9212 = false`.")


def kmc(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def run_dir_of(out: Path) -> Path:
    [run_dir] = out.iterdir()
    return run_dir


def test_a_version_default_switch_is_named_with_its_fix_and_how_to_look_past_it() -> None:
    """KAFKA-9212 is on by default for 2.3: the note names its JIRA, the fixing release, the version that
    turned it on, and the [bugs] line that turns it off."""
    notes = known_bugs(resolve_scenario("kafka-9212"), ["metadata_caches_current_when_idle", "isr_never_empty"])
    assert list(notes) == ["metadata_caches_current_when_idle"]  # isr_never_empty: no switch breaks it
    assert notes["metadata_caches_current_when_idle"]["sentence"] == KAFKA_9212_NOTE
    assert notes["metadata_caches_current_when_idle"]["switches"][0]["switch"] == "KAFKA_9212"


def test_a_switch_set_in_the_scenario_says_so_and_two_candidates_are_both_named() -> None:
    """kafka-3083 sets KAFKA_3083 itself and has KAFKA_6082 from its version; both break the same property."""
    sentence = known_bugs(resolve_scenario("kafka-3083"), ["zk_written_only_by_active_controller"])[
        "zk_written_only_by_active_controller"]["sentence"]
    assert sentence.startswith("This may be KAFKA-3083 (fixed in 1.1.0; on because `[bugs] KAFKA_3083 = true`) "
                               "or KAFKA-6082 (fixed in 2.1.0; on because `[kafka] version = \"1.1\"`).")
    assert sentence.endswith("To look past it: `[bugs] KAFKA_3083 = false`, `[bugs] KAFKA_6082 = false`.")


def test_a_bug_no_release_fixed_is_named_without_a_fixing_release() -> None:
    """KAFKA-14808's fix (PR #13451) was never merged: the note says so rather than "fixed in"."""
    sentence = known_bugs(resolve_scenario("kafka-14808"), ["leader_elected_when_isr_member_alive"])[
        "leader_elected_when_isr_member_alive"]["sentence"]
    assert sentence == ("This is KAFKA-14808 (not fixed upstream: PR #13451 never merged; on because `[bugs] "
                        "KAFKA_14808 = true`). To look past it: `[bugs] KAFKA_14808 = false`.")


def test_a_switch_turned_off_is_not_named() -> None:
    """With the switch off, a violation of the property it breaks is no known bug."""
    scenario = with_bug(resolve_scenario("kafka-9212"), "KAFKA_9212", False)
    assert known_bugs(scenario, ["metadata_caches_current_when_idle"]) == {}


def test_every_output_names_the_known_bug(tmp_path: Path) -> None:
    """The terminal, report.txt, report.md, report.html and summary.json each carry the note."""
    result = kmc("explore", "kafka-9212", "--engine", "local", "--out", str(tmp_path), "--no-progress")
    assert result.exit_code == 1, result.stderr
    text_note = ('This is KAFKA-9212 (fixed in 2.4.0; on because `[kafka] version = "2.3"`).\n'
                 "  To look past it: `[bugs] KAFKA_9212 = false`.")
    assert "violation of metadata_caches_current_when_idle (a known bug, see below)." in result.stdout
    assert text_note in result.stdout
    run_dir = run_dir_of(tmp_path)
    assert text_note in (run_dir / "report.txt").read_text(encoding="utf-8")
    assert ("**Known bug:** This is KAFKA-9212 (fixed in 2.4.0; on because `[kafka] version = \"2.3\"`). To look "
            "past it: `[bugs] KAFKA_9212 = false`.") in (run_dir / "report.md").read_text(encoding="utf-8")
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert ("This is KAFKA-9212 (fixed in 2.4.0; on because <code>[kafka] version = &#34;2.3&#34;</code>). To look "
            "past it: <code>[bugs] KAFKA_9212 = false</code>.") in html
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["known_bugs"]["metadata_caches_current_when_idle"]["sentence"] == KAFKA_9212_NOTE
    rerendered = kmc("report", str(run_dir), "--format", "md")  # kmc report reads the note back
    assert rerendered.exit_code == 0, rerendered.stderr
    assert "**Known bug:**" in (run_dir / "report.md").read_text(encoding="utf-8")


def test_continue_reports_every_violated_property_with_its_shortest_trace() -> None:
    """kafka-3083 violates two properties; without --continue the search stops at the first level holding
    one; with it, both are reported, each with the trace a search stopping at it would report."""
    scenario = resolve_scenario("kafka-3083")
    first = run_bfs(model_for(scenario))
    every = run_bfs(model_for(scenario), BfsOptions(keep_going=True))
    assert first.outcome is every.outcome is Outcome.VIOLATION
    assert [d.property for d in first.violations] == ["zk_written_only_by_active_controller"]
    assert sorted(d.property for d in every.violations) == ["controller_cache_matches_zk",
                                                           "zk_written_only_by_active_controller"]
    assert every.violations[0] == first.violations[0]
    assert every.stats.queue == 0 and every.stats.distinct > first.stats.distinct  # the whole space was searched
    alone = run_bfs(model_for(select_properties(scenario, ["controller_cache_matches_zk"])))
    [cache] = [d for d in every.violations if d.property == "controller_cache_matches_zk"]
    assert (cache.path, cache.action_indices) == (alone.violations[0].path, alone.violations[0].action_indices)


@pytest.mark.spark
def test_continue_finds_the_same_on_spark(tmp_path: Path) -> None:
    """The Spark engine with keep_going reports the same violations, traces and counts as the local one."""
    from spark_explore.bfs import SparkBfsOptions, run_spark_bfs

    scenario = resolve_scenario("kafka-3083")
    local = run_bfs(model_for(scenario), BfsOptions(keep_going=True))
    on_spark = run_spark_bfs(factory_for(scenario), SparkBfsOptions(tmp_path / "run", master="local[2]",
                                                                    keep_going=True, driver_seconds=0))
    assert on_spark.outcome is Outcome.VIOLATION
    assert (on_spark.stats.distinct, on_spark.stats.generated) == (local.stats.distinct, local.stats.generated)

    def found(result: Any) -> list[tuple[str, tuple[int, ...]]]:
        return sorted((d.property, d.path) for d in result.discoveries)

    assert found(on_spark) == found(local)
    assert on_spark.never_found == local.never_found


def test_continue_on_the_command_line_is_kept_for_resume(tmp_path: Path) -> None:
    """--continue reports both violations, exits 1, and is recorded in run.json for --resume."""
    result = kmc("explore", "kafka-3083", "--engine", "local", "--continue", "--format", "json",
                 "--out", str(tmp_path))
    assert result.exit_code == 1, result.stderr
    document = json.loads(result.stdout)
    assert sorted(d["property"] for d in document["discoveries"] if d["violation"]) == [
        "controller_cache_matches_zk", "zk_written_only_by_active_controller"]
    assert list(document["known_bugs"]) == ["zk_written_only_by_active_controller"]
    assert json.loads((run_dir_of(tmp_path) / "run.json").read_text(encoding="utf-8"))["continue"] is True


def test_property_and_skip_property_narrow_the_selection(tmp_path: Path) -> None:
    """--skip-property drops the property a known bug breaks (the run is then clean); --property replaces
    the scenario's [check] list; the run keeps the selection in its scenario copy."""
    skipped = kmc("explore", "kafka-9212", "--engine", "local", "--skip-property",
                  "metadata_caches_current_when_idle", "--format", "json", "--out", str(tmp_path / "a"))
    assert skipped.exit_code == 0, skipped.stderr
    assert [p["name"] for p in json.loads(skipped.stdout)["properties"]] == [
        "controller_cache_matches_zk", "leader_epoch_monotonic"]
    chosen = kmc("explore", "kafka-9212", "--engine", "local", "--property", "isr_never_empty", "--property",
                 "leader_epoch_monotonic", "--format", "json", "--out", str(tmp_path / "b"))
    assert chosen.exit_code == 0, chosen.stderr
    assert [p["name"] for p in json.loads(chosen.stdout)["properties"]] == ["isr_never_empty",
                                                                             "leader_epoch_monotonic"]
    copy = (run_dir_of(tmp_path / "b") / "scenario.toml").read_text(encoding="utf-8")
    assert 'properties = ["isr_never_empty", "leader_epoch_monotonic"]' in copy


@pytest.mark.parametrize(("args", "message"), [
    (("--property", "no_such_property"),
     "kmc: --property 'no_such_property' is not a property; `kmc properties` lists the names."),
    (("--skip-property", "nope"), "kmc: --skip-property 'nope' is not a property; `kmc properties` lists the names."),
    (("--property", "isr_never_empty", "--skip-property", "isr_never_empty"),
     "kmc: --skip-property leaves no property of scenario 'kafka-9212' to check; keep at least one."),
])
def test_an_unknown_or_empty_selection_is_one_sentence_and_exit_2(args: tuple[str, ...], message: str,
                                                                  tmp_path: Path) -> None:
    """A name that is not a property, or a selection that leaves nothing, is refused before anything runs."""
    result = kmc("explore", "kafka-9212", "--engine", "local", "--out", str(tmp_path), *args)
    assert result.exit_code == 2
    assert result.stderr.strip() == message
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_select_properties_refuses_what_it_cannot_rewrite() -> None:
    """A [check] the rewrite would lose is refused rather than silently changed."""
    scenario = resolve_scenario("kafka-9212")
    odd = attrs_evolve_source(scenario, scenario.source.replace("[check]\n", "[check] # note\n"))
    assert select_properties(odd, ["isr_never_empty"]).properties == ("isr_never_empty",)
    with pytest.raises(ScenarioError):
        select_properties(scenario, [], ["metadata_caches_current_when_idle", "controller_cache_matches_zk",
                                         "leader_epoch_monotonic"])


def attrs_evolve_source(scenario: Any, text: str) -> Any:
    from model.scenario import load_scenario

    return load_scenario(text, default_name=scenario.name)
