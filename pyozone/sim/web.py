"""`pyozone sim --serve`: SCM's web UI over the simulator's core, the same application the daemon serves.

The core is single-threaded and sans-IO, so one asyncio loop both answers requests and advances virtual
time: in slices of at most SLICE_MS of virtual time with a yield to the loop between slices, so a request
waits for at most one slice (plus whatever SCM work falls due in it, as it would on the daemon's tick
loop). At speed 1 virtual wall time is the real clock's (the cluster's epoch is set so, and the time the
run before serving took is caught up first), so "last heartbeat 10s ago" means ten real seconds; at
speed X virtual time runs X times as fast as the real clock from the moment serving starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Callable

from aiohttp import web

from pyozone.common.http_server import HttpServer
from pyozone.common.net import HostPort
from pyozone.common.web.app import daemon_app
from pyozone.common.web.metrics import MetricsSystem
from pyozone.config import OzoneConfiguration
from pyozone.scm.server.metrics import register_scm_metrics
from pyozone.scm.server.readiness import readiness_routes
from pyozone.scm.server.web import UI, scm_api
from pyozone.sim.cluster import SimCluster

STEP_S = 0.25
"""How often (real seconds) virtual time is brought up to the pace."""
SLICE_MS = 1_000
"""The most virtual time advanced without letting a request in."""


def scm_web_app(cluster: SimCluster, conf: OzoneConfiguration, scm_id: str) -> web.Application:
    """SCM's web application (UI, JSON APIs, metrics, operator endpoints) over the simulated core."""
    core = cluster.scm
    metrics = MetricsSystem("StorageContainerManager")
    cluster.heartbeat_observer = register_scm_metrics(metrics, core).heartbeat_seconds.observe
    api = {**scm_api(core, scm_id), "/api/v1/ratis": lambda _: {"ha": False}}  # one simulated SCM
    return daemon_app(metrics, conf, readiness_routes(core, lambda: True), api, UI)


class Pace:
    """Where virtual time should be now: `speed` times the real time since `start`, plus, at speed 1,
    the lag of virtual wall time behind the real clock at the start (caught up at once)."""

    def __init__(self, cluster: SimCluster, speed: float, monotonic: Callable[[], float] = time.monotonic):
        if speed <= 0:
            raise ValueError(f"speed {speed} must be positive")
        self._clock, self._speed, self._monotonic = cluster.clock, speed, monotonic
        self._start_s = monotonic()
        lag_ms = time.time_ns() // 1_000_000 - cluster.clock.wall_ms() if speed == 1 else 0
        self._base_ms = cluster.clock.now_ms() + max(0, lag_ms)

    def target_ms(self) -> int:
        elapsed_ms = (self._monotonic() - self._start_s) * 1000
        return max(self._clock.now_ms(), self._base_ms + int(self._speed * elapsed_ms))


async def keep_pace(
    cluster: SimCluster, pace: Pace, seconds: float | None, after_slice: Callable[[], None]
) -> None:
    """Advances the cluster with `pace` for `seconds` of real time (None: until cancelled), calling
    `after_slice` after every slice of virtual time."""
    deadline = None if seconds is None else time.monotonic() + seconds
    while deadline is None or time.monotonic() < deadline:
        target = pace.target_ms()
        while cluster.clock.now_ms() < target and (deadline is None or time.monotonic() < deadline):
            cluster.advance(min(SLICE_MS, target - cluster.clock.now_ms()))
            after_slice()
            await asyncio.sleep(0)
        await asyncio.sleep(STEP_S)


async def serve(
    cluster: SimCluster,
    app: web.Application,
    address: HostPort,
    speed: float,
    seconds: float | None,
    announce: Callable[[str], None],
    after_slice: Callable[[], None] = lambda: None,
) -> None:
    """Serves `app` on `address` for `seconds` (None: until cancelled) while virtual time keeps the pace
    of `speed`; `announce` gets the URL once the server listens."""
    server = HttpServer(app)
    host = address.host
    bound = await server.start(host, address.port)
    # What the run built lives while serving: out of the cyclic collector's sight, whose full collections
    # would otherwise walk it all (seconds of stall with a million containers).
    gc.freeze()
    try:
        announce(f"http://{f'[{host}]' if ':' in host else host}:{bound}/")
        await keep_pace(cluster, Pace(cluster, speed), seconds, after_slice)
    finally:
        gc.unfreeze()
        await server.stop()


def serve_ui(
    cluster: SimCluster,
    conf: OzoneConfiguration,
    scm_id: str,
    address: HostPort,
    speed: float,
    seconds: float | None,
    announce: Callable[[str], None],
    after_slice: Callable[[], None] = lambda: None,
) -> None:
    """`serve` SCM's web application on its own event loop, until `seconds` passed or Ctrl-C."""
    app = scm_web_app(cluster, conf, scm_id)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(cluster, app, address, speed, seconds, announce, after_slice))
