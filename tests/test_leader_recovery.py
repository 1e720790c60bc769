"""Leader recovery (KIP-704, KAFKA-13587, Kafka 3.2 with ``inter.broker.protocol.version`` >= 3.2-IV0), stepped by
hand: the unclean election's RECOVERING in the partition-state znode and the LeaderAndIsr, kept by the elections
that follow, the new leader's RECOVERED in its next AlterIsr, the controller's write of it, and its INVALID_REQUEST
answers to the transitions KIP-704 forbids. Kafka's own tests are named in the docstrings."""

from __future__ import annotations

import attrs
import pytest
from kafka_steps import initial, model_of, process, settle, take, zk_lai

from model.zk.environment import partition_leader
from model.zk.kafka_model import KafkaControllerModel
from model.zk.state.values import (
    ClusterState,
    ControllerEvent,
    EventKind,
    LeaderAndIsr,
    LeaderRecoveryState,
    RequestKind,
)

RECOVERED, RECOVERING = LeaderRecoveryState.RECOVERED, LeaderRecoveryState.RECOVERING
TP = ("t", 0)


def scenario(version: str = "3.9", protocol: str | None = None) -> str:
    kafka = f'version = "{version}"' + (f'\ninter_broker_protocol_version = "{protocol}"' if protocol else "")
    return f"""
[kafka]
{kafka}
unclean_leader_election_enable = true
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "t"
replicas = [[0, 1]]
[bounds]
broker_failures = 2
isr_changes = 2
controlled_shutdowns = 1
"""


def unclean_election(model: KafkaControllerModel) -> ClusterState:
    """Leader 0 shrinks t-0's ISR to [0] through AlterIsr, then dies: the controller elects 1 from outside the
    ISR, and broker 1 applies its LeaderAndIsr."""
    s = take(model, initial(model), partition_leader.SHRINK, 0, "t", partition=0, replica=1)
    s = settle(model, process(model, s))
    assert zk_lai(s, "t", 0) == LeaderAndIsr(0, 0, (0,), 1, 1)
    s = settle(model, take(model, s, "BrokerFailure", 0))
    return s


def test_an_unclean_election_marks_the_partition_recovering() -> None:
    """ElectionTest / PartitionStateMachineTest.testOfflinePartitionToUncleanOnlinePartitionTransition-style (3.2.0
    Election.leaderForOffline): the leader from outside the ISR gets leader epoch + 1, ISR [itself] and
    leaderRecoveryState RECOVERING in the znode and the controller's cache, and its LeaderAndIsr says RECOVERING."""
    model = model_of(scenario())
    s = take(model, initial(model), partition_leader.SHRINK, 0, "t", partition=0, replica=1)
    s = settle(model, process(model, s))
    s = process(model, take(model, s, "BrokerFailure", 0))
    recovering = LeaderAndIsr(1, 1, (1,), 2, 1, RECOVERING)
    assert zk_lai(s, "t", 0) == recovering and dict(s.controller.leadership)[TP] == recovering
    sent = [(p.leader, p.leader_epoch, p.leader_recovery_state) for r in s.channel(1)
            if r.kind is RequestKind.LeaderAndIsr for p in r.leader_states]
    assert sent and set(sent) == {(1, 1, RECOVERING)}
    assert any("marked RECOVERING" in m for m in s.log.messages)


@pytest.mark.parametrize(("version", "protocol"), [("3.1", None), ("3.9", "3.1")])
def test_before_protocol_3_2_an_unclean_election_leaves_the_partition_recovered(version: str,
                                                                                protocol: str | None) -> None:
    """isLeaderRecoverySupported is inter.broker.protocol.version >= 3.2-IV0 (PartitionStateMachine 3.2.0): below
    it, and before 3.2, the unclean election writes RECOVERED (newLeaderAndIsr)."""
    model = model_of(scenario(version, protocol))
    assert zk_lai(unclean_election(model), "t", 0) == LeaderAndIsr(1, 1, (1,), 2, 1, RECOVERED)


def test_the_leader_recovers_with_its_next_alter_isr() -> None:
    """Partition.makeLeader (3.2.0 - 3.9) marks the partition RECOVERED whatever the LeaderAndIsr says, so the
    leader's expansion of the ISR once broker 0 is back proposes [1, 0] RECOVERED; the controller accepts it (a
    RECOVERED request may grow the ISR) and writes it: the partition is RECOVERED again."""
    model = model_of(scenario())
    s = unclean_election(model)
    assert zk_lai(s, "t", 0) == LeaderAndIsr(1, 1, (1,), 2, 1, RECOVERING)
    s = settle(model, take(model, s, "BrokerStartup", 0))
    assert zk_lai(s, "t", 0) == LeaderAndIsr(1, 1, (1,), 2, 1, RECOVERING)  # no ISR change yet
    s = take(model, s, partition_leader.EXPAND, 1, "t", partition=0, replica=0)
    [event] = s.controller.events
    assert event.isrs_to_alter == ((TP, LeaderAndIsr(1, 1, (1, 0), 2, -1, RECOVERED)),)
    s = process(model, s)
    assert zk_lai(s, "t", 0) == LeaderAndIsr(1, 1, (1, 0), 3, 1, RECOVERED)
    hosted = s.broker(1).hosted(TP)
    assert hosted is not None and (hosted.isr, hosted.pending_isr) == ((1, 0), ())


