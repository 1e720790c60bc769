"""``processLeaderAndIsrResponseReceived`` (Kafka 2.3): a broker's ``replicasOnOfflineDirs`` becomes
``previous -- onlineReplicas ++ offlineReplicas``, and the response event survives the codec."""

from __future__ import annotations

import attrs
from kafka_steps import initial, model_of, settle, take

from model.zk.controller import controller
from model.zk.state.step import Step
from model.zk.state.values import ControllerEvent, EventKind

LOG_DIR = """
[cluster]
brokers = [0, 1]
[[topics]]
name = "t"
replicas = [[0, 1], [1, 0]]
[bounds]
broker_failures = 1
log_dir_failures = 1
"""


def test_partitions_answered_none_leave_replicas_on_offline_dirs() -> None:
    """A NONE answer takes a partition out of the broker's replicasOnOfflineDirs, a KAFKA_STORAGE_ERROR answer
    puts one in, and only the new one goes offline."""
    model = model_of(LOG_DIR)
    s = initial(model)
    s = attrs.evolve(s, controller=attrs.evolve(s.controller, replicas_on_offline_dirs=((0, ("t", 0)),)))
    step = Step(model.scenario, s)
    event = ControllerEvent(EventKind.LeaderAndIsrResponseReceived, 0, (("t", 1),), online_partitions=(("t", 0),))
    controller.process_leader_and_isr_response_received(step, event)
    assert step.replicas_on_offline_dirs == {(0, ("t", 1))}
    assert step.messages == ["Mark replicas t-1 on broker 0 as offline"]


def test_storage_error_response_is_queued_and_encoded() -> None:
    """A log directory failure makes the broker answer KAFKA_STORAGE_ERROR; the event round-trips through the
    codec with its NONE partitions."""
    model = model_of(LOG_DIR)
    s = take(model, initial(model), "LogDirFailure", 0, "t", partition=0)
    s = settle(model, s)
    assert (0, ("t", 0)) in s.controller.replicas_on_offline_dirs
    event = ControllerEvent(EventKind.LeaderAndIsrResponseReceived, 0, (("t", 0),), online_partitions=(("t", 1),))
    queued = attrs.evolve(s, controller=attrs.evolve(s.controller, events=(event,)))
    assert model.decode(model.encode(queued)) == queued
