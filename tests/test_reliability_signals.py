"""Interrupts and kills of a real ``kmc explore`` process, then ``--resume``: the counts of an
uninterrupted run, whatever the moment.

The runs are subprocesses in a session of their own (``python -m kmc`` with this checkout first on
the import path), so that a signal can go to the whole process group, as Ctrl-C in a terminal
does. A run is signalled once its manifest shows it has reached a chosen point: the local engine
checkpoints every level here (``--checkpoint-every 0``), the Spark engine saves every level anyway.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: racks: 14,054 distinct states over 29 levels (tests/test_scenarios_pinned.py).
LOCAL_SCENARIO, LOCAL_DISTINCT, LOCAL_GENERATED = "racks", 8764, 22954
#: planted-complete-on-first-success: 152 states, a violation found at depth 5 (six Spark levels).
SPARK_SCENARIO = "planted-complete-on-first-success"


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.update(SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    return env


def kmc_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "kmc", "explore", *args]


def run_kmc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(kmc_command(*args), cwd=cwd, env=environment(), capture_output=True, text=True,
                          timeout=900)


def manifest_of(out: Path) -> dict[str, Any] | None:
    for path in out.glob("*/manifest.json"):
        with contextlib.suppress(OSError, ValueError):
            return dict(json.loads(path.read_text()))
    return None


def start_and_signal(args: list[str], out: Path, cwd: Path, ready: Callable[[Path], bool], sig: signal.Signals,
                     *, group: bool) -> subprocess.CompletedProcess[str]:
    """Start ``kmc explore``, send ``sig`` (to its process group when ``group``) once ``ready(out)``."""
    process = subprocess.Popen(kmc_command(*args, "--out", str(out)), cwd=cwd, env=environment(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        while not ready(out) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert process.poll() is None, "the run ended before it could be signalled"
        if group:
            os.killpg(process.pid, sig)
        else:
            process.send_signal(sig)
        stdout, stderr = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # a JVM left behind by a killed driver
    return subprocess.CompletedProcess(args, process.returncode, stdout, stderr)


def checkpoint_at(depth: int) -> Callable[[Path], bool]:
    def ready(out: Path) -> bool:
        manifest = manifest_of(out)
        return bool(manifest and manifest.get("checkpoint") and manifest["checkpoint"]["depth"] >= depth)

    return ready


def levels_at(count: int) -> Callable[[Path], bool]:
    def ready(out: Path) -> bool:
        manifest = manifest_of(out)
        return bool(manifest and len(manifest.get("levels", ())) >= count)

    return ready


def run_file_written(out: Path) -> bool:
    return any(out.glob("*/run.json"))


def the_run_dir(out: Path) -> Path:
    [run_dir] = [p for p in out.iterdir() if p.is_dir()]
    return run_dir


def assert_one_line_stop(done: subprocess.CompletedProcess[str], run_dir: Path, signal_name: str) -> None:
    """Exit 3, no traceback, the summary says interrupted, the last line gives the resume command."""
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr and "Exception" not in done.stderr, done.stderr
    assert done.stdout.strip().splitlines()[-1] == (
        f"Stopped before the search was complete: interrupted by {signal_name}. "
        f"Resume with: kmc explore --resume {run_dir}"
    )
    summary = json.loads((run_dir / "summary.json").read_text())
    assert (summary["outcome"], summary["stopped_by"]) == ("inconclusive", "interrupted")


@pytest.mark.parametrize("sig", [signal.SIGINT, pytest.param(signal.SIGTERM, marks=pytest.mark.slow)],
                         ids=["SIGINT", "SIGTERM"])
def test_local_interrupt_then_resume(sig: signal.Signals, tmp_path: Path) -> None:
    """SIGINT (Ctrl-C, to the process group) or SIGTERM stops a local run with one line, exit 3 and the
    resume command; --resume then ends with the uninterrupted counts."""
    out = tmp_path / "out"
    done = start_and_signal([LOCAL_SCENARIO, "--engine", "local", "--checkpoint-every", "0"], out, tmp_path,
                            checkpoint_at(2), sig, group=sig is signal.SIGINT)
    run_dir = the_run_dir(out)
    assert_one_line_stop(done, run_dir, sig.name)
    resumed = run_kmc("--resume", str(run_dir), "--format", "json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    statistics = json.loads(resumed.stdout)["statistics"]
    assert (statistics["distinct"], statistics["generated"]) == (LOCAL_DISTINCT, LOCAL_GENERATED)


KILL_POINTS: dict[str, Callable[[Path], bool]] = {
    "before any checkpoint": run_file_written,
    "after level 3": checkpoint_at(3),
    "after level 10": checkpoint_at(10),
}


@pytest.mark.slow
@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_local_kill_at_any_moment_then_resume(point: str, tmp_path: Path) -> None:
    """A local run killed with SIGKILL (no chance to save anything) and resumed ends with the
    uninterrupted counts, wherever it was killed."""
    out = tmp_path / "out"
    done = start_and_signal([LOCAL_SCENARIO, "--engine", "local", "--checkpoint-every", "0"], out, tmp_path,
                            KILL_POINTS[point], signal.SIGKILL, group=True)
    assert done.returncode == -signal.SIGKILL
    resumed = run_kmc("--resume", str(the_run_dir(out)), "--format", "json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    statistics = json.loads(resumed.stdout)["statistics"]
    assert (statistics["distinct"], statistics["generated"]) == (LOCAL_DISTINCT, LOCAL_GENERATED)


def comparable(document: dict[str, Any]) -> dict[str, Any]:
    """What two runs must agree on in kmc's JSON document (not timings, engine or places)."""
    stats = {k: v for k, v in document["statistics"].items() if k not in ("seconds", "states_per_second")}
    stats["levels"] = [{k: v for k, v in level.items() if k != "seconds"} for level in stats["levels"]]
    return {"outcome": document["outcome"], "statistics": stats, "discoveries": document["discoveries"]}


