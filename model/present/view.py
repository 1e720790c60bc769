"""The Kafka model's structured view of a state and of a step, for the reports.

:func:`state_view` implements the optional ``state_view`` of the model contract
(:data:`explorer.contract.StateView`): the renderers in ``reports/`` know nothing of Kafka, so
Kafka's vocabulary reaches them here, as data. A view holds

* two *summary* tables, the columns of a report's step table: per partition the leader, leader
  epoch, replicas, ISR and partition state (the controller's context, falling back to the
  partition-state znode), each replica's state, the brokers holding its log on disk and the leader
  epoch each broker last accepted; and for the cluster the brokers registered in ZooKeeper and the
  controller's live brokers, each with its broker epoch, so a bounce the controller has not
  processed yet shows as two different epochs;
* the brokers (rack, alive, epoch, hosted partitions, logs, queued requests) and the controller's
  event queue and deletion sets;
* for a step: a one-sentence title that names the event or the request (with broker epochs, so a
  stale request or response is visible), the controller phase (the Kafka method the event ran),
  the messages between admin, controller, ZooKeeper and brokers for the sequence diagram, and the
  lines Kafka's ``controller.log`` and ``state-change.log`` would have printed (phrasing of Kafka
  2.3's ``KafkaController``, ``ReplicaStateMachine``, ``PartitionStateMachine``,
  ``TopicDeletionManager``, ``KafkaApis`` and ``ReplicaManager``; the controller's broker id is not
  modelled, so lines name the controller epoch instead).

A step also carries one-line ``notes`` for values a Kafka engineer stops at (leader -1 and -2, a
leader epoch that jumps, a LeaderAndIsr a broker did not accept and why), and its messages say what
they put on a queue and take off one: a message that queues an event or a request names it
(``queued``: the queue and the item, e.g. ``controller event queue: TopicDeletionStopReplicaResponseReceived(...)``),
and the note of the step that processes it names the same item (``dequeued``), so a report can join
a response to the later step that processes it. Versions before 2.2 have no broker epochs (KIP-380),
so their views show none.

Everything is derived from the states (and the step's :class:`~model.zk.state.values.StepLog`); nothing here
changes the model's behaviour.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from model.present.describe import event_processed
from model.scenario import Scenario
from model.zk.actions import ACTIONS, Action, ActionKind, Actor
from model.zk.state.values import (
    LEADER_DURING_DELETE,
    NO_LEADER,
    BrokerState,
    ClusterState,
    ControllerEvent,
    EventKind,
    LeaderAndIsr,
    LeaderRecoveryState,
    Request,
    RequestKind,
    TopicPartition,
    partition_name,
    recovery_text,
    replica_name,
)

ADMIN, CONTROLLER, ZOOKEEPER = "admin", "controller", "ZooKeeper"

FORMER = "former controller"

_PARTITION_COLUMNS = (
    ("leader", "leader"),
    ("leader_epoch", "leader epoch"),
    ("replicas", "replicas"),
    ("isr", "ISR"),
    ("partition_state", "partition state"),
    ("replica_states", "replica states"),
    ("logs_on", "log on disk at"),
    ("accepted_epochs", "leader epoch accepted (broker: epoch)"),
)
_CLUSTER_COLUMNS = (
    ("registered", "registered in ZooKeeper (broker: epoch)"),
    ("live_brokers", "controller's live brokers (broker: epoch)"),
)
_BROKER_COLUMNS = (
    ("rack", "rack"),
    ("alive", "alive"),
    ("broker_epoch", "broker epoch"),
    ("hosted", "partitions in memory"),
    ("logs", "logs on disk"),
    ("queued", "requests queued for it"),
)
_CONTROLLER_COLUMNS = (
    ("events", "event queue"),
    ("delete_topics", "/admin/delete_topics"),
    ("topics_to_be_deleted", "topicsToBeDeleted"),
    ("topics_ineligible", "topicsIneligibleForDeletion"),
    ("topics_with_deletion_started", "topicsWithDeletionStarted"),
)


def state_view(scenario: Scenario, state: ClusterState, prev: ClusterState | None = None,
               action: Action | None = None) -> dict[str, Any]:
    """The view of ``state``; given ``prev`` and ``action``, also of the step that reached it."""
    epochs = has_broker_epochs(scenario)
    view: dict[str, Any] = {
        "tables": [_partitions(state), _cluster(state, epochs), _brokers(scenario, state, epochs),
                   _controller(scenario, state, epochs)],
        "lanes": _lanes(scenario),
    }
    if prev is not None and action is not None:
        view.update(_step(state, prev, action, epochs))
    return view


def has_broker_epochs(scenario: Scenario) -> bool:
    """Whether the scenario's Kafka has broker epochs (KIP-380, 2.2+): before, no trace shows one."""
    return scenario.since("BROKER_EPOCHS")


# ---- tables ----------------------------------------------------------------------------------


def _table(table_id: str, title: str, summary: bool, columns: Sequence[tuple[str, str]],
           rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": table_id, "title": title, "summary": summary,
            "columns": [{"id": c, "title": t} for c, t in columns], "rows": rows}


def _partitions(s: ClusterState) -> dict[str, Any]:
    zk_lai = dict(s.zk.partitions)
    leadership = dict(s.controller.leadership)
    assignment = dict(s.controller.assignments)
    partition_states = dict(s.controller.partition_states)
    replica_states: dict[TopicPartition, dict[str, str]] = {}
    for (t, p, b), rs in s.controller.replica_states:
        replica_states.setdefault((t, p), {})[str(b)] = rs.name
    logs: dict[TopicPartition, list[int]] = {}
    accepted: dict[TopicPartition, dict[str, int]] = {}
    for broker in s.brokers:
        for tp in broker.logs:
            logs.setdefault(tp, []).append(broker.id)
        for h in broker.partitions:
            accepted.setdefault(h.partition, {})[str(broker.id)] = h.leader_epoch
    known: set[TopicPartition] = set(zk_lai) | set(leadership) | set(assignment) | set(logs) | set(accepted)
    for name, reps in s.zk.topics:
        known.update((name, p) for p in range(len(reps)))
    rows = []
    for tp in sorted(known):
        lai: LeaderAndIsr | None = leadership.get(tp) or zk_lai.get(tp)
        replicas = assignment.get(tp) or s.zk.replicas(tp)
        state = partition_states.get(tp)
        rows.append({"key": partition_name(tp), "cells": {
            "leader": None if lai is None else lai.leader,
            "leader_epoch": None if lai is None else lai.leader_epoch,
            "replicas": None if replicas is None else list(replicas),
            "isr": None if lai is None else list(lai.isr),
            "partition_state": None if state is None else state.name,
            "replica_states": replica_states.get(tp, {}),
            "logs_on": logs.get(tp, []),
            "accepted_epochs": accepted.get(tp, {}),
        }})
    return _table("partitions", "Partitions", True, _PARTITION_COLUMNS, rows)


