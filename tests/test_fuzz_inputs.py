"""Every reader of user input, fuzzed through the real command line: one sentence and exit 2, never a
traceback, never a hang.

Hypothesis feeds malformed, truncated, oversized, wrongly typed, duplicate-key and non-UTF-8 inputs
to each reader that exists: scenario TOML (``kmc explore FILE``), ``--broker-list`` and ``--racks``
(``kmc assign``), ``--conf`` and the duration and size options (``kmc explore``), the files a
resumed run reads (``manifest.json`` of either engine, ``run.json``), the ``summary.json`` that
``kmc report`` re-renders, and Kafka's own files that
``kmc plan`` and ``kmc validate`` read (reassignment JSON, topics-to-move JSON, ``kafka-topics
--describe`` text, ``kafka-log-dirs --describe`` output). Each input goes through
:func:`kmc.cli.main` as the console script runs it. An input may be valid (then the command does
its work, within small bounds) or not (then exit 2 and exactly one line ``kmc: …`` on stderr);
either way no traceback, no exit 4, and no input takes more than :data:`HANG_SECONDS`.

The default run tries a sample of each reader; the ``slow`` set tries at least 10,000 inputs across
the readers. Each test prints how many inputs it tried and how they ended. Hypothesis runs
derandomized and without its example database, so a run tries the same inputs every time.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import tempfile
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.checkpoint import sealed
from kmc.cli import main
from kmc.compose import shipped_scenarios

#: An input that takes longer than this is a hang (a guard, not a speed requirement).
HANG_SECONDS = 30

#: Inputs per reader: a sample in the default run (260), and in the slow set (10,000).
SAMPLE = {"scenario_text": 50, "scenario_structure": 50, "assign": 50, "options": 30, "run_files": 30,
          "kafka_files": 50, "tampered_runs": 30, "summaries": 50,
          "every_option": 60}
FULL = {"scenario_text": 2000, "scenario_structure": 2000, "assign": 2500, "options": 1000, "run_files": 1000,
        "kafka_files": 1500, "tampered_runs": 1000, "summaries": 1500,
        "every_option": 2000}


class Hang(BaseException):
    """Raised by the alarm; a BaseException so that kmc's own error handling cannot swallow it."""


@contextmanager
def hang_guard() -> Iterator[None]:
    def expire(_signum: int, _frame: Any) -> None:
        raise Hang(f"an input took more than {HANG_SECONDS} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(HANG_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


class Tally:
    """How the inputs of one reader ended, printed at the end of its test."""

    def __init__(self, reader: str) -> None:
        self.reader = reader
        self.endings: Counter[str] = Counter()
        self.notes: Counter[str] = Counter()  # finer counts, printed beside the endings

    def record(self, result: Result, *, must_refuse: bool = False) -> None:
        """Check one command's ending and count it."""
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        assert "Traceback" not in result.stderr, result.stderr
        assert result.exit_code in (0, 1, 2, 3), (result.exit_code, result.stderr)
        if result.exit_code == 2:
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("kmc"), result.stderr
        elif must_refuse:
            raise AssertionError(f"accepted an input that must be refused: {result.stdout[-300:]}")
        self.endings[f"exit {result.exit_code}"] += 1

    def report(self, capsys: pytest.CaptureFixture[str]) -> None:
        total = sum(self.endings.values())
        ends = ", ".join(f"{ending}: {count}" for ending, count in sorted(self.endings.items()))
        notes = "".join(f"; {note}: {count}" for note, count in sorted(self.notes.items()))
        with capsys.disabled():
            print(f"\nfuzz {self.reader}: {total} inputs tried ({ends}{notes})")


def invoke(*args: str) -> Result:
    with hang_guard():
        return CliRunner().invoke(main, list(args))


def fuzz_settings(reader: str, full: bool) -> settings:
    return settings(
        max_examples=(FULL if full else SAMPLE)[reader],
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )


# -- scenario TOML ----------------------------------------------------------------------------------

SHIPPED = {name: path.read_text(encoding="utf-8") for name, path in sorted(shipped_scenarios().items())}
SHIPPED_DOCS = [tomllib.loads(text) for text in SHIPPED.values()]

_WEIRD_TEXT = st.sampled_from(["", " ", "..", ".", "a" * 300, "../../x", "\x00", "\n", "é", "\ud7ff", "<b>",
                               "t\nNo error has been found.", "1.1", "2.3", "9.9"])
_WEIRD_INT = st.sampled_from([-1, 0, 1, 12, 13, 2**31 - 1, 2**31, 2**63 - 1, -(2**63), 10**7, 16777215, 16777216])
_SCALARS = st.one_of(
    st.booleans(), st.integers(), _WEIRD_INT, st.text(max_size=30), _WEIRD_TEXT,
    st.floats(allow_nan=True, allow_infinity=True),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=5),
                               st.dictionaries(st.text(min_size=1, max_size=12), children, max_size=4)),
    max_leaves=12,
)


