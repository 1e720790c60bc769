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

Everything is derived from the states (and the step's :class:`~model.zk.state.values.StepLog`); nothing here
changes the model's behaviour.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from model.scenario import Scenario
from model.zk.state.values import (
    ClusterState,
    ControllerEvent,
    EventKind,
    LeaderAndIsr,
    Request,
    RequestKind,
    TopicPartition,
    partition_name,
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
               action: Any = None) -> dict[str, Any]:
    """The view of ``state``; given ``prev`` and ``action``, also of the step that reached it."""
    view: dict[str, Any] = {
        "tables": [_partitions(state), _cluster(state), _brokers(scenario, state), _controller(scenario, state)],
        "lanes": _lanes(scenario),
    }
    if prev is not None and action is not None:
        view.update(_step(state, prev, action))
    return view


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


def _cluster(s: ClusterState) -> dict[str, Any]:
    cells = {"registered": {str(b): e for b, e in s.zk.brokers},
             "live_brokers": {str(b): e for b, e in s.controller.live_brokers}}
    return _table("cluster", "Cluster", True, _CLUSTER_COLUMNS, [{"key": "", "cells": cells}])


def _brokers(scenario: Scenario, s: ClusterState) -> dict[str, Any]:
    racks = scenario.racks
    rows = []
    for b in s.brokers:
        rows.append({"key": f"broker {b.id}", "cells": {
            "rack": racks.get(b.id),
            "alive": b.alive,
            "broker_epoch": b.epoch,
            "hosted": [f"{partition_name(h.partition)} (leader {h.leader}, leader epoch {h.leader_epoch})"
                       for h in b.partitions],
            "logs": [partition_name(tp) for tp in b.logs],
            "queued": [describe_request(r) for r in s.channel(b.id)],
        }})
    return _table("brokers", "Brokers", False, _BROKER_COLUMNS, rows)


def _controller(scenario: Scenario, s: ClusterState) -> dict[str, Any]:
    """The controller's queue and deletion sets; with the events of a failover, a controlled shutdown or a log
    directory failure in the scenario, also shuttingDownBrokerIds, replicasOnOfflineDirs and the former
    controller still at work (columns a scenario without them does not show)."""
    c = s.controller
    cells: dict[str, Any] = {
        "events": [describe_event(e) for e in c.events],
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
                           f"epoch {s.zombie.epoch}, queue [{', '.join(describe_event(e) for e in s.zombie.events)}]")
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


def describe_request(r: Request) -> str:
    """A request as the diagram labels it, with the broker epoch it was sent for (KIP-380)."""
    epoch = f", brokerEpoch={r.broker_epoch}" if r.broker_epoch >= 0 else ""
    if r.kind is RequestKind.LeaderAndIsr:
        parts = "; ".join(f"{partition_name(p.partition)} leader={p.leader} leaderEpoch={p.leader_epoch} "
                          f"isr={_ids(p.isr)}{' isNew' if p.is_new else ''}" for p in r.leader_states)
        return f"LeaderAndIsr(controllerEpoch={r.controller_epoch}{epoch}) [{parts}]"
    if r.kind is RequestKind.UpdateMetadata:
        parts = "; ".join(f"{partition_name(m.partition)} leader={m.leader} leaderEpoch={m.leader_epoch}"
                          for m in r.metadata_states)
        return (f"UpdateMetadata(controllerEpoch={r.controller_epoch}{epoch}, liveBrokers={_ids(r.live_brokers)}) "
                f"[{parts}]")
    parts = ", ".join(partition_name(tp) for tp in r.partitions)
    return (f"StopReplica(deletePartitions={str(r.delete_partitions).lower()}, "
            f"controllerEpoch={r.controller_epoch}{epoch}) [{parts}]")


def describe_event(e: ControllerEvent) -> str:
    if e.kind is EventKind.TopicDeletionStopReplicaResponseReceived:
        answered = f", answered by broker epoch {e.broker_epoch}" if e.broker_epoch >= 0 else ""
        return (f"TopicDeletionStopReplicaResponseReceived(broker {e.broker}, "
                f"{_csv([partition_name(tp) for tp in e.partitions])}, "
                f"{'KAFKA_STORAGE_ERROR' if e.error else 'NONE'}{answered})")
    return e.describe()


def _ids(ids: Sequence[int]) -> str:
    return "[" + ",".join(str(i) for i in ids) + "]"


def _broker(b: int) -> str:
    return f"broker {b}"


# ---- the step --------------------------------------------------------------------------------


def _step(s: ClusterState, prev: ClusterState, action: Any) -> dict[str, Any]:
    kind, broker, topic = action.kind, action.broker, action.topic
    messages: list[dict[str, str]] = []
    log: list[dict[str, str]] = []
    phase = ""
    if kind == "ControllerProcessEvent":
        event = prev.controller.events[0]
        title, phase = _controller_step(s, prev, event, messages, log)
        actor = CONTROLLER
    elif kind == "ZombieControllerProcessEvent":
        assert prev.zombie is not None
        event = prev.zombie.events[0]
        title, phase = _controller_step(s, prev, event, messages, log, former=True)
        actor = FORMER
    elif kind in ("BrokerApplyRequest", "BrokerFailsStopReplica"):
        title = _broker_applies(s, prev, broker, kind == "BrokerFailsStopReplica", messages, log)
        actor = _broker(broker)
    elif kind == "BrokerFailure":
        title = f"Broker {broker} dies: its ZooKeeper session expires and /brokers/ids/{broker} goes away"
        messages.append(_msg(_broker(broker), ZOOKEEPER, f"session expires: /brokers/ids/{broker} deleted", "write"))
        actor = _broker(broker)
    elif kind == "BrokerStartup":
        epoch = s.broker(broker).epoch
        title = f"Broker {broker} restarts and registers /brokers/ids/{broker} with broker epoch {epoch}"
        messages.append(_msg(_broker(broker), ZOOKEEPER, f"register /brokers/ids/{broker} (broker epoch {epoch})",
                             "write"))
        actor = _broker(broker)
    elif kind == "AdminCreateTopic":
        title = f"Admin creates topic {topic}: writes /brokers/topics/{topic}"
        messages.append(_msg(ADMIN, ZOOKEEPER, f"create /brokers/topics/{topic}", "write"))
        actor = ADMIN
    elif kind == "AdminDeleteTopic":
        title = f"Admin asks to delete topic {topic}: creates /admin/delete_topics/{topic}"
        messages.append(_msg(ADMIN, ZOOKEEPER, f"create /admin/delete_topics/{topic}", "write"))
        actor = ADMIN
    else:
        title, actor = _environment_step(s, prev, action, messages)
    messages += _new_events(s, prev, popped=kind == "ControllerProcessEvent")
    log += _state_change_log(s, prev, former=kind == "ZombieControllerProcessEvent")
    return {"title": title, "phase": phase, "actor": actor, "messages": messages, "log": log}


def _msg(source: str, target: str, label: str, kind: str) -> dict[str, str]:
    return {"from": source, "to": target, "label": label, "kind": kind}


def _environment_step(s: ClusterState, prev: ClusterState, action: Any,
                      messages: list[dict[str, str]]) -> tuple[str, str]:
    """Title and actor of the environment steps other than broker failures and restarts and topic creation and
    deletion (those have their own branches in :func:`_step`)."""
    kind, broker, topic = action.kind, action.broker, action.topic
    if kind in ("ControllerFailover", "ControllerMove"):
        epoch = s.zk.controller_epoch
        how = ("/controller is deleted under the running controller" if kind == "ControllerMove"
               else "the controller's host dies or its ZooKeeper session expires")
        rest = ("; the former controller, which has not noticed, still holds "
                f"{len(s.zombie.events)} event(s)" if s.zombie is not None else "; its queue and channels die with it")
        messages.append(_msg(CONTROLLER, ZOOKEEPER, f"/controller gone ({kind})", "write"))
        messages.append(_msg(ZOOKEEPER, CONTROLLER, f"a new controller registers /controller, controller epoch {epoch}",
                             "watch"))
        title = f"Controller failover: {how}; a new controller is elected with controller epoch {epoch}{rest}"
        return title, CONTROLLER
    if kind == "BrokerControlledShutdown":
        epoch = s.broker(broker).epoch
        messages.append(_msg(_broker(broker), CONTROLLER, f"ControlledShutdownRequest(brokerId={broker}, "
                                                           f"brokerEpoch={epoch})", "request"))
        return f"Broker {broker} (broker epoch {epoch}) asks the controller for a controlled shutdown", _broker(broker)
    if kind == "BrokerShutdownCompletes":
        messages.append(_msg(_broker(broker), ZOOKEEPER, f"shut down: /brokers/ids/{broker} deleted", "write"))
        return f"Broker {broker} completes its shutdown: /brokers/ids/{broker} goes away", _broker(broker)
    if kind == "LogDirFailure":
        tp = f"{action.topic}-{action.partition}"
        messages.append(_msg(_broker(broker), ZOOKEEPER, "create /log_dir_event_notification/log_dir_event_…",
                             "write"))
        return (f"The log directory of {tp} on broker {broker} fails: the partition goes offline on the broker, "
                "which writes /log_dir_event_notification"), _broker(broker)
    if kind == "AdminPreferredReplicaElection":
        messages.append(_msg(ADMIN, ZOOKEEPER, "create /admin/preferred_replica_election", "write"))
        return (f"Admin runs kafka-preferred-replica-election for topic {topic}: creates "
                "/admin/preferred_replica_election"), ADMIN
    if kind == "AutoLeaderRebalanceTimer":
        messages.append(_msg(CONTROLLER, CONTROLLER, "auto-leader-rebalance-task fires", "note"))
        return "The auto leader rebalance timer fires: AutoPreferredReplicaLeaderElection is queued", CONTROLLER
    if kind == "AdminAlterUncleanLeaderElection":
        value = str(s.zk.unclean_leader_election_enable).lower()
        messages.append(_msg(ADMIN, ZOOKEEPER, f"set unclean.leader.election.enable={value} (cluster default)",
                             "write"))
        return f"Admin sets unclean.leader.election.enable={value} for the cluster (kafka-configs)", ADMIN
    if kind == "AdminCancelReassignment":
        messages.append(_msg(ADMIN, ZOOKEEPER, "delete /admin/reassign_partitions", "write"))
        return "Admin cancels the reassignment: deletes /admin/reassign_partitions", ADMIN
    if kind == "AdminReassignPartitions":
        messages.append(_msg(ADMIN, ZOOKEEPER, "create /admin/reassign_partitions", "write"))
        return f"Admin runs kafka-reassign-partitions --execute for topic {topic}", ADMIN
    if kind == "AdminAddPartitions":
        messages.append(_msg(ADMIN, ZOOKEEPER, f"write /brokers/topics/{topic}", "write"))
        return f"Admin adds partitions to topic {topic} (kafka-topics --alter --partitions)", ADMIN
    if kind == "AdminRecreateTopic":
        messages.append(_msg(ADMIN, ZOOKEEPER, f"create /brokers/topics/{topic}", "write"))
        return f"Admin creates topic {topic} again, under the name of the deleted one", ADMIN
    if kind in ("LeaderShrinksIsr", "LeaderExpandsIsr"):
        change = [u for u in s.log.isr_updates]
        detail = (f": ISR {list(change[0][2])} -> {list(change[0][3])}" if change else "")
        messages.append(_msg(_broker(broker), ZOOKEEPER, f"write /brokers/topics/{topic}/partitions/{action.partition}"
                                                          f"/state{detail}", "write"))
        verb = "shrinks" if kind == "LeaderShrinksIsr" else "expands"
        return f"Leader {broker} {verb} the ISR of {topic}-{action.partition}{detail}", _broker(broker)
    return str(kind), CONTROLLER


def _controller_step(s: ClusterState, prev: ClusterState, event: ControllerEvent, messages: list[dict[str, str]],
                     log: list[dict[str, str]], former: bool = False) -> tuple[str, str]:
    c0, c1 = (prev.zombie, s.zombie or prev.zombie) if former else (prev.controller, s.controller)
    assert c0 is not None and c1 is not None
    who = f"The former controller (epoch {c0.epoch})" if former else "Controller"
    lane = FORMER if former else CONTROLLER
    title = f"{who} processes {describe_event(event)}"
    messages.append(_msg(lane, lane, f"processes {describe_event(event)}", "note"))
    phase = event.kind.name
    if event.kind is EventKind.BrokerChange:
        before, after, registered = dict(c0.live_brokers), dict(c1.live_brokers), dict(prev.zk.brokers)
        new = sorted(set(after) - set(before))
        dead = sorted(set(before) - set(after))
        bounced = sorted(b for b in set(before) & set(after) if after[b] != before[b])
        _controller_log(log, f"Newly added brokers: {_csv(new)}, deleted brokers: {_csv(dead)}, bounced brokers: "
                             f"{_csv(bounced)}, all live brokers: {_csv(sorted(after))}")
        calls = []
        if new:  # KafkaController.processBrokerChange's order: new, then bounced, then dead brokers
            calls.append(f"onBrokerStartup({_csv(new)})")
            _controller_log(log, f"New broker startup callback for {_csv(new)}")
        if bounced:
            calls += [f"onBrokerFailure({_csv(bounced)})", f"onBrokerStartup({_csv(bounced)})"]
            _controller_log(log, f"Broker failure callback for {_csv(bounced)}")
            _controller_log(log, f"New broker startup callback for {_csv(bounced)}")
        if dead:
            calls.append(f"onBrokerFailure({_csv(dead)})")
            _controller_log(log, f"Broker failure callback for {_csv(dead)}")
        unnoticed = sorted(b for b in set(before) & set(after) if registered.get(b, before[b]) != before[b]
                           and after[b] == before[b])
        if unnoticed:
            calls.append(f"bounce of {_csv(unnoticed)} not noticed (no broker epochs)")
        phase = "BrokerChange: " + ("; ".join(calls) if calls else "no change")
    elif event.kind is EventKind.TopicChange:
        new_partitions = sorted(set(dict(c1.assignments)) - set(dict(c0.assignments)))
        if new_partitions:
            names = _csv([partition_name(tp) for tp in new_partitions])
            _controller_log(log, f"New partition creation callback for {names}")
            phase = f"TopicChange: onNewPartitionCreation({names})"
    elif event.kind is EventKind.TopicDeletion:
        started = sorted(set(c1.topics_to_be_deleted) - set(c0.topics_to_be_deleted))
        if started:
            _controller_log(log, f"Starting topic deletion for topics {_csv(started)}")
            phase = f"TopicDeletion: enqueueTopicsForDeletion({_csv(started)})"
    elif event.kind is EventKind.TopicDeletionStopReplicaResponseReceived:
        replica = _csv([replica_name((t, p, event.broker)) for t, p in event.partitions])
        method = "failReplicaDeletion" if event.error else "completeReplicaDeletion"
        phase = f"TopicDeletionManager.{method}({replica})"
        current = dict(prev.zk.brokers).get(event.broker)
        if event.broker_epoch >= 0 and current is None:
            title += f"; broker {event.broker} has died since it answered"
        elif event.broker_epoch >= 0 and current != event.broker_epoch:
            title += (f"; broker {event.broker} has restarted since (broker epoch {current}): "
                      "the response is stale")
    elif event.kind is EventKind.Reelect:
        phase = "controller failover: onControllerFailover"
        _controller_log(log, f"controller elected with epoch {c1.epoch}: initializing controller context")
    elif event.kind is EventKind.ControlledShutdown:
        phase = f"controlled shutdown: doControlledShutdown({event.broker})"
        for broker, remaining, error in s.log.controlled_shutdown_results:
            answer = error or f"remaining partitions [{_csv([partition_name(tp) for tp in remaining])}]"
            messages.append(_msg(lane, _broker(broker), f"ControlledShutdownResponse: {answer}", "response"))
    elif event.kind is EventKind.PreferredReplicaLeaderElection:
        phase = "PreferredReplicaLeaderElection: onPreferredReplicaElection"
    elif event.kind is EventKind.AutoPreferredReplicaLeaderElection:
        phase = "AutoPreferredReplicaLeaderElection: checkAndTriggerAutoLeaderRebalance"
    elif event.kind is EventKind.LogDirEventNotification:
        phase = f"LogDirEventNotification: onBrokerLogDirFailure({_csv(prev.zk.log_dir_event_notifications)})"
    elif event.kind is EventKind.LeaderAndIsrResponseReceived:
        phase = "LeaderAndIsrResponseReceived: onReplicasBecomeOffline"
    elif event.kind is EventKind.UncleanLeaderElectionEnable:
        phase = "UncleanLeaderElectionEnable: triggerOnlinePartitionStateChange"
    if s.log.zk_write_fenced:
        phase += "; ControllerMovedException: resigns"
    elif s.log.zombie_resigned:
        phase += "; onControllerResignation"
    for topic in s.log.completed_deletions:
        _controller_log(log, f"Deletion of topic {topic} successfully completed", "TopicDeletionManager")
        phase += f"; completeDeleteTopic({topic})"
    for topic in s.log.deletion_retries:
        _controller_log(log, f"Deletion of topic {topic} (re)started", "TopicDeletionManager")
    for message in s.log.messages:
        if not message.startswith("controller processes "):
            _controller_log(log, message)
    messages += _zookeeper_writes(s, prev, lane)
    messages += _requests_sent(s, prev, lane)
    return title, phase


def _controller_log(log: list[dict[str, str]], line: str, who: str = "") -> None:
    prefix = f"[{who}] " if who else ""
    log.append({"logger": "controller.log", "line": f"{prefix}{line}"})


def _csv(items: Sequence[Any]) -> str:
    return ",".join(str(i) for i in items)


def _broker_applies(s: ClusterState, prev: ClusterState, broker: int, storage_error: bool,
                    messages: list[dict[str, str]], log: list[dict[str, str]]) -> str:
    request = prev.channel(broker)[0]
    epoch = prev.broker(broker).epoch
    who = f"Broker {broker} (broker epoch {epoch})"
    rejection = next((m for m in s.log.messages if m.startswith(f"broker {broker} rejects ")), "")
    kafka_name = "LeaderAndIsr" if request.kind is RequestKind.LeaderAndIsr else "stop replica"
    if rejection:
        reason = rejection.rsplit(": ", 1)[-1]
        title = f"{who} rejects {describe_request(request)}: {reason}"
        messages.append(_msg(_broker(broker), _broker(broker), f"rejects {describe_request(request)}: {reason}",
                             "note"))
        if 0 <= request.broker_epoch < epoch:
            log.append({"logger": "server.log", "line": f"[Broker id={broker}] Received {kafka_name} request with "
                        f"broker epoch {request.broker_epoch} smaller than the current broker epoch {epoch}"})
    elif storage_error:
        title = f"{who} fails {describe_request(request)} with KAFKA_STORAGE_ERROR"
        messages.append(_msg(_broker(broker), _broker(broker), f"fails {describe_request(request)}", "note"))
    else:
        title = f"{who} applies {describe_request(request)}"
        messages.append(_msg(_broker(broker), _broker(broker), f"applies {describe_request(request)}", "note"))
        if request.kind is RequestKind.LeaderAndIsr:
            for p in request.leader_states:
                log.append({"logger": "state-change.log", "line": (
                    f"[Broker id={broker}] Received LeaderAndIsr request (leader={p.leader}, "
                    f"leaderEpoch={p.leader_epoch}, isr={_csv(p.isr)}, replicas={_csv(p.replicas)}, "
                    f"isNew={str(p.is_new).lower()}) from controller epoch {request.controller_epoch} for "
                    f"partition {partition_name(p.partition)}")})
        else:
            for tp in request.partitions:
                log.append({"logger": "state-change.log", "line": (
                    f"[Broker id={broker}] Handling stop replica (delete={str(request.delete_partitions).lower()}) "
                    f"for partition {partition_name(tp)}")})
    return title


def _new_events(s: ClusterState, prev: ClusterState, *, popped: bool) -> list[dict[str, str]]:
    """Events that joined the controller's queue in this step: watches fired by ZooKeeper, and
    StopReplica responses sent by brokers (with the broker epoch of the incarnation that answered)."""
    before = prev.controller.events[1:] if popped else prev.controller.events
    after = s.controller.events
    added = after[len(before):] if after[:len(before)] == before else after
    messages = []
    for e in added:
        if e.kind is EventKind.TopicDeletionStopReplicaResponseReceived:
            error = "KAFKA_STORAGE_ERROR" if e.error else "NONE"
            epoch = f" (sent by broker epoch {e.broker_epoch})" if e.broker_epoch >= 0 else ""
            answered = _csv([partition_name(tp) for tp in e.partitions])
            messages.append(_msg(_broker(e.broker), CONTROLLER,
                                 f"StopReplica response {answered}: {error}{epoch}", "response"))
        elif e.kind is EventKind.LeaderAndIsrResponseReceived:
            answered = _csv([partition_name(tp) for tp in e.partitions])
            messages.append(_msg(_broker(e.broker), CONTROLLER, f"LeaderAndIsr response {answered}: "
                                                                "KAFKA_STORAGE_ERROR", "response"))
        elif e.kind in (EventKind.ControlledShutdown, EventKind.Reelect, EventKind.AutoPreferredReplicaLeaderElection,
                        EventKind.UncleanLeaderElectionEnable):
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
            messages.append(_msg(ZOOKEEPER, CONTROLLER, f"watch on {watched} fires: {e.describe()}", "watch"))
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
                     f"zkVersion={lai.zk_version}")
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


def _requests_sent(s: ClusterState, prev: ClusterState, lane: str = CONTROLLER) -> list[dict[str, str]]:
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
        messages += [_msg(lane, _broker(b), describe_request(r), "request") for r in sent]
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