def _cluster(s: ClusterState, epochs: bool = True) -> dict[str, Any]:
    if not epochs:
        cells: dict[str, Any] = {"registered": sorted(b for b, _ in s.zk.brokers),
                                 "live_brokers": sorted(b for b, _ in s.controller.live_brokers)}
        columns = [(column, title.replace(" (broker: epoch)", "")) for column, title in _CLUSTER_COLUMNS]
        return _table("cluster", "Cluster", True, columns, [{"key": "", "cells": cells}])
    cells = {"registered": {str(b): e for b, e in s.zk.brokers},
             "live_brokers": {str(b): e for b, e in s.controller.live_brokers}}
    return _table("cluster", "Cluster", True, _CLUSTER_COLUMNS, [{"key": "", "cells": cells}])


def _brokers(scenario: Scenario, s: ClusterState, epochs: bool = True) -> dict[str, Any]:
    racks = scenario.racks
    rows = []
    for b in s.brokers:
        cells = {
            "rack": racks.get(b.id),
            "alive": b.alive,
            "broker_epoch": b.epoch,
            "hosted": [f"{partition_name(h.partition)} (leader {h.leader}, leader epoch {h.leader_epoch})"
                       for h in b.partitions],
            "logs": [partition_name(tp) for tp in b.logs],
            "queued": [describe_request(r, epochs) for r in s.channel(b.id)],
        }
        if not epochs:
            del cells["broker_epoch"]
        rows.append({"key": f"broker {b.id}", "cells": cells})
    columns = [c for c in _BROKER_COLUMNS if epochs or c[0] != "broker_epoch"]
    return _table("brokers", "Brokers", False, columns, rows)


def _controller(scenario: Scenario, s: ClusterState, epochs: bool = True) -> dict[str, Any]:
    """The controller's queue and deletion sets; with the events of a failover, a controlled shutdown or a log
    directory failure in the scenario, also shuttingDownBrokerIds, replicasOnOfflineDirs and the former
    controller still at work (columns a scenario without them does not show)."""
    c = s.controller
    cells: dict[str, Any] = {
        "events": [describe_event(e, epochs) for e in c.events],
        "delete_topics": list(s.zk.delete_topics),
        "topics_to_be_deleted": list(c.topics_to_be_deleted),
        "topics_ineligible": list(c.topics_ineligible_for_deletion),
        "topics_with_deletion_started": list(c.topics_with_deletion_started),
    }
    columns = list(_CONTROLLER_COLUMNS)
    b = scenario.bounds
    if b.controlled_shutdowns:
        columns.append(("shutting_down", "shuttingDownBrokerIds"))
        cells["shutting_down"] = list(c.shutting_down_brokers)
    if b.log_dir_failures:
        columns.append(("offline_dirs", "replicasOnOfflineDirs (broker: partition)"))
        cells["offline_dirs"] = [f"{broker}: {partition_name(tp)}" for broker, tp in c.replicas_on_offline_dirs]
    if b.controller_failovers or b.controller_moves:
        columns.append(("former", "former controller still at work"))
        cells["former"] = ("none" if s.zombie is None else
                           f"epoch {s.zombie.epoch}, queue "
                           f"[{', '.join(describe_event(e, epochs) for e in s.zombie.events)}]")
    return _table("controller", f"Controller (epoch {c.epoch})", False, columns, [{"key": "", "cells": cells}])


def _lanes(scenario: Scenario) -> list[dict[str, str]]:
    lanes = [{"id": ADMIN, "title": "admin", "subtitle": "kafka-topics.sh"},
             {"id": CONTROLLER, "title": "controller", "subtitle": "KafkaController"}]
    if scenario.bounds.controller_failovers or scenario.bounds.controller_moves:
        lanes.append({"id": FORMER, "title": FORMER, "subtitle": "lost controllership, has not noticed"})
    lanes.append({"id": ZOOKEEPER, "title": "ZooKeeper", "subtitle": ""})
    for b in sorted(scenario.brokers, key=lambda b: b.id):
        lanes.append({"id": _broker(b.id), "title": _broker(b.id),
                      "subtitle": f"rack {b.rack}" if b.rack is not None else ""})
    return lanes


# ---- sentences -------------------------------------------------------------------------------


def describe_request(r: Request, epochs: bool = True) -> str:
    """A request as the diagram labels it, with the broker epoch it was sent for (KIP-380; none
    without ``epochs``)."""
    epoch = f", brokerEpoch={r.broker_epoch}" if r.broker_epoch >= 0 and epochs else ""
    if r.kind is RequestKind.LeaderAndIsr:
        parts = "; ".join(f"{partition_name(p.partition)} leader={p.leader} leaderEpoch={p.leader_epoch} "
                          f"isr={_ids(p.isr)}{' isNew' if p.is_new else ''}{recovery_text(p.leader_recovery_state)}"
                          for p in r.leader_states)
        return f"LeaderAndIsr(controllerEpoch={r.controller_epoch}{epoch}) [{parts}]"
    if r.kind is RequestKind.UpdateMetadata:
        parts = "; ".join(f"{partition_name(m.partition)} leader={m.leader} leaderEpoch={m.leader_epoch}"
                          for m in r.metadata_states)
        return (f"UpdateMetadata(controllerEpoch={r.controller_epoch}{epoch}, liveBrokers={_ids(r.live_brokers)}) "
                f"[{parts}]")
    if r.partition_states:  # StopReplica v3 (KIP-570, Kafka 2.6): an epoch and a delete flag per partition
        parts = "; ".join(f"{partition_name(ps.partition)} leaderEpoch={ps.leader_epoch}"
                          f"{' delete' if ps.delete_partition else ''}" for ps in r.partition_states)
        return f"StopReplica(controllerEpoch={r.controller_epoch}{epoch}) [{parts}]"
    parts = ", ".join(partition_name(tp) for tp in r.partitions)
    return (f"StopReplica(deletePartitions={str(r.delete_partitions).lower()}, "
            f"controllerEpoch={r.controller_epoch}{epoch}) [{parts}]")


def describe_event(e: ControllerEvent, epochs: bool = True) -> str:
    if e.kind is EventKind.TopicDeletionStopReplicaResponseReceived:
        answered = f", answered by broker epoch {e.broker_epoch}" if e.broker_epoch >= 0 and epochs else ""
        return (f"TopicDeletionStopReplicaResponseReceived(broker {e.broker}, "
                f"{_csv([partition_name(tp) for tp in e.partitions])}, "
                f"{'KAFKA_STORAGE_ERROR' if e.error else 'NONE'}{answered})")
    if e.kind is EventKind.ControlledShutdown and not epochs:
        return f"ControlledShutdown(id={e.broker})"
    return e.describe()


def _ids(ids: Sequence[int]) -> str:
    return "[" + ",".join(str(i) for i in ids) + "]"


def _broker(b: int) -> str:
    return f"broker {b}"


# ---- the step --------------------------------------------------------------------------------


class _StepView:
    """The step being viewed: the states on either side, the action, and the title, phase, messages and log
    lines its view collects."""

    def __init__(self, s: ClusterState, prev: ClusterState, action: Action, epochs: bool = True):
        self.s, self.prev, self.action = s, prev, action
        self.broker, self.topic = action.broker, action.topic
        self.epochs = epochs
        self.title = ""
        self.phase = ""
        self.messages: list[dict[str, str]] = []
        self.log: list[dict[str, str]] = []
        self.notes: list[str] = []

    def message(self, source: str, target: str, label: str, kind: str, **queue: str) -> None:
        self.messages.append(_msg(source, target, label, kind, **queue))


