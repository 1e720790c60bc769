"""The expansion function shared by the BFS engines, and what the local search does around it."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Sequence

import numpy as np
import pytest
from toy_models.counter import INC_X, Counter, Counters

from explorer import visited as visited_module
from explorer.bfs import BfsOptions, run_bfs
from explorer.expand import ActionNames, PropertySet, expand_batch
from explorer.fingerprint import as_ints, fingerprint
from explorer.visited import FingerprintSet, NewStates, NextLevel, PackedBlock, StateBlock


class OddXIsStuck(Counter):
    """The counter whose IncX is enabled but has no effect (``next_state`` None) while x is odd."""

    def next_state(self, state: Counters, action: str) -> Counters | None:
        if action == INC_X and state[0] % 2:
            return None
        return super().next_state(state, action)


def _reference_rows(model: Counter, states: Sequence[Counters], bits: int) -> list[tuple[int, int, int, str, bytes]]:
    """(fingerprint, parent position, action index, action name, bytes) of each generated transition,
    one successor at a time."""
    rows = []
    for position, state in enumerate(states):
        for index, action in enumerate(model.actions(state)):
            child = model.next_state(state, action)
            if child is not None:
                data = model.encode(child)
                rows.append((fingerprint(data, bits), position, index, model.action_name(action), data))
    return rows


def test_expand_batch_rows_match_a_transition_by_transition_expansion() -> None:
    """Fingerprints, parents, action indices and names of a batch are those of expanding each state's
    actions one by one, actions without a successor skipped, at 64 and 128 bits."""
    model = OddXIsStuck(4, inc_x_y_limit=2)
    states = [(x, y) for x in range(5) for y in range(5)]
    for bits in (64, 128):
        names = ActionNames()
        batch = expand_batch(model, states, PropertySet.of(model.properties()), names, fingerprint_bits=bits)
        rows = list(zip(as_ints(batch.child_fingerprints, bits), batch.parents.tolist(),
                        batch.action_indices.tolist(), [names.names[c] for c in batch.action_codes.tolist()],
                        batch.data, strict=True))
        assert rows == _reference_rows(model, states, bits)
        assert any(index == 1 for _, _, index, _, _ in rows)  # IncY after a stuck IncX keeps its index 1


def test_transition_findings_name_the_successor_fingerprint() -> None:
    """A transition property's finding carries the index of its action and the fingerprint of the
    successor it was found on, in a batch where some actions have no successor."""
    model = OddXIsStuck(4, inc_x_y_limit=2)
    states = [(0, 2), (1, 3), (2, 3)]
    batch = expand_batch(model, states, PropertySet.of(model.properties()), ActionNames())
    found = [(position, f.action_index, f.child_fingerprint) for position, f in batch.findings
             if f.property == "inc_x_while_y_below_limit"]
    assert found == [(0, 0, fingerprint(bytes((1, 2)))), (2, 0, fingerprint(bytes((3, 3))))]


def test_states_outside_generate_are_checked_not_expanded() -> None:
    """With ``generate`` off a batch has no rows, and its state properties are still checked."""
    model = Counter(2, sum_limit=1)
    batch = expand_batch(model, [(0, 0), (1, 1)], PropertySet.of(model.properties()), ActionNames(), generate=False)
    assert len(batch) == 0 and batch.parents.tolist() == [] and batch.action_indices.tolist() == []
    assert [(position, f.property) for position, f in batch.findings] == [(1, "sum_below_limit")]


def test_search_restores_the_garbage_collector_thresholds() -> None:
    """The local search makes the collector's young passes rarer while it runs and restores the
    thresholds it found."""
    before = gc.get_threshold()
    during = []
    run_bfs(Counter(3), BfsOptions(progress=lambda _: during.append(gc.get_threshold())))
    assert gc.get_threshold() == before
    assert during and during[-1][0] >= 50_000


def test_a_search_without_checkpoints_does_not_load_pyarrow() -> None:
    """pyarrow (a tenth of a second to import) is loaded only by the checkpoint files' readers and writers."""
    code = ("import sys; sys.path.insert(0, 'tests'); from toy_models.counter import Counter; "
            "from explorer.bfs import run_bfs; run_bfs(Counter(2)); print('pyarrow' in sys.modules)")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "False"


