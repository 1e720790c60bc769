"""Sentences about states and steps, in Kafka's vocabulary, for counterexample traces.

``describe_changes`` names every field a step changed (ZooKeeper znodes, the controller's
context, brokers, channels) plus what Kafka's state-change log would have said during the step.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from model.zk.state.values import ClusterState, LeaderAndIsr
from model.zk.state.values import partition_name as _tp
from model.zk.state.values import replica_name as _replica


def _lai(lai: LeaderAndIsr | None) -> str:
    return "absent" if lai is None else lai.describe()


def _diff_map(label: str, old: Iterable[tuple[Any, Any]], new: Iterable[tuple[Any, Any]], key_fmt: Any,
              val_fmt: Any) -> list[str]:
    a, b = dict(old), dict(new)
    lines = []
    for k in sorted(set(a) | set(b), key=repr):
        if a.get(k) != b.get(k):
            before = "absent" if k not in a else val_fmt(a[k])
            after = "absent" if k not in b else val_fmt(b[k])
            lines.append(f"{label} {key_fmt(k)}: {before} -> {after}")
    return lines


def _diff_set(label: str, old: Iterable[Any], new: Iterable[Any], fmt: Any = str) -> list[str]:
    a, b = set(old), set(new)
    lines = []
    if b - a:  # sorted by value (broker ids as numbers), printed without quotes
        lines.append(f"{label} += [{', '.join(fmt(x) for x in sorted(b - a))}]")
    if a - b:
        lines.append(f"{label} -= [{', '.join(fmt(x) for x in sorted(a - b))}]")
    return lines


def describe_changes(prev: ClusterState, nxt: ClusterState, *, broker_epochs: bool = True) -> list[str]:
    """What a step changed, field by field; without ``broker_epochs`` (Kafka before 2.2, KIP-380) no broker
    epoch is named."""
    out: list[str] = []
    z0, z1 = prev.zk, nxt.zk
    out += _diff_map("zk /brokers/ids", z0.brokers, z1.brokers, str,
                     lambda e: f"registered (epoch {e})" if broker_epochs else "registered")
    out += _diff_map("zk /brokers/topics", z0.topics, z1.topics, str, lambda r: str([list(x) for x in r]))
    out += _diff_map("zk partition state", z0.partitions, z1.partitions, _tp, _lai)
    out += _diff_set("zk /admin/delete_topics", z0.delete_topics, z1.delete_topics)
    out += _diff_set("zk /isr_change_notification", z0.isr_change_notifications, z1.isr_change_notifications, _tp)
    out += _diff_map("zk /admin/reassign_partitions", z0.reassign_partitions, z1.reassign_partitions, _tp,
                     lambda r: str(list(r)))
    c0, c1 = prev.controller, nxt.controller
    out += _diff_set("controller liveBrokers", (b for b, _ in c0.live_brokers), (b for b, _ in c1.live_brokers))
    out += _diff_map("controller assignment", c0.assignments, c1.assignments, _tp, lambda r: str(list(r)))
    out += _diff_map("controller leadership", c0.leadership, c1.leadership, _tp, _lai)
    out += _diff_map("partition state", c0.partition_states, c1.partition_states, _tp, lambda s: s.name)
    out += _diff_map("controller partitionsBeingReassigned", c0.partitions_being_reassigned,
                     c1.partitions_being_reassigned, _tp, lambda r: str(list(r)))
    for r, before, after in nxt.log.replica_transitions:
        out.append(f"replica state {_replica(r)}: {before.name} -> {after.name}")
    out += _diff_set("topicsToBeDeleted", c0.topics_to_be_deleted, c1.topics_to_be_deleted)
    out += _diff_set("topicsIneligibleForDeletion", c0.topics_ineligible_for_deletion,
                     c1.topics_ineligible_for_deletion)
    out += _diff_set("topicsWithDeletionStarted", c0.topics_with_deletion_started, c1.topics_with_deletion_started)
    if c0.events != c1.events:
        out.append(f"controller event queue: [{', '.join(e.describe() for e in c1.events)}]")
    for b0, b1 in zip(prev.brokers, nxt.brokers, strict=True):
        if b0.alive != b1.alive:
            alive = f"alive (epoch {b1.epoch})" if broker_epochs else "alive"
            out.append(f"broker {b1.id}: {alive if b1.alive else 'dead'}")
        out += _diff_map(f"broker {b1.id} partition", ((h.partition, h) for h in b0.partitions),
                         ((h.partition, h) for h in b1.partitions), _tp, _hosted_describer(b1.id))
        out += _diff_set(f"broker {b1.id} logs", b0.logs, b1.logs, _tp)
        if b0.metadata_live_brokers != b1.metadata_live_brokers:
            out.append(f"broker {b1.id} metadata cache live brokers: {list(b0.metadata_live_brokers)} -> "
                       f"{list(b1.metadata_live_brokers)}")
        out += _diff_map(f"broker {b1.id} metadata cache", ((m.partition, m) for m in b0.metadata_partitions),
                         ((m.partition, m) for m in b1.metadata_partitions), _tp,
                         lambda m: f"leader={m.leader} leaderEpoch={m.leader_epoch}")
    ch0, ch1 = dict(prev.channels), dict(nxt.channels)
    for b in sorted(set(ch0) | set(ch1)):
        q0, q1 = ch0.get(b, ()), ch1.get(b, ())
        if q0 != q1:
            out.append(f"channel to broker {b}: [{'; '.join(r.describe() for r in q1)}]")
    out += _diff_set("kmc history: stray logs (broker, partition) of re-created topics",
                     prev.history.stray_logs, nxt.history.stray_logs, lambda x: f"{x[0]}:{_tp(x[1])}")
    for r, current, target in nxt.log.illegal_transitions:
        out.append(f"state-change log: illegal transition of {_replica(r)} from {current.name} to {target.name}")
    if nxt.log.processed_event is not None:
        out.append(f"log: {event_processed(prev, nxt)}")
    for m in nxt.log.messages:
        out.append(f"log: {m}")
    return out


def event_processed(prev: ClusterState, nxt: ClusterState) -> str:
    """The step's first log line when a controller processed an event: which controller, which event."""
    event = nxt.log.processed_event
    assert event is not None
    if nxt.log.zombie_step:
        assert prev.zombie is not None
        return f"the former controller (epoch {prev.zombie.epoch}) processes {event.describe()}"
    return f"controller processes {event.describe()}"


def _hosted_describer(broker: int) -> Any:
    def describe(h: Any) -> str:
        if h.leader == broker:
            return f"leader (leaderEpoch {h.leader_epoch}, isr {list(h.isr)}, zkVersion {h.zk_version})"
        return f"follower of {h.leader} (leaderEpoch {h.leader_epoch}{', fetching' if h.fetching else ''})"

    return describe


def describe_state(s: ClusterState) -> list[str]:
    lines = [f"brokers alive: {[b.id for b in s.brokers if b.alive]}"]
    for name, reps in s.zk.topics:
        lines.append(f"topic {name}: assignment {[list(r) for r in reps]}")
    for tp, lai in s.zk.partitions:
        lines.append(f"partition {_tp(tp)}: {lai.describe()}")
    states: dict[str, list[str]] = {}
    for r, st in s.controller.replica_states:
        states.setdefault(st.name, []).append(_replica(r))
    for name, members in sorted(states.items()):
        lines.append(f"{name}: {', '.join(members)}")
    if s.controller.events:
        lines.append(f"controller event queue: [{', '.join(e.describe() for e in s.controller.events)}]")
    for b, queue in s.channels:
        lines.append(f"channel to broker {b}: [{'; '.join(r.describe() for r in queue)}]")
    return lines
