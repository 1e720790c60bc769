"""The memoised broker and controller steps (model/zk/transition_memo.py) against the plain step, on every
transition of several scenarios: the same successors, with the same step logs."""

from __future__ import annotations

from collections import deque

import pytest

from kmc import compose
from model.zk.kafka_model import KafkaControllerModel

#: Scenarios whose broker steps read the controller (deletion callbacks, LeaderAndIsr responses of a failed
#: log directory), take a stale request, fail a StopReplica, or run beside a former controller, and whose
#: controller steps drop channels, answer controlled shutdowns, race ISR writes, reassign and fail over.
SCENARIOS = ("deletion-3brokers", "log-dir-failure", "controller-move", "stale-deletion-response", "kafka-7235",
             "topic-recreation", "controlled-shutdown", "isr-changes", "reassignment", "controller-failover",
             "kafka-5310", "add-partitions", "preferred-election")


def _transitions(model: KafkaControllerModel, limit: int):  # type: ignore[no-untyped-def]
    """Every (state, action) of a breadth-first walk over at most ``limit`` distinct states."""
    seen: set[bytes] = set()
    queue = deque(model.init_states())
    while queue and len(seen) < limit:
        state = queue.popleft()
        for action in model.actions(state):
            yield state, action
            child = model.next_state(state, action)
            if child is not None:
                data = model.encode(child)
                if data not in seen:
                    seen.add(data)
                    queue.append(model.decode(data))


@pytest.mark.parametrize("name", SCENARIOS)
def test_memoised_steps_equal_plain_steps(name: str) -> None:
    """Every successor of the memoised model equals the plain model's, state and step log, on the same states."""
    scenario = compose.resolve_scenario(name)
    memoised = KafkaControllerModel(scenario)
    plain = KafkaControllerModel(scenario, memo_entries=0)
    compared = 0
    for state, action in _transitions(memoised, 3000):
        expected = plain.next_state(state, action)
        actual = memoised.next_state(state, action)
        assert (actual is None) == (expected is None)
        if actual is not None and expected is not None:
            assert actual == expected, (name, action)
            assert actual.log == expected.log, (name, action)
            compared += 1
    assert compared > 0


def test_small_memo_is_emptied_and_still_agrees() -> None:
    """A memo bounded to a few situations empties itself when full and gives the plain step's successors."""
    scenario = compose.resolve_scenario("deletion-3brokers")
    memoised = KafkaControllerModel(scenario, memo_entries=3)
    plain = KafkaControllerModel(scenario, memo_entries=0)
    for state, action in _transitions(memoised, 500):
        assert memoised.next_state(state, action) == plain.next_state(state, action)
