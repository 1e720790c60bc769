"""The code derived from the state classes (the canonical encoding, the step's thaw and freeze, the broker
renaming of symmetry reduction), checked on arbitrary well-typed states (``tests/state_strategies.py``),
not only on the states shipped scenarios reach."""

from __future__ import annotations

from typing import Any

import attrs
from hypothesis import given
from hypothesis import strategies as st
from state_strategies import BROKERS, TOPICS, cluster_states, values_of

from kmc.compose import resolve_scenario
from model.zk.state.codec import Codec
from model.zk.state.schema import is_state_class, state_fields, strip
from model.zk.state.step import _CONTROLLER, _HISTORY, _ZK, Step
from model.zk.state.values import ClusterState
from model.zk.symmetry import BrokerSymmetry, rename_state, renamings

CODEC = Codec(TOPICS)  # warm: its memos fill up over the examples
SCENARIO = resolve_scenario("default")


def _state_classes(t: Any = ClusterState, found: dict[type, None] | None = None) -> list[type]:
    """Every state class a ClusterState holds, ClusterState first."""
    found = {} if found is None else found
    base = strip(t)
    if is_state_class(base):
        if base in found:
            return list(found)
        found[base] = None
        for f in state_fields(base):
            _state_classes(f.type, found)
    for arg in getattr(base, "__args__", ()):
        _state_classes(arg, found)
    return list(found)


STATE_FIELDS = [(cls, f) for cls in _state_classes() for f in state_fields(cls)]


@given(cluster_states())
def test_decode_inverts_encode_with_and_without_memos(s: ClusterState) -> None:
    """decode(encode(s)) == s, encoding is idempotent through decode, and the memoised, memo-free and fresh
    codecs give the same bytes."""
    data = CODEC.encode(s)
    assert CODEC.encode_plain(s) == data
    back = CODEC.decode(data)
    assert back == s
    assert CODEC.encode(back) == data
    fresh = Codec(TOPICS)
    assert fresh.decode(data) == s
    assert fresh.encode(s) == data


@given(cluster_states(full=True), st.data())
def test_every_field_changes_the_bytes(s: ClusterState, data: st.DataObject) -> None:
    """For every field of every state class, a state differing from another only in that field encodes
    differently (a field the codec forgot would encode the same)."""
    before = CODEC.encode_plain(s)
    for cls, f in STATE_FIELDS:
        def other_value(v: Any, f: Any = f) -> Any:
            old = getattr(v, f.name)
            new = data.draw(values_of(f.type, f.shape, f.sort_key).filter(lambda x: x != old))
            return attrs.evolve(v, **{f.name: new})
        changed = _replace_first(s, cls, other_value)
        assert changed is not None, f"no {cls.__name__} in a full state"
        assert changed != s
        assert CODEC.encode_plain(changed) != before, f"{cls.__name__}.{f.name} is not encoded"


def _replace_first(value: Any, cls: type, change: Any) -> Any | None:
    """``value`` with its first ``cls`` value (depth first) replaced by ``change(it)``; None if it has none."""
    if isinstance(value, cls):
        return change(value)
    if attrs.has(type(value)):
        for f in state_fields(type(value)):
            new = _replace_first(getattr(value, f.name), cls, change)
            if new is not None:
                return attrs.evolve(value, **{f.name: new})
    if isinstance(value, tuple):
        for i, item in enumerate(value):
            new = _replace_first(item, cls, change)
            if new is not None:
                return (*value[:i], new, *value[i + 1:])
    return None


@given(cluster_states(), st.permutations(BROKERS))
def test_renaming_is_a_group_action(s: ClusterState, image: list[int]) -> None:
    """Renaming by a permutation then by its inverse gives the state back; the identity renames nothing."""
    m = {b: i for b, i in zip(BROKERS, image, strict=True) if b != i}
    inverse = {i: b for b, i in m.items()}
    renamed = rename_state(s, m)
    assert rename_state(renamed, inverse) == s
    assert rename_state(s, {}) is s
    assert CODEC.decode(CODEC.encode(renamed)) == renamed


@given(cluster_states(), st.data())
def test_renamed_states_have_one_canonical_encoding(s: ClusterState, data: st.DataObject) -> None:
    """A state renamed by any permutation of its brokers' ids has the state's canonical bytes."""
    ids = tuple(b.id for b in s.brokers)
    symmetry = BrokerSymmetry((ids,), renamings((ids,)))
    image = data.draw(st.permutations(ids))
    renamed = rename_state(s, dict(zip(ids, image, strict=True)))
    assert symmetry.canonical_encode(renamed, CODEC.encode) == symmetry.canonical_encode(s, CODEC.encode)


@given(cluster_states())
def test_a_step_thaws_and_freezes_every_field(s: ClusterState) -> None:
    """A step that thawed every ZooKeeper, controller and history field and changed none freezes to the same
    values."""
    step = Step(SCENARIO, s)
    for thaw in (_ZK, _CONTROLLER, _HISTORY):
        for attr in thaw.lazy_attrs:
            getattr(step, attr)
    assert _ZK.freeze(step, s.zk) == s.zk
    assert step.controller_state() == s.controller
    assert _HISTORY.freeze(step, s.history) == s.history
