"""The Spark BFS on a real standalone cluster on loopback: same results as the local BFS, even when a
worker dies in the middle of a run; and a driver killed mid-run that is resumed.

The cluster is started with the pyspark package's own launcher (``bin/spark-class`` running
``org.apache.spark.deploy.master.Master`` and ``…worker.Worker``) on 127.0.0.1 with free ports, each
daemon in its own process group so that a worker can be killed with its executor and Python
workers, and everything started here is stopped in the fixtures' finalizers. Explorations run
through the real command line (``kmc explore --engine spark --master spark://…`` and the
``spark-submit`` line of ``--print-spark-submit``) in subprocesses, against shipped scenarios.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

#: 1,124 states over 13 levels: a complete search.
SCENARIO = "unclean-election"
#: 11,776 states over 13 levels, ending in a violation: long enough to lose a worker in the middle.
VIOLATING_SCENARIO = "kafka-6650"
#: Every level a Spark job on the cluster: these scenarios are small enough for the driver to expand
#: them alone, which would leave the cluster (and a killed worker) out of the test.
ON_SPARK = ("--driver-level-seconds", "0")


def _pyspark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _environment(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(_pyspark_home()),
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
    )
    env.update(extra)
    return env


#: The master's log line saying where its web UI listens ("Bound MasterWebUI to 127.0.0.1, and started at
#: http://localhost:44694").
_MASTER_UI_BOUND = re.compile(rb"Bound MasterWebUI to \S+, and started at http://[^:/]+:(\d+)")


class StandaloneCluster:
    """A Spark standalone master and workers on 127.0.0.1, each daemon in its own process group."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = _free_port()
        self.ui_port = _free_port()
        self.master_url = f"spark://127.0.0.1:{self.port}"
        self.master: subprocess.Popen[bytes] | None = None
        self.workers: list[subprocess.Popen[bytes]] = []

    def _daemon(self, name: str, *arguments: str) -> subprocess.Popen[bytes]:
        log = (self.directory / f"{name}.log").open("wb")
        return subprocess.Popen(
            [str(_pyspark_home() / "bin" / "spark-class"), *arguments],
            env=_environment(SPARK_WORKER_DIR=str(self.directory / "work"), SPARK_LOG_DIR=str(self.directory)),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def start(self, workers: int, cores_per_worker: int) -> None:
        self.master = self._daemon(
            "master",
            "org.apache.spark.deploy.master.Master",
            "--host", "127.0.0.1", "--port", str(self.port), "--webui-port", str(self.ui_port),
        )  # fmt: skip
        for index in range(workers):
            options = ["--host", "127.0.0.1", "--cores", str(cores_per_worker), "--memory", "2g"]
            options += ["--webui-port", str(_free_port()), "--work-dir", str(self.directory / f"work{index}")]
            worker = self._daemon(f"worker{index}", "org.apache.spark.deploy.worker.Worker", *options, self.master_url)
            self.workers.append(worker)
        self.wait_for_workers(workers)

    def master_ui_port(self) -> int:
        """The port the master's web UI bound: the one asked for, or the next one Spark moved to when another
        process took it between ``_free_port`` and the master's start (tests running side by side)."""
        try:
            bound = _MASTER_UI_BOUND.search((self.directory / "master.log").read_bytes())
        except OSError:
            bound = None
        return int(bound.group(1)) if bound else self.ui_port

    def alive_workers(self) -> int:
        """The workers alive by the master's JSON; 0 while it does not answer, or while another web UI answers at
        the port asked for (a worker's or a side-by-side test's took it, and the master's log does not yet say the
        port it moved to): that page is HTML, not the master's JSON."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.master_ui_port()}/json/", timeout=2) as reply:
                state = json.load(reply)
        except (OSError, ValueError):
            return 0
        return sum(1 for worker in state.get("workers", []) if worker.get("state") == "ALIVE")

    def wait_for_workers(self, count: int, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while self.alive_workers() < count:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{count} Spark workers did not register with {self.master_url}; see {self.directory}"
                )
            time.sleep(0.5)

    def kill_worker(self, index: int) -> None:
        """Kill a worker with its executor and Python workers (its whole process group), at once."""
        _kill_group(self.workers[index], signal.SIGKILL)

    def stop(self) -> None:
        for process in [*self.workers, *([self.master] if self.master else [])]:
            _kill_group(process, signal.SIGTERM)
        for process in [*self.workers, *([self.master] if self.master else [])]:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                _kill_group(process, signal.SIGKILL)
                process.wait(timeout=10)


def _kill_group(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)


#: The cores of the module's worker: three, so that the tasks planned by its registered cores (twice as many
#: shuffle partitions) differ from those planned for a cluster whose executors are not known (two).
CLUSTER_CORES = 3


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    """A master and one three-core worker for the module, stopped at the end."""
    running = StandaloneCluster(tmp_path_factory.mktemp("cluster"))
    try:
        running.start(workers=1, cores_per_worker=CLUSTER_CORES)
        yield running
    finally:
        running.stop()


@pytest.fixture
def two_worker_cluster(tmp_path: Path) -> Iterator[StandaloneCluster]:
    """A master and two one-core workers (one of which a test kills), stopped at the end."""
    running = StandaloneCluster(tmp_path / "cluster")
    running.directory.mkdir()
    try:
        running.start(workers=2, cores_per_worker=1)
        yield running
    finally:
        running.stop()


def kmc_explore(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``kmc explore`` in a subprocess, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-c", "from kmc.cli import main; main()", "explore", *arguments],
        cwd=cwd,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )


def comparable(document: dict[str, Any]) -> dict[str, Any]:
    """What two engines must agree on in kmc's JSON document (not timings, engine or places)."""
    stats = {k: v for k, v in document["statistics"].items() if k not in ("seconds", "states_per_second")}
    stats["levels"] = [{k: v for k, v in level.items() if k != "seconds"} for level in stats["levels"]]
    return {
        "outcome": document["outcome"],
        "statistics": stats,
        "discoveries": document["discoveries"],
        "never_found": document["never_found"],
    }


_LOCAL_RESULTS: dict[str, dict[str, Any]] = {}


def local_result(scenario: str, tmp_path: Path) -> dict[str, Any]:
    """kmc's JSON document for the local BFS on ``scenario`` (computed once per scenario)."""
    if scenario not in _LOCAL_RESULTS:
        done = kmc_explore(
            scenario, "--engine", "local", "--format", "json", "--out", str(tmp_path / "local"), cwd=tmp_path
        )
        assert done.returncode in (0, 1), done.stderr
        _LOCAL_RESULTS[scenario] = json.loads(done.stdout)
    return _LOCAL_RESULTS[scenario]


def files_per_level(runs: Path) -> list[int]:
    """The Parquet files of each level of the one run under ``runs``: a Spark level's shuffle partitions that
    hold states."""
    (run_dir,) = (path.parent for path in runs.glob("*/manifest.json"))
    levels = sorted(run_dir.glob("levels/level=*"), key=lambda level: int(level.name.split("=")[1]))
    return [len(list(level.glob("part-*.parquet"))) for level in levels]


def test_cli_on_a_standalone_cluster_matches_local(cluster: StandaloneCluster, tmp_path: Path) -> None:
    """kmc explore --master spark://127.0.0.1:PORT finds the local BFS's counts, levels and examples, its levels
    shuffled into twice as many partitions as the worker registered cores."""
    done = kmc_explore(
        SCENARIO, "--engine", "spark", "--master", cluster.master_url, *ON_SPARK, "--format", "json",
        "--out", str(tmp_path / "runs"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert (document["engine"], document["master"]) == ("spark", cluster.master_url)
    assert comparable(document) == comparable(local_result(SCENARIO, tmp_path))
    assert max(files_per_level(tmp_path / "runs")) == 2 * CLUSTER_CORES


def test_spark_submit_line_runs_on_the_cluster(cluster: StandaloneCluster, tmp_path: Path) -> None:
    """The printed spark-submit line (zipped packages, shipped scenario, main.py) runs and matches local, with the
    settings it was given: kmc's own defaults do not override them."""
    from kmc.compose import spark_submit_arguments

    command = spark_submit_arguments(
        scenario=SCENARIO,
        master=cluster.master_url,
        conf={"spark.sql.shuffle.partitions": "5"},
        submit_dir=tmp_path / "submit",
        run_root=str(tmp_path / "runs"),
        spark_submit=str(_pyspark_home() / "bin" / "spark-submit"),
    ) + list(ON_SPARK)
    done = subprocess.run(command, cwd=tmp_path, env=_environment(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    (summary,) = (tmp_path / "runs").glob("*/summary.json")
    document = json.loads(summary.read_text())
    assert document["master"] == cluster.master_url
    assert comparable(document) == comparable(local_result(SCENARIO, tmp_path))
    assert max(files_per_level(tmp_path / "runs")) == 5


def test_losing_a_worker_mid_run_changes_nothing(two_worker_cluster: StandaloneCluster, tmp_path: Path) -> None:
    """Killing one of two workers after the first levels completes still gives the local BFS's results."""
    runs = tmp_path / "runs"
    killed = threading.Event()

    def kill_after_two_levels() -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            for manifest in runs.glob("*/manifest.json"):
                try:
                    levels = len(json.loads(manifest.read_text())["levels"])
                except (OSError, ValueError):
                    continue
                if levels >= 2:
                    two_worker_cluster.kill_worker(1)
                    killed.set()
                    return
            time.sleep(0.05)

    watcher = threading.Thread(target=kill_after_two_levels, daemon=True)
    watcher.start()
    done = kmc_explore(
        VIOLATING_SCENARIO, "--engine", "spark", "--master", two_worker_cluster.master_url, *ON_SPARK,
        "--format", "json", "--out", str(runs), cwd=tmp_path,
    )  # fmt: skip
    watcher.join(timeout=5)
    assert killed.is_set(), "the run ended before a worker could be killed"
    assert two_worker_cluster.workers[1].poll() is not None
    assert done.returncode == 1, done.stderr
    assert comparable(json.loads(done.stdout)) == comparable(local_result(VIOLATING_SCENARIO, tmp_path))


def test_resume_after_the_driver_is_killed(tmp_path: Path) -> None:
    """A driver killed mid-run (with its JVM) and resumed with --resume ends with the local BFS's results."""
    runs = tmp_path / "runs"
    command = [sys.executable, "-c", "from kmc.cli import main; main()", "explore", VIOLATING_SCENARIO]
    command += ["--engine", "spark", "--master", "local[2]", *ON_SPARK, "--out", str(runs)]
    log = (tmp_path / "killed.log").open("wb")
    driver = subprocess.Popen(command, cwd=tmp_path, env=_environment(), stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        levels = 0
        while levels < 4 and driver.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
            for manifest in runs.glob("*/manifest.json"):
                with contextlib.suppress(OSError, ValueError):
                    levels = len(json.loads(manifest.read_text())["levels"])
        assert driver.poll() is None, "the run ended before its driver could be killed"
    finally:
        _kill_group(driver, signal.SIGKILL)
        driver.wait(timeout=30)
    (run_dir,) = (path.parent for path in runs.glob("*/manifest.json"))
    assert not json.loads((run_dir / "manifest.json").read_text())["completed"]
    done = kmc_explore(
        VIOLATING_SCENARIO, "--engine", "spark", "--master", "local[2]", *ON_SPARK, "--resume", str(run_dir),
        "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert comparable(json.loads(done.stdout)) == comparable(local_result(VIOLATING_SCENARIO, tmp_path))
