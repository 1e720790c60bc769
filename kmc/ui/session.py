"""The interactive explorer's session: paths through a model, taken one action at a time.

``kmc ui`` serves one :class:`Session` to one browser (:mod:`kmc.ui.server`). A session holds *paths*:
sequences of states from an initial state, each reached by one of the enabled actions of the state
before. The page looks at one step of one path (the cursor); taking an action at the end of a path
extends it, taking one at an earlier step starts a new path that shares the prefix (a branch), and
"run BFS from here" searches from the cursor's state with bounds and loads its shortest violation as
a new path. A path is saved as the reports save a counterexample (an ITF trace, a replay script) and
read back by taking the actions it names.

Like the explorers, this module knows only the model contract (:mod:`explorer.contract`) and the
model's state views: what an action is called, who takes it (the optional ``action_actor``), the
tables, lanes, messages and log lines of a state or a step all come from the model. The renderers of
:mod:`reports` draw the sequence diagram and write the ITF and replay files, so the page and the
reports show a step the same way. :meth:`Session.snapshot` is everything the page draws, as JSON data.
"""

from __future__ import annotations

import ast
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from explorer.bfs import BfsOptions, run_bfs
from explorer.contract import Evidence, Model, Property, actor_of
from explorer.fingerprint import fingerprint
from explorer.replay import ReplayError, Trace, TraceStep, describe_state, replay_states, view_of
from explorer.results import Discovery, ExplorationResult, Outcome
from explorer.stopping import Limits
from reports.common import KIND_WORDS, RunFacts, format_value, ordered_discoveries, step_title
from reports.html import diagram_css, sequence_svg
from reports.itf import read_itf, render_itf
from reports.replay_script import render_replay_script

#: The bounds of "run BFS from here" when the page gives none, and the most it may ask for.
DEFAULT_MAX_STATES, DEFAULT_MAX_SECONDS = 20_000, 30.0
LIMIT_MAX_STATES, LIMIT_MAX_SECONDS = 2_000_000, 600.0


class SessionError(ValueError):
    """A request the session cannot honour (one sentence naming what and what to do instead)."""


@attrs.frozen
class Node:
    """One state of a path and how it was reached (``action`` is None for the initial state)."""

    state: Any
    fingerprint: int
    view: Mapping[str, Any]
    action: Any = None
    action_index: int | None = None
    step: TraceStep | None = None


@attrs.define
class PathRecord:
    """A path: its nodes (initial state first) and a name saying where it came from."""

    id: int
    name: str
    nodes: list[Node]


@attrs.frozen
class Choice:
    """An enabled action of a state with a successor: its index in ``model.actions(state)``."""

    index: int
    action: Any
    successor: Any
    description: str
    title: str
    actor: str


class StartingAt:
    """``model`` with ``state`` as its only initial state: what "run BFS from here" searches."""

    def __init__(self, model: Model[Any, Any], state: Any) -> None:
        self.model, self.state = model, state

    def init_states(self) -> Sequence[Any]:
        return [self.state]

    def actions(self, state: Any) -> Sequence[Any]:
        return self.model.actions(state)

    def next_state(self, state: Any, action: Any) -> Any:
        return self.model.next_state(state, action)

    def properties(self) -> Sequence[Property]:
        return self.model.properties()

    def within_boundary(self, state: Any) -> bool:
        return self.model.within_boundary(state)

    def encode(self, state: Any) -> bytes:
        return self.model.encode(state)

    def decode(self, data: bytes) -> Any:
        return self.model.decode(data)

    def action_name(self, action: Any) -> str:
        return self.model.action_name(action)

    def describe_action(self, action: Any) -> str:
        return self.model.describe_action(action)

    def describe_changes(self, prev: Any, next_: Any) -> Sequence[str]:
        return self.model.describe_changes(prev, next_)

    def describe_state(self, state: Any) -> Sequence[str]:
        return self.model.describe_state(state)


