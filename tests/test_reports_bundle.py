"""A run's bundle: every file rendered from summary.json, the ITF round trip through itf-py, the
replay script, escaping of hostile scenario strings, GitHub's comment limit, and ``kmc report``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import itf_py
import pytest
from click.testing import CliRunner, Result
from reports_fixtures import document_of_toml, shipped_document
from toy_models.kafka_controller_toy import MC_STUCK, KafkaControllerToy

from explorer.bfs import run_bfs
from explorer.replay import ReplayError, Walk, replay
from kmc import compose
from kmc.cli import main
from reports.bundle import BundleError, bundle_files, load_document
from reports.itf import read_itf
from reports.json_report import render_json
from reports.markdown import md_text, mermaid_text, render_markdown

ROOT = Path(__file__).resolve().parent.parent
PROPERTY = "deletion_completes_only_when_all_replicas_succeeded"


def kmc(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def planted() -> dict[str, Any]:
    return shipped_document("planted-complete-on-first-success")


def test_bundle_lists_its_files_and_renders_each(planted: dict[str, Any]) -> None:
    """The bundle of a violation holds summary.json (listing every file), the three reports, one ITF trace
    and one replay script, and the listing names exactly the files rendered."""
    files = bundle_files(planted)
    assert set(files) == {"summary.json", "report.txt", "report.md", "report.html", f"{PROPERTY}.itf.json",
                          f"replay_{PROPERTY}.py"}
    assert json.loads(files["summary.json"])["files"] == sorted(files)


def test_itf_round_trips_through_itf_py(planted: dict[str, Any]) -> None:
    """The ITF file reads back with itf-py into one state per trace state, each #meta naming its action,
    the variables the view's tables with typed values, and writes back to the same JSON."""
    text = bundle_files(planted, ("itf",))[f"{PROPERTY}.itf.json"]
    trace = read_itf(text)
    assert itf_py.trace_to_json(trace) == json.loads(text)
    _, traces, _ = load_document(planted)
    replayed = traces[PROPERTY]
    assert len(trace.states) == len(replayed.steps) + 1
    assert [s.meta["action"] for s in trace.states] == ["initial state", *(s.action for s in replayed.steps)]
    assert [s.meta["index"] for s in trace.states] == list(range(len(trace.states)))
    assert trace.vars == ["partitions", "cluster", "brokers", "controller"]
    first = trace.states[0].values["partitions"]["t-0"]
    assert (first.leader, first.leader_epoch, list(first.isr), list(first.replicas)) == (0, 0, [0, 1], [0, 1])
    assert dict(first.replica_states) == {"0": "OnlineReplica", "1": "OnlineReplica"}
    last = trace.states[-1].values["partitions"]["t-0"]
    assert not hasattr(last, "leader")  # the deleted partition's znode is gone: absent cells are left out
    # ... while the broker whose response did not complete the deletion still holds its log: the violation (which
    # of the two brokers answers first in the shortest trace is BFS's tie-break, which follows the encoding)
    assert len(list(last.logs_on)) == 1


def test_replay_script_rebuilds_the_trace_and_asserts_the_violation(planted: dict[str, Any], tmp_path: Path) -> None:
    """The replay script runs on its own (kmc on the path), takes every step by name and exits 0 after
    finding the violation's evidence."""
    script = tmp_path / f"replay_{PROPERTY}.py"
    script.write_text(bundle_files(planted, ("replay",))[script.name], encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"{PROPERTY} violated after 5 steps:")


def test_walk_refuses_an_action_that_is_not_enabled() -> None:
    """A replay step naming an action the model does not offer fails with the enabled actions listed."""
    walk = Walk(compose.model_for(compose.resolve_scenario("planted-complete-on-first-success")))
    with pytest.raises(ReplayError, match=r"BrokerStartup\(broker=0\) is not enabled \(enabled: .*AdminDeleteTopic"):
        walk.take("BrokerStartup(broker=0)")


HOSTILE = """
name = "<script>alert('name')</script>"
description = "<script>alert(1)</script> **bold** [click](javascript:alert(2)) | cell ` <img src=x onerror=alert(3)>"

[cluster]
brokers = [{ id = 0, rack = "<b onmouseover=alert(4)>r1</b>" }, { id = 1, rack = "r2|x" }]

[[topics]]
name = "t"
replicas = [[0, 1]]
deleted_by_admin = true

[bugs]
PLANTED_COMPLETE_DELETION_ON_FIRST_SUCCESS = true
"""


