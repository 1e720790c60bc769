"""``ClusterControlManager`` and ``BrokerHeartbeatManager``: registration, heartbeats, fencing.

Kafka 3.9.0-rc3, ``metadata/src/main/java/org/apache/kafka/controller/``:

* ``ClusterControlManager.registerBroker``: a new incarnation gets a new broker epoch (the offset of its
  ``RegisterBrokerRecord``, as ``QuorumController`` passes the log's next offset) and, through
  ``brokerUncleanShutdownHandler``, ``ReplicationControlManager.handleBrokerUncleanShutdown`` first (3.9.0-rc3
  calls it for every new incarnation, clean shutdown or not: the ``PreviousBrokerEpoch`` a broker sends after a
  clean shutdown, read from its clean shutdown marker, is not looked at; so a restart after a ``BrokerCrash``, its
  log whole, is handled as one after an ``UncleanShutdown``). A registration is refused while the old
  incarnation's session is valid (``DuplicateBrokerRegistrationException``); the model offers it once the
  controller has fenced the old one.
* ``BrokerHeartbeatManager.calculateNextBrokerState`` and ``ReplicationControlManager.processBrokerHeartbeat``:
  a fenced broker caught up with its ``RegisterBrokerRecord`` is unfenced; a broker asking to shut down goes
  into ``CONTROLLED_SHUTDOWN`` while it leads partitions, else ``SHUTDOWN_NOW`` (fenced); a broker in controlled
  shutdown is let go once it leads nothing and every active broker has replayed its controlled shutdown offset
  (``lowestActiveOffset``).
* ``QuorumController.maybeFenceOneStaleBroker`` / ``BrokerHeartbeatManager.findOneStaleBroker``: a broker whose
  session expired is fenced (``handleBrokerFenced``).
"""

from __future__ import annotations

from model.kraft import replication_control as rc
from model.kraft.records import MetadataImage, Record, RegisterBrokerRecord
from model.kraft.state import KraftState
from model.scenario.kraft import KraftSettings

#: ``BrokerControlState``
FENCED, UNFENCED, CONTROLLED_SHUTDOWN, SHUTDOWN_NOW = "FENCED", "UNFENCED", "CONTROLLED_SHUTDOWN", "SHUTDOWN_NOW"


def register_broker(image: MetadataImage, settings: KraftSettings, broker: int, next_offset: int) -> list[Record]:
    """``registerBroker`` of a new incarnation: the unclean-shutdown cleanup, then the registration.

    Bug switch ``KAFKA_15586``: no cleanup; 3.7.0's ``registerBroker`` has no ``brokerUncleanShutdownHandler``
    (376e9e20dbf added it, 3.8.0), so a broker that lost its log stays in every ISR and ELR it was in."""
    records = [] if settings.bug("KAFKA_15586") else rc.handle_broker_unclean_shutdown(image, settings, broker)
    return [*records, RegisterBrokerRecord(broker_id=broker, broker_epoch=next_offset + len(records))]


def current_state(state: KraftState, image: MetadataImage, broker_index: int, broker: int) -> str:
    """``BrokerHeartbeatManager.currentBrokerState``."""
    if image.is_fenced(broker):
        return FENCED
    if state.controlled_shutdown_offsets[broker_index] >= 0:
        return CONTROLLED_SHUTDOWN
    return UNFENCED


def lowest_active_offset(state: KraftState, image: MetadataImage) -> int:
    """``BrokerHeartbeatManager.lowestActiveOffset``: the least metadata offset of the unfenced brokers not in
    controlled shutdown (their last heartbeat's ``currentMetadataOffset``: here, what they have replayed)."""
    offsets = [b.metadata_offset for i, b in enumerate(state.brokers)
               if not image.is_fenced(b.id) and state.controlled_shutdown_offsets[i] < 0]
    return min(offsets, default=1 << 62)


def next_state_on_shutdown_request(state: KraftState, image: MetadataImage, broker_index: int, broker: int) -> str:
    """``calculateNextBrokerState`` for a heartbeat with ``wantShutDown`` (and not ``wantFence``)."""
    current = current_state(state, image, broker_index, broker)
    if current == FENCED:
        return SHUTDOWN_NOW
    if current == UNFENCED:
        return CONTROLLED_SHUTDOWN if rc.has_leaderships(image, broker) else SHUTDOWN_NOW
    if rc.has_leaderships(image, broker):
        return CONTROLLED_SHUTDOWN
    # the controlled shutdown offset is the last record's offset; a broker has replayed it when its count passes it
    if state.controlled_shutdown_offsets[broker_index] < lowest_active_offset(state, image):
        return SHUTDOWN_NOW
    return CONTROLLED_SHUTDOWN
