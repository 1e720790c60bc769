"""The ``spark-submit`` driver: ``kmc explore --engine spark`` on the master spark-submit was given.

``spark-submit … main.py SCENARIO.toml --out RUN_ROOT [--max-depth N] …`` takes the options of
``kmc explore`` (:func:`kmc.compose.spark_submit_arguments` writes this command and ships this file
as ``main.py``). The session is started first, from what spark-submit configured, so that the
exploration reuses it, and its master is the one the exploration is told; a scenario shipped with
``--files`` is found where Spark put it. The rest is the ``kmc`` command line, the one composition root.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    from spark_explore.session import build_session

    session = build_session(None)
    try:
        if args and not args[0].startswith("-"):
            args[0] = _shipped_file(args[0])
        from kmc.cli import main as kmc

        if "--master" not in args:  # the master spark-submit was given: the search plans its tasks by it
            args += ["--master", str(session.sparkContext.master)]
        kmc(["explore", *args, "--engine", "spark"], prog_name="kmc")
    finally:
        session.stop()


def _shipped_file(name: str) -> str:
    """The local path of a file given to spark-submit with ``--files`` (``name`` if it exists as is)."""
    if Path(name).exists():
        return name
    from pyspark import SparkFiles

    shipped = Path(SparkFiles.get(Path(name).name))
    return str(shipped) if shipped.exists() else name


if __name__ == "__main__":
    main()
