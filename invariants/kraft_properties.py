"""The KRaft model's named properties, in a registry of their own.

Claims about the KRaft controller's metadata (read from the controller's image, the replay of the whole metadata
log) and about the data the brokers hold. The names start with ``kraft_`` (``sometimes_kraft_`` for the
sometimes properties); a KRaft scenario's ``[check] properties`` selects among them, and the ZooKeeper model's
registry (:mod:`invariants.registry`) never sees them.

``kraft_no_acknowledged_record_lost`` is the KIP-966 TLA+ specification's ``LeaderCompletenessProperty``
(``kip_966_properties.tla``) with its records abstracted to (offset, leader epoch): whenever the controller's
image names a leader that is running and unfenced, every record acknowledged to a producer (acks=all) is in that
leader's log at its offset, with its epoch. A leader elected without an acknowledged record has lost it for every
consumer: its followers truncate to its log. (The specification's ``NoCommittedRecordLostGlobally``, "some
broker still has it", is weaker: it holds until the followers truncate.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from explorer.contract import Evidence, Property, PropertyKind
from invariants.registry import PropertySpec
from model.kraft.actions import ActionKind
from model.kraft.records import NO_LEADER, RemoveTopicRecord
from model.kraft.state import KraftState
from model.scenario import Scenario, ScenarioError

KRAFT_REGISTRY: dict[str, PropertySpec] = {}


def _register(name: str, kind: PropertyKind, group: str, description: str,
              check: Callable[..., Evidence | None]) -> None:
    KRAFT_REGISTRY[name] = PropertySpec(name, kind, group, description, lambda _scenario: check)


def _partitions(state: KraftState) -> Iterable[tuple[int, Any]]:
    return state.image.existing()


def leader_in_isr(state: KraftState) -> Evidence | None:
    for i, p in _partitions(state):
        if p.leader != NO_LEADER and p.leader not in p.isr:
            return {"partition": i, "leader": p.leader, "isr": list(p.isr)}
    return None


def isr_within_replicas(state: KraftState) -> Evidence | None:
    for i, p in _partitions(state):
        if not set(p.isr) <= set(p.replicas) or not set(p.elr) <= set(p.replicas):
            return {"partition": i, "replicas": list(p.replicas), "isr": list(p.isr), "elr": list(p.elr)}
    return None


def elr_disjoint_from_isr(state: KraftState) -> Evidence | None:
    for i, p in _partitions(state):
        if set(p.isr) & set(p.elr):
            return {"partition": i, "isr": list(p.isr), "elr": list(p.elr)}
    return None


def no_fenced_leader(state: KraftState) -> Evidence | None:
    image = state.image
    for i, p in image.existing():
        if p.leader != NO_LEADER and image.is_fenced(p.leader):
            return {"partition": i, "leader": p.leader}
    return None


def isr_members_eligible(state: KraftState) -> Evidence | None:
    """KIP-841: an ISR of two or more members names only active brokers (registered, unfenced, not in controlled
    shutdown). Fencing and controlled shutdown take a broker out of every ISR but a singleton one (with ELR off
    ``PartitionChangeBuilder`` never writes an empty ISR), and ``ineligibleReplicasForIsr`` keeps it out."""
    image = state.image
    for i, p in image.existing():
        if len(p.isr) > 1 and (inactive := [r for r in p.isr if not image.is_active(r)]):
            return {"partition": i, "isr": list(p.isr), "ineligible": inactive}
    return None


def no_leader_in_controlled_shutdown(state: KraftState) -> Evidence | None:
    """KIP-841: no broker the controller has put in controlled shutdown leads a partition in its image. The
    controller writes ``InControlledShutdown`` while it processes the broker's heartbeat asking to shut down
    (``handleBrokerInControlledShutdown``, 3.3.0 on), in the same batch as the PartitionChangeRecords that move
    leadership off the broker (``generateLeaderAndIsrUpdates`` with ``brokerToRemove``); from then until the broker
    registers again no election may pick it (``isAcceptableLeader`` is ``clusterControl::active``). A leader that
    is fenced as well is ``kraft_no_fenced_leader``'s."""
    image = state.image
    for i, p in image.existing():
        registration = image.broker(p.leader)
        if registration is not None and registration.in_controlled_shutdown and not registration.fenced:
            return {"partition": i, "leader": p.leader, "leader_epoch": p.leader_epoch}
    return None


