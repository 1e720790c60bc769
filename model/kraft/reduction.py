"""Replays no step can observe, taken at once: a sound reduction of the interleavings of brokers' metadata replays.

A broker replays the metadata log to its end (:func:`model.kraft.actions.replay_metadata_record`). Between two
replays its image is stale, and every interleaving of its replay with the other steps is a state of its own. Most
of those states differ in nothing the broker can do or any property reads: a record that fences or unfences a
broker is invisible to a broker that leads nothing, an ISR change is invisible to the followers, a record another
broker's heartbeat wrote is invisible to everyone but the leader.

:func:`merge_unobservable_replays` replays the log to its end, after every step, for each broker whose
:func:`view` is the same at its offset and at the end. The view is everything of a broker's image and offset that
an enabled action, a successor or a property reads:

* for each partition its leader and leader epoch (``Fetch`` offers a fetch from the leader the image names, in
  that epoch; ``ReplicaManager.applyDelta`` makes the broker leader or follower), and, where the broker leads in the
  image, the partition epoch and ISR (``applyDelta`` updates the leader's ISR from them);
* which partitions exist (a replay past a ``RemoveTopicRecord`` deletes the broker's replicas of the topic);
* which brokers are active (``ClusterControlManager.isActive``: ``AlterPartition`` offers an ISR expansion only to
  an active follower) and the topics' ``min.insync.replicas`` (``Produce`` and the high watermark read the
  leader's), read only while the broker leads a partition (``BrokerState.leading``: without a replay it cannot
  start leading);
* whether it has replayed its own ``RegisterBrokerRecord`` (``UnfenceBroker``: ``calculateNextBrokerState``
  compares ``currentMetadataOffset`` with ``registerBrokerRecordOffset``) and each controlled shutdown offset
  (``lowestActiveOffset``).

Soundness: the relation "equal but for a broker's offset and image, with equal views" is a bisimulation. Equal
views enable the same actions with the same successors up to that broker's offset and image; a replay takes both
to the log's end; a record appended later changes neither image, and the offsets it introduces (a new
``RegisterBrokerRecord``'s, a new controlled shutdown offset) lie past both, so the views stay equal. The
properties read the controller's image, the logs, the acknowledgements and the brokers' roles, never a broker's
image. So a state property is violated (an action property fires) in the reduced graph exactly when it is in the
full one, at a depth no greater: what the reduction hides is only the ``ReplayMetadataRecord`` steps that change
nothing observable (a trace shows such a broker's offset move within another step), and the distinct state counts.
Each replay it takes is the step's own function (:func:`model.kraft.replica_manager.replay_metadata`); where the
views are equal its ``applyDelta`` changes nothing, since everything ``applyDelta`` reads (the partitions that
exist, each leader and leader epoch, the partition epoch and ISR where the broker leads) is in the view.

``[bounds] stale_metadata_brokers`` is a bound, not a reduction: the brokers it leaves out replay the log to its end
within every step, each replay the ``ReplayMetadataRecord`` step's own function
(:func:`model.kraft.replica_manager.replay_metadata`, ``ReplicaManager.applyDelta`` included: a broker the
controller elects leads at once), so the bound's states are those of the full graph in which such a broker's
replay follows every step (the broker side of a step still acts on its image before the step, as a broker would,
but no step of another actor finds it stale). It hides every behaviour that needs one of those brokers' images to lag
behind the controller's when another step reads it: a fetch from a deposed leader, a heartbeat or AlterPartition
decided on an old image, ``lowestActiveOffset`` held back by a slow broker. Absent, every broker may lag.
"""

from __future__ import annotations

from typing import Any

import attrs

from model.kraft import replica_manager as rm
from model.kraft.records import MetadataImage
from model.kraft.state import BrokerState, KraftState


def view(state: KraftState, broker: BrokerState, image: MetadataImage, offset: int) -> tuple[Any, ...]:
    """What ``broker`` can observe of ``image``, the replay of the first ``offset`` records (module docstring)."""
    partitions = tuple(None if p is None else
                       (p.leader, p.leader_epoch) + ((p.partition_epoch, p.isr) if p.leader == broker.id else ())
                       for p in image.partitions)
    leads = any(lead is not None for lead in broker.leading)
    active = (tuple(b.active for b in image.brokers), image.min_insync_replicas) if leads else ()
    reg = state.image.broker(broker.id)
    registered = reg is not None and offset > reg.register_offset
    shutdowns = tuple(offset > o for o in state.controlled_shutdown_offsets if o >= 0)
    return partitions, active, registered, shutdowns


def merge_unobservable_replays(state: KraftState, stale: tuple[int, ...] | None = None) -> KraftState:
    """``state`` with every broker whose replay to the log's end changes nothing observable replayed, and every
    live broker not in ``stale`` (``[bounds] stale_metadata_brokers``; None: every broker may lag) replayed. Each
    replay is a ``ReplayMetadataRecord`` step's (:func:`model.kraft.replica_manager.replay_metadata`, with
    ``ReplicaManager.applyDelta``): a broker the bound replays starts leading, or following, as its step would."""
    end = len(state.metadata_log)
    brokers = list(state.brokers)
    changed = False
    for i, b in enumerate(brokers):
        if (b.alive and b.metadata_offset < end
                and ((stale is not None and b.id not in stale)
                     or view(state, b, b.image, b.metadata_offset) == view(state, b, state.image, end))):
            brokers[i] = rm.replay_metadata(state, b)
            changed = True
    return attrs.evolve(state, brokers=tuple(brokers)) if changed else state
