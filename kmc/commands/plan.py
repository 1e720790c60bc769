"""``kmc plan``: a deterministic, minimal-movement, rack-aware reassignment plan in Kafka's JSON.

Reads the current placement (reassignment JSON or ``kafka-topics --describe`` output), asks
:mod:`model.admin.reassignment_plan` for the plan, and prints it as ``kafka-reassign-partitions.sh
--generate`` does (``ReassignPartitionsCommand.generateAssignment``, 2.3.0): the heading "Current
partition replica assignment" and one line of JSON, a blank line, the heading "Proposed partition
reassignment configuration" and one line of JSON. Unlike ``--generate``, both list only the
partitions whose replica list changes (the current one is the rollback). The run directory gets
``reassignment.json`` (for ``--execute``), ``rollback.json`` and ``plan.txt``, the summary that is
also printed on stderr: movements, leader changes and their bounds, data moved, per-broker and
per-rack counts before and after, and each property's status.

Exit status: 0 with a plan; 2 for bad input, including a request no placement can satisfy (the
sentence comes from the z3 unsat core, see :func:`model.admin.placement.core_sentence`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import click

from kmc.cluster_args import parse_broker_list, parse_racks
from kmc.commands.assign import render_table
from kmc.common import SafePath, UsageProblem, fail, new_run_dir, shown_path, write_atomically
from model.admin.assignment import KafkaAdminError
from model.admin.placement import RACK_MODES, Cluster, load_counts
from model.admin.reassignment_json import (
    DescribeOutputError,
    Placement,
    TopicPartition,
    parse_current_placement,
    parse_log_dirs_sizes,
    parse_topics_to_move,
    render_reassignment_json,
)
from model.admin.reassignment_plan import Plan, PlanInfeasible, PlanRequest, plan_reassignment, summary_statuses
from model.scenario.loader import ScenarioError, validate_topic_name

#: Kafka's files for a whole cluster are megabytes; a larger one is refused before it is parsed.
MAX_FILE_BYTES = 64 << 20


def read_text(path: Path, option: str) -> str:
    """The UTF-8 text of one of Kafka's files, or one sentence naming why it cannot be read."""
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise UsageProblem(f"{option} {str(path)!r} cannot be read ({e.strerror}); give a readable file.") from None
    except ValueError:  # a NUL byte in the path
        raise UsageProblem(f"{option} {str(path)!r} is not a valid path; give a readable file.") from None
    if len(data) > MAX_FILE_BYTES:
        raise UsageProblem(f"{option} {str(path)!r} is larger than {MAX_FILE_BYTES >> 20} MiB; give Kafka's file "
                           "for the topics to plan.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageProblem(f"{option} {str(path)!r} is not UTF-8 text (byte {e.start}); give the file Kafka's "
                           "tool wrote.") from None


def not_a_json_object(text: str) -> str | None:
    """What ``text`` is when it is JSON but not an object (reassignment JSON is one), else None."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested thousands deep, not JSON kmc can read
        return None
    kinds = {list: "array", str: "string", bool: "true or false", int: "number", float: "number"}
    return None if isinstance(doc, dict) else f"JSON {kinds.get(type(doc), 'null')}"


def check_topic_names(placement: Placement, option: str, path: Path) -> None:
    """Refuse a placement naming a topic Kafka refuses (``Topic.validate``), with Kafka's sentence."""
    for topic in sorted({tp[0] for tp in placement}):
        try:
            validate_topic_name(topic)
        except ScenarioError as e:
            raise UsageProblem(f"{option} {str(path)!r}: {e}") from None


def read_current(path: Path, option: str = "--current") -> Placement:
    """A current placement file, with Kafka's sentence (or kmc's for describe output) when it is malformed,
    and every topic name one Kafka accepts."""
    text = read_text(path, option)
    other = not_a_json_object(text)
    if other is not None:
        raise UsageProblem(f"{option} {str(path)!r} is a {other}, not a reassignment JSON (an object with "
                           '"version" and "partitions") nor kafka-topics --describe output.')
    try:
        placement = parse_current_placement(text)
    except KafkaAdminError as e:
        raise UsageProblem(f"{option} {str(path)!r}: {e.describe()}") from None
    except DescribeOutputError as e:
        raise UsageProblem(f"{option} {str(path)!r}: {e}; give reassignment JSON or kafka-topics --describe "
                           "output.") from None
    check_topic_names(placement, option, path)
    return placement


