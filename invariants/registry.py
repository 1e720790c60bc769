"""The one registry of named properties.

Each property has a stable snake_case name shared by scenario files (``[check] properties``),
reports and the CLI (``kmc properties``), a kind (see :class:`explorer.contract.PropertyKind`), a
group, a one-line description, and a builder that turns a scenario into a check function. Checks
return evidence (what failed, where) or None.

Groups keep the kinds of claims apart: ``protocol`` properties are claims about Kafka;
``sanity`` properties check that the model keeps its own books (spec sanity, not Kafka
behaviour); ``quiescence`` properties are checked only in states where the controller has nothing
left to do; ``sometimes`` properties must be satisfied somewhere, or the scenario is vacuous.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from explorer.contract import Property, PropertyKind
from model.scenario import Scenario, ScenarioError

GROUPS = ("protocol", "quiescence", "sanity", "sometimes")


@attrs.frozen
class PropertySpec:
    name: str
    kind: PropertyKind
    group: str
    description: str
    build: Callable[[Scenario], Callable[..., Any]] = attrs.field(eq=False, repr=False)
    #: the property's :attr:`explorer.contract.Property.trigger`, the same for every scenario
    trigger: Callable[..., Any] | None = attrs.field(default=None, eq=False, repr=False)

    def for_scenario(self, scenario: Scenario) -> Property:
        return Property(self.name, self.kind, self.description, self.build(scenario), self.trigger)


REGISTRY: dict[str, PropertySpec] = {}


def register(name: str, kind: PropertyKind, group: str, description: str,
             trigger: Callable[..., Any] | None = None) -> Callable[[Any], Any]:
    """Register a builder ``scenario -> check`` under ``name``, with the check's ``trigger`` if it has one (see
    :class:`explorer.contract.Property`)."""
    if group not in GROUPS:
        raise ValueError(f"unknown group {group!r}")

    def decorate(build: Callable[[Scenario], Callable[..., Any]]) -> Callable[[Scenario], Callable[..., Any]]:
        if name in REGISTRY:
            raise ValueError(f"property {name!r} registered twice")
        REGISTRY[name] = PropertySpec(name, kind, group, description, build, trigger)
        return build

    return decorate


def all_specs() -> Sequence[PropertySpec]:
    _load()
    return tuple(REGISTRY[n] for n in sorted(REGISTRY))


def select(scenario: Scenario, names: Iterable[str] | None = None) -> tuple[Property, ...]:
    """The properties to check: ``names``, else the scenario's ``[check] properties``, else all."""
    _load()
    chosen = list(names) if names is not None else scenario.properties
    if chosen is None:
        chosen = sorted(REGISTRY)
    for n in chosen:
        if n not in REGISTRY:
            raise ScenarioError(f"unknown property {n!r}; `kmc properties` lists the known ones.")
    return tuple(REGISTRY[n].for_scenario(scenario) for n in dict.fromkeys(chosen))


def _load() -> None:
    import invariants.kafka_properties  # noqa: F401  (registers on import)
