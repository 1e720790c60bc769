"""Preferred replica leader election: admin-triggered and the auto leader rebalance (Kafka 2.3.0).

``controller/KafkaController.scala`` 2.3.0:

* ``PreferredReplicaLeaderElection.process`` (``processPreferredReplicaLeaderElection``, ZkTriggered): an
  admin created ``/admin/preferred_replica_election`` (``kafka-preferred-replica-election.sh`` without
  ``--bootstrap-server``, ``PreferredReplicaLeaderElectionCommand``); its partitions that exist, whose topic
  is not queued for deletion and whose preferred replica (the first assigned) does not lead already go
  through ``onPreferredReplicaElection``: OnlinePartition under ``PreferredReplicaPartitionLeaderElectionStrategy``;
  ``removePartitionsFromPreferredReplicaElection`` then deletes the znode and queues the event again to
  re-arm its watch. A new controller resumes the elections still named there
  (``fetchPendingPreferredReplicaElections``).
* ``AutoPreferredReplicaLeaderElection`` (``checkAndTriggerAutoLeaderRebalance``), queued by the
  ``auto-leader-rebalance-task`` timer when ``auto.leader.rebalance.enable`` (the default): per preferred
  broker, the share of its partitions (topics not queued for deletion) led by another broker; above
  ``leader.imbalance.per.broker.percentage`` (10 by default) a preferred election runs, batched per broker
  (2.1+, KAFKA-7299), for those whose preferred broker is online, with no reassignment in progress anywhere
  and the topic not queued for deletion; Kafka 2.6 (KAFKA-9866) also requires the preferred replica to be in
  the ISR, which earlier versions do not (KAFKA_9866: the election then fails). It never touches the znode.

The timer is an environment step bounded by ``[bounds] auto_rebalance_checks`` (it fires 5 s after a
controller starts and every ``leader.imbalance.check.interval.seconds`` after).

Exceptions, as in 2.3: both the admin's election and ``fetchPendingPreferredReplicaElections`` read each named
partition's leader with ``controllerContext.partitionLeadershipInfo(partition)``, which throws
``NoSuchElementException`` for a partition that never had a leader (created while none of its replicas was
live: :meth:`~model.zk.state.step.Step.partition_leadership_info`). In the event it escapes to
``KafkaController.process`` ("Error processing event") before ``onPreferredReplicaElection``, so the znode
is not deleted and the tool refuses every later election ("currently in progress"); in
``onControllerFailover`` it escapes to ``elect()``, whose catch resigns (``triggerControllerMove``).
"""

from __future__ import annotations

from collections.abc import Iterable

from model.zk.controller import partition_state_machine, scala_order
from model.zk.controller.election import preferred_replica_partition_leader_election
from model.zk.state.states import PartitionState
from model.zk.state.step import Step
from model.zk.state.values import ControllerEvent, EventKind, TopicPartition


def process_preferred_replica_leader_election(step: Step) -> None:
    """``processPreferredReplicaLeaderElection(None, ZkTriggered)``: the partitions that exist, whose topic is not
    queued for deletion and whose preferred replica does not lead; reading a partition's leader throws
    ``NoSuchElementException`` for one without leadership (see the module docstring), before any election.

    Kafka 1.1 – 2.1 (``PreferredReplicaLeaderElection.process``, before KAFKA-5692 in 2.2) read no leader
    first: ``onPreferredReplicaElection`` runs for every named partition, and the same exception comes from its
    ``finally`` (``removePartitionsFromPreferredReplicaElection`` reads each leader before it deletes the
    znode), after the elections. Deviation: those versions skip only the partitions of topics queued for
    deletion; the model also skips, as 2.2+ do, partitions that do not exist and partitions their preferred
    replica leads already (1.1 – 2.1 elect it again: one more leader epoch, the same leader)."""
    requested = sorted(step.zk_preferred_replica_election)
    if not requested:
        return
    live_partitions = []
    for tp in requested:
        name = f"{tp[0]}-{tp[1]}"
        if tp not in step.assignment:
            step.messages.append(f"Skipping preferred replica leader election for partition {name} since it "
                                 "doesn't exist.")
        elif step.is_topic_queued_up_for_deletion(tp[0]):
            step.messages.append(f"Skipping preferred replica election for partitions {name} since the respective "
                                 "topics are being deleted")
        else:
            live_partitions.append(tp)
    if step.scenario.since("PREFERRED_ELECTION_SKIPS_LED"):
        electable = [tp for tp in live_partitions
                     if step.partition_leadership_info(tp).leader != step.assignment[tp][0]]
    else:  # no leader read first: a partition without leadership is elected, and the finally's read throws
        electable = [tp for tp in live_partitions
                     if tp not in step.leadership or step.leadership[tp].leader != step.assignment[tp][0]]
    on_preferred_replica_election(step, electable, auto=False)


