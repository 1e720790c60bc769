"""``python -m kmc``: the same command line as the ``kmc`` console script (signals handled from the start)."""

from kmc.launch import main

main()
