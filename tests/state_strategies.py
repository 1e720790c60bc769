"""Hypothesis strategies for *arbitrary* well-typed states of the Kafka model, derived from the state classes.

Every field of every state class gets values of its declared type, reachable or not: the codec, the
step's thaw and freeze and the symmetry renaming are derived from the same declarations, and these
states test them on what no shipped scenario reaches. Fields declared as sets or maps (metadata ``SET``,
``MAP``) are drawn sorted with unique keys, as the model keeps them; broker ids come from
:data:`BROKERS` (and ``-1``, ``NoLeader``), topic names from :data:`TOPICS` (and ``""``).
"""

from __future__ import annotations

import enum
import operator
from typing import Any

from hypothesis import strategies as st

from model.zk.state.schema import (
    Shape,
    is_broker_id,
    is_state_class,
    optional_of,
    record_of,
    sequence_of,
    state_fields,
    strip,
)
from model.zk.state.values import ClusterState

TOPICS = ("t", "u")
BROKERS = (0, 1, 2, 3)


def values_of(t: Any, shape: Shape = Shape.SEQUENCE, sort_key: str | None = None, *,
              full: bool = False) -> st.SearchStrategy[Any]:
    """Values of type ``t``; ``full``: every tuple has an element and every optional a value, so that every
    state class occurs in a value drawn."""
    base = strip(t)
    if is_broker_id(t):
        return st.sampled_from((-1, *BROKERS))
    if base is bool:
        return st.booleans()
    if isinstance(base, type) and issubclass(base, enum.IntEnum):
        return st.sampled_from(list(base))
    if base is int:
        return st.integers(-2, 6)
    if base is str:
        return st.sampled_from(("", *TOPICS))
    element = sequence_of(t)
    if element is not None:
        elements = values_of(element, full=full)
        size = {"min_size": 1 if full else 0, "max_size": 2}
        if shape is Shape.SET:
            return st.lists(elements, unique=True, **size).map(lambda xs: tuple(sorted(xs)))
        if shape is Shape.MAP:
            key = operator.attrgetter(sort_key) if sort_key else operator.itemgetter(0)
            return st.lists(elements, unique_by=key, **size).map(lambda xs: tuple(sorted(xs, key=key)))
        return st.lists(elements, **size).map(tuple)
    record = record_of(t)
    if record is not None:
        return st.tuples(*(values_of(a, full=full) for a in record))
    inner = optional_of(t)
    if inner is not None:
        return values_of(inner, full=full) if full else st.none() | values_of(inner)
    if is_state_class(base):
        return st.builds(base, **{f.name: values_of(f.type, f.shape, f.sort_key, full=full)
                                  for f in state_fields(base)})
    raise TypeError(f"no strategy for {t!r}")


def cluster_states(*, full: bool = False) -> st.SearchStrategy[ClusterState]:
    """Arbitrary well-typed :class:`ClusterState` values (see the module docstring)."""
    strategy: st.SearchStrategy[ClusterState] = values_of(ClusterState, full=full)
    return strategy
