"""What every renderer of a run shares: the facts a run's files record, cell formatting, the step table.

Renderers read an :class:`~explorer.results.ExplorationResult`, the replayed traces of its
discoveries (each step with the model's :data:`~explorer.contract.StateView`) and the run's
:class:`RunFacts` (scenario, properties checked, how to rebuild the model): never the model
itself, so that ``kmc report`` re-renders a bundle from its ``summary.json`` alone. The step table
flattens a trace's *summary* tables (one column per row key and column, e.g. ``t-0 leader``) and
marks the cells a step changed; nothing here knows what a partition or a broker is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from explorer.replay import Trace
from explorer.results import Discovery, ExplorationResult

ABSENT = "–"
EMPTY = "(none)"

KIND_WORDS = {
    "always": "always",
    "action_always": "action always",
    "sometimes": "sometimes",
    "action_sometimes": "action sometimes",
}


def printable(text: str, keep: str = "") -> str:
    """``text`` with every control or other unprintable character (but those in ``keep``) written as
    its escape (``\\x1b``): free text read back from a run's files (a scenario's description, names)
    reaches terminals and reports, where an escape sequence could clear the screen or forge a line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else c.encode("unicode_escape").decode("ascii") for c in text)


@attrs.frozen
class PropertyFacts:
    name: str
    kind: str  # a PropertyKind value
    description: str


@attrs.frozen
class RunFacts:
    """What a run's reports say besides the result: read from ``summary.json``'s top-level fields."""

    scenario_name: str = ""
    scenario_description: str = ""
    kafka_version: str = ""
    bugs: tuple[str, ...] = ()
    properties: tuple[PropertyFacts, ...] = ()
    run_dir: str = ""
    #: How a replay script rebuilds the model: ``{"module", "name", "argument"}`` (a
    #: :class:`~explorer.contract.ModelFactory` as text), or empty when the run has none.
    model_factory: Mapping[str, Any] = attrs.field(factory=dict)
    #: Violated property -> the sentence naming the enabled bug switch that breaks it (``known_bugs``).
    known_bugs: Mapping[str, str] = attrs.field(factory=dict)
    #: Property -> why the scenario gives it nothing to check (``not_applicable``: no racks, no reassignment).
    not_applicable: Mapping[str, str] = attrs.field(factory=dict)

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> RunFacts:
        scenario = document.get("scenario") or {}
        if not isinstance(scenario, Mapping):
            scenario = {"name": str(scenario)}
        return cls(
            scenario_name=printable(str(scenario.get("name", ""))),
            scenario_description=printable(str(scenario.get("description", "")), keep="\n"),
            kafka_version=printable(str(scenario.get("kafka_version", ""))),
            bugs=tuple(printable(str(b)) for b in scenario.get("bugs", ())),
            properties=tuple(PropertyFacts(printable(p["name"]), p["kind"], printable(str(p.get("description", ""))))
                             for p in document.get("properties") or ()),
            run_dir=printable(str(document.get("run_dir") or "")),
            model_factory=document.get("model_factory") or {},
            known_bugs=_known_bug_sentences(document.get("known_bugs")),
            not_applicable=_text_map(document.get("not_applicable")),
        )

    def property(self, name: str) -> PropertyFacts | None:
        return next((p for p in self.properties if p.name == name), None)


def _known_bug_sentences(known: Any) -> dict[str, str]:
    if not isinstance(known, Mapping):
        return {}
    return {str(name): str(note["sentence"]) for name, note in known.items()
            if isinstance(note, Mapping) and isinstance(note.get("sentence"), str)}


def _text_map(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, str)}


def sometimes_summary(result: ExplorationResult, facts: RunFacts) -> str:
    """The sometimes properties in one sentence: "5 witnessed, 9 not applicable: the scenario enables no
    reassignment, …; 1 never satisfied (the scenario may be vacuous for it): sometimes_x"."""
    names = [name for name, kind in result.properties if not kind.is_violation]
    if not names:
        return ""
    witnessed = {d.property for d in result.discoveries if not d.is_violation}
    inapplicable = [n for n in names if n not in witnessed and n in facts.not_applicable]
    missing = [n for n in names if n not in witnessed and n not in facts.not_applicable]
    parts = [f"{len([n for n in names if n in witnessed])} witnessed"]
    if inapplicable:
        reasons = list(dict.fromkeys(facts.not_applicable[n] for n in inapplicable))
        parts.append(f"{len(inapplicable)} not applicable: the scenario enables {', '.join(reasons)}")
    if missing:
        if not result.exhaustive:
            what = "not satisfied in the states the walks visited"
        elif result.outcome.value == "ok" or result.never_found:
            what = "never satisfied (the scenario may be vacuous for them)"
        else:
            what = "without an example so far (the search stopped first)"
        parts.append(f"{len(missing)} {what}: {', '.join(missing)}")
    return f"Sometimes properties: {'; '.join(parts)}."


