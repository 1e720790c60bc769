"""The same scenario gives the same counts, the same counterexample and the same report bytes
(timings aside), run after run, on either engine, whatever Spark's parallelism (local[1], local[2],
shuffle partitions).

Reports are compared as written to the run directory, after removing what is measured rather than
computed: wall times, rates, the run directory's name; and what names the engine (the engine, the
master, the local engine's memory budget), as reports of both engines are compared on purpose.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from spark_fixtures import spark  # noqa: F401  (the session fixture)
from test_reliability_signals import environment

from kmc.cli import main

SCENARIO = "stale-deletion-response"  # a violation at depth 13, 6,117 states
SPARK_SCENARIO = "planted-complete-on-first-success"  # a violation at depth 5, 152 states
_TIMED = {"seconds", "states_per_second", "run_dir", "resume_command", "master", "engine", "max_memory"}


def measured_removed(value: Any) -> Any:
    """``value`` without the fields that are measured or name a place."""
    if isinstance(value, dict):
        return {k: measured_removed(v) for k, v in value.items() if k not in _TIMED}
    if isinstance(value, list):
        return [measured_removed(v) for v in value]
    return value


def report_without_timings(text: str) -> str:
    # report.txt wraps long lines at 100 columns: join them first, so that what is removed below (the local
    # engine's max_memory bound) does not move the wrapping of the rest
    text = re.sub(r"\n  (?=\S)", " ", text)
    text = re.sub(r"^Outcome: (.*), engine \w+\.$", r"Outcome: \1.", text, flags=re.MULTILINE)
    text = re.sub(r"^Finished in .*$", "Finished in -", text, flags=re.MULTILINE)
    text = re.sub(r"max_memory=\d+, ", "", text)
    return re.sub(r"^(\s+\d+(?:\s+[\d,]+){4})\s+\d+\.\d+$", r"\1", text, flags=re.MULTILINE)  # level seconds


def run_files(out: Path) -> tuple[dict[str, Any], str]:
    [run_dir] = out.iterdir()
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    return measured_removed(summary), report_without_timings((run_dir / "report.txt").read_text(encoding="utf-8"))


def explore(out: Path, *args: str) -> tuple[dict[str, Any], str]:
    result = CliRunner().invoke(main, ["explore", *args, "--out", str(out)])
    assert result.exit_code == 1, result.stderr
    return run_files(out)


def test_two_local_runs_write_the_same_reports(tmp_path: Path) -> None:
    """Two local runs of a scenario write byte-identical summary.json and report.txt, timings aside."""
    first = explore(tmp_path / "a", SCENARIO, "--engine", "local")
    second = explore(tmp_path / "b", SCENARIO, "--engine", "local")
    assert first == second
    assert first[0]["statistics"]["distinct"] == 9472
    assert first[0]["discoveries"][0]["trace_length"] == 13


@pytest.mark.spark
def test_spark_shuffle_partitions_change_no_byte(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """Spark runs with 1 and 5 shuffle partitions write the local run's reports, timings and engine aside."""
    local = explore(tmp_path / "local", SPARK_SCENARIO, "--engine", "local")
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        for partitions in ("1", "5"):
            spark.conf.set("spark.sql.shuffle.partitions", partitions)
            assert explore(tmp_path / partitions, SPARK_SCENARIO, "--engine", "spark") == local
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", previous)


@pytest.mark.slow
@pytest.mark.spark
def test_spark_on_one_core_changes_no_byte(tmp_path: Path) -> None:
    """A Spark run on local[1], every level a Spark job, in its own process, writes the local run's reports
    (local[2] is the shared session of the test above)."""
    local = explore(tmp_path / "local", SPARK_SCENARIO, "--engine", "local")
    done = subprocess.run(
        [sys.executable, "-m", "kmc", "explore", SPARK_SCENARIO, "--engine", "spark", "--master", "local[1]",
         "--driver-level-seconds", "0", "--out", str(tmp_path / "spark")],
        cwd=tmp_path, env=environment(), capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert run_files(tmp_path / "spark") == local