def _step(s: ClusterState, prev: ClusterState, action: Action, epochs: bool = True) -> dict[str, Any]:
    view = _StepView(s, prev, action, epochs)
    _STEP_VIEWS[action.kind](view)
    former = s.log.zombie_step
    view.messages += _new_events(s, prev, popped=s.log.processed_event is not None and not former, epochs=epochs,
                                 leader_step=action.kind in (ActionKind.LeaderShrinksIsr, ActionKind.LeaderExpandsIsr))
    view.log += _state_change_log(s, prev, former=former)
    view.notes += explanations(s, prev, view.messages)
    if s.log.rejection and action.kind not in (ActionKind.BrokerApplyRequest, ActionKind.BrokerFailsStopReplica):
        view.notes += _update_metadata_rejections(s, prev)
    step: dict[str, Any] = {"title": view.title, "phase": view.phase, "actor": _lane(action),
                            "messages": view.messages, "log": view.log}
    notes = list(dict.fromkeys(view.notes))  # once each, in order
    if notes:
        step["notes"] = notes
    return step


def _lane(action: Action) -> str:
    """The diagram's lane of the action's actor (a failure of a broker is drawn on the broker's lane, one of
    the controller's host on the controller's)."""
    actor = ACTIONS[action.kind].actor
    if actor is Actor.BROKER or (actor is Actor.FAILURE and action.broker >= 0):
        return _broker(action.broker)
    return {Actor.ADMIN: ADMIN, Actor.FORMER_CONTROLLER: FORMER}.get(actor, CONTROLLER)


def _msg(source: str, target: str, label: str, kind: str, **queue: str) -> dict[str, str]:
    """A message of the sequence diagram; ``queue`` is ``queued=ITEM`` for one that puts ``ITEM`` on a
    queue, ``dequeued=ITEM`` for the note of the step that takes it off (see the module docstring)."""
    return {"from": source, "to": target, "label": label, "kind": kind, **queue}


def _queued_event(v: _StepView, kind: EventKind) -> dict[str, str]:
    """``queued=ITEM`` for the event of ``kind`` the step added to the controller's queue (the
    events whose message is the step's own, which :func:`_new_events` does not draw), or nothing."""
    before = v.prev.controller.events
    added = [e for e in v.s.controller.events if e.kind is kind and e not in before]
    return {"queued": event_item(CONTROLLER, added[-1], v.epochs)} if added else {}


def event_item(lane: str, event: ControllerEvent, epochs: bool = True) -> str:
    """The name of ``event`` on the event queue of the controller drawn on ``lane``: what a
    message's ``queued`` and a step's ``dequeued`` give."""
    return f"{lane} event queue: {describe_event(event, epochs)}"


def request_item(broker: int, request: Request, epochs: bool = True) -> str:
    """The name of ``request`` on the controller's channel to ``broker`` (``queued`` / ``dequeued``)."""
    return f"requests for {_broker(broker)}: {describe_request(request, epochs)}"


# ---- environment steps -----------------------------------------------------------------------


def _broker_failure(v: _StepView) -> None:
    b = v.broker
    v.title = f"Broker {b} dies: its ZooKeeper session expires and /brokers/ids/{b} goes away"
    v.message(_broker(b), ZOOKEEPER, f"session expires: /brokers/ids/{b} deleted", "write")


def _broker_startup(v: _StepView) -> None:
    b, epoch = v.broker, v.s.broker(v.broker).epoch
    if not v.epochs:
        v.title = f"Broker {b} restarts and registers /brokers/ids/{b}"
        v.message(_broker(b), ZOOKEEPER, f"register /brokers/ids/{b}", "write")
        return
    v.title = f"Broker {b} restarts and registers /brokers/ids/{b} with broker epoch {epoch}"
    v.message(_broker(b), ZOOKEEPER, f"register /brokers/ids/{b} (broker epoch {epoch})", "write")


def _admin_create_topic(v: _StepView) -> None:
    v.title = f"Admin creates topic {v.topic}: writes /brokers/topics/{v.topic}"
    v.message(ADMIN, ZOOKEEPER, f"create /brokers/topics/{v.topic}", "write")


def _admin_delete_topic(v: _StepView) -> None:
    v.title = f"Admin asks to delete topic {v.topic}: creates /admin/delete_topics/{v.topic}"
    v.message(ADMIN, ZOOKEEPER, f"create /admin/delete_topics/{v.topic}", "write")


def _controller_failover(v: _StepView) -> None:
    kind, s = v.action.kind, v.s
    epoch = s.zk.controller_epoch
    how = ("/controller is deleted under the running controller" if kind is ActionKind.ControllerMove
           else "the controller's host dies or its ZooKeeper session expires")
    rest = ("; the former controller, which has not noticed, still holds "
            f"{len(s.zombie.events)} event(s)" if s.zombie is not None else "; its queue and channels die with it")
    v.message(CONTROLLER, ZOOKEEPER, f"/controller gone ({kind})", "write")
    v.message(ZOOKEEPER, CONTROLLER, f"a new controller registers /controller, controller epoch {epoch}", "watch",
              **_queued_event(v, EventKind.Reelect))
    v.title = f"Controller failover: {how}; a new controller is elected with controller epoch {epoch}{rest}"


def _broker_controlled_shutdown(v: _StepView) -> None:
    b, epoch = v.broker, v.s.broker(v.broker).epoch
    if v.epochs:
        request = f"ControlledShutdownRequest(brokerId={b}, brokerEpoch={epoch})"
        who = f"Broker {b} (broker epoch {epoch})"
    else:
        request, who = f"ControlledShutdownRequest(brokerId={b})", f"Broker {b}"
    v.message(_broker(b), CONTROLLER, request, "request", **_queued_event(v, EventKind.ControlledShutdown))
    v.title = f"{who} asks the controller for a controlled shutdown"


def _broker_shutdown_completes(v: _StepView) -> None:
    v.message(_broker(v.broker), ZOOKEEPER, f"shut down: /brokers/ids/{v.broker} deleted", "write")
    v.title = f"Broker {v.broker} completes its shutdown: /brokers/ids/{v.broker} goes away"


def _log_dir_failure(v: _StepView) -> None:
    tp = f"{v.topic}-{v.action.partition}"
    v.message(_broker(v.broker), ZOOKEEPER, "create /log_dir_event_notification/log_dir_event_…", "write")
    v.title = (f"The log directory of {tp} on broker {v.broker} fails: the partition goes offline on the broker, "
               "which writes /log_dir_event_notification")


def _admin_preferred_replica_election(v: _StepView) -> None:
    v.message(ADMIN, ZOOKEEPER, "create /admin/preferred_replica_election", "write")
    v.title = (f"Admin runs kafka-preferred-replica-election for topic {v.topic}: creates "
               "/admin/preferred_replica_election")


def _auto_rebalance_timer(v: _StepView) -> None:
    v.message(CONTROLLER, CONTROLLER, "auto-leader-rebalance-task fires", "note",
              **_queued_event(v, EventKind.AutoPreferredReplicaLeaderElection))
    v.title = "The auto leader rebalance timer fires: AutoPreferredReplicaLeaderElection is queued"


def _admin_alter_unclean_leader_election(v: _StepView) -> None:
    value = str(v.s.zk.unclean_leader_election_enable).lower()
    v.message(ADMIN, ZOOKEEPER, f"set unclean.leader.election.enable={value} (cluster default)", "write",
              **_queued_event(v, EventKind.UncleanLeaderElectionEnable))
    v.title = f"Admin sets unclean.leader.election.enable={value} for the cluster (kafka-configs)"


