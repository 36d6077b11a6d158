"""Acceptance (issue 16): SCM's web UI in headless Chromium against one live cluster (`cluster up`, three
datanodes).

- Pipeline Statistics (Ozone's "Calculating Ratis Pipeline Limits" doc): the counts per state and type,
  the open RATIS/THREE pipelines and each datanode's pipelines are what `pyozone admin pipeline list
  --json` says; the limits, the target and its steps are what `pyozone plan pipelines` computes on an
  inventory of the cluster's datanodes.
- A datanode killed with -9 turns STALE, then DEAD, on the Datanodes page.
- The Containers page shows `admin container report --json`; a sample container links to its page, which
  shows `admin container info --json`.
Every page is saved as a screenshot (scm-<route>.png).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pyozone.cluster.layout import HOST
from pyozone.hdds.ids import RATIS_THREE
from tests.browser import browser, needs_chromium, open_page, screenshot
from tests.e2e.cluster.cluster_helpers import (
    DEAD_S,
    STALE_S,
    LiveCluster,
    allocate,
    live_cluster,
    write_to_pipeline,
)
from tests.polling import wait_for

pytestmark = needs_chromium

DATANODES = 3
METADATA_DISKS = 1  # `cluster up` gives each datanode one ozone.metadata.dirs directory
OVERRIDES = {"hdds.scm.replication.thread.interval": "3s"}  # the report follows the cluster within seconds
LIFECYCLE = ("OPEN", "CLOSING", "QUASI_CLOSED", "CLOSED", "DELETING", "DELETED", "RECOVERING")
SLACK_S = 6.0

# Every data-field of the page at one instant (a page refreshing itself cannot change it halfway).
_FIELDS = """
const out = {};
for (const e of document.querySelectorAll("main#main [data-field]")) {
  if (!(e.dataset.field in out)) out[e.dataset.field] = e.textContent;
}
return out;
"""
_ROW_FIELDS = """
const out = {};
for (const tr of document.querySelectorAll(`main#main [data-table="${arguments[0]}"] tbody tr[data-id]`)) {
  const cells = [...tr.querySelectorAll("[data-field]")];
  out[tr.dataset.id] = Object.fromEntries(cells.map((e) => [e.dataset.field, e.textContent]));
}
return out;
"""
_PAGER_TOTAL = 'return document.querySelector(`main#main [data-pager="${arguments[0]}"]`).dataset.total;'


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    with live_cluster(request, tmp_path_factory, "web-scm", DATANODES, overrides=OVERRIDES) as c:
        yield c


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with browser() as d:
        yield d


@pytest.fixture(scope="module")
def base(cluster: LiveCluster) -> str:
    return f"http://{HOST}:{cluster.scm_port('http')}"


class Page:
    """One SCM page in the browser; each `show` renders it anew (a fresh query forces the render)."""

    def __init__(self, driver: Any, base: str) -> None:
        self.driver, self.base, self.renders = driver, base, 0

    def show(self, route: str, query: str = "") -> dict[str, str]:
        self.renders += 1
        open_page(self.driver, self.base, route, "&".join(q for q in (query, f"render={self.renders}") if q))
        return self.driver.execute_script(_FIELDS)

    def rows(self, table: str) -> dict[str, dict[str, str]]:
        return self.driver.execute_script(_ROW_FIELDS, table)

    def pager_total(self, name: str) -> int:
        return int(self.driver.execute_script(_PAGER_TOTAL, name))


def plan(cluster: LiveCluster, folder: Path) -> dict[str, Any]:
    """`pyozone plan pipelines --json` on an inventory of the cluster's healthy datanodes (ids, racks and
    volumes as `admin datanode list` and the cluster's layout give them)."""
    nodes = sorted(cluster.admin_json("datanode", "list"), key=lambda n: n["uuid"])
    inventory = folder / "inventory.csv"
    rows = [f"{n['uuid']},{n['networkLocation']},{n['healthyVolumes']},{METADATA_DISKS}" for n in nodes]
    inventory.write_text("id,rack,data_disks,metadata_disks\n" + "\n".join(rows) + "\n")
    result = cluster.pyozone(
        "plan", "pipelines", "--inventory", str(inventory), "--json", "--conf", str(cluster.conf_dir)
    )
    assert result.code == 0, result
    return result.json()


