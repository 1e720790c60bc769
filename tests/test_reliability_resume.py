"""The local BFS stops early without losing work, and a resumed run ends like an uninterrupted one.

A stop is requested from the progress callback at a chosen level (what SIGINT does through the
command line), or comes from a budget (time, memory, states, depth); the search saves itself at
the start of the level it abandons, and :func:`run_bfs` with ``resume`` continues from there.
Resume trusts nothing it has not checked: every file's row count and fingerprint checksum.
"""

from __future__ import annotations

import json
import time
from collections import Counter as Counter_
from pathlib import Path
from typing import Any

import pytest
from toy_models.counter import Counter
from toy_models.kafka_controller_toy import KafkaControllerToy, ToyConfig
from toy_models.two_phase_commit import TwoPhaseCommit

from explorer import bfs as bfs_module
from explorer import visited as visited_module
from explorer.bfs import BfsOptions, Checkpointing, run_bfs
from explorer.checkpoint import ResumeError, read_manifest, sealed
from explorer.contract import Model
from explorer.progress import ProgressSnapshot
from explorer.replay import replay
from explorer.results import ExplorationResult, Outcome, StopCause
from explorer.stopping import Limits, StopRequest
from kmc.compose import model_for, resolve_scenario

SMALL_TOY = ToyConfig(assignment=((1, 2),), brokers=2, max_crashes=1, max_shrinks=1, max_epoch=2)


def checkpointing(run_dir: Path, *, resume: bool = False, scenario_hash: str = "h") -> Checkpointing:
    return Checkpointing(run_dir, every_seconds=0, resume=resume, scenario_hash=scenario_hash, kmc_version="test")


def stopped_at_level(model: Model[Any, Any], run_dir: Path, depth: int, **options: Any) -> ExplorationResult:
    """Run with checkpoints, asking for a stop when the search reports progress on level ``depth``
    (within the level for a level of 512 states or more, at its end otherwise)."""
    stop = StopRequest()

    def progress(snapshot: ProgressSnapshot) -> None:
        if snapshot.depth > depth:  # snapshot depths count the initial states as depth 1
            stop.request("interrupted by SIGINT")

    return run_bfs(model, BfsOptions(progress=progress, progress_interval_seconds=0, limits=Limits(stop=stop),
                                     checkpointing=checkpointing(run_dir), **options))


def resumed(model: Model[Any, Any], run_dir: Path, **options: Any) -> ExplorationResult:
    return run_bfs(model, BfsOptions(checkpointing=checkpointing(run_dir, resume=True), **options))


def assert_same(a: ExplorationResult, b: ExplorationResult) -> None:
    assert (a.outcome, a.reason, a.stats, a.discoveries, a.never_found) == (
        b.outcome, b.reason, b.stats, b.discoveries, b.never_found
    )  # fmt: skip
    assert [d.evidence for d in a.discoveries] == [d.evidence for d in b.discoveries]


