"""The local BFS's memory: visited fingerprints and parent pointers in sorted arrays, and the next
level built by sorting and merging.

TLC keeps a fingerprint set and a trace file of (parent, fingerprint); kmc's local engine keeps
the same in three numpy arrays sorted by fingerprint (:class:`Visited`): the fingerprint, the
parent's fingerprint and the index of the action that led from the parent (-1 for an initial
state). That is 20 bytes a state with 64-bit fingerprints, where a dict of Python ints and tuples
cost about 200. A look-up is a binary search (:meth:`Visited.contains`, a whole array of
fingerprints at once), and a level's new states are merged in once the level is complete.

:class:`NextLevel` collects a level's generated transitions as the expansion makes them, in
columns, and de-duplicates them the way the Spark engine does with its group-by and anti-join:
sort by (child, parent, action index), keep the first row of each child (the parent rule of
:mod:`explorer.results`), drop the children already visited. It does so whenever the rows
collected since the last time hold a few megabytes of state bytes (or many rows of small states),
and at least an eighth as many rows as are kept (and at the end): the bytes of duplicates are freed
soon after they were made, not at the end of the level, so that the level being built holds little
more than its new states. Each de-duplication moves every row kept (an insertion into sorted
arrays); the eighth bounds that work by about eight moves per row collected. Under a state bound it
keeps only the new states with the smallest fingerprints that fit, which is the rule both engines
follow. A row whose child is kept already is weighed against the kept parent transition in place, so
that rows need not come in the parent rule's order. The local BFS has it pack the new states' bytes
(:class:`PackedBlock`, one block per de-duplication); its next frontier then comes block by block. A model that
offers ``intern_state`` (:class:`explorer.contract.Model`) has its new states kept as the states themselves instead
(:class:`StateBlock`), up to a number of states a level, so that they are expanded without being decoded.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator, Sequence
from itertools import chain
from typing import Any

import attrs
import numpy as np

from explorer.fingerprint import as_int, fingerprint_dtype, fingerprints_of

#: The action index of an initial state, which has no parent.
NO_ACTION = -1

#: Pending rows, or bytes of their states, that trigger a de-duplication while few new states are
#: kept; past that, pending rows trigger it once they reach ``kept >> _COMPACT_KEPT_SHIFT`` too.
_COMPACT_ROWS = 1 << 16
_COMPACT_BYTES = 1 << 22
_COMPACT_KEPT_SHIFT = 3


class FingerprintSet:
    """Fingerprints in one sorted array: the Spark engine's driver keeps its visited set so (its
    parent pointers are in the level files), and it is what :class:`NextLevel` needs to know."""

    def __init__(self, bits: int, fps: np.ndarray | None = None) -> None:
        self.bits = bits
        self.fps = np.zeros(0, fingerprint_dtype(bits)) if fps is None else fps

    def __len__(self) -> int:
        return len(self.fps)

    def contains(self, fps: np.ndarray) -> np.ndarray:
        """For each of ``fps``, whether it is in the set (a boolean array)."""
        return sorted_contains(self.fps, fps)

    def __contains__(self, fp: int) -> bool:
        return bool(self.contains(fingerprints_of((fp,), self.bits))[0])

    def add(self, fps: np.ndarray) -> None:
        """Merge fingerprints that are not in the set yet (sorted, no duplicates) into it."""
        if len(fps):
            self.fps = np.insert(self.fps, np.searchsorted(self.fps, fps), fps)


def sorted_contains(sorted_fps: np.ndarray, fps: np.ndarray) -> np.ndarray:
    """For each of ``fps``, whether it is in the sorted array ``sorted_fps`` (binary search)."""
    if not len(sorted_fps) or not len(fps):
        return np.zeros(len(fps), dtype=bool)
    at = np.searchsorted(sorted_fps, fps)
    np.minimum(at, len(sorted_fps) - 1, out=at)
    found: np.ndarray = sorted_fps[at] == fps
    return found


class Visited:
    """Every state found so far: fingerprint, parent fingerprint and action index, sorted by fingerprint."""

    def __init__(self, bits: int, fps: np.ndarray | None = None, parent_fps: np.ndarray | None = None,
                 action_indices: np.ndarray | None = None) -> None:
        self.bits = bits
        dtype = fingerprint_dtype(bits)
        self.fps = np.zeros(0, dtype) if fps is None else fps
        self.parent_fps = np.zeros(0, dtype) if parent_fps is None else parent_fps
        self.action_indices = np.zeros(0, np.int32) if action_indices is None else action_indices

    @classmethod
    def unsorted(cls, bits: int, fps: np.ndarray, parent_fps: np.ndarray, action_indices: np.ndarray) -> Visited:
        """The set of the given rows in any order (a checkpoint read back); duplicates are an error."""
        order = np.argsort(fps, kind="stable")
        fps = fps[order]
        if len(fps) > 1 and bool(np.any(fps[1:] == fps[:-1])):
            raise ValueError("duplicate fingerprints")
        return cls(bits, fps, parent_fps[order], action_indices[order])

    def __len__(self) -> int:
        return len(self.fps)

    def contains(self, fps: np.ndarray) -> np.ndarray:
        """For each of ``fps``, whether it was visited (a boolean array)."""
        return sorted_contains(self.fps, fps)

    def __contains__(self, fp: int) -> bool:
        return bool(self.contains(fingerprints_of((fp,), self.bits))[0])

    def step(self, fp: int) -> tuple[int, int] | None:
        """The parent transition ``(parent fingerprint, action index)`` of the visited state ``fp``,
        None for an initial state; KeyError when ``fp`` was not visited."""
        key = fingerprints_of((fp,), self.bits)
        at = int(np.searchsorted(self.fps, key)[0])
        if at >= len(self.fps) or self.fps[at] != key[0]:
            raise KeyError(fp)
        action = int(self.action_indices[at])
        if action == NO_ACTION:
            return None
        return as_int(self.parent_fps[at], self.bits), action

    def add(self, fps: np.ndarray, parent_fps: np.ndarray, action_indices: np.ndarray) -> None:
        """Merge new states (sorted by fingerprint, none of them visited) into the set."""
        if not len(fps):
            return
        at = np.searchsorted(self.fps, fps)
        # One array at a time, so that only one of them is ever held twice.
        self.fps = np.insert(self.fps, at, fps)
        self.parent_fps = np.insert(self.parent_fps, at, parent_fps)
        self.action_indices = np.insert(self.action_indices, at, action_indices)

    @property
    def nbytes(self) -> int:
        return int(self.fps.nbytes + self.parent_fps.nbytes + self.action_indices.nbytes)


class PackedBlock:
    """The canonical bytes of several states, concatenated and compressed together (zlib's deflate at
    level 1, raw), with where each state ends. A block of under :data:`PACK_MIN_BYTES`, or of states of
    under :data:`PACK_MIN_STATE_BYTES` on average, keeps its states as they are: packing it would save
    little (a small state's bytes object and its pointer weigh about as much as its content). The toy
    controller's states are 18 bytes: they are not packed.

    The states of a level share most of their bytes, which a block's compression finds across states:
    on the default Kafka scenario 1,270 bytes a state become about 173, for 6.3 µs a state to pack and
    1.8 µs to unpack (each state compressed alone: 216 bytes and 23 µs). Zstandard (pyarrow's) gives
    136 bytes for 2.6 and 1.2 µs, but loading pyarrow adds 26 MB to the process, more than it saves
    on that scenario.
    """

    __slots__ = ("ends", "packed", "plain")

    def __init__(self, data: list[bytes]) -> None:
        self.ends: np.ndarray = np.cumsum(np.fromiter(map(len, data), dtype=np.int64, count=len(data)))
        self.plain: list[bytes] | None = None
        self.packed = b""
        if not len(self.ends) or self.ends[-1] < max(PACK_MIN_BYTES, PACK_MIN_STATE_BYTES * len(self.ends)):
            self.plain, self.ends = data, self.ends.astype(np.uint32)
            return
        if self.ends[-1] < 1 << 32:
            self.ends = self.ends.astype(np.uint32)
        deflate = zlib.compressobj(1, zlib.DEFLATED, -15, 9)
        self.packed = deflate.compress(b"".join(data)) + deflate.flush()

    def __len__(self) -> int:
        return len(self.ends)

    def unpack(self) -> list[bytes]:
        """The states' bytes, in the order they were packed."""
        if self.plain is not None:
            return self.plain
        ends = self.ends.tolist()
        raw = zlib.decompress(self.packed, -15, ends[-1])
        return [raw[start:end] for start, end in zip([0, *ends[:-1]], ends, strict=True)]

    @property
    def nbytes(self) -> int:
        """The block's size: its packed bytes (or its states' bytes) and where each state ends."""
        held = len(self.packed) if self.plain is None else sum(map(len, self.plain))
        return held + int(self.ends.nbytes)


#: The fewest bytes of states, in all and a state on average, that a :class:`PackedBlock` compresses.
PACK_MIN_BYTES = 1 << 16
PACK_MIN_STATE_BYTES = 64


class StateBlock:
    """States kept as the model's own values (each made by the model's ``intern_state``, so equal to what decoding
    its bytes gives) instead of their bytes: a level whose states share most of their parts holds about as much so
    as packed, and its states are expanded without being decoded (on the default Kafka scenario decoding was a
    sixth of the search)."""

    __slots__ = ("states",)

    def __init__(self, states: list[Any]) -> None:
        self.states = states

    def __len__(self) -> int:
        return len(self.states)

    def unpack(self) -> list[Any]:
        return self.states


#: A run of a frontier's states: their bytes as a list, or the states ``items`` (ascending) of a block.
Segment = list[bytes] | tuple[PackedBlock | StateBlock, np.ndarray]


class Frontier:
    """The states of a level to expand: fingerprints (an array) and the states in the same order, as one list of
    canonical bytes or as segments of blocks (:meth:`NewStates.frontier`): packed bytes or the states themselves,
    which ``encode`` turns into bytes when they are saved."""

    def __init__(self, fps: np.ndarray, data: list[bytes] | None = None,
                 segments: Sequence[Segment] | None = None, encode: Callable[[Any], bytes] | None = None) -> None:
        self.fps = fps
        self._segments: list[Segment | None] = list(segments) if segments is not None else [data or []]
        self._encode = encode

    def __len__(self) -> int:
        return len(self.fps)

    @property
    def data(self) -> list[bytes]:
        """Every state's bytes, in order (unpacked)."""
        return [state for _, _, states in self.batches(max(len(self), 1)) for state in states]

    def kept_states(self) -> list[Any] | None:
        """The states of every block that holds this frontier's states as states (:class:`StateBlock`), the states
        of the frontier among them; None if some of its states are bytes."""
        blocks = self._state_blocks()
        return None if blocks is None else [state for block, _ in blocks for state in block.states]

    def held_states(self) -> list[Any] | None:
        """The frontier's states in its order, when it holds every one of them as a state (:class:`StateBlock`); None
        if some are bytes. (A block may hold more states than the frontier takes of it: :meth:`kept_states`.)"""
        blocks = self._state_blocks()
        if blocks is None:
            return None
        states: list[Any] = []
        for block, items in blocks:
            held = block.unpack()
            states += held if len(items) == len(block) else [held[i] for i in items.tolist()]
        return states

    def _state_blocks(self) -> list[tuple[StateBlock, np.ndarray]] | None:
        """The frontier's segments, each a :class:`StateBlock` and the places of the frontier's states in it; None if
        some segment holds bytes (or was released)."""
        blocks: list[tuple[StateBlock, np.ndarray]] = []
        for segment in self._segments:
            if isinstance(segment, list) and not segment:
                continue  # an empty frontier's
            if segment is None or isinstance(segment, list) or not isinstance(segment[0], StateBlock):
                return None
            blocks.append((segment[0], segment[1]))
        return blocks

    def release(self) -> None:
        """Drop the states (as :meth:`batches` ``release`` does once they are all expanded): they cannot be expanded
        or saved again."""
        self._segments = [None] * len(self._segments)

    def batches(self, size: int, *, release: bool = False) -> Iterator[tuple[int, int, list[bytes]]]:
        """The states' bytes in runs of at most ``size``: ``(start, stop, bytes of the states start to stop)``.
        ``release``: drop each run's states once the next run is asked for, so that the level being built
        reuses their memory; those states cannot be expanded or saved again."""
        encode = self._encode
        for start, stop, run, held in self._runs(size, release):
            if held:
                assert encode is not None, "a frontier of states needs the model's encode to give bytes"
                run = [encode(state) for state in run]
            yield start, stop, run

    def states(self, size: int, decode: Callable[[bytes], Any], *,
               release: bool = False) -> Iterator[tuple[int, int, list[Any]]]:
        """The states in runs of at most ``size``, as :meth:`batches`, each decoded from its bytes or as it is held."""
        for start, stop, run, held in self._runs(size, release):
            yield start, stop, run if held else list(map(decode, run))

    def _runs(self, size: int, release: bool) -> Iterator[tuple[int, int, list[Any], bool]]:
        """``(start, stop, the states' bytes or the states, whether they are the states)``."""
        start = 0
        for index, segment in enumerate(self._segments):
            if segment is None:
                raise ValueError("the frontier's states were released")
            held = False
            if isinstance(segment, list):
                states = segment
            else:
                block, items = segment
                held = isinstance(block, StateBlock)
                unpacked = block.unpack()
                states = unpacked if len(items) == len(block) else [unpacked[i] for i in items.tolist()]
            for offset in range(0, len(states), size):
                batch = states[offset : offset + size]
                yield start, start + len(batch), batch, held
                start += len(batch)
                if release and segment is states:
                    states[offset : offset + len(batch)] = [b""] * len(batch)
            if release:
                self._segments[index] = None


@attrs.frozen
class NewStates:
    """The states first reached in a level, sorted by fingerprint, each with its chosen parent
    transition, the code of its action's name and its canonical bytes: in ``data``, or (from a
    :class:`NextLevel` that packs) at ``locators`` in ``blocks`` (block index << 32 | place in the
    block). ``truncated`` when a state bound left some out."""

    fps: np.ndarray = attrs.field(eq=False)
    parent_fps: np.ndarray = attrs.field(eq=False)
    action_indices: np.ndarray = attrs.field(eq=False)
    action_codes: np.ndarray = attrs.field(eq=False)
    data: list[bytes] = attrs.field(eq=False)
    truncated: bool = False
    locators: np.ndarray | None = attrs.field(default=None, eq=False)
    blocks: tuple[PackedBlock | StateBlock, ...] = attrs.field(default=(), eq=False)
    states: list[Any] | None = attrs.field(default=None, eq=False)

    def __len__(self) -> int:
        return len(self.fps)

    def frontier(self, encode: Callable[[Any], bytes] | None = None) -> Frontier:
        """The states to expand next. Packed states come block by block, each block's in fingerprint
        order, so that a block is unpacked once (the parent rule does not depend on the order). ``encode``: the
        model's, for a frontier that holds states (:class:`StateBlock`) to give their bytes."""
        if self.locators is None:
            return Frontier(self.fps, self.data)
        order = np.argsort(self.locators, kind="stable")
        locators = self.locators[order]
        bounds = np.searchsorted(locators >> 32, np.arange(len(self.blocks) + 1)).tolist()
        items = locators & 0xFFFFFFFF
        segments: list[Segment] = [(block, items[bounds[b] : bounds[b + 1]])
                                   for b, block in enumerate(self.blocks) if bounds[b + 1] > bounds[b]]
        return Frontier(self.fps[order], segments=segments, encode=encode)


class NextLevel:
    """The new states of the level being expanded (see the module docstring).

    ``visited`` is the set to leave out; ``room`` is how many new states may be kept at most (None:
    no bound). ``pack``: keep the new states' bytes in :class:`PackedBlock` s, one per
    de-duplication, instead of as they are. ``keep``: the model's ``intern_state``; the rows then come with their
    successor states (:meth:`add`) and a de-duplication's new states are kept as ``keep`` makes them while the
    level holds fewer than ``keep_states`` so: packing, in a :class:`StateBlock` instead of packed; else beside
    their bytes (:attr:`NewStates.states`, for the Spark engine's driver, which writes the bytes and expands the
    states).
    """

    def __init__(self, visited: FingerprintSet | Visited, room: int | None = None, *, pack: bool = False,
                 keep: Callable[[Any], Any] | None = None, keep_states: int = 0) -> None:
        self.visited = visited
        self.room = room
        self.truncated = False
        self.pack = pack
        self.keep = keep
        self.keep_states = keep_states
        self._states_kept = 0
        dtype = fingerprint_dtype(visited.bits)
        # The new states kept so far, sorted by fingerprint; their bytes in an object array, which
        # numpy indexes without a Python loop, or (packing) their locators in self._blocks.
        self._kept = NewStates(np.zeros(0, dtype), np.zeros(0, dtype), np.zeros(0, np.int32),
                               np.zeros(0, np.int32), [])
        self._kept_data = np.zeros(0, dtype=np.int64 if pack else object)
        self._blocks: list[PackedBlock | StateBlock] = []
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[bytes], list[Any] | None]] = []
        self._pending_rows = 0
        self._pending_bytes = 0
        # 64-bit fingerprints compare as numbers, which lets a row be weighed against a kept state's
        # parent transition in place (see _compact); 128-bit ones are records.
        self._comparable = dtype == np.int64

    def add(self, child_fps: np.ndarray, parent_fps: np.ndarray, action_indices: np.ndarray,
            action_codes: np.ndarray, data: list[bytes], states: list[Any] | None = None) -> None:
        """Collect generated transitions (one row each, duplicates and visited states included); ``states``, the
        successor states of the rows, when the level keeps states (``keep``)."""
        if not len(child_fps):
            return
        assert (states is None) == (self.keep is None), "the rows' states come with the rows when the level keeps them"
        self._pending.append((child_fps, parent_fps, action_indices, action_codes, data, states))
        self._pending_rows += len(child_fps)
        self._pending_bytes += sum(map(len, data))
        if ((self._pending_rows >= _COMPACT_ROWS or self._pending_bytes >= _COMPACT_BYTES)
                and self._pending_rows >= len(self._kept) >> _COMPACT_KEPT_SHIFT):
            self._compact()

    @property
    def approximate_size(self) -> int:
        """New states kept so far plus rows not yet de-duplicated (for progress lines)."""
        return len(self._kept) + self._pending_rows

    def finish(self) -> NewStates:
        """The level's new states, once every transition of the level was added."""
        self._compact()
        if self.pack:
            return attrs.evolve(self._kept, locators=self._kept_data, blocks=tuple(self._blocks),
                                truncated=self.truncated)
        if self.keep is None:
            return attrs.evolve(self._kept, data=self._kept_data.tolist(), truncated=self.truncated)
        pairs = self._kept_data.tolist()
        return attrs.evolve(self._kept, data=[data for data, _ in pairs], states=[state for _, state in pairs],
                            truncated=self.truncated)

    def _stored(self, data: np.ndarray, states: np.ndarray | None) -> np.ndarray:
        """What the kept states hold for the bytes ``data`` (the successor states ``states``): the bytes, paired
        with the states as ``keep`` makes them while there is room (None past it) when the level keeps states; or,
        packing, their locators in a new block: a :class:`StateBlock` of the states as ``keep`` makes them while
        there is room, else a :class:`PackedBlock` of the bytes."""
        keep = self.keep
        room = states is not None and self._states_kept + len(data) <= self.keep_states
        if not self.pack:
            if keep is None or not len(data):
                return data
            assert states is not None
            self._states_kept += len(data) if room else 0
            pairs = zip(data.tolist(), map(keep, states.tolist()) if room else [None] * len(data), strict=True)
            return np.fromiter(pairs, dtype=object, count=len(data))
        if not len(data):
            return np.zeros(0, np.int64)
        block = len(self._blocks)
        if room:
            assert keep is not None and states is not None
            self._blocks.append(StateBlock([keep(state) for state in states.tolist()]))
            self._states_kept += len(states)
        else:
            self._blocks.append(PackedBlock(data.tolist()))
        return (block << 32) + np.arange(len(data), dtype=np.int64)

    def _compact(self) -> None:
        if not self._pending:
            return
        pending, self._pending, self._pending_rows, self._pending_bytes = self._pending, [], 0, 0
        children = np.concatenate([rows[0] for rows in pending])
        parents = np.concatenate([rows[1] for rows in pending])
        actions = np.concatenate([rows[2] for rows in pending])
        codes = np.concatenate([rows[3] for rows in pending])
        data = np.fromiter(chain.from_iterable(rows[4] for rows in pending), dtype=object, count=len(children))
        states = None if self.keep is None else np.fromiter(
            chain.from_iterable(rows[5] or () for rows in pending), dtype=object, count=len(children))
        # Rows sorted by (parent fingerprint, action index), as the local BFS makes them when it expands
        # states in fingerprint order, need only a stable sort by child: the first row of each child is
        # then the one the parent rule picks. That order is checked (one pass) rather than assumed; rows
        # in any other order (states expanded grouped by the parts they share: explorer.expand.grouped_order),
        # and 128-bit fingerprints, are sorted by all three keys.
        in_order = self._comparable and _in_rule_order(parents, actions)
        best = _first_per_child(children, parents, actions, in_order)
        best = best[~self.visited.contains(children[best])]
        kept, kept_data = self._kept, self._kept_data
        if self._comparable:
            # A row whose child is kept already replaces the kept parent transition when it is smaller by
            # the parent rule (the bytes are the child's either way); the other rows are inserted in place,
            # without sorting the kept states again.
            at = np.searchsorted(kept.fps, children[best])
            found = (kept.fps[np.minimum(at, len(kept) - 1)] == children[best] if len(kept)
                     else np.zeros(len(best), dtype=bool))
            if found.any():
                rows, places = best[found], at[found]
                kept_parents = kept.parent_fps[places]
                better = (parents[rows] < kept_parents) | (
                    (parents[rows] == kept_parents) & (actions[rows] < kept.action_indices[places]))
                rows, places = rows[better], places[better]
                kept.parent_fps[places] = parents[rows]
                kept.action_indices[places] = actions[rows]
                kept.action_codes[places] = codes[rows]
                best, at = best[~found], at[~found]
            kept = NewStates(np.insert(kept.fps, at, children[best]), np.insert(kept.parent_fps, at, parents[best]),
                             np.insert(kept.action_indices, at, actions[best]),
                             np.insert(kept.action_codes, at, codes[best]), [])
            kept_data = np.insert(kept_data, at, self._stored(data[best], None if states is None else states[best]))
        else:
            stored = self._stored(data[best], None if states is None else states[best])
            if len(kept):
                # The parent rule again over the kept states and the new rows.
                children = np.concatenate([kept.fps, children[best]])
                parents = np.concatenate([kept.parent_fps, parents[best]])
                actions = np.concatenate([kept.action_indices, actions[best]])
                codes = np.concatenate([kept.action_codes, codes[best]])
                stored = np.concatenate([kept_data, stored])
                best = _first_per_child(children, parents, actions, False)
                kept = NewStates(children[best], parents[best], actions[best], codes[best], [])
                kept_data = stored[best]
            else:
                kept = NewStates(children[best], parents[best], actions[best], codes[best], [])
                kept_data = stored
        if self.room is not None and len(kept) > self.room:
            # Sorted by fingerprint: the smallest ones fit.
            kept = NewStates(kept.fps[: self.room], kept.parent_fps[: self.room],
                             kept.action_indices[: self.room], kept.action_codes[: self.room], [])
            kept_data = kept_data[: self.room]
            self.truncated = True
        self._kept, self._kept_data = kept, kept_data


def _in_rule_order(parents: np.ndarray, actions: np.ndarray) -> bool:
    """Whether rows are sorted by (parent, action index), each parent's rows together."""
    step = parents[1:] >= parents[:-1]
    same = parents[1:] == parents[:-1]
    return bool(step.all()) and bool((actions[1:][same] > actions[:-1][same]).all())


def _first_per_child(children: np.ndarray, parents: np.ndarray, actions: np.ndarray, in_order: bool) -> np.ndarray:
    """The row of each distinct child with the smallest (parent fingerprint, action index), as row
    indices sorted by child fingerprint. ``in_order``: the rows are in that order already."""
    order = np.argsort(children, kind="stable") if in_order else _sort_order(children, parents, actions)
    ordered = children[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    result: np.ndarray = order[first]
    return result


def _sort_order(children: np.ndarray, parents: np.ndarray, actions: np.ndarray) -> Any:
    if children.dtype == np.int64:
        return np.lexsort((actions, parents, children))
    # 128-bit fingerprints are records, which lexsort cannot take: stable sorts, last key first.
    order = np.argsort(actions, kind="stable")
    order = order[np.argsort(parents[order], kind="stable")]
    return order[np.argsort(children[order], kind="stable")]
