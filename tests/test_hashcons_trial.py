"""bench/hashcons_trial.py sizes a hash-consed state on a search's own transitions; its emulated successors must be
the model's own, or its figures say nothing. Kept working as the model changes."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

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
    assert "3,000 transitions recorded" in out and "on every path" in out


def test_an_effect_that_makes_another_successor_is_caught() -> None:
    """An effect whose replaced broker is another broker than the step's: the emulated successor is not the model's,
    and the trial counts it."""
    trial = _trial()
    model, recorded, _levels = trial.record("controller-failover", 2000)
    found = trial.hits(model, recorded)
    assert 0 < len(found) <= len(recorded)
    numbers = trial.Numbers(model.codec)
    rows = trial.effects(model, numbers, found)
    for fingerprints in ("bytes", "digests"):
        assert trial.emulate(numbers, rows, fingerprints)[3] == 0
    at = next(i for i, row in enumerate(rows) if row[3] is not None and row[3][0] != "all")
    key, before, after, brokers, queues, controller, real = rows[at]
    (position, broker), *rest = brokers
    other = next(b for b in numbers.contents[before[2]] if b != broker)
    wrong = list(rows)
    wrong[at] = (key, before, after, ((position, other), *rest), queues, controller, real)
    for fingerprints in ("bytes", "digests"):
        assert trial.emulate(numbers, wrong, fingerprints)[3] == 1


def test_the_joined_pieces_give_the_searchs_fingerprints() -> None:
    """A state's encoding joined from its parts' and tables' pieces is the codec's, byte for byte: a fingerprint
    that differs (here the recorded one of another transition) is counted."""
    trial = _trial()
    model, recorded, _levels = trial.record("controller-failover", 2000)
    found = trial.hits(model, recorded)
    numbers = trial.Numbers(model.codec)
    rows = trial.effects(model, numbers, found)
    for (_state, _action, child), row in zip(found, rows, strict=True):
        assert b"".join(numbers.pieces[n] for n in row[2]) == model.encode(child)
    at = next(i for i, row in enumerate(rows) if row[6] != rows[0][6])
    wrong = list(rows)
    wrong[at] = (*rows[at][:6], rows[0][6])
    assert trial.emulate(numbers, wrong, "bytes")[3] == 1
    assert trial.emulate(numbers, wrong, "digests")[3] == 0


def test_the_dictionaries_forget_what_the_next_level_does_not_hold() -> None:
    """Forgotten level by level, the hit's dictionaries hold fewer entries at their most than the distinct changes
    of the run, which they hold when nothing is forgotten."""
    trial = _trial()
    model, recorded, levels = trial.record("controller-failover", 2000)
    found = trial.hits(model, recorded)
    numbers = trial.Numbers(model.codec)
    rows = trial.effects(model, numbers, found)
    changes = ({(before[2], brokers) for _k, before, _a, brokers, *_ in rows if brokers is not None},
               {(before[3], queues) for _k, before, _a, _b, queues, *_ in rows if queues is not None},
               {(before[1], after[1]) for _k, before, after, *_ in rows if after[1] != before[1]})
    kept = trial.held(numbers, found, rows, levels, forget=False)
    assert kept["entries"] == sum(map(len, changes)) and kept["orphans"] == 0
    forgotten = trial.held(numbers, found, rows, levels)
    assert 0 < forgotten["entries"] < kept["entries"]
    assert 0 < forgotten["peak_bytes"] < kept["peak_bytes"]
    assert forgotten["distinct"] == sum(map(len, levels))


def test_timing_the_key_leaves_the_memos_applying_their_effects() -> None:
    """``keyed`` times the hits with the memos' effects not applied (each successor the state itself), and puts
    them back: afterwards every hit gives the recorded successor again, none the state it was taken from."""
    trial = _trial()
    model, recorded, _levels = trial.record("controller-failover", 2000)
    found = trial.hits(model, recorded)
    memo = trial.transition_memo.BrokerStepMemo
    apply = memo.__dict__["_apply"]
    assert trial.keyed(model, found) > 0
    assert memo.__dict__["_apply"] is apply
    for state, action, child in found:
        successor = model.next_state(state, action)
        assert model.encode(successor) == model.encode(child) != model.encode(state)


def test_the_numbers_keys_find_what_the_memos_keys_find() -> None:
    """Made from part numbers, the memos' first and further keys meet no two different entries, and the memos are
    left as they were; with the requests a broker step applies left out of its key, some do."""
    trial = _trial()
    model, recorded, _levels = trial.record("controller-failover", 2000)
    found = trial.hits(model, recorded)
    numbers = trial.Numbers(model.codec)
    effects = model._broker_steps._effects
    key_now, key_numbers, stored, coarse = trial.numbered_keys(model, numbers, found)
    assert key_now > 0 and key_numbers > 0 and stored > 0 and coarse == 0
    assert model._broker_steps._effects is effects and type(effects) is dict
    for state, action, child in found:
        assert model.encode(model.next_state(state, action)) == model.encode(child)
    brokers = model._broker_steps.kinds
    kept = [(state, action) for state, action, _child in found if action.kind in brokers]
    looked = trial.looked_up_in(model, (model._broker_steps,), kept)
    codes: dict[Any, int] = {}
    rows = [(numbers.state(state), codes.setdefault(action, len(codes)), action.broker, 0, seen)
            for (state, action), seen in zip(kept, looked, strict=True)]
    facts, _state_numbers = trial._part_facts(numbers, found)
    blurred = {key: 0 if key[0] == "applied" else fact for key, fact in facts.items()}
    assert trial._numbers_keys(numbers, facts, rows, {}, fill=True)[1] == 0
    assert trial._numbers_keys(numbers, blurred, rows, {}, fill=True)[1] > 0


def test_bad_counts_are_refused() -> None:
    with pytest.raises(SystemExit) as exit_:
        _trial().main(["--transitions", "0"])
    assert exit_.value.code == 2