def code_spans(sentence: str) -> list[tuple[str, bool]]:
    """``sentence`` cut at its backticks: (text, is code) pieces, for renderers that set code apart."""
    return [(piece, index % 2 == 1) for index, piece in enumerate(sentence.split("`")) if piece]


def ordered_discoveries(result: ExplorationResult) -> list[Discovery]:
    """Violations first (what the reader came for), then the examples of sometimes properties."""
    return [*result.violations, *(d for d in result.discoveries if not d.is_violation)]


def file_stem(name: str) -> str:
    """A property name as it can appear in a file name (the registry's snake_case ids pass unchanged)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "property"


def itf_file_name(property_name: str) -> str:
    return f"{file_stem(property_name)}.itf.json"


def replay_file_name(property_name: str) -> str:
    return f"replay_{file_stem(property_name)}.py"


def format_value(value: Any) -> str:
    """A cell or evidence value as a reader writes it: lists of numbers as ``[0, 1]``, other lists
    joined by ``; ``, mappings as ``k: v, k: v``, None as a dash, booleans as yes/no."""
    if value is None:
        return ABSENT
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float | str):
        return str(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {format_value(v)}" for k, v in value.items()) if value else EMPTY
    if isinstance(value, Iterable):
        items = list(value)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            return "[" + ", ".join(str(v) for v in items) + "]"
        return "; ".join(format_value(v) for v in items) if items else EMPTY
    return str(value)


@attrs.frozen
class Column:
    table: str
    row: str
    column: str
    title: str
    summary: bool = True  # False: a column of a detail table, shown because a step changes it

    @property
    def short_title(self) -> str:
        """The title without the row key, for a table of the column's group."""
        return self.title[len(self.row) + 1:] if self.row and self.title.startswith(self.row + " ") else self.title

    @property
    def group(self) -> str:
        """The row key the column belongs to (a partition, a broker), or its table's id for one-row tables."""
        return self.row or self.table


@attrs.frozen
class StepRow:
    """One row of a step table: step 0 is the initial state."""

    number: int
    action: str
    title: str
    phase: str
    cells: tuple[str, ...]
    changed: tuple[bool, ...]
    notes: tuple[str, ...] = ()  # one line each on a value that needs explaining (the view's notes)

    @property
    def any_changed(self) -> bool:
        return any(self.changed)


@attrs.frozen
class StepTable:
    columns: tuple[Column, ...]
    rows: tuple[StepRow, ...]

    def groups(self, width: int = 8) -> list[tuple[str, list[int]]]:
        """The column indices by group (a partition, the cluster, a broker, the controller), in column order,
        neighbouring groups joined while they hold at most ``width`` columns: tables that read without
        scrolling sideways, however many partitions the scenario has."""
        groups: dict[str, list[int]] = {}
        for index, column in enumerate(self.columns):
            groups.setdefault(column.group, []).append(index)
        joined: list[tuple[str, list[int]]] = []
        for name, indices in groups.items():
            if joined and len(joined[-1][1]) + len(indices) <= width:
                joined[-1] = (f"{joined[-1][0]} · {name}", joined[-1][1] + indices)
            else:
                joined.append((name, indices))
        return joined


def step_title(action: str, view: Mapping[str, Any]) -> str:
    return str(view.get("title") or action)


def step_notes(view: Mapping[str, Any]) -> tuple[str, ...]:
    """The view's one-line notes on the step's values that need explaining (leader -1, ...)."""
    return tuple(str(note) for note in view.get("notes", ()))


def deliveries(steps: Sequence[SequenceStep]) -> dict[tuple[int, int], tuple[int, int]]:
    """Which later message takes off its queue what a message put on it: (step number, message index)
    of a message with ``queued`` -> those of the first later message with the same item as
    ``dequeued``. Queues are first in, first out, so the earliest unmatched one of equal items is
    the one taken."""
    waiting: dict[str, list[tuple[int, int]]] = {}
    joined: dict[tuple[int, int], tuple[int, int]] = {}
    for step in steps:
        for index, message in enumerate(step.messages):
            item = message.get("dequeued")
            if item and waiting.get(item):
                joined[waiting[item].pop(0)] = (step.number, index)
        for index, message in enumerate(step.messages):
            item = message.get("queued")
            if item:
                waiting.setdefault(item, []).append((step.number, index))
    return joined


