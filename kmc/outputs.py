"""The end of every run: discoveries replayed into traces, run files written, the result printed.

Every exploring command (``kmc explore`` today; ``simulate`` and the others as they arrive) ends
with :func:`finish_run`, so they all write the same files from the one result structure and map
the outcome to the same exit status.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

import click

from explorer.contract import Model
from explorer.replay import Trace, replay
from explorer.results import ExplorationResult
from kmc.common import write_atomically
from model.scenario import Scenario


def scenario_facts(sc: Scenario) -> dict[str, Any]:
    """What a run's files say about its scenario."""
    return {"name": sc.name, "digest": sc.digest, "kafka_version": f"{sc.version[0]}.{sc.version[1]}",
            "bugs": sorted(sc.bugs)}


def replay_all(model: Model[Any, Any], result: ExplorationResult) -> dict[str, Trace]:
    """Each discovery's trace, rebuilt by replay on ``model`` (property name -> trace)."""
    return {d.property: replay(model, d) for d in result.discoveries}


def write_run_files(run_dir: Path, result: ExplorationResult, traces: Mapping[str, Trace],
                    extra: Mapping[str, Any]) -> dict[str, Any]:
    """Write ``summary.json`` and ``report.txt`` into ``run_dir``; return the JSON document."""
    from reports.json_report import render_json
    from reports.text import render_text

    document = render_json(result, traces, extra)
    write_atomically(run_dir / "summary.json", json.dumps(document, indent=2) + "\n")
    write_atomically(run_dir / "report.txt", render_text(result, traces))
    return document


def finish_run(model: Model[Any, Any], result: ExplorationResult, run_dir: Path, extra: Mapping[str, Any],
               fmt: str, started: float) -> NoReturn:
    """Replay, write the run files, print the result (``text`` or ``json``) and exit with its status."""
    from reports.text import render_text

    traces = replay_all(model, result)
    document = write_run_files(run_dir, result, traces, extra)
    if fmt == "json":
        click.echo(json.dumps(document, indent=2))
    else:
        text = render_text(result, traces)
        click.echo(text, nl=not text.endswith("\n"))
        click.echo(f"Reports written to {run_dir} ({time.time() - started:.1f} s).")
    sys.exit(result.exit_code)
