"""The text and JSON renderers: what they must say, and that the JSON document is plain JSON."""

from __future__ import annotations

import json

import attrs
import pytest
from toy_models.counter import Counter
from toy_models.kafka_controller_toy import MC_STUCK, KafkaControllerToy

from explorer.bfs import BfsOptions, run_bfs
from explorer.contract import Model
from explorer.progress import final_statistics_lines
from explorer.replay import Trace, replay
from explorer.results import SCHEMA_VERSION, ExplorationResult, Statistics
from reports.json_report import render_json
from reports.text import render_text


def explore(
    model: Model[object, object], options: BfsOptions | None = None
) -> tuple[ExplorationResult, dict[str, Trace]]:
    result = run_bfs(model, options)
    return result, {d.property: replay(model, d) for d in result.discoveries}


def test_json_document_round_trips_and_has_the_schema_fields() -> None:
    """The document survives json.dumps/loads unchanged and has every schema field, fingerprints as ints."""
    result, traces = explore(KafkaControllerToy(MC_STUCK))
    document = render_json(result, traces, extra={"scenario": "MC_stuck", "master": None})
    assert json.loads(json.dumps(document, allow_nan=False)) == document
    assert set(document) == {
        "schema_version", "kmc_version", "engine", "outcome", "exit_code", "reason", "statistics",
        "discoveries", "never_found", "details", "scenario", "master", "bounds",
        "stopped_by", "examples_missing", "exhaustive",
    }  # fmt: skip
    assert document["schema_version"] == SCHEMA_VERSION
    assert (document["engine"], document["outcome"], document["exit_code"]) == ("local", "violation", 1)
    assert set(document["statistics"]) == {
        "distinct", "generated", "depth", "queue", "seconds", "states_per_second",
        "collision_probability", "collision_negligible", "fingerprint_bits", "levels", "actions",
    }  # fmt: skip
    [discovery] = document["discoveries"]
    assert discovery["property"] == "NeverStuckOffline"
    assert (discovery["kind"], discovery["violation"], discovery["trace_length"]) == ("always", True, 4)
    assert discovery["fingerprints"] == list(result.discoveries[0].path)
    assert all(isinstance(fp, int) for fp in discovery["fingerprints"])
    assert [step["fingerprint"] for step in discovery["trace"]] == discovery["fingerprints"][1:]
    assert {"action", "action_name", "changes", "fingerprint"} <= set(discovery["trace"][0])


def test_json_lists_examples_and_never_found() -> None:
    """Sometimes examples are discoveries that are not violations; never-found properties are listed."""
    result, traces = explore(Counter(2))
    document = render_json(result, traces)
    assert document["outcome"] == "ok"
    assert [d["violation"] for d in document["discoveries"]] == [False, False]
    assert document["never_found"] == ["y_exceeds_n"]
    assert sum(a["generated"] for a in document["statistics"]["actions"]) + 1 == document["statistics"]["generated"]


def test_json_without_a_trace_and_with_set_evidence() -> None:
    """A discovery that was not replayed has a null trace; sets and tuples in evidence become lists."""
    result, _ = explore(Counter(2, sum_limit=1))
    [violation] = result.discoveries
    evidence_with_sets = {"brokers": frozenset({3, 1}), "pair": (1, 2)}
    result = attrs.evolve(result, discoveries=(attrs.evolve(violation, evidence=evidence_with_sets),))
    [discovery] = render_json(result, {})["discoveries"]
    assert discovery["trace"] is None
    assert discovery["evidence"] == {"brokers": [1, 3], "pair": [1, 2]}


def test_json_refuses_extra_fields_that_replace_its_own() -> None:
    """Extra fields may not overwrite a schema field."""
    result, traces = explore(Counter(1))
    with pytest.raises(ValueError, match="'outcome'"):
        render_json(result, traces, extra={"outcome": "fine"})


def test_text_report_names_property_evidence_and_each_step() -> None:
    """A violation report has TLC's headline, the evidence, the initial state, each step and its changes."""
    result, traces = explore(KafkaControllerToy(MC_STUCK))
    text = render_text(result, traces)
    assert "Error: Invariant NeverStuckOffline is violated." in text
    [violation] = result.violations
    for key, value in violation.evidence.items():
        assert f"  {key}: " in text
        assert str(value[0] if isinstance(value, list) else value) in text
    trace = traces["NeverStuckOffline"]
    assert "State 0 (initial)" in text
    assert "  up[b1] = TRUE" in text
    for number, step in enumerate(trace.steps, 1):
        assert f"Step {number}: {step.action}" in text
        for change in step.changes:
            assert f"  {change}" in text
    assert "states generated" in text and "distinct states found" in text and "states left on queue" in text


def test_text_report_of_examples_warnings_and_action_properties() -> None:
    """Examples and action-property violations have their own headlines; never-found ones are warnings."""
    ok, traces = explore(Counter(2))
    text = render_text(ok, traces)
    assert "Model checking completed. No error has been found." in text
    assert "Example found for sometimes property x_reaches_n." in text
    assert "Warning: sometimes property y_exceeds_n was never satisfied: the scenario may be vacuous for it." in text
    assert "Action coverage (distinct : generated):" in text
    violated, traces = explore(Counter(3, inc_x_y_limit=1))
    assert "Error: Action property inc_x_while_y_below_limit is violated." in render_text(violated, traces)


def test_text_report_of_an_inconclusive_run_gives_the_reason() -> None:
    """An inconclusive run says why the search stopped."""
    result, traces = explore(Counter(3), BfsOptions(max_depth=1))
    text = render_text(result, traces)
    assert "Outcome: inconclusive (exit code 3)" in text
    assert result.reason in text


def test_final_statistics_lines_use_tlc_vocabulary() -> None:
    """The closing lines read like TLC's."""
    stats = Statistics(generated=614_016, distinct=168_927, depth=28, queue=0, seconds=2.0)
    lines = final_statistics_lines(stats)
    assert lines[0] == "614,016 states generated, 168,927 distinct states found, 0 states left on queue."
    assert lines[1] == "The depth of the complete state graph search is 28."
    assert lines[2].startswith("The probability of a fingerprint collision (calculated, optimistic): ")
    assert lines[3] == "Finished in 2.0s: 84,464 distinct states per second."


def test_a_sampling_explorer_is_never_called_an_exhaustive_search() -> None:
    """Random walks: no "complete state graph search", no queue, no vacuity warning, and JSON says exhaustive false."""
    from explorer.simulation import SimulationOptions, run_simulation

    model = KafkaControllerToy(MC_STUCK)
    result = run_simulation(model, SimulationOptions(walks=4, depth=3, seed=0))
    traces = {d.property: replay(model, d) for d in result.discoveries}
    text = render_text(result, traces)
    assert not result.exhaustive
    assert "complete state graph search" not in text
    assert "left on queue" not in text
    assert "vacuous" not in text
    assert "not an exhaustive search" in text
    assert json.loads(json.dumps(render_json(result, traces)))["exhaustive"] is False
