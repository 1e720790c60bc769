"""Property triggers (``explorer.contract.Property.trigger``): where a trigger is false its checks return None, so the
engines' findings with triggers are those of every property checked on every state and transition."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import pytest

from explorer.contract import Property
from explorer.expand import ActionNames, PropertySet, expand_batch
from invariants import kafka_properties
from invariants.kafka_properties import LOGGED_FIELDS, step_logged
from kmc import compose
from model.zk.state.values import StepLog

#: The default scenario, and bug scenarios whose first few thousand states violate transition properties
#: (zk_written_only_by_active_controller, failover_context_from_zookeeper, election_bumps_epoch_once,
#: auto_rebalance_elections_feasible, deletion_completes_only_when_all_replicas_succeeded) and quiescence ones.
SCENARIOS = ("default", "kafka-3083", "kafka-5310", "election-retry", "kafka-9866", "kafka-9946",
             "planted-complete-on-first-success", "kafka-7235", "kafka-3143", "topic-recreation", "log-dir-failure")


def _findings(model: Any, properties: Sequence[Property], limit: int) -> list[tuple[Any, ...]]:
    """Every finding of a breadth-first walk over at most ``limit`` distinct states (levels decoded from their bytes,
    as the engines see them), every property checked everywhere, with its evidence and the successor it names."""
    props = PropertySet.of(properties)
    names = ActionNames()
    initial = model.encode(model.init_states()[0])
    seen, level, rows, depth = {initial}, [initial], [], 0
    while level and len(seen) < limit:
        batch = expand_batch(model, [model.decode(d) for d in level], props, names)
        rows += [(depth, position, f.property, dict(f.evidence), f.action_index, f.child_fingerprint)
                 for position, f in batch.findings]
        level = [d for d in batch.data if not (d in seen or seen.add(d))]  # type: ignore[func-returns-value]
        depth += 1
    return rows


@pytest.mark.parametrize("name", SCENARIOS)
def test_triggers_change_no_finding(name: str) -> None:
    """The same findings, in the same order with the same evidence, with every trigger and with none."""
    model = compose.model_for(compose.resolve_scenario(name))
    triggered = tuple(model.properties())
    assert any(p.trigger is not None for p in triggered)
    untriggered = tuple(attrs.evolve(p, trigger=None) for p in triggered)
    expected = _findings(model, untriggered, 2500)
    assert _findings(model, triggered, 2500) == expected
    assert expected  # the walk finds something (sometimes examples at least) to compare


def test_bug_scenarios_compared_violate_transition_properties() -> None:
    """The comparison above meets violations of transition properties, not only examples."""
    found = set()
    for name in ("kafka-3083", "kafka-5310", "election-retry", "kafka-9866", "kafka-9946"):
        model = compose.model_for(compose.resolve_scenario(name))
        kinds = {p.name: p.kind for p in model.properties()}
        found |= {row[2] for row in _findings(model, model.properties(), 2500)
                  if kinds[row[2]].on_transition and kinds[row[2]].is_violation}
    assert len(found) >= 3, found


@pytest.mark.parametrize("field", LOGGED_FIELDS)
def test_step_logged_sees_each_field(field: str) -> None:
    """A step whose log records any one of LOGGED_FIELDS is logged; a log with none of them is not."""
    value = True if isinstance(getattr(StepLog(), field), bool) else ("x",)
    assert step_logged(None, None, _Next(StepLog(**{field: value})))  # type: ignore[arg-type]
    assert not step_logged(None, None, _Next(StepLog(messages=("m",), processed_event=None)))  # type: ignore[arg-type]


def test_witnesses_guarded_by_step_logged_read_only_logged_fields() -> None:
    """Each sometimes witness guarded by step_logged returns None on a step that logged none of LOGGED_FIELDS,
    whatever the states: tried on the states of a short walk, with every field of the step's log emptied."""
    model = compose.model_for(compose.resolve_scenario("default"))
    guarded = [p for p in model.properties() if p.trigger is step_logged]
    assert {p.name for p in guarded} >= {n for n, _, _ in kafka_properties.SOMETIMES_PROPERTIES} - {
        "sometimes_log_dir_replica_offline"}
    state = model.init_states()[0]
    for action in model.actions(state):
        child = model.next_state(state, action)
        if child is not None:
            quiet = attrs.evolve(child, log=StepLog(messages=child.log.messages))
            assert [p.name for p in guarded if p.check(state, action, quiet) is not None] == []


@attrs.frozen
class _Next:
    log: StepLog
