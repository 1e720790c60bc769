"""A hash-consed Kafka state, emulated on a search's own transitions: what a memo hit would cost if a state were a
tuple of part numbers, beside what it costs now.

The local search spends most of its time on transitions whose step a transition memo already knows
(:mod:`model.zk.transition_memo`): the hit builds the successor as objects (a new brokers table, channels table and,
when the step queued events, a new controller), the codec writes the successor's bytes (copying the bytes of the
parts it knows) and BLAKE2b hashes them. This trial sizes a different shape of the same state before anyone builds
it. It runs the scenario's breadth-first search through its first ``--transitions`` transitions with the model as
it is, the states kept as the search keeps them (:meth:`~model.zk.kafka_model.KafkaControllerModel.intern_state`),
and records each (state, action, successor); it compares the transitions whose step, taken again, is a memo's hit
(about 99 %). It numbers every part (ZooKeeper, a controller, a broker, a request, the budget, the history; by its
bytes, as the codec knows it) and every table (the brokers, a channel's queue, the channels; by the numbers of its
elements), each number with its piece (the bytes it gives a state's encoding: a part's own, a table's length and
its elements' pieces) and a 16-byte digest, and writes each transition as what a stored effect would carry in
that shape: the parts it replaces by number, the brokers it replaces by position and the queues it replaces by
broker. The emulated hit, timed over every transition in the order found:

1. one look-up of an effect by a key of eight ints (the action and part numbers; the memo's key now holds the same
   identities packed in bytes), the key made beforehand: what working it out from a state costs is timed apart,
   ``next_state`` with the memos' ``_apply`` returning the state (``keyed``), and added to the emulated path in the
   figures that say so, as are keys made from part numbers (``numbered_keys``: built from a state's numbers, first
   and further keys, each checked to find what the memo's own key finds);
2. the successor's brokers table, channels table and controller, each found from (the table or controller the
   state holds, the effect's change) in a dictionary filled as the run goes; on a miss, the table made, its piece
   joined (or digest computed) from its elements' and its number looked up, or the controller made
   (``ControllerState`` built field by field) and written by the codec (and digested);
3. the successor as a tuple of eight numbers, its 8-byte fingerprint and a set look-up for it. Two fingerprints:
   the search's own, BLAKE2b over the state's encoding joined from its eight pieces (every fingerprint as it is),
   and BLAKE2b over its eight digests (every fingerprint changed).

Every emulated successor must be the real successor's numbers, every fingerprint joined from the pieces the one
the search gives the successor, and every path must find the same count of distinct successors (else exit 1).
The path as it is, timed over the same transitions: ``next_state`` (a memo's hit), ``encode`` and BLAKE2b. CPU
seconds, ``--rounds`` rounds, the three paths alternating, medians printed.

    python bench/hashcons_trial.py [--scenario default] [--transitions 200000] [--rounds 3]

Its memory (``held``): the dictionaries of step 2, replayed over the same transitions and forgotten level by level as
the memos are, at their largest (entries, bytes), and the tables and controllers they alone hold after a level.

What the trial leaves out, on both sides: the steps taken in full (the memos' misses), the properties, the enabled
actions and the engine's bookkeeping. A hash-consed model would still need the parts as objects for those, and the
bytes it stores (Parquet, resume) would be joined for new states only. Figures and what they project:
docs/performance.md.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import hashlib
import statistics
import struct
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kmc import compose  # noqa: E402
from model.zk import transition_memo  # noqa: E402
from model.zk.state import codec as codec_module  # noqa: E402
from model.zk.state.step import FROZEN_TABLES, Step, copied_scalars  # noqa: E402
from model.zk.state.values import ControllerState  # noqa: E402

#: The fingerprint's width, as the search's default.
FINGERPRINT_BYTES = 8


def _ints(*values: int) -> bytes:
    """Ints as the codec writes them between parts (native 4-byte ints)."""
    return struct.pack(f"{len(values)}i", *values)


class Numbers:
    """Parts and tables numbered by content, each with its 16-byte digest and its piece: the bytes it gives a state's
    encoding where the state holds it (number 0: no zombie)."""

    def __init__(self, codec: Any):
        self.codec = codec
        self.by_key: dict[Any, int] = {}
        self.digests: list[bytes] = [bytes(16)]
        self.pieces: list[bytes] = [_ints(0)]
        self.contents: list[Any] = [None]
        self._by_id: dict[int, int] = {}
        self._held: list[Any] = []  # the parts numbered by identity, kept alive

    def _number(self, key: Any, content: Any, piece: Callable[[], bytes]) -> int:
        n = self.by_key.get(key)
        if n is None:
            n = self.by_key[key] = len(self.digests)
            data = piece()
            self.pieces.append(data)
            self.digests.append(hashlib.blake2b(data, digest_size=16).digest())
            self.contents.append(content)
        return n

    def part(self, part: Any) -> int:
        n = self._by_id.get(id(part))
        if n is None:
            data = self.written(part)
            n = self._number((type(part).__name__, data), part, lambda: data)
            self._by_id[id(part)] = n
            self._held.append(part)
        return n

    def written(self, part: Any) -> bytes:
        _kind, write, _read = codec_module._PART_CODE[type(part)]
        data: bytes = self.codec._written(write, part)
        return data

    def table(self, elements: tuple[Any, ...]) -> int:
        return self._number(("table", elements), elements, lambda: self.table_piece(elements))

    def table_piece(self, elements: tuple[Any, ...]) -> bytes:
        """A table's bytes from its elements' pieces: its length, then each element (a channel: its broker and its
        queue's piece), as the codec's table writers give them."""
        pieces = self.pieces
        return _ints(len(elements)) + b"".join(pieces[e] if type(e) is int else _ints(e[0]) + pieces[e[1]]
                                               for e in elements)

    def table_digest(self, elements: tuple[Any, ...]) -> bytes:
        """A table's digest from its elements' digests."""
        digests = self.digests
        return hashlib.blake2b(b"".join(digests[e] if type(e) is int else _ints(e[0]) + digests[e[1]]
                                        for e in elements), digest_size=16).digest()

    def state(self, s: Any) -> tuple[int, ...]:
        part, table = self.part, self.table
        zombie = 0 if s.zombie is None else part(s.zombie)
        standby = s.standby_reassignments
        topic = self.codec.topic_index
        return (part(s.zk), part(s.controller), table(tuple(part(b) for b in s.brokers)),
                table(tuple((b, table(tuple(part(r) for r in q))) for b, q in s.channels)),
                part(s.budget), part(s.history),
                zombie and self._number(("zombie", zombie), None, lambda: _ints(1) + self.pieces[zombie]),
                self._number(("standby", standby), None, lambda: _ints(len(standby)) + b"".join(
                    _ints(topic[t], p, len(replicas), *replicas) for (t, p), replicas in standby)))


def record(scenario: str, transitions: int) -> tuple[Any, list[tuple[Any, Any, Any]], list[list[Any]]]:
    """The model, the first ``transitions`` transitions of its breadth-first search, levels in order, and the states
    of each level expanded (the parents of those transitions, level by level, and the level after the last)."""
    model: Any = compose.factory_for(compose.resolve_scenario(scenario))()
    first = model.intern_state(model.init_states()[0])
    seen = {model.encode(first)}
    level = [first]
    levels = []
    found: list[tuple[Any, Any, Any]] = []
    while level and len(found) < transitions:
        levels.append(level)
        following = []
        for state in level:
            for action in model.actions(state):
                child = model.next_state(state, action)
                if child is None:
                    continue
                found.append((state, action, child))
                data = model.encode(child)
                if data not in seen:
                    seen.add(data)
                    following.append(model.intern_state(child))
        level = following
    levels.append(level)
    return model, found[:transitions], levels


def hits(model: Any, found: list[tuple[Any, Any, Any]]) -> list[tuple[Any, Any, Any]]:
    """The transitions whose step, taken again with the memos as the recording left them, is a memo's hit: no step
    taken in full (``Step.freeze`` not called; about 1 % are, kinds the memos leave out and steps they do not
    memoise)."""
    taken = [0]
    freeze = Step.freeze

    def counted(step: Step) -> Any:
        taken[0] += 1
        return freeze(step)

    kept = []
    Step.freeze = counted  # type: ignore[method-assign,assignment]
    try:
        for transition in found:
            taken[0] = 0
            model.next_state(transition[0], transition[1])
            if not taken[0]:
                kept.append(transition)
    finally:
        Step.freeze = freeze  # type: ignore[method-assign]
    return kept


def effects(model: Any, numbers: Numbers, found: list[tuple[Any, Any, Any]]) -> list[tuple[Any, ...]]:
    """Per transition: (key, the state's numbers, the successor's numbers, the brokers replaced by position, the
    queues replaced by broker, the successor's controller, the successor's fingerprint as the search makes it)."""
    rows = []
    contents = numbers.contents
    actions: dict[Any, int] = {}
    for state, action, child in found:
        before, after = numbers.state(state), numbers.state(child)
        brokers: tuple[Any, ...] | None
        if before[2] == after[2]:
            brokers = None
        elif len(contents[before[2]]) == len(contents[after[2]]):
            brokers = tuple((i, y) for i, (x, y) in enumerate(zip(contents[before[2]], contents[after[2]], strict=True))
                            if x != y)
        else:
            brokers = ("all", after[2])
        queues_before, queues_after = dict(contents[before[3]]), dict(contents[after[3]])
        queues = None if before[3] == after[3] else tuple(sorted(
            (b, queues_after.get(b, 0)) for b in queues_before.keys() | queues_after.keys()
            if queues_before.get(b, 0) != queues_after.get(b, 0)))
        code = actions.setdefault(action, len(actions))
        key = (code, before[0], before[1], before[4], before[5], before[6], before[7], len(contents[before[3]]))
        fingerprint = hashlib.blake2b(model.encode(child), digest_size=FINGERPRINT_BYTES).digest()
        rows.append((key, before, after, brokers, queues, child.controller, fingerprint))
    return rows


def emulate(numbers: Numbers, rows: list[tuple[Any, ...]], fingerprints: str = "bytes"
            ) -> tuple[float, int, tuple[int, int, int], int]:
    """The hash-consed hit over every row: CPU seconds, distinct successors, misses (brokers, channels, controller:
    made, not found) and the successors that differ from the real ones' numbers or, ``fingerprints`` "bytes" (the
    search's own: BLAKE2b over the state's encoding, joined from its parts' and tables' pieces), fingerprints.
    "digests": BLAKE2b over the parts' digests, a table's digest made from its elements' (every fingerprint
    changed)."""
    by_bytes = fingerprints == "bytes"
    stored = {row[0]: row for row in rows}
    brokers_after: dict[Any, int] = {}
    channels_after: dict[Any, int] = {}
    controllers_after: dict[tuple[int, int], int] = {}
    contents = numbers.contents
    hashed = numbers.pieces if by_bytes else numbers.digests  # what the fingerprint hashes, by number
    table, written = numbers.table, numbers.written
    table_hashed = numbers.table_piece if by_bytes else numbers.table_digest  # the same, made for a new table
    fields = [a.name for a in ControllerState.__attrs_attrs__]
    seen: set[bytes] = set()
    misses = [0, 0, 0]
    wrong = 0
    gc.collect()
    started = time.process_time()
    for key, before, after, brokers, queues, controller, real in rows:
        stored.get(key)
        held_brokers = before[2]
        if brokers is not None:
            change = (held_brokers, brokers)
            made = brokers_after.get(change)
            if made is None:
                misses[0] += 1
                if brokers[0] == "all":
                    made = brokers[1]
                else:
                    elements = list(contents[held_brokers])
                    for i, b in brokers:
                        elements[i] = b
                    new = tuple(elements)
                    table_hashed(new)
                    made = table(new)
                brokers_after[change] = made
            held_brokers = made
        channels = before[3]
        if queues is not None:
            change = (channels, queues)
            made = channels_after.get(change)
            if made is None:
                misses[1] += 1
                by_broker = dict(contents[channels])
                for b, q in queues:
                    if q:
                        by_broker[b] = q
                    else:
                        del by_broker[b]
                new = tuple(sorted(by_broker.items()))
                table_hashed(new)
                made = table(new)
                channels_after[change] = made
            channels = made
        held = before[1]
        if after[1] != held:
            change2 = (held, after[1])  # (the controller held, the effect): the controller it makes
            made = controllers_after.get(change2)
            if made is None:
                misses[2] += 1
                data = written(ControllerState(*[getattr(controller, f) for f in fields]))
                if not by_bytes:
                    hashlib.blake2b(data, digest_size=16).digest()
                made = after[1]
                controllers_after[change2] = made
            held = made
        successor = (after[0], held, held_brokers, channels, after[4], after[5], after[6], after[7])
        fingerprint = hashlib.blake2b(b"".join([hashed[n] for n in successor]),
                                      digest_size=FINGERPRINT_BYTES).digest()
        if fingerprint not in seen:
            seen.add(fingerprint)
        if successor != after or (by_bytes and fingerprint != real):
            wrong += 1
    seconds = time.process_time() - started
    return seconds, len(seen), (misses[0], misses[1], misses[2]), wrong


@contextlib.contextmanager
def _effects_not_applied() -> Iterator[None]:
    """Each memo's ``_apply`` returning the state it is given (a hit then costs what finding its effect costs), put
    back whatever happens."""
    memos = (transition_memo.BrokerStepMemo, transition_memo.ControllerStepMemo, transition_memo.EnvironmentStepMemo)
    applies = {memo: memo.__dict__["_apply"] for memo in memos}

    def unchanged(*args: Any) -> Any:
        return args[1] if isinstance(args[0], transition_memo._Memo) else args[0]

    for memo in memos:
        memo._apply = unchanged  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        for memo, apply in applies.items():
            memo._apply = apply  # type: ignore[method-assign]


def keyed(model: Any, found: list[tuple[Any, Any, Any]]) -> float:
    """CPU seconds of ``next_state`` over the same transitions with the memos' effects not applied: what the hit as it
    is spends finding its effect (the memo's key worked out from the state, the look-ups, the model's dispatch to the
    memo), which the emulated hit's look-up by a key of ints made beforehand leaves out."""
    step = model.next_state
    with _effects_not_applied():
        gc.collect()
        started = time.process_time()
        for state, action, _child in found:
            step(state, action)
        return time.process_time() - started


