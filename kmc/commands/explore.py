"""``kmc explore``: the breadth-first search of a scenario's whole state space, locally or on Spark.

Resolves the scenario, builds the Kafka model with its selected properties (:mod:`kmc.compose`),
creates and locks a run directory (:mod:`kmc.common`) holding a copy of the scenario and
``run.json``, runs the chosen engine with its bounds and budgets, then hands the result to
:func:`kmc.outputs.finish_run` (traces replayed, run files written, result printed, exit status).

``--resume RUN_DIR`` continues a run with either engine: the scenario is read from the copy kept
in the run directory (a SCENARIO given as well must be the same one), the engine from
``run.json``, the fingerprint width from the engine's manifest (``--fingerprint-bits`` naming
another width is refused); the engine then checks its own files before it trusts them.

``--symmetry`` explores one state per orbit of the scenario's interchangeable brokers
(:mod:`model.zk.symmetry` says which brokers are, :mod:`explorer.symmetry` how the engines use it);
the discoveries are rebuilt as traces of the unreduced model before the reports. Such a run is not
checkpointed and cannot be resumed: its stored findings are paths of orbits, which the engines'
resume does not replay.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import click

from explorer.checkpoint import ResumeError
from explorer.fingerprint import FINGERPRINT_BITS
from explorer.results import ExplorationResult, StopCause
from explorer.stopping import Limits, default_memory_budget
from kmc import compose
from kmc.common import (
    Interrupts,
    RunLock,
    SafePath,
    UsageProblem,
    defects_reported_in,
    fail,
    new_run_dir,
    refuse_links,
    shown_path,
    write_atomically,
)
from kmc.outputs import finish_run, scenario_facts
from model.scenario import Scenario, ScenarioError, load_scenario
from model.zk.kafka_model import KafkaControllerModel

if TYPE_CHECKING:
    from spark_explore.manifest import LevelRecord

ENGINES = ("spark", "local")
RUN_FILE = "run.json"
SCENARIO_COPY = "scenario.toml"
ENGINE_MANIFEST = "manifest.json"  # both engines keep their progress under this name
DEFAULT_CHECKPOINT_SECONDS = 300.0

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?\s*", re.IGNORECASE)
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT])(?:i?B)?\s*", re.IGNORECASE)
_SECONDS_PER = {None: 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}
_BYTES_PER = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

#: The masters Spark accepts (SparkContext.createTaskScheduler, SparkSubmit): local, local[N],
#: local[*], local[N,F], local-cluster[N,C,M], spark://host:port[,host:port...], yarn, k8s://URL.
_HOST_PORT = r"[A-Za-z0-9.\-]+:\d{1,5}"
_MASTER = re.compile(
    r"local(\[(\*|[1-9]\d{0,5})(,\s*[1-9]\d{0,3})?\])?|local-cluster\[[1-9]\d{0,3},\s*[1-9]\d{0,3},\s*[1-9]\d{0,6}\]"
    rf"|spark://{_HOST_PORT}(,{_HOST_PORT})*|yarn|k8s://[!-~]+"
)
_SPARK_INT = re.compile(r"[1-9]\d{0,8}")
_SPARK_SIZE = re.compile(r"[1-9]\d{0,8}[kmgtp]?b?", re.IGNORECASE)
#: Spark settings whose values kmc checks before Spark does (Spark refuses a bad one only when the
#: setting is first used, deep in a run, which would read as a kmc defect): key -> (pattern, example).
_SPARK_SETTINGS = {
    **{key: (_SPARK_INT, "a whole number >= 1, e.g. 8") for key in (
        "spark.sql.shuffle.partitions", "spark.default.parallelism", "spark.executor.cores", "spark.driver.cores",
        "spark.cores.max", "spark.executor.instances", "spark.task.cpus", "spark.task.maxFailures")},
    **{key: (_SPARK_SIZE, "a size such as 512m or 4g") for key in (
        "spark.driver.memory", "spark.executor.memory", "spark.driver.maxResultSize",
        "spark.executor.memoryOverhead", "spark.driver.memoryOverhead")},
}


def parse_master(master: str | None) -> str | None:
    """``--master`` as given, once it has the form of a master Spark accepts (None when not given)."""
    if master is not None and not _MASTER.fullmatch(master):
        raise UsageProblem(f"--master {shown_path(master)!r} is not a Spark master; give local[*], local[N], "
                           "spark://host:7077, yarn or k8s://https://host:port.")
    return master


def parse_conf(values: tuple[str, ...]) -> dict[str, str]:
    """``--conf key=value`` options as a dict (the last one of a key wins, as in spark-submit)."""
    conf: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageProblem(f"--conf {shown_path(item)!r} must look like key=value, "
                               "e.g. --conf spark.driver.memory=4g.")
        if not (key.strip().isprintable() and value.isprintable()):
            raise UsageProblem(f"--conf {shown_path(item)!r} holds a control character; give printable text.")
        if key.strip() in _SPARK_SETTINGS:
            pattern, example = _SPARK_SETTINGS[key.strip()]
            if not pattern.fullmatch(value.strip()):
                raise UsageProblem(f"--conf {shown_path(item)!r}: {key.strip()} takes {example}.")
        conf[key.strip()] = value
    return conf


def parse_duration(option: str, text: str | None) -> float | None:
    """``90``, ``90s``, ``15m``, ``2h`` as seconds (None when not given)."""
    if text is None:
        return None
    match = _DURATION.fullmatch(text)
    if not match:
        raise UsageProblem(f"{option} {shown_path(text)!r} is not a duration; give seconds or a number with s, m "
                           "or h, e.g. 90, 15m, 2h.")
    seconds = float(match.group(1)) * _SECONDS_PER[match.group(2) and match.group(2).lower()]
    if seconds > 366 * 86400:
        raise UsageProblem(f"{option} {text!r} is more than a year; give a shorter duration or leave it out.")
    return seconds


def parse_size(option: str, text: str | None) -> int | None:
    """``512M``, ``4G``, ``1.5GiB`` as bytes (None when not given)."""
    if text is None:
        return None
    match = _SIZE.fullmatch(text)
    if not match:
        raise UsageProblem(f"{option} {shown_path(text)!r} is not a memory size; give a number with K, M, G or T, "
                           "e.g. 512M or 4G.")
    size = int(float(match.group(1)) * _BYTES_PER[match.group(2).upper()])
    if size <= 0 or size > 1 << 50:
        raise UsageProblem(f"{option} {text!r} is out of range; give a size between 1K and 1024T.")
    return size


@attrs.frozen
class _Resumed:
    """A run directory to continue: its scenario (from the copy it keeps), its engine, and its fingerprint
    width when ``run.json`` records one (a 128-bit run's; None: the engine's manifest says)."""

    run_dir: Path
    scenario: Scenario
    engine: str
    keep_going: bool = False
    fingerprint_bits: int | None = None


@click.command(help="Explore every state of a scenario (a shipped name or a TOML path; default: 'default').")
@click.argument("scenario", required=False)
@click.option("--engine", type=click.Choice(ENGINES), default=None,
              help="spark (default): the breadth-first search as a Spark job; local: in this process.")
@click.option("--master", default=None, help="Spark master: local[*] (default), local[N], spark://host:7077.")
@click.option("--conf", "conf", multiple=True, metavar="KEY=VALUE", help="Spark configuration, repeatable.")
@click.option("--out", "out", type=SafePath(file_okay=False, path_type=Path), default=Path("reports/runs"),
              show_default=True, help="Where run directories are created.")
@click.option("--resume", "resume", type=SafePath(file_okay=False, path_type=Path), default=None,
              help="Continue the run in RUN_DIR (either engine) from its last complete level or checkpoint.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--max-depth", type=click.IntRange(min=0, max=2**31 - 1), default=None,
              help="Stop after this many steps.")
@click.option("--max-states", type=click.IntRange(min=1, max=2**62), default=None,
              help="Stop once this many distinct states are found (holds within a level).")
@click.option("--time-limit", "time_limit", default=None, metavar="DURATION",
              help="Stop this long after the command started (e.g. 90s, 15m, 2h), within the level in "
                   "progress; the run can be resumed (with a limit of its own).")
@click.option("--max-memory", "max_memory", default=None, metavar="SIZE",
              help="Local engine: stop before resident memory reaches SIZE (e.g. 4G); "
                   "default: half the machine's memory.")
@click.option("--checkpoint-every", "checkpoint_every", default=None, metavar="DURATION",
              help=f"Local engine: save the search at a level boundary this often (default "
                   f"{DEFAULT_CHECKPOINT_SECONDS:g}s; 0: every level). Spark saves every level.")
@click.option("--fingerprint-bits", type=click.Choice(["64", "128"]), default=None,
              help="Fingerprint width, either engine (default 64; --resume keeps the run's own): 128 for runs whose "
                   "collision estimate is not negligible.")
@click.option("--difftrace", is_flag=True, help="In the printed text, steps show only the fields they changed.")
@click.option("--no-progress", "no_progress", is_flag=True,
              help="Plain TLC-style progress lines even on a terminal (no live display).")
@click.option("--spark-ui", is_flag=True, help="Start the Spark web UI (on 127.0.0.1; local masters only).")
@click.option("--driver-level-seconds", "driver_level_seconds", type=click.FloatRange(min=0, max=86_400), default=None,
              metavar="SECONDS",
              help="Spark engine: a level the driver would expand in under SECONDS (its measured rate times the "
                   "frontier) is expanded there, without a Spark job, and so is a larger one until Spark is "
                   "estimated to win back the run's first job (default 2; 0: every level is a Spark job).")
@click.option("--symmetry", is_flag=True,
              help="Explore one state per orbit of the brokers the scenario makes interchangeable (same rack, named "
                   "by no topic placement or reassignment, no topic gaining partitions); counterexamples are "
                   "replayed on the unreduced model. Every scenario shipped today names all its brokers in a "
                   "placement, so the reduction saves nothing on them (python bench/symmetry.py shows where it "
                   "does). Not resumable.")
@click.option("--continue", "keep_going", is_flag=True,
              help="Search on after a violation (TLC's -continue): report every violated property, each with its "
                   "shortest trace. Both engines find the same ones.")
@click.option("--property", "only_properties", multiple=True, metavar="NAME",
              help="Check only this property (repeatable), in place of the scenario's [check] properties; "
                   "`kmc properties` lists them.")
@click.option("--skip-property", "skip_properties", multiple=True, metavar="NAME",
              help="Do not check this property (repeatable), e.g. one a known bug breaks.")
@click.option("--print-spark-submit", is_flag=True,
              help="Print the equivalent spark-submit command line (YARN, Kubernetes) and exit; its files go "
                   "under --out.")
@click.pass_obj
def explore(interrupts: Interrupts | None, scenario: str | None, engine: str | None, master: str | None,
            conf: tuple[str, ...], out: Path, resume: Path | None, fmt: str, max_depth: int | None,
            max_states: int | None, time_limit: str | None, max_memory: str | None, checkpoint_every: str | None,
            fingerprint_bits: str | None, difftrace: bool, no_progress: bool, spark_ui: bool,
            driver_level_seconds: float | None, symmetry: bool, keep_going: bool, only_properties: tuple[str, ...],
            skip_properties: tuple[str, ...], print_spark_submit: bool) -> None:
    invoked = time.monotonic()  # --time-limit counts from here: all this invocation does, resumed or not
    try:
        spark_conf = parse_conf(conf)
        master = parse_master(master)
        limit_seconds = parse_duration("--time-limit", time_limit)
        memory_bytes = parse_size("--max-memory", max_memory)
        every = parse_duration("--checkpoint-every", checkpoint_every)
        if symmetry and resume is None and compose.resolve_scenario(scenario).kraft is not None:
            raise UsageProblem("--symmetry is not modelled for KRaft scenarios (the KRaft model has no broker "
                               "symmetry yet); drop --symmetry.")
        if symmetry and resume is not None:
            raise UsageProblem("--symmetry runs are not resumable, and a run is resumed as it was started; drop "
                               "--symmetry (or start a new run with it).")
        if resume is not None and (only_properties or skip_properties or keep_going):
            raise UsageProblem("--continue, --property and --skip-property are kept from the run's start; drop them "
                               "with --resume (or start a new run with them).")
        resumed = _resumed_run(resume, scenario, engine) if resume is not None else None
        if resumed is not None:
            sc, engine, keep_going = resumed.scenario, resumed.engine, resumed.keep_going
        else:
            sc = compose.select_properties(compose.resolve_scenario(scenario), only_properties, skip_properties)
        engine = engine or "spark"
        # On --resume without the option, the width the run was started with (None: the engine's manifest has it).
        bits = (int(fingerprint_bits) if fingerprint_bits is not None
                else resumed.fingerprint_bits if resumed is not None else 64)
        _check_engine_options(engine, master, spark_conf, memory_bytes, every, spark_ui)
        if engine == "local" and driver_level_seconds is not None:
            raise UsageProblem("--driver-level-seconds applies to --engine spark (the local engine expands every "
                               "level in process); drop it or use spark.")
        if print_spark_submit and (only_properties or skip_properties or keep_going):
            raise UsageProblem("--continue, --property and --skip-property are not passed on to "
                               "--print-spark-submit's command; drop them (or set [check] in the scenario).")
        if symmetry and print_spark_submit:
            raise UsageProblem("--symmetry is not passed on to --print-spark-submit's command; drop one of them.")
        model = compose.model_for(sc)
    except (ScenarioError, UsageProblem, ResumeError) as e:
        fail(str(e))

    if print_spark_submit:
        try:
            submit_dir = new_run_dir(out, f"{sc.name}-spark-submit")
        except UsageProblem as e:
            fail(str(e))
        click.echo(compose.spark_submit_command(scenario=scenario or compose.DEFAULT_SCENARIO,
                                                master=master or "yarn", conf=spark_conf, max_depth=max_depth,
                                                max_states=max_states, submit_dir=submit_dir,
                                                fingerprint_bits=bits or 64))
        return

    try:
        run_dir = resume if resume is not None else new_run_dir(out, sc.name)
        lock = RunLock(run_dir)
        lock.acquire()
    except UsageProblem as e:
        fail(str(e))
    try:
        if resumed is None:
            _keep_scenario(run_dir, sc, engine, symmetry=symmetry, keep_going=keep_going, fingerprint_bits=bits or 64)
        resume_command = None if symmetry else _resume_command(run_dir, max_depth, max_states)
        interrupts = interrupts or Interrupts()
        started = time.time()
        # A signal during the search stops it at a safe point; during the reports it waits for them.
        with defects_reported_in(run_dir), interrupts.deferred(resume_command or "") as stop:
            limits = Limits(time_limit=limit_seconds, stop=stop, started=invoked,
                            max_memory=(memory_bytes or default_memory_budget()) if engine == "local" else None)
            result = _run(engine, sc, model, run_dir, master, spark_conf, resumed is not None, max_depth,
                          max_states, spark_ui, limits, every, bits, not no_progress, driver_level_seconds,
                          symmetry=symmetry, keep_going=keep_going)
            symmetry_bounds = {"symmetry": _symmetry_summary(model)} if symmetry else {}
            result = attrs.evolve(result, bounds={**result.bounds, **_scenario_bounds(sc), **symmetry_bounds})
            extra = {
                "scenario": scenario_facts(sc),
                "master": result.details.get("master") if engine == "spark" else None,
                "run_dir": str(run_dir),
                **({"symmetry": _symmetry_facts(model)} if symmetry else {}),
            }
            if resume_command is not None and result.stopped_by in (StopCause.DEPTH_BOUND, StopCause.STATE_BOUND):
                resume_command = _resume_command(run_dir)  # resumed without the bound, the search goes past it
            finish_run(model, result, run_dir, extra, fmt, started, difftrace=difftrace,
                       resume_command=resume_command)
    finally:
        lock.release()


def _check_engine_options(engine: str, master: str | None, conf: Mapping[str, str], max_memory: int | None,
                          checkpoint_every: float | None, spark_ui: bool) -> None:
    """Refuse, in one sentence, options that the chosen engine would ignore."""
    if engine == "local":
        if master or conf or spark_ui:
            raise UsageProblem("--master, --conf and --spark-ui apply to --engine spark; drop them or use spark.")
        return
    if max_memory is not None:
        raise UsageProblem("--max-memory applies to --engine local (a Spark driver's memory is "
                           "--conf spark.driver.memory=4g); drop it or use --engine local.")
    if checkpoint_every is not None:
        raise UsageProblem("--checkpoint-every applies to --engine local (a Spark run saves every level); drop it.")
    if spark_ui and master is not None and not (master == "local" or master.startswith("local[")
                                                or master.startswith(("spark://127.0.0.1", "spark://localhost"))):
        raise UsageProblem(f"--spark-ui with --master {master} would listen on every network interface; "
                           "use the cluster's own UI, or a local master.")


def _resumed_run(run_dir: Path, scenario: str | None, engine: str | None) -> _Resumed:
    """The run in ``run_dir`` to continue, after checking it can be: its run file, its scenario copy
    (and SCENARIO, when given, is the same scenario), its engine."""
    where = shown_path(run_dir)
    try:
        found = "\x00" not in str(run_dir) and run_dir.is_dir()
    except OSError:  # a name too long for the file system, and the like
        found = False
    if not found:
        raise UsageProblem(f"--resume {where}: no such run directory; give a directory kmc explore created.")
    refuse_links(run_dir)
    run_file = run_dir / RUN_FILE
    try:
        facts = json.loads(run_file.read_text(encoding="utf-8"))
        name, digest, recorded_engine = facts["scenario"]["name"], facts["scenario"]["digest"], facts["engine"]
        if not (isinstance(name, str) and isinstance(digest, str) and recorded_engine in ENGINES):
            raise TypeError("unexpected values")
    except FileNotFoundError:
        raise UsageProblem(f"--resume {where}: it has no {RUN_FILE}, so it is not a run directory of this kmc; "
                           "start a new run.") from None
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError, RecursionError) as e:
        raise UsageProblem(f"{shown_path(run_file)} is corrupt or unreadable ({type(e).__name__}); the run cannot "
                           "be resumed, start a new one.") from None
    if facts.get("symmetry"):
        raise UsageProblem(f"{where} was explored with --symmetry, and such a run cannot be resumed; start a new "
                           "run.")
    if engine is not None and engine != recorded_engine:
        raise UsageProblem(f"{where} holds a {recorded_engine} run; resume it with --engine {recorded_engine} "
                           "(or without --engine).")
    copy = run_dir / SCENARIO_COPY
    try:
        text = copy.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageProblem(f"{shown_path(copy)} cannot be read ({type(e).__name__}); the run cannot be resumed, "
                           "start a new one.") from None
    try:
        kept = load_scenario(text, default_name=name)
    except ScenarioError as e:
        raise UsageProblem(f"{shown_path(copy)} is not the scenario this run started with ({e})") from None
    if kept.digest != digest:
        raise UsageProblem(f"{shown_path(copy)} was changed since the run started (its digest differs from "
                           f"{RUN_FILE}); restore it or start a new run.")
    if scenario is not None and compose.resolve_scenario(scenario).digest != digest:
        raise UsageProblem(f"{where} was explored with scenario {kept.name!r}, not {shown_path(scenario)!r}; resume "
                           f"it without SCENARIO, or start a new run.")
    bits = facts.get("fingerprint_bits")
    if bits is not None and (type(bits) is not int or bits not in FINGERPRINT_BITS):
        raise UsageProblem(f"{shown_path(run_file)} records fingerprint_bits {str(bits)[:40]!r}, not 64 or 128; the "
                           "run cannot be resumed, start a new one.")
    return _Resumed(run_dir, kept, recorded_engine, keep_going=facts.get("continue") is True, fingerprint_bits=bits)


def _keep_scenario(run_dir: Path, sc: Scenario, engine: str, *, symmetry: bool = False,
                   keep_going: bool = False, fingerprint_bits: int = 64) -> None:
    """What ``--resume`` reads back: the scenario's text and the facts that identify the run."""
    from reports.json_report import kmc_version

    write_atomically(run_dir / SCENARIO_COPY, sc.source)
    facts: dict[str, Any] = {"kmc_version": kmc_version(), "engine": engine,
                             "scenario": {"name": sc.name, "digest": sc.digest, "file": SCENARIO_COPY}}
    if symmetry:
        facts["symmetry"] = True
    if keep_going:
        facts["continue"] = True
    if fingerprint_bits != 64:  # so that a run killed before its engine wrote a manifest resumes in its width
        facts["fingerprint_bits"] = fingerprint_bits
    write_atomically(run_dir / RUN_FILE, json.dumps(facts, indent=2) + "\n")


