"""The four partition leader election algorithms of the ZooKeeper-era controller, as pure functions.

These mirror ``object PartitionLeaderElectionAlgorithms`` in ``controller/PartitionStateMachine.scala``
(Kafka 2.0 … 2.8). The partition state machine (``PartitionStateMachine.doElectLeaderForPartitions``,
2.0; ``electLeaderForPartitions``) computes the arguments from the controller context and calls one
of them according to the ``PartitionLeaderElectionStrategy`` it was given; in 2.8 the code that does
this and builds the new ``LeaderAndIsr`` sits in ``object Election`` (``controller/Election.scala``:
``leaderForOffline``, ``leaderForReassign``, ``leaderForPreferredReplica``,
``leaderForControlledShutdown``).

* ``OfflinePartitionLeaderElectionStrategy`` → :func:`offline_partition_leader_election`
* ``ReassignPartitionLeaderElectionStrategy`` → :func:`reassign_partition_leader_election`
* ``PreferredReplicaPartitionLeaderElectionStrategy`` → :func:`preferred_replica_partition_leader_election`
* ``ControlledShutdownPartitionLeaderElectionStrategy`` →
  :func:`controlled_shutdown_partition_leader_election`

Every algorithm walks the assigned replicas (AR), or the reassignment target (RAR), **in that
order** and returns the first acceptable broker: the ISR is only tested for membership, its order
never matters. ``None`` means no leader could be elected; the state machine then logs a
``StateChangeFailedException`` and leaves the partition in its current state (2.4+ returns it to the
caller per partition as ``Left(exception)``).

Who decides what "live" means is the caller, as in Kafka: for the offline, reassign and preferred
strategies the state machine passes the replicas for which ``isReplicaOnline(replica, partition)``
holds (live brokers *minus* shutting-down brokers, and not on an offline log dir); for controlled
shutdown it passes ``isReplicaOnline(…, includeShuttingDownBrokers = true)``, so shutting-down
brokers are excluded here by the separate ``shutting_down_brokers`` argument.

Deviations from Kafka:

* The unclean branch of the offline election marks the ``UncleanLeaderElectionsPerSec`` meter in
  Kafka; these functions have no side effects. A caller that needs to know whether an election was
  unclean checks whether the returned leader is outside the ISR.
* The new ISR that goes with the leader (the live part of the ISR, ``[leader]`` after an unclean
  election, the ISR unchanged for reassign and preferred, the ISR without the shutting-down brokers
  for controlled shutdown) is computed by the callers, not here, as in Kafka.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence


def offline_partition_leader_election(
    assignment: Sequence[int],
    isr: Collection[int],
    live_replicas: Collection[int],
    unclean_leader_election_enabled: bool,
) -> int | None:
    """Elect a leader for a partition in ``OfflinePartition`` or ``NewPartition`` state.

    Kafka: ``PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection``
    in ``controller/PartitionStateMachine.scala`` (2.0–2.8; called from ``Election.leaderForOffline``
    in 2.8).

    The first replica in ``assignment`` order that is live and in the ISR; failing that, when
    ``unclean.leader.election.enable`` holds for the topic (or, 2.4+, the admin asked for an unclean
    election), the first live replica in ``assignment`` order whether in the ISR or not; else ``None``.
    """
    for replica in assignment:
        if replica in live_replicas and replica in isr:
            return replica
    if not unclean_leader_election_enabled:
        return None
    # Kafka marks the UncleanLeaderElectionsPerSec meter here when a leader is found (see module notes).
    for replica in assignment:
        if replica in live_replicas:
            return replica
    return None


def reassign_partition_leader_election(
    reassignment: Sequence[int],
    isr: Collection[int],
    live_replicas: Collection[int],
) -> int | None:
    """Elect a leader among the reassignment target replicas (RAR) of a partition being reassigned.

    Kafka: ``PartitionLeaderElectionAlgorithms.reassignPartitionLeaderElection``
    in ``controller/PartitionStateMachine.scala`` (2.0–2.8; called from ``Election.leaderForReassign``
    in 2.8), used when ``KafkaController.moveReassignedPartitionLeaderIfRequired`` must move the leader
    into the target replicas.

    The first replica in ``reassignment`` order that is live and in the ISR, else ``None``. There is
    no unclean fallback.
    """
    for replica in reassignment:
        if replica in live_replicas and replica in isr:
            return replica
    return None


def preferred_replica_partition_leader_election(
    assignment: Sequence[int],
    isr: Collection[int],
    live_replicas: Collection[int],
) -> int | None:
    """Elect the preferred replica (the head of the assigned replicas) as leader, if it can lead.

    Kafka: ``PartitionLeaderElectionAlgorithms.preferredReplicaPartitionLeaderElection``
    in ``controller/PartitionStateMachine.scala`` (2.0–2.8; called from
    ``Election.leaderForPreferredReplica`` in 2.8).

    ``assignment[0]`` when it is live and in the ISR, else ``None``; no other replica is considered.
    The function does not know the current leader: when the preferred replica already leads it is
    returned again. Skipping such partitions is the caller's business (1.0's
    ``PreferredReplicaPartitionLeaderSelector`` threw ``LeaderElectionNotNeededException``; since
    KIP-460 the controller answers ``ElectionNotNeededException`` without electing).
    """
    if not assignment:
        return None
    preferred = assignment[0]
    if preferred in live_replicas and preferred in isr:
        return preferred
    return None


def controlled_shutdown_partition_leader_election(
    assignment: Sequence[int],
    isr: Collection[int],
    live_replicas: Collection[int],
    shutting_down_brokers: Collection[int],
) -> int | None:
    """Move leadership away from brokers in controlled shutdown.

    Kafka: ``PartitionLeaderElectionAlgorithms.controlledShutdownPartitionLeaderElection``
    in ``controller/PartitionStateMachine.scala`` (2.0–2.8; called from
    ``Election.leaderForControlledShutdown`` in 2.8), used for the partitions led by a broker that sent
    ``ControlledShutdownRequest`` (the ``ControlledShutdown`` event, ``doControlledShutdown`` in 2.8).

    The first replica in ``assignment`` order that is live, in the ISR and not shutting down, else
    ``None`` (the partition then stays led by the shutting-down broker and is reported back to it as
    remaining). ``live_replicas`` is expected to *include* shutting-down brokers, as Kafka passes
    ``isReplicaOnline(…, includeShuttingDownBrokers = true)``.
    """
    for replica in assignment:
        if replica in live_replicas and replica in isr and replica not in shutting_down_brokers:
            return replica
    return None