class _Looked(dict[Any, Any]):
    """A memo's effects, its look-ups' results recorded in ``log`` (``numbered_keys``)."""

    log: ClassVar[list[Any]] = []

    def get(self, key: Any, default: Any = None) -> Any:
        value = dict.get(self, key, default)
        _Looked.log.append(value)
        return value


def numbered_keys(model: Any, numbers: Numbers, found: list[tuple[Any, Any, Any]]) -> tuple[float, float, int, int]:
    """What the memos' keys would cost made from part numbers: the memo hits' keys built as a hash-consed model
    would build them, from a state's eight numbers and facts a numbered part would carry (a broker's position in the
    brokers table, a channel's queue and the requests a broker step applies from its head, the unsettled heads, the
    scalars a step copies with the zombie's epoch, the controller's epoch, head event and context, the tables a
    situation reads, the parts and queues of the brokers it touches: each a number, worked out beforehand and held
    here in dictionaries), each first key and, when the memo's first look-up finds that the situation keys further
    (on the tables it read, the event queue, the brokers and channels it touched or all of them), each second key
    as the memo builds it. The memos' own look-ups are recorded first (each ``_apply`` returning the state), and a
    dictionary keyed by the numbers keys is filled with what they found. CPU seconds of the key as it is
    (:func:`keyed`) and of the numbers keys over the same hits, the numbers keys stored, and how many of them would
    find two different entries (the numbers key coarser than the memo's: must be 0)."""
    memos = (model._broker_steps, model._controller_steps, model._environment_steps)
    kind_of = {kind: i for i, memo in enumerate(memos) for kind in type(memo).kinds}
    with _effects_not_applied():
        looked_up = looked_up_in(model, memos, [(state, action) for state, action, _child in found])
    facts, state_numbers = _part_facts(numbers, found)
    codes: dict[Any, int] = {}
    rows = [(state_numbers[id(state)], codes.setdefault(action, len(codes)), action.broker, kind_of[action.kind],
             looked) for (state, action, _child), looked in zip(found, looked_up, strict=True)]
    store: dict[Any, Any] = {}
    _, coarse = _numbers_keys(numbers, facts, rows, store, fill=True)
    return keyed(model, found), _numbers_keys(numbers, facts, rows, store, fill=False)[0], len(store), coarse


