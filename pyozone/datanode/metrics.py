"""The datanode's metrics: chunk I/O per volume, heartbeats, SCM's commands, containers, the scanner.

What happens on the data path is counted where it happens, per chunk (chunk_io calls a volume's
`VolumeIOStats`: one perf_counter pair and a few additions under one lock, about 1 us against the hundreds
of microseconds a chunk's request takes), and exported when scraped. What is a state (volume usage,
containers by state, queued commands, the scanner's progress) is read from the daemon's components when
scraped, never counted twice.

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
    DatanodeContainers            datanode_containers{state}: replicas by state; datanode_pipelines{role}:
                                  pipelines by this member's elected role (LEADER, FOLLOWER)
    RatisServer                   per pipeline this datanode is a member of (labels instance = this datanode,
                                  group = the Raft group as Ratis prints it, as Ozone's datanode exports
                                  Ratis' metrics): Ratis' ratis_server_peerCommitIndex{follower} (each
                                  member's commit index as this member knows it: a follower knows its own)
                                  and ratis_state_machine_appliedIndex; pyozone's ratis_server_term,
                                  ratis_server_last_index and ratis_server_role{role} (1 for this member's
                                  role: LEADER, CANDIDATE, FOLLOWER; Ratis has no gauge of these)
    StorageContainerMetrics       storage_container_metrics_num_ops_total{type}: requests dispatched by
                                  command type (PutSmallFile, ...), a client's and every pipeline log entry
                                  applied here (Ozone's ContainerMetrics numOps and num<Type>)
    ContainerDataScannerMetrics   container_data_scanner_metrics_num_scan_iterations_total,
                                  ..._num_containers_scanned_total, ..._num_un_healthy_containers_total,
                                  ..._num_bytes_scanned_total (Ozone's names)

Chunk I/O not counted: the scanner's reads (not client I/O, and throttled) and replication imports (whole
container archives, not chunks).
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import accumulate

from prometheus_client import Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.utils import floatToGoString

from pyozone.common.web.metrics import LATENCY_BUCKETS_S, MetricsSystem, prometheus_name
from pyozone.datanode.command_queue import CommandQueue
from pyozone.datanode.pipelines import PipelineSet
from pyozone.datanode.scanner_service import ContainerScannerService
from pyozone.datanode.storage import ContainerSet, HddsVolume, VolumeSet
from pyozone.hdds.states import ReplicaState
from pyozone.ratis.messages import CommitInfos
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis_server.member_api import RaftStatus

IO = "VolumeIOStats"
OPS = "StorageContainerMetrics"
KINDS = ("write", "read")


class VolumeIOStats:
    """One volume's chunk I/O (chunk_io.IOStats): bytes, ops, seconds and latency bucket counts per kind,
    plain numbers under one lock (a fraction of what prometheus_client's Counter and Histogram cost: they
    take four locks), exported by the VolumeIOStats collector when scraped."""

    __slots__ = ("_lock", "_read", "_write", "volume")

    def __init__(self, volume: str) -> None:
        self.volume = volume
        self._lock = threading.Lock()
        self._write = _new_tally()
        self._read = _new_tally()

    def wrote(self, nbytes: int, seconds: float) -> None:
        with self._lock:
            _add(self._write, nbytes, seconds)

    def read(self, nbytes: int, seconds: float) -> None:
        with self._lock:
            _add(self._read, nbytes, seconds)

    def snapshot(self) -> dict[str, tuple[int, Latency]]:
        """Per kind ("write", "read"): (bytes, latency)."""
        with self._lock:
            tallies = {"write": list(self._write), "read": list(self._read)}
        return {kind: (int(t[_BYTES]), _latency(t)) for kind, t in tallies.items()}


_BYTES, _OPS, _SECONDS, _BUCKETS = 0, 1, 2, 3
"""A tally: [bytes, ops, seconds, then one count per bucket of LATENCY_BUCKETS_S and +Inf]."""


def _new_tally() -> list[float]:
    return [0, 0, 0.0] + [0] * (len(LATENCY_BUCKETS_S) + 1)


def _add(tally: list[float], nbytes: int, seconds: float) -> None:
    tally[_BYTES] += nbytes
    tally[_OPS] += 1
    tally[_SECONDS] += seconds
    tally[_BUCKETS + bisect_left(LATENCY_BUCKETS_S, seconds)] += 1


def _latency(tally: list[float]) -> Latency:
    return Latency(int(tally[_OPS]), tally[_SECONDS], tuple(int(n) for n in accumulate(tally[_BUCKETS:])))


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
        self.volume_io: dict[str, VolumeIOStats] = {}
        metrics.add_collector(IO, _VolumeIO(self.volume_io))
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
            stats = self.volume_io[str(volume.root)] = VolumeIOStats(str(volume.root))
            volume.io_stats = stats

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
        container_ops: Callable[[], dict[str, int]],
        raft: Callable[[], Iterable[tuple[RaftStatus, CommitInfos]]] = tuple,
    ) -> None:
        """`container_ops`: the dispatcher's requests by command type (Dispatcher.ops.counts); `raft`: the
        status and commit infos of each running pipeline member (PipelineGroups.raft_statuses)."""
        self.metrics.add_collector("VolumeInfoMetrics", _VolumeInfo(volumes))
        self.metrics.add_collector(OPS, _ContainerOps(container_ops))
        self.metrics.add_collector("CommandHandlerMetrics", _Commands(queue))
        self.metrics.add_collector("DatanodeContainers", _Containers(containers, pipelines))
        self.metrics.add_collector("ContainerDataScannerMetrics", _Scanner(scanner))
        self.metrics.add_collector("RatisServer", _PipelineRaft(raft))

    def latency(self) -> dict[str, dict[str, Latency]]:
        """Per volume, per kind ("write", "read"): its chunk latency since the datanode started."""
        return {
            volume: {kind: latency for kind, (_, latency) in stats.snapshot().items()}
            for volume, stats in self.volume_io.items()
        }


_BOUNDS = [*(floatToGoString(b) for b in LATENCY_BUCKETS_S), "+Inf"]


class _VolumeIO:
    def __init__(self, volumes: dict[str, VolumeIOStats]) -> None:
        self.volumes = volumes

    def collect(self) -> Iterator[Metric]:
        snapshots = {volume: stats.snapshot() for volume, stats in self.volumes.items()}
        for kind in KINDS:
            size = CounterMetricFamily(
                prometheus_name(IO, f"{kind.title()}Bytes"),
                f"Bytes of chunks {kind} on the volume",
                labels=["volume"],
            )
            ops = CounterMetricFamily(
                prometheus_name(IO, f"{kind.title()}OpCount"),
                f"Chunk {kind}s on the volume",
                labels=["volume"],
            )
            seconds = HistogramMetricFamily(
                f"datanode_chunk_{kind}_seconds",
                f"Time to {kind} a chunk's bytes on the volume",
                labels=["volume"],
            )
            for volume, snapshot in snapshots.items():
                nbytes, latency = snapshot[kind]
                size.add_metric([volume], nbytes)
                ops.add_metric([volume], latency.count)
                seconds.add_metric(
                    [volume], list(zip(_BOUNDS, latency.cumulative, strict=True)), latency.sum_s
                )
            yield from (size, ops, seconds)


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
        for report in self.pipelines.reports():
            roles["LEADER" if report.is_leader else "FOLLOWER"] += 1
        by_role = GaugeMetricFamily(
            "datanode_pipelines", "Pipelines this datanode is a member of", labels=["role"]
        )
        for role, n in roles.items():
            by_role.add_metric([role], n)
        yield from (by_state, by_role)


def ratis_group_name(pipeline_id: str) -> str:
    """The Raft group of a pipeline as Ratis prints it (RaftGroupId.toString: "group-" and the last 12 hex
    digits of its UUID, upper case), the `group` label of Ozone's exported Ratis metrics."""
    return f"group-{pipeline_id.replace('-', '')[-12:].upper()}"


