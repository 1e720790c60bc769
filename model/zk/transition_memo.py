"""Memoised transitions: a step gives the same result in the same situation, whatever else the state holds.

In a search the same broker part meets the same requests again and again, and the controller the same event
with the same ZooKeeper and context, while the rest of the cluster varies. A memo here takes a step once per
*situation* (the parts of the state the step reads), remembers what it changed, and applies that effect to every
later state in the same situation. It changes the speed, never a successor or its log:
``tests/test_transition_memo.py`` compares the memoised and the plain step on every transition of several scenarios.

* :class:`BrokerStepMemo`, ``BrokerApplyRequest`` and ``BrokerFailsStopReplica`` (half of the Kafka model's
  transitions). The situation: the action; the broker's part and the requests the step applies (the head of its
  channel, and the UpdateMetadata requests right after it), the budget and the history, all by identity; the
  scalars a step copies when it starts (the acting controller's epoch, ZooKeeper's controller epoch and unclean flag:
  ``copied_scalars``), the zombie's epoch and the standby reassignments, by value. The first step taken in a
  situation is watched: if it thawed a table of the controller or of ZooKeeper (``Step``'s lazily thawed fields)
  or read the controller's event queue (appending to it is no read), the situation also keys on the values of
  what it read (a LeaderAndIsr response reads the controller's
  ``replicasOnOfflineDirs`` and queue, a deletion callback its ``topicsWithDeletionStarted``). Up to its first
  such read a step's path depends on the situation alone, so the same situation always reads those tables first;
  a later step in it that, on another path after such a read, reads a table the situation does not key on is taken
  in full and not memoised. The effect: the broker's part, how many requests it took, the events it queued, the
  budget, the history, the log.
* :class:`ControllerStepMemo`, ``ControllerProcessEvent`` (raced or not). The situation: the action, the
  ZooKeeper, controller and zombie parts, the budget and the history (by identity), the standby reassignments.
  The first step taken in a situation is watched: the brokers it sent requests to and the channels it read by
  their broker (a failed broker's channel dropped by ``removeBroker``) are its :class:`_Touched`, and the
  situation also keys on them: on whether each broker sent to has a channel and, if not, on its part (the
  requests sent to such a broker reach the head of its channel, where the UpdateMetadata ones are applied at
  once), and on the parts and requests of the channels read. A step that reads the brokers or reads the channels
  other than by their broker (a controlled shutdown answered, an ISR write landing inside it) keys on all of
  them. Up to its first read of a channel a step's path depends on the situation alone; a later step in the same
  situation that touches other brokers or channels is taken in full and not memoised.

Both rest on the heads being settled: no UpdateMetadata waits at the head of a live broker's channel that the
step does not take (:func:`~model.zk.environment.environment.apply_update_metadata_at_heads` runs after every step;
only a former controller's resignation can leave one there). A memo is used only then, and a first step whose
effect reaches beyond what its situation keys on is never memoised. Identities are those the codec's decode and
the steps share (equal parts are one object); a memo holds what it keys on, so an identity is not reused while it
is a key. The memos are per process and bounded (emptied when full).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from model.scenario import Scenario
from model.zk.actions import ActionKind
from model.zk.environment import environment
from model.zk.state.step import Step, copied_scalars
from model.zk.state.values import ClusterState, ControllerEvent, ControllerState, Request, RequestKind

#: Situations each memo keeps before it is emptied (a bound on its memory).
MEMO_ENTRIES = 1 << 15

#: The step's lazily thawed fields a broker step may read without its situation keying on more parts.
_OWN_FIELDS = frozenset(("brokers", "channels", "stray_logs"))

_NOT_MEMOISED = object()  # the step's effect reached beyond what its situation keys on: take it every time
_WHOLE = object()  # the situation's controller steps read the brokers or the channels: key on all of them


class _Watch:
    """Whether a watched step read a container it was given (see :func:`_watched`)."""

    def __init__(self) -> None:
        self.read = False
        self.recording = True

    def note(self) -> None:
        if self.recording:
            self.read = True


def _watched(base: type, reading: tuple[str, ...]) -> type:
    """A subclass of ``base`` whose methods ``reading`` note a read in the instance's ``watch`` (the other methods,
    such as ``append`` and ``setdefault``, add without reading)."""

    def noting(name: str) -> Callable[..., Any]:
        method = getattr(base, name)

        def noted(self: Any, *args: Any) -> Any:
            self.watch.note()
            return method(self, *args)

        return noted

    return type(f"Watched{base.__name__.capitalize()}", (base,), {name: noting(name) for name in reading})


_WatchedList = _watched(list, ("__iter__", "__len__", "__getitem__", "__contains__", "__eq__", "__ne__", "__reversed__",
                               "pop", "remove", "index", "count", "copy", "clear", "__delitem__", "__setitem__"))


def _watch_list(items: Any, watch: _Watch) -> Any:
    watched = _WatchedList(items)
    watched.watch = watch
    return watched


class _Source:
    """What a :class:`Step`'s thaw functions read: the state and its acting controller (the active one: broker
    steps are never a former controller's)."""

    def __init__(self, state: ClusterState):
        self.source = state
        self.source_controller = state.controller