def looked_up_in(model: Any, memos: tuple[Any, ...], steps: list[tuple[Any, Any]]) -> list[tuple[Any, ...]]:
    """What the look-ups in ``memos`` find while the model takes each of ``steps`` (state, action), in order; the memos'
    effects are put back whatever happens."""
    effects = [memo._effects for memo in memos]
    try:
        for memo in memos:
            memo._effects = _Looked(memo._effects)
        looked = []
        for state, action in steps:
            _Looked.log = []
            model.next_state(state, action)
            looked.append(tuple(_Looked.log))
        return looked
    finally:
        for memo, kept in zip(memos, effects, strict=True):
            memo._effects = kept


def _part_facts(numbers: Numbers, found: list[tuple[Any, Any, Any]]) -> tuple[dict[Any, Any], dict[int, Any]]:
    """The facts of ``numbered_keys``, for every state the hits start from, each a number (or a small tuple), and
    those states' numbers by the states' identities."""
    def value(tag: str, content: Any) -> int:
        return numbers._number((tag, content), None, lambda: b"")

    facts: dict[Any, Any] = {}
    state_numbers: dict[int, Any] = {}
    for state, _action, _child in found:
        if id(state) in state_numbers:
            continue
        n = state_numbers[id(state)] = numbers.state(state)
        facts.setdefault(("position", n[2]), {b.id: i for i, b in enumerate(state.brokers)})
        for b, queue in state.channels:
            queue_number = numbers.table(tuple(numbers.part(r) for r in queue))
            facts[("queue", n[3], b)] = queue_number
            facts.setdefault(("applied", queue_number),
                             numbers.table(tuple(numbers.part(r) for r in transition_memo._applied(queue))))
        facts.setdefault(("unsettled", n[2], n[3]), transition_memo._unsettled(state))
        zombie = -1 if state.zombie is None else state.zombie.epoch
        facts.setdefault(("scalars", n[0], n[1], n[6]), value("scalars", (copied_scalars(state), zombie)))
        controller = state.controller
        head = controller.events[0] if controller.events else None
        facts.setdefault(("controller", n[1]), value("controller", (
            controller.epoch, head, -1 if head is None else head.broker_epoch,
            tuple(value("context", table) for table in transition_memo._context_of(controller)))))
        facts.setdefault(("events", n[1]), value("events", controller.events))
        for name, table_of in FROZEN_TABLES.items():
            facts.setdefault(("table", n[0], n[1], n[5], name), value(name, table_of(state)))
        for broker in state.brokers:
            facts.setdefault(("touched", n[2], n[3], broker.id),
                             (numbers.part(broker), facts.get(("queue", n[3], broker.id), 0)))
    return facts, state_numbers


