"""Browser checks of one datanode's web UI (pyozone/datanode/web), for a test that has a live datanode.

`check_datanode_ui(driver, base_url)` opens every datanode page in the browser (tests/browser.py), checks
that the volumes, containers, pipelines, commands, scanner and latency it shows are what the datanode's
JSON APIs answer, and saves a screenshot of each page (dn-<route>.png). State may move between the page's
fetch and ours (a heartbeat, a command): a page that differs is loaded again, a few times, before it fails.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from typing import Any

from tests.browser import open_page, screenshot

ATTEMPTS = 3
PAGE_ROWS = 50  # what oz.pager shows by default

_ROWS = """
const rows = document.querySelectorAll(`main#main [data-table="${arguments[0]}"] tbody tr[data-id]`);
return [...rows].map((tr) => {
  const cells = {};
  for (const td of tr.children) for (const cls of td.classList) cells[cls] = td.textContent;
  return { id: tr.dataset.id, cells };
});
"""
_TOTAL = 'return document.querySelector(`main#main [data-pager="${arguments[0]}"]`).dataset.total;'
_FIELDS = """
const found = {};
for (const name of arguments[0]) {
  const cell = document.querySelector(`main#main [data-field="${name}"]`);
  found[name] = cell === null ? null : cell.textContent;
}
return found;
"""


def api(base_url: str, path: str) -> Any:
    with urllib.request.urlopen(f"{base_url}{path}", timeout=10) as answer:
        return json.load(answer)


def rows(driver: Any, table: str) -> list[dict[str, Any]]:
    """The rows of the table data-table=`table` on the current page: data-id and text by cell class."""
    return driver.execute_script(_ROWS, table)


def pager_total(driver: Any, name: str) -> int:
    return int(driver.execute_script(_TOTAL, name))


def fields(driver: Any, *names: str) -> dict[str, str]:
    """The text of each value cell data-field=NAME on the current page, read at once."""
    return driver.execute_script(_FIELDS, list(names))


def check_datanode_ui(driver: Any, base_url: str, prefix: str = "dn") -> None:
    """Every page of the datanode at `base_url` (http://host:port) renders and agrees with its APIs;
    screenshots are named `<prefix>-<route>` (`<prefix>-containers-<state>` for the state filter)."""
    base_url = base_url.rstrip("/")
    overview = _agreed(driver, base_url, "overview", "", _overview, f"{prefix}-overview")
    assert overview["phase"] == "running", overview
    _agreed(driver, base_url, "volumes", "", _volumes, f"{prefix}-volumes")
    containers = _agreed(driver, base_url, "containers", "", _containers(""), f"{prefix}-containers")
    if containers["items"]:
        state = containers["items"][0]["state"]
        _agreed(
            driver,
            base_url,
            "containers",
            f"state={state}",
            _containers(state),
            f"{prefix}-containers-{state}",
        )
    for route, compare in (
        ("pipelines", _pipelines),
        ("commands", _commands),
        ("scanner", _scanner),
        ("latency", _latency),
    ):
        _agreed(driver, base_url, route, "", compare, f"{prefix}-{route}")


Compare = Callable[[Any, str], tuple[Any, Any, Any]]
"""(driver, base_url) -> (what the page shows, what the API answers, the API's answer to return)."""


def _agreed(driver: Any, base_url: str, route: str, query: str, compare: Compare, shot: str) -> Any:
    """Opens the page until what it shows is what the API answers (ATTEMPTS loads), saves its screenshot
    as `shot` and returns the API's answer."""
    shown = expected = None
    for attempt in range(ATTEMPTS):
        if attempt or f"#!/{route}" in driver.current_url:
            # a new load: open_page would find the route's page already there (another query's, or the
            # same one, which a hash change does not render again)
            driver.get("about:blank")
        open_page(driver, base_url, route, query)
        shown, expected, answer = compare(driver, base_url)
        if shown == expected:
            screenshot(driver, shot)
            return answer
    raise AssertionError(f"{route}?{query}: the page shows {shown!r}, the API answers {expected!r}")


def _overview(driver: Any, base_url: str) -> tuple[Any, Any, Any]:
    o = api(base_url, "/api/v1/overview")
    shown = fields(driver, "uuid", "phase", "registered", "containers", "leaderPipelines")
    expected = {
        "uuid": o["uuid"],
        "phase": o["phase"],
        "registered": "yes" if o["registered"] else "no",
        "containers": str(o["containers"]["total"]),
        "leaderPipelines": str(o["pipelines"]["leader"]),
    }
    return shown, expected, o


def _volumes(driver: Any, base_url: str) -> tuple[Any, Any, Any]:
    v = api(base_url, f"/api/v1/volumes?limit={PAGE_ROWS}")
    shown = (
        pager_total(driver, "volumes"),
        [(r["id"], r["cells"]["containers"]) for r in rows(driver, "volumes")],
    )
    expected = (v["total"], [(i["directory"], str(i["containers"])) for i in v["items"]])
    assert driver.find_elements("css selector", 'main#main svg[data-chart="volume-usage"]'), "no usage chart"
    return shown, expected, v


def _containers(state: str) -> Compare:
    def compare(driver: Any, base_url: str) -> tuple[Any, Any, Any]:
        c = api(base_url, f"/api/v1/containers?limit={PAGE_ROWS}" + (f"&state={state}" if state else ""))
        shown = (
            pager_total(driver, "containers"),
            [(r["id"], r["cells"]["state"]) for r in rows(driver, "containers")],
        )
        expected = (c["total"], [(str(i["containerId"]), i["state"]) for i in c["items"]])
        if state:
            assert all(s == state for _, s in expected[1]), f"the API filters by state {state}: {expected}"
        return shown, expected, c

    return compare


def _pipelines(driver: Any, base_url: str) -> tuple[Any, Any, Any]:
    p = api(base_url, f"/api/v1/pipelines?limit={PAGE_ROWS}")
    shown = (
        pager_total(driver, "pipelines"),
        [(r["id"], r["cells"]["role"]) for r in rows(driver, "pipelines")],
    )
    expected = (p["total"], [(i["pipelineId"], i["role"]) for i in p["items"]])
    return shown, expected, p


def _commands(driver: Any, base_url: str) -> tuple[Any, Any, Any]:
    c = api(base_url, "/api/v1/commands")
    shown = [(r["id"], r["cells"]["pending"], r["cells"]["received"]) for r in rows(driver, "command-types")]
    types = sorted({*c["pending"], *c["received"]})
    expected = [(t, str(c["pending"].get(t, 0)), str(c["received"].get(t, 0))) for t in types]
    recent = api(base_url, "/api/v1/commands/recent?limit=1")
    return (shown, pager_total(driver, "commands-recent")), (expected, recent["total"]), c


def _scanner(driver: Any, base_url: str) -> tuple[Any, Any, Any]:
    s = api(base_url, "/api/v1/scanner")
    shown = fields(driver, "passes", "containersScanned")
    return shown, {"passes": str(s["passes"]), "containersScanned": str(s["containersScanned"])}, s


def _latency(driver: Any, base_url: str) -> tuple[Any, Any, Any]:
    lat = api(base_url, f"/api/v1/latency?limit={PAGE_ROWS}")
    shown = [(r["id"], r["cells"]["write-count"], r["cells"]["read-count"]) for r in rows(driver, "latency")]
    expected = [("all volumes", str(lat["all"]["write"]["count"]), str(lat["all"]["read"]["count"]))] + [
        (i["volume"], str(i["write"]["count"]), str(i["read"]["count"])) for i in lat["items"]
    ]
    return shown, expected, lat
