"""The console's progress: a live rich display on a terminal, TLC-style lines elsewhere or on request;
what the engines report within a level (states or tasks done, memory) and while Spark starts."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
from rich.console import Console
from spark_fixtures import counter_factory, slow_counter_factory, spark  # noqa: F401  (the session fixture)
from toy_models.counter import Counter

from explorer import bfs as bfs_module
from explorer.bfs import BfsOptions, run_bfs
from explorer.progress import ProgressPrinter, ProgressSnapshot, RichProgress, progress_for
from explorer.stopping import Limits
from spark_explore import bfs as spark_bfs
from spark_explore.bfs import SparkBfsOptions, run_spark_bfs

ROOT = Path(__file__).resolve().parents[1]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_live_only_on_a_terminal_and_not_with_no_progress() -> None:
    """A terminal gets the rich display; a pipe, or a terminal with --no-progress, gets TLC-style lines."""
    assert isinstance(progress_for(_Terminal()), RichProgress)
    assert isinstance(progress_for(_Terminal(), live=False), ProgressPrinter)
    assert isinstance(progress_for(io.StringIO()), ProgressPrinter)


def test_rich_progress_shows_the_last_numbers_when_closed() -> None:
    """The live display draws depth, states generated, distinct states and queue; close() draws the last
    snapshot even when it arrived within the refresh interval."""
    out = io.StringIO()
    progress = RichProgress(Console(file=out, force_terminal=True, width=120), refresh_seconds=3600)
    progress(ProgressSnapshot(seconds=1.0, depth=3, generated=1_234, distinct=567, queue=89))
    progress(ProgressSnapshot(seconds=2.0, depth=4, generated=98_765, distinct=43_210, queue=12))
    assert "1,234" in out.getvalue() and "98,765" not in out.getvalue()
    progress.close()
    shown = out.getvalue()
    for number in ("98,765", "43,210", "states generated", "distinct states", "left on queue"):
        assert number in shown


def test_plain_progress_lines_use_tlc_vocabulary() -> None:
    """The plain printer writes TLC's Progress line."""
    out = io.StringIO()
    ProgressPrinter(out)(ProgressSnapshot(seconds=60.0, depth=7, generated=6_000, distinct=4_000, queue=100))
    assert out.getvalue() == ("Progress(7) at 60.0s: 6,000 states generated (6,000 s/min), 4,000 distinct states "
                              "found, 100 states left on queue.\n")


def test_a_spark_jobs_count_has_no_rate_until_its_level_ends_and_then_the_levels_rate() -> None:
    """While a Spark job runs its level's transitions are not counted: the line says so rather than 0 s/min, and the
    line after the level gives the rate over the time since the count last moved, not over the seconds since the
    line before (the count moved by a whole level in them). A local search's lines keep TLC's rate since the line
    before, 0 where the count did not move."""
    out = io.StringIO()
    printer = ProgressPrinter(out)
    level = ProgressSnapshot(seconds=50.0, depth=9, generated=290_000, distinct=140_000, queue=86_000)
    printer(level)
    printer(attrs.evolve(level, seconds=70.0, level_done=2, level_size=4, level_unit="tasks"))
    printer(attrs.evolve(level, seconds=80.0, level_done=3, level_size=4, level_unit="tasks"))
    printer(attrs.evolve(level, seconds=82.0, depth=10, generated=722_000))
    printer(attrs.evolve(level, seconds=92.0, depth=10, generated=722_000))
    printer(attrs.evolve(level, seconds=102.0, depth=10, generated=782_000))
    rates = [line.split("generated (")[1].split(")")[0] for line in out.getvalue().splitlines()]
    assert rates == ["348,000 s/min", "counted when the level ends", "counted when the level ends",
                     "810,000 s/min", "0 s/min", "360,000 s/min"]