def live_isr_member_leads(state: KraftState) -> Evidence | None:
    """A partition whose ISR names an active broker (registered, unfenced, not in controlled shutdown) has a leader
    in the controller's image. ``PartitionChangeBuilder.electLeader`` takes the first acceptable ISR member
    (``isAcceptableLeader`` is ``clusterControl::active``, 3.9.0-rc3), and every path that makes a broker active or
    takes a leader away runs it in the same batch of records: ``handleBrokerUnfenced`` over
    ``partitionsWithNoLeader``, ``handleBrokerFenced`` and ``handleBrokerInControlledShutdown`` over the broker's
    partitions (``generateLeaderAndIsrUpdates``), and an AlterPartition never removes the leader. So no state, quiet
    or not, has a leaderless partition with an active ISR member."""
    image = state.image
    for i, p in image.existing():
        if p.leader == NO_LEADER and (active := [r for r in p.isr if image.is_active(r)]):
            return {"partition": i, "isr": list(p.isr), "active": active}
    return None


def caught_up_broker_acts_on_image(state: KraftState) -> Evidence | None:
    """A running broker that has replayed the whole metadata log leads exactly the partitions the controller's
    image gives it, at the image's leader epoch, partition epoch and ISR, and leads none of the others: its image
    is the controller's, and ``BrokerMetadataPublisher.onMetadataUpdate`` hands every delta to
    ``ReplicaManager.applyDelta`` (``makeLeader`` / ``makeFollower``, 3.9.0-rc3). With every broker's replay
    bounded (``ReplayMetadataRecord`` steps), this is what "every broker's image catches up once the cluster is
    quiet" means in a state: whichever replays are still to come, a broker that has taken them acts on the
    controller's metadata."""
    end = len(state.metadata_log)
    for b in state.brokers:
        if not b.alive or b.metadata_offset < end:
            continue
        for i, p in state.image.existing():
            leads = b.leading[i]
            if p.leader == b.id:
                if leads is None or (leads.leader_epoch, leads.partition_epoch, leads.isr) != (
                        p.leader_epoch, p.partition_epoch, p.isr):
                    return {"broker": b.id, "partition": i, "image": [p.leader, p.leader_epoch, p.partition_epoch,
                                                                      list(p.isr)],
                            "leads": None if leads is None else [leads.leader_epoch, leads.partition_epoch,
                                                                 list(leads.isr)]}
            elif leads is not None:
                return {"broker": b.id, "partition": i, "image_leader": p.leader, "leads_epoch": leads.leader_epoch}
    return None


def no_acknowledged_record_lost(state: KraftState) -> Evidence | None:
    image = state.image
    for i, p in image.existing():
        if p.leader == NO_LEADER or image.is_fenced(p.leader):
            continue
        leader = next(b for b in state.brokers if b.id == p.leader)
        if not leader.alive:
            continue
        records = leader.logs[i].records
        for partition, offset, epoch in state.acknowledged:
            if partition == i and (offset >= len(records) or records[offset] != epoch):
                return {"partition": i, "leader": p.leader, "offset": offset, "epoch": epoch,
                        "leader_log": list(records)}
    return None


def epochs_only_grow(prev: KraftState, action: Any, next_: KraftState) -> Evidence | None:
    before, after = prev.image, next_.image
    for i, (p0, p1) in enumerate(zip(before.partitions, after.partitions, strict=False)):
        if p0 is None or p1 is None:  # created or deleted (a deleted topic is never created again)
            continue
        if p1.leader_epoch < p0.leader_epoch or p1.partition_epoch < p0.partition_epoch:
            return {"partition": i, "leader_epoch": [p0.leader_epoch, p1.leader_epoch],
                    "partition_epoch": [p0.partition_epoch, p1.partition_epoch]}
    for b0 in before.brokers:
        b1 = after.broker(b0.id)
        if b1 is None or b1.epoch < b0.epoch:
            return {"broker": b0.id, "broker_epoch": [b0.epoch, None if b1 is None else b1.epoch]}
    return None


