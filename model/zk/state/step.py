"""The working copy one step mutates: a thawed :class:`~model.zk.state.values.ClusterState`.

Transitions are pure from the outside (a frozen state in, a new frozen state out), but inside one
step the controller's code reads best written as Kafka writes it: methods that update a context,
write ZooKeeper and batch requests. :class:`Step` is that mutable scratch copy; :meth:`Step.freeze`
turns it back into a canonical frozen value. Nothing outlives a step.

``Step`` also plays ``ControllerBrokerRequestBatch`` (``controller/ControllerChannelManager.scala``):
requests are accumulated per broker during one ``handleStateChanges`` call and appended to the
broker channels by :meth:`Step.send_requests_to_brokers` in Kafka's order for the scenario's
version (see there).

A step is taken either by the active controller or, for ``ZombieControllerProcessEvent``, by a former
controller that has not noticed it lost controllership (:attr:`ClusterState.zombie`): ``acting_zombie``
loads the zombie's context instead and leaves the active controller's alone, except that ZooKeeper
watches the zombie's writes fire reach the active controller. Every ZooKeeper write of a controller
goes through :meth:`Step.controller_writes_zk`, which fences a zombie from Kafka 2.1 (KAFKA-6082).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from model.scenario import Scenario
from model.zk.state.schema import Shape, define_functions, sequence_of, state_fields
from model.zk.state.states import PartitionState, ReplicaState, replica_table
from model.zk.state.values import (
    EPOCH_DURING_DELETE,
    LEADER_DURING_DELETE,
    NO_EPOCH,
    BrokerState,
    Budget,
    ClusterState,
    ControllerEvent,
    ControllerState,
    EventKind,
    History,
    LeaderAndIsr,
    MetadataPartitionState,
    PartitionLeaderState,
    Replica,
    Request,
    RequestKind,
    StepLog,
    StopReplicaPartitionState,
    TopicPartition,
    ZkState,
    sorted_items,
)


class ControllerError(Exception):
    """An exception Kafka's controller code throws out of a handler; the message names its class."""


class ControllerMovedException(ControllerError):
    """A ZooKeeper write of a controller that lost controllership, refused by the ``/controller_epoch``
    zkVersion check of every controller write from Kafka 2.1 (KAFKA-6082): the controller resigns."""


