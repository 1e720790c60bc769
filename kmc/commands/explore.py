"""``kmc explore``: the breadth-first search of a scenario's whole state space, locally or on Spark.

Resolves the scenario, builds the Kafka model with its selected properties (:mod:`kmc.compose`),
runs the chosen engine, then hands the result to :func:`kmc.outputs.finish_run` (traces replayed, run
files written, result printed, exit status).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from explorer.results import ExplorationResult
from kmc import compose
from kmc.common import UsageProblem, fail, new_run_dir
from kmc.outputs import finish_run, scenario_facts
from model.scenario import Scenario, ScenarioError

ENGINES = ("spark", "local")


def parse_conf(values: tuple[str, ...]) -> dict[str, str]:
    """``--conf key=value`` options as a dict (the last one of a key wins, as in spark-submit)."""
    conf: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageProblem(f"--conf {item!r} must look like key=value, e.g. --conf spark.driver.memory=4g.")
        conf[key.strip()] = value
    return conf


@click.command(help="Explore every state of a scenario (a shipped name or a TOML path; default: 'default').")
@click.argument("scenario", required=False)
@click.option("--engine", type=click.Choice(ENGINES), default="spark", show_default=True,
              help="spark: the breadth-first search as a Spark job; local: in this process.")
@click.option("--master", default=None, help="Spark master: local[*] (default), local[N], spark://host:7077.")
@click.option("--conf", "conf", multiple=True, metavar="KEY=VALUE", help="Spark configuration, repeatable.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=Path("reports/runs"),
              show_default=True, help="Where run directories are created.")
@click.option("--resume", "resume", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Continue a Spark run from its last complete level.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--max-depth", type=click.IntRange(min=0), default=None, help="Stop after this many steps.")
@click.option("--max-states", type=click.IntRange(min=1), default=None, help="Stop after this many distinct states.")
@click.option("--difftrace", is_flag=True, help="In the printed text, steps show only the fields they changed.")
@click.option("--no-progress", "no_progress", is_flag=True,
              help="Plain TLC-style progress lines even on a terminal (no live display).")
@click.option("--spark-ui", is_flag=True, help="Start the Spark web UI.")
@click.option("--print-spark-submit", is_flag=True,
              help="Print the equivalent spark-submit command line (YARN, Kubernetes) and exit.")
def explore(scenario: str | None, engine: str, master: str | None, conf: tuple[str, ...], out: Path,
            resume: Path | None, fmt: str, max_depth: int | None, max_states: int | None, difftrace: bool,
            no_progress: bool, spark_ui: bool, print_spark_submit: bool) -> None:
    try:
        spark_conf = parse_conf(conf)
        if engine == "local" and (master or spark_conf or resume):
            raise UsageProblem("--master, --conf and --resume apply to --engine spark; drop them or use spark.")
        sc = compose.resolve_scenario(scenario)
        model = compose.model_for(sc)
    except (ScenarioError, UsageProblem) as e:
        fail(str(e))

    if print_spark_submit:
        click.echo(compose.spark_submit_command(scenario=scenario or compose.DEFAULT_SCENARIO,
                                                master=master or "yarn", conf=spark_conf, max_depth=max_depth,
                                                max_states=max_states))
        return

    run_dir = resume if resume is not None else new_run_dir(out, sc.name)
    started = time.time()
    result = _run(engine, sc, model, run_dir, master, spark_conf, resume is not None, max_depth, max_states,
                  spark_ui, not no_progress)
    extra = {
        "scenario": scenario_facts(sc),
        "master": result.details.get("master") if engine == "spark" else None,
        "run_dir": str(run_dir),
    }
    finish_run(model, result, run_dir, extra, fmt, started, difftrace=difftrace)


def _run(engine: str, sc: Scenario, model: Any, run_dir: Path, master: str | None, conf: Mapping[str, str],
         resume: bool, max_depth: int | None, max_states: int | None, spark_ui: bool,
         live_progress: bool) -> ExplorationResult:
    if engine == "local":
        from explorer.bfs import BfsOptions, run_bfs
        from explorer.progress import RichProgress, progress_for

        run_dir.mkdir(parents=True, exist_ok=True)
        progress = progress_for(live=live_progress)
        live = isinstance(progress, RichProgress)
        bfs_options = BfsOptions(max_depth=max_depth, max_states=max_states, progress=progress,
                                 progress_interval_seconds=0.25 if live else 10.0)
        try:
            return run_bfs(model, bfs_options)
        finally:
            if isinstance(progress, RichProgress):
                progress.close()
    from reports.json_report import kmc_version
    from spark_explore.bfs import SparkBfsOptions, SparkExploreError, run_spark_bfs

    options = SparkBfsOptions(run_dir=run_dir, master=master or "local[*]", conf=dict(conf), resume=resume,
                              max_depth=max_depth, max_states=max_states, progress=sys.stderr,
                              scenario_hash=sc.digest, kmc_version=kmc_version(), ui=spark_ui)
    try:
        return run_spark_bfs(compose.factory_for(sc), options)
    except SparkExploreError as e:
        fail(str(e))