@pytest.fixture(scope="module")
def spark_local_reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """kmc's JSON document for the local BFS on the Spark tests' scenario."""
    where = tmp_path_factory.mktemp("reference")
    done = run_kmc(SPARK_SCENARIO, "--engine", "local", "--format", "json", "--out", str(where), cwd=where)
    assert done.returncode == 1, done.stderr
    return comparable(json.loads(done.stdout))


@pytest.mark.slow
@pytest.mark.spark
def test_spark_ctrl_c_then_resume(spark_local_reference: dict[str, Any], tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the process group) during a Spark run: one line, no traceback (four before),
    exit 3 (2 before) and the resume command; --resume ends with the local BFS's result."""
    out = tmp_path / "out"
    spark_jobs = ["--driver-level-seconds", "0"]  # every level a Spark job, so the signal meets one
    done = start_and_signal([SPARK_SCENARIO, "--engine", "spark", "--master", "local[2]", *spark_jobs], out, tmp_path,
                            levels_at(2), signal.SIGINT, group=True)
    run_dir = the_run_dir(out)
    assert_one_line_stop(done, run_dir, "SIGINT")
    resumed = run_kmc("--resume", str(run_dir), "--format", "json", cwd=tmp_path)
    assert resumed.returncode == 1, resumed.stderr
    assert comparable(json.loads(resumed.stdout)) == spark_local_reference


# A shell's background job starts with SIGINT ignored, and kmc (like Python) leaves an ignored signal ignored:
# the child takes Python's own SIGINT handler first, as a command started from a terminal has.
_SLOW_IMPORT = """
import builtins, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.argv = ["kmc", "properties"]
real_import = builtins.__import__
def slow_import(name, *args, **kwargs):
    if name == "click" and "click" not in sys.modules:
        sys.stderr.write("importing click\\n"); sys.stderr.flush()
        time.sleep(30)
    return real_import(name, *args, **kwargs)
builtins.__import__ = slow_import
from kmc.launch import main
main()
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_the_command_line_imports_is_one_line_and_exit_3(sig: signal.Signals) -> None:
    """A signal while kmc's modules import (held there by a slow import of click) prints kmc's one line
    and exits 3, as an interrupt outside a search does (a KeyboardInterrupt traceback and 130, or
    silence and 143, before)."""
    process = subprocess.Popen([sys.executable, "-c", _SLOW_IMPORT], env=environment(), stderr=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    assert process.stderr is not None
    assert process.stderr.readline() == "importing click\n"
    process.send_signal(sig)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 3, stderr
    assert stderr == f"kmc: interrupted by {sig.name}; the command did not finish.\n"
    assert stdout == ""
