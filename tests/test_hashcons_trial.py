"""bench/hashcons_trial.py sizes a hash-consed state on a search's own transitions; its emulated successors must be
the model's own, or its figures say nothing. Kept working as the model changes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _trial():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("hashcons_trial", ROOT / "bench" / "hashcons_trial.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_emulated_successors_are_the_models(capsys: pytest.CaptureFixture[str]) -> None:
    trial = _trial()
    assert trial.main(["--scenario", "controller-failover", "--transitions", "3000", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "3,000 transitions recorded" in out and "distinct successors:" in out and "on both" in out


def test_an_effect_that_makes_another_successor_is_caught() -> None:
    """An effect whose replaced broker is another broker than the step's: the emulated successor is not the model's,
    and the trial counts it."""
    trial = _trial()
    model, recorded = trial.record("controller-failover", 2000)
    found = trial.hits(model, recorded)
    assert 0 < len(found) <= len(recorded)
    numbers = trial.Numbers(model.codec)
    rows = trial.effects(numbers, found)
    assert trial.emulate(numbers, rows)[3] == 0
    at = next(i for i, row in enumerate(rows) if row[3] is not None and row[3][0] != "all")
    key, before, after, brokers, queues, controller = rows[at]
    (position, broker), *rest = brokers
    other = next(b for b in numbers.contents[before[2]] if b != broker)
    rows[at] = (key, before, after, ((position, other), *rest), queues, controller)
    assert trial.emulate(numbers, rows)[3] == 1


def test_bad_counts_are_refused() -> None:
    with pytest.raises(SystemExit) as exit_:
        _trial().main(["--transitions", "0"])
    assert exit_.value.code == 2
