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
  ZooKeeper part, the controller's tables but its event queue, the zombie part, the budget and the history (by
  identity), the controller's epoch, the event at the head of its queue (with the broker epoch a report shows of it)
  and the standby reassignments. The events
  behind the head are keyed on only when the situation's first step read them (``ControllerEventManager``'s thread
  takes the head and handlers append to the queue, which reads nothing of it; a resignation clearing the queue or a
  watch that fires once, ``enqueue_once``, reads it): otherwise the effect stores the events the step queued and
  appends them to the queue behind the head of the state it is applied to, so that an event processed before or
  after a broker queued another is one situation. A later step in a situation not keyed on the queue that reads
  it is taken in full and not memoised.
  The first step taken in a situation is watched: the channels it read by their broker are its :class:`_Touched`,
  and the situation also keys on their brokers' parts and requests. Sending requests to a broker (appending to
  its channel) and dropping the channel of a failed broker that the step had not used before
  (``ControllerChannelManager.removeBroker``: the requests of the acting controller's epoch go) read nothing: the
  effect stores the requests appended and the epoch dropped, and applies them to the channels of the state it
  is applied to, then the UpdateMetadata requests that reach the heads of those channels, each (broker part,
  request) worked out once (:meth:`ControllerStepMemo._settle`); a broker that rejects one (a stale request) has
  the rejection logged as the step logs it, after the step's own lines and in the order of the brokers, and a first
  step whose own heads held a rejected request is not memoised. A step that reads the brokers or reads the channels
  other than by their broker (a controlled shutdown answered, an ISR write landing inside it) keys on all of
  them. Up to its first read of a channel a step's path depends on the situation alone; a later step in the
  same situation that touches other brokers or channels is taken in full and not memoised, and so is a first
  step whose stored effect, applied to its own state, does not give its successor.

Both rest on the heads being settled: no UpdateMetadata waits at the head of a live broker's channel that the
step does not take (:func:`~model.zk.environment.environment.apply_update_metadata_at_heads` runs after every step;
only a former controller's resignation can leave one there). A memo is used only then, and a first step whose
effect reaches beyond what its situation keys on is never memoised. Identities are those the codec's decode and
the steps share (equal parts are one object); a memo holds what it keys on, so an identity is not reused while it
is a key. The parts an effect stores are the codec's (``intern``: :meth:`~model.zk.state.codec.Codec.intern`), so
that the successors made by applying it share the parts decode gives (later situations key on them) and are
written by copying their bytes. The memos are per process and bounded (emptied when full); a search that has the
codec forget the parts of the levels it expanded has them forget the situations keyed on those parts
(:meth:`_Memo.keep`).
"""

from __future__ import annotations

import operator
import struct
from collections.abc import Callable
from typing import Any

import attrs

from model.scenario import Scenario
from model.zk.actions import ActionKind
from model.zk.environment import environment
from model.zk.state.step import FROZEN_TABLES, Step, copied_scalars
from model.zk.state.values import (
    BrokerState,
    ClusterState,
    ControllerEvent,
    ControllerState,
    History,
    Request,
    RequestKind,
    StepLog,
    ZkState,
)

#: Situations each memo keeps before it is emptied (a bound on its memory).
MEMO_ENTRIES = 1 << 17

#: The step's lazily thawed fields a broker step may read without its situation keying on more parts.
_OWN_FIELDS = frozenset(("brokers", "channels", "stray_logs"))

#: The empty map of every effect that maps no broker (never written: an effect is not changed once stored).
_NONE: dict[int, Any] = {}


def _shared(mapping: dict[int, Any]) -> dict[int, Any]:
    """``mapping``, or :data:`_NONE` when it is empty."""
    return mapping or _NONE


#: The identity of the empty tuple, an empty table's (a situation may key on it; no state holds it as a part).
_EMPTY = id(())

_NOT_MEMOISED = object()  # the step's effect reached beyond what its situation keys on: take it every time
_WHOLE = object()  # the situation's controller steps read the brokers or the channels: key on all of them
_EVENTS = object()  # the situation's controller steps read the event queue behind its head: key on the whole queue


class _Packers(dict[int, Callable[..., bytes]]):
    """``n`` -> packs ``n`` identities into one bytes object (8 bytes each)."""

    def __missing__(self, n: int) -> Callable[..., bytes]:
        pack = self[n] = struct.Struct(f"{n}Q").pack
        return pack


#: The identities a key holds, packed into one bytes object: a key of ten identities as a tuple of ints costs
#: about 400 bytes, as one bytes object about 120 (equal, and hashed, the same way). ``_PACK[n](*ids)``.
_PACK = _Packers()


def _ids(*parts: Any) -> bytes:
    """The identities of ``parts``, packed (:data:`_PACK`)."""
    return _PACK[len(parts)](*map(id, parts))


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


#: ``list.pop``, called on a watched list without noting a read. Called through this name: compiled (Cython 3.3,
#: ``setup.py``), ``list.pop(self, 0)`` takes the list's own pop only while the list fills more than half of what it
#: allocated, and otherwise calls ``self.pop(0)``, the override, which would note a read the step did not make.
_list_pop = list.pop


class _QueueBehindHead(_WatchedList):  # type: ignore[valid-type,misc]
    """A controller step's event queue: taking its head (``pop(0)``, once, first) and appending read nothing of the
    events behind the head; any other use reads them."""

    head_taken = False

    def pop(self, *args: Any) -> Any:
        if not self.head_taken and args == (0,):
            self.head_taken = True
            return _list_pop(self, 0)
        return super().pop(*args)


class _QueueAsked(_WatchedList):  # type: ignore[valid-type,misc]
    """An environment step's event queue: asking whether an event waits in it (``in``: a ZooKeeper watch firing
    once, :meth:`~model.zk.state.step.Step.enqueue_once`) records the event asked for (``asked``), and the situation
    keys on the answer alone; appending reads nothing; any other use reads the queue."""

    def __init__(self, items: Any, watch: _Watch):
        super().__init__(items)
        self.watch = watch
        self.asked: list[ControllerEvent] = []

    def __contains__(self, item: Any) -> bool:
        if self.watch.recording:
            self.asked.append(item)
        return list.__contains__(self, item)


#: The fields of the controller's context but its event queue: a controller step's situation keys on them and on
#: the head of the queue; on the events behind the head only when the situation's first step read them.
_CONTEXT = tuple(a.name for a in attrs.fields(ControllerState) if a.name not in ("epoch", "events"))
_context_of = operator.attrgetter(*_CONTEXT)
#: A controller situation's identities: ZooKeeper, the zombie, the budget, the history and the context's tables.
_PACK_CONTROLLER = _PACK[4 + len(_CONTEXT)]

_CONTROLLER_FIELDS = tuple(a.name for a in attrs.fields(ControllerState))
_fields_of = operator.attrgetter(*_CONTROLLER_FIELDS)
_EVENTS_AT = _CONTROLLER_FIELDS.index("events")


def _with_queue(controller: ControllerState, events: tuple[ControllerEvent, ...]) -> ControllerState:
    """``attrs.evolve(controller, events=events)``, its fields passed by position (a memo hit makes one)."""
    values = list(_fields_of(controller))
    values[_EVENTS_AT] = events
    return ControllerState(*values)


@attrs.frozen
class _Reads:
    """The ZooKeeper and controller tables (``Step``'s lazily thawed fields) a situation's steps read, and whether
    they read the controller's event queue: the further key of the situation is their values, the state's own tables
    (:data:`~model.zk.state.step.FROZEN_TABLES`, equal exactly when the tables a step thaws from them are)."""

    fields: tuple[str, ...]
    events: bool
    asked: tuple[ControllerEvent, ...] = ()  # the events asked for in the queue (``in``), when it was read no further

    def values(self, state: ClusterState) -> tuple[Any, ...]:
        values = [FROZEN_TABLES[name](state) for name in self.fields]
        events = state.controller.events
        if self.events:
            values.append(events)
        elif self.asked:
            values.append(tuple(event in events for event in self.asked))
        return tuple(values)

    def within(self, keyed: _Reads) -> bool:
        """Whether a step that read these read nothing that a situation keyed on ``keyed`` does not key on."""
        return set(self.fields).issubset(keyed.fields) and (
            keyed.events or (not self.events and set(self.asked).issubset(keyed.asked)))

    def __bool__(self) -> bool:
        return bool(self.fields or self.events or self.asked)


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


def _itself(part: Any) -> Any:
    return part


class LastState:
    """The state whose successors the search makes one after the other, with what the memos work out of it
    (:meth:`_Memo._seen`): shared by a model's memos, so that each state's is worked out once whichever memos its
    actions go to. The state is held while it is the last one."""

    __slots__ = ("seen",)

    def __init__(self) -> None:
        self.seen: tuple[Any, ...] = (None,)


class _Memo:
    """A bounded memo of effects by situation, per process."""

    def __init__(self, scenario: Scenario, take: Callable[..., Any], *, entries: int = MEMO_ENTRIES,
                 intern: Callable[[Any], Any] = _itself, last: LastState | None = None):
        """``intern(part)``: the part to store in an effect in place of ``part``, an equal one (the codec's, whose
        bytes it knows: :meth:`~model.zk.state.codec.Codec.intern`); ``last``: the :class:`LastState` this memo
        shares with the model's others (else its own)."""
        self.scenario = scenario
        self.take = take
        self.entries = entries
        self.intern = intern
        self._effects: dict[tuple[Any, ...], Any] = {}
        self._logs: dict[tuple[StepLog, int], StepLog] = {}  # the logs the effects keep (:meth:`_log`)
        self._last = LastState() if last is None else last

    def __getstate__(self) -> dict[str, Any]:
        # effects and the last state stay in-process
        return {"scenario": self.scenario, "take": self.take, "entries": self.entries, "intern": self.intern}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["scenario"], state["take"], entries=state["entries"],  # type: ignore[misc]
                      intern=state["intern"])

    def _store(self, key: tuple[Any, ...], effect: Any) -> None:
        effects = self._effects
        if len(effects) >= self.entries:
            effects.clear()
            self._logs.clear()
        effects[key] = effect

    def keep(self, live: set[int]) -> None:
        """Forget the situations keyed on a part or table that is not in ``live`` (the identities of what the states
        the search expands next hold: :meth:`~model.zk.state.codec.Codec.retain`, which forgets the rest). Such a
        situation meets no state again: a state expanded later holds the codec's parts, and an equal part the codec
        learns again is another object (only an effect that stores the very part a situation keys on could hand it
        back). A situation and the keys that extend it go together, as they share its first key. The UpdateMetadata
        outcomes (``_metadata``) are kept: they key on requests that stored effects append, which no state may
        hold until an effect is applied again."""
        held = live.__contains__
        identities = self._identities
        effects = self._effects
        for key in [key for key in effects if not all(map(held, identities(_situation(key))))]:
            del effects[key]

    @staticmethod
    def _identities(situation: tuple[Any, ...]) -> tuple[int, ...]:
        """The identities of the parts and tables (non-empty) that the first key of a situation keys on."""
        raise NotImplementedError

    def _log(self, log: StepLog) -> StepLog:
        """The log stored before that is equal to ``log`` and shows the same broker epoch of the event processed
        (a report's, left out of an event's equality), else ``log``: steps in many situations log the same (a
        controller's a few hundred logs in ten thousand situations), and an effect keeps its log."""
        event = log.processed_event
        return self._logs.setdefault((log, -1 if event is None else event.broker_epoch), log)

    def _seen(self, state: ClusterState) -> tuple[Any, ...]:
        """(``state``, the live brokers with an UpdateMetadata at the head of their channel (:func:`_unsettled`),
        the end of a broker or environment situation's key: the budget and the history by identity, the scalars a
        step copies, the zombie's epoch and the standby reassignments), worked out once for the state whose
        successors the search makes one after the other (:class:`LastState`)."""
        shared = self._last
        last = shared.seen
        if last[0] is not state:
            zombie = state.zombie
            last = shared.seen = (state, _unsettled(state), (
                _ids(state.budget, state.history), copied_scalars(state), -1 if zombie is None else zombie.epoch,
                state.standby_reassignments))
        return last


def _situation(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """The first key of the situation that ``key`` extends (a key extended by the values or identities of what the
    situation's first step read is ``(key, ...)``: an action, first in a situation's first key, is no tuple)."""
    while type(key[0]) is tuple:
        key = key[0]
    return key


def _unpacked(ids: bytes) -> tuple[int, ...]:
    """The identities packed by :data:`_PACK` (native unsigned 64-bit ints)."""
    return tuple(memoryview(ids).cast("Q"))


class BrokerStepMemo(_Memo):
    """The effects of broker steps by situation (see the module docstring). ``take(step, action)`` is the
    model's step: the transition on ``step``, then the UpdateMetadata requests at the channels' heads."""

    kinds = frozenset((ActionKind.BrokerApplyRequest, ActionKind.BrokerFailsStopReplica))

    def successor(self, state: ClusterState, action: Any) -> ClusterState:
        broker_id = action.broker
        seen = self._seen(state)
        unsettled = seen[1]
        if not self.entries or (unsettled and unsettled != (broker_id,)):
            return self._step(state, action)[0]
        broker = state.broker(broker_id)
        queue = state.channel(broker_id)
        key: tuple[Any, ...] = (action, _ids(broker, *_applied(queue)), *seen[2])
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

    @staticmethod
    def _identities(situation: tuple[Any, ...]) -> tuple[int, ...]:
        # (action, the broker's part and the requests applied, the budget and the history, scalars...)
        return _unpacked(situation[1]) + _unpacked(situation[2])

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

    def _effect_of(self, state: ClusterState, child: ClusterState, broker_id: int) -> Any:
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
        appended = _appended_events(state.controller, child.controller)
        if appended is None:
            return _NOT_MEMOISED
        queue = state.channel(broker_id)
        applied = len(_applied(queue))
        left = child.channel(broker_id)
        if len(left) != len(queue) - applied or any(r0 is not r1 for r0, r1 in zip(queue[applied:], left, strict=True)):
            return _NOT_MEMOISED
        held = (state.broker(broker_id), queue, state.budget, state.history)
        intern = self.intern
        return _Effect(broker if broker is None else intern(broker), applied, appended, intern(child.budget),
                       intern(child.history), self._log(child.log), held)

    @staticmethod
    def _apply(state: ClusterState, broker_id: int, effect: _Effect) -> ClusterState:
        controller = state.controller
        if effect.appended_events:
            controller = _with_queue(controller, controller.events + effect.appended_events)
        applied = effect.applied
        channels = tuple([(b, q[applied:] if b == broker_id else q) for b, q in state.channels
                          if b != broker_id or len(q) > applied])
        new_broker = effect.broker
        return ClusterState(state.zk, controller,
                            tuple([new_broker if b.id == broker_id else b for b in state.brokers]), channels,
                            effect.budget, effect.history, effect.log, state.zombie, state.standby_reassignments)


def _appended_events(c0: ControllerState, c1: ControllerState) -> tuple[ControllerEvent, ...] | None:
    """The events a step appended to the controller's queue, when it changed nothing else of the controller ``c0``
    (``c1`` after it); else None."""
    if c1 is c0:
        return ()
    if any(getattr(c1, a.name) is not getattr(c0, a.name) for a in attrs.fields(ControllerState)
           if a.name != "events") or c1.events[:len(c0.events)] != c0.events:
        return None
    return c1.events[len(c0.events):]


def _queued(state: ClusterState, child: ClusterState) -> tuple[ControllerEvent, ...] | None:
    """The events a controller step that did not read its queue behind the head appended behind it (the events
    behind the head stay, and the step's follow them); None when the child's queue is not so, or a zombie changed."""
    behind = state.controller.events[1:]
    events = child.controller.events
    if child.zombie is not state.zombie or len(events) < len(behind) or events[:len(behind)] != behind:
        return None
    return events[len(behind):]


def _unsettled(state: ClusterState) -> tuple[int, ...]:
    """The live brokers with an UpdateMetadata at the head of their channel. A memo is used when there is none, or
    (a broker step) when the acting broker is the only one, so that the step applies the requests at the heads of
    its channel only. Every step leaves the heads so, except a former controller's resignation, which drops its
    requests from the channels after the heads were applied."""
    return tuple([b for b, queue in state.channels
                  if queue[0].kind is RequestKind.UpdateMetadata and state.broker(b).alive])


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
    keys on all of them) ``brokers`` and ``channels`` are the state's. Otherwise ``brokers`` maps the brokers whose
    channel the step read by their broker to their part after it and ``queues`` to their queue after it;
    ``dropped`` maps the brokers whose channel it dropped (``removeBroker``, read for nothing else) to the
    controller epoch whose requests it dropped, and ``appended`` the brokers it sent to (but those read) to the
    requests it appended to their queue (after the drop); the UpdateMetadata requests at the heads of those
    queues are applied when the effect is (:meth:`ControllerStepMemo._settle`). ``queued``, in a situation not keyed
    on the events behind the head of the controller's queue: the events the step queued, appended to those behind
    the head of the state the effect is applied to (``controller``'s own queue is its first state's). ``successor``
    False: the action has none. ``held`` keeps the parts keyed on by identity alive while the effect is stored."""

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
    dropped: Any = None
    appended: Any = None
    queued: tuple[ControllerEvent, ...] | None = None
    held: tuple[Any, ...] = attrs.field(default=(), eq=False, repr=False)


class ControllerStepMemo(_Memo):
    """The effects of the active controller's steps (``ControllerProcessEvent``, raced or not) by situation: the
    action, the ZooKeeper part, the controller's tables but its queue, the zombie part, the budget and the history
    (by identity), the controller's epoch, the head of its queue and the standby reassignments (by value), the
    events behind the head when the situation's first step read them (``_EVENTS``), then on the channels its first
    step read by their broker (:class:`_Touched`), or on all brokers and channels when that step read the brokers or
    read the channels other than by their broker.
    ``take(step, action, settle=False)`` is the model's step without the UpdateMetadata requests at the heads,
    which the memo applies itself after watching the step."""

    kinds = frozenset((ActionKind.ControllerProcessEvent,))

    def __init__(self, scenario: Scenario, take: Callable[..., Any], *, entries: int = MEMO_ENTRIES,
                 intern: Callable[[Any], Any] = _itself, last: LastState | None = None):
        super().__init__(scenario, take, entries=entries, intern=intern, last=last)
        self.read_queue = False  # whether the last step taken read the events behind the head of the queue
        self.rejected_at_heads = False  # whether a broker rejected a request at its head in the last step taken
        # (id(broker part), id(UpdateMetadata request)) -> (the part after it, the part, the request, and if the broker
        # rejected it: (the log's line, the reason))
        self._metadata: dict[tuple[int, int], tuple[BrokerState, BrokerState, Request, tuple[str, str] | None]] = {}

    def successor(self, state: ClusterState, action: Any) -> ClusterState | None:
        if not self.entries or self._seen(state)[1]:
            return self._step(state, action)[0]
        controller = state.controller
        events = controller.events
        head = events[0] if events else None
        # the head's broker_epoch (a report's, left out of its equality) is in the step's log: key on it too
        key: tuple[Any, ...] = (action, controller.epoch, head, -1 if head is None else head.broker_epoch,
                                state.standby_reassignments,
                                _PACK_CONTROLLER(id(state.zk), id(state.zombie), id(state.budget), id(state.history),
                                                 *map(id, _context_of(controller))))
        effects = self._effects
        effect = effects.get(key)
        queue_keyed = effect is _EVENTS
        if queue_keyed:
            key = (key, _ids(events))
            effect = effects.get(key)
        if effect is _WHOLE:
            key = _keyed_on_all(key, state)
            effect = effects.get(key)
            if effect is None:
                return self._watched_step(state, action, key, _WHOLE, queue_keyed)
        elif isinstance(effect, _Touched):
            touched = effect
            key = touched.key(key, state)
            effect = effects.get(key)
            if effect is None:
                return self._watched_step(state, action, key, touched, queue_keyed)
        elif effect is None:
            return self._watched_step(state, action, key, None, queue_keyed)
        if effect is _NOT_MEMOISED:
            return self._step(state, action)[0]
        return self._apply(state, effect)

    @staticmethod
    def _identities(situation: tuple[Any, ...]) -> tuple[int, ...]:
        # (action, epoch, head, its broker epoch, standby reassignments, ZooKeeper, the zombie, the budget, the
        # history and the context's tables): the zombie may be None and a table empty, which no state holds as a part
        zk, _zombie, *held = _unpacked(situation[5])
        return (zk, *(i for i in held if i != _EMPTY))

    def _step(self, state: ClusterState, action: Any) -> tuple[ClusterState | None, Any, dict[int, Any]]:
        """The step's successor; what it touched before the heads were settled: ``_WHOLE`` when it read the
        brokers or a channel other than by its broker (iterating over them), else the :class:`_Touched` brokers;
        and every channel's queue before the heads were settled. ``self.read_queue``: whether the step read the
        events behind the head of the controller's queue; ``self.rejected_at_heads``: whether a broker rejected an
        UpdateMetadata request at the head of its channel (settling the heads logs nothing else)."""
        step = Step(self.scenario, state)
        queue_read = _Watch()
        step.events = step.watch_events = _QueueBehindHead(step.events)
        step.events.watch = queue_read
        self.read_queue = self.rejected_at_heads = False
        watch = _ChannelWatch()
        channels = _ChannelsDict((b, _channel_list(q, watch, b)) for b, q in state.channels)
        channels.watch = watch
        step.channels = channels
        step.remove_broker_channel = _DroppingChannel(step, watch, dict(state.channels))  # type: ignore[method-assign]
        try:
            taken = self.take(step, action, settle=False)
        finally:
            # The watch records no more, so a channel dropped from here on is dropped as Step drops it; without
            # the attribute, the step and the _DroppingChannel that holds it form no cycle, and the step and its
            # watches go by reference counting rather than at the cyclic collector's next pass.
            del step.remove_broker_channel
        watch.recording = queue_read.recording = False
        self.read_queue = queue_read.read or not step.events.head_taken
        if watch.whole or "brokers" in step.__dict__:
            touched: Any = _WHOLE
        else:
            # The brokers the step sent requests to (appending to a channel reads nothing of it)
            before = dict(state.channels)
            touched = _Touched(
                tuple(sorted(b for b, q in channels.items()
                             if b in watch.dropped or len(q) > len(before.get(b, ())))),
                tuple(sorted(watch.keys)), tuple(sorted(watch.dropped.items())))
        if not taken:
            return None, touched, {}
        unsettled = {b: tuple(q) for b, q in channels.items()}
        step.channels = {b: list(q) for b, q in channels.items()}
        logged = len(step.messages)
        environment.apply_update_metadata_at_heads(step)
        self.rejected_at_heads = len(step.messages) != logged
        return step.freeze(), touched, unsettled

    def _watched_step(self, state: ClusterState, action: Any, key: tuple[Any, ...],
                      keyed_on: Any, queue_keyed: bool) -> ClusterState | None:
        """The step taken in full and its effect stored under ``key``, which is keyed on ``keyed_on``: None (the
        situation alone), ``_WHOLE`` (all brokers and channels) or the :class:`_Touched` brokers and channels;
        and (``queue_keyed``) on the events behind the head of the controller's queue, else on its head alone."""
        child, touched, unsettled = self._step(state, action)
        if not queue_keyed and self.read_queue:
            if keyed_on is not None:
                return child  # read the queue behind its head, which its situation does not key on: not memoised
            self._store(key, _EVENTS)
            key, queue_keyed = (key, _ids(state.controller.events)), True
        if keyed_on is None:
            if touched is _WHOLE:
                self._store(key, _WHOLE)
                key = _keyed_on_all(key, state)
            elif touched.channels:
                self._store(key, touched)
                key = touched.key(key, state)
            keyed_on = touched
        elif keyed_on is not _WHOLE and touched != keyed_on:
            return child  # another path than the situation's first step: not memoised
        whole = keyed_on is _WHOLE
        effect = (_ControllerEffect(False) if child is None
                  else self._effect_of(state, child, whole, touched, unsettled, queue_keyed))
        if effect is not None:
            self._store(key, effect)
        return child

    def _effect_of(self, state: ClusterState, child: ClusterState, whole: bool, touched: Any,
                   unsettled: dict[int, Any], queue_keyed: bool) -> Any:
        """The step's effect; ``_NOT_MEMOISED`` when, not keyed on all brokers and channels, it changed a broker
        or a channel it did not read other than by dropping it (``removeBroker``) and appending requests, or the
        effect applied to ``state`` does not give ``child``; None (nothing to store) when, not keyed on all brokers
        and channels, a broker rejected an UpdateMetadata at its head (the rejection is in the step's log, which the
        effect keeps, and another state's brokers may reject others)."""
        held = (state.zk, state.controller, state.zombie, state.budget, state.history, state.brokers,
                *(q for _, q in state.channels))
        intern = self.intern
        common: dict[str, Any] = dict(
            zk=intern(child.zk), controller=intern(child.controller),
            zombie=None if child.zombie is None else intern(child.zombie),
            standby_reassignments=child.standby_reassignments, budget=intern(child.budget),
            history=intern(child.history), log=self._log(child.log), held=held)
        if not queue_keyed:
            common["queued"] = _queued(state, child)
            if common["queued"] is None:
                return _NOT_MEMOISED
        if whole:
            effect = _ControllerEffect(True, whole=True, brokers=tuple(map(intern, child.brokers)),
                                       channels=tuple((b, tuple(map(intern, q))) for b, q in child.channels),
                                       **common)
            return effect if self._apply(state, effect) == child else _NOT_MEMOISED
        if self.rejected_at_heads:
            return None
        before = dict(state.channels)
        after = dict(child.channels)
        if (len(child.brokers) != len(state.brokers) or set(after) - {b.id for b in state.brokers}
                or any(b0.id != b1.id for b0, b1 in zip(state.brokers, child.brokers, strict=True))):
            return _NOT_MEMOISED
        dropped = dict(touched.dropped)
        brokers, queues, appended = {}, {}, {}
        for b in touched.channels:
            brokers[b] = intern(child.broker(b))
            queues[b] = tuple(map(intern, after.get(b, ())))
        for b in touched.brokers:
            if b in touched.channels:
                continue
            base = before.get(b, ())
            if b in dropped:
                base = tuple(r for r in base if r.controller_epoch != dropped[b])
            queue = unsettled.get(b, ())
            if len(queue) < len(base) or any(r0 is not r1 for r0, r1 in zip(base, queue, strict=False)):
                return _NOT_MEMOISED
            if len(queue) > len(base):
                appended[b] = tuple(map(intern, queue[len(base):]))
        effect = _ControllerEffect(True, brokers=_shared(brokers), queues=_shared(queues), dropped=_shared(dropped),
                                   appended=_shared(appended), **common)
        return effect if self._apply(state, effect) == child else _NOT_MEMOISED

    def _settle(self, broker: BrokerState, queue: tuple[Request, ...],
                rejected: list[tuple[str, str]]) -> tuple[BrokerState, tuple[Request, ...]]:
        """:func:`~model.zk.environment.environment.apply_update_metadata_at_heads` for one broker whose channel
        holds ``queue``: its part and its queue after it applied the UpdateMetadata requests at the head (a failed
        broker applies none); each request it rejects (stale: it takes the request and stays as it was) adds (the
        log's line, the reason) to ``rejected``. Each request applied to a part is worked out once (``_metadata``,
        by identity, holding both): steps in other situations send the same requests to brokers in the same
        parts."""
        if not broker.alive:
            return broker, queue
        metadata = self._metadata
        n = 0
        while n < len(queue) and queue[n].kind is RequestKind.UpdateMetadata:
            request = queue[n]
            key = (id(broker), id(request))
            known = metadata.get(key)
            if known is None:
                after, rejection = environment.update_metadata_outcome(self.scenario, broker, request)
                if len(metadata) >= self.entries:
                    metadata.clear()
                known = metadata[key] = (
                    broker if rejection else self.intern(after), broker, request,
                    (environment.rejection_message(broker.id, request, rejection), rejection) if rejection else None)
            if known[3] is not None:
                rejected.append(known[3])
            broker = known[0]
            n += 1
        return broker, queue[n:]

    def _apply(self, state: ClusterState, effect: _ControllerEffect) -> Any:
        """The successor of ``state`` by the stored ``effect``."""
        if not effect.successor:
            return None
        controller = effect.controller
        if effect.queued is not None:
            events = state.controller.events[1:] + effect.queued
            if events != controller.events or any(e0.broker_epoch != e1.broker_epoch
                                                  for e0, e1 in zip(events, controller.events, strict=True)):
                # the broker epoch a report shows of an event is left out of its equality: the state's own events
                controller = _with_queue(controller, events)
        return _successor(state, effect, controller, effect.zombie, self._settle)


def _successor(state: ClusterState, effect: _ControllerEffect, controller: ControllerState, zombie: Any,
               settle: Callable[[BrokerState, tuple[Request, ...], list[tuple[str, str]]], Any]) -> Any:
    """The successor of ``state`` by ``effect`` with ``controller`` and ``zombie``: its brokers and channels those
    of the effect (``whole``), else the state's with the effect's parts and queues of the brokers it read, and the
    channels it dropped and appended to, their heads settled by ``settle``, its log the effect's with the requests
    rejected there (``apply_update_metadata_at_heads`` logs them after the step's own lines, broker by broker,
    and the last one's reason is the log's ``rejection``)."""
    if effect.whole:
        return ClusterState(effect.zk, controller, effect.brokers, effect.channels, effect.budget,
                            effect.history, effect.log, zombie, effect.standby_reassignments)
    known, queues, dropped, appended = effect.brokers, effect.queues, effect.dropped, effect.appended
    queue_of = dict(state.channels)
    rejected: list[tuple[str, str]] = []
    changed = False
    brokers = []
    channels = []
    for b in state.brokers:
        i = b.id
        q = queues.get(i)
        if q is not None:
            b, changed = known[i], True
        else:
            q = queue_of.get(i, ())
            epoch = dropped.get(i)
            if epoch is not None:
                q = tuple(r for r in q if r.controller_epoch != epoch)
            added = appended.get(i)
            if added:
                q += added
            if q and (epoch is not None or added):
                settled = settle(b, q, rejected)
                if settled[0] is not b:
                    b, changed = settled[0], True
                q = settled[1]
        brokers.append(b)
        if q:
            channels.append((i, q))
    log = effect.log
    if rejected:
        log = attrs.evolve(log, messages=log.messages + tuple(line for line, _ in rejected), rejection=rejected[-1][1])
    return ClusterState(effect.zk, controller, tuple(brokers) if changed else state.brokers,
                        tuple(channels), effect.budget, effect.history, log, zombie, effect.standby_reassignments)


@attrs.frozen
class _Touched:
    """The brokers and channels a situation's controller steps touch: ``brokers``, those it sent requests to or
    whose channel it dropped; ``channels``, those it read by their broker (other than by dropping the channel as
    its first use of it); ``dropped``, (broker, controller epoch) of the channels it dropped
    (``ControllerChannelManager.removeBroker``). The situation then keys on the parts and the requests of the
    channels read, by identity: a step's path does not depend on the others, which it only appends to or drops,
    and whose heads the memo settles (:meth:`ControllerStepMemo._settle`)."""

    brokers: tuple[int, ...]
    channels: tuple[int, ...]
    dropped: tuple[tuple[int, int], ...] = ()

    def key(self, key: tuple[Any, ...], state: ClusterState) -> tuple[Any, ...]:
        queues = dict(state.channels)
        parts = {b.id: b for b in state.brokers}
        ids: list[int] = []
        for b in self.channels:
            queue = queues.get(b, ())
            ids += (id(parts.get(b)), len(queue), *map(id, queue))
        return (key, _PACK[len(ids)](*ids))


class _DroppingChannel:
    """A watched step's ``remove_broker_channel`` (``ControllerChannelManager.removeBroker``): a channel the step
    had neither read nor appended to is dropped without counting as a read (the memo drops the same requests,
    those of the acting controller's epoch, when it applies the effect); any other is dropped as a read."""

    def __init__(self, step: Step, watch: _ChannelWatch, queues: dict[int, tuple[Request, ...]]):
        self.step = step
        self.watch = watch
        self.queues = queues

    def __call__(self, broker: int) -> None:
        step, watch = self.step, self.watch
        queue = dict.get(step.channels, broker)  # neither this nor its length is a read of the step's
        if (not watch.recording or broker in watch.dropped or broker in watch.keys
                or (0 if queue is None else list.__len__(queue)) != len(self.queues.get(broker, ()))):
            Step.remove_broker_channel(step, broker)
            return
        watch.dropped[broker] = step.epoch
        watch.recording = False
        try:
            Step.remove_broker_channel(step, broker)
        finally:
            watch.recording = True


class _ChannelWatch:
    """Which channels a watched controller step read: by their broker (``keys``), or all of them (``whole``); and
    those it dropped without reading them (``dropped``: broker -> the controller epoch whose requests went)."""

    def __init__(self) -> None:
        self.keys: set[int] = set()
        self.dropped: dict[int, int] = {}
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
    ids = [len(state.brokers), *map(id, state.brokers)]
    for b, queue in state.channels:
        ids += (b, len(queue), *map(id, queue))
    return (key, _PACK[len(ids)](*ids))


#: The step's lazily thawed fields an environment step reads without its situation keying on their values: the
#: brokers and channels (watched by broker), ZooKeeper's and the history's tables (its situation keys on those parts).
_ENVIRONMENT_OWN = frozenset(("brokers", "channels", *(f"zk_{a.name}" for a in attrs.fields(ZkState)),
                              *(a.name for a in attrs.fields(History))))


@attrs.frozen
class _Keyed:
    """What an environment situation's first step read beyond the situation: the controller's tables and event queue
    (:class:`_Reads`, by value) and the brokers and channels it read by their broker (:class:`_Touched`) or all of
    them (``_WHOLE``)."""

    reads: _Reads
    touched: Any

    def key(self, key: tuple[Any, ...], state: ClusterState) -> tuple[Any, ...]:
        key = (key, *self.reads.values(state))
        return _keyed_on_all(key, state) if self.touched is _WHOLE else self.touched.key(key, state)

    def covers(self, reads: _Reads, touched: Any) -> bool:
        """Whether a step that read ``reads`` and ``touched`` read nothing that this does not key on."""
        return reads.within(self.reads) and (self.touched is _WHOLE or (touched is not _WHOLE
                                             and set(touched.channels).issubset(self.touched.channels)))


def _as_they_are(broker: BrokerState, queue: tuple[Request, ...],
                 rejected: list[tuple[str, str]]) -> tuple[BrokerState, tuple[Request, ...]]:
    """An environment step's effect drops and appends to no channel: :func:`_successor` settles none."""
    return broker, queue


class EnvironmentStepMemo(_Memo):
    """The effects of the environment's steps that change a broker, ZooKeeper and the controller's queue (a broker
    fails or restarts, applies a request and dies, propagates its ISR changes; an admin creates or deletes a topic)
    by situation: the action, the ZooKeeper part, the budget and the history (by
    identity), the scalars a step copies (``copied_scalars``), the zombie's epoch and the standby reassignments (by
    value). The first step taken in a situation is watched (:class:`_Keyed`): the situation also keys on the values
    of the controller's tables it read, on the events it asked for in the controller's queue (whether each waits
    there: :meth:`~model.zk.state.step.Step.enqueue_once`) or the whole queue when it read it otherwise, and on the
    parts and requests of the brokers and channels it read by their broker (:class:`_Touched`), or of all of them
    when it read them otherwise. The effect: ZooKeeper's part,
    the parts and queues of the brokers read, the events appended to the controller's queue (applied to the
    state's own controller, which the step may change no further), the budget, the history and the log. A later
    step in a situation that reads beyond what it keys on is taken in full and not memoised, and so is a first step
    whose stored effect, applied to its own state, does not give its successor.
    ``take(step, action, settle=False)`` is the model's step without the UpdateMetadata requests at the heads,
    which the memo applies after watching the step."""

    kinds = frozenset((ActionKind.BrokerFailure, ActionKind.BrokerStartup, ActionKind.BrokerAppliesRequestAndDies,
                       ActionKind.BrokerPropagatesIsrChanges, ActionKind.AdminCreateTopic, ActionKind.AdminDeleteTopic))

    def successor(self, state: ClusterState, action: Any) -> ClusterState:
        seen = self._seen(state)
        if not self.entries or seen[1]:
            return self._plain_step(state, action)
        key: tuple[Any, ...] = (action, id(state.zk), *seen[2])
        effects = self._effects
        effect = effects.get(key)
        if isinstance(effect, _Keyed):
            keyed = effect
            key = keyed.key(key, state)
            effect = effects.get(key)
            if effect is None:
                return self._watched_step(state, action, key, keyed)
        elif effect is None:
            return self._watched_step(state, action, key, None)
        if effect is _NOT_MEMOISED:
            return self._plain_step(state, action)
        return self._apply(state, effect)

    @staticmethod
    def _identities(situation: tuple[Any, ...]) -> tuple[int, ...]:
        # (action, ZooKeeper, the budget and the history, scalars...)
        return (situation[1], *_unpacked(situation[2]))

    def _plain_step(self, state: ClusterState, action: Any) -> ClusterState:
        step = Step(self.scenario, state)
        self.take(step, action)
        return step.freeze()

    def _step(self, state: ClusterState, action: Any) -> tuple[ClusterState, _Reads, Any]:
        """The step's successor, the controller's tables and queue it read (:class:`_Reads`), and the brokers and
        channels it read: ``_WHOLE``, or the :class:`_Touched` brokers read by their broker."""
        step = Step(self.scenario, state)
        queue_read = _Watch()
        queue = step.events = step.watch_events = _QueueAsked(step.events, queue_read)
        watch = _ChannelWatch()
        brokers = _ChannelsDict((b.id, b) for b in state.brokers)
        channels = _ChannelsDict((b, _channel_list(q, watch, b)) for b, q in state.channels)
        brokers.watch = channels.watch = watch
        step.brokers, step.channels = brokers, channels
        taken = self.take(step, action, settle=False)
        assert taken, f"{action} has no successor"
        watch.recording = queue_read.recording = False
        reads = _Reads(tuple(n for n in step.__dict__ if n in vars(Step) and n not in _ENVIRONMENT_OWN),
                       queue_read.read, () if queue_read.read else tuple(queue.asked))
        touched = _WHOLE if watch.whole else _Touched((), tuple(sorted(watch.keys)))
        environment.apply_update_metadata_at_heads(step)  # a broker restarted with an UpdateMetadata at its head
        return step.freeze(), reads, touched

    def _watched_step(self, state: ClusterState, action: Any, key: tuple[Any, ...],
                      keyed: _Keyed | None) -> ClusterState:
        """The step taken in full and its effect stored under ``key``, which is keyed on ``keyed`` (None: the
        situation alone, whose first step decides what it keys on)."""
        child, reads, touched = self._step(state, action)
        if keyed is None:
            if reads or touched is _WHOLE or touched.channels:
                keyed = _Keyed(reads, touched)
                self._store(key, keyed)
                key = keyed.key(key, state)
        elif not keyed.covers(reads, touched):
            return child  # read what its situation does not key on (another path after a read): not memoised
        self._store(key, self._effect_of(state, child, touched))
        return child

    def _effect_of(self, state: ClusterState, child: ClusterState, touched: Any) -> Any:
        """The step's effect; ``_NOT_MEMOISED`` when it changed the controller but by appending events, or the
        zombie, or the effect applied to ``state`` does not give ``child`` (it changed a broker or a channel it did
        not read)."""
        queued = _appended_events(state.controller, child.controller)
        if queued is None or child.zombie is not state.zombie:
            return _NOT_MEMOISED
        intern = self.intern
        common: dict[str, Any] = dict(
            zk=intern(child.zk), standby_reassignments=child.standby_reassignments, budget=intern(child.budget),
            history=intern(child.history), log=self._log(child.log), queued=queued,
            held=(state.zk, state.budget, state.history, state.brokers, *(q for _, q in state.channels)))
        if touched is _WHOLE:
            effect = _ControllerEffect(True, whole=True, brokers=tuple(map(intern, child.brokers)),
                                       channels=tuple((b, tuple(map(intern, q))) for b, q in child.channels),
                                       **common)
        else:
            parts = {b.id: b for b in child.brokers}
            read = [b for b in touched.channels if b in parts]
            effect = _ControllerEffect(True, brokers=_shared({b: intern(parts[b]) for b in read}),
                                       queues=_shared({b: tuple(map(intern, child.channel(b))) for b in read}),
                                       dropped=_NONE, appended=_NONE, **common)
        return effect if self._apply(state, effect) == child else _NOT_MEMOISED

    @staticmethod
    def _apply(state: ClusterState, effect: _ControllerEffect) -> Any:
        controller = state.controller
        if effect.queued:
            controller = _with_queue(controller, controller.events + effect.queued)
        return _successor(state, effect, controller, state.zombie, _as_they_are)
