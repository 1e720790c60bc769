"""The KRaft model's state view (``Model.state_view``): the tables of a report's step table and the lanes and
messages the reports draw as a sequence diagram, in Kafka's KRaft wording.

Tables (the step table's columns; all *summary* tables, see :func:`reports.common.step_table`):

* per partition, the controller's registration (``PartitionRegistration``: leader, leaderEpoch, partitionEpoch,
  replicas, isr, elr, lastKnownElr, and leaderRecoveryState while a partition is RECOVERING);
* for the cluster, the metadata log's end offset, the records acknowledged to producers (acks=all) and each
  topic's effective ``min.insync.replicas`` as the controller's image has it (``getTopicEffectiveMinIsr``);
* per broker, its process (running, shutting down, offline), its registration in the controller's image
  (fenced, unfenced, in controlled shutdown, and its broker epoch), the offset its metadata image has replayed to,
  and per replica it holds the log end offset, high watermark and its role: leader (the leader epoch and ISR of
  its ``Partition.partitionState``) or follower (the leader epoch its image has).

Lanes: a producer when the scenario sends produce requests (the client drawn, as the ZooKeeper model's view draws
the admin, on the left), the active controller (``QuorumController``), the metadata log (the ``__cluster_metadata``
topic the controller appends to and the brokers replay) and one per broker. A step's messages are the requests it
stands for (``BrokerRegistrationRequest``, ``BrokerHeartbeatRequest``, ``AlterPartitionRequest``, ``Fetch``,
``Produce``) with their responses, one message per record the controller appends (as ``MetadataShell`` names it,
:func:`model.kraft.records.describe_record`), a broker's replay of the log, and a ``ProduceResponse`` for each
record the step acknowledges (``DelayedProduce`` completing when the high watermark passes the record, which may
be a later Fetch or AlterPartition step than the Produce). Request and response are one step in the model
(``docs/kraft.md``), so they are drawn one after the other within it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from model.kraft.actions import Action, ActionKind, partition_name
from model.kraft.records import RECOVERING, MetadataImage, describe_record
from model.kraft.replication_control import min_isr
from model.kraft.state import PROCESS_NAMES, BrokerState, KraftState
from model.scenario import Scenario

PRODUCER = "producer"
CONTROLLER = "controller"
METADATA_LOG = "metadata log"

#: The admin's requests: no broker sends them (the admin client's request is drawn as the records it appends).
_ADMIN_STEPS = {ActionKind.CreateTopics, ActionKind.DeleteTopics, ActionKind.IncrementalAlterConfigs}
#: The steps drawn on the controller's lane; every other step is its broker's (a Produce, the producer's).
_CONTROLLER_STEPS = {ActionKind.SessionExpiry, ActionKind.MaybeFenceStaleBrokers, *_ADMIN_STEPS}

_PARTITION_COLUMNS = (
    ("leader", "leader"),
    ("leader_epoch", "leaderEpoch"),
    ("partition_epoch", "partitionEpoch"),
    ("replicas", "replicas"),
    ("isr", "isr"),
    ("elr", "elr"),
    ("last_known_elr", "lastKnownElr"),
)
#: Shown while some partition is RECOVERING (KIP-704; an unclean election sets it), a dash for the others
_RECOVERY_COLUMN = ("leader_recovery_state", "leaderRecoveryState")
_CLUSTER_COLUMNS = (
    ("log_end_offset", "metadata log end offset"),
    ("acknowledged", "acknowledged (acks=all)"),
)
_BROKER_COLUMNS = (
    ("process", "process"),
    ("registration", "registration"),
    ("broker_epoch", "brokerEpoch"),
    ("replayed", "image replayed to offset"),
)


def broker_lane(broker: int) -> str:
    return f"broker {broker}"


def lanes(scenario: Scenario, state: KraftState) -> list[dict[str, str]]:
    producer = [{"id": PRODUCER, "title": PRODUCER, "subtitle": "acks=all"}] if _produces(scenario) else []
    return [*producer,
            {"id": CONTROLLER, "title": CONTROLLER, "subtitle": "QuorumController (active)"},
            {"id": METADATA_LOG, "title": METADATA_LOG, "subtitle": "__cluster_metadata"},
            *({"id": broker_lane(b.id), "title": broker_lane(b.id), "subtitle": ""} for b in state.brokers)]


def _produces(scenario: Scenario) -> bool:
    return scenario.kraft is not None and scenario.kraft.bounds.produces > 0


def state_view(scenario: Scenario, state: KraftState, prev: KraftState | None = None,
               action: Action | None = None) -> dict[str, Any]:
    """The view of ``state``; given ``prev`` and ``action``, also the step's actor lane and messages."""
    names = _names(scenario)
    view: dict[str, Any] = {"tables": [_partitions(state, names), _cluster(scenario, state, names),
                                       _brokers(state, names)],
                            "lanes": lanes(scenario, state)}
    if prev is None or action is None:
        return view
    view["actor"] = (CONTROLLER if action.kind in _CONTROLLER_STEPS else
                     PRODUCER if action.kind is ActionKind.Produce else broker_lane(action.broker))
    view["messages"] = _messages(scenario, prev, state, action)
    return view


def _names(scenario: Scenario) -> list[str]:
    """Every partition of the scenario, by index (the topics an admin has not created yet included)."""
    assert scenario.kraft is not None
    return [partition_name(scenario, i) for i in range(len(scenario.kraft.partition_topics))]


# ---- tables ----------------------------------------------------------------------------------


def _table(table_id: str, title: str, columns: Sequence[tuple[str, str]],
           rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": table_id, "title": title, "summary": True,
            "columns": [{"id": c, "title": t} for c, t in columns], "rows": rows}


