"""SCM's metrics sources: what /prom and /jmx show of a core, the daemon's or the simulator's.

The core keeps its counters as plain ints (scm/node/metrics.py, scm/replication/metrics.py, the block
manager's allocations) and its state in per-state indices; the collectors here read both when scraped, so
nothing is counted twice and the core stays sans-IO. The one metric the server observes itself is the
heartbeat latency (datanode_service.py); on the simulator's core nothing observes it.

A scrape costs O(datanodes) plus O(pipeline configs x states): containers come from the container
manager's per-state index, Replication Manager health from its last report, nothing walks containers.

Sources and their metrics (Prometheus names as Hadoop's sink makes them; counters end in `_total`):

SCMNodeMetrics
- scm_node_metrics_num_hb_processed_total: heartbeats processed from registered datanodes
- scm_node_metrics_num_hb_processing_failed_total: heartbeats from unknown datanodes (told to register)
- scm_node_metrics_num_node_report_processed_total / ..._num_node_report_processing_failed_total
- scm_node_metrics_num_node_command_queue_report_processed_total: command queue reports taken in
- scm_node_metrics_nodes{health,operational_state}: datanodes per state pair (every pair, zeros too)
- scm_node_metrics_disk_capacity / _disk_used / _disk_remaining: bytes of in-service live datanodes
- scm_commands_sent_total{type,datanode}: commands handed to a heartbeat response, per type and datanode
- scm_heartbeat_seconds: histogram of sendHeartbeat's handling time at the daemon
SCMContainerMetrics
- scm_container_metrics_<state>_containers (open, closing, quasi_closed, closed, deleting, deleted,
  recovering) and scm_container_metrics_total_containers
SCMPipelineMetrics
- scm_pipelines{state,replication_type,replication}: pipelines per state and replication config
- scm_pipeline_metrics_num_blocks_allocated_total{replication}: blocks allocated since start
SafeModeMetrics
- safe_mode_metrics_scm_in_safe_mode, safe_mode_metrics_pre_check_passed: 1 or 0
- safe_mode_metrics_rule_validated{rule,pre_check}: 1 once the rule passed
ReplicationManagerMetrics
- replication_manager_metrics_<counter>_total: every counter of ReplicationManagerMetrics (commands
  sent, replicas created / deleted, timeouts, deferred and partial work), Ratis and EC apart
- replication_manager_metrics_inflight_replication / _inflight_deletion / _inflight_ec_replication /
  _inflight_ec_deletion: pending replica operations; _under_replicated_queue_size / _over_...
- replication_manager_metrics_<state>_containers: the last report, per lifecycle state and per health
  state (ContainerHealthState.metric_name: under_replicated_containers, missing_containers, ...)
ContainerBalancerMetrics
- container_balancer_metrics_num_iterations_total, ..._num_container_moves_scheduled_total /
  _completed_total / _failed_total / _timeout_total, ..._data_size_moved_gb_total (Ozone's DataSizeMovedGB):
  every run since SCM started
- container_balancer_metrics_num_datanodes_unbalanced, ..._data_size_unbalanced_gb: when the latest
  iteration started
- container_balancer_metrics_num_container_moves_scheduled_in_latest_iteration (and _completed_, _failed_,
  _timeout_), ..._num_datanodes_involved_in_latest_iteration, ..._data_size_moved_bytes_in_latest_iteration
  (bytes), ..._data_size_moved_gb_in_latest_iteration: the iteration under way, else the last one
SCMHAMetrics (SCM HA only, `register_scm_ha_metrics`: the Raft member's report, ratis_server/raft_gauges.py
as OM HA's)
- scmha_metrics_scmha_leader_state{nodeid,leadernodeid}: 1 on the SCM that leads and serves (Ozone's
  SCMHAMetrics SCMHALeaderState), else 0
- scm_ratis_role{role}: 1 for this SCM's Raft role (LEADER, FOLLOWER, CANDIDATE), else 0
- scm_ratis_term, scm_ratis_last_index, scm_ratis_commit_index, scm_ratis_applied_index: this member's
- scm_ratis_follower_match_index{follower}, scm_ratis_follower_lag{follower}: on the leader, each
  follower's match index and the entries it is behind (pyozone's names, as OM's)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from typing import Any

from prometheus_client import Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from pyozone.common.web.metrics import LATENCY_BUCKETS_S, MetricsSystem, prometheus_name, snake
from pyozone.hdds.replication_report import REPORT_HEALTH_STATES
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, NodeState, PipelineState
from pyozone.ratis_server.raft_gauges import RaftGauges
from pyozone.scm.replication.pending_ops import PendingOpType
from pyozone.scm.scm import StorageContainerManager

NODES = "SCMNodeMetrics"
CONTAINERS = "SCMContainerMetrics"
PIPELINES = "SCMPipelineMetrics"
SAFE_MODE = "SafeModeMetrics"
REPLICATION = "ReplicationManagerMetrics"
HA = "SCMHAMetrics"
BALANCER = "ContainerBalancerMetrics"
_GB = 1 << 30


@dataclass(frozen=True, slots=True)
class ScmServerMetrics:
    """What the daemon's services observe themselves."""

    heartbeat_seconds: Histogram