class Session:
    """One user's exploration of ``model``; every public method holds the session's lock.

    ``facts`` says what a saved file says about the model (the scenario's name, the factory a replay
    script rebuilds it with). ``paths`` are the paths to start with, each ``(name, action indices)``
    from the first initial state (a run's counterexamples); without any, one path holds the first
    initial state alone.
    """

    def __init__(self, model: Model[Any, Any], facts: RunFacts, title: str,
                 paths: Sequence[tuple[str, Sequence[int], int | None]] = ()) -> None:
        self.model = model
        self.facts = facts
        self.title = title
        self.properties = list(model.properties())
        self.lock = threading.Lock()
        self.paths: list[PathRecord] = []
        self.cursor = (0, 0)
        self.message = ""
        self._choices: dict[int, list[Choice]] = {}
        initial = model.init_states()
        if not initial:
            raise SessionError("The model has no initial state.")
        for name, indices, initial_fingerprint in paths:
            self._add_path(name, self._walk(self._initial(initial_fingerprint), indices))
        if not self.paths:
            self._add_path("from the initial state", [self._node(initial[0])])
        last = self.paths[0]
        self.cursor = (last.id, len(last.nodes) - 1)

    # ---- moving around --------------------------------------------------------------------------

    def goto(self, path_id: int, step: int) -> None:
        with self.lock:
            path = self._path(path_id)
            if not 0 <= step < len(path.nodes):
                raise SessionError(f"Path {path_id} has steps 0 to {len(path.nodes) - 1}; step {step} does not exist.")
            self.cursor = (path_id, step)
            self.message = ""

    def take(self, action_index: int) -> None:
        """Take the enabled action ``action_index`` at the cursor: extend the path at its end, follow it
        when the path already takes that action there, and otherwise branch into a new path."""
        with self.lock:
            path, step = self._path(self.cursor[0]), self.cursor[1]
            choice = next((c for c in self._enabled(path.nodes[step]) if c.index == action_index), None)
            if choice is None:
                raise SessionError(f"Action {action_index} is not enabled at step {step} of path {path.id}; "
                                   "take one of the actions listed.")
            node = self._node(choice.successor, path.nodes[step], choice.action, action_index)
            if step == len(path.nodes) - 1:
                path.nodes.append(node)
            elif path.nodes[step + 1].action_index != action_index:
                path = self._add_path(f"branch of path {path.id} at step {step}", [*path.nodes[:step + 1], node])
            self.cursor = (path.id, step + 1)
            self.message = ""

    # ---- bounded search from the cursor ---------------------------------------------------------

    def search(self, max_states: int | None = None, max_seconds: float | None = None) -> dict[str, Any]:
        """Run the local BFS from the cursor's state within ``max_states`` distinct states and
        ``max_seconds``; load its shortest violation, if any, as a new path and move there."""
        max_states = DEFAULT_MAX_STATES if max_states is None else max_states
        max_seconds = DEFAULT_MAX_SECONDS if max_seconds is None else max_seconds
        if not 1 <= max_states <= LIMIT_MAX_STATES:
            raise SessionError(f"max states must be between 1 and {LIMIT_MAX_STATES:,}, got {max_states}.")
        if not 0 < max_seconds <= LIMIT_MAX_SECONDS:
            raise SessionError(f"max seconds must be above 0 and at most {LIMIT_MAX_SECONDS:g}, got {max_seconds}.")
        with self.lock:
            path, step = self._path(self.cursor[0]), self.cursor[1]
            start = path.nodes[step]
            here = StartingAt(self.model, start.state)
            result = run_bfs(here, BfsOptions(max_states=max_states, limits=Limits(time_limit=max_seconds)))
            violations = [d for d in ordered_discoveries(result) if d.is_violation]
            loaded = None
            if violations:
                found = violations[0]
                states = replay_states(here, found.path, found.action_indices, found.fingerprint_bits)
                nodes = list(path.nodes[:step + 1])
                for state, index in zip(states[1:], found.action_indices, strict=True):
                    nodes.append(self._node(state, nodes[-1], self.model.actions(nodes[-1].state)[index], index))
                loaded = self._add_path(f"BFS from path {path.id} step {step}: {found.property}", nodes)
                self.cursor = (loaded.id, len(nodes) - 1)
            self.message = _search_sentence(result, violations[0] if violations else None, step)
            return {"outcome": result.outcome.value, "distinct": result.stats.distinct,
                    "path": None if loaded is None else loaded.id, "message": self.message}

    # ---- saving and loading ---------------------------------------------------------------------

    def export(self, kind: str) -> tuple[str, str]:
        """The cursor's path as a file: ``(file name, text)``, ``kind`` ``itf`` or ``replay``."""
        with self.lock:
            path = self._path(self.cursor[0])
            trace = self._trace(path.nodes)
            discovery = self._violation(path.nodes)
            stem = f"kmc-ui-path-{path.id}"
            if kind == "itf":
                return f"{stem}.itf.json", render_itf(discovery, trace, self.facts, "ui")
            if kind == "replay":
                if not self.facts.model_factory:
                    raise SessionError("This model has no factory a replay script could rebuild it with; save the "
                                       "path as ITF instead.")
                return f"replay_{stem}.py", render_replay_script(discovery, trace, self.facts)
            raise SessionError(f"Unknown file kind {kind!r}; ask for 'itf' or 'replay'.")

    def load(self, text: str, name: str = "") -> int:
        """Read back a saved path (an ITF trace or a replay script, by content) as a new path and move
        to its end; its actions are taken by their names, from the first initial state."""
        descriptions, initial_fingerprint = _saved_actions(text)
        with self.lock:
            nodes = [self._node(self._initial(initial_fingerprint))]
            for number, description in enumerate(descriptions, 1):
                choice = next((c for c in self._enabled(nodes[-1]) if c.description == description), None)
                if choice is None:
                    raise SessionError(f"Step {number} of the file, {description}, is not enabled at that point of "
                                       "this model; was it saved from another scenario or kmc version?")
                nodes.append(self._node(choice.successor, nodes[-1], choice.action, choice.index))
            path = self._add_path(f"loaded {name}".strip() if name else "loaded from a file", nodes)
            self.cursor = (path.id, len(nodes) - 1)
            self.message = f"Loaded {len(descriptions)} steps."
            return path.id

    # ---- what the page draws --------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            path, step = self._path(self.cursor[0]), self.cursor[1]
            node = path.nodes[step]
            previous = path.nodes[step - 1] if step else None
            properties = self._verdicts(path.nodes[:step + 1])
            violating = any(p["verdict"] == "violated" for p in properties)
            view = node.view
            return {
                "title": self.title,
                "paths": [{"id": p.id, "name": p.name, "steps": len(p.nodes) - 1} for p in self.paths],
                "path": path.id,
                "step": step,
                "trace": [{"number": i, "title": "initial state" if n.step is None else step_title(n.step.action,
                                                                                               n.view),
                           "action": "" if n.step is None else n.step.action} for i, n in enumerate(path.nodes)],
                "current": {
                    "number": step,
                    "title": "initial state" if node.step is None else step_title(node.step.action, view),
                    "action": "" if node.step is None else node.step.action,
                    "phase": str(view.get("phase") or ""),
                    "log": [{"logger": str(e.get("logger", "")), "line": str(e.get("line", ""))}
                            for e in view.get("log", ())],
                    "changes": [] if node.step is None else list(node.step.changes),
                    "description": list(describe_state(self.model, node.state)) if not view.get("tables") else [],
                },
                "tables": _tables(view, None if previous is None else previous.view),
                "actions": _groups(self._enabled(node), path.nodes[step + 1].action_index
                                   if step + 1 < len(path.nodes) else None),
                "properties": properties,
                "diagram": sequence_svg(self._trace(path.nodes[:step + 1]), violating=violating) if step else "",
                "message": self.message,
            }

    @staticmethod
    def diagram_css() -> str:
        return diagram_css()

    # ---- internals ------------------------------------------------------------------------------

    def _initial(self, initial_fingerprint: int | None) -> Any:
        states = self.model.init_states()
        if initial_fingerprint is None:
            return states[0]
        for state in states:
            if fingerprint(self.model.encode(state)) == initial_fingerprint:
                return state
        raise SessionError(f"No initial state of this model has fingerprint {initial_fingerprint}; the path was "
                           "saved from another scenario or kmc version.")

    def _walk(self, state: Any, indices: Sequence[int]) -> list[Node]:
        nodes = [self._node(state)]
        for number, index in enumerate(indices, 1):
            enabled = self.model.actions(nodes[-1].state)
            successor = self.model.next_state(nodes[-1].state, enabled[index]) if 0 <= index < len(enabled) else None
            if successor is None:
                raise ReplayError(f"Step {number} of the path takes action {index}, which is not enabled there.")
            nodes.append(self._node(successor, nodes[-1], enabled[index], index))
        return nodes

    def _node(self, state: Any, prev: Node | None = None, action: Any = None, index: int | None = None) -> Node:
        fp = fingerprint(self.model.encode(state))
        if prev is None:
            return Node(state, fp, view_of(self.model, state))
        view = view_of(self.model, state, prev.state, action)
        step = TraceStep(action=self.model.describe_action(action), action_name=self.model.action_name(action),
                         changes=tuple(self.model.describe_changes(prev.state, state)), fingerprint=fp, view=view)
        return Node(state, fp, view, action, index, step)

    def _add_path(self, name: str, nodes: list[Node]) -> PathRecord:
        path = PathRecord(len(self.paths) + 1, name, nodes)
        self.paths.append(path)
        return path

    def _path(self, path_id: int) -> PathRecord:
        if not 1 <= path_id <= len(self.paths):
            raise SessionError(f"There is no path {path_id}; the paths are 1 to {len(self.paths)}.")
        return self.paths[path_id - 1]

    def _enabled(self, node: Node) -> list[Choice]:
        """The enabled actions of ``node``'s state that have a successor (cached by fingerprint)."""
        cached = self._choices.get(node.fingerprint)
        if cached is not None:
            return cached
        choices = []
        for index, action in enumerate(self.model.actions(node.state)):
            successor = self.model.next_state(node.state, action)
            if successor is None:
                continue
            description = self.model.describe_action(action)
            title = step_title(description, view_of(self.model, successor, node.state, action))
            choices.append(Choice(index, action, successor, description, title, actor_of(self.model, action)))
        self._choices[node.fingerprint] = choices
        return choices

    def _trace(self, nodes: Sequence[Node]) -> Trace:
        return Trace(initial=tuple(describe_state(self.model, nodes[0].state)),
                     initial_fingerprint=nodes[0].fingerprint, initial_view=nodes[0].view,
                     steps=tuple(n.step for n in nodes[1:] if n.step is not None))

    def _check(self, prop: Property, nodes: Sequence[Node], at: int) -> Evidence | None:
        """``prop`` at step ``at`` of ``nodes`` (a transition property: on the step into it; None at step 0)."""
        if prop.kind.on_transition:
            return None if at == 0 else prop.check(nodes[at - 1].state, nodes[at].action, nodes[at].state)
        return prop.check(nodes[at].state)

    def _verdicts(self, nodes: Sequence[Node]) -> list[dict[str, Any]]:
        """Every property at the last of ``nodes``, with its evidence, and where else on the path it
        was found (a violation earlier on the path, the step that satisfied a sometimes property)."""
        at = len(nodes) - 1
        out = []
        for prop in self.properties:
            evidence = self._check(prop, nodes, at)
            earlier = [i for i in range(at) if self._check(prop, nodes, i) is not None]
            violation = prop.kind.is_violation
            if evidence is not None:
                verdict = "violated" if violation else "satisfied"
                note = "violated at this step" if violation else "satisfied at this step"
            elif violation:
                verdict = "holds"
                note = ("holds here; violated earlier on this path at step " + _steps(earlier)) if earlier else (
                    "no step taken yet" if prop.kind.on_transition and at == 0 else "holds here")
            else:
                verdict = "satisfied on path" if earlier else "not yet"
                note = f"satisfied on this path at step {_steps(earlier)}" if earlier else \
                    "not satisfied on this path so far"
            out.append({"name": prop.name, "kind": prop.kind.value, "kind_words": KIND_WORDS.get(prop.kind.value, ""),
                        "description": prop.description, "verdict": verdict, "note": note,
                        "evidence": [] if evidence is None else [[str(k), format_value(v)]
                                                                 for k, v in evidence.items()]})
        return out

    def _violation(self, nodes: Sequence[Node]) -> Discovery | None:
        """The path as a counterexample when its last step violates a property (for the saved files)."""
        for prop in self.properties:
            if prop.kind.is_violation:
                evidence = self._check(prop, nodes, len(nodes) - 1)
                if evidence is not None:
                    return Discovery(prop.name, prop.kind, evidence, tuple(n.fingerprint for n in nodes),
                                     tuple(n.action_index for n in nodes[1:] if n.action_index is not None))
        return None