class Step:
    # The state's tables, sets, brokers and channels, thawed from ``source`` on first use (see _Thawed), so
    # that a step pays only for what it reads, and freeze() keeps the parent's tuple for what it never read.
    # ZooKeeper
    zk_brokers: dict[int, int]
    zk_topics: dict[str, tuple[tuple[int, ...], ...]]
    zk_partitions: dict[TopicPartition, LeaderAndIsr]
    zk_delete_topics: set[str]
    zk_isr_change_notifications: set[TopicPartition]
    zk_reassign_partitions: dict[TopicPartition, tuple[int, ...]]
    zk_preferred_replica_election: set[TopicPartition]
    zk_log_dir_event_notifications: set[int]
    zk_topic_unclean_leader_election_enable: set[str]
    zk_controller_epoch: int
    zk_unclean_leader_election_enable: bool
    zk_adding_replicas: dict[TopicPartition, tuple[int, ...]]
    zk_removing_replicas: dict[TopicPartition, tuple[int, ...]]
    zk_topic_ids: dict[str, int]
    # ControllerContext and TopicDeletionManager (of the acting controller)
    epoch: int
    events: list[ControllerEvent]
    live_brokers: dict[int, int]
    assignment: dict[TopicPartition, tuple[int, ...]]
    leadership: dict[TopicPartition, LeaderAndIsr]
    partition_state: dict[TopicPartition, PartitionState]
    replica_state: dict[Replica, ReplicaState]
    topics_to_be_deleted: set[str]
    topics_ineligible_for_deletion: set[str]
    topics_with_deletion_started: set[str]
    partitions_being_reassigned: dict[TopicPartition, tuple[int, ...]]
    shutting_down_brokers: set[int]
    replicas_on_offline_dirs: set[tuple[int, TopicPartition]]
    adding_replicas: dict[TopicPartition, tuple[int, ...]]
    removing_replicas: dict[TopicPartition, tuple[int, ...]]
    topic_ids: dict[str, int]
    # brokers, channels and history
    brokers: dict[int, BrokerState]
    channels: dict[int, list[Request]]
    stray_logs: set[tuple[int, TopicPartition]]

    def __init__(self, scenario: Scenario, s: ClusterState, *, acting_zombie: bool = False):
        self.scenario = scenario
        self.replica_table = replica_table(scenario.since("KAFKA_8237"))
        self.acting_zombie = acting_zombie
        self.resigned = False  # the acting zombie resigned in this step
        self.source = s  # the state thawed: freeze() keeps the parts of it the step did not change
        # ZooKeeper: its scalars copied (its tables and sets are thawed on first use: see _THAW)
        _ZK.start(self, s.zk)
        # ControllerContext and TopicDeletionManager (of the zombie, for its steps)
        c: ControllerState
        self.other_controller: ControllerState | None
        if acting_zombie:
            assert s.zombie is not None
            c, self.other_controller = s.zombie, s.controller
        else:
            c, self.other_controller = s.controller, s.zombie
        self.zombie_epoch = -1 if s.zombie is None else s.zombie.epoch
        self.source_controller = c
        _CONTROLLER.start(self, c)
        # events fired by ZooKeeper watches go to the active controller, also during a zombie's step
        self.watch_events: list[ControllerEvent] = list(s.controller.events) if acting_zombie else self.events
        self.standby_reassignments = s.standby_reassignments
        self.budget = s.budget
        # ControllerBrokerRequestBatch
        self._leader_and_isr: dict[int, dict[TopicPartition, PartitionLeaderState]] = {}
        self._stop_replica: dict[int, list[TopicPartition]] = {}
        self._stop_replica_delete: dict[int, list[TopicPartition]] = {}
        self._stop_replica_callbacks: set[tuple[int, TopicPartition]] = set()
        # StopReplica v3 (KIP-570): per broker, each partition's state as addStopReplicaRequestForBrokers put it
        self._stop_replica_states: dict[int, dict[TopicPartition, StopReplicaPartitionState]] = {}
        self._update_metadata_brokers: set[int] = set()
        self._update_metadata_states: dict[TopicPartition, MetadataPartitionState] = {}
        # the step's state-change log
        self.replica_transitions: list[tuple[Replica, ReplicaState, ReplicaState]] = []
        self.illegal_transitions: list[tuple[Replica, ReplicaState, ReplicaState]] = []
        self.messages: list[str] = []
        self.completed_deletions: list[str] = []
        self.deletion_retries: list[str] = []
        self.elections: list[tuple[TopicPartition, int, int]] = []
        self.isr_updates: list[tuple[TopicPartition, int, tuple[int, ...], tuple[int, ...]]] = []
        self.zk_conflicts: list[TopicPartition] = []
        self.reassignments_completed: list[TopicPartition] = []
        self.partitions_added: list[TopicPartition] = []
        self.additions_reverted: list[str] = []
        self.topics_created: list[str] = []
        self.failed_elections: list[tuple[TopicPartition, str]] = []
        self.repeated_elections: list[TopicPartition] = []
        self.controller_initialized = False
        self.initial_replica_states: list[tuple[Replica, ReplicaState]] = []
        self.controlled_shutdown_results: list[tuple[int, tuple[TopicPartition, ...], str]] = []
        self.preferred_elections_completed: list[TopicPartition] = []
        self.zk_write_fenced = False
        self.controller_resignations: list[tuple[int, str]] = []
        self.processed_event: ControllerEvent | None = None
        self.rejection = ""
        self.inconsistent_topic_ids: list[TopicPartition] = []
        # The explorer's choice for this step: a partition leader's ISR write (leader, partition, follower,
        # kind) that lands between the controller's read of that znode and its conditional write.
        self.isr_race: tuple[int, TopicPartition, int, str] | None = None
        self.isr_race_fired = False
        # The write lands at a later write of that znode in the step, after the leader applied the controller's
        # LeaderAndIsr for its earlier write (partition_leader.maybe_race).
        self.isr_race_after_leader_and_isr = False
        # The explorer's choice for this step: the answer to the AlterIsr it processes never reaches the leader,
        # which re-sends the request (partition_leader.alter_isr_answer_lost).
        self.alter_isr_answer_lost = False

    # ---- freezing ----
    def controller_state(self) -> ControllerState:
        """The acting controller's context as a frozen value (the thawed one when the step left it unchanged)."""
        state: ControllerState = _CONTROLLER.freeze(self, self.source_controller)
        return state

    def freeze(self) -> ClusterState:
        thawed = self.__dict__.get
        zk = _ZK.freeze(self, self.source.zk)
        acting = self.controller_state()
        if self.acting_zombie:
            assert self.other_controller is not None
            controller = attrs.evolve(self.other_controller, events=tuple(self.watch_events))
            zombie = None if self.resigned or not acting.events else acting
        else:
            controller, zombie = acting, self.other_controller
        zombie_resigned = self.acting_zombie and zombie is None
        if not self.logged():
            log = _QUIET_LOGS[(self.acting_zombie, zombie_resigned, self.processed_event, self.rejection)]
        else:
            log = StepLog(
                replica_transitions=tuple(self.replica_transitions),
                illegal_transitions=tuple(self.illegal_transitions),
                messages=tuple(self.messages),
                completed_deletions=tuple(self.completed_deletions),
                deletion_retries=tuple(self.deletion_retries),
                elections=tuple(self.elections),
                isr_updates=tuple(self.isr_updates),
                zk_conflicts=tuple(self.zk_conflicts),
                reassignments_completed=tuple(self.reassignments_completed),
                partitions_added=tuple(self.partitions_added),
                topics_created=tuple(self.topics_created),
                additions_reverted=tuple(self.additions_reverted),
                failed_elections=tuple(self.failed_elections),
                repeated_elections=tuple(self.repeated_elections),
                controller_initialized=self.controller_initialized,
                initial_replica_states=tuple(self.initial_replica_states),
                zombie_step=self.acting_zombie,
                zombie_resigned=zombie_resigned,
                controlled_shutdown_results=tuple(self.controlled_shutdown_results),
                preferred_elections_completed=tuple(self.preferred_elections_completed),
                zk_write_fenced=self.zk_write_fenced,
                controller_resignations=tuple(self.controller_resignations),
                processed_event=self.processed_event,
                rejection=self.rejection,
                inconsistent_topic_ids=tuple(self.inconsistent_topic_ids),
            )
        source = self.source
        channels = thawed("channels")
        if self.acting_zombie and zombie is None:
            # onControllerResignation: ControllerChannelManager.shutdown drops what it had not sent
            channels = {b: [r for r in q if r.controller_epoch != acting.epoch] for b, q in self.channels.items()}
        brokers = thawed("brokers")
        return ClusterState(
            zk=zk,
            controller=controller,
            brokers=source.brokers if brokers is None else _unchanged_or(
                source.brokers, tuple(brokers[b] for b in sorted(brokers))),
            channels=source.channels if channels is None else _unchanged_or(
                source.channels, tuple((b, tuple(q)) for b, q in sorted(channels.items()) if q)),
            budget=self.budget,
            history=_HISTORY.freeze(self, source.history),
            log=log,
            zombie=zombie,
            standby_reassignments=self.standby_reassignments,
        )

    def logged(self) -> bool:
        """Whether the step wrote its log beyond the event it processed and the broker's rejection: otherwise its
        :class:`StepLog` is one of the few shared ones (``_QUIET_LOGS``), with no tuples made."""
        return bool(self.replica_transitions or self.illegal_transitions or self.messages
                    or self.completed_deletions or self.deletion_retries or self.elections or self.isr_updates
                    or self.zk_conflicts or self.reassignments_completed or self.partitions_added
                    or self.topics_created or self.additions_reverted or self.failed_elections
                    or self.repeated_elections or self.controller_initialized or self.initial_replica_states
                    or self.controlled_shutdown_results or self.preferred_elections_completed
                    or self.zk_write_fenced or self.controller_resignations or self.inconsistent_topic_ids)

    # ---- ZooKeeper writes ----
    def controller_writes_zk(self, what: str) -> None:
        """Called before every ZooKeeper write of the controller: from Kafka 2.1 (KAFKA-6082) each write is a
        multi-op checking the ``/controller_epoch`` zkVersion, so a controller that lost controllership has it
        refused (``ControllerMovedException``) and resigns; before 2.1 the write lands."""
        if self.acting_zombie and not self.scenario.bug("KAFKA_6082"):
            raise ControllerMovedException(f"ControllerMovedException: {what} refused, the controller epoch "
                                           f"zkVersion moved (controller epoch {self.zk_controller_epoch} > "
                                           f"{self.epoch})")

    # ---- ControllerContext queries ----
    def is_replica_online(self, broker: int, tp: TopicPartition | None = None,
                          include_shutting_down: bool = False) -> bool:
        """``ControllerContext.isReplicaOnline``: the broker is live (``liveBrokerIds`` excludes the brokers in
        controlled shutdown, unless ``include_shutting_down``) and the partition is not on one of its offline
        log directories."""
        if broker not in self.live_brokers:
            return False
        if not include_shutting_down and broker in self.shutting_down_brokers:
            return False
        return tp is None or (broker, tp) not in self.replicas_on_offline_dirs

    def partition_leadership_info(self, tp: TopicPartition) -> LeaderAndIsr:
        """``controllerContext.partitionLeadershipInfo(tp)``: Scala's ``Map.apply``, which throws
        ``NoSuchElementException`` for a partition the controller has no leadership for (one created while
        none of its replicas was live: ``PartitionStateMachine.initializeLeaderAndIsrForPartitions`` leaves it
        NewPartition with no ``/partitions/<p>/state``)."""
        lai = self.leadership.get(tp)
        if lai is None:
            raise ControllerError(f"NoSuchElementException: key not found: {tp[0]}-{tp[1]}")
        return lai

    def live_or_shutting_down(self) -> set[int]:
        return set(self.live_brokers)

    def is_active(self) -> bool:
        """``KafkaController.isActive`` for the acting controller."""
        return not self.acting_zombie

    def partitions_for_topic(self, topic: str) -> list[TopicPartition]:
        return sorted(tp for tp in self.assignment if tp[0] == topic)

    def replicas_for_topic(self, topic: str) -> list[Replica]:
        return [(t, p, b) for (t, p) in self.partitions_for_topic(topic) for b in self.assignment[(t, p)]]

    def replicas_on_brokers(self, brokers: set[int]) -> list[Replica]:
        return [(t, p, b) for (t, p), reps in sorted(self.assignment.items()) for b in reps if b in brokers]

    def replicas_in_state(self, topic: str, state: ReplicaState) -> list[Replica]:
        return [r for r in self.replicas_for_topic(topic) if self.replica_state.get(r) == state]

    def all_topics(self) -> set[str]:
        return {t for t, _ in self.assignment}

    def unclean_leader_election_enable(self, topic: str) -> bool:
        """``LogConfig.uncleanLeaderElectionEnable`` of the topic as ``zkClient.getLogConfigs`` reads it when an
        election needs it (``PartitionStateMachine.collectUncleanLeaderElectionState``, 1.1 – 2.3): the topic's
        override (``/config/topics/<t>``) if set, else the cluster-wide default."""
        return self.zk_unclean_leader_election_enable or topic in self.zk_topic_unclean_leader_election_enable

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        return topic in self.topics_to_be_deleted

    # ---- events ----
    def enqueue_once(self, kind: EventKind, *, topic: str = "", partition: TopicPartition | None = None) -> None:
        """A ZooKeeper watch fired. Watches are one-shot and re-armed when the handler re-reads the
        znode, so while one event of this kind (for this topic or partition) waits in the queue,
        further changes add nothing."""
        event = ControllerEvent(kind, topic=topic, partitions=() if partition is None else (partition,))
        if event not in self.watch_events:
            self.watch_events.append(event)

    def partition_state_written(self, tp: TopicPartition) -> None:
        """A partition-state znode was written. The data watch of a partition being reassigned
        (``PartitionReassignmentIsrChangeHandler``, registered by ``maybeTriggerPartitionReassignment``
        and read, hence armed, by ``onPartitionReassignment``) fires ``PartitionReassignmentIsrChange``. With AlterIsr
        (KIP-497, ``inter.broker.protocol.version`` ≥ 2.7-IV2) the watch is not registered
        (``onPartitionReassignment``'s ``if (!isAlterIsrEnabled)`` at 2.7.0, KAFKA-10521): ``processAlterIsr`` resumes
        the reassignment itself."""
        if tp in self.partitions_being_reassigned and not self.scenario.since("KIP_497"):
            self.enqueue_once(EventKind.PartitionReassignmentIsrChange, partition=tp)

    def topic_znode_written(self, topic: str) -> None:
        """/brokers/topics/<topic> was written. ``PartitionModificationsHandler`` watches it for the
        topics the controller knows (registered by TopicChange, unregistered by ``completeDeleteTopic``)."""
        if topic in self.all_topics():
            self.enqueue_once(EventKind.PartitionModifications, topic=topic)

    # ---- ControllerChannelManager ----
    def remove_broker_channel(self, broker: int) -> None:
        """``ControllerChannelManager.removeBroker``: the acting controller's queue to the broker is dropped. The
        channels are shared in the model; the requests of another controller (a newer one, or a former one
        still at work) stay."""
        queue = [r for r in self.channels.get(broker, []) if r.controller_epoch != self.epoch]
        if queue:
            self.channels[broker] = queue
        else:
            self.channels.pop(broker, None)

    def remove_channels_of(self, controller_epoch: int) -> None:
        """``ControllerChannelManager.shutdown`` of a controller that resigns: the requests it had not sent (those
        of its controller epoch still in the channels) are dropped."""
        for b in list(self.channels):
            queue = [r for r in self.channels[b] if r.controller_epoch != controller_epoch]
            if queue:
                self.channels[b] = queue
            else:
                del self.channels[b]

    # ---- ControllerBrokerRequestBatch ----
    def add_leader_and_isr_request(self, brokers: Iterable[int], tp: TopicPartition, lai: LeaderAndIsr,
                                   replicas: tuple[int, ...], is_new: bool) -> None:
        for b in brokers:
            if b < 0:
                continue
            per_broker = self._leader_and_isr.setdefault(b, {})
            previous = per_broker.get(tp)
            # addLeaderAndIsrRequestForBrokers: isNew sticks once set for a partition in a batch
            new = is_new or (previous is not None and previous.is_new)
            per_broker[tp] = PartitionLeaderState(partition=tp, leader=lai.leader, leader_epoch=lai.leader_epoch,
                                                  isr=lai.isr, replicas=replicas, is_new=new,
                                                  zk_version=lai.zk_version, controller_epoch=lai.controller_epoch,
                                                  leader_recovery_state=lai.leader_recovery_state)
        self.add_update_metadata_request(self.live_or_shutting_down(), [tp])

    def add_stop_replica_request(self, broker: int, tp: TopicPartition, delete: bool, callback: bool = False) -> None:
        """``addStopReplicaRequestForBrokers``; ``callback``: 2.0 – 2.2 attach the TopicDeletionManager's
        response callback to the deletions it starts (reassignment's own deletions get a no-op one).

        With StopReplica v3 (KIP-570, ``inter.broker.protocol.version`` 2.6-IV0+; ``ControllerChannelManager.
        addStopReplicaRequestForBrokers`` 2.6.0) the partition's leader epoch is read now: ``EpochDuringDelete``
        (-2) for a topic queued for deletion, else the controller's cached leader epoch, ``NoEpoch`` (-1)
        without leadership info; a partition added twice to one broker keeps the last epoch and is deleted if
        either asked for it (``alreadyDelete || deletePartition``)."""
        if self.scenario.since("KIP_570"):
            if self.is_topic_queued_up_for_deletion(tp[0]):
                epoch = EPOCH_DURING_DELETE
            else:
                lai = self.leadership.get(tp)
                epoch = NO_EPOCH if lai is None else lai.leader_epoch
            states = self._stop_replica_states.setdefault(broker, {})
            previous = states.get(tp)
            states[tp] = StopReplicaPartitionState(partition=tp, leader_epoch=epoch,
                                                   delete_partition=delete or (previous is not None
                                                                               and previous.delete_partition))
            return
        target = self._stop_replica_delete if delete else self._stop_replica
        parts = target.setdefault(broker, [])
        if tp not in parts:
            parts.append(tp)
        if callback:
            self._stop_replica_callbacks.add((broker, tp))

    def add_update_metadata_request(self, brokers: Iterable[int], partitions: Iterable[TopicPartition] | None) -> None:
        """``addUpdateMetadataRequestForBrokers``: the partitions' leader and epoch from the
        controller's cache, read now (``LeaderDuringDelete`` for a topic queued for deletion;
        partitions without leadership are skipped). ``None`` stands for the empty set of Kafka 2.0 –
        2.1's callers, which there meant every partition with leadership (from 2.2, KAFKA-7537, the
        callers pass either an explicit set or an empty one that means none).
        Kafka 2.0 decides "being deleted" by its ``partitionsToBeDeleted``, the model by the topic
        being queued (the 2.1+ rule)."""
        self._update_metadata_brokers.update(b for b in brokers if b >= 0)
        chosen = sorted(self.leadership) if partitions is None else partitions
        for tp in chosen:
            lai = self.leadership.get(tp)
            if lai is None:
                continue
            leader = LEADER_DURING_DELETE if self.is_topic_queued_up_for_deletion(tp[0]) else lai.leader
            self._update_metadata_states[tp] = MetadataPartitionState(partition=tp, leader=leader,
                                                                      leader_epoch=lai.leader_epoch)

    def send_update_metadata_request(self, brokers: Iterable[int], partitions: Iterable[TopicPartition] | None) -> None:
        """``KafkaController.sendUpdateMetadataRequest``: a batch of its own."""
        self.add_update_metadata_request(brokers, partitions)
        self.send_requests_to_brokers()

    def send_requests_to_brokers(self) -> None:
        """``sendRequestsToBrokers``: hand the batch to the live brokers' channels.

        Per broker, LeaderAndIsr first, then UpdateMetadata, then StopReplica. Every broker named in the
        UpdateMetadata part gets the same request: the partitions collected, and the live brokers as
        the controller knows them when it sends. Kafka 2.3 (KAFKA-8294,
        ``sendStopReplicaRequests``) sends one StopReplica(delete=true) for all the partitions being
        deleted, *before* one StopReplica(delete=false) for the others; each delete=true response goes
        through the deletion callback. Kafka 2.0 – 2.2 send one grouped StopReplica(delete=false), then
        one StopReplica(delete=true) per partition, each with its own callback; the grouped request is
        sent even when it names no partition, which the model leaves out (an empty StopReplica changes
        nothing on the broker).

        With StopReplica v3 (KIP-570, ``inter.broker.protocol.version`` 2.6-IV0+; ``sendStopReplicaRequests``
        2.6.0) each broker gets one StopReplica for all its partitions, each with its leader epoch and delete
        flag, whose response callback takes the partitions it asked to delete.

        Requests for brokers the controller has no channel for (not live) are dropped, as
        ``ControllerChannelManager.sendRequest`` drops them with a warning.
        """
        no_epochs = self.scenario.bug("KAFKA_7235")
        batched_deletes = self.scenario.since("KAFKA_8294")
        metadata = tuple(self._update_metadata_states[tp] for tp in sorted(self._update_metadata_states))
        live = tuple(sorted(self.live_or_shutting_down()))
        recipients = (set(self._leader_and_isr) | set(self._stop_replica) | set(self._stop_replica_delete)
                      | set(self._stop_replica_states) | self._update_metadata_brokers)
        for b in sorted(recipients):
            if b not in self.live_brokers:
                continue
            broker_epoch = -1 if no_epochs else self.live_brokers[b]
            queue = self.channels.setdefault(b, [])
            states = self._leader_and_isr.get(b)
            if states:
                queue.append(Request(kind=RequestKind.LeaderAndIsr, controller_epoch=self.epoch,
                                     broker_epoch=broker_epoch,
                                     leader_states=tuple(states[tp] for tp in sorted(states)),
                                     topic_ids=self._leader_and_isr_topic_ids(states)))
            if b in self._update_metadata_brokers:
                queue.append(Request(kind=RequestKind.UpdateMetadata, controller_epoch=self.epoch,
                                     broker_epoch=broker_epoch, live_brokers=live, metadata_states=metadata))
            stops = self._stop_replica.get(b)
            deletes = self._stop_replica_delete.get(b, [])
            partition_states = self._stop_replica_states.get(b)
            if partition_states:
                queue.append(Request(kind=RequestKind.StopReplica, controller_epoch=self.epoch,
                                     broker_epoch=broker_epoch,
                                     partition_states=tuple(partition_states[tp] for tp in sorted(partition_states)),
                                     deletion_callback=any(ps.delete_partition
                                                           for ps in partition_states.values())))
            elif batched_deletes:
                if deletes:
                    queue.append(Request(kind=RequestKind.StopReplica, controller_epoch=self.epoch,
                                         broker_epoch=broker_epoch, partitions=tuple(sorted(deletes)),
                                         delete_partitions=True, deletion_callback=True))
                if stops:
                    queue.append(Request(kind=RequestKind.StopReplica, controller_epoch=self.epoch,
                                         broker_epoch=broker_epoch, partitions=tuple(sorted(stops)),
                                         delete_partitions=False))
            else:
                if stops:
                    queue.append(Request(kind=RequestKind.StopReplica, controller_epoch=self.epoch,
                                         broker_epoch=broker_epoch, partitions=tuple(sorted(stops)),
                                         delete_partitions=False))
                for tp in deletes:
                    queue.append(Request(kind=RequestKind.StopReplica, controller_epoch=self.epoch,
                                         broker_epoch=broker_epoch, partitions=(tp,), delete_partitions=True,
                                         deletion_callback=(b, tp) in self._stop_replica_callbacks))
        self._leader_and_isr.clear()
        self._stop_replica.clear()
        self._stop_replica_delete.clear()
        self._stop_replica_callbacks.clear()
        self._stop_replica_states.clear()
        self._update_metadata_brokers.clear()
        self._update_metadata_states.clear()

    def _leader_and_isr_topic_ids(self, states: dict[TopicPartition, PartitionLeaderState]) -> tuple[
            tuple[str, int], ...]:
        """``LeaderAndIsrRequest.topicIds`` (KIP-516; ``sendLeaderAndIsrRequest`` 2.8.0): of each topic of the
        request's partitions, the ID the controller's context has when the batch is sent (``ZERO_UUID``, no entry,
        for a topic without one). The context has IDs only with ``inter.broker.protocol.version`` 2.8 and later
        (``processTopicIds``), so older requests carry none, as LeaderAndIsr before v5 does."""
        if not self.topic_ids:
            return ()
        return tuple(sorted((t, self.topic_ids[t]) for t in {tp[0] for tp in states} if t in self.topic_ids))

    def with_budget(self, budget: Budget) -> None:
        self.budget = budget

    def is_thawed(self, name: str) -> bool:
        """Whether the step has read (thawed) the lazily thawed field ``name``: one it has not is as in the state."""
        return name in self.__dict__