@attrs.frozen
class _Reads:
    """The ZooKeeper and controller tables (``Step``'s lazily thawed fields) a situation's steps read, and whether
    they read the controller's event queue: the further key of the situation is their values."""

    fields: tuple[str, ...]
    events: bool

    def values(self, state: ClusterState) -> tuple[Any, ...]:
        source = _Source(state)
        values = [_hashable(vars(Step)[name].thaw(source)) for name in self.fields]
        if self.events:
            values.append(state.controller.events)
        return tuple(values)

    def within(self, keyed: _Reads) -> bool:
        """Whether a step that read these read nothing that a situation keyed on ``keyed`` does not key on."""
        return set(self.fields).issubset(keyed.fields) and (keyed.events or not self.events)


def _hashable(thawed: Any) -> Any:
    """A thawed table as a key: a dict's items and a list in their order (the state's, which is canonical), a set
    as a frozenset."""
    if isinstance(thawed, dict):
        return tuple(thawed.items())
    if isinstance(thawed, set):
        return frozenset(thawed)
    return tuple(thawed)


@attrs.frozen
class _Effect:
    """What a broker step changed: the parts it replaced, the events it queued and its log. ``held`` keeps
    the parts keyed on by identity alive while the effect is stored."""

    broker: Any
    applied: int  # the requests taken from the head of the queue: the request and the UpdateMetadata after it
    appended_events: tuple[ControllerEvent, ...]
    budget: Any
    history: Any
    log: Any
    held: tuple[Any, ...] = attrs.field(eq=False, repr=False)


class _Memo:
    """A bounded memo of effects by situation, per process."""

    def __init__(self, scenario: Scenario, take: Callable[..., Any], *, entries: int = MEMO_ENTRIES):
        self.scenario = scenario
        self.take = take
        self.entries = entries
        self._effects: dict[tuple[Any, ...], Any] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "take": self.take, "entries": self.entries}  # effects stay in-process

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["scenario"], state["take"], entries=state["entries"])  # type: ignore[misc]

    def _store(self, key: tuple[Any, ...], effect: Any) -> None:
        effects = self._effects
        if len(effects) >= self.entries:
            effects.clear()
        effects[key] = effect


