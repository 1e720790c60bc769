"""Wiring the Kafka model, its properties and a scenario together (part of the composition root).

This module and :mod:`explorer.cli` are the only places that import the Kafka model, the
invariants and an explorer together; the rest of ``explorer/`` knows only the model contract.
:func:`build_kafka_model` is also the recipe Spark workers use to rebuild the model from the
scenario's TOML text (see :class:`explorer.contract.ModelFactory`).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from explorer.contract import ModelFactory
from invariants.registry import select
from model.kafka_model import KafkaControllerModel
from model.scenario import Scenario, ScenarioError, load_scenario, load_scenario_file

DEFAULT_SCENARIO = "default"


def shipped_scenarios() -> dict[str, Path]:
    """Scenario name -> path of the TOML files that ship in ``model/scenarios``."""
    folder = resources.files("model") / "scenarios"
    return {Path(str(p)).stem: Path(str(p)) for p in folder.iterdir() if str(p).endswith(".toml")}


def resolve_scenario(name_or_path: str | None) -> Scenario:
    """A shipped scenario by name (``default``, ``racks``, …) or a TOML file by path."""
    target = name_or_path or DEFAULT_SCENARIO
    shipped = shipped_scenarios()
    if target in shipped:
        return load_scenario_file(shipped[target])
    path = Path(target)
    if path.suffix != ".toml" and not path.exists():
        raise ScenarioError(f"{target!r} is neither a shipped scenario ({', '.join(sorted(shipped))}) "
                            "nor a .toml file; give one of those names or a path.")
    return load_scenario_file(path)


def build_kafka_model(toml_text: str) -> KafkaControllerModel:
    """The Kafka model with the scenario's selected properties, from the scenario's TOML text."""
    scenario = load_scenario(toml_text)
    return KafkaControllerModel(scenario, select(scenario))


def model_for(scenario: Scenario) -> KafkaControllerModel:
    return KafkaControllerModel(scenario, select(scenario))


def factory_for(scenario: Scenario) -> ModelFactory[object, object]:
    return ModelFactory(build_kafka_model, scenario.source)