def _partitions(state: KraftState, names: Sequence[str]) -> dict[str, Any]:
    """The controller's ``PartitionRegistration`` of each partition of the scenario: a row of dashes while its
    topic does not exist (before an admin's CreateTopics, after a DeleteTopics), so the columns stay put."""
    image = state.image
    recovering = any(p.leader_recovery_state == RECOVERING for _, p in image.existing())
    rows = []
    for i, name in enumerate(names):
        p = image.partition(i)
        if p is None:
            rows.append({"key": name, "cells": {}})
            continue
        cells: dict[str, Any] = {
            "leader": p.leader, "leader_epoch": p.leader_epoch, "partition_epoch": p.partition_epoch,
            "replicas": list(p.replicas), "isr": list(p.isr), "elr": list(p.elr),
            "last_known_elr": list(p.last_known_elr)}
        if recovering:
            cells[_RECOVERY_COLUMN[0]] = "RECOVERING" if p.leader_recovery_state == RECOVERING else None
        rows.append({"key": name, "cells": cells})
    columns = [*_PARTITION_COLUMNS, _RECOVERY_COLUMN] if recovering else list(_PARTITION_COLUMNS)
    return _table("partitions", "Partitions (the controller's image)", columns, rows)


def _cluster(scenario: Scenario, state: KraftState, names: Sequence[str]) -> dict[str, Any]:
    """The metadata log's end offset, the records acknowledged to producers and each existing topic's effective
    ``min.insync.replicas`` (``getTopicEffectiveMinIsr``, as the controller's image has the topic's config)."""
    settings = scenario.kraft
    assert settings is not None
    acknowledged = [f"{names[p]} offset {o} (leaderEpoch {e})" for p, o, e in state.acknowledged]
    cells: dict[str, Any] = {"log_end_offset": len(state.metadata_log), "acknowledged": acknowledged}
    columns = list(_CLUSTER_COLUMNS)
    for i, topic in enumerate(settings.partition_topics):
        column = f"{topic} min_isr"
        if (column, f"{topic} min.insync.replicas") not in columns:
            columns.append((column, f"{topic} min.insync.replicas"))
        if state.image.partition(i) is not None:  # a dash while the topic does not exist
            cells[column] = min_isr(state.image, settings, i)
    return _table("cluster", "Cluster", columns, [{"key": "", "cells": cells}])


def _registration(image: MetadataImage, broker: int) -> str | None:
    reg = image.broker(broker)
    if reg is None:
        return None
    return "fenced" if reg.fenced else "in controlled shutdown" if reg.in_controlled_shutdown else "unfenced"


def _brokers(state: KraftState, names: Sequence[str]) -> dict[str, Any]:
    """Each broker: its process, the controller's registration of it, its image's offset and its replicas."""
    columns = list(_BROKER_COLUMNS)
    seen: set[str] = set()
    rows = []
    for b in state.brokers:
        reg = state.image.broker(b.id)
        cells: dict[str, Any] = {"process": PROCESS_NAMES[b.process], "registration": _registration(state.image, b.id),
                                 "broker_epoch": b.broker_epoch if reg is None else reg.epoch,
                                 "replayed": b.metadata_offset}
        for i, name in enumerate(names):
            role = _role(b, i)
            log = b.logs[i]
            if role is None and not log.records:
                continue
            replica = {f"{name} leo": len(log.records), f"{name} hw": log.high_watermark, f"{name} role": role}
            cells.update(replica)
            for column, title in ((f"{name} leo", f"{name} log end offset"), (f"{name} hw", f"{name} high watermark"),
                                  (f"{name} role", f"{name} role")):
                if column not in seen:
                    seen.add(column)
                    columns.append((column, title))
        rows.append({"key": broker_lane(b.id), "cells": cells})
    return _table("brokers", "Brokers", columns, rows)


def _role(b: BrokerState, index: int) -> str | None:
    """``leader (leaderEpoch e, isr [..])`` from the broker's ``Partition.partitionState``, ``follower (leaderEpoch
    e)`` where its image names it a replica led by another, None where it holds no replica."""
    lead = b.leading[index]
    if lead is not None:
        return f"leader (leaderEpoch {lead.leader_epoch}, isr {list(lead.isr)})"
    partition = b.image.partition(index)
    if partition is None or b.id not in partition.replicas:
        return None
    return f"follower (leaderEpoch {partition.leader_epoch})"


# ---- the sequence diagram --------------------------------------------------------------------


def _msg(source: str, target: str, label: str, kind: str) -> dict[str, str]:
    return {"from": source, "to": target, "label": label, "kind": kind}


def _messages(scenario: Scenario, prev: KraftState, state: KraftState, action: Action) -> list[dict[str, str]]:
    broker = broker_lane(action.broker)
    names = _names(scenario)
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
    if action.kind is ActionKind.Produce:
        messages.append(_msg(PRODUCER, broker, f"Produce({names[action.partition]}, acks=all)", "request"))
    messages += _acknowledgements(prev, state, names)
    return messages


def _acknowledgements(prev: KraftState, state: KraftState, names: Sequence[str]) -> list[dict[str, str]]:
    """A ``ProduceResponse`` for each record the step acknowledged, from the leader whose high watermark passed it
    (``DelayedProduce.tryComplete``)."""
    acked = sorted(set(state.acknowledged) - set(prev.acknowledged))
    messages = []
    for p, offset, _ in acked:
        leader = next((b1.id for b0, b1 in zip(prev.brokers, state.brokers, strict=True)
                       if b1.leading[p] is not None and b1.logs[p].high_watermark > b0.logs[p].high_watermark), None)
        if leader is not None:
            messages.append(_msg(broker_lane(leader), PRODUCER,
                                 f"ProduceResponse({names[p]}, error=NONE, baseOffset={offset})", "response"))
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

