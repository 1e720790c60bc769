"""``kmc assign``: Kafka's replica assignment for a topic, one draw or every possible random draw.

The command parses and checks the operator's input, calls :mod:`model.admin.assignment` (Kafka's
``AdminUtils.assignReplicasToBrokers``, ``--placer admin-utils``, the default) or
:mod:`model.admin.striped_replica_placer` (the KRaft controller's ``StripedReplicaPlacer``, ``--placer striped``,
one draw of ``java.util.Random`` from ``--seed``, fenced brokers from ``--fenced``) and renders its result; it
computes nothing itself. With
``--start-index`` it prints the assignment as the reassignment JSON that
``kafka-reassign-partitions --execute --reassignment-json-file`` reads; without it, it summarises all
``n × n`` outcomes of Kafka's two random draws (start index, initial replica shift).

Bad input exits with status 2 and one line on stderr: Kafka's exception class and message when
Kafka itself would refuse the arguments, otherwise the offending value and how to fix it. Numbers
Kafka holds in an ``Int`` (broker ids, partitions, indexes) or a ``Short`` (the replication factor)
are refused beyond those types, and so are sizes whose output could not be printed in reasonable
time (:data:`MAX_REPLICAS`, :data:`MAX_SUMMARY_REPLICAS`), before anything is computed but after
Kafka's own argument checks (``AdminUtils``: partitions, then replication factor, then "larger than
available brokers"), which Kafka makes first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import IO, Any

import click

from explorer.results import Outcome
from kmc.cluster_args import parse_broker_list, parse_racks
from kmc.common import UsageProblem
from model.admin.assignment import (
    BrokerMetadata,
    DrawSummary,
    KafkaAdminError,
    LoadRange,
    assign_replicas_to_brokers,
    check_assignment_arguments,
    draw_summary,
)
from model.admin.reassignment_json import render_reassignment_json as render_placement_json
from model.admin.striped_replica_placer import JavaRandom, UsableBroker, striped_place
from model.scenario.loader import ScenarioError, validate_topic_name

PLACERS = ("admin-utils", "striped")
#: Kafka's Int.MaxValue (broker ids, partition counts and ids) and Short.MaxValue (replication factor).
INT_MAX = 2**31 - 1
SHORT_MAX = 2**15 - 1
#: One assignment of more replicas than this takes more than a few seconds to compute and print.
MAX_REPLICAS = 300_000
#: The summary of every random draw computes brokers² assignments; their replicas are capped too.
MAX_SUMMARY_REPLICAS = 1_000_000


class AssignInputError(click.ClickException):
    """Bad input to ``kmc assign``: shown as one line on stderr, exit status 2."""

    exit_code = Outcome.BAD_INPUT.exit_code

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"kmc assign: {self.format_message()}", err=True)


class _OneLineErrorCommand(click.Command):
    """A command whose usage errors (missing option, non-integer value…) are one line, like ours."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as e:
            raise AssignInputError(f"{e.format_message()} See 'kmc assign --help'.") from None