def _items(d: dict[Any, Any] | None, before: tuple[tuple[Any, Any], ...]) -> tuple[tuple[Any, Any], ...]:
    """``sorted_items(d)``; ``before`` itself when the step never thawed the table (``d`` None) or left it
    holding the same items (an unchanged field keeps its tuple: no sort, and its part stays the same object
    for the codec)."""
    if d is None or (len(d) == len(before) and d == dict(before)):
        return before
    return sorted_items(d)


def _sorted(values: set[Any] | None, before: tuple[Any, ...]) -> tuple[Any, ...]:
    """``tuple(sorted(values))``; ``before`` itself when the step never thawed the set or left it holding the
    same values."""
    if values is None or (len(values) == len(before) and values.issuperset(before)):
        return before
    return tuple(sorted(values))


def _unchanged_or(before: Any, after: Any) -> Any:
    """``before`` when ``after`` is equal to it: a part the step did not change stays the same object, which
    the codec then writes by copying the bytes it remembers for it (see :class:`~model.zk.state.codec.Codec`)."""
    return before if after == before else after


class _Thaw:
    """How the fields of one state class live in a :class:`Step`, derived from the class: its sets and maps
    (metadata ``SET``, ``MAP``) thawed into a ``set`` or a ``dict`` on first use, its other tuples (queues)
    into lists and its scalars copied when the step starts; the step's attribute for field ``f`` is
    ``prefix + f``, or ``names[f]``. ``of`` is the expression, in ``st`` (the step), of the value thawed.

    The functions run per step (``start``, ``freeze`` and the thaws) are generated once, here, as the code
    one would write by hand for the class: a step is the model's hot path."""

    def __init__(self, cls: type, of: str, prefix: str = "", names: dict[str, str] | None = None):
        self.cls = cls
        fields = [(f.name, (names or {}).get(f.name, prefix + f.name), f.shape, f.type) for f in state_fields(cls)]
        self.lazy = tuple((name, attr, shape) for name, attr, shape, _ in fields if shape is not Shape.SEQUENCE)
        self.queues = tuple((name, attr) for name, attr, shape, t in fields
                            if shape is Shape.SEQUENCE and sequence_of(t) is not None)
        self.scalars = tuple((name, attr) for name, attr, shape, t in fields
                             if shape is Shape.SEQUENCE and sequence_of(t) is None)
        self.lazy_attrs = frozenset(attr for _, attr, _ in self.lazy)
        namespace: dict[str, Any] = {"cls": cls, "lazy_attrs": self.lazy_attrs, "_items": _items, "_sorted": _sorted,
                                     "_unchanged_or": _unchanged_or, "_same_queue": _same_queue}
        start = ["def start(st, v):", "    pass",
                 *(f"    st.{attr} = v.{name}" for name, attr in self.scalars),
                 *(f"    st.{attr} = list(v.{name})" for name, attr in self.queues)]
        freeze = self._freeze_source()
        thaws = [f"def thaw_{attr}(st):\n    return {'set' if shape is Shape.SET else 'dict'}({of}.{name})"
                 for name, attr, shape in self.lazy]
        define_functions("\n\n".join(["\n".join(start), "\n".join(freeze), *thaws]), f"Step: {cls.__name__}",
                         namespace)
        self.start: Callable[[Step, Any], None] = namespace["start"]
        self.freeze: Callable[[Step, Any], Any] = namespace["freeze"]
        self.thaw: dict[str, Callable[[Step], Any]] = {attr: namespace[f"thaw_{attr}"] for _, attr, _ in self.lazy}

    def _freeze_source(self) -> list[str]:
        """The lines of the generated ``freeze(st, before)``: the class's value of the step, ``before`` itself when
        the step left it unchanged."""
        unchanged = " and ".join(["lazy_attrs.isdisjoint(d)",
                                  *(f"d[{attr!r}] == before.{name}" for name, attr in self.scalars),
                                  *(f"_same_queue(d[{attr!r}], before.{name})" for name, attr in self.queues)])
        # Each field's frozen value in a local; the tables, sets and queues the step left holding the same values
        # keep their tuple (_items, _sorted, _same_queue), so the value is unchanged exactly when every table is
        # its tuple and every scalar equal: then ``before`` itself, without making and comparing a new value.
        values = [*(f"    f_{name} = d[{attr!r}]" for name, attr in self.scalars),
                  *(f"    f_{name} = before.{name} if _same_queue(d[{attr!r}], before.{name}) else tuple(d[{attr!r}])"
                    for name, attr in self.queues),
                  *(f"    f_{name} = {'_sorted' if shape is Shape.SET else '_items'}(d.get({attr!r}), before.{name})"
                    for name, attr, shape in self.lazy)]
        same = " and ".join([*(f"f_{name} == before.{name}" for name, _ in self.scalars),
                             *(f"f_{name} is before.{name}" for name, _ in self.queues),
                             *(f"f_{name} is before.{name}" for name, _, _ in self.lazy)])
        frozen = [name for name, _ in self.scalars] + [name for name, _ in self.queues] + [n for n, _, _ in self.lazy]
        freeze = ["def freeze(st, before):", "    d = st.__dict__", f"    if {unchanged}:", "        return before",
                  *values, f"    if {same}:", "        return before",
                  f"    return cls({', '.join(f'{n}=f_{n}' for n in frozen)})"]
        return freeze


