"""The KRaft model's admin requests: CreateTopics (ReplicationControlManager.createTopic with StripedReplicaPlacer),
DeleteTopics (RemoveTopicRecord, brokers deleting their replicas on replay) and IncrementalAlterConfigs of
min.insync.replicas (a ConfigRecord the controller's elections and the leaders' produce read); their scenario syntax
and its refusals."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from invariants.kraft_properties import deleted_topic_hosted_nowhere
from kmc.compose import model_for
from model.admin.striped_replica_placer import JavaRandom, UsableBroker, striped_place
from model.kraft import replication_control as rc
from model.kraft.actions import NO_BROKER, Action, ActionKind
from model.kraft.records import (
    ConfigRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
    replay,
)
from model.kraft.state import PartitionLog
from model.scenario import ScenarioError, load_scenario

SCENARIOS = Path(__file__).resolve().parent.parent / "model" / "scenario" / "scenarios" / "kraft"
DELETION = (SCENARIOS / "kraft-topic-deletion.toml").read_text(encoding="utf-8")
MIN_ISR = (SCENARIOS / "kraft-min-isr-lowered-elr.toml").read_text(encoding="utf-8")


def _take(model, state, action: Action):
    assert action in model.actions(state), (action, [model.describe_action(a) for a in model.actions(state)])
    after = model.next_state(state, action)
    assert after is not None
    return after


def test_create_topics_places_replicas_with_the_striped_replica_placer_and_appends_its_records() -> None:
    """CreateTopics of "events" (partition index 1): a TopicRecord and one PartitionRecord whose replicas are
    StripedReplicaPlacer's from new Random(seed), ISR the active replicas, leader the first of them."""
    model = model_for(load_scenario(DELETION))
    state = _take(model, model.init_states()[0], Action(ActionKind.CreateTopics, NO_BROKER, topic="events"))
    [placed] = striped_place([UsableBroker(0), UsableBroker(1)], 1, 2, JavaRandom(0))
    assert state.metadata_log[-2:] == (TopicRecord(name="events"),
                                       PartitionRecord(partition=1, replicas=placed, isr=placed, leader=placed[0]))
    assert state.image.topics == ("orders", "events")
    assert state.budget.topic_creations == 1
    assert not any(a.kind is ActionKind.CreateTopics for a in model.actions(state))


def test_create_topic_errors() -> None:
    """TOPIC_ALREADY_EXISTS; INVALID_REPLICATION_FACTOR when every broker is fenced (the placer) or every placed
    replica is inactive; INVALID_REPLICA_ASSIGNMENT for a manual assignment with no active broker."""
    scenario = load_scenario(DELETION)
    settings = scenario.kraft
    assert settings is not None
    model = model_for(scenario)
    image = model.init_states()[0].image
    events, orders = settings.topic("events"), settings.topic("orders")
    assert rc.create_topic(image, settings, orders, (), {})[0] == "TOPIC_ALREADY_EXISTS"
    assert rc.create_topic(image, settings, events, (), {})[0] == rc.NONE
    fenced = attrs.evolve(image, brokers=tuple(attrs.evolve(b, fenced=True) for b in image.brokers))
    assert rc.create_topic(fenced, settings, events, (), {}) == ("INVALID_REPLICATION_FACTOR", [])
    assert rc.create_topic(image, settings, events, (0, 1), {}) == ("INVALID_REPLICATION_FACTOR", [])
    manual = attrs.evolve(events, replicas=((0, 1),))
    assert rc.create_topic(fenced, settings, manual, (), {}) == ("INVALID_REPLICA_ASSIGNMENT", [])
    one_fenced = attrs.evolve(image, brokers=(image.brokers[0], attrs.evolve(image.brokers[1], fenced=True)))
    error, records = rc.create_topic(one_fenced, settings, manual, (), {})
    assert error == rc.NONE and records[-1] == PartitionRecord(partition=1, replicas=(0, 1), isr=(0,), leader=0)


def test_deleting_a_topic_removes_it_from_the_image_and_every_replica_deletes_its_log_on_replay() -> None:
    """DeleteTopics appends a RemoveTopicRecord; the replay drops the topic, its partitions and its configuration;
    a broker replaying it stops leading and deletes its log (ReplicaManager.applyDelta's deletes)."""
    model = model_for(load_scenario(DELETION))
    state = model.init_states()[0]
    state = _take(model, state, Action(ActionKind.Produce, 0, 0))
    state = _take(model, state, Action(ActionKind.Fetch, 1, 0))
    assert all(b.logs[0].records for b in state.brokers)
    state = _take(model, state, Action(ActionKind.DeleteTopics, NO_BROKER, topic="orders"))
    assert state.metadata_log[-1] == RemoveTopicRecord(name="orders", partitions=(0,))
    assert state.image.partitions[0] is None and "orders" not in state.image.topics
    assert rc.delete_topic(state.image, model.scenario.kraft, "orders")[0] == "UNKNOWN_TOPIC_OR_PARTITION"
    assert deleted_topic_hosted_nowhere(state) is None  # neither broker has replayed the record yet
    for broker in (0, 1):
        state = _take(model, state, Action(ActionKind.ReplayMetadataRecord, broker))
        b = state.brokers[broker]
        assert b.logs[0] == PartitionLog() and b.leading[0] is None
    assert deleted_topic_hosted_nowhere(state) is None
    kept = attrs.evolve(state, brokers=(attrs.evolve(state.brokers[0], logs=(PartitionLog(records=(0,)),
                                                                              *state.brokers[0].logs[1:])),
                                        state.brokers[1]))
    assert deleted_topic_hosted_nowhere(kept) == {"topic": "orders", "partition": 0, "broker": 0, "log": [0],
                                                  "leading": False}


