"""OM's metrics, for /prom and /jmx (docs/web.md).

Source OMMetrics:
  om_request_seconds{type}            histogram: every request by Ozone's request type (CreateVolume,
                                      CreateKey, CommitKey, AllocateBlock, LookupKey, ...; rpc.py names them)
  om_request_failures_total{type}     the requests of the histogram that ended in an error status
  om_metrics_num_<op>_total           Ozone's OMMetrics counters: NumVolumeCreates, NumBucketCreates,
  om_metrics_num_<op>_fails_total     NumKeyAllocate (CreateKey), NumBlockAllocations, NumKeyCommits,
                                      NumKeyLookup, NumKeyDeletes, ... and their Fails; as in Ozone, a failed
                                      request counts in both
  om_metrics_num_{volume,bucket,key}_ops_total   the requests of each kind
  om_metrics_num_volumes, om_metrics_num_buckets, om_metrics_num_keys, om_metrics_num_open_keys
                                      gauges: the namespace's last count (counts.py)
Source DeletingServiceMetrics:
  deleting_service_metrics_num_keys_processed_total   deletedTable entries KeyDeletingService handed to SCM
  deleting_service_metrics_num_keys_purged_total      entries SCM took in full, removed from deletedTable
  om_key_deleting_service_runs_total, om_key_deleting_service_failed_runs_total (SCM could not be asked)
  om_key_deleting_service_pending_keys                gauge: deletedTable entries (last count)
  om_open_key_cleanup_service_runs_total, om_open_key_cleanup_service_keys_expired_total
Source S3LifecycleServiceMetrics (om/lifecycle.py; pyozone's):
  om_s3_lifecycle_service_runs_total, om_s3_lifecycle_service_keys_expired_total (current versions),
  om_s3_lifecycle_service_versions_expired_total (noncurrent versions),
  om_s3_lifecycle_service_markers_removed_total (expired object delete markers),
  om_s3_lifecycle_service_uploads_aborted_total (incomplete multipart uploads)
  om_s3_lifecycle_service_last_run_duration_seconds   gauge: how long the last run took

Source OzoneManagerDoubleBufferMetrics (om.db's double buffer, double_buffer.py):
  ozone_manager_double_buffer_metrics_total_num_of_flush_operations_total      synced batches written
  ozone_manager_double_buffer_metrics_total_num_of_flushed_transactions_total  transactions in them
  ozone_manager_double_buffer_metrics_max_number_of_transactions_flushed_in_one_iteration
  ozone_manager_double_buffer_metrics_avg_flush_transactions_in_one_iteration
  ozone_manager_double_buffer_metrics_flush_time_seconds_total                 time spent writing batches
  ozone_manager_double_buffer_metrics_unflushed_transactions                   gauge: waiting for a flush
  om_scm_block_allocation_requests_total, om_scm_block_allocation_calls_total  block requests, and the
                                      allocateScmBlock calls that served them (block_batcher.py)

Source OMHAMetrics (OM HA only: om/server/ha.py), read from the Raft member when scraped:
  om_ha_metrics_ozone_manager_ha_leader_state{nodeid,leadernodeid}   1 on the OM that leads and executes
                                      (Ozone's OMHAMetrics OzoneManagerHALeaderState), else 0
  om_ratis_role{role}                 1 for this OM's Raft role (LEADER, FOLLOWER, CANDIDATE), else 0
  om_ratis_term, om_ratis_last_index, om_ratis_commit_index, om_ratis_applied_index   this member's
  om_ratis_follower_match_index{follower}, om_ratis_follower_lag{follower}   on the leader: each follower's
                                      match index and the entries it is behind (pyozone's names; Ratis's own
                                      ratis_* metrics are not modelled); the gauges are SCM HA's too
                                      (ratis_server/raft_gauges.py)

A request is observed once (`observe`, called by rpc.py for every request): the histogram and the failure
counter. Ozone's counters are read from those two when scraped, so no request is counted twice.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass

from prometheus_client import Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from pyozone.common.web.metrics import LATENCY_BUCKETS_S, MetricsSystem, prometheus_name
from pyozone.om.block_batcher import BlockBatcher
from pyozone.om.lifecycle import S3LifecycleService
from pyozone.om.metadata import OMMetadataStore
from pyozone.om.server.counts import COUNT_CAP, NamespaceCounter
from pyozone.om.server.ha import OmReplication
from pyozone.om.services import KeyDeletingService, OpenKeyCleanupService
from pyozone.ratis_server.raft_gauges import RaftGauges

SOURCE = "OMMetrics"
BUFFER_SOURCE = "OzoneManagerDoubleBufferMetrics"
DELETING_SOURCE = "DeletingServiceMetrics"
HA_SOURCE = "OMHAMetrics"
LIFECYCLE_SOURCE = "S3LifecycleServiceMetrics"
SCRAPE_MAX_AGE_S = 30.0
"""A scrape shows the namespace's last count, and starts a new one when that is older."""