def _same_queue(queue: list[Any], before: tuple[Any, ...]) -> bool:
    return len(queue) == len(before) and queue == list(before)


_ZK = _Thaw(ZkState, "st.source.zk", prefix="zk_")
#: The context's tables keep the singular of Kafka's ``ControllerContext`` names in a step.
_CONTROLLER = _Thaw(ControllerState, "st.source_controller",
                    names={"assignments": "assignment", "partition_states": "partition_state",
                           "replica_states": "replica_state"})
_HISTORY = _Thaw(History, "st.source.history")

#: How each lazily thawed field of a :class:`Step` is made from the state (or the acting controller) it thaws.
_THAW: dict[str, Callable[[Step], Any]] = {
    **_ZK.thaw,
    **_CONTROLLER.thaw,
    **_HISTORY.thaw,
    "brokers": lambda st: {b.id: b for b in st.source.brokers},
    "channels": lambda st: {b: list(q) for b, q in st.source.channels},
}


def _frozen_getters(thaw: _Thaw, part: Callable[[ClusterState], Any]) -> dict[str, Callable[[ClusterState], Any]]:
    def getter(name: str) -> Callable[[ClusterState], Any]:
        return lambda state: getattr(part(state), name)

    return {attr: getter(name) for name, attr, _ in thaw.lazy}


