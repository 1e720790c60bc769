"""``kmc properties``: the named properties a scenario can check, one line each."""

from __future__ import annotations

import click

from invariants.registry import all_specs


@click.command(help="List the named properties kmc can check.")
def properties() -> None:
    specs = all_specs()
    width = max(len(s.name) for s in specs)
    for spec in specs:
        click.echo(f"{spec.name:<{width}}  {spec.kind.value:<16} {spec.group:<10} {spec.description}")