def deleted_topic_hosted_nowhere(state: KraftState) -> Evidence | None:
    """A running broker that has replayed the whole metadata log neither holds a log of, nor leads, a partition
    of a deleted topic: ``ReplicaManager.applyDelta`` stops and deletes the replicas of ``deletedTopicIds``
    (3.9.0-rc3), and a broker that was offline meanwhile finds them stray at its first metadata publish. So once
    the cluster is quiet (every broker running and caught up with the log) no broker hosts the topic."""
    deleted = [r for r in state.metadata_log if isinstance(r, RemoveTopicRecord)]
    end = len(state.metadata_log)
    for record in deleted:
        for b in state.brokers:
            if not b.alive or b.metadata_offset < end:
                continue
            for i in record.partitions:
                if b.logs[i].records or b.leading[i] is not None:
                    return {"topic": record.name, "partition": i, "broker": b.id,
                            "log": list(b.logs[i].records), "leading": b.leading[i] is not None}
    return None


def record_acknowledged(state: KraftState) -> Evidence | None:
    return {"acknowledged": [list(a) for a in state.acknowledged]} if state.acknowledged else None


def _step_taken(kind: ActionKind) -> Callable[[KraftState, Any, KraftState], Evidence | None]:
    def check(prev: KraftState, action: Any, next_: KraftState) -> Evidence | None:
        return {"action": kind.value, "broker": action.broker} if action.kind is kind else None

    return check


_register("kraft_leader_in_isr", PropertyKind.ALWAYS, "protocol",
          "the controller's leader of a partition is in its ISR", leader_in_isr)
_register("kraft_isr_within_replicas", PropertyKind.ALWAYS, "protocol",
          "a partition's ISR and ELR are within its replicas", isr_within_replicas)
_register("kraft_elr_disjoint_from_isr", PropertyKind.ALWAYS, "protocol",
          "no replica is in a partition's ISR and its ELR at once (KIP-966)", elr_disjoint_from_isr)
_register("kraft_no_fenced_leader", PropertyKind.ALWAYS, "protocol",
          "no fenced broker leads a partition in the controller's image", no_fenced_leader)
_register("kraft_isr_members_eligible", PropertyKind.ALWAYS, "protocol",
          "an ISR of two or more members names only unfenced brokers not in controlled shutdown (KIP-841)",
          isr_members_eligible)
_register("kraft_no_leader_in_controlled_shutdown", PropertyKind.ALWAYS, "protocol",
          "no broker the controller has put in controlled shutdown leads a partition in its image (KIP-841)",
          no_leader_in_controlled_shutdown)
_register("kraft_live_isr_member_leads", PropertyKind.ALWAYS, "protocol",
          "a partition whose ISR names an active broker has a leader in the controller's image", live_isr_member_leads)
_register("kraft_caught_up_broker_acts_on_image", PropertyKind.ALWAYS, "protocol",
          "a running broker caught up with the metadata log leads exactly where the controller's image says, at its "
          "epochs and ISR", caught_up_broker_acts_on_image)
_register("kraft_no_acknowledged_record_lost", PropertyKind.ALWAYS, "protocol",
          "a running, unfenced leader holds every record acknowledged to an acks=all producer",
          no_acknowledged_record_lost)
_register("kraft_deleted_topic_hosted_nowhere", PropertyKind.ALWAYS, "protocol",
          "a running broker caught up with the metadata log hosts no replica of a deleted topic",
          deleted_topic_hosted_nowhere)
_register("kraft_epochs_only_grow", PropertyKind.ACTION_ALWAYS, "protocol",
          "leader epochs, partition epochs and broker epochs never go back", epochs_only_grow)
_register("sometimes_kraft_record_acknowledged", PropertyKind.SOMETIMES, "sometimes",
          "a produced record is acknowledged (acks=all)", record_acknowledged)
for _kind in ActionKind:
    _register(f"sometimes_kraft_{_kind.value}", PropertyKind.ACTION_SOMETIMES, "sometimes",
              f"a {_kind.value} step is taken", _step_taken(_kind))


def kraft_specs() -> tuple[PropertySpec, ...]:
    return tuple(KRAFT_REGISTRY[n] for n in sorted(KRAFT_REGISTRY))


def select_kraft(scenario: Scenario, names: Iterable[str] | None = None) -> tuple[Property, ...]:
    """The KRaft properties to check: ``names``, else the scenario's ``[check] properties``, else all."""
    chosen = list(names) if names is not None else scenario.properties
    if chosen is None:
        chosen = sorted(KRAFT_REGISTRY)
    for n in chosen:
        if n not in KRAFT_REGISTRY:
            raise ScenarioError(f"{n!r} is not a property of the KRaft model; its properties are "
                                f"{', '.join(sorted(KRAFT_REGISTRY))}.")
    return tuple(KRAFT_REGISTRY[n].for_scenario(scenario) for n in dict.fromkeys(chosen))