def _further(key: Any, found: Any, n: tuple[int, ...], facts: dict[Any, Any]) -> Any:
    """The numbers key that extends ``key`` when a memo's look-up found ``found``, a situation keyed further."""
    if found is transition_memo._EVENTS:
        return (key, facts[("events", n[1])])
    if found is transition_memo._WHOLE:
        return (key, n[2], n[3])
    if isinstance(found, transition_memo._Touched):
        return (key, *[facts[("touched", n[2], n[3], b)] for b in found.channels])
    reads = found.reads if isinstance(found, transition_memo._Keyed) else found
    values = [facts[("table", n[0], n[1], n[5], name)] for name in reads.fields]
    if reads.events:
        values.append(facts[("events", n[1])])
    elif reads.asked:
        values.append((facts[("events", n[1])], reads.asked))
    key = (key, *values)
    if isinstance(found, transition_memo._Keyed):
        touched = found.touched
        if touched is transition_memo._WHOLE:
            return (key, n[2], n[3])
        return (key, *[facts[("touched", n[2], n[3], b)] for b in touched.channels])
    return key


def _numbers_keys(numbers: Numbers, facts: dict[Any, Any], rows: list[tuple[Any, ...]], store: dict[Any, Any], *,
                  fill: bool) -> tuple[float, int]:
    """The numbers keys of every row, looked up in ``store`` (timed), or (``fill``) stored with what the memo's own
    look-ups found, counting the keys that meet two different entries."""
    events, whole = transition_memo._EVENTS, transition_memo._WHOLE
    situated = (transition_memo._Reads, transition_memo._Keyed, transition_memo._Touched)
    contents = numbers.contents
    get = store.get
    coarse = 0
    gc.collect()
    started = time.process_time()
    for n, code, broker, kind, looked in rows:
        unsettled = facts[("unsettled", n[2], n[3])]
        if kind == 0:  # a broker step: its part and the requests it applies, the budget, the history, the scalars
            if unsettled and unsettled != (broker,):
                continue
            key: Any = (code, contents[n[2]][facts[("position", n[2])][broker]],
                        facts[("applied", facts[("queue", n[3], broker)])], n[4], n[5],
                        facts[("scalars", n[0], n[1], n[6])], n[7])
        elif unsettled:
            continue
        elif kind == 1:  # a controller event: the controller's epoch, head and context, ZooKeeper, the zombie, ...
            key = (code, facts[("controller", n[1])], n[0], n[6], n[4], n[5], n[7])
        else:  # an environment step: ZooKeeper, the budget, the history, the scalars
            key = (code, n[0], n[4], n[5], facts[("scalars", n[0], n[1], n[6])], n[7])
        if fill:
            for at, value in enumerate(looked):
                if value is None or value is transition_memo._NOT_MEMOISED:
                    break
                old = store.setdefault(key, value)
                if old is not value and (type(old) is not type(value) or old != value):
                    coarse += 1
                if at + 1 < len(looked):
                    key = _further(key, value, n, facts)
            continue
        value = get(key)
        while value is not None and (value is events or value is whole or isinstance(value, situated)):
            key = _further(key, value, n, facts)
            value = get(key)
    return time.process_time() - started, coarse


