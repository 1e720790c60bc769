"""``kmc validate``: judge any reassignment plan, from kmc, ``--generate`` or a hand-written file.

In order: Kafka's own rules for the file (``ReassignPartitionsCommand.parsePartitionReassignmentData``
and ``parseAndValidate``, 2.3.0, with Kafka's sentences: JSON syntax, version, fields, log_dirs
length, empty file, empty replica lists, duplicate partitions, duplicate replicas, and with
``--current`` / ``--broker-list`` the partitions and brokers that do not exist); one replication
factor per topic, and the current one unless ``--replication-factor`` says otherwise; the placement
properties of :mod:`model.admin.placement` on the placement after the plan (distinct brokers, only
listed brokers, ``rack_spread`` or ``rack_distribution``); and, with ``--current``, the balance
deltas: replicas and leaders per broker and per rack before and after, next to the best balance the
racks allow (reported, not judged: a plan may trade balance for fewer movements).

With ``--model-check`` (and ``--current``), a plan of one topic that passes those checks is also
executed on the controller model (:mod:`kmc.plan_check`): every interleaving of the reassignment's
steps with up to ``--broker-failures`` broker failures and restarts, checked for leaders in the ISR
and the assignment, the ISR within the assignment, and a reassignment that finishes once its targets
are alive. A violation found there is printed with its shortest trace and counts as a violation.

Every violation is printed on its own line, ``VIOLATION <property> <where>: <sentence>``; exit 1 if
there is one, 0 if none, 3 if the model check stopped at ``--max-states`` without a violation, 2 for
bad input (an unreadable file, a file that is not a plan at all: not JSON, or JSON that is not an
object; a malformed ``--current``, a plan too large to model-check). A topic name Kafka refuses
(``Topic.validate``) is a violation of Kafka's rules, and the plan is judged no further.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NoReturn

import click

from explorer.replay import Trace
from explorer.results import ExplorationResult, Outcome
from kmc.cluster_args import parse_broker_list, parse_racks
from kmc.commands.assign import render_table
from kmc.commands.plan import not_a_json_object, read_current, read_text
from kmc.common import SafePath, UsageProblem, fail
from kmc.outputs import replay_all
from kmc.plan_check import DEFAULT_MAX_STATES, PROPERTIES, check_plan_execution
from model.admin.assignment import KafkaAdminError
from model.admin.placement import (
    RACK_MODES,
    REPLICA_BALANCE,
    Cluster,
    Violation,
    check_balance,
    check_distinct_brokers,
    check_only_listed,
    check_racks,
    check_replication_factor,
    check_topic_replication_factor,
    load_counts,
)
from model.admin.reassignment_json import (
    Placement,
    ReassignmentEntry,
    check_reassignment,
    parse_reassignment_json,
    placement_of,
)
from model.admin.reassignment_plan import balance_bounds
from model.scenario.loader import ScenarioError, shown, validate_topic_name
from reports.common import printable
from reports.text import render_text

KAFKA_RULES = "kafka_reassignment_rules"


@click.command("validate")
@click.argument("plan_path", metavar="PLAN.json", type=SafePath(dir_okay=False, path_type=Path))
@click.option("--current", "current_path", type=SafePath(dir_okay=False, path_type=Path), default=None,
              help="Current placement (reassignment JSON or kafka-topics --describe output).")
@click.option("--broker-list", default=None, help="The cluster's brokers the plan may use, e.g. 0,1,2,3.")
@click.option("--racks", default=None, help="Racks of the brokers, e.g. 0:r1,1:r2.")
@click.option("--rack-mode", type=click.Choice(RACK_MODES), default="strict", show_default=True)
@click.option("--replication-factor", type=click.IntRange(min=1), default=None,
              help="The replication factor the plan sets (default: the current one is kept).")
@click.option("--model-check", is_flag=True,
              help="Also execute the plan (one topic, a few partitions) on the Kafka 2.3 controller model.")
@click.option("--broker-failures", type=click.IntRange(min=0, max=3), default=1, show_default=True,
              help="With --model-check: how many broker failures (each followed by a possible restart).")
@click.option("--max-states", type=click.IntRange(min=1), default=DEFAULT_MAX_STATES, show_default=True,
              help="With --model-check: stop the search after this many distinct states (exit 3).")
def validate(plan_path: Path, current_path: Path | None, broker_list: str | None, racks: str | None,
             rack_mode: str, replication_factor: int | None, model_check: bool, broker_failures: int,
             max_states: int) -> None:
    """Check a reassignment plan: Kafka's rules, replication factors, placement properties, balance deltas."""
    try:
        text = read_text(plan_path, "PLAN.json")
        current = read_current(current_path) if current_path is not None else None
        brokers = parse_broker_list(broker_list) if broker_list is not None else None
        rack_of = parse_racks(racks, None) if racks is not None else {}
        if model_check and current is None:
            raise UsageProblem("--model-check executes the plan from the current placement; give --current.")
    except UsageProblem as e:
        fail(str(e))
    known_brokers = brokers if brokers is not None else (tuple(rack_of) if rack_of else None)
    violations: list[Violation] = []
    what = not_a_json_object(text) or ("not JSON" if _not_json(text) else None)
    if what is not None:  # no plan at all, unlike a JSON object that breaks Kafka's rules (exit 1)
        fail(f"PLAN.json {str(plan_path)!r} is not a reassignment plan ({what}); give the JSON file that "
                 "kafka-reassign-partitions --generate or kmc plan writes.")
    try:
        entries = parse_reassignment_json(text)
    except KafkaAdminError as e:
        _finish([Violation(KAFKA_RULES, str(plan_path), e.describe())], None)
    topic_names = [Violation(KAFKA_RULES, f"topic {shown(e.topic)}", str(e)) for e in _illegal_topics(entries)]
    if topic_names:
        _finish(topic_names, None)  # names Kafka refuses go no further (nor into other sentences)
    violations += [Violation(KAFKA_RULES, str(plan_path), e.describe())
                   for e in check_reassignment(entries, None if current is None else set(current), known_brokers)]
    plan = placement_of(entries)
    after: Placement = {**current, **plan} if current is not None else plan
    cluster = Cluster(known_brokers if known_brokers is not None else sorted({b for r in after.values() for b in r}),
                      rack_of, rack_mode)
    if rack_of and known_brokers is not None and set(rack_of) < set(known_brokers):
        missing = sorted(set(known_brokers) - set(rack_of))
        fail(f"--racks names no rack for broker(s) {','.join(map(str, missing))}; give every broker a rack.")
    violations += check_topic_replication_factor(plan)
    if replication_factor is not None:
        violations += check_replication_factor(plan, dict.fromkeys(plan, replication_factor), requested=True)
    elif current is not None:
        violations += check_replication_factor(plan, {tp: len(current[tp]) for tp in plan if tp in current})
    violations += check_distinct_brokers(plan)
    if known_brokers is not None:
        violations += check_only_listed(plan, cluster)
    violations += check_racks(plan, cluster)
    balance = _balance_report(current, after, cluster) if current is not None else None
    if not model_check or current is None:
        _finish(violations, balance)
    if violations:
        _finish(violations, balance, "Model check skipped: the plan breaks the rules above; fix them first.")
    from explorer.progress import RichProgress, progress_for

    def announce() -> None:  # the search takes up to a minute: say what runs, then show its progress
        click.echo("Model check: executing the plan on the Kafka 2.3 controller model, every interleaving with "
                   f"up to {broker_failures} broker failure(s)...", err=True)

    progress = progress_for()
    try:
        model, result = check_plan_execution(current, plan, rack_of, broker_failures, max_states, progress=progress,
                                             progress_interval_seconds=0.25 if isinstance(progress, RichProgress)
                                             else 10.0, on_start=announce)
    except UsageProblem as e:
        fail(str(e))
    finally:
        if isinstance(progress, RichProgress):
            progress.close()
    traces = replay_all(model, result)
    violations += [Violation(d.property, "model check", f"violated after {d.trace_length} steps (trace below)")
                   for d in result.violations]
    _finish(violations, balance, _model_check_report(result, traces, broker_failures),
            inconclusive=result.outcome is Outcome.INCONCLUSIVE)