def cluster_from_options(broker_list: str, racks: str | None, rack_mode: str) -> Cluster:
    brokers = parse_broker_list(broker_list)
    rack_of = parse_racks(racks, brokers) if racks is not None else {}
    if rack_of and set(rack_of) != set(brokers):
        missing = sorted(set(brokers) - set(rack_of))
        raise UsageProblem(f"--racks names no rack for broker(s) {','.join(map(str, missing))}; give every listed "
                           "broker a rack, or none for a rack-unaware plan.")
    return Cluster(brokers, rack_of, rack_mode)


@click.command("plan")
@click.option("--current", "current_path", type=SafePath(dir_okay=False, path_type=Path), required=True,
              help="Current placement: reassignment JSON or kafka-topics --describe output.")
@click.option("--broker-list", required=True, help="Brokers the plan may use, e.g. 0,1,2,3.")
@click.option("--racks", default=None, help="Racks of the listed brokers, e.g. 0:r1,1:r2 (all or none).")
@click.option("--rack-mode", type=click.Choice(RACK_MODES), default="strict", show_default=True,
              help="strict: one replica per rack; distribution: replicas spread evenly over racks.")
@click.option("--replication-factor", type=click.IntRange(min=1), default=None,
              help="Set every moved partition's replication factor (default: keep it).")
@click.option("--topics-to-move", "topics_path", type=SafePath(dir_okay=False, path_type=Path), default=None,
              help='Kafka\'s topics-to-move JSON ({"topics":[{"topic":"foo"}],"version":1}); default: every topic.')
@click.option("--partition-sizes", "sizes_path", type=SafePath(dir_okay=False, path_type=Path), default=None,
              help="kafka-log-dirs --describe output, to report the data each plan moves.")
@click.option("--balance-slack", type=click.IntRange(min=0), default=0, show_default=True,
              help="Allow each broker this many replicas (and leaders) beyond the best balance.")
@click.option("--out", type=SafePath(file_okay=False, path_type=Path), default=Path("reports/runs"),
              show_default=True, help="Where the plan's directory is created.")
def plan(current_path: Path, broker_list: str, racks: str | None, rack_mode: str, replication_factor: int | None,
         topics_path: Path | None, sizes_path: Path | None, balance_slack: int, out: Path) -> None:
    """Plan a reassignment: hard constraints, then fewest replica movements, then fewest leader changes."""
    try:
        cluster = cluster_from_options(broker_list, racks, rack_mode)
        current = read_current(current_path)
        if topics_path is not None:
            current = _select_topics(current, _read_topics(topics_path))
        sizes = _read_sizes(sizes_path) if sizes_path is not None else None
        result = plan_reassignment(PlanRequest(current, cluster, replication_factor, balance_slack))
        run_dir = new_run_dir(out, "plan")  # an unusable --out is refused before anything is printed
    except PlanInfeasible as e:
        fail(f"{e}.")
    except UsageProblem as e:
        fail(str(e))
    changed = {tp: result.proposed[tp] for tp in result.proposed if result.proposed[tp] != current[tp]}
    rollback = {tp: current[tp] for tp in changed}
    click.echo(f"Current partition replica assignment\n{render_reassignment_json(rollback)}\n")
    click.echo(f"Proposed partition reassignment configuration\n{render_reassignment_json(changed)}")
    rfs = {tp: replication_factor or len(current[tp]) for tp in current}
    summary = render_summary(current, result, cluster, rfs, replication_factor is not None, sizes)
    try:
        write_atomically(run_dir / "reassignment.json", render_reassignment_json(changed) + "\n")
        write_atomically(run_dir / "rollback.json", render_reassignment_json(rollback) + "\n")
        write_atomically(run_dir / "plan.txt", summary)
    except OSError as e:
        fail(f"the plan cannot be written to {shown_path(run_dir)} ({e.strerror or e}); choose an --out you can "
             "write to.")
    click.echo(summary, err=True, nl=False)
    click.echo(f"Plan written to {run_dir} (reassignment.json, rollback.json, plan.txt).", err=True)


def _read_topics(path: Path) -> tuple[str, ...]:
    try:
        return parse_topics_to_move(read_text(path, "--topics-to-move"))
    except KafkaAdminError as e:
        raise UsageProblem(f"--topics-to-move {str(path)!r}: {e.describe()}") from None


def _select_topics(current: Placement, topics: Sequence[str]) -> Placement:
    known = {tp[0] for tp in current}
    unknown = [t for t in topics if t not in known]
    if unknown:
        raise UsageProblem(f"--topics-to-move names topic {unknown[0]!r}, which the current placement does not have; "
                           "drop it or give a current placement that has it.")
    if not topics:
        raise UsageProblem("--topics-to-move lists no topic; name at least one.")
    return {tp: reps for tp, reps in current.items() if tp[0] in topics}


