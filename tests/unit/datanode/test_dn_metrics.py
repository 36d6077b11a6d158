"""The datanode's metrics (datanode/metrics.py): chunk I/O counted per volume where chunk_io does it, the
latency quantiles read from the histograms, and the state collectors (volumes, commands, containers,
pipelines, scanner) in Prometheus text that parses."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from pyozone.common.web.metrics import LATENCY_BUCKETS_S, MetricsSystem
from pyozone.datanode.command_queue import CommandHandler, CommandQueue, QueueLimits
from pyozone.datanode.metrics import NO_LATENCY, DatanodeMetrics, Latency
from pyozone.datanode.pipelines import PipelineSet
from pyozone.datanode.scanner_service import ContainerScannerService
from pyozone.datanode.storage import KeyValueContainer, chunk_io
from pyozone.datanode.xceiver.dispatcher import ContainerOps
from pyozone.hdds.commands import CloseContainerCommand, SCMCommand
from pyozone.hdds.states import SCMCommandType as T
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.polling import wait_for_async
from tests.unit.datanode.dnd_helpers import async_test, put_block
from tests.unit.datanode.dns_helpers import Node

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def samples(metrics: MetricsSystem) -> Samples:
    text = metrics.prometheus_text().decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(found: Samples, name: str, **labels: str) -> float:
    return found[name, frozenset(labels.items())]


@pytest.fixture
def metrics() -> DatanodeMetrics:
    return DatanodeMetrics(MetricsSystem("HddsDatanode", process=False))


def _container(node: Node, cid: int) -> KeyValueContainer:
    return node.containers.create(cid, node.uuid, "p1")


def test_chunk_writes_and_reads_are_counted_on_their_volume(node_a: Node, metrics: DatanodeMetrics) -> None:
    metrics.attach(node_a.volumes.data_volumes)
    container = _container(node_a, 1)
    data = b"x" * 3000
    put_block(container, 1, data, 1)
    put_block(container, 2, data, 2)
    block = container.list_blocks()[0]
    container.read_chunk(block.block_id, block.chunks[0])
    volume = str(container.volume.root)
    other = next(str(v.root) for v in node_a.volumes.data_volumes if v is not container.volume)
    found = samples(metrics.metrics)
    assert value(found, "volume_io_stats_write_bytes_total", volume=volume) == 6000
    assert value(found, "volume_io_stats_write_op_count_total", volume=volume) == 2
    assert value(found, "volume_io_stats_read_bytes_total", volume=volume) == 3000
    assert value(found, "volume_io_stats_read_op_count_total", volume=volume) == 1
    assert value(found, "datanode_chunk_write_seconds_count", volume=volume) == 2
    assert value(found, "datanode_chunk_read_seconds_count", volume=volume) == 1
    assert value(found, "volume_io_stats_write_bytes_total", volume=other) == 0  # every volume is exported
    latency = metrics.latency()
    assert latency[volume]["write"].count == 2 and latency[volume]["read"].count == 1
    assert latency[other]["write"] == NO_LATENCY


def test_the_scanner_reads_are_not_client_io(node_a: Node, metrics: DatanodeMetrics, executor) -> None:
    metrics.attach(node_a.volumes.data_volumes)
    container = _container(node_a, 1)
    put_block(container, 1, b"y" * 2048, 1)
    container.mark_closing()
    container.close()
    scanner = ContainerScannerService(node_a.containers, node_a.settings.scanner, executor)
    results = asyncio.run(scanner.scan_once())
    assert [r.container_id for r in results] == [1]
    volume = str(container.volume.root)
    assert value(samples(metrics.metrics), "volume_io_stats_read_op_count_total", volume=volume) == 0


class _Stats:
    def __init__(self) -> None:
        self.reads: list[int] = []

    def wrote(self, nbytes: int, seconds: float) -> None:
        raise AssertionError("a send is a read")

    def read(self, nbytes: int, seconds: float) -> None:
        assert seconds >= 0
        self.reads.append(nbytes)


def test_a_sendfile_read_is_counted_with_the_bytes_sent(tmp_path: Path) -> None:
    path = tmp_path / "1.block"
    path.write_bytes(bytes(range(256)) * 16)
    stats = _Stats()
    left, right = socket.socketpair()
    with left, right, open(path, "rb") as file:
        assert chunk_io.send_at(left, file, 100, 1000, stats) == 1000
        received = b""
        while len(received) < 1000:
            received += right.recv(4096)
    assert received == path.read_bytes()[100:1100]
    assert stats.reads == [1000]


def test_quantiles_interpolate_within_buckets_as_histogram_quantile() -> None:
    assert NO_LATENCY.quantile(0.5) is None
    # 10 observations: 4 up to 0.5 ms, 4 more up to 1 ms, 2 more up to 2.5 ms
    cumulative = (4, 8, 10, *([10] * (len(LATENCY_BUCKETS_S) - 2)))
    latency = Latency(10, 0.01, cumulative)
    assert latency.quantile(0.2) == pytest.approx(0.00025)  # rank 2 of 4 in [0, 0.5 ms]
    assert latency.quantile(0.6) == pytest.approx(0.00075)  # rank 6: halfway through (0.5, 1] ms
    assert latency.quantile(0.9) == pytest.approx(0.00175)  # rank 9: halfway through (1, 2.5] ms
    slow = Latency(2, 40.0, (*([0] * len(LATENCY_BUCKETS_S)), 2))  # every one past the last bound
    assert slow.quantile(0.5) == LATENCY_BUCKETS_S[-1]
    assert (latency + slow).count == 12 and (latency + slow).cumulative[-1] == 12


def test_heartbeats_are_counted_by_result_and_timed_when_answered(metrics: DatanodeMetrics) -> None:
    metrics.heartbeat(0.002, True)
    metrics.heartbeat(0.004, True)
    metrics.heartbeat(2.0, False)
    found = samples(metrics.metrics)
    assert value(found, "datanode_heartbeats_total", result="success") == 2
    assert value(found, "datanode_heartbeats_total", result="failure") == 1
    assert value(found, "datanode_heartbeat_seconds_count") == 2
    assert value(found, "datanode_heartbeat_seconds_sum") == pytest.approx(0.006)


class _Handler(CommandHandler):
    async def handle(self, command: SCMCommand) -> None:
        if command.id == 2:
            raise RuntimeError("disk on fire")


@async_test
async def test_state_is_read_when_scraped(tmp_path: Path, node_a: Node, executor) -> None:
    metrics = DatanodeMetrics(MetricsSystem("HddsDatanode", process=False))
    queue = CommandQueue(
        {T.closeContainerCommand: _Handler()}, QueueLimits(2, 10, 2.0, {}), now_ms=lambda: 1000
    )
    pipelines = PipelineSet(tmp_path, node_a.uuid)
    pipelines.add("p-led", (node_a.uuid, "other"), node_a.uuid)
    pipelines.add("p-followed", ("other", node_a.uuid), "other")
    scanner = ContainerScannerService(node_a.containers, node_a.settings.scanner, executor)
    ops = ContainerOps()
    metrics.watch(node_a.volumes, node_a.containers, pipelines, queue, scanner, ops.counts)
    first = samples(metrics.metrics)
    assert not [n for n, _ in first if n == "storage_container_metrics_num_ops_total"]
    for kind in (pb.PutSmallFile, pb.PutSmallFile, pb.GetSmallFile):
        ops.add(kind)
    assert value(first, "datanode_containers", state="OPEN") == 0
    assert value(first, "container_data_scanner_metrics_num_scan_iterations_total") == 0

    _container(node_a, 1)
    closed = _container(node_a, 2)
    put_block(closed, 1, b"z" * 1024, 1)
    closed.mark_closing()
    closed.close()
    await scanner.scan_once()
    assert queue.submit(CloseContainerCommand(container_id=1, id=1))
    assert queue.submit(CloseContainerCommand(container_id=2, id=2))
    assert not queue.submit(CloseContainerCommand(container_id=3, id=3, deadline_epoch_ms=999))
    await wait_for_async(lambda: sum(queue.outcomes.values()) == 3, what="both commands run")

    found = samples(metrics.metrics)
    assert value(found, "datanode_containers", state="OPEN") == 1
    assert value(found, "storage_container_metrics_num_ops_total", type="PutSmallFile") == 2
    assert value(found, "storage_container_metrics_num_ops_total", type="GetSmallFile") == 1
    assert value(found, "datanode_containers", state="CLOSED") == 1
    assert value(found, "datanode_pipelines", role="LEADER") == 1
    assert value(found, "datanode_pipelines", role="FOLLOWER") == 1
    kind = "closeContainerCommand"
    assert value(found, "datanode_commands_received_total", type=kind) == 3
    assert value(found, "datanode_commands_total", type=kind, result="succeeded") == 1
    assert value(found, "datanode_commands_total", type=kind, result="failed") == 1
    assert value(found, "datanode_commands_total", type=kind, result="dropped") == 1
    assert value(found, "datanode_command_queue_length", type=kind) == 0
    assert value(found, "container_data_scanner_metrics_num_scan_iterations_total") == 1
    assert value(found, "container_data_scanner_metrics_num_containers_scanned_total") == 1
    assert value(found, "container_data_scanner_metrics_num_un_healthy_containers_total") == 0
    assert value(found, "container_data_scanner_metrics_num_bytes_scanned_total") == 1024
    volume = node_a.volumes.data_volumes[0]
    root = str(volume.root)
    assert value(found, "volume_info_metrics_capacity", volume=root) > 0
    assert value(found, "volume_info_metrics_used", volume=root) == volume.used
    assert value(found, "volume_info_metrics_failed", volume=root) == 0
    assert [(o.command_id, o.result) for o in queue.recent] == [
        (3, "dropped"),
        (1, "succeeded"),
        (2, "failed"),
    ]
    assert "disk on fire" in queue.recent[-1].reason
    await queue.close(1)