class BrokerStepMemo(_Memo):
    """The effects of broker steps by situation (see the module docstring). ``take(step, action)`` is the
    model's step: the transition on ``step``, then the UpdateMetadata requests at the channels' heads."""

    kinds = frozenset((ActionKind.BrokerApplyRequest, ActionKind.BrokerFailsStopReplica))

    def successor(self, state: ClusterState, action: Any) -> ClusterState:
        broker_id = action.broker
        if not self.entries or not _heads_settled(state, broker_id):
            return self._step(state, action)[0]
        broker = state.broker(broker_id)
        queue = state.channel(broker_id)
        zombie = state.zombie
        key: tuple[Any, ...] = (action, id(broker), tuple(map(id, _applied(queue))), id(state.budget),
                                id(state.history), copied_scalars(state), -1 if zombie is None else zombie.epoch,
                                state.standby_reassignments)
        effects = self._effects
        effect = effects.get(key)
        if isinstance(effect, _Reads):
            reads = effect
            key = (key, *reads.values(state))
            effect = effects.get(key)
            if effect is None:
                return self._watched_step(state, action, key, reads)
        elif effect is None:
            return self._watched_step(state, action, key, None)
        if effect is _NOT_MEMOISED:
            return self._step(state, action)[0]
        return self._apply(state, broker_id, effect)

    def _step(self, state: ClusterState, action: Any) -> tuple[ClusterState, Step, _Watch]:
        step = Step(self.scenario, state)
        events = _Watch()
        step.events = step.watch_events = _watch_list(step.events, events)
        self.take(step, action)
        events.recording = False  # freeze() reads the queue: that is not the step's
        return step.freeze(), step, events

    def _watched_step(self, state: ClusterState, action: Any, key: tuple[Any, ...],
                      keyed_on: _Reads | None) -> ClusterState:
        """The step taken in full and its effect stored under ``key``, which is keyed on the values of the tables
        ``keyed_on`` (None: the situation alone, whose first step decides what it keys on)."""
        child, step, events = self._step(state, action)
        reads = _Reads(tuple(n for n in step.__dict__ if n in vars(Step) and n not in _OWN_FIELDS), events.read)
        if keyed_on is None:
            if reads.fields or reads.events:
                self._store(key, reads)
                key = (key, *reads.values(state))
        elif not reads.within(keyed_on):
            return child  # read a table its situation does not key on (another path after a read): not memoised
        self._store(key, self._effect_of(state, child, action.broker))
        return child

    @staticmethod
    def _effect_of(state: ClusterState, child: ClusterState, broker_id: int) -> Any:
        """The step's effect, or ``_NOT_MEMOISED`` when it changed more than the broker, its queue, the
        controller's events (by appending), the budget and the history."""
        if (child.zk is not state.zk or child.zombie is not state.zombie
                or child.standby_reassignments is not state.standby_reassignments
                or len(child.brokers) != len(state.brokers)):
            return _NOT_MEMOISED
        broker = None
        for before, after in zip(state.brokers, child.brokers, strict=True):
            if before.id == broker_id:
                broker = after
            elif after is not before:
                return _NOT_MEMOISED
        if not _other_channels_kept(state, child, broker_id):
            return _NOT_MEMOISED
        c0, c1 = state.controller, child.controller
        appended: tuple[ControllerEvent, ...] = ()
        if c1 is not c0:
            if any(getattr(c1, a.name) is not getattr(c0, a.name) for a in attrs.fields(ControllerState)
                   if a.name != "events") or c1.events[:len(c0.events)] != c0.events:
                return _NOT_MEMOISED
            appended = c1.events[len(c0.events):]
        queue = state.channel(broker_id)
        applied = len(_applied(queue))
        left = child.channel(broker_id)
        if len(left) != len(queue) - applied or any(r0 is not r1 for r0, r1 in zip(queue[applied:], left, strict=True)):
            return _NOT_MEMOISED
        held = (state.broker(broker_id), queue, state.budget, state.history)
        return _Effect(broker, applied, appended, child.budget, child.history, child.log, held)

    @staticmethod
    def _apply(state: ClusterState, broker_id: int, effect: _Effect) -> ClusterState:
        controller = state.controller
        if effect.appended_events:
            controller = attrs.evolve(controller, events=controller.events + effect.appended_events)
        applied = effect.applied
        channels = tuple((b, q[applied:] if b == broker_id else q) for b, q in state.channels
                         if b != broker_id or len(q) > applied)
        new_broker = effect.broker
        return ClusterState(state.zk, controller,
                            tuple(new_broker if b.id == broker_id else b for b in state.brokers), channels,
                            effect.budget, effect.history, effect.log, state.zombie, state.standby_reassignments)