def toml_text(doc: dict[str, Any]) -> str:
    """A TOML rendering of ``doc`` (what the scenario files use: scalars, tables, arrays of tables,
    inline tables and arrays); values TOML cannot hold come out as text TOML refuses, which is fine."""
    lines = [f"{_key(k)} = {_inline(v)}" for k, v in doc.items() if not isinstance(v, dict | list) or
             (isinstance(v, list) and not (v and all(isinstance(e, dict) for e in v)))]
    for key, value in doc.items():
        if isinstance(value, dict):
            lines += ["", f"[{_key(key)}]", *(f"{_key(k)} = {_inline(v)}" for k, v in value.items())]
        elif isinstance(value, list) and value and all(isinstance(e, dict) for e in value):
            for entry in value:
                lines += ["", f"[[{_key(key)}]]", *(f"{_key(k)} = {_inline(v)}" for k, v in entry.items())]
    return "\n".join(lines) + "\n"


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _inline(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value).replace("inf", "inf").replace("nan", "nan")
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return "{ " + ", ".join(f"{_key(str(k))} = {_inline(v)}" for k, v in value.items()) + " }"


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a document where a value can be replaced or removed."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, child in value.items():
            found += paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += paths(child, (*prefix, index))
    return found


def mutated(doc: Any, path: tuple[Any, ...], action: str, value: Any) -> Any:
    """``doc`` with the value at ``path`` replaced, removed, or given an unknown sibling key."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        copy: Any = dict(doc)
    else:
        copy = list(doc)
    if rest:
        copy[head] = mutated(copy[head], rest, action, value)
    elif action == "remove":
        del copy[head]
    elif action == "add" and isinstance(copy, dict):
        copy[f"unknown_{head}"] = value
    else:
        copy[head] = value
    return copy


@st.composite
def structured_scenarios(draw: st.DrawFn) -> str:
    doc: Any = draw(st.sampled_from(SHIPPED_DOCS))
    for _ in range(draw(st.integers(1, 3))):
        places = paths(doc)
        if not places:
            break
        doc = mutated(doc, draw(st.sampled_from(places)), draw(st.sampled_from(["replace", "remove", "add"])),
                      draw(_VALUES))
    return toml_text(doc if isinstance(doc, dict) else {"value": doc})


@st.composite
def damaged_texts(draw: st.DrawFn) -> bytes:
    """A shipped scenario truncated, with bytes inserted (NUL, non-UTF-8, any text), a line doubled
    (a duplicate key), a number made huge; or text and bytes of no scenario at all."""
    kind = draw(st.sampled_from(["truncate", "insert", "duplicate", "huge", "random text", "random bytes"]))
    if kind == "random text":
        return draw(st.text(max_size=400)).encode("utf-8", "surrogatepass")
    if kind == "random bytes":
        return draw(st.binary(max_size=400))
    data = draw(st.sampled_from(list(SHIPPED.values()))).encode("utf-8")
    at = draw(st.integers(0, len(data)))
    if kind == "truncate":
        return data[:at]
    if kind == "insert":
        extra = draw(st.one_of(st.binary(min_size=1, max_size=8), st.sampled_from([b"\x00", b"\xff\xfe", b"\x80"]),
                               st.text(min_size=1, max_size=8).map(lambda t: t.encode("utf-8", "surrogatepass"))))
        return data[:at] + extra + data[at:]
    lines = data.splitlines(keepends=True)
    index = draw(st.integers(0, len(lines) - 1))
    if kind == "duplicate":
        return b"".join([*lines[: index + 1], lines[index], *lines[index + 1 :]])
    huge = draw(st.sampled_from([b"2147483648", b"9223372036854775807", b"99999999999999999999999", b"10000000"]))
    return re.sub(rb"\d+", huge, data, count=1) if draw(st.booleans()) else b"".join(
        [*lines[:index], re.sub(rb"\d+", huge, lines[index]), *lines[index + 1 :]])


def explore_file(data: bytes, workdir: Path) -> Result:
    path = workdir / "fuzzed.toml"
    path.write_bytes(data)
    out = workdir / "out"
    try:
        return invoke("explore", str(path), "--engine", "local", "--max-states", "5", "--out", str(out))
    finally:
        shutil.rmtree(out, ignore_errors=True)


@pytest.fixture
def workdir() -> Iterator[Path]:
    """One directory for every example of a test (Hypothesis runs many examples per fixture)."""
    path = Path(tempfile.mkdtemp(prefix="kmc-fuzz-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def run_reader(reader: str, full: bool, strategy: st.SearchStrategy[Any], check: Callable[[Any, Tally], None],
               capsys: pytest.CaptureFixture[str]) -> None:
    tally = Tally(reader)

    @fuzz_settings(reader, full)
    @given(strategy)
    def each(value: Any) -> None:
        check(value, tally)

    each()
    tally.report(capsys)
    assert sum(tally.endings.values()) >= (FULL if full else SAMPLE)[reader] // 2  # Hypothesis ran them


def check_damaged_text(workdir: Path) -> Callable[[bytes, Tally], None]:
    def check(data: bytes, tally: Tally) -> None:
        try:
            data.decode("utf-8")
            utf8 = True
        except UnicodeDecodeError:
            utf8 = False
        tally.record(explore_file(data, workdir), must_refuse=not utf8)

    return check


def check_structured(workdir: Path) -> Callable[[str, Tally], None]:
    def check(text: str, tally: Tally) -> None:
        tally.record(explore_file(text.encode("utf-8", "surrogatepass"), workdir))

    return check


@pytest.mark.parametrize("full", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["sample", "full"])
def test_fuzz_scenario_text(full: bool, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Truncated, byte-damaged, duplicate-key, huge-number, non-UTF-8 and random scenario files: exit 2
    with one line, or a run within its bounds; never a traceback or a hang."""
    run_reader("scenario_text", full, damaged_texts(), check_damaged_text(workdir), capsys)


