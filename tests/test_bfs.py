"""The local BFS on toy models whose numbers are known without it."""

from __future__ import annotations

import io
import itertools
from collections import Counter as Tally
from collections.abc import Sequence
from typing import Any

import pytest
from toy_models.counter import Counter
from toy_models.two_phase_commit import TwoPhaseCommit

from explorer.bfs import BfsOptions, run_bfs
from explorer.fingerprint import fingerprint
from explorer.progress import ProgressPrinter, ProgressSnapshot
from explorer.results import Outcome

# ---- counter: numbers worked out by hand --------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 3, 6])
def test_counter_counts_match_the_formulas(n: int) -> None:
    """(n+1)² distinct states, 1 + 2n(n+1) generated, 2n+1 levels, and n+1-|n-d| states at depth d."""
    result = run_bfs(Counter(n))
    stats = result.stats
    assert result.outcome is Outcome.OK
    assert result.exit_code == 0
    assert stats.distinct == (n + 1) ** 2
    assert stats.generated == 1 + 2 * n * (n + 1)
    assert stats.depth == 2 * n + 1
    assert stats.queue == 0
    assert [level.frontier for level in stats.levels] == [n + 1 - abs(n - d) for d in range(2 * n + 1)]
    assert [level.distinct_total for level in stats.levels][-1] == stats.distinct


def test_counter_action_coverage_adds_up() -> None:
    """Each action generates n(n+1) successors, and every non-initial state has exactly one parent action."""
    n = 4
    stats = run_bfs(Counter(n)).stats
    assert {a.name: a.generated for a in stats.actions} == {"IncX": n * (n + 1), "IncY": n * (n + 1)}
    assert sum(a.distinct for a in stats.actions) == stats.distinct - 1
    assert [a.name for a in stats.actions] == sorted(a.name for a in stats.actions)


def test_shortest_counterexample_on_counter() -> None:
    """An invariant first false at x + y = 4 is reported with a 4-step trace, and the search stops there."""
    result = run_bfs(Counter(3, sum_limit=4))
    assert result.outcome is Outcome.VIOLATION
    assert result.exit_code == 1
    [violation] = result.violations
    assert violation.property == "sum_below_limit"
    assert violation.trace_length == 4
    assert len(violation.path) == 5
    assert violation.evidence["x"] + violation.evidence["y"] == 4
    # Levels 0..4 were checked; level 5 was generated and left on the queue.
    assert result.stats.depth == 5
    assert result.stats.queue == 2  # (2, 3) and (3, 2)
    assert result.never_found == ()


class IncYFirst(Counter):
    """The counter listing IncY before IncX, so that (0, 1) is expanded before (1, 0)."""

    def actions(self, state: tuple[int, int]) -> Sequence[str]:
        return list(reversed(super().actions(state)))


@pytest.mark.parametrize("model", [Counter(1, sum_limit=2), IncYFirst(1, sum_limit=2)], ids=["x_first", "y_first"])
def test_parent_rule_picks_the_smallest_parent_transition(model: Counter) -> None:
    """(1, 1) is reached from (1, 0) and from (0, 1), each by its only action (index 0): whichever is
    expanded first, the parent with the smaller fingerprint wins."""
    [violation] = run_bfs(model).violations
    parent = min(fingerprint(bytes((1, 0))), fingerprint(bytes((0, 1))))
    assert violation.path[1] == parent
    assert violation.action_indices[1] == 0


class ReorderedInits:
    """A model whose initial states are listed in another order; everything else is the wrapped model's."""

    def __init__(self, model: Any, order: Sequence[int]) -> None:
        self._model = model
        self._order = order

    def init_states(self) -> Sequence[Any]:
        states = self._model.init_states()
        return [states[i] for i in self._order]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


class ManyStarts(Counter):
    """The counter started from several points, so that the frontier order depends on the init order."""

    def init_states(self) -> Sequence[tuple[int, int]]:
        return [(0, 0), (0, 2), (2, 0), (1, 1), (3, 0)]


