"""The compiled modules (``setup.py``'s Cython build, :mod:`model.compiled`) against their sources.

The install compiles the controllers' models and their properties, and the functions the codec and the step generate
from the state classes; the sources (and ``exec``) stay the reference. Each scenario
below is searched breadth-first twice, in fresh interpreters, once with the compiled modules and once with
``KMC_PURE_PYTHON=1`` (every module from its source): every successor's bytes (duplicates included, in the order the
search generates them), every finding with its evidence and the steps each transition memo took in full must be the
same.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from importlib.machinery import ExtensionFileLoader, SourceFileLoader
from pathlib import Path
from typing import Any

import pytest

import model.zk
from kmc.compose import shipped_scenarios
from model import compiled

ROOT = Path(__file__).resolve().parent.parent

#: The search of the child, for each ``scenario:limit`` argument: the engine's own expansion (``expand_batch``:
#: successors, their bytes and every property), breadth-first, to ``limit`` distinct states; a SHA-256 over everything
#: it produced, and how many steps each transition memo took in full (the memos watch what a step reads through
#: list and dict subclasses, which compiled code must not bypass, nor read more of). One line of JSON: scenario ->
#: figures.
_CHILD = """
import collections, hashlib, json, sys
from explorer.expand import ActionNames, PropertySet, expand_batch
from kmc import compose
from model.compiled import compiled_modules
from model.zk import transition_memo

# The steps each memo takes in full: a read its watch notes, or misses, in one build and not the other changes them.
taken = collections.Counter()
for memo in (transition_memo.BrokerStepMemo, transition_memo.ControllerStepMemo, transition_memo.EnvironmentStepMemo):
    for method in ("_step", "_watched_step"):
        def counted(self, *args, _method=vars(memo)[method], _name=f"{memo.__name__}.{method}"):
            taken[_name] += 1
            return _method(self, *args)
        setattr(memo, method, counted)

results = {}
for argument in sys.argv[1:]:
    name, limit = argument.rsplit(":", 1)
    model = compose.model_for(compose.resolve_scenario(name))
    properties, names = PropertySet.of(model.properties()), ActionNames()
    digest = hashlib.sha256()
    level, found, generated = [model.encode(s) for s in model.init_states()], 0, 0
    seen = set(level)
    while level and len(seen) < int(limit):
        batch = expand_batch(model, [model.decode(data) for data in level], properties, names)
        for position, finding in batch.findings:
            digest.update(json.dumps([position, finding.property, finding.action_index, finding.evidence],
                                     sort_keys=True, default=str).encode())
            found += 1
        level = []
        for data, parent, action in zip(batch.data, batch.parents.tolist(), batch.action_indices.tolist(),
                                        strict=True):
            digest.update(data)
            digest.update(f"{parent}:{action}".encode())
            generated += 1
            if data not in seen:
                seen.add(data)
                level.append(data)
    results[name] = {"distinct": len(seen), "generated": generated, "findings": found, "digest": digest.hexdigest(),
                     "taken": dict(taken)}
    taken.clear()
print(json.dumps({"scenarios": results, "compiled": list(compiled_modules())}))
"""

#: Every shipped scenario to this many distinct states (most are complete below it), and the two default scenarios
#: further: the ZooKeeper controller's deletions, elections, ISR changes, reassignments, failovers and every bug
#: switch's path, and the KRaft controller's.
LIMIT = 4_000
LONGER = {"default": 30_000, "kraft-default": 20_000}


def _search(scenarios: dict[str, int], *, pure: bool) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != compiled.PURE_PYTHON}
    if pure:
        env[compiled.PURE_PYTHON] = "1"
    done = subprocess.run([sys.executable, "-c", _CHILD, *(f"{name}:{limit}" for name, limit in scenarios.items())],
                          cwd=ROOT, env=env, check=True, capture_output=True, text=True, timeout=1200)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _built() -> bool:
    return bool(compiled.install().built)


@pytest.mark.slow
def test_compiled_modules_give_what_their_sources_give() -> None:
    if not _built():
        pytest.skip("no compiled modules in this install (model/compiled.json): nothing to compare")
    scenarios = {name: LONGER.get(name, LIMIT) for name in shipped_scenarios()}
    pure = _search(scenarios, pure=True)
    built = _search(scenarios, pure=False)
    assert pure["compiled"] == []
    assert {"model.zk.transition_memo", "model.kraft.kraft_model", "invariants.kafka_properties"} <= set(
        built["compiled"])
    assert any(name.startswith("model.zk.state.generated_") for name in built["compiled"])
    for name in scenarios:
        assert built["scenarios"][name] == pure["scenarios"][name], name


def test_the_install_compiled_the_hot_modules() -> None:
    """The README's install command builds the compiled modules where there is a C compiler (Cython the build
    fetches); a build that fell back to the sources there, silently slower, fails here."""
    if os.environ.get(compiled.PURE_PYTHON) == "1":
        pytest.skip("KMC_PURE_PYTHON=1: every module runs from its source")
    if shutil.which(sysconfig.get_config_var("CC").split()[0] if sysconfig.get_config_var("CC") else "cc") is None:
        pytest.skip("no C compiler on this machine: the install left the model to its sources (README, Quickstart)")
    import model.zk.transition_memo as memo

    assert _built(), "model/compiled.json is missing: reinstall with `python3 -m pip install -c constraints.txt -e .`"
    import model.zk.state.codec  # noqa: F401  (its generated functions)

    assert "model.zk.transition_memo" in compiled.compiled_modules(), (
        f"model.zk.transition_memo runs from {memo.__file__}: its compiled module is missing or older than its source")
    assert any(name.startswith("model.zk.state.generated_") for name in compiled.compiled_modules()), (
        "the codec's generated functions run from exec: the install did not compile them (setup.py, _generated)")


def test_a_compiled_module_is_taken_only_for_the_source_it_was_built_from() -> None:
    name = "model.zk.actions"
    source = Path(model.zk.__path__[0]) / "actions.py"
    built = compiled.CompiledOrSource({name: compiled.source_digest(source)}, pure=False)
    spec = built.find_spec(name, model.zk.__path__)
    assert spec is not None
    if not isinstance(spec.loader, ExtensionFileLoader):
        pytest.skip("model.zk.actions is not compiled in this install")
    stale = compiled.CompiledOrSource({name: "0" * 64}, pure=False).find_spec(name, model.zk.__path__)
    unlisted = compiled.CompiledOrSource({}, pure=False).find_spec(name, model.zk.__path__)
    pure = compiled.CompiledOrSource({name: compiled.source_digest(source)}, pure=True).find_spec(
        name, model.zk.__path__)
    for other in (stale, unlisted, pure):
        assert other is not None and isinstance(other.loader, SourceFileLoader) and other.origin == str(source)
    assert built.compiled == [name]


def test_other_packages_are_left_to_the_interpreters_finders() -> None:
    finder = compiled.CompiledOrSource({}, pure=False)
    assert finder.find_spec("json", None) is None
    assert finder.find_spec("explorer.expand", None) is None
