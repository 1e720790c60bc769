"""The replica state machine: ``controller/ReplicaStateMachine.scala`` (Kafka 2.0 – 2.3).

``handle_state_changes`` mirrors ``ReplicaStateMachine.handleStateChanges``: replicas are grouped
by broker, each group goes through ``doHandleStateChanges``, and the requests the transitions
produce are sent at the end of the call. Invalid transitions are logged (as Kafka logs an
IllegalStateException to the state-change log) and leave the replica's state unchanged.

The conditional ZooKeeper writes of ``removeReplicasFromIsr`` retry the partitions that met
BADVERSION (a partition leader changed the ISR between the controller's read and write).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from model.zk.controller.kafka_zk_client import update_leader_and_isr
from model.zk.state.states import ReplicaState
from model.zk.state.step import Step
from model.zk.state.values import NO_LEADER, LeaderAndIsr, Replica, TopicPartition

R = ReplicaState


def set_replica_state(step: Step, replica: Replica, target: ReplicaState) -> None:
    """Record a performed transition and apply it (NonExistentReplica removes the entry)."""
    current = step.replica_state.get(replica, R.NonExistentReplica)
    step.replica_transitions.append((replica, current, target))
    if target is R.NonExistentReplica:
        step.replica_state.pop(replica, None)
    else:
        step.replica_state[replica] = target


def handle_state_changes(step: Step, replicas: Iterable[Replica], target: ReplicaState,
                         deletion_callback: bool = False) -> None:
    """``handleStateChanges``; ``deletion_callback`` stands for the TopicDeletionManager's response
    callback on ReplicaDeletionStarted (2.0 – 2.2 pass it explicitly; reassignment passes none)."""
    by_broker: dict[int, list[Replica]] = {}
    for r in replicas:
        by_broker.setdefault(r[2], []).append(r)
    if not by_broker:
        return
    for broker in sorted(by_broker):
        _do_handle_state_changes(step, broker, by_broker[broker], target, deletion_callback)
    step.send_requests_to_brokers()


def _do_handle_state_changes(step: Step, broker: int, replicas: Sequence[Replica], target: ReplicaState,
                             deletion_callback: bool) -> None:
    """``doHandleStateChanges`` for one broker's replicas: the replicas not in a valid previous state of
    ``target`` are logged as illegal transitions and left unchanged; the others move to ``target``. It
    mirrors Kafka's ``targetState match`` in ``ReplicaStateMachine.doHandleStateChanges`` (2.3), one branch
    per replica state."""
    valid: list[Replica] = []
    allowed = step.replica_table[target]
    for r in replicas:
        current = step.replica_state.setdefault(r, R.NonExistentReplica)
        if current in allowed:
            valid.append(r)
        else:
            step.illegal_transitions.append((r, current, target))
            step.messages.append(
                f"IllegalStateException: replica {_name(r)} should be in the "
                f"{','.join(s.name for s in sorted(allowed))} states before moving to {target.name} state. "
                f"Instead it is in {current.name} state")
    if target is R.NewReplica:
        for r in valid:
            tp = (r[0], r[1])
            lai = step.leadership.get(tp)
            if lai is not None:
                if lai.leader == broker:
                    step.messages.append(
                        f"StateChangeFailedException: replica {_name(r)} cannot be moved to NewReplica state "
                        "as it is being requested to become leader")
                    continue
                step.add_leader_and_isr_request([broker], tp, lai, step.assignment[tp], is_new=True)
            set_replica_state(step, r, R.NewReplica)
    elif target is R.OnlineReplica:
        for r in valid:
            tp = (r[0], r[1])
            if step.replica_state[r] is R.NewReplica:
                assigned = step.assignment.get(tp, ())
                if broker not in assigned:
                    step.assignment[tp] = (*assigned, broker)
            else:
                lai = step.leadership.get(tp)
                if lai is not None:
                    step.add_leader_and_isr_request([broker], tp, lai, step.assignment[tp], is_new=False)
            set_replica_state(step, r, R.OnlineReplica)
    elif target is R.OfflineReplica:
        for r in valid:
            step.add_stop_replica_request(broker, (r[0], r[1]), delete=False)
        with_info = [r for r in valid if (r[0], r[1]) in step.leadership]
        without_info = [r for r in valid if (r[0], r[1]) not in step.leadership]
        updated = remove_replicas_from_isr(step, broker, [(r[0], r[1]) for r in with_info])
        for tp, lai in updated:
            if not step.is_topic_queued_up_for_deletion(tp[0]):
                others = [b for b in step.assignment[tp] if b != broker]
                step.add_leader_and_isr_request(others, tp, lai, step.assignment[tp], is_new=False)
            set_replica_state(step, (tp[0], tp[1], broker), R.OfflineReplica)
        for r in without_info:
            if step.scenario.bug("KAFKA_6650"):
                # Before 2.0 only replicas whose ISR removal succeeded changed state; a replica
                # without leadership info kept its state, so its deletion could never start.
                step.messages.append(f"replica {_name(r)} has no leadership info and stays "
                                     f"{step.replica_state[r].name} (KAFKA-6650)")
                continue
            if step.scenario.since("KAFKA_8237"):
                step.add_update_metadata_request(step.live_or_shutting_down(), [(r[0], r[1])])
            set_replica_state(step, r, R.OfflineReplica)
    elif target is R.ReplicaDeletionStarted:
        for r in valid:
            set_replica_state(step, r, R.ReplicaDeletionStarted)
            step.add_stop_replica_request(broker, (r[0], r[1]), delete=True, callback=deletion_callback)
    elif target in (R.ReplicaDeletionIneligible, R.ReplicaDeletionSuccessful):
        for r in valid:
            set_replica_state(step, r, target)
    elif target is R.NonExistentReplica:
        for r in valid:
            tp = (r[0], r[1])
            step.assignment[tp] = tuple(b for b in step.assignment.get(tp, ()) if b != broker)
            set_replica_state(step, r, R.NonExistentReplica)


def remove_replicas_from_isr(step: Step, broker: int,
                             partitions: Sequence[TopicPartition]) -> list[tuple[TopicPartition, LeaderAndIsr]]:
    """``removeReplicasFromIsr``: take ``broker`` out of the ISR of each partition in ZooKeeper,
    ``doRemoveReplicasFromIsr`` again for the partitions whose write met BADVERSION, until none is left.

    A leaving leader becomes NoLeader (-1); the last ISR member is never removed (1.1+; before, with
    KAFKA_5083, 1.0's ``removeReplicaFromIsr`` removed it when unclean leader election was enabled, leaving
    an empty ISR). Every write bumps the leader epoch and the znode version. Returns the partitions whose
    leadership is now known (written or already without the broker); failures are logged and omitted.
    """
    finished: list[tuple[TopicPartition, LeaderAndIsr]] = []
    remaining = sorted(partitions)
    while remaining:
        retry: list[TopicPartition] = []
        for tp in remaining:
            current = step.zk_partitions.get(tp)
            if current is None:
                if not step.is_topic_queued_up_for_deletion(tp[0]):
                    step.messages.append(f"StateChangeFailedException: failed to remove replica {broker} from "
                                         f"ISR of partition {tp[0]}-{tp[1]} since the leader and isr path in "
                                         "zookeeper is empty")
                continue
            if current.controller_epoch > step.epoch:
                step.messages.append(f"StateChangeFailedException: leader and isr path of {tp[0]}-{tp[1]} "
                                     f"written by another controller (epoch {current.controller_epoch})")
                continue
            if broker in current.isr:
                new_leader = NO_LEADER if current.leader == broker else current.leader
                new_isr = tuple(b for b in current.isr if b != broker)
                if not new_isr and not (step.scenario.bug("KAFKA_5083") and step.zk_unclean_leader_election_enable):
                    new_isr = current.isr
                written = update_leader_and_isr(step, tp, current, new_leader, new_isr)
                if written is None:
                    retry.append(tp)
                    continue
                finished.append((tp, written))
                step.leadership[tp] = written
            else:
                finished.append((tp, current))
                step.leadership[tp] = current
        remaining = retry
    return finished


def _name(r: Replica) -> str:
    return f"[Topic={r[0]},Partition={r[1]},Replica={r[2]}]"
