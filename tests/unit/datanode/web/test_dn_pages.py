"""The datanode's pages in headless Chromium, on an in-process datanode: every page renders and shows what
the JSON APIs answer (tests/e2e/webui/datanode_checks.py, which the e2e test runs on a live cluster too)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.browser import browser, needs_chromium
from tests.e2e.webui.datanode_checks import check_datanode_ui
from tests.unit.datanode.dnd_helpers import FakeScm, async_test, dn_conf, running
from tests.unit.datanode.web.test_dn_api import populate


@needs_chromium
@async_test
async def test_every_page_shows_what_the_apis_answer(tmp_path: Path, scm: FakeScm) -> None:
    async with running(dn_conf(tmp_path, scm.address)) as dn:
        await populate(dn, scm)
        with browser() as driver:  # selenium blocks: off the loop that serves the pages
            await asyncio.to_thread(check_datanode_ui, driver, f"http://127.0.0.1:{dn.http_port}", "dn-unit")
