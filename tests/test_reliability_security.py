"""Inputs are data only and nothing kmc starts listens beyond this machine.

No module of kmc evaluates, unpickles or shells out with text it was given; the Spark UI is off
unless asked for, and a Spark run (UI included) listens on loopback addresses only, which a test
checks on the live sockets of the process tree while a run goes on.
"""

from __future__ import annotations

import ast
import json
import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_reliability_signals import environment, the_run_dir

from spark_explore.session import default_conf

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("kmc", "model", "invariants", "explorer", "spark_explore", "reports")

#: Builtins that would turn input into code.
FORBIDDEN_BUILTINS = {"eval", "exec", "compile", "__import__"}
#: Calls that hand text to a shell.
FORBIDDEN_ATTRIBUTE_CALLS = {("os", "system"), ("os", "popen"), ("builtins", "eval"), ("builtins", "exec")}
FORBIDDEN_MODULES = {"pickle", "cPickle", "dill", "marshal", "shelve", "yaml", "cloudpickle"}


def python_files() -> list[Path]:
    return [path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))]


def problems_in(source: str, where: str) -> list[str]:
    """The forbidden imports and calls in ``source``."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        at = f"{where}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
            problems += [f"{at} imports {n}" for n in names if n and n.split(".")[0] in FORBIDDEN_MODULES]
        if isinstance(node, ast.Call):
            function = node.func
            if isinstance(function, ast.Name) and function.id in FORBIDDEN_BUILTINS:
                problems.append(f"{at} calls {function.id}")
            if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name) and (
                (function.value.id, function.attr) in FORBIDDEN_ATTRIBUTE_CALLS
            ):
                problems.append(f"{at} calls {function.value.id}.{function.attr}")
            if any(k.arg == "shell" and getattr(k.value, "value", False) is True for k in node.keywords):
                problems.append(f"{at} runs a shell")
    return problems


#: The one function allowed to compile code: it defines the model's codec and step functions from source
#: generated out of the state classes' declarations (as attrs and dataclasses generate ``__init__``), never
#: from input. Its two calls of ``exec`` and ``compile`` are the only ones the scan accepts, and only there.
CODE_GENERATION = ("model/zk/state/schema.py", "define_functions")


def _inside(tree: ast.AST, function: str) -> set[int]:
    """The line numbers of the body of the module-level function ``function``."""
    return {line for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == function
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)}


def test_no_module_evaluates_unpickles_or_shells_out() -> None:
    """No eval, exec, compile or __import__ of text, no pickle-like module, no os.system, os.popen or
    shell=True, anywhere in kmc's packages (z3's Model.eval, which evaluates z3 terms, is not Python's),
    except the calls of exec and compile inside the code generator of the state classes."""
    problems = []
    for path in python_files():
        where, source = str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")
        found = problems_in(source, where)
        if where == CODE_GENERATION[0]:
            allowed = _inside(ast.parse(source), CODE_GENERATION[1])
            found = [p for p in found if not (p.endswith((" calls exec", " calls compile"))
                                              and int(p.split(" ", 1)[0].rsplit(":", 1)[1]) in allowed)]
        problems += found
    assert problems == []


def test_the_scan_sees_planted_code() -> None:
    """The scan reports each kind of planted line (so that the test above can fail)."""
    planted = "import pickle\nfrom yaml import load\neval(text)\nos.system(cmd)\nrun(cmd, shell=True)\nm.eval(x)\n"
    assert [p.split(" ", 1)[1] for p in problems_in(planted, "x")] == [
        "imports pickle", "imports yaml", "calls eval", "calls os.system", "runs a shell",
    ]


def test_the_spark_ui_is_off_unless_asked() -> None:
    """kmc's Spark settings leave the web UI off by default and on only when asked."""
    assert default_conf("local[*]", ui=False, log4j_file=None)["spark.ui.enabled"] == "false"
    assert default_conf("local[*]", ui=True, log4j_file=None)["spark.ui.enabled"] == "true"


