"""The memoised broker and controller steps (model/zk/transition_memo.py) against the plain step, on every
transition of several scenarios: the same successors, with the same step logs."""

from __future__ import annotations

import collections
import gc
from collections import deque
from typing import Any

import attrs
import pytest

from kmc import compose
from model.zk import transition_memo
from model.zk.actions import Action, ActionKind
from model.zk.environment import environment
from model.zk.kafka_model import KafkaControllerModel, initial_state
from model.zk.state.step import Step
from model.zk.state.values import Request, RequestKind, StepLog
from model.zk.transition_memo import BrokerStepMemo, EnvironmentStepMemo

#: Scenarios whose broker steps read the controller (deletion callbacks, LeaderAndIsr responses of a failed
#: log directory), take a stale request, fail a StopReplica, or run beside a former controller, whose
#: controller steps drop channels, answer controlled shutdowns, race ISR writes, reassign and fail over, and whose
#: environment steps fail, restart and kill brokers, propagate ISR changes, create and delete topics.
SCENARIOS = ("default", "deletion-3brokers", "log-dir-failure", "controller-move", "stale-deletion-response",
             "kafka-7235", "topic-recreation", "controlled-shutdown", "isr-changes", "reassignment",
             "controller-failover", "kafka-5310", "add-partitions", "preferred-election")


def _transitions(model: KafkaControllerModel, limit: int):  # type: ignore[no-untyped-def]
    """Every (state, action) of a breadth-first walk over at most ``limit`` distinct states."""
    seen: set[bytes] = set()
    queue = deque(model.init_states())
    while queue and len(seen) < limit:
        state = queue.popleft()
        for action in model.actions(state):
            yield state, action
            child = model.next_state(state, action)
            if child is not None:
                data = model.encode(child)
                if data not in seen:
                    seen.add(data)
                    queue.append(model.decode(data))


def _broker_epoch(log: Any) -> int | None:
    return None if log.processed_event is None else log.processed_event.broker_epoch


@pytest.mark.parametrize("name", SCENARIOS)
def test_memoised_steps_equal_plain_steps(name: str) -> None:
    """Every successor of the memoised model equals the plain model's, state and step log, on the same states."""
    scenario = compose.resolve_scenario(name)
    memoised = KafkaControllerModel(scenario)
    plain = KafkaControllerModel(scenario, memo_entries=0)
    compared = 0
    for state, action in _transitions(memoised, 3000):
        expected = plain.next_state(state, action)
        actual = memoised.next_state(state, action)
        assert (actual is None) == (expected is None)
        if actual is not None and expected is not None:
            assert actual == expected, (name, action)
            assert actual.log == expected.log, (name, action)
            # the event's broker epoch is left out of its equality, not out of the log a report shows
            assert _broker_epoch(actual.log) == _broker_epoch(expected.log), (name, action)
            compared += 1
    assert compared > 0