def test_hostile_scenario_strings_are_escaped_in_html_and_markdown() -> None:
    """A scenario whose name, description and racks carry HTML, Markdown links and table pipes reaches the
    reports only as text: no tag, link or extra table cell comes through."""
    files = bundle_files(document_of_toml(HOSTILE))
    html, md = files["report.html"], files["report.md"]
    for text in (html, md):
        assert "<script" not in text and "<img" not in text and "<b " not in text
    assert not re.search(r"(?<!\\)\]\(", md)  # a Markdown link needs an unescaped "]("
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b onmouseover=alert(4)&gt;r1&lt;/b&gt;" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in md and "\\[click\\]" in md and "\\| cell" in md
    assert "\\*\\*bold\\*\\*" in md
    script = files[f"replay_{PROPERTY}.py"]
    compile(script, "replay.py", "exec")  # the TOML text is a literal, not code


def test_markdown_and_mermaid_escaping() -> None:
    """Markdown text escapes HTML and Markdown punctuation; Mermaid labels replace their own special characters."""
    assert md_text("a|b <i>x</i> *y* [z](u)") == "a\\|b &lt;i&gt;x&lt;/i&gt; \\*y\\* \\[z\\](u)"
    assert mermaid_text('t-0: a<b>; "c" #d') == "t-0#58; a#lt;b#gt;#59; #quot;c#quot; #35;d"


def test_markdown_fits_githubs_limit_by_eliding_and_says_so() -> None:
    """A report too long for the limit elides steps that change no column and states what it left out."""
    document = shipped_document("stale-deletion-response")
    result, traces, facts = load_document(document)
    whole = render_markdown(result, traces, facts)
    limit = len(whole) - 1
    short = render_markdown(result, traces, facts, limit=limit)
    assert len(short) <= limit
    assert "Shortened to fit GitHub's 65,536-character comment limit" in short
    assert "no change to these columns (elided)" in short or "left out" in short
    assert len(render_markdown(result, traces, facts, limit=8_000)) <= 8_000


def test_html_is_self_contained() -> None:
    """report.html fetches nothing: no script, no external stylesheet, image or font, only inline SVG."""
    html = bundle_files(shipped_document("stale-deletion-response"), ("html",))["report.html"]
    assert "<script" not in html.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "url(http" not in html
    assert html.count("<svg") == 2  # the sequence diagram and the per-level chart


def test_a_model_without_a_view_still_gets_every_report() -> None:
    """A model that does not implement the optional state_view (the toy controller) gets step titles from its
    action descriptions, an ITF trace of its description lines and no diagram."""
    model = KafkaControllerToy(MC_STUCK)
    result = run_bfs(model)
    traces = {d.property: replay(model, d) for d in result.discoveries}
    files = bundle_files(render_json(result, traces))
    [itf_name] = [n for n in files if n.endswith(".itf.json")]
    assert read_itf(files[itf_name]).vars == ["description"]
    assert "sequenceDiagram" not in files["report.md"]
    assert "Step 1: " in files["report.txt"]
    assert not any(n.startswith("replay_") for n in files)  # no model factory: no replay script


def test_kmc_report_rerenders_a_bundle_byte_for_byte(tmp_path: Path) -> None:
    """kmc report rewrites the files of a run directory from summary.json with the same bytes; --open prints
    the path of report.html; --format md writes only report.md."""
    explored = kmc("explore", "planted-complete-on-first-success", "--engine", "local", "--out", str(tmp_path))
    assert explored.exit_code == 1, explored.stderr
    [run_dir] = tmp_path.iterdir()
    listed = set(json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))["files"])
    run_state = {"run.json", "scenario.toml", "manifest.json"}  # what --resume reads, not reports (no .lock)
    assert {p.name for p in run_dir.iterdir()} == listed | run_state
    before = {name: (run_dir / name).read_bytes() for name in listed}
    for name in listed - {"summary.json"}:
        (run_dir / name).unlink()
    result = kmc("report", str(run_dir))
    assert result.exit_code == 0, result.stderr
    assert {name: (run_dir / name).read_bytes() for name in listed} == before
    result = kmc("report", str(run_dir), "--format", "md", "--open")
    assert result.stdout.splitlines() == [str(run_dir / "report.md"), str((run_dir / "report.html").resolve())]


