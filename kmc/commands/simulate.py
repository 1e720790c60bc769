"""``kmc simulate``: seeded random walks through a scenario, or Hypothesis's stateful testing of it.

For scenarios too large to exhaust. Without ``--hypothesis`` it runs ``--walks`` random walks of at
most ``--depth`` steps from ``--seed`` (:mod:`explorer.simulation`), in this process or as Spark
tasks (:mod:`spark_explore.simulation`); the same seed gives the same result on both engines.
With ``--hypothesis`` it runs the stateful machine (:mod:`explorer.hypothesis_machine`) for
``--max-examples`` examples, seeded with ``--seed``, its example database under ``--out`` (keyed
by the scenario) so that a failure found once is tried first on the next run. Either way the
result goes to :func:`kmc.outputs.finish_run`, as ``kmc explore``'s does: traces replayed, run
files written, result printed, exit status 1 for a violation and 3 otherwise (2 for bad usage): a
sample without a violation (:data:`~explorer.results.Outcome.NONE_IN_SAMPLE`) is never a complete
search, so it never exits 0.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from explorer.results import ExplorationResult
from explorer.simulation import CHOICES, CHOOSE_FAMILY, SimulationOptions, SimulationProgressPrinter
from kmc import compose
from kmc.commands.explore import parse_conf, parse_master
from kmc.common import SafePath, UsageProblem, fail, new_run_dir
from kmc.outputs import finish_run, scenario_facts
from model.scenario import Scenario, ScenarioError

ENGINES = ("local", "spark")

#: The default budgets (tests/test_explorers_agree.py checks what they find on the bug scenarios).
#: Walks are cheap, so they may go as deep as the larger scenarios' walks do (about 60 steps on six
#: brokers and three topics); a Hypothesis step costs several times a walk's, and an example runs all
#: its steps (starting a new walk once no action is left), so its examples are shorter.
DEFAULT_WALKS = 20_000
DEFAULT_WALK_DEPTH = 100
DEFAULT_MAX_EXAMPLES = 5_000
DEFAULT_EXAMPLE_DEPTH = 50

#: The example database's directory under --out, shared by the runs written there.
HYPOTHESIS_DATABASE = "hypothesis-db"


@click.command(help="Random walks through a scenario (a shipped name or a TOML path; default: 'default'), "
                    "or with --hypothesis Hypothesis's stateful testing of it.")
@click.argument("scenario", required=False)
@click.option("--walks", type=click.IntRange(min=1), default=DEFAULT_WALKS, show_default=True,
              help="Random walks to run (without --hypothesis).")
@click.option("--depth", type=click.IntRange(min=0), default=None,
              help=f"Most steps per walk [default: {DEFAULT_WALK_DEPTH}] or per Hypothesis example "
                   f"[default: {DEFAULT_EXAMPLE_DEPTH}].")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the walks, or given to Hypothesis.")
@click.option("--choose", "choice", type=click.Choice(CHOICES), default=CHOOSE_FAMILY, show_default=True,
              help="family: an action family at random, then one of its successors; successor: any successor.")
@click.option("--hypothesis", "use_hypothesis", is_flag=True, help="Run Hypothesis's stateful machine instead.")
@click.option("--max-examples", type=click.IntRange(min=1), default=DEFAULT_MAX_EXAMPLES, show_default=True,
              help="Hypothesis examples to run (with --hypothesis).")
@click.option("--engine", type=click.Choice(ENGINES), default="local", show_default=True,
              help="local: in this process; spark: the walks as Spark tasks.")
@click.option("--master", default=None, help="Spark master: local[*] (default), local[N], spark://host:7077.")
@click.option("--conf", "conf", multiple=True, metavar="KEY=VALUE", help="Spark configuration, repeatable.")
@click.option("--out", "out", type=SafePath(file_okay=False, path_type=Path), default=Path("reports/runs"),
              show_default=True, help="Where run directories (and Hypothesis's example database) are created.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def simulate(scenario: str | None, walks: int, depth: int | None, seed: int, choice: str, use_hypothesis: bool,
             max_examples: int, engine: str, master: str | None, conf: tuple[str, ...], out: Path, fmt: str) -> None:
    try:
        given = click.get_current_context().get_parameter_source
        if use_hypothesis and given("walks") is ParameterSource.COMMANDLINE:
            raise UsageProblem("--walks counts random walks; with --hypothesis give --max-examples instead.")
        if not use_hypothesis and given("max_examples") is ParameterSource.COMMANDLINE:
            raise UsageProblem("--max-examples counts Hypothesis examples; add --hypothesis or give --walks instead.")
        spark_conf = parse_conf(conf)
        master = parse_master(master)
        if engine == "local" and (master or spark_conf):
            raise UsageProblem("--master and --conf apply to --engine spark; drop them or use spark.")
        if use_hypothesis and engine == "spark":
            raise UsageProblem("--hypothesis runs in this process; drop --engine spark or --hypothesis.")
        sc = compose.resolve_scenario(scenario)
        model = compose.model_for(sc)
    except (ScenarioError, UsageProblem) as e:
        fail(str(e))

    try:
        run_dir = new_run_dir(out, sc.name)
    except UsageProblem as e:
        fail(str(e))
    started = time.time()
    if use_hypothesis:
        result = _hypothesis(sc, model, out, max_examples, DEFAULT_EXAMPLE_DEPTH if depth is None else depth, seed,
                             choice)
    else:
        options = SimulationOptions(walks=walks, depth=DEFAULT_WALK_DEPTH if depth is None else depth, seed=seed,
                                    choice=choice,
                                    progress=SimulationProgressPrinter())
        result = _walks(engine, sc, model, options, run_dir, master, spark_conf)
    extra = {"scenario": scenario_facts(sc), "run_dir": str(run_dir)}
    if fmt == "text":
        # The text report renders what every engine has; what only a simulation has goes first.
        click.echo(summary_line(result))
    finish_run(model, result, run_dir, extra, fmt, started)


def summary_line(result: ExplorationResult) -> str:
    """One line on the walks or examples run: how many, from which seed, the shortest violating prefix."""
    d = result.details
    if result.engine == "hypothesis":
        ran = f"Hypothesis ran {d['examples']:,} examples (at most {d['max_examples']:,} asked, seed {d['seed']})"
    else:
        ran = (f"Simulation ran {d['walks']:,} of {d['walks_requested']:,} walks "
               f"(seed {d['seed']}, {d['choice']} choice)")
    ran += f", {result.stats.distinct:,} distinct states visited"
    if "shortest_violating_prefix" in d:
        ran += f"; the shortest violating prefix is {d['shortest_violating_prefix']} steps"
    return ran + "."


def _walks(engine: str, sc: Scenario, model: Any, options: SimulationOptions, run_dir: Path, master: str | None,
           conf: dict[str, str]) -> ExplorationResult:
    if engine == "local":
        from explorer.simulation import run_simulation

        return run_simulation(model, options)
    from spark_explore.simulation import SparkSimulationOptions, run_spark_simulation

    spark_options = SparkSimulationOptions(run_dir=run_dir, master=master or "local[*]", conf=conf,
                                           progress=sys.stderr)
    return run_spark_simulation(compose.factory_for(sc), options, spark_options)


def _hypothesis(sc: Scenario, model: Any, out: Path, max_examples: int, depth: int, seed: int,
                choice: str) -> ExplorationResult:
    from explorer.hypothesis_machine import HypothesisOptions, run_hypothesis

    options = HypothesisOptions(max_examples=max_examples, depth=depth, seed=seed, choice=choice,
                                database=out / HYPOTHESIS_DATABASE, database_key=sc.digest.encode())
    click.echo(f"Hypothesis: up to {max_examples:,} examples of up to {depth} steps, seed {seed}.", err=True)
    return run_hypothesis(model, options)