def test_pipeline_statistics_match_the_cli_and_the_planner(
    cluster: LiveCluster, driver: Any, base: str, tmp_path: Path
) -> None:
    target = plan(cluster, tmp_path)
    assert target["datanodes"] == DATANODES and target["ratis_three"] > 0
    pipelines = wait_for(
        lambda: (
            (listed := cluster.pipelines())
            and sum(p["replicationConfig"] == "RATIS/THREE" and p["state"] == "OPEN" for p in listed)
            == target["ratis_three"]
            and all(p["state"] == "OPEN" for p in listed)
            and listed
        ),
        60,
        "SCM's pipelines open, as many RATIS/THREE as the planner's target",
    )
    page = Page(driver, base)
    fields = page.show("pipelines")
    counts = Counter((p["replicationConfig"], p["state"]) for p in pipelines)
    assert fields["openRatisThree"] == str(counts[("RATIS/THREE", "OPEN")]) == str(target["ratis_three"])
    assert fields["target"] == str(target["ratis_three"])
    assert fields["alignment"] == "on target"
    for config in {c for c, _ in counts}:
        for state in ("ALLOCATED", "OPEN", "DORMANT", "CLOSED"):
            assert fields[f"{config}.{state}"] == str(counts[(config, state)]), (config, state)
        assert fields[f"{config}.total"] == str(sum(n for (c, _), n in counts.items() if c == config))
    assert fields["ozone.scm.datanode.pipeline.limit"] == str(target["datanode_pipeline_limit"])
    assert fields["ozone.scm.pipeline.per.metadata.disk"] == str(target["per_metadata_disk"])
    assert fields["ozone.scm.ratis.pipeline.limit"] == str(target["ratis_pipeline_limit"])
    assert [fields[f"step.{i}"] for i in range(1, len(target["steps"]) + 1)] == target["steps"]
    assert page.pager_total("pipelines") == len(pipelines)
    per_node = Counter(
        n["uuid"] for p in pipelines if p["replicationConfig"] == "RATIS/THREE" for n in p["nodes"]
    )
    limit = target["groups"][0]["per_node_limit"]
    rows = page.rows("pipeline-datanodes")
    assert {dn: (row["ratisThree"], row["limit"]) for dn, row in rows.items()} == {
        dn: (str(per_node[dn]), str(limit))
        for dn in (n["uuid"] for n in cluster.admin_json("datanode", "list"))
    }
    screenshot(driver, "scm-pipelines")

    rules = cluster.admin_json("safemode", "status", "--verbose")["rules"]
    page.show("safemode")
    shown = page.rows("safemode-rules")
    assert {name: (row["validated"], row["status"]) for name, row in shown.items()} == {
        r["name"]: ("yes" if r["validated"] else "no", r["status"]) for r in rules
    }
    screenshot(driver, "scm-safemode")


@pytest.fixture(scope="module")
def container(cluster: LiveCluster) -> int:
    """A container with a block written on all three datanodes."""
    location = allocate(cluster, RATIS_THREE)
    write_to_pipeline(location, b"web ui" * 1000)
    return location.block_id.container_id


def test_a_killed_datanode_turns_stale_then_dead(
    cluster: LiveCluster, driver: Any, base: str, container: int
) -> None:
    page = Page(driver, base)
    victim = cluster.datanodes()["dn3"]["uuid"]
    page.show("datanodes")
    assert page.pager_total("datanodes") == DATANODES
    assert page.rows("datanodes")[victim]["healthState"] == "HEALTHY"
    screenshot(driver, "scm-datanodes")

    cluster.kill("dn3")
    killed = time.monotonic()

    def health() -> str:
        page.show("datanodes")
        return page.rows("datanodes")[victim]["healthState"]

    wait_for(
        lambda: health() == "STALE", STALE_S + SLACK_S, "dn3 STALE on the Datanodes page", interval_s=0.3
    )
    stale_after = time.monotonic() - killed
    wait_for(lambda: health() == "DEAD", DEAD_S + SLACK_S, "dn3 DEAD on the Datanodes page", interval_s=0.3)
    assert stale_after < time.monotonic() - killed
    fields = page.show("datanodes", "health=DEAD")
    assert fields["healthState"] == "DEAD" and list(page.rows("datanodes")) == [victim]
    screenshot(driver, "scm-datanodes-dead")
    assert page.show("overview")["health.DEAD"] == "1"
    screenshot(driver, "scm-overview")