@click.command("assign", cls=_OneLineErrorCommand)
@click.option(
    "--broker-list", required=True, help="Broker ids, comma-separated, in the order Kafka sees them."
)
@click.option(
    "--racks", default=None, help="Racks as broker:rack pairs, e.g. 0:r1,1:r2 (all brokers or none)."
)
@click.option("--partitions", type=int, required=True, help="Number of partitions.")
@click.option("--replication-factor", type=int, required=True, help="Replicas per partition.")
@click.option(
    "--start-index",
    type=int,
    default=None,
    help="Kafka's fixedStartIndex: start index, and initial replica shift unless --replica-shift. "
    "Without it, every random draw is summarised.",
)
@click.option("--replica-shift", type=int, default=None, help="Initial replica shift (needs --start-index).")
@click.option(
    "--start-partition-id", type=int, default=-1, help="First partition id (Kafka's startPartitionId)."
)
@click.option("--topic", default="topic", show_default=True, help="Topic name in the reassignment JSON.")
@click.option(
    "--format", "output_format", type=click.Choice(["json", "table"]), default="json", show_default=True
)
@click.option(
    "--placer", type=click.Choice(PLACERS), default="admin-utils", show_default=True,
    help="admin-utils: AdminUtils.assignReplicasToBrokers (ZooKeeper-era tools and controller); striped: the KRaft "
    "controller's StripedReplicaPlacer (3.9).",
)
@click.option(
    "--seed", type=int, default=None,
    help="--placer striped: the seed of the java.util.Random the placer draws from (Kafka's controller uses an "
    "unseeded new Random(), so its draw cannot be known).",
)
@click.option("--fenced", default=None, help="--placer striped: fenced brokers, comma-separated (placed last).")
def assign(
    broker_list: str,
    racks: str | None,
    partitions: int,
    replication_factor: int,
    start_index: int | None,
    replica_shift: int | None,
    start_partition_id: int,
    topic: str,
    output_format: str,
    placer: str,
    seed: int | None,
    fenced: str | None,
) -> None:
    """Show Kafka's replica assignment (AdminUtils.assignReplicasToBrokers) for a topic.

    With --start-index: the assignment, as kafka-reassign-partitions JSON or a table. Without it: for
    each broker and rack, the fewest and most replicas and leaders over every possible random draw.
    With --placer striped --seed N: the KRaft controller's StripedReplicaPlacer, drawing from new Random(N).
    """
    try:
        broker_ids = parse_broker_list(broker_list)
        rack_of = parse_racks(racks, broker_ids) if racks is not None else {}
    except UsageProblem as e:
        raise AssignInputError(str(e)) from None
    if placer == "striped":
        assign_striped(broker_ids, rack_of, partitions, replication_factor, seed, fenced, start_index, replica_shift,
                       start_partition_id, topic, output_format)
        return
    for option, value in (("--seed", seed), ("--fenced", fenced)):
        if value is not None:
            raise AssignInputError(f"{option} {value} applies to --placer striped only; add --placer striped or drop "
                                   f"{option}.")
    try:
        check_assignment_arguments(partitions, replication_factor, len(broker_ids))
    except KafkaAdminError as e:
        raise AssignInputError(e.describe()) from None
    check_sizes(len(broker_ids), partitions, replication_factor, start_index, replica_shift, start_partition_id)
    try:
        validate_topic_name(topic)
    except ScenarioError as e:
        raise AssignInputError(f"--topic: {e}") from None
    if start_index is not None and start_index < 0:
        raise AssignInputError(
            f"--start-index {start_index} must be >= 0; omit --start-index to see every random draw."
        )
    if replica_shift is not None and start_index is None:
        raise AssignInputError(
            f"--replica-shift {replica_shift} needs --start-index; "
            "without it every draw (all shifts) is shown."
        )
    if replica_shift is not None and replica_shift < 0:
        raise AssignInputError(f"--replica-shift {replica_shift} must be >= 0.")
    brokers = [BrokerMetadata(b, rack_of.get(b)) for b in broker_ids]
    try:
        if start_index is not None:
            assignment = assign_replicas_to_brokers(
                brokers,
                partitions,
                replication_factor,
                fixed_start_index=start_index,
                start_partition_id=start_partition_id,
                replica_shift=replica_shift,
            )
            text = (
                render_reassignment_json(topic, assignment)
                if output_format == "json"
                else render_assignment_table(assignment, rack_of)
            )
        else:
            summary = draw_summary(brokers, partitions, replication_factor, start_partition_id)
            text = (
                render_summary_json(summary, broker_ids, partitions, replication_factor, start_partition_id)
                if output_format == "json"
                else render_summary_table(summary, len(broker_ids))
            )
    except KafkaAdminError as e:
        raise AssignInputError(e.describe()) from None
    click.echo(text)


def assign_striped(
    broker_ids: Sequence[int],
    rack_of: Mapping[int, str],
    partitions: int,
    replication_factor: int,
    seed: int | None,
    fenced: str | None,
    start_index: int | None,
    replica_shift: int | None,
    start_partition_id: int,
    topic: str,
    output_format: str,
) -> None:
    """``--placer striped``: ``StripedReplicaPlacer.place`` from ``new Random(seed)``, printed as one draw is."""
    for option, value in (("--start-index", start_index), ("--replica-shift", replica_shift)):
        if value is not None:
            raise AssignInputError(f"{option} {value} is AdminUtils' draw; StripedReplicaPlacer draws from --seed, "
                                   f"so drop {option}.")
    if seed is None:
        raise AssignInputError("--placer striped needs --seed N: Kafka's controller draws from an unseeded "
                               "java.util.Random, kmc from new Random(N); give any whole number.")
    if abs(seed) > 2**63 - 1:
        raise AssignInputError(f"--seed {seed} is beyond a Java long; give a number within +-(2^63 - 1).")
    try:
        fenced_ids = set(parse_broker_list(fenced)) if fenced is not None else set()
    except UsageProblem as e:
        raise AssignInputError(str(e).replace("--broker-list", "--fenced", 1)) from None
    if unknown := sorted(fenced_ids - set(broker_ids)):
        raise AssignInputError(f"--fenced {fenced}: broker {unknown[0]} is not in --broker-list; add it there or "
                               "drop it from --fenced.")
    if partitions <= 0:  # ReplicationControlManager.createTopic, before the placer
        raise AssignInputError("org.apache.kafka.common.errors.InvalidPartitionsException: Number of partitions was "
                               "set to an invalid non-positive value.")
    check_sizes(len(broker_ids), partitions, replication_factor, 0, None, start_partition_id)
    try:
        validate_topic_name(topic)
    except ScenarioError as e:
        raise AssignInputError(f"--topic: {e}") from None
    brokers = [UsableBroker(b, rack_of.get(b), b in fenced_ids) for b in broker_ids]
    try:
        placed = striped_place(brokers, partitions, replication_factor, JavaRandom(seed))
    except KafkaAdminError as e:
        raise AssignInputError(e.describe()) from None
    first = max(0, start_partition_id)
    assignment = {first + i: replicas for i, replicas in enumerate(placed)}
    click.echo(render_reassignment_json(topic, assignment) if output_format == "json"
               else render_assignment_table(assignment, rack_of))


