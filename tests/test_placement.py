"""Placement properties (model/admin/placement.py): plain checks, z3 unsat cores in the operator's words,
and the balance bounds the planner aims at (invariants/reassignment_plan.balance_bounds)."""

from __future__ import annotations

import pytest

from model.admin.placement import (
    DISTINCT,
    ONLY_LISTED,
    RACK_DISTRIBUTION,
    RACK_SPREAD,
    RF_UNCHANGED,
    Cluster,
    check_hard,
    core_sentence,
    explain_infeasible,
)
from model.admin.reassignment_plan import balance_bounds

SIX = Cluster((0, 1, 2, 3, 4, 5), {0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "c"})


def test_each_hard_property_names_its_violation():
    """A duplicate broker, an unlisted broker, two replicas on one rack and a changed RF are each reported
    under their own property name and partition (with RF 3 on 3 racks, strict spread needs every rack, so
    t-1, whose third replica is on an unlisted broker of unknown rack, misses rack c)."""
    placement = {("t", 0): (0, 0, 2), ("t", 1): (0, 2, 9), ("t", 2): (0, 1, 2), ("t", 3): (0, 2)}
    found = check_hard(placement, SIX, dict.fromkeys(placement, 3))
    assert {name: [v.where for v in vs] for name, vs in found.items()} == {
        DISTINCT: ["t-0"], RF_UNCHANGED: ["t-3"], ONLY_LISTED: ["t-1"], RACK_SPREAD: ["t-0", "t-1", "t-2"],
    }


def test_valid_placement_has_no_violation():
    """Three replicas on three racks, listed brokers, RF kept: every property holds."""
    placement = {("t", 0): (0, 2, 4), ("t", 1): (3, 5, 1)}
    assert all(not vs for vs in check_hard(placement, SIX, dict.fromkeys(placement, 3)).values())


def test_distribution_mode_allows_rf_above_racks_but_not_crowding():
    """rack_distribution accepts RF 4 over 2 racks as 2+2 and rejects 3+1."""
    two_racks = Cluster((0, 1, 2, 3, 4), {0: "a", 1: "a", 4: "a", 2: "b", 3: "b"}, "distribution")
    found = check_hard({("t", 0): (0, 1, 2, 3), ("t", 1): (0, 1, 4, 2)}, two_racks, {("t", 0): 4, ("t", 1): 4})
    assert [v.where for v in found[RACK_DISTRIBUTION]] == ["t-1"]


def test_strict_rf_above_racks_core_names_rack_spread():
    """RF 4 on 2 racks under strict rack awareness is unsat; the core names rack_spread and the sentence says
    how many racks are needed and what to do."""
    cluster = Cluster((0, 1, 2, 3), {0: "a", 1: "a", 2: "b", 3: "b"})
    core = explain_infeasible(4, cluster, [0, 1, 2, 3])
    assert core is not None and RACK_SPREAD in core
    assert core_sentence(core, 4, cluster) == (
        "RF 4 needs 4 racks under strict rack awareness but only 2 racks have brokers; use --rack-mode distribution")


def test_rf_above_listed_brokers_core_names_distinct_brokers():
    """RF 4 with 3 listed brokers (a fourth, unlisted, hosting today) has a core with distinct brokers and
    only listed brokers."""
    cluster = Cluster((0, 1, 2))
    core = explain_infeasible(4, cluster, [0, 1, 2, 7])
    assert core is not None and {DISTINCT, ONLY_LISTED} <= set(core)
    assert core_sentence(core, 4, cluster).startswith("RF 4 needs 4 distinct brokers but --broker-list names only 3")


def test_feasible_request_has_no_core():
    """RF 3 over three racks of two brokers is satisfiable: no core."""
    assert explain_infeasible(3, SIX, SIX.brokers) is None


@pytest.mark.parametrize(("racks", "expected"), [
    pytest.param({0: "a", 1: "b", 2: "b", 3: "b"}, {0: (6, 6), 1: (2, 2), 2: (2, 2), 3: (2, 2)}, id="1+3 racks"),
    pytest.param({}, {0: (3, 3), 1: (3, 3), 2: (3, 3), 3: (3, 3)}, id="rack-unaware"),
])
def test_balance_bounds_water_fill_over_racks(racks, expected):
    """6 partitions of RF 2 on 4 brokers: rack-unaware every broker holds 3; on racks 1+3 the lone broker holds
    all 6 (one replica per rack) and the others 2 each."""
    replicas, leaders = balance_bounds([2] * 6, Cluster((0, 1, 2, 3), racks))
    assert replicas == expected
    assert all(lo <= 2 and hi >= 1 for lo, hi in leaders.values())
