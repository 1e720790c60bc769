"""The ``kmc`` command line: the composition root.

Wires a scenario, the Kafka model, its properties and an explorer together, writes the run's
reports under ``reports/runs/<run-id>/`` and maps the outcome to the exit status (0 no violation,
1 violation found, 2 bad usage or input, 3 inconclusive). Results go to stdout; progress and
logs to stderr. Bad input gets one sentence naming the offending value and the fix, never a
traceback.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

import click

from explorer.assign_command import assign
from explorer.results import ExplorationResult, Outcome

ENGINES = ("spark", "local")


class UsageProblem(Exception):
    """Bad usage or input: reported as one sentence, exit status 2."""


def _fail(message: str) -> NoReturn:
    click.echo(f"kmc: {message}", err=True)
    sys.exit(Outcome.BAD_INPUT.exit_code)


class _Group(click.Group):
    """Turns click's usage errors into one line and exit status 2."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("standalone_mode", True)
        try:
            return super().main(*args, **{**kwargs, "standalone_mode": False})
        except click.exceptions.NoArgsIsHelpError as e:
            click.echo(e.ctx.get_help() if e.ctx else str(e))
            sys.exit(0)
        except click.UsageError as e:
            _fail(f"{e.format_message()} (see `kmc {e.ctx.command.name if e.ctx else ''} --help`)")
        except click.ClickException as e:
            click.echo(f"kmc: {e.format_message()}", err=True)
            sys.exit(e.exit_code)
        except click.exceptions.Exit as e:
            sys.exit(e.exit_code)
        except click.Abort:
            _fail("aborted.")


@click.group(cls=_Group, help="kmc: a model checker for Apache Kafka's ZooKeeper-era controller (Kafka 2.x).")
@click.version_option(package_name="kmc", prog_name="kmc")
def main() -> None:
    pass


main.add_command(assign)


def _parse_conf(values: tuple[str, ...]) -> dict[str, str]:
    conf: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageProblem(f"--conf {item!r} must look like key=value, e.g. --conf spark.driver.memory=4g.")
        conf[key.strip()] = value
    return conf


@main.command(help="Explore every state of a scenario (a shipped name or a TOML path; default: 'default').")
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
@click.option("--spark-ui", is_flag=True, help="Start the Spark web UI.")
@click.option("--print-spark-submit", is_flag=True,
              help="Print the equivalent spark-submit command line (YARN, Kubernetes) and exit.")
def explore(scenario: str | None, engine: str, master: str | None, conf: tuple[str, ...], out: Path,
            resume: Path | None, fmt: str, max_depth: int | None, max_states: int | None, spark_ui: bool,
            print_spark_submit: bool) -> None:
    from explorer import kafka_compose
    from model.scenario import ScenarioError

    try:
        spark_conf = _parse_conf(conf)
        if engine == "local" and (master or spark_conf or resume):
            raise UsageProblem("--master, --conf and --resume apply to --engine spark; drop them or use spark.")
        sc = kafka_compose.resolve_scenario(scenario)
        model = kafka_compose.model_for(sc)
    except (ScenarioError, UsageProblem) as e:
        _fail(str(e))

    if print_spark_submit:
        from spark_explore.submit import spark_submit_command

        click.echo(spark_submit_command(scenario=scenario or kafka_compose.DEFAULT_SCENARIO,
                                        master=master or "yarn", conf=spark_conf, max_depth=max_depth,
                                        max_states=max_states))
        return

    run_dir = resume if resume is not None else _new_run_dir(out, sc.name)
    started = time.time()
    result = _run(engine, sc, model, run_dir, master, spark_conf, resume is not None, max_depth, max_states,
                  spark_ui)
    traces = _replay_all(model, result)
    extra = {
        "scenario": {"name": sc.name, "digest": sc.digest, "kafka_version": f"{sc.version[0]}.{sc.version[1]}",
                     "bugs": sorted(sc.bugs)},
        "master": result.details.get("master") if engine == "spark" else None,
        "run_dir": str(run_dir),
    }
    from reports.json_report import render_json
    from reports.text import render_text

    document = render_json(result, traces, extra)
    text = render_text(result, traces)
    _write_atomically(run_dir / "summary.json", json.dumps(document, indent=2) + "\n")
    _write_atomically(run_dir / "report.txt", text)
    if fmt == "json":
        click.echo(json.dumps(document, indent=2))
    else:
        click.echo(text, nl=not text.endswith("\n"))
        click.echo(f"Reports written to {run_dir} ({time.time() - started:.1f} s).")
    sys.exit(result.exit_code)


def _run(engine: str, sc: Any, model: Any, run_dir: Path, master: str | None, conf: Mapping[str, str],
         resume: bool, max_depth: int | None, max_states: int | None, spark_ui: bool) -> ExplorationResult:
    if engine == "local":
        from explorer.bfs import BfsOptions, run_bfs
        from explorer.progress import ProgressPrinter

        run_dir.mkdir(parents=True, exist_ok=True)
        return run_bfs(model, BfsOptions(max_depth=max_depth, max_states=max_states, progress=ProgressPrinter()))
    from explorer import kafka_compose
    from reports.json_report import kmc_version
    from spark_explore.bfs import SparkBfsOptions, SparkExploreError, run_spark_bfs

    options = SparkBfsOptions(run_dir=run_dir, master=master or "local[*]", conf=dict(conf), resume=resume,
                              max_depth=max_depth, max_states=max_states, progress=sys.stderr,
                              scenario_hash=sc.digest, kmc_version=kmc_version(), ui=spark_ui)
    try:
        return run_spark_bfs(kafka_compose.factory_for(sc), options)
    except SparkExploreError as e:
        _fail(str(e))


def _replay_all(model: Any, result: ExplorationResult) -> dict[str, Any]:
    from explorer.replay import replay

    return {d.property: replay(model, d) for d in result.discoveries}


def _new_run_dir(out: Path, scenario_name: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = out / f"{stamp}-{scenario_name}"
    candidate, n = base, 1
    while candidate.exists():
        n += 1
        candidate = Path(f"{base}-{n}")
    return candidate


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@main.command(help="List the named properties kmc can check.")
def properties() -> None:
    from invariants.registry import all_specs

    specs = all_specs()
    width = max(len(s.name) for s in specs)
    for spec in specs:
        click.echo(f"{spec.name:<{width}}  {spec.kind.value:<16} {spec.group:<10} {spec.description}")


@main.command(help="List the scenarios that ship with kmc.")
def scenarios() -> None:
    from explorer.kafka_compose import shipped_scenarios
    from model.scenario import load_scenario_file

    for name, path in sorted(shipped_scenarios().items()):
        sc = load_scenario_file(path)
        first = " ".join(sc.description.split())
        click.echo(f"{name:<36} {first}")