@pytest.mark.parametrize("full", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["sample", "full"])
def test_fuzz_scenario_structure(full: bool, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Shipped scenarios with values replaced by wrongly typed, oversized or odd ones, keys removed and
    unknown keys added: exit 2 with one line, or a run within its bounds."""
    run_reader("scenario_structure", full, structured_scenarios(), check_structured(workdir), capsys)


# -- kmc assign: --broker-list and --racks ----------------------------------------------------------

_LIST_TEXT = st.one_of(
    st.text(alphabet="0123456789,: ", max_size=40),
    st.text(max_size=40),
    st.lists(st.integers(-5, 2**33), max_size=12).map(lambda ids: ",".join(map(str, ids))),
    st.sampled_from(["", ",", "0,,1", "0,0", "2147483648", " 1 , 2 ", "٣", "0x1", "1e3", "\x00"]),
)
_RACKS_TEXT = st.one_of(
    st.none(),
    st.text(alphabet="0123456789,:r ", max_size=40),
    st.text(max_size=40),
    st.lists(st.tuples(st.integers(-1, 12), st.text(max_size=4)), max_size=8).map(
        lambda pairs: ",".join(f"{b}:{r}" for b, r in pairs)),
)
_NUMBER = st.one_of(st.integers(-3, 40), st.integers(), _WEIRD_INT)


@st.composite
def assign_arguments(draw: st.DrawFn) -> list[str]:
    args = ["assign", "--broker-list", draw(_LIST_TEXT), "--partitions", str(draw(_NUMBER)),
            "--replication-factor", str(draw(_NUMBER))]
    racks = draw(_RACKS_TEXT)
    if racks is not None:
        args += ["--racks", racks]
    if draw(st.booleans()):
        args += ["--start-index", str(draw(_NUMBER))]
    if draw(st.booleans()):
        args += ["--topic", draw(st.one_of(_WEIRD_TEXT, st.text(max_size=20)))]
    return args


def check_assign(args: list[str], tally: Tally) -> None:
    tally.record(invoke(*args))


@pytest.mark.parametrize("full", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["sample", "full"])
def test_fuzz_assign_lists(full: bool, capsys: pytest.CaptureFixture[str]) -> None:
    """--broker-list, --racks and the sizes of kmc assign, malformed or oversized: exit 2 with one line,
    or the assignment printed; never a traceback or a hang."""
    run_reader("assign", full, assign_arguments(), check_assign, capsys)


# -- kmc explore's arguments: SCENARIO, --resume, --conf, --time-limit, --max-memory, --checkpoint-every --

TINY = '[cluster]\nbrokers = [0]\n[[topics]]\nname = "t"\npartitions = 1\nreplication_factor = 1\n'


@st.composite
def option_arguments(draw: st.DrawFn) -> tuple[list[str], bool]:
    """One option with a fuzzed value, and whether the input must be refused."""
    option = draw(st.sampled_from(["--conf", "--time-limit", "--max-memory", "--checkpoint-every", "SCENARIO",
                                   "--resume"]))
    value = draw(st.one_of(
        st.text(max_size=30),
        st.text(alphabet="0123456789.smhKMGTiB =-", max_size=12),
        st.sampled_from(["", "=", "a=b", "=b", "spark.x=\n", "1e9", "-1", "0", "1.5h", "10000h", "4G", "0M",
                         "1125899906842625", "nan", "inf", "\x00"]),
    ))
    if option == "SCENARIO":  # a shipped scenario's name or a path: any text, however long
        value = draw(st.one_of(st.just(value), st.text(min_size=256, max_size=5000), _WEIRD_TEXT))
        return [value], False
    if option == "--resume":  # no run directory has such a name
        return [option, f"no-such-run-{value}"], True
    # --conf applies to the Spark engine only: with --engine local it is always refused.
    return [option, value], option == "--conf"


def check_options(workdir: Path) -> Callable[[tuple[list[str], bool], Tally], None]:
    scenario = workdir / "tiny.toml"
    scenario.write_text(TINY)

    def check(drawn: tuple[list[str], bool], tally: Tally) -> None:
        args, must_refuse = drawn
        out = workdir / "out"
        target = [] if len(args) == 1 or args[0] == "--resume" else [str(scenario)]
        try:
            tally.record(invoke("explore", *target, "--engine", "local", "--max-states", "3", "--out", str(out),
                                *args), must_refuse=must_refuse)
        finally:
            shutil.rmtree(out, ignore_errors=True)

    return check


@pytest.mark.parametrize("full", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["sample", "full"])
def test_fuzz_explore_options(full: bool, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SCENARIO (any text), --resume, --conf and the duration and size options, malformed: exit 2 with one
    line; well formed: a run."""
    run_reader("options", full, option_arguments(), check_options(workdir), capsys)


# -- the files --resume reads ----------------------------------------------------------------------


@pytest.fixture
def stopped_runs(workdir: Path) -> dict[str, Path]:
    """A local run stopped by a depth bound (with a checkpoint) and a Spark run directory with level 0
    written (made with pyarrow, no Spark), each with run.json and its scenario copy."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from explorer.fingerprint import array_checksum
    from explorer.integrity import links_checksum
    from kmc import compose
    from spark_explore.columns import column_fingerprints
    from spark_explore.manifest import Manifest, write_manifest
    from spark_explore.trace import level_dir

    out = workdir / "made"
    result = CliRunner().invoke(main, ["explore", "planted-complete-on-first-success", "--engine", "local",
                                       "--max-depth", "2", "--out", str(out)])
    assert result.exit_code == 3, result.stderr
    [local] = out.iterdir()
    spark_run = workdir / "spark-run"
    shutil.copytree(local, spark_run)
    for stale in [*spark_run.glob("checkpoint-*"), spark_run / "manifest.json", spark_run / "summary.json"]:
        shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    facts = json.loads((spark_run / "run.json").read_text())
    (spark_run / "run.json").write_text(json.dumps({**facts, "engine": "spark"}))
    sc = compose.resolve_scenario("planted-complete-on-first-success")
    model = compose.model_for(sc)
    from explorer.fingerprint import fingerprint

    [initial] = model.init_states()
    data = model.encode(initial)
    table = pa.table({"fp": pa.array([fingerprint(data)], pa.int64()), "parent_fp": pa.array([None], pa.int64()),
                      "action_index": pa.array([None], pa.int32()), "action_name": pa.array([None], pa.string()),
                      "data": pa.array([data], pa.binary())})
    level_dir(spark_run, 0).mkdir(parents=True)
    pq.write_table(table, level_dir(spark_run, 0) / "part-00000.parquet")
    write_manifest(spark_run, Manifest(scenario_hash=sc.digest, kmc_version=facts["kmc_version"], master="local[2]",
                                       initial_states=1, initial_generated=1,
                                       initial_checksum=array_checksum(column_fingerprints(table, ("fp",), 64)),
                                       initial_links=links_checksum(np.array([fingerprint(data)], np.int64),
                                                                    np.zeros(1, np.int64), np.array([-1], np.int32))))
    return {"local": local, "spark": spark_run}


class SparkNotStarted(BaseException):
    """Stands in for starting a Spark session: a fuzzed manifest that passes every check gets this far
    (or resumes on the driver, when its levels are small)."""


@st.composite
def damaged_json(draw: st.DrawFn, original: dict[str, Any]) -> bytes:
    kind = draw(st.sampled_from(["mutate", "mutate", "truncate", "garbage"]))
    text = json.dumps(original, indent=2)
    if kind == "truncate":
        return text.encode()[: draw(st.integers(0, len(text) - 1))]
    if kind == "garbage":
        return draw(st.one_of(st.binary(max_size=200), st.text(max_size=200).map(
            lambda t: t.encode("utf-8", "surrogatepass"))))
    doc: Any = original
    for _ in range(draw(st.integers(1, 3))):
        places = paths(doc)
        if not places:
            break
        doc = mutated(doc, draw(st.sampled_from(places)), draw(st.sampled_from(["replace", "remove", "add"])),
                      draw(_VALUES))
    if isinstance(doc, dict) and "digest" in original and draw(st.booleans()):
        doc = sealed(doc)  # as a writer with a bug would seal it: the checks behind the seal must hold alone
    return json.dumps(doc).encode()


@st.composite
def resume_inputs(draw: st.DrawFn, originals: dict[tuple[str, str], dict[str, Any]]) -> tuple[str, str, bytes]:
    engine, name = draw(st.sampled_from(sorted(originals)))
    return engine, name, draw(damaged_json(originals[(engine, name)]))


def test_fuzz_resume_files_sample(stopped_runs: dict[str, Path], workdir: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Damaged manifest.json and run.json of local and Spark runs (kmc explore --resume) and summary.json
    (kmc report): exit 2 with one line naming the file, or a resumed run or rendered reports; never a
    traceback or a hang (a sample)."""
    fuzz_resume_files(False, stopped_runs, workdir, capsys, monkeypatch)


@pytest.mark.slow
def test_fuzz_resume_files(stopped_runs: dict[str, Path], workdir: Path, capsys: pytest.CaptureFixture[str],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Damaged manifest.json and run.json of local and Spark runs (kmc explore --resume) and summary.json
    (kmc report): exit 2 with one line naming the file, or a resumed run or rendered reports; never a
    traceback or a hang."""
    fuzz_resume_files(True, stopped_runs, workdir, capsys, monkeypatch)


def fuzz_resume_files(full: bool, stopped_runs: dict[str, Path], workdir: Path, capsys: pytest.CaptureFixture[str],
                      monkeypatch: pytest.MonkeyPatch) -> None:
    import spark_explore.bfs

    def no_spark(*_args: Any, **_kwargs: Any) -> None:
        raise SparkNotStarted

    # The Spark engine expands small levels on its driver and starts a session only for a large one.
    monkeypatch.setattr(spark_explore.bfs, "SessionStart", no_spark)
    originals = {(engine, name): json.loads((run_dir / name).read_text())
                 for engine, run_dir in stopped_runs.items() for name in ("manifest.json", "run.json")}
    originals[("local", "summary.json")] = json.loads((stopped_runs["local"] / "summary.json").read_text())
    def check(drawn: tuple[str, str, bytes], tally: Tally) -> None:
        engine, name, data = drawn
        run_dir = workdir / "resumed"
        shutil.rmtree(run_dir, ignore_errors=True)
        shutil.copytree(stopped_runs[engine], run_dir)
        (run_dir / name).write_bytes(data)
        command = ["report", str(run_dir)] if name == "summary.json" else ["explore", "--resume", str(run_dir),
                                                                          "--max-depth", "3"]
        try:
            result = invoke(*command)
        except SparkNotStarted:
            tally.endings["passed every check, would start Spark"] += 1
            return
        tally.record(result)

    run_reader("run_files", full, resume_inputs(originals), check, capsys)


# -- Kafka's files: reassignment JSON, topics-to-move JSON, kafka-topics and kafka-log-dirs output --------

PLACEMENT = {("t", 0): [0, 1, 2], ("t", 1): [1, 2, 3], ("t", 2): [2, 3, 0], ("u", 0): [3, 0, 1]}
KAFKA_SEEDS: dict[str, Any] = {
    "reassignment": {"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r, "log_dirs": ["any"] * len(r)} for (t, p), r in PLACEMENT.items()]},
    "topics_to_move": {"topics": [{"topic": "t"}], "version": 1},
    "log_dirs": {"version": 1, "brokers": [{"broker": b, "logDirs": [{"logDir": "/data", "error": None, "partitions": [
        {"partition": f"{t}-{p}", "size": 1000 * (p + 1), "offsetLag": 0, "isFuture": False}
        for (t, p), r in PLACEMENT.items() if b in r]}]} for b in range(4)]},
}
DESCRIBE = "".join(
    [f"Topic:{t}\tPartitionCount:{n}\tReplicationFactor:3\tConfigs:\n" for t, n in (("t", 3), ("u", 1))][:1]
    + [f"\tTopic: {t}\tPartition: {p}\tLeader: {r[0]}\tReplicas: {','.join(map(str, r))}\tIsr: "
       f"{','.join(map(str, r))}\n" for (t, p), r in PLACEMENT.items()]
)


@st.composite
def kafka_file(draw: st.DrawFn, kind: str) -> bytes:
    """One of Kafka's files, damaged: JSON mutated in its structure or its text, or the describe text
    cut, with bytes inserted or a line doubled."""
    if kind == "describe":
        data = DESCRIBE.encode()
        at = draw(st.integers(0, len(data)))
        how = draw(st.sampled_from(["keep", "truncate", "insert", "duplicate"]))
        if how == "truncate":
            return data[:at]
        if how == "insert":
            return data[:at] + draw(st.one_of(st.binary(min_size=1, max_size=8), st.text(min_size=1, max_size=8)
                                              .map(lambda t: t.encode("utf-8", "surrogatepass")))) + data[at:]
        if how == "duplicate":
            lines = data.splitlines(keepends=True)
            index = draw(st.integers(0, len(lines) - 1))
            return b"".join([*lines[: index + 1], lines[index], *lines[index + 1 :]])
        return data
    original = KAFKA_SEEDS[kind]
    if draw(st.booleans()):
        return draw(damaged_json(original))
    return json.dumps(original).encode() if draw(st.integers(0, 9)) == 0 else draw(damaged_json(original))


@st.composite
def kafka_commands(draw: st.DrawFn, workdir: Path) -> list[str]:
    """``kmc validate PLAN --current CURRENT …`` or ``kmc plan --current CURRENT …`` with one or more of
    the files damaged."""
    current_kind = draw(st.sampled_from(["reassignment", "describe"]))
    current = workdir / "current.txt"
    current.write_bytes(draw(kafka_file(current_kind)))
    racks = ["--racks", "0:a,1:b,2:c,3:a"] if draw(st.booleans()) else []
    if draw(st.booleans()):
        plan = workdir / "plan.json"
        plan.write_bytes(draw(kafka_file("reassignment")))
        return ["validate", str(plan), "--current", str(current), "--broker-list", "0,1,2,3", *racks]
    brokers = draw(st.sampled_from(["0,1,2,3", "1,2,3", "0,1,2,3,4"]))
    args = ["plan", "--current", str(current), "--broker-list", brokers, *racks, "--out", str(workdir / "out")]
    if draw(st.booleans()):
        moves = workdir / "topics.json"
        moves.write_bytes(draw(kafka_file("topics_to_move")))
        args += ["--topics-to-move", str(moves)]
    if draw(st.booleans()):
        sizes = workdir / "log-dirs.txt"
        sizes.write_bytes(b"Querying brokers for log directories information\nReceived log directory information "
                          b"from brokers 0,1,2,3\n" + draw(kafka_file("log_dirs")) + b"\n")
        args += ["--partition-sizes", str(sizes)]
    return args


@pytest.mark.parametrize("full", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["sample", "full"])
def test_fuzz_kafka_files(full: bool, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Damaged reassignment JSON, topics-to-move JSON, kafka-topics --describe text and kafka-log-dirs
    output read by kmc plan and kmc validate: exit 2 with one line (or a plan or a verdict on a file
    that is still valid); never a traceback or a hang."""

    def check(args: list[str], tally: Tally) -> None:
        try:
            tally.record(invoke(*args))
        finally:
            shutil.rmtree(workdir / "out", ignore_errors=True)

    run_reader("kafka_files", full, kafka_commands(workdir), check, capsys)


# -- held-out bad files for kmc plan and kmc validate ---------------------------------------------

GOOD_PLAN = {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [0, 1]}]}
#: Files of the kinds a probe held out from the fuzzers: each goes to every file option of plan and validate.
BAD_FILES: dict[str, bytes] = {
    "arrays nested 100,000 deep": b"[" * 100_000 + b"]" * 100_000,
    "objects nested 100,000 deep": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "a byte-order mark": b"\xef\xbb\xbf" + json.dumps(GOOD_PLAN).encode(),
    "UTF-16": json.dumps(GOOD_PLAN).encode("utf-16"),
    "NaN as a partition": b'{"version":1,"partitions":[{"topic":"t","partition":NaN,"replicas":[0,1]}]}',
    "Infinity as a replica": b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[0,1e999]}]}',
    "a partition beyond Int": b'{"version":1,"partitions":[{"topic":"t","partition":99999999999999999999,'
                              b'"replicas":[0,1]}]}',
    "a negative replica": b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[-1,1]}]}',
    "replicas as text": b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":"0,1"}]}',
    "a duplicate key": b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[0,1]}],"partitions":[]}',
    "a TOML file": b'[cluster]\nbrokers = [{ id = 0 }]\n',
    "a JSON array": b"[1, 2, 3]",
    "a JSON string": b'"plan"',
    "an empty file": b"",
    "binary": bytes(range(256)),
    "a topic with a control character": json.dumps({"version": 1, "partitions": [
        {"topic": "t\x1b[2J", "partition": 0, "replicas": [0, 1]}]}).encode(),
    "an HTML topic": json.dumps({"version": 1, "partitions": [
        {"topic": "<script>x</script>", "partition": 0, "replicas": [0, 1]}]}).encode(),
    "describe output with a superscript partition": (b"\tTopic: t\tPartition: \xc2\xb2\tLeader: 0\tReplicas: 0,1\t"
                                                     b"Isr: 0,1\n"),
    "log-dirs with a superscript partition": b'{"version":1,"brokers":[{"broker":0,"logDirs":[{"partitions":'
                                             b'[{"partition":"t-\xc2\xb2","size":1}]}]}]}',
    "log dirs of control characters": json.dumps({"version": 1, "partitions": [
        {"topic": "t", "partition": 0, "replicas": [0, 1], "log_dirs": ["\x1b[2J"]}]}).encode(),
    "one line of 2 MB": b"x" * (2 << 20),
}


