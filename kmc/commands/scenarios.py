"""``kmc scenarios``: the scenarios that ship with kmc, with the first words of their description."""

from __future__ import annotations

import click

from kmc.compose import shipped_scenarios
from model.scenario import load_scenario_file


@click.command(help="List the scenarios that ship with kmc.")
def scenarios() -> None:
    for name, path in sorted(shipped_scenarios().items()):
        sc = load_scenario_file(path)
        first = " ".join(sc.description.split())
        click.echo(f"{name:<36} {first}")
