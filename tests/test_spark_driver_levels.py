"""Which levels the Spark engine expands on its driver and which as Spark jobs (``spark_explore.bfs``'s module
docstring): the rule alone, on the driver's measured rate, without a session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toy_models.kafka_controller_toy import CONFIGS, KafkaControllerToy

from explorer.contract import ModelFactory
from spark_explore.bfs import FIRST_JOB_FACTOR, SparkBfsOptions, _Search


def _search(tmp_path: Path, **options: Any) -> _Search:
    factory: ModelFactory[Any, Any] = ModelFactory(KafkaControllerToy, CONFIGS["MC"])
    return _Search(None, factory, factory(), SparkBfsOptions(tmp_path / "run", **options), None)


def test_the_first_spark_job_waits_for_a_level_of_three_budgets(tmp_path: Path) -> None:
    search = _search(tmp_path, driver_seconds=8.0)
    assert FIRST_JOB_FACTOR == 3.0
    assert search._on_driver(400_000)  # no rate measured yet: the driver measures one
    search.driver_seconds_per_state = 1e-4  # 10,000 states a second
    assert search._on_driver(50_000)  # 5 s
    assert search._on_driver(100_000)  # 10 s: past the budget, but the first job would also start the workers
    assert search._on_driver(230_000)  # 23 s
    assert not search._on_driver(250_000)  # 25 s
    search.spark_jobs = 1  # the workers are started: past the budget a level is a Spark job
    assert search._on_driver(79_000)
    assert not search._on_driver(81_000)


def test_the_state_bound_and_a_zero_budget_send_every_level_to_spark(tmp_path: Path) -> None:
    search = _search(tmp_path, driver_seconds=8.0, driver_max_states=1_000)
    search.driver_seconds_per_state = 1e-9
    assert search._on_driver(1_000)
    assert not search._on_driver(1_001)  # the driver would hold too many states, however fast
    every_level = _search(tmp_path, driver_seconds=0)
    assert not every_level._on_driver(1)
    every_level.driver_seconds_per_state = 1e-9
    assert not every_level._on_driver(1)