@pytest.mark.parametrize("bad", list(BAD_FILES))
def test_held_out_bad_files_for_plan_and_validate(bad: str, workdir: Path) -> None:
    """Each held-out bad file, as every file kmc plan and kmc validate read: a plan or a verdict (exit 0 or
    1) or one sentence (exit 2); never a traceback, exit 4, a hang, or a control character printed raw."""
    path, good = workdir / "bad.file", workdir / "good.json"
    path.write_bytes(BAD_FILES[bad])
    good.write_text(json.dumps(GOOD_PLAN), encoding="utf-8")
    plan = ["plan", "--broker-list", "0,1,2", "--out", str(workdir / "out")]
    commands = [
        ["validate", str(path)],
        ["validate", str(good), "--current", str(path)],
        [*plan, "--current", str(path)],
        [*plan, "--current", str(good), "--topics-to-move", str(path)],
        [*plan, "--current", str(good), "--partition-sizes", str(path)],
    ]
    tally = Tally(f"held-out {bad}")
    for command in commands:
        result = invoke(*command)
        tally.record(result)
        assert "\x1b" not in result.output, (command, result.output)


# -- tampered run directories: the uninterrupted verdict or exit 2 ---------------------------------

TAMPERED = "planted-complete-on-first-success"  # 152 states; its violation is found at depth 5


