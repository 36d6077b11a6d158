"""OM's pages in headless Chromium over an in-process OM (fake SCM): a bucket's keys a cursor page at a
time (next, prev, and a refresh that keeps the reader's page), and a prefix that narrows the list."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pyozone.proto import OmClientProtocol_pb2 as pb
from tests.browser import browser, needs_chromium, open_page
from tests.polling import wait_for
from tests.unit.om.server.web.om_web import run, running_om

pytestmark = needs_chromium

KEYS = [f"dir/k{i:03d}" for i in range(120)] + ["other"]
_ROWS = """return [...document.querySelectorAll('main#main [data-table="keys"] tbody tr[data-id]')]
  .map((tr) => tr.dataset.id);"""
_CLICK = """const b = [...document.querySelectorAll('main#main [data-pager="keys"] button')]
  .find((x) => x.textContent.includes(arguments[0]));
if (b.disabled) return false;
b.click();
return true;"""

_REFRESH = """document.getElementById("main").dataset.old = "yes";
window.dispatchEvent(new HashChangeEvent("hashchange"));"""  # what the page's timer does
_REFRESHED = """const main = document.getElementById("main");
return main.dataset.loaded === "true" && main.dataset.old !== "yes";"""


def rows(driver: Any) -> list[str]:
    return driver.execute_script(_ROWS)


def turn(driver: Any, button: str, first: str) -> list[str]:
    """Clicks the keys pager's `button` and waits for the page that starts at `first`."""
    assert driver.execute_script(_CLICK, button), f"{button} is disabled"
    return wait_for(lambda: (shown := rows(driver)) and shown[0] == first and shown, 5, f"page at {first}")


def test_keys_are_browsed_a_cursor_page_at_a_time(tmp_path: Path) -> None:
    def browse(url: str) -> None:
        with browser() as driver:
            open_page(driver, url, "keys", "volume=vol1&bucket=bkt")
            assert rows(driver) == KEYS[:50]
            total = driver.execute_script('return document.querySelector("[data-pager=keys]").dataset.total')
            assert total == str(len(KEYS))
            assert turn(driver, "next", KEYS[50]) == KEYS[50:100]
            assert turn(driver, "next", KEYS[100]) == KEYS[100:]
            assert not driver.execute_script(_CLICK, "next")  # the last page
            driver.execute_script(_REFRESH)
            wait_for(lambda: driver.execute_script(_REFRESHED), 5, "the page rendered anew")
            assert rows(driver) == KEYS[100:]  # the reader's page, not the first
            assert turn(driver, "prev", KEYS[50]) == KEYS[50:100]
            assert turn(driver, "prev", KEYS[0]) == KEYS[:50]

            open_page(driver, url, "volumes")
            open_page(driver, url, "keys", "volume=vol1&bucket=bkt&prefix=dir/k11")
            assert rows(driver) == [f"dir/k11{i}" for i in range(10)]

    async def body() -> None:
        async with running_om(tmp_path) as om:
            await om.stub.createVolume(pb.CreateVolumeRequest(volume="vol1"))
            await om.stub.createBucket(pb.CreateBucketRequest(volume="vol1", bucket="bkt"))
            for key in KEYS:
                await om.put_key("vol1", "bkt", key)
            await asyncio.to_thread(browse, om.url)

    run(body())