@pytest.mark.parametrize("name", ("default", "controller-move", "controlled-shutdown", "controller-failover"))
def test_steps_taken_under_the_watch_leave_no_reference_cycle(name: str) -> None:
    """The memos' full steps (their misses, watched) free everything they made by reference counting: a walk's or a
    search's garbage does not wait for the cyclic collector, which then has only live objects to walk. The
    scenarios' controller steps drop channels, the watched step's own ``remove_broker_channel``."""
    model = KafkaControllerModel(compose.resolve_scenario(name))
    transitions = list(_transitions(model, 400))
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for state, action in transitions:
            model.next_state(state, action)
        gc.collect()
        garbage = collections.Counter(type(o).__name__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
    assert not garbage, garbage.most_common(8)


def test_small_memo_is_emptied_and_still_agrees() -> None:
    """A memo bounded to a few situations empties itself when full and gives the plain step's successors."""
    scenario = compose.resolve_scenario("deletion-3brokers")
    memoised = KafkaControllerModel(scenario, memo_entries=3)
    plain = KafkaControllerModel(scenario, memo_entries=0)
    for state, action in _transitions(memoised, 500):
        assert memoised.next_state(state, action) == plain.next_state(state, action)


def test_broker_step_reading_another_table_on_another_path_is_not_memoised() -> None:
    """A broker step whose path, after its first read of the controller, reads a table that the situation's first
    step did not read is taken in full: a memo keyed on the first step's reads alone would give a later state
    that differs in that table the other path's successor."""
    scenario = compose.resolve_scenario("default")

    def take(step: Step, action: Action) -> bool:
        environment.broker_apply_request(step, action.broker)
        mark = len(step.topics_with_deletion_started) if step.topics_to_be_deleted else 0
        step.brokers[action.broker] = attrs.evolve(step.brokers[action.broker], controlled_shutdown=mark)
        return True

    memo = BrokerStepMemo(scenario, take)
    initial = initial_state(scenario)
    broker = initial.brokers[0].id
    request = Request(RequestKind.StopReplica, initial.controller.epoch, initial.brokers[0].epoch)
    queued = attrs.evolve(initial, channels=((broker, (request,)),))
    action = Action(ActionKind.BrokerApplyRequest, broker)
    situations = [attrs.evolve(queued, controller=attrs.evolve(queued.controller, topics_to_be_deleted=deleted,
                                                               topics_with_deletion_started=started))
                  for deleted, started in (((), ()), (("t",), ()), (("t",), ("t",)))]
    for state in situations:
        plain = Step(scenario, state)
        take(plain, action)
        assert memo.successor(state, action) == plain.freeze()


@pytest.mark.parametrize("name", ["controller-move", "controller-failover"])
def test_controller_steps_key_on_the_events_behind_the_head_only_when_they_read_them(name: str) -> None:
    """A controller situation keys on the head of the event queue; a situation whose first step read the events
    behind it (a resignation clearing the queue, a watch firing once) keys on the whole queue, and both give the plain
    step's successors."""
    scenario = compose.resolve_scenario(name)
    memoised = KafkaControllerModel(scenario)
    plain = KafkaControllerModel(scenario, memo_entries=0)
    for state, action in _transitions(memoised, 3000):
        if action.kind is ActionKind.ControllerProcessEvent:
            assert memoised.next_state(state, action) == plain.next_state(state, action)
    effects = memoised._controller_steps._effects.values()
    assert any(effect is transition_memo._EVENTS for effect in effects)
    assert any(isinstance(effect, transition_memo._ControllerEffect) and effect.queued is not None
               for effect in effects)


@pytest.mark.parametrize("name", ["default", "isr-changes", "stale-deletion-response"])
def test_environment_steps_key_on_the_events_asked_for_and_the_brokers_read(name: str) -> None:
    """An environment situation (a broker fails or restarts, an admin creates or deletes a topic, ...) keys on
    whether the events its first step asked for wait in the controller's queue and on the brokers it read by their
    broker, not on the whole queue and cluster; its successors are the plain step's."""
    scenario = compose.resolve_scenario(name)
    memoised = KafkaControllerModel(scenario)
    plain = KafkaControllerModel(scenario, memo_entries=0)
    hits = 0
    for state, action in _transitions(memoised, 3000):
        if action.kind in EnvironmentStepMemo.kinds:
            effects = len(memoised._environment_steps._effects)
            actual = memoised.next_state(state, action)
            hits += len(memoised._environment_steps._effects) == effects
            expected = plain.next_state(state, action)
            assert actual == expected, (name, action)
            assert actual is not None and expected is not None and actual.log == expected.log
    keyed = [k for k in memoised._environment_steps._effects.values() if isinstance(k, transition_memo._Keyed)]
    assert any(k.reads.asked and not k.reads.events for k in keyed)
    assert any(k.touched is not transition_memo._WHOLE and k.touched.channels for k in keyed)
    assert hits > 0


def test_environment_step_reading_a_controller_table_keys_on_it() -> None:
    """An environment step that reads a table of the controller keys its situation on that table's value: states
    that differ only there get each their own successor (a step here marks the broker it restarts by it)."""
    scenario = compose.resolve_scenario("default")

    def take(step: Step, action: Action, settle: bool = True) -> bool:
        environment.broker_startup(step, action.broker)
        mark = len(step.topics_with_deletion_started) if step.topics_to_be_deleted else 0
        step.brokers[action.broker] = attrs.evolve(step.brokers[action.broker], controlled_shutdown=mark)
        return True

    memo = EnvironmentStepMemo(scenario, take)
    initial = initial_state(scenario)
    dead = attrs.evolve(initial, brokers=(attrs.evolve(initial.brokers[0], alive=False), *initial.brokers[1:]))
    action = Action(ActionKind.BrokerStartup, dead.brokers[0].id)
    situations = [attrs.evolve(dead, controller=attrs.evolve(dead.controller, topics_to_be_deleted=deleted,
                                                             topics_with_deletion_started=started))
                  for deleted, started in (((), ()), (("t",), ()), (("t",), ("t",)), ((), ()))]
    for state in situations:
        plain = Step(scenario, state)
        take(plain, action)
        assert memo.successor(state, action) == plain.freeze()
    assert memo._effects


@pytest.mark.parametrize(("name", "kept_from"), [("default", 2), ("deletion-3brokers", 4)])
def test_keep_forgets_the_situations_keyed_on_parts_no_state_to_expand_holds(name: str, kept_from: int) -> None:
    """After the model retains the states the search expands next (``retain_parts``), every effect a memo keeps is
    keyed on parts those states hold (ZooKeeper or the broker and the requests it applies, the controller's tables,
    the budget, the history), every effect it forgot on one they do not hold, and the memoised model still gives
    the plain step's successors. (The last quarter of deletion-3brokers' states hold the ZooKeeper, budget and
    history of controller situations whose tables they do not hold.)"""
    scenario = compose.resolve_scenario(name)
    model = KafkaControllerModel(scenario)
    plain = KafkaControllerModel(scenario, memo_entries=0)
    states = list({id(state): state for state, _ in _transitions(model, 3000)}.values())
    kept = states[len(states) * (kept_from - 1) // kept_from:]
    held = {id(part) for s in kept
            for part in (s.zk, s.budget, s.history, *s.brokers, *(r for _, queue in s.channels for r in queue),
                         *(table for table in transition_memo._context_of(s.controller) if table))}
    brokers, controllers = model._broker_steps, model._controller_steps

    def keyed_on(memo: Any, effect: Any) -> tuple[Any, ...]:
        h = effect.held
        if memo is brokers:
            return (h[0], *h[1][:effect.applied], h[2], h[3])
        if memo is controllers:
            return (h[0], h[3], h[4], *(table for table in transition_memo._context_of(h[1]) if table))
        return h[:3]

    def stored(effects: dict[Any, Any]) -> dict[Any, Any]:
        return {key: e for key, e in effects.items()
                if isinstance(e, (transition_memo._Effect, transition_memo._ControllerEffect)) and e.held}

    memos = (brokers, controllers, model._environment_steps)
    before = [stored(memo._effects) for memo in memos]
    model.retain_parts(kept)
    for memo, effects in zip(memos, before, strict=True):
        remaining = stored(memo._effects)
        assert remaining and len(remaining) < len(effects)
        for key, effect in effects.items():
            assert (key in remaining) == all(id(part) in held for part in keyed_on(memo, effect))
    for state in kept[:300]:
        for action in model.actions(state):
            assert model.next_state(state, action) == plain.next_state(state, action)


def test_update_metadata_rejected_at_several_heads_is_logged_as_the_step_logs_it() -> None:
    """A stored controller effect that appends UpdateMetadata requests which several brokers reject (stale) gives
    the successor and the log that settling the heads in full gives: the step's own lines, then one line per
    rejected request, broker by broker and request by request, the last one's reason the log's ``rejection``."""
    scenario = compose.resolve_scenario("deletion-3brokers")
    initial = initial_state(scenario)
    state = attrs.evolve(initial, brokers=tuple(attrs.evolve(b, controller_epoch=3) if b.id != 1 else b
                                                for b in initial.brokers))
    stale = Request(RequestKind.UpdateMetadata, 2, 1)
    fresh = Request(RequestKind.UpdateMetadata, 3, 1)
    appended = {2: (stale, fresh), 0: (stale, stale), 1: (stale,)}
    own = StepLog(messages=("the step's own line",))
    effect = transition_memo._ControllerEffect(
        True, zk=state.zk, controller=state.controller, standby_reassignments=state.standby_reassignments,
        budget=state.budget, history=state.history, log=own,
        brokers={}, queues={}, dropped={}, appended=appended)
    memo = transition_memo.ControllerStepMemo(scenario, lambda *_: True)
    actual = transition_memo._successor(state, effect, state.controller, state.zombie, memo._settle)
    plain = Step(scenario, state)
    for b, requests in sorted(appended.items()):
        plain.channels.setdefault(b, []).extend(requests)
    environment.apply_update_metadata_at_heads(plain)
    expected = plain.freeze()
    assert actual == expected
    assert actual.log.messages == own.messages + expected.log.messages
    assert len(expected.log.messages) == 3
    assert actual.log.rejection == expected.log.rejection == "STALE_CONTROLLER_EPOCH"
    assert [line.split()[1] for line in actual.log.messages[1:]] == ["0", "0", "2"]