def _verdict(result: Result) -> tuple[int, int, list[list[int]]]:
    """Exit status, distinct states and counterexample paths of a ``--format json`` run."""
    document = json.loads(result.stdout)
    return (result.exit_code, document["statistics"]["distinct"],
            [d["fingerprints"] for d in document["discoveries"]])


@pytest.fixture
def stopped_at_depth_2(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Path], Any]:
    """Runs of TAMPERED stopped at depth 2 on both engines (Spark's small levels on its driver, no session),
    and the uninterrupted verdict."""
    import spark_explore.bfs

    def no_spark(*_args: Any, **_kwargs: Any) -> None:
        raise SparkNotStarted

    monkeypatch.setattr(spark_explore.bfs, "SessionStart", no_spark)
    complete = invoke("explore", TAMPERED, "--engine", "local", "--format", "json", "--out", str(workdir / "full"))
    runs = {}
    for engine in ("local", "spark"):
        out = workdir / f"stopped-{engine}"
        driver = ("--driver-level-seconds", "86400") if engine == "spark" else ()  # every level on the driver
        stopped = invoke("explore", TAMPERED, "--engine", engine, "--max-depth", "2", *driver, "--out", str(out))
        assert stopped.exit_code == 3, stopped.stderr
        [runs[engine]] = out.iterdir()
    return runs, _verdict(complete)


