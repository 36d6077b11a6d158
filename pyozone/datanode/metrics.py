"""The datanode's metrics: chunk I/O per volume, heartbeats, SCM's commands, containers, the scanner.

What happens on the data path is counted where it happens, per chunk (chunk_io calls a volume's
`VolumeIOStats`: one perf_counter pair and three prometheus_client updates, about 2 us against the
milliseconds a chunk's I/O takes). What is a state (volume usage, containers by state, queued commands,
the scanner's progress) is read from the daemon's components when scraped, never counted twice.

Sources and their metrics (labels in braces; `volume` is the volume's directory):

    VolumeIOStats                 volume_io_stats_write_bytes_total{volume}, volume_io_stats_read_bytes_total,
                                  volume_io_stats_write_op_count_total, volume_io_stats_read_op_count_total
                                  (Ozone's VolumeIOStats); datanode_chunk_write_seconds{volume} and
                                  datanode_chunk_read_seconds{volume}: histograms (LATENCY_BUCKETS_S) of the
                                  time a chunk's bytes take to reach (pwrite, not synced: putBlock syncs) or
                                  come from (pread, or sendfile to the reader's socket) its block file
    VolumeInfoMetrics             volume_info_metrics_capacity{volume}, _available, _used, _reserved (bytes)
                                  (Ozone's VolumeInfoMetrics), volume_info_metrics_failed (1 once it failed)
    DatanodeHeartbeats            datanode_heartbeats_total{result=success|failure}: heartbeats sent to SCM;
                                  datanode_heartbeat_seconds: their round trip (answered ones)
    CommandHandlerMetrics         datanode_commands_received_total{type}: SCM's commands by type;
                                  datanode_commands_total{type,result=succeeded|failed|dropped}: how they
                                  ended; datanode_command_queue_length{type}: queued and running now
    DatanodeContainers            datanode_containers{state}: replicas by state; datanode_pipelines{role}
    ContainerDataScannerMetrics   container_data_scanner_metrics_num_scan_iterations_total,
                                  ..._num_containers_scanned_total, ..._num_un_healthy_containers_total,
                                  ..._num_bytes_scanned_total (Ozone's names)

Chunk I/O not counted: the scanner's reads (not client I/O, and throttled) and replication imports (whole
container archives, not chunks).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from prometheus_client import Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from pyozone.common.web.metrics import LATENCY_BUCKETS_S, MetricsSystem, prometheus_name
from pyozone.datanode.command_queue import CommandQueue
from pyozone.datanode.pipelines import PipelineSet
from pyozone.datanode.scanner_service import ContainerScannerService
from pyozone.datanode.storage import ContainerSet, HddsVolume, VolumeSet
from pyozone.hdds.states import ReplicaState

IO = "VolumeIOStats"
KINDS = ("write", "read")


class VolumeIOStats:
    """One volume's chunk I/O (chunk_io.IOStats), its labelled series bound once."""

    __slots__ = ("_read_bytes", "_read_ops", "_read_seconds", "_write_bytes", "_write_ops", "_write_seconds")

    def __init__(self, metrics: DatanodeMetrics, volume: str) -> None:
        self._write_bytes = metrics.io_bytes["write"].labels(volume)
        self._write_ops = metrics.io_ops["write"].labels(volume)
        self._write_seconds = metrics.chunk_seconds["write"].labels(volume)
        self._read_bytes = metrics.io_bytes["read"].labels(volume)
        self._read_ops = metrics.io_ops["read"].labels(volume)
        self._read_seconds = metrics.chunk_seconds["read"].labels(volume)

    def wrote(self, nbytes: int, seconds: float) -> None:
        self._write_bytes.inc(nbytes)
        self._write_ops.inc()
        self._write_seconds.observe(seconds)

    def read(self, nbytes: int, seconds: float) -> None:
        self._read_bytes.inc(nbytes)
        self._read_ops.inc()
        self._read_seconds.observe(seconds)