# -- listening sockets ------------------------------------------------------------------------------


def process_tree(root: int) -> set[int]:
    """``root`` and every process descended from it (from ``/proc/<pid>/task/*/children``)."""
    found, pending = set(), [root]
    while pending:
        pid = pending.pop()
        if pid in found:
            continue
        found.add(pid)
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                pending += [int(child) for child in (task / "children").read_text().split()]
            except OSError:
                continue
    return found


def socket_inodes(pids: set[int]) -> set[str]:
    inodes = set()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").glob("*"):
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    return inodes


def listening(inodes: set[str]) -> set[tuple[str, int]]:
    """(address, port) of the TCP sockets in LISTEN state among ``inodes``."""
    bound = set()
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] != "0A" or fields[9] not in inodes:
                continue
            address, port = fields[1].split(":")
            raw = bytes.fromhex(address)
            words = struct.unpack("<" + "I" * (len(raw) // 4), raw)  # /proc prints each 32-bit word little-endian
            host = socket.inet_ntop(family, b"".join(struct.pack(">I", w) for w in words))
            bound.add((host, int(port, 16)))
    return bound


def is_loopback(host: str) -> bool:
    return host.startswith("127.") or host in ("::1", "::ffff:127.0.0.1") or host.startswith("::ffff:127.")


@pytest.mark.slow
@pytest.mark.spark
def test_a_spark_run_listens_on_loopback_only(tmp_path: Path) -> None:
    """During a Spark run with the web UI on, every socket its processes listen on is bound to a
    loopback address (py4j, the driver, the block manager, the UI)."""
    out = tmp_path / "out"
    command = [sys.executable, "-m", "kmc", "explore", "planted-complete-on-first-success", "--engine", "spark",
               "--master", "local[2]", "--spark-ui", "--driver-level-seconds", "0", "--out", str(out)]
    process = subprocess.Popen(command, cwd=tmp_path, env=environment(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    seen: set[tuple[str, int]] = set()
    try:
        while process.poll() is None:
            seen |= listening(socket_inodes(process_tree(process.pid)))
            time.sleep(0.2)
        assert process.returncode == 1, process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            os.killpg(process.pid, 9)
            process.wait()
    assert len({port for _, port in seen}) >= 3, seen  # py4j, the driver's RPC, the block manager
    assert any(4040 <= port < 4100 for _, port in seen), seen  # the web UI (4040, or the next free port)
    assert [host for host, _ in seen if not is_loopback(host)] == []
    assert (the_run_dir(out) / "summary.json").exists()


@pytest.mark.parametrize("factory", [
    {"module": "os", "name": "system", "argument": "touch pwned"},
    {"module": "kmc.common", "name": "fail", "argument": "x"},
    {"module": "kmc.compose", "name": "build_kafka_model", "argument": ["not", "toml"]},
    {"module": ["kmc.compose"], "name": "build_kafka_model", "argument": "x"},
])
def test_a_replay_script_calls_only_kmcs_own_model_factory(factory: dict[str, Any], tmp_path: Path) -> None:
    """A summary.json whose model_factory names anything but kmc's model factory (os.system made the
    replay script run a shell command) is refused by kmc report, exit 2, and no script is written."""
    from click.testing import CliRunner

    from kmc.cli import main

    explored = CliRunner().invoke(main, ["explore", "planted-complete-on-first-success", "--engine", "local",
                                         "--out", str(tmp_path)])
    assert explored.exit_code == 1, explored.stderr
    [run_dir] = tmp_path.iterdir()
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert (summary["model_factory"]["module"], summary["model_factory"]["name"]) == ("kmc.compose",
                                                                                      "build_kafka_model")
    for script in run_dir.glob("replay_*.py"):
        script.unlink()
    (run_dir / "summary.json").write_text(json.dumps({**summary, "model_factory": factory}), encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(run_dir), "--format", "replay"])
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert "model_factory" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not list(run_dir.glob("replay_*.py"))