def _rows(seed: int, parents: int, per_parent: int, children: int) -> tuple[np.ndarray, ...]:
    """Transitions in the local BFS's order: parents ascending, each parent's actions by index; the
    children drawn from a small range so that many repeat."""
    rng = np.random.default_rng(seed)
    parent_fps = np.sort(rng.choice(np.arange(-1000, 1000, dtype=np.int64), parents, replace=False))
    parent_col = np.repeat(parent_fps, per_parent)
    action_col = np.tile(np.arange(per_parent, dtype=np.int32), parents)
    child_col = rng.integers(-children, children, len(parent_col), dtype=np.int64)
    return child_col, parent_col, action_col


def _new_states(rows: tuple[np.ndarray, ...], order: np.ndarray, chunk: int, visited: FingerprintSet,
                room: int | None = None, *, pack: bool = False, keep_states: int | None = None) -> NewStates:
    """The level of the rows in ``order``, added ``chunk`` at a time; a row's state is its child's fingerprint
    (its bytes the fingerprint written out). ``keep_states``: keep up to so many states as :func:`_kept` makes them."""
    children, parents, actions = (column[order] for column in rows)
    keep = None if keep_states is None else _kept
    level = NextLevel(visited, room, pack=pack, keep=keep, keep_states=keep_states or 0)
    for start in range(0, len(children), chunk):
        part = slice(start, start + chunk)
        level.add(children[part], parents[part], actions[part], actions[part] % 3,
                  [b"%d" % c for c in children[part].tolist()],
                  None if keep is None else children[part].tolist())
    return level.finish()


def _kept(state: int) -> tuple[str, int]:
    return ("kept", state)