@st.composite
def tampered_files(draw: st.DrawFn, runs: dict[str, Path]) -> tuple[str, str, str, int, int]:
    """A file of a stopped run directory (any file), a place in it and a damage: a flipped byte, the
    file cut there, or a byte inserted there."""
    engine = draw(st.sampled_from(sorted(runs)))
    files = sorted(str(p.relative_to(runs[engine])) for p in runs[engine].rglob("*") if p.is_file()
                   and p.name != ".lock")
    name = draw(st.sampled_from(files))
    size = (runs[engine] / name).stat().st_size
    return engine, name, draw(st.sampled_from(["flip", "flip", "flip", "cut", "insert"])), \
        draw(st.integers(0, max(size - 1, 0))), draw(st.integers(1, 255))


def fuzz_tampered_runs(full: bool, stopped: tuple[dict[str, Path], Any], workdir: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    runs, complete = stopped

    def check(drawn: tuple[str, str, str, int, int], tally: Tally) -> None:
        engine, name, how, offset, value = drawn
        run_dir = workdir / "tampered"
        shutil.rmtree(run_dir, ignore_errors=True)
        shutil.copytree(runs[engine], run_dir)
        path = run_dir / name
        data = bytearray(path.read_bytes())
        if how == "flip" and data:
            data[offset] ^= value
        elif how == "cut":
            del data[offset:]
        else:
            data[offset:offset] = bytes([value])
        path.write_bytes(bytes(data))
        # a Spark run resumes on its driver whatever the first resumed level's warm-up time makes its rate per state
        # look like (a session is started once a level is estimated at half of the bound it sets)
        driver = ("--driver-level-seconds", "86400") if engine == "spark" else ()
        result = invoke("explore", "--resume", str(run_dir), *driver, "--format", "json")
        tally.record(result)
        if result.exit_code != 2:  # not refused: the resumed run must end as the uninterrupted one
            assert _verdict(result) == complete, (engine, name, how, offset, value)
            tally.notes[f"{engine}: uninterrupted verdict"] += 1
        else:
            tally.notes[f"{engine}: refused"] += 1

    run_reader("tampered_runs", full, tampered_files(runs), check, capsys)


@pytest.mark.parametrize("full", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["sample", "full"])
def test_fuzz_tampered_run_directories(full: bool, stopped_at_depth_2: tuple[dict[str, Path], Any], workdir: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Any byte of a stopped run directory (local checkpoint, Spark levels, manifests, run.json, the
    scenario's copy, reports) flipped, cut or inserted, then resumed: the uninterrupted verdict (exit,
    distinct states, counterexample paths) or exit 2; never another verdict, exit 4 or a hang."""
    fuzz_tampered_runs(full, stopped_at_depth_2, workdir, capsys)


# -- summary.json with counterexamples: every nested field --------------------------------------------


@pytest.fixture
def violating_run(workdir: Path) -> Path:
    """A run directory of a violation: summary.json with counterexample traces and their views."""
    out = workdir / "violating"
    result = invoke("explore", TAMPERED, "--engine", "local", "--out", str(out))
    assert result.exit_code == 1, result.stderr
    [run_dir] = out.iterdir()
    return run_dir


@pytest.mark.parametrize("full", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["sample", "full"])
def test_fuzz_summaries_with_traces(full: bool, violating_run: Path, workdir: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """summary.json of a violation with any nested field (trace steps, views, tables, cells, lanes,
    messages, evidence, the model factory) replaced, removed or added, rendered by kmc report in every
    format (ITF and the replay script included): exit 0 or one sentence (exit 2); never a traceback or
    exit 4 (24 of 300 such summaries crashed a renderer before)."""
    original = json.loads((violating_run / "summary.json").read_text(encoding="utf-8"))

    def check(data: bytes, tally: Tally) -> None:
        run_dir = workdir / "rendered"
        shutil.rmtree(run_dir, ignore_errors=True)
        run_dir.mkdir()
        (run_dir / "summary.json").write_bytes(data)
        tally.record(invoke("report", str(run_dir), *[arg for fmt in ("text", "md", "html", "itf", "replay")
                                                      for arg in ("--format", fmt)]))

    run_reader("summaries", full, damaged_json(original), check, capsys)


# -- every option's values on every command ------------------------------------------------------------

_ANY_TEXT = st.one_of(
    st.text(max_size=24),
    st.sampled_from(["", " ", "-1", "0", "1", "2", "3", "1.5", "1e9", "nan", "inf", "-0", "0x10", "²", "١",
                     "\x00", "\n", "\x1b[2J", "=", "a=b", "2147483648", "99999999999999999999999", "local[0]",
                     "local[*]", "spark://", "yarn", "text", "json", "html", "itf", "replay", "md", "zk"]),
)
#: A small value, or one that is wrong: what a budget option may take without the run taking long.
_SMALL_OR_WRONG = st.one_of(st.integers(-2, 4).map(str), st.sampled_from(["", "x", "1.5", "-0", "2³", "\x00", " 3"]))
_BROKERS = st.one_of(_ANY_TEXT, st.sampled_from(["0,1,2", "0,1,2,3", "0,,1", "0,1,1", "2147483648", "0, 1"]))
_RACKS = st.one_of(_ANY_TEXT, st.sampled_from(["0:a,1:b,2:a", "0:a", "0:", ":a", "0:a,0:b", "9:a", "0:\x1b"]))


def _command_options(workdir: Path) -> dict[str, tuple[list[str], dict[str, st.SearchStrategy[str]]]]:
    """Per command: its base arguments and, per option, the values to try."""
    scenario, plan, out = workdir / "tiny.toml", workdir / "plan.json", str(workdir / "out")
    return {
        "explore": ([str(scenario), "--engine", "local", "--max-states", "3", "--out", out], {
            "--engine": _ANY_TEXT, "--master": _ANY_TEXT, "--conf": _ANY_TEXT, "--format": _ANY_TEXT,
            "--max-depth": _SMALL_OR_WRONG, "--max-states": _SMALL_OR_WRONG, "--time-limit": _ANY_TEXT,
            "--max-memory": _ANY_TEXT, "--checkpoint-every": _ANY_TEXT, "--fingerprint-bits": _ANY_TEXT,
            "--driver-level-seconds": _ANY_TEXT, "--property": _ANY_TEXT, "--skip-property": _ANY_TEXT,
            "--out": _ANY_TEXT, "--resume": _ANY_TEXT.map(lambda t: f"no-such-run-{t}")}),
        "simulate": ([str(scenario), "--walks", "2", "--depth", "3", "--out", out], {
            "--walks": _SMALL_OR_WRONG, "--depth": _SMALL_OR_WRONG, "--seed": _ANY_TEXT, "--choose": _ANY_TEXT,
            "--max-examples": _SMALL_OR_WRONG, "--engine": _ANY_TEXT.filter(lambda t: t != "spark"),
            "--master": _ANY_TEXT, "--conf": _ANY_TEXT, "--format": _ANY_TEXT, "--out": _ANY_TEXT}),
        "plan": (["--current", str(plan), "--broker-list", "0,1,2", "--out", out], {
            "--broker-list": _BROKERS, "--racks": _RACKS, "--rack-mode": _ANY_TEXT,
            "--replication-factor": st.one_of(_SMALL_OR_WRONG, _ANY_TEXT), "--balance-slack": _ANY_TEXT,
            "--topics-to-move": _ANY_TEXT, "--partition-sizes": _ANY_TEXT, "--current": _ANY_TEXT,
            "--out": _ANY_TEXT}),
        "validate": ([str(plan), "--current", str(plan)], {
            "--broker-list": _BROKERS, "--racks": _RACKS, "--rack-mode": _ANY_TEXT,
            "--replication-factor": _ANY_TEXT, "--broker-failures": _ANY_TEXT, "--max-states": _ANY_TEXT,
            "--current": _ANY_TEXT}),
        "prove": (["assignment", "--max-brokers", "3", "--max-racks", "2"], {
            "--max-brokers": _SMALL_OR_WRONG, "--max-racks": _SMALL_OR_WRONG, "--format": _ANY_TEXT}),
        "report": ([str(workdir / "violating-run")], {"--format": _ANY_TEXT}),
        "bugs": ([], {"--only": _ANY_TEXT}),
    }


@st.composite
def command_options(draw: st.DrawFn, table: dict[str, tuple[list[str], dict[str, st.SearchStrategy[str]]]]
                    ) -> list[str]:
    """A command with its base arguments and one to three of its options given fuzzed values."""
    command = draw(st.sampled_from(sorted(table)))
    base, options = table[command]
    chosen = draw(st.lists(st.sampled_from(sorted(options)), min_size=1, max_size=3, unique=True))
    args = [command, *base]
    for option in chosen:
        args += [option, draw(options[option])]
    return args


@pytest.mark.parametrize("full", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["sample", "full"])
def test_fuzz_every_option_of_every_command(full: bool, violating_run: Path, workdir: Path,
                                            capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    """Every option of explore, simulate, plan, validate, prove, report and bugs, alone or two or three
    together, with fuzzed values: a result or one sentence (exit 2); never a traceback, exit 4 or a hang."""
    import spark_explore.bfs

    def no_spark(*_args: Any, **_kwargs: Any) -> None:
        raise SparkNotStarted

    monkeypatch.setattr(spark_explore.bfs, "SessionStart", no_spark)
    monkeypatch.chdir(workdir)  # a fuzzed --out is a relative path: its run directories stay in workdir
    (workdir / "tiny.toml").write_text(TINY, encoding="utf-8")
    (workdir / "plan.json").write_text(json.dumps(GOOD_PLAN), encoding="utf-8")
    shutil.copytree(violating_run, workdir / "violating-run")

    def check(args: list[str], tally: Tally) -> None:
        try:
            tally.record(invoke(*args))
            tally.notes[args[0]] += 1
        except SparkNotStarted:
            tally.notes["passed every check, would start Spark"] += 1
        finally:
            shutil.rmtree(workdir / "out", ignore_errors=True)

    run_reader("every_option", full, command_options(_command_options(workdir)), check, capsys)
