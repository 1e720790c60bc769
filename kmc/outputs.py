"""The end of every run: discoveries replayed into traces, the run's bundle written, the result printed.

Every exploring command (``kmc explore``, ``kmc simulate``) ends with :func:`finish_run`, so they all
write the same bundle from the one result structure (:mod:`reports.bundle`: ``summary.json``,
``report.txt``, ``report.md``, ``report.html``, per counterexample an ITF trace and a replay
script) and map the outcome to the same exit status. ``kmc report`` re-renders a bundle from its
``summary.json`` with :func:`rerender`.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NoReturn

import click

from explorer.contract import Model
from explorer.replay import Trace, replay
from explorer.results import ExplorationResult, Outcome
from kmc.common import write_atomically
from model.scenario import Scenario


def scenario_facts(sc: Scenario) -> dict[str, Any]:
    """What a run's files say about its scenario."""
    return {"name": sc.name, "digest": sc.digest, "kafka_version": f"{sc.version[0]}.{sc.version[1]}",
            "bugs": sorted(sc.bugs), "description": sc.description}


def model_facts(model: Model[Any, Any]) -> dict[str, Any]:
    """What a run's files say about the model: the properties checked and, for the Kafka model, the
    factory a replay script rebuilds it with (kmc's builder and the scenario's TOML text)."""
    facts: dict[str, Any] = {
        "properties": [{"name": p.name, "kind": p.kind.value, "description": p.description}
                       for p in model.properties()],
    }
    scenario = getattr(model, "scenario", None)
    if isinstance(scenario, Scenario):
        from kmc import compose

        factory = compose.factory_for(scenario)
        facts["model_factory"] = {"module": factory.build.__module__, "name": factory.build.__qualname__,
                                  "argument": factory.argument}
    return facts


def result_facts(model: Model[Any, Any], result: ExplorationResult) -> dict[str, Any]:
    """What the Kafka scenario says about a result: the properties it gives nothing to check
    (``not_applicable``) and the violations that are bugs it switches on (``known_bugs``)."""
    scenario = getattr(model, "scenario", None)
    if not isinstance(scenario, Scenario):
        return {}
    from invariants.applicability import not_applicable
    from kmc.known_bugs import known_bugs

    facts: dict[str, Any] = {"not_applicable": not_applicable(scenario, (name for name, _ in result.properties))}
    if result.violations:
        facts["known_bugs"] = known_bugs(scenario, (d.property for d in result.violations))
    return facts


def replay_all(model: Model[Any, Any], result: ExplorationResult) -> dict[str, Trace]:
    """Each discovery's trace, rebuilt by replay on ``model`` (property name -> trace)."""
    return {d.property: replay(model, d) for d in result.discoveries}


def write_run_files(run_dir: Path, result: ExplorationResult, traces: Mapping[str, Trace],
                    extra: Mapping[str, Any]) -> dict[str, Any]:
    """Write the run's bundle into ``run_dir``; return the JSON document (``summary.json``)."""
    from reports.json_report import render_json

    document = render_json(result, traces, extra)
    files = write_bundle(run_dir, document)
    return json.loads(files["summary.json"])


def write_bundle(run_dir: Path, document: Mapping[str, Any], formats: Iterable[str] | None = None) -> dict[str, str]:
    """Render the bundle's files (all, or those of ``formats``) from ``document`` and write them."""
    from reports.bundle import bundle_files

    files = bundle_files(document) if formats is None else bundle_files(document, tuple(formats))
    for name, text in files.items():
        write_atomically(run_dir / name, text)
    return files


def finish_run(model: Model[Any, Any], result: ExplorationResult, run_dir: Path, extra: Mapping[str, Any],
               fmt: str, started: float, *, difftrace: bool = False, resume_command: str | None = None) -> NoReturn:
    """Replay, write the bundle, print the result (``text`` or ``json``; ``difftrace``: steps show only
    what changed) and exit with its status.

    A search that stopped early (INCONCLUSIVE) records ``resume_command`` in ``summary.json`` and
    ends what it prints with one line saying why it stopped and how to continue; a sample without a
    violation ends with what it sampled and that it is not exhaustive (both on stderr with ``json``,
    whose stdout is the document alone).
    """
    from reports.bundle import load_document
    from reports.text import render_text

    traces = replay_all(model, result)
    extra = {**extra, **result_facts(model, result)}
    stopped_early = result.stopped_early
    if stopped_early and resume_command:
        extra = {**extra, "resume_command": resume_command}
    document = write_run_files(run_dir, result, traces, {**model_facts(model), **extra})
    if fmt == "json":
        click.echo(json.dumps(document, indent=2))
    else:
        loaded, loaded_traces, facts = load_document(document)
        text = render_text(loaded, loaded_traces, facts, difftrace=difftrace, brief=True)
        click.echo(text, nl=not text.endswith("\n"))
        html = run_dir / "report.html"
        click.echo(f"Reports written to {run_dir} ({time.time() - started:.1f} s): {html} and "
                   f"{len(document['files']) - 1} more files.")
    if stopped_early:
        resume = f" Resume with: {resume_command}" if resume_command else ""
        click.echo(f"Stopped before the search was complete: {result.reason}.{resume}", err=fmt == "json")
    elif result.outcome is Outcome.NONE_IN_SAMPLE:
        from reports.text import sample_sentence

        click.echo(sample_sentence(result), err=fmt == "json")
    sys.exit(result.exit_code)
