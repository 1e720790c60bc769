"""The enumeration of enabled actions (model/zk/actions.py's ``enabled_actions``) against every family asked in
every state: the same actions in the same order, on walks of many scenarios, and the same action objects for
equal actions."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import pytest

from kmc import compose
from model.zk.actions import FAMILIES, Action, Enabling, enabled_actions
from model.zk.kafka_model import KafkaControllerModel
from model.zk.state.values import ClusterState

SCENARIO_DIR = Path(__file__).resolve().parent.parent / "model" / "scenario" / "scenarios"
NAMES = sorted(p.stem for p in SCENARIO_DIR.glob("*.toml"))


def _every_family(model: KafkaControllerModel, state: ClusterState) -> list[Action]:
    e = Enabling.of(model.scenario, state)
    return [action for family in FAMILIES for action in family.enabled(e)]


def _states(model: KafkaControllerModel, limit: int) -> list[ClusterState]:
    seen: set[bytes] = set()
    queue, states = deque(model.init_states()), []
    while queue and len(seen) < limit:
        state = queue.popleft()
        states.append(state)
        for action in model.actions(state):
            child = model.next_state(state, action)
            if child is not None:
                data = model.encode(child)
                if data not in seen:
                    seen.add(data)
                    queue.append(model.decode(data))
    return states


def test_the_scenarios_are_found() -> None:
    assert len(NAMES) > 20


def test_equal_actions_are_one_object() -> None:
    """The enumeration hands out one object per action (the memos key on actions: identity spares comparisons)."""
    model = KafkaControllerModel(compose.resolve_scenario("default"))
    state = model.init_states()[0]
    assert all(a is b for a, b in zip(model.actions(state), model.actions(state), strict=True))


@pytest.mark.parametrize("name", NAMES)
def test_enabled_actions_are_every_familys_in_order(name: str) -> None:
    """Families left out for a scenario have no action in its states; the others give theirs in order."""
    model = compose.model_for(compose.resolve_scenario(name))
    if not isinstance(model, KafkaControllerModel):
        pytest.skip("a KRaft scenario: model/kraft enumerates its own actions")
    for state in _states(model, 400):
        assert enabled_actions(model.scenario, state) == _every_family(model, state), name
