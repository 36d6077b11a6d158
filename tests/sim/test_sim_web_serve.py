"""`pyozone sim --serve`: SCM's web application over the simulated core, with virtual time kept at a pace of
the real clock on the same event loop (sim/web.py)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from pyozone.common.net import HostPort
from pyozone.sim.web import SLICE_MS, Pace, scm_web_app, serve
from tests.polling import wait_for_async

MINUTE = 60_000


class FakeMonotonic:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def real_ms() -> int:
    return time.time_ns() // 1_000_000


def test_at_speed_one_virtual_wall_time_catches_up_with_the_real_clock_then_keeps_step(sim) -> None:
    c = sim.cluster(3, seed=2)
    c.clock.set(MINUTE)
    behind = real_ms() - c.clock.wall_ms()  # the fixed epoch is in the past: virtual wall time lags
    monotonic = FakeMonotonic()
    pace = Pace(c, 1, monotonic)
    first = pace.target_ms()
    assert abs(first - (MINUTE + behind)) < 5_000
    monotonic.now += 2.5
    assert pace.target_ms() == first + 2_500


def test_at_another_speed_virtual_time_runs_that_much_faster_from_the_start(sim) -> None:
    c = sim.cluster(3, seed=2)
    monotonic = FakeMonotonic()
    pace = Pace(c, 30, monotonic)
    assert pace.target_ms() == 0
    monotonic.now += 2
    assert pace.target_ms() == 60_000
    c.advance(90_000)  # ahead of the pace (the run before serving): time never goes back
    assert pace.target_ms() == 90_000
    with pytest.raises(ValueError, match="positive"):
        Pace(c, 0)


async def fetch(session: aiohttp.ClientSession, url: str) -> tuple[int, Any]:
    async with session.get(url) as response:
        body = await (response.json() if response.content_type == "application/json" else response.text())
        return response.status, body


def test_serves_scms_ui_apis_and_metrics_while_time_goes_on(sim) -> None:
    c = sim.cluster(5, seed=3)
    sim.leave_safe_mode(c)
    started_ms = c.clock.now_ms()
    urls: list[str] = []
    slices: list[int] = []

    def after_slice() -> None:
        slices.append(c.clock.now_ms())

    async def scenario() -> None:
        app = scm_web_app(c, c.conf, "scm-test-id")
        server = asyncio.create_task(
            serve(c, app, HostPort("127.0.0.1", 0), 120, None, urls.append, after_slice)
        )
        base = await wait_for_async(lambda: urls and urls[0], what="the URL")
        try:
            async with aiohttp.ClientSession() as session:
                status, ready = await fetch(session, f"{base}ready")
                assert status == 200 and ready["ready"] and not ready["safeMode"]
                status, page = await fetch(session, base)
                assert status == 200 and "/ui/scm.js" in page
                # 120 virtual seconds a second: heartbeats go on while requests are answered
                beats = c.heartbeats_delivered
                await wait_for_async(lambda: c.clock.now_ms() >= started_ms + MINUTE, what="a virtual minute")
                assert c.heartbeats_delivered >= beats + 5
                status, text = await fetch(session, f"{base}prom")
                assert status == 200
                samples = {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples}
                assert samples["scm_node_metrics_num_hb_processed_total"] >= c.heartbeats_delivered - 5
                assert samples["scm_heartbeat_seconds_count"] > 0  # observed on the simulated core
                assert samples["safe_mode_metrics_scm_in_safe_mode"] == 0
        finally:
            server.cancel()
            await asyncio.gather(server, return_exceptions=True)

    asyncio.run(asyncio.wait_for(scenario(), 30))
    assert all(b - a <= SLICE_MS for a, b in zip([started_ms, *slices], slices, strict=False))


def test_serving_for_some_seconds_ends_and_closes_the_port(sim) -> None:
    c = sim.cluster(3, seed=5)
    urls: list[str] = []

    async def scenario() -> str:
        await serve(c, scm_web_app(c, c.conf, "id"), HostPort("127.0.0.1", 0), 1, 0.3, urls.append)
        return urls[0]

    url = asyncio.run(asyncio.wait_for(scenario(), 20))

    async def refused() -> None:
        async with aiohttp.ClientSession() as session:
            with pytest.raises(aiohttp.ClientConnectionError):
                await fetch(session, f"{url}ready")

    asyncio.run(refused())
