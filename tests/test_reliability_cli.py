"""``kmc explore`` and ``kmc assign`` as a user meets them: bad input, run directories, verdicts, crashes.

Each test reproduces one of the defects a fuzzing and fault-injection session found (issue 13) and
checks the fix through the command line: bad input is one sentence and exit status 2 before any
work; run directories stay inside ``--out``, are unique and locked; a run that stops early says so
in its last line and exits 3 with the command that resumes it; a crash exits 4 with its traceback
in a file, never 1; run files have ordinary permissions.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
import sys
import tomllib
import zipfile
from pathlib import Path
from unittest import mock

import pytest
from click.testing import CliRunner, Result

from kmc.cli import main
from kmc.common import Interrupted, Interrupts, RunLock, UsageProblem, new_run_dir
from kmc.compose import PACKAGE_DATA
from spark_explore.submit import package_zip

SMALL = """\
name = "{name}"
[cluster]
brokers = [{brokers}]
[[topics]]
name = "t"
partitions = {partitions}
replication_factor = 1
[bounds]
broker_failures = {failures}
"""


def kmc(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def scenario(tmp_path: Path, text: str | None = None, **fields: object) -> str:
    values = {"name": "small", "brokers": "0, 1", "partitions": 1, "failures": 0, **fields}
    path = tmp_path / "scenario.toml"
    path.write_text(text if text is not None else SMALL.format(**values), encoding="utf-8")
    return str(path)


def assert_refused(result: Result, *words: str) -> None:
    """Exit status 2 and one line on stderr naming ``words``, no traceback."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0], lines[0]


def explore_local(*args: str) -> Result:
    return kmc("explore", *args, "--engine", "local")


# -- names and run directories ----------------------------------------------------------------------


def test_a_scenario_name_cannot_escape_out(tmp_path: Path) -> None:
    """name = "../../../x" gives a run directory inside --out, named from the sanitised name."""
    out = tmp_path / "deep" / "er" / "out"
    result = explore_local(scenario(tmp_path, name="../../../x"), "--out", str(out))
    assert result.exit_code == 0, result.stderr
    [run_dir] = out.iterdir()
    assert run_dir.name.endswith("-x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep", "scenario.toml"]
    assert [p.name for p in (tmp_path / "deep" / "er").iterdir()] == ["out"]


@pytest.mark.parametrize(("name", "problem"), [("a" * 300, "1 to 200"), ("nul\\u0000byte", "printable"),
                                               ("line\\nbreak", "printable")], ids=["long", "nul", "newline"])
def test_bad_scenario_names_are_refused(name: str, problem: str, tmp_path: Path) -> None:
    """A name over 200 characters, or with a NUL byte or a newline, is refused in one sentence."""
    assert_refused(explore_local(scenario(tmp_path, name=name), "--out", str(tmp_path / "out")), "name", problem)