def _read_sizes(path: Path) -> dict[TopicPartition, int]:
    try:
        return parse_log_dirs_sizes(read_text(path, "--partition-sizes"))
    except DescribeOutputError as e:
        raise UsageProblem(f"--partition-sizes {str(path)!r}: {e}.") from None


# ---------------------------------------------------------------------------------------------------
# The summary (Cruise Control's proposal summary, in kmc's words)


def render_summary(current: Placement, result: Plan, cluster: Cluster, rfs: Mapping[TopicPartition, int],
                   rf_requested: bool, sizes: Mapping[TopicPartition, int] | None) -> str:
    lines = []
    changed = sum(1 for tp in current if result.proposed[tp] != current[tp])
    lines.append(f"Partitions: {len(current)} considered, {changed} to reassign.")
    lines.append(f"Replica movements: {result.moves} (optimal for the balance bounds: minimum-cost flow; "
                 f"counting lower bound {result.moves_lower_bound}).")
    gap = result.leader_changes_gap
    lines.append(f"Leader changes: {result.leader_changes} (lower bound {result.leader_changes_lower_bound}"
                 + (", optimal)." if gap == 0 else f", gap at most {gap}; leaders chosen by minimum-cost flow "
                                                   "for the replicas above)."))
    if sizes is not None:
        moved = [tp for tp in current for b in result.proposed[tp] if b not in current[tp]]
        unknown = sorted({tp for tp in moved if tp not in sizes})
        lines.append(f"Data to move: {_bytes(sum(sizes.get(tp, 0) for tp in moved))}"
                     + (f" ({len(unknown)} moved partition(s) without a size)." if unknown else "."))
    slack_note = f", widened by {result.balance_slack}" if result.balance_slack else ""
    if result.leader_slack:
        slack_note += f"; leader bounds widened by {result.leader_slack} more to fit the replicas"
    lines.append(f"Balance bounds (best the racks allow{slack_note}):")
    lines += _bounds_lines(result, cluster)
    before = summary_statuses(current, cluster, rfs, rf_requested, result.replica_bounds, result.leader_bounds)
    after = summary_statuses(result.proposed, cluster, rfs, rf_requested, result.replica_bounds,
                             result.leader_bounds)
    lines.append("")
    lines.append(render_table(["property", "before", "after"],
                        [[name, _status(before[name]), _status(after[name])] for name in before]))
    lines.append("")
    old, new = load_counts(current, cluster), load_counts(result.proposed, cluster)
    brokers = sorted(set(old.replicas) | set(new.replicas))
    rows = [[str(b), cluster.racks.get(b, "-"), f"{old.replicas.get(b, 0)} -> {new.replicas.get(b, 0)}",
             f"{old.leaders.get(b, 0)} -> {new.leaders.get(b, 0)}", "" if b in cluster.brokers else "not listed"]
            for b in brokers]
    lines.append(render_table(["broker", "rack", "replicas", "leaders", ""], rows))
    if cluster.racks:
        lines.append("")
        lines.append(render_table(["rack", "replicas", "leaders"],
                            [[r, f"{old.rack_replicas[r]} -> {new.rack_replicas[r]}",
                              f"{old.rack_leaders[r]} -> {new.rack_leaders[r]}"] for r in cluster.rack_names]))
    return "\n".join(lines) + "\n"


def _bounds_lines(result: Plan, cluster: Cluster) -> list[str]:
    groups: dict[tuple[tuple[int, int], tuple[int, int]], list[int]] = {}
    for b in cluster.brokers:
        groups.setdefault((result.replica_bounds[b], result.leader_bounds[b]), []).append(b)
    return [f"  {'broker' if len(bs) == 1 else 'brokers'} {', '.join(map(str, bs))}: "
            f"{_count_range(*r, 'replica')}, {_count_range(*ld, 'leader')} each"
            for (r, ld), bs in sorted(groups.items(), key=lambda item: item[1][0])]


def _count_range(lo: int, hi: int, noun: str) -> str:
    """``12 replicas`` for a bound that fixes the count, ``11 to 12 replicas`` otherwise."""
    plural = noun if lo == hi == 1 else f"{noun}s"
    return f"{lo} {plural}" if lo == hi else f"{lo} to {hi} {plural}"


def _status(violations: int) -> str:
    return "ok" if violations == 0 else f"{violations} violated"


def _bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            break
    return f"{value:.1f} {unit} ({n} bytes)"
