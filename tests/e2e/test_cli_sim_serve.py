"""Acceptance (issue 16): `pyozone sim --serve` serves SCM's web UI over a simulated cluster, the same pages
the daemon serves, with lists paginated: 50 datanodes and 20,000 closed containers, in headless Chromium.

The sim runs as a real process (`--json`: it says where it serves on a JSON line); the test stops it once
the pages are checked. The overview is saved as screenshot sim-overview.png.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import browser, field, needs_chromium, open_page, screenshot
from tests.e2e.cluster.cluster_helpers import environment
from tests.polling import wait_for

pytestmark = needs_chromium

DATANODES, CONTAINERS = 50, 20_000
START_TIMEOUT_S = 60.0
PAGES = ("overview", "pipelines", "datanodes", "containers", "safemode", "charts", "config")

_PAGER = 'return document.querySelector(`main#main [data-pager="${arguments[0]}"]`).dataset.total;'
_ROW_IDS = """
const rows = document.querySelectorAll(`main#main [data-table="${arguments[0]}"] tbody tr[data-id]`);
return [...rows].map((tr) => tr.dataset.id);
"""


@pytest.fixture(scope="module")
def sim_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("sim-serve") / "sim.log"
    args = ["sim", "--json", "--datanodes", str(DATANODES), "--racks", "5", "--containers", str(CONTAINERS)]
    args += ["--serve", "127.0.0.1:0", "--serve-for", "60"]
    with open(log, "w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "pyozone", *args],
            env=environment(),
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            text=True,
        )
    try:
        yield serving_url(process, log)
    finally:
        process.terminate()
        process.wait(20)


def serving_url(process: subprocess.Popen[str], log: Path) -> str:
    """The URL on the sim's `{"event": "serving"}` line (its stdout is read on a thread, so a sim that
    never serves fails the test at the deadline instead of hanging it)."""
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    stdout = process.stdout
    threading.Thread(target=lambda: [lines.put(line) for line in stdout], daemon=True).start()
    events: list[dict[str, Any]] = []

    def served() -> str | None:
        while not lines.empty():
            events.append(json.loads(lines.get()))
        assert process.poll() is None, f"the sim exited {process.returncode}: {log.read_text()[-2000:]}"
        return next((e["url"].rstrip("/") for e in events if e.get("event") == "serving"), None)

    url = wait_for(served, START_TIMEOUT_S, "the sim serving its UI")
    placed = [e for e in events if e.get("event") == "placed"]
    assert [e["containers"] for e in placed] == [CONTAINERS], events
    return url


def api(base: str, path: str) -> Any:
    with urllib.request.urlopen(f"{base}{path}", timeout=10) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with browser() as d:
        yield d


def test_every_page_renders_over_the_simulated_cluster(sim_url: str, driver: Any) -> None:
    for route in PAGES:
        open_page(driver, sim_url, route)
        screenshot(driver, f"sim-{route}")
    open_page(driver, sim_url, "overview")
    assert field(driver, "health.HEALTHY") == str(DATANODES)
    assert field(driver, "containers.CLOSED") == str(CONTAINERS)


def test_the_containers_list_is_paginated(sim_url: str, driver: Any) -> None:
    from selenium.webdriver.common.by import By

    open_page(driver, sim_url, "containers")
    assert driver.execute_script(_PAGER, "containers") == str(CONTAINERS)
    first = driver.execute_script(_ROW_IDS, "containers")
    assert 0 < len(first) < 100, "one page of the list, not all of it"
    pager = driver.find_element(By.CSS_SELECTOR, 'main#main [data-pager="containers"]')
    pager.find_element(By.XPATH, ".//button[contains(., 'next')]").click()
    second = wait_for(
        lambda: (ids := driver.execute_script(_ROW_IDS, "containers")) != first and ids,
        10,
        "the next page of containers",
    )
    assert int(second[0]) > int(first[-1]) and len(second) == len(first)


def test_a_container_shows_its_three_replicas(sim_url: str, driver: Any) -> None:
    listed = api(sim_url, f"/api/v1/containers?offset={CONTAINERS // 2}&limit=1")
    assert listed["total"] == CONTAINERS
    container = listed["items"][0]["containerID"]
    open_page(driver, sim_url, "container", f"id={container}")
    assert field(driver, "containerID") == str(container)
    assert field(driver, "state") == "CLOSED"
    assert len(driver.execute_script(_ROW_IDS, "replicas")) == 3
