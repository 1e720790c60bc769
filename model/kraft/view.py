"""The KRaft model's state view (``Model.state_view``): the lanes and messages the reports draw as a sequence
diagram, in Kafka's KRaft wording.

Lanes: the active controller (``QuorumController``), the metadata log (the ``__cluster_metadata`` topic the
controller appends to and the brokers replay) and one per broker. A step's messages are the requests it stands for
(``BrokerRegistrationRequest``, ``BrokerHeartbeatRequest``, ``AlterPartitionRequest``, ``Fetch``) with their
responses, one message per record the controller appends (as ``MetadataShell`` names it,
:func:`model.kraft.records.describe_record`) and a broker's replay of the log. Request and response are one step in
the model (``docs/kraft.md``), so they are drawn one after the other within it. No tables: the text lines of
``describe_state`` stay the reports' account of a whole state.
"""

from __future__ import annotations

from typing import Any

from model.kraft.actions import Action, ActionKind, partition_name
from model.kraft.records import describe_record
from model.kraft.state import KraftState
from model.scenario import Scenario

CONTROLLER = "controller"
METADATA_LOG = "metadata log"

#: The admin's requests: no broker sends them (the admin client's request is drawn as the records it appends).
_ADMIN_STEPS = {ActionKind.CreateTopics, ActionKind.DeleteTopics, ActionKind.IncrementalAlterConfigs}
#: The steps drawn on the controller's lane; every other step is its broker's.
_CONTROLLER_STEPS = {ActionKind.SessionExpiry, ActionKind.MaybeFenceStaleBrokers, *_ADMIN_STEPS}


def broker_lane(broker: int) -> str:
    return f"broker {broker}"


def lanes(state: KraftState) -> list[dict[str, str]]:
    return [{"id": CONTROLLER, "title": CONTROLLER, "subtitle": "QuorumController (active)"},
            {"id": METADATA_LOG, "title": METADATA_LOG, "subtitle": "__cluster_metadata"},
            *({"id": broker_lane(b.id), "title": broker_lane(b.id), "subtitle": ""} for b in state.brokers)]


def state_view(scenario: Scenario, state: KraftState, prev: KraftState | None = None,
               action: Action | None = None) -> dict[str, Any]:
    """The view of ``state``; given ``prev`` and ``action``, also the step's title, actor lane and messages."""
    view: dict[str, Any] = {"lanes": lanes(state)}
    if prev is None or action is None:
        return view
    view["actor"] = CONTROLLER if action.kind in _CONTROLLER_STEPS else broker_lane(action.broker)
    view["messages"] = _messages(scenario, prev, state, action)
    return view


def _msg(source: str, target: str, label: str, kind: str) -> dict[str, str]:
    return {"from": source, "to": target, "label": label, "kind": kind}


def _messages(scenario: Scenario, prev: KraftState, state: KraftState, action: Action) -> list[dict[str, str]]:
    broker = broker_lane(action.broker)
    names = [partition_name(scenario, i) for i in range(len(state.image.partitions))]
    appended = [_msg(CONTROLLER, METADATA_LOG, describe_record(r, names), "record")
                for r in state.metadata_log[len(prev.metadata_log):]]
    request, response = _request(scenario, prev, state, action)
    messages = [] if request is None else [_msg(broker, CONTROLLER, request, "request")]
    messages += appended
    if response is not None:
        messages.append(_msg(CONTROLLER, broker, response, "response"))
    messages += _replays(prev, state)
    if action.kind is ActionKind.Fetch:
        messages += _fetch(scenario, prev, state, action)
    return messages


def _request(scenario: Scenario, prev: KraftState, state: KraftState,
             action: Action) -> tuple[str | None, str | None]:
    """The request a broker's step sends the controller and the controller's response (None for steps with none)."""
    if action.kind in _ADMIN_STEPS:
        return None, None
    after = next(b for b in state.brokers if b.id == action.broker)
    before = next(b for b in prev.brokers if b.id == action.broker)
    kind = action.kind
    if kind is ActionKind.BrokerRegistration:
        return "BrokerRegistrationRequest", f"BrokerRegistrationResponse(brokerEpoch={after.broker_epoch})"
    if kind is ActionKind.UnfenceBroker:
        return (f"BrokerHeartbeatRequest(brokerEpoch={before.broker_epoch}, "
                f"currentMetadataOffset={before.metadata_offset}, wantFence=false)",
                "BrokerHeartbeatResponse(isFenced=false)")
    if kind is ActionKind.ControlledShutdownHeartbeat:
        stopped = not after.alive
        return (f"BrokerHeartbeatRequest(brokerEpoch={before.broker_epoch}, wantShutDown=true)",
                f"BrokerHeartbeatResponse(isFenced={str(stopped).lower()}, shouldShutDown={str(stopped).lower()})")
    if kind is ActionKind.AlterPartition:
        lead = before.leading[action.partition]
        assert lead is not None
        partition = state.image.partitions[action.partition]
        assert partition is not None
        return (f"AlterPartitionRequest({partition_name(scenario, action.partition)}, leaderEpoch={lead.leader_epoch}"
                f", partitionEpoch={lead.partition_epoch}, newIsr={list(action.isr)})",
                f"AlterPartitionResponse(isr={list(partition.isr)}, partitionEpoch={partition.partition_epoch})")
    return None, None


def _replays(prev: KraftState, state: KraftState) -> list[dict[str, str]]:
    """Each broker's replay of the metadata log within the step (``BrokerMetadataListener``)."""
    return [_msg(METADATA_LOG, broker_lane(b1.id), f"replayed to offset {b1.metadata_offset}", "replay")
            for b0, b1 in zip(prev.brokers, state.brokers, strict=True) if b1.metadata_offset > b0.metadata_offset]


def _fetch(scenario: Scenario, prev: KraftState, state: KraftState, action: Action) -> list[dict[str, str]]:
    follower = next(b for b in prev.brokers if b.id == action.broker)
    after = next(b for b in state.brokers if b.id == action.broker)
    partition = follower.image.partitions[action.partition]
    assert partition is not None
    leader = broker_lane(partition.leader)
    name = partition_name(scenario, action.partition)
    log = follower.logs[action.partition]
    fetched = after.logs[action.partition]
    return [_msg(broker_lane(action.broker), leader, f"Fetch({name}, fetchOffset={len(log.records)}, "
                 f"currentLeaderEpoch={partition.leader_epoch})", "request"),
            _msg(leader, broker_lane(action.broker), f"FetchResponse(records to offset {len(fetched.records)}, "
                 f"highWatermark={fetched.high_watermark})", "response")]

