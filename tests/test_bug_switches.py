"""Kafka's bug history as switches: each [bugs] switch names the property it breaks and a shipped scenario whose
local BFS finds that violation with the switch on (pinned in test_scenarios_pinned) and nothing, with every
example of its sometimes properties found, with the switch off within the same bounds."""

from __future__ import annotations

import pytest
from click.testing import CliRunner, Result

from explorer.bfs import run_bfs
from explorer.results import Outcome
from invariants.registry import all_specs
from kmc.cli import main
from kmc.commands.bugs import versions_with
from kmc.compose import model_for, resolve_scenario, shipped_scenarios
from model.scenario import BUGS, KRAFT_BUGS, NOT_MODELLED_BUGS, RENAMED_BUGS, ScenarioError, load_scenario, with_bug
from tests.test_scenarios_pinned import PINNED

#: Switch-off searches over ~2 s on a quiet 2-core machine (1.6K to 6.9K states): the slow set.
SLOW_OFF = {"KAFKA_5310", "KAFKA_8286", "KAFKA_4214", "KAFKA_3096", "KAFKA_6650", "DELETION_DURING_REASSIGNMENT"}


def _param(name: str) -> object:
    return pytest.param(name, id=name, marks=[pytest.mark.slow] if name in SLOW_OFF else [])


def test_every_switch_names_a_property_and_a_shipped_scenario_that_has_it_on() -> None:
    """Each bug switch names a registered property and a shipped scenario that turns the switch on, checks that
    property, and is pinned as violating it."""
    properties = {spec.name for spec in all_specs()}
    for bug in BUGS.values():
        assert bug.breaks in properties, bug.name
        assert bug.scenario in shipped_scenarios(), bug.name
        scenario = resolve_scenario(bug.scenario)
        assert bug.name in scenario.bugs, bug.name
        assert scenario.properties is None or bug.breaks in scenario.properties, bug.name
        pinned = PINNED[bug.scenario]
        assert pinned.outcome is Outcome.VIOLATION, bug.name
        assert bug.breaks in pinned.discoveries, bug.name


def test_every_kafka_switch_is_named_after_its_jira() -> None:
    """A switch of a Kafka JIRA is named after it (KAFKA-9672 -> KAFKA_9672), so the name in a scenario's [bugs]
    and the JIRA that `kmc bugs` prints are the same."""
    for bug in BUGS.values():
        if bug.jira.startswith("KAFKA-"):
            assert bug.name == bug.jira.replace("-", "_"), bug.name


@pytest.mark.parametrize("old", sorted(RENAMED_BUGS))
def test_a_renamed_switch_is_refused_with_its_name(old: str) -> None:
    """A scenario or `kmc bugs --only` naming a renamed switch is refused (not read as the renamed one), in one
    sentence that gives the name to write."""
    base = '[cluster]\nbrokers = [0, 1]\n[[topics]]\nname = "t"\nreplicas = [[0, 1]]\n'
    with pytest.raises(ScenarioError, match=f"write {RENAMED_BUGS[old]} instead"):
        load_scenario(base + f"[bugs]\n{old} = true\n")
    result = kmc("bugs", "--only", old)
    assert result.exit_code == 2
    assert RENAMED_BUGS[old] in result.stderr and result.stderr.count("\n") == 1


def test_a_bug_never_fixed_upstream_is_listed_as_such() -> None:
    """The versions of a bug no release fixed end in "(not fixed upstream)", not "(fixed in not fixed upstream)"."""
    assert versions_with(BUGS["DELETION_DURING_REASSIGNMENT"]) == "1.1-3.9 (not fixed upstream)"
    assert versions_with(BUGS["KAFKA_6082"]) == "1.1-2.0 (fixed in 2.1.0)"


def test_at_least_eighteen_kafka_bugs_are_switches() -> None:
    """The catalogue holds at least 18 of Kafka's bugs (planted ones aside), and the spec's 24 are each a switch or
    a bug the model says it cannot express; the switches of the 2.4 - 3.9 era beyond the spec's list
    (docs/versions.md) come on top."""
    kafka = [b for b in BUGS.values() if b.fixed_in is not None]
    assert len(kafka) >= 18
    assert not {b.jira for b in kafka} & set(NOT_MODELLED_BUGS)
    beyond_the_spec = {"KAFKA-13225", "KAFKA-13972", "KAFKA-10314", "KAFKA-14140", "KAFKA-14144", "KAFKA-9946"}
    assert beyond_the_spec <= {b.jira for b in kafka}
    assert len(kafka) + len(NOT_MODELLED_BUGS) == 24 + len(beyond_the_spec)


