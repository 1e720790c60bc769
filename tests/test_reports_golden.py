"""Golden files: the text and Markdown renderings of a known counterexample, byte for byte.

The counterexample is the planted deletion bug's (scenario planted-complete-on-first-success: 144
distinct states, 5 steps). When the model changes on purpose (a new action, a new field in the
view), regenerate the golden files with one command and review the diff:

    KMC_UPDATE_GOLDEN=1 python3 -m pytest tests/test_reports_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from reports_fixtures import shipped_document

from reports.bundle import bundle_files

GOLDEN = Path(__file__).parent / "golden"
SCENARIO = "planted-complete-on-first-success"


@pytest.fixture(scope="module")
def files() -> dict[str, str]:
    return bundle_files(shipped_document(SCENARIO), ("text", "md"))


@pytest.mark.parametrize(("rendered", "golden"), [("report.txt", f"{SCENARIO}.txt"),
                                                  ("report.md", f"{SCENARIO}.md")])
def test_rendering_matches_its_golden_file(files: dict[str, str], rendered: str, golden: str) -> None:
    """The report of the planted bug's counterexample is exactly the reviewed golden file."""
    path = GOLDEN / golden
    if os.environ.get("KMC_UPDATE_GOLDEN"):
        path.write_text(files[rendered], encoding="utf-8")
    assert files[rendered] == path.read_text(encoding="utf-8"), (
        f"{rendered} differs from tests/golden/{golden}; if the change is intended, regenerate with "
        "KMC_UPDATE_GOLDEN=1 python3 -m pytest tests/test_reports_golden.py and review the diff")