def test_a_long_name_is_shortened_in_the_run_id(tmp_path: Path) -> None:
    """A legal 150-character name gives a run directory whose name stays well under file-name limits."""
    result = explore_local(scenario(tmp_path, name="n" * 150), "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.stderr
    [run_dir] = (tmp_path / "out").iterdir()
    assert len(run_dir.name) < 100


def test_run_ids_are_unique_within_a_second(tmp_path: Path) -> None:
    """Fifty run directories created at once get fifty distinct names, all inside --out."""
    made = [new_run_dir(tmp_path, "same") for _ in range(50)]
    assert len(set(made)) == 50
    assert all(d.parent == tmp_path and d.is_dir() for d in made)


def test_two_runs_at_once_get_two_directories(tmp_path: Path) -> None:
    """Two runs of the same scenario started back to back write two run directories, each complete."""
    path = scenario(tmp_path)
    for _ in range(2):
        assert explore_local(path, "--out", str(tmp_path / "out")).exit_code == 0
    runs = list((tmp_path / "out").iterdir())
    assert len(runs) == 2
    assert all((run / "summary.json").exists() and (run / "report.txt").exists() for run in runs)


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_an_unusable_out_is_refused(where: str, tmp_path: Path) -> None:
    """An --out that is a file, or cannot be created, is refused in one sentence naming it."""
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    out = blocker if where == "a file" else blocker / "sub"
    assert_refused(explore_local(scenario(tmp_path), "--out", str(out)), "--out", str(out))


def test_a_locked_run_directory_is_refused(tmp_path: Path) -> None:
    """A run directory another run holds (its lock) cannot be resumed at the same time."""
    first = explore_local(scenario(tmp_path), "--out", str(tmp_path / "out"), "--max-states", "1")
    assert first.exit_code == 3
    [run_dir] = (tmp_path / "out").iterdir()
    lock = RunLock(run_dir)
    lock.acquire()
    try:
        assert_refused(kmc("explore", "--resume", str(run_dir)), "in use by another kmc run", str(os.getpid()))
    finally:
        lock.release()


@pytest.mark.parametrize("how", ["finished", "stopped"])
def test_a_run_leaves_no_lock_behind(how: str, tmp_path: Path) -> None:
    """A finished run and a run stopped by a bound leave no .lock (naming a process long gone) in
    their run directory; a second run of the same directory can still take the lock."""
    bound = ("--max-states", "1") if how == "stopped" else ()
    result = explore_local(scenario(tmp_path), "--out", str(tmp_path / "out"), *bound)
    assert result.exit_code == (3 if how == "stopped" else 0), result.stderr
    [run_dir] = (tmp_path / "out").iterdir()
    assert not (run_dir / ".lock").exists()
    lock = RunLock(run_dir)
    lock.acquire()
    assert (run_dir / ".lock").read_text().strip() == str(os.getpid())
    lock.release()
    assert not (run_dir / ".lock").exists()


def test_a_lock_released_while_another_run_opens_it_is_taken_afresh(tmp_path: Path) -> None:
    """A run that opened .lock just before its holder released (and removed) it does not lock the
    removed file: it takes the lock on the file now at the path, so two runs never both hold it."""
    holder = RunLock(tmp_path)
    holder.acquire()
    original_flock = fcntl.flock
    calls = []

    def flock_after_release(fd: int, operation: int) -> None:
        if not calls:
            calls.append(fd)
            holder.release()  # the holder ends between the second run's open and its flock
        original_flock(fd, operation)

    second = RunLock(tmp_path)
    with mock.patch("kmc.common.fcntl.flock", flock_after_release):
        second.acquire()
    third = RunLock(tmp_path)
    with pytest.raises(UsageProblem, match="in use by another kmc run"):
        third.acquire()
    second.release()


@pytest.mark.parametrize("planted", ["symbolic link", "hard link", "fifo"])
def test_a_planted_lock_file_is_refused_and_its_target_untouched(planted: str, tmp_path: Path) -> None:
    """A .lock planted as a symbolic link, a hard link to another file or a FIFO is refused in one
    sentence (the lock's open followed the link and truncated the victim, or blocked on the FIFO)."""
    first = explore_local(scenario(tmp_path), "--out", str(tmp_path / "out"), "--max-states", "1")
    assert first.exit_code == 3
    [run_dir] = (tmp_path / "out").iterdir()
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (run_dir / ".lock").unlink(missing_ok=True)
    if planted == "symbolic link":
        (run_dir / ".lock").symlink_to(victim)
    elif planted == "hard link":
        os.link(victim, run_dir / ".lock")
    else:
        os.mkfifo(run_dir / ".lock")
    result = kmc("explore", "--resume", str(run_dir))
    assert_refused(result, ".lock")
    assert victim.read_text() == "precious\n"


def test_the_lock_never_opens_through_a_symbolic_link(tmp_path: Path) -> None:
    """RunLock itself (whatever checked the directory before it) refuses a .lock that is a symbolic link."""
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / ".lock").symlink_to(victim)
    with pytest.raises(UsageProblem, match="symbolic link"):
        RunLock(tmp_path).acquire()
    assert victim.read_text() == "precious\n"


def test_a_symbolic_link_in_a_run_directory_is_refused(tmp_path: Path) -> None:
    """Any symbolic link inside a run directory (kmc writes none) is refused before the run is touched."""
    explore_local(scenario(tmp_path), "--out", str(tmp_path / "out"), "--max-states", "1")
    [run_dir] = (tmp_path / "out").iterdir()
    victim = tmp_path / "victim.json"
    victim.write_text("{}")
    (run_dir / "summary.json").unlink()
    (run_dir / "summary.json").symlink_to(victim)
    assert_refused(kmc("explore", "--resume", str(run_dir)), "summary.json is a symbolic link")
    assert victim.read_text() == "{}"


def test_run_files_have_ordinary_permissions(tmp_path: Path) -> None:
    """summary.json, report.txt, run.json, the scenario copy and the manifest are 0644 under umask 022."""
    previous = os.umask(0o022)
    try:
        assert explore_local(scenario(tmp_path), "--out", str(tmp_path / "out")).exit_code == 0
    finally:
        os.umask(previous)
    [run_dir] = (tmp_path / "out").iterdir()
    for name in ("summary.json", "report.txt", "run.json", "scenario.toml", "manifest.json"):
        assert stat.S_IMODE((run_dir / name).stat().st_mode) == 0o644, name