def test_next_level_keeps_the_parent_rule_whatever_the_row_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows in the parent rule's order (the stable sort by child) and the same rows shuffled (the
    three-key sort) give the same new states: per child the smallest (parent, action index), visited
    ones left out, the bytes following their rows; across compactions of the kept states too."""
    monkeypatch.setattr(visited_module, "_COMPACT_ROWS", 64)  # many compactions, each merging the kept states
    rows = _rows(seed=7, parents=300, per_parent=4, children=500)
    visited = FingerprintSet(64, np.arange(-500, 500, 7, dtype=np.int64))
    expected: dict[int, tuple[int, int]] = {}
    for child, parent, action in zip(*(column.tolist() for column in rows), strict=True):
        if child not in visited and (child not in expected or (parent, action) < expected[child]):
            expected[child] = (parent, action)
    in_order = np.arange(len(rows[0]))
    shuffled = np.random.default_rng(1).permutation(len(rows[0]))
    for order, chunk in ((in_order, 100), (in_order, 1000), (shuffled, 100)):
        new = _new_states(rows, order, chunk, visited)
        assert new.fps.tolist() == sorted(expected)
        assert list(zip(new.parent_fps.tolist(), new.action_indices.tolist(), strict=True)) == [
            expected[fp] for fp in sorted(expected)]
        assert new.data == [b"%d" % fp for fp in sorted(expected)]
        assert new.action_codes.tolist() == [expected[fp][1] % 3 for fp in sorted(expected)]
        bounded = _new_states(rows, order, chunk, visited, room=50)
        assert bounded.truncated
        assert bounded.fps.tolist() == sorted(expected)[:50]
        assert bounded.data == [b"%d" % fp for fp in sorted(expected)[:50]]


def _packing_rows(monkeypatch: pytest.MonkeyPatch, seed: int) -> tuple[tuple[np.ndarray, ...], FingerprintSet,
                                                                       np.ndarray]:
    """Rows of many compactions, each block packed however small, a visited set and a shuffled order of the rows."""
    monkeypatch.setattr(visited_module, "_COMPACT_ROWS", 64)
    monkeypatch.setattr(visited_module, "PACK_MIN_BYTES", 0)
    monkeypatch.setattr(visited_module, "PACK_MIN_STATE_BYTES", 0)
    rows = _rows(seed=seed, parents=300, per_parent=4, children=500)
    visited = FingerprintSet(64, np.arange(-500, 500, 7, dtype=np.int64))
    return rows, visited, np.random.default_rng(seed - 1).permutation(len(rows[0]))


def test_a_packing_next_level_keeps_the_same_states_and_their_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """With its new states' bytes packed (every block compressed, however small), the next level has the
    same states and parent transitions as without, and its frontier gives each state's own bytes (block
    by block, so not in fingerprint order); with a state bound too."""
    rows, visited, shuffled = _packing_rows(monkeypatch, seed=3)
    for order, chunk, room in ((np.arange(len(rows[0])), 100, None), (shuffled, 100, None), (shuffled, 100, 50)):
        plain = _new_states(rows, order, chunk, visited, room)
        packed = _new_states(rows, order, chunk, visited, room, pack=True)
        assert packed.locators is not None and len(packed.blocks) > 1
        assert any(block.plain is None for block in packed.blocks)
        assert packed.fps.tolist() == plain.fps.tolist() and packed.truncated == plain.truncated
        assert packed.parent_fps.tolist() == plain.parent_fps.tolist()
        assert packed.action_indices.tolist() == plain.action_indices.tolist()
        assert packed.action_codes.tolist() == plain.action_codes.tolist()
        frontier = packed.frontier()
        data = frontier.data
        assert sorted(frontier.fps.tolist()) == plain.fps.tolist()
        assert data == [b"%d" % fp for fp in frontier.fps.tolist()]
        batches = list(frontier.batches(7, release=True))
        assert [state for _, _, states in batches for state in states] == data
        assert [stop - start for start, stop, _ in batches] == [len(states) for _, _, states in batches]
        with pytest.raises(ValueError, match="released"):
            _ = frontier.data


def test_a_level_keeping_states_keeps_the_same_states_and_gives_them_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A level that keeps its new states as the model's ``intern_state`` makes them (:class:`StateBlock`), up to a
    bound, the others packed: the same states and parent transitions as a level that packs them all; its frontier
    gives the kept states as they are and decodes the packed ones, and gives every state's bytes (the kept ones
    encoded) to be saved. A level that does not pack gives the states it kept beside every state's bytes."""
    rows, visited, shuffled = _packing_rows(monkeypatch, seed=5)
    for order, room, bound in ((np.arange(len(rows[0])), None, 120), (shuffled, None, 10_000), (shuffled, 50, 100)):
        packed = _new_states(rows, order, 100, visited, room, pack=True)
        kept = _new_states(rows, order, 100, visited, room, pack=True, keep_states=bound)
        kinds = {type(block) for block in kept.blocks}
        assert kinds == ({StateBlock} if bound >= len(rows[0]) else {StateBlock, PackedBlock})
        assert sum(len(block) for block in kept.blocks if isinstance(block, StateBlock)) <= bound
        for column in ("fps", "parent_fps", "action_indices", "action_codes"):
            assert getattr(kept, column).tolist() == getattr(packed, column).tolist()
        assert kept.truncated == packed.truncated
        frontier = kept.frontier(lambda state: b"%d" % state[1])
        fps = frontier.fps.tolist()
        runs = list(frontier.states(7, lambda data: ("decoded", int(data))))
        states = [state for _, _, run in runs for state in run]
        assert [state[1] for state in states] == fps
        assert {state[0] for state in states} == ({"kept"} if bound >= len(rows[0]) else {"kept", "decoded"})
        assert frontier.data == [b"%d" % fp for fp in fps]
        assert [stop - start for start, stop, _ in runs] == [len(run) for _, _, run in runs]
        # Without packing (the Spark driver's levels), the states come beside their bytes, None past the bound.
        beside = _new_states(rows, order, 100, visited, room, keep_states=bound)
        assert beside.fps.tolist() == packed.fps.tolist() and beside.data == [b"%d" % fp for fp in beside.fps.tolist()]
        assert beside.states is not None and len(beside.states) == len(beside)
        assert all(state is None or state == ("kept", fp) for state, fp in zip(beside.states, beside.fps.tolist(),
                                                                              strict=True))
        assert 0 < sum(state is not None for state in beside.states) <= bound
        assert (None in beside.states) == (bound < len(rows[0]))