@dataclass(frozen=True, slots=True)
class OzoneOp:
    """Ozone's OMMetrics counters of one request type; `kind` names its NumVolumeOps / NumBucketOps /
    NumKeyOps (None: Ozone counts it in none)."""

    count: str
    kind: str | None

    @property
    def fails(self) -> str:
        """NumKeyCommits -> NumKeyCommitFails, NumKeyLookup -> NumKeyLookupFails (Ozone's names)."""
        return self.count.removesuffix("s") + "Fails"


OZONE_OPS: dict[str, OzoneOp] = {
    "CreateVolume": OzoneOp("NumVolumeCreates", "Volume"),
    "SetVolumeProperty": OzoneOp("NumVolumeUpdates", "Volume"),
    "InfoVolume": OzoneOp("NumVolumeInfos", "Volume"),
    "DeleteVolume": OzoneOp("NumVolumeDeletes", "Volume"),
    "ListVolume": OzoneOp("NumVolumeLists", "Volume"),
    "CreateBucket": OzoneOp("NumBucketCreates", "Bucket"),
    "InfoBucket": OzoneOp("NumBucketInfos", "Bucket"),
    "SetBucketProperty": OzoneOp("NumBucketUpdates", "Bucket"),
    "DeleteBucket": OzoneOp("NumBucketDeletes", "Bucket"),
    "ListBuckets": OzoneOp("NumBucketLists", "Bucket"),
    "CreateKey": OzoneOp("NumKeyAllocate", "Key"),
    "LookupKey": OzoneOp("NumKeyLookup", "Key"),
    "RenameKey": OzoneOp("NumKeyRenames", "Key"),
    "DeleteKey": OzoneOp("NumKeyDeletes", "Key"),
    "ListKeys": OzoneOp("NumKeyLists", "Key"),
    "CommitKey": OzoneOp("NumKeyCommits", "Key"),
    "AllocateBlock": OzoneOp("NumBlockAllocations", None),
    "ServiceList": OzoneOp("NumGetServiceLists", None),
    "InitiateMultiPartUpload": OzoneOp("NumInitiateMultipartUploads", "Key"),
    "CommitMultiPartUpload": OzoneOp("NumCommitMultipartUploadParts", "Key"),
    "CompleteMultiPartUpload": OzoneOp("NumCompleteMultipartUploads", "Key"),
    "AbortMultiPartUpload": OzoneOp("NumAbortMultipartUploads", "Key"),
    "ListMultiPartUploadParts": OzoneOp("NumListMultipartUploadParts", "Key"),
    "ListMultipartUploads": OzoneOp("NumListMultipartUploads", "Key"),
}
"""Ozone's OMMetrics for each request type it counts (OMMetrics.java); other types are in the histogram."""

KINDS = ("Volume", "Bucket", "Key")
READS = ("Info", "List", "Lookup", "Get", "ServiceList", "Echo")
"""Request types that change nothing, by their start."""


@dataclass(frozen=True, slots=True)
class RequestStats:
    count: int
    failures: int
    seconds: float  # all of them together