def _admin_alter_topic_unclean_leader_election(v: _StepView) -> None:
    topic = v.action.topic
    v.message(ADMIN, ZOOKEEPER, f"set unclean.leader.election.enable=true in /config/topics/{topic}", "write")
    v.title = f"Admin sets unclean.leader.election.enable=true for topic {topic} (kafka-configs)"


def _admin_cancel_reassignment(v: _StepView) -> None:
    v.message(ADMIN, ZOOKEEPER, "delete /admin/reassign_partitions", "write")
    v.title = "Admin cancels the reassignment: deletes /admin/reassign_partitions"


def _admin_alter_partition_reassignments(v: _StepView) -> None:
    v.message(ADMIN, CONTROLLER, "AlterPartitionReassignments", "request",
              **_queued_event(v, EventKind.ApiPartitionReassignment))
    v.title = f"Admin sends AlterPartitionReassignments for topic {v.topic} (KIP-455)"


def _admin_cancel_partition_reassignments(v: _StepView) -> None:
    v.message(ADMIN, CONTROLLER, "AlterPartitionReassignments (no target: cancel)", "request",
              **_queued_event(v, EventKind.ApiPartitionReassignment))
    v.title = f"Admin cancels the reassignment of topic {v.topic} with AlterPartitionReassignments (KIP-455)"


def _admin_elect_preferred_leaders(v: _StepView) -> None:
    v.message(ADMIN, CONTROLLER, "ElectLeaders (PREFERRED)", "request",
              **_queued_event(v, EventKind.ElectPreferredLeaders))
    v.title = f"Admin sends ElectLeaders (preferred) for topic {v.topic} (KIP-460)"


def _admin_elect_unclean_leaders(v: _StepView) -> None:
    v.message(ADMIN, CONTROLLER, "ElectLeaders (UNCLEAN)", "request",
              **_queued_event(v, EventKind.ElectUncleanLeaders))
    v.title = f"Admin sends ElectLeaders (unclean) for topic {v.topic} (KIP-460)"


def _admin_reassign_partitions(v: _StepView) -> None:
    v.message(ADMIN, ZOOKEEPER, "create /admin/reassign_partitions", "write")
    v.title = f"Admin runs kafka-reassign-partitions --execute for topic {v.topic}"


def _admin_add_partitions(v: _StepView) -> None:
    v.message(ADMIN, ZOOKEEPER, f"write /brokers/topics/{v.topic}", "write")
    v.title = f"Admin adds partitions to topic {v.topic} (kafka-topics --alter --partitions)"


def _admin_recreate_topic(v: _StepView) -> None:
    v.message(ADMIN, ZOOKEEPER, f"create /brokers/topics/{v.topic}", "write")
    v.title = f"Admin creates topic {v.topic} again, under the name of the deleted one"


def _leader_changes_isr(v: _StepView) -> None:
    verb = "shrinks" if v.action.kind is ActionKind.LeaderShrinksIsr else "expands"
    partition = v.action.partition
    queued = _queued_event(v, EventKind.AlterIsrReceived)
    if queued:  # AlterIsr (KIP-497): the leader proposes, the controller writes
        hosted = v.s.broker(v.broker).hosted((v.topic, partition))
        proposed = list(hosted.pending_isr) if hosted is not None else []
        v.message(_broker(v.broker), CONTROLLER, f"AlterIsr {v.topic}-{partition}: newIsr={proposed}", "request",
                  **queued)
        v.title = f"Leader {v.broker} {verb} the ISR of {v.topic}-{partition}: AlterIsr to {proposed}"
        return
    change = v.s.log.isr_updates
    detail = f": ISR {list(change[0][2])} -> {list(change[0][3])}" if change else ""
    v.message(_broker(v.broker), ZOOKEEPER, f"write /brokers/topics/{v.topic}/partitions/{partition}/state{detail}",
              "write")
    v.title = f"Leader {v.broker} {verb} the ISR of {v.topic}-{partition}{detail}"


def _broker_propagates_isr_changes(v: _StepView) -> None:
    named = ", ".join(f"{t}-{p}" for t, p in v.prev.broker(v.broker).pending_isr_changes)
    v.message(_broker(v.broker), ZOOKEEPER, f"create /isr_change_notification/isr_change_… [{named}]", "write")
    v.title = f"Broker {v.broker} propagates its ISR changes: /isr_change_notification names {named}"


# ---- a broker handles a request --------------------------------------------------------------


def _broker_applies(v: _StepView) -> None:
    s, broker = v.s, v.broker
    request = v.prev.channel(broker)[0]
    epoch = v.prev.broker(broker).epoch
    who = f"Broker {broker} (broker epoch {epoch})" if v.epochs else f"Broker {broker}"
    kafka_name = "LeaderAndIsr" if request.kind is RequestKind.LeaderAndIsr else "stop replica"
    reason = s.log.rejection
    described = describe_request(request, v.epochs)
    item = {"dequeued": request_item(broker, request, v.epochs)}
    if reason:
        v.title = f"{who} rejects {described}: {reason}"
        v.message(_broker(broker), _broker(broker), f"rejects {described}: {reason}", "note", **item)
        v.notes.append(_rejection_note(v.prev, v.s, broker, request, reason))
        if 0 <= request.broker_epoch < epoch:
            v.log.append({"logger": "server.log", "line": f"[Broker id={broker}] Received {kafka_name} request with "
                          f"broker epoch {request.broker_epoch} smaller than the current broker epoch {epoch}"})
    elif v.action.kind is ActionKind.BrokerFailsStopReplica:
        failed = f"{v.action.topic}-{v.action.partition}"
        v.title = f"{who} applies {described}: {failed} fails with KAFKA_STORAGE_ERROR"
        v.message(_broker(broker), _broker(broker), f"applies {described}; {failed}: KAFKA_STORAGE_ERROR", "note",
                  **item)
    elif v.action.kind is ActionKind.BrokerAppliesRequestAndDies:
        v.title = (f"{who} applies {described} and dies before answering: its ZooKeeper session expires and "
                   f"/brokers/ids/{broker} goes away")
        v.message(_broker(broker), _broker(broker), f"applies {described}", "note", **item)
        v.message(_broker(broker), ZOOKEEPER, f"session expires: /brokers/ids/{broker} deleted", "write")
        v.log += _requests_state_change_log(broker, request)
    else:
        v.title = f"{who} applies {described}"
        v.message(_broker(broker), _broker(broker), f"applies {described}", "note", **item)
        v.log += _requests_state_change_log(broker, request, v.s.broker(broker))
        v.notes += _partitions_not_accepted(v, request)


def _recovery_field(state: LeaderRecoveryState) -> str:
    return "" if state is LeaderRecoveryState.RECOVERED else f", leaderRecoveryState={state.name}"


