"""``<property>.itf.json``: a counterexample in Apalache's Informal Trace Format (ITF).

ITF (https://apalache-mc.org/docs/adr/015adr-trace.html) is what Apalache and Quint write and what
their trace viewers and test generators read. The file is written and read back with the
maintained library ``itf-py`` (:func:`itf_py.trace_to_json`, :func:`itf_py.trace_from_json`), not by
hand. Each state's variables are the tables of the model's view of it: a table is a map from row
key to a record of its cells (absent cells are left out of the record; numbers are ITF big
integers, lists sequences, mappings maps); a model without a view gives one variable,
``description``, with the lines describing the state or the step. Each state's ``#meta`` names
the action that reached it (``index``, ``action``, ``title``, ``fingerprint``).
"""

from __future__ import annotations

import json
import types
from collections.abc import Mapping
from typing import Any

import itf_py

from explorer.replay import Trace
from explorer.results import Discovery
from reports.common import RunFacts

FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"


def itf_trace(discovery: Discovery | None, trace: Trace, facts: RunFacts, engine: str) -> itf_py.Trace:
    """The counterexample of ``discovery`` as an ``itf_py.Trace``; a path that is no counterexample (one
    taken by hand in ``kmc ui``) when ``discovery`` is None."""
    views = [trace.initial_view, *(s.view for s in trace.steps)]
    with_tables = all(view.get("tables") for view in views)
    table_ids = [t["id"] for t in trace.initial_view.get("tables", ())] if with_tables else []
    variables = table_ids or ["description"]
    states = []
    for index, view in enumerate(views):
        step = trace.steps[index - 1] if index else None
        meta: dict[str, Any] = {
            "index": index,
            "action": "initial state" if step is None else step.action,
            "title": "initial state" if step is None else str(view.get("title") or step.action),
            "fingerprint": str(trace.initial_fingerprint if step is None else step.fingerprint),
        }
        if with_tables:
            tables = {t["id"]: t for t in view.get("tables", ())}
            values: dict[str, Any] = {tid: _table_value(tables.get(tid)) for tid in table_ids}
        else:
            values = {"description": list(trace.initial if step is None else step.changes)}
        states.append(itf_py.State(meta=meta, values=values))
    meta = {
        "format": "ITF",
        "format-description": FORMAT_DESCRIPTION,
        "source": facts.scenario_name or "kmc",
    }
    if discovery is None:
        meta["description"] = f"kmc ({engine}): a path of {len(trace.steps)} steps"
    else:
        meta.update({
            "description": f"kmc ({engine} engine): {discovery.kind.value} property {discovery.property} "
                           f"violated in {discovery.trace_length} steps",
            "property": discovery.property,
            "evidence": json.dumps(discovery.evidence, sort_keys=True, default=str),
        })
    return itf_py.Trace(meta=meta, params=[], vars=variables, states=states, loop=None)


def render_itf(discovery: Discovery | None, trace: Trace, facts: RunFacts, engine: str) -> str:
    """The ITF file's text."""
    return json.dumps(itf_py.trace_to_json(itf_trace(discovery, trace, facts, engine)), indent=1) + "\n"


def read_itf(text: str) -> itf_py.Trace:
    """An ITF file read back with ``itf-py``."""
    return itf_py.trace_from_json(json.loads(text))


def _table_value(table: Mapping[str, Any] | None) -> dict[str, Any]:
    if table is None:
        return {}
    return {row["key"]: types.SimpleNamespace(**{k: _value(v) for k, v in row.get("cells", {}).items()
                                                 if v is not None})
            for row in table.get("rows", ())}


def _value(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _value(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_value(v) for v in value]
    return value