def _resume_command(run_dir: Path, max_depth: int | None = None, max_states: int | None = None) -> str:
    """The command that continues the run in ``run_dir``. A resumed run has only the bounds its own command line
    gives, so the command repeats this invocation's ``--max-depth`` and ``--max-states``: after an interrupt, a time
    limit or the memory budget, the same search goes on."""
    bounds = "".join(f" {option} {value}" for option, value in (("--max-depth", max_depth),
                                                                 ("--max-states", max_states)) if value is not None)
    return f"kmc explore --resume {shlex.quote(str(run_dir))}{bounds}"


def _scenario_bounds(sc: Scenario) -> dict[str, Any]:
    """The scenario's environment bounds, as the reports list them next to the search's: the ZooKeeper model's
    ``[bounds]``, or the KRaft controller's (:class:`~model.scenario.kraft.KraftBounds` and the brokers whose
    metadata images may lag)."""
    if sc.kraft is None:
        return {f"scenario.{key}": value for key, value in attrs.asdict(sc.bounds).items()}
    stale = sc.kraft.stale_metadata_brokers
    return {**{f"scenario.{key}": value for key, value in attrs.asdict(sc.kraft.bounds).items()},
            "scenario.stale_metadata_brokers": "every broker" if stale is None else list(stale)}


