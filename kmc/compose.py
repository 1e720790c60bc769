"""Wiring a scenario, the Kafka model, its properties and an explorer together.

The composition root's one recipe: a scenario (shipped by name or a TOML file) becomes a
:class:`~model.zk.kafka_model.KafkaControllerModel` with the properties the scenario selects.
:func:`build_kafka_model` is also what Spark workers call to rebuild the model from the scenario's
TOML text (see :class:`explorer.contract.ModelFactory`), and :func:`spark_submit_arguments` gives
``spark-submit`` the packages, the scenario file and the driver (:mod:`kmc.spark_main`) it needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path

from explorer.contract import ModelFactory
from invariants.registry import all_specs, select
from model.kraft.kraft_model import KraftControllerModel
from model.scenario import Scenario, ScenarioError, load_scenario, load_scenario_file, with_properties
from model.zk.kafka_model import KafkaControllerModel
from spark_explore import submit

DEFAULT_SCENARIO = "default"

#: kmc's packages, shipped to a Spark cluster as one zip (``--py-files``).
PACKAGES = ("kmc", "model", "invariants", "explorer", "spark_explore", "reports")
#: Their data files, shipped beside the modules: pyproject.toml's [tool.setuptools.package-data].
PACKAGE_DATA = {"model.scenario": ("scenarios/*.toml", "scenarios/kraft/*.toml"), "reports": ("templates/*.j2",),
                "kmc.ui": ("page.html",)}


def shipped_scenarios() -> dict[str, Path]:
    """Scenario name -> path of the TOML files that ship in ``model/scenario/scenarios`` (the ZooKeeper controller's)
    and ``model/scenario/scenarios/kraft`` (the KRaft controller's, named ``kraft-*``)."""
    folder = resources.files("model.scenario") / "scenarios"
    return {Path(str(p)).stem: Path(str(p)) for sub in (folder, folder / "kraft") for p in sub.iterdir()
            if str(p).endswith(".toml")}


def scenario_file(name_or_path: str | None) -> Path:
    """The TOML file of a shipped scenario (by name) or of a path (``default`` when None)."""
    target = name_or_path or DEFAULT_SCENARIO
    shipped = shipped_scenarios()
    if target in shipped:
        return shipped[target]
    if "\x00" in target:
        raise ScenarioError(f"the scenario name {target.encode('unicode_escape').decode('ascii')[:80]!r} holds a NUL "
                            "character; give a shipped scenario's name or a path to a .toml file.")
    path = Path(target)
    try:
        exists = path.exists()
    except OSError as e:  # a name too long for the file system, and the like
        raise ScenarioError(f"{target[:80]!r} is neither a shipped scenario nor a readable path ({e.strerror}); "
                            "give one of `kmc scenarios` or a path to a .toml file.") from None
    if path.suffix != ".toml" and not exists:
        raise ScenarioError(f"{target!r} is neither a shipped scenario ({', '.join(sorted(shipped))}) "
                            "nor a .toml file; give one of those names or a path.")
    return path


def resolve_scenario(name_or_path: str | None) -> Scenario:
    """A shipped scenario by name (``default``, ``racks``, …) or a TOML file by path, loaded and validated."""
    return load_scenario_file(scenario_file(name_or_path))


def select_properties(scenario: Scenario, only: Sequence[str] = (), skip: Sequence[str] = ()) -> Scenario:
    """``scenario`` checking ``only`` (else its own selection) less ``skip``: ``--property`` / ``--skip-property``."""
    if not only and not skip:
        return scenario
    known = {spec.name for spec in all_specs()}
    for option, names in (("--property", only), ("--skip-property", skip)):
        for name in names:
            if name not in known:
                raise ScenarioError(f"{option} {name!r} is not a property; `kmc properties` lists the names.")
    chosen = list(dict.fromkeys(only)) if only else [p.name for p in select(scenario)]
    kept = [name for name in chosen if name not in set(skip)]
    if not kept:
        raise ScenarioError(f"--skip-property leaves no property of scenario '{scenario.name}' to check; keep at "
                            "least one.")
    return with_properties(scenario, kept)


def build_kafka_model(toml_text: str) -> KafkaControllerModel:
    """The Kafka model with the scenario's selected properties, from the scenario's TOML text."""
    return model_for(load_scenario(toml_text))


def model_for(scenario: Scenario) -> KafkaControllerModel:
    """The scenario's controller model: the ZooKeeper controller's, or the KRaft controller's
    (``[kafka] controller = "kraft"``, :func:`kraft_model_for`). Typed as the ZooKeeper model, whose extra
    methods (``symmetry``) its callers use; ``--symmetry`` is refused for KRaft scenarios before they reach them."""
    if scenario.kraft is not None:
        return kraft_model_for(scenario)  # type: ignore[return-value]
    return KafkaControllerModel(scenario, select(scenario))


def kraft_model_for(scenario: Scenario) -> KraftControllerModel:
    """The KRaft model with the KRaft properties the scenario selects (:mod:`invariants.kraft_properties`)."""
    from invariants.kraft_properties import select_kraft

    return KraftControllerModel(scenario, select_kraft(scenario))


def factory_for(scenario: Scenario) -> ModelFactory[object, object]:
    return ModelFactory(build_kafka_model, scenario.source)


def _driver_entry_point() -> Path:
    return Path(str(resources.files("kmc") / "spark_main.py"))


def spark_submit_arguments(
    *,
    scenario: str,
    master: str = "yarn",
    conf: Mapping[str, str] | None = None,
    max_depth: int | None = None,
    max_states: int | None = None,
    submit_dir: Path = submit.DEFAULT_SUBMIT_DIR,
    run_root: str = submit.DEFAULT_RUN_ROOT,
    spark_submit: str = "spark-submit",
    fingerprint_bits: int = 64,
) -> list[str]:
    """``kmc explore SCENARIO --engine spark`` as a ``spark-submit`` command line (files written to ``submit_dir``)."""
    return submit.spark_submit_arguments(
        scenario_file=scenario_file(scenario), entry_point=_driver_entry_point(), packages=PACKAGES,
        package_data=PACKAGE_DATA,
        master=master, conf=conf, max_depth=max_depth, max_states=max_states, submit_dir=submit_dir,
        run_root=run_root, spark_submit=spark_submit, fingerprint_bits=fingerprint_bits)


def spark_submit_command(
    *,
    scenario: str,
    master: str = "yarn",
    conf: Mapping[str, str] | None = None,
    max_depth: int | None = None,
    max_states: int | None = None,
    submit_dir: Path = submit.DEFAULT_SUBMIT_DIR,
    fingerprint_bits: int = 64,
) -> str:
    """The command line of :func:`spark_submit_arguments` as shell text, with a note on what it needs."""
    return submit.spark_submit_command(
        scenario_file=scenario_file(scenario), entry_point=_driver_entry_point(), packages=PACKAGES,
        package_data=PACKAGE_DATA,
        master=master, conf=conf, max_depth=max_depth, max_states=max_states, submit_dir=submit_dir,
        fingerprint_bits=fingerprint_bits)