@dataclass(frozen=True, slots=True)
class Latency:
    """One latency histogram's state: `cumulative[i]` observations took at most LATENCY_BUCKETS_S[i]
    seconds (the last entry is +Inf, i.e. `count`)."""

    count: int
    sum_s: float
    cumulative: tuple[int, ...]

    def quantile(self, q: float) -> float | None:
        """Estimated as Prometheus's histogram_quantile does: linear within the bucket holding the q-th
        observation; the highest finite bound when it lies past it; None with no observations."""
        if not self.count:
            return None
        rank, below, lower = q * self.count, 0, 0.0
        for bound, seen in zip(LATENCY_BUCKETS_S, self.cumulative, strict=False):
            if seen >= rank:
                inside = seen - below
                return lower + (bound - lower) * ((rank - below) / inside if inside else 1.0)
            below, lower = seen, bound
        return LATENCY_BUCKETS_S[-1]

    def __add__(self, other: Latency) -> Latency:
        return Latency(
            self.count + other.count,
            self.sum_s + other.sum_s,
            tuple(a + b for a, b in zip(self.cumulative, other.cumulative, strict=True)),
        )


NO_LATENCY = Latency(0, 0.0, (0,) * (len(LATENCY_BUCKETS_S) + 1))


class DatanodeMetrics:
    """Made with the daemon; `attach` gives the volumes their VolumeIOStats as soon as they are loaded,
    `watch` registers the collectors once the datanode's components exist."""

    def __init__(self, metrics: MetricsSystem) -> None:
        self.metrics = metrics
        io = metrics.source(IO)
        self.io_bytes = {
            kind: Counter(
                prometheus_name(IO, f"{kind.title()}Bytes"),
                f"Bytes of chunks {kind} on the volume",
                ["volume"],
                registry=io,
            )
            for kind in KINDS
        }
        self.io_ops = {
            kind: Counter(
                prometheus_name(IO, f"{kind.title()}OpCount"),
                f"Chunk {kind}s on the volume",
                ["volume"],
                registry=io,
            )
            for kind in KINDS
        }
        self.chunk_seconds = {
            kind: Histogram(
                f"datanode_chunk_{kind}_seconds",
                f"Time to {kind} a chunk's bytes on the volume",
                ["volume"],
                buckets=LATENCY_BUCKETS_S,
                registry=io,
            )
            for kind in KINDS
        }
        beats = metrics.source("DatanodeHeartbeats")
        self.heartbeats = Counter("datanode_heartbeats", "Heartbeats sent to SCM", ["result"], registry=beats)
        self.heartbeat_seconds = Histogram(
            "datanode_heartbeat_seconds",
            "Round trip of the heartbeats SCM answered",
            buckets=LATENCY_BUCKETS_S,
            registry=beats,
        )

    def attach(self, volumes: Iterable[HddsVolume]) -> None:
        for volume in volumes:
            volume.io_stats = VolumeIOStats(self, str(volume.root))

    def heartbeat(self, seconds: float, ok: bool) -> None:
        """HeartbeatLoop's observer."""
        self.heartbeats.labels("success" if ok else "failure").inc()
        if ok:
            self.heartbeat_seconds.observe(seconds)

    def watch(
        self,
        volumes: VolumeSet,
        containers: ContainerSet,
        pipelines: PipelineSet,
        queue: CommandQueue,
        scanner: ContainerScannerService,
    ) -> None:
        self.metrics.add_collector("VolumeInfoMetrics", _VolumeInfo(volumes))
        self.metrics.add_collector("CommandHandlerMetrics", _Commands(queue))
        self.metrics.add_collector("DatanodeContainers", _Containers(containers, pipelines))
        self.metrics.add_collector("ContainerDataScannerMetrics", _Scanner(scanner))

    def latency(self) -> dict[str, dict[str, Latency]]:
        """Per volume, per kind ("write", "read"): its chunk latency histogram since the datanode started."""
        found: dict[str, dict[str, Latency]] = {}
        for kind in KINDS:
            for volume, latency in _histograms(self.chunk_seconds[kind]):
                found.setdefault(volume, {k: NO_LATENCY for k in KINDS})[kind] = latency
        return found


def _histograms(histogram: Histogram) -> Iterator[tuple[str, Latency]]:
    """Each volume's series of `histogram`, read through its public collect()."""
    series: dict[str, dict[str, float]] = {}
    buckets: dict[str, list[tuple[float, int]]] = {}
    for family in histogram.collect():
        for sample in family.samples:
            volume = sample.labels["volume"]
            if sample.name.endswith("_bucket"):
                buckets.setdefault(volume, []).append((float(sample.labels["le"]), int(sample.value)))
            else:
                series.setdefault(volume, {})[sample.name.rsplit("_", 1)[1]] = sample.value
    for volume, values in series.items():
        cumulative = tuple(n for _, n in sorted(buckets.get(volume, []), key=lambda b: b[0]))
        yield volume, Latency(int(values.get("count", 0)), values.get("sum", 0.0), cumulative)


