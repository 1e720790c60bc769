"""Hypothesis strategies for Kafka scenarios: valid scenario TOML, loaded by the model's own loader.

:func:`scenario_texts` draws clusters larger than an exhaustive search covers: 3 to 8 brokers in
1 to 4 racks, 1 to 4 topics of replication factor 1 to 4 (placed by Kafka's assignment from a
drawn start index and shift, or given explicitly), with every environment action enabled: at
least one topic created by an admin during the run and one deleted by an admin, and every bound
of ``[bounds]`` (read from :class:`model.scenario.Bounds`, so bounds added later are enabled too)
between 1 and 4. The model is the faithful one: every bug switch is written out as false.

The issue asks for up to 9 brokers, but :func:`model.scenario.load_scenario` refuses more than 8
("beyond what an exhaustive search can cover"); the strategy keeps to what the loader accepts.

Each drawn text goes through :func:`model.scenario.load_scenario`, so the strategies test the loader
too: a text the strategy builds and the loader refuses is a failure of one or the other.
"""

from __future__ import annotations

import attrs
from hypothesis import strategies as st

from invariants.registry import all_specs
from model.scenario import BUGS, SUPPORTED_VERSIONS, Bounds, Scenario, load_scenario

MIN_BROKERS, MAX_BROKERS = 3, 8
MAX_RACKS = 4
MAX_TOPICS = 4
MAX_REPLICATION_FACTOR = 4
#: partitions × replication factor per topic, as the loader allows.
MAX_REPLICAS_PER_TOPIC = 12
MAX_BOUND = 4

#: Properties the faithful model of Kafka 2.3 violates (findings of kmc, each with the shipped
#: scenario that shows it): a generated scenario checks every other property.
KNOWN_FINDINGS = {
    "deletion_completes_only_when_all_replicas_succeeded": "stale-deletion-response",
    "no_stray_logs_when_idle": "stray-log-after-deletion",
}


def checked_properties() -> list[str]:
    """Every registered property but the known findings."""
    return [spec.name for spec in all_specs() if spec.name not in KNOWN_FINDINGS]


@st.composite
def _topic(draw: st.DrawFn, name: str, brokers: list[int]) -> dict[str, object]:
    rf = draw(st.integers(1, min(MAX_REPLICATION_FACTOR, len(brokers))))
    partitions = draw(st.integers(1, min(3, MAX_REPLICAS_PER_TOPIC // rf)))
    topic: dict[str, object] = {"name": name}
    if draw(st.booleans()):
        topic.update(partitions=partitions, replication_factor=rf,
                     start_index=draw(st.integers(0, len(brokers) - 1)),
                     replica_shift=draw(st.integers(0, len(brokers) - 1)))
    else:
        replicas = st.permutations(brokers).map(lambda order: order[:rf])
        topic["replicas"] = draw(st.lists(replicas, min_size=partitions, max_size=partitions))
    return topic


@st.composite
def scenario_texts(draw: st.DrawFn) -> str:
    """The TOML text of a valid scenario (see the module docstring)."""
    count = draw(st.integers(MIN_BROKERS, MAX_BROKERS))
    brokers = sorted(draw(st.sets(st.integers(0, 15), min_size=count, max_size=count)))
    racks = draw(st.integers(1, min(MAX_RACKS, count)))
    # Every rack gets a broker; the rest are spread at random.
    rack_of = list(range(racks)) + draw(st.lists(st.integers(0, racks - 1), min_size=count - racks,
                                                 max_size=count - racks))
    rack_of = draw(st.permutations(rack_of))
    topics = [draw(_topic(f"t{i}", brokers)) for i in range(draw(st.integers(1, MAX_TOPICS)))]
    for topic in topics:
        topic["created"] = draw(st.sampled_from(["initially", "by_admin"]))
        topic["deleted_by_admin"] = draw(st.booleans())
    # Every environment action enabled: an admin creates a topic and deletes one.
    topics[draw(st.integers(0, len(topics) - 1))]["created"] = "by_admin"
    topics[draw(st.integers(0, len(topics) - 1))]["deleted_by_admin"] = True

    lines = ["name = \"generated\"", "", "[cluster]", "brokers = ["]
    lines += [f"  {{ id = {b}, rack = \"r{rack_of[i] + 1}\" }}," for i, b in enumerate(brokers)]
    lines.append("]")
    for topic in topics:
        lines += ["", "[[topics]]", *(f"{key} = {_toml(value)}" for key, value in topic.items())]
    lines += ["", "[kafka]", f"version = \"{draw(st.sampled_from(SUPPORTED_VERSIONS))}\"",
              f"delete_topic_enable = {_toml(draw(st.booleans()))}",
              f"unclean_leader_election_enable = {_toml(draw(st.booleans()))}"]
    lines += ["", "[bounds]"]
    lines += [f"{field.name} = {draw(st.integers(1, MAX_BOUND))}" for field in attrs.fields(Bounds)]
    lines += ["", "[check]", f"properties = {_toml(checked_properties())}"]
    lines += ["", "[bugs]", *(f"{name} = false" for name in sorted(BUGS))]
    return "\n".join(lines) + "\n"


def scenarios() -> st.SearchStrategy[Scenario]:
    """Loaded scenarios drawn by :func:`scenario_texts`."""
    return scenario_texts().map(load_scenario)


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"\"{value}\""
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return str(value)
