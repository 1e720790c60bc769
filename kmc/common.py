"""What every ``kmc`` command shares: one-sentence errors with exit status 2, and run files.

Bad usage or input is reported as ``kmc: <one sentence>`` on stderr with exit status 2
(:data:`explorer.results.Outcome.BAD_INPUT`), never as a traceback. Run files are written
atomically, so an interrupted run never leaves a half-written report behind.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import NoReturn

import click

from explorer.results import Outcome


class UsageProblem(Exception):
    """Bad usage or input: reported as one sentence, exit status 2."""


def fail(message: str) -> NoReturn:
    """Print ``kmc: <message>`` on stderr and exit with the bad-input status (2)."""
    click.echo(f"kmc: {message}", err=True)
    sys.exit(Outcome.BAD_INPUT.exit_code)


def new_run_dir(out: Path, scenario_name: str) -> Path:
    """A fresh ``<out>/<timestamp>-<scenario>`` directory name (suffixed ``-2``, ``-3``… if taken)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = out / f"{stamp}-{scenario_name}"
    candidate, n = base, 1
    while candidate.exists():
        n += 1
        candidate = Path(f"{base}-{n}")
    return candidate


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename: readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
