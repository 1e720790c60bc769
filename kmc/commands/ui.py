"""``kmc ui [SCENARIO | RUN_DIR]``: explore a scenario by hand in the browser, or branch from a counterexample.

Resolves the target into the Kafka model (a shipped scenario's name or a TOML file; a run directory's
``summary.json``, whose model factory holds the scenario's TOML text the run explored, and whose
counterexamples become the first paths, each replayed and checked fingerprint by fingerprint), then
serves :mod:`kmc.ui` on the loopback interface until Ctrl-C. A non-loopback ``--host`` is refused
unless ``--allow-remote`` says so: the page can take any action and run searches, and has no login.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from kmc.common import Interrupted, SafePath, fail, read_summary

DEFAULT_PORT = 8765


@click.command(help="Explore a scenario by hand in the browser: take actions, see the state and every property's "
                    "verdict, branch from any step of a run's counterexample, run a bounded BFS from here.")
@click.argument("target", required=False, type=SafePath(path_type=str))
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True,
              help="The port to serve on (0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to bind; anything but the loopback interface needs --allow-remote.")
@click.option("--allow-remote", is_flag=True,
              help="Allow a --host other than the loopback interface (the page has no login: anyone who reaches "
                   "it can run searches on this machine).")
def ui(target: str | None, port: int, host: str, allow_remote: bool) -> None:
    from kmc.ui.server import Server, is_loopback

    if not is_loopback(host) and not allow_remote:
        fail(f"--host {host!r} is not the loopback interface; the explorer has no login, so add --allow-remote "
             "to serve it there, or leave --host out.")
    session = _session(target)
    try:
        server = Server(session, host, port)
    except OSError as e:
        fail(f"cannot serve on {host}:{port} ({e.strerror or e}); give another --port (0: any free port).")
    click.echo(f"kmc ui: exploring {session.title} at {server.url} (Ctrl-C to stop)")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except (KeyboardInterrupt, Interrupted):
        click.echo("kmc ui: stopped.", err=True)
    finally:
        server.close()


def _session(target: str | None) -> Any:
    """The session for a run directory (its counterexamples as paths) or a scenario (its initial state)."""
    from explorer.replay import ReplayError, replay_states
    from kmc import compose
    from kmc.outputs import model_facts
    from kmc.ui.session import Session, SessionError
    from model.scenario import ScenarioError
    from reports.common import RunFacts

    directory = Path(target) if target is not None else None
    try:
        if directory is not None and directory.is_dir():
            document = read_summary(directory, " or a scenario")
            model = compose.build_kafka_model(_scenario_text(document, directory))
            bits = int((document.get("statistics") or {}).get("fingerprint_bits", 64))
            paths = []
            for d in sorted(document.get("discoveries") or (), key=lambda d: (not d.get("violation"), d["property"])):
                replay_states(model, d["fingerprints"], d["action_indices"], bits)
                kind = "counterexample" if d.get("violation") else "example"
                paths.append((f"{kind}: {d['property']}", d["action_indices"], None))
            title = f"{model.scenario.name} (run {directory.name})"
        else:
            model = compose.model_for(compose.resolve_scenario(target))
            paths, title = [], model.scenario.name
        scenario = model.scenario
        facts = RunFacts.from_document({"scenario": {"name": scenario.name, "kafka_version": "{}.{}".format(
            *scenario.version)}, **model_facts(model)})
        return Session(model, facts, title, paths)
    except ScenarioError as e:
        fail(str(e))
    except (ReplayError, SessionError) as e:
        fail(f"the run directory's counterexample does not replay on this kmc: {e}")
    except (KeyError, TypeError, ValueError, IndexError) as e:
        fail(f"{str(target)!r}: summary.json lacks or garbles a field ({e!r}); re-run the exploration.")


def _scenario_text(document: dict[str, Any], directory: Path) -> str:
    """The TOML text the run explored: its model factory's argument (checked to be kmc's own factory)."""
    from reports.replay_script import check_model_factory

    factory = document.get("model_factory")
    try:
        check_model_factory(factory)
    except ValueError as e:
        fail(f"{str(directory / 'summary.json')!r} does not name the model kmc ui can rebuild ({e}).")
    return str(factory["argument"])  # type: ignore[index]
