"""The Kafka model's canonical encoding (``model.zk.state.codec.Codec``) and the parts a step keeps.

The codec remembers the bytes of the parts it read (by object) and the parts behind bytes it read (by
bytes): these memos must change its speed only. Every test below compares against
:meth:`Codec.encode_plain`, the codec without memos, over every state of a few small shipped scenarios,
including a codec whose memos are emptied all the time, a codec that travelled through pickle (as to a
Spark worker), and a fresh Python process with another hash seed.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import subprocess
import sys
from functools import cache
from pathlib import Path

import attrs
import pytest

from kmc.compose import model_for, resolve_scenario
from model.zk.kafka_model import KafkaControllerModel
from model.zk.state.codec import Codec
from model.zk.state.step import Step
from model.zk.state.values import ClusterState, StepLog

#: Small shipped scenarios with between them brokers dying and restarting, deletions, a reassignment, a
#: controlled shutdown and a zombie controller (55 to 1,227 states each); isr-changes (1,469) below.
SCENARIOS = ("delete-disabled", "reassignment", "controlled-shutdown", "kafka-6082")


@cache
def _explored(name: str) -> tuple[KafkaControllerModel, tuple[ClusterState, ...], tuple[bytes, ...]]:
    """The scenario's model and every reachable state, breadth first: the successors as the step made
    them, and each one's bytes from the model's (memoised) codec, the expanded states decoded from
    those bytes as the local search does."""
    model = model_for(resolve_scenario(name))
    states: list[ClusterState] = []
    encoded: list[bytes] = []
    seen: set[bytes] = set()
    frontier = []
    for s in model.init_states():
        data = model.encode(s)
        seen.add(data)
        states.append(s)
        encoded.append(data)
        frontier.append(data)
    while frontier:
        next_frontier = []
        for data in frontier:
            state = model.decode(data)
            for action in model.actions(state):
                child = model.next_state(state, action)
                if child is None:
                    continue
                child_data = model.encode(child)
                if child_data not in seen:
                    seen.add(child_data)
                    states.append(child)
                    encoded.append(child_data)
                    next_frontier.append(child_data)
        frontier = next_frontier
    return model, tuple(states), tuple(encoded)


def _digest(encoded: tuple[bytes, ...]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for data in encoded:
        h.update(len(data).to_bytes(4, "little"))
        h.update(data)
    return h.hexdigest()


@pytest.mark.parametrize("name", SCENARIOS)
def test_memoised_bytes_are_the_plain_bytes_and_round_trip(name: str) -> None:
    """For every reachable state, the memoised encoding equals the memo-free one, and decoding it (with the
    warm codec and with a fresh one) gives back an equal state with the same bytes."""
    model, states, encoded = _explored(name)
    fresh = Codec(model.codec.topic_names)
    for state, data in zip(states, encoded, strict=True):
        assert model.codec.encode_plain(state) == data
        back = model.decode(data)
        assert back == state
        assert model.encode(back) == data
        again = fresh.decode(data)
        assert again == state
        assert fresh.encode(again) == data


def test_memos_stay_bounded_and_do_not_change_the_bytes() -> None:
    """A codec whose memos hold at most 5 parts (emptied over and over) encodes and decodes every state as
    the plain codec does, and never holds more than its bound."""
    model, states, encoded = _explored("isr-changes")
    small = Codec(model.codec.topic_names, memo_parts=5)
    for state, data in zip(states, encoded, strict=True):
        back = small.decode(data)
        assert back == state
        assert small.encode(back) == data
        assert small.encode(state) == data
        assert small.memo_size() <= 5
    assert 0 < model.codec.memo_size() <= model.codec.memo_parts


def test_a_pickled_codec_leaves_its_memos_behind() -> None:
    """A codec pickled (as the model is for Spark workers) carries no memo and encodes every state to the
    same bytes."""
    model, _, encoded = _explored("controlled-shutdown")
    assert model.codec.memo_size() > 0
    payload = pickle.dumps(model.codec)
    travelled = pickle.loads(payload)
    assert travelled.memo_size() == 0
    assert len(payload) < 1000
    assert [travelled.encode(travelled.decode(data)) for data in encoded] == list(encoded)


def test_bytes_are_the_same_in_a_fresh_process() -> None:
    """Another Python process, with another hash seed, encodes every state of a scenario to the same bytes."""
    name = "controlled-shutdown"
    _, _, encoded = _explored(name)
    script = ("import sys, test_codec as t; _, _, encoded = t._explored(sys.argv[1]); print(t._digest(encoded))")
    tests = Path(__file__).parent
    env = {**os.environ, "PYTHONHASHSEED": "12345",
           "PYTHONPATH": os.pathsep.join([str(tests), str(tests.parent), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", script, name], env=env, capture_output=True, text=True, check=True,
                         timeout=120)
    assert out.stdout.strip() == _digest(encoded)


def test_a_step_keeps_the_parts_it_did_not_change() -> None:
    """Thawing a state and freezing it again without a change gives back its own parts (the same objects),
    which the codec writes by copying their remembered bytes."""
    model, states, _ = _explored("isr-changes")
    for s in states[:300]:
        again = Step(model.scenario, s).freeze()
        assert again == s
        assert again.zk is s.zk and again.controller is s.controller
        assert again.brokers is s.brokers and again.channels is s.channels and again.history is s.history
        step = Step(model.scenario, s)
        assert step.zk_partitions == dict(s.zk.partitions) and step.brokers == {b.id: b for b in s.brokers}
        read_only = step.freeze()
        assert read_only.zk is s.zk and read_only.brokers is s.brokers


def test_intern_gives_an_equal_part_and_the_same_one_for_equal_parts() -> None:
    """``Codec.intern`` (through which the transition memos store their effects' parts) gives back, for every part of
    every state of a scenario, an equal part, and one object for equal parts; a codec without memos gives the part
    itself."""
    model, states, _ = _explored("controlled-shutdown")
    codec = Codec(model.codec.topic_names)
    plain = Codec(model.codec.topic_names, memo_parts=0)
    interned: dict[tuple[type, str], object] = {}
    for s in states:
        for part in (s.zk, s.controller, s.budget, s.history, *s.brokers, *(r for _, q in s.channels for r in q)):
            copy = attrs.evolve(part)  # an equal part, another object
            found = codec.intern(copy)
            assert found == part
            assert plain.intern(copy) is copy
            assert interned.setdefault((type(part), repr(part)), found) is found


@pytest.mark.parametrize("name", (*SCENARIOS, "kafka-6650"))
def test_intern_state_is_the_state_its_bytes_decode_to(name: str) -> None:
    """``Codec.intern_state`` (through which the local BFS keeps its new states instead of their bytes) gives, for
    every state a step made, the state decoding its bytes gives: equal, the same bytes, every part and table the
    very object decode() returns (so that the transition memos, keyed on identities, hit as they would on the
    decoded state), and the fields left out of the bytes at their defaults. With the codec that made the states'
    parts (most known by identity) and with a fresh one (none known); a codec without memos gives an equal state."""
    model, states, encoded = _explored(name)
    for codec in (model.codec, Codec(model.codec.topic_names)):
        for s, data in zip(states, encoded, strict=True):
            kept = codec.intern_state(s)
            decoded = codec.decode(data)
            assert kept == s and codec.encode(kept) == data
            for field in ("zk", "controller", "brokers", "channels", "budget", "history", "zombie"):
                assert getattr(kept, field) is getattr(decoded, field) or not getattr(kept, field), field
            assert all(a is b for (_, qa), (_, qb) in zip(kept.channels, decoded.channels, strict=True)
                       for a, b in zip(qa, qb, strict=True))
            assert kept.log == StepLog()
            assert all(e.broker_epoch == -1 for e in kept.controller.events)
    assert any(s.log != StepLog() for s in states)  # the steps' logs were there to leave out
    if name == "kafka-6650":  # a deletion's StopReplica responses carry the broker epoch, a report's annotation
        assert any(e.broker_epoch != -1 for s in states for e in s.controller.events)
    plain = Codec(model.codec.topic_names, memo_parts=0)
    for s, data in zip(states, encoded, strict=True):
        assert plain.intern_state(s) == s and plain.encode(plain.intern_state(s)) == data


def _held(state: ClusterState) -> list[object]:
    """The parts and (non-empty) tables ``state`` holds, walked field by field without the codec's generated code."""
    def with_tables(part: object) -> list[object]:
        return [part, *(t for t in attrs.astuple(part, recurse=False) if isinstance(t, tuple) and t)]

    held: list[object] = [*with_tables(state.zk), *with_tables(state.controller), state.budget, state.history]
    if state.zombie is not None:
        held += with_tables(state.zombie)
    if state.brokers:
        held += [state.brokers, *state.brokers]
    if state.channels:
        held += [state.channels, *(r for _, queue in state.channels for r in queue)]
    return held


def test_retain_keeps_what_the_states_hold_and_forgets_the_rest() -> None:
    """After ``Codec.retain(states)`` every part and table the states hold is still known by identity (written by
    copying its bytes) and the parts no state holds are forgotten; the bytes, decode() and intern_state() are
    unchanged for the states kept and for the others."""
    model, states, encoded = _explored("reassignment")
    codec = Codec(model.codec.topic_names)
    interned = [codec.intern_state(s) for s in states]
    kept = interned[len(interned) // 2:]
    before = codec.memo_size()
    codec.retain(kept)
    assert 0 < codec.memo_size() < before
    known = {i for memo in codec._memos for i in memo.written}
    assert all(id(part) in known for s in kept for part in _held(s))
    live = {id(part) for s in kept for part in _held(s)}
    assert known <= live
    assert any(id(s.controller) not in live for s in interned[:len(interned) // 2])
    for s, data in zip(interned, encoded, strict=True):
        assert codec.encode(s) == data == codec.encode_plain(s)
        assert codec.decode(data) == s
        assert codec.encode(codec.intern_state(s)) == data
    codec.retain(())
    assert codec.memo_size() == 0
    assert [codec.encode(codec.decode(data)) for data in encoded] == list(encoded)