class OMMetrics:
    """The OM's metrics in `system`. Requests are observed from the start; the namespace and the services
    once OM has bound to its cluster (`watch`)."""

    def __init__(self, system: MetricsSystem) -> None:
        self.system = system
        registry = system.source(SOURCE)
        self.seconds = Histogram(
            "om_request_seconds", "OM requests by type, with their latency",
            ["type"], registry=registry, buckets=LATENCY_BUCKETS_S,
        )  # fmt: skip
        self.failures = Counter(
            "om_request_failures", "OM requests that ended in an error status", ["type"], registry=registry
        )
        system.add_collector(SOURCE, _OzoneCounters(self))
        self._timers: dict[str, tuple[Histogram, bool]] = {}
        """Each request type's histogram child, and whether the type may change the namespace."""
        self.changes = 0
        """Requests so far that may have changed the namespace (failed ones too: a refused commit
        abandons its open key): the version of its counts (counts.py), not a metric."""

    def observe(self, request_type: str, seconds: float, failed: bool) -> None:
        """One request (rpc.py's RequestObserver)."""
        child = self._timers.get(request_type)
        if child is None:  # the histogram's child of each type, found once (labels() locks and looks up)
            child = self._timers[request_type] = (
                self.seconds.labels(request_type),
                not request_type.startswith(READS),
            )
        child[0].observe(seconds)
        if failed:
            self.failures.labels(request_type).inc()
        if child[1]:
            self.changes += 1

    def by_type(self) -> dict[str, RequestStats]:
        """Requests so far by type, read from the histogram and the failure counter."""
        found: dict[str, dict[str, float]] = {}
        for family in (*self.seconds.collect(), *self.failures.collect()):
            for sample in family.samples:
                field = sample.name.rpartition("_")[2]
                if field in ("count", "sum", "total"):
                    found.setdefault(sample.labels["type"], {})[field] = sample.value
        return {
            kind: RequestStats(int(f.get("count", 0)), int(f.get("total", 0)), f.get("sum", 0.0))
            for kind, f in found.items()
        }

    def watch(
        self, counter: NamespaceCounter, deleting: KeyDeletingService, cleanup: OpenKeyCleanupService
    ) -> None:
        """Gauges of the namespace's counts and the services' progress, read when scraped."""
        self.system.add_collector(SOURCE, _NamespaceGauges(counter))
        self.system.add_collector(DELETING_SOURCE, _ServiceProgress(counter, deleting, cleanup))

    def watch_lifecycle(self, lifecycle: S3LifecycleService) -> None:
        """The S3 lifecycle service's progress, read when scraped."""
        self.system.add_collector(LIFECYCLE_SOURCE, _LifecycleProgress(lifecycle))

    def watch_raft(self, replication: OmReplication) -> None:
        """OM HA: the Raft member's role, term, indexes and followers, read when scraped."""
        self.system.add_collector(
            HA_SOURCE,
            RaftGauges("om", "om_ha_metrics_ozone_manager_ha_leader_state", "OM", replication.report),
        )

    def watch_writes(self, store: OMMetadataStore, blocks: BlockBatcher) -> None:
        """The double buffer's flushes and the batched block requests, read when scraped."""
        self.system.add_collector(BUFFER_SOURCE, _WritePath(store, blocks))


class _WritePath:
    def __init__(self, store: OMMetadataStore, blocks: BlockBatcher) -> None:
        self.store = store
        self.blocks = blocks

    def collect(self) -> Iterator[Metric]:
        flushes = self.store.flush_stats()
        name = functools.partial(prometheus_name, BUFFER_SOURCE)
        yield _counter(name("TotalNumOfFlushOperations"), "synced batches written", flushes.flushes)
        yield _counter(
            name("TotalNumOfFlushedTransactions"), "transactions in those batches", flushes.transactions
        )
        yield GaugeMetricFamily(
            name("MaxNumberOfTransactionsFlushedInOneIteration"),
            "the most transactions one batch held",
            value=flushes.max_transactions_in_one_flush,
        )
        yield GaugeMetricFamily(
            name("AvgFlushTransactionsInOneIteration"),
            "transactions per batch on average",
            value=flushes.transactions / flushes.flushes if flushes.flushes else 0.0,
        )
        yield CounterMetricFamily(
            name("FlushTimeSeconds"), "seconds spent writing batches", value=flushes.flush_seconds
        )
        yield GaugeMetricFamily(
            name("UnflushedTransactions"), "transactions waiting for a flush", value=flushes.unflushed
        )
        batches = self.blocks.stats()
        yield _counter("om_scm_block_allocation_requests", "block requests to SCM", batches.requests)
        yield _counter(
            "om_scm_block_allocation_calls", "allocateScmBlock calls that served them", batches.calls
        )