def test_other_elections_keep_the_recovering_state() -> None:
    """LeaderAndIsr.newLeaderAndIsr keeps leaderRecoveryState (3.2.0 - 3.9): when the recovering leader 1 dies,
    removeReplicasFromIsr leaves t-0 without a leader and with ISR [1], and when it restarts the offline election
    elects it cleanly; the partition stays RECOVERING through both writes."""
    model = model_of(scenario())
    s = settle(model, take(model, unclean_election(model), "BrokerFailure", 1))
    leaderless = zk_lai(s, "t", 0)
    assert leaderless is not None and (leaderless.leader, leaderless.isr) == (-1, (1,))
    assert leaderless.leader_recovery_state is RECOVERING
    s = settle(model, take(model, s, "BrokerStartup", 1))
    reelected = zk_lai(s, "t", 0)
    assert reelected is not None and (reelected.leader, reelected.isr) == (1, (1,))
    assert reelected.leader_epoch > leaderless.leader_epoch and reelected.leader_recovery_state is RECOVERING


@pytest.mark.parametrize("version", ["3.2", "3.9"])
@pytest.mark.parametrize(("current", "proposed"), [
    # a recovering leader cannot grow the ISR
    (RECOVERING, LeaderAndIsr(1, 1, (1, 0), 2, -1, RECOVERING)),
    # a recovered partition cannot go back to RECOVERING
    (RECOVERED, LeaderAndIsr(1, 1, (1,), 2, -1, RECOVERING)),
])
def test_forbidden_recovery_transitions_are_invalid_requests(version: str, current: LeaderRecoveryState,
                                                             proposed: LeaderAndIsr) -> None:
    """KafkaController.processAlterPartition (3.2.0) / tryProcessAlterPartition (3.3.0 - 3.9), as
    ControllerIntegrationTest.testAlterPartitionErrors' leader-recovery cases: INVALID_REQUEST, nothing written, and
    the leader gives up, keeping its pending ISR (Partition.handleAlterPartitionError). No modelled leader sends
    RECOVERING: the request is planted."""
    model = model_of(scenario(version))
    znode = LeaderAndIsr(1, 1, (1,), 2, 1, current)
    s = process(model, _with_alter_isr(_with_znode(unclean_election(model), znode), proposed))
    assert zk_lai(s, "t", 0) == znode
    assert any("failed with INVALID_REQUEST" in m for m in s.log.messages)
    hosted = s.broker(1).hosted(TP)
    assert s.controller.events == () and hosted is not None and hosted.pending_isr == proposed.isr


def test_a_recovered_request_for_the_current_state_is_answered_with_it() -> None:
    """equalsIgnoreZk compares the leader recovery state too (3.2.0; equalsAllowStalePartitionEpoch 3.3.0 - 3.9):
    a RECOVERED request naming the ISR of a RECOVERING partition is a change, written, not the desired state."""
    model = model_of(scenario())
    proposed = LeaderAndIsr(1, 1, (1,), 2, -1, RECOVERED)
    s = process(model, _with_alter_isr(unclean_election(model), proposed))
    assert zk_lai(s, "t", 0) == LeaderAndIsr(1, 1, (1,), 3, 1, RECOVERED)


def _with_znode(s: ClusterState, lai: LeaderAndIsr) -> ClusterState:
    zk = tuple((k, lai if k == TP else v) for k, v in s.zk.partitions)
    leadership = tuple((k, lai if k == TP else v) for k, v in s.controller.leadership)
    return attrs.evolve(s, zk=attrs.evolve(s.zk, partitions=zk),
                        controller=attrs.evolve(s.controller, leadership=leadership))


def _with_alter_isr(s: ClusterState, proposed: LeaderAndIsr) -> ClusterState:
    """Broker 1, t-0's leader, proposes ``proposed`` through AlterIsr: its pending ISR and the controller's event."""
    b = s.broker(1)
    hosted = tuple(attrs.evolve(h, pending_isr=proposed.isr) if h.partition == TP else h for h in b.partitions)
    brokers = tuple(attrs.evolve(x, partitions=hosted) if x.id == 1 else x for x in s.brokers)
    event = ControllerEvent(EventKind.AlterIsrReceived, broker=1, request_epoch=b.epoch,
                            isrs_to_alter=((TP, proposed),))
    return attrs.evolve(s, brokers=brokers, controller=attrs.evolve(s.controller, events=(event,)))