class _IllegalTopic(Exception):
    def __init__(self, topic: str, sentence: str) -> None:
        super().__init__(sentence)
        self.topic = topic


def _illegal_topics(entries: Sequence[ReassignmentEntry]) -> list[_IllegalTopic]:
    """The topics of a plan Kafka refuses (``Topic.validate``), each with Kafka's sentence."""
    found = []
    for topic in sorted({entry.topic for entry in entries}):
        try:
            validate_topic_name(topic)
        except ScenarioError as e:
            found.append(_IllegalTopic(topic, str(e)))
    return found


def _not_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested thousands deep, not JSON kmc can read
        return True
    return False


def _model_check_report(result: ExplorationResult, traces: Mapping[str, Trace], broker_failures: int) -> str:
    s = result.stats
    head = (f"Model check: the plan executed on the Kafka 2.3 controller model with up to {broker_failures} broker "
            f"failure(s): {s.distinct:,} distinct states, depth {s.depth}, {s.seconds:.1f} s; ")
    if result.violations:
        return head + "violations found.\n\n" + render_text(result, traces)
    if result.outcome is Outcome.INCONCLUSIVE:
        return head + f"stopped before the search was complete ({result.reason}); no violation so far."
    verdict = head + "every interleaving keeps the properties checked (" + ", ".join(PROPERTIES) + ")."
    if result.never_found:  # the reassignment never completing in any interleaving would make the check vacuous
        verdict += f"\nWarning: {', '.join(result.never_found)} never satisfied: the plan never completes in the model."
    return verdict


