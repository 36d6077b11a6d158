"""ContainerScannerService: periodic scans on a short interval, corruption found, clean stop."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pyozone.datanode.scanner_service import ContainerScannerService
from pyozone.datanode.xceiver import Dispatcher
from pyozone.hdds.states import ReplicaState
from tests.polling import wait_for_async
from tests.unit.datanode.dns_helpers import Node, block_writes, close, create, flip_byte, open_node, payload

DN = "dddddddd-0000-4000-8000-000000000004"


def fill(node: Node, cid: int, blocks: int = 2, close_it: bool = True) -> None:
    dispatcher = Dispatcher(node.containers, node.uuid, node.full.append)
    requests = [create(cid)]
    for lid in range(1, blocks + 1):
        requests.extend(block_writes(cid, lid, payload(cid * 10 + lid, 10_000), 4096)[0])
    if close_it:
        requests.append(close(cid))
    for r in requests:
        dispatcher.dispatch(r)


class CountingExecutor(ThreadPoolExecutor):
    """Counts the tasks handed to it: the service scans each container in one."""

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        self.submitted = 0

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.submitted += 1
        return super().submit(fn, *args, **kwargs)


def scanner_node(tmp_path: Path, **conf: str) -> Node:
    settings = {"hdds.container.scrub.data.scan.interval": "100ms", **conf}
    return open_node(tmp_path / "dn", DN, **settings)


def test_the_service_finds_a_corrupted_block_file(tmp_path: Path, executor: ThreadPoolExecutor) -> None:
    node = scanner_node(tmp_path)
    try:
        for cid in (1, 2, 3):
            fill(node, cid, close_it=cid != 3)  # 3 stays OPEN: not scanned
        service = ContainerScannerService(node.containers, node.settings.scanner, executor)
        node.reports.clear()

        async def scenario() -> None:
            stop = asyncio.Event()
            runner = asyncio.create_task(service.run(stop))
            await wait_for_async(lambda: service.passes >= 2, 10, "two scan passes", interval_s=0.02)
            assert node.reports == []  # healthy data: nothing to report
            flip_byte(node.containers.require(2).chunks_dir / "2.block", 5000)
            await wait_for_async(
                lambda: node.containers.require(2).state is ReplicaState.UNHEALTHY,
                10,
                "the scanner finding the damage",
                interval_s=0.02,
            )
            stop.set()
            await asyncio.wait_for(runner, 5)

        asyncio.run(scenario())
        assert [(r.container_id, r.state) for r in node.reports] == [(2, ReplicaState.UNHEALTHY)]
        assert "scanner" in node.containers.require(2).unhealthy_reason
        assert node.containers.require(1).state is ReplicaState.CLOSED
    finally:
        node.close()


def test_scan_once_covers_closed_replicas_of_every_volume(
    tmp_path: Path, executor: ThreadPoolExecutor
) -> None:
    node = scanner_node(tmp_path)
    try:
        for cid in range(1, 6):
            fill(node, cid, close_it=cid != 5)
        assert len({c.volume.root for c in node.containers}) == 2  # round robin over both disks
        service = ContainerScannerService(node.containers, node.settings.scanner, executor)
        results = asyncio.run(service.scan_once())
        assert sorted(r.container_id for r in results) == [1, 2, 3, 4]
        assert all(r.healthy and r.blocks_scanned == 2 and r.bytes_scanned == 20_000 for r in results)
    finally:
        node.close()


def test_scans_are_throttled_per_volume(tmp_path: Path, executor: ThreadPoolExecutor) -> None:
    node = scanner_node(tmp_path, **{"hdds.container.scrub.volume.bytes.per.second": "100KB"})
    try:
        fill(node, 1)  # 20 KB on one volume: about 0.2 s at 100 KB/s
        service = ContainerScannerService(node.containers, node.settings.scanner, executor)
        started = time.monotonic()
        asyncio.run(service.scan_once())
        assert time.monotonic() - started >= 0.15
    finally:
        node.close()


def test_disabled_service_scans_nothing_and_stops(tmp_path: Path, executor: ThreadPoolExecutor) -> None:
    node = scanner_node(tmp_path, **{"hdds.container.scrub.enabled": "false"})
    try:
        fill(node, 1)
        service = ContainerScannerService(node.containers, node.settings.scanner, executor)

        async def scenario() -> None:
            stop = asyncio.Event()
            runner = asyncio.create_task(service.run(stop))
            await asyncio.sleep(0.3)  # three scan intervals go by: a disabled service must not scan
            stop.set()
            await asyncio.wait_for(runner, 2)

        asyncio.run(scenario())
        assert service.passes == 0
    finally:
        node.close()


def test_cancelling_the_service_mid_pass_halts_the_scanning_threads(tmp_path: Path) -> None:
    """A throttled scan (here 2 s per container) lets go as soon as the service is cancelled."""
    node = scanner_node(tmp_path, **{"hdds.container.scrub.volume.bytes.per.second": "10KB"})
    executor = CountingExecutor(2)
    try:
        for cid in (1, 2, 3):
            fill(node, cid)
        service = ContainerScannerService(node.containers, node.settings.scanner, executor)

        async def scenario() -> bool:
            runner = asyncio.create_task(service.run(asyncio.Event()))
            await wait_for_async(lambda: executor.submitted, what="the first (slow) pass under way")
            runner.cancel()
            try:
                await runner
            except asyncio.CancelledError:
                return True
            return False

        assert asyncio.run(scenario())
        started = time.monotonic()
        executor.shutdown(wait=True)
        assert time.monotonic() - started < 5  # not held by a throttled scan for minutes
        assert all(c.state is ReplicaState.CLOSED for c in node.containers)
    finally:
        executor.shutdown(wait=True)
        node.close()


def test_a_container_deleted_while_queued_or_scanned_is_skipped_not_failed(
    tmp_path: Path, executor: ThreadPoolExecutor, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 28 defect 19a: SCM force-deletes replicas at any time (a chaos run counted 7 as UNHEALTHY). One
    deleted while it is being read, or while its scan is queued, went away: it did not fail its scan."""
    node = scanner_node(tmp_path, **{"hdds.container.scrub.volume.bytes.per.second": "1KB"})
    try:
        for cid in (1, 2, 3, 4):
            fill(node, cid)
        by_volume: dict[Path, list[int]] = {}
        for container in sorted(node.containers, key=lambda c: c.container_id):
            by_volume.setdefault(container.volume.root, []).append(container.container_id)
        (a_scanned, a_queued), (b_scanned, b_kept) = by_volume.values()  # each volume scans its lowest first
        doomed = [a_scanned, b_scanned, a_queued]
        service = ContainerScannerService(node.containers, node.settings.scanner, executor)

        def pause(seconds: float) -> None:  # a scan's first throttle pause, mid-block: SCM's deletes arrive
            while doomed:
                node.containers.delete(doomed.pop(), force=True)

        service._pause = pause  # type: ignore[method-assign]
        results = asyncio.run(service.scan_once())
        assert [(r.container_id, r.healthy) for r in results] == [(b_kept, True)]
        assert (service.progress.unhealthy_found, service.progress.pass_unhealthy) == (0, ())
        assert "failed its scan" not in caplog.text
    finally:
        node.close()


def test_a_container_whose_reads_fail_as_it_is_deleted_is_skipped_whatever_they_raise(
    tmp_path: Path, executor: ThreadPoolExecutor, caplog: pytest.LogCaptureFixture
) -> None:
    """A replica deleted under the scanner may fail its reads with anything (its RocksDB closed): the skip
    rests on the replica being gone, not on what the read raised; nothing is logged as a failure."""
    node = scanner_node(tmp_path)
    try:
        fill(node, 1)
        container = node.containers.get(1)
        assert container is not None

        def closed_db(start: int, count: int) -> list[object]:
            node.containers.delete(1, force=True)
            raise RuntimeError("the DB is closed")  # as a closed RocksDB answers

        container.list_blocks = closed_db  # type: ignore[method-assign]
        service = ContainerScannerService(node.containers, node.settings.scanner, executor)
        assert asyncio.run(service.scan_once()) == []
        assert service.progress.unhealthy_found == 0
        assert "failed" not in caplog.text and "Traceback" not in caplog.text
    finally:
        node.close()