def test_a_config_record_sets_min_isr_which_leaders_apply_once_they_have_replayed_it() -> None:
    """IncrementalAlterConfigs writes a ConfigRecord (none when the value is the topic's already); a leader whose
    image lacks it still refuses a produce below the old min.insync.replicas, and accepts it after its replay."""
    model = model_for(load_scenario(MIN_ISR))
    state = model.init_states()[0]
    state = _take(model, state, Action(ActionKind.SessionExpiry, 1))
    state = _take(model, state, Action(ActionKind.ReplayMetadataRecord, 0))
    assert Action(ActionKind.Produce, 0, 0) not in model.actions(state)  # ISR [0] below min ISR 2
    state = _take(model, state, Action(ActionKind.IncrementalAlterConfigs, NO_BROKER, topic="orders", value=1))
    assert state.metadata_log[-1] == ConfigRecord(resource_name="orders", value=1)
    assert state.image.min_insync_replicas == (("orders", 1),)
    assert replay(state.metadata_log).min_insync_replicas == (("orders", 1),)
    assert rc.incremental_alter_min_isr(state.image, "orders", 1) == (rc.NONE, [])
    assert Action(ActionKind.Produce, 0, 0) not in model.actions(state)  # broker 0 has not replayed it
    state = _take(model, state, Action(ActionKind.ReplayMetadataRecord, 0))
    assert Action(ActionKind.Produce, 0, 0) in model.actions(state)
    assert not any(a.kind is ActionKind.IncrementalAlterConfigs for a in model.actions(state))  # bound spent


def test_the_effective_min_isr_is_capped_at_the_replication_factor() -> None:
    """getTopicEffectiveMinIsr and Partition.effectiveMinIsr: min(min.insync.replicas, replication factor)."""
    image = replay([TopicRecord(name="t"), PartitionRecord(partition=0, replicas=(0, 1), isr=(0, 1), leader=0),
                    ConfigRecord(resource_name="t", value=3)])
    assert image.effective_min_isr(0, "t", 1) == 2
    assert replay([*[TopicRecord(name="t"), PartitionRecord(partition=0, replicas=(0, 1), isr=(0, 1), leader=0)],
                   ConfigRecord(resource_name="t", value=None)]).effective_min_isr(0, "t", 1) == 1


@pytest.mark.parametrize(("edit", "message"), [
    (('created = "by_admin"', 'created = "later"'), "created = 'later' must be \"initially\" or \"by_admin\""),
    (("replication_factor = 2", "replication_factor = 3"), "replication_factor = 3 exceeds the 2 brokers"),
    (("replication_factor = 2", "replication_factor = 0"), "replication_factor = 0 must be at least 1"),
    (("topic_creations = 1", "topic_creations = 0"),
     "topic 'events' has created = \"by_admin\" but \\[bounds\\] topic_creations = 0"),
    (("deleted_by_admin = true", "deleted_by_admin = false"),
     "\\[bounds\\] topic_deletions = 1 has no topic to act on"),
    (('name = "events"\ncreated = "by_admin"', 'name = "events"'),
     "a topic present from the start has a given assignment"),
    (("partitions = 1\n", "partitions = 1\nreplicas = [[0, 1]]\n"), "gives both replicas and partitions"),
])
def test_bad_admin_values_are_refused_in_one_sentence(edit: tuple[str, str], message: str) -> None:
    text = DELETION.replace(*edit)
    assert text != DELETION
    with pytest.raises(ScenarioError, match=message) as refused:
        load_scenario(text)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(("values", "message"), [
    ("[0]", "holds 0 \\(Kafka: Invalid value 0 for configuration min.insync.replicas: Value must be at least 1\\)"),
    ("[1, 1]", "must be a non-empty list of distinct whole numbers"),
    ("[]", "must be a non-empty list of distinct whole numbers"),
    ('"1"', "must be a non-empty list of distinct whole numbers"),
])
def test_bad_min_isr_values_are_refused_in_one_sentence(values: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        load_scenario(MIN_ISR.replace("min_insync_replicas_by_admin = [1]", f"min_insync_replicas_by_admin = {values}"))


def test_kmc_explore_refuses_a_bad_admin_value_with_exit_2(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from kmc.cli import main

    path = tmp_path / "bad.toml"
    path.write_text(DELETION.replace("topic_deletions = 1", "topic_deletions = 0"), encoding="utf-8")
    result = CliRunner().invoke(main, ["explore", str(path), "--engine", "local"])
    assert result.exit_code == 2
    assert "deleted_by_admin = true but [bounds] topic_deletions = 0" in result.output
    assert "Traceback" not in result.output