def _requests_state_change_log(broker: int, request: Request, after: BrokerState | None = None
                               ) -> list[dict[str, str]]:
    """What the broker's state-change.log says when it applies a LeaderAndIsr or a StopReplica request (with
    ``after``, the broker once it applied it: which partitions it took as leader)."""
    if request.kind is RequestKind.LeaderAndIsr:
        lines = []
        for p in request.leader_states:
            lines.append({"logger": "state-change.log", "line": (
                f"[Broker id={broker}] Received LeaderAndIsr request (leader={p.leader}, "
                f"leaderEpoch={p.leader_epoch}, isr={_csv(p.isr)}, replicas={_csv(p.replicas)}, "
                f"isNew={str(p.is_new).lower()}{_recovery_field(p.leader_recovery_state)}) from controller epoch "
                f"{request.controller_epoch} for partition {partition_name(p.partition)}")})
            hosted = None if after is None else after.hosted(p.partition)
            if (p.leader_recovery_state is LeaderRecoveryState.RECOVERING and hosted is not None
                    and hosted.leader == broker and hosted.leader_epoch == p.leader_epoch):
                # Partition.makeLeader (3.2.0 - 3.9, KIP-704)
                lines.append({"logger": "state-change.log", "line": (
                    f"[Broker id={broker}] The topic partition {partition_name(p.partition)} was marked as "
                    "RECOVERING. Marking the topic partition as RECOVERED.")})
        return lines
    return [{"logger": "state-change.log", "line": (
        f"[Broker id={broker}] Handling stop replica (delete={str(ps.delete_partition).lower()}) "
        f"for partition {partition_name(ps.partition)}")} for ps in request.stop_replica_states()]


# ---- a controller processes an event ---------------------------------------------------------


class _Processing:
    """A controller step being viewed: the acting controller's context before and after, and its lane."""

    def __init__(self, v: _StepView, former: bool):
        s, prev = v.s, v.prev
        c0, c1 = (prev.zombie, s.zombie or prev.zombie) if former else (prev.controller, s.controller)
        assert c0 is not None and c1 is not None
        event = s.log.processed_event
        assert event is not None
        self.view, self.event, self.c0, self.c1 = v, event, c0, c1
        self.former = former
        self.lane = FORMER if former else CONTROLLER

    def log(self, line: str, who: str = "") -> None:
        _controller_log(self.view.log, line, who)


def _controller_processes_event(v: _StepView) -> None:
    _controller_step(_Processing(v, former=False))


def _former_controller_processes_event(v: _StepView) -> None:
    _controller_step(_Processing(v, former=True))


def _controller_step(p: _Processing) -> None:
    v, event = p.view, p.event
    s, prev = v.s, v.prev
    who = f"The former controller (epoch {p.c0.epoch})" if p.former else "Controller"
    v.title = f"{who} processes {describe_event(event, v.epochs)}"
    v.message(p.lane, p.lane, f"processes {describe_event(event, v.epochs)}", "note",
              dequeued=event_item(p.lane, event, v.epochs))
    phase = _EVENT_PHASES.get(event.kind, _phase_is_the_event)(p)
    if s.log.zk_write_fenced:
        phase += "; ControllerMovedException: resigns"
    elif s.log.zombie_resigned:
        phase += "; onControllerResignation"
    for topic in s.log.completed_deletions:
        p.log(f"Deletion of topic {topic} successfully completed", "TopicDeletionManager")
        phase += f"; completeDeleteTopic({topic})"
    for topic in s.log.deletion_retries:
        p.log(f"Deletion of topic {topic} (re)started", "TopicDeletionManager")
    if p.former:
        p.log(event_processed(prev, s))
    for message in s.log.messages:
        p.log(message)
    v.phase = phase
    v.messages += _zookeeper_writes(s, prev, p.lane)
    v.messages += _requests_sent(s, prev, p.lane, epochs=v.epochs)


def _phase_is_the_event(p: _Processing) -> str:
    return p.event.kind.name


def _broker_change(p: _Processing) -> str:
    before, after, registered = dict(p.c0.live_brokers), dict(p.c1.live_brokers), dict(p.view.prev.zk.brokers)
    new = sorted(set(after) - set(before))
    dead = sorted(set(before) - set(after))
    bounced = sorted(b for b in set(before) & set(after) if after[b] != before[b])
    p.log(f"Newly added brokers: {_csv(new)}, deleted brokers: {_csv(dead)}, bounced brokers: "
          f"{_csv(bounced)}, all live brokers: {_csv(sorted(after))}")
    calls = []
    if new:  # KafkaController.processBrokerChange's order: new, then bounced, then dead brokers
        calls.append(f"onBrokerStartup({_csv(new)})")
        p.log(f"New broker startup callback for {_csv(new)}")
    if bounced:
        calls += [f"onBrokerFailure({_csv(bounced)})", f"onBrokerStartup({_csv(bounced)})"]
        p.log(f"Broker failure callback for {_csv(bounced)}")
        p.log(f"New broker startup callback for {_csv(bounced)}")
    if dead:
        calls.append(f"onBrokerFailure({_csv(dead)})")
        p.log(f"Broker failure callback for {_csv(dead)}")
    unnoticed = sorted(b for b in set(before) & set(after) if registered.get(b, before[b]) != before[b]
                       and after[b] == before[b])
    if unnoticed:
        calls.append(f"bounce of {_csv(unnoticed)} not noticed (no broker epochs)")
    return "BrokerChange: " + ("; ".join(calls) if calls else "no change")


def _topic_change(p: _Processing) -> str:
    new_partitions = sorted(set(dict(p.c1.assignments)) - set(dict(p.c0.assignments)))
    if not new_partitions:
        return p.event.kind.name
    names = _csv([partition_name(tp) for tp in new_partitions])
    p.log(f"New partition creation callback for {names}")
    return f"TopicChange: onNewPartitionCreation({names})"


def _topic_deletion(p: _Processing) -> str:
    started = sorted(set(p.c1.topics_to_be_deleted) - set(p.c0.topics_to_be_deleted))
    if not started:
        return p.event.kind.name
    p.log(f"Starting topic deletion for topics {_csv(started)}")
    return f"TopicDeletion: enqueueTopicsForDeletion({_csv(started)})"


def _stop_replica_response(p: _Processing) -> str:
    event, v = p.event, p.view
    replica = _csv([replica_name((t, part, event.broker)) for t, part in event.partitions])
    method = "failReplicaDeletion" if event.error else "completeReplicaDeletion"
    current = dict(v.prev.zk.brokers).get(event.broker)
    if event.broker_epoch >= 0 and current is None:
        v.title += f"; broker {event.broker} has died since it answered"
    elif event.broker_epoch >= 0 and current != event.broker_epoch:
        since = f" (broker epoch {current})" if v.epochs else ""
        v.title += f"; broker {event.broker} has restarted since{since}: the response is stale"
    return f"TopicDeletionManager.{method}({replica})"


def _reelect(p: _Processing) -> str:
    p.log(f"controller elected with epoch {p.c1.epoch}: initializing controller context")
    return "controller failover: onControllerFailover"


def _controlled_shutdown(p: _Processing) -> str:
    for broker, remaining, error in p.view.s.log.controlled_shutdown_results:
        answer = error or f"remaining partitions [{_csv([partition_name(tp) for tp in remaining])}]"
        p.view.message(p.lane, _broker(broker), f"ControlledShutdownResponse: {answer}", "response")
    return f"controlled shutdown: doControlledShutdown({p.event.broker})"


def _log_dir_event_notification(p: _Processing) -> str:
    return f"LogDirEventNotification: onBrokerLogDirFailure({_csv(p.view.prev.zk.log_dir_event_notifications)})"


