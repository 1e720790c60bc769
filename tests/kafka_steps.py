"""Helpers for the tests that step the Kafka controller model by hand: build a model from inline TOML, take
one enabled action by kind, let the cluster settle, and read the controller's and brokers' views."""

from __future__ import annotations

from typing import Any

import attrs

from model.scenario import load_scenario
from model.zk.actions import Action, ActionKind
from model.zk.kafka_model import KafkaControllerModel
from model.zk.state.states import PartitionState, ReplicaState
from model.zk.state.values import ClusterState, LeaderAndIsr, RequestKind

R = ReplicaState


def model_of(toml: str) -> KafkaControllerModel:
    return KafkaControllerModel(load_scenario(toml))


def initial(model: KafkaControllerModel) -> ClusterState:
    [state] = model.init_states()
    return state


def take(model: KafkaControllerModel, state: ClusterState, kind: str, broker: int = -1,
         topic: str = "", **fields: Any) -> ClusterState:
    """The successor of ``state`` by the one enabled action of that kind, broker, topic (and other fields)."""
    if fields.get("isr_race"):
        fields["isr_race"] = ActionKind(fields["isr_race"])
    wanted = Action(ActionKind(kind), broker, topic, **fields)
    assert wanted in model.actions(state), f"{wanted} is not enabled"
    successor = model.next_state(state, wanted)
    assert successor is not None
    return successor


def process(model: KafkaControllerModel, state: ClusterState) -> ClusterState:
    return take(model, state, "ControllerProcessEvent")


def apply_all(model: KafkaControllerModel, state: ClusterState, broker: int) -> ClusterState:
    """Broker ``broker`` applies every request waiting in its channel."""
    while state.channel(broker):
        state = take(model, state, "BrokerApplyRequest", broker)
    return state


def settle(model: KafkaControllerModel, state: ClusterState) -> ClusterState:
    """Live brokers apply their requests and the controller processes its events until nothing is left."""
    while True:
        live_with_requests = [b for b, _ in state.channels if state.broker(b).alive]
        if live_with_requests:
            state = take(model, state, "BrokerApplyRequest", live_with_requests[0])
        elif state.controller.events:
            state = process(model, state)
        else:
            return state


def zk_lai(state: ClusterState, topic: str, partition: int) -> LeaderAndIsr | None:
    return state.zk.partition_state((topic, partition))


def replica_state(state: ClusterState, topic: str, partition: int, broker: int) -> ReplicaState:
    return dict(state.controller.replica_states).get((topic, partition, broker), R.NonExistentReplica)


def partition_state(state: ClusterState, topic: str, partition: int) -> PartitionState | None:
    return dict(state.controller.partition_states).get((topic, partition))


def leader_and_isr_sent(state: ClusterState, broker: int, topic: str, partition: int) -> list[tuple[int, int]]:
    """(leader, leader epoch) of every LeaderAndIsr for the partition waiting in the broker's channel."""
    return [(s.leader, s.leader_epoch) for rq in state.channel(broker) if rq.kind is RequestKind.LeaderAndIsr
            for s in rq.leader_states if s.partition == (topic, partition)]


def with_leadership(state: ClusterState, topic: str, partition: int, lai: LeaderAndIsr) -> ClusterState:
    """``state`` with ``lai`` in both the partition-state znode and the controller's cache."""
    tp = (topic, partition)
    zk = tuple((k, lai if k == tp else v) for k, v in state.zk.partitions)
    cache = tuple((k, lai if k == tp else v) for k, v in state.controller.leadership)
    return attrs.evolve(state, zk=attrs.evolve(state.zk, partitions=zk),
                        controller=attrs.evolve(state.controller, leadership=cache))