def step_table(trace: Trace) -> StepTable:
    """The trace's summary tables flattened into one row per state (initial state first), followed by
    the columns of its other tables that some step changes (a controller's event queue, the requests
    waiting for a broker: where a race between an event and a stale response shows)."""
    views: list[Mapping[str, Any]] = [trace.initial_view, *(s.view for s in trace.steps)]
    columns: list[Column] = []
    seen: set[tuple[str, str, str]] = set()
    for summary in (True, False):
        for view in views:
            for table in view_tables(view):
                if bool(table.get("summary")) != summary:
                    continue
                for row in table.get("rows", ()):
                    for column in table.get("columns", ()):
                        key = (table["id"], row["key"], column["id"])
                        if key not in seen:
                            seen.add(key)
                            title = f"{row['key']} {column['title']}" if row["key"] else column["title"]
                            columns.append(Column(table["id"], row["key"], column["id"], title, summary))
    all_values = [_cells(view) for view in views]
    columns = [c for c in columns if c.summary or len({format_value(v.get((c.table, c.row, c.column)))
                                                        for v in all_values}) > 1]
    rows: list[StepRow] = []
    previous: tuple[str, ...] | None = None
    actions = ["initial state", *(s.action for s in trace.steps)]
    for number, (values, view, action) in enumerate(zip(all_values, views, actions, strict=True)):
        cells = tuple(format_value(values.get((c.table, c.row, c.column))) for c in columns)
        changed = tuple(False for _ in cells) if previous is None else tuple(
            a != b for a, b in zip(cells, previous, strict=True))
        title = "initial state" if number == 0 else step_title(action, view)
        rows.append(StepRow(number, action, title, str(view.get("phase") or ""), cells, changed,
                            step_notes(view)))
        previous = cells
    return StepTable(tuple(columns), tuple(rows))


def _cells(view: Mapping[str, Any]) -> dict[tuple[str, str, str], Any]:
    out: dict[tuple[str, str, str], Any] = {}
    for table in view_tables(view):
        for row in table.get("rows", ()):
            for column_id, value in row.get("cells", {}).items():
                out[(table["id"], row["key"], column_id)] = value
    return out


def view_tables(view: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    return list(view.get("tables", ()))


def table_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """Lines ``<table> <row> <column>: old -> new`` for every cell of every table that differs."""
    def cells(view: Mapping[str, Any]) -> dict[tuple[str, str, str], tuple[str, Any]]:
        out = {}
        for table in view_tables(view):
            titles = {c["id"]: c["title"] for c in table.get("columns", ())}
            for row in table.get("rows", ()):
                for column_id, value in row.get("cells", {}).items():
                    label = " ".join(x for x in (row["key"] or table["title"], titles.get(column_id, column_id)) if x)
                    out[(table["id"], row["key"], column_id)] = (label, value)
        return out

    a, b = cells(before), cells(after)
    lines = []
    for key in [*a, *(k for k in b if k not in a)]:
        old, new = a.get(key), b.get(key)
        old_text = format_value(old[1]) if old else ABSENT
        new_text = format_value(new[1]) if new else ABSENT
        if old_text != new_text:
            label = (new or old)[0]  # type: ignore[index]
            lines.append(f"{label}: {old_text} -> {new_text}")
    return lines


@attrs.frozen
class SequenceStep:
    number: int
    title: str
    messages: tuple[Mapping[str, str], ...]


def sequence(trace: Trace) -> tuple[list[Mapping[str, str]], list[SequenceStep]]:
    """The lanes the model declares and, per step, its messages between them (for sequence diagrams)."""
    lanes: list[Mapping[str, str]] = []
    ids: set[str] = set()
    for view in [trace.initial_view, *(s.view for s in trace.steps)]:
        for lane in view.get("lanes", ()):
            if lane["id"] not in ids:
                ids.add(lane["id"])
                lanes.append(lane)
    steps = [SequenceStep(n, step_title(s.action, s.view),
                          tuple(m for m in s.view.get("messages", ()) if m["from"] in ids and m["to"] in ids))
             for n, s in enumerate(trace.steps, 1)]
    return lanes, steps


def evidence_items(discovery: Discovery) -> list[tuple[str, str]]:
    return [(str(k), format_value(v)) for k, v in discovery.evidence.items()]
