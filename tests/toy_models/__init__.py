"""Toy implementations of the model contract, with state counts known independently of any explorer.

They test the explorers (``explorer/``, ``spark_explore/``) without the Kafka model: a bounded
counter whose numbers can be worked out by hand, Stateright's two-phase commit, and a port of the
TLA+ toy controller that TLC checks for the side-by-side benchmark.
"""