def _gauge(source: str, metric: str, doc: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(prometheus_name(source, metric), doc, labels=labels)


class _VolumeInfo:
    def __init__(self, volumes: VolumeSet) -> None:
        self.volumes = volumes

    def collect(self) -> Iterator[Metric]:
        src = "VolumeInfoMetrics"
        capacity = _gauge(src, "Capacity", "Bytes of the volume's filesystem", ["volume"])
        available = _gauge(src, "Available", "Bytes new data may take (free less reserved)", ["volume"])
        used = _gauge(src, "Used", "Bytes the volume's containers hold", ["volume"])
        reserved = _gauge(src, "Reserved", "Bytes kept free (hdds.datanode.dir.du.reserved)", ["volume"])
        failed = _gauge(src, "Failed", "1 once the volume failed", ["volume"])
        for volume in self.volumes.data_volumes:
            report, name = volume.report(), [str(volume.root)]
            capacity.add_metric(name, report.capacity)
            available.add_metric(name, report.remaining)
            used.add_metric(name, report.used)
            reserved.add_metric(name, volume.reserved_bytes)
            failed.add_metric(name, int(volume.is_failed))
        yield from (capacity, available, used, reserved, failed)


class _Commands:
    def __init__(self, queue: CommandQueue) -> None:
        self.queue = queue

    def collect(self) -> Iterator[Metric]:
        queued = self.queue.counts()
        received = CounterMetricFamily(
            "datanode_commands_received", "SCM's commands received", labels=["type"]
        )
        ended = CounterMetricFamily(
            "datanode_commands", "SCM's commands by how they ended", labels=["type", "result"]
        )
        length = GaugeMetricFamily(
            "datanode_command_queue_length", "Commands queued or running", labels=["type"]
        )
        for kind in sorted({*queued, *self.queue.received}, key=lambda k: k.name):
            received.add_metric([kind.name], self.queue.received[kind])
            length.add_metric([kind.name], queued.get(kind, 0))
        for (kind, result), n in sorted(self.queue.outcomes.items(), key=lambda o: (o[0][0].name, o[0][1])):
            ended.add_metric([kind.name, result], n)
        yield from (received, ended, length)


class _Containers:
    def __init__(self, containers: ContainerSet, pipelines: PipelineSet) -> None:
        self.containers = containers
        self.pipelines = pipelines

    def collect(self) -> Iterator[Metric]:
        counts = dict.fromkeys((s for s in ReplicaState if s is not ReplicaState.DELETED), 0)
        for container in self.containers:
            counts[container.state] = counts.get(container.state, 0) + 1
        by_state = GaugeMetricFamily("datanode_containers", "Container replicas by state", labels=["state"])
        for state, n in counts.items():
            by_state.add_metric([state.name], n)
        roles = {"LEADER": 0, "FOLLOWER": 0}
        for membership in self.pipelines.all():
            roles["LEADER" if membership.is_leader else "FOLLOWER"] += 1
        by_role = GaugeMetricFamily(
            "datanode_pipelines", "Pipelines this datanode is a member of", labels=["role"]
        )
        for role, n in roles.items():
            by_role.add_metric([role], n)
        yield from (by_state, by_role)


class _Scanner:
    def __init__(self, scanner: ContainerScannerService) -> None:
        self.scanner = scanner

    def collect(self) -> Iterator[Metric]:
        progress, src = self.scanner.progress, "ContainerDataScannerMetrics"
        for metric, doc, value in (
            ("NumScanIterations", "Passes of the data scanner over every closed replica", progress.passes),
            ("NumContainersScanned", "Replicas the data scanner verified", progress.containers_scanned),
            ("NumUnHealthyContainers", "Replicas the data scanner found damaged", progress.unhealthy_found),
            ("NumBytesScanned", "Bytes the data scanner read and verified", progress.bytes_scanned),
        ):
            yield CounterMetricFamily(prometheus_name(src, metric), doc, value=value)