class _OzoneCounters:
    def __init__(self, metrics: OMMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        seen = self.metrics.by_type()
        ops = dict.fromkeys(KINDS, 0)
        for kind, op in OZONE_OPS.items():
            stats = seen.get(kind, RequestStats(0, 0, 0.0))
            yield _counter(prometheus_name(SOURCE, op.count), f"{kind} requests", stats.count)
            yield _counter(prometheus_name(SOURCE, op.fails), f"{kind} requests that failed", stats.failures)
            if op.kind is not None:
                ops[op.kind] += stats.count
        for kind, count in ops.items():
            yield _counter(prometheus_name(SOURCE, f"Num{kind}Ops"), f"{kind.lower()} requests", count)


class _NamespaceGauges:
    def __init__(self, counter: NamespaceCounter) -> None:
        self.counter = counter

    def collect(self) -> Iterator[Metric]:
        self.counter.refresh(SCRAPE_MAX_AGE_S)
        counts = self.counter.latest
        if counts is None:  # the first count is still running
            return
        for name, value, what in (
            ("NumVolumes", counts.volumes, "volumes"),
            ("NumBuckets", counts.buckets, "buckets"),
            ("NumKeys", counts.keys, "committed keys (the buckets' usedNamespace)"),
            (
                "NumOpenKeys",
                counts.open_keys,
                f"keys being written (openKeyTable, counted up to {COUNT_CAP})",
            ),
        ):
            yield GaugeMetricFamily(prometheus_name(SOURCE, name), what, value=value)


class _ServiceProgress:
    def __init__(
        self, counter: NamespaceCounter, deleting: KeyDeletingService, cleanup: OpenKeyCleanupService
    ) -> None:
        self.counter = counter
        self.deleting = deleting
        self.cleanup = cleanup

    def collect(self) -> Iterator[Metric]:
        deleting, cleanup = self.deleting.progress, self.cleanup.progress
        yield _counter(
            prometheus_name(DELETING_SOURCE, "NumKeysProcessed"),
            "deletedTable entries handed to SCM",
            deleting.keys_processed,
        )
        yield _counter(
            prometheus_name(DELETING_SOURCE, "NumKeysPurged"),
            "deletedTable entries SCM took in full, removed",
            deleting.keys_purged,
        )
        yield _counter("om_key_deleting_service_runs", "KeyDeletingService runs", deleting.runs)
        yield _counter(
            "om_key_deleting_service_failed_runs",
            "KeyDeletingService runs in which SCM could not be asked",
            deleting.failed_runs,
        )
        yield _counter("om_open_key_cleanup_service_runs", "OpenKeyCleanupService runs", cleanup.runs)
        yield _counter(
            "om_open_key_cleanup_service_keys_expired",
            "open keys expired, their blocks sent to deletion",
            cleanup.keys_expired,
        )
        self.counter.refresh(SCRAPE_MAX_AGE_S)
        counts = self.counter.latest
        if counts is not None:
            yield GaugeMetricFamily(
                "om_key_deleting_service_pending_keys",
                f"deletedTable entries whose blocks SCM must still delete (counted up to {COUNT_CAP})",
                value=counts.pending_deletions,
            )


class _LifecycleProgress:
    def __init__(self, lifecycle: S3LifecycleService) -> None:
        self.lifecycle = lifecycle

    def collect(self) -> Iterator[Metric]:
        progress = self.lifecycle.progress
        for name, what, value in (
            ("runs", "S3 lifecycle service runs", progress.runs),
            ("keys_expired", "current versions expired", progress.keys_expired),
            ("versions_expired", "noncurrent versions expired", progress.versions_expired),
            ("markers_removed", "expired object delete markers removed", progress.markers_removed),
            ("uploads_aborted", "incomplete multipart uploads aborted", progress.uploads_aborted),
        ):
            yield _counter(f"om_s3_lifecycle_service_{name}", what, value)
        yield GaugeMetricFamily(
            "om_s3_lifecycle_service_last_run_duration_seconds",
            "how long the last S3 lifecycle run took",
            value=progress.last_run_duration_ms / 1000,
        )


def _counter(name: str, documentation: str, value: int) -> CounterMetricFamily:
    return CounterMetricFamily(name, documentation, value=value)
