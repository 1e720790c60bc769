"""The canonical encoding of a :class:`~model.zk.state.values.ClusterState`: the bytes every
fingerprint, visited set and trace is built from.

A flat sequence of 32-bit ints, written field by field in declaration
order, with lengths before sequences and topic names replaced by their index in the scenario.
Compact (a few hundred bytes), fast (array.tobytes), and canonical because every container is a
sorted tuple. decode() reads the same layout back.

The state is written as a sequence of parts (ZooKeeper, each controller, each broker, each queued
request, the budget, the history), each part's ints right after the previous part's: a part's bytes
depend on its value alone. Successors share most parts with the state they were made from (a step
reuses the objects it did not change), so the codec remembers the bytes of the parts it read, by
object identity, and writes an unchanged part by copying them; decode() remembers each
part's bytes -> its object, and reads a part it has met before by looking its bytes up instead of
rebuilding it (the states decoded share their equal parts). Only the parts decode() met are remembered:
the parts a step made new are written once and dropped with the successor. Both memos are per process
and bounded (emptied when full): they change the speed, never the bytes.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

from model.zk.state.states import PartitionState, ReplicaState
from model.zk.state.values import (
    BrokerState,
    Budget,
    ClusterState,
    ControllerEvent,
    ControllerState,
    EventKind,
    History,
    HostedPartition,
    LeaderAndIsr,
    MetadataPartitionState,
    PartitionLeaderState,
    Request,
    RequestKind,
    TopicPartition,
    ZkState,
)

#: Parts each memo of a :class:`Codec` keeps before it is emptied (a bound on its memory).
MEMO_PARTS = 1 << 12
class _PartMemo:
    """decode()'s memo for one kind of part: the bytes of the parts read so far -> the part, and an index to
    find them without knowing where a part ends: the lengths of the parts known, by their first ``head``
    bytes (the length of the shortest part known, so every known part has such a head)."""

    def __init__(self) -> None:
        self.parts: dict[bytes, Any] = {}
        self.head = 0
        self.lengths: dict[bytes, list[int]] = {}  # first ``head`` bytes -> lengths of the known parts

    def find(self, data: bytes, start: int) -> tuple[Any, int] | None:
        """The known part whose bytes are at ``start`` in ``data``, with its length in bytes. A part's layout is
        self-delimiting (lengths before sequences), so a known part's complete bytes found there are the bytes
        of the part there and of no longer one."""
        lengths = self.lengths.get(data[start:start + self.head])
        if lengths is not None:
            parts = self.parts
            for n in lengths:
                known = parts.get(data[start:start + n])
                if known is not None:
                    return known, n
        return None

    def add(self, key: bytes, part: Any) -> None:
        self.parts[key] = part
        n = len(key)
        if not self.head or n < self.head:
            self.head = n
            self.lengths = {}
            for known in self.parts:
                self._index(known)
        else:
            self._index(key)

    def _index(self, key: bytes) -> None:
        lengths = self.lengths.setdefault(key[:self.head], [])
        if len(key) not in lengths:
            lengths.append(len(key))

    def clear(self) -> None:
        self.parts.clear()
        self.lengths.clear()


class Codec:
    def __init__(self, topic_names: tuple[str, ...], *, memo_parts: int = MEMO_PARTS):
        self.topic_names = topic_names
        self.topics = ("", *topic_names)  # index 0 encodes the empty name
        self.topic_index = {t: i for i, t in enumerate(self.topics)}
        self.memo_parts = memo_parts
        # id(part) -> (part, its bytes): the part is held, so its id is not reused while it is here
        self._written: dict[int, tuple[Any, bytes]] = {}
        self._read: dict[str, _PartMemo] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"topic_names": self.topic_names, "memo_parts": self.memo_parts}  # memos stay in their process

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["topic_names"], memo_parts=state["memo_parts"])  # type: ignore[misc]

    def memo_size(self) -> int:
        """How many parts the memos hold now (at most ``memo_parts``)."""
        return len(self._written)

    def _remember(self, part: Any, data: bytes) -> None:
        if len(self._written) >= self.memo_parts:
            self._written.clear()
            for memo in self._read.values():
                memo.clear()
        self._written[id(part)] = (part, data)

    # ---- encoding ----
    def encode(self, s: ClusterState) -> bytes:
        part, parts = self._part, self._parts
        chunks = [part(self._zk, s.zk), part(self._controller, s.controller), parts(self._brokers, s.brokers),
                  parts(self._channels, s.channels), part(self._budget, s.budget), part(self._history, s.history)]
        if s.zombie is None:
            chunks.append(_ints(False))
        else:
            chunks.append(_ints(True))
            chunks.append(part(self._controller, s.zombie))
        out: list[int] = []
        self._replica_lists(out, s.standby_reassignments)
        chunks.append(array("i", out).tobytes())
        return b"".join(chunks)

    def encode_plain(self, s: ClusterState) -> bytes:
        """:meth:`encode` without the memo: every part written field by field (the reference)."""
        return Codec(self.topic_names, memo_parts=0).encode(s)

    def _part(self, write: Any, value: Any) -> bytes:
        """The part's bytes: remembered, or written by ``write(out, value)``."""
        known = self._written.get(id(value))
        if known is not None:
            return known[1]
        out: list[int] = []
        write(out, value)
        return array("i", out).tobytes()

    def _parts(self, join: Any, value: tuple[Any, ...]) -> bytes:
        """The bytes of a tuple of parts: remembered, or made by ``join(value)`` from its parts' bytes. (The
        empty tuple is one object for every kind: it is not looked up.)"""
        known = self._written.get(id(value)) if value else None
        if known is not None:
            return known[1]
        data: bytes = join(value)
        return data

    def _brokers(self, brokers: tuple[BrokerState, ...]) -> bytes:
        part = self._part
        return b"".join([_ints(len(brokers)), *[part(self._broker, br) for br in brokers]])

    def _channels(self, channels: tuple[tuple[int, tuple[Request, ...]], ...]) -> bytes:
        part = self._part
        chunks = [_ints(len(channels))]
        for b, queue in channels:
            chunks.append(_ints(b, len(queue)))
            chunks += [part(self._request, rq) for rq in queue]
        return b"".join(chunks)

    def _zk(self, out: list[int], zk: ZkState) -> None:
        w = out.append
        ti = self.topic_index
        w(len(zk.brokers))
        for b, e in zk.brokers:
            w(b)
            w(e)
        w(len(zk.topics))
        for name, reps in zk.topics:
            w(ti[name])
            w(len(reps))
            for r in reps:
                w(len(r))
                out.extend(r)
        w(len(zk.partitions))
        for (t, p), lai in zk.partitions:
            w(ti[t])
            w(p)
            self._lai(out, lai)
        w(len(zk.delete_topics))
        out.extend(ti[t] for t in zk.delete_topics)
        w(zk.controller_epoch)
        self._tps(out, zk.isr_change_notifications)
        self._replica_lists(out, zk.reassign_partitions)
        self._tps(out, zk.preferred_replica_election)
        w(len(zk.log_dir_event_notifications))
        out.extend(zk.log_dir_event_notifications)
        w(zk.unclean_leader_election_enable)
        w(len(zk.topic_unclean_leader_election_enable))
        out.extend(ti[t] for t in zk.topic_unclean_leader_election_enable)

    def _broker(self, out: list[int], br: BrokerState) -> None:
        w = out.append
        ti = self.topic_index
        w(br.id)
        w(br.alive)
        w(br.epoch)
        w(br.controller_epoch)
        w(len(br.partitions))
        for h in br.partitions:
            w(ti[h.partition[0]])
            w(h.partition[1])
            w(h.leader_epoch)
            w(h.leader)
            w(len(h.isr))
            out.extend(h.isr)
            w(h.zk_version)
            w(len(h.replicas))
            out.extend(h.replicas)
            w(h.controller_epoch)
            w(h.fetching)
        self._tps(out, br.logs)
        w(len(br.metadata_live_brokers))
        out.extend(br.metadata_live_brokers)
        self._metadata(out, br.metadata_partitions)
        self._tps(out, br.offline_logs)
        w(br.controlled_shutdown)

    def _request(self, out: list[int], rq: Request) -> None:
        w = out.append
        ti = self.topic_index
        w(rq.kind)
        w(rq.controller_epoch)
        w(rq.broker_epoch)
        w(rq.delete_partitions)
        w(rq.deletion_callback)
        w(len(rq.leader_states))
        for ls in rq.leader_states:
            w(ti[ls.partition[0]])
            w(ls.partition[1])
            w(ls.leader)
            w(ls.leader_epoch)
            w(len(ls.isr))
            out.extend(ls.isr)
            w(len(ls.replicas))
            out.extend(ls.replicas)
            w(ls.is_new)
            w(ls.zk_version)
            w(ls.controller_epoch)
        self._tps(out, rq.partitions)
        w(len(rq.live_brokers))
        out.extend(rq.live_brokers)
        self._metadata(out, rq.metadata_states)

    def _budget(self, out: list[int], bud: Budget) -> None:
        w = out.append
        ti = self.topic_index
        w(bud.broker_failures)
        w(bud.stop_replica_errors)
        w(bud.isr_changes)
        w(len(bud.reassignments_submitted))
        out.extend(bud.reassignments_submitted)
        for names in (bud.topics_created, bud.deletions_requested, bud.partitions_added, bud.topics_recreated):
            w(len(names))
            out.extend(ti[t] for t in names)
        w(bud.controller_failovers)
        w(bud.controller_moves)
        w(bud.controlled_shutdowns)
        w(len(bud.preferred_elections))
        out.extend(ti[t] for t in bud.preferred_elections)
        w(bud.auto_rebalance_checks)
        w(bud.log_dir_failures)
        w(bud.unclean_config_changes)
        w(len(bud.reassignments_cancelled))
        out.extend(bud.reassignments_cancelled)

    def _history(self, out: list[int], history: History) -> None:
        out.append(len(history.stray_logs))
        for b, (t, p) in history.stray_logs:
            out.append(b)
            out.append(self.topic_index[t])
            out.append(p)

    def _controller(self, out: list[int], c: ControllerState) -> None:
        w = out.append
        ti = self.topic_index
        w(c.epoch)
        w(len(c.live_brokers))
        for b, e in c.live_brokers:
            w(b)
            w(e)
        w(len(c.assignments))
        for (t, p), r in c.assignments:
            w(ti[t])
            w(p)
            w(len(r))
            out.extend(r)
        w(len(c.leadership))
        for (t, p), lai in c.leadership:
            w(ti[t])
            w(p)
            self._lai(out, lai)
        w(len(c.partition_states))
        for (t, p), ps in c.partition_states:
            w(ti[t])
            w(p)
            w(ps)
        w(len(c.replica_states))
        for (t, p, b), rs in c.replica_states:
            w(ti[t])
            w(p)
            w(b)
            w(rs)
        for names in (c.topics_to_be_deleted, c.topics_ineligible_for_deletion, c.topics_with_deletion_started):
            w(len(names))
            out.extend(ti[t] for t in names)
        w(len(c.events))
        for ev in c.events:
            w(ev.kind)
            w(ev.broker)
            self._tps(out, ev.partitions)
            w(ev.error)
            w(ti[ev.topic])
            w(ev.request_epoch)
            self._tps(out, ev.online_partitions)
        self._replica_lists(out, c.partitions_being_reassigned)
        w(len(c.shutting_down_brokers))
        out.extend(c.shutting_down_brokers)
        w(len(c.replicas_on_offline_dirs))
        for b, (t, p) in c.replicas_on_offline_dirs:
            w(b)
            w(ti[t])
            w(p)

    def _tps(self, out: list[int], tps: tuple[TopicPartition, ...]) -> None:
        """A length-prefixed list of partitions (read back by ``_Reader.tps``)."""
        ti = self.topic_index
        out.append(len(tps))
        for t, p in tps:
            out.append(ti[t])
            out.append(p)

    def _replica_lists(self, out: list[int], lists: tuple[tuple[TopicPartition, tuple[int, ...]], ...]) -> None:
        out.append(len(lists))
        for (t, p), reps in lists:
            out.append(self.topic_index[t])
            out.append(p)
            out.append(len(reps))
            out.extend(reps)

    def _metadata(self, out: list[int], states: tuple[MetadataPartitionState, ...]) -> None:
        out.append(len(states))
        for m in states:
            out.append(self.topic_index[m.partition[0]])
            out.append(m.partition[1])
            out.append(m.leader)
            out.append(m.leader_epoch)

    @staticmethod
    def _lai(out: list[int], lai: LeaderAndIsr) -> None:
        out.append(lai.leader)
        out.append(lai.leader_epoch)
        out.append(len(lai.isr))
        out.extend(lai.isr)
        out.append(lai.zk_version)
        out.append(lai.controller_epoch)

    # ---- decoding ----
    def decode(self, data: bytes) -> ClusterState:
        rd = _Reader(data, self.topics, self.read_part)
        nxt = rd.nxt
        part = self.read_part
        zk = part(rd, rd.zk)
        controller = part(rd, rd.controller)
        brokers = self.read_parts(rd, rd.brokers)
        channels = self.read_parts(rd, rd.channels)
        budget = part(rd, rd.budget)
        history = part(rd, rd.history)
        zombie = part(rd, rd.controller) if nxt() else None
        standby = rd.replica_lists()
        return ClusterState(zk, controller, brokers, channels, budget, history, zombie=zombie,
                            standby_reassignments=standby)

    def read_part(self, rd: _Reader, read: Any) -> Any:
        """The part at the reader's position: one met before, found by its bytes, or ``read()``."""
        if not self.memo_parts:
            return read()
        memo = self._read.get(read.__name__)
        if memo is None:
            memo = self._read[read.__name__] = _PartMemo()
        start = 4 * rd.position()
        found = memo.find(rd.data, start)
        if found is not None:
            rd.seek((start + found[1]) // 4)
            return found[0]
        value = read()
        key = rd.data[start:4 * rd.position()]
        self._remember(value, key)
        memo.add(key, value)
        return value

    def read_parts(self, rd: _Reader, read: Any) -> Any:
        """The tuple of parts at the reader's position, read by ``read()`` (its parts through :meth:`read_part`),
        as the tuple met before when its bytes were: such a tuple changes with most steps, so it is not
        looked for before it is read."""
        if not self.memo_parts:
            return read()
        memo = self._read.get(read.__name__)
        if memo is None:
            memo = self._read[read.__name__] = _PartMemo()
        start = rd.position()
        value = read()
        key = rd.data[4 * start:4 * rd.position()]
        known = memo.parts.get(key)
        if known is not None:
            return known
        self._remember(value, key)
        memo.add(key, value)
        return value


def _ints(*values: int) -> bytes:
    return array("i", values).tobytes()


class _Reader:
    """Reads the parts of :meth:`Codec.encode`'s layout back, in the same order, from an int position."""

    def __init__(self, data: bytes, topics: tuple[str, ...], read_part: Callable[[_Reader, Any], Any]):
        self.data = data
        self.read_part = read_part  # Codec.read_part: a part met before, or read by the method given
        a = array("i")
        a.frombytes(data)
        self._it: Any = iter(a)  # an array iterator: __reduce__ tells its position, __setstate__ moves it
        self.nxt = self._it.__next__
        self.topics = topics

    def position(self) -> int:
        """The index of the next int to read."""
        return int(self._it.__reduce__()[2])

    def seek(self, position: int) -> None:
        self._it.__setstate__(position)

    def ints(self, n: int) -> tuple[int, ...]:
        nxt = self.nxt
        return tuple(nxt() for _ in range(n))

    def tp(self) -> TopicPartition:
        nxt = self.nxt
        t = self.topics[nxt()]
        return (t, nxt())

    def tps(self) -> tuple[TopicPartition, ...]:
        tp = self.tp
        return tuple(tp() for _ in range(self.nxt()))

    def names(self) -> tuple[str, ...]:
        nxt, topics = self.nxt, self.topics
        return tuple(topics[nxt()] for _ in range(nxt()))

    def lai(self) -> LeaderAndIsr:
        nxt = self.nxt
        leader, epoch = nxt(), nxt()
        isr = self.ints(nxt())
        return LeaderAndIsr(leader, epoch, isr, nxt(), nxt())

    def replica_lists(self) -> tuple[tuple[TopicPartition, tuple[int, ...]], ...]:
        nxt, tp, ints = self.nxt, self.tp, self.ints
        return tuple((tp(), ints(nxt())) for _ in range(nxt()))

    def metadata(self) -> tuple[MetadataPartitionState, ...]:
        nxt, tp = self.nxt, self.tp
        return tuple(MetadataPartitionState(tp(), nxt(), nxt()) for _ in range(nxt()))

    def zk(self) -> ZkState:
        nxt, tp, ints, topics = self.nxt, self.tp, self.ints, self.topics
        brokers = tuple((nxt(), nxt()) for _ in range(nxt()))
        assignments = tuple((topics[nxt()], tuple(ints(nxt()) for _ in range(nxt()))) for _ in range(nxt()))
        partitions = tuple((tp(), self.lai()) for _ in range(nxt()))
        delete = self.names()
        epoch = nxt()
        isr_changes = self.tps()
        reassign = self.replica_lists()
        preferred = self.tps()
        log_dirs = ints(nxt())
        unclean = bool(nxt())
        return ZkState(brokers, assignments, partitions, delete, epoch, isr_changes, reassign, preferred, log_dirs,
                       unclean, self.names())

    def controller(self) -> ControllerState:
        nxt, tp, ints, topics = self.nxt, self.tp, self.ints, self.topics
        epoch = nxt()
        live = tuple((nxt(), nxt()) for _ in range(nxt()))
        assignments = tuple((tp(), ints(nxt())) for _ in range(nxt()))
        leadership = tuple((tp(), self.lai()) for _ in range(nxt()))
        pstates = tuple((tp(), PartitionState(nxt())) for _ in range(nxt()))
        rstates = tuple(((topics[nxt()], nxt(), nxt()), ReplicaState(nxt())) for _ in range(nxt()))
        to_be_deleted, ineligible, started = self.names(), self.names(), self.names()
        events = tuple(ControllerEvent(EventKind(nxt()), nxt(), self.tps(), bool(nxt()), topic=topics[nxt()],
                                       request_epoch=nxt(), online_partitions=self.tps())
                       for _ in range(nxt()))
        reassigning = self.replica_lists()
        shutting_down = ints(nxt())
        offline_dirs = tuple((nxt(), tp()) for _ in range(nxt()))
        return ControllerState(epoch, live, assignments, leadership, pstates, rstates, to_be_deleted, ineligible,
                               started, events, reassigning, shutting_down, offline_dirs)

    def broker(self) -> BrokerState:
        nxt, tp, ints = self.nxt, self.tp, self.ints
        bid, alive, bepoch, cepoch = nxt(), bool(nxt()), nxt(), nxt()
        hosted = tuple(HostedPartition(tp(), nxt(), nxt(), ints(nxt()), nxt(), ints(nxt()), nxt(), bool(nxt()))
                       for _ in range(nxt()))
        logs = self.tps()
        cache_live, cache = ints(nxt()), self.metadata()
        offline = self.tps()
        return BrokerState(bid, alive, bepoch, cepoch, hosted, logs, cache_live, cache, offline, nxt())

    def brokers(self) -> tuple[BrokerState, ...]:
        read_part, broker = self.read_part, self.broker
        return tuple(read_part(self, broker) for _ in range(self.nxt()))

    def channels(self) -> tuple[tuple[int, tuple[Request, ...]], ...]:
        nxt, read_part, request = self.nxt, self.read_part, self.request
        channels = []
        for _ in range(nxt()):
            bid = nxt()
            channels.append((bid, tuple(read_part(self, request) for _ in range(nxt()))))
        return tuple(channels)

    def request(self) -> Request:
        nxt, tp, ints = self.nxt, self.tp, self.ints
        kind, cepoch, bepoch, delete, callback = RequestKind(nxt()), nxt(), nxt(), bool(nxt()), bool(nxt())
        leader_states = tuple(PartitionLeaderState(tp(), nxt(), nxt(), ints(nxt()), ints(nxt()), bool(nxt()), nxt(),
                                                   nxt())
                              for _ in range(nxt()))
        parts = self.tps()
        live_brokers = ints(nxt())
        return Request(kind, cepoch, bepoch, leader_states, parts, delete, callback, live_brokers, self.metadata())

    def budget(self) -> Budget:
        nxt, ints = self.nxt, self.ints
        failures, errors, isr_changes = nxt(), nxt(), nxt()
        submitted = ints(nxt())
        created, requested, added, recreated = self.names(), self.names(), self.names(), self.names()
        failovers, moves, shutdowns = nxt(), nxt(), nxt()
        preferred = self.names()
        rebalances, dir_failures, unclean_changes = nxt(), nxt(), nxt()
        return Budget(failures, errors, isr_changes, submitted, created, requested, added, recreated, failovers,
                      moves, shutdowns, preferred, rebalances, dir_failures, unclean_changes, ints(nxt()))

    def history(self) -> History:
        nxt, tp = self.nxt, self.tp
        return History(tuple((nxt(), tp()) for _ in range(nxt())))
