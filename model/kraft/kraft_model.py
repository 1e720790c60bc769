"""The KRaft controller model: a scenario's cluster behind :class:`explorer.contract.Model`.

The initial state is a running cluster as the KRaft controller leaves it once every broker has registered and
been unfenced and the topics present from the start have been created (``ClusterControlManager.registerBroker``,
``ReplicationControlManager.createTopic``): the metadata log holds a ``RegisterBrokerRecord`` and an unfencing
``BrokerRegistrationChangeRecord`` per broker, then a ``TopicRecord`` and a ``PartitionRecord`` per partition
(ISR = replicas, leader = the first replica); every broker has replayed it all, and every log is empty. Topics
``created = "by_admin"`` are created by a step (``CreateTopics``). The steps are the table of
:mod:`model.kraft.actions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from explorer.contract import Property
from model.kraft import replica_manager as rm
from model.kraft import view
from model.kraft.actions import KINDS, Action, enabled_actions, partition_name
from model.kraft.records import (
    UNFENCE,
    BrokerRegistrationChangeRecord,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    TopicRecord,
    describe_record,
    replay,
)
from model.kraft.reduction import merge_unobservable_replays
from model.kraft.state import PROCESS_NAMES, BrokerState, Budget, Codec, KraftState, PartitionLog
from model.scenario import Scenario


class KraftControllerModel:
    """Implements :class:`explorer.contract.Model` for one KRaft scenario and a list of properties."""

    def __init__(self, scenario: Scenario, properties: Sequence[Property] = (), *, merge_replays: bool = True):
        if scenario.kraft is None:
            raise ValueError(f"scenario {scenario.name!r} runs the ZooKeeper controller, not KRaft")
        self.scenario = scenario
        #: :mod:`model.kraft.reduction`: replays no step can observe are taken at once (sound; off for its tests)
        self.merge_replays = merge_replays
        self._stale = scenario.kraft.stale_metadata_brokers
        self._properties = tuple(properties)
        self._initial = initial_state(scenario)
        self._codec = Codec([t.name for t in scenario.topics], self._initial)
        self._partition_names = [f"{t.name}-{p}" for t in scenario.topics for p in range(t.partitions)]

    def init_states(self) -> Sequence[KraftState]:
        return (self._initial,)

    def actions(self, state: KraftState) -> Sequence[Action]:
        return enabled_actions(self.scenario, state)

    def next_state(self, state: KraftState, action: Action) -> KraftState | None:
        after = KINDS[action.kind].handler(self.scenario, state, action)
        if after is None or not self.merge_replays:
            return after
        return merge_unobservable_replays(after, self._stale)

    def properties(self) -> Sequence[Property]:
        return self._properties

    def within_boundary(self, state: KraftState) -> bool:
        return True

    def encode(self, state: KraftState) -> bytes:
        return self._codec.encode(state)

    def decode(self, data: bytes) -> KraftState:
        return self._codec.decode(data)

    def action_name(self, action: Action) -> str:
        return action.kind.value

    def describe_action(self, action: Action) -> str:
        return KINDS[action.kind].describe(action, self.scenario)

    def action_actor(self, action: Action) -> str:
        actor = KINDS[action.kind].actor
        return f"broker {action.broker}" if actor == "broker" else actor

    def state_view(self, state: KraftState, prev: KraftState | None = None,
                   action: Action | None = None) -> dict[str, Any]:
        """The reports' view of a step (:mod:`model.kraft.view`): the sequence diagram's lanes and messages, and the
        state tables the step table is built from."""
        return view.state_view(self.scenario, state, prev, action)

    def describe_state(self, state: KraftState) -> Sequence[str]:
        lines = [f"metadata log: {len(state.metadata_log)} records"]
        lines += self._describe_image(state)
        lines += [self._describe_broker(b) for b in state.brokers]
        lines.append(f"acknowledged: {self._acknowledged(state)}")
        return lines

    def describe_changes(self, prev: KraftState, next_: KraftState) -> Sequence[str]:
        lines = [f"metadata log +{describe_record(r, self._partition_names)}"
                 for r in next_.metadata_log[len(prev.metadata_log):]]
        before, after = self._describe_image(prev), self._describe_image(next_)
        lines += [line for line in after if line not in before]
        for b0, b1 in zip(prev.brokers, next_.brokers, strict=True):
            if b0 != b1:
                lines.append(self._describe_broker(b1))
        if prev.acknowledged != next_.acknowledged:
            lines.append(f"acknowledged: {self._acknowledged(next_)}")
        if prev.controlled_shutdown_offsets != next_.controlled_shutdown_offsets:
            lines.append(f"controlledShutdownOffset: {list(next_.controlled_shutdown_offsets)}")
        return lines

    def _describe_image(self, state: KraftState) -> list[str]:
        image = state.image
        lines = []
        for reg in image.brokers:
            status = "fenced" if reg.fenced else ("in controlled shutdown" if reg.in_controlled_shutdown
                                                  else "unfenced")
            lines.append(f"controller: broker {reg.id} epoch {reg.epoch} {status}")
        for i, p in image.existing():
            lines.append(f"controller: {self._partition_names[i]} leader={p.leader} leaderEpoch={p.leader_epoch} "
                         f"partitionEpoch={p.partition_epoch} isr={list(p.isr)} elr={list(p.elr)} "
                         f"lastKnownElr={list(p.last_known_elr)} leaderRecoveryState={p.leader_recovery_state}")
        lines += [f"controller: topic {topic} min.insync.replicas={value}"
                  for topic, value in image.min_insync_replicas]
        return lines

    def _describe_broker(self, b: BrokerState) -> str:
        parts = []
        for i, (log, lead) in enumerate(zip(b.logs, b.leading, strict=True)):
            role = "" if lead is None else f" leader(epoch {lead.leader_epoch}, isr {list(lead.isr)})"
            parts.append(f"{self._partition_names[i]} log={list(log.records)} hw={log.high_watermark}{role}")
        return (f"broker {b.id}: {PROCESS_NAMES[b.process]}, epoch {b.broker_epoch}, replayed {b.metadata_offset}; "
                + "; ".join(parts))

    def _acknowledged(self, state: KraftState) -> str:
        return ", ".join(f"{self._partition_names[p]}@{o} (epoch {e})" for p, o, e in state.acknowledged) or "none"


def initial_state(scenario: Scenario) -> KraftState:
    broker_ids = [b.id for b in sorted(scenario.brokers, key=lambda b: b.id)]
    log: list[Record] = []
    for b in broker_ids:
        log.append(RegisterBrokerRecord(broker_id=b, broker_epoch=len(log)))
    epochs = {r.broker_id: r.broker_epoch for r in log if isinstance(r, RegisterBrokerRecord)}
    for b in broker_ids:
        log.append(BrokerRegistrationChangeRecord(broker_id=b, broker_epoch=epochs[b], fenced=UNFENCE))
    assert scenario.kraft is not None
    index = 0
    for t in scenario.kraft.topics:
        if not t.created_by_admin:
            log.append(TopicRecord(name=t.name))
            for replicas in t.replicas:
                log.append(PartitionRecord(partition=index, replicas=replicas, isr=replicas, leader=replicas[0]))
                index += 1
        else:
            index += t.partitions
    partitions = index
    image = replay(log)
    state = KraftState(
        metadata_log=tuple(log), controlled_shutdown_offsets=tuple(-1 for _ in broker_ids),
        brokers=tuple(BrokerState(id=b, process=0, broker_epoch=epochs[b], metadata_offset=len(log),
                                  logs=tuple(PartitionLog() for _ in range(partitions)),
                                  leading=tuple(None for _ in range(partitions)), image=image)
                      for b in broker_ids),
        acknowledged=(), budget=Budget(), image=image)
    return attrs.evolve(state, brokers=tuple(rm.apply_delta(image, b) for b in state.brokers))


__all__ = ["KraftControllerModel", "initial_state", "partition_name"]
