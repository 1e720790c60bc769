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
and bounded (when full, the kind of part holding most of it is emptied), and a search has them forget, level by
level, the parts that no state it is about to expand holds (:meth:`Codec.retain`): they change the speed, never
the bytes.

ZooKeeper's and the controller's tables (their ``tuple[X, ...]`` fields, :data:`TABLED`) and the state's tuples of
parts (the brokers, the channels) are parts too, each field with its own memo: a step that changes one table of
the controller (most often its event queue) leaves the others the same objects, and the changed controller is
written from the bytes of its unchanged tables. Splitting the parts so changes the speed only: a value's bytes are
its parts' bytes one after the other, the same ints as without the split.
"""

from __future__ import annotations

import enum
import struct
from array import array
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from model.zk.state.schema import (
    define_functions,
    is_state_class,
    mentions,
    optional_of,
    record_of,
    sequence_of,
    state_fields,
    strip,
)
from model.zk.state.values import (
    BrokerState,
    Budget,
    ClusterState,
    ControllerState,
    History,
    Request,
    ZkState,
)

#: Parts each memo of a :class:`Codec` keeps before it is emptied (a bound on its memory).
MEMO_PARTS = 1 << 16


class _PartMemo:
    """The memos of one kind of part: ``written``, the parts met so far by identity -> (the part, its bytes), for
    encode(); ``parts``, their bytes -> the part, for decode(), with an index to find them without knowing
    where a part ends: the lengths of the parts known, by their first ``head`` bytes (the length of the
    shortest part known, so every known part has such a head)."""

    def __init__(self) -> None:
        # id(part) -> (part, its bytes): the part is held, so its id is not reused while it is here
        self.written: dict[int, tuple[Any, bytes]] = {}
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
        self.written[id(part)] = (part, key)
        n = len(key)
        if not self.head or n < self.head:
            self._reindex(n)
        else:
            self._index(key)

    def _reindex(self, head: int) -> None:
        """Index the known parts' lengths by their first ``head`` bytes (the length of the shortest)."""
        self.head = head
        self.lengths = {}
        for known in self.parts:
            self._index(known)

    def _index(self, key: bytes) -> None:
        lengths = self.lengths.setdefault(key[:self.head], [])
        if len(key) not in lengths:
            lengths.append(len(key))

    def clear(self) -> None:
        self.written.clear()
        self.parts.clear()
        self.lengths.clear()

    def keep(self, live: set[int]) -> None:
        """Forget the parts whose identity is not in ``live``, and index the lengths of those left."""
        written, parts = self.written, self.parts
        gone = [i for i in written if i not in live]
        if not gone:
            return
        for i in gone:
            del parts[written.pop(i)[1]]
        self._reindex(min(map(len, parts), default=0))


