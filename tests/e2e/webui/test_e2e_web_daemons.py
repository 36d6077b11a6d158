"""Acceptance (issue 16): the OM's and a datanode's web UIs in headless Chromium against one live cluster
(`cluster up`: SCM, OM, the S3 gateway and 3 datanodes).

OM: a volume, bucket and keys made with `pyozone sh` show on the overview, volumes, buckets, keys and key
pages as `sh ... --json` prints them (the APIs answer the same dicts); the quotas `sh volume setquota` set
show on the volume; a key opened and never committed shows on the open keys page; the deleting services'
page renders. The datanode's pages are checked by helper module datanode_checks. Every page is saved as a
screenshot (om-<route>.png, dn-<route>.png).
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

import pytest

from pyozone.cluster.layout import HOST
from pyozone.proto import OmClientProtocol_pb2 as pb
from tests.browser import browser, field, needs_chromium, open_page, screenshot
from tests.e2e.cluster.cluster_helpers import LiveCluster, Result, live_cluster, om_stub, sh_here
from tests.e2e.webui.datanode_checks import check_datanode_ui

pytestmark = needs_chromium

VOL, BUCKET = "webvol", "webbucket"
KEYS = {"dir/first": 1000, "dir/second": 250_000, "top": 10}
OPEN_KEY = "being-written"

_ROWS = """
const rows = document.querySelectorAll(`main#main [data-table="${arguments[0]}"] tbody tr[data-id]`);
return [...rows].map((tr) => [tr.dataset.id, tr.textContent]);
"""
_PAGER = 'return document.querySelector(`main#main [data-pager="${arguments[0]}"]`).dataset.total;'


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    with live_cluster(request, tmp_path_factory, "web-daemons", 3) as c:
        yield c


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with browser() as d:
        yield d


def run_sh(cluster: LiveCluster, *args: str) -> Result:
    result = sh_here(cluster, *args)
    assert result.code == 0, result
    return result


def api(base: str, path: str) -> Any:
    with urllib.request.urlopen(base + path, timeout=10) as answer:
        return json.load(answer)


def rows(driver: Any, table: str) -> dict[str, str]:
    """data-id -> the row's text, of the table data-table=`table` on the current page."""
    return dict(driver.execute_script(_ROWS, table))


def blocks(key: dict[str, Any]) -> list[tuple[Any, ...]]:
    """A key's blocks and who holds them (OM orders the replicas nearest to the reader first)."""
    return [
        (
            b["containerID"],
            b["localID"],
            b["offset"],
            b["length"],
            frozenset(d["uuid"] for d in b["datanodes"]),
        )
        for b in key["ozoneKeyLocations"]
    ]


def show(driver: Any, base: str, route: str, **params: str) -> None:
    open_page(driver, base, route, urlencode(params))
    screenshot(driver, f"om-{route}")


def test_om_pages_show_what_sh_made(cluster: LiveCluster, driver: Any, tmp_path) -> None:
    base = f"http://{HOST}:{cluster.port('om', 'http')}"
    run_sh(cluster, "volume", "create", f"/{VOL}")
    run_sh(cluster, "bucket", "create", f"/{VOL}/{BUCKET}")
    for key, size in KEYS.items():
        data = tmp_path / "data"
        data.write_bytes(b"k" * size)
        run_sh(cluster, "key", "put", f"/{VOL}/{BUCKET}/{key}", str(data))
    run_sh(cluster, "volume", "setquota", f"/{VOL}", "--space-quota", "1GB", "--namespace-quota", "10")
    with om_stub(cluster) as stub:  # a writer that never commits
        opened = stub.openKey(
            pb.OpenKeyRequest(volume=VOL, bucket=BUCKET, key=OPEN_KEY, dataSize=10), timeout=30
        )

    volumes = run_sh(cluster, "volume", "list").json()
    volume = run_sh(cluster, "volume", "info", f"/{VOL}").json()
    bucket = run_sh(cluster, "bucket", "info", f"/{VOL}/{BUCKET}").json()
    keys = run_sh(cluster, "key", "list", f"/{VOL}/{BUCKET}").json()
    key = run_sh(cluster, "key", "info", f"/{VOL}/{BUCKET}/dir/second").json()
    # the APIs answer the dicts `sh ... --json` prints
    assert api(base, f"/api/v1/volumes/{VOL}") == volume
    assert api(base, f"/api/v1/volumes/{VOL}/buckets/{BUCKET}") == bucket
    assert api(base, f"/api/v1/volumes/{VOL}/buckets/{BUCKET}/keys")["items"] == keys
    detail = api(base, f"/api/v1/volumes/{VOL}/buckets/{BUCKET}/key?name={quote('dir/second')}")
    assert detail["dataSize"] == 250_000 and blocks(detail) == blocks(key)
    assert {v["name"] for v in api(base, "/api/v1/volumes")["items"]} == {v["name"] for v in volumes}

    show(driver, base, "overview")
    assert field(driver, "volumes") == str(len(volumes))  # webvol and the S3 gateway's s3v
    assert int(field(driver, "keys")) >= len(KEYS) and field(driver, "openKeys") != "0"
    assert field(driver, "clusterId") == api(base, "/api/v1/overview")["clusterId"]
    assert "CommitKey" in rows(driver, "requests")

    show(driver, base, "volumes")
    assert set(rows(driver, "volumes")) == {v["name"] for v in volumes}
    assert "1.0 GB" in rows(driver, "volumes")[VOL]

    show(driver, base, "buckets", volume=VOL)
    assert field(driver, "quotaInBytes") == "1.0 GB" and field(driver, "quotaInNamespace") == "10"
    assert field(driver, "usedNamespace") == "1 of 10 (10.0 %)"
    assert list(rows(driver, "buckets")) == [BUCKET]

    show(driver, base, "keys", volume=VOL, bucket=BUCKET)
    assert list(rows(driver, "keys")) == [k["name"] for k in keys] == sorted(KEYS)
    assert driver.execute_script(_PAGER, "keys") == str(len(KEYS))
    assert field(driver, "usedNamespace") == str(len(KEYS))

    show(driver, base, "key", volume=VOL, bucket=BUCKET, key="dir/second")
    assert field(driver, "name") == "dir/second" and "250000 bytes" in field(driver, "dataSize")
    assert field(driver, "replication") == "RATIS/THREE"
    locations = rows(driver, "locations")
    assert list(locations) == [f"{loc['containerID']}-{loc['localID']}" for loc in key["ozoneKeyLocations"]]
    for loc in key["ozoneKeyLocations"]:
        shown = locations[f"{loc['containerID']}-{loc['localID']}"]
        assert all(dn["hostname"] in shown for dn in loc["datanodes"]), shown

    show(driver, base, "openkeys")
    assert f"/{VOL}/{BUCKET}/{OPEN_KEY}/{opened.clientID}" in rows(driver, "openkeys")

    show(driver, base, "services")
    assert field(driver, "keyDeleting.runs").isdigit() and field(driver, "openKeyCleanup.openKeys") != "0"


def test_datanode_pages(cluster: LiveCluster, driver: Any) -> None:
    check_datanode_ui(driver, f"http://{HOST}:{cluster.port('dn1', 'http')}")