def test_parent_choice_does_not_depend_on_exploration_order() -> None:
    """Listing the initial states in other orders changes the expansion order, not a parent or a finding."""
    model = ManyStarts(4, sum_limit=6, inc_x_y_limit=3)
    reference = run_bfs(model)
    for order in ([4, 3, 2, 1, 0], [2, 0, 4, 1, 3]):
        other = run_bfs(ReorderedInits(model, order))
        assert other.discoveries == reference.discoveries
        assert other.stats.actions == reference.stats.actions  # distinct per action follows the parents
        assert other.stats == reference.stats


def test_two_runs_give_identical_results() -> None:
    """The BFS is deterministic: the same model gives the same discoveries and statistics."""
    first, second = run_bfs(TwoPhaseCommit(3)), run_bfs(TwoPhaseCommit(3))
    assert first.discoveries == second.discoveries
    assert first.stats == second.stats
    assert [d.evidence for d in first.discoveries] == [d.evidence for d in second.discoveries]


def test_sometimes_found_and_never_found() -> None:
    """Sometimes properties are reported at their first depth; one never satisfied is never found."""
    n = 3
    result = run_bfs(Counter(n))
    found = {d.property: d for d in result.discoveries}
    assert set(found) == {"x_reaches_n", "corner_by_inc_y"}
    assert found["x_reaches_n"].trace_length == n
    assert not found["x_reaches_n"].is_violation
    assert found["corner_by_inc_y"].trace_length == 2 * n
    assert result.never_found == ("y_exceeds_n",)
    assert result.outcome is Outcome.OK


def test_transition_violation_trace_ends_with_the_offending_step() -> None:
    """An action property violated by IncX at y = 2 has a 3-step path whose last step is that IncX."""
    model = Counter(3, inc_x_y_limit=2)
    result = run_bfs(model)
    [violation] = result.violations
    assert violation.property == "inc_x_while_y_below_limit"
    assert violation.trace_length == 3
    assert violation.path[-1] == fingerprint(bytes((1, 2)))
    assert violation.path[-2] == fingerprint(bytes((0, 2)))
    assert model.actions((0, 2))[violation.action_indices[-1]] == "IncX"


def test_max_depth_is_inconclusive() -> None:
    """With max_depth=2 the states 2 steps away are checked but not expanded: the outcome is inconclusive."""
    result = run_bfs(Counter(3), BfsOptions(max_depth=2))
    assert result.outcome is Outcome.INCONCLUSIVE
    assert result.exit_code == 3
    assert "max_depth=2" in result.reason
    assert result.stats.depth == 3
    assert result.stats.distinct == 6
    assert result.stats.queue == 3
    assert result.stats.levels[-1].generated == 0
    assert result.never_found == ()


def test_max_depth_still_checks_the_last_level() -> None:
    """A violation on the last level allowed by max_depth is found and wins over inconclusive."""
    result = run_bfs(Counter(3, sum_limit=2), BfsOptions(max_depth=2))
    assert result.outcome is Outcome.VIOLATION
    assert result.violations[0].trace_length == 2


def test_max_states_is_inconclusive() -> None:
    """max_states holds within a level: the level that reaches it keeps only the new states that fit
    (those with the smallest fingerprints), which are checked but not expanded."""
    result = run_bfs(Counter(3), BfsOptions(max_states=5))
    complete = run_bfs(Counter(3))
    assert result.outcome is Outcome.INCONCLUSIVE
    assert result.exit_code == 3
    assert "max_states=5" in result.reason
    assert result.stats.distinct == 5  # levels 0 and 1 (3 states) and 2 of the 3 states of level 2
    assert result.stats.depth == 3
    assert [level.new for level in result.stats.levels] == [2, 2, 0]
    assert result.stats.levels[1].generated == complete.stats.levels[1].generated  # level 1 was expanded whole
    assert result.stats.queue == 2


def test_bounds_that_are_not_reached_change_nothing() -> None:
    """Generous bounds give the same complete result as no bounds."""
    assert run_bfs(Counter(3), BfsOptions(max_depth=100, max_states=10**6)).stats == run_bfs(Counter(3)).stats


def test_negative_bounds_are_rejected() -> None:
    """A negative bound is bad input, named in the error."""
    with pytest.raises(ValueError, match="max_depth"):
        BfsOptions(max_depth=-1)


