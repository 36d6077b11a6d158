"""RECOVERING replicas (an EC reconstruction's targets, issue 14 contract 7) in the storage layer: never in a
report until closed, UNHEALTHY after a restart (Ozone's ContainerReader), deleted once stale (Ozone's
recovering-container scrubbing), and scanned like any replica once closed."""

from __future__ import annotations

import asyncio
import contextlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyozone.datanode.scanner_service import RecoveringScrubService
from pyozone.datanode.settings import RecoveringScrubSettings
from pyozone.datanode.storage import ContainerError, ContainerScanner, ContainerSet, KeyValueContainer
from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.states import ReplicaState
from tests.polling import wait_for_async
from tests.unit.datanode.dnd_helpers import async_test
from tests.unit.datanode.storage.dn_helpers import Node, open_node, write_block
from tests.unit.datanode.storage.test_dn_scanner import flip_byte

TIMEOUT_S = 20 * 60  # ozone.recovering.container.timeout's default


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _recovering(node: Node, cid: int = 5, index: int = 4) -> KeyValueContainer:
    return node.containers.create(cid, "dn", "", replica_index=index, state=ReplicaState.RECOVERING)


def _watch(containers: ContainerSet) -> list[ContainerReplicaReport]:
    reports: list[ContainerReplicaReport] = []
    containers.on_change(reports.append)
    return reports


def test_a_recovering_replica_is_in_no_report_until_it_closes(node: Node) -> None:
    reports = _watch(node.containers)
    container = _recovering(node)
    write_block(container, 1, (4096, 4096), 0)
    assert reports == [] and node.containers.replica_reports() == []
    assert container.close()  # RECOVERING -> CLOSED in one step: the coordinator declares it whole
    assert [(r.state, r.replica_index, r.key_count) for r in reports] == [(ReplicaState.CLOSED, 4, 1)]
    assert [r.state for r in node.containers.replica_reports()] == [ReplicaState.CLOSED]


def test_a_recovering_replica_left_by_a_restart_is_loaded_unhealthy(tmp_path: Path) -> None:
    node = open_node(tmp_path / "dn")
    write_block(_recovering(node), 1, (4096,), 0)
    node.close()
    again = open_node(tmp_path / "dn")
    try:
        [report] = again.containers.replica_reports()
        assert (report.container_id, report.state, report.replica_index) == (5, ReplicaState.UNHEALTHY, 4)
        assert again.containers.recovering_older_than(0) == []
    finally:
        again.close()


def _scrubber(containers: ContainerSet, executor: ThreadPoolExecutor) -> RecoveringScrubService:
    return RecoveringScrubService(containers, RecoveringScrubSettings(), executor)


def test_a_stale_recovering_replica_is_deleted_after_the_timeout_and_never_reported(tmp_path: Path) -> None:
    clock = Clock()
    node = open_node(tmp_path / "dn")
    node.containers = ContainerSet(node.volumes, clock=clock)
    reports = _watch(node.containers)
    with ThreadPoolExecutor(1) as executor:
        scrubber = _scrubber(node.containers, executor)
        assert scrubber.timeout_s == TIMEOUT_S and scrubber.interval_s == 60
        stale = _recovering(node, 5)
        write_block(stale, 1, (4096,), 0)
        clock.now += TIMEOUT_S - 1
        fresh = _recovering(node, 6)
        closed = _recovering(node, 7)
        closed.close()
        assert scrubber.scrub_once() == []
        clock.now += 1
        assert scrubber.scrub_once() == [5]
        clock.now += TIMEOUT_S
        assert scrubber.scrub_once() == [6]
    assert [c.container_id for c in node.containers] == [7] and not stale.directory.exists()
    assert fresh.state is ReplicaState.DELETED
    assert [(r.container_id, r.state) for r in reports] == [(7, ReplicaState.CLOSED)]
    node.close()