def check_sizes(
    brokers: int,
    partitions: int,
    replication_factor: int,
    start_index: int | None,
    replica_shift: int | None,
    start_partition_id: int,
) -> None:
    """Refuse numbers beyond Kafka's types and outputs too large to print in reasonable time, before
    anything is computed and after Kafka's own argument checks (:func:`check_assignment_arguments`, with its
    messages), which Kafka makes first."""
    for option, value, limit, kind in (
        ("--partitions", partitions, INT_MAX, "an Int"),
        ("--replication-factor", replication_factor, SHORT_MAX, "a Short"),
        ("--start-index", start_index, INT_MAX, "an Int"),
        ("--replica-shift", replica_shift, INT_MAX, "an Int"),
        ("--start-partition-id", start_partition_id, INT_MAX, "an Int"),
    ):
        if value is not None and abs(value) > limit:
            raise AssignInputError(f"{option} {value} is beyond what Kafka accepts ({kind}, at most {limit}); "
                                   "give a smaller number.")
    replicas = max(partitions, 0) * max(replication_factor, 0)
    if start_index is not None and replicas > MAX_REPLICAS:
        raise AssignInputError(
            f"--partitions {partitions} x --replication-factor {replication_factor} is {replicas:,} replicas, more "
            f"than kmc assign prints ({MAX_REPLICAS:,}); assign fewer partitions at a time."
        )
    if start_index is None and replicas * brokers * brokers > MAX_SUMMARY_REPLICAS:
        raise AssignInputError(
            f"summarising every random draw of {partitions} partitions x {replication_factor} replicas over "
            f"{brokers} brokers computes {replicas * brokers * brokers:,} replicas, more than kmc assign does "
            f"({MAX_SUMMARY_REPLICAS:,}); give --start-index for one draw, or fewer partitions."
        )


# ---------------------------------------------------------------------------------------------------
# Renderers


def render_reassignment_json(topic: str, assignment: Mapping[int, Sequence[int]]) -> str:
    """The reassignment JSON kafka-reassign-partitions emits: version 1, partitions by id, log dir "any"."""
    return render_placement_json({(topic, p): replicas for p, replicas in assignment.items()})


def render_assignment_table(assignment: Mapping[int, Sequence[int]], rack_of: Mapping[int, str]) -> str:
    headers = ["partition", "replicas", "leader"] + (["racks"] if rack_of else [])
    rows = []
    for p in sorted(assignment):
        replicas = assignment[p]
        row = [str(p), ",".join(map(str, replicas)), str(replicas[0])]
        if rack_of:
            row.append(",".join(rack_of[b] for b in replicas))
        rows.append(row)
    return render_table(headers, rows)


def _load_json(load: LoadRange) -> dict[str, int]:
    return {
        "replicas_min": load.replicas_min,
        "replicas_max": load.replicas_max,
        "leaders_min": load.leaders_min,
        "leaders_max": load.leaders_max,
    }


def render_summary_json(
    summary: DrawSummary,
    broker_ids: Sequence[int],
    partitions: int,
    replication_factor: int,
    start_partition_id: int,
) -> str:
    doc = {
        "broker_list": list(broker_ids),
        "num_partitions": partitions,
        "replication_factor": replication_factor,
        "start_partition_id": max(0, start_partition_id),
        "draws": summary.draws,
        "distinct_assignments": summary.distinct_assignments,
        "brokers": [{"broker": b, **_load_json(load)} for b, load in summary.per_broker],
        "racks": [{"rack": r, **_load_json(load)} for r, load in summary.per_rack],
    }
    return json.dumps(doc, indent=2)


def render_summary_table(summary: DrawSummary, n_brokers: int) -> str:
    headers = ["replicas min", "replicas max", "leaders min", "leaders max"]

    def cells(load: LoadRange) -> list[str]:
        return [str(load.replicas_min), str(load.replicas_max), str(load.leaders_min), str(load.leaders_max)]

    parts = [
        f"{summary.draws} equally likely draws "
        f"(start index x initial replica shift, {n_brokers} x {n_brokers}), "
        f"{summary.distinct_assignments} distinct assignments",
        "",
        render_table(["broker", *headers], [[str(b), *cells(load)] for b, load in summary.per_broker]),
    ]
    if summary.per_rack:
        parts += ["", render_table(["rack", *headers], [[r, *cells(load)] for r, load in summary.per_rack])]
    return "\n".join(parts)


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max([len(h), *(len(row[i]) for row in rows)]) for i, h in enumerate(headers)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in [headers, *rows]
    ]
    return "\n".join(lines)
