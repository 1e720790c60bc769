"""Named properties of the Kafka controller model, each returning evidence.

State properties read a :class:`~model.zk.state.values.ClusterState`; transition properties read
``(prev, action, next)`` and the step's state-change log (``next.log``). Evidence names the
partition, the brokers and the states involved, so a report can say exactly what broke.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from explorer.contract import PropertyKind
from invariants.registry import register
from model.scenario import Scenario
from model.zk.environment import partition_leader
from model.zk.state.states import ReplicaState, replica_table
from model.zk.state.values import NO_LEADER, ClusterState, EventKind, LeaderRecoveryState
from model.zk.state.values import partition_name as _tp
from model.zk.state.values import replica_name as _replica

ALWAYS = PropertyKind.ALWAYS
SOMETIMES = PropertyKind.SOMETIMES
ACTION_ALWAYS = PropertyKind.ACTION_ALWAYS
ACTION_SOMETIMES = PropertyKind.ACTION_SOMETIMES

Check = Callable[..., dict[str, Any] | None]


# ---------------------------------------------------------------------------------------------
# triggers (explorer.contract.Property.trigger): where one is false, the checks it guards return None
# ---------------------------------------------------------------------------------------------

#: The fields of :class:`~model.zk.state.values.StepLog` that the transition properties guarded by
#: :func:`step_logged` read: each returns None on a step whose log leaves all of them empty.
LOGGED_FIELDS = ("zombie_step", "controller_initialized", "controller_resignations", "repeated_elections",
                 "failed_elections", "completed_deletions", "deletion_retries", "elections", "isr_updates",
                 "zk_conflicts", "reassignments_completed", "partitions_added", "additions_reverted", "topics_created",
                 "zk_write_fenced", "controlled_shutdown_results", "preferred_elections_completed")


def step_logged(prev: ClusterState, action: Any, nxt: ClusterState) -> bool:
    """Whether the step's log records one of :data:`LOGGED_FIELDS` (most steps log none: a broker applying a
    request, an event that changes nothing the properties look at)."""
    log = nxt.log
    return bool(log.zombie_step or log.controller_initialized or log.controller_resignations
                or log.repeated_elections or log.failed_elections or log.completed_deletions
                or log.deletion_retries or log.elections or log.isr_updates or log.zk_conflicts
                or log.reassignments_completed or log.partitions_added or log.additions_reverted
                or log.topics_created or log.zk_write_fenced or log.controlled_shutdown_results
                or log.preferred_elections_completed)


def _topics_changed(prev: ClusterState, action: Any, nxt: ClusterState) -> bool:
    """Whether the step made ZooKeeper's topic table anew (a step keeps the objects it did not change)."""
    return prev.zk.topics is not nxt.zk.topics


def _stray_logs_tracked(prev: ClusterState, action: Any, nxt: ClusterState) -> bool:
    return bool(prev.history.stray_logs)


def _leadership_changed(prev: ClusterState, action: Any, nxt: ClusterState) -> bool:
    """Whether the step made ZooKeeper's partition states, the controller's leadership or the brokers anew."""
    return (prev.zk.partitions is not nxt.zk.partitions or prev.controller.leadership is not nxt.controller.leadership
            or prev.brokers is not nxt.brokers)


def _replica_states_changed(prev: ClusterState, action: Any, nxt: ClusterState) -> bool:
    """Whether the step's log records replica state changes, a former controller's step or a controller's
    initialisation, or the step made the controller's replica states anew."""
    log = nxt.log
    return bool(log.zombie_step or log.controller_initialized or log.replica_transitions
                or prev.controller.replica_states is not nxt.controller.replica_states)


def _offline_dirs_changed(prev: ClusterState, action: Any, nxt: ClusterState) -> bool:
    return prev.controller.replicas_on_offline_dirs is not nxt.controller.replicas_on_offline_dirs


# ---------------------------------------------------------------------------------------------
# protocol properties
# ---------------------------------------------------------------------------------------------


@register("distinct_brokers_per_partition", ALWAYS, "protocol",
          "no partition lists a broker twice in its assignment (ZooKeeper or controller cache)")
def _distinct_brokers(scenario: Scenario) -> Check:
    def check(s: ClusterState) -> dict[str, Any] | None:
        for topic, parts in s.zk.topics:
            for p, reps in enumerate(parts):
                if len(set(reps)) != len(reps):
                    return {"partition": f"{topic}-{p}", "replicas": list(reps), "where": "zookeeper"}
        for tp, reps in s.controller.assignments:
            if len(set(reps)) != len(reps):
                return {"partition": _tp(tp), "replicas": list(reps), "where": "controller"}
        return None

    return check


@register("rack_spread", ALWAYS, "protocol",
          "every partition whose replicas Kafka's assignment placed spans min(RF, racks) racks")
def _rack_spread(scenario: Scenario) -> Check:
    racks = scenario.racks
    n_racks = len({r for r in racks.values() if r is not None})
    auto = {t.name for t in scenario.topics if t.auto_assigned}

    def check(s: ClusterState) -> dict[str, Any] | None:
        if n_racks == 0:
            return None
        for topic, parts in s.zk.topics:
            if topic not in auto:
                continue
            for p, reps in enumerate(parts):
                spanned = {racks[b] for b in reps}
                if len(spanned) < min(len(reps), n_racks):
                    return {"partition": f"{topic}-{p}", "replicas": list(reps),
                            "racks": [racks[b] for b in reps], "expected_racks": min(len(reps), n_racks)}
        return None

    return check


@register("deletion_completes_only_when_all_replicas_succeeded", ACTION_ALWAYS, "protocol",
          "a topic leaves ZooKeeper only after every assigned replica's log was deleted by its broker",
          trigger=_topics_changed)