class _PipelineRaft:
    def __init__(self, statuses: Callable[[], Iterable[tuple[RaftStatus, CommitInfos]]]) -> None:
        self.statuses = statuses

    def collect(self) -> Iterator[Metric]:
        labels = ["instance", "group"]
        peer_commit = GaugeMetricFamily(
            "ratis_server_peerCommitIndex",
            "A member's commit index as this member knows it",
            labels=[*labels, "follower"],
        )
        applied = GaugeMetricFamily(
            "ratis_state_machine_appliedIndex", "The last entry this member applied", labels=labels
        )
        term = GaugeMetricFamily("ratis_server_term", "This member's current term", labels=labels)
        last = GaugeMetricFamily(
            "ratis_server_last_index", "The last entry of this member's log", labels=labels
        )
        role = GaugeMetricFamily(
            "ratis_server_role", "1 for this member's role in its group", labels=[*labels, "role"]
        )
        for status, infos in self.statuses():
            names = [status.me.id, ratis_group_name(status.group_id)]
            for peer, index in infos:
                peer_commit.add_metric([*names, peer.id], index)
            applied.add_metric(names, status.applied_index)
            term.add_metric(names, status.term)
            last.add_metric(names, status.last_index)
            for r in RaftPeerRole:
                role.add_metric([*names, r.name], int(status.role is r))
        yield from (peer_commit, applied, term, last, role)


class _ContainerOps:
    def __init__(self, counts: Callable[[], dict[str, int]]) -> None:
        self.counts = counts

    def collect(self) -> Iterator[Metric]:
        ops = CounterMetricFamily(
            prometheus_name(OPS, "NumOps"), "Container requests dispatched, by type", labels=["type"]
        )
        for kind, n in self.counts().items():
            ops.add_metric([kind], n)
        yield ops


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
