"""report.html as a person sees it: rendered by headless Chromium (Debian's ``chromium`` package, which
.ci/run installs), with the step table, the sequence diagram's lanes and the chart on the page, and
nothing fetched from the network. Slow: two browser starts, a few seconds each."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from reports_fixtures import document_of_toml, shipped_document

from reports.bundle import bundle_files

pytestmark = pytest.mark.slow

_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync")


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; .ci/run installs it with apt-get install -y chromium")
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    return found


def _browse(page: Path, work: Path, *extra: str) -> tuple[str, list[str]]:
    """Load ``page`` in headless Chromium; return the DOM after loading and the URLs the page itself asked
    for (from Chromium's net log: requests with an initiator, unlike the browser's own background ones)."""
    net_log = work / f"{page.stem}-net.json"
    run = subprocess.run([_chromium(), *_FLAGS, f"--user-data-dir={work / 'profile'}", f"--log-net-log={net_log}",
                          *extra, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-2000:]
    log = json.loads(net_log.read_text(encoding="utf-8"))
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    fetched = [e["params"]["url"] for e in log["events"]
               if e["type"] == start_job and "url" in e.get("params", {})
               and e["params"].get("initiator") != "not an origin"]
    return run.stdout, fetched


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_report_html_renders_in_chromium_without_network(tmp_path: Path) -> None:
    """Chromium renders the stale-deletion-response report to a PNG; the page holds the step table, the
    diagram's lanes and the chart, and the page fetched nothing (a page with an external image, checked the
    same way, shows the check sees page fetches)."""
    page = tmp_path / "report.html"
    page.write_text(bundle_files(shipped_document("stale-deletion-response"), ("html",))["report.html"],
                    encoding="utf-8")
    dom, fetched = _browse(page, tmp_path)
    assert fetched == []
    for text in ("Step table", "<caption>t-0</caption>", "ReplicaDeletionStarted", "Sequence diagram",
                 "States per level",
                 "Per-action coverage", "Narrative", "Changed state of replica 0 for partition t-0"):
        assert text in dom
    for lane in ("admin", "controller", "ZooKeeper", "broker 0", "broker 1", "broker 2"):
        assert f'text-anchor="middle">{lane}</text>' in dom  # a lane's title in the SVG
    assert dom.count('class="bar"') == 14  # one bar per depth, 0 to 13
    assert 'class="band violating"' in dom

    screenshot = tmp_path / "report.png"
    run = subprocess.run([_chromium(), *_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                          f"--screenshot={screenshot}", "--window-size=1400,3000", page.as_uri()],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-2000:]
    assert _png_size(screenshot) == (1400, 3000)
    assert screenshot.stat().st_size > 100_000  # a blank page compresses to a few kilobytes

    probe = tmp_path / "probe.html"
    probe.write_text('<html><body><img src="http://127.0.0.1:9/x.png">probe</body></html>', encoding="utf-8")
    _, probe_fetched = _browse(probe, tmp_path)
    assert probe_fetched == ["http://127.0.0.1:9/x.png"]


TWO_PARTITIONS = """
name = "two-partitions"
[cluster]
brokers = [{ id = 0 }, { id = 1 }, { id = 2 }]
[[topics]]
name = "t"
partitions = 2
replication_factor = 2
deleted_by_admin = true
[bounds]
broker_failures = 1
[check]
properties = ["deletion_completes_only_when_all_replicas_succeeded"]
[bugs]
PLANTED_COMPLETE_DELETION_ON_FIRST_SUCCESS = true
"""

#: Appended to a copy of the page: records how many of its parts are wider than the window (forcing a layout).
_MEASURE = ("<script>const wide = [...document.querySelectorAll('.scroll')].filter(e => e.scrollWidth > "
            "e.clientWidth).length + (document.documentElement.scrollWidth > window.innerWidth ? 1 : 0); "
            "document.body.setAttribute('data-wide', String(wide));</script>")


def test_two_partitions_read_without_scrolling_sideways(tmp_path: Path) -> None:
    """With two partitions the step table is cut into tables per partition, cluster, brokers and controller
    that fit a 1400-pixel window: nothing on the page scrolls sideways; the controller's event queue and the
    brokers' request channels are among the columns."""
    html = bundle_files(document_of_toml(TWO_PARTITIONS), ("html",))["report.html"]
    assert "<caption>t-0</caption>" in html and "<caption>t-1</caption>" in html
    assert "<th>event queue</th>" in html and "<th>broker 2 requests queued for it</th>" in html
    page = tmp_path / "report.html"
    measured = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)  # the page allows no script
    page.write_text(measured.replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    dom, _ = _browse(page, tmp_path, "--window-size=1400,2000")
    assert 'data-wide="0"' in dom