def _fixed_phase(phase: str) -> Callable[[_Processing], str]:
    return lambda p: phase


#: The phase (the Kafka method the event ran) of each controller event whose view says more than its name.
_EVENT_PHASES: dict[EventKind, Callable[[_Processing], str]] = {
    EventKind.BrokerChange: _broker_change,
    EventKind.TopicChange: _topic_change,
    EventKind.TopicDeletion: _topic_deletion,
    EventKind.TopicDeletionStopReplicaResponseReceived: _stop_replica_response,
    EventKind.Reelect: _reelect,
    EventKind.ControlledShutdown: _controlled_shutdown,
    EventKind.PreferredReplicaLeaderElection: _fixed_phase(
        "PreferredReplicaLeaderElection: onPreferredReplicaElection"),
    EventKind.AutoPreferredReplicaLeaderElection: _fixed_phase(
        "AutoPreferredReplicaLeaderElection: checkAndTriggerAutoLeaderRebalance"),
    EventKind.LogDirEventNotification: _log_dir_event_notification,
    EventKind.LeaderAndIsrResponseReceived: _fixed_phase("LeaderAndIsrResponseReceived: onReplicasBecomeOffline"),
    EventKind.ApiPartitionReassignment: _fixed_phase("ApiPartitionReassignment: processApiPartitionReassignment"),
    EventKind.AlterIsrReceived: _fixed_phase("AlterIsrReceived: processAlterIsr"),
    EventKind.ElectPreferredLeaders: _fixed_phase("ReplicaLeaderElection (PREFERRED): processReplicaLeaderElection"),
    EventKind.ElectUncleanLeaders: _fixed_phase("ReplicaLeaderElection (UNCLEAN): processReplicaLeaderElection"),
    EventKind.UncleanLeaderElectionEnable: _fixed_phase(
        "UncleanLeaderElectionEnable: triggerOnlinePartitionStateChange"),
}


def _controller_log(log: list[dict[str, str]], line: str, who: str = "") -> None:
    prefix = f"[{who}] " if who else ""
    log.append({"logger": "controller.log", "line": f"{prefix}{line}"})


def _csv(items: Sequence[Any]) -> str:
    return ",".join(str(i) for i in items)


K = ActionKind
#: The view of each kind of action: its title and the messages and log lines it adds.
_STEP_VIEWS: dict[ActionKind, Callable[[_StepView], None]] = {
    K.ControllerProcessEvent: _controller_processes_event,
    K.BrokerApplyRequest: _broker_applies,
    K.BrokerFailsStopReplica: _broker_applies,
    K.BrokerAppliesRequestAndDies: _broker_applies,
    K.LeaderShrinksIsr: _leader_changes_isr,
    K.LeaderExpandsIsr: _leader_changes_isr,
    K.BrokerPropagatesIsrChanges: _broker_propagates_isr_changes,
    K.BrokerFailure: _broker_failure,
    K.BrokerStartup: _broker_startup,
    K.AdminCreateTopic: _admin_create_topic,
    K.AdminAddPartitions: _admin_add_partitions,
    K.AdminDeleteTopic: _admin_delete_topic,
    K.AdminRecreateTopic: _admin_recreate_topic,
    K.AdminReassignPartitions: _admin_reassign_partitions,
    K.ControllerFailover: _controller_failover,
    K.ControllerMove: _controller_failover,
    K.ZombieControllerProcessEvent: _former_controller_processes_event,
    K.BrokerControlledShutdown: _broker_controlled_shutdown,
    K.BrokerShutdownCompletes: _broker_shutdown_completes,
    K.LogDirFailure: _log_dir_failure,
    K.AdminPreferredReplicaElection: _admin_preferred_replica_election,
    K.AutoLeaderRebalanceTimer: _auto_rebalance_timer,
    K.AdminAlterUncleanLeaderElection: _admin_alter_unclean_leader_election,
    K.AdminAlterTopicUncleanLeaderElection: _admin_alter_topic_unclean_leader_election,
    K.AdminCancelReassignment: _admin_cancel_reassignment,
    K.AdminAlterPartitionReassignments: _admin_alter_partition_reassignments,
    K.AdminCancelPartitionReassignments: _admin_cancel_partition_reassignments,
    K.AdminElectPreferredLeaders: _admin_elect_preferred_leaders,
    K.AdminElectUncleanLeaders: _admin_elect_unclean_leaders,
}


def _new_events(s: ClusterState, prev: ClusterState, *, popped: bool, epochs: bool = True,
                leader_step: bool = False) -> list[dict[str, str]]:
    """Events that joined the controller's queue in this step: watches fired by ZooKeeper, StopReplica
    responses sent by brokers (with the broker epoch of the incarnation that answered), and AlterIsr requests
    sent again (a leader's first, ``leader_step``, is the step's own message)."""
    before = prev.controller.events[1:] if popped else prev.controller.events
    after = s.controller.events
    added = after[len(before):] if after[:len(before)] == before else after
    messages = []
    for e in added:
        if e.kind is EventKind.TopicDeletionStopReplicaResponseReceived:
            error = "KAFKA_STORAGE_ERROR" if e.error else "NONE"
            epoch = f" (sent by broker epoch {e.broker_epoch})" if e.broker_epoch >= 0 and epochs else ""
            answered = _csv([partition_name(tp) for tp in e.partitions])
            messages.append(_msg(_broker(e.broker), CONTROLLER,
                                 f"StopReplica response {answered}: {error}{epoch}", "response",
                                 queued=event_item(CONTROLLER, e, epochs)))
        elif e.kind is EventKind.LeaderAndIsrResponseReceived:
            answered = _csv([partition_name(tp) for tp in e.partitions])
            messages.append(_msg(_broker(e.broker), CONTROLLER, f"LeaderAndIsr response {answered}: "
                                                                "KAFKA_STORAGE_ERROR", "response",
                                 queued=event_item(CONTROLLER, e, epochs)))
        elif e.kind is EventKind.AlterIsrReceived and not leader_step:
            tp, sent = e.isrs_to_alter[0]
            messages.append(_msg(_broker(e.broker), CONTROLLER,
                                 f"AlterIsr {partition_name(tp)}: newIsr={list(sent.isr)} (again)", "request",
                                 queued=event_item(CONTROLLER, e, epochs)))
        elif e.kind in (EventKind.ControlledShutdown, EventKind.Reelect, EventKind.AutoPreferredReplicaLeaderElection,
                        EventKind.AlterIsrReceived,
                        EventKind.UncleanLeaderElectionEnable, EventKind.ApiPartitionReassignment,
                        EventKind.ElectPreferredLeaders, EventKind.ElectUncleanLeaders):
            continue  # the step's own messages say where they come from
        else:
            watched = {EventKind.BrokerChange: "/brokers/ids", EventKind.TopicChange: "/brokers/topics",
                       EventKind.TopicDeletion: "/admin/delete_topics",
                       EventKind.IsrChangeNotification: "/isr_change_notification",
                       EventKind.PartitionModifications: f"/brokers/topics/{e.topic}",
                       EventKind.PartitionReassignment: "/admin/reassign_partitions",
                       EventKind.PreferredReplicaLeaderElection: "/admin/preferred_replica_election",
                       EventKind.LogDirEventNotification: "/log_dir_event_notification"}.get(e.kind, "")
            if e.kind is EventKind.PartitionReassignmentIsrChange:
                t, p = e.partitions[0]
                watched = f"/brokers/topics/{t}/partitions/{p}/state"
            messages.append(_msg(ZOOKEEPER, CONTROLLER, f"watch on {watched} fires: {e.describe()}", "watch",
                                 queued=event_item(CONTROLLER, e, epochs)))
    return messages


