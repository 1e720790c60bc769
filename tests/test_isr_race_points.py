"""The points inside a controller step where a partition leader's ISR write may land
(:func:`model.zk.environment.partition_leader.maybe_race`), and a search showing what the points the model
leaves out would add.

The model lets one leader write land in a controller step: before the controller's first conditional write of
the znode, or, at the end of a reassignment, before a later write once the leader applied the LeaderAndIsr the
step sent. Kafka 2.3 also lets a leader write between the partitions of one batched election
(``PartitionStateMachine.doElectLeaderForPartitions`` reads every partition, then writes them one by one, and
``electLeaderForPartitions`` retries), and again between the controller's re-read after a BADVERSION and its
retried write (the leader's own write gave it the new version). :class:`TwoRacesModel` lets two leader writes
land in one controller step, each at any conditional write of its znode where it can be written, in either
order; the search finds the same states as the model's one write per step with the same ``[bounds]
isr_changes``: every second write reaches, through the retry's re-read, what the same write taken before the
step reaches. The exception is KAFKA-8286's retry (1.1 – 2.3), which re-elects every partition of the call after
each BADVERSION: a second write adds one more round of leader-epoch bumps, nothing the first does not show.
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Iterator, Sequence

import attrs
import pytest

from kmc.compose import resolve_scenario
from model.scenario import Scenario
from model.zk.actions import Action, ActionKind
from model.zk.controller import kafka_zk_client
from model.zk.environment import partition_leader
from model.zk.kafka_model import KafkaControllerModel
from model.zk.state.step import Step
from model.zk.state.values import ClusterState, TopicPartition
from tests.kafka_steps import initial, take


@attrs.frozen
class TwoRaces:
    """A controller step with two leader writes landing inside it, in this order."""

    races: tuple[partition_leader.IsrChange, partition_leader.IsrChange]


class TwoRacesModel(KafkaControllerModel):
    """The Kafka model with controller steps that carry two leader writes (each fires at the first conditional
    write of its znode, after the earlier one fired, where the leader can write it)."""

    def actions(self, state: ClusterState) -> Sequence[Action | TwoRaces]:  # type: ignore[override]
        actions: list[Action | TwoRaces] = list(super().actions(state))
        if state.controller.events and state.budget.isr_changes + 2 <= self.scenario.bounds.isr_changes:
            actions.extend(TwoRaces(pair) for pair in itertools.product(
                partition_leader.candidates_of(state), _any_isr_change(state)))
        return actions

    def next_state(self, state: ClusterState, action: Action | TwoRaces) -> ClusterState | None:  # type: ignore[override]
        if isinstance(action, Action):
            return super().next_state(state, action)
        step = Step(self.scenario, state)
        step.pending_races = list(action.races)  # type: ignore[attr-defined]
        self._take(step, Action(ActionKind.ControllerProcessEvent))
        return None if step.pending_races else step.freeze()  # type: ignore[attr-defined]


def _any_isr_change(state: ClusterState) -> Iterator[partition_leader.IsrChange]:
    """Every ISR change by any live broker of any partition's replicas (those not writable have no successor)."""
    alive = [b.id for b in state.brokers if b.alive]
    for tp, _ in state.zk.partitions:
        replicas = state.zk.replicas(tp) or ()
        for leader, follower, kind in itertools.product(alive, replicas, (partition_leader.SHRINK,
                                                                           partition_leader.EXPAND)):
            if follower != leader:
                yield leader, tp, follower, kind


def _two_races(step: Step, tp: TopicPartition) -> None:
    pending = getattr(step, "pending_races", None)
    if pending is None:
        partition_leader.maybe_race(step, tp)
    elif pending and pending[0][1] == tp and partition_leader.update_isr(step, pending[0]):
        pending.pop(0)  # one leader write per conditional write of the controller: the next at a later one


def _reachable(model: KafkaControllerModel) -> set[bytes]:
    seen = {model.encode(s) for s in model.init_states()}
    queue = collections.deque(model.init_states())
    while queue:
        state = queue.popleft()
        for action in model.actions(state):
            child = model.next_state(state, action)
            if child is not None and (key := model.encode(child)) not in seen:
                seen.add(key)
                queue.append(child)
    return seen


def _with_isr_changes(name: str, isr_changes: int) -> Scenario:
    scenario = resolve_scenario(name)
    return attrs.evolve(scenario, bounds=attrs.evolve(scenario.bounds, isr_changes=isr_changes))


@pytest.mark.slow
@pytest.mark.parametrize(("name", "fixed", "distinct"), [
    ("isr-changes", (), 2776),  # one partition: a second write between the retry's re-read and its write
    ("preferred-election", (), 6143),  # an election with a broker failure and the auto rebalance
    # two partitions in one batched election (ControlledShutdown), with KAFKA-8286's retry fixed: with it (the
    # scenario's 2.3), each further BADVERSION re-elects every partition of the call once more (866 more states
    # of 68,243, the leader-epoch bumps that election_bumps_epoch_once already finds with one write)
    ("election-retry", ("KAFKA_8286",), 58273),
])
def test_two_leader_writes_in_one_controller_step_reach_no_new_state(name: str, fixed: tuple[str, ...],
                                                                       distinct: int,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = _with_isr_changes(name, 2)
    scenario = attrs.evolve(scenario, bugs=scenario.bugs - set(fixed))
    one = _reachable(KafkaControllerModel(scenario))
    monkeypatch.setattr(kafka_zk_client, "maybe_race", _two_races)
    two = _reachable(TwoRacesModel(scenario))
    assert len(one) == distinct
    assert two == one


def test_a_shrink_lands_after_the_leader_applied_the_reassignments_leader_and_isr() -> None:
    """``reassignment-isr-shrink-race``: t-0 on [1, 0] reassigned to [0]. The controller elects 0
    (``moveReassignedPartitionLeaderIfRequired``) and sends it the LeaderAndIsr; leader 0 applies it and shrinks
    the ISR to [0] before ``removeReplicasFromIsr`` writes the znode for replica 1: BADVERSION, the re-read finds
    1 out of the ISR already, and the reassignment completes with the ISR the leader wrote in the controller's
    cache."""
    model = KafkaControllerModel(resolve_scenario("reassignment-isr-shrink-race"))
    s = take(model, initial(model), "AdminReassignPartitions", topic="t", command=0)
    s = take(model, s, "ControllerProcessEvent", 0, "t", partition=0, replica=1, isr_race="LeaderShrinksIsr",
             isr_race_after_leader_and_isr=True)
    assert s.log.zk_conflicts == (("t", 0),)
    znode = dict(s.zk.partitions)[("t", 0)]
    assert (znode.leader, znode.isr) == (0, (0,))
    assert dict(s.controller.leadership)[("t", 0)].isr == (0,)
    assert s.zk.replicas(("t", 0)) == (0,) and not s.zk.reassign_partitions
    assert s.broker(0).pending_isr_changes == (("t", 0),)
