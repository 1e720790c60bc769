"""The Spark BFS stops early without losing work, and resume verifies the run directory first.

Every test shares the one ``local[2]`` session of ``spark_fixtures``. A run stopped by a request
(what SIGINT does through the command line) or by its time limit keeps its complete levels; resumed,
it ends with the local BFS's result. Before a resumed run trusts a level, the level's row count and
checksums must match the manifest and every state's bytes its fingerprint: a missing or extra part
file, a missing level, an edited state or parent transition, a flipped byte or a damaged manifest is
refused in one sentence naming the file.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from spark_fixtures import counter_factory, slow_counter_factory, spark  # noqa: F401  (the session fixture)
from toy_models.counter import Counter

from explorer.bfs import run_bfs
from explorer.checkpoint import ResumeError, sealed
from explorer.contract import ModelFactory
from explorer.results import ExplorationResult, Outcome, StopCause
from explorer.stopping import Limits, StopRequest
from spark_explore import bfs as spark_bfs
from spark_explore.bfs import SparkBfsOptions, run_spark_bfs
from spark_explore.manifest import LevelRecord
from spark_explore.trace import level_dir

pytestmark = pytest.mark.spark


class _StopAtLevel:
    """An ``on_level`` callback that asks for a stop once the search has finished level ``depth``."""

    def __init__(self, stop: StopRequest, depth: int) -> None:
        self.stop, self.depth = stop, depth

    def __call__(self, record: LevelRecord) -> None:
        if record.depth == self.depth:
            self.stop.request("interrupted by SIGTERM")


def options(run_dir: Path, **more: Any) -> SparkBfsOptions:
    """Every level a Spark job (these models are small enough for the driver), unless ``more`` says otherwise."""
    return SparkBfsOptions(run_dir, master="local[2]", keep_session=True, **{"driver_seconds": 0, **more})


def assert_same(a: ExplorationResult, b: ExplorationResult) -> None:
    assert (a.outcome, a.reason, a.stats, a.discoveries, a.never_found) == (
        b.outcome, b.reason, b.stats, b.discoveries, b.never_found
    )  # fmt: skip


@pytest.fixture(scope="module")
def stopped_once(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """A counter run (n=4, 9 levels) stopped by a request after level 4 was written (made once)."""
    stop = StopRequest()
    run_dir = tmp_path_factory.mktemp("stopped") / "run"
    first = run_spark_bfs(counter_factory(n=4), options(run_dir, limits=Limits(stop=stop),
                                                        on_level=_StopAtLevel(stop, 4)))
    assert (first.outcome, first.stopped_by, first.reason) == (
        Outcome.INCONCLUSIVE, StopCause.INTERRUPTED, "interrupted by SIGTERM"
    )  # fmt: skip
    assert len(first.stats.levels) == 5
    return run_dir


@pytest.fixture
def stopped_run(stopped_once: Path, tmp_path: Path) -> Iterator[Path]:
    """A copy of the stopped run, for a test to resume or damage."""
    copy = tmp_path / "run"
    shutil.copytree(stopped_once, copy)
    yield copy


def test_a_stopped_run_resumes_to_the_local_result(stopped_run: Path) -> None:
    """A run stopped by a request keeps its complete levels; resumed, it ends as the local BFS."""
    manifest = json.loads((stopped_run / "manifest.json").read_text())
    assert (manifest["completed"], manifest["stopped_by"]) == (False, "interrupted")
    resumed = run_spark_bfs(counter_factory(n=4), options(stopped_run, resume=True))
    assert_same(resumed, run_bfs(counter_factory(n=4)()))


class _StopsWhileExpanding(Counter):
    """The counter, asking for a stop when the driver expands the state (1, 2) of level 3."""

    def __init__(self, stop: StopRequest) -> None:
        super().__init__(4)
        self.stop = stop

    def actions(self, state: tuple[int, int]) -> Any:
        if state == (1, 2):
            self.stop.request("interrupted by SIGTERM")
        return super().actions(state)


def _stopping_factory(stop: StopRequest) -> Counter:
    return _StopsWhileExpanding(stop)


def test_a_stop_between_driver_batches_resumes_on_spark(spark: Any, tmp_path: Path,  # noqa: F811
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A stop requested while the driver expands a level abandons it between two batches (of one
    state here); resumed with Spark levels (the visited fingerprints read back from the levels on
    disk), the run ends as the local BFS."""
    monkeypatch.setattr(spark_bfs, "_DRIVER_BATCH", 1)
    stop = StopRequest()
    first = run_spark_bfs(ModelFactory(_stopping_factory, stop),
                          options(tmp_path, driver_seconds=1e9, limits=Limits(stop=stop)))
    assert (first.outcome, first.stopped_by, len(first.stats.levels)) == (Outcome.INCONCLUSIVE,
                                                                          StopCause.INTERRUPTED, 3)
    factory = counter_factory(n=4)
    assert_same(run_spark_bfs(factory, options(tmp_path, resume=True)), run_bfs(factory()))


