"""``kmc prove assignment``: z3 proofs and exhaustive checks about Kafka's replica assignment.

Runs :func:`invariants.assignment_proofs.prove_assignment` and prints each claim with its bound and
method, "proved" or its counterexample, then the measurements with the cluster that attains them.
``--format json`` prints the same as one JSON document. Exit status: 0 when every claim is proved,
1 when a counterexample is found, 3 when z3 could prove neither way (a claim left unproved without a
counterexample).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import attrs
import click

from explorer.results import Outcome
from invariants.assignment_proofs import Claim, Measurement, prove_assignment


@click.group("prove")
def prove() -> None:
    """Prove properties of Kafka's algorithms (today: the replica assignment)."""


@prove.command("assignment")
@click.option("--max-brokers", type=click.IntRange(2, 12), default=8, show_default=True,
              help="Largest cluster of the rack-aware exhaustive check.")
@click.option("--max-racks", type=click.IntRange(1, 6), default=4, show_default=True,
              help="Most racks of the rack-aware exhaustive check.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def assignment(max_brokers: int, max_racks: int, fmt: str) -> None:
    """Claims about AdminUtils.assignReplicasToBrokers (distinct brokers, rack spread) and its imbalances."""
    claims, measurements = prove_assignment(max_brokers, max_racks)
    if any(not c.proved and c.counterexample is not None for c in claims):
        outcome = Outcome.VIOLATION
    elif all(c.proved for c in claims):
        outcome = Outcome.OK
    else:
        outcome = Outcome.INCONCLUSIVE
    if fmt == "json":
        click.echo(json.dumps({"outcome": outcome.value, "claims": [attrs.asdict(c) for c in claims],
                               "measurements": [attrs.asdict(m) for m in measurements]}, indent=2))
    else:
        click.echo(render_text(claims, measurements))
    sys.exit(outcome.exit_code)


def render_text(claims: list[Claim], measurements: list[Measurement]) -> str:
    lines = ["Claims about Kafka's replica assignment (AdminUtils.assignReplicasToBrokers, model/admin/assignment.py)",
             ""]
    for c in claims:
        status = "proved" if c.proved else ("COUNTEREXAMPLE" if c.counterexample is not None else "not proved")
        lines.append(f"[{status}] {c.name}: {c.statement}")
        lines.append(f"    bound: {c.bound}")
        lines.append(f"    method: {c.method} ({c.cases:,} cases, {c.seconds:.1f} s)")
        if c.counterexample is not None:
            lines.append(f"    counterexample: {_compact(c.counterexample)}")
    lines.append("")
    for m in measurements:
        lines.append(f"[measured] {m.name}: {m.statement}")
        lines.append(f"    figures: {_compact(m.figures)}")
        lines.append(f"    cluster: {_compact(m.cluster)}")
        lines.append(f"    ({m.seconds:.1f} s)")
    proved = sum(c.proved for c in claims)
    lines.append("")
    lines.append(f"{proved} of {len(claims)} claims proved.")
    return "\n".join(lines)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(", ", ": "))