def _heads_settled(state: ClusterState, broker_id: int = -1) -> bool:
    """No live broker but ``broker_id`` has an UpdateMetadata at the head of its channel, so that the step applies
    the requests at the heads of ``broker_id``'s channel only. Every step leaves the heads so, except a former
    controller's resignation, which drops its requests from the channels after the heads were applied."""
    for b, queue in state.channels:
        if b != broker_id and queue[0].kind is RequestKind.UpdateMetadata and state.broker(b).alive:
            return False
    return True


def _other_channels_kept(state: ClusterState, child: ClusterState, broker_id: int) -> bool:
    """Whether every channel but ``broker_id``'s holds the same requests (the same objects) in ``child``."""
    before = [(b, q) for b, q in state.channels if b != broker_id]
    after = [(b, q) for b, q in child.channels if b != broker_id]
    return len(before) == len(after) and all(
        b0 == b1 and len(q0) == len(q1) and all(r0 is r1 for r0, r1 in zip(q0, q1, strict=True))
        for (b0, q0), (b1, q1) in zip(before, after, strict=True))


def _applied(queue: tuple[Request, ...]) -> tuple[Request, ...]:
    """The requests a broker step applies: the head of the queue, then the UpdateMetadata requests that follow it
    (:func:`~model.zk.environment.environment.apply_update_metadata_at_heads`); the step reads no other."""
    n = 1
    while n < len(queue) and queue[n].kind is RequestKind.UpdateMetadata:
        n += 1
    return queue[:n]


@attrs.frozen
class _ControllerEffect:
    """What a controller step changed. With ``whole`` (the step read the brokers or the channels, and its situation
    keys on all of them) ``brokers`` and ``channels`` are the state's; otherwise ``brokers`` maps the brokers
    it touched (:class:`_Touched`) that had no channel before the step or whose channel it read to their part
    after it, ``queues`` those brokers to their queue after it, and ``appended`` the others sent to (each with a
    channel) to the requests the step appended to their queue. ``successor`` False: the
    action has none. ``held`` keeps the parts keyed on by identity alive while the effect is stored."""

    successor: bool
    zk: Any = None
    controller: Any = None
    zombie: Any = None
    standby_reassignments: Any = None
    budget: Any = None
    history: Any = None
    log: Any = None
    whole: bool = False
    brokers: Any = None
    channels: Any = None
    queues: Any = None
    appended: Any = None
    held: tuple[Any, ...] = attrs.field(default=(), eq=False, repr=False)