def test_the_containers_page_is_the_replication_managers_report(
    cluster: LiveCluster, driver: Any, base: str, container: int
) -> None:
    """After the kill the container has two replicas of three, so the report samples it; its link leads to
    its page."""

    def sampled() -> bool:
        report = cluster.poll_json("container", "report") or {"samples": {}}
        return any(container in ids for ids in report["samples"].values())

    wait_for(
        sampled,
        30,
        lambda: f"container {container} sampled: {cluster.poll_json('container', 'report')}",
        interval_s=0.5,
    )
    page = Page(driver, base)

    def drawn_while_it_stood(show: Callable[[], dict[str, str]]) -> tuple[dict[str, str], Any] | None:
        """The page's fields and the CLI's report and container info, when neither changed while the
        page was drawn (the Replication Manager runs every 3 s; a run that found the same leaves the
        same report but for its time)."""

        def now() -> tuple[Any, Any, Any]:
            report = cluster.poll_json("container", "report")
            return report["stats"], report["samples"], cluster.container(container)

        before = now()
        fields = show()
        after = now()
        return (fields, after) if before == after else None

    fields, (stats, samples, _) = wait_for(
        lambda: drawn_while_it_stood(lambda: page.show("containers")), 30, "a stable report"
    )
    for name in LIFECYCLE:
        assert fields[f"state.{name}"] == str(stats[name]), name
    for name in (s for s in stats if s not in LIFECYCLE and s != "HEALTHY"):
        assert fields[f"health.{name}"] == str(stats[name]), name
    assert set(page.rows("report-samples")) == {s for s, ids in samples.items() if ids}
    links = driver.execute_script(
        "return [...document.querySelectorAll('main#main [data-table=\"report-samples\"] a[data-container]')]"
        ".map((a) => [a.closest('tr').dataset.id, a.getAttribute('href')]);"
    )
    assert sorted(map(tuple, links)) == sorted(
        (name, f"#!/container?id={cid}") for name, ids in samples.items() for cid in ids
    )
    screenshot(driver, "scm-containers")

    def follow_the_sample_link() -> dict[str, str]:
        from selenium.webdriver.common.by import By

        page.show("containers")
        driver.find_element(By.CSS_SELECTOR, f'main#main a[data-container="{container}"]').click()
        open_page(driver, base, "container", f"id={container}")  # waits until the linked page is drawn
        return driver.execute_script(_FIELDS)

    fields, (_, samples, info) = wait_for(
        lambda: drawn_while_it_stood(follow_the_sample_link), 30, "a stable container"
    )
    assert fields["containerID"] == str(info["containerID"]) == str(container)
    assert fields["state"] == info["state"]
    assert fields["health"] in {name for name, ids in samples.items() if container in ids}
    assert fields["replicationConfig"] == info["replicationConfig"]
    assert fields["sequenceId"] == str(info["sequenceId"])
    assert set(page.rows("replicas")) == {r["datanode"] for r in info["replicas"]}
    screenshot(driver, "scm-container")


def test_charts(cluster: LiveCluster, driver: Any, base: str) -> None:
    Page(driver, base).show("charts")
    charts = driver.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('main#main svg[data-chart]')]"
        ".map((s) => [s.dataset.chart, s.querySelectorAll('rect.track, path.line').length]));"
    )
    assert charts["usage"] == DATANODES and charts["pipelines"] == DATANODES and charts["containers"] >= 1
    screenshot(driver, "scm-charts")
