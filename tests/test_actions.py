"""The table of actions (model/zk/actions.py): every kind has one row, one family that enables it, and a
view in the reports; the names printed for actions are the kinds' names."""

from __future__ import annotations

from model.present import view
from model.zk.actions import ACTIONS, FAMILIES, Action, ActionKind, Actor, Enabling
from tests.kafka_steps import initial, model_of

TOML = """
[cluster]
brokers = [0, 1]
[[topics]]
name = "t"
replicas = [[0, 1]]
deleted_by_admin = true
[bounds]
broker_failures = 1
isr_changes = 1
"""


def test_every_kind_has_a_row_a_family_and_a_view() -> None:
    """Each ActionKind is in ACTIONS, in exactly one family of FAMILIES, and in the reports' step views."""
    assert set(ACTIONS) == set(ActionKind)
    in_families = [k for family in FAMILIES for k in family.kinds]
    assert sorted(in_families) == sorted(ActionKind)
    assert set(view._STEP_VIEWS) == set(ActionKind)


def test_families_enable_only_their_own_kinds() -> None:
    """Each family's enabling conditions yield actions of the kinds it declares, in the model's order."""
    model = model_of(TOML)
    s = initial(model)
    seen = []
    for family in FAMILIES:
        for action in family.enabled(Enabling.of(model.scenario, s)):
            assert action.kind in family.kinds
            seen.append(action)
    assert seen == list(model.actions(s))


def test_names_and_descriptions_are_the_kinds() -> None:
    """action_name and describe_action print the kind's name (and the ISR change a raced step carries)."""
    model = model_of(TOML)
    race = Action(ActionKind.ControllerProcessEvent, 0, "t", 0, 1, isr_race=ActionKind.LeaderShrinksIsr)
    assert model.action_name(race) == "ControllerProcessEvent+LeaderShrinksIsr"
    assert model.describe_action(race) == ("ControllerProcessEvent(with LeaderShrinksIsr(leader=0, t-0, "
                                           "follower=1) between a read and a write)")
    assert model.describe_action(Action(ActionKind.BrokerFailure, 1)) == "BrokerFailure(broker=1)"
    assert model.describe_action(Action(ActionKind.AdminDeleteTopic, topic="t")) == "AdminDeleteTopic(topic=t)"
    assert ACTIONS[ActionKind.ZombieControllerProcessEvent].actor is Actor.FORMER_CONTROLLER
