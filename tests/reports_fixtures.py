"""Shared by the report tests: a run of a shipped scenario turned into its bundle, with the wall-clock
times fixed (1 s in all, 0 s per level) so that renderings are byte-stable."""

from __future__ import annotations

from typing import Any

import attrs

from explorer.bfs import run_bfs
from explorer.results import ExplorationResult
from kmc import compose
from kmc.outputs import model_facts, replay_all, result_facts, scenario_facts
from model.scenario import Scenario, load_scenario
from reports.json_report import render_json


def without_times(result: ExplorationResult) -> ExplorationResult:
    stats = result.stats
    levels = tuple(attrs.evolve(level, seconds=0.0) for level in stats.levels)
    return attrs.evolve(result, stats=attrs.evolve(stats, seconds=1.0, levels=levels))


def run_document(scenario: Scenario, run_dir: str = "reports/runs/example") -> dict[str, Any]:
    """The summary.json document of a local BFS of ``scenario`` (times fixed)."""
    model = compose.model_for(scenario)
    result = without_times(run_bfs(model))
    traces = replay_all(model, result)
    extra = {**model_facts(model), **result_facts(model, result), "scenario": scenario_facts(scenario),
             "run_dir": run_dir}
    return render_json(result, traces, extra)


def shipped_document(name: str) -> dict[str, Any]:
    return run_document(compose.resolve_scenario(name))


def document_of_toml(text: str) -> dict[str, Any]:
    return run_document(load_scenario(text))