@pytest.mark.parametrize("name", [_param(name) for name in sorted(BUGS)])
def test_bug_scenario_is_clean_with_its_switch_off(name: str) -> None:
    """With its switch off the bug's scenario explores to OK, no violation, and every sometimes example found
    (the trigger is still reached)."""
    bug = BUGS[name]
    off = with_bug(resolve_scenario(bug.scenario), name, on=False)
    assert name not in off.bugs
    result = run_bfs(model_for(off))
    assert result.outcome is Outcome.OK, [v.property for v in result.violations]
    assert result.never_found == ()


def test_with_bug_rewrites_the_source_so_spark_workers_see_the_same_switches() -> None:
    """with_bug sets a switch in the scenario's TOML text (an existing line, a [bugs] table, or a new one), and
    re-loading that text gives the same switches."""
    base = '[cluster]\nbrokers = [0, 1]\n[[topics]]\nname = "t"\nreplicas = [[0, 1]]\n'
    for text in (base, base + "[bugs]\n", base + "[bugs]\nKAFKA_6650 = false\n"):
        on = with_bug(load_scenario(text), "KAFKA_6650", on=True)
        assert "KAFKA_6650" in on.bugs
        assert load_scenario(on.source).bugs == on.bugs
        off = with_bug(on, "KAFKA_6650", on=False)
        assert off.bugs == on.bugs - {"KAFKA_6650"}
        assert load_scenario(off.source).bugs == off.bugs


def test_with_bug_refuses_an_unknown_switch() -> None:
    """An unknown switch name is refused in one sentence listing the known ones."""
    scenario = resolve_scenario("kafka-6650")
    with pytest.raises(ScenarioError, match="is not a known bug switch"):
        with_bug(scenario, "KAFKA_0000", on=True)


# ---- kmc bugs ------------------------------------------------------------------------------------------------


def kmc(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_kmc_bugs_lists_every_switch_and_every_bug_not_modelled() -> None:
    """`kmc bugs` lists each switch with its versions, property and scenario (unverified), then the bugs the
    model cannot express with the reason, and explores nothing."""
    result = kmc("bugs")
    assert result.exit_code == 0
    heads = [line.split()[0] for line in result.stdout.splitlines() if line and not line.startswith(" ")]
    assert heads[:len(BUGS)] == list(BUGS)
    # then the KRaft controller's table, listed in test_kraft_scenarios
    assert [h.rstrip(":") for h in heads[len(BUGS) + 1:len(BUGS) + 1 + len(NOT_MODELLED_BUGS)]] == list(
        NOT_MODELLED_BUGS)
    assert "    versions: 1.1-2.0 (fixed in 2.1.0)" in result.stdout  # KAFKA-6082
    assert "    breaks:   zk_written_only_by_active_controller" in result.stdout
    assert result.stdout.count("reproduced: not checked here") == len(BUGS) + len(KRAFT_BUGS)


def test_kmc_bugs_verify_one_switch_on_and_off() -> None:
    """`kmc bugs --verify --only KAFKA_7482` explores kafka-7482 with the switch on (the violation) and off (ok),
    prints both searches' states and seconds, and exits 0."""
    result = kmc("bugs", "--verify", "--only", "KAFKA_7482")
    assert result.exit_code == 0, result.output
    assert "switch on:  violation, 19 states," in result.stdout
    assert "violated: single_acting_leader_when_idle" in result.stdout
    assert "switch off: ok, 83 states," in result.stdout
    assert "reproduced: yes" in result.stdout
    assert "KAFKA_6082" not in result.stdout


def test_kmc_bugs_refuses_an_unknown_switch() -> None:
    """An unknown --only name is refused in one sentence with exit status 2."""
    result = kmc("bugs", "--verify", "--only", "KAFKA_0000")
    assert result.exit_code == 2
    assert "'KAFKA_0000' is not a bug switch" in result.stderr