def _deletion_completes(scenario: Scenario) -> Check:
    def check(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
        gone = {t for t, _ in prev.zk.topics} - {t for t, _ in nxt.zk.topics}
        for topic in sorted(gone):
            parts = prev.zk.topic_assignment(topic) or ()
            states = dict(prev.controller.replica_states)
            undeleted = []
            for p, reps in enumerate(parts):
                for b in reps:
                    if (topic, p) in nxt.broker(b).logs:
                        undeleted.append({"replica": f"{topic}-{p}@{b}", "broker_alive": nxt.broker(b).alive,
                                          "replica_state_before": states.get(
                                              (topic, p, b), ReplicaState.NonExistentReplica).name})
            if undeleted:
                return {"topic": topic, "replicas_whose_log_remains": undeleted}
        return None

    return check


@register("recreated_topic_never_adopts_stray_log", ACTION_ALWAYS, "protocol",
          "no broker takes up, through a LeaderAndIsr after the topic was re-created, a partition whose log on "
          "its disk is left from the earlier topic of that name",
          trigger=_stray_logs_tracked)
def _no_stray_adoption(scenario: Scenario) -> Check:
    """Before KIP-516's topic IDs (2.8, protocol 2.8) a log of a deleted topic that survived its
    deletion (``no_stray_logs_when_idle``) is, for a broker, simply the log of the partition of that
    name, so a LeaderAndIsr for the re-created topic makes the broker lead, or follow, on the old
    topic's data (``getOrCreateReplica`` finds the log). With them the broker refuses a log whose
    partition.metadata holds another ID (INCONSISTENT_TOPIC_ID), but takes a log without one, and 2.8.0 checks
    only a partition it hosts (see ``environment._check_or_set_topic_id``). The logs
    on disk when an admin re-created the topic are tracked in :class:`~model.zk.state.values.History` until a
    StopReplica(delete) removes them; the violation is the step in which a broker applies a LeaderAndIsr onto
    one."""

    def check(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
        for broker, tp in nxt.history.stray_logs:
            after = nxt.broker(broker).hosted(tp)
            before = prev.broker(broker).hosted(tp)
            if after is not None and (broker, tp) in prev.history.stray_logs and (
                    before is None or (before.leader_epoch, before.leader) != (after.leader_epoch, after.leader)):
                return {"broker": broker, "partition": _tp(tp), "leader": after.leader,
                        "leader_epoch": after.leader_epoch}
        return None

    return check


@register("leader_in_isr", ALWAYS, "protocol",
          "every partition's leader (ZooKeeper and controller cache) is NoLeader or a member of its ISR")
def _leader_in_isr(scenario: Scenario) -> Check:
    def check(s: ClusterState) -> dict[str, Any] | None:
        for where, table in (("zookeeper", s.zk.partitions), ("controller", s.controller.leadership)):
            for tp, lai in table:
                if lai.leader != NO_LEADER and lai.leader not in lai.isr:
                    return {"partition": _tp(tp), "leader": lai.leader, "isr": list(lai.isr), "where": where}
        return None

    return check


@register("recovering_partition_isr_is_its_leader", ALWAYS, "protocol",
          "a partition whose znode says RECOVERING (KIP-704, 3.2+) has an ISR of exactly one broker: its leader, "
          "or, with NoLeader, the last ISR member the controller keeps")
def _recovering_isr(scenario: Scenario) -> Check:
    """KIP-704's rule for a partition elected uncleanly: until its leader reports it RECOVERED, its ISR is the
    leader alone. ``Election.leaderForOffline`` (3.2.0 - 3.9) writes RECOVERING only with ``newIsr = List(leader)``
    (``newRecoveringLeaderAndIsr``); ``processAlterPartition`` (3.2.0, ``tryProcessAlterPartition`` 3.3 - 3.9)
    answers INVALID_REQUEST to a RECOVERING proposal with more than one ISR member; the other writes keep the
    state with an ISR that can only lose members, and ``ReplicaStateMachine.doRemoveReplicasFromIsr`` keeps the
    last member when it removes the leader (leader NoLeader, ISR [that broker], still RECOVERING), which
    ``leaderForOffline`` elects back from the ISR keeping the state."""
    def check(s: ClusterState) -> dict[str, Any] | None:
        for tp, lai in s.zk.partitions:
            if lai.leader_recovery_state is LeaderRecoveryState.RECOVERING and (
                    len(lai.isr) != 1 or lai.leader not in (NO_LEADER, lai.isr[0])):
                return {"partition": _tp(tp), "leader": lai.leader, "isr": list(lai.isr),
                        "leader_recovery_state": "RECOVERING"}
        return None

    return check


@register("isr_subset_of_assignment", ALWAYS, "protocol",
          "every partition's ISR in ZooKeeper lists only brokers assigned to the partition")
def _isr_subset(scenario: Scenario) -> Check:
    def check(s: ClusterState) -> dict[str, Any] | None:
        for tp, lai in s.zk.partitions:
            assigned = set(s.zk.replicas(tp) or ())
            extra = set(lai.isr) - assigned
            if extra:
                return {"partition": _tp(tp), "isr": list(lai.isr), "assignment": sorted(assigned),
                        "not_assigned": sorted(extra)}
        return None

    return check


@register("leader_in_assignment", ALWAYS, "protocol",
          "every partition's leader in ZooKeeper is NoLeader or one of its assigned replicas (during a "
          "reassignment too)")
def _leader_in_assignment(scenario: Scenario) -> Check:
    def check(s: ClusterState) -> dict[str, Any] | None:
        for tp, lai in s.zk.partitions:
            assigned = s.zk.replicas(tp)
            if assigned is not None and lai.leader != NO_LEADER and lai.leader not in assigned:
                return {"partition": _tp(tp), "leader": lai.leader, "assignment": list(assigned),
                        "isr": list(lai.isr)}
        return None

    return check


@register("isr_never_empty", ALWAYS, "protocol",
          "no partition-state znode has an empty ISR (the last ISR member is never removed, KAFKA-5083)")
def _isr_never_empty(scenario: Scenario) -> Check:
    def check(s: ClusterState) -> dict[str, Any] | None:
        for tp, lai in s.zk.partitions:
            if not lai.isr:
                return {"partition": _tp(tp), "leader": lai.leader, "leader_epoch": lai.leader_epoch}
        return None

    return check


@register("leader_epoch_monotonic", ACTION_ALWAYS, "protocol",
          "leader epochs and znode versions never decrease: in ZooKeeper, in the controller's cache, "
          "and in a live broker's view",
          trigger=_leadership_changed)
def _epoch_monotonic(scenario: Scenario) -> Check:
    def lowered(where: str, before: Any, after: Any) -> dict[str, Any] | None:
        after_map = dict(after)
        for tp, lai in before:
            new = after_map.get(tp)
            if new is not None and (new.leader_epoch < lai.leader_epoch or new.zk_version < lai.zk_version):
                return {"partition": _tp(tp), "where": where, "leader_epoch": [lai.leader_epoch, new.leader_epoch],
                        "zk_version": [lai.zk_version, new.zk_version]}
        return None

    def check(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
        # a table or a broker the step kept is the same object (model/zk/state/step.py keeps what it did not change)
        before, after = prev.zk.partitions, nxt.zk.partitions
        if after is not before and (evidence := lowered("zookeeper", before, after)) is not None:
            return evidence
        before, after = prev.controller.leadership, nxt.controller.leadership
        if after is not before and (evidence := lowered("controller", before, after)) is not None:
            return evidence
        if prev.brokers is nxt.brokers:
            return None
        for b0, b1 in zip(prev.brokers, nxt.brokers, strict=True):
            if b0 is b1 or b0.partitions is b1.partitions or not (b0.alive and b1.alive and b0.epoch == b1.epoch):
                continue
            after_hosted = {h.partition: h for h in b1.partitions}
            for h in b0.partitions:
                new_h = after_hosted.get(h.partition)
                if new_h is not None and new_h.leader_epoch < h.leader_epoch:
                    return {"partition": _tp(h.partition), "where": f"broker {b1.id}",
                            "leader_epoch": [h.leader_epoch, new_h.leader_epoch]}
        return None

    return check


# ---------------------------------------------------------------------------------------------
# model sanity (spec checks on the model's own bookkeeping)
# ---------------------------------------------------------------------------------------------


@register("replica_transitions_follow_kafka_table", ACTION_ALWAYS, "sanity",
          "every replica state change in a step is allowed by Kafka's valid-previous-state table, and the "
          "recorded changes account for every difference between the two states",
          trigger=_replica_states_changed)
def _transitions_follow_table(scenario: Scenario) -> Check:
    """A new controller's ``initializeReplicaState`` puts every replica's state without a transition (recorded
    as ``initial_replica_states``): the walk starts from those, also when a controller whose ``/controller`` was
    deleted before it processed its ``Reelect`` runs ``onControllerFailover`` as a former controller. A former
    controller's other steps are checked against its own context, up to its resignation."""
    table = replica_table(scenario.since("KAFKA_8237"))
    absent = ReplicaState.NonExistentReplica

    def check(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
        if nxt.log.zombie_step:
            if prev.zombie is None or nxt.zombie is None:
                return None
            # A controller elected just before /controller was deleted under it runs its onControllerFailover
            # (its queued Reelect) as a zombie: the walk starts from initializeReplicaState's puts there too.
            before = dict(nxt.log.initial_replica_states if nxt.log.controller_initialized
                          else prev.zombie.replica_states)
            after = dict(nxt.zombie.replica_states)
        elif nxt.log.controller_initialized:
            before, after = dict(nxt.log.initial_replica_states), dict(nxt.controller.replica_states)
        elif nxt.controller.epoch != prev.controller.epoch:
            return None  # a new controller was elected: its context starts empty
        elif not nxt.log.replica_transitions and nxt.controller.replica_states is prev.controller.replica_states:
            return None  # no change recorded, and the step kept the table
        else:
            before, after = dict(prev.controller.replica_states), dict(nxt.controller.replica_states)
        walked: dict[Any, ReplicaState] = {}
        for r, src, dst in nxt.log.replica_transitions:
            expected_src = walked.get(r, before.get(r, absent))
            if src != expected_src:
                return {"replica": _replica(r), "recorded_from": src.name, "actual_state": expected_src.name}
            if src not in table[dst]:
                return {"replica": _replica(r), "from": src.name, "to": dst.name,
                        "valid_previous_states": sorted(s.name for s in table[dst])}
            walked[r] = dst
        if ({**before, **walked} if walked else before) == after:
            return None  # every replica is where the recorded changes took it
        for r in sorted(set(before) | set(after)):  # the first replica in order, whatever the hash seed
            end = walked.get(r, before.get(r, absent))
            if end != after.get(r, absent):
                return {"replica": _replica(r), "unrecorded_change": [before.get(r, absent).name,
                                                                     after.get(r, absent).name]}
        return None

    return check


@register("controller_cache_matches_zk", ALWAYS, "sanity",
          "after every step the controller's cached assignments, leaders and ISRs equal what ZooKeeper holds "
          "(ISRs: except a leader's own ISR writes not yet notified, or lost with the leader), and its cached "
          "leader epochs and znode versions are never ahead of ZooKeeper's")
def _cache_matches_zk(scenario: Scenario) -> Check:
    """Where Kafka 2.3 lets the cache lag, on purpose or not: a leader's ISR change is learnt only from
    /isr_change_notification, which the leader writes later (``maybePropagateIsrChanges``) or never (it dies
    first), so until an IsrChangeNotification event or an election re-reads the znode the cached ISR is older:
    the same leader, an older znode version, the change pending at the leader or the leader gone since; a
    reassignment's ``updateLeaderEpoch`` bumps the
    leader epoch in ZooKeeper without updating the cache (KAFKA-9212, fixed in 2.4.0), so the cached epoch and
    version may be behind."""

    def check(s: ClusterState) -> dict[str, Any] | None:
        for tp, reps in s.controller.assignments:
            in_zk = s.zk.replicas(tp)
            if in_zk != reps:
                return {"partition": _tp(tp), "controller_assignment": list(reps),
                        "zookeeper_assignment": None if in_zk is None else list(in_zk)}
        znodes = dict(s.zk.partitions)
        notified = set(s.zk.isr_change_notifications)
        pending: set[Any] | None = None
        for tp, lai in s.controller.leadership:
            if tp in notified:
                continue
            zk = znodes.get(tp)
            if zk is None or zk.leader != lai.leader or lai.leader_epoch > zk.leader_epoch or (
                    lai.zk_version > zk.zk_version):
                return {"partition": _tp(tp), "controller": lai.describe(),
                        "zookeeper": "absent" if zk is None else zk.describe()}
            if zk.isr == lai.isr:
                continue
            if pending is None:
                # a leader's ISR change not yet named under /isr_change_notification, or lost with its leader (dead
                # or restarted since the controller last saw it: the BrokerChange to come re-reads the znode)
                pending = {p for b in s.brokers for p in b.pending_isr_changes}
                registered, known = dict(s.zk.brokers), dict(s.controller.live_brokers)
            if not (zk.zk_version > lai.zk_version
                    and (tp in pending or registered.get(lai.leader) != known.get(lai.leader))):
                return {"partition": _tp(tp), "controller": lai.describe(), "zookeeper": zk.describe()}
        return None

    return check


@register("no_replica_state_for_deleted_topic", ALWAYS, "protocol",
          "the controller keeps no replica or partition state for a topic it no longer knows")
def _no_state_for_deleted(scenario: Scenario) -> Check:
    def check(s: ClusterState) -> dict[str, Any] | None:
        known = {tp[0] for tp, _ in s.controller.assignments}
        for r, state in s.controller.replica_states:
            if r[0] not in known:
                return {"replica": _replica(r), "state": state.name, "topic": r[0]}
        for tp, pstate in s.controller.partition_states:
            if tp[0] not in known:
                return {"partition": _tp(tp), "state": pstate.name, "topic": tp[0]}
        return None

    return check


# ---------------------------------------------------------------------------------------------
# quiescence: checked where the controller has nothing left to do (no event queued, no request
# waiting in any channel), so what is not done by then will never be done without a new stimulus
# ---------------------------------------------------------------------------------------------


def quiescent(s: ClusterState) -> bool:
    """No event queued, no request waiting, and no former controller still at work."""
    return not s.controller.events and not s.channels and s.zombie is None


def when_idle(name: str, description: str) -> Callable[[Callable[[Scenario], Check]], Callable[[Scenario], Check]]:
    """Register a ``quiescence`` property: its check judges only :func:`quiescent` states (elsewhere the
    controller still has work that may set things right, and the property holds), so the check itself
    need not say so."""

    def decorate(build: Callable[[Scenario], Check]) -> Callable[[Scenario], Check]:
        def build_when_idle(scenario: Scenario) -> Check:
            check = build(scenario)

            def check_when_idle(s: ClusterState) -> dict[str, Any] | None:
                return check(s) if quiescent(s) else None

            return check_when_idle

        register(name, ALWAYS, "quiescence", description, trigger=quiescent)(build_when_idle)
        return build

    return decorate


@when_idle("queued_deletion_finishes_when_brokers_alive",
           "when the controller is idle, no topic queued for deletion has all its replicas' brokers alive, "
           "unless its deletion began and was halted by a failed StopReplica (Kafka's deliberate wait)")
def _queued_deletion_finishes(scenario: Scenario) -> Check:
    """One wait is deliberate and exempt: after a live broker failed a StopReplica(delete=true)
    (KAFKA_STORAGE_ERROR), Kafka marks the topic ineligible and does not retry until that broker
    restarts or a controller failover ("Not retrying deletion of topic … since it is marked
    ineligible"). Such a topic is ineligible *and* its deletion has begun: some replica has left
    OnlineReplica / NewReplica. A topic that is marked ineligible while its deletion never began,
    with every broker alive, is not such a wait: it is the stale mark ``completeDeleteTopic``
    leaves behind for a later topic of the same name, and it is reported."""
    waiting_states = {ReplicaState.OnlineReplica, ReplicaState.NewReplica}

    def check(s: ClusterState) -> dict[str, Any] | None:
        queued = set(s.controller.topics_to_be_deleted) | set(s.zk.delete_topics)
        ineligible = set(s.controller.topics_ineligible_for_deletion)
        alive = {b.id for b in s.brokers if b.alive}
        states = dict(s.controller.replica_states)
        for topic in sorted(queued):
            parts = s.zk.topic_assignment(topic)
            if parts is None:
                continue
            brokers = {b for reps in parts for b in reps}
            if not brokers <= alive:
                continue
            replica_states = {(topic, p, b): states.get((topic, p, b), ReplicaState.NonExistentReplica)
                              for p, reps in enumerate(parts) for b in reps}
            began = any(st not in waiting_states for st in replica_states.values())
            if topic in ineligible and began:
                continue
            return {"topic": topic, "ineligible": topic in ineligible, "deletion_began": began,
                    "replica_states": {_replica(r): st.name for r, st in replica_states.items()}}
        return None

    return check


@when_idle("leader_elected_when_isr_member_alive",
           "when the controller is idle, every partition (not being deleted) with a live ISR member, or with "
           "a live replica and no leader/ISR yet, has a live leader")
def _leader_elected(scenario: Scenario) -> Check:
    """A replica on a failed log directory, or on a broker in controlled shutdown (``shuttingDownBrokerIds``),
    does not count as live: ``ControllerContext.isReplicaOnline`` (2.3) excludes both, and such a broker shuts
    down whatever the controller answers (``KafkaServer.controlledShutdown`` gives up after its retries); its
    partitions get a leader when it is back (``onBrokerStartup``)."""

    def check(s: ClusterState) -> dict[str, Any] | None:
        # With delete.topic.enable=false no topic may be queued (KAFKA-3175): such a topic is not exempt.
        deleting = set(s.controller.topics_to_be_deleted) if scenario.delete_topic_enable else set()
        znodes = dict(s.zk.partitions)
        for tp, reps in s.controller.assignments:
            if tp[0] in deleting:
                continue
            alive = {b.id for b in s.brokers if b.alive and tp not in b.offline_logs
                     and b.id not in s.controller.shutting_down_brokers}
            lai = znodes.get(tp)
            if lai is None:
                if set(reps) & alive:
                    return {"partition": _tp(tp), "assignment": list(reps), "live": sorted(alive),
                            "problem": "no leader and ISR were ever initialised"}
            elif set(lai.isr) & alive and lai.leader not in alive:
                return {"partition": _tp(tp), "leader": lai.leader, "isr": list(lai.isr), "live": sorted(alive)}
        return None

    return check


@when_idle("live_brokers_host_their_replicas",
           "when the controller is idle, every live broker assigned to a partition (of a topic not being "
           "deleted, with a live leader) hosts it at the leader epoch and leader ZooKeeper holds")
def _live_brokers_host_replicas(scenario: Scenario) -> Check:
    """The liveness KAFKA-1120 / KAFKA-7235 broke: a broker that bounced before the controller
    processed the BrokerChange was never sent its LeaderAndIsr, so it hosted nothing.

    Partitions without a live leader are not judged: a follower refuses a LeaderAndIsr whose leader
    is not alive in its metadata cache (``ReplicaManager.makeFollowers``, 2.3), NoLeader included, and
    keeps the leader epoch it had until a leader is elected. Nor is a replica whose log directory failed
    (it cannot host the partition until the broker restarts), or one on a broker in controlled shutdown (its
    replicas go offline: it gets StopReplica, not the new LeaderAndIsr)."""

    def check(s: ClusterState) -> dict[str, Any] | None:
        deleting = set(s.controller.topics_to_be_deleted)
        alive = {b.id for b in s.brokers if b.alive}
        for tp, lai in s.zk.partitions:
            if tp[0] in deleting or lai.leader not in alive:
                continue
            parts = s.zk.topic_assignment(tp[0])
            if parts is None:
                continue
            for b in parts[tp[1]]:
                broker = s.broker(b)
                if (not broker.alive or tp in broker.offline_logs or broker.controlled_shutdown
                        or b in s.controller.shutting_down_brokers):
                    continue
                hosted = broker.hosted(tp)
                if hosted is None or (hosted.leader_epoch, hosted.leader) != (lai.leader_epoch, lai.leader):
                    return {"partition": _tp(tp), "broker": b, "broker_epoch": broker.epoch,
                            "zookeeper": lai.describe(),
                            "broker_view": "not hosted" if hosted is None else
                            f"leader={hosted.leader} leaderEpoch={hosted.leader_epoch}"}
        return None

    return check


@when_idle("no_stray_logs_when_idle",
           "when the controller is idle, no live broker keeps a log of a partition whose topic ZooKeeper "
           "no longer has (a deleted topic's log left on disk for good)")
def _no_stray_logs(scenario: Scenario) -> Check:
    """Once the controller is idle nothing will delete such a log: in ZooKeeper-mode Kafka a broker
    keeps serving from disk only what LeaderAndIsr names, and nothing names a deleted topic."""

    def check(s: ClusterState) -> dict[str, Any] | None:
        topics = {t for t, _ in s.zk.topics}
        for b in s.brokers:
            if not b.alive:
                continue
            for tp in b.logs:
                if tp[0] not in topics:
                    return {"broker": b.id, "log": _tp(tp), "broker_epoch": b.epoch}
        return None

    return check


def isr_settled(s: ClusterState) -> bool:
    """No live leader could add a caught-up follower to its ISR any more (whatever the ISR budget left):
    properties that need followers to catch up are judged only where the environment has let them."""
    return not any(kind == partition_leader.EXPAND for *_, kind in partition_leader.candidates_of(s))


@when_idle("reassignment_finishes_when_targets_alive",
           "when the controller is idle and no follower can still join an ISR, no partition reassignment "
           "whose target brokers and partition leader are alive is still pending (in /admin/reassign_partitions "
           "or the context)")
def _reassignment_finishes(scenario: Scenario) -> Check:
    """A reassignment waits, on purpose, for its target replicas to join the ISR, so it is judged only
    once every follower that can catch up has (``isr_settled``). One whose target broker is down
    waits for its restart, as does one whose target replica's log is on a failed log directory (the
    broker's restart repairs it), and one of a partition without a live leader (every ISR member down: no
    replica can catch up) waits for the leader's return; none is judged. A target broker that marked the
    partition offline without having its log (KAFKA-10314) is judged: no disk of that log failed."""

    def check(s: ClusterState) -> dict[str, Any] | None:
        pending = dict(s.controller.partitions_being_reassigned) | dict(s.zk.reassign_partitions)
        if not pending or not isr_settled(s):
            return None
        alive = {b.id for b in s.brokers if b.alive}
        in_znode = dict(s.zk.reassign_partitions)
        for tp, target in sorted(pending.items()):
            lai = s.zk.partition_state(tp)
            on_failed_disk = {b.id for b in s.brokers if tp in b.offline_logs and tp in b.logs}
            if set(target) <= alive - on_failed_disk and (lai is None or lai.leader in alive):
                assigned = s.zk.replicas(tp)
                return {"partition": _tp(tp), "target_replicas": list(target),
                        "assignment": None if assigned is None else list(assigned),
                        "zookeeper": "absent" if lai is None else lai.describe(),
                        "in_reassign_partitions_znode": tp in in_znode,
                        "in_controller_context": tp in dict(s.controller.partitions_being_reassigned)}
        return None

    return check


@when_idle("metadata_caches_current_when_idle",
           "when the controller is idle, every live broker's metadata cache holds the leader and leader epoch "
           "ZooKeeper holds for every partition (of a topic not being deleted) that has a leader and ISR")
def _metadata_caches_current(scenario: Scenario) -> Check:
    """What clients see: ``MetadataCache`` answers Metadata requests, and since KIP-320 (2.1) clients
    fence on the cached leader epoch. UpdateMetadata requests carry the controller's cached
    leadership, so a controller whose cache lags ZooKeeper (KAFKA-9212) spreads the lag."""

    def check(s: ClusterState) -> dict[str, Any] | None:
        deleting = set(s.controller.topics_to_be_deleted) | set(s.zk.delete_topics)
        for b in s.brokers:
            if not b.alive:
                continue
            for tp, lai in s.zk.partitions:
                if tp[0] in deleting:
                    continue
                cached = b.cached(tp)
                if cached is None or (cached.leader, cached.leader_epoch) != (lai.leader, lai.leader_epoch):
                    return {"broker": b.id, "partition": _tp(tp), "zookeeper": lai.describe(),
                            "metadata_cache": "absent" if cached is None else
                            f"leader={cached.leader} leaderEpoch={cached.leader_epoch}"}
        return None

    return check


@when_idle("metadata_live_brokers_current_when_idle",
           "when the controller is idle, every live broker's metadata cache lists exactly the live brokers "
           "(KAFKA-13225)")
def _metadata_live_brokers_current(scenario: Scenario) -> Check:
    """What clients see of the cluster: ``MetadataCache``'s alive brokers (``aliveBrokers``, replaced whole by
    each UpdateMetadata, ``MetadataCache.updateMetadata``) answer Metadata requests with the brokers to connect
    to. The controller tells the brokers of a failure in ``onReplicasBecomeOffline`` (``KafkaController``):
    through the UpdateMetadata of the elections and replica state changes, or an explicit one when those send
    none. Before 3.1 (KAFKA-13225, ``onReplicasBecomeOffline`` 3.1.0, and its test
    ``ControllerIntegrationTest.testMetadataPropagationOnBrokerShutdownWithNoReplicas``) the explicit one was
    skipped whenever a partition had an offline leader, also when its election failed and sent nothing, so the
    failure of a broker hosting no replica never reached the other brokers."""

    def check(s: ClusterState) -> dict[str, Any] | None:
        live = tuple(b.id for b in s.brokers if b.alive)
        for b in s.brokers:
            if b.alive and b.metadata_live_brokers != live:
                return {"broker": b.id, "metadata_cache_live_brokers": list(b.metadata_live_brokers),
                        "live_brokers": list(live),
                        "dead_listed": [x for x in b.metadata_live_brokers if x not in live],
                        "live_missing": [x for x in live if x not in b.metadata_live_brokers]}
        return None

    return check


@when_idle("no_dead_replica_in_isr_when_idle",
           "when the controller is idle, no partition (of a topic not queued for deletion) keeps a dead broker in "
           "an ISR of more than one member (dead replicas leave the ISR, also across a controller failover)")
def _no_dead_in_isr(scenario: Scenario) -> Check:
    """The property KAFKA-3143 broke: before 2.3 a new controller only marked the replicas of dead brokers
    ReplicaDeletionIneligible, so a broker that died with the controller stayed in ISRs until the leader's
    ``replica.lag.time.max.ms`` (a leader ISR shrink, bounded here by ``[bounds] isr_changes``), and
    ``acks=all`` produce waited for it. The last ISR member stays by design (KAFKA-5083)."""

    def check(s: ClusterState) -> dict[str, Any] | None:
        alive = {b.id for b in s.brokers if b.alive}
        deleting = set(s.controller.topics_to_be_deleted)
        for tp, lai in s.zk.partitions:
            dead = [b for b in lai.isr if b not in alive]
            if tp[0] not in deleting and len(lai.isr) > 1 and dead:
                return {"partition": _tp(tp), "isr": list(lai.isr), "dead_in_isr": dead, "zookeeper": lai.describe()}
        return None

    return check


@when_idle("isr_members_eligible_when_idle",
           "when the controller is idle, no partition (of a topic not queued for deletion) has an ISR of more than one "
           "member naming a broker that is dead or in controlled shutdown (not among the controller's liveBrokerIds)")
def _isr_members_eligible(scenario: Scenario) -> Check:
    """The property KAFKA-14140 broke (3.3.0, commit af40e119784, KIP-841's ZooKeeper port): an ISR member is a
    broker that may be elected, so a broker that is not registered, or is shutting down, must not join it. The
    controller takes such brokers out (``onBrokerFailure``, ``doControlledShutdown``); before 3.3 a leader added a
    caught-up follower in controlled shutdown back and the controller wrote it. Kafka's test of the fix:
    ``ControllerIntegrationTest.testShutdownBrokerNotAddedToIsr``. The
    last ISR member stays by design (KAFKA-5083)."""

    def check(s: ClusterState) -> dict[str, Any] | None:
        eligible = {b.id for b in s.brokers if b.alive} - set(s.controller.shutting_down_brokers)
        deleting = set(s.controller.topics_to_be_deleted)
        for tp, lai in s.zk.partitions:
            ineligible = [b for b in lai.isr if b not in eligible]
            if tp[0] not in deleting and len(lai.isr) > 1 and ineligible:
                return {"partition": _tp(tp), "isr": list(lai.isr), "ineligible_in_isr": ineligible,
                        "shutting_down": sorted(s.controller.shutting_down_brokers), "zookeeper": lai.describe()}
        return None

    return check


@when_idle("no_pending_isr_change_when_idle",
           "when the controller is idle, no live broker acting as a partition's leader keeps an ISR change pending "
           "(an AlterIsr whose answer it did not take: it proposes no other ISR change until a LeaderAndIsr)")
def _no_pending_isr_change(scenario: Scenario) -> Check:
    """The property KAFKA-14144 broke (#12032's validation order, fixed by #12489 before 3.3.0): an AlterPartition
    the controller applied but whose answer the leader lost is re-sent with the old partition epoch; answered
    INVALID_UPDATE_VERSION, the leader gives up (``Partition.handleAlterPartitionError``) and keeps its
    ``PendingShrinkIsr`` / ``PendingExpandIsr`` (``isInflight``) with nothing left to replace it: the leader makes no
    ISR change until a LeaderAndIsr, which only a controller-initiated change sends. With KIP-497 (2.7+) only."""

    def check(s: ClusterState) -> dict[str, Any] | None:
        for b in s.brokers:
            if not b.alive:
                continue
            for h in b.partitions:
                if h.leader == b.id and h.pending_isr:
                    return {"broker": b.id, "partition": _tp(h.partition), "isr": list(h.isr),
                            "pending_isr": list(h.pending_isr), "leader_epoch": h.leader_epoch,
                            "zk_version": h.zk_version}
        return None

    return check


@when_idle("leader_not_on_dead_broker_when_idle",
           "when the controller is idle, no partition (of a topic not queued for deletion) names a dead broker as "
           "its leader in ZooKeeper (a partition without a live leader says NoLeader, -1)")
def _leader_not_dead(scenario: Scenario) -> Check:
    """The property KAFKA-3096 broke: clients kept being sent to a dead leader (their Metadata requests get the
    leader ZooKeeper names)."""

    def check(s: ClusterState) -> dict[str, Any] | None:
        alive = {b.id for b in s.brokers if b.alive}
        deleting = set(s.controller.topics_to_be_deleted)
        for tp, lai in s.zk.partitions:
            if tp[0] not in deleting and lai.leader != NO_LEADER and lai.leader not in alive:
                return {"partition": _tp(tp), "leader": lai.leader, "live_brokers": sorted(alive),
                        "zookeeper": lai.describe()}
        return None

    return check


@when_idle("single_acting_leader_when_idle",
           "when the controller is idle, at most one live broker acts as the leader of a partition (of a topic not "
           "being deleted), and it is the leader ZooKeeper names")
def _single_acting_leader(scenario: Scenario) -> Check:
    """The property KAFKA-7482 broke: before 2.1 the broker in controlled shutdown was not sent the
    LeaderAndIsr that moved its leadership, and went on acting as leader (clients were not redirected) until
    it stopped."""

    def check(s: ClusterState) -> dict[str, Any] | None:
        leaders: dict[Any, list[tuple[int, int]]] = {}
        for b in s.brokers:
            if b.alive:
                for h in b.partitions:
                    if h.leader == b.id:
                        leaders.setdefault(h.partition, []).append((b.id, h.leader_epoch))
        znodes = dict(s.zk.partitions)
        deleting = set(s.controller.topics_to_be_deleted) | set(s.zk.delete_topics)
        for tp, acting in sorted(leaders.items()):
            if tp[0] in deleting:
                continue
            lai = znodes.get(tp)
            named = None if lai is None else lai.leader
            if len(acting) > 1 or (lai is not None and acting[0][0] != named):
                return {"partition": _tp(tp), "acting_leaders": {str(b): e for b, e in acting},
                        "zookeeper": "absent" if lai is None else lai.describe()}
        return None

    return check


@register("leader_isr_within_assigned_replicas", ALWAYS, "protocol",
          "no live broker acting as a partition's leader keeps in its ISR a broker that its assigned replicas do "
          "not list (KAFKA-9672)")
def _leader_isr_within_replicas(scenario: Scenario) -> Check:
    """KAFKA-9672's title: a leader with an ISR larger than its replicas. The reassignment's leader-epoch
    bump (step 7) sends the new, smaller assignment with the ISR still holding the replicas it removes (step 8
    takes them out); a 2.x leader keeps them, and its high watermark waits for replicas that stopped fetching
    until the next LeaderAndIsr."""

    def check(s: ClusterState) -> dict[str, Any] | None:
        for b in s.brokers:
            if not b.alive:
                continue
            for h in b.partitions:
                extra = [r for r in h.isr if r not in h.replicas]
                if h.leader == b.id and extra:
                    return {"broker": b.id, "partition": _tp(h.partition), "isr": list(h.isr),
                            "replicas": list(h.replicas), "not_assigned": extra, "leader_epoch": h.leader_epoch}
        return None

    return check


@register("zk_written_only_by_active_controller", ACTION_ALWAYS, "protocol",
          "a controller that lost controllership (another was elected with a higher controller epoch) writes "
          "nothing to ZooKeeper (KAFKA-6082's fencing)",
          trigger=step_logged)
def _single_writer(scenario: Scenario) -> Check:
    """Single writer per controller epoch: once a newer controller is elected, only it changes ZooKeeper.
    A former controller that writes anyway (before 2.1, KAFKA-3083 / KAFKA-6082) leaves ZooKeeper differing
    from what the new controller read and cached, and from what it told the brokers."""

    def check(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
        if not nxt.log.zombie_step or prev.zk == nxt.zk or prev.zombie is None:
            return None
        changed = []
        before, after = dict(prev.zk.partitions), dict(nxt.zk.partitions)
        changed += [f"/brokers/topics/{t}/partitions/{p}/state" for t, p in sorted(set(before) | set(after))
                    if before.get((t, p)) != after.get((t, p))]
        t0, t1 = dict(prev.zk.topics), dict(nxt.zk.topics)
        changed += [f"/brokers/topics/{t}" for t in sorted(set(t0) | set(t1)) if t0.get(t) != t1.get(t)]
        for name, a, b in (("/admin/delete_topics", prev.zk.delete_topics, nxt.zk.delete_topics),
                           ("/admin/reassign_partitions", prev.zk.reassign_partitions, nxt.zk.reassign_partitions),
                           ("/admin/preferred_replica_election", prev.zk.preferred_replica_election,
                            nxt.zk.preferred_replica_election),
                           ("/isr_change_notification", prev.zk.isr_change_notifications,
                            nxt.zk.isr_change_notifications),
                           ("/log_dir_event_notification", prev.zk.log_dir_event_notifications,
                            nxt.zk.log_dir_event_notifications)):
            if a != b:
                changed.append(name)
        return {"writer_controller_epoch": prev.zombie.epoch, "zookeeper_controller_epoch": nxt.zk.controller_epoch,
                "written": changed}

    return check


@register("failover_context_from_zookeeper", ACTION_ALWAYS, "protocol",
          "a controller that takes over (onControllerFailover) reassigns only the partitions "
          "/admin/reassign_partitions names (from 2.4 also those its topic znode shows being reassigned): its "
          "context comes from ZooKeeper alone",
          trigger=step_logged)
def _failover_context(scenario: Scenario) -> Check:
    """The property KAFKA-5310 broke: a resigned controller kept its partitionsBeingReassigned, and re-elected
    later it carried on with a reassignment the admin had cancelled in the meantime."""

    def check(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
        if not nxt.log.controller_initialized:
            return None
        in_znode = dict(prev.zk.reassign_partitions)
        # 2.4+ (KIP-455): a partition whose topic znode has adding or removing replicas is being reassigned to the
        # znode's target replicas (the full set without the removing ones), unless /admin/reassign_partitions
        # names another target
        adding, removing = dict(prev.zk.adding_replicas), dict(prev.zk.removing_replicas)
        for tp in set(adding) | set(removing):
            if tp not in in_znode:
                in_znode[tp] = tuple(r for r in prev.zk.replicas(tp) or () if r not in removing.get(tp, ()))
        for tp, target in nxt.controller.partitions_being_reassigned:
            if in_znode.get(tp) != target:
                return {"partition": _tp(tp), "context_target": list(target),
                        "znode_target": None if tp not in in_znode else list(in_znode[tp])}
        return None

    return check


@register("elected_controller_completes_failover", ACTION_ALWAYS, "protocol",
          "a newly elected controller completes onControllerFailover and stays the controller: no exception out of "
          "it makes the controller resign (elect's triggerControllerMove)",
          trigger=step_logged)
def _elected_controller_completes_failover(scenario: Scenario) -> Check:
    """Kafka 2.3's ``elect()`` catches any exception of ``onControllerFailover`` and resigns; the successor
    rebuilds the same context from the same ZooKeeper, so an exception that ZooKeeper's content causes repeats
    with every controller elected until that content changes."""

    def check(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
        if not nxt.log.controller_resignations:
            return None
        epoch, error = nxt.log.controller_resignations[0]
        return {"controller_epoch": epoch, "error": error, "successor_epoch": nxt.controller.epoch,
                "partitions_without_state_znode": [_tp((t, p)) for t, parts in nxt.zk.topics
                                                   for p in range(len(parts))
                                                   if nxt.zk.partition_state((t, p)) is None]}

    return check


@register("election_bumps_epoch_once", ACTION_ALWAYS, "protocol",
          "one election (one electLeaderForPartitions call) writes each partition's new leader once: one "
          "leader-epoch bump per partition",
          trigger=step_logged)
def _election_once(scenario: Scenario) -> Check:
    """Broken by electLeaderForPartitions' retry in 1.1 – 2.3, which re-elected every partition of the call
    after a BADVERSION on one of them (fixed in 2.4 within KAFKA-8286)."""

    def check(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
        if not nxt.log.repeated_elections:
            return None
        tp = nxt.log.repeated_elections[0]
        epochs = [lai.leader_epoch for p, lai in (prev.zk.partitions + nxt.zk.partitions) if p == tp]
        return {"partition": _tp(tp), "leader_epoch": epochs,
                "elections_in_step": [[_tp(p), old, new] for p, old, new in nxt.log.elections if p == tp]}

    return check


@register("auto_rebalance_elections_feasible", ACTION_ALWAYS, "protocol",
          "the auto leader rebalance runs a preferred replica election only for partitions whose preferred replica "
          "is live and in the ISR (KAFKA-9866)",
          trigger=step_logged)
def _auto_rebalance_feasible(scenario: Scenario) -> Check:
    def check(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
        if nxt.log.zombie_step or not prev.controller.events or (
                prev.controller.events[0].kind is not EventKind.AutoPreferredReplicaLeaderElection
                or getattr(action, "kind", "") != "ControllerProcessEvent"):
            return None
        failed = [(tp, strategy) for tp, strategy in nxt.log.failed_elections if strategy.startswith("Preferred")]
        if not failed:
            return None
        tp = failed[0][0]
        lai = dict(prev.controller.leadership).get(tp)
        return {"partition": _tp(tp), "preferred_replica": dict(prev.controller.assignments)[tp][0],
                "isr": None if lai is None else list(lai.isr), "failed": failed[0][1]}

    return check


@when_idle("preferred_election_znode_removed_when_idle",
           "when the controller is idle, /admin/preferred_replica_election does not exist: the controller that "
           "processed it deleted it (onPreferredReplicaElection's finally), so the tool accepts the next election")
def _preferred_election_znode_removed(scenario: Scenario) -> Check:
    def check(s: ClusterState) -> dict[str, Any] | None:
        named = s.zk.preferred_replica_election
        if not named:
            return None
        leadership = dict(s.controller.leadership)
        return {"preferred_replica_election": [_tp(tp) for tp in named],
                "without_leadership": [_tp(tp) for tp in named if tp not in leadership]}

    return check


@when_idle("controller_knows_every_partition_when_idle",
           "when the controller is idle, every partition ZooKeeper lists for a topic the controller knows is a "
           "partition the controller knows (no partition count the cluster does not serve)")
def _controller_knows_partitions(scenario: Scenario) -> Check:
    """The property KAFKA-6612 broke: before 2.0 partitions added to a topic queued for deletion stayed in its
    znode although the controller never created them; a new controller then found them without leadership,
    which (with KAFKA-6650, also before 2.0) kept the deletion from ever finishing."""

    def check(s: ClusterState) -> dict[str, Any] | None:
        known: dict[str, int] = {}
        for (t, _p), _reps in s.controller.assignments:
            known[t] = known.get(t, 0) + 1
        for topic, parts in s.zk.topics:
            if topic in known and len(parts) != known[topic]:
                return {"topic": topic, "partitions_in_zookeeper": len(parts), "partitions_known": known[topic]}
        return None

    return check


@when_idle("reassignment_intent_survives",
           "when the controller is idle, every partition an admin asked to reassign (and did not cancel) has its "
           "target replicas, is still being reassigned, or its topic is gone or queued for deletion")
def _reassignment_intent(scenario: Scenario) -> Check:
    """Admin intent is durable until done: the property KAFKA-6193 (the znode deleted before the reassignment
    was complete, the rest lost at the next failover) and KAFKA-4214 (a reassignment failed because a target
    broker was down when a new controller restarted it) broke."""

    def check(s: ClusterState) -> dict[str, Any] | None:
        pending = set(dict(s.zk.reassign_partitions)) | set(dict(s.controller.partitions_being_reassigned))
        deleting = set(s.controller.topics_to_be_deleted) | set(s.zk.delete_topics)
        for i in s.budget.reassignments_submitted:
            if i in s.budget.reassignments_cancelled:
                continue
            command = scenario.reassignments[i]
            for p, target in command.targets:
                tp = (command.topic, p)
                assigned = s.zk.replicas(tp)
                if assigned is None or assigned == target or tp in pending or command.topic in deleting:
                    continue
                return {"partition": _tp(tp), "target_replicas": list(target), "assignment": list(assigned),
                        "in_reassign_partitions_znode": False, "in_controller_context": False}
        return None

    return check


# ---------------------------------------------------------------------------------------------
# sometimes: the scenario is not vacuous
# ---------------------------------------------------------------------------------------------


Witness = Callable[[ClusterState, Any, ClusterState], dict[str, Any] | None]


def _first(field: str, key: str, show: Callable[[Any], Any] = _tp) -> Witness:
    """A step whose state-change log (``StepLog.<field>``) has an entry witnesses the property; the evidence is
    its first entry, shown under ``key``."""
    assert field in LOGGED_FIELDS, f"{field} is read: step_logged must look at it"
    read = operator.attrgetter(f"log.{field}")

    def witness(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
        entries = read(nxt)
        return {key: show(entries[0])} if entries else None

    return witness


def _leader_reelected(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
    had = dict(prev.controller.leadership)
    for tp, old, new in nxt.log.elections:
        if tp in had:
            return {"partition": _tp(tp), "old_leader": old, "new_leader": new}
    return None


def _isr_reexpanded(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
    for tp, leader, old, new in nxt.log.isr_updates:
        if len(new) > len(old):
            return {"partition": _tp(tp), "leader": leader, "isr": [list(old), list(new)]}
    return None


def _reassignment_completes(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
    if not nxt.log.reassignments_completed:
        return None
    tp = nxt.log.reassignments_completed[0]
    return {"partition": _tp(tp), "assignment": list(nxt.zk.replicas(tp) or ())}


def _topic_recreated(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
    for topic in nxt.log.topics_created:
        if topic in nxt.budget.topics_recreated:
            return {"topic": topic}
    return None


def _failover_completes(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
    return {"controller_epoch": nxt.controller.epoch} if nxt.log.controller_initialized else None


def _zombie_write_fenced(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
    return {"controller_epoch": prev.zombie.epoch if prev.zombie else -1} if nxt.log.zk_write_fenced else None


def _controlled_shutdown_succeeds(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
    for broker, remaining, error in nxt.log.controlled_shutdown_results:
        if not remaining and not error:
            return {"broker": broker}
    return None


def _log_dir_replica_offline(prev: ClusterState, action: Any, nxt: ClusterState) -> dict[str, Any] | None:
    new = set(nxt.controller.replicas_on_offline_dirs) - set(prev.controller.replicas_on_offline_dirs)
    if not new or nxt.log.zombie_step:
        return None
    broker, tp = sorted(new)[0]
    return {"broker": broker, "partition": _tp(tp)}


#: The ``sometimes`` properties: each names an event of the scenario that some step must show (else the
#: scenario is vacuous for it), and the witness that recognises such a step and returns its evidence.
SOMETIMES_PROPERTIES: tuple[tuple[str, str, Witness], ...] = (
    ("sometimes_deletion_completes", "some topic deletion completes",
     _first("completed_deletions", "topic", str)),
    ("sometimes_deletion_retried", "some deletion is retried: ReplicaDeletionIneligible replicas go back to "
     "OfflineReplica", _first("deletion_retries", "topic", str)),
    ("sometimes_leader_reelected", "some partition that had a leader gets a new leader through an election",
     _leader_reelected),
    ("sometimes_isr_reexpanded", "some partition leader adds a follower back to its ISR (a follower caught up)",
     _isr_reexpanded),
    ("sometimes_isr_write_conflict", "some conditional write of a partition-state znode by the controller meets "
     "BADVERSION (a leader changed the ISR between the controller's read and write) and is retried",
     _first("zk_conflicts", "partition")),
    ("sometimes_reassignment_completes", "some partition reassignment completes (the assignment becomes the "
     "target replicas)", _reassignment_completes),
    ("sometimes_partitions_added", "some partition added by an admin (kafka-topics --alter --partitions) is "
     "created by the controller", _first("partitions_added", "partition")),
    ("sometimes_partition_addition_reverted", "some partitions added to a topic queued for deletion are taken "
     "out of its znode again (KAFKA-6612)", _first("additions_reverted", "topic", str)),
    ("sometimes_topic_recreated", "some topic deleted earlier in the run is created again under the same name",
     _topic_recreated),
    ("sometimes_controller_failover_completes", "some newly elected controller runs onControllerFailover and "
     "rebuilds its context from ZooKeeper", _failover_completes),
    ("sometimes_zombie_write_fenced", "some ZooKeeper write of a controller that lost controllership is refused "
     "(ControllerMovedException)", _zombie_write_fenced),
    ("sometimes_controlled_shutdown_succeeds", "some controlled shutdown moves every leadership off its broker "
     "(the controller answers with no partition left)", _controlled_shutdown_succeeds),
    ("sometimes_preferred_leader_elected", "some preferred replica election makes a partition's preferred "
     "replica its leader", _first("preferred_elections_completed", "partition")),
    ("sometimes_log_dir_replica_offline", "some replica on a failed log directory is taken offline by the "
     "controller (replicasOnOfflineDirs)", _log_dir_replica_offline),
)


#: The trigger of a witness that reads more than :data:`LOGGED_FIELDS` (the others read only those).
_WITNESS_TRIGGERS: dict[Witness, Callable[[ClusterState, Any, ClusterState], bool]] = {
    _log_dir_replica_offline: _offline_dirs_changed,
}


def _register_sometimes(name: str, description: str, witness: Witness) -> None:
    register(name, ACTION_SOMETIMES, "sometimes", description,
             trigger=_WITNESS_TRIGGERS.get(witness, step_logged))(lambda scenario: witness)


for _name, _description, _witness in SOMETIMES_PROPERTIES:
    _register_sometimes(_name, _description, _witness)
