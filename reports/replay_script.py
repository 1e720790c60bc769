"""``replay_<property>.py``: a counterexample as a short program, the way Hypothesis prints a
falsifying example.

The program rebuilds the model from the run's model factory (for the Kafka model: kmc's
``build_kafka_model`` and the scenario's TOML text, embedded so the script does not depend on the
shipped scenario files staying as they were), takes each step by the action's name as the report
prints it (:class:`explorer.replay.Walk`), and asserts that the property is violated at the end.
Every string from the run (TOML text, action names) is written as a Python literal (``repr``) or
in a comment stripped to one line, so no scenario text can become code.
"""

from __future__ import annotations

import re
from typing import Any

from explorer.replay import Trace
from explorer.results import Discovery
from reports.common import KIND_WORDS, RunFacts, step_title

#: The model factories a replay script may call, with the type of their argument: kmc's own, never a
#: name read from summary.json (``{"module": "os", "name": "system"}`` would run a shell command).
MODEL_FACTORIES: dict[tuple[str, str], type] = {("kmc.compose", "build_kafka_model"): str}


def check_model_factory(factory: Any) -> None:
    """Raise ValueError unless ``factory`` (summary.json's ``model_factory``) names one of kmc's own
    model factories with an argument of its type."""
    if not isinstance(factory, dict):
        raise ValueError("model_factory is not an object")
    module, name = factory.get("module"), factory.get("name")
    kind = MODEL_FACTORIES.get((module, name)) if isinstance(module, str) and isinstance(name, str) else None
    if kind is None:
        raise ValueError(f"model_factory {module!s:.60}:{name!s:.60} is not one of kmc's model factories")
    if not isinstance(factory.get("argument"), kind):
        raise ValueError(f"model_factory's argument is not {kind.__name__}")


def render_replay_script(discovery: Discovery | None, trace: Trace, facts: RunFacts) -> str:
    """The program replaying ``trace`` and asserting ``discovery``'s violation; for a path that is no
    counterexample (``discovery`` None, a path taken by hand in ``kmc ui``), asserting the fingerprint
    it ends on."""
    factory = facts.model_factory
    check_model_factory(factory)
    module, name, argument = str(factory["module"]), str(factory["name"]), factory.get("argument")
    if discovery is None:
        head = [
            f'"""Replay of a path through a kmc model, {len(trace.steps)} steps (saved by kmc ui).',
            "",
            "Run it with python3 from a kmc checkout (or with kmc installed). It rebuilds the path through kmc's",
            "API, one step at a time as the report names the steps, and asserts the state it ends on: a step that",
            "is no longer enabled, or another final state, means the model changed since the path was saved.",
        ]
    else:
        kind = KIND_WORDS.get(discovery.kind.value, discovery.kind.value)
        head = [
            f'"""Replay of a kmc counterexample: {_plain(discovery.property)} ({kind}), {len(trace.steps)} steps.',
            "",
            "Run it with python3 from a kmc checkout (or with kmc installed). It rebuilds the trace through kmc's",
            "API, one step at a time as the report names the steps, and asserts the violation: a step that is no",
            "longer enabled, or a property that now holds, means the model changed since the run.",
        ]
    lines = [
        *head,
        '"""',
        "",
        f"# Scenario: {_comment(facts.scenario_name)}" + (f" (Kafka {_comment(facts.kafka_version)})"
                                                          if facts.kafka_version else ""),
        "",
        "from explorer.replay import Walk",
        f"from {module} import {name}",
        "",
        *_argument_lines(argument),
        "",
        f"walk = Walk({name}(MODEL_ARGUMENT))",
    ]
    for number, step in enumerate(trace.steps, 1):
        title = step_title(step.action, step.view)
        comment = f"  # {number}. {_comment(title)}" if title != step.action else f"  # {number}."
        lines.append(f"walk.take({step.action!r}){comment}")
    if discovery is None:
        last = trace.steps[-1].fingerprint if trace.steps else trace.initial_fingerprint
        return "\n".join([*lines, f"assert walk.fingerprint == {last}, \"the path ends on another state\"",
                          f"print({'replayed ' + str(len(trace.steps)) + ' steps'!r})"]) + "\n"
    lines += [
        f"evidence = walk.check({discovery.property!r})",
        'assert evidence is not None, "the property holds: the counterexample no longer reproduces"',
        f"print({discovery.property + ' violated after ' + str(len(trace.steps)) + ' steps:'!r}, evidence)",
    ]
    return "\n".join(lines) + "\n"


def _argument_lines(argument: Any) -> list[str]:
    if isinstance(argument, str):
        return ["MODEL_ARGUMENT = \"\\n\".join([", *(f"    {line!r}," for line in argument.split("\n")), "])"]
    return [f"MODEL_ARGUMENT = {argument!r}"]


def _comment(text: str) -> str:
    return " ".join(str(text).split())


def _plain(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)
