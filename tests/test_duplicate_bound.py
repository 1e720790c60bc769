"""bench/duplicate_bound.py bounds the levers that make duplicate successors cheap by a search told which successors
are duplicates; its searches must make the recorded search's successors and counts, or its figures say nothing. Kept
working as the model and the engine change."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from explorer import bfs
from model.zk import transition_memo

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = "controller-failover"  # 5,228 distinct states, 12,231 generated (tests/test_scenarios_pinned.py)


def _bound() -> Any:
    spec = importlib.util.spec_from_file_location("duplicate_bound", ROOT / "bench" / "duplicate_bound.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _child(bound: Any, search: str, record: Path, monkeypatch: pytest.MonkeyPatch,
           capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """One search in this process, the engine's and the memos' functions the bound replaces restored afterwards."""
    monkeypatch.setattr(bfs, "expand_batch", bfs.expand_batch)
    monkeypatch.setattr(bfs._Search, "_expand_level", bfs._Search._expand_level)
    for memo in (transition_memo.BrokerStepMemo, transition_memo.ControllerStepMemo,
                 transition_memo.EnvironmentStepMemo):
        for name in ("_apply", "_watched_step"):
            monkeypatch.setattr(memo, name, memo.__dict__[name])
    bound.child(search, SCENARIO, record)
    figures: dict[str, Any] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    return figures


def test_every_search_makes_the_recorded_counts(capsys: pytest.CaptureFixture[str]) -> None:
    assert _bound().main(["--scenario", SCENARIO, "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    # the engine counts the initial state as generated: 12,230 transitions, 5,227 of them to a state first reached
    assert "5,228 distinct states, 12,230 transitions, 7,003 of them to a state generated before" in out
    assert all(f"{search}:" in out for search in ("as-is", "free", "keyed", "stepped", "checked"))


@pytest.mark.parametrize("search", ["free", "keyed", "stepped", "checked"])
def test_a_record_out_of_step_is_caught(search: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    bound = _bound()
    record_path = tmp_path / "record"
    recorded = _child(bound, "record", record_path, monkeypatch, capsys)
    assert (recorded["distinct"], recorded["generated"]) == (5228, 12231)
    record = bound.Record.load(record_path)
    # the 50th successor's fingerprint changed: a first-reached successor no longer matches, or a duplicate becomes
    # a state first reached whose bytes do not give it
    at = next(i for i in range(50, len(record.lengths)) if record.lengths[i] != bound.NO_SUCCESSOR)
    record.digests[at * 8] ^= 0xFF
    record.dump(record_path)
    figures = _child(bound, search, record_path, monkeypatch, capsys)
    assert figures["error"].startswith("the record is out of step")


def test_the_duplicates_are_the_transitions_to_states_generated_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    bound = _bound()
    record_path = tmp_path / "record"
    _child(bound, "record", record_path, monkeypatch, capsys)
    figures = _child(bound, "free", record_path, monkeypatch, capsys)
    assert (figures["distinct"], figures["generated"], figures["duplicates"]) == (5228, 12231, 12231 - 5228)


def test_the_memos_are_left_as_they_were(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The ``keyed`` search wraps the memos' ``_apply`` and ``_watched_step`` in its process; a test running it in
    this one leaves them as they were."""
    memos = (transition_memo.BrokerStepMemo, transition_memo.ControllerStepMemo, transition_memo.EnvironmentStepMemo)
    before = [(memo.__dict__["_apply"], memo.__dict__["_watched_step"]) for memo in memos]
    bound = _bound()
    record_path = tmp_path / "record"
    with monkeypatch.context() as patched:
        _child(bound, "record", record_path, patched, capsys)
        _child(bound, "keyed", record_path, patched, capsys)
    assert [(memo.__dict__["_apply"], memo.__dict__["_watched_step"]) for memo in memos] == before


def test_bad_rounds_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _bound().main(["--rounds", "0"])
    assert exit_info.value.code == 2
    assert "--rounds 0" in capsys.readouterr().err
