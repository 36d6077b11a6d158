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
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.browser import browser, field, needs_chromium, open_page, screenshot
from tests.e2e.cluster.cluster_helpers import environment
from tests.polling import wait_for

pytestmark = needs_chromium

DATANODES, CONTAINERS = 50, 20_000
START_TIMEOUT_S = 60.0
SCALE_DATANODES, SCALE_RACKS, SCALE_CONTAINERS = 5_000, 50, 1_000_000
SCALE_TIMEOUT_S = 600.0
BUDGET_S = 2.0
PAGES = ("overview", "pipelines", "datanodes", "containers", "safemode", "charts", "balancer", "config")

_PAGER = 'return document.querySelector(`main#main [data-pager="${arguments[0]}"]`).dataset.total;'
_ROW_IDS = """
const rows = document.querySelectorAll(`main#main [data-table="${arguments[0]}"] tbody tr[data-id]`);
return [...rows].map((tr) => tr.dataset.id);
"""


@contextmanager
def sim_serving(log: Path, datanodes: int, racks: int, containers: int, *args: str) -> Iterator[str]:
    """`pyozone sim ... --serve` as a real process; yields the URL it serves at, and stops it."""
    command = ["sim", "--json", f"--datanodes={datanodes}", f"--racks={racks}", f"--containers={containers}"]
    command += ["--serve", "127.0.0.1:0", *args]
    with open(log, "w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "pyozone", *command],
            env=environment(),
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            text=True,
        )
    try:
        yield serving_url(process, log, containers, START_TIMEOUT_S if datanodes < 1000 else SCALE_TIMEOUT_S)
    finally:
        process.terminate()
        process.wait(20)


@pytest.fixture(scope="module")
def sim_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("sim-serve") / "sim.log"
    with sim_serving(log, DATANODES, 5, CONTAINERS, "--serve-for", "60") as url:
        yield url


def serving_url(process: subprocess.Popen[str], log: Path, containers: int, timeout_s: float) -> str:
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

    url = wait_for(served, timeout_s, "the sim serving its UI")
    placed = [e for e in events if e.get("event") == "placed"]
    assert [e["containers"] for e in placed] == [containers], events
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


def test_the_balancer_page_shows_a_run(tmp_path: Path, driver: Any) -> None:
    """`pyozone sim --add-empty-datanodes 3 --balancer --serve`: the page shows the run and every datanode's
    utilization now beside the run's start, the added ones no longer empty."""
    involve_all = "hdds.container.balancer.datanodes.involved.max.percentage.per.iteration=100"
    args = ("--minutes", "120", "--every", "30", "--add-empty-datanodes", "3", "--balancer",
            "--serve-for", "120", "-D", involve_all)  # fmt: skip
    with sim_serving(tmp_path / "sim.log", 9, 3, 1500, *args) as url:
        answer = api(url, "/api/v1/balancer")
        assert answer["status"] == "RUNNING" and answer["iterations"], answer
        added = [d for d in answer["datanodes"] if d["atStartPercent"] == 0.0]
        assert len(added) == 3 and all(d["utilizationPercent"] > 0 for d in added), answer["datanodes"]
        open_page(driver, url, "balancer")
        assert field(driver, "status").startswith("running since")
        assert len(driver.execute_script(_ROW_IDS, "balancer-datanodes")) == 12
        assert driver.execute_script(_ROW_IDS, "balancer-iterations")[0] == "1"
        screenshot(driver, "sim-balancer")


@pytest.mark.slow  # minutes: 5,000 datanodes start and a million containers are placed
def test_every_page_renders_in_under_two_seconds_at_scale(tmp_path: Path, driver: Any) -> None:
    """Issue 16's acceptance at full scale; benchmarks/webui_scale.py prints the figures beside a baseline."""
    args = ("--minutes", "3", "--serve-for", "900")
    with sim_serving(tmp_path / "sim.log", SCALE_DATANODES, SCALE_RACKS, SCALE_CONTAINERS, *args) as url:
        container = api(url, f"/api/v1/containers?offset={SCALE_CONTAINERS // 2}&limit=1")["items"][0]
        took = {}
        for route in (*PAGES, "container"):
            query = f"id={container['containerID']}" if route == "container" else ""
            took[route] = open_page(driver, url, route, query)
            if route == "overview":
                assert field(driver, "health.HEALTHY") == str(SCALE_DATANODES)
                assert field(driver, "containers.CLOSED") == str(SCALE_CONTAINERS)
            elif route == "containers":
                assert driver.execute_script(_PAGER, "containers") == str(SCALE_CONTAINERS)
        open_page(driver, url, "overview")
        screenshot(driver, "sim-scale-overview")
        assert max(took.values()) < BUDGET_S, took
