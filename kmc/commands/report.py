"""``kmc report RUN_DIR``: re-render a run's bundle from its ``summary.json``.

The renderers read only the document (:mod:`reports.bundle`), so a bundle re-rendered by a later
kmc, or after a file was deleted, has the same content as the one the run wrote. ``--format``
picks one kind of file (``text``, ``md``, ``html``, ``itf``, ``replay``; all by default);
``--open`` prints the path of ``report.html`` (rendering it if it is missing) for a browser.
"""

from __future__ import annotations

from pathlib import Path

import click

from kmc.common import SafePath, fail, read_summary
from kmc.outputs import write_bundle

FORMATS = ("text", "md", "html", "itf", "replay")


@click.command(help="Re-render the reports of a run directory (report.txt, report.md, report.html, ITF traces, "
                    "replay scripts) from its summary.json.")
@click.argument("run_dir", type=SafePath(path_type=Path))
@click.option("--format", "formats", type=click.Choice(FORMATS), multiple=True,
              help="The kind of file to re-render (repeatable; default: all of them).")
@click.option("--open", "open_", is_flag=True, help="Print the path of report.html (rendered if missing).")
def report(run_dir: Path, formats: tuple[str, ...], open_: bool) -> None:
    from reports.bundle import BundleError

    document = read_summary(run_dir)
    wanted = formats or (() if open_ else FORMATS)
    if open_ and not (run_dir / "report.html").is_file():
        wanted = (*wanted, "html")
    try:
        files = write_bundle(run_dir, document, wanted) if wanted else {}
    except BundleError as e:
        fail(str(e))
    for name in sorted(files):
        click.echo(str(run_dir / name))
    if open_:
        click.echo(str((run_dir / "report.html").resolve()))
