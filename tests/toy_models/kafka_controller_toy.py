"""A port of the TLA+ toy controller (``bench/tla/KafkaControllerToy.tla``).

The TLA+ module is a deliberately small toy of the controller's replica and partition state
machines, written as a timing anchor: kmc's explorers must do exactly TLC's work on it (same
distinct states, same states generated per action, same depth), so that their speed can be set
beside TLC's. It is *not* the Kafka model of ``model/``; read it next to the TLA+ text, whose
variable, action and property names it keeps.

Choices made so that the numbers match TLC's:

* each disjunct of ``Next`` is one contract action per value of its bound variables
  (``BrokerFailure(b)``, ``IsrShrink(p, b)``...), including ``\\E b \\in isr[p]`` in ``ElectLeader``,
  for which TLC generates one successor per ``b``; actions are listed in the order of ``Next``;
* pairs ``(p, b)`` range over all partitions and brokers, as ``Pairs`` does, not only assigned ones;
* an enabled action always yields a successor, even one equal to its state (TLC counts it).

Encoding, for speed (the toy is the benchmark's hot loop): brokers are the numbers 1..B standing
for ``b1``..``bB`` and 0 stands for ``None``; sets of brokers (``up``, ``isr[p]``) are bit masks with
bit ``b`` for broker ``b``; replica and partition states are small ints named after Kafka's states;
a state is a tuple of small ints, encoded as one byte each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial, reduce
from operator import or_
from typing import NamedTuple

import attrs

from explorer.contract import Evidence, Property, PropertyKind

# kafka.controller.ReplicaState
NonExistentReplica = 0
NewReplica = 1
OnlineReplica = 2
OfflineReplica = 3
ReplicaDeletionStarted = 4
ReplicaDeletionSuccessful = 5
ReplicaDeletionIneligible = 6
REPLICA_STATES = (
    "NonExistentReplica",
    "NewReplica",
    "OnlineReplica",
    "OfflineReplica",
    "ReplicaDeletionStarted",
    "ReplicaDeletionSuccessful",
    "ReplicaDeletionIneligible",
)

# kafka.controller.PartitionState
NonExistentPartition = 0
NewPartition = 1
OnlinePartition = 2
OfflinePartition = 3
PARTITION_STATES = ("NonExistentPartition", "NewPartition", "OnlinePartition", "OfflinePartition")

NONE = 0  # the model value None (no leader)

_ONLINE_OR_OFFLINE = frozenset({OnlinePartition, OfflinePartition})

INVARIANTS = (
    "TypeOK",
    "OnlineHasLiveLeaderInIsr",
    "IsrWithinAssignment",
    "NoOnlineReplicaOnDeadBroker",
    "NonAssignedReplicasNonExistent",
)
SELECTABLE_INVARIANTS = (*INVARIANTS, "NeverStuckOffline")


@attrs.frozen
class ToyConfig:
    """The constants of a TLC config and what it checks. ``assignment[i]`` lists the replicas of
    partition ``p{i+1}`` in order, as broker numbers."""

    assignment: tuple[tuple[int, ...], ...]
    brokers: int = 3
    max_crashes: int = 3
    max_shrinks: int = 2
    max_epoch: int = 3
    invariants: tuple[str, ...] = INVARIANTS
    epoch_monotonic: bool = True

    def __attrs_post_init__(self) -> None:
        if not 1 <= self.brokers <= 7:
            raise ValueError(f"the toy keeps a set of brokers in one byte: 1 to 7 brokers, not {self.brokers}")
        for replicas in self.assignment:
            if not replicas or any(not 1 <= b <= self.brokers for b in replicas):
                raise ValueError(f"replicas {replicas} must be broker numbers 1..{self.brokers}")
        unknown = set(self.invariants) - set(SELECTABLE_INVARIANTS)
        if unknown:
            raise ValueError(f"unknown invariants {sorted(unknown)}; known: {', '.join(SELECTABLE_INVARIANTS)}")


#: ``MC.cfg``: p1 = <<b1, b2, b3>>, p2 = <<b2, b3>>.
MC = ToyConfig(assignment=((1, 2, 3), (2, 3)))
#: ``MC3.cfg``: MC plus p3 = <<b3, b1>>.
MC3 = ToyConfig(assignment=((1, 2, 3), (2, 3), (3, 1)))
#: ``MC_stuck.cfg``: MC checking NeverStuckOffline (which fails) and EpochMonotonic.
MC_STUCK = attrs.evolve(MC, invariants=("NeverStuckOffline",))

CONFIGS = {"MC": MC, "MC3": MC3, "MC_stuck": MC_STUCK}


class ToyState(NamedTuple):
    """The TLA+ variables. ``rstate`` is indexed by pair: ``p * B + b - 1`` for partition index
    ``p`` (0 for p1) and broker number ``b``."""

    up: int
    rstate: tuple[int, ...]
    pstate: tuple[int, ...]
    leader: tuple[int, ...]
    isr: tuple[int, ...]
    epoch: tuple[int, ...]
    deleting: bool
    crashes: int
    shrinks: int


class ToyAction(NamedTuple):
    """One disjunct of ``Next`` with its bound variables: partition index and broker number."""

    name: str
    partition: int = -1
    broker: int = NONE


#: A ToyState from a tuple of its fields in order, without the Python-level ``__new__`` that
#: NamedTuple generates (keyword arguments and all): the effects below build one per successor.
_new_state = partial(tuple.__new__, ToyState)


def _replace_at(values: tuple[int, ...], index: int, value: int) -> tuple[int, ...]:
    """``[values EXCEPT ![index] = value]``."""
    return (*values[:index], value, *values[index + 1 :])


class KafkaControllerToy:
    """``KafkaControllerToy.tla`` under one :class:`ToyConfig`, as a kmc model."""

    def __init__(self, config: ToyConfig = MC) -> None:
        self.config = config
        B = config.brokers
        self.brokers = tuple(range(1, B + 1))
        self._broker_count = B
        self.partitions = tuple(range(len(config.assignment)))
        self.all_brokers = sum(1 << b for b in self.brokers)
        #: Replicas(p) as a bit mask.
        self.replicas = tuple(sum(1 << b for b in replicas) for replicas in config.assignment)
        #: pair index -> (p, b), and the pair indices of one broker.
        self.pairs = tuple((p, b) for p in self.partitions for b in self.brokers)
        self.pairs_of_broker = {b: tuple(p * B + b - 1 for p in self.partitions) for b in self.brokers}
        self.assigned_pairs = tuple(i for i, (p, b) in enumerate(self.pairs) if self.replicas[p] & (1 << b))
        self.unassigned_pairs = tuple(i for i in range(len(self.pairs)) if i not in self.assigned_pairs)
        self._effects: dict[str, Callable[[ToyState, int, int], ToyState]] = {
            "CreateTopic": self.create_topic,
            "StartDeleteTopic": self.start_delete_topic,
            "CompleteDeletion": self.complete_deletion,
            "InitialElection": self.initial_election,
            "ElectLeader": self.elect_leader,
            "BrokerFailure": self.broker_failure,
            "BrokerStartup": self.broker_startup,
            "IsrShrink": self.isr_shrink,
            "IsrExpand": self.isr_expand,
            "DeletionSucceeded": self.deletion_succeeded,
            "RetryIneligible": self.retry_ineligible,
        }
        # The actions, built once, grouped as Next quantifies them.
        self._create = ToyAction("CreateTopic")
        self._start_delete = ToyAction("StartDeleteTopic")
        self._complete = ToyAction("CompleteDeletion")
        self._per_partition = tuple(
            (
                p,
                ToyAction("InitialElection", p),
                tuple((b, self._pair(p, b), ToyAction("ElectLeader", p, b)) for b in self.brokers),
            )
            for p in self.partitions
        )
        self._per_broker = tuple(
            (b, ToyAction("BrokerFailure", broker=b), ToyAction("BrokerStartup", broker=b)) for b in self.brokers
        )
        self._per_pair = tuple(
            (
                i,
                p,
                b,
                ToyAction("IsrShrink", p, b),
                ToyAction("IsrExpand", p, b),
                ToyAction("DeletionSucceeded", p, b),
                ToyAction("RetryIneligible", p, b),
            )
            for i, (p, b) in enumerate(self.pairs)
        )
        self._no_partitions = (NonExistentPartition,) * len(self.partitions)
        # Where each variable ends in the encoding (up is byte 0): rstate, pstate, leader, isr, epoch,
        # then deleting, crashes, shrinks.
        n = len(self.partitions)
        ends = [1 + len(self.pairs)]
        for _ in range(4):
            ends.append(ends[-1] + n)
        self._layout = (*ends, ends[-1] + 3)
        self._properties = self._selected_properties()

    # ---- Init and Next -------------------------------------------------------------------------

    def init_states(self) -> Sequence[ToyState]:
        n = len(self.partitions)
        return [
            ToyState(
                up=self.all_brokers,
                rstate=(NonExistentReplica,) * len(self.pairs),
                pstate=(NonExistentPartition,) * n,
                leader=(NONE,) * n,
                isr=(0,) * n,
                epoch=(0,) * n,
                deleting=False,
                crashes=0,
                shrinks=0,
            )
        ]

    def actions(self, s: ToyState) -> Sequence[ToyAction]:
        """The enabled actions, in the order of ``Next``: each block is one action's enabling
        conditions (its state mutations are the methods below)."""
        config = self.config
        up, rstate, pstate, leader, isr, epoch, deleting, crashes, shrinks = s
        enabled: list[ToyAction] = []
        # CreateTopic
        if not deleting and pstate == self._no_partitions:
            enabled.append(self._create)
        # StartDeleteTopic
        if not deleting and all(map(_ONLINE_OR_OFFLINE.__contains__, pstate)):
            enabled.append(self._start_delete)
        # CompleteDeletion
        if deleting and all(rstate[i] == ReplicaDeletionSuccessful for i in self.assigned_pairs):
            enabled.append(self._complete)
        for p, initial_election, elect_leader in self._per_partition:
            # InitialElection(p): some replica of p is live
            if not deleting and pstate[p] == NewPartition and up & self.replicas[p]:
                enabled.append(initial_election)
            # ElectLeader(p): \E b \in isr[p] : up[b] /\ rstate[<<p, b>>] = "OnlineReplica"
            if not deleting and pstate[p] == OfflinePartition and epoch[p] < config.max_epoch:
                candidates = isr[p] & up
                for b, pair, action in elect_leader:
                    if candidates & (1 << b) and rstate[pair] == OnlineReplica:
                        enabled.append(action)
        for b, failure, startup in self._per_broker:
            if up & (1 << b):
                # BrokerFailure(b)
                if crashes < config.max_crashes:
                    enabled.append(failure)
            else:
                # BrokerStartup(b)
                enabled.append(startup)
        can_shrink = shrinks < config.max_shrinks
        for i, p, b, shrink, expand_, succeeded, retry in self._per_pair:
            bit = 1 << b
            online = pstate[p] == OnlinePartition
            # IsrShrink(p, b)
            if online and can_shrink and isr[p] & bit and b != leader[p]:
                enabled.append(shrink)
            # IsrExpand(p, b)
            if online and self.replicas[p] & bit and not isr[p] & bit and up & bit and rstate[i] == OnlineReplica:
                enabled.append(expand_)
            # DeletionSucceeded(p, b)
            if rstate[i] == ReplicaDeletionStarted and up & bit:
                enabled.append(succeeded)
            # RetryIneligible(p, b)
            if rstate[i] == ReplicaDeletionIneligible and up & bit:
                enabled.append(retry)
        return enabled

    def next_state(self, state: ToyState, action: ToyAction) -> ToyState:
        name, partition, broker = action
        return self._effects[name](state, partition, broker)

    def create_topic(self, s: ToyState, p: int = -1, b: int = NONE) -> ToyState:
        """CreateTopic: every partition NewPartition, every assigned replica NewReplica."""
        rstate = list(s.rstate)
        for i in self.assigned_pairs:
            rstate[i] = NewReplica
        pstate = (NewPartition,) * len(self.partitions)
        return _new_state((s.up, tuple(rstate), pstate, s.leader, s.isr, s.epoch, s.deleting, s.crashes, s.shrinks))

    def initial_election(self, s: ToyState, p: int, b: int = NONE) -> ToyState:
        """InitialElection(p): leader = first live replica of the assignment, ISR = live replicas."""
        live = self.replicas[p] & s.up
        first = next(b for b in self.config.assignment[p] if s.up & (1 << b))  # CHOOSE is deterministic
        rstate = list(s.rstate)
        for b in self.brokers:
            if live & (1 << b):
                rstate[self._pair(p, b)] = OnlineReplica
        return _new_state((
            s.up,  # up
            tuple(rstate),  # rstate
            _replace_at(s.pstate, p, OnlinePartition),  # pstate
            _replace_at(s.leader, p, first),  # leader
            _replace_at(s.isr, p, live),  # isr
            s.epoch,  # epoch
            s.deleting,  # deleting
            s.crashes,  # crashes
            s.shrinks,  # shrinks
        ))

    def broker_failure(self, s: ToyState, p: int, b: int) -> ToyState:
        """BrokerFailure(b): b's replicas go offline (or deletion-ineligible), it loses leadership,
        and leaves every ISR where it is not the last member."""
        bit = 1 << b
        rstate = list(s.rstate)
        for i in self.pairs_of_broker[b]:
            r = rstate[i]
            if r in (OnlineReplica, NewReplica):
                rstate[i] = OfflineReplica
            elif r == ReplicaDeletionStarted:
                rstate[i] = ReplicaDeletionIneligible
        pstate, leader = s.pstate, s.leader
        if b in leader:
            pstate = tuple([
                OfflinePartition if lead == b and ps == OnlinePartition else ps
                for lead, ps in zip(leader, pstate, strict=True)
            ])
            leader = tuple([NONE if lead == b else lead for lead in leader])
        isr = tuple([members & ~bit if members & bit and members != bit else members for members in s.isr])
        return _new_state((s.up & ~bit, tuple(rstate), pstate, leader, isr, s.epoch, s.deleting, s.crashes + 1,
                           s.shrinks))

    def broker_startup(self, s: ToyState, p: int, b: int) -> ToyState:
        """BrokerStartup(b): b is up; its offline replicas come online unless a deletion is running."""
        rstate = s.rstate
        if not s.deleting:
            changed = list(rstate)
            for i in self.pairs_of_broker[b]:
                if changed[i] == OfflineReplica:
                    changed[i] = OnlineReplica
            rstate = tuple(changed)
        up = s.up | (1 << b)
        return _new_state((up, rstate, s.pstate, s.leader, s.isr, s.epoch, s.deleting, s.crashes, s.shrinks))

    def elect_leader(self, s: ToyState, p: int, b: int) -> ToyState:
        """ElectLeader(p) choosing b from the ISR (OfflinePartitionLeaderElectionStrategy, no
        unclean election): a new epoch, and the ISR keeps its live members."""
        return _new_state((
            s.up,  # up
            s.rstate,  # rstate
            _replace_at(s.pstate, p, OnlinePartition),  # pstate
            _replace_at(s.leader, p, b),  # leader
            _replace_at(s.isr, p, s.isr[p] & s.up),  # isr
            _replace_at(s.epoch, p, s.epoch[p] + 1),  # epoch
            s.deleting,  # deleting
            s.crashes,  # crashes
            s.shrinks,  # shrinks
        ))

    def isr_shrink(self, s: ToyState, p: int, b: int) -> ToyState:
        """IsrShrink(p, b): a follower falls out of the ISR."""
        isr = _replace_at(s.isr, p, s.isr[p] & ~(1 << b))
        return _new_state((s.up, s.rstate, s.pstate, s.leader, isr, s.epoch, s.deleting, s.crashes, s.shrinks + 1))

    def isr_expand(self, s: ToyState, p: int, b: int) -> ToyState:
        """IsrExpand(p, b): an online replica rejoins the ISR."""
        isr = _replace_at(s.isr, p, s.isr[p] | (1 << b))
        return _new_state((s.up, s.rstate, s.pstate, s.leader, isr, s.epoch, s.deleting, s.crashes, s.shrinks))

    def start_delete_topic(self, s: ToyState, p: int = -1, b: int = NONE) -> ToyState:
        """StartDeleteTopic: every partition offline without leader; live replicas start deletion,
        replicas on dead brokers are ineligible."""
        rstate = list(s.rstate)
        for i in self.assigned_pairs:
            rstate[i] = ReplicaDeletionStarted if s.up & (1 << self.pairs[i][1]) else ReplicaDeletionIneligible
        n = len(self.partitions)
        return _new_state((
            s.up,  # up
            tuple(rstate),  # rstate
            (OfflinePartition,) * n,  # pstate
            (NONE,) * n,  # leader
            s.isr,  # isr
            s.epoch,  # epoch
            True,  # deleting
            s.crashes,  # crashes
            s.shrinks,  # shrinks
        ))

    def deletion_succeeded(self, s: ToyState, p: int, b: int) -> ToyState:
        """DeletionSucceeded(p, b): the StopReplica (delete) of a live replica succeeded."""
        i = p * self._broker_count + b - 1  # the pair <<p, b>>, inline: the most frequent actions of Next
        rstate = (*s.rstate[:i], ReplicaDeletionSuccessful, *s.rstate[i + 1 :])
        return _new_state((s.up, rstate, s.pstate, s.leader, s.isr, s.epoch, s.deleting, s.crashes, s.shrinks))

    def retry_ineligible(self, s: ToyState, p: int, b: int) -> ToyState:
        """RetryIneligible(p, b): the deletion of a replica back on a live broker is retried."""
        i = p * self._broker_count + b - 1  # the pair <<p, b>>, inline: the most frequent actions of Next
        rstate = (*s.rstate[:i], ReplicaDeletionStarted, *s.rstate[i + 1 :])
        return _new_state((s.up, rstate, s.pstate, s.leader, s.isr, s.epoch, s.deleting, s.crashes, s.shrinks))

    def complete_deletion(self, s: ToyState, p: int = -1, b: int = NONE) -> ToyState:
        """CompleteDeletion: every assigned replica deleted; the topic is gone (epochs stay)."""
        n = len(self.partitions)
        return _new_state((
            s.up,  # up
            (NonExistentReplica,) * len(self.pairs),  # rstate
            (NonExistentPartition,) * n,  # pstate
            s.leader,  # leader
            (0,) * n,  # isr
            s.epoch,  # epoch
            False,  # deleting
            s.crashes,  # crashes
            s.shrinks,  # shrinks
        ))

    def _pair(self, p: int, b: int) -> int:
        return p * len(self.brokers) + b - 1

    # ---- properties ----------------------------------------------------------------------------

    def properties(self) -> Sequence[Property]:
        return self._properties

    def _selected_properties(self) -> tuple[Property, ...]:
        invariants = {
            "TypeOK": ("every variable has a value of its type", self.type_ok),
            "OnlineHasLiveLeaderInIsr": (
                "an online partition has a live leader in its ISR",
                self.online_has_live_leader_in_isr,
            ),
            "IsrWithinAssignment": (
                "the ISR is a subset of the assigned replicas",
                self.isr_within_assignment,
            ),
            "NoOnlineReplicaOnDeadBroker": (
                "no OnlineReplica on a dead broker",
                self.no_online_replica_on_dead_broker,
            ),
            "NonAssignedReplicasNonExistent": (
                "replicas that are not assigned stay NonExistentReplica",
                self.non_assigned_replicas_non_existent,
            ),
            "NeverStuckOffline": (
                "an offline partition outside deletion has a live ISR member (expected to fail)",
                self.never_stuck_offline,
            ),
        }
        selected = [Property(name, PropertyKind.ALWAYS, *invariants[name]) for name in self.config.invariants]
        if self.config.epoch_monotonic:
            selected.append(
                Property(
                    "EpochMonotonic",
                    PropertyKind.ACTION_ALWAYS,
                    "leader epochs never decrease",
                    self.epoch_monotonic,
                )
            )
        return tuple(selected)

    def type_ok(self, s: ToyState) -> Evidence | None:
        every = self.all_brokers
        up, rstate, pstate, leader, isr, epoch, deleting, _, _ = s
        if (
            # The checks below, in one expression without building the list of names (the usual case).
            up | every == every
            and min(rstate) >= 0 and max(rstate) < len(REPLICA_STATES)
            and min(pstate) >= 0 and max(pstate) < len(PARTITION_STATES)
            and min(leader) >= 0 and max(leader) <= len(self.brokers)
            and reduce(or_, isr, 0) | every == every
            and min(epoch) >= 0 and max(epoch) <= self.config.max_epoch
            and deleting.__class__ is bool
        ):
            return None
        bad = [
            name
            for name, ok in (
                ("up", s.up | self.all_brokers == self.all_brokers),
                ("rstate", min(s.rstate) >= 0 and max(s.rstate) < len(REPLICA_STATES)),
                ("pstate", min(s.pstate) >= 0 and max(s.pstate) < len(PARTITION_STATES)),
                ("leader", min(s.leader) >= 0 and max(s.leader) <= len(self.brokers)),
                ("isr", all(isr | self.all_brokers == self.all_brokers for isr in s.isr)),
                ("epoch", min(s.epoch) >= 0 and max(s.epoch) <= self.config.max_epoch),
                ("deleting", isinstance(s.deleting, bool)),
            )
            if not ok
        ]
        return {"variables": bad, "state": list(self.describe_state(s))} if bad else None

    def online_has_live_leader_in_isr(self, s: ToyState) -> Evidence | None:
        for p in self.partitions:
            leader = s.leader[p]
            if s.pstate[p] == OnlinePartition and not (
                leader != NONE and s.up & (1 << leader) and s.isr[p] & (1 << leader)
            ):
                return {
                    "partition": _partition(p),
                    "leader": _broker(leader),
                    "isr": self.broker_names(s.isr[p]),
                    "up": self.broker_names(s.up),
                }
        return None

    def isr_within_assignment(self, s: ToyState) -> Evidence | None:
        for p in self.partitions:
            if s.isr[p] & ~self.replicas[p]:
                return {
                    "partition": _partition(p),
                    "isr": self.broker_names(s.isr[p]),
                    "replicas": [_broker(b) for b in self.config.assignment[p]],
                }
        return None

    def no_online_replica_on_dead_broker(self, s: ToyState) -> Evidence | None:
        if s.up == self.all_brokers:
            return None
        for i, (p, b) in enumerate(self.pairs):
            if s.rstate[i] == OnlineReplica and not s.up & (1 << b):
                return {"partition": _partition(p), "broker": _broker(b)}
        return None

    def non_assigned_replicas_non_existent(self, s: ToyState) -> Evidence | None:
        for i in self.unassigned_pairs:
            if s.rstate[i] != NonExistentReplica:
                p, b = self.pairs[i]
                return {
                    "partition": _partition(p),
                    "broker": _broker(b),
                    "replica_state": REPLICA_STATES[s.rstate[i]],
                }
        return None

    def never_stuck_offline(self, s: ToyState) -> Evidence | None:
        for p in self.partitions:
            if s.pstate[p] == OfflinePartition and not s.deleting and not s.isr[p] & s.up:
                return {
                    "partition": _partition(p),
                    "isr": self.broker_names(s.isr[p]),
                    "up": self.broker_names(s.up),
                }
        return None

    def epoch_monotonic(self, prev: ToyState, action: ToyAction, next_: ToyState) -> Evidence | None:
        if next_.epoch is prev.epoch:  # only ElectLeader builds a new epoch tuple
            return None
        for p in self.partitions:
            if next_.epoch[p] < prev.epoch[p]:
                return {"partition": _partition(p), "epoch": prev.epoch[p], "next_epoch": next_.epoch[p]}
        return None

    # ---- encoding and descriptions -------------------------------------------------------------

    def within_boundary(self, state: ToyState) -> bool:
        return True

    def encode(self, s: ToyState) -> bytes:
        up, rstate, pstate, leader, isr, epoch, deleting, crashes, shrinks = s  # one unpacking, not nine look-ups
        return bytes((up, *rstate, *pstate, *leader, *isr, *epoch, deleting, crashes, shrinks))

    def decode(self, data: bytes) -> ToyState:
        rstate_end, pstate_end, leader_end, isr_end, epoch_end, _ = self._layout
        return _new_state((
            data[0],  # up
            tuple(data[1:rstate_end]),  # rstate
            tuple(data[rstate_end:pstate_end]),  # pstate
            tuple(data[pstate_end:leader_end]),  # leader
            tuple(data[leader_end:isr_end]),  # isr
            tuple(data[isr_end:epoch_end]),  # epoch
            bool(data[epoch_end]),  # deleting
            data[epoch_end + 1],  # crashes
            data[epoch_end + 2],  # shrinks
        ))

    def action_name(self, action: ToyAction) -> str:
        return action.name

    def describe_action(self, action: ToyAction) -> str:
        bound = [_partition(action.partition)] if action.partition >= 0 else []
        bound += [_broker(action.broker)] if action.broker != NONE else []
        return f"{action.name}({', '.join(bound)})" if bound else action.name

    def describe_state(self, s: ToyState) -> Sequence[str]:
        return [f"{name} = {value}" for name, value in self._variables(s).items()]

    def describe_changes(self, prev: ToyState, next_: ToyState) -> Sequence[str]:
        before, after = self._variables(prev), self._variables(next_)
        return [f"{name}: {before[name]} -> {after[name]}" for name in before if before[name] != after[name]]

    def _variables(self, s: ToyState) -> dict[str, str]:
        """Each variable (function values split per argument) as TLA+ would print it."""
        values: dict[str, str] = {}
        for b in self.brokers:
            values[f"up[{_broker(b)}]"] = "TRUE" if s.up & (1 << b) else "FALSE"
        for i, (p, b) in enumerate(self.pairs):
            values[f"rstate[{_partition(p)}, {_broker(b)}]"] = REPLICA_STATES[s.rstate[i]]
        for p in self.partitions:
            name = _partition(p)
            values[f"pstate[{name}]"] = PARTITION_STATES[s.pstate[p]]
            values[f"leader[{name}]"] = _broker(s.leader[p])
            values[f"isr[{name}]"] = "{" + ", ".join(self.broker_names(s.isr[p])) + "}"
            values[f"epoch[{name}]"] = str(s.epoch[p])
        values["deleting"] = "TRUE" if s.deleting else "FALSE"
        values["crashes"] = str(s.crashes)
        values["shrinks"] = str(s.shrinks)
        return values

    def broker_names(self, mask: int) -> list[str]:
        """The brokers of a bit mask (``up``, an ISR), e.g. ``["b1", "b3"]``."""
        return [_broker(b) for b in self.brokers if mask & (1 << b)]


def _broker(b: int) -> str:
    return "None" if b == NONE else f"b{b}"


def _partition(p: int) -> str:
    return f"p{p + 1}"