def test_a_time_limit_cancels_the_running_level(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """A time limit that passes during a level cancels its job: the run stops with "time limit
    reached" and, resumed, ends as the local BFS."""
    factory = counter_factory(n=4)
    first = run_spark_bfs(factory, options(tmp_path, limits=Limits(time_limit=0.5)))
    assert (first.outcome, first.stopped_by) == (Outcome.INCONCLUSIVE, StopCause.TIME_LIMIT)
    assert first.reason.startswith("time limit reached")
    assert_same(run_spark_bfs(factory, options(tmp_path, resume=True)), run_bfs(factory()))


def test_a_time_limit_passing_before_a_job_starts_stops_the_level(spark: Any, tmp_path: Path,  # noqa: F811
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A limit that passes while the driver prepares a level's job (or waits for the session) stops
    the run before the job, not after a whole level of it; the reason says how long it ran; resumed,
    the run ends as the local BFS."""
    real_write_visited = spark_bfs._Search._write_visited

    def slow_write_visited(search: Any, depth: int) -> Path:
        if depth == 2:  # the deadline passes here, after the level's last look at the clock
            time.sleep(max(0.0, search.options.limits.deadline(search.started) - time.monotonic()) + 0.3)
        return real_write_visited(search, depth)

    monkeypatch.setattr(spark_bfs._Search, "_write_visited", slow_write_visited)
    factory = slow_counter_factory(4, 3.0)  # level 2's job: 3 states, 3 s of expansion at least
    limit = 8.0
    started = time.monotonic()
    first = run_spark_bfs(factory, options(tmp_path, limits=Limits(time_limit=limit, started=started)))
    ran = time.monotonic() - started
    assert (first.outcome, first.stopped_by) == (Outcome.INCONCLUSIVE, StopCause.TIME_LIMIT)
    assert len(first.stats.levels) <= 2, first.stats.levels
    said = float(first.reason.split("stopped after ")[1].split(" s")[0])
    assert limit - 0.05 <= said <= ran + 0.05, (first.reason, ran)  # the reason rounds to a tenth of a second
    monkeypatch.undo()
    counter = counter_factory(n=4)
    assert_same(run_spark_bfs(counter, options(tmp_path, resume=True)), run_bfs(counter()))


def remove_a_part_file(run_dir: Path, depth: int) -> None:
    parts = sorted(level_dir(run_dir, depth).glob("part-*.parquet"))
    assert parts, f"level {depth} has part files"
    parts[0].unlink()


def edit_manifest(run_dir: Path, edit: Any, *, reseal: bool = True) -> None:
    """Edit the manifest, sealing it again unless told not to (an edit the digest does not catch)."""
    path = run_dir / "manifest.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(sealed(data) if reseal else data))


def _more_states(data: dict[str, Any]) -> None:
    data["levels"][2]["new"] += 1


def _bump_checksum(data: dict[str, Any]) -> None:
    data["levels"][2]["checksum"] += 1


def _wrong_type(data: dict[str, Any]) -> None:
    data["levels"][1]["new"] = "many"


def rewrite_level(run_dir: Path, depth: int, column: str, change: Any) -> None:
    """Rewrite one column of a level's Parquet with ``change(values)`` as one part file, rows,
    fingerprints and manifest untouched (an edit no checksum of the fingerprints sees)."""
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    directory = level_dir(run_dir, depth)
    table = ds.dataset(directory, format="parquet").to_table()
    values = pa.array(change(table.column(column).to_pylist()), table.schema.field(column).type)
    table = table.set_column(table.column_names.index(column), column, values)
    shutil.rmtree(directory)
    directory.mkdir()
    pq.write_table(table, directory / "part-00000-edited.parquet")


def _initial_bytes(values: list[Any]) -> list[Any]:
    return [Counter(4).encode((0, 0))] * len(values)


def _other_actions(values: list[Any]) -> list[Any]:
    return [1 - i for i in values]


DAMAGES = {
    "states replaced by another state's bytes": (lambda d: rewrite_level(d, 5, "data", _initial_bytes),
                                                 r"level=0005 holds 4 state\(s\) whose bytes do not match"),
    "action indices edited": (lambda d: rewrite_level(d, 2, "action_index", _other_actions),
                              "level=0002 does not match the checksum of parent transitions"),
    "a part file of the last level removed": (lambda d: remove_a_part_file(d, 5), "level=0005 holds"),
    "a part file of an earlier level removed": (lambda d: remove_a_part_file(d, 2), "level=0002 holds"),
    "a level directory removed": (lambda d: shutil.rmtree(level_dir(d, 3)), "level=0003 is missing"),
    "a checksum that does not match": (lambda d: edit_manifest(d, _bump_checksum), "level=0003 does not match"),
    "a manifest edited by hand": (lambda d: edit_manifest(d, _more_states, reseal=False), "its own digest"),
    "a manifest that is not JSON": (lambda d: (d / "manifest.json").write_text("{\"format\": 3, "), "is corrupt"),
    "a manifest cut short": (lambda d: (d / "manifest.json").write_bytes(b""), "is corrupt"),
    "a manifest field of the wrong type": (lambda d: edit_manifest(d, _wrong_type), "is corrupt"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_resume_refuses_a_damaged_run_directory(damage: str, stopped_run: Path) -> None:
    """A run directory whose files no longer match its manifest is refused in one sentence naming
    the file, before a session is used (never a silent recount, never a wrong verdict)."""
    make, expected = DAMAGES[damage]
    make(stopped_run)
    with pytest.raises(ResumeError, match=expected) as refused:
        run_spark_bfs(counter_factory(n=4), options(stopped_run, resume=True))
    assert "\n" not in str(refused.value)


def test_a_run_killed_before_its_first_level_resumes(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """A Spark run killed before it wrote anything (while its session starts) leaves only what the
    command line writes first (run.json, the scenario's copy): --resume starts it again there and
    ends with the local BFS's result."""
    from click.testing import CliRunner

    from kmc import compose
    from kmc.cli import main
    from kmc.commands.explore import _keep_scenario
    from kmc.common import new_run_dir

    sc = compose.resolve_scenario("planted-complete-on-first-success")
    run_dir = new_run_dir(tmp_path, sc.name)
    _keep_scenario(run_dir, sc, "spark")  # what `kmc explore --engine spark` writes before Spark starts
    resumed = CliRunner().invoke(main, ["explore", "--resume", str(run_dir), "--format", "json"])
    assert resumed.exit_code == 1, resumed.stderr
    local = run_bfs(compose.model_for(sc))
    assert json.loads(resumed.stdout)["statistics"]["distinct"] == local.stats.distinct
    assert [d["fingerprints"] for d in json.loads(resumed.stdout)["discoveries"]] == [
        list(d.path) for d in local.discoveries
    ]


@pytest.mark.parametrize("offsets", [6, pytest.param(60, marks=pytest.mark.slow)], ids=["sample", "more"])
def test_a_flipped_byte_in_a_level_gives_the_verdict_or_a_refusal(offsets: int, stopped_once: Path,
                                                                  tmp_path: Path) -> None:
    """A byte flipped anywhere in a level's Parquet file (spread over the file, the footer included):
    resume ends as the local BFS or is refused naming the level, never another verdict or exit 4."""
    complete = run_bfs(counter_factory(n=4)())
    outcomes = {"refused": 0, "uninterrupted verdict": 0}
    for depth in (0, 1, 5):  # level 0 written by the driver (pyarrow), the others by Spark jobs
        [part] = sorted(level_dir(stopped_once, depth).glob("part-*.parquet"))[:1]
        size = part.stat().st_size
        for offset in sorted({size * k // offsets for k in range(offsets)} | {size - 1, size - 9}):
            run_dir = tmp_path / f"copy-{depth}-{offset}"
            shutil.copytree(stopped_once, run_dir)
            path = level_dir(run_dir, depth) / part.name
            data = bytearray(path.read_bytes())
            data[offset] ^= 0xFF
            path.write_bytes(bytes(data))
            try:
                result = run_spark_bfs(counter_factory(n=4), options(run_dir, resume=True))
            except ResumeError as e:
                assert f"level={depth:04d}" in str(e) and "\n" not in str(e), (depth, offset, str(e))
                outcomes["refused"] += 1
            else:
                assert_same(result, complete)
                outcomes["uninterrupted verdict"] += 1
            shutil.rmtree(run_dir)
    print(f"flipped bytes: {outcomes}")
    assert outcomes["refused"] > 0
