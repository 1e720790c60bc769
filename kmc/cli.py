"""The ``kmc`` command group: its commands, the exit-status mapping, one-line errors and interrupts.

Each command lives in its own module under :mod:`kmc.commands`; this module only registers them.
Exit status: 0 no violation, 1 violation found, 2 bad usage or input, 3 inconclusive (a bound or
budget hit, or an interrupt), 4 an internal error of kmc (see :class:`explorer.results.Outcome`).
Results go to stdout; progress and logs to stderr.

Whatever happens, the user gets one line on stderr, never a traceback: usage errors as click
reports them, SIGINT and SIGTERM as "interrupted" (:class:`kmc.common.Interrupts`), and an
unexpected exception as a kmc defect whose traceback is written to a file (never status 1, which
means a violation was found).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from explorer.results import Outcome
from kmc.commands import assign, bugs, explore, plan, properties, prove, report, scenarios, simulate, ui, validate
from kmc.common import Interrupted, Interrupts, KmcDefect, defect_sentence, fail, write_traceback


class _Group(click.Group):
    """Turns click's usage errors into one line and exit status 2, interrupts into one line and
    exit status 3, and unexpected exceptions into one line and exit status 4."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        interrupts = Interrupts()
        interrupts.install()
        try:
            return super().main(*args, **{**kwargs, "standalone_mode": False, "obj": interrupts})
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
        except (click.Abort, KeyboardInterrupt, Interrupted) as e:
            name = e.signal_name if isinstance(e, Interrupted) else "SIGINT"
            click.echo(f"kmc: interrupted by {name}; the command did not finish.", err=True)
            sys.exit(Outcome.INCONCLUSIVE.exit_code)
        except KmcDefect as e:
            click.echo(f"kmc: {e}", err=True)
            sys.exit(Outcome.INTERNAL_ERROR.exit_code)
        except Exception as e:
            click.echo(f"kmc: {defect_sentence(e, write_traceback(e, None))}", err=True)
            sys.exit(Outcome.INTERNAL_ERROR.exit_code)
        finally:
            interrupts.uninstall()


@click.group(cls=_Group, help="kmc: a model checker for Apache Kafka's ZooKeeper-era controller (Kafka 2.x).")
@click.version_option(package_name="kmc", prog_name="kmc")
def main() -> None:
    pass


for _command in (assign.assign, bugs.bugs, explore.explore, plan.plan, properties.properties, prove.prove,
                 report.report, scenarios.scenarios, simulate.simulate, ui.ui, validate.validate):
    main.add_command(_command)