#: Each lazily thawed field of ZooKeeper, the acting controller and the history: the state's own table it thaws (a
#: tuple in the canonical order, so two tables are equal exactly when their thawed sets or dicts are). The transition
#: memos key on these in place of the values a step read (:mod:`model.zk.transition_memo`).
FROZEN_TABLES: dict[str, Callable[[ClusterState], Any]] = {
    **_frozen_getters(_ZK, lambda state: state.zk),
    **_frozen_getters(_CONTROLLER, lambda state: state.controller),
    **_frozen_getters(_HISTORY, lambda state: state.history),
}


class _QuietLogs(dict[tuple[bool, bool, ControllerEvent | None, str], StepLog]):
    """The :class:`StepLog` of a step that logged nothing but the event it processed and a broker's rejection,
    made once per such (zombie step, zombie resigned, event, rejection) and shared: a frozen value."""

    def __missing__(self, key: tuple[bool, bool, ControllerEvent | None, str]) -> StepLog:
        zombie_step, zombie_resigned, event, rejection = key
        log = self[key] = StepLog(zombie_step=zombie_step, zombie_resigned=zombie_resigned, processed_event=event,
                                  rejection=rejection)
        return log


_QUIET_LOGS = _QuietLogs()


def _scalars_of(thaw: _Thaw) -> Callable[[Any], tuple[Any, ...]]:
    """The scalars of ``thaw``'s class read from a value of it, as a tuple."""
    names = [name for name, _ in thaw.scalars]
    if len(names) > 1:
        return operator.attrgetter(*names)  # a tuple of two or more
    if names:
        get = operator.attrgetter(names[0])
        return lambda value: (get(value),)
    return lambda value: ()


