"""Kafka 2.3.0's unit tests for controller failover, controller moves and controlled shutdown
(core/src/test/scala/unit/kafka/controller/ControllerIntegrationTest.scala, ReplicaStateMachineTest.scala),
expressed against the model by stepping it by hand, where the model's level allows."""

from __future__ import annotations

import attrs
from kafka_steps import R, initial, model_of, process, replica_state, settle, take, zk_lai

from model.zk.kafka_model import KafkaControllerModel
from model.zk.state.values import ClusterState, ControllerEvent, EventKind

THREE_BROKERS = """
[cluster]
brokers = [0, 1, 2]
[[topics]]
name = "test"
replicas = [[0, 1, 2]]
[bounds]
broker_failures = 0
controlled_shutdowns = 3
"""


def shutdown_answer(model: KafkaControllerModel, state: ClusterState, broker: int) -> tuple[ClusterState, object]:
    """Broker ``broker`` asks for a controlled shutdown; the controller processes its queue up to the answer,
    and the brokers apply what it sent: the state and (remaining partitions, error) of the answer."""
    state = take(model, state, "BrokerControlledShutdown", broker)
    answer = None
    while answer is None:
        state = process(model, state)
        for who, remaining, error in state.log.controlled_shutdown_results:
            if who == broker:
                answer = (remaining, error)
    return settle(model, state), answer


def test_controlled_shutdown_as_in_testControlledShutdown() -> None:
    """ControllerIntegrationTest.testControlledShutdown: followers 2 then 1 shut down with nothing left (the
    leader stays 0, the ISR loses them); the leader 0, last in the ISR, is answered with its partition."""
    model = model_of(THREE_BROKERS)
    s = initial(model)
    s, answer = shutdown_answer(model, s, 2)
    assert answer == ((), "")
    lai = zk_lai(s, "test", 0)
    assert lai is not None and (lai.leader, lai.isr) == (0, (0, 1))
    assert replica_state(s, "test", 0, 2) is R.OfflineReplica
    s, answer = shutdown_answer(model, s, 1)
    assert answer == ((), "")
    lai = zk_lai(s, "test", 0)
    assert lai is not None and (lai.leader, lai.isr) == (0, (0,))
    s, answer = shutdown_answer(model, s, 0)
    assert answer == ((("test", 0),), "")
    lai = zk_lai(s, "test", 0)
    assert lai is not None and lai.leader == 0  # no other ISR member: the leader does not change


def test_stale_broker_epoch_refused_as_in_testControllerRejectControlledShutdownRequestWithStaleBrokerEpoch() -> None:
    """ControllerIntegrationTest.testControllerRejectControlledShutdownRequestWithStaleBrokerEpoch: a controlled
    shutdown request carrying an older broker epoch than the controller knows fails with
    StaleBrokerEpochException and moves nothing."""
    model = model_of(THREE_BROKERS)
    s = initial(model)
    epoch = dict(s.controller.live_brokers)[1]
    stale = ControllerEvent(EventKind.ControlledShutdown, 1, request_epoch=epoch - 1)
    s = process(model, attrs.evolve(s, controller=attrs.evolve(s.controller, events=(stale,))))
    [(broker, remaining, error)] = s.log.controlled_shutdown_results
    assert (broker, remaining) == (1, ())
    assert error.startswith("StaleBrokerEpochException")
    assert s.controller.shutting_down_brokers == ()
    assert replica_state(s, "test", 0, 1) is R.OnlineReplica


FAILOVER = """
[cluster]
brokers = [1, 2]
[[topics]]
name = "t"
replicas = [[1, 2]]
[bounds]
broker_failures = 1
controller_failovers = 1
"""


def test_controller_epoch_increments_as_in_testControllerMoveIncrementsControllerEpoch() -> None:
    """ControllerIntegrationTest.testControllerMoveIncrementsControllerEpoch: a new controller has controller
    epoch + 1, in /controller_epoch and in the partition-state znodes it writes afterwards."""
    model = model_of(FAILOVER)
    s = initial(model)
    first = s.zk.controller_epoch
    s = settle(model, take(model, s, "ControllerFailover"))
    assert s.zk.controller_epoch == first + 1
    assert s.controller.epoch == first + 1
    s = settle(model, take(model, s, "BrokerFailure", 1))
    lai = zk_lai(s, "t", 0)
    assert lai is not None and (lai.leader, lai.controller_epoch) == (2, first + 1)


def test_new_controller_takes_dead_replicas_offline_as_in_testStartupOfflinePartition() -> None:
    """ReplicaStateMachineTest.testStartupOfflinePartition (2.3, KAFKA-8152): a controller that starts with a
    replica's broker dead moves that replica to OfflineReplica, and the dead broker leaves the ISR."""
    model = model_of(FAILOVER)
    s = initial(model)
    s = take(model, s, "BrokerFailure", 2)
    s = settle(model, take(model, s, "ControllerFailover"))
    assert replica_state(s, "t", 0, 2) is R.OfflineReplica
    assert replica_state(s, "t", 0, 1) is R.OnlineReplica
    lai = zk_lai(s, "t", 0)
    assert lai is not None and (lai.leader, lai.isr) == (1, (1,))


MOVE = """
[cluster]
brokers = [0]
[[topics]]
name = "t"
replicas = [[0]]
created = "by_admin"
[bounds]
broker_failures = 0
controller_moves = 1
"""


def test_former_controller_is_fenced_as_in_testControllerMoveOnTopicCreation() -> None:
    """ControllerIntegrationTest.testControllerMoveOnTopicCreation (2.1+): the controller moves while a topic
    creation is queued; the former controller's write is refused (ControllerMovedException) and it resigns,
    and the new controller creates the partition, its znode stamped with the new controller epoch."""
    model = model_of(MOVE)
    s = initial(model)
    first = s.zk.controller_epoch
    s = take(model, s, "AdminCreateTopic", topic="t")
    s = take(model, s, "ControllerMove")
    assert s.zombie is not None
    fenced = False
    while s.zombie is not None:
        s = take(model, s, "ZombieControllerProcessEvent")
        fenced |= s.log.zk_write_fenced
    assert fenced
    s = settle(model, s)
    lai = zk_lai(s, "t", 0)
    assert lai is not None and (lai.leader, lai.controller_epoch) == (0, first + 1)
