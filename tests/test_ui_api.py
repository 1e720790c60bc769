"""``kmc ui``'s JSON API (kmc/ui/server.py over kmc/ui/session.py), driven through Flask's test client: moving
along a path, taking actions and branching, every property's verdict with its evidence, a bounded BFS from
the cursor, saving a path and loading it back, bad requests answered with one sentence, and the command's
refusals. The two-counter toy model (no state view) shows the page needs only the model contract; the
Kafka model shows the state views, the actors and a run directory's counterexample."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient
from toy_models.counter import Counter

from explorer.contract import Property, PropertyKind
from kmc import compose
from kmc.cli import main
from kmc.outputs import model_facts
from kmc.ui.server import create_app
from kmc.ui.session import Session
from reports.common import RunFacts

ROOT = Path(__file__).resolve().parent.parent


def counter_client(**kwargs: Any) -> FlaskClient:
    return create_app(Session(Counter(**kwargs), RunFacts(scenario_name="counter"), "counter")).test_client()


def kafka_session(scenario: str, paths: Any = ()) -> Session:
    model = compose.model_for(compose.resolve_scenario(scenario))
    return Session(model, RunFacts.from_document({"scenario": {"name": scenario}, **model_facts(model)}), scenario,
                   paths)


def post(client: FlaskClient, url: str, body: Any) -> dict[str, Any]:
    response = client.post(url, json=body)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def take(client: FlaskClient, state: dict[str, Any], description: str) -> dict[str, Any]:
    index = next(a["index"] for g in state["actions"] for a in g["actions"] if a["description"] == description)
    return post(client, "/api/take", {"index": index})


def verdict(state: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in state["properties"] if p["name"] == name)


def test_page_is_one_self_contained_file() -> None:
    """The page is served with a CSP allowing only its own inline script and style and calls to its own
    server, and names no other host."""
    response = counter_client().get("/")
    assert response.status_code == 200
    assert "default-src 'none'" in response.headers["Content-Security-Policy"]
    page = response.get_data(as_text=True)
    assert "<script>" in page and "svg .lane" in page  # the diagrams' CSS is inlined
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page


def test_taking_actions_extends_the_path_and_back_and_forward_move_along_it() -> None:
    """Taking IncX twice gives a path of two steps; back and forward move the cursor without changing it."""
    client = counter_client(n=2)
    state = client.get("/api/state").get_json()
    assert (state["path"], state["step"]) == (1, 0)
    assert [g["actor"] for g in state["actions"]] == ["IncX", "IncY"]  # no action_actor: grouped by family
    assert state["current"]["description"] == ["x = 0", "y = 0"]  # no state view: the model's own lines
    state = take(client, state, "IncX")
    state = take(client, state, "IncX")
    assert [s["action"] for s in state["trace"]] == ["", "IncX", "IncX"]
    assert state["current"]["changes"] == ["x: 1 -> 2"]
    assert [g["actor"] for g in state["actions"]] == ["IncY"]  # x is at n
    state = post(client, "/api/goto", {"path": 1, "step": 1})
    assert state["step"] == 1 and len(state["trace"]) == 3
    assert [a["on_path"] for g in state["actions"] for a in g["actions"]] == [True, False]
    state = post(client, "/api/goto", {"path": 1, "step": 2})
    assert state["step"] == 2


def test_another_action_at_an_earlier_step_branches_into_a_new_path() -> None:
    """At step 1 of IncX, IncX, taking IncY makes path 2 (IncX, IncY) and leaves path 1 as it was; taking the
    action the path already takes follows it instead."""
    client = counter_client(n=2)
    state = take(client, take(client, client.get("/api/state").get_json(), "IncX"), "IncX")
    state = post(client, "/api/goto", {"path": 1, "step": 1})
    followed = take(client, state, "IncX")
    assert (followed["path"], followed["step"], len(followed["paths"])) == (1, 2, 1)
    state = take(client, post(client, "/api/goto", {"path": 1, "step": 1}), "IncY")
    assert (state["path"], state["step"]) == (2, 2)
    assert [p["steps"] for p in state["paths"]] == [2, 2]
    assert [s["action"] for s in state["trace"]] == ["", "IncX", "IncY"]
    assert post(client, "/api/goto", {"path": 1, "step": 2})["trace"][2]["action"] == "IncX"


def test_every_property_has_a_verdict_at_the_cursor_with_its_evidence() -> None:
    """An always property is violated with its evidence at the step that breaks it and holds one step back;
    a transition property is judged on the step into the cursor; a sometimes property says whether this
    path satisfied it."""
    client = counter_client(n=2, sum_limit=2, inc_x_y_limit=1)
    state = client.get("/api/state").get_json()
    assert verdict(state, "inc_x_while_y_below_limit")["note"] == "no step taken yet"
    state = take(client, take(client, state, "IncX"), "IncX")
    sum_below = verdict(state, "sum_below_limit")
    assert sum_below["verdict"] == "violated"
    assert ["limit", "2"] in sum_below["evidence"]
    assert verdict(state, "x_reaches_n")["verdict"] == "satisfied"
    state = post(client, "/api/goto", {"path": 1, "step": 1})
    assert verdict(state, "sum_below_limit")["verdict"] == "holds"
    assert verdict(state, "sum_below_limit")["evidence"] == []
    assert verdict(state, "x_reaches_n")["verdict"] == "not yet"
    state = post(client, "/api/goto", {"path": 1, "step": 2})
    state = take(client, state, "IncY")
    assert verdict(state, "x_reaches_n")["verdict"] == "satisfied"
    assert verdict(state, "sum_below_limit")["verdict"] == "violated"
    state = take(client, post(client, "/api/goto", {"path": 1, "step": 0}), "IncY")
    state = take(client, state, "IncX")
    assert verdict(state, "inc_x_while_y_below_limit")["verdict"] == "violated"
    state = take(client, post(client, "/api/goto", {"path": state["path"], "step": 1}), "IncY")
    assert verdict(state, "inc_x_while_y_below_limit")["verdict"] == "holds"


class CounterPassingOne(Counter):
    """The counters with a sometimes property that holds at x = 1 only, so that a path can pass it."""

    def properties(self) -> Sequence[Property]:
        return [Property("x_is_one", PropertyKind.SOMETIMES, "x is 1",
                         lambda state: {"x": 1} if state[0] == 1 else None)]


def test_sometimes_property_satisfied_earlier_on_the_path() -> None:
    """A sometimes property satisfied at an earlier step, not at the cursor, reads 'satisfied on path' with
    that step."""
    client = create_app(Session(CounterPassingOne(n=2), RunFacts(), "counter")).test_client()
    state = take(client, take(client, client.get("/api/state").get_json(), "IncX"), "IncX")
    x_is_one = verdict(state, "x_is_one")
    assert (x_is_one["verdict"], x_is_one["note"]) == ("satisfied on path", "satisfied on this path at step 1")


def test_bfs_from_here_loads_its_shortest_violation_as_a_new_path() -> None:
    """From (1, 0) with x + y < 3, the BFS finds the violation two steps further; the new path keeps the
    prefix and the cursor moves to its violating step."""
    client = counter_client(n=3, sum_limit=3)
    take(client, client.get("/api/state").get_json(), "IncX")
    answer = post(client, "/api/bfs", {"max_states": 100, "max_seconds": 10})
    assert answer["search"]["path"] == 2
    assert (answer["path"], answer["step"]) == (2, 3)
    assert [s["action"] for s in answer["trace"]][:2] == ["", "IncX"]  # the prefix, then two steps of the BFS
    assert verdict(answer, "sum_below_limit")["verdict"] == "violated"
    assert "sum_below_limit is violated 2 steps further" in answer["message"]


def test_bfs_from_here_without_a_violation_says_what_it_searched() -> None:
    """A complete search says no violation is reachable; a search cut by its state bound says so."""
    client = counter_client(n=2)
    answer = post(client, "/api/bfs", {"max_states": 100, "max_seconds": 10})
    assert answer["search"]["path"] is None and len(answer["paths"]) == 1
    assert "no violation is reachable from here (a complete search of 9 distinct states)" in answer["message"]
    answer = post(client, "/api/bfs", {"max_states": 3, "max_seconds": 10})
    assert answer["search"]["outcome"] == "inconclusive"
    assert "no violation within the bounds" in answer["message"]


def test_bad_requests_are_answered_with_one_sentence() -> None:
    """An action that is not enabled, a step or path that does not exist, a body that is not JSON, bounds out
    of range, an unknown file kind: status 400 and an error sentence; the session is unchanged."""
    client = counter_client(n=1)
    client.post("/api/take", json={"index": 0})  # x = 1: IncX is no longer enabled
    cases = [("/api/take", {"index": 7}, "is not enabled"), ("/api/goto", {"path": 1, "step": 5}, "does not exist"),
             ("/api/goto", {"path": 9, "step": 0}, "There is no path 9"), ("/api/take", {"index": "x"}, "whole number"),
             ("/api/bfs", {"max_states": 0}, "max states must be"), ("/api/bfs", {"max_seconds": -1}, "max seconds"),
             ("/api/load", {"text": "not a path"}, "neither an ITF trace")]
    for url, body, words in cases:
        response = client.post(url, json=body)
        assert response.status_code == 400, url
        assert words in response.get_json()["error"]
    assert client.post("/api/take", data="{", content_type="application/json").status_code == 400
    assert client.get("/api/export/pdf").status_code == 400
    assert client.get("/api/export/replay").status_code == 400  # a toy model has no factory to write a script with
    state = client.get("/api/state").get_json()
    assert (state["path"], state["step"], len(state["paths"])) == (1, 1, 1)


def test_requests_for_another_host_are_refused() -> None:
    """With the allowed hosts given, a request whose Host header names another (DNS rebinding) gets 403."""
    app = create_app(Session(Counter(), RunFacts(), "counter"), {"127.0.0.1:8765"})
    client = app.test_client()
    assert client.get("/api/state", headers={"Host": "127.0.0.1:8765"}).status_code == 200
    assert client.get("/api/state", headers={"Host": "evil.example:8765"}).status_code == 403


def test_a_path_saved_as_itf_loads_back_as_a_new_path() -> None:
    """The ITF file of a path (written by reports/itf.py, read back with itf-py) names its actions; loading it
    takes them again and moves to its end."""
    client = counter_client(n=2)
    state = take(client, take(client, client.get("/api/state").get_json(), "IncY"), "IncX")
    response = client.get("/api/export/itf")
    assert response.headers["Content-Disposition"] == 'attachment; filename="kmc-ui-path-1.itf.json"'
    document = json.loads(response.get_data(as_text=True))
    assert [s["#meta"]["action"] for s in document["states"]] == ["initial state", "IncY", "IncX"]
    assert document["#meta"]["description"] == "kmc (ui): a path of 2 steps"
    state = post(client, "/api/load", {"text": response.get_data(as_text=True), "name": "p.itf.json"})
    assert (state["path"], state["step"]) == (2, 2)
    assert state["paths"][1]["name"] == "loaded p.itf.json"
    assert [s["action"] for s in state["trace"]] == ["", "IncY", "IncX"]


def test_kafka_steps_show_views_actors_and_a_growing_diagram() -> None:
    """On the Kafka model a step has its Kafka title, log lines, changed cells and a sequence diagram of the
    steps so far; the actions are grouped by who takes them."""
    app = create_app(kafka_session("planted-complete-on-first-success"))
    client = app.test_client()
    state = client.get("/api/state").get_json()
    assert state["diagram"] == "" and {t["id"] for t in state["tables"]} >= {"partitions", "brokers"}
    assert [g["actor"] for g in state["actions"]] == ["failures", "admin"]  # in the model's order of actions
    state = take(client, state, "AdminDeleteTopic(topic=t)")
    assert {g["actor"] for g in state["actions"]} >= {"controller", "failures"}
    assert state["current"]["title"].startswith("Admin asks to delete topic t")
    assert state["diagram"].startswith("<svg") and "Admin asks to delete topic t" in state["diagram"]
    changed = [(t["id"], r["key"]) for t in state["tables"] for r in t["rows"] if r["changed"]]
    assert ("controller", "") in changed or any(table == "controller" for table, _ in changed)


def test_a_kafka_path_saved_as_a_replay_script_loads_back_and_runs(tmp_path: Path) -> None:
    """The replay script of a hand-taken Kafka path asserts the state it ends on when run, and loading it
    back (its walk.take calls read from its syntax tree, never run) gives the same path."""
    app = create_app(kafka_session("planted-complete-on-first-success"))
    client = app.test_client()
    state = take(client, client.get("/api/state").get_json(), "AdminDeleteTopic(topic=t)")
    state = take(client, state, "ControllerProcessEvent")
    script = client.get("/api/export/replay").get_data(as_text=True)
    assert "assert walk.fingerprint ==" in script
    (tmp_path / "replay.py").write_text(script, encoding="utf-8")
    run = subprocess.run([sys.executable, str(tmp_path / "replay.py")], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    assert "replayed 2 steps" in run.stdout
    loaded = post(client, "/api/load", {"text": script})
    assert [s["action"] for s in loaded["trace"]] == [s["action"] for s in state["trace"]]


def test_run_directory_counterexample_is_the_first_path(tmp_path: Path) -> None:
    """kmc ui RUN_DIR opens the run's counterexample at its violating step; going back one step clears it."""
    from kmc.commands.ui import _session

    explored = CliRunner().invoke(main, ["explore", "planted-complete-on-first-success", "--engine", "local",
                                         "--out", str(tmp_path), "--no-progress"])
    assert explored.exit_code == 1, explored.stderr
    [run_dir] = tmp_path.iterdir()
    client = create_app(_session(str(run_dir))).test_client()
    state = client.get("/api/state").get_json()
    assert state["paths"][0]["name"] == "counterexample: deletion_completes_only_when_all_replicas_succeeded"
    assert state["step"] == 5
    assert verdict(state, "deletion_completes_only_when_all_replicas_succeeded")["verdict"] == "violated"
    state = post(client, "/api/goto", {"path": 1, "step": 4})
    assert verdict(state, "deletion_completes_only_when_all_replicas_succeeded")["verdict"] == "holds"


