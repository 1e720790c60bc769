"""Controlled shutdown: ``KafkaController.doControlledShutdown`` (Kafka 2.3.0; 1.1 – 2.2 where they differ).

A broker shutting down with ``controlled.shutdown.enable`` (the default) sends a ControlledShutdownRequest
to the controller (``KafkaServer.controlledShutdown``) and waits for the answer: the partitions it still
leads. The controller's ``ControlledShutdown`` event (``processControlledShutdown``):

* from 2.2 (KIP-380) refuses a request carrying an older broker epoch than the one it knows
  (``StaleBrokerEpochException``), and one from a broker it does not know (``BrokerNotAvailableException``);
* adds the broker to ``shuttingDownBrokerIds``: from then on ``isReplicaOnline`` is false for it;
* for its partitions with more than one replica and known leadership (2.1+: of topics not queued for
  deletion), moves the leadership of those it leads with ``ControlledShutdownPartitionLeaderElectionStrategy``
  (ISR without the shutting-down brokers; the LeaderAndIsr goes to the shutting-down broker too from 2.1,
  KAFKA-7482), and for those it follows sends it StopReplica(delete=false) and moves its replica to
  OfflineReplica (out of the ISR, LeaderAndIsr to the others);
* answers with the replicated partitions it still leads. Partitions of replication factor 1 are never
  touched.

The broker retries while the answer names partitions or is an error (``controlled.shutdown.max.retries``,
3 by default; here as long as ``[bounds] controlled_shutdowns`` allows another request), then shuts down
anyway; after a successful answer it shuts down: its ZooKeeper registration goes, which the controller
handles as a broker failure (``onBrokerFailure`` also forgets it as shutting down). Until then it is
alive and applies requests.
"""

from __future__ import annotations

import attrs

from model.zk.controller import partition_state_machine, replica_state_machine
from model.zk.state.states import PartitionState, ReplicaState
from model.zk.state.step import ControllerError, ControllerMovedException, Step
from model.zk.state.values import (
    SHUTDOWN_REQUESTED,
    SHUTDOWN_RETRY,
    SHUTDOWN_SUCCEEDED,
    ControllerEvent,
    EventKind,
    TopicPartition,
)


def process_controlled_shutdown(step: Step, event: ControllerEvent) -> None:
    """``processControlledShutdown``: run ``doControlledShutdown`` and answer the broker."""
    broker = event.broker
    try:
        remaining = do_controlled_shutdown(step, broker, event.request_epoch)
        error = ""
    except ControllerMovedException:
        _answer(step, broker, event, (), "ControllerMovedException")
        raise
    except ControllerError as e:
        remaining, error = (), str(e)
    step.controlled_shutdown_results.append((broker, remaining, error))
    _answer(step, broker, event, remaining, error)


def _answer(step: Step, broker: int, event: ControllerEvent, remaining: tuple[TopicPartition, ...],
            error: str) -> None:
    """The ControlledShutdownResponse reaches the broker (the incarnation that asked, if it still runs)."""
    b = step.brokers.get(broker)
    if b is None or not b.alive or b.epoch != event.request_epoch or b.controlled_shutdown != SHUTDOWN_REQUESTED:
        return
    done = not error and not remaining
    step.brokers[broker] = attrs.evolve(b, controlled_shutdown=SHUTDOWN_SUCCEEDED if done else SHUTDOWN_RETRY)
    left = ", ".join(f"{t}-{p}" for t, p in remaining)
    step.messages.append(f"broker {broker}: controlled shutdown "
                         + ("succeeded" if done else f"failed ({error or 'remaining partitions: ' + left})"))


def do_controlled_shutdown(step: Step, broker: int, request_epoch: int) -> tuple[TopicPartition, ...]:
    """``doControlledShutdown``: the replicated partitions the broker still leads afterwards."""
    if step.scenario.since("BROKER_EPOCHS") and not step.scenario.bug("KAFKA_7235"):
        cached = step.live_brokers.get(broker)
        if cached is not None and request_epoch < cached:
            raise ControllerError(f"StaleBrokerEpochException: Received controlled shutdown request from an old "
                                  f"broker epoch {request_epoch} for broker {broker}. Current broker epoch is "
                                  f"{cached}.")
    step.messages.append(f"Shutting down broker {broker}")
    if broker not in step.live_or_shutting_down():
        raise ControllerError(f"BrokerNotAvailableException: Broker id {broker} does not exist.")
    step.shutting_down_brokers.add(broker)
    skip_deleting = step.scenario.since("CONTROLLED_SHUTDOWN_SKIPS_DELETING")
    to_act_on = [tp for tp, reps in sorted(step.assignment.items())
                 if broker in reps and len(reps) > 1 and tp in step.leadership
                 and not (skip_deleting and step.is_topic_queued_up_for_deletion(tp[0]))]
    led = [tp for tp in to_act_on if step.leadership[tp].leader == broker]
    followed = [tp for tp in to_act_on if step.leadership[tp].leader != broker]
    partition_state_machine.handle_state_changes(step, led, PartitionState.OnlinePartition,
                                                 partition_state_machine.CONTROLLED_SHUTDOWN)
    for tp in followed:
        step.add_stop_replica_request(broker, tp, delete=False)
    step.send_requests_to_brokers()
    replica_state_machine.handle_state_changes(step, [(t, p, broker) for t, p in followed], ReplicaState.OfflineReplica)
    return tuple(tp for tp, lai in sorted(step.leadership.items())
                 if lai.leader == broker and len(step.assignment.get(tp, ())) > 1
                 and not (skip_deleting and step.is_topic_queued_up_for_deletion(tp[0])))


def broker_requests_controlled_shutdown(step: Step, broker: int) -> None:
    """The environment step: ``KafkaServer.controlledShutdown`` sends (or re-sends) its request to the active
    controller, with its broker epoch (which the controller compares from 2.2; the model also uses it to
    answer the incarnation that asked)."""
    b = step.brokers[broker]
    step.brokers[broker] = attrs.evolve(b, controlled_shutdown=SHUTDOWN_REQUESTED)
    step.events.append(ControllerEvent(EventKind.ControlledShutdown, broker=broker, request_epoch=b.epoch))
    step.budget = attrs.evolve(step.budget, controlled_shutdowns=step.budget.controlled_shutdowns + 1)