def test_progress_receives_snapshots_and_a_final_one() -> None:
    """With a zero interval progress sees a snapshot per level, the last one equal to the final statistics."""
    snapshots: list[ProgressSnapshot] = []
    result = run_bfs(TwoPhaseCommit(4), BfsOptions(progress=snapshots.append, progress_interval_seconds=0))
    assert len(snapshots) >= 2
    last = snapshots[-1]
    assert (last.generated, last.distinct, last.queue, last.depth) == (
        result.stats.generated,
        result.stats.distinct,
        0,
        result.stats.depth,
    )
    assert all(a.generated <= b.generated for a, b in itertools.pairwise(snapshots))


def test_progress_printer_writes_tlc_lines() -> None:
    """The printer writes TLC's progress sentence with a per-minute rate."""
    out = io.StringIO()
    printer = ProgressPrinter(out)
    printer(ProgressSnapshot(seconds=6.0, depth=7, generated=123_456, distinct=45_678, queue=1_234))
    assert out.getvalue() == (
        "Progress(7) at 6.0s: 123,456 states generated (1,234,560 s/min), 45,678 distinct states found, "
        "1,234 states left on queue.\n"
    )


# ---- two-phase commit: cross-checked by an independent enumeration -------------------------------


def enumerate_two_phase_commit(rms: int) -> tuple[int, int, Tally[str]]:
    """Distinct states, states generated (incl. the initial one) and successors per action of
    Lamport's TwoPhase, enumerated depth first over a representation of its own (a dict per
    state, frozen as sorted items): no code shared with the toy model or the explorers."""
    RM = range(rms)

    def freeze(state: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(sorted((k, tuple(sorted(v)) if isinstance(v, set) else v) for k, v in state.items()))

    def successors(s: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        out = []

        def with_(action: str, **changes: Any) -> None:
            out.append((action, {**s, **changes}))

        for r in RM:
            key = f"rm{r}"
            if s["tm"] == "init" and f"prepared{r}" in s["msgs"]:
                with_("TmRcvPrepared", tmPrepared=s["tmPrepared"] | {r})
            if s[key] == "working":
                with_("RmPrepare", **{key: "prepared"}, msgs=s["msgs"] | {f"prepared{r}"})
                with_("RmChooseToAbort", **{key: "aborted"})
            if "commit" in s["msgs"]:
                with_("RmRcvCommitMsg", **{key: "committed"})
            if "abort" in s["msgs"]:
                with_("RmRcvAbortMsg", **{key: "aborted"})
        if s["tm"] == "init" and s["tmPrepared"] == set(RM):
            with_("TmCommit", tm="committed", msgs=s["msgs"] | {"commit"})
        if s["tm"] == "init":
            with_("TmAbort", tm="aborted", msgs=s["msgs"] | {"abort"})
        return out

    init = {"tm": "init", "tmPrepared": set(), "msgs": set(), **{f"rm{r}": "working" for r in RM}}
    seen = {freeze(init)}
    stack = [init]
    generated = 1
    per_action: Tally[str] = Tally()
    while stack:
        for action, nxt in successors(stack.pop()):
            generated += 1
            per_action[action] += 1
            key = freeze(nxt)
            if key not in seen:
                seen.add(key)
                stack.append(nxt)
    return len(seen), generated, per_action


#: (resource managers, distinct states, states generated incl. the initial state). 288 for 3 RMs
#: is also the count Stateright pins for its two-phase commit example and TLC finds for TwoPhase.
TWO_PHASE_COUNTS = [(1, 12, 20), (2, 56, 154), (3, 288, 1146), (4, 1568, 8258)]


@pytest.mark.parametrize(("rms", "distinct", "generated"), TWO_PHASE_COUNTS)
def test_independent_enumeration_of_two_phase_commit(rms: int, distinct: int, generated: int) -> None:
    """The stand-alone enumeration finds the pinned counts (so the pins do not come from the BFS)."""
    assert enumerate_two_phase_commit(rms)[:2] == (distinct, generated)


@pytest.mark.parametrize(("rms", "distinct", "generated"), TWO_PHASE_COUNTS)
def test_two_phase_commit_counts(rms: int, distinct: int, generated: int) -> None:
    """The BFS finds the pinned two-phase commit counts, per action too, and both agreements as examples."""
    result = run_bfs(TwoPhaseCommit(rms))
    assert result.outcome is Outcome.OK
    assert (result.stats.distinct, result.stats.generated) == (distinct, generated)
    assert {a.name: a.generated for a in result.stats.actions} == dict(enumerate_two_phase_commit(rms)[2])
    assert {d.property for d in result.discoveries} == {"commit_agreement", "abort_agreement"}
    assert result.never_found == ()


def test_the_search_hands_each_level_to_the_model_to_retain_and_finds_the_same_states() -> None:
    """The local BFS hands the Kafka model (which keeps its new states as states) the states of each level it is
    about to expand (``retain_parts``), and the model forgetting what they do not hold changes no count, no
    violation and no trace."""
    from kmc.compose import model_for, resolve_scenario

    scenario = resolve_scenario("kafka-3083")
    model = model_for(scenario)
    handed: list[int] = []
    retain = model.retain_parts

    def counting(states: Sequence[Any]) -> None:
        handed.append(len(states))
        retain(states)

    model.retain_parts = counting  # type: ignore[method-assign]
    result = run_bfs(model, BfsOptions(keep_going=True))
    unretained = model_for(scenario)
    unretained.retain_parts = None  # type: ignore[assignment,method-assign]
    plain = run_bfs(unretained, BfsOptions(keep_going=True))
    assert handed == [level.new for level in result.stats.levels] and sum(handed) > 400
    assert model.codec.memo_size() == 0  # the last level made no new state: nothing is held
    assert (result.stats.distinct, result.stats.generated) == (plain.stats.distinct, plain.stats.generated)
    assert [(d.property, d.path, d.action_indices) for d in result.discoveries] == \
        [(d.property, d.path, d.action_indices) for d in plain.discoveries]
    assert len(result.violations) == 2


def test_states_sharing_parts_are_expanded_together_and_the_results_do_not_change() -> None:
    """The Kafka model names the parts its states share (``shared_parts``): the local BFS expands each level grouped
    by them (``grouped_order``) and finds every count, level, violation, trace and evidence it finds in fingerprint
    order."""
    from kmc.compose import model_for, resolve_scenario

    scenario = resolve_scenario("kafka-3083")
    model = model_for(scenario)
    grouped: list[int] = []
    shared_parts = model.shared_parts

    def counting(state: Any) -> tuple[object, ...]:
        grouped.append(1)
        return shared_parts(state)

    model.shared_parts = counting  # type: ignore[method-assign]
    result = run_bfs(model, BfsOptions(keep_going=True))
    in_fingerprint_order = model_for(scenario)
    in_fingerprint_order.shared_parts = None  # type: ignore[assignment,method-assign]
    plain = run_bfs(in_fingerprint_order, BfsOptions(keep_going=True))
    assert len(grouped) == result.stats.distinct - 1  # every state but the initial one
    assert result.stats == plain.stats
    assert result.discoveries == plain.discoveries
    assert [d.evidence for d in result.discoveries] == [d.evidence for d in plain.discoveries]
    assert len(result.violations) == 2
    # a state bound cuts a level within a block of kept states: the frontier takes some of the block's states
    for bound in (100, 300):
        cut, plain_cut = (run_bfs(m, BfsOptions(keep_going=True, max_states=bound))
                          for m in (model, in_fingerprint_order))
        assert cut.stats.distinct == bound
        assert (cut.stats, cut.discoveries) == (plain_cut.stats, plain_cut.discoveries)


def test_grouped_order_puts_the_states_holding_the_same_parts_together() -> None:
    """States holding the same first part (the same object) come together, within them by the second part, a part's
    groups in the order the part first comes, and the states of a group in theirs."""
    from explorer.expand import grouped_order

    a, b, x, y = object(), object(), object(), object()
    states = [(b, x), (a, y), (b, y), (a, x), (b, x), (a, y)]
    assert grouped_order(states, lambda s: s).tolist() == [0, 4, 2, 3, 1, 5]  # b before a, x before y
    assert grouped_order([], lambda s: s).tolist() == []
    assert grouped_order(states, lambda s: ()).tolist() == [0, 1, 2, 3, 4, 5]