def resume_pending(step: Step) -> None:
    """``fetchPendingPreferredReplicaElections`` and ``onPreferredReplicaElection`` in ``onControllerFailover``:
    the partitions still named in the znode, unless their election completed or their topic was deleted (both
    decided first: a partition without leadership throws here, its topic queued for deletion or not), then
    unless their topic is queued for deletion."""
    pending = []
    for tp in sorted(step.zk_preferred_replica_election):
        replicas = step.assignment.get(tp, ())
        topic_deleted = not replicas
        successful = not topic_deleted and step.partition_leadership_info(tp).leader == replicas[0]
        if not (successful or topic_deleted) and not step.is_topic_queued_up_for_deletion(tp[0]):
            pending.append(tp)
    on_preferred_replica_election(step, pending, auto=False)


def on_preferred_replica_election(step: Step, partitions: Iterable[TopicPartition], *, auto: bool) -> None:
    """``onPreferredReplicaElection``: the elections, then ``removePartitionsFromPreferredReplicaElection``
    (for an admin's election: delete the znode and queue the event again)."""
    parts = sorted(partitions)
    partition_state_machine.handle_state_changes(step, parts, PartitionState.OnlinePartition,
                                                 partition_state_machine.PREFERRED)
    for tp in parts:  # removePartitionsFromPreferredReplicaElection: each had leadership when it was chosen
        preferred = step.assignment[tp][0]
        leader = step.partition_leadership_info(tp).leader
        if leader == preferred:
            step.preferred_elections_completed.append(tp)
            step.messages.append(f"Partition {tp[0]}-{tp[1]} completed preferred replica leader election. New "
                                 f"leader is {preferred}")
        else:
            step.messages.append(f"Partition {tp[0]}-{tp[1]} failed to complete preferred replica leader election "
                                 f"to {preferred}. Leader is still {leader}")
    if not auto and step.zk_preferred_replica_election:
        step.controller_writes_zk("the deletion of /admin/preferred_replica_election")
        step.zk_preferred_replica_election.clear()
        if step.is_active():
            step.events.append(ControllerEvent(EventKind.PreferredReplicaLeaderElection))


def process_auto_preferred_replica_leader_election(step: Step) -> None:
    """``checkAndTriggerAutoLeaderRebalance`` (2.3; with KAFKA-9866's candidate filter when the switch is off).

    The preferred brokers are visited in the order of ``groupBy``'s Scala map (:mod:`.scala_order`: for brokers
    0 – 3, 2, 1, 3, 0), not sorted; each broker's imbalance is read when its turn comes, after the elections of
    the brokers before it."""
    by_preferred: dict[int, list[TopicPartition]] = {}
    for tp, reps in sorted(step.assignment.items()):
        if reps and not step.is_topic_queued_up_for_deletion(tp[0]):
            by_preferred.setdefault(reps[0], []).append(tp)
    threshold = step.scenario.leader_imbalance_per_broker_percentage / 100
    for broker in scala_order.group_by_order(list(by_preferred)):
        partitions = by_preferred[broker]
        not_preferred = [tp for tp in partitions if tp in step.leadership and _leader(step, tp) != broker]
        ratio = len(not_preferred) / len(partitions)
        if ratio <= threshold:
            continue
        candidates = [tp for tp in not_preferred
                      if step.is_replica_online(broker, tp) and not step.partitions_being_reassigned
                      and not step.is_topic_queued_up_for_deletion(tp[0]) and tp in step.assignment
                      and (step.scenario.bug("KAFKA_9866") or _can_preferred_replica_be_leader(step, tp))]
        step.messages.append(f"Leader imbalance ratio for broker {broker} is {ratio:.2f}: preferred replica "
                             f"election for {', '.join(f'{t}-{p}' for t, p in candidates) or 'no partition'}")
        on_preferred_replica_election(step, candidates, auto=True)