def _steps(numbers: Sequence[int]) -> str:
    return ", ".join(str(n) for n in numbers)


def _tables(view: Mapping[str, Any], previous: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The view's tables with each cell's text and whether the step changed it; a row the step
    removed is kept, marked ``removed``."""
    before: dict[str, dict[str, Mapping[str, Any]]] = {}
    for table in (previous or {}).get("tables", ()):
        before[table["id"]] = {row["key"]: row.get("cells", {}) for row in table.get("rows", ())}
    out = []
    for table in view.get("tables", ()):
        columns = [{"id": c["id"], "title": c.get("title", c["id"])} for c in table.get("columns", ())]
        old_rows = before.get(table["id"])
        rows = []
        for row in table.get("rows", ()):
            cells = row.get("cells", {})
            old = None if old_rows is None else old_rows.get(row["key"])
            texts = [format_value(cells.get(c["id"])) for c in columns]
            changed = [previous is not None and (old is None or format_value(old.get(c["id"])) != text)
                       for c, text in zip(columns, texts, strict=True)]
            rows.append({"key": row["key"], "cells": [{"text": t, "changed": ch} for t, ch in zip(texts, changed,
                                                                                                     strict=True)],
                         "changed": any(changed), "removed": False})
        if old_rows is not None:
            keys = {row["key"] for row in table.get("rows", ())}
            for key, cells in old_rows.items():
                if key not in keys:
                    rows.append({"key": key, "cells": [{"text": format_value(cells.get(c["id"])), "changed": True}
                                                       for c in columns], "changed": True, "removed": True})
        out.append({"id": table["id"], "title": table.get("title", table["id"]), "columns": columns, "rows": rows})
    return out


def _groups(choices: Sequence[Choice], next_index: int | None) -> list[dict[str, Any]]:
    """The choices grouped by actor, groups in the order of their first action (the model's order)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for c in choices:
        groups.setdefault(c.actor, []).append({"index": c.index, "description": c.description, "title": c.title,
                                               "on_path": c.index == next_index})
    return [{"actor": actor, "actions": actions} for actor, actions in groups.items()]


def _search_sentence(result: ExplorationResult, found: Discovery | None, step: int) -> str:
    states = f"{result.stats.distinct:,} distinct states"
    if found is not None:
        return (f"BFS from step {step}: {found.property} is violated {found.trace_length} steps further "
                f"({states} explored); its shortest trace is loaded as a new path.")
    if result.outcome is Outcome.OK:
        return f"BFS from step {step}: no violation is reachable from here (a complete search of {states})."
    return f"BFS from step {step}: no violation within the bounds ({states}; {result.reason or 'a bound was hit'})."


def _saved_actions(text: str) -> tuple[list[str], int | None]:
    """The action names of a saved path, and its initial state's fingerprint when the file gives it:
    an ITF trace (JSON, each state's ``#meta.action``) or a replay script (its ``walk.take("...")``
    calls, read as Python's syntax tree and never run)."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            trace = read_itf(text)
        except (ValueError, TypeError, KeyError, json.JSONDecodeError) as e:
            raise SessionError(f"The file is not an ITF trace kmc can read ({e}).") from None
        metas = [state.meta or {} for state in trace.states]
        if not metas:
            raise SessionError("The ITF trace has no state.")
        first = metas[0].get("fingerprint")
        try:
            initial = int(first) if first is not None else None
        except (TypeError, ValueError):
            initial = None
        actions = [m.get("action") for m in metas[1:]]
        if not all(isinstance(a, str) for a in actions):
            raise SessionError("The ITF trace's states do not name their actions (#meta.action); save it from kmc.")
        return [str(a) for a in actions], initial
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise SessionError(f"The file is neither an ITF trace (JSON) nor a replay script (Python): {e.msg} on "
                           f"line {e.lineno}.") from None
    calls: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "take"
                and len(node.args) == 1 and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            calls.append((node.lineno, str(node.args[0].value)))
    if not calls:
        raise SessionError("The replay script takes no step (no walk.take(\"...\") call).")
    return [action for _, action in sorted(calls)], None
