"""``kmc ui`` as a person uses it: headless Chromium (Debian's ``chromium`` package, which .ci/run installs)
driven by Playwright opens stale-deletion-response's counterexample, goes back to the step before broker 0's
bounce, takes another action there, sees the violation leave the properties panel, runs a bounded BFS from
there and gets its trace as a new path; the page asks nothing of any server but its own. Slow: an
exploration, a server and a browser start. ``KMC_UI_SCREENSHOTS=DIR`` keeps the screenshots in DIR."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page
from test_reports_browser import _chromium

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
PROPERTY = "deletion_completes_only_when_all_replicas_succeeded"


def _kmc(*args: str, **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "kmc", *args], text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, **kwargs)  # type: ignore[call-overload]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """The address of ``kmc ui`` serving the run directory of ``kmc explore stale-deletion-response``."""
    explored = _kmc("explore", "stale-deletion-response", "--engine", "local", "--out", str(tmp_path / "runs"),
                    "--no-progress", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, err = explored.communicate(timeout=600)
    assert explored.returncode == 1, err
    [run_dir] = (tmp_path / "runs").iterdir()
    process = _kmc("ui", str(run_dir), "--port", "0", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = process.stdout.readline()
        assert " at http://127.0.0.1:" in line, line + process.stderr.read()
        yield line.split(" at ", 1)[1].split()[0]
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
    finally:
        if process.poll() is None:
            process.kill()


def search(page: Page) -> str:
    """Run a bounded BFS from the page's current step; the sentence the page shows when it is done."""
    page.fill("#max-states", "50000")
    page.fill("#max-seconds", "120")
    page.click("#bfs")
    page.wait_for_function("() => document.querySelector('#message').textContent.startsWith('BFS from step')",
                           timeout=180_000)
    return page.inner_text("#message")


def _shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("KMC_UI_SCREENSHOTS") or tmp_path / "shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _events_through_broker_change(titles: list[str]) -> int:
    """How many events the controller's queue holds up to its first BrokerChange after the steps ``titles``."""
    from kmc.compose import model_for, resolve_scenario

    model = model_for(resolve_scenario("stale-deletion-response"))
    state = model.init_states()[0]
    for title in titles:
        action = next(a for a in model.actions(state) if model.describe_action(a) == title)
        state = model.next_state(state, action)
    kinds = [event.kind.name for event in state.controller.events]
    return kinds.index("BrokerChange") + 1


def test_branch_before_the_bounce_and_search_from_there(server: str, tmp_path: Path) -> None:
    """From the counterexample's last step (violated), back to the step before the bounce (a broker's
    BrokerFailure followed by its BrokerStartup): the property holds. Processing the controller's queue up to the
    dead broker's BrokerChange instead branches into path 2, from which a complete BFS finds no violation;
    restarting the broker that died earlier instead branches into path 3, from which the BFS finds the violation a
    few steps further and loads it as path 4, at its violating step. (Which brokers play these parts is BFS's
    tie-break among shortest traces, which follows the encoding; the test reads them from the trace.)"""
    from playwright.sync_api import sync_playwright

    shots = _shots(tmp_path)
    requested: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            page.on("request", lambda r: requested.append(r.url))

            def take(description: str) -> None:
                page.locator(f'#actions .action:not(.on-path)[data-description="{description}"]').click()

            page.goto(server)
            page.wait_for_selector("#trace li.current")
            verdict = page.locator(f'#properties .prop[data-name="{PROPERTY}"]')
            assert verdict.get_attribute("data-verdict") == "violated"
            assert "replicas_whose_log_remains" in verdict.inner_text()
            page.screenshot(path=str(shots / "1-counterexample.png"))

            titles = page.locator("#trace li").evaluate_all("items => items.map(i => i.title)")
            [bounce] = [i for i, t in enumerate(titles) if t.startswith("BrokerFailure(")
                        and titles[i + 1] == t.replace("BrokerFailure(", "BrokerStartup(")]
            [dead] = [t for t in titles[:bounce] if t.startswith("BrokerFailure(")]
            page.click(f'#trace li[data-step="{bounce - 1}"]')
            page.wait_for_selector(f'#trace li.current[data-step="{bounce - 1}"]')
            assert verdict.get_attribute("data-verdict") == "holds"
            on_path = page.locator("#actions .action.on-path")
            assert on_path.get_attribute("data-description") == titles[bounce]

            # Had the controller processed its queue up to the dead broker's BrokerChange first, no violation would
            # be reachable at all. How many events come before it is the trace's: read from the model's state there.
            processed = _events_through_broker_change(titles[1:bounce])  # titles[0] is the initial state
            for taken in range(1, processed + 1):
                take("ControllerProcessEvent")
                page.wait_for_selector(f'#trace li.current[data-step="{bounce - 1 + taken}"]')
            assert page.locator("#paths").input_value() == "2"
            assert verdict.get_attribute("data-verdict") == "holds"
            message = search(page)
            assert message.startswith(f"BFS from step {bounce - 1 + processed}: no violation is reachable from here "
                                      "(a complete search of "), message
            assert page.locator("#paths option").count() == 2

            # Had the broker that died earlier restarted first, the stale response still completes the deletion,
            # a few steps later.
            page.click(f'#trace li[data-step="{bounce - 1}"]')
            page.wait_for_selector(f'#trace li.current[data-step="{bounce - 1}"]')
            take(dead.replace("BrokerFailure(", "BrokerStartup("))
            page.wait_for_selector(f'#trace li.current[data-step="{bounce}"]')
            assert page.locator("#paths").input_value() == "3"
            assert verdict.get_attribute("data-verdict") == "holds"
            assert page.locator("#diagram svg").count() == 1
            assert page.locator("#tables td.changed").count() > 0
            page.check("#changed-only")
            assert page.locator("#tables tr:not(.removed) td.changed").count() > 0
            page.uncheck("#changed-only")
            page.screenshot(path=str(shots / "2-branch.png"))

            message = search(page)
            further = re.search(r"is violated (\d+) steps further", message)
            assert further is not None and "loaded as a new path" in message, message
            steps = int(further.group(1))
            assert page.locator("#paths option").count() == 4
            assert page.locator("#paths").input_value() == "4"
            assert page.locator("#trace li").count() == bounce + 1 + steps
            assert page.locator("#trace li.current").get_attribute("data-step") == str(bounce + steps)
            assert verdict.get_attribute("data-verdict") == "violated"
            page.screenshot(path=str(shots / "3-bfs.png"), full_page=True)
        finally:
            browser.close()
    assert requested and all(url.startswith(server) for url in requested), requested
