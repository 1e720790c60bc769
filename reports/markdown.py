"""``report.md``: a run as a pull-request comment.

Outcome and statistics first, the properties checked, then per counterexample the step table (the
action and phase of each step, then the model's summary columns, e.g. per partition leader, leader
epoch, replicas, ISR, partition state, replica states, and the live brokers; changed cells in
bold), a Mermaid sequence diagram of the messages between the lanes, and last the violated
property with its evidence. Examples of sometimes properties, coverage and levels follow, folded.

GitHub refuses a comment over 65,536 characters: a longer report is shortened in stages (steps
that change no column of the table are elided, then the per-step change lists, the examples and
the diagrams are left out), and the report says what it left out and where the whole one is.
Every string that comes from a scenario or a model is escaped (:func:`md_text`): Markdown and
HTML special characters cannot format, link or inject anything.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs

from explorer.replay import Trace
from explorer.results import Discovery, ExplorationResult
from reports.common import (
    KIND_WORDS,
    RunFacts,
    code_spans,
    evidence_items,
    ordered_discoveries,
    sequence,
    sometimes_summary,
    step_table,
)

#: GitHub's limit on the body of an issue or pull-request comment, in characters.
GITHUB_COMMENT_LIMIT = 65_536

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")


def md_text(text: str) -> str:
    """``text`` as literal Markdown: HTML characters as entities, Markdown punctuation escaped,
    on one line."""
    text = " ".join(str(text).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def md_code(text: str) -> str:
    """``text`` as an inline code span (a property's registry id), or escaped text if it holds a backtick
    or a character HTML would read."""
    text = " ".join(str(text).split())
    return f"`{text}`" if text and not re.search(r"[`<>&|]", text) else md_text(text)


def mermaid_text(text: str) -> str:
    """``text`` as a Mermaid label: characters Mermaid or HTML would read replaced by entity codes."""
    text = " ".join(str(text).split())
    codes = {"&": "#amp;", "<": "#lt;", ">": "#gt;", '"': "#quot;", ";": "#59;", "#": "#35;", ":": "#58;",
             "`": "#96;", "%": "#37;", "{": "#123;", "}": "#125;"}
    return "".join(codes.get(ch, ch) for ch in text)


@attrs.frozen
class _Detail:
    """How much a rendering holds; each stage leaves out more to fit GitHub's limit."""

    elide_unchanged: bool = False
    changes: bool = True
    examples: bool = True
    diagrams: bool = True
    max_rows: int | None = None


_STAGES = (
    _Detail(),
    _Detail(elide_unchanged=True),
    _Detail(elide_unchanged=True, changes=False),
    _Detail(elide_unchanged=True, changes=False, examples=False),
    _Detail(elide_unchanged=True, changes=False, examples=False, diagrams=False),
    _Detail(elide_unchanged=True, changes=False, examples=False, diagrams=False, max_rows=40),
)


def render_markdown(result: ExplorationResult, traces: Mapping[str, Trace], facts: RunFacts | None = None,
                    limit: int = GITHUB_COMMENT_LIMIT) -> str:
    """The Markdown report, at most ``limit`` characters when the stages of shortening allow."""
    facts = facts or RunFacts()
    text = ""
    for detail in _STAGES:
        text = _render(result, traces, facts, detail)
        if len(text) <= limit:
            return text
    return text[: limit - 200] + "\n\n*(cut at GitHub's comment limit: see report.html in the run directory)*\n"


def _render(result: ExplorationResult, traces: Mapping[str, Trace], facts: RunFacts, detail: _Detail) -> str:
    out: list[str] = []
    out += _header(result, facts)
    notes = _shortening_notes(detail, facts)
    if notes:
        out += ["", f"> {notes}"]
    out += ["", *_properties(result, facts)]
    if summary := sometimes_summary(result, facts):
        out += ["", md_text(summary)]
    for discovery in result.violations:
        out += ["", *_counterexample(discovery, traces.get(discovery.property), facts, detail)]
    examples = [d for d in ordered_discoveries(result) if not d.is_violation]
    if examples and detail.examples:
        out += ["", "### Examples of sometimes properties", ""]
        for discovery in examples:
            out += _example(discovery, traces.get(discovery.property), detail)
    out += ["", *_statistics(result)]
    return "\n".join(out) + "\n"


def _header(result: ExplorationResult, facts: RunFacts) -> list[str]:
    s = result.stats
    scenario = f" — scenario {md_text(facts.scenario_name)}" if facts.scenario_name else ""
    if result.violations:
        what = "violation of " + ", ".join(md_code(d.property) for d in result.violations)
    elif result.outcome.value == "ok":
        what = "no violation"
    elif result.outcome.value == "no_violation_in_sample":
        what = "no violation in the states sampled (not exhaustive)"
    else:
        what = md_text(result.outcome.value)
    lines = [f"## kmc: {what}{scenario}", ""]
    facts_line = [f"**Outcome:** {md_text(result.outcome.value)} (exit code {result.exit_code})",
                  f"engine {md_text(result.engine)}"]
    if facts.kafka_version:
        facts_line.append(f"Kafka {md_text(facts.kafka_version)}")
    if facts.bugs:
        facts_line.append("bug switches " + ", ".join(md_text(b) for b in facts.bugs))
    lines.append(" · ".join(facts_line))
    lines.append("")
    if result.exhaustive:
        lines.append(f"**Statistics:** {s.distinct:,} distinct states, {s.generated:,} states generated, "
                     f"{s.queue:,} left on queue, depth {s.depth}, {s.seconds:.1f} s; fingerprint collision "
                     f"probability {s.collision_probability:.1E}.")
    else:
        lines.append(f"**Statistics:** {s.distinct:,} distinct states visited by walks (not an exhaustive "
                     f"search), {s.generated:,} states generated, longest walk {max(s.depth - 1, 0)} steps, "
                     f"{s.seconds:.1f} s; fingerprint collision probability {s.collision_probability:.1E}.")
    if result.bounds.get("symmetry"):
        lines += ["", f"**Symmetry reduction:** {md_text(str(result.bounds['symmetry']))}: the counts are of orbits, "
                      "one state each; traces are of the unreduced model."]
    if result.reason:
        lines += ["", f"**Stopped:** {md_text(result.reason)}."]
    if facts.scenario_description:
        lines += ["", f"> {md_text(facts.scenario_description)}"]
    return lines


def _shortening_notes(detail: _Detail, facts: RunFacts) -> str:
    left_out = []
    if detail.elide_unchanged:
        left_out.append("steps that change no column of a step table are elided")
    if not detail.changes:
        left_out.append("the per-step lists of changes are left out")
    if not detail.examples:
        left_out.append("the examples of sometimes properties are left out")
    if not detail.diagrams:
        left_out.append("the sequence diagrams are left out")
    if detail.max_rows is not None:
        left_out.append(f"step tables are cut after {detail.max_rows} rows")
    if not left_out:
        return ""
    where = f" ({md_text(facts.run_dir)})" if facts.run_dir else ""
    return ("Shortened to fit GitHub's 65,536-character comment limit: " + "; ".join(left_out) +
            f". The whole report is report.html and report.txt in the run directory{where}.")


def _properties(result: ExplorationResult, facts: RunFacts) -> list[str]:
    found = {d.property: d for d in result.discoveries}
    complete = result.outcome.value == "ok" and result.exhaustive
    names = [p.name for p in facts.properties] or [d.property for d in result.discoveries]
    lines = ["| property | kind | result |", "|---|---|---|"]
    for name in names:
        p = facts.property(name)
        kind = KIND_WORDS.get(p.kind, p.kind) if p else (found[name].kind.value if name in found else "")
        d = found.get(name)
        if d is not None and d.is_violation:
            verdict = f"**violated** ({_steps(d.trace_length)})"
        elif d is not None:
            verdict = f"example found ({_steps(d.trace_length)})"
        elif name in facts.not_applicable:
            verdict = f"not applicable: the scenario enables {md_text(facts.not_applicable[name])}"
        elif name in result.never_found:
            verdict = "**never satisfied** (vacuous?)" if result.exhaustive else "no example in the states visited"
        elif kind.endswith("always"):
            verdict = "holds" if complete else "not violated in the states explored"
        else:
            verdict = "no example in the states explored"
        lines.append(f"| {md_code(name)} | {md_text(kind)} | {verdict} |")
    return lines


def _steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def _counterexample(discovery: Discovery, trace: Trace | None, facts: RunFacts, detail: _Detail) -> list[str]:
    lines = [f"### Counterexample: {md_code(discovery.property)} ({_steps(discovery.trace_length)})", ""]
    known = facts.known_bugs.get(discovery.property)
    if known:
        pieces = (md_code(t) if code else _md_spaced(t) for t, code in code_spans(known))
        lines += ["**Known bug:** " + "".join(pieces), ""]
    if trace is None:
        lines.append("(no trace: the discovery was not replayed)")
    else:
        lines += _step_table(trace, detail, violating=True)
        if detail.changes:
            lines += ["", *_changes(trace)]
        if detail.diagrams:
            lines += ["", *_mermaid(trace)]
    p = facts.property(discovery.property)
    description = f": {md_text(p.description)}" if p and p.description else ""
    lines += ["", f"**Violated:** {md_code(discovery.property)} "
                  f"({md_text(KIND_WORDS.get(discovery.kind.value, discovery.kind.value))}){description}", "",
              "Evidence:", ""]
    lines += [f"- {md_text(k)}: {md_text(v)}" for k, v in evidence_items(discovery)]
    return lines


def _md_spaced(text: str) -> str:
    """``text`` as literal Markdown, keeping a space at either end (it sits between code spans)."""
    return (" " if text[:1].isspace() else "") + md_text(text) + (" " if text[-1:].isspace() and text.strip() else "")


def _example(discovery: Discovery, trace: Trace | None, detail: _Detail) -> list[str]:
    lines = ["<details>", f"<summary>{md_code(discovery.property)}: example in "
                          f"{_steps(discovery.trace_length)}</summary>", ""]
    if trace is not None:
        lines += _step_table(trace, detail, violating=False)
    return [*lines, "", "</details>", ""]


def _step_table(trace: Trace, detail: _Detail, *, violating: bool) -> list[str]:
    table = step_table(trace)
    header = ["#", "action", *(c.title for c in table.columns)]
    lines = ["| " + " | ".join(md_text(h) for h in header) + " |", "|" + "---|" * len(header)]
    elided: list[int] = []
    last = len(table.rows) - 1
    shown = 0

    def flush() -> None:
        if elided:
            span = f"step {elided[0]}" if len(elided) == 1 else f"steps {elided[0]}–{elided[-1]}"
            lines.append(f"| … | *{span}: no change to these columns (elided)* |" + " |" * len(table.columns))
            elided.clear()

    for row in table.rows:
        keep = row.number in (0, last) or row.any_changed or not detail.elide_unchanged
        if not keep:
            elided.append(row.number)
            continue
        flush()
        if detail.max_rows is not None and shown >= detail.max_rows and row.number != last:
            elided.append(row.number)
            continue
        shown += 1
        action = md_text(row.title)
        if row.phase:
            action += f" <br>*{md_text(row.phase)}*"
        action += "".join(f" <br>note: {md_text(note)}" for note in row.notes)
        if violating and row.number == last and row.number > 0:
            action = "⚠ " + action
        cells = [f"**{md_text(c)}**" if changed else md_text(c) for c, changed in zip(row.cells, row.changed,
                                                                                       strict=True)]
        lines.append(f"| {row.number} | {action} | " + " | ".join(cells) + (" |" if cells else "|"))
    flush()
    note = "Cells a step changed are **bold**"
    note += "; ⚠ marks the step the property is violated on." if violating else "."
    return [*lines, "", note]


def _changes(trace: Trace) -> list[str]:
    lines = ["<details>", "<summary>What each step changed</summary>", ""]
    for n, step in enumerate(trace.steps, 1):
        lines.append(f"{n}. {md_text(step.action)}")
        lines += [f"   - {md_text(c)}" for c in step.changes]
    return [*lines, "", "</details>"]


def _mermaid(trace: Trace) -> list[str]:
    lanes, steps = sequence(trace)
    if not lanes:
        return []
    alias = {lane["id"]: f"P{i}" for i, lane in enumerate(lanes)}
    lines = ["```mermaid", "sequenceDiagram"]
    lines += [f"    participant {alias[lane['id']]} as {mermaid_text(lane['title'])}" for lane in lanes]
    first, last_lane = alias[lanes[0]["id"]], alias[lanes[-1]["id"]]
    for step in steps:
        violating = step.number == len(steps)
        if violating:
            lines.append("    rect rgb(255, 228, 228)")
        indent = "        " if violating else "    "
        lines.append(f"{indent}Note over {first},{last_lane}: {step.number}. {mermaid_text(step.title)}")
        for m in step.messages:
            source, target = alias[m["from"]], alias[m["to"]]
            if source == target:
                lines.append(f"{indent}Note over {source}: {mermaid_text(m['label'])}")
            else:
                arrow = "-->>" if m.get("kind") in ("response", "watch") else "->>"
                lines.append(f"{indent}{source}{arrow}{target}: {mermaid_text(m['label'])}")
        if violating:
            lines.append("    end")
    return [*lines, "```"]


def _statistics(result: ExplorationResult) -> list[str]:
    lines = ["<details>", "<summary>Per-action coverage and states per level</summary>", "",
             "| action | distinct | generated |", "|---|---:|---:|"]
    lines += [f"| {md_text(a.name)} | {a.distinct:,} | {a.generated:,} |" for a in result.stats.actions]
    lines += ["", "| depth | frontier | generated | new | distinct |", "|---:|---:|---:|---:|---:|"]
    lines += [f"| {lv.depth} | {lv.frontier:,} | {lv.generated:,} | {lv.new:,} | {lv.distinct_total:,} |"
              for lv in result.stats.levels]
    return [*lines, "", "</details>"]
