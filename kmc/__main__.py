"""``python -m kmc``: the same command line as the ``kmc`` console script."""

from kmc.cli import main

main(prog_name="kmc")
