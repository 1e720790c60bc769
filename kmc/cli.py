"""The ``kmc`` command group: its commands, the exit-status mapping and one-sentence usage errors.

Each command lives in its own module under :mod:`kmc.commands`; this module only registers them.
Exit status: 0 no violation, 1 violation found, 2 bad usage or input, 3 inconclusive (see
:class:`explorer.results.Outcome`). Results go to stdout; progress and logs to stderr.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from kmc.commands import assign, explore, plan, properties, prove, report, scenarios, simulate, validate
from kmc.common import fail


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
            fail(f"{e.format_message()} (see `kmc {e.ctx.command.name if e.ctx else ''} --help`)")
        except click.ClickException as e:
            click.echo(f"kmc: {e.format_message()}", err=True)
            sys.exit(e.exit_code)
        except click.exceptions.Exit as e:
            sys.exit(e.exit_code)
        except click.Abort:
            fail("aborted.")


@click.group(cls=_Group, help="kmc: a model checker for Apache Kafka's ZooKeeper-era controller (Kafka 2.x).")
@click.version_option(package_name="kmc", prog_name="kmc")
def main() -> None:
    pass


for _command in (assign.assign, explore.explore, plan.plan, properties.properties, prove.prove, report.report,
                 scenarios.scenarios, simulate.simulate, validate.validate):
    main.add_command(_command)