def test_print_spark_submit_writes_under_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--print-spark-submit writes its zip, entry point and scenario under --out, not the current directory."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    result = kmc("explore", "planted-complete-on-first-success", "--print-spark-submit", "--out", str(tmp_path / "o"))
    assert result.exit_code == 0, result.stderr
    assert list(cwd.iterdir()) == []
    [submit_dir] = (tmp_path / "o").iterdir()
    assert (submit_dir / "kmc-packages.zip").exists()
    assert str(submit_dir) in result.stdout


@pytest.mark.parametrize("bits", ["64", "128"])
def test_print_spark_submit_passes_the_fingerprint_width_on(bits: str, tmp_path: Path) -> None:
    """The spark-submit line runs at the width asked for (64, the default, is not spelled out)."""
    result = kmc("explore", "planted-complete-on-first-success", "--print-spark-submit", "--fingerprint-bits", bits,
                 "--out", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert ("--fingerprint-bits 128" in result.stdout) is (bits == "128")
    assert "--fingerprint-bits 64" not in result.stdout


def test_spark_submit_zip_ships_modules_and_package_data_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The --py-files zip holds a package's modules and declared data, not what runs left in its folders
    (reports/runs under a checkout: Parquet levels, report files, replay scripts)."""
    package = tmp_path / "src" / "pkg"
    for name in ("__init__.py", "mod.py", "sub/__init__.py", "sub/deep.py", "templates/page.j2",
                 "runs/r1/level-0.parquet", "runs/r1/replay_p.py", "runs/r1/scenario.toml", "notes.txt"):
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(name)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    sys.modules.pop("pkg", None)
    archive = package_zip(tmp_path / "out" / "p.zip", ["pkg"], {"pkg": ("templates/*.j2",)})
    assert sorted(zipfile.ZipFile(archive).namelist()) == [
        "pkg/__init__.py", "pkg/mod.py", "pkg/sub/__init__.py", "pkg/sub/deep.py", "pkg/templates/page.j2"]


def test_spark_submit_ships_the_package_data_pyproject_declares() -> None:
    """The package data shipped to executors is pyproject.toml's [tool.setuptools.package-data]."""
    root = Path(__file__).resolve().parent.parent
    declared = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert {name: list(globs) for name, globs in PACKAGE_DATA.items()} == declared


# -- sizes and bounds -------------------------------------------------------------------------------


@pytest.mark.parametrize("brokers", ["0, 2147483648", "0, 9223372036854775807"])
def test_broker_ids_beyond_kafkas_int_are_refused(brokers: str, tmp_path: Path) -> None:
    """Broker ids of 2^31 and more (OverflowError in the encoding before) are refused, naming the id."""
    assert_refused(explore_local(scenario(tmp_path, brokers=brokers), "--out", str(tmp_path)), "broker id")


def test_a_bound_beyond_the_encoding_is_refused(tmp_path: Path) -> None:
    """broker_failures = 2^31 is refused with a sentence naming the bound and the encoding's limit."""
    assert_refused(explore_local(scenario(tmp_path, failures=2**31), "--out", str(tmp_path)),
                   "[bounds] broker_failures", "encoding")


@pytest.mark.parametrize("limit", [["--max-states", "2000"], ["--time-limit", "1"]], ids=["max-states", "time-limit"])
def test_a_huge_but_representable_bound_is_stopped_by_the_search_limits(limit: list[str], tmp_path: Path) -> None:
    """broker_failures = 1000000 runs until --max-states or --time-limit stops it, exit 3 (KAFKA-13225 off: a broker
    hosting no replica of the offline t-0 fails, and 2.3 leaves it in the other brokers' metadata caches)."""
    text = SMALL.format(name="small", brokers="0, 1, 2", partitions=1, failures=1_000_000) + \
        "[bugs]\nKAFKA_13225 = false\n"
    result = explore_local(scenario(tmp_path, text), "--out", str(tmp_path / "o"), *limit)
    assert result.exit_code == 3, result.stderr
    assert "Resume with: kmc explore --resume" in result.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("partitions", [10**7, 2**31])
def test_oversized_topics_are_refused_before_the_assignment(partitions: int, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """10^7 or 2^31 partitions (26 s and 1.3 GB before, or out of memory) are refused before Kafka's
    assignment is computed."""
    import model.admin.assignment

    def never(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the assignment was computed")

    monkeypatch.setattr(model.admin.assignment, "assign_replicas_to_brokers", never)
    assert_refused(explore_local(scenario(tmp_path, partitions=partitions), "--out", str(tmp_path)),
                   f"{partitions} replicas")


def test_explicit_replica_lists_are_under_the_same_cap(tmp_path: Path) -> None:
    """Thirteen explicit replicas are refused like thirteen computed ones."""
    text = '[cluster]\nbrokers = [0, 1]\n[[topics]]\nname = "t"\nreplicas = [' + ", ".join(["[0]"] * 13) + "]\n"
    assert_refused(explore_local(scenario(tmp_path, text), "--out", str(tmp_path)), "13 replicas", "at most 12")


def test_an_empty_property_list_is_refused(tmp_path: Path) -> None:
    """[check] properties = [] (which checked nothing and said "No error has been found") is refused."""
    text = SMALL.format(name="s", brokers="0, 1", partitions=1, failures=0) + "[check]\nproperties = []\n"
    assert_refused(explore_local(scenario(tmp_path, text), "--out", str(tmp_path)), "[check] properties = []")


@pytest.mark.parametrize("topic", ["<script>x</script>", "bad topic name!", "evil\\nNo error has been found."])
def test_illegal_topic_names_are_refused_with_kafkas_sentence(topic: str, tmp_path: Path) -> None:
    """Topic names follow Kafka's Topic.validate, so none can insert a line into a report."""
    text = f'[cluster]\nbrokers = [0, 1]\n[[topics]]\nname = "{topic}"\npartitions = 1\nreplication_factor = 1\n'
    assert_refused(explore_local(scenario(tmp_path, text), "--out", str(tmp_path)), "InvalidTopicException")


@pytest.mark.parametrize("args", [
    ["--partitions", "10000000", "--replication-factor", "1", "--start-index", "0"],
    ["--partitions", "1000", "--replication-factor", "3"],
    ["--partitions", "2147483648", "--replication-factor", "1", "--start-index", "0"],
    ["--partitions", "1", "--replication-factor", "40000"],
], ids=["huge-assignment", "huge-summary", "beyond-int", "beyond-short"])
def test_assign_refuses_sizes_it_cannot_print(args: list[str]) -> None:
    """kmc assign refuses, in one sentence and at once, outputs too large to print and numbers beyond
    Kafka's types."""
    brokers = ",".join(str(b) for b in range(30))
    assert_refused(kmc("assign", "--broker-list", brokers, *args))


def test_assign_refuses_broker_ids_beyond_kafkas_int() -> None:
    """A broker id of 2^31 in --broker-list is refused, naming it."""
    assert_refused(kmc("assign", "--broker-list", "0,2147483648", "--partitions", "1", "--replication-factor", "1"),
                   "2147483648")


# -- verdicts ---------------------------------------------------------------------------------------


def summary_of(out: Path) -> tuple[Path, dict[str, object]]:
    [run_dir] = out.iterdir()
    return run_dir, json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))


def test_reports_list_the_properties_checked_and_the_bounds(tmp_path: Path) -> None:
    """summary.json and report.txt name every property checked and every bound of the search."""
    result = explore_local("planted-complete-on-first-success", "--out", str(tmp_path), "--max-depth", "50")
    assert result.exit_code == 1
    run_dir, summary = summary_of(tmp_path)
    checked = ["deletion_completes_only_when_all_replicas_succeeded", "no_replica_state_for_deleted_topic"]
    assert [p["name"] for p in summary["properties"]] == checked  # type: ignore[index, union-attr]
    bounds = summary["bounds"]
    assert isinstance(bounds, dict)
    assert (bounds["max_depth"], bounds["scenario.broker_failures"], bounds["fingerprint_bits"]) == (50, 1, 64)
    report = (run_dir / "report.txt").read_text(encoding="utf-8")
    assert f"Properties checked: {checked[0]} (action always), {checked[1]} (always)." in " ".join(report.split())
    assert "max_depth=50" in report and "scenario.broker_failures=1" in report


def test_a_kraft_run_lists_the_kraft_controllers_bounds(tmp_path: Path) -> None:
    """A KRaft scenario's reports list its own [bounds] (KraftBounds and the lagging brokers), not the ZooKeeper
    model's, which a KRaft scenario cannot set."""
    result = explore_local("kraft-kafka-13916", "--out", str(tmp_path))
    assert result.exit_code == 1
    run_dir, summary = summary_of(tmp_path)
    bounds = summary["bounds"]
    assert isinstance(bounds, dict)
    assert (bounds["scenario.controlled_shutdowns"], bounds["scenario.session_expiries"]) == (1, 1)
    assert "scenario.broker_failures" not in bounds and "scenario.isr_changes" not in bounds
    report = " ".join((run_dir / "report.txt").read_text(encoding="utf-8").split())
    assert "scenario.controlled_shutdowns=1" in report and "scenario.stale_metadata_brokers=every broker" in report


def test_max_states_holds_within_a_level(tmp_path: Path) -> None:
    """--max-states 1000 stops with exactly 1,000 distinct states (126,011 for 25,000 before), exit 3,
    and the report's last line says the search stopped early."""
    result = explore_local("racks", "--out", str(tmp_path), "--max-states", "1000", "--format", "json")
    assert result.exit_code == 3, result.stderr
    document = json.loads(result.stdout)
    assert document["statistics"]["distinct"] == 1000
    assert document["stopped_by"] == "state_bound"
    run_dir, _ = summary_of(tmp_path)
    report = (run_dir / "report.txt").read_text(encoding="utf-8")
    assert report.strip().splitlines()[-1].startswith("Stopped before the search was complete: state bound reached")
    assert "complete state graph search" not in report
    assert "Resume with: kmc explore --resume" in result.stderr
    terminal = explore_local("racks", "--out", str(tmp_path / "text"), "--max-states", "1000")
    assert (terminal.stdout + terminal.stderr).count("Stopped before the search was complete") == 1


def test_the_resume_command_keeps_the_bounds_of_a_run_stopped_by_something_else(tmp_path: Path) -> None:
    """A run stopped by its time limit is resumed with its own bounds (a resumed run has only those its command
    line gives); a run stopped by its state bound, without it, so that the resume goes past the bound."""
    stopped = explore_local("deletion-3brokers", "--out", str(tmp_path / "time"), "--time-limit", "0",
                            "--max-depth", "40", "--max-states", "5000")
    assert stopped.exit_code == 3, stopped.stderr
    run_dir, summary = summary_of(tmp_path / "time")
    assert summary["resume_command"] == f"kmc explore --resume {run_dir} --max-depth 40 --max-states 5000"
    assert stopped.stdout.strip().splitlines()[-1].endswith(summary["resume_command"])
    resumed = kmc(*summary["resume_command"].split()[1:], "--format", "json")
    assert resumed.exit_code == 3, resumed.stderr
    assert json.loads(resumed.stdout)["statistics"]["distinct"] == 5000  # the bound held on resume
    bounded = explore_local("deletion-3brokers", "--out", str(tmp_path / "states"), "--max-states", "5000")
    assert bounded.exit_code == 3, bounded.stderr
    run_dir, summary = summary_of(tmp_path / "states")
    assert summary["stopped_by"] == "state_bound"
    assert summary["resume_command"] == f"kmc explore --resume {run_dir}"


def test_a_continued_search_stopped_by_a_bound_is_not_called_complete(tmp_path: Path) -> None:
    """With --continue, a violation found before the state bound stops the search: the outcome is the violation
    (exit 1), and the closing lines do not call the search complete."""
    result = explore_local("planted-complete-on-first-success", "--out", str(tmp_path), "--continue",
                           "--max-states", "300")
    assert result.exit_code == 1, result.stderr
    run_dir, summary = summary_of(tmp_path)
    assert summary["stopped_by"] == "state_bound"
    report = (run_dir / "report.txt").read_text(encoding="utf-8")
    assert "The depth reached before the search stopped is" in report
    assert "complete state graph search" not in report + result.stdout


def test_time_limit_then_resume_from_the_scenario_copy(tmp_path: Path) -> None:
    """--time-limit 0 stops at once (exit 3, resume command printed last); --resume DIR alone, with the
    scenario read from the run directory's copy, completes with the uninterrupted counts."""
    stopped = explore_local("deletion-3brokers", "--out", str(tmp_path), "--time-limit", "0")
    assert stopped.exit_code == 3, stopped.stderr
    run_dir, summary = summary_of(tmp_path)
    assert summary["stopped_by"] == "time_limit"
    assert summary["resume_command"] == f"kmc explore --resume {run_dir}"
    assert stopped.stdout.strip().splitlines()[-1].endswith(f"Resume with: kmc explore --resume {run_dir}")
    resumed = kmc("explore", "--resume", str(run_dir), "--format", "json")
    assert resumed.exit_code == 0, resumed.stderr
    document = json.loads(resumed.stdout)
    assert (document["statistics"]["distinct"], document["statistics"]["generated"]) == (7259, 16250)
    assert document["scenario"]["name"] == "deletion-3brokers"


def test_memory_budget_then_resume(tmp_path: Path) -> None:
    """--max-memory 1M stops with "memory budget reached" and the resume command (exit 3); resumed
    under the default budget, the run completes with the uninterrupted counts."""
    stopped = explore_local("stale-deletion-response", "--out", str(tmp_path), "--max-memory", "1M")
    assert stopped.exit_code == 3, stopped.stderr
    assert "memory budget reached" in stopped.stdout.strip().splitlines()[-1]
    run_dir, _ = summary_of(tmp_path)
    resumed = kmc("explore", "--resume", str(run_dir), "--format", "json")
    assert resumed.exit_code == 1, resumed.stderr
    assert json.loads(resumed.stdout)["statistics"]["distinct"] == 9472


def test_resume_refuses_another_scenario_or_an_altered_copy(tmp_path: Path) -> None:
    """Resuming with a different SCENARIO, or after the scenario copy was edited, is refused."""
    assert explore_local("deletion-3brokers", "--out", str(tmp_path), "--time-limit", "0").exit_code == 3
    [run_dir] = tmp_path.iterdir()
    assert_refused(kmc("explore", "racks", "--resume", str(run_dir)), "not 'racks'")
    copy = run_dir / "scenario.toml"
    copy.write_text(copy.read_text().replace("broker_failures = 1", "broker_failures = 2"))
    assert_refused(kmc("explore", "--resume", str(run_dir)), "was changed since the run started")


@pytest.mark.parametrize("damage", ["missing", "garbage", "wrong engine"])
def test_resume_refuses_a_bad_run_file(damage: str, tmp_path: Path) -> None:
    """A run directory without a readable run.json, or resumed with the other engine, is refused."""
    assert explore_local("deletion-3brokers", "--out", str(tmp_path), "--time-limit", "0").exit_code == 3
    [run_dir] = tmp_path.iterdir()
    run_file = run_dir / "run.json"
    if damage == "missing":
        run_file.unlink()
        assert_refused(kmc("explore", "--resume", str(run_dir)), "run.json")
    elif damage == "garbage":
        run_file.write_bytes(b"\xff\xfe not json")
        assert_refused(kmc("explore", "--resume", str(run_dir)), "run.json is corrupt")
    else:
        assert_refused(kmc("explore", "--resume", str(run_dir), "--engine", "spark"), "--engine local")


@pytest.mark.parametrize(("command", "problem"), [
    (["explore", "--print-spark-submit", "--master", "0K"], "is not a Spark master"),
    (["explore", "--master", "foo"], "is not a Spark master"),
    (["explore", "--master", "local[0]"], "is not a Spark master"),
    (["explore", "--conf", "spark.sql.shuffle.partitions=abc"], "takes a whole number"),
    (["explore", "--conf", "spark.driver.memory=lots"], "takes a size"),
    (["simulate", "--engine", "spark", "--master", "foo"], "is not a Spark master"),
])
def test_masters_and_spark_settings_spark_would_refuse_are_refused_first(command: list[str], problem: str,
                                                                         tmp_path: Path) -> None:
    """A --master or a typed --conf value Spark would refuse is refused in one sentence before any work
    (exit 4 from inside Spark before, or exit 0 when no level needed Spark)."""
    assert_refused(kmc(command[0], "stale-deletion-response", *command[1:], "--out", str(tmp_path)), problem)


@pytest.mark.parametrize("master", ["local", "local[*]", "local[2]", "local[4,3]", "local-cluster[2,1,1024]",
                                    "spark://host:7077", "spark://a:7077,b:7077", "yarn", "k8s://https://h:443"])
def test_every_form_of_spark_master_is_accepted(master: str) -> None:
    """The masters Spark accepts pass the check."""
    from kmc.commands.explore import parse_master

    assert parse_master(master) == master


@pytest.mark.parametrize("out", ["/dev/null", "a file/sub"])
def test_plan_refuses_an_unusable_out_before_it_prints(out: str, tmp_path: Path) -> None:
    """kmc plan with an --out it cannot use is refused in one sentence (it crashed with exit 4 after
    printing the plan)."""
    current = tmp_path / "current.json"
    current.write_text('{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[0,1]}]}')
    (tmp_path / "a file").write_text("")
    where = out if out.startswith("/") else str(tmp_path / out)
    result = kmc("plan", "--current", str(current), "--broker-list", "0,1,2", "--out", where)
    assert_refused(result, "--out")
    assert result.stdout == ""


@pytest.mark.parametrize("args", [["--max-memory", "1G"], ["--checkpoint-every", "10"],
                                  ["--spark-ui", "--master", "spark://10.0.0.1:7077"]],
                         ids=["max-memory", "checkpoint-every", "remote-ui"])
def test_options_the_spark_engine_would_ignore_are_refused(args: list[str], tmp_path: Path) -> None:
    """Options that do not apply to the Spark engine are refused in one sentence, before Spark starts."""
    assert_refused(kmc("explore", "planted-complete-on-first-success", "--engine", "spark", "--out", str(tmp_path),
                       *args))


def test_fingerprint_bits_128_runs_and_says_so(tmp_path: Path) -> None:
    """--fingerprint-bits 128 finds the 64-bit run's counts and records its width and collision estimate."""
    result = explore_local("planted-complete-on-first-success", "--out", str(tmp_path), "--fingerprint-bits", "128",
                           "--format", "json")
    assert result.exit_code == 1
    statistics = json.loads(result.stdout)["statistics"]
    assert (statistics["distinct"], statistics["fingerprint_bits"]) == (152, 128)
    assert statistics["collision_probability"] < 1e-30


def test_a_128_bit_run_resumes_in_its_width(tmp_path: Path) -> None:
    """A stopped 128-bit run resumes with the printed command alone, in 128 bits; asking for 64 on resume is
    refused in one sentence naming the run's width."""
    stopped = explore_local("planted-complete-on-first-success", "--out", str(tmp_path), "--fingerprint-bits", "128",
                            "--time-limit", "0")
    assert stopped.exit_code == 3, stopped.stderr
    run_dir, _ = summary_of(tmp_path)
    assert_refused(kmc("explore", "--resume", str(run_dir), "--fingerprint-bits", "64"),
                   "was explored with 128-bit fingerprints", "--fingerprint-bits 128")
    resumed = kmc("explore", "--resume", str(run_dir), "--format", "json")
    assert resumed.exit_code == 1, resumed.stderr
    statistics = json.loads(resumed.stdout)["statistics"]
    assert (statistics["distinct"], statistics["fingerprint_bits"]) == (152, 128)


def test_a_128_bit_run_killed_before_its_manifest_restarts_in_its_width(tmp_path: Path) -> None:
    """run.json records a 128-bit width, so a run whose engine never wrote a manifest starts again at 128 bits on
    --resume (a damaged width there is refused)."""
    stopped = explore_local("planted-complete-on-first-success", "--out", str(tmp_path), "--fingerprint-bits", "128",
                            "--time-limit", "0")
    assert stopped.exit_code == 3, stopped.stderr
    run_dir, _ = summary_of(tmp_path)
    for written in [run_dir / "manifest.json", *run_dir.glob("checkpoint-*")]:
        shutil.rmtree(written) if written.is_dir() else written.unlink()
    facts = json.loads((run_dir / "run.json").read_text())
    assert facts["fingerprint_bits"] == 128
    resumed = kmc("explore", "--resume", str(run_dir), "--format", "json")
    assert resumed.exit_code == 1, resumed.stderr
    assert json.loads(resumed.stdout)["statistics"]["fingerprint_bits"] == 128
    (run_dir / "run.json").write_text(json.dumps({**facts, "fingerprint_bits": 64.0}))
    assert_refused(kmc("explore", "--resume", str(run_dir)), "run.json records fingerprint_bits")


def test_an_incomplete_search_names_the_examples_it_has_not_found(tmp_path: Path) -> None:
    """A search stopped early lists the sometimes properties without an example so far (a complete
    one reports them as never satisfied)."""
    result = explore_local("delete-disabled", "--out", str(tmp_path), "--max-depth", "2", "--format", "json")
    assert result.exit_code == 3
    document = json.loads(result.stdout)
    assert document["examples_missing"] == sorted([
        "sometimes_deletion_completes", "sometimes_deletion_retried", "sometimes_isr_reexpanded",
        "sometimes_isr_write_conflict", "sometimes_partition_addition_reverted", "sometimes_partitions_added",
        "sometimes_reassignment_completes", "sometimes_topic_recreated",
        # controller failover, controlled shutdown, log directory failure and preferred election: none in
        # delete-disabled
        "sometimes_controlled_shutdown_succeeds", "sometimes_controller_failover_completes",
        "sometimes_log_dir_replica_offline", "sometimes_preferred_leader_elected", "sometimes_zombie_write_fenced"])
    assert document["never_found"] == []
    run_dir, _ = summary_of(tmp_path)
    report = (run_dir / "report.txt").read_text(encoding="utf-8")
    assert "Note: sometimes property sometimes_deletion_completes has no example so far" in report


def test_a_collision_estimate_that_is_not_negligible_is_reported() -> None:
    """A report warns, and suggests 128-bit fingerprints, when the collision estimate exceeds 1e-6."""
    from explorer.results import ExplorationResult, Outcome, Statistics
    from reports.text import render_text

    def report(distinct: int, bits: int) -> str:
        stats = Statistics(generated=10 * distinct, distinct=distinct, depth=3, queue=0, seconds=1.0,
                           fingerprint_bits=bits)
        return render_text(ExplorationResult(Outcome.OK, "local", stats), {})

    assert "--fingerprint-bits 128" in report(10**9, 64)  # 10^9 x 9·10^9 / 2^64: about 0.49
    assert "--fingerprint-bits 128" not in report(10**9, 128)
    assert "--fingerprint-bits 128" not in report(10**5, 64)


# -- crashes and interrupts -------------------------------------------------------------------------


def test_a_crash_exits_4_with_its_traceback_in_the_run_directory(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """An unexpected exception during a run exits 4 (never 1) with one line naming the traceback file,
    written in the run directory."""
    import explorer.bfs

    def boom(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(explorer.bfs, "run_bfs", boom)
    result = explore_local(scenario(tmp_path), "--out", str(tmp_path / "out"))
    assert result.exit_code == 4
    [line] = result.stderr.strip().splitlines()
    assert "kmc defect" in line and "not a verdict" in line and "RuntimeError: boom" in line
    [run_dir] = (tmp_path / "out").iterdir()
    written = run_dir / "traceback.txt"
    assert str(written) in line
    assert "RuntimeError: boom" in written.read_text(encoding="utf-8")


def test_a_crash_before_the_run_directory_writes_a_temporary_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unexpected exception outside a run exits 4 and names a traceback file that exists."""
    from kmc import compose

    def boom(*_args: object, **_kwargs: object) -> None:
        raise ZeroDivisionError("no")

    monkeypatch.setattr(compose, "model_for", boom)
    result = explore_local("default")
    assert result.exit_code == 4
    [line] = result.stderr.strip().splitlines()
    path = Path(line.split("the traceback is in ")[1].split(";")[0])
    assert "ZeroDivisionError: no" in path.read_text(encoding="utf-8")
    path.unlink()


def test_an_interrupt_outside_a_search_is_one_line_and_exit_3(monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGINT or SIGTERM outside a search (Ctrl-C exited 2 with "kmc: aborted." before) exits 3 with one line."""
    from kmc.commands import scenarios

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise Interrupted("SIGTERM")

    monkeypatch.setattr(scenarios, "shipped_scenarios", interrupted)
    result = kmc("scenarios")
    assert result.exit_code == 3
    assert result.stderr.strip() == "kmc: interrupted by SIGTERM; the command did not finish."


def test_a_signal_during_a_search_asks_it_to_stop() -> None:
    """While a search runs, the first signal requests a stop (it does not raise); outside one it raises."""
    import signal

    interrupts = Interrupts()
    with interrupts.deferred("kmc explore --resume x") as stop:
        interrupts._handle(signal.SIGTERM, None)
        assert stop.reason == "interrupted by SIGTERM"
    with pytest.raises(Interrupted):
        interrupts._handle(signal.SIGINT, None)


@pytest.mark.parametrize("control", ["\x1b[2J", "\rNo error has been found.", "\x07", "\u202e", "\u2028"],
                         ids=["clear screen", "carriage return", "bell", "bidi override", "line separator"])
def test_a_description_with_control_characters_is_refused(control: str, tmp_path: Path) -> None:
    """A scenario description holding a terminal control character is refused in one sentence (it reached
    stdout, report.txt and report.md, where it could clear the screen or forge a verdict line)."""
    escaped = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in control)  # TOML's escapes
    text = 'description = "before ' + escaped + ' after"\n'
    path = scenario(tmp_path)
    Path(path).write_text(text + Path(path).read_text(encoding="utf-8"), encoding="utf-8")
    assert_refused(explore_local(path, "--out", str(tmp_path / "out")), "description", "control character")


def test_a_description_of_lines_and_tabs_is_accepted(tmp_path: Path) -> None:
    """Lines (also with Windows line ends) and tabs are a description's plain text."""
    path = scenario(tmp_path)
    Path(path).write_bytes(b'description = """\r\nfirst line\r\n\tindented"""\r\n' + Path(path).read_bytes())
    result = explore_local(path, "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.stderr


def test_free_text_read_back_from_a_summary_is_escaped_in_every_report(tmp_path: Path) -> None:
    """kmc report on a summary.json whose description, name and property text hold control characters
    writes and prints them escaped (\\x1b), never raw."""
    first = explore_local(scenario(tmp_path), "--out", str(tmp_path / "out"))
    assert first.exit_code == 0, first.stderr
    [run_dir] = (tmp_path / "out").iterdir()
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    summary["scenario"]["description"] = "x\x1b[2J\rNo error has been found."
    summary["scenario"]["name"] = "n\x1b]0;title\x07"
    summary["properties"][0]["description"] = "p\x1b[31m"
    (run_dir / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    result = kmc("report", str(run_dir), "--format", "text", "--format", "md", "--format", "html")
    assert result.exit_code == 0, result.stderr
    for name in ("report.txt", "report.md", "report.html"):
        text = (run_dir / name).read_text(encoding="utf-8")
        assert "\x1b" not in text and "\r" not in text and "\x07" not in text, name
        assert "\\x1b" in text, name


def test_a_plans_free_text_is_escaped_in_validates_sentences(tmp_path: Path) -> None:
    """A log dir holding control characters, quoted in Kafka's sentence, is printed escaped."""
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "t", "partition": 0, "replicas": [0, 1], "log_dirs": ["\x1b[2J"]}]}), encoding="utf-8")
    result = kmc("validate", str(plan))
    assert result.exit_code == 1, result.output
    assert "\x1b" not in result.stdout and "\\x1b[2J" in result.stdout