def _can_preferred_replica_be_leader(step: Step, tp: TopicPartition) -> bool:
    """``canPreferredReplicaBeLeader`` (2.6, KAFKA-9866), from the controller's cache."""
    assigned = step.assignment[tp]
    lai = step.leadership[tp]
    live = [b for b in assigned if step.is_replica_online(b, tp)]
    return preferred_replica_partition_leader_election(assigned, lai.isr, live) is not None


def _leader(step: Step, tp: TopicPartition) -> int:
    lai = step.leadership.get(tp)
    return -1 if lai is None else lai.leader


def process_replica_leader_election_api(step: Step, partitions: Iterable[TopicPartition], *, unclean: bool) -> None:
    """``processReplicaLeaderElection(Some(partitions), PREFERRED or UNCLEAN, AdminClientTriggered)`` (2.4, KIP-460,
    ``KafkaController.scala``; unchanged at 3.9.0-rc3): an ElectLeaders request. Not the active controller:
    NOT_CONTROLLER for every partition. Else: partitions the context does not know are UNKNOWN_TOPIC_OR_PARTITION,
    those of topics queued for deletion INVALID_TOPIC_EXCEPTION; of the others, a PREFERRED election takes those
    whose leader is not the first assigned replica, an UNCLEAN one those without a leader or whose leader is not a
    live broker, and the rest are ELECTION_NOT_NEEDED. ``onReplicaElection`` moves them to OnlinePartition under
    ``PreferredReplicaPartitionLeaderElectionStrategy`` or ``OfflinePartitionLeaderElectionStrategy(allowUnclean =
    true)``; with ``AdminClientTriggered`` it neither rethrows the failures nor touches
    /admin/preferred_replica_election. A failed election answers PREFERRED_LEADER_NOT_AVAILABLE or
    ELIGIBLE_LEADERS_NOT_AVAILABLE, a successful one the new leader. The response is the step's message.

    Reading a partition's leader (``partitionLeadershipInfo(partition)``, Scala's ``Map.apply``) throws
    ``NoSuchElementException`` for a partition without leadership, both election types, before any election: it
    escapes to ``ControllerEventManager`` ("Uncaught error processing event") and the callback is never called
    (the client times out). Unlike the znode path, nothing is left behind for a later controller (finding 4)."""
    if not step.is_active():
        step.messages.append("ElectLeaders response: NOT_CONTROLLER")
        return
    kind = "UNCLEAN" if unclean else "PREFERRED"
    results: dict[TopicPartition, str] = {}
    live_partitions: list[TopicPartition] = []
    for tp in sorted(set(partitions)):
        if tp not in step.assignment:
            results[tp] = "UNKNOWN_TOPIC_OR_PARTITION"
        elif step.is_topic_queued_up_for_deletion(tp[0]):
            results[tp] = "INVALID_TOPIC_EXCEPTION"
        else:
            live_partitions.append(tp)
    electable: list[TopicPartition] = []
    for tp in live_partitions:
        leader = step.partition_leadership_info(tp).leader
        if unclean:
            needed = leader == -1 or leader not in step.live_brokers or leader in step.shutting_down_brokers
        else:
            needed = leader != step.assignment[tp][0]
        if needed:
            electable.append(tp)
        else:
            results[tp] = "ELECTION_NOT_NEEDED"
    before = {tp: step.leadership.get(tp) for tp in electable}
    strategy = partition_state_machine.OFFLINE_ALLOW_UNCLEAN if unclean else partition_state_machine.PREFERRED
    step.messages.append(f"Starting replica leader election ({kind}) for partitions "
                         f"{', '.join(f'{t}-{p}' for t, p in electable)} triggered by AdminClientTriggered")
    partition_state_machine.handle_state_changes(step, electable, PartitionState.OnlinePartition, strategy)
    for tp in electable:
        lai = step.leadership.get(tp)
        if lai is not None and lai != before[tp]:
            results[tp] = f"leader {lai.leader}"
            if not unclean and lai.leader == step.assignment[tp][0]:
                step.preferred_elections_completed.append(tp)
        else:
            results[tp] = "ELIGIBLE_LEADERS_NOT_AVAILABLE" if unclean else "PREFERRED_LEADER_NOT_AVAILABLE"
    answer = ", ".join(f"{t}-{p}: {r}" for (t, p), r in sorted(results.items()))
    step.messages.append(f"ElectLeaders response: {answer}")