class ControllerStepMemo(_Memo):
    """The effects of the active controller's steps (``ControllerProcessEvent``, raced or not) by situation: the
    action, the ZooKeeper, controller and zombie parts, the budget and the history (by identity), the standby
    reassignments (by value), then on the brokers and channels its first step touched (:class:`_Touched`), or on
    all of them when that step read the brokers or read the channels other than by their broker.
    ``take(step, action, settle=False)`` is the model's step without the UpdateMetadata requests at the heads,
    which the memo applies itself after watching the step."""

    kinds = frozenset((ActionKind.ControllerProcessEvent,))

    def successor(self, state: ClusterState, action: Any) -> ClusterState | None:
        if not self.entries or not _heads_settled(state):
            return self._step(state, action)[0]
        key: tuple[Any, ...] = (action, id(state.zk), id(state.controller), id(state.zombie), id(state.budget),
                                id(state.history), state.standby_reassignments)
        effects = self._effects
        effect = effects.get(key)
        if effect is _WHOLE:
            key = _keyed_on_all(key, state)
            effect = effects.get(key)
            if effect is None:
                return self._watched_step(state, action, key, _WHOLE)
        elif isinstance(effect, _Touched):
            touched = effect
            key = touched.key(key, state)
            effect = effects.get(key)
            if effect is None:
                return self._watched_step(state, action, key, touched)
        elif effect is None:
            return self._watched_step(state, action, key, None)
        if effect is _NOT_MEMOISED:
            return self._step(state, action)[0]
        return self._apply(state, effect)

    def _step(self, state: ClusterState, action: Any) -> tuple[ClusterState | None, Any]:
        """The step's successor, and what it touched before the heads were settled: ``_WHOLE`` when it read the
        brokers or a channel other than by its broker (iterating over them), else the :class:`_Touched` brokers."""
        step = Step(self.scenario, state)
        watch = _ChannelWatch()
        channels = _ChannelsDict((b, _channel_list(q, watch, b)) for b, q in state.channels)
        channels.watch = watch
        step.channels = channels
        taken = self.take(step, action, settle=False)
        watch.recording = False
        if watch.whole or "brokers" in step.__dict__:
            touched: Any = _WHOLE
        else:
            # The brokers the step sent requests to (appending to a channel reads nothing of it)
            before = dict(state.channels)
            touched = _Touched(tuple(sorted(b for b, q in channels.items() if len(q) > len(before.get(b, ())))),
                               tuple(sorted(watch.keys)))
        if not taken:
            return None, touched
        step.channels = {b: list(q) for b, q in channels.items()}
        environment.apply_update_metadata_at_heads(step)
        return step.freeze(), touched

    def _watched_step(self, state: ClusterState, action: Any, key: tuple[Any, ...],
                      keyed_on: Any) -> ClusterState | None:
        """The step taken in full and its effect stored under ``key``, which is keyed on ``keyed_on``: None (the
        situation alone), ``_WHOLE`` (all brokers and channels) or the :class:`_Touched` brokers and channels."""
        child, touched = self._step(state, action)
        if keyed_on is None:
            if touched is _WHOLE:
                self._store(key, _WHOLE)
                key = _keyed_on_all(key, state)
            elif touched.brokers or touched.channels:
                self._store(key, touched)
                key = touched.key(key, state)
            keyed_on = touched
        elif keyed_on is not _WHOLE and touched != keyed_on:
            return child  # another path than the situation's first step: not memoised
        whole = keyed_on is _WHOLE
        self._store(key, _ControllerEffect(False) if child is None else self._effect_of(state, child, whole, touched))
        return child

    @staticmethod
    def _effect_of(state: ClusterState, child: ClusterState, whole: bool, touched: Any) -> Any:
        """The step's effect, or ``_NOT_MEMOISED`` when, not keyed on all brokers and channels, it changed a broker
        or a channel it did not touch other than by appending requests."""
        held = (state.zk, state.controller, state.zombie, state.budget, state.history, state.brokers,
                *(q for _, q in state.channels))
        common: dict[str, Any] = dict(
            zk=child.zk, controller=child.controller, zombie=child.zombie,
            standby_reassignments=child.standby_reassignments, budget=child.budget, history=child.history,
            log=child.log, held=held)
        if whole:
            return _ControllerEffect(True, whole=True, brokers=child.brokers, channels=child.channels, **common)
        before = dict(state.channels)
        after = dict(child.channels)
        if len(child.brokers) != len(state.brokers):
            return _NOT_MEMOISED
        own = {*(b for b in touched.brokers if b not in before), *touched.channels}
        brokers, queues, appended = {}, {}, {}
        for b0, b1 in zip(state.brokers, child.brokers, strict=True):
            if b0.id != b1.id:
                return _NOT_MEMOISED
            if b0.id in own:
                brokers[b0.id] = b1
                queues[b0.id] = after.get(b0.id, ())
            elif b1 is not b0:
                return _NOT_MEMOISED
            elif b0.id in before:
                q0, q1 = before[b0.id], after.get(b0.id, ())
                if len(q1) < len(q0) or any(r0 is not r1 for r0, r1 in zip(q0, q1[:len(q0)], strict=True)):
                    return _NOT_MEMOISED
                if len(q1) > len(q0):
                    appended[b0.id] = q1[len(q0):]
            elif b0.id in after:
                return _NOT_MEMOISED
        if set(after) - {b.id for b in state.brokers}:
            return _NOT_MEMOISED
        return _ControllerEffect(True, brokers=brokers, queues=queues, appended=appended, **common)

    @staticmethod
    def _apply(state: ClusterState, effect: _ControllerEffect) -> ClusterState | None:
        if not effect.successor:
            return None
        if effect.whole:
            brokers, channels = effect.brokers, effect.channels
        else:
            known, queues, appended = effect.brokers, effect.queues, effect.appended
            brokers = tuple(known.get(b.id, b) for b in state.brokers) if known else state.brokers
            queue_of = dict(state.channels)
            channels = []
            for b in brokers:
                q = queues.get(b.id)
                if q is None:
                    q = queue_of.get(b.id, ())
                    if b.id in appended:
                        q = q + appended[b.id]
                if q:
                    channels.append((b.id, q))
            channels = tuple(channels)
        return ClusterState(effect.zk, effect.controller, brokers, channels, effect.budget, effect.history,
                            effect.log, effect.zombie, effect.standby_reassignments)


