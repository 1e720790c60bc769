"""``kmc bugs``: Kafka's controller bug history as the model's ``[bugs]`` switches.

Lists each switch (:data:`model.scenario.BUGS`, then the KRaft controller's :data:`model.scenario.KRAFT_BUGS`):
its id and JIRA, title, the modelled Kafka versions that had it (the switch's default), the property it breaks
and the shipped scenario that reproduces it; after each table, the bugs the model cannot express, with the
reason. Without ``--verify`` nothing is explored and the
"reproduced" column says so. ``--verify`` (optionally ``--only NAME``, repeatable) runs the local BFS on each
switch's scenario with the switch on and off (:func:`model.scenario.with_bug`) and prints the outcome, distinct
states and seconds of each: a bug is reproduced when the search finds the property it breaks with the switch on
and nothing with it off. Exit status: 0 when every bug verified is reproduced, 1 when one is not, 2 for an
unknown ``--only`` name.
"""

from __future__ import annotations

import sys

import click

from explorer.bfs import run_bfs
from explorer.results import ExplorationResult, Outcome
from kmc.common import fail
from kmc.compose import model_for, resolve_scenario
from model.scenario import (
    BUGS,
    KRAFT_BUGS,
    NEVER_FIXED,
    NOT_MODELLED_BUGS,
    NOT_MODELLED_KRAFT_BUGS,
    SUPPORTED_VERSIONS,
    BugSwitch,
    renamed_switch_hint,
    with_bug,
)

#: Every switch, the ZooKeeper controller's then the KRaft controller's (the names are distinct).
ALL_BUGS = {**BUGS, **KRAFT_BUGS}
#: The ``[kafka] version`` values a KRaft scenario takes (:data:`model.scenario.kraft.KRAFT_VERSION`).
KRAFT_VERSIONS = ("3.9",)


def versions_with(bug: BugSwitch) -> str:
    """The modelled versions whose default has the switch on, or why none has."""
    if bug.fixed_in is None:
        return "none (planted)"
    from model.scenario import parse_version as _version
    modelled = KRAFT_VERSIONS if bug.name in KRAFT_BUGS else SUPPORTED_VERSIONS
    had = [v for v in modelled if bug.default_for(_version(v))]
    fixed = "not fixed upstream" if bug.fixed_in == NEVER_FIXED else f"fixed in {bug.fixed_release}"
    if not had and bug.introduced_in >= bug.fixed_in:
        return f"none: no release had it ({fixed})"
    if not had and bug.name in KRAFT_BUGS:
        return f"none modelled: a KRaft scenario takes {modelled[0]} only ({fixed})"
    if not had:
        return f"before {modelled[0]} ({fixed})"
    span = had[0] if len(had) == 1 else f"{had[0]}-{had[-1]}"
    return f"{span} ({fixed})"


def _run(bug: BugSwitch, on: bool) -> ExplorationResult:
    return run_bfs(model_for(with_bug(resolve_scenario(bug.scenario), bug.name, on)))


def _list(bug: BugSwitch, verify: bool) -> bool:
    """Print one switch (and, with ``verify``, its searches); whether it is reproduced (True when not verified)."""
    click.echo(f"{bug.name}  {bug.jira or '(planted)'}: {bug.title}")
    click.echo(f"    versions: {versions_with(bug)}")
    click.echo(f"    breaks:   {bug.breaks}")
    click.echo(f"    scenario: {bug.scenario}")
    if not verify:
        click.echo("    reproduced: not checked here (run `kmc bugs --verify`)")
        return True
    on, off = _run(bug, on=True), _run(bug, on=False)
    reproduced = (on.outcome is Outcome.VIOLATION and bug.breaks in {v.property for v in on.violations}
                  and off.outcome is Outcome.OK)
    click.echo(f"    switch on:  {_describe(on)}")
    click.echo(f"    switch off: {_describe(off)}")
    click.echo(f"    reproduced: {'yes' if reproduced else 'NO'}")
    return reproduced


def _describe(result: ExplorationResult) -> str:
    violated = ", ".join(sorted({v.property for v in result.violations})) or "none"
    return (f"{result.outcome.value}, {result.stats.distinct:,} states, {result.stats.seconds:.1f} s, "
            f"violated: {violated}")


@click.command(help="List Kafka's controller bugs the model can re-introduce ([bugs] switches); with --verify, "
                    "explore each one's scenario with the switch on and off.")
@click.option("--verify", is_flag=True, help="Run each bug's scenario (local BFS) with its switch on and off.")
@click.option("--only", "only", multiple=True, metavar="NAME",
              help="With --verify: only this switch (repeatable), e.g. --only KAFKA_6650; with --versions: only this "
                   "row, a switch or a finding (--only \"finding 5\").")
@click.option("--versions", "versions", is_flag=True,
              help="Print the version matrix: for each finding and each switch, the Kafka versions where its "
                   "scenario violates its property with that version's defaults (runs the searches).")
def bugs(verify: bool, only: tuple[str, ...], versions: bool) -> None:
    if versions:
        from kmc.version_matrix import FINDINGS, matrix, switch_rows
        rows = [r for r in (*FINDINGS, *switch_rows()) if not only or r.label in only]
        click.echo(matrix(rows, progress=lambda label: click.echo(f"running {label}", err=True)))
        return
    for name in only:
        if name not in ALL_BUGS:
            fail(renamed_switch_hint("--only", name)
                 or f"--only {name!r} is not a bug switch; use one of {', '.join(sorted(ALL_BUGS))} (see `kmc bugs`).")
    reproduced_all = True
    tables = ((BUGS, NOT_MODELLED_BUGS, f"{sum(b.fixed_in is not None for b in BUGS.values())} of Kafka's bugs are "
               f"switches (and {sum(b.fixed_in is None for b in BUGS.values())} planted); not expressible in the "
               "model:"),
              (KRAFT_BUGS, NOT_MODELLED_KRAFT_BUGS, f"{len(KRAFT_BUGS)} of the KRaft controller's fixes are switches "
               "(KRaft scenarios, model/scenario/kraft_bugs.py); considered and not expressible in the model:"))
    for table, not_modelled, summary in tables:
        for bug in (b for b in table.values() if not only or b.name in only):
            reproduced_all &= _list(bug, verify)
        if not only:
            click.echo("")
            click.echo(summary)
            for jira, (title, why) in not_modelled.items():
                click.echo(f"{jira}: {title}")
                click.echo(f"    reproduced: no; {why}")
            if table is BUGS:
                click.echo("")
    if verify:
        sys.exit(Outcome.OK.exit_code if reproduced_all else Outcome.VIOLATION.exit_code)