def _symmetry_facts(model: KafkaControllerModel) -> dict[str, Any]:
    """What a run's files say about its symmetry reduction: the classes of interchangeable brokers."""
    group = model.symmetry
    return {"enabled": True, "classes": [list(c) for c in group.classes], "group_order": group.order}


def _symmetry_summary(model: KafkaControllerModel) -> str:
    """The reduction in one line, as the reports list it among the bounds."""
    classes = model.symmetry.classes
    if not classes:
        return "on; no interchangeable brokers (every broker is pinned), nothing reduced"
    return "on; interchangeable brokers " + ", ".join("{" + ", ".join(map(str, c)) + "}" for c in classes)


def _run(engine: str, sc: Scenario, model: Any, run_dir: Path, master: str | None, conf: Mapping[str, str],
         resume: bool, max_depth: int | None, max_states: int | None, spark_ui: bool, limits: Limits,
         checkpoint_every: float | None, bits: int | None, live_progress: bool,
         driver_level_seconds: float | None = None, *, symmetry: bool = False,
         keep_going: bool = False) -> ExplorationResult:
    """The search with the chosen engine; with ``symmetry``, over orbits, its discoveries rebuilt on ``model``."""
    if not symmetry:
        return _search(engine, sc, model, run_dir, master, conf, resume, max_depth, max_states, spark_ui, limits,
                       checkpoint_every, bits, live_progress, driver_level_seconds, keep_going=keep_going)
    from explorer.replay import ReplayError
    from explorer.symmetry import Reduced, concrete_result

    result = _search(engine, sc, Reduced(model), run_dir, master, conf, False, max_depth, max_states, spark_ui,
                     limits, checkpoint_every, bits, live_progress, driver_level_seconds, symmetry=True,
                     keep_going=keep_going)
    try:
        return concrete_result(model, result)
    except ReplayError as e:  # a defect of the model's symmetry group, not of the input
        raise AssertionError(f"a --symmetry finding does not replay on the unreduced model: {e}") from e


