"""What the tests run with: every dependency that ``pyproject.toml`` names is pinned in ``constraints.txt``
(which the README's install lines and ``.ci/run`` install with), and the environment running the tests has
exactly the pinned versions, so that a verdict of the suite is a verdict on the versions a new user gets."""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _name(requirement: str) -> str:
    """A requirement's distribution name, normalised as PyPI does (``pyspark[sql]>=4`` → ``pyspark``)."""
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement.strip())
    assert match is not None, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def pins() -> dict[str, str]:
    """``constraints.txt`` as a map from distribution name to its pinned version."""
    pinned: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not pinned with =="
            pinned[_name(name)] = version.strip()
    return pinned


def declared() -> list[str]:
    """The distributions ``pyproject.toml`` depends on, the test extra's included."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    return sorted({_name(r) for r in requirements})


def test_every_declared_dependency_is_pinned() -> None:
    """Each dependency (and test dependency) in pyproject.toml has an exact pin in constraints.txt."""
    missing = [name for name in declared() if name not in pins()]
    assert not missing, f"pin these in constraints.txt: {missing}"


def test_the_tests_run_with_the_pinned_versions() -> None:
    """The installed version of every declared dependency is the one constraints.txt pins: install with
    ``python3 -m pip install -c constraints.txt -e ".[test]"``."""
    pinned = pins()
    wrong = {name: (metadata.version(name), pinned[name]) for name in declared()
             if name in pinned and metadata.version(name) != pinned[name]}
    assert not wrong, f"installed vs pinned: {wrong}; reinstall with -c constraints.txt"


def test_requires_python_admits_the_classified_pythons_the_readme_says_were_tested() -> None:
    """pyproject.toml's requires-python admits exactly the Python versions of its classifiers, the README names
    each of them as tested, and the Python running the tests is one of them."""
    from packaging.specifiers import SpecifierSet

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    admitted = {f"3.{minor}" for minor in range(6, 20) if f"3.{minor}.0" in SpecifierSet(project["requires-python"])}
    classified = {c.rsplit(" ", 1)[1] for c in project["classifiers"]
                  if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)}
    assert admitted == classified
    tested = re.search(r"Tested on Python ([^(]+)\(", (ROOT / "README.md").read_text())
    assert tested is not None, "the README's Quickstart says which Pythons were tested"
    assert set(re.findall(r"3\.\d+", tested[1])) == classified
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in classified


def quickstart() -> str:
    readme = (ROOT / "README.md").read_text()
    return readme[readme.index("## Quickstart"):readme.index("\n## ", readme.index("## Quickstart") + 1)]


def test_the_quickstart_sets_up_a_venv_and_keeps_its_two_set_up_lines() -> None:
    """The Quickstart creates a virtual environment before installing, and its set-up is the two command lines
    of the main job and the tests."""
    text = quickstart()
    venv = text.index("python3 -m venv .venv && . .venv/bin/activate")
    assert venv < text.index("python3 -m pip install -c constraints.txt -e . && kmc explore\n")
    assert venv < text.index('python3 -m pip install -c constraints.txt -e ".[test]" && python3 -m pytest\n')


def test_the_quickstarts_first_command_finds_a_violation_with_the_local_engine() -> None:
    """The Quickstart's first command explores a shipped scenario with --engine local, and that scenario is
    pinned as a violation with a short trace (a counterexample to look at, not a clean run)."""
    from explorer.results import Outcome
    from tests.test_scenarios_pinned import PINNED

    [scenario] = re.findall(r"^kmc explore (\S+) --engine local$", quickstart(), re.MULTILINE)
    assert PINNED[scenario].outcome is Outcome.VIOLATION
    assert PINNED[scenario].depth <= 15
