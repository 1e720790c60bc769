"""kmc prove assignment (invariants/assignment_proofs.py): the claims are proved with their bounds, a broken
algorithm yields a counterexample, and the measurements name the cluster that attains them."""

from __future__ import annotations

import json

from click.testing import CliRunner

import invariants.assignment_proofs as proofs
from kmc.cli import main


def test_rack_unaware_distinct_brokers_is_proved_symbolically():
    """z3 proves distinct brokers for unbounded n; the implementation agrees on every n <= 4."""
    claim = proofs.prove_rack_unaware_distinct(max_brokers_checked=4)
    assert claim.proved and claim.counterexample is None
    assert claim.bound == "unbounded n (symbolic)"
    assert claim.cases > 0


def test_rack_aware_claims_hold_up_to_the_bound():
    """Rack-aware distinct brokers and rack spread hold on every cluster of up to 5 brokers on 3 racks."""
    distinct, spread = proofs.check_rack_aware(max_brokers=5, max_racks=3)
    assert distinct.proved and spread.proved
    assert distinct.cases == spread.cases > 1000


def test_a_broken_rack_aware_walk_gives_a_counterexample(monkeypatch):
    """If the walk ignored racks (the leader's rack-mate chosen first), rack spread fails with a concrete
    cluster as counterexample."""

    def rack_blind(n_partitions, rf, array, rack_of, first, shift, start):
        same_rack_first = sorted(array, key=lambda b: (rack_of[b] != rack_of[array[first]], b))
        leader = array[first]
        return {0: (leader, *[b for b in same_rack_first if b != leader][: rf - 1])}

    monkeypatch.setattr(proofs, "_assign_rack_aware", rack_blind)
    _, spread = proofs.check_rack_aware(max_brokers=4, max_racks=2)
    assert not spread.proved
    cex = spread.counterexample
    assert cex is not None and len({cex["racks"][str(b)] for b in cex["replicas"]}) < min(cex["rf"], 2)


def test_uneven_racks_measurement_beside_z3_best():
    """On racks of 2 and 4 brokers with RF 2, Kafka's busiest broker holds 8 of 12 partitions' replicas where
    z3's proved best is 6."""
    m = proofs.worst_uneven_imbalance(max_brokers=6, max_racks=2)
    assert m.cluster["rack_sizes"] == [2, 4]
    assert (m.figures["kafka_max_replicas"], m.figures["z3_best_max_replicas"]) == (8, 6)
    assert m.figures["z3_proved_best"]


def test_cli_prove_assignment_exits_0_with_every_claim_proved():
    """kmc prove assignment --format json exits 0 with three proved claims and two measurements."""
    result = CliRunner().invoke(main, ["prove", "assignment", "--max-brokers", "5", "--max-racks", "3",
                                       "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["outcome"] == "ok"
    assert [c["name"] for c in doc["claims"]] == ["rack_unaware_distinct_brokers", "rack_aware_distinct_brokers",
                                                 "rack_aware_rack_spread"]
    assert all(c["proved"] for c in doc["claims"])
    assert [m["name"] for m in doc["measurements"]] == ["uneven_racks_imbalance", "kafka_13226_create_then_add"]