def test_the_displays_show_progress_within_a_level_and_memory_against_the_budget() -> None:
    """A snapshot within a level shows how much of the level is done, and the memory against
    --max-memory, on the live display and in the plain line; a phase ("starting Spark") is shown
    once, as it begins, not as a Progress line."""
    snapshot = ProgressSnapshot(seconds=5.0, depth=9, generated=5_000, distinct=4_000, queue=700, level_done=1_024,
                                level_size=4_096, memory=3 << 30, max_memory=8 << 30)
    out = io.StringIO()
    live = RichProgress(Console(file=out, force_terminal=True, width=160), refresh_seconds=0)
    live(snapshot)
    live.close()
    for shown in ("level 9: 1,024 of 4,096 states (25%) done", "memory: 3.0 GiB of 8.0 GiB (--max-memory)"):
        assert shown in out.getvalue()
    plain = io.StringIO()
    printer = ProgressPrinter(plain)
    starting = ProgressSnapshot(seconds=1.0, depth=3, generated=10, distinct=8, queue=4, phase="starting Spark")
    printer(starting)
    printer(attrs.evolve(starting, seconds=2.0))
    printer(snapshot)
    assert plain.getvalue().splitlines() == [
        "Starting Spark at 1.0s.",
        "Progress(9) at 5.0s: 5,000 states generated (60,000 s/min), 4,000 distinct states found, 700 states left "
        "on queue. Level 9: 1,024 of 4,096 states (25%). Memory: 3.0 GiB of 8.0 GiB.",
    ]


def test_the_local_engine_reports_within_a_level(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local BFS reports between the batches of a level: the states of the level expanded so
    far, and its resident memory against the budget."""
    monkeypatch.setattr(bfs_module, "_BATCH", 2)
    snapshots: list[ProgressSnapshot] = []
    run_bfs(Counter(6), BfsOptions(progress=snapshots.append, progress_interval_seconds=0,
                                   limits=Limits(max_memory=1 << 40)))
    within = [s for s in snapshots if s.level_size]
    assert within and all(0 < (s.level_done or 0) <= s.level_size for s in within if s.level_size)
    assert (7, 6) in {(s.level_size, s.level_done) for s in within}  # level 6: 7 states, 6 done after 3 batches
    assert all(s.memory and s.max_memory == 1 << 40 for s in snapshots)


@pytest.mark.spark
def test_the_spark_engine_reports_within_a_level(spark: Any, tmp_path: Path,  # noqa: F811
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The Spark BFS reports within a level: between the driver's batches (states done) and while a
    level's Spark job runs (its tasks finished, from Spark's status tracker)."""
    monkeypatch.setattr(spark_bfs, "_DRIVER_BATCH", 2)
    on_driver: list[ProgressSnapshot] = []
    run_spark_bfs(counter_factory(n=6), SparkBfsOptions(tmp_path / "driver", master="local[2]", keep_session=True,
                                                        progress=on_driver.append, progress_interval_seconds=0,
                                                        driver_seconds=1e9))
    assert {(s.level_unit, s.level_size, s.level_done) for s in on_driver} >= {("states", 7, 6)}
    as_jobs: list[ProgressSnapshot] = []
    run_spark_bfs(slow_counter_factory(4, 0.5),
                  SparkBfsOptions(tmp_path / "jobs", master="local[2]", keep_session=True, progress=as_jobs.append,
                                  progress_interval_seconds=0, driver_seconds=0))
    tasks = [s for s in as_jobs if s.level_unit == "tasks" and s.level_size]
    assert tasks and all(0 <= (s.level_done or 0) <= (s.level_size or 0) for s in tasks)


@pytest.mark.spark
def test_kmc_explore_on_spark_says_it_starts_spark_and_keeps_the_jvm_off_the_terminal(tmp_path: Path) -> None:
    """A Spark run that waits for its session says "Starting Spark" (the JVM takes seconds to start);
    what the JVM itself prints (Java's warnings) goes to spark-jvm.log in the run directory, not to
    the terminal; the run leaves no lock."""
    done = subprocess.run([sys.executable, "-m", "kmc", "explore", "planted-complete-on-first-success", "--engine",
                           "spark", "--master", "local[1]", "--driver-level-seconds", "0", "--out", str(tmp_path)],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=900)
    assert done.returncode == 1, done.stderr
    assert "Starting Spark at " in done.stderr
    [run_dir] = [p for p in tmp_path.iterdir() if p.is_dir()]
    jvm_log = (run_dir / "spark-jvm.log").read_text()
    kmc_lines = ("Progress(", "Level ", "Starting Spark", "Model checking", "Reports written", "Stopped before")
    assert [line for line in done.stderr.splitlines() if line and not line.startswith(kmc_lines)] == []
    assert "WARNING" in jvm_log or jvm_log == ""  # Java's warning, when this JVM prints one, is kept there
    assert not (run_dir / ".lock").exists()