def _print_level(record: LevelRecord) -> None:
    """One line per level of a Spark run, on stderr beside the progress lines. A level at a bound is checked and not
    expanded; a level cut to ``--max-states`` says so beside its new states."""
    rate = record.frontier / record.seconds if record.seconds > 0 else 0.0
    if record.expanded:
        kept = " (the part of the level within --max-states)" if record.truncated else ""
        done = (f"{record.frontier:,} states expanded, {record.generated:,} states generated, "
                f"{record.new:,} new{kept}")
    else:
        done = f"{record.frontier:,} states checked, not expanded (a bound)"
    print(f"Level {record.depth}: {done}, {record.distinct_total:,} distinct states found, {record.seconds:.2f}s "
          f"({rate:,.0f} states/s).", file=sys.stderr, flush=True)


def _search(engine: str, sc: Scenario, model: Any, run_dir: Path, master: str | None, conf: Mapping[str, str],
            resume: bool, max_depth: int | None, max_states: int | None, spark_ui: bool, limits: Limits,
            checkpoint_every: float | None, bits: int | None, live_progress: bool,
            driver_level_seconds: float | None = None, *, symmetry: bool = False,
            keep_going: bool = False) -> ExplorationResult:
    from reports.json_report import kmc_version

    # A run killed before its engine wrote anything is started again in the same directory.
    resume = resume and (run_dir / ENGINE_MANIFEST).exists()
    try:
        if engine == "local":
            from explorer import checkpoint as checkpoints
            from explorer.bfs import BfsOptions, Checkpointing, run_bfs
            from explorer.progress import RichProgress, progress_for

            if bits is None:  # --resume without --fingerprint-bits: the width the run was started with
                recorded = checkpoints.read_manifest(run_dir) if resume else None
                bits = recorded.fingerprint_bits if recorded is not None else 64

            checkpointing = None if symmetry else Checkpointing(
                run_dir, every_seconds=DEFAULT_CHECKPOINT_SECONDS if checkpoint_every is None else checkpoint_every,
                resume=resume, scenario_hash=sc.digest, kmc_version=kmc_version())
            progress = progress_for(live=live_progress)
            live = isinstance(progress, RichProgress)
            bfs_options = BfsOptions(max_depth=max_depth, max_states=max_states, progress=progress,
                                     progress_interval_seconds=0.25 if live else 10.0, limits=limits,
                                     fingerprint_bits=bits, checkpointing=checkpointing, keep_going=keep_going)
            try:
                return run_bfs(model, bfs_options)
            finally:
                if isinstance(progress, RichProgress):
                    progress.close()
        from explorer.progress import RichProgress, progress_for
        from spark_explore.bfs import DEFAULT_DRIVER_SECONDS, SparkBfsOptions, run_spark_bfs

        spark_progress = progress_for(live=live_progress)
        # A live display redraws itself in place; plain output gets TLC's per-level lines as well.
        on_level = None if isinstance(spark_progress, RichProgress) else _print_level
        options = SparkBfsOptions(run_dir=run_dir, master=master or "local[*]", conf=dict(conf), resume=resume,
                                  max_depth=max_depth, max_states=max_states, progress=spark_progress,
                                  on_level=on_level, scenario_hash=sc.digest, kmc_version=kmc_version(),
                                  ui=spark_ui, limits=limits,
                                  driver_seconds=(DEFAULT_DRIVER_SECONDS if driver_level_seconds is None
                                                  else driver_level_seconds), keep_going=keep_going,
                                  progress_interval_seconds=0.25 if on_level is None else 10.0,
                                  fingerprint_bits=bits)
        factory = compose.factory_for(sc)
        if symmetry:
            from explorer.symmetry import reduced_factory

            factory = reduced_factory(factory)
        try:
            return run_spark_bfs(factory, options)
        finally:
            if isinstance(spark_progress, RichProgress):
                spark_progress.close()
    except ResumeError as e:
        fail(str(e))