def _balance_report(current: Placement, after: Placement, cluster: Cluster) -> str:
    before_loads, after_loads = load_counts(current, cluster), load_counts(after, cluster)
    rfs = [len(after[tp]) for tp in sorted(after)]
    listed = [b for b in cluster.brokers if b in cluster.racks] if cluster.racks else list(cluster.brokers)
    bounds, leader_bounds = balance_bounds(rfs, Cluster(listed, cluster.racks, cluster.rack_mode))
    rows = []
    for b in sorted(set(before_loads.replicas) | set(after_loads.replicas)):
        lo, hi = bounds.get(b, (0, 0))
        llo, lhi = leader_bounds.get(b, (0, 0))
        rows.append([str(b), cluster.racks.get(b, "-"),
                     f"{before_loads.replicas.get(b, 0)} -> {after_loads.replicas.get(b, 0)}", f"{lo}..{hi}",
                     f"{before_loads.leaders.get(b, 0)} -> {after_loads.leaders.get(b, 0)}", f"{llo}..{lhi}"])
    parts = ["Balance deltas (reported, not judged): replicas and leaders per broker before -> after, and the "
             "best balance the racks allow:",
             render_table(["broker", "rack", "replicas", "best", "leaders", "best"], rows)]
    if cluster.racks:
        parts.append(render_table(["rack", "replicas", "leaders"], [
            [r, f"{before_loads.rack_replicas[r]} -> {after_loads.rack_replicas[r]}",
             f"{before_loads.rack_leaders[r]} -> {after_loads.rack_leaders[r]}"] for r in cluster.rack_names]))
    outside = [len(check_balance(loads.replicas, bounds, REPLICA_BALANCE, "replicas"))
               for loads in (before_loads, after_loads)]
    parts.append(f"Brokers outside the best replica balance: {outside[0]} before, {outside[1]} after.")
    return "\n\n".join(parts)


def _finish(violations: list[Violation], balance: str | None, model_check: str | None = None, *,
            inconclusive: bool = False) -> NoReturn:
    for v in violations:  # a plan's free text (log dirs in Kafka's sentences) is escaped, never printed raw
        click.echo(printable(f"VIOLATION {v.property} {v.where}: {v.message}"))
    for part in (balance, model_check):
        if part is not None:
            if violations or part is model_check:
                click.echo("")
            click.echo(part)
    outcome = Outcome.VIOLATION if violations else Outcome.INCONCLUSIVE if inconclusive else Outcome.OK
    if violations:
        click.echo(f"{len(violations)} violation(s).")
    elif inconclusive:
        click.echo("No violation so far, but the model check is incomplete (raise --max-states to finish it).")
    else:
        click.echo("The plan satisfies every check.")
    sys.exit(outcome.exit_code)