def test_kmc_report_refuses_what_is_not_a_bundle(tmp_path: Path) -> None:
    """A directory without summary.json, or with one of another schema version, is bad input (exit 2, one line)."""
    result = kmc("report", str(tmp_path))
    assert result.exit_code == 2 and "has no summary.json" in result.stderr
    (tmp_path / "summary.json").write_text(json.dumps({"schema_version": 1}), encoding="utf-8")
    result = kmc("report", str(tmp_path))
    assert result.exit_code == 2 and "schema version 1" in result.stderr
    with pytest.raises(BundleError, match="lacks or garbles"):
        load_document({"schema_version": 2})
    # Found by the slow fuzz of run files: discoveries that are not a list of objects were read before the check.
    for discoveries in (False, "text", {"property": "p"}, [{"violation": True, "trace": [], "property": 1}],
                        [{"violation": True, "trace": [{}]}]):
        (tmp_path / "summary.json").write_text(json.dumps({"schema_version": 2, "discoveries": discoveries}),
                                               encoding="utf-8")
        result = kmc("report", str(tmp_path))
        assert result.exit_code == 2 and "lacks or garbles" in result.stderr, (discoveries, result.stderr)


def test_explore_prints_whole_states_unless_difftrace(tmp_path: Path) -> None:
    """The printed trace shows the state's summary rows after each step; with --difftrace only the changes."""
    full = kmc("explore", "planted-complete-on-first-success", "--engine", "local", "--out", str(tmp_path))
    diff = kmc("explore", "planted-complete-on-first-success", "--engine", "local", "--out", str(tmp_path),
               "--difftrace", "--no-progress")
    assert (full.exit_code, diff.exit_code) == (1, 1)
    assert "  | t-0: leader = " in full.stdout and "  | t-0: leader = " not in diff.stdout
    step5 = "Step 5: ControllerProcessEvent: Controller processes TopicDeletionStopReplicaResponseReceived(broker "
    assert step5 in full.stdout and step5 in diff.stdout
    assert "  zk /admin/delete_topics -= [t]" in diff.stdout


WITH_EXAMPLE = """
[cluster]
brokers = [{ id = 0 }, { id = 1 }, { id = 2 }]

[[topics]]
name = "t"
replicas = [[0, 1]]
deleted_by_admin = true

[check]
properties = ["sometimes_deletion_completes", "deletion_completes_only_when_all_replicas_succeeded"]

[bugs]
PLANTED_COMPLETE_DELETION_ON_FIRST_SUCCESS = true
"""


def test_reports_put_violations_before_examples() -> None:
    """An example of a sometimes property found before the violation is reported after it, in text and HTML."""
    document = document_of_toml(WITH_EXAMPLE)
    assert [d["violation"] for d in document["discoveries"]] == [False, True]  # the search found the example first
    files = bundle_files(document, ("text", "html"))
    text, html = files["report.txt"], files["report.html"]
    assert text.index(f"Error: Action property {PROPERTY} is violated.") < text.index(
        "Example found for action sometimes property sometimes_deletion_completes.")
    assert html.index(f"Counterexample: <code>{PROPERTY}</code>") < html.index("Examples of sometimes properties")


def _view(document: dict[str, Any]) -> dict[str, Any]:
    return document["discoveries"][0]["trace"][0]["view"]


NESTED_DAMAGES = {
    "a column id that is a number": lambda d: _view(d)["tables"][0]["columns"][0].update(id=1),
    "lanes that are text": lambda d: _view(d).update(lanes="controller"),
    "a message without its label": lambda d: _view(d)["messages"][0].pop("label"),
    "a log line that is a list": lambda d: _view(d).update(log=[{"logger": "controller.log", "line": []}]),
    "a float cell": lambda d: _view(d)["tables"][0]["rows"][0]["cells"].update(leader=1.5),
    "a null inside a list cell": lambda d: _view(d)["tables"][0]["rows"][0]["cells"].update(replicas=[None]),
    "a row that is a list": lambda d: _view(d)["tables"][0]["rows"].__setitem__(0, []),
    "an initial view with an empty table": lambda d: d["discoveries"][0]["initial_view"].update(tables=[{}]),
    "a view that is a list": lambda d: d["discoveries"][0]["trace"][0].update(view=[1]),
}


@pytest.mark.parametrize("damage", list(NESTED_DAMAGES))
@pytest.mark.parametrize("fmt", ["text", "html", "itf"])
def test_kmc_report_refuses_nested_trace_views_of_the_wrong_type(damage: str, fmt: str, planted: dict[str, Any],
                                                                 tmp_path: Path) -> None:
    """A summary.json whose trace views hold a field of the wrong type (24 of 300 fuzzed summaries crashed a
    renderer, exit 4; a float cell crashed --format itf) is refused in one sentence naming the field, exit 2."""
    import copy

    document = copy.deepcopy(planted)
    NESTED_DAMAGES[damage](document)
    (tmp_path / "summary.json").write_text(json.dumps(document), encoding="utf-8")
    result = kmc("report", str(tmp_path), "--format", fmt)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert "lacks or garbles" in result.stderr and len(result.stderr.strip().splitlines()) == 1
