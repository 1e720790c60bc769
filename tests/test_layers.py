"""The layers of DESIGN.md as import-linter contracts: kept by the code as it is, broken by a wrong import.

``lint-imports`` reads the contracts from ``[tool.importlinter]`` in ``pyproject.toml``. The second test
copies the packages into a temporary directory, plants one import that crosses a layer, and checks that
import-linter fails the contract it crosses, so a contract that can no longer fail shows up here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("kmc", "model", "invariants", "explorer", "spark_explore", "reports")


def lint_imports(cwd: Path, *options: str) -> subprocess.CompletedProcess[str]:
    program = Path(sys.executable).with_name("lint-imports")
    command = [str(program)] if program.exists() else [shutil.which("lint-imports") or "lint-imports"]
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    done = subprocess.run([*command, "--no-cache", *options], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    return done


def test_the_code_keeps_every_layer_contract() -> None:
    """lint-imports passes on the project as it is, with all nine contracts checked."""
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "9 kept, 0 broken" in done.stdout


@pytest.mark.parametrize(
    ("module", "planted", "contract"),
    [
        ("explorer/bfs.py", "import model.zk.state.values", "explorers-know-no-kafka"),
        ("spark_explore/level.py", "import invariants.registry", "explorers-know-no-kafka"),
        ("explorer/expand.py", "import kmc.compose", "layers"),
        ("explorer/replay.py", "import spark_explore.trace", "layers"),
        ("spark_explore/trace.py", "import reports.text", "layers"),
        ("kmc/ui/session.py", "import model.present.view", "ui-knows-no-kafka"),
        ("kmc/ui/server.py", "import kmc.compose", "ui-knows-no-kafka"),
        ("model/zk/state/values.py", "import explorer.bfs", "model-below-explorers"),
        ("invariants/registry.py", "import reports.text", "model-below-explorers"),
        ("model/zk/state/states.py", "import kmc.compose", "model-below-explorers"),
        ("model/zk/state/states.py", "import invariants.registry", "invariants-above-model"),
        ("model/scenario/loader.py", "import model.zk.state.values", "scenario-and-admin-know-no-controller"),
        ("model/admin/placement.py", "import model.present.describe", "scenario-and-admin-know-no-controller"),
        ("model/admin/assignment.py", "import model.scenario.loader", "admin-knows-no-scenario"),
        ("model/zk/controller/controller.py", "import model.present.view", "controller-below-presentation"),
        ("model/kraft/records.py", "import model.zk.state.values", "kraft-knows-no-zk"),
    ],
)
def test_a_wrong_import_breaks_its_contract(tmp_path: Path, module: str, planted: str, contract: str) -> None:
    """One import across a layer, planted in a copy of the code, makes lint-imports fail naming its contract."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / module
    target.write_text(target.read_text() + f"\n{planted}  # planted by tests/test_layers.py\n")
    done = lint_imports(tmp_path, "--contract", contract)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "0 kept, 1 broken" in done.stdout
    assert f"{planted.split()[1]} (l." in done.stdout  # the report names the planted import