def register_scm_metrics(metrics: MetricsSystem, core: StorageContainerManager) -> ScmServerMetrics:
    """Adds SCM's sources over `core` to `metrics`; returns the handles the services observe."""
    metrics.add_collector(NODES, _NodeCollector(core))
    metrics.add_collector(CONTAINERS, _ContainerCollector(core))
    metrics.add_collector(PIPELINES, _PipelineCollector(core))
    metrics.add_collector(SAFE_MODE, _SafeModeCollector(core))
    metrics.add_collector(REPLICATION, _ReplicationCollector(core))
    metrics.add_collector(BALANCER, _BalancerCollector(core))
    heartbeat = Histogram(
        "scm_heartbeat_seconds",
        "Time SCM took to handle a datanode heartbeat (sendHeartbeat), in seconds",
        buckets=LATENCY_BUCKETS_S,
        registry=metrics.source(NODES),
    )
    return ScmServerMetrics(heartbeat)


def register_scm_ha_metrics(metrics: MetricsSystem, report: Callable[[], dict[str, Any]]) -> None:
    """Adds SCM HA's Raft gauges, read from `report` (scm/server/ha.py `ScmRaft.report`) when scraped."""
    metrics.add_collector(HA, RaftGauges("scm", prometheus_name(HA, "SCMHALeaderState"), "SCM", report))


def _counter(source: str, metric: str, doc: str, value: int) -> CounterMetricFamily:
    return CounterMetricFamily(prometheus_name(source, metric), doc, value=value)