def _zookeeper_writes(s: ClusterState, prev: ClusterState, lane: str = CONTROLLER) -> list[dict[str, str]]:
    z0, z1 = prev.zk, s.zk
    writes = []
    before, after = dict(z0.partitions), dict(z1.partitions)
    for tp in sorted(set(before) | set(after)):
        if before.get(tp) == after.get(tp):
            continue
        path = f"/brokers/topics/{tp[0]}/partitions/{tp[1]}/state"
        lai = after.get(tp)
        if lai is None:
            writes.append(_msg(lane, ZOOKEEPER, f"delete {path}", "write"))
        else:
            label = (f"write {path}: leader={lai.leader} leaderEpoch={lai.leader_epoch} isr={_ids(lai.isr)} "
                     f"zkVersion={lai.zk_version}{recovery_text(lai.leader_recovery_state)}")
            writes.append(_msg(lane, ZOOKEEPER, label, "write"))
    for topic in sorted(set(dict(z0.topics)) - set(dict(z1.topics))):
        writes.append(_msg(lane, ZOOKEEPER, f"delete /brokers/topics/{topic}", "write"))
    for topic in sorted(set(z0.delete_topics) - set(z1.delete_topics)):
        writes.append(_msg(lane, ZOOKEEPER, f"delete /admin/delete_topics/{topic}", "write"))
    if z0.reassign_partitions != z1.reassign_partitions:
        label = ("delete /admin/reassign_partitions" if not z1.reassign_partitions else
                 "write /admin/reassign_partitions: " + ", ".join(f"{partition_name(tp)}: {_ids(r)}"
                                                                 for tp, r in z1.reassign_partitions))
        writes.append(_msg(lane, ZOOKEEPER, label, "write"))
    if z0.preferred_replica_election and not z1.preferred_replica_election:
        writes.append(_msg(lane, ZOOKEEPER, "delete /admin/preferred_replica_election", "write"))
    if z0.log_dir_event_notifications and not z1.log_dir_event_notifications:
        writes.append(_msg(lane, ZOOKEEPER, "delete /log_dir_event_notification children", "write"))
    return writes


def _requests_sent(s: ClusterState, prev: ClusterState, lane: str = CONTROLLER, *,
                   epochs: bool = True) -> list[dict[str, str]]:
    """Requests the controller appended to the brokers' channels (a dropped channel is a note)."""
    messages = []
    before, after = dict(prev.channels), dict(s.channels)
    for b in sorted(set(before) | set(after)):
        q0, q1 = before.get(b, ()), after.get(b, ())
        if q1[:len(q0)] == q0:
            sent = q1[len(q0):]
        else:
            messages.append(_msg(_broker(b), _broker(b), f"controller drops {len(q0)} queued request(s) "
                                                         "(ControllerChannelManager.removeBroker)", "note"))
            sent = q1
        messages += [_msg(lane, _broker(b), describe_request(r, epochs), "request", queued=request_item(b, r, epochs))
                     for r in sent]
    return messages


def _state_change_log(s: ClusterState, prev: ClusterState, former: bool = False) -> list[dict[str, str]]:
    """The step's state-change.log lines, under the epoch of the controller that made them (the former
    controller's, when it is the one at work)."""
    c0, c1 = (prev.zombie, s.zombie or prev.zombie) if former else (prev.controller, s.controller)
    assert c0 is not None and c1 is not None
    epoch = c1.epoch
    lines = []
    before, after = dict(c0.partition_states), dict(c1.partition_states)
    for tp in sorted(set(before) | set(after)):
        old = before[tp].name if tp in before else "NonExistentPartition"
        new = after[tp].name if tp in after else "NonExistentPartition"
        if old != new:
            lines.append(f"Changed partition {partition_name(tp)} state from {old} to {new}")
    for (t, p, b), old_state, new_state in s.log.replica_transitions:
        lines.append(f"Changed state of replica {b} for partition {t}-{p} from {old_state.name} to {new_state.name}")
    for (t, p, b), current, target in s.log.illegal_transitions:
        lines.append(f"Controller epoch {epoch} initiated state change of replica {b} for partition {t}-{p} from "
                     f"{current.name} to {target.name} failed")
    return [{"logger": "state-change.log", "line": f"[Controller epoch={epoch}] {line}"} for line in lines]


# ---- notes: one line for a value a Kafka engineer stops at -----------------------------------


def explanations(s: ClusterState, prev: ClusterState, messages: Sequence[dict[str, str]] = ()) -> list[str]:
    """The step's notes on values that need one: a partition left without a leader (-1), an
    UpdateMetadata's leader -2, a leader epoch that jumps."""
    notes = []
    before, after = _leaderships(prev), _leaderships(s)
    for tp in sorted(after):
        lai, old = after[tp], before.get(tp)
        name = partition_name(tp)
        if lai.leader == NO_LEADER and (old is None or old.leader != NO_LEADER):
            why = ("its topic is being deleted, and taking its replicas offline (OfflineReplica) removed the leader"
                   if tp[0] in s.controller.topics_to_be_deleted else
                   "no live replica of the ISR could be elected, so the partition is offline until one is")
            notes.append(f"{name}: leader -1 is LeaderAndIsr.NoLeader, no leader: {why}.")
        if old is not None and lai.leader_epoch > old.leader_epoch + 1:
            notes.append(f"{name}: the leader epoch jumps from {old.leader_epoch} to {lai.leader_epoch}: the "
                         f"controller changed the partition's leader or ISR {lai.leader_epoch - old.leader_epoch} "
                         "times in this step, and each change takes a new leader epoch.")
    accepted_before = {(b.id, h.partition): h.leader_epoch for b in prev.brokers for h in b.partitions}
    for b in s.brokers:
        for h in b.partitions:
            old_epoch = accepted_before.get((b.id, h.partition))
            if old_epoch is not None and old_epoch >= 0 and h.leader_epoch > old_epoch + 1:
                notes.append(f"{partition_name(h.partition)}: broker {b.id} goes from leader epoch {old_epoch} to "
                             f"{h.leader_epoch}: it missed the leadership changes in between (made while it was "
                             "down, or sent in requests it did not accept).")
    for request in _requests_of_the_step(s, prev):
        if request.kind is RequestKind.UpdateMetadata:
            for m in request.metadata_states:
                if m.leader == LEADER_DURING_DELETE:
                    notes.append(f"{partition_name(m.partition)}: leader -2 in an UpdateMetadata is "
                                 "LeaderAndIsr.LeaderDuringDelete: the topic is being deleted, and a broker that "
                                 "applies the request removes the partition from its metadata cache.")
        elif request.kind is RequestKind.LeaderAndIsr:
            for p in request.leader_states:
                if p.leader == NO_LEADER:
                    notes.append(f"{partition_name(p.partition)}: leader=-1 in a LeaderAndIsr is "
                                 "LeaderAndIsr.NoLeader: the partition has no leader; its replicas only keep their "
                                 "logs.")
    return notes


