"""Spark test fixtures and picklable model factories for the Spark BFS tests.

The factories below are top-level functions of plain arguments, as
:class:`~explorer.contract.ModelFactory` requires: Spark workers unpickle them and rebuild the toy
model in their own process. The session fixture starts one ``local[2]`` session for the whole test
session (starting Spark costs several seconds); every test shares it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from toy_models.counter import Counter
from toy_models.kafka_controller_toy import CONFIGS, KafkaControllerToy, ToyConfig
from toy_models.two_phase_commit import TwoPhaseCommit

from explorer.contract import ModelFactory


def build_counter(argument: Mapping[str, Any]) -> Counter:
    return Counter(**argument)


def build_two_phase_commit(rms: int) -> TwoPhaseCommit:
    return TwoPhaseCommit(rms)


def build_toy_controller(config: str | ToyConfig) -> KafkaControllerToy:
    """The toy controller under a named TLC config (``"MC"``, ``"MC_stuck"``...) or a ToyConfig."""
    return KafkaControllerToy(CONFIGS[config] if isinstance(config, str) else config)


class SlowCounter(Counter):
    """The counter, taking ``pause`` seconds to list the actions of each state from depth 2 on (long
    levels after two quick ones)."""

    def __init__(self, n: int, pause: float) -> None:
        super().__init__(n)
        self.pause = pause

    def actions(self, state: tuple[int, int]) -> Any:
        if sum(state) >= 2:
            time.sleep(self.pause)
        return super().actions(state)


def build_slow_counter(argument: tuple[int, float]) -> SlowCounter:
    return SlowCounter(*argument)


def slow_counter_factory(n: int, pause: float) -> ModelFactory[Any, Any]:
    return ModelFactory(build_slow_counter, (n, pause))


def counter_factory(**argument: Any) -> ModelFactory[Any, Any]:
    return ModelFactory(build_counter, dict(argument))


def two_phase_commit_factory(rms: int = 3) -> ModelFactory[Any, Any]:
    return ModelFactory(build_two_phase_commit, rms)


def toy_controller_factory(config: str | ToyConfig) -> ModelFactory[Any, Any]:
    return ModelFactory(build_toy_controller, config)


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One local[2] SparkSession for the whole test session, stopped at the end."""
    from spark_explore.session import build_session

    session = build_session("local[2]", checkpoint_dir=Path(tmp_path_factory.mktemp("spark")))
    yield session
    session.stop()