class Codec:
    def __init__(self, topic_names: tuple[str, ...], *, memo_parts: int = MEMO_PARTS):
        self.topic_names = topic_names
        self.topics = ("", *topic_names)  # index 0 encodes the empty name
        self.topic_index = {t: i for i, t in enumerate(self.topics)}
        self.memo_parts = memo_parts
        # one memo per kind of part (KINDS), and the generated encoder's lookups by identity in them
        self._memos = tuple(_PartMemo() for _ in KINDS)
        self.known = tuple(memo.written.get for memo in self._memos)
        self._size = 0

    def __getstate__(self) -> dict[str, Any]:
        return {"topic_names": self.topic_names, "memo_parts": self.memo_parts}  # memos stay in their process

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["topic_names"], memo_parts=state["memo_parts"])  # type: ignore[misc]

    def memo_size(self) -> int:
        """How many parts the memos hold now (at most ``memo_parts``)."""
        return self._size

    def _remember(self, memo: _PartMemo, part: Any, data: bytes, bound: int) -> None:
        """Remember the part's bytes, in ``memo`` of at most ``bound`` parts. A full codec empties the kind of part
        that holds most of it, so that the parts of the other kinds keep their identity: the transition memos
        (:mod:`model.zk.transition_memo`) key on it."""
        if len(memo.parts) >= bound:
            self._empty(memo)
        if self._size >= self.memo_parts:
            self._empty(max(self._memos, key=lambda known: len(known.parts)))
        memo.add(data, part)
        self._size += 1

    def retain(self, states: Iterable[ClusterState]) -> set[int]:
        """Forget the parts and tables that none of ``states`` holds, and return the identities of those they hold
        (their non-empty tables and their parts). A search that has made a level's states keeps what they hold: a
        part no state of the level holds comes back only if a step makes an equal one, which the codec then learns
        again, where remembering every part met fills the memos with the parts of the levels already expanded (on
        the default scenario 30,000 controllers' bytes, 15 MB, at the end)."""
        live: set[int] = set()
        hold = _HOLD_STATE
        for state in states:
            hold(state, live)
        for memo in self._memos:
            memo.keep(live)
        self._size = sum(len(memo.parts) for memo in self._memos)
        return live

    def _empty(self, memo: _PartMemo) -> None:
        self._size -= len(memo.parts)
        memo.clear()

    # ---- encoding ----
    def encode(self, s: ClusterState) -> bytes:
        return _ENCODE_STATE(self, s)

    def encode_plain(self, s: ClusterState) -> bytes:
        """:meth:`encode` without the memo: every part written field by field (the reference)."""
        return Codec(self.topic_names, memo_parts=0).encode(s)

    def intern(self, part: Any) -> Any:
        """The part met before with the bytes of ``part`` (a value of a class of :data:`PARTS`), else the part read
        back from its bytes, remembered with its tables (a part with no table, no part and no field left out of its
        bytes in it, :data:`_KEPT`, is remembered as it is: decode() would read an equal one): the transition memos
        hand the parts of the effects they store to the codec, so that the successors they make share the parts
        decode() gives and are written by copying their bytes."""
        if not self.memo_parts:
            return part
        kind, write, read = _PART_CODE[type(part)]
        memo = self._memos[kind]
        if id(part) in memo.written:
            return part
        key = self._written(write, part)
        known = memo.parts.get(key)
        if known is not None:
            return known
        if type(part) not in _KEPT:  # read back: its tables are the codec's, looked up by read_table
            part = read(_Reader(key, self.topics, self.read_part, self.read_table))
        self._remember(memo, part, key, self.memo_parts)
        return part

    def _written(self, write: Any, value: Any) -> bytes:
        """The bytes a generated writer (``write_<class>``) gives ``value``, the parts it knows copied."""
        c: list[bytes] = []
        out: list[int] = []
        write(c, out, value, self.known, self.topic_index)
        if out:
            c.append(_PACK_INTS[len(out)](*out))
        return b"".join(c)

    def intern_state(self, s: ClusterState) -> ClusterState:
        """The state decode(encode(s)) reads, made from ``s`` itself: each of its parts and tables the one the codec
        knows by identity, else :meth:`intern`'s (a table: the one met before with its bytes, else the table of its
        elements interned, remembered); the fields left out of the bytes (``eq=False``) at their defaults. Cheaper
        than decoding a state just made (a step reuses most of its parts, which are known by identity), and it
        gives the successors of the states it returns the same memo hits (:mod:`model.zk.transition_memo` keys on
        the parts' identities) as decode() would."""
        state: ClusterState = _INTERN_STATE(self, s)
        return state

    def intern_table(self, kind: int, table: tuple[Any, ...], write: Any) -> tuple[Any, ...]:
        """The table of kind ``kind`` met before with the bytes of ``table`` (whose parts are interned: ``write``
        copies their bytes), else ``table``, remembered as :meth:`read_table` remembers a table it reads."""
        if not self.memo_parts:
            return table
        key = self._written(write, table)
        memo = self._memos[kind]
        known = memo.parts.get(key)
        if known is not None:
            return known
        self._remember(memo, table, key, max(1, self.memo_parts >> 4))
        return table

    # ---- decoding ----
    def decode(self, data: bytes) -> ClusterState:
        state: ClusterState = _READ_STATE(_Reader(data, self.topics, self.read_part, self.read_table))
        return state

    def read_part(self, rd: _Reader, kind: int, read: Any) -> Any:
        """The part of kind ``kind`` at the reader's position: one met before, found by its bytes, or ``read()``."""
        if not self.memo_parts:
            return read(rd)
        memo = self._memos[kind]
        start = 4 * rd.position()
        found = memo.find(rd.data, start)
        if found is not None:
            rd.seek((start + found[1]) // 4)
            return found[0]
        value = read(rd)
        self._remember(memo, value, rd.data[start:4 * rd.position()], self.memo_parts)
        return value

    def read_table(self, rd: _Reader, kind: int, read: Any) -> Any:
        """The table (a tuple) of kind ``kind`` at the reader's position: the tuple met before with the bytes there,
        found by them as :meth:`read_part` finds a part (a table's layout is self-delimiting too), else read by
        ``read()`` and remembered (unless empty), so that a state's successors, sharing it when a step leaves it be,
        write it by copying its bytes. Finding a known table costs less than reading it: its elements are not
        built."""
        if not self.memo_parts:
            return read(rd)
        memo = self._memos[kind]
        start = rd.position()
        found = memo.find(rd.data, 4 * start)
        if found is not None:
            rd.seek(start + found[1] // 4)
            return found[0]
        value = read(rd)
        if value:
            self._remember(memo, value, rd.data[4 * start:4 * rd.position()], max(1, self.memo_parts >> 4))
        return value


class _Reader:
    """Reads the parts of :meth:`Codec.encode`'s layout back, in the same order, from an int position."""

    def __init__(self, data: bytes, topics: tuple[str, ...], read_part: Callable[[_Reader, int, Any], Any],
                 read_table: Callable[[_Reader, int, Any], Any]):
        self.data = data
        self.read_part = read_part  # Codec.read_part: a part met before, or read by the function given
        self.read_table = read_table  # Codec.read_table: a table met before, or read by the function
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


# ---- the layout, derived from the state classes ----
#
# The writers and readers below are generated, once at import, from the state classes' fields
# (model.zk.state.schema.state_fields): a field is written where it is declared, with a rule per type:
#
# * an int, a bool or an IntEnum: one int; a topic name (the only strings in a state): its index in
#   the scenario's topics (0 for "");
# * ``tuple[X, ...]``: its length, then each X; a fixed ``tuple[A, B]``: A then B; ``X | None``: 0, or 1 then X;
# * a state class: its fields (``eq=False`` ones are no part of a state and are not written).
#
# Generated source rather than a walk of the types per call: the code run per state is the code one
# would write by hand for each class, so deriving it costs nothing on the hot path. Where a part or a table
# is written, the code first looks it up by identity in its kind's memo and copies the bytes found.

#: The classes encoded as parts (see the module docstring): each has its memo.
PARTS: tuple[type, ...] = (ZkState, ControllerState, BrokerState, Request, Budget, History)
#: The parts whose tables (their fields of type ``tuple[X, ...]``) are parts of their own, with a memo per field: a
#: step changes one or two of ZooKeeper's or the controller's tables and leaves the others the same objects, so
#: that a changed ZooKeeper or controller is written from the bytes of its unchanged tables. (A field of the state
#: that is a tuple holding parts, such as the brokers, is such a table too.)
TABLED: tuple[type, ...] = (ZkState, ControllerState)


def _is_part(t: Any) -> bool:
    return strip(t) in PARTS


def _annotated(t: Any) -> bool:
    """Whether ``t`` is a state class with a field that is no part of its identity (``eq=False``: not written)."""
    t = strip(t)
    return is_state_class(t) and any(not f.eq for f in attrs.fields(t))


#: The parts :meth:`Codec.intern` remembers as they are, being what decode() would read from their bytes: no
#: table of their own (:data:`TABLED`), no part and no field left out of the bytes in them.
_KEPT = frozenset(cls for cls in PARTS if cls not in TABLED and not mentions(cls, _annotated)
                  and not any(mentions(f.type, _is_part) for f in state_fields(cls)))


def _is_int(t: Any) -> bool:
    t = strip(t)
    return t is int or t is bool or (isinstance(t, type) and issubclass(t, enum.IntEnum))


def _is_table(t: Any, field_of: tuple[type, str] | None) -> bool:
    """Whether a value of type ``t``, the field ``field_of`` (class, name) of a state class, is a table: a part of
    its own kind."""
    element = sequence_of(t)
    return (element is not None and field_of is not None
            and (field_of[0] in TABLED or mentions(element, _is_part)))


class _Generator:
    """Writes the source of the codec's writers and readers."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {"_pack_ints": _PACK_INTS}
        self.sources: list[str] = []
        self.done: set[str] = set()
        self.counter = 0
        self.kinds: list[str] = []  # the kinds of part, each with its memo in a Codec
        self.used: set[int] = set()  # the kinds the function being written looks up

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def name_of(self, t: type) -> str:
        self.namespace[t.__name__] = t
        return t.__name__

    def kind(self, name: str) -> int:
        if name not in self.kinds:
            self.kinds.append(name)
        return self.kinds.index(name)

    @staticmethod
    def kind_name(t: Any, field_of: tuple[type, str] | None) -> str:
        base = strip(t)
        if base in PARTS:
            return str(base.__name__)
        assert field_of is not None
        return f"{field_of[0].__name__}.{field_of[1]}"

    # ---- writing ints into ``out`` (w = out.append, ext = out.extend, ti = the topic index) ----
    def pattern(self, t: Any) -> tuple[str, list[tuple[Any, str]]]:
        """A for-loop target unpacking a value of type ``t``, and its leaves (type, name)."""
        record = record_of(t)
        if record is None:
            name = self.fresh("x")
            return name, [(t, name)]
        targets, leaves = [], []
        for a in record:
            target, inner = self.pattern(a)
            targets.append(target)
            leaves += inner
        return f"({', '.join(targets)},)", leaves

    def write(self, t: Any, x: str, lines: list[str], ind: str) -> None:
        base = strip(t)
        element = sequence_of(t)
        record = record_of(t)
        inner = optional_of(t)
        if _is_int(t):
            lines.append(f"{ind}w({x})")
        elif base is str:
            lines.append(f"{ind}w(ti[{x}])")
        elif element is not None:
            lines.append(f"{ind}w(len({x}))")
            if _is_int(element):
                lines.append(f"{ind}ext({x})")
            elif strip(element) is str:
                name = self.fresh("n")
                lines.append(f"{ind}ext([ti[{name}] for {name} in {x}])")
            else:
                target, leaves = self.pattern(element)
                lines.append(f"{ind}for {target} in {x}:")
                for leaf_type, leaf in leaves:
                    self.write(leaf_type, leaf, lines, ind + "    ")
        elif record is not None:
            target, leaves = self.pattern(t)
            lines.append(f"{ind}{target} = {x}")
            for leaf_type, leaf in leaves:
                self.write(leaf_type, leaf, lines, ind)
        elif inner is not None:
            lines.append(f"{ind}if {x} is None:")
            lines.append(f"{ind}    w(0)")
            lines.append(f"{ind}else:")
            lines.append(f"{ind}    w(1)")
            self.write(inner, x, lines, ind + "    ")
        elif is_state_class(base):
            assert base not in PARTS, f"{base.__name__} is a part: written with its memo"
            if not x.isidentifier():
                name = self.fresh("v")
                lines.append(f"{ind}{name} = {x}")
                x = name
            for f in state_fields(base):
                self.write(f.type, f"{x}.{f.name}", lines, ind)
        else:
            raise TypeError(f"the codec has no encoding for {t!r}")

    # ---- writing values with parts in them: ints into ``out``, the bytes of parts known into ``c`` ----
    def emit(self, t: Any, x: str, lines: list[str], ind: str, field_of: tuple[type, str] | None = None) -> None:
        """Write a value of type ``t`` (the field ``field_of`` of a state class, if it is one); a part or a table in
        it is looked up by identity in its kind's memo (``kn<kind>``) and, when known, its bytes are copied into
        ``c`` after the ints waiting in ``out``."""
        base = strip(t)
        table = _is_table(t, field_of)
        if base in PARTS or table:
            k = self.kind(self.kind_name(t, field_of))
            self.used.add(k)
            v, h = self.fresh("p"), self.fresh("h")
            lines.append(f"{ind}{v} = {x}")
            # a table looks up only when it is not empty: an empty tuple is one object whatever its field
            lines.append(f"{ind}{h} = kn{k}(id({v}))" + (f" if {v} else None" if table else ""))
            lines.append(f"{ind}if {h} is None:")
            if table:
                self.emit(t, v, lines, ind + "    ")
            else:
                lines.append(f"{ind}    {self.writer(base)}(c, out, {v}, known, ti)")
            lines += [f"{ind}else:", f"{ind}    if out:", f"{ind}        c.append(_pack_ints[len(out)](*out))",
                      f"{ind}        out.clear()", f"{ind}    c.append({h}[1])"]
            return
        if not mentions(t, _is_part):
            self.write(t, x, lines, ind)
            return
        element = sequence_of(t)
        record = record_of(t)
        inner = optional_of(t)
        if element is not None:
            lines.append(f"{ind}w(len({x}))")
            target, leaves = self.pattern(element)
            lines.append(f"{ind}for {target} in {x}:")
            for leaf_type, leaf in leaves:
                self.emit(leaf_type, leaf, lines, ind + "    ")
        elif record is not None:
            target, leaves = self.pattern(t)
            lines.append(f"{ind}{target} = {x}")
            for leaf_type, leaf in leaves:
                self.emit(leaf_type, leaf, lines, ind)
        elif inner is not None:
            lines += [f"{ind}if {x} is None:", f"{ind}    w(0)", f"{ind}else:", f"{ind}    w(1)"]
            self.emit(inner, x, lines, ind + "    ")
        else:
            for f in state_fields(base):
                self.emit(f.type, f"{x}.{f.name}", lines, ind, field_of=(base, f.name))

    def fields(self, cls: type) -> list[str]:
        """The lines writing the fields of ``v``, a ``cls``, preceded by the lookups they use."""
        used, self.used = self.used, set()
        lines: list[str] = []
        for f in state_fields(cls):
            self.emit(f.type, f"v.{f.name}", lines, "    ", field_of=(cls, f.name))
        lookups = [f"    kn{k} = known[{k}]" for k in sorted(self.used)]
        self.used = used
        return ["    w = out.append", "    ext = out.extend", *lookups, *lines]

    def writer(self, cls: type) -> str:
        """``write_<cls>(c, out, v, known, ti)``: a part's ints into ``out``, the bytes of its known tables into
        ``c``."""
        name = f"write_{cls.__name__}"
        if name not in self.done:
            self.done.add(name)
            self.sources.append("\n".join([f"def {name}(c, out, v, known, ti):", *self.fields(cls)]))
        return name

    def encoder(self, cls: type) -> str:
        """``encode_<cls>(codec, v)``: the bytes of the whole value."""
        name = f"encode_{cls.__name__}"
        self.sources.append("\n".join([
            f"def {name}(codec, v):", "    known, ti = codec.known, codec.topic_index", "    c = []", "    out = []",
            *self.fields(cls), "    if not c:", "        return _pack_ints[len(out)](*out)", "    if out:",
            "        c.append(_pack_ints[len(out)](*out))", "    return b''.join(c)"]))
        return name

    # ---- interning (intern = Codec.intern, table = Codec.intern_table, known = the memos' lookups by identity) ----
    def interned(self, t: Any, x: str, lines: list[str], ind: str, field_of: tuple[type, str] | None = None) -> str:
        """An expression for ``x``, a value of type ``t`` (the field ``field_of`` of a state class, if it is one), with
        its parts and tables interned (:meth:`Codec.intern_state`); lines it needs first go into ``lines``."""
        if not mentions(t, _is_part) and not _is_table(t, field_of):
            return x
        base = strip(t)
        if base in PARTS:
            return f"intern({x})"
        element = sequence_of(t)
        inner = optional_of(t)
        if element is not None:
            target, leaves = self.pattern(element)
            rebuilt = self.rebuild(element, target, leaves)
            if not _is_table(t, field_of):
                return f"tuple([{rebuilt} for {target} in {x}])"
            assert field_of is not None
            k = self.kind(self.kind_name(t, field_of))
            v = self.fresh("p")
            lines += [f"{ind}{v} = {x}",
                      f"{ind}if {v} and known[{k}](id({v})) is None:",
                      f"{ind}    {v} = table({k}, tuple([{rebuilt} for {target} in {v}]), "
                      f"{self.table_writer(t, field_of)})"]
            return v
        if inner is not None:
            v = self.fresh("o")
            lines.append(f"{ind}{v} = {x}")
            return f"(None if {v} is None else {self.interned(inner, v, lines, ind)})"
        raise TypeError(f"the codec cannot intern {t!r}: only parts, sequences and optionals of them are interned")

    def rebuild(self, t: Any, target: str, leaves: list[tuple[Any, str]]) -> str:
        """An expression for an element of type ``t`` unpacked into ``target`` (leaves ``leaves``), its parts interned
        (parts and sequences of parts only: what a table's element holds)."""
        if record_of(t) is None:
            (leaf_type, leaf), = leaves
            inner: list[str] = []
            made = self.interned(leaf_type, leaf, inner, "")
            assert not inner, f"the codec cannot intern {t!r} inside a table"
            return made
        parts = []
        for leaf_type, leaf in leaves:
            inner = []
            parts.append(self.interned(leaf_type, leaf, inner, ""))
            assert not inner, f"the codec cannot intern {leaf_type!r} inside a table"
        return f"({', '.join(parts)},)"

    def table_writer(self, t: Any, field_of: tuple[type, str]) -> str:
        """``write_<class>_<field>(c, out, v, known, ti)``: a table's ints and its parts' bytes, the table itself not
        looked up (:meth:`Codec.intern_table`'s key)."""
        name = f"write_{field_of[0].__name__}_{field_of[1]}"
        if name not in self.done:
            self.done.add(name)
            used, self.used = self.used, set()
            lines: list[str] = []
            self.emit(t, "v", lines, "    ")
            lookups = [f"    kn{k} = known[{k}]" for k in sorted(self.used)]
            self.used = used
            self.sources.append("\n".join([f"def {name}(c, out, v, known, ti):", "    w = out.append",
                                           "    ext = out.extend", *lookups, *lines]))
        return name

    def interner(self, cls: type) -> str:
        """``intern_<cls>(codec, v)``: ``v`` with its parts and tables interned, its ``eq=False`` fields at their
        defaults."""
        name = f"intern_{cls.__name__}"
        lines: list[str] = []
        fields = [f"{f.name}={self.interned(f.type, f'v.{f.name}', lines, '    ', (cls, f.name))}"
                  for f in state_fields(cls)] + self.left_out(cls)
        self.sources.append("\n".join([
            f"def {name}(codec, v):", "    intern, table, known = codec.intern, codec.intern_table, codec.known",
            *lines, f"    return {self.name_of(cls)}({', '.join(fields)})"]))
        return name

    def held(self, t: Any, x: str, lines: list[str], ind: str, field_of: tuple[type, str] | None = None) -> None:
        """Lines adding to ``live`` the identities of the parts and tables in ``x``, a value of type ``t`` (the field
        ``field_of`` of a state class, if it is one): a part or table found there already is not walked again (the
        states of a level share most of theirs)."""
        if not mentions(t, _is_part) and not _is_table(t, field_of):
            return
        base = strip(t)
        element = sequence_of(t)
        inner = optional_of(t)
        if base in PARTS:
            v = self.fresh("p")
            body: list[str] = []
            for f in state_fields(base):
                self.held(f.type, f"{v}.{f.name}", body, ind + "    ", (base, f.name))
            lines += [f"{ind}{v} = {x}", f"{ind}if id({v}) not in live:", f"{ind}    live.add(id({v}))", *body]
        elif element is not None:
            v = self.fresh("s")
            lines.append(f"{ind}{v} = {x}")
            if _is_table(t, field_of):
                lines += [f"{ind}if {v} and id({v}) not in live:", f"{ind}    live.add(id({v}))"]
                ind += "    "
            if mentions(element, _is_part):
                target, leaves = self.pattern(element)
                body = []
                for leaf_type, leaf in leaves:
                    self.held(leaf_type, leaf, body, ind + "    ")
                lines += [f"{ind}for {target} in {v}:", *body]
        elif inner is not None:
            v = self.fresh("o")
            body = []
            self.held(inner, v, body, ind + "    ")
            lines += [f"{ind}{v} = {x}", f"{ind}if {v} is not None:", *body]
        else:
            raise TypeError(f"the codec cannot walk {t!r}: only parts, sequences and optionals of them hold parts")

    def holder(self, cls: type) -> str:
        """``hold_<cls>(v, live)``: adds the identities of the parts and tables ``v`` holds to the set ``live``
        (:meth:`Codec.retain`)."""
        name = f"hold_{cls.__name__}"
        lines: list[str] = []
        for f in state_fields(cls):
            self.held(f.type, f"v.{f.name}", lines, "    ", (cls, f.name))
        self.sources.append("\n".join([f"def {name}(v, live):", *lines]))
        return name

    # ---- reading (nxt = the next int, topics, ints(n), read_part(rd, kind, reader), read_table(...)) ----
    def read(self, t: Any, field_of: tuple[type, str] | None = None) -> str:
        """An expression reading a value of type ``t`` (the field ``field_of`` of a state class, if it is one)."""
        base = strip(t)
        element = sequence_of(t)
        record = record_of(t)
        inner = optional_of(t)
        if base is int:
            return "nxt()"
        if base is bool:
            return "bool(nxt())"
        if isinstance(base, type) and issubclass(base, enum.IntEnum):
            return f"{self.name_of(base)}(nxt())"
        if base is str:
            return "topics[nxt()]"
        if base in PARTS:
            return f"read_part(rd, {self.kind(self.kind_name(t, field_of))}, {self.reader(base)})"
        if element is not None:
            if _is_table(t, field_of):
                assert field_of is not None
                return (f"read_table(rd, {self.kind(self.kind_name(t, field_of))}, "
                        f"{self.reader_of_table(t, field_of)})")
            if strip(element) is int:
                return "ints(nxt())"
            return f"tuple({self.read(element)} for _ in range(nxt()))"
        if record is not None:
            return f"({', '.join(self.read(a) for a in record)},)"
        if inner is not None:
            return f"({self.read(inner)} if nxt() else None)"
        if is_state_class(base):
            return self.construct(base)
        raise TypeError(f"the codec has no decoding for {t!r}")

    _READ_PROLOGUE = ("    nxt, topics, ints, read_part, read_table = rd.nxt, rd.topics, rd.ints, rd.read_part, "
                      "rd.read_table")

    def construct(self, cls: type) -> str:
        """An expression reading a value of state class ``cls`` field by field (by keyword)."""
        fields = ", ".join([f"{f.name}={self.read(f.type, (cls, f.name))}" for f in state_fields(cls)]
                           + self.left_out(cls))
        return f"{self.name_of(cls)}({fields})"

    def left_out(self, cls: type) -> list[str]:
        """Keyword arguments giving the ``eq=False`` fields of ``cls`` whose default is made by a factory one value
        made once, when that value is hashable (a frozen value, such as a state's empty step log, which every state
        read then shares; a mutable default is left to its factory)."""
        given = []
        for f in attrs.fields(cls):
            if not f.eq and isinstance(f.default, attrs.Factory) and not f.default.takes_self:  # type: ignore[arg-type]
                value = f.default.factory()
                if getattr(type(value), "__hash__", None) is None:
                    continue
                name = f"_{cls.__name__}_{f.name}_default"
                self.namespace[name] = value
                given.append(f"{f.name}={name}")
        return given

    def reader(self, cls: type) -> str:
        """``read_<cls>(rd)``: a value read from the reader's position."""
        name = f"read_{cls.__name__}"
        if name not in self.done:
            self.done.add(name)
            self.sources.append(f"def {name}(rd):\n{self._READ_PROLOGUE}\n    return {self.construct(cls)}")
        return name

    def reader_of_table(self, t: Any, field_of: tuple[type, str]) -> str:
        name = f"read_{field_of[0].__name__}_{field_of[1]}"
        if name not in self.done:
            self.done.add(name)
            self.sources.append(f"def {name}(rd):\n{self._READ_PROLOGUE}\n    return {self.read(t)}")
        return name

    def compile(self) -> dict[str, Any]:
        source = "\n\n\n".join(self.sources)
        self.namespace["__source__"] = source
        return define_functions(source, "model.zk.state.codec", self.namespace)


class _IntPackers(dict[int, Callable[..., bytes]]):
    """``n`` -> packs ``n`` ints into the layout's 32-bit ints, the bytes ``array("i", ints).tobytes()`` gives: a
    ``struct.Struct`` per length takes half an array's time on the few ints written between two known parts."""

    def __missing__(self, n: int) -> Callable[..., bytes]:
        pack = self[n] = struct.Struct(f"{n}i").pack
        return pack


#: ``_PACK_INTS[len(ints)](*ints)``: the ints' bytes (:class:`_IntPackers`).
_PACK_INTS = _IntPackers()


def _derive(root: type) -> tuple[Callable[[Codec, Any], bytes], Callable[[_Reader], Any], Callable[[Codec, Any], Any],
                                 Callable[[Any, set[int]], None], str, tuple[str, ...],
                                 dict[type, tuple[int, Any, Any]]]:
    """The encoder, the reader, the interner and the holder of ``root`` values, their generated source (for reading),
    the kinds of part (each has a memo in a :class:`Codec`) and the kind, writer and reader of each class of part."""
    gen = _Generator()
    encode, read, intern, hold = gen.encoder(root), gen.reader(root), gen.interner(root), gen.holder(root)
    namespace = gen.compile()
    code = {cls: (gen.kinds.index(cls.__name__), namespace[f"write_{cls.__name__}"], namespace[f"read_{cls.__name__}"])
            for cls in PARTS}
    return (namespace[encode], namespace[read], namespace[intern], namespace[hold], namespace["__source__"],
            tuple(gen.kinds), code)


_ENCODE_STATE, _READ_STATE, _INTERN_STATE, _HOLD_STATE, LAYOUT_SOURCE, KINDS, _PART_CODE = _derive(ClusterState)
