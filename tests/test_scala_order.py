"""The auto leader rebalance visits preferred brokers in the iteration order of Scala 2.11/2.12's ``groupBy``
result (``model.zk.controller.scala_order``), not sorted."""

from __future__ import annotations

from model.zk.controller.scala_order import group_by_order


def test_small_maps_iterate_the_mutable_hash_table_from_its_last_bucket() -> None:
    """Brokers 0 – 3 land in buckets 0, 6, 12 and 2 of a 16-bucket table, iterated from the last bucket: 2, 1,
    3, 0; the order groupBy met them does not matter while no two share a bucket."""
    assert group_by_order([0, 1]) == [1, 0]
    assert group_by_order([0, 1, 2]) == [2, 1, 0]
    assert group_by_order([0, 1, 2, 3]) == [2, 1, 3, 0]
    assert group_by_order([3, 0, 2, 1]) == [2, 1, 3, 0]


def test_five_keys_or_more_follow_the_hash_trie() -> None:
    """From five keys the immutable map is a HashTrieMap: every key once, in an order of its own."""
    order = group_by_order([0, 1, 2, 3, 4, 5])
    assert sorted(order) == [0, 1, 2, 3, 4, 5]