MODELS = {
    "counter_ok": lambda: Counter(4),
    "counter_violation": lambda: Counter(4, sum_limit=6),
    "two_phase_commit": lambda: TwoPhaseCommit(3),
    "toy_controller": lambda: KafkaControllerToy(SMALL_TOY),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_stopped_at_every_level_and_resumed_ends_as_uninterrupted(name: str, tmp_path: Path) -> None:
    """Interrupted at each level in turn, then resumed, every run ends with the uninterrupted counts,
    levels, examples and counterexamples."""
    model = MODELS[name]()
    complete = run_bfs(model)
    for depth in range(complete.stats.depth):
        run_dir = tmp_path / f"stop-{depth}"
        first = stopped_at_level(model, run_dir, depth)
        if first.outcome is not Outcome.INCONCLUSIVE:  # the search ended within the level asked to stop
            assert_same(first, complete)
            continue
        assert first.stopped_by is StopCause.INTERRUPTED
        assert first.reason == "interrupted by SIGINT"
        assert first.stats.queue > 0
        assert_same(resumed(MODELS[name](), run_dir), complete)


@pytest.mark.parametrize("bits", [64, 128])
def test_a_search_with_every_block_packed_stops_and_resumes_as_uninterrupted(
        bits: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With every level's new states packed (however small), a search finds what it finds unpacked, and
    one stopped at each level and resumed (its checkpoints written from packed frontiers) ends the same."""
    complete = run_bfs(MODELS["toy_controller"](), BfsOptions(fingerprint_bits=bits))
    monkeypatch.setattr(visited_module, "PACK_MIN_BYTES", 0)
    monkeypatch.setattr(visited_module, "PACK_MIN_STATE_BYTES", 0)
    model = MODELS["toy_controller"]()
    assert_same(run_bfs(model, BfsOptions(fingerprint_bits=bits)), complete)
    for depth in range(1, complete.stats.depth, 3):
        run_dir = tmp_path / f"stop-{depth}"
        first = stopped_at_level(model, run_dir, depth, fingerprint_bits=bits)
        assert first.outcome is Outcome.INCONCLUSIVE
        assert_same(resumed(MODELS["toy_controller"](), run_dir, fingerprint_bits=bits), complete)


class _Decoding:
    """A model without the optional ``intern_state``: the search decodes every state it expands."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def __getattr__(self, name: str) -> Any:
        if name == "intern_state":
            raise AttributeError(name)
        return getattr(self._model, name)


@pytest.mark.parametrize("keep_states", [bfs_module.KEEP_STATES, 20], ids=["every-state", "some-packed"])
def test_a_search_keeping_its_states_finds_what_a_decoding_one_finds(
        keep_states: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Kafka model offers ``intern_state``: its levels' new states are kept as states (all of them, or 20 a level
    and the rest packed) and expanded without decoding. The search finds what one that decodes every state finds
    (counts, levels, discoveries and their evidence), and one stopped at a level and resumed (its checkpoint
    written from the kept states) ends the same. (Its levels hold 1 to 31 new states: with 20, levels of both kinds.)"""
    def model() -> Any:
        return model_for(resolve_scenario("kafka-6650"))

    monkeypatch.setattr(visited_module, "PACK_MIN_BYTES", 0)
    decoding = run_bfs(_Decoding(model()))
    monkeypatch.setattr(bfs_module, "KEEP_STATES", keep_states)
    assert decoding.stats.distinct == 228 and decoding.discoveries
    assert_same(run_bfs(model()), decoding)
    for depth in (2, 5):
        run_dir = tmp_path / f"stop-{depth}"
        first = stopped_at_level(model(), run_dir, depth)
        assert first.outcome is Outcome.INCONCLUSIVE and first.stats.queue > 0
        assert_same(resumed(model(), run_dir), decoding)


def test_interrupted_search_reports_the_complete_levels(tmp_path: Path) -> None:
    """A stop asked at the end of level 3 is honoured at the next safe point, the start of level 4:
    the result reports levels 0-3 and the states of level 4 as the queue."""
    result = stopped_at_level(Counter(4), tmp_path, 3)
    assert result.outcome is Outcome.INCONCLUSIVE
    assert [level.depth for level in result.stats.levels] == [0, 1, 2, 3]
    assert result.stats.queue == 5  # the states x + y = 4
    assert result.stats.distinct == 1 + 2 + 3 + 4 + 5


@pytest.mark.parametrize("bound", [{"max_depth": 3}, {"max_states": 7}], ids=["max_depth", "max_states"])
def test_a_bounded_run_resumed_without_the_bound_completes(bound: dict[str, int], tmp_path: Path) -> None:
    """A run stopped by a depth or state bound continues, without it, to the uninterrupted result."""
    first = run_bfs(TwoPhaseCommit(3), BfsOptions(checkpointing=checkpointing(tmp_path), **bound))
    assert first.outcome is Outcome.INCONCLUSIVE
    assert first.stopped_by in (StopCause.DEPTH_BOUND, StopCause.STATE_BOUND)
    assert_same(resumed(TwoPhaseCommit(3), tmp_path), run_bfs(TwoPhaseCommit(3)))


def test_time_limit_stops_and_resumes(tmp_path: Path) -> None:
    """A time limit of 0 stops the search before its first level; resuming without it completes it."""
    first = run_bfs(Counter(3), BfsOptions(limits=Limits(time_limit=0), checkpointing=checkpointing(tmp_path)))
    assert (first.outcome, first.stopped_by) == (Outcome.INCONCLUSIVE, StopCause.TIME_LIMIT)
    assert "time limit" in first.reason
    assert_same(resumed(Counter(3), tmp_path), run_bfs(Counter(3)))


class _SlowCounter(Counter):
    """The counter, taking ``pause`` seconds to list the actions of each state."""

    def __init__(self, n: int, pause: float) -> None:
        super().__init__(n)
        self.pause = pause

    def actions(self, state: tuple[int, int]) -> Any:
        time.sleep(self.pause)
        return super().actions(state)


def test_a_time_limit_stops_within_a_level_and_says_when(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A limit that passes in the middle of a long level stops between two batches of that level,
    not at its end; the reason gives the time the search really ran; resumed, the run ends as an
    uninterrupted one."""
    monkeypatch.setattr(bfs_module, "_BATCH", 1)
    model = _SlowCounter(12, 0.05)  # levels of up to 13 states: up to 0.65 s each
    started = time.monotonic()
    first = run_bfs(model, BfsOptions(limits=Limits(time_limit=2.0), checkpointing=checkpointing(tmp_path)))
    ran = time.monotonic() - started
    assert (first.outcome, first.stopped_by) == (Outcome.INCONCLUSIVE, StopCause.TIME_LIMIT)
    assert ran < 2.0 + 0.5, ran
    said = float(first.reason.split("stopped after ")[1].split(" s")[0])
    assert 2.0 <= said <= ran + 0.1, first.reason
    assert_same(resumed(Counter(12), tmp_path), run_bfs(Counter(12)))


def test_a_time_limit_counts_from_the_start_of_the_invocation() -> None:
    """A limit whose clock started (with the command) before the engine did is spent already: the
    search stops before its first level and says how long the invocation ran."""
    first = run_bfs(Counter(3), BfsOptions(limits=Limits(time_limit=5, started=time.monotonic() - 7)))
    assert (first.outcome, first.stopped_by, first.stats.depth) == (Outcome.INCONCLUSIVE, StopCause.TIME_LIMIT, 0)
    assert first.reason.startswith("time limit reached: stopped after 7.")


def test_memory_budget_stops_and_resumes(tmp_path: Path) -> None:
    """A memory budget below what the process holds stops the search with "memory budget reached";
    resuming under a budget that fits completes it."""
    first = run_bfs(Counter(3), BfsOptions(limits=Limits(max_memory=1 << 20), checkpointing=checkpointing(tmp_path)))
    assert (first.outcome, first.stopped_by) == (Outcome.INCONCLUSIVE, StopCause.MEMORY_BUDGET)
    assert first.reason.startswith("memory budget reached")
    assert_same(resumed(Counter(3), tmp_path, limits=Limits(max_memory=1 << 40)), run_bfs(Counter(3)))


def test_128_bit_fingerprints_find_the_same_states(tmp_path: Path) -> None:
    """128-bit fingerprints give the 64-bit run's counts and trace lengths (ties between shortest
    traces break by fingerprint, so the paths may differ), replay, and resume with them."""
    wide = run_bfs(Counter(5, sum_limit=7), BfsOptions(fingerprint_bits=128))
    narrow = run_bfs(Counter(5, sum_limit=7))
    assert (wide.stats.distinct, wide.stats.generated) == (narrow.stats.distinct, narrow.stats.generated)
    assert [d.trace_length for d in wide.discoveries] == [d.trace_length for d in narrow.discoveries]
    assert all(d.fingerprint_bits == 128 for d in wide.discoveries)
    assert any(abs(fp) >= 2**63 for d in wide.discoveries for fp in d.path)
    assert replay(Counter(5, sum_limit=7), wide.discoveries[-1]).fingerprints == wide.discoveries[-1].path
    assert wide.stats.collision_probability < narrow.stats.collision_probability
    first = stopped_at_level(Counter(5, sum_limit=7), tmp_path, 4, fingerprint_bits=128)
    assert first.outcome is Outcome.INCONCLUSIVE
    assert_same(resumed(Counter(5, sum_limit=7), tmp_path, fingerprint_bits=128), wide)


def test_a_finished_run_is_not_resumed(tmp_path: Path) -> None:
    """Resuming a run that finished is refused in one sentence naming the outcome."""
    run_bfs(Counter(2), BfsOptions(checkpointing=checkpointing(tmp_path)))
    with pytest.raises(ResumeError, match="finished run"):
        resumed(Counter(2), tmp_path)


def test_a_new_run_does_not_overwrite_an_old_one(tmp_path: Path) -> None:
    """Starting a new run in a directory holding one is refused, pointing at --resume."""
    stopped_at_level(Counter(3), tmp_path, 2)
    with pytest.raises(ResumeError, match="--resume"):
        run_bfs(Counter(3), BfsOptions(checkpointing=checkpointing(tmp_path)))


def test_resume_refuses_another_scenario(tmp_path: Path) -> None:
    """A run directory recorded for one scenario hash cannot be resumed with another."""
    stopped_at_level(Counter(3), tmp_path, 2)
    with pytest.raises(ResumeError, match="another scenario"):
        run_bfs(Counter(3), BfsOptions(checkpointing=checkpointing(tmp_path, resume=True, scenario_hash="other")))


def checkpoint_dir(run_dir: Path) -> Path:
    manifest = read_manifest(run_dir)
    assert manifest is not None and manifest.checkpoint is not None
    return run_dir / manifest.checkpoint["directory"]


def test_only_the_current_checkpoint_is_kept(tmp_path: Path) -> None:
    """Checkpointing every level leaves one checkpoint directory, the one the manifest names."""
    stopped_at_level(Counter(4), tmp_path, 5)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("checkpoint-")] == [checkpoint_dir(tmp_path).name]


def damage_remove_frontier(run_dir: Path) -> None:
    (checkpoint_dir(run_dir) / "frontier.arrow").unlink()


def damage_swap_files(run_dir: Path) -> None:
    """The visited file of another checkpoint (right format, wrong contents)."""
    directory = checkpoint_dir(run_dir)
    other = run_dir.parent / "other"
    stopped_at_level(Counter(4), other, 2)
    (directory / "visited.arrow").write_bytes((checkpoint_dir(other) / "visited.arrow").read_bytes())


def damage_truncate_visited(run_dir: Path) -> None:
    path = checkpoint_dir(run_dir) / "visited.arrow"
    path.write_bytes(path.read_bytes()[:100])


def damage_manifest_garbage(run_dir: Path) -> None:
    (run_dir / "manifest.json").write_text("{ this is not json")


def damage_manifest_truncated(run_dir: Path) -> None:
    path = run_dir / "manifest.json"
    path.write_text(path.read_text()[:200])


def edit_manifest(run_dir: Path, key: str, value: Any, *, reseal: bool = True) -> None:
    """Change one field of the checkpoint record, sealing the manifest again unless told not to (an
    edit by hand, or a writer with a bug, that the digest does not catch)."""
    path = run_dir / "manifest.json"
    data = json.loads(path.read_text())
    data["checkpoint"][key] = value(data["checkpoint"][key])
    path.write_text(json.dumps(sealed(data) if reseal else data))


def damage_manifest_edited(run_dir: Path) -> None:
    edit_manifest(run_dir, "generated", lambda n: n + 1, reseal=False)


def damage_manifest_counts(run_dir: Path) -> None:
    edit_manifest(run_dir, "visited", lambda n: n + 1)


def damage_manifest_types(run_dir: Path) -> None:
    edit_manifest(run_dir, "levels", lambda _: "three")


def damage_manifest_level_types(run_dir: Path) -> None:
    edit_manifest(run_dir, "levels", lambda levels: [{**levels[0], "depth": []}, *levels[1:]])


def damage_manifest_directory(run_dir: Path) -> None:
    edit_manifest(run_dir, "directory", lambda _: "../../etc")


DAMAGES = {
    "frontier file removed": (damage_remove_frontier, "frontier.arrow is missing"),
    "visited file of another run": (damage_swap_files, "visited.arrow holds"),
    "visited file truncated": (damage_truncate_visited, "visited.arrow cannot be read"),
    "manifest not JSON": (damage_manifest_garbage, "manifest.json is corrupt"),
    "manifest truncated": (damage_manifest_truncated, "manifest.json is corrupt"),
    "manifest edited": (damage_manifest_edited, "does not match its own digest"),
    "manifest count altered": (damage_manifest_counts, "where the manifest recorded"),
    "manifest field of the wrong type": (damage_manifest_types, "manifest.json is corrupt"),
    "manifest level field of the wrong type": (damage_manifest_level_types, "manifest.json is corrupt"),
    "manifest pointing outside the run": (damage_manifest_directory, "manifest.json is corrupt"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_resume_refuses_a_damaged_run_directory(damage: str, tmp_path: Path) -> None:
    """A missing, truncated or altered checkpoint or manifest is refused in one sentence naming the
    file, never recounted."""
    run_dir = tmp_path / "run"
    stopped_at_level(Counter(4), run_dir, 5)
    make, expected = DAMAGES[damage]
    make(run_dir)
    with pytest.raises(ResumeError, match=expected) as refused:
        resumed(Counter(4), run_dir)
    assert "\n" not in str(refused.value)


def test_leftovers_of_a_killed_checkpoint_write_are_ignored(tmp_path: Path) -> None:
    """A half-written checkpoint directory and temporary manifest (a kill during a write) change
    nothing: resume continues from the checkpoint the manifest names."""
    stopped_at_level(Counter(4), tmp_path, 4)
    (tmp_path / ".checkpoint-0005-abcdef.partial").mkdir()
    (tmp_path / ".checkpoint-0005-abcdef.partial" / "visited.arrow").write_bytes(b"half")
    (tmp_path / ".manifest.json.123456.tmp").write_text('{"half": ')
    assert_same(resumed(Counter(4), tmp_path), run_bfs(Counter(4)))
    assert not (tmp_path / ".checkpoint-0005-abcdef.partial").exists()


# -- stored states verified against their bytes ----------------------------------------------------

#: A model whose violation (depth 7) lies beyond the checkpoint the tests below damage (level 4).
VIOLATING = lambda: Counter(4, sum_limit=7)  # noqa: E731


def rewrite_column(path: Path, column: str, change: Any) -> None:
    """Rewrite one column of an Arrow IPC file with ``change(values)``, keeping its type (an edit a
    checksum of the fingerprints alone does not see)."""
    import pyarrow as pa
    import pyarrow.feather as feather

    table = feather.read_table(str(path))
    values = change(table.column(column).to_pylist())
    kind = table.schema.field(column).type
    table = table.set_column(table.column_names.index(column), column, pa.array(values, kind))
    feather.write_feather(table, str(path), compression="uncompressed")


def test_frontier_states_replaced_by_another_states_bytes_are_refused(tmp_path: Path) -> None:
    """Frontier rows rewritten with the initial state's bytes, fingerprints and manifest untouched, are
    refused naming frontier.arrow; explored, they hid the violation behind "no error"."""
    stopped_at_level(VIOLATING(), tmp_path, 3)
    frontier = checkpoint_dir(tmp_path) / "frontier.arrow"
    rewrite_column(frontier, "data", lambda data: [Counter(4).encode((0, 0))] * len(data))
    with pytest.raises(ResumeError, match=r"frontier.arrow holds 5 state\(s\) whose bytes do not match"):
        resumed(VIOLATING(), tmp_path)


def test_an_edited_action_index_is_refused(tmp_path: Path) -> None:
    """One parent transition's action index changed in visited.arrow (counts, fingerprints and manifest
    untouched) is refused naming the file, not replayed into "the model is not deterministic"."""
    stopped_at_level(VIOLATING(), tmp_path, 3)
    visited = checkpoint_dir(tmp_path) / "visited.arrow"
    rewrite_column(visited, "action_index", lambda indices: [None if i is None else 1 - i for i in indices])
    with pytest.raises(ResumeError, match=r"visited.arrow does not match the checksum of parent transitions"):
        resumed(VIOLATING(), tmp_path)


def flipped_byte_outcomes(tmp_path: Path, step: int) -> Counter_[str]:
    """Resume a copy of a stopped run once per flipped byte (every ``step``-th byte of both checkpoint
    files); each must end as the uninterrupted run or be refused naming the file it damaged."""
    import shutil

    complete = run_bfs(VIOLATING())
    original = tmp_path / "original"
    stopped_at_level(VIOLATING(), original, 3)
    outcomes: Counter_[str] = Counter_()
    for name in ("frontier.arrow", "visited.arrow"):
        size = (checkpoint_dir(original) / name).stat().st_size
        for offset in range(0, size, step):
            run_dir = tmp_path / "copy"
            shutil.rmtree(run_dir, ignore_errors=True)
            shutil.copytree(original, run_dir)
            path = checkpoint_dir(run_dir) / name
            data = bytearray(path.read_bytes())
            data[offset] ^= 0xFF
            path.write_bytes(bytes(data))
            try:
                result = resumed(VIOLATING(), run_dir)
            except ResumeError as e:
                assert name in str(e) and "\n" not in str(e), (name, offset, str(e))
                outcomes["refused"] += 1
            else:
                assert_same(result, complete)
                outcomes["uninterrupted verdict"] += 1
    return outcomes


@pytest.mark.parametrize("step", [7, pytest.param(1, marks=pytest.mark.slow)], ids=["sample", "every-byte"])
def test_a_flipped_byte_in_a_checkpoint_gives_the_verdict_or_a_refusal(step: int, tmp_path: Path) -> None:
    """Any byte of frontier.arrow or visited.arrow flipped: resume ends as the uninterrupted run or is
    refused naming the file (never another verdict, never an internal error)."""
    outcomes = flipped_byte_outcomes(tmp_path, step)
    print(f"flipped bytes: {dict(outcomes)}")
    assert outcomes["refused"] > 0


def test_a_spark_level_whose_column_name_is_not_utf8_is_refused(tmp_path: Path) -> None:
    """A Parquet level whose schema holds a column name that is not UTF-8 (one flipped byte in the footer)
    is refused naming the level (pyarrow's UnicodeDecodeError was an internal error, exit 4); found by the
    slow flips of tests/test_reliability_spark.py. No Spark session: the level is written with pyarrow."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from spark_explore.trace import level_dir, verify_level

    directory = level_dir(tmp_path, 0)
    directory.mkdir(parents=True)
    from explorer.fingerprint import fingerprint

    table = pa.table({"fp": pa.array([fingerprint(b"x")], pa.int64()), "parent_fp": pa.array([None], pa.int64()),
                      "action_index": pa.array([None], pa.int32()), "action_name": pa.array([None], pa.string()),
                      "data": pa.array([b"x"], pa.binary())})
    pq.write_table(table, directory / "part-00000-driver.parquet")
    path = directory / "part-00000-driver.parquet"
    data = bytearray(path.read_bytes())
    at = data.find(b"parent_fp")
    while at >= 0:  # the column's name, in the footer's schema and column chunks
        data[at] = 0x8F
        at = data.find(b"parent_fp", at + 1)
    path.write_bytes(bytes(data))
    with pytest.raises(ResumeError, match="level=0000 cannot be read"):
        verify_level(tmp_path, 0, 1, None, None)
