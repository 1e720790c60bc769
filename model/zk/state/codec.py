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
and bounded (when full, the kind of part holding most of it is emptied): they change the speed, never the bytes.
"""

from __future__ import annotations

import enum
from array import array
from collections.abc import Callable
from typing import Any

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
MEMO_PARTS = 1 << 14
class _PartMemo:
    """decode()'s memo for one kind of part: the bytes of the parts read so far -> the part, and an index to
    find them without knowing where a part ends: the lengths of the parts known, by their first ``head``
    bytes (the length of the shortest part known, so every known part has such a head)."""

    def __init__(self) -> None:
        self.parts: dict[bytes, Any] = {}
        self.ids: list[int] = []  # of the parts, as :attr:`Codec._written` keys them
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
        self.ids.append(id(part))
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
        self.ids.clear()
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

    def _remember(self, memo: _PartMemo, part: Any, data: bytes, bound: int) -> None:
        """Remember the part's bytes, in ``memo`` of at most ``bound`` parts. A full codec empties the kind of part
        that holds most of it, so that the parts of the other kinds keep their identity: the transition memos
        (:mod:`model.zk.transition_memo`) key on it."""
        written = self._written
        if len(memo.ids) >= bound:
            self._empty(memo)
        if len(written) >= self.memo_parts:
            self._empty(max(self._read.values(), key=lambda known: len(known.ids)))
        written[id(part)] = (part, data)
        memo.add(data, part)

    def _empty(self, memo: _PartMemo) -> None:
        written = self._written
        for known in memo.ids:
            written.pop(known, None)
        memo.clear()

    # ---- encoding ----
    def encode(self, s: ClusterState) -> bytes:
        return _ENCODE_STATE(self, s)

    def encode_plain(self, s: ClusterState) -> bytes:
        """:meth:`encode` without the memo: every part written field by field (the reference)."""
        return Codec(self.topic_names, memo_parts=0).encode(s)

    def _part(self, write: Any, value: Any) -> bytes:
        """The part's bytes: remembered, or written by ``write(out, value, topic_index)``."""
        known = self._written.get(id(value))
        if known is not None:
            return known[1]
        out: list[int] = []
        write(out, value, self.topic_index)
        return array("i", out).tobytes()

    def _parts(self, join: Any, value: tuple[Any, ...]) -> bytes:
        """The bytes of a tuple of parts: remembered, or made by ``join(codec, value)`` from its parts' bytes. (The
        empty tuple is one object for every kind: it is not looked up.)"""
        known = self._written.get(id(value)) if value else None
        if known is not None:
            return known[1]
        data: bytes = join(self, value)
        return data

    # ---- decoding ----
    def decode(self, data: bytes) -> ClusterState:
        state: ClusterState = _READ_STATE(_Reader(data, self.topics, self.read_part, self.read_parts))
        return state

    def read_part(self, rd: _Reader, read: Any) -> Any:
        """The part at the reader's position: one met before, found by its bytes, or ``read()``."""
        if not self.memo_parts:
            return read(rd)
        memo = self._read.get(read.__name__)
        if memo is None:
            memo = self._read[read.__name__] = _PartMemo()
        start = 4 * rd.position()
        found = memo.find(rd.data, start)
        if found is not None:
            rd.seek((start + found[1]) // 4)
            return found[0]
        value = read(rd)
        self._remember(memo, value, rd.data[start:4 * rd.position()], self.memo_parts)
        return value

    def read_parts(self, rd: _Reader, read: Any) -> Any:
        """The tuple of parts at the reader's position, read by ``read()`` (its parts through :meth:`read_part`),
        as the tuple met before when its bytes were: such a tuple changes with most steps, so it is not
        looked for before it is read."""
        if not self.memo_parts:
            return read(rd)
        memo = self._read.get(read.__name__)
        if memo is None:
            memo = self._read[read.__name__] = _PartMemo()
        start = rd.position()
        value = read(rd)
        key = rd.data[4 * start:4 * rd.position()]
        known = memo.parts.get(key)
        if known is not None:
            return known
        # Only the states being expanded need theirs: their successors share it when a step leaves it be.
        self._remember(memo, value, key, max(1, self.memo_parts >> 4))
        return value


def _ints(*values: int) -> bytes:
    return array("i", values).tobytes()


class _Reader:
    """Reads the parts of :meth:`Codec.encode`'s layout back, in the same order, from an int position."""

    def __init__(self, data: bytes, topics: tuple[str, ...], read_part: Callable[[_Reader, Any], Any],
                 read_parts: Callable[[_Reader, Any], Any]):
        self.data = data
        self.read_part = read_part  # Codec.read_part: a part met before, or read by the function given
        self.read_parts = read_parts  # Codec.read_parts: a tuple of parts met before, or read by the function
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
# would write by hand for each class, so deriving it costs nothing on the hot path.

#: The classes encoded as parts (see the module docstring): each has its memo, and a tuple of parts that is
#: a field of the state is remembered as one.
PARTS: tuple[type, ...] = (ZkState, ControllerState, BrokerState, Request, Budget, History)


def _is_part(t: Any) -> bool:
    return strip(t) in PARTS


def _is_int(t: Any) -> bool:
    t = strip(t)
    return t is int or t is bool or (isinstance(t, type) and issubclass(t, enum.IntEnum))


class _Generator:
    """Writes the source of the codec's writers and readers."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {"_ints_bytes": _ints_bytes}
        self.sources: list[str] = []
        self.done: set[str] = set()
        self.counter = 0
        self.pending = False  # chunks(): whether ints written may be waiting in ``out``

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def name_of(self, t: type) -> str:
        self.namespace[t.__name__] = t
        return t.__name__

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
            assert base not in PARTS, f"{base.__name__} is a part: written in chunks"
            if not x.isidentifier():
                name = self.fresh("v")
                lines.append(f"{ind}{name} = {x}")
                x = name
            for f in state_fields(base):
                self.write(f.type, f"{x}.{f.name}", lines, ind)
        else:
            raise TypeError(f"the codec has no encoding for {t!r}")

    def writer(self, cls: type) -> str:
        """``write_<cls>(out, v, ti)``: a part's ints into ``out``."""
        name = f"write_{cls.__name__}"
        if name not in self.done:
            self.done.add(name)
            lines = [f"def {name}(out, v, ti):", "    w = out.append", "    ext = out.extend"]
            for f in state_fields(cls):
                self.write(f.type, f"v.{f.name}", lines, "    ")
            self.sources.append("\n".join(lines))
        return name

    # ---- writing chunks of bytes into ``c``: values with parts in them ----
    def chunks(self, t: Any, x: str, lines: list[str], ind: str, field_of: str | None = None) -> None:
        """Write a value with parts in it: ints into ``out``, flushed into ``c`` before each part's bytes."""
        if not mentions(t, _is_part):
            self.write(t, x, lines, ind)
            self.pending = True
            return
        base = strip(t)
        element = sequence_of(t)
        record = record_of(t)
        inner = optional_of(t)

        def flush() -> None:
            if self.pending:  # ints may be waiting in ``out``
                lines.append(f"{ind}if out:\n{ind}    c.append(_ints_bytes(out))\n{ind}    out.clear()")
            self.pending = False

        if base in PARTS:
            flush()
            lines.append(f"{ind}c.append(part({self.writer(base)}, {x}))")
        elif element is not None and field_of is not None:
            join = self.joiner(t, field_of)
            flush()
            lines.append(f"{ind}c.append(parts({join}, {x}))")
        elif element is not None:
            lines.append(f"{ind}w(len({x}))")
            self.pending = True
            if strip(element) in PARTS:
                e = self.fresh("e")
                flush()
                lines.append(f"{ind}c += [part({self.writer(strip(element))}, {e}) for {e} in {x}]")
            else:
                target, leaves = self.pattern(element)
                lines.append(f"{ind}for {target} in {x}:")
                self.pending = True  # from the loop's previous turn
                for leaf_type, leaf in leaves:
                    self.chunks(leaf_type, leaf, lines, ind + "    ")
                self.pending = True
        elif record is not None:
            target, leaves = self.pattern(t)
            lines.append(f"{ind}{target} = {x}")
            for leaf_type, leaf in leaves:
                self.chunks(leaf_type, leaf, lines, ind)
        elif inner is not None:
            lines.append(f"{ind}if {x} is None:")
            lines.append(f"{ind}    w(0)")
            lines.append(f"{ind}else:")
            lines.append(f"{ind}    w(1)")
            self.pending = True
            self.chunks(inner, x, lines, ind + "    ")
            self.pending = True
        else:
            for f in state_fields(base):
                self.chunks(f.type, f"{x}.{f.name}", lines, ind, field_of=f"{base.__name__}_{f.name}")

    _PROLOGUE = ("    part, parts, ti = codec._part, codec._parts, codec.topic_index",
                 "    c = []", "    out = []", "    w = out.append", "    ext = out.extend")
    _EPILOGUE = ("    if out:", "        c.append(_ints_bytes(out))", "    return b''.join(c)")

    def joiner(self, t: Any, field: str) -> str:
        """``join_<field>(codec, v)``: the bytes of a tuple of parts that is a field."""
        name = f"join_{field}"
        if name not in self.done:
            self.done.add(name)
            lines = [f"def {name}(codec, v):", *self._PROLOGUE]
            pending, self.pending = self.pending, False
            self.chunks(t, "v", lines, "    ")
            self.pending = pending
            self.sources.append("\n".join([*lines, *self._EPILOGUE]))
        return name

    def encoder(self, cls: type) -> str:
        """``encode_<cls>(codec, v)``: the bytes of the whole value."""
        name = f"encode_{cls.__name__}"
        lines = [f"def {name}(codec, v):", *self._PROLOGUE]
        self.pending = False
        self.chunks(cls, "v", lines, "    ")
        self.sources.append("\n".join([*lines, *self._EPILOGUE]))
        return name

    # ---- reading (nxt = the next int, topics, ints(n), read_part(rd, reader)) ----
    def read(self, t: Any, field_of: str | None = None) -> str:
        """An expression reading a value of type ``t``."""
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
            return f"read_part(rd, {self.reader(base)})"
        if element is not None:
            if field_of is not None and mentions(element, _is_part):
                return f"read_parts(rd, {self.reader_of_parts(t, field_of)})"
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

    _READ_PROLOGUE = ("    nxt, topics, ints, read_part, read_parts = rd.nxt, rd.topics, rd.ints, rd.read_part, "
                      "rd.read_parts")

    def construct(self, cls: type) -> str:
        """An expression reading a value of state class ``cls`` field by field (by keyword)."""
        fields = ", ".join(f"{f.name}={self.read(f.type, f'{cls.__name__}_{f.name}')}" for f in state_fields(cls))
        return f"{self.name_of(cls)}({fields})"

    def reader(self, cls: type) -> str:
        """``read_<cls>(rd)``: a value read from the reader's position (a part's name names its memo)."""
        name = f"read_{cls.__name__}"
        if name not in self.done:
            self.done.add(name)
            self.sources.append(f"def {name}(rd):\n{self._READ_PROLOGUE}\n    return {self.construct(cls)}")
        return name

    def reader_of_parts(self, t: Any, field: str) -> str:
        name = f"read_{field}"
        if name not in self.done:
            self.done.add(name)
            self.sources.append(f"def {name}(rd):\n{self._READ_PROLOGUE}\n    return {self.read(t)}")
        return name

    def compile(self) -> dict[str, Any]:
        source = "\n\n\n".join(self.sources)
        self.namespace["__source__"] = source
        return define_functions(source, "model.zk.state.codec", self.namespace)


def _ints_bytes(values: list[int]) -> bytes:
    return array("i", values).tobytes()


def _derive(root: type) -> tuple[Callable[[Codec, Any], bytes], Callable[[_Reader], Any], str]:
    """The encoder and the reader of ``root`` values, and their generated source (for reading)."""
    gen = _Generator()
    encode, read = gen.encoder(root), gen.reader(root)
    namespace = gen.compile()
    return namespace[encode], namespace[read], namespace["__source__"]


_ENCODE_STATE, _READ_STATE, LAYOUT_SOURCE = _derive(ClusterState)