@pytest.mark.parametrize(("args", "words"), [
    (["--host", "0.0.0.0"], "is not the loopback interface"),
    (["no-such-scenario"], "neither a shipped scenario"),
    (["--port", "70000"], "70000"),
])
def test_bad_arguments_exit_2_with_one_sentence(args: list[str], words: str) -> None:
    """A non-loopback host without --allow-remote, an unknown scenario, a port out of range: exit 2, one line."""
    result = CliRunner().invoke(main, ["ui", *args])
    assert result.exit_code == 2
    assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_directory_without_summary_exits_2(tmp_path: Path) -> None:
    """A directory that is no run directory is refused with the sentence naming what to give."""
    result = CliRunner().invoke(main, ["ui", str(tmp_path)])
    assert result.exit_code == 2
    assert "has no summary.json" in result.stderr


@pytest.mark.parametrize(("text", "words"), [
    ("[" * 100_000 + "]" * 100_000, "nests arrays or objects too deeply"),
    ("[1, 2]", "not a JSON object"),
    ("{", "cannot be read as JSON"),
])
def test_a_damaged_summary_exits_2(tmp_path: Path, text: str, words: str) -> None:
    """A summary.json that is not JSON, not an object, or nested deeper than Python's parser goes is refused in
    one sentence (exit 2), as kmc report refuses it, not an internal error."""
    (tmp_path / "summary.json").write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["ui", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_the_server_prints_its_address_and_stops_cleanly_on_ctrl_c() -> None:
    """kmc ui prints the loopback address it serves, answers there, and exits 0 on SIGINT with one line."""
    from urllib.request import urlopen

    process = subprocess.Popen([sys.executable, "-m", "kmc", "ui", "planted-complete-on-first-success", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("kmc ui: exploring planted-complete-on-first-success at http://127.0.0.1:")
        url = line.split(" at ", 1)[1].split()[0]
        with urlopen(url + "api/state", timeout=60) as answer:
            assert json.loads(answer.read())["step"] == 0
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    assert err.strip() == "kmc ui: stopped."