def test_a_recovering_replica_lost_with_its_volume_is_no_longer_timed(tmp_path: Path) -> None:
    """Forgotten with its failed volume, it is not handed to the scrubber, which could never delete it."""
    clock = Clock()
    node = open_node(tmp_path / "dn")
    node.containers = ContainerSet(node.volumes, clock=clock)
    lost = _recovering(node, 5)
    lost.volume.mark_failed("test: disk gone")
    assert node.containers.remove_failed_volume_containers() == [5]
    clock.now += TIMEOUT_S
    assert node.containers.recovering_older_than(1) == []
    with ThreadPoolExecutor(1) as executor:
        assert _scrubber(node.containers, executor).scrub_once() == []
    node.close()


def test_a_replica_closed_as_the_scrubber_runs_is_kept(node: Node) -> None:
    container = _recovering(node)
    container.close()
    assert not node.containers.delete(5, force=True, only_if=ReplicaState.RECOVERING)
    assert node.containers.get(5) is container and container.directory.exists()


def test_the_scanner_finds_a_corrupted_cell_of_an_ec_replica(node: Node) -> None:
    """The same check as a Ratis replica's: each cell is a chunk with its checksums."""
    reports = _watch(node.containers)
    container = _recovering(node)
    block, _ = write_block(container, 1, (4096, 4096, 1000), 0)
    container.close()
    flip_byte(container, block.block_id.local_id, 4096 + 10)  # the second cell
    [result] = ContainerScanner(node.containers).scan_all()
    assert not result.healthy and "1_chunk_1" in result.errors[0]
    assert container.state is ReplicaState.UNHEALTHY
    assert [(r.state, r.replica_index) for r in reports] == [
        (ReplicaState.CLOSED, 4),
        (ReplicaState.UNHEALTHY, 4),
    ]


_OPS = ("close", "mark_closing", "quasi_close", "mark_unhealthy", "scrub", "force_delete")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start=st.sampled_from([ReplicaState.OPEN, ReplicaState.RECOVERING]),
    ops=st.lists(st.sampled_from(_OPS), max_size=6),
)
def test_no_report_ever_names_a_recovering_replica_and_a_restart_keeps_what_was_reported(
    tmp_path_factory: pytest.TempPathFactory, start: ReplicaState, ops: list[str]
) -> None:
    """Whatever happens to a replica: SCM hears of it only once it leaves RECOVERING, every state it heard
    is the state on disk, and a restart brings back that state (RECOVERING comes back UNHEALTHY)."""
    root = tmp_path_factory.mktemp("dn")
    node = open_node(root, disks=1)
    reports = _watch(node.containers)
    container = node.containers.create(5, "dn", "", replica_index=2, state=start)
    known = start is not ReplicaState.RECOVERING  # SCM has heard of it
    for op in ops:
        if op == "scrub":
            node.containers.delete(5, force=True, only_if=ReplicaState.RECOVERING)
        elif op == "force_delete":
            node.containers.delete(5, force=True)
        else:
            with contextlib.suppress(ContainerError):
                getattr(container, op)(*(["test"] if op == "mark_unhealthy" else []))
        if container.state is ReplicaState.DELETED:
            break
        known = known or container.state is not ReplicaState.RECOVERING
    assert all(r.state is not ReplicaState.RECOVERING for r in reports)
    assert all(r.state is not ReplicaState.RECOVERING for r in node.containers.replica_reports())
    final = container.state
    if known:
        assert reports[-1].state is final
    else:
        assert reports == []  # never out of RECOVERING: SCM never heard of it, nor of its deletion
    node.close()
    again = open_node(root, disks=1)
    try:
        loaded = again.containers.get(5)
        if final is ReplicaState.DELETED:
            assert loaded is None
        else:
            assert loaded is not None
            assert loaded.state is (ReplicaState.UNHEALTHY if final is ReplicaState.RECOVERING else final)
    finally:
        again.close()


@async_test
async def test_the_scrub_service_runs_on_its_interval_until_stopped(node: Node) -> None:
    settings = RecoveringScrubSettings(interval_ms=20, timeout_ms=0)
    _recovering(node)
    stop = asyncio.Event()
    with ThreadPoolExecutor(1) as executor:
        service = asyncio.ensure_future(RecoveringScrubService(node.containers, settings, executor).run(stop))
        await wait_for_async(lambda: 5 not in node.containers, what="the stale replica deleted")
        stop.set()
        await asyncio.wait_for(service, 5)