def _gauge(source: str, metric: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(prometheus_name(source, metric), doc, value=value)


class _NodeCollector:
    def __init__(self, core: StorageContainerManager) -> None:
        self.core = core

    def collect(self) -> Iterator[Metric]:
        nodes = self.core.nodes
        m = nodes.metrics
        yield _counter(NODES, "NumHBProcessed", "Heartbeats processed", m.num_hb_processed)
        yield _counter(
            NODES,
            "NumHBProcessingFailed",
            "Heartbeats from datanodes SCM does not know (told to register again)",
            m.num_hb_processing_failed,
        )
        yield _counter(NODES, "NumNodeReportProcessed", "Node reports processed", m.num_node_report_processed)
        yield _counter(
            NODES,
            "NumNodeReportProcessingFailed",
            "Node reports from datanodes SCM does not know",
            m.num_node_report_processing_failed,
        )
        yield _counter(
            NODES,
            "NumNodeCommandQueueReportProcessed",
            "Command queue reports processed",
            m.num_node_command_queue_report_processed,
        )
        infos = nodes.nodes()
        by_state = Counter((i.status.health, i.status.operational_state) for i in infos)
        states = GaugeMetricFamily(
            prometheus_name(NODES, "Nodes"),
            "Datanodes per health and operational state",
            labels=["health", "operational_state"],
        )
        for health in NodeState:
            for op in NodeOperationalState:
                states.add_metric([health.name, op.name], by_state[health, op])
        yield states
        capacity, used, remaining = nodes.storage_totals()
        yield _gauge(NODES, "DiskCapacity", "Bytes of capacity (live datanodes in service)", capacity)
        yield _gauge(NODES, "DiskUsed", "Bytes used (live datanodes in service)", used)
        yield _gauge(NODES, "DiskRemaining", "Bytes remaining (live datanodes in service)", remaining)
        sent = CounterMetricFamily(
            "scm_commands_sent",
            "Commands SCM handed to a datanode's heartbeat response, per type and datanode",
            labels=["type", "datanode"],
        )
        for (command_type, dn), n in sorted(m.commands_sent.items()):
            sent.add_metric([command_type.name, dn], n)
        yield sent


class _ContainerCollector:
    def __init__(self, core: StorageContainerManager) -> None:
        self.core = core

    def collect(self) -> Iterator[Metric]:
        containers = self.core.containers
        for state in LifeCycleState:
            metric = f"{_camel(state.name)}Containers"
            yield _gauge(CONTAINERS, metric, f"Containers in state {state.name}", containers.count(state))
        yield _gauge(CONTAINERS, "TotalContainers", "Containers in any state", containers.count())


class _PipelineCollector:
    def __init__(self, core: StorageContainerManager) -> None:
        self.core = core

    def collect(self) -> Iterator[Metric]:
        pipelines = GaugeMetricFamily(
            "scm_pipelines",
            "Pipelines per state and replication config",
            labels=["state", "replication_type", "replication"],
        )
        counts = self.core.pipelines.state_counts()
        # every state of each replication config SCM has pipelines of, zeros too (a series that appears
        # only once its first pipeline closes breaks rate() and alerts on it)
        for config in sorted({config for config, _ in counts}, key=str):
            for state in PipelineState:
                n = counts.get((config, state), 0)
                pipelines.add_metric([state.name, config.type.name, str(config)], n)
        yield pipelines
        blocks = CounterMetricFamily(
            prometheus_name(PIPELINES, "NumBlocksAllocated"),
            "Blocks allocated since SCM started, per replication config",
            labels=["replication"],
        )
        for config, n in sorted(self.core.blocks.allocated.items(), key=lambda kv: str(kv[0])):
            blocks.add_metric([str(config)], n)
        yield blocks


class _SafeModeCollector:
    def __init__(self, core: StorageContainerManager) -> None:
        self.core = core

    def collect(self) -> Iterator[Metric]:
        safe_mode = self.core.safe_mode
        yield _gauge(SAFE_MODE, "ScmInSafeMode", "1 while SCM is in safe mode", safe_mode.in_safe_mode())
        yield _gauge(
            SAFE_MODE, "PreCheckPassed", "1 once the pre-check rules passed", safe_mode.precheck_passed()
        )
        rules = GaugeMetricFamily(
            prometheus_name(SAFE_MODE, "RuleValidated"),
            "1 once the safe-mode exit rule passed",
            labels=["rule", "pre_check"],
        )
        for rule in safe_mode.rule_statuses():
            rules.add_metric([rule.name, str(rule.pre_check).lower()], rule.validated)
        yield rules


class _ReplicationCollector:
    def __init__(self, core: StorageContainerManager) -> None:
        self.core = core

    def collect(self) -> Iterator[Metric]:
        rm = self.core.replication
        counters = rm.metrics
        for f in fields(counters):
            # the fields are Ozone's names snake_cased, `_total` included (replicationCmdsSentTotal)
            doc = "Replication Manager: " + f.name.removesuffix("_total").replace("_", " ")
            yield CounterMetricFamily(f"{snake(REPLICATION)}_{f.name}", doc, value=getattr(counters, f.name))
        pending = rm.pending_ops
        for metric, op, ec in (
            ("InflightReplication", PendingOpType.ADD, False),
            ("InflightDeletion", PendingOpType.DELETE, False),
            ("InflightEcReplication", PendingOpType.ADD, True),
            ("InflightEcDeletion", PendingOpType.DELETE, True),
        ):
            kind = "EC" if ec else "Ratis"
            doc = f"Pending {kind} replica {'creations' if op is PendingOpType.ADD else 'deletions'}"
            yield _gauge(REPLICATION, metric, doc, pending.count(op, ec))
        queue = rm.queue
        yield _gauge(REPLICATION, "UnderReplicatedQueueSize", "Under-replicated queued", queue.under_size())
        yield _gauge(REPLICATION, "OverReplicatedQueueSize", "Over-replicated queued", queue.over_size())
        report = rm.report
        for state in LifeCycleState:
            doc = f"Containers in state {state.name} at the last full check"
            yield _gauge(REPLICATION, f"{_camel(state.name)}Containers", doc, report.stat(state))
        for health in REPORT_HEALTH_STATES:
            yield _gauge(REPLICATION, health.metric_name, health.description, report.stat(health))


class _BalancerCollector:
    def __init__(self, core: StorageContainerManager) -> None:
        self.core = core

    def collect(self) -> Iterator[Metric]:
        balancer = self.core.balancer
        m = balancer.metrics
        for metric, value in (  # Ozone's ContainerBalancerMetrics counters, over every run
            ("NumIterations", m.num_iterations),
            ("NumContainerMovesScheduled", m.num_container_moves_scheduled),
            ("NumContainerMovesCompleted", m.num_container_moves_completed),
            ("NumContainerMovesFailed", m.num_container_moves_failed),
            ("NumContainerMovesTimeout", m.num_container_moves_timeout),
            ("DataSizeMovedGB", m.data_size_moved_bytes // _GB),
        ):
            yield _counter(BALANCER, metric, f"Container Balancer, every run: {metric}", value)
        yield _gauge(
            BALANCER, "NumDatanodesUnbalanced", "Datanodes outside the threshold", m.num_datanodes_unbalanced
        )
        yield _gauge(
            BALANCER, "DataSizeUnbalancedGB", "GB to move to balance", m.data_size_unbalanced_bytes // _GB
        )
        statuses = balancer.iteration_statuses()
        latest = statuses[-1] if statuses else None
        for metric, value in (
            ("NumContainerMovesScheduledInLatestIteration", latest and latest.moves_scheduled),
            ("NumContainerMovesCompletedInLatestIteration", latest and latest.moves_completed),
            ("NumContainerMovesFailedInLatestIteration", latest and latest.moves_failed),
            ("NumContainerMovesTimeoutInLatestIteration", latest and latest.moves_timed_out),
            ("NumDatanodesInvolvedInLatestIteration", latest and latest.datanodes_involved),
            ("DataSizeMovedBytesInLatestIteration", latest and latest.size_moved),
            ("DataSizeMovedGBInLatestIteration", latest and latest.size_moved // _GB),
        ):
            yield _gauge(BALANCER, metric, "Container Balancer, latest iteration", value or 0)


def _camel(name: str) -> str:
    """QUASI_CLOSED -> QuasiClosed (Ozone's CaseFormat UPPER_UNDERSCORE -> UPPER_CAMEL)."""
    return "".join(word.capitalize() for word in name.split("_"))
