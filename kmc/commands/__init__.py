"""One module per ``kmc`` command; :mod:`kmc.cli` registers each of them on the group."""