def held(numbers: Numbers, found: list[tuple[Any, Any, Any]], rows: list[tuple[Any, ...]], levels: list[list[Any]],
         *, forget: bool = True) -> dict[str, int]:
    """What the hit's dictionaries (the brokers table, channels table and controller a change makes, by (the one
    held, the change)) hold when they are forgotten level by level as the memos are
    (:meth:`~model.zk.kafka_model.KafkaControllerModel.retain_parts`): after the transitions of a level, the entries
    whose first key is no controller or table that a state of the next level holds are dropped. Replayed over the
    rows in the order found, the successors as the rows give them (``emulate`` checks that a hit finds them).
    ``peak_bytes``: the most the dictionaries and their keys held at the end of a level, before it is forgotten
    (tracemalloc's current size there: the bookkeeping of the forgetting is freed by then);
    ``entries``: the most entries at once; ``orphans`` and ``orphan_bytes``: the most tables and controllers held by
    the dictionaries alone after a level is forgotten (no state of the next level holds them: a numbering would keep
    them while an entry names them), with their pieces' and contents' bytes. ``forget`` False keeps every entry (the
    dictionaries unbounded)."""
    depth = {id(s): k for k, level in enumerate(levels) for s in level}
    live_after: list[set[int]] = []  # per level k: the controllers and tables the states of level k + 1 hold
    for level in levels[1:]:
        live: set[int] = set()
        for s in level:
            n = numbers.state(s)
            live.update((n[1], n[2], n[3]))
        live_after.append(live)
    depths = [depth[id(state)] for state, _action, _child in found]
    dicts: tuple[dict[Any, int], ...] = ({}, {}, {})
    brokers_after, channels_after, controllers_after = dicts
    entries = orphans = orphan_bytes = peak = 0
    contents, pieces = numbers.contents, numbers.pieces
    gc.collect()
    tracemalloc.start()
    try:
        at = depths[0] if depths else 0
        for k, (_key, before, after, brokers, queues, _controller, _real) in zip(depths, rows, strict=True):
            if k != at and forget:
                entries = max(entries, sum(map(len, dicts)))
                peak = max(peak, tracemalloc.get_traced_memory()[0])
                live = live_after[at]
                for made in dicts:
                    for change in [change for change in made if change[0] not in live]:
                        del made[change]
                values = {v for made in dicts for v in made.values()} - live
                if len(values) > orphans:
                    orphans = len(values)
                    orphan_bytes = sum(len(pieces[v]) + sys.getsizeof(contents[v]) for v in values)
                at = k
            if brokers is not None:
                brokers_after.setdefault((before[2], brokers), after[2])
            if queues is not None:
                channels_after.setdefault((before[3], queues), after[3])
            if after[1] != before[1]:
                controllers_after.setdefault((before[1], after[1]), after[1])
        entries = max(entries, sum(map(len, dicts)))
        peak = max(peak, tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    return {"peak_bytes": peak, "entries": entries, "orphans": orphans, "orphan_bytes": orphan_bytes,
            "distinct": sum(map(len, levels))}


def current(model: Any, found: list[tuple[Any, Any, Any]]) -> tuple[float, int]:
    """``next_state``, ``encode`` and BLAKE2b over the same transitions: CPU seconds, distinct successors."""
    new_hasher = hashlib.blake2b(digest_size=FINGERPRINT_BYTES).copy
    step, encode = model.next_state, model.encode
    seen: set[bytes] = set()
    gc.collect()
    started = time.process_time()
    for state, action, _child in found:
        hasher = new_hasher()
        hasher.update(encode(step(state, action)))
        seen.add(hasher.digest())
    return time.process_time() - started, len(seen)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", default="default", help="a scenario name or file (default: default)")
    parser.add_argument("--transitions", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if args.transitions < 1 or args.rounds < 1:
        parser.error("--transitions and --rounds take a positive number")
    model, recorded, levels = record(args.scenario, args.transitions)
    found = hits(model, recorded)
    numbers = Numbers(model.codec)
    rows = effects(model, numbers, found)
    print(f"{args.scenario}: {len(recorded):,} transitions recorded, {len(found):,} of them memo hits (compared), "
          f"{len(numbers.digests) - 1:,} parts and tables numbered")
    seconds: dict[str, list[float]] = {"as it is": [], "bytes": [], "digests": [], "key": []}
    for _ in range(args.rounds):
        cpu, distinct_now = current(model, found)
        seconds["as it is"].append(cpu)
        seconds["key"].append(keyed(model, found))
        for fingerprints in ("bytes", "digests"):
            cpu, distinct, misses, wrong = emulate(numbers, rows, fingerprints)
            seconds[fingerprints].append(cpu)
            if wrong or distinct != distinct_now:
                print(f"the emulation ({fingerprints}) is wrong: {wrong} successors or fingerprints differ, "
                      f"{distinct} distinct against {distinct_now}")
                return 1
    per = 1e6 / len(found)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    for name, label in (("as it is", "as it is"),
                        ("bytes", "hash-consed, the search's fingerprints (BLAKE2b over the joined pieces)"),
                        ("digests", "hash-consed, fingerprints over the parts' digests")):
        print(f"{label}: {medians[name]:.2f} s CPU, {medians[name] * per:.2f} us a transition, "
              f"{medians['as it is'] / medians[name]:.1f}x (rounds: {', '.join(f'{t:.2f}' for t in seconds[name])})")
    key = medians["key"]
    print(f"of which finding the effect (the memo's key from the state, the look-ups): {key:.2f} s CPU, "
          f"{key * per:.2f} us a transition (rounds: {', '.join(f'{t:.2f}' for t in seconds['key'])}); the hash-consed "
          f"hits with a key that costs as much: {medians['bytes'] + key:.2f} s, "
          f"{medians['as it is'] / (medians['bytes'] + key):.1f}x (the search's fingerprints) and "
          f"{medians['digests'] + key:.2f} s, {medians['as it is'] / (medians['digests'] + key):.1f}x (over digests)")
    changed = [sum(1 for row in rows if row[3] is not None), sum(1 for row in rows if row[4] is not None),
               sum(1 for row in rows if row[1][1] != row[2][1])]
    print(f"made on a miss / changed by a transition: brokers tables {misses[0]:,} / {changed[0]:,}, channels tables "
          f"{misses[1]:,} / {changed[1]:,}, controllers {misses[2]:,} / {changed[2]:,}")
    print(f"distinct successors: {distinct_now:,} on every path")
    key_now, key_numbers, stored, coarse = numbered_keys(model, numbers, found)
    if coarse:
        print(f"the numbers keys are coarser than the memos': {coarse} of them meet two different entries")
        return 1
    print(f"the memos' keys made from part numbers (first and further keys, {stored:,} stored): {key_numbers:.2f} s "
          f"CPU, {key_numbers * per:.2f} us a transition, against {key_now:.2f} s ({key_now * per:.2f} us) as they "
          f"are; the hash-consed hits with such keys: {medians['bytes'] + key_numbers:.2f} s, "
          f"{medians['as it is'] / (medians['bytes'] + key_numbers):.1f}x (the search's fingerprints) and "
          f"{medians['digests'] + key_numbers:.2f} s, {medians['as it is'] / (medians['digests'] + key_numbers):.1f}x")
    kept = held(numbers, found, rows, levels)
    distinct = kept["distinct"]
    print(f"the hit's dictionaries, forgotten level by level: at most {kept['entries']:,} entries, "
          f"{kept['peak_bytes'] / 2**20:.1f} MB at their peak ({kept['peak_bytes'] / distinct:.1f} bytes a state of "
          f"{distinct:,}); at most {kept['orphans']:,} tables and controllers held by them alone after a level, "
          f"{kept['orphan_bytes'] / 2**20:.1f} MB ({kept['orphan_bytes'] / distinct:.1f} bytes a state)")
    return 0

if __name__ == "__main__":
    sys.exit(main())
