"""The datanode's background scrubbers on timers: ContainerScannerService, the data scanner (Ozone's
BackgroundContainerDataScanner), and RecoveringScrubService, which removes the RECOVERING replicas of
reconstructions given up.

Every hdds.container.scrub.data.scan.interval (measured from the start of one pass to the start of the
next) it re-reads every CLOSED and QUASI_CLOSED replica and verifies each chunk against its checksums, so
bit rot on idle data is found before a client needs that replica. As in Ozone, each volume is scanned by
its own scanner at hdds.container.scrub.volume.bytes.per.second, the volumes in parallel, so the scan
load on any one disk is bounded. A damaged replica is marked UNHEALTHY by the scanner (the ContainerSet
listener then reports it to SCM). A scan failure never ends the service.

Stopping: a scan runs in a worker thread, which a cancelled await does not stop, and a throttled scan of
one 5 GB container takes many minutes. So when run() ends (stop set or cancelled) it halts the threads
too: their next throttle pause raises, and they let go of the container at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from concurrent.futures import Executor
from dataclasses import dataclass

from pyozone.datanode.settings import RecoveringScrubSettings, ScannerSettings
from pyozone.datanode.storage import (
    ContainerError,
    ContainerScanner,
    ContainerSet,
    KeyValueContainer,
    ScanResult,
)
from pyozone.datanode.storage.scanner import SCANNABLE
from pyozone.hdds.states import ReplicaState

log = logging.getLogger(__name__)


class ScanHalted(Exception):
    """Raised inside a scanning thread once the service has stopped."""


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(slots=True)
class ScanProgress:
    """What the scanner has done, for metrics and the web UI (kept on the event loop). Totals since start;
    `pass_*` are the current pass, or the last one once it ended (`pass_ended_ms` then set)."""

    passes: int = 0
    containers_scanned: int = 0
    unhealthy_found: int = 0
    bytes_scanned: int = 0
    pass_started_ms: int = 0
    pass_ended_ms: int = 0
    pass_containers: int = 0
    pass_scanned: int = 0
    pass_unhealthy: tuple[int, ...] = ()
    next_pass_ms: int = 0


class ContainerScannerService:
    def __init__(self, containers: ContainerSet, settings: ScannerSettings, executor: Executor) -> None:
        self.containers = containers
        self.executor = executor
        self.enabled = settings.enabled
        self.interval_s = settings.data_scan_interval_ms / 1000
        self.bytes_per_second = settings.volume_bytes_per_second
        self.progress = ScanProgress()
        self._halt = threading.Event()

    @property
    def passes(self) -> int:
        return self.progress.passes

    def _pause(self, seconds: float) -> None:
        """The scanners' throttle sleep, cut short (by raising) when the service stops."""
        if self._halt.wait(seconds):
            raise ScanHalted

    async def run(self, stop: asyncio.Event) -> None:
        """Scans every interval until `stop` is set; returns at once (after stop) when disabled."""
        if not self.enabled:
            log.info("container scanner disabled (hdds.container.scrub.enabled=false)")
            await stop.wait()
            return
        log.info("container scanner every %.1fs at %d B/s per volume", self.interval_s, self.bytes_per_second)
        self._halt.clear()
        try:
            while not stop.is_set():
                started = time.monotonic()
                try:
                    await self.scan_once(stop)
                except Exception:
                    log.exception("container scan pass failed")
                wait = self.interval_s - (time.monotonic() - started)
                self.progress.next_pass_ms = _now_ms() + int(max(0.0, wait) * 1000)
                if wait > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), wait)
        finally:
            self._halt.set()

    async def scan_once(self, stop: asyncio.Event | None = None) -> list[ScanResult]:
        """One pass over every CLOSED/QUASI_CLOSED replica, volumes in parallel; ends early on `stop`."""
        by_volume: dict[str, list[KeyValueContainer]] = {}
        for container in sorted(self.containers.by_state(*SCANNABLE), key=lambda c: c.container_id):
            by_volume.setdefault(str(container.volume.root), []).append(container)
        started = time.monotonic()
        progress = self.progress
        progress.pass_started_ms, progress.pass_ended_ms = _now_ms(), 0
        progress.pass_containers = sum(len(cs) for cs in by_volume.values())
        progress.pass_scanned, progress.pass_unhealthy = 0, ()
        per_volume = await asyncio.gather(*(self._scan_volume(cs, stop) for cs in by_volume.values()))
        results = [r for volume_results in per_volume for r in volume_results]
        damaged = [r.container_id for r in results if not r.healthy]
        progress.passes += 1
        progress.pass_ended_ms, progress.pass_unhealthy = _now_ms(), tuple(sorted(damaged))
        log.info(
            "container scan: %d containers, %d bytes in %.1fs; unhealthy: %s",
            len(results), sum(r.bytes_scanned for r in results), time.monotonic() - started,
            damaged or "none",
        )  # fmt: skip
        return results

    async def _scan_volume(
        self, containers: list[KeyValueContainer], stop: asyncio.Event | None
    ) -> list[ScanResult]:
        scanner = ContainerScanner(self.containers, self.bytes_per_second, sleep=self._pause)
        loop, results = asyncio.get_running_loop(), []
        for container in containers:
            if stop is not None and stop.is_set():
                break
            try:
                result = await loop.run_in_executor(self.executor, scanner.scan_container, container)
            except ScanHalted:
                break
            except Exception:
                log.exception("scanning container %d failed", container.container_id)
                continue
            if not result.skipped:
                results.append(result)
                self._count(result)
            if not result.healthy:
                log.warning("container %d failed its scan: %s", result.container_id, "; ".join(result.errors))
        return results

    def _count(self, result: ScanResult) -> None:
        progress = self.progress
        progress.containers_scanned += 1
        progress.pass_scanned += 1
        progress.bytes_scanned += result.bytes_scanned
        progress.unhealthy_found += not result.healthy


class RecoveringScrubService:
    """Deletes RECOVERING replicas older than ozone.recovering.container.timeout, every
    hdds.datanode.recovering.container.scrubbing.service.interval (Ozone's
    StaleRecoveringContainerScrubbingService): an EC reconstruction whose coordinator died never closes
    its targets, and SCM, which never heard of them, would never delete them."""

    def __init__(
        self, containers: ContainerSet, settings: RecoveringScrubSettings, executor: Executor
    ) -> None:
        self.containers = containers
        self.executor = executor
        self.interval_s = settings.interval_ms / 1000
        self.timeout_s = settings.timeout_ms / 1000

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.interval_s)
            if not stop.is_set():
                try:
                    await asyncio.get_running_loop().run_in_executor(self.executor, self.scrub_once)
                except Exception:
                    log.exception("recovering-container scrub failed")

    def scrub_once(self) -> list[int]:
        """Deletes the stale RECOVERING replicas (blocks on disk I/O); returns the ids deleted. A replica
        its coordinator closes meanwhile is kept (the delete checks its state under its lock)."""
        deleted = []
        for cid in self.containers.recovering_older_than(self.timeout_s):
            try:
                if self.containers.delete(cid, force=True, only_if=ReplicaState.RECOVERING):
                    deleted.append(cid)
            except ContainerError as e:  # gone meanwhile, or its disk failed: the next pass sees
                log.warning("stale recovering container %d not deleted: %s", cid, e)
        if deleted:
            log.info(
                "deleted %d RECOVERING containers older than %.0fs (their reconstruction was given up): %s",
                len(deleted), self.timeout_s, deleted,
            )  # fmt: skip
        return deleted