_ZK_SCALARS, _CONTROLLER_SCALARS = _scalars_of(_ZK), _scalars_of(_CONTROLLER)


def copied_scalars(state: ClusterState) -> tuple[Any, ...]:
    """The scalars of ZooKeeper and of the active controller, which a step copies when it starts: no thaw records
    that a step read them, so a memo keyed on what a step read keys on these too (:mod:`model.zk.transition_memo`)."""
    return _ZK_SCALARS(state.zk) + _CONTROLLER_SCALARS(state.controller)


def _check_annotations() -> None:
    """Every attribute a step derives from a state class is declared (typed) on :class:`Step`."""
    declared = Step.__annotations__
    for thaw in (_ZK, _CONTROLLER, _HISTORY):
        for attr in (*thaw.lazy_attrs, *(a for _, a in thaw.queues), *(a for _, a in thaw.scalars)):
            if attr not in declared:
                raise TypeError(f"Step declares no attribute {attr!r} for a field of {thaw.cls.__name__}: add "
                                f"its type to Step's annotations")


class _Thawed:
    """A field of :class:`Step` thawed on its first use: the value is made then and kept in the step's own
    ``__dict__``, which Python reads before this (non-data) descriptor from then on; assigning the field
    writes there too."""

    def __init__(self, name: str, thaw: Callable[[Step], Any]):
        self.name = name
        self.thaw = thaw

    def __get__(self, step: Step | None, owner: type | None = None) -> Any:
        if step is None:
            return self
        value = step.__dict__[self.name] = self.thaw(step)
        return value


for _name, _thaw in _THAW.items():
    setattr(Step, _name, _Thawed(_name, _thaw))
_check_annotations()