@attrs.frozen
class _Touched:
    """The brokers and channels a situation's controller steps touch: ``brokers``, those the step sent requests
    to, and ``channels``, those it read by their broker (the channel of a failed broker, dropped by
    ``ControllerChannelManager.removeBroker``). The situation then keys on whether each broker sent to has a
    channel, and if not, on its part (the UpdateMetadata requests at the head of a channel are applied at once:
    otherwise the step only appends to the channel); and on the parts and the requests of the channels read, by
    identity."""

    brokers: tuple[int, ...]
    channels: tuple[int, ...]

    def key(self, key: tuple[Any, ...], state: ClusterState) -> tuple[Any, ...]:
        queues = dict(state.channels)
        parts = {b.id: b for b in state.brokers}
        return (key, tuple(-1 if b in queues else id(parts.get(b)) for b in self.brokers),
                tuple((id(parts.get(b)), tuple(map(id, queues.get(b, ())))) for b in self.channels))


class _ChannelWatch:
    """Which channels a watched controller step read: by their broker (``keys``), or all of them (``whole``)."""

    def __init__(self) -> None:
        self.keys: set[int] = set()
        self.whole = False
        self.recording = True

    def note(self, key: int) -> None:
        if self.recording:
            self.keys.add(key)

    def note_all(self) -> None:
        if self.recording:
            self.whole = True


def _noting_key(name: str) -> Callable[..., Any]:
    method = getattr(dict, name)

    def noted(self: Any, key: Any, *args: Any) -> Any:
        self.watch.note(key)
        return method(self, key, *args)

    return noted


def _noting_all(name: str) -> Callable[..., Any]:
    method = getattr(dict, name)

    def noted(self: Any, *args: Any) -> Any:
        self.watch.note_all()
        return method(self, *args)

    return noted


#: The channels of a watched controller step: reading a channel by its broker notes that broker, any other read
#: notes them all (``setdefault``, by which requests are sent, and assigning a channel are no reads).
_ChannelsDict = type("_ChannelsDict", (dict,), {
    **{name: _noting_key(name) for name in ("__getitem__", "__contains__", "get", "pop", "__delitem__")},
    **{name: _noting_all(name) for name in ("__iter__", "__len__", "__eq__", "__ne__", "items", "keys", "values",
                                            "popitem", "copy", "clear")},
})


class _KeyNote:
    """A channel's watch: notes its broker."""

    def __init__(self, watch: _ChannelWatch, key: int):
        self.watch = watch
        self.key = key

    def note(self) -> None:
        self.watch.note(self.key)


def _channel_list(queue: Any, watch: _ChannelWatch, broker: int) -> Any:
    watched = _WatchedList(queue)
    watched.watch = _KeyNote(watch, broker)
    return watched


def _keyed_on_all(key: tuple[Any, ...], state: ClusterState) -> tuple[Any, ...]:
    return (key, tuple(map(id, state.brokers)), tuple((b, tuple(map(id, q))) for b, q in state.channels))