def _leaderships(s: ClusterState) -> dict[TopicPartition, LeaderAndIsr]:
    """Each partition's leadership as the partition table shows it (the controller's, else the znode's)."""
    return {**dict(s.zk.partitions), **dict(s.controller.leadership)}


def _requests_of_the_step(s: ClusterState, prev: ClusterState) -> list[Request]:
    """The requests the step sent: appended to a channel (a broker that takes one off its head, and
    the UpdateMetadata requests applied with it, shortens its channel from the front)."""
    requests: list[Request] = []
    before, after = dict(prev.channels), dict(s.channels)
    for b in sorted(set(before) | set(after)):
        q0, q1 = list(before.get(b, ())), list(after.get(b, ()))
        while q0 and q1[:len(q0)] != q0:
            q0.pop(0)  # taken off the head in this step
        requests += q1[len(q0):]
    return requests


_REQUEST_NAMES = {RequestKind.LeaderAndIsr: "LeaderAndIsr", RequestKind.UpdateMetadata: "UpdateMetadata",
                  RequestKind.StopReplica: "StopReplica"}


def _rejection_note(prev: ClusterState, s: ClusterState, broker_id: int, request: Request, reason: str) -> str:
    """Why the broker refused the whole request (StepLog.rejection), in one line: the controller epoch
    it had heard of before the step, the broker epoch it has after it (a restart in the same step)."""
    broker = prev.broker(broker_id)
    kind = _REQUEST_NAMES.get(request.kind, request.kind.name)
    if reason.startswith("STALE_CONTROLLER_EPOCH"):
        return (f"Broker {broker_id} did not accept this {kind}: it comes from controller epoch "
                f"{request.controller_epoch}, and the broker has already heard from controller epoch "
                f"{broker.controller_epoch}, a newer controller (STALE_CONTROLLER_EPOCH).")
    if reason.startswith("STALE_BROKER_EPOCH"):
        return (f"Broker {broker_id} did not accept this {kind}: it was sent for broker epoch {request.broker_epoch}, "
                f"an earlier incarnation of the broker, which has restarted since (broker epoch "
                f"{s.broker(broker_id).epoch}; "
                "STALE_BROKER_EPOCH, KIP-380).")
    return f"Broker {broker_id} did not accept this {kind}: {reason}."


def _update_metadata_rejections(s: ClusterState, prev: ClusterState) -> list[str]:
    """A step that is no broker's own applies the UpdateMetadata requests at the heads of the channels
    as well (the model's shortcut); when one of them was refused (StepLog.rejection), say which and why."""
    taken: list[tuple[int, Request]] = []
    for b, q0 in prev.channels:
        q1 = s.channel(b)
        k = 0
        while k < len(q0) and tuple(q0[k:]) != tuple(q1[:len(q0) - k]):
            k += 1
        taken += [(b, r) for r in q0[:k] if r.kind is RequestKind.UpdateMetadata]
    if len(taken) != 1:  # StepLog.rejection does not say which one (or it was sent and applied in this step)
        return [f"A broker did not accept an UpdateMetadata applied in this step: {s.log.rejection}."]
    broker, request = taken[0]
    note = _rejection_note(prev, s, broker, request, s.log.rejection)
    return [note.replace("this UpdateMetadata", "the UpdateMetadata at the head of its channel")]


def _stop_replica_partitions_fenced(v: _StepView, request: Request) -> list[str]:
    """The partitions of an applied StopReplica v3 the broker did not stop because their leader epoch is not newer
    than its own (``ReplicaManager.stopReplicas`` 2.6.0, FENCED_LEADER_EPOCH), read from its state after the step."""
    before, after = v.prev.broker(v.broker), v.s.broker(v.broker)
    notes = []
    for ps in request.partition_states:
        held, kept = before.hosted(ps.partition), after.hosted(ps.partition)
        if (held is None or kept is None or ps.leader_epoch < 0 or ps.leader_epoch > held.leader_epoch
                or ps.partition in before.offline_logs or (not ps.delete_partition and not kept.fetching)):
            continue
        notes.append(f"{partition_name(ps.partition)}: broker {v.broker} did not stop the partition: the request's "
                     f"leader epoch {ps.leader_epoch} is not newer than the {held.leader_epoch} it holds "
                     "(FENCED_LEADER_EPOCH" + ("; from 3.5, KAFKA-13972, an equal epoch is accepted)."
                                               if ps.leader_epoch == held.leader_epoch else ")."))
    return notes


def _partitions_not_accepted(v: _StepView, request: Request) -> list[str]:
    """The partitions of an applied LeaderAndIsr the broker did not take, and why.

    The model records only a whole request's refusal (StepLog.rejection); per partition, what the
    broker took is read from its state after the step (the leader epoch it holds), and the reason
    is the first of ``ReplicaManager.becomeLeaderOrFollower``'s checks (2.3) that the partition fails.
    """
    if request.kind is RequestKind.StopReplica:
        return _stop_replica_partitions_fenced(v, request)
    if request.kind is not RequestKind.LeaderAndIsr:
        return []
    before, after = v.prev.broker(v.broker), v.s.broker(v.broker)
    held_before = {h.partition: h.leader_epoch for h in before.partitions}
    held_after = {h.partition: h.leader_epoch for h in after.partitions}
    notes = []
    for p in request.leader_states:
        if held_after.get(p.partition) == p.leader_epoch:
            continue
        name, who = partition_name(p.partition), f"broker {v.broker}"
        if p.partition in v.s.log.inconsistent_topic_ids:
            why = (f"the topic ID {dict(request.topic_ids)[p.partition[0]]} differs from the "
                   f"{before.log_topic_id(p.partition)} in its log's partition.metadata (INCONSISTENT_TOPIC_ID)")
        elif v.broker not in p.replicas:
            why = f"it is not one of the assigned replicas {_ids(p.replicas)} (UNKNOWN_TOPIC_OR_PARTITION)"
        elif p.partition in before.offline_logs and p.partition not in before.logs:
            why = ("it marked the partition offline when it could not create its log (KAFKA_STORAGE_ERROR until it "
                   "restarts)")
        elif p.partition in before.offline_logs:
            why = "its log directory for the partition has failed (KAFKA_STORAGE_ERROR)"
        elif p.partition in after.offline_logs:
            why = ("it has no log of the partition, the request says isNew=false and one of its log directories is "
                   "offline: LogManager.getOrCreateLog refuses (KAFKA_STORAGE_ERROR) and the partition is marked "
                   "offline (KAFKA-10314)")
        elif p.partition in held_before and p.leader_epoch <= held_before[p.partition]:
            why = (f"leader epoch {p.leader_epoch} is not newer than the {held_before[p.partition]} it holds "
                   "(STALE_CONTROLLER_EPOCH for the partition)")
        elif p.leader == NO_LEADER:
            why = "the request names no leader (-1), so it only creates its replica and log"
        else:
            why = (f"the leader {p.leader} is not among the live brokers of its metadata cache, so it only creates "
                   "its replica and log ('cannot become follower since the new leader is unavailable')")
        notes.append(f"{name}: {who} did not take leader epoch {p.leader_epoch} from this LeaderAndIsr: {why}.")
    return notes
